//! `check --summary`: per kernel and per file, how many branches and
//! accesses fell in each class (GPUCheck's Tables 1 and 2, plus bank
//! conflicts), and the share of thread-dependent ones left unknown.

use super::json::{FindingJson, KernelJson, Report};
use crate::checks::bank_conflict::Conflict;
use crate::checks::divergent_branch::Divergence;
use crate::checks::uncoalesced_access::Sectors;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Counts by class.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Counts {
    /// Branches: uniform (not thread-dependent), none, total, partial,
    /// bounded, unknown.
    pub branches: BTreeMap<&'static str, u64>,
    /// Global accesses with a thread-dependent address.
    pub global: BTreeMap<&'static str, u64>,
    /// Shared accesses with a thread-dependent address.
    pub shared: BTreeMap<&'static str, u64>,
    /// Thread-dependent accesses through pointers loaded from memory that
    /// are counted as global by the stated assumption (`space_assumed`).
    pub assumed_global: u64,
    /// Thread-dependent accesses whose address space is still unknown.
    pub unknown_space: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        for (mine, theirs) in [
            (&mut self.branches, &o.branches),
            (&mut self.global, &o.global),
            (&mut self.shared, &o.shared),
        ] {
            for (k, v) in theirs {
                *mine.entry(k).or_default() += v;
            }
        }
        self.assumed_global += o.assumed_global;
        self.unknown_space += o.unknown_space;
    }

    /// The counts of a kernel's sites (none when they were not listed).
    pub fn of(k: &KernelJson) -> Counts {
        let mut c = Counts::default();
        for s in k.sites.iter().flatten() {
            if let Some(d) = s.figures.get::<Divergence>() {
                let class = if s.thread_dependent {
                    d.class.name()
                } else {
                    "uniform"
                };
                *c.branches.entry(class).or_default() += 1;
            }
            // A uniform atomic's figure (its contention) is no
            // thread-dependent access.
            if let Some(x) = s.figures.get::<Sectors>().filter(|_| s.thread_dependent) {
                *c.global.entry(x.class.name()).or_default() += 1;
            }
            if let Some(x) = s.figures.get::<Conflict>().filter(|_| s.thread_dependent) {
                *c.shared.entry(x.class.name()).or_default() += 1;
            }
            if s.thread_dependent {
                c.assumed_global += u64::from(s.space_assumed);
                c.unknown_space += u64::from(s.space == Some("unknown"));
            }
        }
        c
    }

    /// Thread-dependent branches and accesses, and how many are unknown.
    pub fn unknown_share(&self) -> (u64, u64, u64, u64) {
        let dep_branches: u64 = self
            .branches
            .iter()
            .filter(|(k, _)| **k != "uniform")
            .map(|(_, v)| v)
            .sum();
        let unknown_branches = self.branches.get("unknown").copied().unwrap_or(0);
        let accesses: u64 = self.global.values().chain(self.shared.values()).sum();
        let unknown_accesses = self.global.get("unknown").copied().unwrap_or(0)
            + self.shared.get("unknown").copied().unwrap_or(0);
        (dep_branches, unknown_branches, accesses, unknown_accesses)
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub kernels: Vec<(String, String, Counts)>,
    pub files: BTreeMap<String, Counts>,
    pub total: Counts,
    /// The warnings (and errors) estimated to cost the most, worst first:
    /// what to look at first.
    pub costliest: Vec<Costly>,
}

/// One of the costliest findings.
#[derive(Clone, Debug, Serialize)]
pub struct Costly {
    pub file: String,
    pub line: u32,
    pub check: String,
    pub kernel: String,
    /// Its share of the kernel's estimated time, 0 to 1.
    pub share: f64,
}

/// How many findings `--summary` ranks.
const COSTLIEST: usize = 10;

impl Summary {
    /// The summary of a whole report: its kernels, then its findings.
    pub fn of(r: &Report) -> Summary {
        let mut s = Summary::default();
        for k in &r.kernels {
            s.add_kernel(&k.file, &k.name, Counts::of(k));
        }
        s.rank(&r.findings);
        s
    }

