//! Meeting at `__syncthreads()`, once no warp of the block can run.
//!
//! `__syncthreads()` is barrier 0, and since Volta it counts threads: it
//! completes when every thread of the block waits at a `__syncthreads()`,
//! whichever call site it reached (warps on the two sides of a branch
//! uniform per warp meet), with the same reduction (`__syncthreads_count`
//! and the others). Anything else can never complete here, and the run
//! stops with a deadlock naming the first warp that cannot pass:
//!
//! * threads that exited before the barrier (PTX releases a barrier held up
//!   only by exited threads, so such a kernel may seem to work on a GPU,
//!   but CUDA leaves it undefined; it is reported);
//! * a warp whose lanes wait at the barrier while others of its lanes are
//!   still on another path (`bar.sync` is `.aligned`: a warp split at it
//!   is undefined behaviour; reported rather than guessed);
//! * warps waiting at different reductions.

use super::error::{ErrorKind, LaneState, SimError};
use super::exec::{lanes, BarrierWait, Locator, Machine, Warp};
use crate::ir::intrinsics::BarrierReduce;

/// Which barrier the block's threads met at.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Met {
    /// `__syncthreads()`: its warps are released.
    Block,
    /// The grid barrier: they wait there until the launch releases them.
    Grid,
}

/// Releases the block's warps from their barrier, or reports why they
/// cannot all pass.
pub fn meet(m: &mut Machine, warps: &mut [Warp]) -> Result<Met, SimError> {
    let first = warps
        .iter()
        .find_map(|w| w.wait.clone())
        .expect("a waiting warp");
    let passes = |w: &Warp| {
        w.wait
            .as_ref()
            .is_some_and(|x| x.mask == w.valid && x.reduce == first.reduce && x.grid == first.grid)
    };
    if !warps.iter().all(passes) {
        return Err(deadlock(m, warps, &first));
    }
    if first.grid {
        return Ok(Met::Grid);
    }
    release(m, warps, first.reduce);
    Ok(Met::Block)
}

/// The name of a barrier as the source calls it.
fn name(wait: &BarrierWait) -> &'static str {
    match wait.reduce {
        _ if wait.grid => "grid barrier (this_grid().sync())",
        BarrierReduce::None => "__syncthreads()",
        BarrierReduce::Popc => "__syncthreads_count()",
        BarrierReduce::And => "__syncthreads_and()",
        BarrierReduce::Or => "__syncthreads_or()",
    }
}

/// Why the first warp that cannot pass cannot, placed at its barrier.
fn deadlock(m: &Machine, warps: &[Warp], first: &BarrierWait) -> SimError {
    let line = |wait: &BarrierWait| {
        m.position(wait.func, wait.pc)
            .map_or_else(|| "an unknown line".into(), |p| format!("line {}", p.line))
    };
    let waiting = warps
        .iter()
        .find(|w| w.wait.is_some())
        .expect("a waiting warp");
    let never = "the barrier can never complete (deadlock)";
    let mut locate = Locator::new(m);
    for w in warps {
        let (message, at, wait) = match &w.wait {
            None => (
                format!(
                    "{} is reached by warp {} but warp {} of the block returns without reaching it; {never}",
                    name(first),
                    waiting.index,
                    w.index
                ),
                waiting,
                first,
            ),
            Some(wait) if wait.reduce != first.reduce || wait.grid != first.grid => (
                format!(
                    "warp {} waits at the {} on {}, other warps at the {} on {}; {never}",
                    w.index,
                    name(wait),
                    line(wait),
                    name(first),
                    line(first)
                ),
                w,
                wait,
            ),
            Some(wait) if wait.mask != w.valid => (split(&mut locate, w, wait), w, wait),
            Some(_) => continue,
        };
        let lanes = at.wait.as_ref().map_or(at.valid, |x| x.mask);
        return SimError {
            pos: m.position(wait.func, wait.pc).map(Box::new),
            block: Some(m.block),
            thread: Some(at.tid[lanes.trailing_zeros().min(31) as usize]),
            ..SimError::new(
                ErrorKind::Deadlock,
                format!("barrier divergence: {message}"),
            )
        };
    }
    unreachable!("meet found a warp that cannot pass")
}

/// A warp waiting with only some of its lanes: where the others are.
fn split(locate: &mut Locator, w: &Warp, wait: &BarrierWait) -> String {
    let (mut exited, mut elsewhere) = (0, 0);
    for g in locate.warp(w) {
        match g.state {
            LaneState::Exited | LaneState::Returning => exited |= g.lanes,
            LaneState::AtBarrier => {}
            _ => elsewhere |= g.lanes,
        }
    }
    let mut why = Vec::new();
    if elsewhere != 0 {
        why.push(format!(
            "lanes {} are on another path",
            lanes::describe(elsewhere)
        ));
    }
    if exited != 0 {
        why.push(format!(
            "lanes {} return without reaching it",
            lanes::describe(exited)
        ));
    }
    let consequence = match elsewhere {
        0 => "the barrier can never complete (deadlock)",
        _ => "a warp split at an aligned barrier is undefined behaviour, reported as a deadlock",
    };
    format!(
        "{} is reached by lanes {} of warp {} while {}; {consequence}",
        name(wait),
        lanes::describe(wait.mask),
        w.index,
        why.join(" and ")
    )
}

/// Lets every warp past the barrier, giving the reducing forms their value.
fn release(m: &mut Machine, warps: &mut [Warp], reduce: BarrierReduce) {
    let waits = || warps.iter().filter_map(|w| w.wait.as_ref());
    let count: u32 = waits().map(|w| w.pred.count_ones()).sum();
    let all = waits().all(|w| w.pred == w.mask);
    let value = match reduce {
        BarrierReduce::None => None,
        BarrierReduce::Popc => Some(u64::from(count)),
        BarrierReduce::And => Some(u64::from(all)),
        BarrierReduce::Or => Some(u64::from(count > 0)),
    };
    m.san.barrier();
    for w in warps.iter_mut() {
        w.syncs.clear();
        if let Some(wait) = w.wait.take() {
            if let Some(v) = value {
                m.barrier_result(w, wait.dst, v, wait.mask);
            }
        }
    }
}
