//! Per-iteration sweeps: a uniform loop counter whose values the launch
//! shape and the constants fix (`for (s = 1; s < blockDim.x; s *= 2)`,
//! `for (s = blockDim.x / 2; s > 0; s >>= 1)`), so that a site in the
//! loop can be evaluated once per value instead of once for an unknown
//! `[s]`.
//!
//! The loop must leave at one branch only, on every iteration, through a
//! test of the counter against a bound (the loop facts' [`CounterTest`],
//! and the branch's condition is that comparison); the counter's start,
//! step amount and bound must be constants once the block shape is known.
//! Iteration `k` sees `h_k = step^k(start)` and reaches the exit branch,
//! which keeps it in the loop while the test holds; `K` is the first
//! iteration where it fails. A block that dominates the exit runs on
//! iterations `0..=K`, one the exit dominates on `0..K`; both run on every
//! one of those iterations when they also dominate the latches (the
//! values are `certain`). Any other block of the loop runs on some of
//! them: every value is possible, none certain.
//!
//! [`CounterTest`]: crate::graph::loop_facts::CounterTest

use super::build::Builder;
use super::expr::{compare, Arena, Atom, AtomId, ExprId, Poly, Uniform};
use crate::dataflow::FastMap as HashMap;
use crate::graph::loop_facts::{Amount, Read, StepOp};
use crate::graph::loops::LoopId;
use crate::graph::FunctionGraphs;
use crate::ir::{BlockId, InstId, IntPred, Module, Value};

/// Iterations a sweep may take; past them the counter stays unknown.
pub const MAX_ITERATIONS: usize = 256;

/// The values a loop's counter takes on the iterations that reach its
/// exit, with the atom that stands for it in expressions.
#[derive(Clone, Debug, PartialEq)]
pub struct Counter {
    pub lp: LoopId,
    pub phi: InstId,
    pub atom: AtomId,
    /// `h_0 ..= h_K`.
    pub values: Vec<i128>,
    pub exit: BlockId,
    /// The loop's other counters with a constant start and step, each
    /// with its value on the same iterations (`offset *= 2` beside `d >>=
    /// 1` in a scan's up-sweep).
    pub companions: Vec<(AtomId, Vec<i128>)>,
}

impl Counter {
    /// The counter's atom and its companions'.
    pub fn atoms(&self) -> impl Iterator<Item = AtomId> + '_ {
        std::iter::once(self.atom).chain(self.companions.iter().map(|(a, _)| *a))
    }
}

/// The values a counter takes where one block runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Ladder {
    pub lp: LoopId,
    /// The counter's phi, which names it.
    pub phi: InstId,
    pub atom: AtomId,
    /// The counter's value on each iteration that can run the block.
    pub values: Vec<i128>,
    /// Whether the block runs on every iteration of that value (when the
    /// loop runs at all).
    pub certain: bool,
}

