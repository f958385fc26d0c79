//! Shared-memory races, found as compute-sanitizer's racecheck finds them.
//!
//! Two accesses to one shared byte by different threads of a block, at
//! least one of them a write, race unless something orders them: a block
//! barrier (`__syncthreads()` and its reducing forms, or the grid barrier)
//! between them, or, for two lanes of one warp, a `__syncwarp` or a warp
//! collective (`__shfl_sync`, `__ballot_sync`, `__match_*_sync`,
//! `__reduce_*_sync`, `elect.sync`) that both lanes took part in between
//! them. Lock-step execution orders nothing: since Volta a warp's threads
//! are scheduled independently, so the warp-synchronous idioms of older
//! GPUs (a reduction on a `volatile` array with no `__syncwarp`) race. Two
//! atomics never race with each other; an atomic and a plain access do.
//! A write that stores the value its byte already holds does not race
//! with an earlier write (every order leaves the same byte), as
//! racecheck does not report such writes either.
//!
//! The shadow keeps, per byte of the block's shared memory (per 4-byte
//! word while the phase's accesses take it whole), the last write and up
//! to two reads of the current barrier phase, each with its thread, its
//! access and the warp's sync count when it ran. A cell whose
//! phase is not the block's current one is empty, so a barrier costs one
//! counter increment, never a sweep. Two readers suffice to find a racing
//! reader for every later writer (one of them is another thread); a read
//! that two other threads' reads hide may go unreported, never a race
//! that did not happen.

use std::collections::HashSet;

/// How an access touched memory.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    Atomic,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// One side of a race as the simulator saw it: its access (an index into
/// the program's access plans (`code::Requests`)) and its thread, linear in the
/// block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Side {
    pub access: u32,
    pub thread: u32,
    pub kind: AccessKind,
}

/// A race: the access that ran first in the simulator's order, the one
/// that ran second, and the block.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawRace {
    pub first: Side,
    pub second: Side,
    pub block: [u32; 3],
}

impl RawRace {
    /// Whether both threads are lanes of one warp.
    pub fn same_warp(&self) -> bool {
        self.first.thread / 32 == self.second.thread / 32
    }
}

/// The access running now, by one lane.
#[derive(Copy, Clone, Debug)]
pub struct Me {
    pub access: u32,
    /// Linear in the block.
    pub thread: u32,
    /// Its warp's [`WarpSyncs::count`] now.
    pub gen: u32,
    pub kind: AccessKind,
    /// A write: whether it changed the bytes it wrote.
    pub changed: bool,
}

/// An access recorded in a cell.
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
struct Mark {
    /// The access index plus one; 0 for none.
    access: u32,
    gen: u32,
    thread: u16,
    atomic: bool,
}

impl Mark {
    fn of(me: &Me) -> Mark {
        Mark {
            access: me.access.wrapping_add(1),
            gen: me.gen,
            thread: me.thread as u16,
            atomic: me.kind == AccessKind::Atomic,
        }
    }

    fn side(&self, kind: AccessKind) -> Side {
        Side {
            access: self.access.wrapping_sub(1),
            thread: u32::from(self.thread),
            kind: match kind {
                AccessKind::Read => AccessKind::Read,
                _ if self.atomic => AccessKind::Atomic,
                _ => AccessKind::Write,
            },
        }
    }
}

#[derive(Copy, Clone, Default, Debug, PartialEq, Eq)]
struct Cell {
    phase: u32,
    /// A word's cell: its bytes have cells of their own in this phase
    /// (some access took part of the word).
    split: bool,
    write: Mark,
    reads: [Mark; 2],
}

/// The `__syncwarp`s and warp collectives one warp ran in the current
/// barrier phase: for each set of lanes that met, the last time (the
/// warp's count of meetings) they did. Two lanes' accesses are ordered
/// when a meeting of both came after the earlier one.
#[derive(Clone, Default, Debug)]
pub struct WarpSyncs {
    count: u32,
    met: Vec<(u32, u32)>,
}

/// Most distinct lane sets a warp keeps; past it the oldest is forgotten
/// (which can only report more, never hide a race).
const MAX_LANE_SETS: usize = 64;

