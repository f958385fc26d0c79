//! The warp interpreter: runs one warp's decoded code in lock-step until it
//! reaches a barrier or finishes.

mod alu;
mod control;
pub mod lanes;
mod mem;
mod warp_ops;

use self::control::{Entry, Group, Groups};
use self::lanes::{each, row, row_mut, true_lanes, write, LANES};
use super::code::{Func, Op, SiteInfo, Slot, Special, Trap, EXIT};
use super::cost::{Counters, Scratch, SiteStats};
use super::error::{ErrorKind, SimError};
use super::layout::Layout;
use super::memory::{self, Buffer, Fault, View};
use super::{addr, printf, scalar};
use crate::diag::Position;
use crate::hw;
use crate::ir::intrinsics::BarrierReduce;
use crate::ir::Module;

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
    pub layout: Layout,
}

/// One activation of a function for a group of lanes.
struct Frame {
    func: u32,
    regs: Vec<u64>,
    stack: Vec<Entry>,
    /// Lanes that have executed `ret`.
    returned: u32,
    /// Where the caller wants the result: slot and words.
    call: Option<(Slot, u32)>,
    call_mask: u32,
    /// The caller's local stack pointers, restored on return.
    saved_sp: [u32; LANES],
}

/// A warp stopped at `__syncthreads()`.
#[derive(Clone, Debug)]
pub struct BarrierWait {
    pub func: u32,
    pub pc: u32,
    pub mask: u32,
    pub reduce: BarrierReduce,
    pub dst: Slot,
    /// Lanes whose predicate is non-zero (reducing forms).
    pub pred: u32,
}

pub struct Warp {
    /// Warp number within the block.
    pub index: u32,
    /// Lanes that are threads of the block (the last warp may be partial).
    pub valid: u32,
    /// Lanes that have returned from the kernel.
    pub exited: u32,
    pub tid: [[u32; 3]; LANES],
    pub counters: Counters,
    pub wait: Option<BarrierWait>,
    pub done: bool,
    frames: Vec<Frame>,
    sp: [u32; LANES],
    local: Vec<Vec<u8>>,
}

pub enum Yield {
    Barrier,
    Done,
}

/// Why an op stopped the warp: a lane's memory fault, or a message.
enum Stop {
    Fault(usize, Fault),
    Error(ErrorKind, Option<usize>, String),
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
    /// Spare register files per function, constants in place.
    pool: Vec<Vec<Vec<u64>>>,
    scratch: Scratch,
    phi_tmp: Vec<[u64; LANES]>,
}

impl<'m> Machine<'m> {
    pub fn new(
        module: &'m Module,
        program: &'m Program,
        grid: [u32; 3],
        block_dim: [u32; 3],
        objects: Vec<Buffer>,
        shared_bytes: u64,
    ) -> Self {
        Machine {
            module,
            program,
            grid,
            block_dim,
            objects,
            sites: vec![SiteStats::default(); program.sites.len()],
            output: Vec::new(),
            block: [0; 3],
            shared: Vec::new(),
            shared_bytes,
            pool: vec![Vec::new(); program.funcs.len()],
            scratch: Scratch::default(),
            phi_tmp: Vec::new(),
        }
    }

    fn frame(
        &mut self,
        func: u32,
        mask: u32,
        call: Option<(Slot, u32)>,
        sp: [u32; LANES],
    ) -> Frame {
        let f = &self.program.funcs[func as usize];
        let regs = self.pool[func as usize]
            .pop()
            .unwrap_or_else(|| f.template.clone());
        Frame {
            func,
            regs,
            stack: vec![Entry {
                pc: f.block_pc[0],
                rpc: EXIT,
                mask,
            }],
            returned: 0,
            call,
            call_mask: mask,
            saved_sp: sp,
        }
    }

