//! One thread block: its warps run in turn, each until it waits at
//! `__syncthreads()`, exits or spins. A spinning warp is parked until some
//! write changes memory. When no warp can run, parked warps are a livelock;
//! otherwise the waiting warps meet at the barrier or cannot (`barrier`).

use super::barrier;
use super::cost::Counters;
use super::error::{Details, ErrorKind, SimError};
use super::exec::{lanes, Locator, Machine, Warp, Yield};
use crate::diag::Position;
use crate::hw;

/// Runs block `block` to completion. Each warp's counters are appended to
/// `counters` whether the block completes or stops; a stop caused by the
/// kernel says where every warp's lanes were.
pub fn run(
    m: &mut Machine,
    block: [u32; 3],
    args: &[u64],
    counters: &mut Vec<Counters>,
) -> Result<(), SimError> {
    m.block = block;
    m.epoch += 1;
    let threads: u32 = m.block_dim.iter().product();
    m.shared.clear();
    m.shared.resize(m.shared_bytes as usize, 0);
    let mut warps: Vec<Warp> = (0..threads.div_ceil(hw::WARP_SIZE))
        .map(|i| m.warp(i, args))
        .collect();
    let result = schedule(m, &mut warps);
    counters.extend(warps.iter().map(|w| w.counters));
    result.map_err(|mut e| {
        if e.kind.is_kernel_fault() {
            let mut locate = Locator::new(m);
            e.details.warps = warps.iter().flat_map(|w| locate.warp(w)).collect();
        }
        e
    })
}

fn schedule(m: &mut Machine, warps: &mut [Warp]) -> Result<(), SimError> {
    loop {
        let mut ran = true;
        while ran {
            ran = false;
            for w in warps.iter_mut() {
                let parked = w.parked.as_ref().is_some_and(|(at, _)| *at == m.writes);
                if w.done || w.wait.is_some() || parked {
                    continue;
                }
                ran = true;
                w.parked = None;
                match m.run_warp(w)? {
                    Yield::Done => m.retire(w),
                    Yield::Barrier => {}
                    Yield::Spin(spin) => w.parked = Some((m.writes, spin)),
                }
            }
        }
        if warps.iter().any(|w| w.parked.is_some()) {
            return Err(livelock(m, warps));
        }
        if warps.iter().all(|w| w.wait.is_none()) {
            return Ok(());
        }
        barrier::meet(m, warps)?;
    }
}

/// Parked warps that nothing can wake: they repeat their iteration forever.
fn livelock(m: &Machine, warps: &[Warp]) -> SimError {
    let spinning: Vec<&Warp> = warps.iter().filter(|w| w.parked.is_some()).collect();
    let first = spinning[0];
    let (func, pc, lanes) = first.point().expect("a parked warp is live");
    let in_loop = Locator::new(m).loop_at(func, pc);
    let mut reads: Vec<Position> = spinning
        .iter()
        .flat_map(|w| w.parked.iter().flat_map(|(_, s)| &s.reads))
        .filter_map(|&site| {
            let info = &m.program.sites[site as usize];
            let module = m.module;
            let pos = module.inst_pos(module.func(info.func), info.inst)?;
            Some(Position::resolve(module, &pos))
        })
        .collect();
    reads.sort();
    reads.dedup();
    let line = |p: &Position| format!("line {}", p.line);
    let lines: Vec<String> = reads.iter().map(line).collect();
    let who = match spinning.as_slice() {
        [one] => format!("warp {} repeats", one.index),
        all => {
            let mask = all.iter().fold(0u32, |m, w| m | 1 << w.index.min(31));
            format!("warps {} repeat", lanes::describe(mask))
        }
    };
    let message = format!(
        "livelock: {who} an iteration of the loop on {} that changes neither registers nor memory, and no running warp can change what it reads{}",
        in_loop.as_ref().map_or_else(|| "an unknown line".into(), line),
        match lines.is_empty() {
            true => String::new(),
            false => format!(" ({})", lines.join(", ")),
        }
    );
    let lane = lanes.trailing_zeros().min(31) as usize;
    SimError {
        pos: in_loop.or_else(|| m.position(func, pc)).map(Box::new),
        block: Some(m.block),
        thread: Some(first.tid[lane]),
        details: Box::new(Details {
            reads,
            ..Details::default()
        }),
        ..SimError::new(ErrorKind::Livelock, message)
    }
}
