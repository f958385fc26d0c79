//! A warp's state: its lanes, call frames and local memory; frames come
//! from per-function pools so calls and new warps reuse register files.

use super::control::{self, Entry};
use super::frame::Frame;
use super::lanes::{each, row, row_mut, LANES};
use super::spin::{Spin, SpinWatch};
use super::{Machine, Stop, MAX_FRAMES, MAX_LOCAL_BYTES};
use crate::hw;
use crate::ir::intrinsics::BarrierReduce;
use crate::sim::code::{Call, Slot, EXIT};
use crate::sim::cost::Counters;
use crate::sim::error::ErrorKind;
use crate::sim::{addr, scalar};

/// A warp stopped at `__syncthreads()`.
#[derive(Clone, Debug)]
pub struct BarrierWait {
    pub func: u32,
    pub pc: u32,
    pub mask: u32,
    pub reduce: BarrierReduce,
    /// The grid-wide barrier (`__warpcheck_grid_sync()`), not the block's.
    pub grid: bool,
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
    /// Spinning since [`Machine::writes`] had this value (see `spin`).
    pub parked: Option<(u64, Spin)>,
    /// Cycle mode: what the warp issued.
    pub timeline: Option<Box<crate::sim::cycles::timeline::Timeline>>,
    /// The `__syncwarp`s and warp collectives that order its lanes'
    /// accesses, for the race check.
    pub syncs: crate::sim::race::WarpSyncs,
    pub(super) watch: SpinWatch,
    pub(super) frames: Vec<Frame>,
    pub(super) sp: [u32; LANES],
    pub(super) local: Vec<Vec<u8>>,
}

/// Spare register files and SIMT stacks per function, constants in place.
#[derive(Default)]
pub(super) struct Pools {
    regs: Vec<Vec<Vec<u64>>>,
    stacks: Vec<Vec<Entry>>,
}

impl Pools {
    pub fn new(funcs: usize) -> Self {
        Pools {
            regs: vec![Vec::new(); funcs],
            stacks: Vec::new(),
        }
    }

    fn give_back(&mut self, f: Frame) {
        self.regs[f.func as usize].push(f.regs);
        self.stacks.push(f.stack);
    }
}

impl Warp {
    /// The function and op the warp runs next (its top frame's top
    /// entry), and the lanes that run it.
    pub fn point(&self) -> Option<(u32, u32, u32)> {
        let f = self.frames.last()?;
        f.stack.last().map(|e| (f.func, e.pc, e.mask & !f.returned))
    }
}

