//! What a run measured, summed over its launches by kernel and block
//! shape: the counters, the simulated time, each source site's figures (as
//! `warpcheck simulate` reports one launch's) and what the launches passed
//! that static claims rest on; and the faults. Written as JSON at exit for
//! `warpcheck run`, which prints it after the program beside `check`'s
//! claims for the same shapes.

use crate::ir::{FuncId, Module};
use crate::sim::{report, Counters, Outcome, SimError, SiteInfo, SiteStats};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What one launch passed that the static claims may rest on: an integer
/// parameter's value, or where in its allocation a pointer points.
#[derive(Clone, Copy, Debug)]
pub enum Passed {
    Int(i64),
    /// The pointer's byte offset within its allocation.
    Offset(u64),
    Other,
}

/// Offsets are kept modulo this (no static alignment claim is larger).
const OFFSET_MODULUS: u64 = 4096;
/// Distinct offsets kept per pointer; a pointer passed at more is
/// reported with the first ones.
const MOST_OFFSETS: usize = 16;

/// A kernel's launches at one block shape so far.
struct KernelRun {
    kernel: FuncId,
    block: [u32; 3],
    /// Each integer parameter's least value, by its name.
    least: BTreeMap<String, i64>,
    /// Each pointer parameter's offsets within its allocation, modulo
    /// [`OFFSET_MODULUS`], by its name.
    offsets: BTreeMap<String, BTreeSet<u64>>,
    launches: u64,
    blocks: u64,
    totals: Counters,
    simulated_us: f64,
    sites: Vec<(SiteInfo, SiteStats)>,
}

/// A launch that stopped, placed as compute-sanitizer places it.
#[derive(Serialize, Debug, Clone)]
pub struct FaultJson {
    pub kernel: String,
    pub kind: &'static str,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub thread: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// A race: how this side accessed the byte (`read`, `write`, `atomic`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<&'static str>,
    /// A race: the other access.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related: Option<RelatedJson>,
}

/// The second access of a race.
#[derive(Serialize, Debug, Clone)]
pub struct RelatedJson {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub thread: [u32; 3],
    pub access: &'static str,
}

#[derive(Default)]
pub struct Measured {
    /// In the order of their first launch.
    kernels: Vec<KernelRun>,
    faults: Vec<FaultJson>,
}

#[derive(Serialize)]
struct KernelJson {
    kernel: String,
    mangled: String,
    /// The block shape of these launches (a kernel launched at several
    /// has an entry for each).
    block: [u32; 3],
    /// Each integer parameter's least value over these launches.
    least_ints: BTreeMap<String, i64>,
    /// Each pointer parameter's offsets within its allocation (modulo
    /// 4096) over these launches.
    pointer_offsets: BTreeMap<String, BTreeSet<u64>>,
    launches: u64,
    blocks: u64,
    simulated_us: f64,
    totals: Counters,
    sites: Vec<report::SiteJson>,
}

/// The report's JSON: the schema `warpcheck run --format json` prints.
#[derive(Serialize)]
pub struct RunJson {
    /// Simulated microseconds of the whole run (launches and copies).
    simulated_us: f64,
    /// warpcheck's own failure, when the run stopped for one.
    fatal: Option<String>,
    kernels: Vec<KernelJson>,
    errors: Vec<FaultJson>,
}

impl Measured {
    /// Adds a launch (or the part of it that ran before a fault), with
    /// what it passed, by parameter name.
    pub fn add(&mut self, kernel: FuncId, o: &Outcome, passed: &[(String, Passed)]) {
        let block = o.config.block;
        let at = self
            .kernels
            .iter()
            .position(|k| k.kernel == kernel && k.block == block);
        let i = match at {
            Some(i) => i,
            None => {
                self.kernels.push(KernelRun {
                    kernel,
                    block,
                    least: BTreeMap::new(),
                    offsets: BTreeMap::new(),
                    launches: 0,
                    blocks: 0,
                    totals: Counters::default(),
                    simulated_us: 0.0,
                    sites: Vec::new(),
                });
                self.kernels.len() - 1
            }
        };
        let k = &mut self.kernels[i];
        for (name, p) in passed {
            match *p {
                Passed::Int(v) => {
                    let least = k.least.entry(name.clone()).or_insert(v);
                    *least = (*least).min(v);
                }
                Passed::Offset(off) => {
                    let seen = k.offsets.entry(name.clone()).or_default();
                    if seen.len() < MOST_OFFSETS {
                        seen.insert(off % OFFSET_MODULUS);
                    }
                }
                Passed::Other => {}
            }
        }
        k.launches += 1;
        k.blocks += o.blocks.len() as u64;
        k.totals += o.totals;
        k.simulated_us += o.cycles.as_ref().map_or(0.0, |c| c.microseconds);
        // Every launch of a kernel runs the same decoded program, so its
        // sites come in the same order.
        if k.sites.len() < o.sites.len() {
            k.sites.extend(
                o.sites[k.sites.len()..]
                    .iter()
                    .map(|(info, _)| (info.clone(), SiteStats::default())),
            );
        }
        for ((_, sum), (_, s)) in k.sites.iter_mut().zip(&o.sites) {
            sum.merge(s);
        }
    }

    pub fn fault(&mut self, kernel: &str, e: &SimError) {
        self.faults.push(FaultJson {
            kernel: kernel.to_string(),
            kind: e.kind.status(),
            message: e.message.clone(),
            file: e.pos.as_ref().map(|p| p.file.clone()),
            line: e.pos.as_ref().map(|p| p.line),
            column: e.pos.as_ref().map(|p| p.col),
            thread: e.thread,
            block: e.block,
            access: None,
            related: None,
        });
    }

    /// A sanitizer finding (the launch went on).
    pub fn error(&mut self, e: FaultJson) {
        self.faults.push(e);
    }

    pub fn json(&self, m: Option<&Module>, simulated_us: f64, fatal: Option<String>) -> RunJson {
        let kernels = match m {
            Some(m) => self
                .kernels
                .iter()
                .map(|k| KernelJson {
                    kernel: m.func(k.kernel).demangled.clone(),
                    mangled: m.func(k.kernel).name.clone(),
                    block: k.block,
                    least_ints: k.least.clone(),
                    pointer_offsets: k.offsets.clone(),
                    launches: k.launches,
                    blocks: k.blocks,
                    simulated_us: k.simulated_us,
                    totals: k.totals,
                    sites: report::merged_sites(m, &k.sites),
                })
                .collect(),
            None => Vec::new(),
        };
        RunJson {
            simulated_us,
            fatal,
            kernels,
            errors: self.faults.clone(),
        }
    }
}
