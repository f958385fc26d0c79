//! Blocks on several threads. The blocks of a launch do not see each
//! other's writes until it ends, except through atomics, the grid barrier
//! or memory a block waits on; so once a launch has run a block or more in
//! order and shown none of these, the blocks left are split into one run
//! of consecutive blocks per thread. Each thread runs its run on a fork of
//! the machine: its own counters, and global memory that reads the
//! launch's in place and copies a page on its first write
//! ([`super::lazy_copy`]). When all are done, the forks are merged in
//! block order (the pages they wrote byte by byte, counters and findings
//! in turn), which gives what running the blocks one after another gives
//! for every program without a race between blocks.
//!
//! A fork that meets anything else (an atomic on global memory, a warp
//! spinning on memory, the grid barrier, a fault, a spent budget) gives
//! its run up, and the launch runs those blocks in order as before: the
//! forks are thrown away, so the launch's memory and counters are as if
//! they never ran.

use super::block::{Block, Step};
use super::cycles::{timeline::Event, Moved};
use super::exec::Machine;
use super::lazy_copy::Lazy;
use super::RESERVED_RECORD_BYTES;
use super::{memory, record_parts, reserve_records, BlockResult, Counters, WarpResult};
use std::sync::Arc;

/// Launch memory the forks may come to copy, over all threads (each
/// reserves the launch's buffers and fills the pages it writes): beyond
/// it the copies could cost more memory than a user expects a simulation
/// to take.
const MAX_COPIED_BYTES: u64 = 2 << 30;
/// The most blocks handed out to threads, listed (12 bytes each): a
/// larger grid (up to 2^63 blocks) runs in order, made as it is reached.
const MAX_BLOCKS: u64 = 1 << 24;
/// Fewer warp instructions than this are over before threads start.
const MIN_STEPS: u64 = 1 << 16;
/// Bytes of memory a fork may come to copy and merge per warp instruction
/// the launch has left (at most all of it, when its blocks write all
/// over): a warp instruction takes 60 to 150 ns, copying a byte and
/// comparing it back about 0.2 ns per fork, so two threads gain from
/// about one instruction per 300 bytes; this asks for four times that.
const BYTES_PER_STEP: u64 = 64;

/// Threads a launch may use: `asked`, or every core when it is 0.
pub fn threads(asked: usize) -> usize {
    match asked {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Whether running the `left` blocks still to run on `threads` threads
/// pays, judging by the `done` blocks that ran.
pub fn worth(m: &Machine, threads: usize, done: u64, left: u64) -> bool {
    if threads < 2 || done == 0 || left < 2 * threads as u64 || m.global_atomics {
        return false;
    }
    if left > MAX_BLOCKS {
        return false;
    }
    let bytes: u64 = m.objects.iter().map(|b| b.data.len() as u64).sum();
    let steps = (m.meter.issued / done).saturating_mul(left);
    // A launch the step budget will stop runs in order, to stop where
    // running in order stops.
    steps >= MIN_STEPS
        && steps < m.meter.steps_left()
        && steps.saturating_mul(BYTES_PER_STEP) >= bytes.saturating_mul(threads as u64)
        && bytes.saturating_mul(threads as u64) <= MAX_COPIED_BYTES
}

/// One thread's run of blocks, done.
pub struct Share<'m> {
    pub machine: Machine<'m>,
    pub totals: Counters,
    pub blocks: Vec<BlockResult>,
    pub warps: Vec<WarpResult>,
    /// Cycle mode: each block's warp timelines and what it moved.
    pub timelines: Vec<([u32; 3], Vec<Vec<Event>>, Moved)>,
}

/// Runs the blocks `blocks` lists (x, y, z), split into `threads` runs,
/// each on a fork of `m` that copies `m`'s memory as it touches it. `None`
/// when some fork gave up; `m` is as it was either way.
pub fn run<'m>(
    m: &mut Machine<'m>,
    blocks: &[[u32; 3]],
    threads: usize,
    words: &[u64],
) -> Option<Vec<Share<'m>>> {
    let per = blocks.len().div_ceil(threads);
    // The launch's bytes, shared by the forks while they run.
    let bases: Vec<Arc<Vec<u8>>> = m
        .objects
        .iter_mut()
        .map(|b| Arc::new(std::mem::take(&mut b.data)))
        .collect();
    let shares: Vec<Option<Share<'m>>> = std::thread::scope(|s| {
        let (m, bases) = (&*m, &bases);
        let running: Vec<_> = blocks
            .chunks(per)
            .map(|run| s.spawn(move || run_share(fork(m, bases), run, words)))
            .collect();
        running
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    // Every fork has let go of its base (a fork that panicked dropped it).
    for (b, base) in m.objects.iter_mut().zip(bases) {
        b.data = Arc::try_unwrap(base).unwrap_or_else(|shared| (*shared).clone());
    }
    let shares: Vec<Share<'m>> = shares.into_iter().collect::<Option<_>>()?;
    // Every fork kept within what was left of the step budget; together
    // they must too, or the launch stops where running in order stops.
    let issued: u64 = shares.iter().map(|s| s.machine.meter.issued).sum();
    let left = m.meter.steps_left();
    (issued < left).then_some(shares)
}

/// A fork of `m` whose buffers copy their pages from `bases` on first
/// write.
fn fork<'m>(m: &Machine<'m>, bases: &[Arc<Vec<u8>>]) -> Machine<'m> {
    let mut f = m.fork();
    for (b, base) in f.objects.iter_mut().zip(bases) {
        b.data = Vec::new();
        b.lazy = Some(Lazy::new(Arc::clone(base)));
    }
    f
}

/// Runs `run`'s blocks in order on `m`, or `None` at the first that does
/// anything but finish alone.
fn run_share<'m>(mut m: Machine<'m>, run: &[[u32; 3]], words: &[u64]) -> Option<Share<'m>> {
    let mut share_totals = Counters::default();
    let (mut blocks, mut warps, mut timelines) = (Vec::new(), Vec::new(), Vec::new());
    // The records reserved up front, as for a launch run in order.
    reserve_records(
        (&mut blocks, &mut warps),
        m.block_dim,
        run.len() as u64,
        RESERVED_RECORD_BYTES,
    );
    let timed = m.cycles.is_some();
    for &index in run {
        let mut block = Block::new(&mut m, index, words);
        match block.run(&mut m) {
            Ok(Step::Done) if !m.global_atomics => {}
            _ => return None,
        }
        record_parts(&mut share_totals, &mut blocks, &mut warps, &block);
        if timed {
            let moved = block.moved();
            timelines.push((block.index, block.take_timelines(), moved));
        }
    }
    for b in &mut m.objects {
        if let Some(lazy) = &mut b.lazy {
            lazy.release();
        }
    }
    Some(Share {
        machine: m,
        totals: share_totals,
        blocks,
        warps,
        timelines,
    })
}

/// Folds the forks' memory into `m`'s (see [`memory::merge`]).
pub fn merge_memory(m: &mut Machine, shares: &[Share]) {
    let forks: Vec<&[memory::Buffer]> = shares.iter().map(|s| &s.machine.objects[..]).collect();
    memory::merge(&mut m.objects, &forks, shares.len());
}
