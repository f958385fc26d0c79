//! The machine model of kernel time, in one place: how many warp
//! instructions an SM issues per cycle, how long each instruction keeps its
//! warp waiting, what memory and barriers cost, and how many blocks share
//! an SM ([`placement`]), and what each instruction costs in it
//! ([`class`]). The simulator's cycle mode and the static time bounds read
//! the same numbers, so a bound is checked against the simulator under
//! exactly the machine it assumes.
//!
//! **Invariant:** plain data over `ir`, `hw` and `memory`'s spaces; it
//! reads no analysis and not the simulator, so both `sim` and `timing`
//! stand on it without standing on each other.
//!
//! **The defaults model an NVIDIA Ampere A100-class GPU (GA100, sm_80).**
//! They are a model, not a promise: the figures are rounded, the machine
//! is simplified (a warp waits for each instruction before it issues the
//! next, there are no caches, every global load pays a DRAM round trip),
//! and every number can be overridden (`.warpcheck.yaml` `Machine:`, or
//! `--machine KEY=VALUE`). Where each number comes from:
//!
//! | key | default | source |
//! |---|---|---|
//! | `sms` | 108 | A100 whitepaper (NVIDIA, 2020): 108 SMs |
//! | `issue_rate` | 4 | A100 whitepaper: four warp schedulers per SM, one warp instruction per clock each |
//! | `clock_mhz` | 1410 | A100 whitepaper: boost clock (only to print microseconds) |
//! | `alu_latency` | 4 | dependent-issue latency of FP32/INT32 add, mul, fma measured on Volta (Jia et al., 2018) and Ampere (Abdelkhalik et al., 2022) |
//! | `fp64_latency` | 8 | same studies: FP64 arithmetic about twice FP32 |
//! | `div_latency` | 20 | estimate: division, remainder and `fdiv` are sequences of several dependent instructions in SASS |
//! | `math_latency` | 20 | estimate: SFU (MUFU) latency plus range reduction for `sqrt`, `exp`, `sin` and libdevice calls |
//! | `warp_latency` | 24 | estimate: shuffles, votes and `__syncwarp` in the shared-memory latency class, as both studies place them |
//! | `global_latency` | 400 | both studies measure a few hundred cycles for a load that misses L1 and L2; rounded up |
//! | `global_store_latency` | 4 | stores do not wait for memory: the warp goes on after issue |
//! | `sector_cycles` | 1 | per 32-byte sector beyond the first of a request: L1 moves 128 bytes (4 sectors) per clock per SM (whitepaper), L2 less per SM |
//! | `shared_latency` | 24 | shared-memory load latency: about 20–30 cycles in both studies |
//! | `shared_store_latency` | 4 | as global stores |
//! | `wavefront_cycles` | 2 | per shared-memory wavefront beyond the first: a bank conflict replays the access |
//! | `local_latency` | 32 | local and constant memory, as an L1 hit (about 30 cycles in both studies) |
//! | `barrier_cycles` | 20 | estimate: from the last warp's arrival at `__syncthreads()` to the release |
//! | `grid_barrier_cycles` | 2000 | estimate: a grid-wide barrier through global memory |
//! | `max_warps_per_sm` | 64 | CUDA C++ Programming Guide, compute capability 8.0 |
//! | `max_blocks_per_sm` | 32 | same table |
//! | `max_threads_per_sm` | 2048 | same table |
//! | `shared_bytes_per_sm` | 167936 | same table: 164 KB of shared memory per SM |
//! | `registers_per_sm` | 65536 | same table |
//! | `registers_per_thread` | 0 | unknown from the IR: 0 leaves registers out of the residency |
//! | `blocks_per_sm` | 0 | 0: derived from the limits above; otherwise the blocks resident per SM, given |
//! | `dram_gbps` | 1555 | A100 whitepaper: 1555 GB/s of HBM2 for the 40 GB part, the part whose SMs, clock and shared memory the numbers above describe (the 80 GB SXM part has 2039 GB/s: `--machine dram_gbps=2039`); device-wide; 0 is unlimited |
//! | `l2_bytes_per_cycle` | 5120 | A100 whitepaper: L2 read bandwidth 5120 bytes per clock, device-wide; 0 is unlimited |
//! | `l1_lines_per_cycle` | 1 | 128-byte lines an SM's L1 serves per clock, its requests' cost where no DRAM traffic is added (a sibling field's load re-reading lines a neighbour fetched): L1 and shared memory are one 128-bytes-per-clock data path per SM (A100 whitepaper; Jia et al. measure close to that for Volta's L1, which Ampere's continues); 0 is unlimited |
//! | `shared_wavefronts_per_cycle` | 1 | 32 banks × 4 bytes per clock per SM (whitepaper, CUDA Programming Guide "Shared Memory" for 8.0): one 128-byte wavefront per cycle per SM; 0 is unlimited |
//!
//! References: NVIDIA A100 Tensor Core GPU Architecture (whitepaper,
//! 2020); NVIDIA CUDA C++ Programming Guide, "Compute Capabilities"; Z.
//! Jia, M. Maggioni, B. Staiger, D. P. Scarpazza, "Dissecting the NVIDIA
//! Volta GPU Architecture via Microbenchmarking" (2018); H. Abdelkhalik,
//! Y. Arafa, N. Santhi, A. Badawy, "Demystifying the Nvidia Ampere
//! Architecture through Microbenchmarking and Instruction-level Analysis"
//! (HPEC 2022).
//!
//! The preset `paper` is the mini-SIMT machine of Hirvisalo's "On Static
//! Timing Analysis of GPU Kernels" (WCET 2014): one SM issuing one
//! instruction per cycle, every instruction one cycle, every memory access
//! ten, and barriers free. It has no throughput limits (the paper models
//! none): its `dram_gbps`, `l2_bytes_per_cycle`, `l1_lines_per_cycle` and
//! `shared_wavefronts_per_cycle` are 0, unlimited.
//!
//! The throughput limits ([`throughput`]) bound how fast a launch can move
//! its bytes, whatever its latencies: the simulator's cycle mode never
//! finishes a launch faster than they allow, and the static bounds add
//! the time they take (see [`throughput`] for why adding is sound).