impl WarpSyncs {
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The lanes `lanes` meet at a `__syncwarp` or warp collective.
    pub fn meet(&mut self, lanes: u32) {
        if lanes.count_ones() < 2 {
            return;
        }
        self.count = self.count.saturating_add(1);
        let now = self.count;
        if let Some(e) = self.met.iter_mut().find(|e| e.0 == lanes) {
            e.1 = now;
            return;
        }
        if self.met.len() == MAX_LANE_SETS {
            let oldest = (0..self.met.len())
                .min_by_key(|&i| self.met[i].1)
                .unwrap_or(0);
            self.met.swap_remove(oldest);
        }
        self.met.push((lanes, now));
    }

    /// A block barrier orders everything before it: forget the meetings.
    pub fn clear(&mut self) {
        self.met.clear();
    }

    /// Whether lanes `a` and `b` met after the warp's count was `since`.
    fn ordered(&self, since: u32, a: u32, b: u32) -> bool {
        let both = (1u32 << a) | (1u32 << b);
        self.met
            .iter()
            .any(|&(lanes, at)| at > since && lanes & both == both)
    }
}

/// Races found in a launch, each pair of accesses once.
#[derive(Default, Debug)]
pub struct Log {
    seen: HashSet<(u32, u32)>,
    /// The pair last added: the other bytes of an access repeat it.
    last: Option<(u32, u32)>,
    pub found: Vec<RawRace>,
    /// The running block, for the races it has.
    pub block: [u32; 3],
}

/// Most races one launch records (distinct pairs of accesses).
const MAX_RACES: usize = 10_000;

impl Log {
    /// Rare: out of the way of the accesses that race with nothing.
    #[cold]
    #[inline(never)]
    fn add(&mut self, first: Side, second: Side) {
        let key = pair(&first, &second);
        if self.last == Some(key) {
            return;
        }
        self.last = Some(key);
        if self.found.len() < MAX_RACES && self.seen.insert(key) {
            self.found.push(RawRace {
                first,
                second,
                block: self.block,
            });
        }
    }

    /// Adds the races another log found after this one's, each pair of
    /// accesses still once.
    pub fn absorb(&mut self, other: Log) {
        for r in other.found {
            if self.found.len() < MAX_RACES && self.seen.insert(pair(&r.first, &r.second)) {
                self.found.push(r);
            }
        }
    }
}

/// The accesses of a race, as one key whichever ran first.
fn pair(first: &Side, second: &Side) -> (u32, u32) {
    (
        first.access.min(second.access),
        first.access.max(second.access),
    )
}

/// The shadow of one block's shared memory: a cell per 4-byte word,
/// standing for its four bytes while every access of the phase took the
/// whole word (as `int` and `float` arrays are accessed), else a cell per
/// byte. Either way the answer is the one cells per byte would give.
#[derive(Default, Debug)]
pub struct Shadow {
    words: Vec<Cell>,
    bytes: Vec<Cell>,
    phase: u32,
}

impl Shadow {
    /// A fresh block with `bytes` of shared memory, in barrier phase
    /// `phase` (never used before in the launch).
    pub fn start(&mut self, bytes: usize, phase: u32) {
        let words = bytes.div_ceil(4);
        if self.words.len() < words {
            self.words.resize(words, Cell::default());
        }
        self.phase = phase;
    }

    /// The block passed a barrier: a new phase.
    pub fn next_phase(&mut self, phase: u32) {
        self.phase = phase;
    }

    /// Lane `me` accesses `[offset, offset + len)`; reports what it races
    /// with to `log`. `syncs` is the warp's record of meetings.
    ///
    /// Returns whether the access was a *quiet* read: its bytes have no
    /// write in this phase, and `me` is their first reader. The same read
    /// by further threads of the warp (the same access, address and sync
    /// count) can then race with nothing and only replaces the second
    /// reader, so only the last of them needs to be applied.
    #[inline]
    pub fn access(
        &mut self,
        offset: u64,
        len: usize,
        me: &Me,
        syncs: &WarpSyncs,
        log: &mut Log,
    ) -> bool {
        // The common case, kept small enough to inline: one whole word.
        if len == 4 && offset.is_multiple_of(4) {
            let phase = self.phase;
            if let Some(word) = self.words.get_mut((offset / 4) as usize) {
                if word.phase != phase {
                    *word = Cell {
                        phase,
                        ..Cell::default()
                    };
                }
                if !word.split {
                    return apply(word, me, syncs, log);
                }
            }
        }
        self.access_any(offset, len, me, syncs, log)
    }

