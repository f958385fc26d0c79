//! An unrolled loop and its remainder as the one loop they are.
//!
//! clang unrolls `for (j = 0; j < n; j++)` by `U` (a power of two) into a
//! main loop whose counter steps by `U` up to `n & ~(U−1)` and a remainder
//! loop that counts from 0 to `n & (U−1)`, entered from a middle block
//! that the main loop exits into and that a guard `n <u U` jumps to when
//! the main loop would not run:
//!
//! ```text
//! P:      br (n <u U), X, main
//! main:   h' = h + U; br (h' == n & ~(U−1)), X, main
//! X:      br (n & (U−1)) == 0, after, rem
//! rem:    k' = k + 1; br (k' == n & (U−1)), after, rem
//! ```
//!
//! The remainder's own trip bound is the constant `U − 1`, paid on top of
//! the main loop's `n/U`. Here it gets a second bound, `r − 1` back edges
//! with `r` a symbol for the value `n & (U−1)`, and `r` is rewritten on
//! each edge into `X` by what it equals there: `n − U·(k_main + 1)` where
//! the main loop leaves (its counter has just reached `n & ~(U−1)`), `n`
//! on the guard's edge (`0 ≤ n < U` there). Back at the main loop, the
//! remainder's iterations are the main loop's remaining ones times `U`, so
//! the potential that pays `n` iterations pays both loops. `r` never
//! reaches a node before `X`: every edge into `X` rewrites it.

use super::affine::{Affine, Sym};
use super::rat::Rat;
use super::values::{self, Env, Ranges, Values};
use crate::graph::loop_facts::{Amount, CounterTest, ExitTest};
use crate::graph::LoopId;
use crate::ir::{BlockId, InstKind, IntPred, Opcode, Value};

/// A remainder loop tied to its main loop.
#[derive(Clone, Debug)]
pub struct Link {
    /// The remainder loop.
    pub rem: LoopId,
    /// Its trip bound over `Sym::Rem(rem)`: `r − 1` back edges.
    pub trip: Affine,
    /// On these CFG edges into the middle block, `r` equals the affine.
    pub substs: Vec<((BlockId, BlockId), Affine)>,
    /// `r − 1 ≥ 0` on the edge that enters the remainder (`r ≠ 0`).
    pub entry_fact: ((BlockId, BlockId), Affine),
}

/// The links of every remainder loop of the kernel in clang's shape.
pub fn links(env: &Env<'_>) -> Vec<Link> {
    env.g.loops.ids().filter_map(|l| link(env, l)).collect()
}

/// `v & mask` as `(v, mask)` for a constant mask, modulo the width.
fn and_mask(env: &Env<'_>, v: Value) -> Option<(Value, u128, u32)> {
    let Value::Inst(i) = v else { return None };
    let inst = env.f.inst(i);
    if inst.op != Opcode::And {
        return None;
    }
    let bits = env.bits(v)?;
    if !(2..=64).contains(&bits) {
        return None;
    }
    let width = if bits == 64 {
        u64::MAX as u128
    } else {
        (1u128 << bits) - 1
    };
    let [a, b] = [inst.operands[0], inst.operands[1]];
    let (x, c) = match (env.m.int_value(a), env.m.int_value(b)) {
        (None, Some(c)) => (a, c),
        (Some(c), None) => (b, c),
        _ => return None,
    };
    Some((x, (c as i128 as u128) & width, bits))
}

/// The single counter test of an exit: `(test, counter start, step)`.
fn counter_exit<'a>(env: &Env<'a>, test: &'a ExitTest) -> Option<(CounterTest, Value, i128)> {
    let t = test.counter?;
    let c = env.loop_facts().counter(t.phi)?;
    let Some(Amount::Const(step)) = c.step.and_then(|s| s.added()) else {
        return None;
    };
    // The test reads the stepped value: it stops when `h + step` is the bound.
    (t.pred == IntPred::Ne && t.read.offset(c.step.as_ref()) == Some(step))
        .then_some((t, c.start, step))
}

/// The one exit test of loop `l` on the branch of `block`.
fn exit_test_at<'a>(env: &Env<'a>, l: LoopId, block: BlockId) -> Option<&'a ExitTest> {
    match env.loop_facts().exits(l) {
        [x] if x.block == block && x.every_iteration => match x.tests.as_slice() {
            [t] => Some(t),
            _ => None,
        },
        _ => None,
    }
}

fn starts_at_zero(vals: &mut Values<'_, '_>, v: Value) -> bool {
    vals.val(v).as_exact().and_then(|a| a.as_constant()) == Some(Rat::ZERO)
}

