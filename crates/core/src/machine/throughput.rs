//! The memory system's throughput limits: how many cycles a launch's
//! bytes need at the device's DRAM and L2 bandwidth, and its shared-memory
//! wavefronts at the busiest SM's rate, whatever the latencies.
//!
//! The latency model ([`super::class`]) charges each access a fixed
//! latency, as if the memory system served every request at once. A real
//! one serves `B` bytes per cycle at most, so:
//!
//! * **No launch is faster than its slowest resource** (the roofline's
//!   floor): a launch that moves `D` bytes through DRAM takes at least
//!   `D / B` cycles. The simulator's cycle mode takes the larger of its
//!   latency replay and this floor ([`Throughput::floor`]).
//! * **An upper bound must add the throughput time, not take the larger
//!   of the two.** Model each resource as a server of `B` bytes per cycle
//!   that is never idle while a request waits (first come, first served).
//!   A request then waits, beyond its latency, only while the server moves
//!   other bytes. Along any chain of dependent instructions (a warp's
//!   path, through barriers and through the waves one SM runs in turn) the
//!   waits are disjoint stretches of time, each inside the server's busy
//!   time, so the chain is delayed by at most the busy time, `D / B`, in
//!   all. The work/span and abstract-CTA bounds are sums of such chains
//!   plus issue cycles, so each grows by at most the resources' busy times
//!   together ([`Throughput::delay`]): `latency bound + D_dram / B_dram +
//!   D_l2 / B_l2 + W_sm / R_shared`. Taking the larger of the latency bound
//!   and `D / B` instead would be sound only if the two overlapped
//!   perfectly, which nothing guarantees (a kernel that computes and then
//!   streams runs them one after the other).
//!
//! The model has no caches: every global sector crosses L2 and DRAM.

use super::Machine;
use crate::hw::SECTOR_BYTES;
use serde::Serialize;

/// What a launch moves through the memory system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Traffic {
    /// 32-byte global sectors over the whole launch.
    pub sectors: f64,
    /// Shared-memory wavefronts of the busiest SM.
    pub sm_wavefronts: f64,
}

/// Cycles each resource needs for a launch's traffic (whole cycles,
/// rounded up; 0 for an unlimited resource).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Throughput {
    pub dram: f64,
    pub l2: f64,
    pub shared: f64,
}

impl Machine {
    /// Whether any throughput limit is set.
    pub fn throughput_limited(&self) -> bool {
        self.dram_gbps > 0 || self.l2_bytes_per_cycle > 0 || self.shared_wavefronts_per_cycle > 0
    }

    /// The cycles `t` needs at each of the model's throughput limits.
    pub fn throughput(&self, t: &Traffic) -> Throughput {
        let bytes = t.sectors * SECTOR_BYTES as f64;
        // bytes / (GB/s · 10^9 / (MHz · 10^6)) = bytes · MHz / (1000 · GB/s).
        let per = |amount: f64, rate: f64| match rate > 0.0 {
            true => (amount / rate).ceil(),
            false => 0.0,
        };
        Throughput {
            dram: per(
                bytes * f64::from(self.clock_mhz),
                1000.0 * f64::from(self.dram_gbps),
            ),
            l2: per(bytes, f64::from(self.l2_bytes_per_cycle)),
            shared: per(t.sm_wavefronts, f64::from(self.shared_wavefronts_per_cycle)),
        }
    }
}

impl Throughput {
    /// Each resource's name and cycles.
    pub fn terms(&self) -> [(&'static str, f64); 3] {
        [
            ("DRAM bandwidth", self.dram),
            ("L2 bandwidth", self.l2),
            ("shared-memory bandwidth", self.shared),
        ]
    }

    /// The slowest resource and its cycles: no launch takes fewer.
    pub fn floor(&self) -> (&'static str, f64) {
        self.terms().into_iter().fold(
            ("DRAM bandwidth", 0.0),
            |a, b| if b.1 > a.1 { b } else { a },
        )
    }

    /// The most the resources' queues can delay a launch beyond its
    /// latency schedule: their busy times together (see the module docs).
    pub fn delay(&self) -> f64 {
        self.dram + self.l2 + self.shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a100_limits() {
        let m = Machine::a100();
        // A triad at n = 2^24: three arrays of 2^24 floats, 4 sectors per
        // warp per array, 2^24 / 32 warps: 3 · 2^21 sectors = 201,326,592
        // bytes. At 1555 GB/s and 1410 MHz that is 201,326,592 · 1410 /
        // 1,555,000 = 182,553.4 cycles, rounded up to 182,554; at 5120
        // bytes per cycle L2 needs 39,321.6.
        let t = Traffic {
            sectors: 3.0 * f64::from(1u32 << 21),
            sm_wavefronts: 10.0,
        };
        let th = m.throughput(&t);
        assert_eq!(th.dram, 182_554.0);
        assert_eq!(th.l2, 39_322.0);
        // One wavefront per cycle per SM.
        assert_eq!(th.shared, 10.0);
        assert_eq!(th.floor(), ("DRAM bandwidth", 182_554.0));
        assert_eq!(th.delay(), 182_554.0 + 39_322.0 + 10.0);
        // 182,554 cycles at 1410 MHz: 129.5 µs, above physics' 98 µs even
        // at the 80 GB part's 2.04 TB/s.
        assert!(m.micros(th.dram) > 129.0);
    }

    #[test]
    fn unlimited_resources_cost_nothing() {
        let t = Traffic {
            sectors: 1e9,
            sm_wavefronts: 1e9,
        };
        let th = Machine::paper().throughput(&t);
        assert_eq!((th.delay(), th.floor().1), (0.0, 0.0));
    }
}
