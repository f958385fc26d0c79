//! Loop facts: what each natural loop counts and how it leaves, read once
//! per function from the IR. The ACF and the cost stage both build on
//! these facts; what the values are (symbolic expressions, affine bounds)
//! stays each one's own evaluation.
//!
//! * A [`HeaderPhi`] is a phi at the top of a loop's header, its incoming
//!   values split into those entering from outside the loop and those
//!   coming back along back edges.
//! * A [`Counter`] is an integer header phi `h` with one start value and
//!   one value `next` coming back; its [`Step`] is `next` as `h op k`
//!   (add, sub, mul, shl, lshr, ashr, udiv, sdiv) with `k` a constant or a
//!   loop-invariant value, and LLVM's `nsw`/`nuw` say whether it can wrap.
//! * An [`Exit`] is a two-way branch with one side in the loop; its
//!   [`ExitTest`]s are the comparisons its staying outcome implies (`a &&
//!   b` stays only if both hold). A test whose one side reads a counter of
//!   the loop, before its step (`h`), after it (`next`: clang's rotated
//!   loops test `icmp ne %next, %n` at the latch) or plus a constant
//!   (`h + 4 < n` in a loop unrolled by 4), and whose other side is
//!   loop-invariant has a [`CounterTest`].
//! * Two shapes clang makes of loops: the guard its rotation leaves before
//!   a loop ([`Guard`]), and an unrolled loop's remainder ([`Remainder`]).

mod guard;
mod remainder;
#[cfg(test)]
mod tests;

pub use guard::Guard;
pub use remainder::{MainMask, Remainder};

use super::cfg::Cfg;
use super::dom::DomTree;
use super::loops::{Loop, LoopId, Loops};
use crate::ir::{BlockId, Function, InstId, InstKind, IntFlags, IntPred, Module, Opcode, Value};

/// The loop facts of one function.
#[derive(Clone, Debug, Default)]
pub struct LoopFacts {
    /// Every loop's header phis, sorted by instruction.
    phis: Vec<HeaderPhi>,
    /// The counters among them, sorted by phi.
    counters: Vec<Counter>,
    /// Per loop, its exit branches in block order.
    exits: Vec<Vec<Exit>>,
    /// Per loop, the guards its rotation left.
    guards: Vec<Vec<Guard>>,
    /// The unrolled loops' remainders, by remainder loop.
    remainders: Vec<Remainder>,
}

/// A phi at the top of a loop header.
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderPhi {
    pub phi: InstId,
    pub lp: LoopId,
    /// `(value, predecessor)` entering from outside the loop, in operand
    /// order.
    pub entries: Vec<(Value, BlockId)>,
    /// `(value, latch)` coming back along back edges, in operand order.
    pub backs: Vec<(Value, BlockId)>,
}

/// An integer header phi `h` with one start value and one update.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    pub phi: InstId,
    pub lp: LoopId,
    /// The value every entry into the loop brings.
    pub start: Value,
    /// The value every back edge brings.
    pub next: Value,
    /// `next` as `h op k`, when it is one.
    pub step: Option<Step>,
}

/// `next = h op amount`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub op: StepOp,
    pub amount: Amount,
    /// The update's `nsw`/`nuw`/`exact`.
    pub flags: IntFlags,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOp {
    Add,
    /// `h - amount` (never `amount - h`).
    Sub,
    Mul,
    Shl,
    LShr,
    AShr,
    UDiv,
    SDiv,
}

/// What a counter's update combines it with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Const(i128),
    /// A value no instruction of the loop defines (a grid stride
    /// `blockDim.x * gridDim.x`, a parameter).
    Invariant(Value),
}

/// A two-way branch that can leave the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct Exit {
    pub block: BlockId,
    /// The branch condition's outcome that stays in the loop.
    pub stay: bool,
    /// Whether the branch runs on every iteration (its block dominates
    /// every latch).
    pub every_iteration: bool,
    /// The comparisons that hold while the loop goes on, in the order the
    /// condition nests them.
    pub tests: Vec<ExitTest>,
}

/// `lhs pred rhs`, which holds on the staying side of an exit.
#[derive(Clone, Debug, PartialEq)]
pub struct ExitTest {
    /// The `icmp`, whose own predicate is `pred` or its negation.
    pub cmp: InstId,
    pub pred: IntPred,
    pub lhs: Value,
    pub rhs: Value,
    pub counter: Option<CounterTest>,
}