impl Machine<'_> {
    fn frame(
        &mut self,
        func: u32,
        mask: u32,
        call: Option<(Slot, u32)>,
        sp: [u32; LANES],
    ) -> Frame {
        let f = &self.program.funcs[func as usize];
        let regs = self.pools.regs[func as usize]
            .pop()
            .unwrap_or_else(|| f.template.clone());
        let mut stack = self.pools.stacks.pop().unwrap_or_default();
        stack.clear();
        stack.push(Entry {
            pc: f.block_pc[0],
            rpc: EXIT,
            mask,
        });
        Frame {
            func,
            regs,
            stack,
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
        // The first lane's index by division, the others by counting on
        // (x fastest), as a warp's lanes are consecutive threads.
        let first = index * hw::WARP_SIZE;
        let mut at = [first % bx, (first / bx) % by, first / (bx * by)];
        for (l, t) in tid.iter_mut().enumerate() {
            if first + (l as u32) >= threads {
                break;
            }
            valid |= 1 << l;
            *t = at;
            at[0] += 1;
            if at[0] == bx {
                at[0] = 0;
                at[1] += 1;
                if at[1] == by {
                    at[1] = 0;
                    at[2] += 1;
                }
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
            parked: None,
            timeline: self
                .cycles
                .clone()
                .map(|t| Box::new(crate::sim::cycles::timeline::Timeline::new(t))),
            syncs: Default::default(),
            watch: SpinWatch::new(),
            frames: vec![frame],
            sp: [0; LANES],
            local: vec![Vec::new(); LANES],
        }
    }

    /// Gives a finished warp's frames back for reuse.
    pub fn retire(&mut self, w: &mut Warp) {
        for f in w.frames.drain(..) {
            self.pools.give_back(f);
        }
    }

    /// Enters a device function for the lanes of `mask`; the caller resumes
    /// at `pc + 1`.
    pub(super) fn call(&mut self, w: &mut Warp, c: &Call, mask: u32, pc: u32) -> Result<(), Stop> {
        let fi = w.frames.len() - 1;
        w.frames[fi].stack.last_mut().expect("running").pc = pc + 1;
        if w.frames.len() >= MAX_FRAMES {
            let msg = format!("device-function calls nested deeper than {MAX_FRAMES}");
            return Err(Stop::Error(ErrorKind::Trap, None, msg));
        }
        let mut callee = self.frame(c.callee, mask, Some((c.dst, c.ret_words)), w.sp);
        let params = &self.program.funcs[c.callee as usize].params;
        for (&(src, words), &(dst, _)) in c.args.iter().zip(params) {
            control::copy_between(&w.frames[fi].regs, src, &mut callee.regs, dst, words, mask);
        }
        w.frames.push(callee);
        Ok(())
    }

    /// Returns from a finished frame; `true` when it was the kernel's.
    pub(super) fn pop_frame(&mut self, w: &mut Warp) -> bool {
        let done = w.frames.pop().expect("a frame to pop");
        let callee = &self.program.funcs[done.func as usize];
        let finished = match (w.frames.last_mut(), done.call) {
            (Some(caller), Some((dst, words))) => {
                let (src, mask) = (callee.ret_slot, done.call_mask);
                control::copy_between(&done.regs, src, &mut caller.regs, dst, words, mask);
                w.sp = done.saved_sp;
                false
            }
            _ => true,
        };
        self.pools.give_back(done);
        finished
    }

    /// `alloca`: each lane bumps its own local stack.
    pub(super) fn alloca(
        w: &mut Warp,
        mask: u32,
        (dst, size, align, count): (Slot, u32, u32, Option<(Slot, u8)>),
    ) -> Result<(), Stop> {
        let regs = &mut w.frames.last_mut().expect("running").regs;
        let counts = count.map(|(s, bits)| (*row(regs, s), scalar::mask(u32::from(bits))));
        let mut overflow = None;
        each(mask, |l| {
            let n = counts.map_or(1, |(c, m)| c[l] & m);
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
        match overflow {
            Some(l) => {
                let msg = format!("local memory of a thread exceeds {MAX_LOCAL_BYTES} bytes");
                Err(Stop::Error(ErrorKind::Trap, Some(l), msg))
            }
            None => Ok(()),
        }
    }

    /// Stops the warp at a barrier; the block scheduler releases it.
    pub(super) fn arrive(
        w: &mut Warp,
        (reduce, dst, pred): (BarrierReduce, Slot, Slot),
        mask: u32,
        pc: u32,
        grid: bool,
    ) {
        let frame = w.frames.last_mut().expect("running");
        let pred = match reduce {
            BarrierReduce::None => 0,
            _ => {
                let p = row(&frame.regs, pred);
                (0..LANES).fold(0u32, |acc, l| acc | (u32::from(p[l] != 0) << l)) & mask
            }
        };
        w.wait = Some(BarrierWait {
            func: frame.func,
            pc,
            mask,
            reduce,
            grid,
            dst,
            pred,
        });
        frame.stack.last_mut().expect("running").pc = pc + 1;
    }

    /// Writes a released barrier's result into the warp's destination.
    pub fn barrier_result(&mut self, w: &mut Warp, dst: Slot, value: u64, mask: u32) {
        if let Some(f) = w.frames.last_mut() {
            each(mask, |l| row_mut(&mut f.regs, dst)[l] = value);
        }
    }
}
