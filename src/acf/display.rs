//! Expressions as text: `[p] + 4·tid.x + 1024·[ctaid.x]`, for `--explain`,
//! the JSON report and tests.
//!
//! Expressions are a DAG: an unrolled `x = x >= n ? 2*n-2-x : x` refers
//! to the previous `x` three times, so the tree it stands for doubles with
//! every step. No rendering is longer than [`BUDGET`] characters: an
//! expression whose tree fits is written out; otherwise every operand used
//! more than once is named once (`$1 + 1 where $1 = …`), and what still
//! does not fit ends in `…`. Each walk stops when the budget is spent, so
//! rendering is linear in the budget and in the expression's nodes.

use super::expr::*;
use crate::dataflow::{FastMap as HashMap, FastSet as HashSet};
use crate::ir::intrinsics::Dim;
use crate::ir::{Module, Value};
use std::fmt::Write as _;

/// The most characters one rendering takes (a few lines of text); past
/// it, the text ends in [`MORE`].
pub const BUDGET: usize = 480;

/// The mark of a rendering cut at [`BUDGET`].
pub const MORE: &str = " …";

/// Names leaves: the module and the kernel whose parameters `[p]` are.
#[derive(Copy, Clone)]
pub struct Names<'a> {
    pub m: &'a Module,
    pub kernel: crate::ir::FuncId,
}

/// Renders `e` within [`BUDGET`].
pub fn render(arena: &Arena, n: Names<'_>, e: ExprId) -> String {
    let mut w = Writer::new(arena, n, BUDGET);
    w.expr(e);
    if !w.full {
        return w.out;
    }
    let mut w = Writer::new(arena, n, BUDGET);
    w.shared = shared_nodes(arena, Node::Expr(e));
    w.expr(e);
    w.definitions();
    w.finish()
}

/// Renders atom `a` within [`BUDGET`] (a loop counter's name).
pub fn atom(arena: &Arena, n: Names<'_>, a: AtomId) -> String {
    let mut w = Writer::new(arena, n, BUDGET);
    w.atom(a);
    w.finish()
}

/// Joins renderings (one per calling context) with ` | `, within
/// [`BUDGET`]: the ones left out are counted.
pub fn join(texts: &[String]) -> String {
    let mut out = String::new();
    for (i, t) in texts.iter().enumerate() {
        let sep = if i == 0 { "" } else { " | " };
        if i > 0 && out.len() + sep.len() + t.len() > BUDGET {
            let _ = write!(out, " | … ({} more)", texts.len() - i);
            break;
        }
        out.push_str(sep);
        out.push_str(t);
    }
    out
}

/// A node that can be named: an expression, or an operator atom.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
enum Node {
    Expr(ExprId),
    Atom(AtomId),
}

/// The nodes under `root` reached along more than one edge. Leaves
/// (`tid.x`, `[n]`) and constants are short and never named.
fn shared_nodes(arena: &Arena, root: Node) -> HashSet<Node> {
    let mut uses: HashMap<Node, u32> = HashMap::default();
    let mut order = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let count = uses.entry(node).or_insert(0);
        *count += 1;
        if *count > 1 {
            continue;
        }
        order.push(node);
        match node {
            Node::Expr(e) => {
                for (mono, _) in arena.poly(e).terms.iter().rev() {
                    stack.extend(
                        mono.iter()
                            .rev()
                            .filter(|&&a| operands(arena, a).is_some())
                            .map(|&a| Node::Atom(a)),
                    );
                }
            }
            Node::Atom(a) => {
                if let Some(xs) = operands(arena, a) {
                    stack.extend(xs.iter().rev().map(|&x| Node::Expr(x)));
                }
            }
        }
    }
    order
        .into_iter()
        .filter(|node| uses[node] > 1 && !trivial(arena, *node))
        .collect()
}

