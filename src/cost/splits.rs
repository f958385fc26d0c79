//! How often a loop's divergent exits can split a warp in one entry into
//! the loop, so that `divwarps` pays for them once per entry instead of
//! once per iteration.
//!
//! Each split at an exit sends at least one lane out of the loop and keeps
//! at least one in it, and lanes that left do not come back before the
//! next entry (they wait at the exit's reconvergence point, outside the
//! loop). A warp enters with at most 32 lanes, so its exits split it at
//! most 31 times per entry ([`MAX_SPLITS`]).
//!
//! Fewer where the lanes' exit iterations are close: when the only exit
//! that can split is a test `h + o < E` (or `≤`) on a counter `h` that
//! starts at `s + d(lane)` and moves up by a step `S` with `S` larger than
//! the spread of `d` over the lanes of any warp (a grid-stride or
//! block-stride loop), and `E` is the same for the warp's lanes, lane
//! `L` leaves after `⌈(E − s − o − d(L))/S⌉` iterations: at most two
//! distinct values, so at most one split.

use super::affine::Sym;
use super::conditions::{Env, Ranges, Values};
use super::rat::Rat;
use crate::acf::expr::{Atom, ExprId, Op, Uniform};
use crate::acf::KernelAcf;
use crate::analysis::KernelAnalysis;
use crate::checks::divergent_branch::Divergence;
use crate::checks::SiteFigures;
use crate::graph::loop_facts::Amount;
use crate::graph::LoopId;
use crate::hw;
use crate::ir::SiteKind;
use crate::ir::{BlockId, FuncId, InstId, IntPred, Value};

/// The most splits a warp's exits can make in one entry into a loop.
pub const MAX_SPLITS: u32 = hw::WARP_SIZE - 1;

/// Where the splits of loop exits are paid.
#[derive(Default)]
pub struct Splits {
    /// Per loop: the most splits its exits can make in one entry (0: none
    /// of its exits can split a warp).
    pub per_entry: Vec<u32>,
    /// Branches whose splits the entries of their loop pay: guards of
    /// rotated loops whose one split per entry covers theirs too (see
    /// [`exit_splits`]), and branches of a laddered loop
    /// ([`ladder_splits`]).
    pub covered_guards: Vec<BlockId>,
    /// Every divergent exit pays each time it runs and no entry pays
    /// (RaCuda's charge): looser for long loops, tighter for a loop of
    /// fewer than 31 iterations, so the bound is the least of both.
    pub each_time: bool,
}

impl Splits {
    /// The charge of [`Splits::each_time`].
    pub fn each_time() -> Splits {
        Splits {
            each_time: true,
            ..Splits::default()
        }
    }

    /// Whether an entry into some loop pays its exits' splits.
    pub fn any_per_entry(&self) -> bool {
        self.per_entry.iter().any(|&n| n > 0) || !self.covered_guards.is_empty()
    }
}

/// The splits of each loop's exits among `divergent`.
///
/// A loop whose exit splits at most once (a strided counter test) is
/// often rotated by clang behind a guard, the same test on the counter's
/// start, which lanes fail on "iteration 0": the guard and the exit
/// together still see at most two consecutive exit iterations, so at most
/// one split, which the loop's entry pays. Such a guard is listed in
/// `covered_guards`: a split there always enters the loop (its staying
/// side leads straight to the header), which pays for it.
pub fn exit_splits(
    env: &Env<'_>,
    acf: (&KernelAcf, FuncId),
    divergent: &dyn Fn(BlockId) -> bool,
) -> Splits {
    let per_entry = per_entry(env, acf, divergent);
    let facts = env.loop_facts();
    let mut covered_guards = Vec::new();
    for b in env.f.block_ids() {
        if divergent(b) && env.g.exit_of(b).is_none() {
            let guarded = env.g.loops.iter().any(|(l, _)| {
                per_entry[l.index()] == 1
                    && facts
                        .guards(l)
                        .iter()
                        .any(|g| g.block == b && strided_exit(env, acf, l, g.exit))
            });
            if guarded {
                covered_guards.push(b);
            }
        }
    }
    Splits {
        per_entry,
        covered_guards,
        each_time: false,
    }
}

