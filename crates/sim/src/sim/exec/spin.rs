//! Spin detection. A warp runs deterministically from its own state (call
//! frames with their registers and SIMT stacks, exited lanes, stack
//! pointers) and memory. When it comes back to the same instruction with
//! exactly the same state and no write has changed memory meanwhile, it
//! will repeat the same iteration forever, unless another warp changes
//! what it reads. The scheduler then parks it until memory changes, and
//! reports a livelock when nothing else can run.
//!
//! A snapshot costs a copy of the register files, so one is taken only
//! every [`INTERVAL`] instructions of the warp; an ordinary loop fails the
//! comparison at its next iteration (its counter changed) and is left alone
//! for another interval. Loops whose state repeats only every second
//! iteration or later are not detected; the step budget stops them.

use super::frame::Frame;
use super::LANES;

/// What the watch compares of a warp: its step count and the state that
/// decides its next iteration.
pub(super) struct Looked<'w> {
    pub steps: u64,
    pub frames: &'w [Frame],
    pub exited: u32,
    pub sp: &'w [u32; LANES],
}

/// Warp instructions between two snapshots.
pub const INTERVAL: u64 = 1 << 16;

/// A warp's state at one point, and what the launch had done by then.
struct Snapshot {
    steps: u64,
    func: u32,
    pc: u32,
    frames: Vec<Frame>,
    exited: u32,
    sp: [u32; LANES],
    /// [`super::Machine::writes`] when it was taken.
    writes: u64,
    /// Each site's executions, to tell which loads the iteration ran.
    executions: Vec<u64>,
}

/// What a spinning warp repeats: the memory sites it read.
#[derive(Clone, Debug, Default)]
pub struct Spin {
    pub reads: Vec<u32>,
}

/// Per warp: when to look next, and the snapshot being compared.
#[derive(Default)]
pub struct SpinWatch {
    /// The warp's step count at which to take the next snapshot.
    next: u64,
    armed: Option<Box<Snapshot>>,
}

impl SpinWatch {
    pub fn new() -> Self {
        SpinWatch {
            next: INTERVAL,
            armed: None,
        }
    }

    /// The warp's step count at which [`Self::at`] has something to do.
    pub fn next_check(&self) -> u64 {
        if self.armed.is_some() {
            0
        } else {
            self.next
        }
    }

    /// The warp is about to run `pc` of function `func`: takes a snapshot,
    /// or compares with the one taken. `executions` gives each site's
    /// count; `reads` says which sites read memory.
    pub fn at(
        &mut self,
        w: &Looked<'_>,
        (func, pc): (u32, u32),
        writes: u64,
        executions: impl Fn() -> Vec<u64>,
        reads: impl Fn(usize) -> bool,
    ) -> Option<Spin> {
        let steps = w.steps;
        let Some(s) = &self.armed else {
            if steps >= self.next {
                self.armed = Some(Box::new(Snapshot {
                    steps,
                    func,
                    pc,
                    frames: w.frames.to_vec(),
                    exited: w.exited,
                    sp: *w.sp,
                    writes,
                    executions: executions(),
                }));
            }
            return None;
        };
        if (s.func, s.pc) != (func, pc) || s.steps == steps {
            // Not back yet; give up on a point not revisited in an interval.
            if steps >= s.steps + INTERVAL {
                self.disarm(steps);
            }
            return None;
        }
        let same =
            s.writes == writes && s.exited == w.exited && s.sp == *w.sp && s.frames == w.frames;
        let spin = same.then(|| Spin {
            reads: (executions().iter().zip(&s.executions))
                .enumerate()
                .filter(|&(i, (now, then))| now > then && reads(i))
                .map(|(i, _)| i as u32)
                .collect(),
        });
        self.disarm(steps);
        spin
    }

    fn disarm(&mut self, steps: u64) {
        self.armed = None;
        self.next = steps + INTERVAL;
    }
}
