//! clang's unrolled loop and its remainder: the shape, read once here; the
//! cost stage evaluates it (`cost::remainder`).
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
//! clang 22 tests `n & (U − 1)` in a block T after the main loop instead
//! and enters the remainder from X, which both T and the guard reach,
//! under `assume(n & (U−1) ≠ 0)`.

use super::{Amount, CounterTest, ExitTest, LoopFacts};
use crate::graph::{Cfg, LoopId, Loops};
use crate::ir::{BlockId, Function, InstKind, IntPred, Intrinsic, Module, Opcode, Value};

/// A remainder loop and the main loop it finishes, as the IR shapes them.
/// What the values are (that both counters start at 0, the count's range
/// on the guard's edge) is for the stage that evaluates them.
#[derive(Clone, Debug, PartialEq)]
pub struct Remainder {
    pub rem: LoopId,
    pub main: LoopId,
    /// X: the block that enters the remainder, which the main loop's exit
    /// and the guard reach.
    pub middle: BlockId,
    /// The edge the main loop leaves by, at its latch: into X (clang 19)
    /// or into the test block after it (clang 22), where its counter is
    /// still in scope.
    pub main_exit: (BlockId, BlockId),
    /// The guard's edge into X, taken when the main loop would not run.
    pub guard: (BlockId, BlockId),
    /// `n`: the remainder runs `n & (U − 1)` times.
    pub count: Value,
    /// `U`, a power of two of at least 2.
    pub unroll: u128,
    /// The main loop's bound, `n & C`: which `C`.
    pub main_mask: MainMask,
    /// The remainder's counter's and the main loop's start values.
    pub starts: (Value, Value),
}

/// The main loop's bound `n & C` as `n − (n & (U − 1))`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MainMask {
    /// `C` is every bit but the low ones: always.
    High,
    /// `C` is every bit but the low ones and the sign: where `n ≥ 0`
    /// as the main loop leaves.
    HighButSign,
}

/// The remainders of a function's loops, by remainder loop.
pub(super) fn remainders(
    m: &Module,
    f: &Function,
    cfg: &Cfg,
    loops: &Loops,
    facts: &LoopFacts,
) -> Vec<Remainder> {
    let shape = Shape {
        m,
        f,
        cfg,
        loops,
        facts,
    };
    loops.ids().filter_map(|l| shape.remainder(l)).collect()
}

struct Shape<'a> {
    m: &'a Module,
    f: &'a Function,
    cfg: &'a Cfg,
    loops: &'a Loops,
    facts: &'a LoopFacts,
}