    /// A warp of the current block about to enter the kernel with the
    /// argument words `args` (one per parameter word).
    pub fn warp(&mut self, index: u32, args: &[u64]) -> Warp {
        let [bx, by, _] = self.block_dim;
        let threads: u32 = self.block_dim.iter().product();
        let mut valid = 0u32;
        let mut tid = [[0u32; 3]; LANES];
        for (l, t) in tid.iter_mut().enumerate() {
            let linear = index * hw::WARP_SIZE + l as u32;
            if linear < threads {
                valid |= 1 << l;
                *t = [linear % bx, (linear / bx) % by, linear / (bx * by)];
            }
        }
        let mut frame = self.frame(0, valid, None, [0; LANES]);
        let kernel = &self.program.funcs[0];
        let mut words = args.iter();
        for &(slot, n) in &kernel.params {
            for k in 0..n {
                let w = words.next().copied().unwrap_or(0);
                row_mut(&mut frame.regs, slot + k).fill(w);
            }
        }
        Warp {
            index,
            valid,
            exited: 0,
            tid,
            counters: Counters::default(),
            wait: None,
            done: valid == 0,
            frames: vec![frame],
            sp: [0; LANES],
            local: vec![Vec::new(); LANES],
        }
    }

    /// Gives a finished warp's register files back for reuse.
    pub fn retire(&mut self, w: &mut Warp) {
        for f in w.frames.drain(..) {
            self.pool[f.func as usize].push(f.regs);
        }
    }

    /// Writes a released barrier's result into the warp's destination.
    pub fn barrier_result(&mut self, w: &mut Warp, dst: Slot, value: u64, mask: u32) {
        if let Some(f) = w.frames.last_mut() {
            each(mask, |l| row_mut(&mut f.regs, dst)[l] = value);
        }
    }

    /// Lanes not at `wait` that will return without meeting a barrier:
    /// those whose next entry (the topmost below the running one holding
    /// them, in the same frame) is where no barrier is reachable.
    pub fn lanes_returning(&self, w: &Warp, wait: &BarrierWait) -> u32 {
        let Some(frame) = w.frames.last() else {
            return 0;
        };
        let func = &self.program.funcs[frame.func as usize];
        let mut lanes = frame.returned;
        let mut placed = wait.mask;
        for e in frame.stack.iter().rev().skip(1) {
            let here = e.mask & !placed;
            if e.pc == control::EXIT_PC || func.barrier_free[func.block_of(e.pc)] {
                lanes |= here;
            }
            placed |= e.mask;
        }
        lanes & !wait.mask
    }

    /// Runs a warp until it waits at a barrier or all its lanes have exited.
    pub fn run_warp(&mut self, w: &mut Warp) -> Result<Yield, SimError> {
        let program = self.program;
        loop {
            let fi = w.frames.len() - 1;
            let frame = &mut w.frames[fi];
            if control::settle(&mut frame.stack, frame.returned) {
                if self.pop_frame(w) {
                    w.done = true;
                    return Ok(Yield::Done);
                }
                continue;
            }
            let func = &program.funcs[frame.func as usize];
            let top = *frame.stack.last().expect("settled");
            let mask = top.mask & !frame.returned;
            match self.run_entry(w, fi, func, top.pc, mask) {
                Ok(Some(y)) => return Ok(y),
                Ok(None) => {}
                Err((pc, stop)) => return Err(self.error(w, func, pc, stop)),
            }
        }
    }

    /// Returns from a finished frame; `true` when it was the kernel's.
    fn pop_frame(&mut self, w: &mut Warp) -> bool {
        let done = w.frames.pop().expect("a frame to pop");
        let callee = &self.program.funcs[done.func as usize];
        let finished = match (w.frames.last_mut(), done.call) {
            (Some(caller), Some((dst, words))) => {
                control::copy_between(
                    &done.regs,
                    callee.ret_slot,
                    &mut caller.regs,
                    dst,
                    words,
                    done.call_mask,
                );
                w.sp = done.saved_sp;
                false
            }
            _ => true,
        };
        self.pool[done.func as usize].push(done.regs);
        finished
    }