/// The operands of an operator atom.
fn operands(arena: &Arena, a: AtomId) -> Option<&[ExprId]> {
    match arena.atom(a) {
        Atom::Op(_, xs) | Atom::Uniform(Uniform::Op(_, xs)) => Some(xs),
        _ => None,
    }
}

/// An expression that is a constant, one leaf, or one atom (which is
/// named itself if it is shared): naming it saves nothing.
fn trivial(arena: &Arena, node: Node) -> bool {
    match node {
        Node::Atom(_) => false,
        Node::Expr(e) => match arena.poly(e).terms.as_slice() {
            [] => true,
            [(mono, k)] => {
                mono.is_empty()
                    || (mono.len() == 1 && (*k == 1 || operands(arena, mono[0]).is_none()))
            }
            _ => false,
        },
    }
}

/// A rendering in progress: text that stops growing at its limit.
struct Writer<'a> {
    arena: &'a Arena,
    n: Names<'a>,
    limit: usize,
    out: String,
    /// The limit was reached (or the walk ran too long): nothing more is
    /// written and every walk returns at once.
    full: bool,
    /// Nodes visited; a guard should names ever be empty.
    steps: usize,
    /// The nodes to name ([`shared_nodes`]), the number each got when first
    /// written, and those whose definition is still to be written.
    shared: HashSet<Node>,
    names: HashMap<Node, usize>,
    pending: Vec<Node>,
}

impl<'a> Writer<'a> {
    fn new(arena: &'a Arena, n: Names<'a>, limit: usize) -> Self {
        Writer {
            arena,
            n,
            limit,
            out: String::new(),
            full: false,
            steps: 0,
            shared: HashSet::default(),
            names: HashMap::default(),
            pending: Vec::new(),
        }
    }

    fn push(&mut self, s: &str) {
        if self.full {
            return;
        }
        if self.out.len() + s.len() <= self.limit {
            self.out.push_str(s);
            return;
        }
        let mut cut = self.limit - self.out.len();
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        self.out.push_str(&s[..cut]);
        self.full = true;
    }

    /// Counts a visit; false once the walk should stop.
    fn step(&mut self) -> bool {
        self.steps += 1;
        if self.steps > 4 * self.limit {
            self.full = true;
        }
        !self.full
    }

    /// Writes `$k` for a named node (numbering it on first use).
    fn named(&mut self, node: Node) -> bool {
        if !self.shared.contains(&node) {
            return false;
        }
        let k = match self.names.get(&node) {
            Some(&k) => k,
            None => {
                self.pending.push(node);
                self.names.insert(node, self.pending.len());
                self.pending.len()
            }
        };
        self.push(&format!("${k}"));
        true
    }

    fn expr(&mut self, e: ExprId) {
        if self.step() && !self.named(Node::Expr(e)) {
            self.poly(e);
        }
    }

    fn poly(&mut self, e: ExprId) {
        let p = self.arena.poly(e);
        if p.terms.is_empty() {
            return self.push("0");
        }
        for (i, (mono, c)) in p.terms.iter().enumerate() {
            if self.full {
                return;
            }
            let neg = *c < 0;
            if i > 0 {
                self.push(if neg { " - " } else { " + " });
            } else if neg {
                self.push("-");
            }
            let k = c.unsigned_abs();
            if mono.is_empty() || k != 1 {
                self.push(&k.to_string());
            }
            for (j, &a) in mono.iter().enumerate() {
                if j > 0 || k != 1 {
                    self.push("·");
                }
                self.atom(a);
            }
        }
    }

    fn atom(&mut self, a: AtomId) {
        if !self.step() || (operands(self.arena, a).is_some() && self.named(Node::Atom(a))) {
            return;
        }
        self.atom_body(a);
    }

