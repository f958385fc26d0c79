//! The cost semantics (RaCuda Table 1) for one warp-level memory access or
//! branch, and the counters they add up into.
//!
//! * Global: one request per access; `sectors` is the number of distinct
//!   32-byte sectors the active lanes' bytes touch (MemReads), and the ideal
//!   is what the same bytes would need if they were contiguous.
//! * Shared: the conflict degree is the largest number of distinct 4-byte
//!   words that fall into one of the 32 banks (Conflicts; lanes reading the
//!   same word are served by one broadcast). A degree-n access takes n
//!   wavefronts, n - 1 of them extra: RaCuda's `conflicts` metric.
//! * Branches: divergent when the active lanes take more than one target.

use super::addr;
use crate::hw;
use crate::memory::Space;
use serde::Serialize;

/// Counters of one warp, block or launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Warp instructions issued.
    pub steps: u64,
    /// Sum over issued instructions of their active lanes.
    pub thread_instructions: u64,
    /// Global memory requests (warp-level accesses).
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    /// Extra shared-memory wavefronts caused by bank conflicts.
    pub conflicts: u64,
    pub wavefronts: u64,
    /// Branch executions that split the warp.
    pub divwarps: u64,
}

impl std::ops::AddAssign for Counters {
    fn add_assign(&mut self, o: Counters) {
        self.steps += o.steps;
        self.thread_instructions += o.thread_instructions;
        self.requests += o.requests;
        self.sectors += o.sectors;
        self.ideal_sectors += o.ideal_sectors;
        self.conflicts += o.conflicts;
        self.wavefronts += o.wavefronts;
        self.divwarps += o.divwarps;
    }
}

/// A running minimum, maximum and total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    pub min: u64,
    pub max: u64,
    pub total: u64,
    pub count: u64,
}

impl Range {
    pub fn add(&mut self, v: u64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.total += v;
        self.count += 1;
    }

    pub fn merge(&mut self, o: &Range) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.total += o.total;
        self.count += o.count;
    }
}

/// What happened at one branch or memory instruction over the launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteStats {
    /// Warp-level executions (with at least one active lane).
    pub executions: u64,
    /// The space of the first access seen.
    pub space: Option<Space>,
    /// Sectors per global request.
    pub sectors: Range,
    pub ideal_sectors: u64,
    /// Conflict degree per shared access.
    pub conflict: Range,
    /// Executions where a branch split its warp.
    pub divergent: u64,
    /// Executions whose active lanes disagreed on the address (memory) or
    /// on the condition (branches).
    pub nonuniform: u64,
}

impl SiteStats {
    pub fn merge(&mut self, o: &SiteStats) {
        self.executions += o.executions;
        self.space = self.space.or(o.space);
        self.sectors.merge(&o.sectors);
        self.ideal_sectors += o.ideal_sectors;
        self.conflict.merge(&o.conflict);
        self.divergent += o.divergent;
        self.nonuniform += o.nonuniform;
    }
}

/// The space an address is in, as reported.
pub fn space_of(a: u64) -> Space {
    match addr::tag(a) {
        addr::GLOBAL => Space::Global,
        addr::SHARED => Space::Shared,
        addr::CONSTANT => Space::Constant,
        addr::LOCAL => Space::Local,
        _ => Space::Unknown,
    }
}

/// Buffers reused across accesses so the hot loop never allocates.
#[derive(Default)]
pub struct Scratch {
    keys: Vec<u64>,
    spans: Vec<(u64, u64)>,
}