pub mod class;
pub mod libdevice;
pub mod placement;
pub mod throughput;

pub use class::{class_of, Access, Class};
pub use placement::{static_shared_bytes, Residency, Waves};
use serde::Serialize;
pub use throughput::{Throughput, Traffic};

/// Every constant of the model. Latencies are cycles from an
/// instruction's issue until its warp may issue the next one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Machine {
    /// The architecture class the numbers describe.
    pub name: String,
    pub sms: u32,
    /// Warp instructions an SM issues per cycle (P).
    pub issue_rate: u32,
    pub clock_mhz: u32,
    pub alu_latency: u32,
    pub fp64_latency: u32,
    pub div_latency: u32,
    pub math_latency: u32,
    pub warp_latency: u32,
    pub global_latency: u32,
    pub global_store_latency: u32,
    pub sector_cycles: u32,
    pub shared_latency: u32,
    pub shared_store_latency: u32,
    pub wavefront_cycles: u32,
    pub local_latency: u32,
    pub barrier_cycles: u32,
    pub grid_barrier_cycles: u32,
    pub max_warps_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_sm: u32,
    pub shared_bytes_per_sm: u64,
    pub registers_per_sm: u32,
    pub registers_per_thread: u32,
    pub blocks_per_sm: u32,
    /// DRAM bandwidth of the device in GB/s (10^9 bytes); 0: unlimited.
    pub dram_gbps: u32,
    /// L2 bandwidth of the device in bytes per cycle; 0: unlimited.
    pub l2_bytes_per_cycle: u32,
    /// 128-byte L1 lines an SM serves per cycle; 0: unlimited.
    pub l1_lines_per_cycle: u32,
    /// Shared-memory wavefronts an SM serves per cycle; 0: unlimited.
    pub shared_wavefronts_per_cycle: u32,
}

impl Default for Machine {
    fn default() -> Self {
        Machine::a100()
    }
}

