//! Cycle mode (`simulate --cycles`): how long a launch takes on the
//! machine model of [`crate::machine`]. The interpreter records what each
//! warp issues ([`timeline`]); once every block of a wave has finished,
//! the warps of the blocks resident on each SM are replayed together by
//! the SM's round-robin scheduler ([`schedule`]).
//!
//! Blocks are placed as [`Waves`] says: the `i`-th block of the run on SM
//! `i mod sms`, each SM running its blocks in waves of the blocks per SM
//! the [`Residency`] allows. A launch takes as long as its busiest SM.
//! A kernel with a grid barrier runs all its blocks at once (a cooperative
//! launch), phase by phase between the barriers.
//!
//! The replay runs each warp's instructions as the functional run issued
//! them: a kernel whose warps wait for each other through memory (a spin
//! on a flag) is timed along the functional run's interleaving.
//!
//! The replay gives every access its latency as if memory served all
//! requests at once; the launch then takes at least as long as the
//! model's throughput limits allow for what its warps moved (the global
//! sectors of the launch at DRAM and L2 bandwidth, the busiest SM's
//! shared-memory wavefronts at its rate; [`crate::machine::throughput`]):
//! the launch's cycles are the larger of the replay's and that floor.

pub mod schedule;
pub mod text;
pub mod timeline;

use super::code::Func;
use crate::dataflow::FastMap as HashMap;
use crate::ir::Position;
use crate::ir::{FileId, Module, SourcePos};
use crate::machine::{class_of, Class, Machine, Residency, Throughput, Traffic, Waves};
pub use schedule::Breakdown;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use timeline::{Event, BARRIER, GRID};

/// Per decoded op: latency, line and whether it is a memory instruction.
pub struct Tables {
    pub machine: Machine,
    ops: Vec<Vec<(u32, u32, bool)>>,
    /// Source lines by index; 0 is "no line".
    pub lines: Vec<Option<SourcePos>>,
}

impl Tables {
    pub fn new(m: &Module, funcs: &[Func], machine: Machine) -> Tables {
        let mut lines: Vec<Option<SourcePos>> = vec![None];
        let mut index: HashMap<(FileId, u32), u32> = HashMap::default();
        let ops = funcs
            .iter()
            .map(|func| {
                let f = m.func(func.id);
                func.origin
                    .iter()
                    .map(|&i| {
                        let class = class_of(m, f, f.inst(i));
                        let line = match m.inst_pos(f, i).filter(|p| p.line > 0) {
                            Some(p) => *index.entry((p.file, p.line)).or_insert_with(|| {
                                lines.push(Some(p));
                                lines.len() as u32 - 1
                            }),
                            None => 0,
                        };
                        let latency = machine.latency(class).max(1);
                        (latency, line, class == Class::Memory)
                    })
                    .collect()
            })
            .collect();
        Tables {
            machine,
            ops,
            lines,
        }
    }

    /// Latency, line and memory flag of op `pc` of decoded function `func`.
    #[inline]
    pub fn op(&self, func: u32, pc: u32) -> (u32, u32, bool) {
        self.ops[func as usize][pc as usize]
    }
}

/// One block's time.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BlockCycles {
    pub block: [u32; 3],
    pub sm: u64,
    pub wave: u64,
    /// From the start of its wave to its last warp's end.
    pub cycles: u64,
    /// Warp instructions its warps issued.
    pub work: u64,
    /// The longest chain of latencies: per stretch between barriers, its
    /// slowest warp's latencies, plus the barriers' cost.
    pub span: u64,
}

/// A source line's warp-cycles.
#[derive(Clone, Debug, Serialize)]
pub struct LineCycles {
    pub file: String,
    pub line: u32,
    #[serde(flatten)]
    pub cycles: Breakdown,
}