    fn atom_body(&mut self, a: AtomId) {
        let (arena, m) = (self.arena, self.n.m);
        let text = match arena.atom(a) {
            Atom::Tid(d) => format!("tid.{}", dim(*d)),
            Atom::LaneId => "laneid".into(),
            Atom::Opaque(c, v) => format!("?{}", value(m, arena.func_of(*c), *v)),
            Atom::Pending(c, i) => format!("@{}", value(m, arena.func_of(*c), Value::Inst(*i))),
            Atom::Op(op, xs) => return self.op(*op, xs),
            Atom::Uniform(u) => match u {
                Uniform::Param(i, _) => format!("[{}]", value(m, self.n.kernel, Value::Arg(*i))),
                Uniform::BlockIdx(d) => format!("[ctaid.{}]", dim(*d)),
                Uniform::GridDim(d) => format!("[nctaid.{}]", dim(*d)),
                Uniform::BlockDim(d) => format!("[ntid.{}]", dim(*d)),
                Uniform::Global(g) => format!("[{}]", m.global_label(*g)),
                Uniform::LoopPhi(c, i) => {
                    format!("[{}]", value(m, arena.func_of(*c), Value::Inst(*i)))
                }
                Uniform::Value(c, v) => format!("[{}]", value(m, arena.func_of(*c), *v)),
                Uniform::Op(op, xs) => {
                    self.push("[");
                    self.op(*op, xs);
                    return self.push("]");
                }
            },
        };
        self.push(&text);
    }

    /// An operator: `(a / b)`, `(c ? a : b)`, `min(a, b)`.
    fn op(&mut self, op: Op, xs: &[ExprId]) {
        let infix = match op {
            Op::Div(_) => "/",
            Op::Rem(_) => "%",
            Op::And => "&",
            Op::Or => "|",
            Op::Xor => "^",
            Op::Shl => "<<",
            Op::Cmp(p) => cmp_text(p),
            Op::Select => {
                let [c, a, b] = xs else {
                    unreachable!("select has 3 operands")
                };
                self.push("(");
                self.expr(*c);
                self.push(" ? ");
                self.expr(*a);
                self.push(" : ");
                self.expr(*b);
                return self.push(")");
            }
            Op::Min { .. } | Op::Max { .. } => {
                let [a, b] = xs else {
                    unreachable!("min/max has 2 operands")
                };
                self.push(if matches!(op, Op::Min { .. }) {
                    "min("
                } else {
                    "max("
                });
                self.expr(*a);
                self.push(", ");
                self.expr(*b);
                return self.push(")");
            }
        };
        let [a, b] = xs else {
            unreachable!("binary operator has 2 operands")
        };
        self.push("(");
        self.expr(*a);
        self.push(&format!(" {infix} "));
        self.expr(*b);
        self.push(")");
    }

    /// Writes ` where $1 = …; $2 = …` for the names used, in the order
    /// they were first written (a definition may name later ones).
    fn definitions(&mut self) {
        let mut i = 0;
        while i < self.pending.len() && !self.full {
            self.push(if i == 0 { " where " } else { "; " });
            self.push(&format!("${} = ", i + 1));
            match self.pending[i] {
                Node::Expr(e) => self.poly(e),
                Node::Atom(a) => self.atom_body(a),
            }
            i += 1;
        }
    }

    fn finish(mut self) -> String {
        if self.full {
            self.out.push_str(MORE);
        }
        self.out
    }
}

fn dim(d: Dim) -> &'static str {
    match d {
        Dim::X => "x",
        Dim::Y => "y",
        Dim::Z => "z",
    }
}

/// A value's source label, in parentheses when it is a description
/// (`the load at line 23`) so that it reads as one term.
fn value(m: &Module, f: crate::ir::FuncId, v: Value) -> String {
    let label = m.value_label(m.func(f), v);
    if label.contains(' ') {
        format!("({label})")
    } else {
        label
    }
}

