//! Loop trip bounds: for each natural loop, an upper bound on how many
//! times a warp takes its back edges per entry, over the symbols of the
//! enclosing scope. This is the fact that releases a loop's potential
//! (Q:While: the counter's distance to its bound pays for an iteration).
//!
//! A bound comes from an exit test that every iteration passes and that
//! compares a counter `h + o` (a header phi moving by a step each
//! iteration) with a loop-invariant bound `E`; the graph's loop facts name
//! both (counters, steps, exit tests), and here they are evaluated:
//!
//! * `h + o < E`, step `c > 0`: at most `⌈(E − s − o)/c⌉` back edges, with
//!   `s` the start; `≤` one more; decreasing counters mirrored.
//! * `h + o ≠ E` (clang's rotated `icmp eq/ne` exits, unrolled loops): when
//!   `E ≡ s + o (mod c)` and `E − s − o ≥ 0` on entry (from the guards the
//!   entry edge is under), the counter reaches `E` exactly: `(E − s − o)/c`.
//! * A symbolic step (a grid stride `blockDim.x·gridDim.x`): the factor
//!   `⌈(E − s)/step⌉`.
//! * Counters that are not additive (`s *= 2`, `s >>= 1`) from a constant
//!   start against a constant bound: counted by running them.
//!
//! Bounds hold per lane with the thread symbols at their worst, so they
//! hold for the warp, whose trip count is its slowest lane's.

use super::affine::{Affine, Sym};
use super::bound::{Factor, Factors};
use super::conditions::{self, congruence_bits, Env, Ranges, Values};
use super::rat::Rat;
use crate::graph::loop_facts::{Amount, Counter, ExitTest};
use crate::graph::{Loop, LoopId};
use crate::ir::{InstId, IntPred, Opcode, Value};

/// The bound on one loop's back edges per entry, or why there is none.
#[derive(Clone, Debug)]
pub enum Trip {
    Bounded(Affine),
    Unknown(String),
}

/// Why a bound whose arithmetic left `i128` is none.
const OVERFLOW: &str = "its arithmetic overflows (values beyond 2^127)";

/// The most iterations a non-additive counter is run for.
const RUN_LIMIT: i128 = 4096;

/// Trip bounds for every loop of the kernel.
pub fn trip_bounds(env: &Env<'_>, factors: &mut Factors) -> Vec<Trip> {
    env.g
        .loops
        .iter()
        .map(|(l, lp)| loop_bound(env, factors, l, lp))
        .collect()
}

fn loop_bound(env: &Env<'_>, factors: &mut Factors, l: LoopId, lp: &Loop) -> Trip {
    // Guards on the way in: from the single block that enters the loop, or
    // what dominates the header.
    let outside: Vec<_> = env
        .g
        .cfg
        .preds(lp.header)
        .iter()
        .copied()
        .filter(|&p| !lp.contains(p))
        .collect();
    let mut vals = Values::new(env, Ranges::default());
    if let [p] = outside.as_slice() {
        conditions::edge_facts(&mut vals, *p, lp.header);
    }
    let mut best: Option<Affine> = None;
    let mut why = "no exit compares a counter with a loop-invariant bound".to_string();
    let exits = env.loop_facts().exits(l).iter();
    for test in exits.filter(|x| x.every_iteration).flat_map(|x| &x.tests) {
        match compare_bound(env, &mut vals, factors, lp, test) {
            Ok(b) if !b.is_finite() => why = OVERFLOW.into(),
            Ok(b) => {
                let better = match &best {
                    None => true,
                    Some(old) => b.as_constant().is_some() && old.as_constant().is_none(),
                };
                if better {
                    best = Some(b);
                }
            }
            Err(e) => why = e,
        }
    }
    match best {
        Some(b) => Trip::Bounded(large_as_factor(factors, b)),
        None => Trip::Unknown(why),
    }
}

/// Past this a trip bound's numbers are a symbol of their own.
const LARGE: i128 = 1 << 20;