/// An exit test as `read(h) pred bound`, with the counter on the left.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterTest {
    pub phi: InstId,
    pub read: Read,
    /// The loop-invariant side.
    pub bound: Value,
    /// The test's predicate with the counter on the left (swapped when the
    /// `icmp` has it on the right).
    pub pred: IntPred,
}

/// Which value of a counter `h` an exit test compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// `h` itself, before the step.
    Phi,
    /// The value the back edges bring, after the step.
    Next,
    /// `h + c`.
    Offset(i128),
}

impl LoopFacts {
    /// `cfg`, `dom` and `loops` must be `f`'s.
    pub fn new(m: &Module, f: &Function, cfg: &Cfg, loops: &Loops, dom: &DomTree) -> Self {
        let mut phis = Vec::new();
        let mut counters = Vec::new();
        for (l, lp) in loops.iter() {
            let header = &f.blocks[lp.header.index()].insts;
            for &i in header.iter().take_while(|&&i| f.inst(i).op == Opcode::Phi) {
                let Some(hp) = header_phi(f, l, lp, i) else {
                    continue;
                };
                counters.extend(counter(m, f, lp, &hp));
                phis.push(hp);
            }
        }
        phis.sort_by_key(|p| p.phi);
        counters.sort_by_key(|c| c.phi);
        let exits = loops
            .iter()
            .map(|(l, lp)| exits(m, f, dom, &counters, (l, lp)))
            .collect();
        let mut facts = LoopFacts {
            phis,
            counters,
            exits,
            guards: Vec::new(),
            remainders: Vec::new(),
        };
        facts.guards = loops
            .ids()
            .map(|l| guard::guards(f, cfg, loops, &facts, l))
            .collect();
        facts.remainders = remainder::remainders(m, f, cfg, loops, &facts);
        facts
    }

    /// The guards rotation left before loop `l`, in block order.
    pub fn guards(&self, l: LoopId) -> &[Guard] {
        self.guards.get(l.index()).map_or(&[], Vec::as_slice)
    }

    /// The remainders of the function's unrolled loops, by remainder loop.
    pub fn remainders(&self) -> &[Remainder] {
        &self.remainders
    }

    /// The header phi `i`, when it is one.
    pub fn header_phi(&self, i: InstId) -> Option<&HeaderPhi> {
        let at = self.phis.binary_search_by_key(&i, |p| p.phi).ok()?;
        Some(&self.phis[at])
    }

    /// The counter whose phi is `i`, when it is one.
    pub fn counter(&self, i: InstId) -> Option<&Counter> {
        let at = self.counters.binary_search_by_key(&i, |c| c.phi).ok()?;
        Some(&self.counters[at])
    }

    /// The counters of loop `l`, by phi.
    pub fn counters_of(&self, l: LoopId) -> impl Iterator<Item = &Counter> {
        self.counters.iter().filter(move |c| c.lp == l)
    }

    /// The exit branches of loop `l`, in block order.
    pub fn exits(&self, l: LoopId) -> &[Exit] {
        &self.exits[l.index()]
    }

    /// The exit branch ending `b`, of loop `l`.
    pub fn exit(&self, l: LoopId, b: BlockId) -> Option<&Exit> {
        self.exits(l).iter().find(|x| x.block == b)
    }
}

impl Step {
    /// What one iteration adds to the counter, when the update is an
    /// addition (or the subtraction of a constant).
    pub fn added(&self) -> Option<Amount> {
        match (self.op, self.amount) {
            (StepOp::Add, a) => Some(a),
            (StepOp::Sub, Amount::Const(c)) => Some(Amount::Const(-c)),
            _ => None,
        }
    }

    /// Whether the update can wrap as `pred` reads the counter: an
    /// ordering needs the matching `nsw`/`nuw`, an (in)equality either
    /// one. Shifts right and divisions move towards zero and never wrap.
    pub fn may_wrap(&self, pred: IntPred) -> bool {
        let grows = matches!(
            self.op,
            StepOp::Add | StepOp::Sub | StepOp::Mul | StepOp::Shl
        );
        let IntFlags { nsw, nuw, .. } = self.flags;
        grows
            && if pred.is_signed() {
                !nsw
            } else if pred.is_unsigned() {
                !nuw
            } else {
                !(nsw || nuw)
            }
    }
}

