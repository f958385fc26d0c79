//! The SM's warp scheduler, replaying the warps' timelines cycle by cycle:
//! the warps of the blocks resident on one SM share its issue slots.
//!
//! Every cycle the SM issues at most [`Machine::issue_rate`] (P)
//! instructions: from the ready warps, the ones that issued least
//! recently (round-robin; the warps start in block and warp order). An
//! issued instruction keeps its warp waiting for its latency. A warp that
//! issues a barrier arrives one cycle later and waits until every warp of
//! its block has arrived; all are released [`Machine::barrier_cycles`]
//! after the last arrival.
//!
//! Two facts about this scheduler carry the static bounds (see
//! `timing::bounds`): it is greedy (a cycle issues fewer than P
//! instructions only when fewer warps are ready), so a wave takes at most
//! W/P + S cycles (RaCuda, Theorem 2); and a ready warp is passed over at
//! most ⌊(N − 1)/P⌋ cycles in a row among N resident warps, since each
//! cycle it waits, P warps ahead of it issue and go behind it.

use super::timeline::{Event, BARRIER, GRID, MEMORY, SPLIT};
use crate::machine::Machine;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Warp-cycles by what the warp was doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// Issuing, waiting for an issue slot, or for an ALU result.
    pub issue: u64,
    /// Waiting for a load's data beyond its issue cycle.
    pub memory: u64,
    /// Waiting at a barrier for the other warps of the block.
    pub barrier: u64,
    /// Issuing or waiting for an ALU result while some of the warp's lanes
    /// wait elsewhere (a side of a split branch).
    pub divergence: u64,
}

impl Breakdown {
    pub fn total(&self) -> u64 {
        self.issue + self.memory + self.barrier + self.divergence
    }
}

impl std::ops::AddAssign for Breakdown {
    fn add_assign(&mut self, o: Breakdown) {
        self.issue += o.issue;
        self.memory += o.memory;
        self.barrier += o.barrier;
        self.divergence += o.divergence;
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Barrier { arrival: u64, line: u32 },
    Done,
}

struct WarpRun<'a> {
    block: usize,
    events: &'a [Event],
    at: usize,
    /// Instructions of `events[at]` not issued yet.
    left: u32,
    /// When the warp is (or was) ready to issue.
    ready: u64,
    /// Its place in the round-robin order: smaller issued less recently.
    seq: u64,
    state: State,
}

struct BlockRun {
    warps: Vec<usize>,
    arrived: usize,
    done: usize,
    latest: u64,
    end: u64,
}

/// Replays `blocks` (each a list of warp timelines) resident together on
/// one SM from cycle 0, adding each warp's cycles to `lines` by the line
/// of the instruction it issued or waits at; returns each block's last
/// cycle (when its last instruction's latency has passed).
pub fn replay(blocks: &[Vec<&[Event]>], m: &Machine, lines: &mut [Breakdown]) -> Vec<u64> {
    let mut warps: Vec<WarpRun> = Vec::new();
    let mut runs: Vec<BlockRun> = Vec::new();
    for (b, list) in blocks.iter().enumerate() {
        let mut run = BlockRun {
            warps: Vec::new(),
            arrived: 0,
            done: 0,
            latest: 0,
            end: 0,
        };
        for events in list {
            run.warps.push(warps.len());
            let empty = events.is_empty();
            run.done += usize::from(empty);
            warps.push(WarpRun {
                block: b,
                events,
                at: 0,
                left: events.first().map_or(0, |e| e.count),
                ready: 0,
                seq: warps.len() as u64,
                state: if empty { State::Done } else { State::Running },
            });
        }
        runs.push(run);
    }
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = warps
        .iter()
        .enumerate()
        .filter(|(_, w)| w.state == State::Running)
        .map(|(i, w)| Reverse((w.seq, i)))
        .collect();
    let mut pending: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut next_seq = warps.len() as u64;
    let mut t = 0u64;
    let p = m.issue_rate.max(1);
    while !ready.is_empty() || !pending.is_empty() {
        while let Some(&Reverse((r, w))) = pending.peek() {
            if r > t {
                break;
            }
            pending.pop();
            ready.push(Reverse((warps[w].seq, w)));
        }
        let Some(_) = ready.peek() else {
            t = pending.peek().expect("not empty").0 .0;
            continue;
        };
        for _ in 0..p {
            let Some(Reverse((_, w))) = ready.pop() else {
                break;
            };
            warps[w].seq = next_seq;
            next_seq += 1;
            if let Some(finish) = issue(&mut warps[w], t, lines) {
                let b = warps[w].block;
                match warps[w].state {
                    State::Running => pending.push(Reverse((finish, w))),
                    State::Barrier { .. } => {
                        runs[b].arrived += 1;
                        runs[b].latest = runs[b].latest.max(finish);
                    }
                    State::Done => {
                        runs[b].done += 1;
                        runs[b].end = runs[b].end.max(finish);
                    }
                }
                release(&mut runs[b], &mut warps, m, lines, &mut pending);
            }
        }
        t += 1;
    }
    runs.iter().map(|r| r.end.max(r.latest)).collect()
}