/// A trip bound with a number past [`LARGE`] (`2^42/256` iterations) as a
/// factor `⌈max0(T)⌉`: the LP then carries a symbol with coefficient 1
/// instead of 2^34, which a float solver cannot resolve next to the
/// costs, and the bound is `10·⌈…⌉ + 11`, exact. Only where the bound is
/// over the launch's symbols (a counter of an outer loop or a thread
/// index has no value before the loop).
fn large_as_factor(factors: &mut Factors, t: Affine) -> Affine {
    let big = |c: &Rat| c.abs() > Rat::int(LARGE);
    let large = big(&t.konst) || t.terms.values().any(big);
    let launch_only = !t.mentions(|s| s.is_per_thread() || matches!(s, Sym::Ghost(_)));
    if !(large && launch_only) {
        return t;
    }
    let f = factors.intern(Factor {
        num: t,
        den: Affine::int(1),
    });
    Affine::sym(Sym::Factor(f))
}

/// The trip bound an exit test gives, by the counter's step: one that
/// adds a constant, tested at a constant offset; one that adds an
/// invariant stride; any other, run from a constant start.
fn compare_bound(
    env: &Env<'_>,
    vals: &mut Values<'_, '_>,
    factors: &mut Factors,
    lp: &Loop,
    test: &ExitTest,
) -> Result<Affine, String> {
    let no_counter = || "the exit test compares no counter with an invariant".to_string();
    let t = test.counter.ok_or_else(no_counter)?;
    let counter = env.loop_facts().counter(t.phi).ok_or_else(no_counter)?;
    let offset = t.read.offset(counter.step.as_ref());
    match (counter.step.and_then(|s| s.added()), offset) {
        (Some(Amount::Const(c)), Some(o)) => {
            let t = additive(env, vals, counter, c, o, t.bound, t.pred)?;
            Ok(t.into_affine(factors))
        }
        (Some(Amount::Invariant(step)), o) => strided(
            env,
            vals,
            factors,
            counter,
            (step, o.is_some()),
            t.bound,
            t.pred,
        ),
        _ => run_counter(vals, lp, counter, test),
    }
}

/// An unsigned exit test compares the counter as we do only when its start
/// and bound are nonnegative.
fn unsigned_ok(
    vals: &mut Values<'_, '_>,
    ind: &Counter,
    bound: Value,
    pred: IntPred,
) -> Result<(), String> {
    if pred.is_unsigned() && !(vals.nonneg(ind.start) && vals.nonneg(bound)) {
        return Err("an unsigned exit test on a counter that may be negative".into());
    }
    Ok(())
}

/// A trip bound of an additive counter: `⌈max(0, dist)/step⌉` back
/// edges, or an affine that is at least that.
enum Additive {
    Affine(Affine),
    Ceil(Affine, i128),
}

impl Additive {
    /// A ceiling over launch symbols becomes a factor (`⌈wA/16⌉`, exact
    /// for every wA, where `(wA + 15)/16` pays up to one iteration more);
    /// one over an outer loop's counter or a thread index stays the
    /// affine `dist/step + (step − 1)/step`.
    fn into_affine(self, factors: &mut Factors) -> Affine {
        match self {
            Additive::Affine(a) => a,
            Additive::Ceil(d, c) => {
                if let Some(k) = d.as_constant() {
                    let q = k.max(Rat::ZERO) * Rat::int(c).recip();
                    return q
                        .ceil()
                        .map_or(Affine::int(0).plus(Rat::OVERFLOW), Affine::int);
                }
                let local = d.mentions(|s| s.is_per_thread() || matches!(s, Sym::Ghost(_)));
                if local || c == 1 {
                    let c = Rat::int(c);
                    return d.scale(c.recip()).plus((c - Rat::ONE) * c.recip());
                }
                let f = factors.intern(Factor {
                    num: d,
                    den: Affine::int(c),
                });
                Affine::sym(Sym::Factor(f))
            }
        }
    }
}

/// The per-lane bound for `s + o + c·k  pred  E`.
fn additive(
    env: &Env<'_>,
    vals: &mut Values<'_, '_>,
    ind: &Counter,
    c: i128,
    o: i128,
    bound: Value,
    pred: IntPred,
) -> Result<Additive, String> {
    if c == 0 {
        return Err("the counter does not move".into());
    }
    unsigned_ok(vals, ind, bound, pred)?;
    // dist = how far the counter is from the bound, in its direction.
    let (dist, cabs) = if c > 0 {
        let eh = distance(vals, bound, ind.start)?;
        (eh.plus(Rat::int(-o)), c)
    } else {
        let sh = distance(vals, ind.start, bound)?;
        (sh.plus(Rat::int(o)), -c)
    };
    let dist = env.eliminate(&dist, true);
    let inv = Rat::new(1, cabs);
    let up = c > 0;
    // Back edges: `⌈dist/c⌉` for `<` (the stepped value must stay below
    // E), `⌊dist/c⌋ + 1 = ⌈(dist + 1)/c⌉` for `≤`, over integers.
    let t = match pred {
        IntPred::Slt | IntPred::Ult if up => Additive::Ceil(dist, cabs),
        IntPred::Sgt | IntPred::Ugt if !up => Additive::Ceil(dist, cabs),
        IntPred::Sle | IntPred::Ule if up => Additive::Ceil(dist.plus(Rat::ONE), cabs),
        IntPred::Sge | IntPred::Uge if !up => Additive::Ceil(dist.plus(Rat::ONE), cabs),
        IntPred::Ne => {
            exact_arrival(env, vals, (ind, bound), (c, o))?;
            Additive::Affine(dist.scale(inv))
        }
        _ => return Err("the exit test does not stop the counter".into()),
    };
    Ok(t)
}

