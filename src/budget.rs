//! Per-kernel analysis budgets, and the one for a whole module's memory.
//!
//! warpcheck runs inside every compile, so no kernel may stall a build:
//! each stage that can grow with its input counts what it builds against
//! a [`Budget`] and stops when one runs out. The kernel then keeps what is
//! certain (nothing the stopped stage would have added) and its sites
//! become unknown with the reason `budget`; the other kernels of the
//! module are unaffected.
//!
//! The per-kernel limits do not bound a module of thousands of kernels, so
//! `memory` is the process's resident memory while a module is analysed:
//! a kernel that would start past it is not analysed (the same note), and
//! a file too large to load within it is refused before it is read.

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
    /// Resident memory of the whole process, in bytes, past which no
    /// further kernel of the module is analysed.
    pub memory: usize,
}

/// The default memory budget: 4 GiB, or less where the process may not
/// have that much ([`memory_ceiling`]).
pub const DEFAULT_MEMORY: usize = 4 << 30;

/// The most memory this process can use before allocation fails or the
/// machine runs out: 80% of the address-space limit (`ulimit -v`) or of
/// the physical memory, whichever is smaller; `None` where neither is
/// known. A budget above it would be an abort, not a note.
pub fn memory_ceiling() -> Option<usize> {
    let physical = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        })
        .map(|kb| kb.saturating_mul(1024));
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct we own.
    let address_space = (unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY)
        .then(|| usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX));
    [physical, address_space]
        .into_iter()
        .flatten()
        .min()
        .map(|b| b / 5 * 4)
}

/// The default budget under this process' ceiling.
fn default_memory() -> usize {
    memory_ceiling().map_or(DEFAULT_MEMORY, |c| c.min(DEFAULT_MEMORY))
}

/// This process's resident memory in bytes (`/proc/self/statm`), or `None`
/// where it cannot be read (then the memory budget never stops anything).
pub fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages.saturating_mul(usize::try_from(page).ok()?))
}

impl Budget {
    /// For `warpcheck check`: generous, so only pathological kernels stop.
    pub const CLI: Budget = Budget {
        time: Some(Duration::from_secs(20)),
        ifds_facts: 20_000_000,
        acf_exprs: 1_000_000,
        lp_rows: 200_000,
        memory: DEFAULT_MEMORY,
    };

    /// For the plugin: a build pays for every second, so the limits are
    /// tighter (a kernel that needs more is rare and gets a note).
    pub const PLUGIN: Budget = Budget {
        time: Some(Duration::from_secs(2)),
        ifds_facts: 2_000_000,
        acf_exprs: 200_000,
        lp_rows: 50_000,
        memory: DEFAULT_MEMORY,
    };

    /// [`Budget::CLI`] with its memory under this machine's ceiling.
    pub fn cli() -> Budget {
        Budget {
            memory: default_memory(),
            ..Budget::CLI
        }
    }

    /// [`Budget::PLUGIN`] with its memory under this machine's ceiling.
    pub fn plugin() -> Budget {
        Budget {
            memory: default_memory(),
            ..Budget::PLUGIN
        }
    }

