//! What one instruction costs in time: its class, and the latency the
//! [`Machine`] gives that class. The simulator's cycle mode and the static
//! bounds both call [`class_of`] on the same IR instruction, so the two
//! can never disagree on what an instruction is; memory instructions take
//! their latency from what they touch (sectors, wavefronts), measured by
//! the simulator and bounded by the checks.

use super::Machine;
use crate::hw;
use crate::ir::intrinsics::Intrinsic;
use crate::ir::{Function, Inst, Module, Opcode, TypeKind};
use crate::memory::Space;

/// The latency class of an instruction.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Class {
    Alu,
    Fp64,
    /// Integer and floating-point division and remainder.
    Div,
    /// Transcendental and libdevice math.
    Math,
    /// Shuffles, votes, `match`, `__syncwarp`.
    Warp,
    /// `__syncthreads()` and its reducing forms: one cycle to arrive; the
    /// wait and [`Machine::barrier_cycles`] come from the meeting.
    Barrier,
    /// Loads, stores, atomics, block copies: latency from what they touch.
    Memory,
    /// Issues nothing (`llvm.lifetime`, `llvm.assume`, debug markers).
    Free,
}

/// Whether a memory access waits for its data (loads, atomics) or not.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Access {
    Load,
    Store,
}

/// The class of `inst` of `f`.
pub fn class_of(m: &Module, f: &Function, inst: &Inst) -> Class {
    let double =
        |v: &crate::ir::Value| matches!(m.types.kind(m.value_type(f, *v)), TypeKind::Double);
    let uses_double =
        || matches!(m.types.kind(inst.ty), TypeKind::Double) || inst.operands.iter().any(double);
    match inst.op {
        Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::CmpXchg => Class::Memory,
        Opcode::UDiv | Opcode::SDiv | Opcode::URem | Opcode::SRem | Opcode::FDiv | Opcode::FRem => {
            Class::Div
        }
        Opcode::FAdd
        | Opcode::FSub
        | Opcode::FMul
        | Opcode::FNeg
        | Opcode::FCmp
        | Opcode::FPExt
        | Opcode::FPTrunc
        | Opcode::FPToSI
        | Opcode::FPToUI
        | Opcode::SIToFP
        | Opcode::UIToFP
            if uses_double() =>
        {
            Class::Fp64
        }
        Opcode::Call => match m.called_intrinsic(inst) {
            Some(Intrinsic::NoOp | Intrinsic::Assume) => Class::Free,
            Some(Intrinsic::Barrier(_)) => Class::Barrier,
            Some(
                Intrinsic::WarpSync
                | Intrinsic::Shfl { .. }
                | Intrinsic::Vote(_)
                | Intrinsic::MatchAny
                | Intrinsic::MatchAll,
            ) => Class::Warp,
            Some(
                Intrinsic::Atomic(_)
                | Intrinsic::GlobalLoad
                | Intrinsic::MemCpy
                | Intrinsic::MemMove
                | Intrinsic::MemSet,
            ) => Class::Memory,
            Some(Intrinsic::Pure { alu: false }) => Class::Math,
            Some(Intrinsic::Pure { alu: true } | Intrinsic::MinMax(_)) if uses_double() => {
                Class::Fp64
            }
            Some(Intrinsic::Pure { alu: true } | Intrinsic::MinMax(_)) => Class::Alu,
            // Not in the tables above: the class of an unknown intrinsic.
            Some(
                Intrinsic::Unknown
                | Intrinsic::ActiveMask
                | Intrinsic::Redux(_)
                | Intrinsic::PtrCast
                | Intrinsic::Prefetch
                | Intrinsic::Sleep
                | Intrinsic::Trap,
            ) => Class::Math,
            _ => Class::Alu,
        },
        _ => Class::Alu,
    }
}

impl Machine {
    /// The latency of a class other than [`Class::Memory`] (whose latency
    /// depends on the access): cycles until the warp may issue again.
    pub fn latency(&self, c: Class) -> u32 {
        match c {
            Class::Alu => self.alu_latency,
            Class::Fp64 => self.fp64_latency,
            Class::Div => self.div_latency,
            Class::Math => self.math_latency,
            Class::Warp => self.warp_latency,
            Class::Barrier => 1,
            Class::Memory => self.local_latency,
            Class::Free => 0,
        }
    }

    /// A phi copy on a CFG edge: a register move.
    pub fn phi_latency(&self) -> u32 {
        self.alu_latency
    }

