//! How long a launch may run: a number of warp instructions and a wall-clock
//! time, so that a kernel that never finishes stops the simulator instead
//! of hanging it (or a test that runs it).
//!
//! The budget is checked where control moves (a branch, call, return or
//! barrier), never per instruction: a loop always passes such a point, and
//! straight-line code between two of them is bounded by the function's
//! length. The clock is read once every [`CLOCK_STEPS`] instructions.

use std::time::{Duration, Instant};

/// The default step budget. The largest launch of the bundled examples and
/// test fixtures (a 30 M-instruction run of `taint_abort.cu`, and 16 M
/// for `divergence.cu` over a million threads) stays below 1/30 of it.
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000_000;
/// The default time budget: about 100 times the slowest of those runs in
/// a release build, and several times what it takes in a debug build.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Warp instructions between two readings of the clock.
pub const CLOCK_STEPS: u64 = 4096;

/// The default memory budget for a launch's records (per block and per
/// warp): 1 GiB, some 12 million blocks of one warp.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// The limits of one launch; `None` is unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Warp instructions, summed over the launch.
    pub max_steps: Option<u64>,
    pub timeout: Option<Duration>,
    /// Bytes of the per-block and per-warp records the launch keeps.
    pub max_memory: Option<u64>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_steps: Some(DEFAULT_MAX_STEPS),
            timeout: Some(DEFAULT_TIMEOUT),
            max_memory: Some(DEFAULT_MAX_MEMORY),
        }
    }
}

/// Which limit ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exhausted {
    Steps(u64),
    Time(Duration),
    /// Bytes of records.
    Memory(u64),
}

impl Exhausted {
    pub fn describe(self) -> String {
        match self {
            Exhausted::Steps(n) => format!(
                "step limit: the launch issued its budget of {n} warp instructions (--max-steps)"
            ),
            Exhausted::Time(t) => format!(
                "timeout: the launch ran for its budget of {} s (--timeout)",
                t.as_secs_f64()
            ),
            Exhausted::Memory(b) => format!(
                "memory limit: the launch's per-block and per-warp records reached its budget of {} MiB (--max-memory)",
                b >> 20
            ),
        }
    }
}

/// The budget being spent: instructions issued so far over the launch, and
/// when to read the clock next.
#[derive(Debug)]
pub struct Meter {
    budget: Budget,
    deadline: Option<Instant>,
    /// Warp instructions issued by the launch, up to the start of the run
    /// of the current warp.
    pub issued: u64,
    /// The launch-wide count at which to read the clock next.
    next_clock: u64,
}

impl Meter {
    pub fn start(budget: Budget) -> Self {
        Meter {
            budget,
            deadline: budget.timeout.map(|t| Instant::now() + t),
            issued: 0,
            next_clock: CLOCK_STEPS,
        }
    }

    /// Checks the budget with `total` instructions issued by the launch.
    /// Warp instructions the launch may still issue.
    pub fn steps_left(&self) -> u64 {
        self.budget
            .max_steps
            .map_or(u64::MAX, |max| max.saturating_sub(self.issued))
    }

    /// A meter for part of the same launch run elsewhere: the same
    /// deadline, and the steps this one has left.
    pub fn fork(&self) -> Meter {
        Meter {
            budget: Budget {
                max_steps: self.budget.max_steps.map(|_| self.steps_left()),
                ..self.budget
            },
            deadline: self.deadline,
            issued: 0,
            next_clock: CLOCK_STEPS,
        }
    }

    pub fn check(&mut self, total: u64) -> Result<(), Exhausted> {
        if let Some(max) = self.budget.max_steps.filter(|&max| total >= max) {
            return Err(Exhausted::Steps(max));
        }
        if total >= self.next_clock {
            self.next_clock = total + CLOCK_STEPS;
            if let (Some(deadline), Some(t)) = (self.deadline, self.budget.timeout) {
                if Instant::now() >= deadline {
                    return Err(Exhausted::Time(t));
                }
            }
        }
        Ok(())
    }

    /// The launch-wide count at which [`Self::check`] has something to do.
    pub fn next_check(&self) -> u64 {
        self.budget
            .max_steps
            .map_or(self.next_clock, |max| max.min(self.next_clock))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_out_at_the_limit() {
        let mut m = Meter::start(Budget {
            max_steps: Some(10),
            timeout: None,
            max_memory: None,
        });
        assert_eq!(m.check(9), Ok(()));
        assert_eq!(m.next_check(), 10);
        assert_eq!(m.check(10), Err(Exhausted::Steps(10)));
    }

    #[test]
    fn the_clock_is_read_every_few_thousand_steps() {
        let mut m = Meter::start(Budget {
            max_steps: None,
            timeout: Some(Duration::ZERO),
            max_memory: None,
        });
        // The deadline has passed, but the clock is not read before
        // CLOCK_STEPS instructions.
        assert_eq!(m.check(CLOCK_STEPS - 1), Ok(()));
        assert_eq!(m.next_check(), CLOCK_STEPS);
        assert_eq!(m.check(CLOCK_STEPS), Err(Exhausted::Time(Duration::ZERO)));
        assert_eq!(m.next_check(), 2 * CLOCK_STEPS);
    }
}