/// Adds the splits of branches inside a loop whose counter the block
/// shape fixes (the ACF's ladder: `for (s = blockDim.x / 2; s > 0; s >>= 1)
/// if (tid < s)`): the divergence check says, per value of the counter,
/// whether the branch can split any warp, and each entry runs each value
/// at most once, so the branch splits a warp at most on the rows that say
/// it can (5 of 8 at 256 threads: s = 16..1), paid on entering the loop.
/// Only for a branch whose innermost loop is the ladder's and that a warp
/// runs once per iteration ([`super::sweeps::once_per_iteration`]).
pub fn ladder_splits(
    splits: &mut Splits,
    env: &Env<'_>,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    divergent: &dyn Fn(BlockId) -> bool,
) {
    let acf = &k.acf;
    let Some(&c) = acf.contexts(k.kernel).first() else {
        return;
    };
    for (s, fig) in k.sites.iter().zip(figures) {
        if s.func != k.kernel || s.kind != SiteKind::Branch {
            continue;
        }
        let b = env.f.inst(s.inst).block;
        if !divergent(b) || env.g.exit_of(b).is_some() || splits.covered_guards.contains(&b) {
            continue;
        }
        let Some(ladder) = acf.ladder(c, b) else {
            continue;
        };
        let Some(its) = fig.get::<Divergence>().and_then(|d| d.iterations.as_ref()) else {
            continue;
        };
        let mut values = ladder.values.clone();
        values.sort_unstable();
        values.dedup();
        let distinct = values.len() == ladder.values.len();
        if !distinct || env.g.loops.loop_of(b) != Some(ladder.lp) || fig.reason.is_some() {
            continue;
        }
        if !super::sweeps::once_per_iteration(env, ladder.lp, b, divergent) {
            continue;
        }
        let rows = its.rows.iter().filter(|r| r.split_max > 0).count() as u32;
        if let Some(n) = splits.per_entry.get_mut(ladder.lp.index()) {
            *n += rows;
            splits.covered_guards.push(b);
        }
    }
}

fn per_entry(
    env: &Env<'_>,
    (acf, kernel): (&KernelAcf, FuncId),
    divergent: &dyn Fn(BlockId) -> bool,
) -> Vec<u32> {
    let g = env.g;
    let mut exits: Vec<Vec<BlockId>> = vec![Vec::new(); g.loops.len()];
    for b in env.f.block_ids() {
        if divergent(b) {
            if let Some(l) = g.exit_of(b) {
                exits[l.index()].push(b);
            }
        }
    }
    exits
        .iter()
        .enumerate()
        .map(|(i, bs)| match bs.as_slice() {
            [] => 0,
            [b] if strided_exit(env, (acf, kernel), LoopId(i as u32), *b) => 1,
            _ => MAX_SPLITS,
        })
        .collect()
}

/// Whether the exit ending `b` of loop `l` is a counter test whose lanes
/// leave on at most two consecutive iterations (see the module docs).
fn strided_exit(env: &Env<'_>, acf: (&KernelAcf, FuncId), l: LoopId, b: BlockId) -> bool {
    let facts = env.loop_facts();
    let Some(exit) = facts.exit(l, b) else {
        return false;
    };
    let [test] = exit.tests.as_slice() else {
        return false;
    };
    let Some(t) = test.counter.filter(|_| exit.every_iteration) else {
        return false;
    };
    // The branch decides on that comparison alone (`c && x*x < 4` lists
    // only its integer test).
    let cond = env
        .f
        .terminator(b)
        .and_then(|i| i.operands.first().copied());
    if cond != Some(Value::Inst(test.cmp)) {
        return false;
    }
    if !matches!(
        t.pred,
        IntPred::Slt | IntPred::Ult | IntPred::Sle | IntPred::Ule
    ) {
        return false;
    }
    let Some(counter) = facts.counter(t.phi).filter(|c| c.lp == l) else {
        return false;
    };
    let mut vals = Values::new(env, Ranges::default());
    let step = match counter.step.and_then(|s| s.added()) {
        Some(Amount::Const(c)) if c > 0 => Rat::int(c),
        Some(Amount::Invariant(v)) => {
            let Some(a) = vals.val(v).as_exact().cloned() else {
                return false;
            };
            if a.mentions(|s| s.is_per_thread()) {
                return false;
            }
            match vals.ranges.of(env, &a).0 {
                Some(lo) if lo > Rat::ZERO => lo,
                _ => return false,
            }
        }
        _ => return false,
    };
    // The comparison as the ACF built it: the counter's side holds the
    // start's per-lane part (a header phi is its iteration atom plus that),
    // and the bound's side must be the same in every lane.
    let Some((counter_side, bound_side)) = compare_sides(acf, test.cmp, t.bound == test.lhs) else {
        return false;
    };
    if !bound_side.is_empty() {
        return false;
    }
    lane_spread(env.block, &counter_side) < step
}