    /// A global access of `requests` warp-level requests touching
    /// `sectors` 32-byte sectors in all.
    pub fn global(&self, a: Access, requests: u64, sectors: u64) -> u64 {
        let base = match a {
            Access::Load => self.global_latency,
            Access::Store => self.global_store_latency,
        };
        u64::from(base) + u64::from(self.sector_cycles) * sectors.saturating_sub(requests)
    }

    /// A shared-memory access served in `wavefronts` wavefronts.
    pub fn shared(&self, a: Access, wavefronts: u64) -> u64 {
        let base = match a {
            Access::Load => self.shared_latency,
            Access::Store => self.shared_store_latency,
        };
        u64::from(base) + u64::from(self.wavefront_cycles) * wavefronts.saturating_sub(1)
    }

    /// Local, constant or parameter memory, or an access the simulator
    /// could not place in one space.
    pub fn other(&self, a: Access) -> u64 {
        match a {
            Access::Load => u64::from(self.local_latency),
            Access::Store => u64::from(self.global_store_latency),
        }
    }

    /// The latency the simulator gives one executed memory instruction,
    /// from what its accesses added to the warp's counters: global
    /// requests and sectors, and shared wavefronts. A block copy (load and
    /// store together) is costed as a store, its two parts added.
    pub fn measured(&self, a: Access, requests: u64, sectors: u64, wavefronts: u64) -> u64 {
        let mut l = 0;
        if requests > 0 {
            l += self.global(a, requests, sectors);
        }
        if wavefronts > 0 {
            l += self.shared(a, wavefronts);
        }
        if l == 0 {
            l = self.other(a);
        }
        l
    }

    /// An upper bound on one execution of a memory site of `bytes` per
    /// lane in `space`, given the most sectors (global) or wavefronts
    /// (shared) one execution can take; `None` where the checks give no
    /// figure (the worst case is taken).
    pub fn site_bound(
        &self,
        a: Access,
        space: Space,
        bytes: u64,
        sectors: Option<u64>,
        wavefronts: Option<u64>,
    ) -> u64 {
        let lanes = u64::from(hw::WARP_SIZE);
        let worst_sectors = lanes * (bytes.div_ceil(hw::SECTOR_BYTES) + 1);
        let worst_wavefronts = worst_wavefronts(bytes);
        let g = self.global(a, 1, sectors.unwrap_or(worst_sectors));
        let s = self.shared(a, wavefronts.unwrap_or(worst_wavefronts));
        let o = self.other(a);
        // The simulator costs an access whose lanes it cannot place in one
        // space as `other`: never less than that.
        match space {
            Space::Global => g.max(o),
            Space::Shared => s.max(o),
            Space::Local | Space::Constant => o,
            _ => g.max(s).max(o),
        }
    }
}

/// The most wavefronts a warp's shared access of `bytes` per lane can
/// take: every lane's bytes in wavefronts of their own.
pub fn worst_wavefronts(bytes: u64) -> u64 {
    u64::from(hw::WARP_SIZE) * bytes.div_ceil(128).max(1)
}

/// Wavefronts of a shared access every lane of which reads the same
/// address: one broadcast per phase (see [`hw::shared_phase_lanes`]).
pub fn uniform_wavefronts(bytes: u64) -> u64 {
    let width = u32::try_from(bytes).unwrap_or(u32::MAX);
    u64::from(hw::WARP_SIZE / hw::shared_phase_lanes(width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_latencies() {
        let m = Machine::a100();
        // One 128-byte coalesced load: 4 sectors, 3 beyond the first.
        assert_eq!(m.global(Access::Load, 1, 4), 400 + 3);
        assert_eq!(m.global(Access::Store, 1, 4), 4 + 3);
        // A 32-way conflict: 31 extra wavefronts at 2 cycles.
        assert_eq!(m.shared(Access::Load, 32), 24 + 62);
        // Nothing counted: local memory.
        assert_eq!(m.measured(Access::Load, 0, 0, 0), 32);
        // A copy from global to shared: both parts.
        assert_eq!(m.measured(Access::Store, 1, 4, 1), 4 + 3 + 4);
        // Unknown space: the worst of the three.
        assert_eq!(
            m.site_bound(Access::Load, Space::Unknown, 4, None, None),
            400 + 32 * 2 - 1
        );
        assert_eq!(uniform_wavefronts(4), 1);
        assert_eq!(uniform_wavefronts(8), 2);
        assert_eq!(uniform_wavefronts(16), 4);
    }
}
