//! The static claims against measured counters: whether what `check`
//! says of a kernel at a block shape holds in simulated launches of it
//! (`warpcheck run` over a whole program, and the oracle tests over
//! fixtures and generated kernels).
//!
//! Both sides are read in their published forms, `check --format json`'s
//! sites and the simulator's ([`crate::sim::report::SiteJson`]), joined on
//! kind, file, line and column. A measured site contradicts the analysis
//! when:
//!
//! * the analysis calls the site uniform (not thread-dependent, or
//!   dependent but one value per warp) and the lanes of a simulated warp
//!   disagreed on its condition or address;
//! * a warp the analysis says splits ran the branch with all its lanes
//!   and undivided in some block (a bounds check such as `n > 32 * tid`
//!   may leave that warp fewer lanes, which the claim does not cover:
//!   checked per warp, since other warps may run it whole), or one it
//!   says is uniform split;
//! * a request's sectors or conflict degree lies outside the static
//!   [min, max], or outside every per-iteration row's (a loop whose
//!   counter the launch fixes: the hull of the rows); or, in executions
//!   with the whole warp active, `coalesced` has more than one sector over
//!   the request's own ideal, `uncoalesced` at most one, `none` a degree
//!   above 1 and `conflict` a degree of 1 (classes are claims about whole
//!   warps: a site that only ever ran with some lanes, say under a
//!   data-dependent test, cannot contradict one);
//! * an atomic request had more lanes on one address than the static
//!   contention allows;
//! * a measured site has no static site at all.
//!
//! Soundness alone passes an analysis that knows nothing (every class
//! unknown, every range 0..10^6), so the comparison also measures
//! precision ([`Precision`]): how many claims are definite rather than
//! undecided, how many definite claims some warp showed, and how many ends
//! of the static ranges some request met.

mod compare;
mod statics;
mod tally;

pub use compare::{compare, Verdict};
pub use statics::{static_sites, Static};
pub use tally::{Precision, Tally};

use serde::Deserialize;
use serde_json::Value;

/// `(kind, file, line, column)`: how the static and the measured reports
/// both key a site.
pub type SiteKey = (String, String, u64, u64);

/// The key of a site of `check --format json`.
pub fn static_key(s: &Value) -> SiteKey {
    (
        s["kind"].as_str().unwrap_or_default().to_string(),
        s["file"].as_str().unwrap_or_default().to_string(),
        s["line"].as_u64().unwrap_or(0),
        s["column"].as_u64().unwrap_or(0),
    )
}

/// A measured site's figures that the comparison reads, in the form of
/// the simulator's report (read back from a run's JSON, or converted from
/// a [`crate::sim::report::SiteJson`]).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(default)]
pub struct MeasuredSite {
    pub kind: String,
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub space: Option<String>,
    pub executions: u64,
    pub nonuniform: u64,
    pub lanes_max: u32,
    pub sectors: Option<MinMax>,
    pub conflict: Option<MinMax>,
    pub contention: Option<MinMax>,
    pub excess_at_max: Option<MinMax>,
    pub conflict_at_max: Option<MinMax>,
    pub by_warp: Option<Vec<WarpSite>>,
}

#[derive(Deserialize, Debug, Clone, Copy, Default)]
pub struct MinMax {
    pub min: u64,
    pub max: u64,
}

/// One warp of the block at a branch, over the blocks that ran it.
#[derive(Deserialize, Debug, Clone, Copy, Default)]
pub struct WarpSite {
    pub executed: u64,
    pub diverged: u64,
    /// Blocks where the warp ran the branch with all 32 lanes.
    pub whole: u64,
}

impl MeasuredSite {
    pub fn key(&self) -> SiteKey {
        (self.kind.clone(), self.file.clone(), self.line, self.column)
    }

    /// `file:line:column kind`, as messages name the site.
    pub fn place(&self) -> String {
        format!("{}:{}:{} {}", self.file, self.line, self.column, self.kind)
    }
}

impl From<&crate::sim::report::SiteJson> for MeasuredSite {
    fn from(s: &crate::sim::report::SiteJson) -> Self {
        let mm = |r: Option<crate::sim::report::MinMaxJson>| {
            r.map(|r| MinMax {
                min: r.min,
                max: r.max,
            })
        };
        MeasuredSite {
            kind: s.kind.to_string(),
            file: s.file.clone(),
            line: u64::from(s.line),
            column: u64::from(s.column),
            space: s.space.map(str::to_string),
            executions: s.executions,
            nonuniform: s.nonuniform,
            lanes_max: s.lanes_max,
            sectors: s.sectors.map(|r| MinMax {
                min: r.min,
                max: r.max,
            }),
            conflict: mm(s.conflict),
            contention: mm(s.contention),
            excess_at_max: mm(s.excess_at_max),
            conflict_at_max: mm(s.conflict_at_max),
            by_warp: s.by_warp.as_ref().map(|w| {
                w.iter()
                    .map(|w| WarpSite {
                        executed: w.executed,
                        diverged: w.diverged,
                        whole: w.whole,
                    })
                    .collect()
            }),
        }
    }
}