    /// [`Shadow::access`] for any offset and length.
    #[inline(never)]
    fn access_any(
        &mut self,
        offset: u64,
        len: usize,
        me: &Me,
        syncs: &WarpSyncs,
        log: &mut Log,
    ) -> bool {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(len).min(4 * self.words.len());
        self.cells(start, end, |c| apply(c, me, syncs, log))
    }

    /// Applies `f` to the cells of `[start, end)`: a whole word's cell
    /// once, or the cells of the bytes taken; whether `f` held for all.
    #[inline]
    fn cells(&mut self, start: usize, end: usize, mut f: impl FnMut(&mut Cell) -> bool) -> bool {
        let mut all = true;
        let mut at = start;
        let cells = 4 * self.words.len();
        while at < end {
            let w = at / 4;
            let word = &mut self.words[w];
            if word.phase != self.phase {
                *word = Cell {
                    phase: self.phase,
                    ..Cell::default()
                };
            }
            if !word.split && at == 4 * w && end >= at + 4 {
                all &= f(word);
                at += 4;
                continue;
            }
            // Most kernels never split a word: the byte cells are made the
            // first time one does.
            if self.bytes.len() < cells {
                self.bytes.resize(cells, Cell::default());
            }
            let bytes = &mut self.bytes[4 * w..4 * w + 4];
            if !word.split {
                word.split = true;
                bytes.fill(*word);
            }
            let stop = end.min(4 * w + 4);
            for cell in &mut bytes[at - 4 * w..stop - 4 * w] {
                all &= f(cell);
            }
            at = stop;
        }
        all
    }
}

/// `me` at one cell; whether it was a quiet read.
#[inline]
fn apply(cell: &mut Cell, me: &Me, syncs: &WarpSyncs, log: &mut Log) -> bool {
    match me.kind {
        AccessKind::Read => {
            read(cell, me, syncs, log);
            cell.write.access == 0 && u32::from(cell.reads[0].thread) == me.thread
        }
        AccessKind::Write | AccessKind::Atomic => {
            write(cell, me, syncs, log);
            false
        }
    }
}

/// Whether `earlier` races with `me`.
#[inline]
fn races(earlier: &Mark, me: &Me, syncs: &WarpSyncs) -> bool {
    let other = u32::from(earlier.thread);
    earlier.access != 0
        && other != me.thread
        && !(earlier.atomic && me.kind == AccessKind::Atomic)
        && !(other / 32 == me.thread / 32 && syncs.ordered(earlier.gen, other % 32, me.thread % 32))
}

#[inline]
fn read(cell: &mut Cell, me: &Me, syncs: &WarpSyncs, log: &mut Log) {
    if races(&cell.write, me, syncs) {
        log.add(cell.write.side(AccessKind::Write), side(me));
    }
    let mark = Mark::of(me);
    let [a, b] = &mut cell.reads;
    if a.access == 0 || u32::from(a.thread) == me.thread {
        *a = mark;
    } else {
        // Keeps a reader of another thread than `a`'s: the latest.
        *b = mark;
    }
}

#[inline]
fn write(cell: &mut Cell, me: &Me, syncs: &WarpSyncs, log: &mut Log) {
    let same_value = !me.changed && me.kind == AccessKind::Write && !cell.write.atomic;
    if races(&cell.write, me, syncs) && !same_value {
        log.add(cell.write.side(AccessKind::Write), side(me));
    }
    for r in cell.reads {
        if races(&r, me, syncs) {
            log.add(r.side(AccessKind::Read), side(me));
        }
    }
    // A write that changed nothing leaves the write that made the value.
    if cell.write.access == 0 || !same_value {
        cell.write = Mark::of(me);
    }
}

