//! The cost semantics (RaCuda Table 1) for one warp-level memory access or
//! branch, and the counters they add up into.
//!
//! * Global: one request per access; `sectors` is the number of distinct
//!   32-byte sectors the active lanes' bytes touch (MemReads), and the ideal
//!   is what the same bytes would need if they were contiguous.
//! * Shared: the access is served in phases of consecutive lanes (see
//!   [`hw::SHARED_PHASES`]): an access of 4 bytes or less per lane in one
//!   phase of all 32 lanes, an 8-byte access in two (lanes 0-15, 16-31), a
//!   16-byte (or wider) access in four (lanes 0-7, 8-15, 16-23, 24-31). A
//!   phase's degree is the largest number of distinct 4-byte words that
//!   fall into one of the 32 banks (bank = word mod 32; lanes reading the
//!   same word are served by one broadcast); a phase without an active lane
//!   costs nothing. The access's conflict degree (Conflicts) is the largest
//!   phase degree (at least 1), its `wavefronts` the sum of the degrees of
//!   the phases with an active lane, and its ideal one wavefront per such
//!   phase. `wavefronts - ideal` are the extra wavefronts bank conflicts
//!   cause: RaCuda's `conflicts` metric.
//! * Atomics serialise on one address: lanes updating the same word are
//!   not a broadcast but one wavefront each (shared memory; the degree is
//!   then the most lanes on one bank), and every atomic request records
//!   its contention, the most lanes on one address (global or shared).
//! * Branches: divergent when the active lanes take more than one target.
//!
//! Per site, [`SiteStats`] also keeps the values at the executions with the
//! most active lanes (the static analysis judges a site on the warp's
//! largest possible active set) and, for branches, how many distinct warps
//! ran it and how many it split.

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
    /// Extra shared-memory wavefronts caused by bank conflicts (wavefronts
    /// beyond one per phase with an active lane).
    pub conflicts: u64,
    /// Shared-memory wavefronts.
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
    /// Per atomic request: the most lanes on one address.
    pub contention: Range,
    /// Executions where a branch split its warp.
    pub divergent: u64,
    /// Executions whose active lanes disagreed on the address (memory) or
    /// on the condition (branches).
    pub nonuniform: u64,
    /// The most active lanes of any execution.
    pub lanes_max: u32,
    /// Sectors per global request over the executions with `lanes_max`
    /// active lanes.
    pub sectors_at_max: Range,
    /// Sectors over the ideal of the same request, over the executions
    /// with `lanes_max` lanes: what a coalescing class claims, request by
    /// request (warps of one site can have different ideals).
    pub excess_at_max: Range,
    /// Conflict degree per shared access over the executions with
    /// `lanes_max` active lanes.
    pub conflict_at_max: Range,
    /// Wavefronts per shared access.
    pub wavefronts: Range,
    /// Wavefronts the shared accesses would take without bank conflicts.
    pub ideal_wavefronts: u64,
    /// Distinct warps (block, warp) that ran this branch.
    pub warps: u64,
    /// Distinct warps this branch split at least once.
    pub divergent_warps: u64,
    /// Per warp of the block (linear thread id / 32): in how many blocks
    /// that warp ran this branch, in how many it split there, and in how
    /// many it ran it at least once with all 32 lanes.
    pub by_warp: Vec<(u64, u64, u64)>,
}

impl SiteStats {
    /// Notes an execution with `lanes` active lanes; `true` when it has the
    /// most seen so far (the `*_at_max` ranges restart at a new maximum).
    #[inline]
    pub fn lanes(&mut self, lanes: u32) -> bool {
        if lanes > self.lanes_max {
            self.lanes_max = lanes;
            self.sectors_at_max = Range::default();
            self.excess_at_max = Range::default();
            self.conflict_at_max = Range::default();
        }
        lanes == self.lanes_max
    }