/// The keys `set` takes besides `preset`, in the order `describe` lists them.
const KEYS: [&str; 29] = [
    "sms",
    "issue_rate",
    "clock_mhz",
    "alu_latency",
    "fp64_latency",
    "div_latency",
    "math_latency",
    "warp_latency",
    "global_latency",
    "global_store_latency",
    "sector_cycles",
    "shared_latency",
    "shared_store_latency",
    "wavefront_cycles",
    "local_latency",
    "barrier_cycles",
    "grid_barrier_cycles",
    "max_warps_per_sm",
    "max_blocks_per_sm",
    "max_threads_per_sm",
    "shared_bytes_per_sm",
    "registers_per_sm",
    "registers_per_thread",
    "blocks_per_sm",
    "dram_gbps",
    "l2_bytes_per_cycle",
    "l1_lines_per_cycle",
    "shared_wavefronts_per_cycle",
    "preset",
];

impl Machine {
    /// An Ampere A100-class SM (sm_80); see the module docs for sources.
    pub fn a100() -> Machine {
        Machine {
            name: "NVIDIA Ampere A100-class (sm_80) model".into(),
            sms: 108,
            issue_rate: 4,
            clock_mhz: 1410,
            alu_latency: 4,
            fp64_latency: 8,
            div_latency: 20,
            math_latency: 20,
            warp_latency: 24,
            global_latency: 400,
            global_store_latency: 4,
            sector_cycles: 1,
            shared_latency: 24,
            shared_store_latency: 4,
            wavefront_cycles: 2,
            local_latency: 32,
            barrier_cycles: 20,
            grid_barrier_cycles: 2000,
            max_warps_per_sm: 64,
            max_blocks_per_sm: 32,
            max_threads_per_sm: 2048,
            shared_bytes_per_sm: 164 * 1024,
            registers_per_sm: 65536,
            registers_per_thread: 0,
            blocks_per_sm: 0,
            dram_gbps: 1555,
            l2_bytes_per_cycle: 5120,
            l1_lines_per_cycle: 1,
            shared_wavefronts_per_cycle: 1,
        }
    }

    /// Hirvisalo's mini-SIMT machine (WCET 2014, §4): one SM, one
    /// instruction per cycle, 1-cycle instructions, 10-cycle memory.
    pub fn paper() -> Machine {
        Machine {
            name: "mini-SIMT machine of Hirvisalo's paper (1-cycle instructions, 10-cycle memory)"
                .into(),
            sms: 1,
            issue_rate: 1,
            alu_latency: 1,
            fp64_latency: 1,
            div_latency: 1,
            math_latency: 1,
            warp_latency: 1,
            global_latency: 10,
            global_store_latency: 1,
            sector_cycles: 0,
            shared_latency: 10,
            shared_store_latency: 1,
            wavefront_cycles: 0,
            local_latency: 10,
            barrier_cycles: 0,
            grid_barrier_cycles: 0,
            dram_gbps: 0,
            l2_bytes_per_cycle: 0,
            l1_lines_per_cycle: 0,
            shared_wavefronts_per_cycle: 0,
            ..Machine::a100()
        }
    }