fn link(env: &Env<'_>, rem: LoopId) -> Option<Link> {
    let loops = &env.g.loops;
    let cfg = &env.g.cfg;
    let lr = loops.get(rem);
    // The remainder: `k + 1 ≠ x & (U − 1)` from 0, entered from X only.
    let [latch_r] = lr.latches.as_slice() else {
        return None;
    };
    let (t, start, step) = counter_exit(env, exit_test_at(env, rem, *latch_r)?)?;
    let (x, mask, bits) = and_mask(env, t.bound)?;
    let unroll = mask + 1;
    if step != 1 || unroll < 2 || !unroll.is_power_of_two() {
        return None;
    }
    let mut vals = Values::new(env, Ranges::default());
    if !starts_at_zero(&mut vals, start) {
        return None;
    }
    let outside: Vec<BlockId> = cfg
        .preds(lr.header)
        .iter()
        .copied()
        .filter(|&p| !lr.contains(p))
        .collect();
    let [mid] = outside.as_slice() else {
        return None;
    };
    let entry_fact = (
        (*mid, lr.header),
        Affine::sym(Sym::Rem(rem)).plus(-Rat::ONE),
    );
    // clang 19 tests `x & (U − 1)` in X itself; clang 22 tests it in a
    // block T after the main loop and enters the remainder from X, which
    // both T and the guard reach, under `assume(x & (U−1) ≠ 0)`. There `r`
    // is rewritten on the main loop's edge into T (where its counter is
    // still in scope) and passes through T unchanged.
    let tested_here = enters_when_nonzero(env, *mid, lr.header, t.bound);
    if !tested_here && !assumes_nonzero(env, *mid, lr.header, t.bound) {
        return None;
    }
    // X's predecessors: the main loop's latch (or, in clang 22's shape,
    // the test block right after it) and the guard.
    let [p, q] = cfg.preds(*mid) else { return None };
    let main_exit = |a: BlockId| -> Option<(BlockId, LoopId)> {
        let latch = if tested_here {
            a
        } else {
            let [l] = cfg.preds(a) else { return None };
            enters_when_nonzero(env, a, *mid, t.bound).then_some(*l)?
        };
        let m = loops.loop_of(latch)?;
        (loops.get(m).latches.contains(&latch) && (a == latch || !loops.contains(m, a)))
            .then_some((latch, m))
    };
    let (latch_m, from_main, main, guard) =
        [(*p, *q), (*q, *p)].into_iter().find_map(|(a, b)| {
            let (latch, m) = main_exit(a)?;
            (!loops.contains(m, *mid) && !loops.contains(m, b)).then_some((latch, a, m, b))
        })?;
    let (tm, start_m, step_m) = counter_exit(env, exit_test_at(env, main, latch_m)?)?;
    let (xm, cmask, bits_m) = and_mask(env, tm.bound)?;
    let u = unroll as i128;
    if xm != x || bits_m != bits || step_m != u || !starts_at_zero(&mut vals, start_m) {
        return None;
    }
    let x_aff = vals.val(x).as_exact()?.clone();
    if x_aff.mentions(|s| s.is_per_thread() || matches!(s, Sym::Ghost(_) | Sym::Rem(_))) {
        return None;
    }
    // `x & C = x − (x & (U − 1))`: C is every bit but the low ones, or
    // every bit but the low ones and the sign with x ≥ 0 where main exits.
    let width = if bits == 64 {
        u64::MAX as u128
    } else {
        (1u128 << bits) - 1
    };
    let all = width & !mask;
    let no_sign = all & !(1u128 << (bits - 1));
    let mut at_exit = Values::new(env, Ranges::default());
    let exit_to = if tested_here { *mid } else { from_main };
    values::edge_facts(&mut at_exit, latch_m, exit_to);
    if !(cmask == all || cmask == no_sign && at_exit.ranges.nonneg(env, &x_aff)) {
        return None;
    }
    // On the guard's edge, 0 ≤ x < U: x & (U − 1) = x.
    let mut at_guard = Values::new(env, Ranges::default());
    values::edge_facts(&mut at_guard, guard, *mid);
    let (lo, hi) = at_guard.ranges.of(env, &x_aff);
    if !(lo.is_some_and(|l| l >= Rat::ZERO) && hi.is_some_and(|h| h < Rat::int(u))) {
        return None;
    }
    let k_main = Affine::sym(Sym::Ghost(main));
    let after_main = x_aff.sub(&k_main.plus(Rat::ONE).scale(Rat::int(u)));
    Some(Link {
        rem,
        trip: Affine::sym(Sym::Rem(rem)).plus(-Rat::ONE),
        substs: vec![((latch_m, exit_to), after_main), ((guard, *mid), x_aff)],
        entry_fact,
    })
}

/// Whether `mid` goes straight to `header` under `assume(bound ≠ 0)`.
fn assumes_nonzero(env: &Env<'_>, mid: BlockId, header: BlockId, bound: Value) -> bool {
    let Some(t) = env.f.terminator(mid) else {
        return false;
    };
    let InstKind::Br { targets } = &t.kind else {
        return false;
    };
    if targets.as_slice() != [header] {
        return false;
    }
    env.f.blocks[mid.index()].insts.iter().any(|&i| {
        let inst = env.f.inst(i);
        if env.m.called_intrinsic(inst) != Some(crate::ir::Intrinsic::Assume) {
            return false;
        }
        let Some(&Value::Inst(c)) = inst.operands.first() else {
            return false;
        };
        let cmp = env.f.inst(c);
        let zero = |v: Value| env.m.int_value(v) == Some(0);
        matches!(cmp.kind, InstKind::ICmp(IntPred::Ne))
            && ((cmp.operands[0] == bound && zero(cmp.operands[1]))
                || (cmp.operands[1] == bound && zero(cmp.operands[0])))
    })
}

/// Whether `mid` branches to `header` exactly when `bound ≠ 0`.
fn enters_when_nonzero(env: &Env<'_>, mid: BlockId, header: BlockId, bound: Value) -> bool {
    let Some(t) = env.f.terminator(mid) else {
        return false;
    };
    let InstKind::Br { targets } = &t.kind else {
        return false;
    };
    if targets.len() != 2 || targets[0] == targets[1] {
        return false;
    }
    let Value::Inst(c) = t.operands[0] else {
        return false;
    };
    let cmp = env.f.inst(c);
    let InstKind::ICmp(pred) = cmp.kind else {
        return false;
    };
    let zero = |v: Value| env.m.int_value(v) == Some(0);
    let ops = (cmp.operands[0], cmp.operands[1]);
    let tests_bound = (ops.0 == bound && zero(ops.1)) || (ops.1 == bound && zero(ops.0));
    let into_header_on = targets.iter().position(|&b| b == header);
    tests_bound
        && matches!(
            (pred, into_header_on),
            (IntPred::Eq, Some(1)) | (IntPred::Ne, Some(0))
        )
}
