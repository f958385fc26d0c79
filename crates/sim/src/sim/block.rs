//! One thread block: its warps run in turn, each until it waits at
//! `__syncthreads()`, exits or spins. A spinning warp is parked until some
//! write changes memory. When no warp can run, a block with parked warps
//! is stalled: the launch sets it aside, its warps and shared memory kept,
//! and runs it again once memory has changed, or reports the livelock
//! when nothing can change it. Otherwise the waiting warps meet at the
//! barrier or cannot (`barrier`); a block whose threads all wait at the
//! grid barrier is set aside until the launch releases it.

use super::barrier;
use super::cost::Counters;
use super::error::{Details, ErrorKind, SimError};
use super::exec::{lanes, BlockMemory, Locator, Machine, Warp, Yield};
use crate::hw;
use crate::ir::Position;

/// How far a block got.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Step {
    Done,
    /// Every thread waits at the grid barrier; the block is set aside
    /// until the other blocks get there.
    AtGridBarrier,
    /// No warp can run and some spin, waiting for memory to change.
    Stalled,
}

/// Why a block is set aside.
enum Aside {
    Running,
    AtGridBarrier(BlockMemory),
    /// Stalled when the launch had made this many memory writes.
    Stalled(BlockMemory, u64),
}

/// One block of the launch, with its warps, resumable where it is set
/// aside.
pub struct Block {
    pub index: [u32; 3],
    warps: Vec<Warp>,
    aside: Aside,
}

impl Block {
    /// Block `index` about to start, with the argument words `args`.
    pub fn new(m: &mut Machine, index: [u32; 3], args: &[u64]) -> Block {
        m.block = index;
        m.epoch += 1;
        let threads: u32 = m.block_dim.iter().product();
        m.shared.clear();
        m.shared.resize(m.shared_bytes as usize, 0);
        m.san.start_block(index, m.shared_bytes as usize);
        let warps = (0..threads.div_ceil(hw::WARP_SIZE))
            .map(|i| m.warp(i, args))
            .collect();
        Block {
            index,
            warps,
            aside: Aside::Running,
        }
    }

    /// Makes the block the machine's again, if it was set aside.
    fn bring_back(&mut self, m: &mut Machine) {
        match std::mem::replace(&mut self.aside, Aside::Running) {
            Aside::Running => {}
            Aside::Stalled(memory, _) => m.bring_back(memory),
            Aside::AtGridBarrier(memory) => {
                m.bring_back(memory);
                // It passes the barrier.
                m.san.barrier();
                for w in &mut self.warps {
                    w.wait = None;
                    w.syncs.clear();
                }
            }
        }
    }

    /// Runs the block until it completes, waits at the grid barrier (when
    /// it was waiting there, it passes first) or stalls. A stop caused by
    /// the kernel says where every warp's lanes were.
    pub fn run(&mut self, m: &mut Machine) -> Result<Step, SimError> {
        self.bring_back(m);
        let result = schedule(m, &mut self.warps);
        match result {
            Ok(Step::AtGridBarrier) => self.aside = Aside::AtGridBarrier(m.set_aside()),
            Ok(Step::Stalled) => {
                let writes = m.writes;
                self.aside = Aside::Stalled(m.set_aside(), writes);
            }
            _ => {}
        }
        result.map_err(|e| self.locate(m, e))
    }

    /// Whether the block is stalled and memory has changed since: its
    /// spinning warps may leave their loops.
    pub fn may_wake(&self, m: &Machine) -> bool {
        matches!(self.aside, Aside::Stalled(_, at) if at != m.writes)
    }

    /// The livelock of a stalled block that nothing can wake.
    pub fn livelock(&mut self, m: &mut Machine) -> SimError {
        self.bring_back(m);
        let e = livelock(m, &self.warps);
        self.locate(m, e)
    }

    /// Adds where every warp's lanes are to a kernel fault.
    fn locate(&self, m: &Machine, mut e: SimError) -> SimError {
        if e.kind.is_kernel_fault() {
            let mut locate = Locator::new(m);
            e.details.warps = self.warps.iter().flat_map(|w| locate.warp(w)).collect();
        }
        e
    }

    /// Each warp's counters, in warp order.
    pub fn counters(&self) -> impl Iterator<Item = Counters> + '_ {
        self.warps.iter().map(|w| w.counters)
    }

    /// Cycle mode: the global sectors and shared wavefronts the block's
    /// warps moved.
    pub fn moved(&self) -> crate::sim::cycles::Moved {
        self.counters()
            .fold((0, 0), |(s, w), c| (s + c.sectors, w + c.wavefronts))
    }

    /// Cycle mode: each warp's timeline, in warp order.
    pub fn take_timelines(&mut self) -> Vec<Vec<crate::sim::cycles::timeline::Event>> {
        self.warps
            .iter_mut()
            .map(|w| w.timeline.take().map(|t| t.events).unwrap_or_default())
            .collect()
    }

    /// Where the block waits at the grid barrier: function and op.
    pub fn grid_wait(&self) -> Option<(u32, u32)> {
        self.warps
            .iter()
            .find_map(|w| w.wait.as_ref().map(|x| (x.func, x.pc)))
    }
}

fn schedule(m: &mut Machine, warps: &mut [Warp]) -> Result<Step, SimError> {
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
                    Yield::Barrier => {
                        if let Some(t) = w.timeline.as_deref_mut() {
                            t.barrier(w.wait.as_ref().is_some_and(|x| x.grid));
                        }
                    }
                    Yield::Spin(spin) => w.parked = Some((m.writes, spin)),
                }
            }
        }
        if warps.iter().any(|w| w.parked.is_some()) {
            return Ok(Step::Stalled);
        }
        if warps.iter().all(|w| w.wait.is_none()) {
            return Ok(Step::Done);
        }
        if barrier::meet(m, warps)? == barrier::Met::Grid {
            return Ok(Step::AtGridBarrier);
        }
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