/// Issues the warp's next instruction at cycle `t`; returns when its
/// latency has passed, having updated the warp's state.
fn issue(w: &mut WarpRun, t: u64, lines: &mut [Breakdown]) -> Option<u64> {
    let e = *w.events.get(w.at)?;
    let waited = t - w.ready;
    let latency = u64::from(e.latency.max(1));
    let slot = &mut lines[e.line as usize];
    // A load's wait for its data is a memory stall, split warp or not.
    let (run, stall) = match e.flags & MEMORY != 0 {
        true => (waited + 1, latency - 1),
        false => (waited + latency, 0),
    };
    slot.memory += stall;
    match e.flags & SPLIT != 0 {
        true => slot.divergence += run,
        false => slot.issue += run,
    }
    let finish = t + latency;
    w.left -= 1;
    if w.left == 0 {
        w.at += 1;
        w.left = w.events.get(w.at).map_or(0, |n| n.count);
    }
    w.ready = finish;
    w.state = if e.flags & BARRIER != 0 {
        State::Barrier {
            arrival: finish,
            line: e.line,
        }
    } else if e.flags & GRID != 0 || w.at == w.events.len() {
        State::Done
    } else {
        State::Running
    };
    Some(finish)
}

/// Releases the block's warps from their barrier once all its live warps
/// have arrived.
fn release(
    b: &mut BlockRun,
    warps: &mut [WarpRun],
    m: &Machine,
    lines: &mut [Breakdown],
    pending: &mut BinaryHeap<Reverse<(u64, usize)>>,
) {
    if b.arrived == 0 || b.arrived + b.done < b.warps.len() {
        return;
    }
    let at = b.latest + u64::from(m.barrier_cycles);
    for &i in &b.warps {
        let w = &mut warps[i];
        if let State::Barrier { arrival, line } = w.state {
            lines[line as usize].barrier += at - arrival;
            w.ready = at;
            w.state = if w.at == w.events.len() {
                State::Done
            } else {
                State::Running
            };
            match w.state {
                State::Running => pending.push(Reverse((at, i))),
                _ => b.end = b.end.max(at),
            }
        }
    }
    b.arrived = 0;
    b.latest = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(count: u32, latency: u32, flags: u8) -> Event {
        Event {
            count,
            latency,
            line: 0,
            flags,
        }
    }

    fn run(blocks: &[Vec<Vec<Event>>], m: &Machine) -> (Vec<u64>, Breakdown) {
        let lists: Vec<Vec<&[Event]>> = blocks
            .iter()
            .map(|b| b.iter().map(|w| w.as_slice()).collect())
            .collect();
        let mut lines = vec![Breakdown::default(); 1];
        let ends = replay(&lists, m, &mut lines);
        (ends, lines[0])
    }

    #[test]
    fn one_warp_waits_for_each_latency() {
        // 3 ALU instructions of 4 cycles, then a 10-cycle load, then one
        // more: 3·4 + 10 + 4 = 26 cycles.
        let m = Machine::a100();
        let w = vec![ev(3, 4, 0), ev(1, 10, MEMORY), ev(1, 4, 0)];
        let (ends, b) = run(&[vec![w]], &m);
        assert_eq!(ends, vec![26]);
        assert_eq!((b.issue, b.memory), (12 + 1 + 4, 9));
    }

    #[test]
    fn round_robin_hides_memory_latency() {
        // Hirvisalo's convoy: 4 warps, P = 1, each a 10-cycle load then a
        // 1-cycle instruction. Loads issue at 0, 1, 2, 3; warp 0 is ready
        // at 10 and issues, warp 1 at 11, ..., warp 3 at 13: done at 14.
        // The stall is 10 − 4 = 6 cycles (cycles 4-9) beyond the 4 issues
        // of each round.
        let m = Machine::paper();
        let w = || vec![ev(1, 10, MEMORY), ev(1, 1, 0)];
        let (ends, _) = run(&[vec![w(), w(), w(), w()]], &m);
        assert_eq!(ends, vec![14]);
    }

    #[test]
    fn a_barrier_waits_for_the_slowest_warp() {
        // P = 1, barrier 0. Warp 0: 1 instruction, barrier, 1 instruction;
        // warp 1: 5 instructions, barrier, 1. Cycle 0: w0 a; 1: w1; 2: w0
        // barrier (arrives 3); 3-6: w1's four others (its barrier at 7,
        // arrives 8). Release at 8: w0 at 8, w1 at 9, done at 10. Warp 0
        // waited 8 − 3 = 5 cycles at the barrier.
        let mut m = Machine::paper();
        m.barrier_cycles = 0;
        let w0 = vec![ev(1, 1, 0), ev(1, 1, BARRIER), ev(1, 1, 0)];
        let w1 = vec![ev(5, 1, 0), ev(1, 1, BARRIER), ev(1, 1, 0)];
        let (ends, b) = run(&[vec![w0, w1]], &m);
        assert_eq!(ends, vec![10]);
        assert_eq!(b.barrier, 5);
    }

    #[test]
    fn blocks_on_one_sm_share_its_slots() {
        // Two blocks of one warp, each 4 one-cycle instructions, P = 1:
        // they alternate, 8 cycles; with P = 2 they run side by side.
        let mut m = Machine::paper();
        let w = || vec![ev(4, 1, 0)];
        let (ends, _) = run(&[vec![w()], vec![w()]], &m);
        assert_eq!(ends, vec![7, 8]);
        m.issue_rate = 2;
        let (ends, _) = run(&[vec![w()], vec![w()]], &m);
        assert_eq!(ends, vec![4, 4]);
    }
}
