//! The warp interpreter: runs one warp's decoded code in lock-step until it
//! reaches a barrier, finishes, spins or runs out of budget. `run_entry` is
//! the hot loop: register-only ops go straight to `alu`, the rest to small
//! handlers in `mem` (memory), `flow` (branches), `warp` (frames, calls,
//! barriers) and `diagnose`. Where control moves, `run_warp` checks the
//! budget and watches for spinning (`spin`); `locate` says where a stopped
//! warp's lanes are.

mod alu;
pub mod asm;
mod control;
mod diagnose;
mod flow;
mod frame;
pub mod lanes;
mod locate;
mod mem;
mod spin;
mod warp;
mod warp_ops;

pub use locate::Locator;
use spin::Looked;
pub use spin::Spin;
pub use warp::{BarrierWait, Warp};

use self::diagnose::Stop;
use self::lanes::LANES;
use self::warp::Pools;
use super::addr;
use super::budget::{Budget, Meter};
use super::code::{branch_groups, Func, Op, Requests, SiteInfo, Warp as WarpOp};
use super::cost::{Scratch, SiteStats};
use super::cycles::timeline;
use super::error::{ErrorKind, SimError};
use super::layout::Layout;
use super::memory::{Buffer, View};
use super::race::Shadow;
use super::sanitize::Sanitizer;
use crate::ir::intrinsics::BarrierReduce;
use crate::ir::Module;
use crate::ir::SiteKind;

/// Most arguments a math function takes.
pub const MAX_MATH_ARGS: usize = 8;
/// Largest value a bit cast goes through.
pub const MAX_VALUE_BYTES: usize = 256;
/// Deepest device-function call stack (guards runaway recursion).
const MAX_FRAMES: usize = 4096;
/// Largest local stack of one thread.
const MAX_LOCAL_BYTES: u64 = 16 << 20;

/// A decoded kernel with everything it calls.
pub struct Program {
    /// Kernel first.
    pub funcs: Vec<Func>,
    pub sites: Vec<SiteInfo>,
    /// What each memory op's access records, by the index the op holds.
    pub requests: Vec<Requests>,
    pub layout: Layout,
}

pub enum Yield {
    Barrier,
    Done,
    /// The warp repeats an iteration that changes nothing.
    Spin(Spin),
}

/// The state of a launch: memory, statistics, and the block being run.
pub struct Machine<'m> {
    pub module: &'m Module,
    pub program: &'m Program,
    pub grid: [u32; 3],
    pub block_dim: [u32; 3],
    pub objects: Vec<Buffer>,
    pub sites: Vec<SiteStats>,
    /// Lines printed by device `printf`, in execution order.
    pub output: Vec<String>,
    pub block: [u32; 3],
    pub shared: Vec<u8>,
    /// Shared memory per block: static variables plus dynamic bytes.
    pub shared_bytes: u64,
    /// Counts the writes that changed memory (and `printf` calls): a warp
    /// that spins is waiting for this to move.
    pub writes: u64,
    pub meter: Meter,
    /// The number of the block being run, counting from 1: marks which
    /// block a warp's entry in `seen` is from.
    pub epoch: u32,
    /// Per branch group (see [`branch_groups`]) and warp of the
    /// block: the last epoch the warp ran the branch and the last it split
    /// there, so each (block, warp) counts once.
    seen: Vec<[u32; 3]>,
    /// Each site's branch group.
    groups: Vec<u32>,
    warps_per_block: usize,
    /// What asm bodies read of the launch.
    pub asm_env: asm::AsmEnv,
    /// Runs of each asm body of the module's table (warp-level entries).
    pub asm_runs: Vec<u64>,
    /// Cycle mode: what each op costs; warps then record timelines.
    pub cycles: Option<std::sync::Arc<crate::sim::cycles::Tables>>,
    /// Races and unwritten reads, when the launch checks them.
    pub san: Sanitizer,
    /// Some atomic of the launch touched global memory: blocks then see
    /// each other's updates, and must share one memory.
    pub global_atomics: bool,
    pools: Pools,
    scratch: Scratch,
    phi_tmp: Vec<[u64; LANES]>,
}