fn side(me: &Me) -> Side {
    Side {
        access: me.access,
        thread: me.thread,
        kind: me.kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(access: u32, thread: u32, kind: AccessKind, gen: u32) -> Me {
        Me {
            access,
            thread,
            gen,
            kind,
            changed: true,
        }
    }

    fn shadow() -> (Shadow, WarpSyncs, Log) {
        let mut s = Shadow::default();
        s.start(16, 1);
        (s, WarpSyncs::default(), Log::default())
    }

    #[test]
    fn a_read_after_another_threads_write_races_once_per_pair() {
        let (mut s, syncs, mut log) = shadow();
        // Thread 40 (warp 1) writes 4 bytes, threads 3 and 5 read them.
        s.access(0, 4, &me(7, 40, AccessKind::Write, 0), &syncs, &mut log);
        s.access(0, 4, &me(9, 3, AccessKind::Read, 0), &syncs, &mut log);
        s.access(2, 4, &me(9, 5, AccessKind::Read, 0), &syncs, &mut log);
        assert_eq!(log.found.len(), 1, "{:?}", log.found);
        let r = log.found[0];
        assert_eq!((r.first.access, r.first.thread), (7, 40));
        assert_eq!(r.first.kind, AccessKind::Write);
        assert_eq!((r.second.access, r.second.thread), (9, 3));
        assert!(!r.same_warp());
    }

    #[test]
    fn a_barrier_orders_everything_before_it() {
        let (mut s, syncs, mut log) = shadow();
        s.access(0, 4, &me(1, 40, AccessKind::Write, 0), &syncs, &mut log);
        s.next_phase(2);
        s.access(0, 4, &me(2, 3, AccessKind::Read, 0), &syncs, &mut log);
        s.access(0, 4, &me(3, 3, AccessKind::Write, 0), &syncs, &mut log);
        assert!(log.found.is_empty(), "{:?}", log.found);
        // Within the phase, thread 40's write after thread 3's read and
        // write races with both.
        s.access(0, 4, &me(4, 40, AccessKind::Write, 0), &syncs, &mut log);
        let pairs: Vec<(u32, u32)> = log
            .found
            .iter()
            .map(|r| (r.first.access, r.second.access))
            .collect();
        assert_eq!(pairs, vec![(3, 4), (2, 4)]);
        assert_eq!(log.found[1].first.kind, AccessKind::Read);
    }

    #[test]
    fn a_threads_own_accesses_never_race() {
        let (mut s, syncs, mut log) = shadow();
        for kind in [AccessKind::Write, AccessKind::Read, AccessKind::Write] {
            s.access(0, 8, &me(1, 5, kind, 0), &syncs, &mut log);
        }
        assert!(log.found.is_empty());
    }

    #[test]
    fn atomics_race_only_with_plain_accesses() {
        let (mut s, syncs, mut log) = shadow();
        for t in 0..64 {
            s.access(0, 4, &me(1, t, AccessKind::Atomic, 0), &syncs, &mut log);
        }
        assert!(log.found.is_empty());
        s.access(0, 4, &me(2, 70, AccessKind::Read, 0), &syncs, &mut log);
        assert_eq!(log.found.len(), 1);
        assert_eq!(log.found[0].first.kind, AccessKind::Atomic);
    }

    #[test]
    fn lanes_of_a_warp_race_unless_they_met_since() {
        let (mut s, mut syncs, mut log) = shadow();
        // Lane 16 writes what lane 0 reads: lock-step orders nothing.
        s.access(
            0,
            4,
            &me(1, 16, AccessKind::Write, syncs.count()),
            &syncs,
            &mut log,
        );
        s.access(
            0,
            4,
            &me(2, 0, AccessKind::Read, syncs.count()),
            &syncs,
            &mut log,
        );
        assert_eq!(log.found.len(), 1);
        assert!(log.found[0].same_warp());
        // After a __syncwarp of both lanes, the next write and read do not.
        syncs.meet(u32::MAX);
        s.access(
            4,
            4,
            &me(3, 16, AccessKind::Write, syncs.count()),
            &syncs,
            &mut log,
        );
        syncs.meet(u32::MAX);
        s.access(
            4,
            4,
            &me(4, 0, AccessKind::Read, syncs.count()),
            &syncs,
            &mut log,
        );
        assert_eq!(log.found.len(), 1);
        // A meeting without lane 0 orders nothing for it.
        s.access(
            8,
            4,
            &me(5, 16, AccessKind::Write, syncs.count()),
            &syncs,
            &mut log,
        );
        syncs.meet(0xffff_0000);
        s.access(
            8,
            4,
            &me(6, 0, AccessKind::Read, syncs.count()),
            &syncs,
            &mut log,
        );
        assert_eq!(log.found.len(), 2);
    }

    #[test]
    fn rewriting_the_same_value_is_not_a_race() {
        let (mut s, syncs, mut log) = shadow();
        s.access(0, 4, &me(1, 0, AccessKind::Write, 0), &syncs, &mut log);
        let same = Me {
            changed: false,
            ..me(2, 40, AccessKind::Write, 0)
        };
        s.access(0, 4, &same, &syncs, &mut log);
        assert!(log.found.is_empty());
        s.access(0, 4, &me(3, 80, AccessKind::Write, 0), &syncs, &mut log);
        assert_eq!(log.found.len(), 1);
        // The race is with the write that made the value.
        assert_eq!(log.found[0].first.access, 1);
    }

    #[test]
    fn a_writer_finds_a_reader_of_another_thread() {
        let (mut s, syncs, mut log) = shadow();
        for t in [3, 4, 5] {
            s.access(0, 1, &me(1, t, AccessKind::Read, 0), &syncs, &mut log);
        }
        // Thread 3 writes: readers 4 and 5 race with it (one pair).
        s.access(0, 1, &me(2, 3, AccessKind::Write, 0), &syncs, &mut log);
        assert_eq!(log.found.len(), 1);
        assert_ne!(log.found[0].first.thread, 3);
    }

    /// Bytes of one word taken by different threads do not race; a whole
    /// word access after them races with each byte's thread, and a byte
    /// access after whole-word ones sees the word's history.
    #[test]
    fn words_split_into_bytes_exactly() {
        let (mut s, syncs, mut log) = shadow();
        for b in 0..4 {
            s.access(
                b,
                1,
                &me(1, 40 + b as u32, AccessKind::Write, 0),
                &syncs,
                &mut log,
            );
        }
        assert!(log.found.is_empty(), "{:?}", log.found);
        s.access(0, 4, &me(2, 3, AccessKind::Read, 0), &syncs, &mut log);
        assert_eq!(log.found.len(), 1);
        assert_eq!(log.found[0].first.thread, 40);
        // Word 1: whole-word write by 7, then a byte read by 8 at its third
        // byte, then a write of an unaligned pair spanning words 1 and 2.
        s.access(4, 4, &me(3, 7, AccessKind::Write, 0), &syncs, &mut log);
        s.access(6, 1, &me(4, 8, AccessKind::Read, 0), &syncs, &mut log);
        assert_eq!(
            log.found.last().map(|r| (r.first.thread, r.second.thread)),
            Some((7, 8))
        );
        s.access(7, 2, &me(5, 9, AccessKind::Write, 0), &syncs, &mut log);
        let last: Vec<(u32, u32)> = log.found[2..]
            .iter()
            .map(|r| (r.first.access, r.second.access))
            .collect();
        assert_eq!(
            last,
            vec![(3, 5)],
            "byte 7 was written by 7, byte 8 by none"
        );
        // A new phase makes the split word whole again.
        s.next_phase(2);
        s.access(4, 4, &me(6, 9, AccessKind::Write, 0), &syncs, &mut log);
        assert_eq!(log.found.len(), 3);
    }

    /// A warp's broadcast read, applied for its first and last lanes when
    /// the first is quiet, leaves the shadow as applying every lane does;
    /// after another thread's write it is not quiet.
    #[test]
    fn a_quiet_broadcast_needs_only_its_first_and_last_lanes() {
        let (mut all, syncs, mut log) = shadow();
        let (mut ends, _, mut log2) = shadow();
        for t in 0..32 {
            all.access(8, 4, &me(1, t, AccessKind::Read, 0), &syncs, &mut log);
        }
        assert!(ends.access(8, 4, &me(1, 0, AccessKind::Read, 0), &syncs, &mut log2));
        ends.access(8, 4, &me(1, 31, AccessKind::Read, 0), &syncs, &mut log2);
        assert_eq!(all.words, ends.words);
        // A write by thread 40, then warp 0 reads: lane 0 races, and so
        // would the others.
        ends.access(0, 4, &me(2, 40, AccessKind::Write, 0), &syncs, &mut log2);
        assert!(!ends.access(0, 4, &me(3, 0, AccessKind::Read, 0), &syncs, &mut log2));
        // A second reader of a word read before is not its first.
        assert!(!ends.access(8, 4, &me(4, 5, AccessKind::Read, 0), &syncs, &mut log2));
        assert!(!ends.access(12, 4, &me(5, 5, AccessKind::Write, 0), &syncs, &mut log2));
    }

    #[test]
    fn a_lane_set_table_stays_bounded() {
        let mut syncs = WarpSyncs::default();
        for k in 0..200u32 {
            syncs.meet(0b11 | (k << 2));
        }
        assert!(syncs.met.len() <= MAX_LANE_SETS);
        assert!(syncs.ordered(0, 0, 1));
    }
}