    /// Adds one kernel's counts: kernels can be counted as they are
    /// reported and their sites dropped.
    pub fn add_kernel(&mut self, file: &str, name: &str, c: Counts) {
        self.files.entry(file.to_string()).or_default().add(&c);
        self.total.add(&c);
        self.kernels.push((file.to_string(), name.to_string(), c));
    }

    /// Ranks the warnings of `findings` (every file's, once) by their
    /// share of their kernel's time.
    pub fn rank(&mut self, findings: &[FindingJson]) {
        let mut costly: Vec<Costly> = findings
            .iter()
            .filter(|f| f.severity != "note")
            .filter_map(|f| {
                Some(Costly {
                    file: f.file.clone(),
                    line: f.line,
                    check: f.check.clone(),
                    kernel: f.kernel.clone(),
                    share: f.impact.share?,
                })
            })
            .collect();
        costly.sort_by(|a, b| b.share.total_cmp(&a.share));
        costly.truncate(COSTLIEST);
        self.costliest = costly;
    }

    pub fn render(&self) -> String {
        const BRANCH: [&str; 6] = ["uniform", "none", "total", "partial", "bounded", "unknown"];
        const GLOBAL: [&str; 3] = ["coalesced", "uncoalesced", "unknown"];
        const SHARED: [&str; 3] = ["none", "conflict", "unknown"];
        let mut out = String::new();
        let head = |cols: &[&str]| cols.iter().map(|c| format!("{c:>8}")).collect::<String>();
        let _ = writeln!(
            out,
            "{:40} |{:^48}|{:^24}|{:^24}",
            "", "branches", "global accesses", "shared accesses"
        );
        let _ = writeln!(
            out,
            "{:40} |{}|{}|{}",
            "",
            head(&BRANCH),
            head(&["coalesc", "uncoal", "unknown"]),
            head(&SHARED)
        );
        let row = |out: &mut String, name: &str, c: &Counts| {
            let get = |m: &BTreeMap<&str, u64>, cols: &[&str]| -> String {
                cols.iter()
                    .map(|k| format!("{:>8}", m.get(k).copied().unwrap_or(0)))
                    .collect()
            };
            let _ = writeln!(
                out,
                "{:40} |{}|{}|{}",
                truncate(name, 40),
                get(&c.branches, &BRANCH),
                get(&c.global, &GLOBAL),
                get(&c.shared, &SHARED)
            );
        };
        for (file, counts) in &self.files {
            for (_, name, c) in self.kernels.iter().filter(|(f, _, _)| f == file) {
                row(&mut out, &format!("  {name}"), c);
            }
            row(&mut out, file, counts);
        }
        row(&mut out, "total", &self.total);
        let (db, ub, da, ua) = self.total.unknown_share();
        let pct = |u: u64, d: u64| {
            if d == 0 {
                0.0
            } else {
                100.0 * u as f64 / d as f64
            }
        };
        let _ = writeln!(
            out,
            "unknown: {ub} of {db} thread-dependent branches ({:.0}%), {ua} of {da} thread-dependent accesses ({:.0}%)",
            pct(ub, db),
            pct(ua, da)
        );
        let t = &self.total;
        if t.assumed_global + t.unknown_space > 0 {
            let _ = writeln!(
                out,
                "address space: {} thread-dependent accesses through pointers loaded from kernel arguments' or __constant__ memory counted as global (assumed: the host stores global addresses there), {} of unknown space",
                t.assumed_global, t.unknown_space
            );
        }
        if !self.costliest.is_empty() {
            let _ = writeln!(
                out,
                "costliest warnings (estimated share of their kernel's time):"
            );
            for c in &self.costliest {
                let _ = writeln!(
                    out,
                    "  {:>6}  {}:{} [warpcheck-{}] in {}",
                    crate::timing::impact::percent(c.share),
                    c.file,
                    c.line,
                    c.check,
                    c.kernel
                );
            }
        }
        out
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let cut: String = s.chars().take(n - 1).collect();
        format!("{cut}…")
    }
}