/// The per-block state of the machine, kept aside while other blocks run
/// (a block waiting at the grid barrier).
pub struct BlockMemory {
    block: [u32; 3],
    epoch: u32,
    shared: Vec<u8>,
    seen: Vec<[u32; 3]>,
    shadow: Shadow,
}

impl<'m> Machine<'m> {
    /// Takes the running block's memory out, leaving a fresh machine state
    /// for the next block.
    pub fn set_aside(&mut self) -> BlockMemory {
        let fresh = vec![[0; 3]; self.seen.len()];
        BlockMemory {
            block: self.block,
            epoch: self.epoch,
            shared: std::mem::take(&mut self.shared),
            seen: std::mem::replace(&mut self.seen, fresh),
            shadow: std::mem::take(&mut self.san.shadow),
        }
    }

    /// Makes a block set aside the running one again.
    pub fn bring_back(&mut self, b: BlockMemory) {
        self.block = b.block;
        self.epoch = b.epoch;
        self.shared = b.shared;
        self.seen = b.seen;
        self.san.resume(b.block, b.shadow);
    }

    pub fn new(
        module: &'m Module,
        program: &'m Program,
        grid: [u32; 3],
        block_dim: [u32; 3],
        objects: Vec<Buffer>,
        shared_bytes: u64,
        budget: Budget,
    ) -> Self {
        let threads: u32 = block_dim.iter().product();
        let warps_per_block = threads.div_ceil(crate::hw::WARP_SIZE) as usize;
        let (groups, n_groups) = branch_groups(module, &program.sites);
        let sites = program
            .sites
            .iter()
            .map(|s| SiteStats {
                by_warp: match s.kind {
                    SiteKind::Branch => vec![(0, 0, 0); warps_per_block],
                    _ => Vec::new(),
                },
                ..SiteStats::default()
            })
            .collect();
        Machine {
            module,
            program,
            grid,
            block_dim,
            objects,
            sites,
            output: Vec::new(),
            block: [0; 3],
            shared: Vec::new(),
            shared_bytes,
            writes: 0,
            meter: Meter::start(budget),
            epoch: 0,
            seen: vec![[0; 3]; n_groups * warps_per_block],
            groups,
            warps_per_block,
            asm_env: asm::AsmEnv::default(),
            asm_runs: vec![0; module.asms.len()],
            cycles: None,
            san: Sanitizer::default(),
            global_atomics: false,
            pools: Pools::new(program.funcs.len()),
            scratch: Scratch::default(),
            phi_tmp: Vec::new(),
        }
    }

