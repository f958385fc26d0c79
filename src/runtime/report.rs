//! What a run measured, summed over its launches kernel by kernel: the
//! counters, the simulated time and each source site's figures (as
//! `warpcheck simulate` reports one launch's), and the faults. Written as
//! JSON at exit for `warpcheck run`, which prints it after the program.

use crate::ir::{FuncId, Module};
use crate::sim::{report, Counters, Outcome, SimError, SiteInfo, SiteStats};
use serde::Serialize;

/// One kernel's launches so far.
struct KernelRun {
    kernel: FuncId,
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
    /// Adds a launch (or the part of it that ran before a fault).
    pub fn add(&mut self, kernel: FuncId, o: &Outcome) {
        let i = match self.kernels.iter().position(|k| k.kernel == kernel) {
            Some(i) => i,
            None => {
                self.kernels.push(KernelRun {
                    kernel,
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