    pub fn merge(&mut self, o: &SiteStats) {
        self.executions += o.executions;
        self.space = self.space.or(o.space);
        self.sectors.merge(&o.sectors);
        self.ideal_sectors += o.ideal_sectors;
        self.conflict.merge(&o.conflict);
        self.contention.merge(&o.contention);
        self.divergent += o.divergent;
        self.nonuniform += o.nonuniform;
        match o.lanes_max.cmp(&self.lanes_max) {
            std::cmp::Ordering::Greater => {
                self.lanes_max = o.lanes_max;
                self.sectors_at_max = o.sectors_at_max;
                self.excess_at_max = o.excess_at_max;
                self.conflict_at_max = o.conflict_at_max;
            }
            std::cmp::Ordering::Equal => {
                self.sectors_at_max.merge(&o.sectors_at_max);
                self.excess_at_max.merge(&o.excess_at_max);
                self.conflict_at_max.merge(&o.conflict_at_max);
            }
            std::cmp::Ordering::Less => {}
        }
        self.wavefronts.merge(&o.wavefronts);
        self.ideal_wavefronts += o.ideal_wavefronts;
        self.warps += o.warps;
        self.divergent_warps += o.divergent_warps;
        if self.by_warp.len() < o.by_warp.len() {
            self.by_warp.resize(o.by_warp.len(), (0, 0, 0));
        }
        for (a, b) in self.by_warp.iter_mut().zip(&o.by_warp) {
            a.0 += b.0;
            a.1 += b.1;
            a.2 += b.2;
        }
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
    if let Some(cost) = ascending_sectors(accesses) {
        return cost;
    }
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

/// [`sectors`] without sorting, for the usual warp whose lanes' accesses
/// start and end in address order (consecutive, strided or broadcast):
/// each access adds the sectors and bytes past the previous ends. `None`
/// when the order breaks anywhere.
fn ascending_sectors(accesses: &[(u64, u32)]) -> Option<(u64, u64)> {
    let (mut sectors, mut bytes) = (0u64, 0u64);
    // One past the last sector and the last byte counted so far.
    let (mut sector_end, mut byte_end) = (0u64, 0u64);
    let mut prev = (0u64, 0u64);
    for &(a, n) in accesses {
        let end = a.checked_add(u64::from(n))?;
        if a < prev.0 || end < prev.1 {
            return None;
        }
        prev = (a, end);
        if n == 0 {
            continue;
        }
        let first = a / hw::SECTOR_BYTES;
        let last = (end - 1) / hw::SECTOR_BYTES + 1;
        sectors += last - first.max(sector_end).min(last);
        sector_end = sector_end.max(last);
        bytes += end - a.max(byte_end).min(end);
        byte_end = byte_end.max(end);
    }
    Some((sectors, bytes.div_ceil(hw::SECTOR_BYTES)))
}

/// The cost of one warp-level shared-memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Banks {
    /// The largest phase degree: an n-way conflict (at least 1).
    pub degree: u64,
    /// The sum of the degrees of the phases with an active lane.
    pub wavefronts: u64,
    /// The phases with an active lane: one wavefront each without conflicts.
    pub ideal_wavefronts: u64,
}

/// The bank cost of a shared access by the lanes of `mask`, whose
/// `(address, bytes)` are `accesses`, lowest lane first (one per set bit).
/// An atomic (`serialise`) updates a word once per lane: lanes on one
/// word take a wavefront each.
pub fn banks(mask: u32, accesses: &[(u64, u32)], serialise: bool, scratch: &mut Scratch) -> Banks {
    let width = accesses.iter().map(|a| a.1).max().unwrap_or(0);
    // Lanes per phase are a power of two: the phase is the lane shifted.
    let shift = hw::shared_phase_lanes(width).trailing_zeros();
    if let Some(cost) = conflict_free(mask, accesses, shift, serialise) {
        return cost;
    }
    let keys = &mut scratch.keys;
    keys.clear();
    let mut lanes = mask;
    for &(a, n) in accesses {
        let lane = lanes.trailing_zeros();
        lanes &= lanes.wrapping_sub(1);
        if n == 0 {
            continue;
        }
        let phase = u64::from(lane >> shift) << PHASE_SHIFT;
        let off = addr::offset(a);
        let first = off / hw::BANK_WIDTH_BYTES;
        let last = (off + u64::from(n) - 1) / hw::BANK_WIDTH_BYTES;
        // An atomic's lanes are apart even on one word.
        let who = if serialise {
            u64::from(lane) << LANE_SHIFT
        } else {
            0
        };
        // Sort by phase, bank, then word: phase and bank in the high bits
        // (offsets, hence words, are below 2^36).
        keys.extend(
            (first..=last).map(|w| phase | ((w % hw::SHARED_BANKS) << BANK_SHIFT) | who | w),
        );
    }
    keys.sort_unstable();
    keys.dedup();
    let mut cost = Banks {
        degree: 1,
        wavefronts: 0,
        ideal_wavefronts: 0,
    };
    let mut close = |degree: u64| {
        if degree > 0 {
            cost.degree = cost.degree.max(degree);
            cost.wavefronts += degree;
            cost.ideal_wavefronts += 1;
        }
    };
    let (mut phase, mut bank) = (u64::MAX, u64::MAX);
    let (mut run, mut degree) = (0u64, 0u64);
    for &k in keys.iter() {
        if k >> PHASE_SHIFT != phase {
            close(degree);
            phase = k >> PHASE_SHIFT;
            degree = 0;
        }
        let b = k >> BANK_SHIFT;
        run = if b == bank { run + 1 } else { 1 };
        bank = b;
        degree = degree.max(run);
    }
    close(degree);
    cost
}

/// [`banks`] without sorting for the common access where no bank holds
/// two distinct words in one phase; `None` at the first such conflict.
fn conflict_free(mask: u32, accesses: &[(u64, u32)], shift: u32, serialise: bool) -> Option<Banks> {
    if let Some(cost) = lane_strided(mask, accesses, shift, serialise) {
        return Some(cost);
    }
    // The word each bank serves in the current phase, for the banks of
    // `used`.
    let mut word = [0u64; hw::SHARED_BANKS as usize];
    let mut used = 0u32;
    let (mut phase, mut phases) = (u32::MAX, 0u64);
    let mut lanes = mask;
    for &(a, n) in accesses {
        let lane = lanes.trailing_zeros();
        lanes &= lanes.wrapping_sub(1);
        if n == 0 {
            continue;
        }
        if lane >> shift != phase {
            phase = lane >> shift;
            phases += 1;
            used = 0;
        }
        let off = addr::offset(a);
        let first = off / hw::BANK_WIDTH_BYTES;
        let last = (off + u64::from(n) - 1) / hw::BANK_WIDTH_BYTES;
        for w in first..=last {
            let b = (w % hw::SHARED_BANKS) as usize;
            if used & (1 << b) == 0 {
                used |= 1 << b;
                word[b] = w;
            } else if word[b] != w || serialise {
                return None;
            }
        }
    }
    Some(Banks {
        degree: 1,
        wavefronts: phases,
        ideal_wavefronts: phases,
    })
}

/// The commonest conflict-free access, decided without the banks: lane
/// `l` at `base + l·w` for one width `w`, aligned to it (or to a word).
/// A phase's lanes then cover at most 128 consecutive bytes from a word
/// boundary, 32 words on 32 banks. `None` for anything else.
fn lane_strided(mask: u32, accesses: &[(u64, u32)], shift: u32, serialise: bool) -> Option<Banks> {
    let &(first, w) = accesses.first()?;
    let lane0 = mask.trailing_zeros();
    let aligned = u64::from(w.min(hw::BANK_WIDTH_BYTES as u32));
    let phase_bytes = u64::from(w) << shift;
    if w == 0 || phase_bytes > 128 || serialise && w < 4 || !first.is_multiple_of(aligned) {
        return None;
    }
    let mut lanes = mask;
    let (mut phase, mut phases) = (u32::MAX, 0u64);
    for &(a, n) in accesses {
        let lane = lanes.trailing_zeros();
        lanes &= lanes.wrapping_sub(1);
        let step = u64::from(lane - lane0) * u64::from(w);
        if n != w || a != first.wrapping_add(step) {
            return None;
        }
        if lane >> shift != phase {
            phase = lane >> shift;
            phases += 1;
        }
    }
    Some(Banks {
        degree: 1,
        wavefronts: phases,
        ideal_wavefronts: phases,
    })
}

const BANK_SHIFT: u32 = 48;
const PHASE_SHIFT: u32 = 56;
/// An atomic's lane, between the word (below 2^36) and the bank.
const LANE_SHIFT: u32 = 40;

/// The most lanes of an atomic request on one address.
pub fn contention(accesses: &[(u64, u32)], scratch: &mut Scratch) -> u64 {
    let keys = &mut scratch.keys;
    keys.clear();
    keys.extend(accesses.iter().map(|a| a.0));
    keys.sort_unstable();
    keys.chunk_by(|a, b| a == b)
        .map(|run| run.len() as u64)
        .max()
        .unwrap_or(0)
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

    /// Reproducible pseudo-random numbers below `m`, from `seed`.
    fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        }
    }

    #[test]
    fn ascending_lanes_count_as_sorted_ones() {
        let base = addr::encode(addr::GLOBAL, 1, 0);
        // Descending lanes take the sorting path; reversed, the same set
        // of accesses takes the ascending one.
        let mut next = numbers(7);
        for _ in 0..500 {
            let mut acc: Vec<(u64, u32)> = (0..32)
                .map(|_| (base + next(600), [0, 1, 2, 4, 8, 16][next(6) as usize]))
                .collect();
            acc.sort_by_key(|&(a, n)| (a, a + u64::from(n)));
            // Make the ends ascend too, or the fast path declines.
            let mut end = 0;
            for x in &mut acc {
                end = (x.0 + u64::from(x.1)).max(end);
                x.1 = (end - x.0) as u32;
            }
            let fast = ascending_sectors(&acc).expect("ascending");
            acc.reverse();
            assert!(ascending_sectors(&acc).is_none() || acc.windows(2).all(|w| w[0] == w[1]));
            assert_eq!(sectors(&acc, &mut Scratch::default()), fast, "{acc:?}");
        }
        // By hand: lanes at 0, 30 and 40 with 4 bytes each: sectors 0 and 1
        // (bytes 30..34 cross into sector 1), 12 distinct bytes = 1 ideal.
        assert_eq!(
            ascending_sectors(&[(base, 4), (base + 30, 4), (base + 40, 4)]),
            Some((2, 1))
        );
    }

    /// Banks by brute force: per phase of lanes, the distinct words
    /// each bank serves.
    fn banks_by_hand(mask: u32, acc: &[(u64, u32)]) -> (u64, u64, u64) {
        let width = acc.iter().map(|a| a.1).max().unwrap_or(0);
        let per = hw::shared_phase_lanes(width);
        let lanes: Vec<u32> = (0..32).filter(|l| mask >> l & 1 == 1).collect();
        let (mut degree, mut waves, mut ideal) = (1, 0, 0);
        for p in 0..32 / per {
            let mut words = vec![std::collections::BTreeSet::new(); 32];
            let mut any = false;
            for (k, &l) in lanes.iter().enumerate() {
                if l / per == p && acc[k].1 > 0 {
                    any = true;
                    let off = addr::offset(acc[k].0);
                    for w in off / 4..=(off + u64::from(acc[k].1) - 1) / 4 {
                        words[(w % 32) as usize].insert(w);
                    }
                }
            }
            if any {
                let d = words.iter().map(|s| s.len() as u64).max().unwrap();
                degree = degree.max(d);
                waves += d;
                ideal += 1;
            }
        }
        (degree, waves, ideal)
    }

    #[test]
    fn strided_lanes_agree_with_the_banks_by_hand() {
        let s = addr::encode(addr::SHARED, 0, 0);
        let mut next = numbers(11);
        for _ in 0..2000 {
            let w = [1u32, 2, 4, 8, 12, 16, 24, 32][next(8) as usize];
            let mask = match next(3) {
                0 => ALL,
                1 => (next(1 << 32) as u32) | 1,
                _ => 0x0000_ffff << next(17),
            };
            let base = s + next(64) * u64::from(w.min(4)) + [0, 1, 2][next(3) as usize];
            let stride = [w, w, 2 * w, 0][next(4) as usize];
            let acc: Vec<(u64, u32)> = (0..32u64)
                .filter(|&l| mask >> l & 1 == 1)
                .map(|l| {
                    (
                        base + (l - u64::from(mask.trailing_zeros())) * u64::from(stride),
                        w,
                    )
                })
                .collect();
            let b = banks(mask, &acc, false, &mut Scratch::default());
            assert_eq!(
                (b.degree, b.wavefronts, b.ideal_wavefronts),
                banks_by_hand(mask, &acc),
                "width {w}, stride {stride}, mask {mask:#x}, base {base:#x}"
            );
        }
    }

    fn banks_of(mask: u32, f: impl Fn(u64) -> u64, bytes: u32) -> (u64, u64, u64) {
        let mut k = Scratch::default();
        let acc: Vec<(u64, u32)> = (0..32)
            .filter(|&t| mask & (1 << t) != 0)
            .map(|t| (f(t), bytes))
            .collect();
        let b = banks(mask, &acc, false, &mut k);
        (b.degree, b.wavefronts, b.ideal_wavefronts)
    }

    const ALL: u32 = u32::MAX;

    #[test]
    fn bank_conflicts() {
        let mut k = Scratch::default();
        let s = addr::encode(addr::SHARED, 1, 0);
        let degree = |a: Vec<(u64, u32)>, k: &mut Scratch| banks(ALL, &a, false, k).degree;
        // s[t]: 32 words in 32 banks.
        assert_eq!(degree(lanes(|t| s + 4 * t, 4), &mut k), 1);
        // s[32 t]: word 32t is always bank 0: 32-way.
        assert_eq!(degree(lanes(|t| s + 128 * t, 4), &mut k), 32);
        // s[33 t]: bank (33 t) mod 32 = t: conflict-free.
        assert_eq!(degree(lanes(|t| s + 132 * t, 4), &mut k), 1);
        // s[2 t]: banks 0, 2, ..., 30 each get 2 words: 2-way.
        assert_eq!(degree(lanes(|t| s + 8 * t, 4), &mut k), 2);
        // Everyone reads s[5]: broadcast.
        assert_eq!(degree(lanes(|_| s + 20, 4), &mut k), 1);
        // 4 bytes or less: one phase of 32 lanes, wavefronts = degree.
        assert_eq!(banks_of(ALL, |t| s + 128 * t, 4), (32, 32, 1));
        assert_eq!(banks_of(ALL, |t| s + 8 * t, 4), (2, 2, 1));
        // char s[t]: 32 bytes in words 0..7: conflict-free.
        assert_eq!(banks_of(ALL, |t| s + t, 1), (1, 1, 1));
    }

    #[test]
    fn eight_byte_accesses_take_two_phases() {
        let s = addr::encode(addr::SHARED, 1, 0);
        // double s[t]: lane t at 8t. Phase 0 (lanes 0-15) is bytes 0..127 =
        // words 0..31, phase 1 words 32..63: one word per bank in each.
        assert_eq!(banks_of(ALL, |t| s + 8 * t, 8), (1, 2, 2));
        // double s[2t]: lane t at 16t, words 4t and 4t+1. Lanes 0-7 use
        // banks 0,1,4,5,...,28,29 and lanes 8-15 (words 32..61) the same
        // banks again: 2 words per bank, degree 2 in each phase, 4
        // wavefronts for an ideal 2.
        assert_eq!(banks_of(ALL, |t| s + 16 * t, 8), (2, 4, 2));
        // double s[16t]: lane t at 128t, words 32t and 32t+1 in banks 0 and
        // 1: 16 words per bank per phase, 32 wavefronts for an ideal 2.
        assert_eq!(banks_of(ALL, |t| s + 128 * t, 8), (16, 32, 2));
        // Everyone reads s[3] (words 6, 7): a broadcast in each phase.
        assert_eq!(banks_of(ALL, |_| s + 24, 8), (1, 2, 2));
        // Only lanes 0-15 (or 16-31) active: one phase costs nothing.
        assert_eq!(banks_of(0x0000_ffff, |t| s + 8 * t, 8), (1, 1, 1));
        assert_eq!(banks_of(0xffff_0000, |t| s + 8 * t, 8), (1, 1, 1));
        // Lanes 0 and 16 alone: one lane in each phase.
        assert_eq!(banks_of(0x0001_0001, |t| s + 8 * t, 8), (1, 2, 2));
    }

    #[test]
    fn sixteen_byte_accesses_take_four_phases() {
        let s = addr::encode(addr::SHARED, 1, 0);
        // float4 s[t]: lane t at 16t. Each phase of 8 lanes reads 8 x 4 = 32
        // consecutive words: conflict-free, 4 wavefronts, ideal 4.
        assert_eq!(banks_of(ALL, |t| s + 16 * t, 16), (1, 4, 4));
        // float4 s[2t]: lane t at 32t, words 8t..8t+3. Lanes 0-3 use banks
        // 0-3, 8-11, 16-19, 24-27 and lanes 4-7 (words 32..59) the same
        // banks again: degree 2 in each phase, 8 wavefronts for an ideal 4.
        assert_eq!(banks_of(ALL, |t| s + 32 * t, 16), (2, 8, 4));
        // Lanes 8-15 only: phase 1 alone.
        assert_eq!(banks_of(0x0000_ff00, |t| s + 16 * t, 16), (1, 1, 1));
        // 32 bytes per lane are split like 16: 8 lanes x 8 words = 64
        // consecutive words per phase, 2 per bank.
        assert_eq!(banks_of(ALL, |t| s + 32 * t, 32), (2, 8, 4));
    }

    #[test]
    fn no_bytes_no_wavefronts() {
        let s = addr::encode(addr::SHARED, 1, 0);
        assert_eq!(banks_of(ALL, |t| s + 4 * t, 0), (1, 0, 0));
    }

    #[test]
    fn values_at_the_most_lanes_restart_at_a_new_maximum() {
        let mut st = SiteStats::default();
        assert!(st.lanes(16));
        st.sectors_at_max.add(2);
        assert!(!st.lanes(8));
        assert!(st.lanes(32));
        st.sectors_at_max.add(4);
        assert!(st.lanes(32));
        st.sectors_at_max.add(8);
        assert_eq!(
            (st.lanes_max, st.sectors_at_max.min, st.sectors_at_max.max),
            (32, 4, 8)
        );
        // Merging keeps the side with more lanes, or both when equal.
        let mut fewer = SiteStats::default();
        fewer.lanes(16);
        fewer.sectors_at_max.add(1);
        fewer.by_warp = vec![(1, 0, 1)];
        let mut m = fewer.clone();
        m.merge(&st);
        assert_eq!((m.lanes_max, m.sectors_at_max), (32, st.sectors_at_max));
        m.merge(&fewer);
        assert_eq!((m.lanes_max, m.sectors_at_max), (32, st.sectors_at_max));
        m.merge(&st);
        assert_eq!((m.sectors_at_max.count, m.sectors_at_max.total), (4, 24));
        assert_eq!(m.by_warp, vec![(2, 0, 2)]);
    }
}