    /// Runs straight-line code from `pc` with `mask` until control moves:
    /// `Ok(None)` to re-dispatch, `Ok(Some(_))` to yield to the scheduler.
    fn run_entry(
        &mut self,
        w: &mut Warp,
        fi: usize,
        func: &Func,
        mut pc: u32,
        mask: u32,
    ) -> Result<Option<Yield>, (u32, Stop)> {
        let active = u64::from(mask.count_ones());
        loop {
            let op = &func.code[pc as usize];
            w.counters.steps += 1;
            w.counters.thread_instructions += active;
            let frame = &mut w.frames[fi];
            if alu::exec(op, &mut frame.regs, mask) {
                pc += 1;
                continue;
            }
            let fail = |stop| (pc, stop);
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
                        counters: &mut w.counters,
                        scratch: &mut self.scratch,
                    }
                };
            }
            let fault = |(l, f)| fail(Stop::Fault(l, f));
            let regs = &mut frame.regs;
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
                Op::Atomic(ref x) => mem!().atomic(regs, mask, x).map_err(fault)?,
                Op::Mem(ref x) => mem!().block(regs, mask, x).map_err(fault)?,
                Op::OutParams(ref x) => mem!().out_params(regs, mask, x).map_err(fault)?,
                Op::Alloca {
                    dst,
                    size,
                    align,
                    count,
                } => {
                    let counts = count.map(|(s, _)| *row(regs, s));
                    let mut overflow = None;
                    each(mask, |l| {
                        let n = match (counts, count) {
                            (Some(c), Some((_, bits))) => c[l] & scalar::mask(u32::from(bits)),
                            _ => 1,
                        };
                        let at = u64::from(w.sp[l]).next_multiple_of(u64::from(align));
                        let end = at + u64::from(size) * n;
                        if end > MAX_LOCAL_BYTES {
                            overflow.get_or_insert(l);
                            return;
                        }
                        if w.local[l].len() < end as usize {
                            w.local[l].resize(end as usize, 0);
                        }
                        w.sp[l] = end as u32;
                        row_mut(regs, dst)[l] = addr::encode(addr::LOCAL, 0, at);
                    });
                    if let Some(l) = overflow {
                        let msg =
                            format!("local memory of a thread exceeds {MAX_LOCAL_BYTES} bytes");
                        return Err(fail(Stop::Error(ErrorKind::Trap, Some(l), msg)));
                    }
                }
                Op::Special { dst, reg } => {
                    let out: [u64; LANES] = std::array::from_fn(|l| self.special(w, reg, l));
                    write(&mut w.frames[fi].regs, dst, &out, mask);
                }
                Op::Warp(ref x) => warp_ops::exec(x, regs, mask),
                Op::Nop => {}
                Op::Printf { dst, format, args } => {
                    let (fmt, buf) = (*row(regs, format), *row(regs, args));
                    let mut view = View {
                        objects: &mut self.objects,
                        shared: &mut self.shared,
                        local: &mut w.local,
                        layout: &self.program.layout,
                    };
                    let mut lines = Vec::new();
                    lanes::try_each(mask, |l| {
                        lines.push(
                            printf::format(&mut view, fmt[l], buf[l], l).map_err(|f| (l, f))?,
                        );
                        Ok(())
                    })
                    .map_err(fault)?;
                    self.output.extend(lines);
                    each(mask, |l| row_mut(regs, dst)[l] = 0);
                }
                Op::Barrier { reduce, dst, pred } => {
                    let pred = match reduce {
                        BarrierReduce::None => 0,
                        _ => {
                            let p = row(regs, pred);
                            (0..LANES).fold(0u32, |acc, l| acc | (u32::from(p[l] != 0) << l)) & mask
                        }
                    };
                    w.wait = Some(BarrierWait {
                        func: frame.func,
                        pc,
                        mask,
                        reduce,
                        dst,
                        pred,
                    });
                    frame.stack.last_mut().expect("running").pc = pc + 1;
                    return Ok(Some(Yield::Barrier));
                }
                Op::Trap(ref t) => {
                    let lane = mask.trailing_zeros() as usize;
                    let operands = match **t {
                        Trap::Assert {
                            message,
                            file,
                            line,
                        } => [message, file, line].map(|s| row(regs, s)[lane]),
                        _ => [0; 3],
                    };
                    let msg = self.trap_message(t, operands, &mut w.local, lane);
                    return Err(fail(Stop::Error(ErrorKind::Trap, Some(lane), msg)));
                }
                Op::Unsupported(ref msg) => {
                    return Err(fail(Stop::Error(
                        ErrorKind::Unsupported,
                        None,
                        msg.to_string(),
                    )));
                }
                Op::Br { edge } => {
                    let e = &func.edges[edge as usize];
                    w.counters.steps += u64::from(e.phis);
                    w.counters.thread_instructions += u64::from(e.phis) * active;
                    control::phi_copies(regs, e, mask, &mut self.phi_tmp);
                    control::goto(&mut frame.stack, e.target, e.pc);
                    return Ok(None);
                }
                Op::CondBr {
                    cond,
                    edges,
                    site,
                    ipdom,
                } => {
                    let taken = true_lanes(regs, cond, mask);
                    let split = [taken, mask & !taken];
                    let stats = &mut self.sites[site as usize];
                    stats.executions += 1;
                    if split[0] != 0 && split[1] != 0 {
                        stats.nonuniform += 1;
                    }
                    let mut groups = Groups::new();
                    for (&edge, &m) in edges.iter().zip(&split) {
                        groups.add(edge, &func.edges[edge as usize], m);
                    }
                    self.branch(w, fi, func, groups.as_slice(), ipdom, site);
                    return Ok(None);
                }
                Op::Switch(ref s) => {
                    let c = *row(regs, s.cond);
                    let first = c[mask.trailing_zeros() as usize];
                    let mut same = true;
                    let mut groups = Groups::new();
                    each(mask, |l| {
                        let v = c[l] & scalar::mask(u32::from(s.bits));
                        same &= c[l] == first;
                        let edge = s
                            .cases
                            .iter()
                            .find(|&&(k, _)| k == v)
                            .map_or(s.default, |&(_, e)| e);
                        groups.add(edge, &func.edges[edge as usize], 1 << l);
                    });
                    let stats = &mut self.sites[s.site as usize];
                    stats.executions += 1;
                    if !same {
                        stats.nonuniform += 1;
                    }
                    self.branch(w, fi, func, groups.as_slice(), s.ipdom, s.site);
                    return Ok(None);
                }
                Op::Ret { src, words } => {
                    lanes::copy(regs, mask, func.ret_slot, src, words);
                    frame.returned |= mask;
                    if fi == 0 {
                        w.exited |= mask;
                    }
                    frame.stack.pop();
                    return Ok(None);
                }
                Op::Call(ref c) => {
                    frame.stack.last_mut().expect("running").pc = pc + 1;
                    if w.frames.len() >= MAX_FRAMES {
                        let msg = format!("device-function calls nested deeper than {MAX_FRAMES}");
                        return Err(fail(Stop::Error(ErrorKind::Trap, None, msg)));
                    }
                    let mut callee = self.frame(c.callee, mask, Some((c.dst, c.ret_words)), w.sp);
                    let params = &self.program.funcs[c.callee as usize].params;
                    let caller = &w.frames[fi].regs;
                    for (&(src, words), &(dst, _)) in c.args.iter().zip(params) {
                        control::copy_between(caller, src, &mut callee.regs, dst, words, mask);
                    }
                    w.frames.push(callee);
                    return Ok(None);
                }
                _ => unreachable!("register-only ops are run by alu::exec"),
            }
            pc += 1;
        }
    }

    /// Moves the lanes of a branch to their targets: phi copies per group,
    /// then the SIMT stack; counts a divergent branch when they split.
    fn branch(
        &mut self,
        w: &mut Warp,
        fi: usize,
        func: &Func,
        groups: &[Group],
        ipdom: u32,
        site: u32,
    ) {
        let frame = &mut w.frames[fi];
        for g in groups {
            let e = &func.edges[g.edge as usize];
            w.counters.steps += u64::from(e.phis);
            w.counters.thread_instructions += u64::from(e.phis) * u64::from(g.mask.count_ones());
            control::phi_copies(&mut frame.regs, e, g.mask, &mut self.phi_tmp);
        }
        if let [g] = groups {
            control::goto(&mut frame.stack, g.target, g.pc);
            return;
        }
        self.sites[site as usize].divergent += 1;
        w.counters.divwarps += 1;
        let ipdom_pc = control::reconvergence_pc(&func.block_pc, ipdom);
        control::diverge(&mut frame.stack, groups, ipdom, ipdom_pc);
    }

    fn special(&self, w: &Warp, reg: Special, lane: usize) -> u64 {
        let l = lane as u32;
        let below = (1u64 << l) - 1;
        let u = u64::from;
        match reg {
            Special::Tid(d) => u(w.tid[lane][d]),
            Special::Ntid(d) => u(self.block_dim[d]),
            Special::Ctaid(d) => u(self.block[d]),
            Special::Nctaid(d) => u(self.grid[d]),
            Special::LaneId => u(l),
            Special::WarpId => u(w.index),
            Special::NWarpId => u(self
                .block_dim
                .iter()
                .product::<u32>()
                .div_ceil(hw::WARP_SIZE)),
            Special::SmId | Special::GridId => 0,
            Special::NSmId => 1,
            Special::WarpSize => u(hw::WARP_SIZE),
            Special::LaneMaskEq => 1 << l,
            Special::LaneMaskLt => below,
            Special::LaneMaskLe => (below << 1 | 1) & 0xffff_ffff,
            Special::LaneMaskGe => !below & 0xffff_ffff,
            Special::LaneMaskGt => !(below << 1 | 1) & 0xffff_ffff,
            Special::Clock => w.counters.steps,
        }
    }

    /// `operands` are an assertion's message, file and line.
    fn trap_message(
        &mut self,
        t: &Trap,
        operands: [u64; 3],
        local: &mut [Vec<u8>],
        lane: usize,
    ) -> String {
        match t {
            Trap::Trap => "the kernel called __trap()".into(),
            Trap::Unreachable => {
                "reached `unreachable` (undefined behaviour, such as a missing return)".into()
            }
            Trap::Assert { .. } => {
                let mut view = View {
                    objects: &mut self.objects,
                    shared: &mut self.shared,
                    local,
                    layout: &self.program.layout,
                };
                let [message, file, line] = operands;
                let text = printf::read_string(&mut view, message, lane).unwrap_or_default();
                let path = printf::read_string(&mut view, file, lane).unwrap_or_default();
                format!("assertion `{text}` failed ({path}:{})", line as u32)
            }
        }
    }

    fn error(&self, w: &Warp, func: &Func, pc: u32, stop: Stop) -> SimError {
        let m = self.module;
        let f = m.func(func.id);
        let pos = m
            .inst_pos(f, func.origin[pc as usize])
            .map(|p| Box::new(Position::resolve(m, &p)));
        let (kind, lane, message, address) = match stop {
            Stop::Fault(l, fault) => {
                let space = match addr::tag(fault.addr) {
                    addr::GLOBAL => "__global__",
                    addr::SHARED => "__shared__",
                    addr::LOCAL => "__local__",
                    addr::CONSTANT => "__constant__",
                    _ => "generic",
                };
                let access = if fault.write { "write" } else { "read" };
                let detail = memory::describe(
                    &fault,
                    &self.objects,
                    &self.program.layout,
                    self.shared.len(),
                );
                let msg = format!(
                    "invalid {space} {access} of size {} bytes: {detail}",
                    fault.len
                );
                (ErrorKind::Memory, Some(l), msg, Some(fault.addr))
            }
            Stop::Error(k, l, msg) => (k, l, msg, None),
        };
        SimError {
            kind,
            message,
            pos,
            block: Some(self.block),
            thread: lane.map(|l| w.tid[l]),
            address,
        }
    }
}
