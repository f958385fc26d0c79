//! What a warp asks of its surroundings (special registers, `printf`) and
//! how a stop becomes a [`SimError`] placed at its line, thread and block.

use super::lanes::{each, row, row_mut, try_each, write, LANES};
use super::{Machine, Warp};
use crate::hw;
use crate::ir::intrinsics::{LaneMask, SReg};
use crate::ir::Position;
use crate::sim::budget::Exhausted;
use crate::sim::code::{Slot, Trap};
use crate::sim::error::{ErrorKind, SimError};
use crate::sim::memory::{self, Fault, View};
use crate::sim::{addr, printf};

/// Why an op stopped the warp: a lane's memory fault, a message, or the
/// launch's budget running out.
pub(super) enum Stop {
    Fault(usize, Fault),
    Error(ErrorKind, Option<usize>, String),
    Budget(Exhausted),
}

impl Machine<'_> {
    pub(super) fn special(&self, w: &mut Warp, reg: SReg, dst: Slot, mask: u32) {
        let out: [u64; LANES] = std::array::from_fn(|l| self.special_lane(w, reg, l));
        write(
            &mut w.frames.last_mut().expect("running").regs,
            dst,
            &out,
            mask,
        );
    }

    fn special_lane(&self, w: &Warp, reg: SReg, lane: usize) -> u64 {
        let l = lane as u32;
        let below = (1u64 << l) - 1;
        let u = u64::from;
        let threads: u32 = self.block_dim.iter().product();
        match reg {
            SReg::Tid(d) => u(w.tid[lane][d.index()]),
            SReg::Ntid(d) => u(self.block_dim[d.index()]),
            SReg::Ctaid(d) => u(self.block[d.index()]),
            SReg::Nctaid(d) => u(self.grid[d.index()]),
            SReg::LaneId => u(l),
            SReg::WarpId => u(w.index),
            SReg::NWarpId => u(threads.div_ceil(hw::WARP_SIZE)),
            SReg::SmId | SReg::GridId => 0,
            SReg::NSmId => 1,
            SReg::WarpSize => u(hw::WARP_SIZE),
            SReg::LaneMask(LaneMask::Eq) => 1 << l,
            SReg::LaneMask(LaneMask::Lt) => below,
            SReg::LaneMask(LaneMask::Le) => (below << 1 | 1) & 0xffff_ffff,
            SReg::LaneMask(LaneMask::Ge) => !below & 0xffff_ffff,
            SReg::LaneMask(LaneMask::Gt) => !(below << 1 | 1) & 0xffff_ffff,
            SReg::Clock => w.counters.steps,
        }
    }

    /// Device `printf`, one line per active lane in lane order.
    pub(super) fn printf(
        &mut self,
        w: &mut Warp,
        (dst, format, args): (Slot, Slot, Slot),
        mask: u32,
    ) -> Result<(), Stop> {
        let regs = &mut w.frames.last_mut().expect("running").regs;
        let (fmt, buf) = (*row(regs, format), *row(regs, args));
        let mut view = View {
            objects: &mut self.objects,
            shared: &mut self.shared,
            local: &mut w.local,
            layout: &self.program.layout,
        };
        let output = &mut self.output;
        // Output is a change a spinning warp could not repeat unnoticed.
        self.writes += 1;
        try_each(mask, |l| {
            output
                .push(printf::format(&mut view, fmt[l], buf[l], l).map_err(|f| Stop::Fault(l, f))?);
            Ok(())
        })?;
        each(mask, |l| row_mut(regs, dst)[l] = 0);
        Ok(())
    }

    /// A trap, a failed `assert` or `unreachable`, for the lowest active lane.
    pub(super) fn trap(&mut self, w: &mut Warp, t: &Trap, mask: u32) -> Stop {
        let lane = mask.trailing_zeros() as usize;
        let message = match *t {
            Trap::Trap => "the kernel called __trap()".into(),
            Trap::Unreachable => {
                "reached `unreachable` (undefined behaviour, such as a missing return)".into()
            }
            Trap::Assert {
                message,
                file,
                line,
            } => {
                let regs = &w.frames.last().expect("running").regs;
                let [message, file, line] = [message, file, line].map(|s| row(regs, s)[lane]);
                let mut view = View {
                    objects: &mut self.objects,
                    shared: &mut self.shared,
                    local: &mut w.local,
                    layout: &self.program.layout,
                };
                let text = printf::read_string(&mut view, message, lane).unwrap_or_default();
                let path = printf::read_string(&mut view, file, lane).unwrap_or_default();
                format!("assertion `{text}` failed ({path}:{})", line as u32)
            }
        };
        Stop::Error(ErrorKind::Trap, Some(lane), message)
    }

    /// The source position of op `pc` of decoded function `func`.
    pub fn position(&self, func: u32, pc: u32) -> Option<Position> {
        let f = &self.program.funcs[func as usize];
        let m = self.module;
        m.inst_pos(m.func(f.id), f.origin[pc as usize])
            .map(|p| Position::resolve(m, &p))
    }

    /// Places a stop at the op's source position, thread and block.
    pub(super) fn error(&self, w: &Warp, func: u32, pc: u32, mask: u32, stop: Stop) -> SimError {
        let (kind, lane, message, address) = match stop {
            Stop::Fault(l, fault) => {
                let message = self.describe_fault(&fault);
                (ErrorKind::Memory, Some(l), message, Some(fault.addr))
            }
            Stop::Error(k, l, message) => (k, l, message, None),
            Stop::Budget(e) => {
                let kind = match e {
                    Exhausted::Steps(_) => ErrorKind::StepLimit,
                    Exhausted::Time(_) => ErrorKind::Timeout,
                    Exhausted::Memory(_) => ErrorKind::MemoryLimit,
                };
                (
                    kind,
                    Some(mask.trailing_zeros() as usize),
                    e.describe(),
                    None,
                )
            }
        };
        SimError {
            pos: self.position(func, pc).map(Box::new),
            block: Some(self.block),
            thread: lane.map(|l| w.tid[l]),
            address,
            ..SimError::new(kind, message)
        }
    }

    /// `invalid __global__ write of size 4 bytes: address ... is ...`.
    fn describe_fault(&self, fault: &Fault) -> String {
        let space = match addr::tag(fault.addr) {
            addr::GLOBAL => "__global__",
            addr::SHARED => "__shared__",
            addr::LOCAL => "__local__",
            addr::CONSTANT => "__constant__",
            _ => "generic",
        };
        let access = if fault.write { "write" } else { "read" };
        let detail = memory::describe(
            fault,
            &self.objects,
            &self.program.layout,
            self.shared.len(),
        );
        format!(
            "invalid {space} {access} of size {} bytes: {detail}",
            fault.len
        )
    }
}