/// What cycle mode measured.
#[derive(Clone, Debug, Serialize)]
pub struct CycleReport {
    pub machine: Machine,
    pub residency: Residency,
    pub waves: Waves,
    /// The launch's cycles: the larger of `replay_cycles` and the
    /// slowest throughput limit.
    pub launch_cycles: u64,
    /// The busiest SM's cycles in the latency replay.
    pub replay_cycles: u64,
    /// What the launch moved: its global sectors, the busiest SM's
    /// shared-memory wavefronts.
    pub traffic: Traffic,
    /// The cycles each throughput limit needs for `traffic`.
    pub throughput: Throughput,
    /// `latency` when the replay decides `launch_cycles`, else the
    /// slowest resource (`DRAM bandwidth`, ...).
    pub limited_by: &'static str,
    pub microseconds: f64,
    pub blocks: Vec<BlockCycles>,
    /// Warp-cycles over the launch, by what the warps were doing.
    pub breakdown: Breakdown,
    pub lines: Vec<LineCycles>,
}

impl CycleReport {
    /// The slowest block's cycles.
    pub fn max_block_cycles(&self) -> u64 {
        self.blocks.iter().map(|b| b.cycles).max().unwrap_or(0)
    }
}

/// A finished block's warp timelines, waiting for its wave.
#[derive(Clone)]
struct Held {
    index: [u32; 3],
    warps: Vec<Vec<Event>>,
}

/// The global sectors and shared wavefronts a block's warps moved.
pub type Moved = (u64, u64);

/// Collects finished blocks and replays each wave once it is complete.
#[derive(Clone)]
pub struct Collector {
    tables: Arc<Tables>,
    residency: Residency,
    /// The blocks run: a block's place in it orders the waves.
    order: Run,
    grid: [u32; 3],
    total: u64,
    /// Blocks per wave over all SMs.
    row: u64,
    /// Replay waves as they complete (no grid barrier).
    streaming: bool,
    held: BTreeMap<u64, Held>,
    next_row: u64,
    sm_time: Vec<u64>,
    blocks: Vec<BlockCycles>,
    lines: Vec<Breakdown>,
    /// Global sectors of the blocks so far.
    sectors: u64,
    /// Shared wavefronts per SM.
    sm_wavefronts: Vec<u64>,
}

/// The blocks a launch runs, by linear id in order: the whole grid (kept
/// as a count, whatever its size), or the ranges `--blocks` lists (kept
/// as ranges: `0-300000000` is two numbers, not a list of them).
#[derive(Clone, Debug)]
pub enum Run {
    Whole(u64),
    Listed(Vec<std::ops::RangeInclusive<u64>>),
}

impl Run {
    /// How many blocks run (saturating: a list longer than `u64` counts
    /// is longer than any grid).
    pub fn len(&self) -> u64 {
        match self {
            Run::Whole(n) => *n,
            Run::Listed(l) => l.iter().fold(0u64, |n, r| {
                n.saturating_add((r.end() - r.start()).saturating_add(1))
            }),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest block id run, if any.
    pub fn last(&self) -> Option<u64> {
        match self {
            Run::Whole(n) => n.checked_sub(1),
            Run::Listed(l) => l.iter().map(|r| *r.end()).max(),
        }
    }

    /// The block ids, in order, as they are needed.
    pub fn iter(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            Run::Whole(n) => Box::new(0..*n),
            Run::Listed(l) => Box::new(l.iter().flat_map(|r| r.clone())),
        }
    }

    /// Block `linear`'s place in the run (its first, if listed twice).
    fn place(&self, linear: u64) -> Option<u64> {
        match self {
            Run::Whole(n) => (linear < *n).then_some(linear),
            Run::Listed(l) => {
                let mut before = 0u64;
                for r in l {
                    if r.contains(&linear) {
                        return Some(before.saturating_add(linear - r.start()));
                    }
                    before = before.saturating_add((r.end() - r.start()).saturating_add(1));
                }
                None
            }
        }
    }
}

impl Collector {
    /// For a run of the blocks `run` (linear ids, in order) of a grid.
    pub fn new(
        tables: Arc<Tables>,
        residency: Residency,
        grid: [u32; 3],
        run: &Run,
        grid_barrier: bool,
    ) -> Collector {
        let sms = u64::from(tables.machine.sms.max(1));
        let lines = vec![Breakdown::default(); tables.lines.len()];
        Collector {
            residency,
            order: run.clone(),
            grid,
            total: run.len(),
            row: sms * u64::from(residency.blocks_per_sm.max(1)),
            streaming: !grid_barrier,
            held: BTreeMap::new(),
            next_row: 0,
            sm_time: vec![0; sms.min(run.len()).max(1) as usize],
            sectors: 0,
            sm_wavefronts: vec![0; sms.min(run.len()).max(1) as usize],
            blocks: Vec::new(),
            lines,
            tables,
        }
    }