/// The counter of loop `l`, if its values are fixed.
pub fn counter(
    b: &mut Builder<'_>,
    m: &Module,
    g: &FunctionGraphs,
    c: super::expr::CtxId,
    l: LoopId,
) -> Option<Counter> {
    let f = b.arena.func_of(c);
    let func = m.func(f);
    let lp = g.loops.get(l);
    let facts = g.loop_facts(m, func);
    let [exit] = facts.exits(l) else {
        return None;
    };
    if lp.exiting != [exit.block] || !exit.every_iteration {
        return None;
    }
    let [test] = exit.tests.as_slice() else {
        return None;
    };
    let ct = test.counter?;
    // The branch decides on exactly this comparison.
    let term = func.terminator(exit.block)?;
    if term.operands.first() != Some(&Value::Inst(test.cmp)) {
        return None;
    }
    let counter = facts.counter(ct.phi)?;
    let step = counter.step?;
    let konst = |b: &mut Builder<'_>, v: Value| {
        let e = b.value(c, v);
        b.arena.poly(e).as_const()
    };
    let start = konst(b, counter.start)?;
    let bound = konst(b, ct.bound)?;
    let amount = match step.amount {
        Amount::Const(k) => k,
        Amount::Invariant(v) => konst(b, v)?,
    };
    let phi = b.value(c, Value::Inst(ct.phi));
    let atom = single_atom(b.arena.poly(phi))?;
    match b.arena.atom(atom) {
        Atom::Uniform(Uniform::LoopPhi(..) | Uniform::Value(..)) => {}
        _ => return None,
    }
    let bits = m.types.int_bits(func.inst(ct.phi).ty)?.min(64);
    let (lo, hi) = (-(1i128 << (bits - 1)), 1i128 << (bits - 1));
    let next = |h: i128| step_value(step.op, amount, h, bits);
    let unsigned = matches!(
        ct.pred,
        IntPred::Ult | IntPred::Ule | IntPred::Ugt | IntPred::Uge
    );
    let stays = |h: i128| -> Option<bool> {
        let read = match ct.read {
            Read::Phi => h,
            Read::Next => next(h)?,
            Read::Offset(k) => h + k,
        };
        if unsigned && (read < 0 || bound < 0) {
            return None;
        }
        Some(compare(ct.pred, read, bound))
    };
    if !(lo..hi).contains(&start) {
        return None;
    }
    let mut values = vec![start];
    let mut h = start;
    while stays(h)? {
        if values.len() > MAX_ITERATIONS {
            return None;
        }
        h = next(h)?;
        values.push(h);
    }
    let companions = facts
        .counters_of(l)
        .filter(|x| x.phi != ct.phi)
        .filter_map(|x| {
            let step = x.step?;
            let amount = match step.amount {
                Amount::Const(k) => k,
                Amount::Invariant(v) => konst(b, v)?,
            };
            let mut h = konst(b, x.start)?;
            let bits = m.types.int_bits(func.inst(x.phi).ty)?.min(64);
            let e = b.value(c, Value::Inst(x.phi));
            let a = single_atom(b.arena.poly(e))?;
            if !matches!(
                b.arena.atom(a),
                Atom::Uniform(Uniform::LoopPhi(..) | Uniform::Value(..))
            ) {
                return None;
            }
            let mut vals = Vec::with_capacity(values.len());
            for k in 0..values.len() {
                if k > 0 {
                    h = step_value(step.op, amount, h, bits)?;
                }
                vals.push(h);
            }
            Some((a, vals))
        })
        .collect();
    Some(Counter {
        lp: l,
        phi: ct.phi,
        atom,
        values,
        companions,
        exit: exit.block,
    })
}

/// A counter's next value, `h op amount`, if it stays within `bits`.
fn step_value(op: StepOp, amount: i128, h: i128, bits: u32) -> Option<i128> {
    let (lo, hi) = (-(1i128 << (bits - 1)), 1i128 << (bits - 1));
    let v = match op {
        StepOp::Add => h + amount,
        StepOp::Sub => h - amount,
        StepOp::Mul => h.checked_mul(amount)?,
        StepOp::Shl => h.checked_shl(u32::try_from(amount).ok().filter(|&s| s < 64)?)?,
        StepOp::LShr | StepOp::AShr | StepOp::UDiv if h < 0 => return None,
        StepOp::LShr | StepOp::AShr => h >> u32::try_from(amount).ok().filter(|&s| s < 64)?,
        StepOp::UDiv | StepOp::SDiv if amount <= 0 => return None,
        StepOp::UDiv | StepOp::SDiv => h / amount,
    };
    (lo..hi).contains(&v).then_some(v)
}

fn single_atom(p: &Poly) -> Option<AtomId> {
    match p.terms.as_slice() {
        [(mono, 1)] => match mono.as_slice() {
            [a] => Some(*a),
            _ => None,
        },
        _ => None,
    }
}

/// The values of `counter` on the iterations that run block `blk` of its
/// loop (see the module docs).
pub fn ladder(g: &FunctionGraphs, counter: &Counter, blk: BlockId) -> Ladder {
    let lp = g.loops.get(counter.lp);
    let before = g.dom.dominates(blk, counter.exit);
    let after = !before && g.dom.dominates(counter.exit, blk);
    let every = lp.latches.iter().all(|&x| g.dom.dominates(blk, x));
    let n = counter.values.len();
    let values = if after {
        counter.values[..n - 1].to_vec()
    } else {
        counter.values.clone()
    };
    Ladder {
        lp: counter.lp,
        phi: counter.phi,
        atom: counter.atom,
        values,
        certain: before || (after && every),
    }
}