impl StepOp {
    fn of(op: Opcode) -> Option<StepOp> {
        Some(match op {
            Opcode::Add => StepOp::Add,
            Opcode::Sub => StepOp::Sub,
            Opcode::Mul => StepOp::Mul,
            Opcode::Shl => StepOp::Shl,
            Opcode::LShr => StepOp::LShr,
            Opcode::AShr => StepOp::AShr,
            Opcode::UDiv => StepOp::UDiv,
            Opcode::SDiv => StepOp::SDiv,
            _ => return None,
        })
    }

    fn commutes(self) -> bool {
        matches!(self, StepOp::Add | StepOp::Mul)
    }
}

impl Read {
    /// `read(h) − h` when it is a constant: 0 before the step, what an
    /// iteration adds after it, `c` for `h + c`.
    pub fn offset(self, step: Option<&Step>) -> Option<i128> {
        match self {
            Read::Phi => Some(0),
            Read::Next => match step?.added()? {
                Amount::Const(c) => Some(c),
                Amount::Invariant(_) => None,
            },
            Read::Offset(c) => Some(c),
        }
    }
}

/// The innermost loop that the two-way branch ending `u` can leave while
/// keeping the other side in it: the loop whose exit it is.
pub fn exit_of(cfg: &Cfg, loops: &Loops, u: BlockId) -> Option<LoopId> {
    let l = loops.loop_of(u)?;
    let lp = loops.get(l);
    let mut succs = cfg.succs(u).to_vec();
    succs.sort();
    succs.dedup();
    let inside = succs.iter().filter(|&&s| lp.contains(s)).count();
    (succs.len() == 2 && inside == 1).then_some(l)
}

/// Whether no instruction of `lp` defines `v`.
pub fn is_invariant(f: &Function, lp: &Loop, v: Value) -> bool {
    match v {
        Value::Inst(i) => !lp.contains(f.inst(i).block),
        _ => true,
    }
}

/// The conditions a boolean is the conjunction of (`and`, `select c, d,
/// false`), or of whose negations it is the disjunction when `truth` is
/// false: the atomic conditions known to have outcome `truth` when `v`
/// has. Exit tests and the cost stage's guards read conditions this way.
pub fn conjuncts(m: &Module, f: &Function, v: Value, truth: bool, out: &mut Vec<(Value, bool)>) {
    if let Value::Inst(i) = v {
        let inst = f.inst(i);
        let ops = &inst.operands;
        let is = |x: Value, c: i64| m.int_value(x).map(|y| y & 1) == Some(c);
        let both = match inst.op {
            // a && b true, or a || b false: both operands have that value.
            Opcode::And if truth => Some((ops[0], ops[1])),
            Opcode::Or if !truth => Some((ops[0], ops[1])),
            Opcode::Select if truth && is(ops[2], 0) => Some((ops[0], ops[1])),
            Opcode::Select if !truth && is(ops[1], 1) => Some((ops[0], ops[2])),
            _ => None,
        };
        let bool_typed = m.types.int_bits(inst.ty) == Some(1);
        if let (Some((a, b)), true) = (both, bool_typed) {
            conjuncts(m, f, a, truth, out);
            conjuncts(m, f, b, truth, out);
            return;
        }
        if inst.op == Opcode::Xor && ops.len() == 2 && is(ops[1], 1) && bool_typed {
            conjuncts(m, f, ops[0], !truth, out);
            return;
        }
    }
    out.push((v, truth));
}

fn header_phi(f: &Function, l: LoopId, lp: &Loop, i: InstId) -> Option<HeaderPhi> {
    let inst = f.inst(i);
    let InstKind::Phi { blocks } = &inst.kind else {
        return None;
    };
    let (backs, entries) = inst
        .operands
        .iter()
        .copied()
        .zip(blocks.iter().copied())
        .partition(|&(_, b)| lp.contains(b));
    Some(HeaderPhi {
        phi: i,
        lp: l,
        entries,
        backs,
    })
}

/// The one value all of `incoming` carry, if any.
fn one_value(incoming: &[(Value, BlockId)]) -> Option<Value> {
    let (&(v, _), rest) = incoming.split_first()?;
    rest.iter().all(|&(x, _)| x == v).then_some(v)
}

fn counter(m: &Module, f: &Function, lp: &Loop, hp: &HeaderPhi) -> Option<Counter> {
    m.types.int_bits(f.inst(hp.phi).ty)?;
    let (start, next) = (one_value(&hp.entries)?, one_value(&hp.backs)?);
    Some(Counter {
        phi: hp.phi,
        lp: hp.lp,
        start,
        next,
        step: step(m, f, lp, Value::Inst(hp.phi), next),
    })
}

