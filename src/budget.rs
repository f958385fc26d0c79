//! Per-kernel analysis budgets.
//!
//! warpcheck runs inside every compile, so no kernel may stall a build:
//! each stage that can grow with its input counts what it builds against
//! a [`Budget`] and stops when one runs out. The kernel then keeps what is
//! certain (nothing the stopped stage would have added) and its sites
//! become unknown with the reason `budget`; the other kernels of the
//! module are unaffected.

use std::fmt;
use std::time::{Duration, Instant};

/// The limits for one kernel.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Budget {
    /// Wall time for the kernel's whole analysis.
    pub time: Option<Duration>,
    /// IFDS path edges (facts at program points) in thread dependence.
    pub ifds_facts: usize,
    /// Expressions in the kernel's ACF arena.
    pub acf_exprs: usize,
    /// Rows of a cost-bound linear program.
    pub lp_rows: usize,
}

impl Budget {
    /// For `warpcheck check`: generous, so only pathological kernels stop.
    pub const CLI: Budget = Budget {
        time: Some(Duration::from_secs(20)),
        ifds_facts: 20_000_000,
        acf_exprs: 1_000_000,
        lp_rows: 200_000,
    };

    /// For the plugin: a build pays for every second, so the limits are
    /// tighter (a kernel that needs more is rare and gets a note).
    pub const PLUGIN: Budget = Budget {
        time: Some(Duration::from_secs(2)),
        ifds_facts: 2_000_000,
        acf_exprs: 200_000,
        lp_rows: 50_000,
    };

    /// Reads `key = value` settings (`time`, `ifds-facts`, `acf-exprs`,
    /// `lp-rows`);
    /// `time` is in seconds, `0` or `none` lifts a limit.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        let unlimited = value == "0" || value.eq_ignore_ascii_case("none");
        let count = || -> Result<usize, String> {
            if unlimited {
                return Ok(usize::MAX);
            }
            value
                .replace('_', "")
                .parse()
                .map_err(|_| format!("{key}: expected a count, got '{value}'"))
        };
        match key {
            "time" => {
                self.time = if unlimited {
                    None
                } else {
                    let s: f64 = value
                        .parse()
                        .ok()
                        .filter(|s: &f64| s.is_finite() && *s > 0.0)
                        .ok_or_else(|| format!("{key}: expected seconds, got '{value}'"))?;
                    Some(Duration::from_secs_f64(s))
                }
            }
            "ifds-facts" => self.ifds_facts = count()?,
            "acf-exprs" => self.acf_exprs = count()?,
            "lp-rows" => self.lp_rows = count()?,
            other => {
                return Err(format!(
                    "unknown budget '{other}' (expected time, ifds-facts, acf-exprs or lp-rows)"
                ))
            }
        }
        Ok(())
    }

    /// Starts the clock for one kernel.
    pub fn start(&self) -> Meter {
        Meter {
            budget: *self,
            deadline: self.time.map(|t| Instant::now() + t),
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::CLI
    }
}

/// Which limit ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Exhausted {
    Time(Duration),
    IfdsFacts(usize),
    AcfExprs(usize),
    LpRows(usize),
}

impl Exhausted {
    /// The budget's name, as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Exhausted::Time(_) => "time",
            Exhausted::IfdsFacts(_) => "ifds-facts",
            Exhausted::AcfExprs(_) => "acf-exprs",
            Exhausted::LpRows(_) => "lp-rows",
        }
    }
}

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exhausted::Time(t) => write!(f, "time budget of {:.1} s", t.as_secs_f64()),
            Exhausted::IfdsFacts(n) => write!(f, "thread-dependence budget of {n} facts"),
            Exhausted::AcfExprs(n) => write!(f, "ACF budget of {n} expressions"),
            Exhausted::LpRows(n) => write!(f, "LP budget of {n} rows"),
        }
    }
}

/// One kernel's running budget: the stages ask it whether they may go on.
#[derive(Clone, Debug)]
pub struct Meter {
    budget: Budget,
    deadline: Option<Instant>,
}

impl Meter {
    /// A meter that never runs out (tests, and stages run on their own).
    pub fn unlimited() -> Meter {
        Meter {
            budget: Budget {
                time: None,
                ifds_facts: usize::MAX,
                acf_exprs: usize::MAX,
                lp_rows: usize::MAX,
            },
            deadline: None,
        }
    }

    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// Fails once the kernel's time is up. Reads the clock: call it every
    /// few hundred steps of a loop, not every step.
    pub fn time(&self) -> Result<(), Exhausted> {
        match (self.deadline, self.budget.time) {
            (Some(d), Some(t)) if Instant::now() >= d => Err(Exhausted::Time(t)),
            _ => Ok(()),
        }
    }

    pub fn ifds_facts(&self, facts: usize) -> Result<(), Exhausted> {
        if facts > self.budget.ifds_facts {
            return Err(Exhausted::IfdsFacts(self.budget.ifds_facts));
        }
        Ok(())
    }

    pub fn lp_rows(&self, rows: usize) -> Result<(), Exhausted> {
        if rows > self.budget.lp_rows {
            return Err(Exhausted::LpRows(self.budget.lp_rows));
        }
        Ok(())
    }

    /// Seconds left on the kernel's clock (`None`: no limit).
    pub fn seconds_left(&self) -> Option<f64> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64())
    }

    pub fn acf_exprs(&self, exprs: usize) -> Result<(), Exhausted> {
        if exprs > self.budget.acf_exprs {
            return Err(Exhausted::AcfExprs(self.budget.acf_exprs));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_lift() {
        let mut b = Budget::CLI;
        b.set("time", "0.5").unwrap();
        assert_eq!(b.time, Some(Duration::from_millis(500)));
        b.set("ifds-facts", "1_000").unwrap();
        assert_eq!(b.ifds_facts, 1000);
        b.set("acf-exprs", "none").unwrap();
        assert_eq!(b.acf_exprs, usize::MAX);
        b.set("lp-rows", "500").unwrap();
        assert_eq!(b.lp_rows, 500);
        b.set("time", "0").unwrap();
        assert_eq!(b.time, None);
        assert!(b.set("time", "-1").is_err());
        assert!(b.set("facts", "1").is_err());
    }

    #[test]
    fn meters_fail_past_their_limits() {
        let mut b = Budget::CLI;
        b.ifds_facts = 10;
        b.acf_exprs = 5;
        b.time = Some(Duration::ZERO);
        let m = b.start();
        assert_eq!(m.ifds_facts(10), Ok(()));
        assert_eq!(m.ifds_facts(11), Err(Exhausted::IfdsFacts(10)));
        assert_eq!(m.acf_exprs(6), Err(Exhausted::AcfExprs(5)));
        assert_eq!(m.time(), Err(Exhausted::Time(Duration::ZERO)));
        assert_eq!(Meter::unlimited().time(), Ok(()));
    }
}
