//! PTX special registers an asm body may read, and what their values
//! depend on.

use crate::ir::intrinsics::{LaneMask, SReg};

/// The `%reserved_smem_offset_*` registers: the bounds of the shared
/// memory the driver reserves per block (cooperative groups keeps its
/// multi-warp scratch there).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ReservedSmem {
    Begin,
    End,
    Cap,
    /// `%reserved_smem_offset_0`, `_1`: offsets of the reserved slots.
    Slot(u8),
}

/// A special register an asm body reads.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Special {
    /// One LLVM also reads (`llvm.nvvm.read.ptx.sreg.*`): `%tid.x`,
    /// `%laneid`, `%lanemask_lt`, ...; `%clock`, `%clock64` and
    /// `%globaltimer` are all [`SReg::Clock`], told apart by the width read.
    Sreg(SReg),
    ReservedSmem(ReservedSmem),
    DynamicSmemSize,
    TotalSmemSize,
    /// `%envreg0`..`%envreg31`: launch-environment words the driver sets
    /// (cooperative groups reads the grid-barrier workspace from them).
    EnvReg(u8),
}

/// What a special register's value varies with.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Dependence {
    /// The same in every thread of a block for the whole launch.
    Uniform,
    /// Differs between threads (of a warp or of the block).
    Thread,
    /// Differs between reads of the same thread (clocks, and the physical
    /// warp and SM placement, which the hardware may change).
    Time,
}

impl Special {
    /// Reads a register name without its `%` (`laneid`, `tid.x`).
    pub fn parse(name: &str) -> Option<Special> {
        if let Some(n) = name.strip_prefix("envreg") {
            return n.parse().ok().filter(|&n| n < 32).map(Special::EnvReg);
        }
        if let Some(slot) = name.strip_prefix("reserved_smem_offset_") {
            let r = match slot {
                "begin" => ReservedSmem::Begin,
                "end" => ReservedSmem::End,
                "cap" => ReservedSmem::Cap,
                "0" => ReservedSmem::Slot(0),
                "1" => ReservedSmem::Slot(1),
                _ => return None,
            };
            return Some(Special::ReservedSmem(r));
        }
        match name {
            "dynamic_smem_size" => return Some(Special::DynamicSmemSize),
            "total_smem_size" => return Some(Special::TotalSmemSize),
            "warpsize" => return None,
            _ => {}
        }
        // LLVM spells `%lanemask_lt` as `lanemask.lt`.
        let llvm = match name.strip_prefix("lanemask_") {
            Some(kind) => format!("lanemask.{kind}"),
            None => name.to_string(),
        };
        SReg::parse(&llvm).map(Special::Sreg)
    }

    pub fn dependence(self) -> Dependence {
        match self {
            Special::Sreg(SReg::Tid(_) | SReg::LaneId | SReg::LaneMask(_)) => Dependence::Thread,
            Special::Sreg(SReg::WarpId | SReg::SmId | SReg::Clock) => Dependence::Time,
            _ => Dependence::Uniform,
        }
    }
}

/// The value of `%lanemask_*` in lane `lane` (0..32): the lanes equal to,
/// at most, below, at least or above it.
pub fn lane_mask(kind: LaneMask, lane: u32) -> u32 {
    let bit = 1u32 << (lane & 31);
    let below = bit - 1;
    match kind {
        LaneMask::Eq => bit,
        LaneMask::Lt => below,
        LaneMask::Le => below | bit,
        LaneMask::Gt => !(below | bit),
        LaneMask::Ge => !below,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_masks_by_hand() {
        // Lane 5: bit 5 is 0x20; the lanes below are 0..4 = 0x1f.
        assert_eq!(lane_mask(LaneMask::Eq, 5), 0x20);
        assert_eq!(lane_mask(LaneMask::Lt, 5), 0x1f);
        assert_eq!(lane_mask(LaneMask::Le, 5), 0x3f);
        // Above lane 5: bits 6..31 = 0xffff_ffc0; at least: bits 5..31.
        assert_eq!(lane_mask(LaneMask::Gt, 5), 0xffff_ffc0);
        assert_eq!(lane_mask(LaneMask::Ge, 5), 0xffff_ffe0);
        // The ends: nothing below lane 0, nothing above lane 31.
        assert_eq!(lane_mask(LaneMask::Lt, 0), 0);
        assert_eq!(lane_mask(LaneMask::Gt, 31), 0);
        assert_eq!(lane_mask(LaneMask::Le, 31), u32::MAX);
    }

    #[test]
    fn names_and_dependence() {
        use crate::ir::intrinsics::Dim;
        let dependence = |name| Special::parse(name).unwrap().dependence();
        assert_eq!(
            Special::parse("tid.y"),
            Some(Special::Sreg(SReg::Tid(Dim::Y)))
        );
        assert_eq!(
            Special::parse("lanemask_lt"),
            Some(Special::Sreg(SReg::LaneMask(LaneMask::Lt)))
        );
        assert_eq!(Special::parse("envreg2"), Some(Special::EnvReg(2)));
        assert_eq!(Special::parse("envreg32"), None);
        for thread in ["laneid", "lanemask_ge", "tid.x"] {
            assert_eq!(dependence(thread), Dependence::Thread, "{thread}");
        }
        for time in ["warpid", "smid", "clock", "clock64", "globaltimer"] {
            assert_eq!(dependence(time), Dependence::Time, "{time}");
        }
        for uniform in [
            "reserved_smem_offset_begin",
            "reserved_smem_offset_end",
            "reserved_smem_offset_cap",
            "reserved_smem_offset_0",
            "reserved_smem_offset_1",
            "dynamic_smem_size",
            "total_smem_size",
            "nwarpid",
            "ctaid.z",
            "envreg1",
        ] {
            assert_eq!(dependence(uniform), Dependence::Uniform, "{uniform}");
        }
        assert_eq!(Special::parse("bogus"), None);
        assert_eq!(Special::parse("reserved_smem_offset_2"), None);
    }
}
