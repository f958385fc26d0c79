//! One thread block: its warps run in turn, each until it reaches
//! `__syncthreads()` or exits; when every warp waits at the same barrier
//! they all continue. Anything else is barrier divergence.

use super::code::Func;
use super::cost::Counters;
use super::error::{ErrorKind, SimError};
use super::exec::{lanes, BarrierWait, Machine, Warp, Yield};
use crate::diag::Position;
use crate::hw;
use crate::ir::intrinsics::BarrierReduce;

/// Runs block `block` to completion; returns each warp's counters.
pub fn run(m: &mut Machine, block: [u32; 3], args: &[u64]) -> Result<Vec<Counters>, SimError> {
    m.block = block;
    m.epoch += 1;
    let threads: u32 = m.block_dim.iter().product();
    m.shared.clear();
    m.shared.resize(m.shared_bytes as usize, 0);
    let mut warps: Vec<Warp> = (0..threads.div_ceil(hw::WARP_SIZE))
        .map(|i| m.warp(i, args))
        .collect();
    loop {
        for w in warps.iter_mut().filter(|w| !w.done && w.wait.is_none()) {
            if let Yield::Done = m.run_warp(w)? {
                m.retire(w);
            }
        }
        let Some(first) = warps.iter().find_map(|w| w.wait.clone()) else {
            break;
        };
        check(m, &warps, &first)?;
        release(m, &mut warps, first.reduce);
    }
    Ok(warps.iter().map(|w| w.counters).collect())
}

/// Every warp must wait at the same barrier with all its live lanes.
fn check(m: &Machine, warps: &[Warp], first: &BarrierWait) -> Result<(), SimError> {
    let line = |wait: &BarrierWait| {
        position(m, wait).map_or_else(|| "an unknown line".into(), |p| format!("line {}", p.line))
    };
    let fail = |w: &Warp, wait: &BarrierWait, message: String| SimError {
        kind: ErrorKind::BarrierDivergence,
        message: format!("barrier divergence: {message}"),
        pos: position(m, wait),
        block: Some(m.block),
        thread: Some(w.tid[wait.mask.trailing_zeros().min(31) as usize]),
        address: None,
    };
    for w in warps {
        let Some(wait) = &w.wait else {
            let at = warps
                .iter()
                .find(|x| x.wait.is_some())
                .expect("a waiting warp");
            return Err(fail(
                at,
                first,
                format!(
                    "__syncthreads() is reached by warp {} but warp {} of the block returns without reaching it",
                    at.index, w.index
                ),
            ));
        };
        if (wait.func, wait.pc) != (first.func, first.pc) {
            return Err(fail(
                w,
                wait,
                format!(
                    "warp {} waits at the __syncthreads() on {}, other warps at the one on {}",
                    w.index,
                    line(wait),
                    line(first)
                ),
            ));
        }
        let missing = w.valid & !wait.mask;
        if missing != 0 {
            let exited = missing & (w.exited | m.lanes_returning(w, wait));
            let elsewhere = missing & !exited;
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
            return Err(fail(
                w,
                wait,
                format!(
                    "__syncthreads() is reached by lanes {} of warp {} while {}",
                    lanes::describe(wait.mask),
                    w.index,
                    why.join(" and ")
                ),
            ));
        }
    }
    Ok(())
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
    for w in warps.iter_mut() {
        if let Some(wait) = w.wait.take() {
            if let Some(v) = value {
                m.barrier_result(w, wait.dst, v, wait.mask);
            }
        }
    }
}

fn position(m: &Machine, wait: &BarrierWait) -> Option<Box<Position>> {
    let func: &Func = &m.program.funcs[wait.func as usize];
    let module = m.module;
    module
        .inst_pos(module.func(func.id), func.origin[wait.pc as usize])
        .map(|p| Box::new(Position::resolve(module, &p)))
}