/// An upper bound on `a − b`: from a term they share (a tile's start
/// `w·blockIdx.x` in both), else from `a`'s upper and `b`'s lower bound.
fn distance(vals: &mut Values<'_, '_>, a: Value, b: Value) -> Result<Affine, String> {
    if let Some(g) = vals.gap(a, b) {
        return Ok(g);
    }
    match (vals.val(a).hi, vals.val(b).lo) {
        (Some(ah), Some(bl)) => Ok(ah.sub(&bl)),
        _ => Err("no bound on the exit test's operands".into()),
    }
}

/// Proves that `s + o + c·k` meets `E` exactly: the same residue modulo
/// `c`, and not past it on entry.
fn exact_arrival(
    env: &Env<'_>,
    vals: &mut Values<'_, '_>,
    (ind, bound): (&Counter, Value),
    (c, o): (i128, i128),
) -> Result<(), String> {
    let cabs = c.unsigned_abs();
    if cabs != 1 {
        if !cabs.is_power_of_two() {
            return Err("a not-equal exit test with a step that is no power of two".into());
        }
        let k = cabs.trailing_zeros();
        let start = vals.val(ind.start);
        let s_const = start.as_exact().and_then(|a| a.as_constant());
        let aligned = s_const.is_some_and(|s| s.is_integer() && (s.num() + o) % c == 0)
            || (congruence_bits(env, ind.start) >= k && o % c == 0);
        if !(aligned && congruence_bits(env, bound) >= k) {
            return Err("a not-equal exit test the counter may step over".into());
        }
    }
    let (s, e) = (vals.val(ind.start), vals.val(bound));
    // A lower bound on the distance is minus an upper bound the other way.
    let gap = if c > 0 {
        distance(vals, ind.start, bound)
            .ok()
            .map(|d| d.scale(-Rat::ONE).plus(Rat::int(-o)))
    } else {
        distance(vals, bound, ind.start)
            .ok()
            .map(|d| d.scale(-Rat::ONE).plus(Rat::int(o)))
    };
    // The gap is a multiple of the step: more than −|c| means at least 0.
    let slack = Rat::int(cabs as i128 - 1);
    let gap = gap.map(|g| env.eliminate(&g, false).plus(slack));
    if gap.is_some_and(|g| vals.ranges.nonneg(env, &g)) {
        return Ok(());
    }
    // Numerically, with the integers rounded: the bound's least value
    // rounded up to the step's multiples, against the start's largest.
    let num = |a: &Option<Affine>, low: bool| {
        let a = env.eliminate(a.as_ref()?, !low);
        let (lo, hi) = vals.ranges.of(env, &a);
        if low {
            lo.and_then(|x| x.ceil())
        } else {
            hi.and_then(|x| x.floor())
        }
    };
    let c128 = cabs as i128;
    // Checked: an overflow proves nothing.
    let ok = if c > 0 {
        match (num(&e.lo, true), num(&s.hi, false)) {
            (Some(el), Some(sh)) => {
                let up = i128::from(el.rem_euclid(c128) != 0);
                el.div_euclid(c128)
                    .checked_add(up)
                    .and_then(|q| q.checked_mul(c128))
                    .and_then(|r| r.checked_sub(sh)?.checked_sub(o))
                    .is_some_and(|g| g >= 0)
            }
            _ => false,
        }
    } else {
        match (num(&s.lo, true), num(&e.hi, false)) {
            (Some(sl), Some(eh)) => eh
                .div_euclid(c128)
                .checked_mul(c128)
                .and_then(|r| sl.checked_sub(r)?.checked_add(o))
                .is_some_and(|g| g >= 0),
            _ => false,
        }
    };
    if ok {
        Ok(())
    } else {
        Err("cannot show the counter starts before its not-equal bound".into())
    }
}