/// `(sectors, ideal sectors)` for the active lanes' `(address, bytes)`.
pub fn sectors(accesses: &[(u64, u32)], scratch: &mut Scratch) -> (u64, u64) {
    let keys = &mut scratch.keys;
    keys.clear();
    for &(a, n) in accesses.iter().filter(|x| x.1 > 0) {
        let first = a / hw::SECTOR_BYTES;
        let last = (a + u64::from(n) - 1) / hw::SECTOR_BYTES;
        keys.extend(first..=last);
    }
    keys.sort_unstable();
    keys.dedup();
    let sectors = keys.len() as u64;
    // Distinct bytes: merge the sorted intervals.
    let spans = &mut scratch.spans;
    spans.clear();
    spans.extend(accesses.iter().map(|&(a, n)| (a, a + u64::from(n))));
    spans.sort_unstable();
    let (mut bytes, mut end) = (0u64, 0u64);
    for &(lo, hi) in spans.iter() {
        let lo = lo.max(end);
        if hi > lo {
            bytes += hi - lo;
            end = hi;
        }
    }
    (sectors, bytes.div_ceil(hw::SECTOR_BYTES))
}

/// The n-way bank-conflict degree of a shared access (at least 1).
pub fn conflict_degree(accesses: &[(u64, u32)], scratch: &mut Scratch) -> u64 {
    let keys = &mut scratch.keys;
    keys.clear();
    for &(a, n) in accesses.iter().filter(|x| x.1 > 0) {
        let off = addr::offset(a);
        let first = off / hw::BANK_WIDTH_BYTES;
        let last = (off + u64::from(n) - 1) / hw::BANK_WIDTH_BYTES;
        // Sort by bank, then word: the bank in the high bits.
        keys.extend((first..=last).map(|w| ((w % hw::SHARED_BANKS) << 48) | w));
    }
    keys.sort_unstable();
    keys.dedup();
    let mut best = 0u64;
    let mut run = 0u64;
    let mut bank = u64::MAX;
    for &k in keys.iter() {
        let b = k >> 48;
        run = if b == bank { run + 1 } else { 1 };
        bank = b;
        best = best.max(run);
    }
    best.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(u64) -> u64, bytes: u32) -> Vec<(u64, u32)> {
        (0..32).map(|t| (f(t), bytes)).collect()
    }

    #[test]
    fn global_sectors() {
        let mut k = Scratch::default();
        let base = addr::encode(addr::GLOBAL, 1, 0);
        // 32 lanes x 4 consecutive bytes = 128 bytes = 4 sectors, ideal 4.
        assert_eq!(sectors(&lanes(|t| base + 4 * t, 4), &mut k), (4, 4));
        // Stride 2 floats: 256 bytes spanned = 8 sectors; 128 bytes ideal 4.
        assert_eq!(sectors(&lanes(|t| base + 8 * t, 4), &mut k), (8, 4));
        // A 24-byte struct field: lane t at 24t spans 768 bytes = 24 sectors.
        assert_eq!(sectors(&lanes(|t| base + 24 * t, 4), &mut k), (24, 4));
        // Broadcast: one sector.
        assert_eq!(sectors(&lanes(|_| base + 40, 4), &mut k), (1, 1));
        // Misaligned by 4: 128 bytes over 5 sectors, ideal still 4.
        assert_eq!(sectors(&lanes(|t| base + 4 + 4 * t, 4), &mut k), (5, 4));
    }

    #[test]
    fn bank_conflicts() {
        let mut k = Scratch::default();
        let s = addr::encode(addr::SHARED, 1, 0);
        // s[t]: 32 words in 32 banks.
        assert_eq!(conflict_degree(&lanes(|t| s + 4 * t, 4), &mut k), 1);
        // s[32 t]: word 32t is always bank 0: 32-way.
        assert_eq!(conflict_degree(&lanes(|t| s + 128 * t, 4), &mut k), 32);
        // s[33 t]: bank (33 t) mod 32 = t: conflict-free.
        assert_eq!(conflict_degree(&lanes(|t| s + 132 * t, 4), &mut k), 1);
        // s[2 t]: banks 0, 2, ..., 30 each get 2 words: 2-way.
        assert_eq!(conflict_degree(&lanes(|t| s + 8 * t, 4), &mut k), 2);
        // Everyone reads s[5]: broadcast.
        assert_eq!(conflict_degree(&lanes(|_| s + 20, 4), &mut k), 1);
    }
}