    /// A machine for the same launch over a copy of the memory, with
    /// nothing counted yet, to run other blocks on another thread; its
    /// budget is what is left of this one's.
    pub fn fork(&self) -> Machine<'m> {
        let mut m = Machine::new(
            self.module,
            self.program,
            self.grid,
            self.block_dim,
            self.objects.clone(),
            self.shared_bytes,
            Budget::default(),
        );
        m.meter = self.meter.fork();
        m.asm_env = self.asm_env;
        m.cycles.clone_from(&self.cycles);
        m.san = self.san.fork();
        m
    }

    /// Adds what a fork counted and found to this machine (forks absorbed
    /// in the order of their blocks); memory is merged separately
    /// ([`super::memory::merge`]).
    pub fn absorb(&mut self, fork: Machine) {
        for (a, b) in self.sites.iter_mut().zip(&fork.sites) {
            a.merge(b);
        }
        self.output.extend(fork.output);
        for (a, b) in self.asm_runs.iter_mut().zip(&fork.asm_runs) {
            *a += b;
        }
        self.writes += fork.writes;
        self.meter.issued += fork.meter.issued;
        self.global_atomics |= fork.global_atomics;
        self.san.absorb(fork.san);
    }

    /// Runs a warp until it waits at a barrier, all its lanes have exited,
    /// it spins, or the launch's budget runs out.
    pub fn run_warp(&mut self, w: &mut Warp) -> Result<Yield, SimError> {
        let start = w.counters.steps;
        // The launch's count is the warp's plus what the others issued.
        let others = self.meter.issued - start;
        let result = self.run_warp_from(w, others);
        self.meter.issued += w.counters.steps - start;
        result
    }

    fn run_warp_from(&mut self, w: &mut Warp, others: u64) -> Result<Yield, SimError> {
        let program = self.program;
        // The warp's count at which to look at budget and spinning again.
        let mut check_at = 0;
        loop {
            let frame = w.frames.last_mut().expect("a live warp has a frame");
            if control::settle(&mut frame.stack, frame.returned) {
                if self.pop_frame(w) {
                    w.done = true;
                    return Ok(Yield::Done);
                }
                continue;
            }
            let fi = frame.func;
            let func = &program.funcs[fi as usize];
            let top = *frame.stack.last().expect("settled");
            let mask = top.mask & !frame.returned;
            if w.counters.steps >= check_at {
                if let Err(e) = self.meter.check(w.counters.steps + others) {
                    return Err(self.error(w, fi, top.pc, mask, Stop::Budget(e)));
                }
                if let Some(spin) = self.watch(w, (fi, top.pc)) {
                    return Ok(Yield::Spin(spin));
                }
                check_at =
                    (self.meter.next_check().saturating_sub(others)).min(w.watch.next_check());
            }
            match self.run_entry(w, func, top.pc, mask) {
                Ok(Some(y)) => return Ok(y),
                Ok(None) => {}
                Err((pc, stop)) => {
                    // Leave the warp at the op that stopped it, for `locate`.
                    let frame = w.frames.last_mut().expect("running");
                    frame.stack.last_mut().expect("running").pc = pc;
                    return Err(self.error(w, fi, pc, mask, stop));
                }
            }
        }
    }

    /// Lets the warp's spin watch look at it about to run `at`.
    fn watch(&self, w: &mut Warp, at: (u32, u32)) -> Option<Spin> {
        let mut watch = std::mem::take(&mut w.watch);
        let executions = || self.sites.iter().map(|s| s.executions).collect();
        let sites = &self.program.sites;
        let reads = |i: usize| matches!(sites[i].kind, SiteKind::Load | SiteKind::Atomic);
        let looked = Looked {
            steps: w.counters.steps,
            frames: &w.frames,
            exited: w.exited,
            sp: &w.sp,
        };
        let spin = watch.at(&looked, at, self.writes, executions, reads);
        w.watch = watch;
        spin
    }

    /// Runs straight-line code from `pc` with `mask` until control moves:
    /// `Ok(None)` to re-dispatch, `Ok(Some(_))` to yield to the scheduler.
    fn run_entry(
        &mut self,
        w: &mut Warp,
        func: &Func,
        mut pc: u32,
        live: u32,
    ) -> Result<Option<Yield>, (u32, Stop)> {
        let active = u64::from(live.count_ones());
        let fi = w.frames.len() - 1;
        let fidx = w.frames[fi].func;
        // Cycle mode: some live lanes of the warp wait elsewhere.
        let split = live != w.valid & !w.exited;
        // The lanes a PTX guard lets run the next op.
        let mut guard = lanes::FULL;
        loop {
            let op = &func.code[pc as usize];
            let mask = live & std::mem::replace(&mut guard, lanes::FULL);
            w.counters.steps += 1;
            w.counters.thread_instructions += active;
            if let Some(t) = w.timeline.as_deref_mut() {
                t.issue(fidx, pc, split);
            }
            let regs = &mut w.frames[fi].regs;
            if alu::exec(op, regs, mask) {
                pc += 1;
                continue;
            }
            let before = w.counters;
            let at = |stop| (pc, stop);
            let fault = |(lane, f)| at(Stop::Fault(lane, f));
            // The memory a warp sees, built per op from disjoint borrows.
            macro_rules! mem {
                () => {
                    mem::MemCtx {
                        view: &mut View {
                            objects: &mut self.objects,
                            shared: &mut self.shared,
                            local: &mut w.local,
                            layout: &self.program.layout,
                        },
                        sites: &mut self.sites,
                        requests: &self.program.requests,
                        counters: &mut w.counters,
                        scratch: &mut self.scratch,
                        writes: &mut self.writes,
                        san: &mut self.san,
                        warp: (w.index * crate::hw::WARP_SIZE, &w.syncs),
                    }
                };
            }
            match *op {
                Op::Load {
                    dst,
                    addr,
                    scalar,
                    site,
                } => mem!()
                    .load(regs, mask, (dst, addr, scalar, site))
                    .map_err(fault)?,
                Op::Store {
                    src,
                    addr,
                    scalar,
                    site,
                } => mem!()
                    .store(regs, mask, (src, addr, scalar, site))
                    .map_err(fault)?,
                Op::LoadLeaves(ref x) => mem!().leaves(regs, mask, x, false).map_err(fault)?,
                Op::StoreLeaves(ref x) => mem!().leaves(regs, mask, x, true).map_err(fault)?,
                Op::Atomic(ref x) => {
                    if !self.global_atomics {
                        let a = lanes::row(regs, x.addr);
                        let mut global = false;
                        lanes::each(mask, |l| global |= addr::tag(a[l]) == addr::GLOBAL);
                        self.global_atomics = global;
                    }
                    mem!().atomic(regs, mask, x).map_err(fault)?
                }
                Op::Mem(ref x) => mem!().block(regs, mask, x).map_err(fault)?,
                Op::OutParams(ref x) => mem!().out_params(regs, mask, x).map_err(fault)?,
                Op::Warp(ref x) => {
                    warp_ops::exec(x, regs, mask);
                    if self.san.on && !matches!(**x, WarpOp::ActiveMask { .. }) {
                        w.syncs.meet(mask);
                    }
                }
                Op::WarpSync { mask: named } => {
                    if self.san.on {
                        let first = mask.trailing_zeros().min(31) as usize;
                        w.syncs.meet(mask & lanes::row(regs, named)[first] as u32);
                    }
                }
                Op::Nop => {}
                Op::Alloca {
                    dst,
                    size,
                    align,
                    count,
                } => Self::alloca(w, mask, (dst, size, align, count)).map_err(at)?,
                Op::Special { dst, reg } => self.special(w, reg, dst, mask),
                Op::Printf { dst, format, args } => {
                    self.printf(w, (dst, format, args), mask).map_err(at)?
                }
                Op::Barrier { reduce, dst, pred } => {
                    Self::arrive(w, (reduce, dst, pred), mask, pc, false);
                    return Ok(Some(Yield::Barrier));
                }
                Op::GridSync => {
                    Self::arrive(w, (BarrierReduce::None, 0, 0), mask, pc, true);
                    return Ok(Some(Yield::Barrier));
                }
                Op::Ptx(ref x) => asm::alu(x, regs, mask).map_err(at)?,
                Op::AsmSpecial { dst, reg } => self.asm_special(w, reg, dst, mask),
                Op::Guard { pred, negated } => {
                    let p = lanes::row(regs, pred);
                    let mut holds = 0u32;
                    lanes::each(mask, |l| {
                        holds |= u32::from((p[l] & 1 != 0) != negated) << l
                    });
                    guard = holds;
                }
                Op::AsmRun { asm } => self.asm_runs[asm as usize] += 1,
                Op::Trap(ref t) => return Err(at(self.trap(w, t, mask))),
                Op::Unsupported(ref msg) => {
                    let why = msg.to_string();
                    return Err(at(Stop::Error(ErrorKind::Unsupported, None, why)));
                }
                Op::Br { edge } => {
                    self.jump(w, func, edge, mask);
                    return Ok(None);
                }
                Op::CondBr {
                    cond,
                    edges,
                    site,
                    ipdom,
                } => {
                    self.cond_branch(w, func, (cond, edges, site, ipdom), mask);
                    return Ok(None);
                }
                Op::Switch(ref s) => {
                    self.switch(w, func, s, mask);
                    return Ok(None);
                }
                Op::Ret { src, words } => {
                    Self::ret(w, func, (src, words), mask);
                    return Ok(None);
                }
                Op::Call(ref c) => {
                    self.call(w, c, mask, pc).map_err(at)?;
                    return Ok(None);
                }
                _ => unreachable!("register-only ops are run by alu::exec"),
            }
            if let Some(t) = w.timeline.as_deref_mut() {
                t.memory(timeline::access_of(op), &before, &w.counters);
            }
            pc += 1;
        }
    }
}
