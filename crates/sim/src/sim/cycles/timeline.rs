//! What a warp issued, in order, for the cycle model to replay: runs of
//! instructions with the same latency, source line and state, memory
//! instructions one by one with the latency of what they touched, and the
//! barriers the warp waited at. The interpreter calls [`Timeline::issue`]
//! for every instruction it counts as a step, [`Timeline::memory`] after a
//! memory instruction, [`Timeline::phis`] for the phi copies of an edge
//! and [`Timeline::barrier`] when the warp stops at a barrier.

use super::Tables;
use crate::machine::Access;
use crate::sim::code::Op;
use crate::sim::cost::Counters;
use std::sync::Arc;

/// The instruction touched memory: its latency is measured.
pub const MEMORY: u8 = 1;
/// The warp ran it with some of its live lanes waiting elsewhere.
pub const SPLIT: u8 = 2;
/// The warp waits at `__syncthreads()` after it.
pub const BARRIER: u8 = 4;
/// The warp waits at the grid barrier after it.
pub const GRID: u8 = 8;

/// `count` instructions issued back to back by one warp, each keeping it
/// `latency` cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub count: u32,
    pub latency: u32,
    /// Index into [`Tables::lines`].
    pub line: u32,
    pub flags: u8,
}

/// Whether a memory op waits for its data: stores and block copies do
/// not (a copy is costed as a store of both its parts).
pub fn access_of(op: &Op) -> Access {
    match op {
        Op::Store { .. } | Op::StoreLeaves(_) | Op::Mem(_) => Access::Store,
        _ => Access::Load,
    }
}

/// One warp's events.
pub struct Timeline {
    tables: Arc<Tables>,
    pub events: Vec<Event>,
    /// The last event is a memory instruction waiting for its latency.
    pending: bool,
}

impl Timeline {
    pub fn new(tables: Arc<Tables>) -> Timeline {
        Timeline {
            tables,
            events: Vec::new(),
            pending: false,
        }
    }

    fn push(&mut self, e: Event) {
        match self.events.last_mut() {
            Some(last)
                if last.latency == e.latency
                    && last.line == e.line
                    && last.flags == e.flags
                    && e.flags & (MEMORY | BARRIER | GRID) == 0 =>
            {
                last.count += e.count
            }
            _ => self.events.push(e),
        }
    }

    /// The op at `pc` of decoded function `func` issued; `split` when some
    /// live lanes of the warp wait elsewhere.
    #[inline]
    pub fn issue(&mut self, func: u32, pc: u32, split: bool) {
        let (latency, line, memory) = self.tables.op(func, pc);
        self.pending = memory;
        let flags = if memory { MEMORY } else { 0 } | if split { SPLIT } else { 0 };
        self.push(Event {
            count: 1,
            latency,
            line,
            flags,
        });
    }

    /// After a memory instruction: its latency from what it added to the
    /// warp's counters.
    #[inline]
    pub fn memory(&mut self, access: Access, before: &Counters, after: &Counters) {
        if !std::mem::take(&mut self.pending) {
            return;
        }
        let latency = self.tables.machine.measured(
            access,
            after.requests - before.requests,
            after.sectors - before.sectors,
            after.wavefronts - before.wavefronts,
        );
        if let Some(last) = self.events.last_mut() {
            last.latency = u32::try_from(latency).unwrap_or(u32::MAX);
        }
    }

    /// `n` phi copies on the edge the last instruction (a branch) took.
    pub fn phis(&mut self, n: u32) {
        if n == 0 {
            return;
        }
        let (line, flags) = self
            .events
            .last()
            .map_or((0, 0), |e| (e.line, e.flags & SPLIT));
        self.push(Event {
            count: n,
            latency: self.tables.machine.phi_latency(),
            line,
            flags,
        });
    }

    /// The warp stopped at a barrier after its last instruction.
    pub fn barrier(&mut self, grid: bool) {
        let Some(last) = self.events.last_mut() else {
            return;
        };
        if last.count > 1 {
            last.count -= 1;
            let one = Event { count: 1, ..*last };
            self.events.push(one);
        }
        let last = self.events.last_mut().expect("just pushed");
        last.flags |= if grid { GRID } else { BARRIER };
    }
}