fn cmp_text(p: crate::ir::IntPred) -> &'static str {
    use crate::ir::IntPred::*;
    match p {
        Eq => "==",
        Ne => "!=",
        Ugt | Sgt => ">",
        Uge | Sge => ">=",
        Ult | Slt => "<",
        Ule | Sle => "<=",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::IntPred;

    fn leaf(ar: &mut Arena, a: Atom) -> Poly {
        Poly::atom(ar.intern_atom(a, Congruence::UNKNOWN))
    }

    fn op(ar: &mut Arena, op: Op, xs: &[&Poly]) -> Poly {
        let xs = xs.iter().map(|p| ar.intern((*p).clone())).collect();
        leaf(ar, Atom::Op(op, xs))
    }

    /// `x = x >= c ? 2c - 2 - x : x`, `steps` times from `x = tid.x`,
    /// with `c = ctaid.x`: each step reads the last `x` three times.
    fn mirror(ar: &mut Arena, steps: usize) -> ExprId {
        let c = leaf(ar, Atom::Uniform(Uniform::BlockIdx(Dim::X)));
        let mut x = leaf(ar, Atom::Tid(Dim::X));
        for _ in 0..steps {
            let test = op(ar, Op::Cmp(IntPred::Sge), &[&x, &c]);
            let back = c.scale(2).sub(&Poly::constant(2)).sub(&x);
            x = op(ar, Op::Select, &[&test, &back, &x]);
        }
        ar.intern(x)
    }

    fn names(m: &Module) -> Names<'_> {
        Names {
            m,
            kernel: crate::ir::FuncId::new(0),
        }
    }

    #[test]
    fn small_expressions_are_written_out() {
        let m = ModuleBuilder::new().finish();
        let mut ar = Arena::default();
        let e = mirror(&mut ar, 1);
        // One step: the tree is short, so nothing is named.
        assert_eq!(
            render(&ar, names(&m), e),
            "((tid.x >= [ctaid.x]) ? -2 + 2·[ctaid.x] - tid.x : tid.x)"
        );
        let t = leaf(&mut ar, Atom::Tid(Dim::Y));
        let e = ar.intern(t.scale(4).add(&Poly::constant(-3)));
        assert_eq!(render(&ar, names(&m), e), "-3 + 4·tid.y");
    }

    #[test]
    fn shared_operands_are_named_once() {
        let m = ModuleBuilder::new().finish();
        let mut ar = Arena::default();
        // Three steps are 7 copies of the first select as a tree, over
        // the budget; named, each select is written once and refers to
        // the one before as `$k` (three times).
        let e = mirror(&mut ar, 3);
        let step = |k: &str| format!("(({k} >= [ctaid.x]) ? -2 + 2·[ctaid.x] - {k} : {k})");
        let plain_len = {
            let s1 = step("tid.x");
            let s2 = step(&s1);
            step(&s2).len()
        };
        assert!(plain_len > BUDGET, "the test needs a tree over the budget");
        assert_eq!(
            render(&ar, names(&m), e),
            format!(
                "{} where $1 = {}; $2 = {}",
                step("$1"),
                step("$2"),
                step("tid.x")
            )
        );
    }

    #[test]
    fn deep_sharing_is_cut_at_the_budget() {
        let m = ModuleBuilder::new().finish();
        let mut ar = Arena::default();
        // 2^60 nodes as a tree: the rendering still stops at the budget.
        let e = mirror(&mut ar, 60);
        let text = render(&ar, names(&m), e);
        assert!(text.len() <= BUDGET + MORE.len(), "{}", text.len());
        assert!(text.ends_with(MORE));
        assert!(text.starts_with("(($1 >= [ctaid.x]) ? "), "{text}");
    }

    #[test]
    fn contexts_past_the_budget_are_counted() {
        let texts: Vec<String> = (0..100)
            .map(|i| format!("{i}·tid.x + {}", "1".repeat(20)))
            .collect();
        let joined = join(&texts);
        assert!(joined.len() <= BUDGET + 20, "{}", joined.len());
        assert!(joined.ends_with("more)"), "{joined}");
        assert_eq!(join(&texts[..2]), format!("{} | {}", texts[0], texts[1]));
    }
}