fn step(m: &Module, f: &Function, lp: &Loop, h: Value, next: Value) -> Option<Step> {
    let Value::Inst(n) = next else { return None };
    let inst = f.inst(n);
    let op = StepOp::of(inst.op)?;
    let [a, b] = inst.operands[..] else {
        return None;
    };
    let by = if a == h {
        b
    } else if b == h && op.commutes() {
        a
    } else {
        return None;
    };
    let amount = match m.int_value(by) {
        Some(c) => Amount::Const(i128::from(c)),
        None if is_invariant(f, lp, by) => Amount::Invariant(by),
        None => return None,
    };
    Some(Step {
        op,
        amount,
        flags: inst.flags,
    })
}

/// The exit branches of loop `l`, with their tests.
fn exits(
    m: &Module,
    f: &Function,
    dom: &DomTree,
    counters: &[Counter],
    (l, lp): (LoopId, &Loop),
) -> Vec<Exit> {
    let mut out = Vec::new();
    for &x in &lp.exiting {
        let Some(t) = f.terminator(x) else { continue };
        let InstKind::Br { targets } = &t.kind else {
            continue;
        };
        let stay = match targets[..] {
            [a, b] if lp.contains(a) && !lp.contains(b) => true,
            [a, b] if !lp.contains(a) && lp.contains(b) => false,
            _ => continue,
        };
        let mut atoms = Vec::new();
        conjuncts(m, f, t.operands[0], stay, &mut atoms);
        let tests = atoms
            .into_iter()
            .filter_map(|(c, truth)| {
                let Value::Inst(ci) = c else { return None };
                let cmp = f.inst(ci);
                let InstKind::ICmp(p) = cmp.kind else {
                    return None;
                };
                let pred = if truth { p } else { p.negated() };
                let (lhs, rhs) = (cmp.operands[0], cmp.operands[1]);
                let counter = counter_test(m, f, counters, (l, lp), (pred, lhs, rhs));
                Some(ExitTest {
                    cmp: ci,
                    pred,
                    lhs,
                    rhs,
                    counter,
                })
            })
            .collect();
        out.push(Exit {
            block: x,
            stay,
            every_iteration: lp.latches.iter().all(|&t| dom.dominates(x, t)),
            tests,
        });
    }
    out
}

/// `lhs pred rhs` as a counter of `l` against an invariant, when exactly
/// one side reads a counter and the other is invariant.
fn counter_test(
    m: &Module,
    f: &Function,
    counters: &[Counter],
    (l, lp): (LoopId, &Loop),
    (pred, lhs, rhs): (IntPred, Value, Value),
) -> Option<CounterTest> {
    let read = |v| read_of(m, f, counters, l, v);
    let ((phi, read), bound, pred) = match (read(lhs), read(rhs)) {
        (Some(c), None) if is_invariant(f, lp, rhs) => (c, rhs, pred),
        (None, Some(c)) if is_invariant(f, lp, lhs) => (c, lhs, pred.swapped()),
        _ => return None,
    };
    Some(CounterTest {
        phi,
        read,
        bound,
        pred,
    })
}

/// `v` as a value of a counter of loop `l`: the counter itself, what its
/// back edges bring, or it plus a constant (first match in that order).
fn read_of(
    m: &Module,
    f: &Function,
    counters: &[Counter],
    l: LoopId,
    v: Value,
) -> Option<(InstId, Read)> {
    let Value::Inst(i) = v else { return None };
    // `counters` is sorted by phi.
    let is_counter = |x: Value| match x {
        Value::Inst(h) => counters
            .binary_search_by_key(&h, |c| c.phi)
            .is_ok_and(|k| counters[k].lp == l),
        _ => false,
    };
    if is_counter(v) {
        return Some((i, Read::Phi));
    }
    if let Some(c) = counters.iter().find(|c| c.lp == l && c.next == v) {
        return Some((c.phi, Read::Next));
    }
    let inst = f.inst(i);
    if inst.op == Opcode::Add {
        let (a, b) = (inst.operands[0], inst.operands[1]);
        for (h, k) in [(a, b), (b, a)] {
            if let (Value::Inst(h), true, Some(c)) = (h, is_counter(h), m.int_value(k)) {
                return Some((h, Read::Offset(i128::from(c))));
            }
        }
    }
    None
}
