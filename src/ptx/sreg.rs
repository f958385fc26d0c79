//! PTX special registers an asm body may read, and what their values
//! depend on.

use crate::ir::intrinsics::{Dim, LaneMask};

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

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Special {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LaneMask(LaneMask),
    ReservedSmem(ReservedSmem),
    DynamicSmemSize,
    TotalSmemSize,
    /// `%envreg0`..`%envreg31`: launch-environment words the driver sets
    /// (cooperative groups reads the grid-barrier workspace from them).
    EnvReg(u8),
    Clock,
    Clock64,
    GlobalTimer,
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
        if let Some((reg, d)) = name.split_once('.') {
            let d = match d {
                "x" => Dim::X,
                "y" => Dim::Y,
                "z" => Dim::Z,
                _ => return None,
            };
            return match reg {
                "tid" => Some(Special::Tid(d)),
                "ntid" => Some(Special::Ntid(d)),
                "ctaid" => Some(Special::Ctaid(d)),
                "nctaid" => Some(Special::Nctaid(d)),
                _ => None,
            };
        }
        if let Some(n) = name.strip_prefix("envreg") {
            return n.parse().ok().filter(|&n| n < 32).map(Special::EnvReg);
        }
        Some(match name {
            "laneid" => Special::LaneId,
            "warpid" => Special::WarpId,
            "nwarpid" => Special::NWarpId,
            "smid" => Special::SmId,
            "nsmid" => Special::NSmId,
            "gridid" => Special::GridId,
            "lanemask_eq" => Special::LaneMask(LaneMask::Eq),
            "lanemask_le" => Special::LaneMask(LaneMask::Le),
            "lanemask_lt" => Special::LaneMask(LaneMask::Lt),
            "lanemask_ge" => Special::LaneMask(LaneMask::Ge),
            "lanemask_gt" => Special::LaneMask(LaneMask::Gt),
            "reserved_smem_offset_begin" => Special::ReservedSmem(ReservedSmem::Begin),
            "reserved_smem_offset_end" => Special::ReservedSmem(ReservedSmem::End),
            "reserved_smem_offset_cap" => Special::ReservedSmem(ReservedSmem::Cap),
            "reserved_smem_offset_0" => Special::ReservedSmem(ReservedSmem::Slot(0)),
            "reserved_smem_offset_1" => Special::ReservedSmem(ReservedSmem::Slot(1)),
            "dynamic_smem_size" => Special::DynamicSmemSize,
            "total_smem_size" => Special::TotalSmemSize,
            "clock" => Special::Clock,
            "clock64" => Special::Clock64,
            "globaltimer" => Special::GlobalTimer,
            _ => return None,
        })
    }

    pub fn dependence(self) -> Dependence {
        match self {
            Special::Tid(_) | Special::LaneId | Special::LaneMask(_) => Dependence::Thread,
            Special::WarpId
            | Special::SmId
            | Special::Clock
            | Special::Clock64
            | Special::GlobalTimer => Dependence::Time,
            Special::Ntid(_)
            | Special::Ctaid(_)
            | Special::Nctaid(_)
            | Special::NWarpId
            | Special::NSmId
            | Special::GridId
            | Special::ReservedSmem(_)
            | Special::DynamicSmemSize
            | Special::TotalSmemSize
            | Special::EnvReg(_) => Dependence::Uniform,
        }
    }

    /// The register's width in bits (`%clock64` and `%globaltimer` are
    /// 64-bit, `%gridid` too; the rest 32).
    pub fn bits(self) -> u32 {
        match self {
            Special::Clock64 | Special::GlobalTimer | Special::GridId => 64,
            _ => 32,
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
        assert_eq!(Special::parse("tid.y"), Some(Special::Tid(Dim::Y)));
        assert_eq!(Special::parse("envreg2"), Some(Special::EnvReg(2)));
        assert_eq!(Special::parse("envreg32"), None);
        assert_eq!(
            Special::parse("laneid").unwrap().dependence(),
            Dependence::Thread
        );
        assert_eq!(
            Special::parse("lanemask_ge").unwrap().dependence(),
            Dependence::Thread
        );
        for time in ["warpid", "smid", "clock", "clock64", "globaltimer"] {
            assert_eq!(Special::parse(time).unwrap().dependence(), Dependence::Time);
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
        ] {
            let s = Special::parse(uniform).unwrap();
            assert_eq!(s.dependence(), Dependence::Uniform, "{uniform}");
        }
        assert_eq!(Special::parse("bogus"), None);
    }
}