impl Shape<'_> {
    fn remainder(&self, rem: LoopId) -> Option<Remainder> {
        let (cfg, loops) = (self.cfg, self.loops);
        let lr = loops.get(rem);
        // The remainder: `k + 1 ≠ x & (U − 1)`, entered from X only.
        let [latch_r] = lr.latches.as_slice() else {
            return None;
        };
        let (t, start, step) = self.counter_exit(self.exit_test_at(rem, *latch_r)?)?;
        let (x, mask, bits) = self.and_mask(t.bound)?;
        let unroll = mask + 1;
        if step != 1 || unroll < 2 || !unroll.is_power_of_two() {
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
        let tested_here = self.enters_when_nonzero(*mid, lr.header, t.bound);
        if !tested_here && !self.assumes_nonzero(*mid, lr.header, t.bound) {
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
                self.enters_when_nonzero(a, *mid, t.bound).then_some(*l)?
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
        let (tm, start_m, step_m) = self.counter_exit(self.exit_test_at(main, latch_m)?)?;
        let (xm, cmask, bits_m) = self.and_mask(tm.bound)?;
        if xm != x || bits_m != bits || step_m != unroll as i128 {
            return None;
        }
        // `x & C = x − (x & (U − 1))`: C is every bit but the low ones, or
        // every bit but the low ones and the sign with x ≥ 0 where main exits.
        let all = width(bits) & !mask;
        let no_sign = all & !(1u128 << (bits - 1));
        let main_mask = if cmask == all {
            MainMask::High
        } else if cmask == no_sign {
            MainMask::HighButSign
        } else {
            return None;
        };
        Some(Remainder {
            rem,
            main,
            middle: *mid,
            main_exit: (latch_m, if tested_here { *mid } else { from_main }),
            guard: (guard, *mid),
            count: x,
            unroll,
            main_mask,
            starts: (start, start_m),
        })
    }

    /// `v & mask` as `(v, mask, bits)` for a constant mask, modulo the width.
    fn and_mask(&self, v: Value) -> Option<(Value, u128, u32)> {
        let Value::Inst(i) = v else { return None };
        let inst = self.f.inst(i);
        if inst.op != Opcode::And {
            return None;
        }
        let bits = self.m.types.int_bits(self.m.value_type(self.f, v))?;
        if !(2..=64).contains(&bits) {
            return None;
        }
        let [a, b] = [inst.operands[0], inst.operands[1]];
        let (x, c) = match (self.m.int_value(a), self.m.int_value(b)) {
            (None, Some(c)) => (a, c),
            (Some(c), None) => (b, c),
            _ => return None,
        };
        Some((x, (c as i128 as u128) & width(bits), bits))
    }

    /// The single counter test of an exit: `(test, counter start, step)`.
    fn counter_exit(&self, test: &ExitTest) -> Option<(CounterTest, Value, i128)> {
        let t = test.counter?;
        let c = self.facts.counter(t.phi)?;
        let Some(Amount::Const(step)) = c.step.and_then(|s| s.added()) else {
            return None;
        };
        // The test reads the stepped value: it stops when `h + step` is the bound.
        (t.pred == IntPred::Ne && t.read.offset(c.step.as_ref()) == Some(step))
            .then_some((t, c.start, step))
    }

    /// The one exit test of loop `l` on the branch of `block`.
    fn exit_test_at(&self, l: LoopId, block: BlockId) -> Option<&ExitTest> {
        match self.facts.exits(l) {
            [x] if x.block == block && x.every_iteration => match x.tests.as_slice() {
                [t] => Some(t),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `mid` goes straight to `header` under `assume(bound ≠ 0)`.
    fn assumes_nonzero(&self, mid: BlockId, header: BlockId, bound: Value) -> bool {
        let (m, f) = (self.m, self.f);
        let Some(t) = f.terminator(mid) else {
            return false;
        };
        let InstKind::Br { targets } = &t.kind else {
            return false;
        };
        if targets.as_slice() != [header] {
            return false;
        }
        f.blocks[mid.index()].insts.iter().any(|&i| {
            let inst = f.inst(i);
            if m.called_intrinsic(inst) != Some(Intrinsic::Assume) {
                return false;
            }
            let Some(&Value::Inst(c)) = inst.operands.first() else {
                return false;
            };
            let cmp = f.inst(c);
            let zero = |v: Value| m.int_value(v) == Some(0);
            matches!(cmp.kind, InstKind::ICmp(IntPred::Ne))
                && ((cmp.operands[0] == bound && zero(cmp.operands[1]))
                    || (cmp.operands[1] == bound && zero(cmp.operands[0])))
        })
    }

    /// Whether `mid` branches to `header` exactly when `bound ≠ 0`.
    fn enters_when_nonzero(&self, mid: BlockId, header: BlockId, bound: Value) -> bool {
        let (m, f) = (self.m, self.f);
        let Some(t) = f.terminator(mid) else {
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
        let cmp = f.inst(c);
        let InstKind::ICmp(pred) = cmp.kind else {
            return false;
        };
        let zero = |v: Value| m.int_value(v) == Some(0);
        let ops = (cmp.operands[0], cmp.operands[1]);
        let tests_bound = (ops.0 == bound && zero(ops.1)) || (ops.1 == bound && zero(ops.0));
        let into_header_on = targets.iter().position(|&b| b == header);
        tests_bound
            && matches!(
                (pred, into_header_on),
                (IntPred::Eq, Some(1)) | (IntPred::Ne, Some(0))
            )
    }
}

/// Every bit of a `bits`-wide integer.
fn width(bits: u32) -> u128 {
    if bits >= 64 {
        u64::MAX as u128
    } else {
        (1u128 << bits) - 1
    }
}