/// The per-lane terms of the counter's and the bound's side of the `icmp`
/// `cmp` (`swapped`: the bound is its left operand).
type Sides = (Vec<(Sym, Rat)>, Vec<(Sym, Rat)>);

fn compare_sides((acf, f): (&KernelAcf, FuncId), cmp: InstId, swapped: bool) -> Option<Sides> {
    let &c = acf.contexts(f).first()?;
    let p = acf.arena.poly(acf.expr(c, Value::Inst(cmp))?);
    let [(mono, 1)] = p.terms.as_slice() else {
        return None;
    };
    let [a] = mono.as_slice() else {
        return None;
    };
    let (Atom::Op(Op::Cmp(_), args) | Atom::Uniform(Uniform::Op(Op::Cmp(_), args))) =
        acf.arena.atom(*a)
    else {
        return None;
    };
    let [l, r] = args.as_slice() else {
        return None;
    };
    let (l, r) = (lane_terms(acf, *l)?, lane_terms(acf, *r)?);
    Some(if swapped { (r, l) } else { (l, r) })
}

/// What of `e` differs between the lanes of a warp: its
/// terms `c·tid.d` and `c·laneid`; `None` when another per-lane leaf (a
/// load, a product with a thread index) is in it.
fn lane_terms(acf: &KernelAcf, e: ExprId) -> Option<Vec<(Sym, Rat)>> {
    let p = acf.arena.poly(e);
    let mut out = Vec::new();
    for (mono, k) in &p.terms {
        let thread: Vec<_> = mono
            .iter()
            .filter(|&&a| acf.arena.facts(a).thread)
            .collect();
        match (thread.as_slice(), mono.len()) {
            ([], _) => {}
            ([&a], 1) => match acf.arena.atom(a) {
                Atom::Tid(d) => out.push((Sym::Tid(d.index() as u8), Rat::int(*k))),
                Atom::LaneId => out.push((Sym::LaneId, Rat::int(*k))),
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(out)
}

/// The largest difference of `Σ c·s` over `per_lane` between two lanes of
/// one warp of a block of `block` threads.
fn lane_spread(block: [u32; 3], per_lane: &[(Sym, Rat)]) -> Rat {
    let threads = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
    let (bx, by) = (u64::from(block[0].max(1)), u64::from(block[1].max(1)));
    let mut spread = Rat::ZERO;
    let lanes = u64::from(hw::WARP_SIZE);
    for w in 0..threads.div_ceil(lanes) {
        let (mut lo, mut hi) = (None::<Rat>, None::<Rat>);
        for t in w * lanes..((w + 1) * lanes).min(threads) {
            let tid = [t % bx, (t / bx) % by, t / (bx * by)];
            let v = per_lane.iter().fold(Rat::ZERO, |acc, &(s, c)| {
                let x = match s {
                    Sym::Tid(d) => tid[usize::from(d)],
                    _ => t % lanes,
                };
                acc + c * Rat::int(i128::from(x))
            });
            lo = Some(lo.map_or(v, |x: Rat| x.min(v)));
            hi = Some(hi.map_or(v, |x: Rat| x.max(v)));
        }
        if let (Some(lo), Some(hi)) = (lo, hi) {
            spread = spread.max(hi - lo);
        }
    }
    spread
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(c: i128) -> (Sym, Rat) {
        (Sym::Tid(0), Rat::int(c))
    }

    #[test]
    fn spread_within_a_warp() {
        // s + tid.x in blocks of 64: a warp's lanes are 32 consecutive x.
        assert_eq!(lane_spread([64, 1, 1], &[x(1)]), Rat::int(31));
        // In blocks of 16 x 16 a warp holds two rows: x spans 0..15.
        assert_eq!(lane_spread([16, 16, 1], &[x(1)]), Rat::int(15));
        // tid.x + 100·tid.y over those two rows: 15 + 100.
        let y = (Sym::Tid(1), Rat::int(100));
        assert_eq!(lane_spread([16, 16, 1], &[x(1), y]), Rat::int(115));
        // A block of 8 threads: one partial warp, spread 7·2.
        assert_eq!(lane_spread([8, 1, 1], &[x(2)]), Rat::int(14));
        // A negative coefficient spreads as much.
        assert_eq!(lane_spread([64, 1, 1], &[x(-3)]), Rat::int(93));
        // Nothing per lane: no spread.
        assert_eq!(lane_spread([64, 1, 1], &[]), Rat::ZERO);
    }
}