    /// Reads `key = value` settings (`time`, `ifds-facts`, `acf-exprs`,
    /// `lp-rows`, `memory`);
    /// `time` is in seconds, `memory` in megabytes (MiB), `0` or `none`
    /// lifts a limit.
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
            "memory" => {
                self.memory = match count()? {
                    _ if unlimited => usize::MAX,
                    mb if mb > usize::MAX >> 20 => {
                        return Err(format!("{key}: {mb} MB is more than any machine has"))
                    }
                    mb => mb << 20,
                }
            }
            other => {
                return Err(format!(
                    "unknown budget '{other}' (expected time, ifds-facts, acf-exprs, lp-rows or memory)"
                ))
            }
        }
        Ok(())
    }

    /// Fails when the process already holds more than the memory budget:
    /// asked before each kernel of a module, and before a file is loaded
    /// (with `more`, the bytes loading it will add).
    pub fn memory_for(&self, more: usize) -> Result<(), Exhausted> {
        if self.memory == usize::MAX {
            return Ok(());
        }
        let over = |now: usize| now.saturating_add(more) > self.memory;
        match resident_bytes() {
            // What was freed (a kernel stopped and dropped) may still be
            // held by the heaps: handed back, then asked again.
            Some(now) if over(now) => {
                crate::allocator::release_free();
                match resident_bytes() {
                    Some(now) if over(now) => Err(Exhausted::Memory(self.memory)),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Starts the clock for one kernel.
    pub fn start(&self) -> Meter {
        Meter {
            budget: *self,
            deadline: self.time.map(|t| Instant::now() + t),
            asked: Default::default(),
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::cli()
    }
}

/// Which limit ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Exhausted {
    Time(Duration),
    IfdsFacts(usize),
    AcfExprs(usize),
    LpRows(usize),
    /// The module's memory budget, in bytes.
    Memory(usize),
}

impl Exhausted {
    /// The budget's name, as in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Exhausted::Time(_) => "time",
            Exhausted::IfdsFacts(_) => "ifds-facts",
            Exhausted::AcfExprs(_) => "acf-exprs",
            Exhausted::LpRows(_) => "lp-rows",
            Exhausted::Memory(_) => "memory",
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
            Exhausted::Memory(b) => write!(f, "module memory budget of {} MB", b >> 20),
        }
    }
}

/// One kernel's running budget: the stages ask it whether they may go on.
#[derive(Debug)]
pub struct Meter {
    budget: Budget,
    deadline: Option<Instant>,
    /// Calls of [`Meter::memory`], which reads the process's memory only
    /// every [`MEMORY_EVERY`]th time.
    asked: std::sync::atomic::AtomicU32,
}

impl Clone for Meter {
    fn clone(&self) -> Self {
        Meter {
            budget: self.budget,
            deadline: self.deadline,
            asked: Default::default(),
        }
    }
}

/// How often [`Meter::memory`] reads `/proc/self/statm` (some microseconds
/// a reading): often enough that a stage cannot grow far between two.
const MEMORY_EVERY: u32 = 16;

impl Meter {
    /// A meter that never runs out (tests, and stages run on their own).
    pub fn unlimited() -> Meter {
        Meter {
            budget: Budget {
                time: None,
                ifds_facts: usize::MAX,
                acf_exprs: usize::MAX,
                lp_rows: usize::MAX,
                memory: usize::MAX,
            },
            deadline: None,
            asked: Default::default(),
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

    /// Fails once the process holds more than the module's memory budget:
    /// asked inside the stages that grow within one kernel (the ACF, its
    /// sweeps and cases, the cost bounds), so that one kernel cannot take
    /// the memory that the budget refuses to the next. The process's
    /// memory is read every few calls.
    pub fn memory(&self) -> Result<(), Exhausted> {
        if self.budget.memory == usize::MAX {
            return Ok(());
        }
        let n = self
            .asked
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if !n.is_multiple_of(MEMORY_EVERY) {
            return Ok(());
        }
        self.budget.memory_for(0)
    }

    /// [`Meter::time`] and [`Meter::memory`] together: what a loop that
    /// builds something asks between two steps.
    pub fn time_and_memory(&self) -> Result<(), Exhausted> {
        self.time()?;
        self.memory()
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
        b.set("memory", "512").unwrap();
        assert_eq!(b.memory, 512 << 20);
        b.set("memory", "none").unwrap();
        assert_eq!(b.memory, usize::MAX);
        // 2^64 - 1 MB does not fit in bytes: a usage error, not a wrap.
        assert!(b.set("memory", "18446744073709551614").is_err());
        assert!(b.set("memory", "18446744073709551615").is_err());
        assert!(b.set("memory", "-1").is_err());
    }

    #[test]
    fn memory_budget_counts_what_the_process_holds() {
        let mut b = Budget::CLI;
        // This test process holds at least a page, and less than 2^62 bytes.
        b.memory = 4096;
        if resident_bytes().is_some() {
            assert_eq!(b.memory_for(0), Err(Exhausted::Memory(4096)));
        }
        b.memory = 1 << 62;
        assert_eq!(b.memory_for(0), Ok(()));
        // What loading a file would add counts too (saturating, not wrapping).
        if resident_bytes().is_some() {
            assert_eq!(b.memory_for(usize::MAX), Err(Exhausted::Memory(1 << 62)));
        }
        b.memory = usize::MAX;
        assert_eq!(b.memory_for(usize::MAX), Ok(()));
        // The ceiling, where known, leaves a fifth of it free.
        if let Some(c) = memory_ceiling() {
            assert!(Budget::cli().memory <= c.min(DEFAULT_MEMORY));
        }
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
        // Memory: read on the first call and every 16th after it.
        b.memory = 4096;
        let m = b.start();
        if resident_bytes().is_some() {
            assert_eq!(m.memory(), Err(Exhausted::Memory(4096)));
            for _ in 1..MEMORY_EVERY {
                assert_eq!(m.memory(), Ok(()));
            }
            assert_eq!(m.memory(), Err(Exhausted::Memory(4096)));
        }
        assert_eq!(Meter::unlimited().memory(), Ok(()));
    }
}