impl Arena {
    /// `e` with atom `a` replaced by `v`, operators folded again.
    pub fn substitute(
        &mut self,
        e: ExprId,
        a: AtomId,
        v: i128,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        self.replace(e, a, &Poly::constant(v), memo)
    }

    /// `e` with atom `a` replaced by the polynomial `with`, operators
    /// folded again.
    pub fn replace(
        &mut self,
        e: ExprId,
        a: AtomId,
        with: &Poly,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        if let Some(&x) = memo.get(&e) {
            return x;
        }
        let terms = self.poly(e).terms.clone();
        let mut out = Poly::constant(0);
        let mut changed = false;
        for (mono, k) in terms {
            let mut prod = Poly::constant(k);
            for &b in &mono {
                let p = if b == a {
                    changed = true;
                    with.clone()
                } else {
                    match self.atom(b).clone() {
                        Atom::Op(op, args) | Atom::Uniform(Uniform::Op(op, args)) => {
                            let new: Vec<ExprId> = args
                                .iter()
                                .map(|&x| self.replace(x, a, with, memo))
                                .collect();
                            if new == args {
                                Poly::atom(b)
                            } else {
                                changed = true;
                                self.op(op, new)
                            }
                        }
                        _ => Poly::atom(b),
                    }
                };
                prod = prod.mul(&p);
            }
            out = out.add(&prod);
        }
        let x = if changed { self.intern(out) } else { e };
        memo.insert(e, x);
        x
    }
}

impl Arena {
    /// The value of `e` when atom `a` is `v` and `e` reads no other atom.
    pub fn value_at(&self, e: ExprId, a: AtomId, v: i128) -> Option<i128> {
        let mut sum = 0i128;
        for (mono, k) in &self.poly(e).terms {
            let mut prod = *k;
            for &b in mono {
                prod = prod.checked_mul(self.atom_value_at(b, a, v)?)?;
            }
            sum = sum.checked_add(prod)?;
        }
        Some(sum)
    }

    /// The value of atom `b` when atom `a` is `v` (see [`Self::value_at`]).
    pub fn atom_value_at(&self, b: AtomId, a: AtomId, v: i128) -> Option<i128> {
        if b == a {
            return Some(v);
        }
        let (Atom::Op(op, args) | Atom::Uniform(Uniform::Op(op, args))) = self.atom(b) else {
            return None;
        };
        let vals: Option<Vec<i128>> = args.iter().map(|&x| self.value_at(x, a, v)).collect();
        super::expr::fold(*op, &vals?)
    }

    /// The one uniform operator through which `e` reads counter `a` (`s /
    /// 2` when a rotated loop's phi holds the previous `s`), when `e`
    /// reads `a` through exactly one and never directly.
    pub fn reader_of(&self, e: ExprId, a: AtomId) -> Option<AtomId> {
        let mut found: Vec<AtomId> = Vec::new();
        if !self.readers(e, a, &mut found) {
            return None;
        }
        found.sort_unstable();
        found.dedup();
        match found[..] {
            [one] => Some(one),
            _ => None,
        }
    }

    /// Collects the outermost uniform operators of `e` that read `a`;
    /// false if `e` reads `a` outside of one.
    fn readers(&self, e: ExprId, a: AtomId, found: &mut Vec<AtomId>) -> bool {
        for (mono, _) in &self.poly(e).terms {
            for &b in mono {
                if b == a {
                    return false;
                }
                match self.atom(b) {
                    Atom::Uniform(Uniform::Op(_, args))
                        if args.iter().any(|&x| self.mentions(x, a)) =>
                    {
                        found.push(b)
                    }
                    Atom::Op(_, args) if !args.iter().all(|&x| self.readers(x, a, found)) => {
                        return false
                    }
                    _ => {}
                }
            }
        }
        true
    }
}
