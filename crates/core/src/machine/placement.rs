//! Where a launch's blocks run: how many share an SM ([`Residency`], from
//! the model's per-SM limits) and in which wave each runs ([`Waves`]). The
//! simulator's cycle mode places blocks by it and the bounds count waves
//! by it, so both see the same launch.

use super::Machine;
use crate::hw::WARP_SIZE;
use crate::ir::{addrspace, Module};
use serde::Serialize;

/// How many blocks and warps share one SM, and why no more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Residency {
    pub blocks_per_sm: u32,
    pub warps_per_block: u32,
    /// The limit that decided `blocks_per_sm`.
    pub limited_by: &'static str,
}

impl Machine {
    /// How many blocks of `threads` threads using `shared_bytes` of shared
    /// memory each share an SM: the tightest of the per-SM limits, or
    /// `blocks_per_sm` when given. `Err` when one block does not fit.
    pub fn residency(&self, threads: u32, shared_bytes: u64) -> Result<Residency, String> {
        let warps = threads.div_ceil(WARP_SIZE).max(1);
        let mut limits: Vec<(u64, &'static str)> = vec![
            (u64::from(self.max_blocks_per_sm), "blocks per SM"),
            (
                u64::from(self.max_warps_per_sm / warps),
                "resident warps per SM",
            ),
            (
                u64::from(self.max_threads_per_sm / (warps * WARP_SIZE)),
                "resident threads per SM",
            ),
        ];
        if let Some(n) = self.shared_bytes_per_sm.checked_div(shared_bytes) {
            limits.push((n, "shared memory per SM"));
        }
        if self.registers_per_thread > 0 {
            let per_block = u64::from(self.registers_per_thread) * u64::from(warps) * 32;
            limits.push((
                u64::from(self.registers_per_sm) / per_block,
                "registers per SM",
            ));
        }
        let (fits, limited_by) = limits.into_iter().min_by_key(|l| l.0).expect("a limit");
        if fits == 0 {
            return Err(format!(
                "a block of {threads} threads with {shared_bytes} bytes of shared memory does not fit on one SM of the model ({limited_by})"
            ));
        }
        let blocks_per_sm = match self.blocks_per_sm {
            0 => fits as u32,
            given => given,
        };
        Ok(Residency {
            blocks_per_sm,
            warps_per_block: warps,
            limited_by: if self.blocks_per_sm > 0 {
                "given"
            } else {
                limited_by
            },
        })
    }
}

/// Bytes of static `__shared__` memory a block of the module's kernels
/// uses: every shared variable of the module, each 16-byte aligned (what
/// residency counts; dynamic shared memory comes on top).
pub fn static_shared_bytes(m: &Module) -> u64 {
    m.globals
        .iter()
        .filter(|g| g.addrspace == addrspace::SHARED)
        .map(|g| m.types.size(g.value_ty).div_ceil(16) * 16)
        .sum()
}

/// How the blocks of a launch are placed: block `i` of the run (in linear
/// order) goes to SM `i mod sms`; each SM runs its blocks in waves of
/// `blocks_per_sm`, a wave starting when the one before it has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Waves {
    pub blocks: u64,
    pub sms_used: u64,
    /// Most blocks one SM runs at once.
    pub resident: u64,
    /// Waves on the busiest SM.
    pub waves: u64,
}

impl Waves {
    pub fn new(blocks: u64, sms: u32, r: &Residency) -> Waves {
        let sms = u64::from(sms.max(1));
        let per_sm = blocks.div_ceil(sms);
        let resident = per_sm.min(u64::from(r.blocks_per_sm.max(1)));
        Waves {
            blocks,
            sms_used: blocks.min(sms),
            resident,
            waves: per_sm.div_ceil(resident.max(1)),
        }
    }

    /// The SM and wave of the `i`-th block of the run.
    pub fn place(i: u64, sms: u32, blocks_per_sm: u32) -> (u64, u64) {
        let sms = u64::from(sms.max(1));
        (i % sms, (i / sms) / u64::from(blocks_per_sm.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residency_takes_the_tightest_limit() {
        let m = Machine::a100();
        // 256 threads = 8 warps: 64/8 = 8 blocks by warps, 2048/256 = 8 by
        // threads, 32 by blocks.
        let r = m.residency(256, 0).unwrap();
        assert_eq!((r.blocks_per_sm, r.warps_per_block), (8, 8));
        // 48 KiB of shared memory: 164/48 = 3 blocks.
        let r = m.residency(256, 48 * 1024).unwrap();
        assert_eq!((r.blocks_per_sm, r.limited_by), (3, "shared memory per SM"));
        // 32 threads: 64 warps would allow 64 blocks, the block limit is 32.
        assert_eq!(m.residency(32, 0).unwrap().blocks_per_sm, 32);
        // 40 threads round up to 2 warps: 32 blocks.
        assert_eq!(m.residency(40, 0).unwrap().blocks_per_sm, 32);
        // 64 registers per thread x 256 threads = 16384: 4 blocks.
        let mut m2 = m.clone();
        m2.set("registers_per_thread", "64").unwrap();
        assert_eq!(m2.residency(256, 0).unwrap().blocks_per_sm, 4);
        assert!(m.residency(256, 200 * 1024).is_err());
    }

    #[test]
    fn waves_fill_the_sms_first() {
        let r = Machine::a100().residency(256, 0).unwrap();
        // 108 SMs x 8 blocks: 864 blocks in one wave, 865 in two.
        assert_eq!(Waves::new(864, 108, &r).waves, 1);
        assert_eq!(Waves::new(865, 108, &r).waves, 2);
        // 4 blocks: 4 SMs with one block each.
        let w = Waves::new(4, 108, &r);
        assert_eq!((w.sms_used, w.resident, w.waves), (4, 1, 1));
        // Block 109 goes to SM 1, wave 0; block 108*8 to SM 0, wave 1.
        assert_eq!(Waves::place(109, 108, 8), (1, 0));
        assert_eq!(Waves::place(864, 108, 8), (0, 1));
    }
}