    /// Sets one constant, or `preset` (`a100`, `paper`) to start over from
    /// a named machine. Instruction latencies and rates must be at least 1.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let key = key.trim();
        let value = value.trim();
        if key == "preset" {
            *self = match value {
                "a100" | "sm_80" => Machine::a100(),
                "paper" | "hirvisalo" => Machine::paper(),
                _ => return Err(format!("preset: '{value}' is not a100 or paper")),
            };
            return Ok(());
        }
        let n: u64 = value
            .parse()
            .map_err(|_| format!("{key}: '{value}' is not a nonnegative integer"))?;
        let small = || u32::try_from(n).map_err(|_| format!("{key}: {n} is too large"));
        let positive = |v: u32| {
            if v == 0 {
                Err(format!("{key}: must be at least 1"))
            } else {
                Ok(v)
            }
        };
        let slot: &mut u32 = match key {
            "shared_bytes_per_sm" => {
                self.shared_bytes_per_sm = n;
                self.renamed();
                return Ok(());
            }
            "sms" => &mut self.sms,
            "issue_rate" => &mut self.issue_rate,
            "clock_mhz" => &mut self.clock_mhz,
            "alu_latency" => &mut self.alu_latency,
            "fp64_latency" => &mut self.fp64_latency,
            "div_latency" => &mut self.div_latency,
            "math_latency" => &mut self.math_latency,
            "warp_latency" => &mut self.warp_latency,
            "global_latency" => &mut self.global_latency,
            "global_store_latency" => &mut self.global_store_latency,
            "sector_cycles" => &mut self.sector_cycles,
            "shared_latency" => &mut self.shared_latency,
            "shared_store_latency" => &mut self.shared_store_latency,
            "wavefront_cycles" => &mut self.wavefront_cycles,
            "local_latency" => &mut self.local_latency,
            "barrier_cycles" => &mut self.barrier_cycles,
            "grid_barrier_cycles" => &mut self.grid_barrier_cycles,
            "max_warps_per_sm" => &mut self.max_warps_per_sm,
            "max_blocks_per_sm" => &mut self.max_blocks_per_sm,
            "max_threads_per_sm" => &mut self.max_threads_per_sm,
            "registers_per_sm" => &mut self.registers_per_sm,
            "registers_per_thread" => &mut self.registers_per_thread,
            "blocks_per_sm" => &mut self.blocks_per_sm,
            "dram_gbps" => &mut self.dram_gbps,
            "l2_bytes_per_cycle" => &mut self.l2_bytes_per_cycle,
            "l1_lines_per_cycle" => &mut self.l1_lines_per_cycle,
            "shared_wavefronts_per_cycle" => &mut self.shared_wavefronts_per_cycle,
            _ => {
                return Err(format!(
                    "unknown machine key '{key}' (keys: {})",
                    KEYS.join(", ")
                ))
            }
        };
        let zero_ok = matches!(
            key,
            "sector_cycles"
                | "wavefront_cycles"
                | "barrier_cycles"
                | "grid_barrier_cycles"
                | "registers_per_thread"
                | "blocks_per_sm"
                | "dram_gbps"
                | "l2_bytes_per_cycle"
                | "l1_lines_per_cycle"
                | "shared_wavefronts_per_cycle"
        );
        *slot = if zero_ok {
            small()?
        } else {
            positive(small()?)?
        };
        self.renamed();
        Ok(())
    }

    /// A machine changed key by key is no longer the named one.
    fn renamed(&mut self) {
        if !self.name.ends_with(", modified") {
            self.name.push_str(", modified");
        }
    }

    /// Applies `KEY=VALUE` settings in order.
    pub fn with_settings(mut self, settings: &[String]) -> Result<Machine, String> {
        for s in settings {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("--machine: expected KEY=VALUE, got '{s}'"))?;
            self.set(k, v).map_err(|e| format!("--machine {e}"))?;
        }
        Ok(self)
    }

    /// Microseconds for `cycles` at the model's clock.
    pub fn micros(&self, cycles: f64) -> f64 {
        cycles / f64::from(self.clock_mhz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings() {
        let m = Machine::a100()
            .with_settings(&["issue_rate=2".into(), "global_latency = 300".into()])
            .unwrap();
        assert_eq!((m.issue_rate, m.global_latency), (2, 300));
        assert!(m.name.ends_with("modified"));
        let p = Machine::a100()
            .with_settings(&["preset=paper".into()])
            .unwrap();
        assert_eq!(p, Machine::paper());
        assert!(Machine::a100().set("alu_latency", "0").is_err());
        assert!(Machine::a100().set("bogus", "1").is_err());
        assert!(Machine::a100().set("sms", "x").is_err());
        assert!(Machine::a100().set("barrier_cycles", "0").is_ok());
        // Throughput limits: 0 is unlimited, and the paper has none.
        let u = Machine::a100()
            .with_settings(&["dram_gbps=2039".into(), "l2_bytes_per_cycle=0".into()])
            .unwrap();
        assert_eq!((u.dram_gbps, u.l2_bytes_per_cycle), (2039, 0));
        let p = Machine::paper();
        assert_eq!(
            (
                p.dram_gbps,
                p.l2_bytes_per_cycle,
                p.l1_lines_per_cycle,
                p.shared_wavefronts_per_cycle
            ),
            (0, 0, 0, 0)
        );
        assert!(Machine::a100().set("l1_lines_per_cycle", "0").is_ok());
    }
}