    /// A block has finished with these warp timelines, having moved
    /// `moved`.
    pub fn add(&mut self, index: [u32; 3], warps: Vec<Vec<Event>>, moved: Moved) {
        let [gx, gy, _] = self.grid.map(u64::from);
        let [x, y, z] = index.map(u64::from);
        let linear = x + gx * (y + gy * z);
        let Some(i) = self.order.place(linear) else {
            return;
        };
        // Both replays place the run's `i`-th block on SM `i mod sms`.
        let sm = (i % self.sm_wavefronts.len() as u64) as usize;
        self.sectors += moved.0;
        self.sm_wavefronts[sm] += moved.1;
        self.held.insert(i, Held { index, warps });
        while self.streaming && self.row_complete(self.next_row) {
            self.replay_row(self.next_row);
            self.next_row += 1;
        }
    }

    fn row_range(&self, r: u64) -> std::ops::Range<u64> {
        r * self.row..((r + 1) * self.row).min(self.total)
    }

    fn row_complete(&self, r: u64) -> bool {
        let range = self.row_range(r);
        !range.is_empty() && range.clone().all(|i| self.held.contains_key(&i))
    }

    /// Replays wave `r` on every SM.
    fn replay_row(&mut self, r: u64) {
        let sms = self.sm_time.len() as u64;
        let mut on_sm: Vec<Vec<(u64, Held)>> = (0..sms).map(|_| Vec::new()).collect();
        for i in self.row_range(r) {
            if let Some(h) = self.held.remove(&i) {
                on_sm[(i % sms) as usize].push((i, h));
            }
        }
        for (s, list) in on_sm.into_iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let warps: Vec<Vec<&[Event]>> = list
                .iter()
                .map(|(_, h)| h.warps.iter().map(Vec::as_slice).collect())
                .collect();
            let ends = schedule::replay(&warps, &self.tables.machine, &mut self.lines);
            let wave = ends.iter().copied().max().unwrap_or(0);
            for ((_, h), end) in list.iter().zip(ends) {
                self.blocks.push(self.block_cycles(h, s as u64, r, end));
            }
            self.sm_time[s] += wave;
        }
    }

    fn block_cycles(&self, h: &Held, sm: u64, wave: u64, cycles: u64) -> BlockCycles {
        let lists: Vec<&[Event]> = h.warps.iter().map(Vec::as_slice).collect();
        BlockCycles {
            block: h.index,
            sm,
            wave,
            cycles,
            work: h.warps.iter().flatten().map(|e| u64::from(e.count)).sum(),
            span: span(&lists, &self.tables.machine),
        }
    }