/// `h + step < E` with a loop-invariant symbolic step: `⌈(E − s)/step⌉ − 1`
/// back edges when the test is on the next value, one more when it is on
/// the counter itself (`on_counter`), as a factor.
fn strided(
    env: &Env<'_>,
    vals: &mut Values<'_, '_>,
    factors: &mut Factors,
    ind: &Counter,
    (step, on_counter): (Value, bool),
    bound: Value,
    pred: IntPred,
) -> Result<Affine, String> {
    if !matches!(pred, IntPred::Slt | IntPred::Ult) {
        return Err("a strided counter with an exit test other than `<`".into());
    }
    unsigned_ok(vals, ind, bound, pred)?;
    let dist = distance(vals, bound, ind.start)?;
    let Some(den) = vals.val(step).as_exact().cloned() else {
        return Err("a loop stride that is not known exactly".into());
    };
    let num = env.eliminate(&dist, true);
    // A stride known at compile time (the block's size): a plain count.
    if let Some(d) = den.as_constant().filter(|d| *d > Rat::ZERO) {
        let t = match num.as_constant() {
            Some(n) => match (n * d.recip()).ceil() {
                Some(t) => Affine::int(t.max(0)),
                None => return Err(OVERFLOW.into()),
            },
            None => num.scale(d.recip()).plus(Rat::ONE - d.recip()),
        };
        return Ok(if on_counter { t } else { t.plus(-Rat::ONE) });
    }
    if num.mentions(|s| matches!(s, Sym::Ghost(_))) || den.mentions(|s| s.is_per_thread()) {
        return Err("a strided loop inside another loop".into());
    }
    if vals.ranges.of(env, &den).0.is_none_or(|lo| lo < Rat::ONE) {
        return Err("a loop stride that may not be positive".into());
    }
    let f = factors.intern(Factor { num, den });
    let t = Affine::sym(Sym::Factor(f));
    Ok(if on_counter { t } else { t.plus(-Rat::ONE) })
}

/// Runs a counter with a constant start through its update and exit
/// test (`lhs pred rhs` as the `icmp` has them, whichever side the
/// counter is on).
fn run_counter(
    vals: &mut Values<'_, '_>,
    lp: &Loop,
    ind: &Counter,
    test: &ExitTest,
) -> Result<Affine, String> {
    let (a, b, pred) = (test.lhs, test.rhs, test.pred);
    let start = vals
        .val(ind.start)
        .as_exact()
        .and_then(|s| s.as_constant())
        .filter(|s| s.is_integer())
        .ok_or("a counter that is neither additive nor starts at a constant")?;
    let env = vals.env;
    let bits = env.bits(Value::Inst(ind.phi)).unwrap_or(64);
    let mut h = start.num();
    for k in 0..RUN_LIMIT {
        let mut run = Runner {
            env,
            vals,
            lp,
            phi: ind.phi,
            h,
            depth: 0,
        };
        let (x, y) = match (run.eval(a), run.eval(b)) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err("a counter update we cannot run".into()),
        };
        let bits_a = env.bits(a).unwrap_or(bits);
        if !holds(pred, x, y, bits_a) {
            return Ok(Affine::int(k));
        }
        h = run.eval(ind.next).ok_or("a counter update we cannot run")?;
    }
    Err(format!(
        "a counter still running after {RUN_LIMIT} iterations"
    ))
}

fn holds(p: IntPred, x: i128, y: i128, bits: u32) -> bool {
    let m = if bits >= 64 {
        u64::MAX as i128
    } else {
        (1i128 << bits) - 1
    };
    let (ux, uy) = (x & m, y & m);
    let sign = |v: i128| {
        let v = v & m;
        if bits < 128 && v >> (bits.max(1) - 1) & 1 == 1 {
            v - (m + 1)
        } else {
            v
        }
    };
    let (sx, sy) = (sign(x), sign(y));
    match p {
        IntPred::Eq => ux == uy,
        IntPred::Ne => ux != uy,
        IntPred::Ult => ux < uy,
        IntPred::Ule => ux <= uy,
        IntPred::Ugt => ux > uy,
        IntPred::Uge => ux >= uy,
        IntPred::Slt => sx < sy,
        IntPred::Sle => sx <= sy,
        IntPred::Sgt => sx > sy,
        IntPred::Sge => sx >= sy,
    }
}