    /// A launch with a grid barrier: every block resident at once, phase
    /// by phase between the barriers.
    fn replay_phases(&mut self) {
        let sms = self.sm_time.len() as u64;
        let held = std::mem::take(&mut self.held);
        let phases_of = |w: &Vec<Event>| -> Vec<std::ops::Range<usize>> {
            let mut out = Vec::new();
            let mut start = 0;
            for (k, e) in w.iter().enumerate() {
                if e.flags & GRID != 0 {
                    out.push(start..k + 1);
                    start = k + 1;
                }
            }
            out.push(start..w.len());
            out
        };
        let phases = held
            .values()
            .flat_map(|h| h.warps.iter().map(|w| phases_of(w).len()))
            .max()
            .unwrap_or(1);
        let mut block_time = vec![0u64; held.len()];
        let mut launch = 0;
        for p in 0..phases {
            let mut phase_time = 0;
            for s in 0..sms {
                let list: Vec<(usize, &Held)> = held
                    .iter()
                    .enumerate()
                    .filter(|(_, (i, _))| *i % sms == s)
                    .map(|(k, (_, h))| (k, h))
                    .collect();
                let warps: Vec<Vec<&[Event]>> = list
                    .iter()
                    .map(|(_, h)| {
                        h.warps
                            .iter()
                            .map(|w| phases_of(w).get(p).map_or(&[][..], |r| &w[r.clone()]))
                            .collect()
                    })
                    .collect();
                let ends = schedule::replay(&warps, &self.tables.machine, &mut self.lines);
                for ((k, _), end) in list.iter().zip(&ends) {
                    block_time[*k] += end;
                }
                phase_time = phase_time.max(ends.into_iter().max().unwrap_or(0));
            }
            launch += phase_time;
            if p + 1 < phases {
                launch += u64::from(self.tables.machine.grid_barrier_cycles);
            }
        }
        for ((i, h), cycles) in held.iter().zip(block_time) {
            self.blocks.push(self.block_cycles(h, i % sms, 0, cycles));
        }
        self.sm_time = vec![launch];
    }

    /// The report, once every block has finished.
    pub fn finish(mut self, m: &Module) -> CycleReport {
        if self.streaming {
            while self.row_complete(self.next_row) {
                self.replay_row(self.next_row);
                self.next_row += 1;
            }
        } else {
            self.replay_phases();
        }
        let replay = self.sm_time.iter().copied().max().unwrap_or(0);
        let machine = self.tables.machine.clone();
        let traffic = Traffic {
            sectors: self.sectors as f64,
            sm_wavefronts: self.sm_wavefronts.iter().copied().max().unwrap_or(0) as f64,
        };
        let throughput = machine.throughput(&traffic);
        let (resource, floor) = throughput.floor();
        let (launch, limited_by) = match floor > replay as f64 {
            true => (floor as u64, resource),
            false => (replay, "latency"),
        };
        let mut breakdown = Breakdown::default();
        let mut lines = Vec::new();
        for (pos, b) in self.tables.lines.iter().zip(&self.lines) {
            breakdown += *b;
            if b.total() == 0 {
                continue;
            }
            let (file, line) = match pos {
                Some(p) => (Position::resolve(m, p).file, p.line),
                None => (String::new(), 0),
            };
            lines.push(LineCycles {
                file,
                line,
                cycles: *b,
            });
        }
        self.blocks
            .sort_by_key(|b| (b.block[2], b.block[1], b.block[0]));
        CycleReport {
            microseconds: machine.micros(launch as f64),
            replay_cycles: replay,
            traffic,
            throughput,
            limited_by,
            waves: Waves::new(self.total, machine.sms, &self.residency),
            residency: self.residency,
            launch_cycles: launch,
            blocks: self.blocks,
            breakdown,
            lines,
            machine,
        }
    }
}

/// A block's span: per stretch between barriers, the largest sum of
/// latencies of one warp, plus each barrier's cost.
pub fn span(warps: &[&[Event]], m: &Machine) -> u64 {
    let mut stretches: Vec<u64> = Vec::new();
    let mut barriers = 0u64;
    for w in warps {
        let mut k = 0;
        let mut sum = 0u64;
        let mut crossed = 0u64;
        for e in w.iter() {
            sum += u64::from(e.count) * u64::from(e.latency.max(1));
            if e.flags & (BARRIER | GRID) != 0 {
                if stretches.len() <= k {
                    stretches.resize(k + 1, 0);
                }
                stretches[k] = stretches[k].max(sum);
                sum = 0;
                k += 1;
                crossed += if e.flags & GRID != 0 {
                    u64::from(m.grid_barrier_cycles)
                } else {
                    u64::from(m.barrier_cycles)
                };
            }
        }
        if stretches.len() <= k {
            stretches.resize(k + 1, 0);
        }
        stretches[k] = stretches[k].max(sum);
        barriers = barriers.max(crossed);
    }
    stretches.iter().sum::<u64>() + barriers
}