/// Evaluates values computed from one counter `phi = h` and constants.
struct Runner<'r, 'v, 'a> {
    env: &'v Env<'a>,
    vals: &'r mut Values<'v, 'a>,
    lp: &'r Loop,
    phi: InstId,
    h: i128,
    depth: u32,
}

impl Runner<'_, '_, '_> {
    fn eval(&mut self, v: Value) -> Option<i128> {
        if v == Value::Inst(self.phi) {
            return Some(self.h);
        }
        let inside = matches!(v, Value::Inst(i) if self.lp.contains(self.env.f.inst(i).block));
        if !inside {
            let c = self.vals.val(v).as_exact()?.as_constant()?;
            return c.is_integer().then(|| c.num());
        }
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let Value::Inst(i) = v else { return None };
        let inst = self.env.f.inst(i);
        let bits = self.env.bits(v)?;
        let mask = if bits >= 64 {
            u64::MAX as i128
        } else {
            (1i128 << bits) - 1
        };
        let ops = inst.operands.clone();
        let x = self.eval(ops[0])?;
        let r = match inst.op {
            Opcode::ZExt | Opcode::Trunc => x,
            Opcode::SExt => x,
            // Modulo 2^128, then masked to the width: the low bits are
            // the machine's.
            Opcode::Add => x.wrapping_add(self.eval(ops[1])?),
            Opcode::Sub => x.wrapping_sub(self.eval(ops[1])?),
            Opcode::Mul => x.wrapping_mul(self.eval(ops[1])?),
            Opcode::Shl => x << self.eval(ops[1])?.clamp(0, 63),
            Opcode::LShr => (x & mask) >> self.eval(ops[1])?.clamp(0, 63),
            Opcode::AShr => x >> self.eval(ops[1])?.clamp(0, 63),
            Opcode::UDiv => (x & mask).checked_div(self.eval(ops[1])? & mask)?,
            Opcode::SDiv => x.checked_div(self.eval(ops[1])?)?,
            Opcode::And => x & self.eval(ops[1])?,
            Opcode::Or => x | self.eval(ops[1])?,
            Opcode::Xor => x ^ self.eval(ops[1])?,
            _ => return None,
        };
        self.depth -= 1;
        Some(r & mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::FunctionGraphs;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::FuncId;

    /// `for (s = 1; s < blockDim.x; s *= 2)` rotated, at 256 threads,
    /// with `s << 1` and `blockDim.x` compared as `pred` in the given
    /// order (`counter_left`).
    fn doubling_trips(pred: IntPred, counter_left: bool) -> Trip {
        let mut mb = ModuleBuilder::new();
        let (i32t, void) = (mb.int(32), mb.void());
        let mut fb = mb.define("k", &[], void);
        fb.kernel();
        let (body, exit) = (fb.block(), fb.block());
        let ntid = fb.sreg("ntid.x");
        let one = fb.const_int(32, 1);
        fb.br(body);
        fb.switch_to(body);
        let s = fb.phi(i32t, &[(one, crate::ir::BlockId(0))]);
        let next = fb.binary(Opcode::Shl, s, one);
        let (a, b) = if counter_left {
            (next, ntid)
        } else {
            (ntid, next)
        };
        let more = fb.icmp(pred, a, b);
        fb.cond_br(more, body, exit);
        fb.add_incoming(s, next, body);
        fb.switch_to(exit);
        fb.ret(None);
        let m = mb.finish();
        let f = m.func(FuncId(0));
        let g = FunctionGraphs::new(f);
        let env = Env {
            m: &m,
            f,
            g: &g,
            block: [256, 1, 1],
            unsigned: Vec::new(),
        };
        let [trip] = &trip_bounds(&env, &mut Factors::default())[..] else {
            panic!("one loop")
        };
        trip.clone()
    }

    #[test]
    fn a_doubling_counter_runs_to_its_bound_on_either_side() {
        // s = 1, 2, ..., 128 each bring back 2s < 256; at s = 128 the
        // next value 256 leaves: 7 back edges, whichever way the test is
        // written.
        for (pred, counter_left) in [(IntPred::Ult, true), (IntPred::Ugt, false)] {
            let Trip::Bounded(t) = doubling_trips(pred, counter_left) else {
                panic!("bounded")
            };
            assert_eq!(t, Affine::int(7), "{pred:?}");
        }
    }
}
