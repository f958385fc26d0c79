//! The simulation report: JSON (a contract, like `check --format json`:
//! fields are added, never renamed) and text.
//!
//! Sites are keyed like the static report (kind, file, line, column) plus
//! the space, so the two can be joined; instructions that share a key
//! (unrolled or inlined copies) are merged.

use super::args::Elem;
use super::cost::{Counters, Range, SiteStats};
use super::error::SimError;
use super::stop_report::{self, StopJson};
use super::{Outcome, SiteInfo};
use crate::ir::Module;
use crate::ir::SiteKind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Serialize, Debug)]
pub struct Report {
    pub kernel: String,
    pub mangled: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// `ok`, or why the run stopped early: `memory-error`, `trap`,
    /// `deadlock`, `livelock`, `step-limit` or `timeout`.
    pub status: &'static str,
    /// Why and where the run stopped, when it did; the figures below are
    /// then those counted until the stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopJson>,
    pub totals: TotalsJson,
    pub blocks: Vec<BlockJson>,
    pub warps: Vec<WarpJson>,
    pub sites: Vec<SiteJson>,
    /// Contents of the buffers asked for with `--dump`, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub buffers: BTreeMap<String, Vec<serde_json::Value>>,
    /// Device `printf` output, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub printf: Vec<String>,
    /// `--cycles`: the launch's time on the machine model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<super::cycles::CycleReport>,
}

#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct TotalsJson {
    pub sectors: u64,
    pub requests: u64,
    pub conflicts: u64,
    pub divwarps: u64,
    pub steps: u64,
    pub ideal_sectors: u64,
    pub wavefronts: u64,
    pub thread_instructions: u64,
}

impl From<&Counters> for TotalsJson {
    fn from(c: &Counters) -> Self {
        TotalsJson {
            sectors: c.sectors,
            requests: c.requests,
            conflicts: c.conflicts,
            divwarps: c.divwarps,
            steps: c.steps,
            ideal_sectors: c.ideal_sectors,
            wavefronts: c.wavefronts,
            thread_instructions: c.thread_instructions,
        }
    }
}

#[derive(Serialize, Debug)]
pub struct BlockJson {
    pub block: [u32; 3],
    #[serde(flatten)]
    pub totals: TotalsJson,
}

#[derive(Serialize, Debug)]
pub struct WarpJson {
    pub block: [u32; 3],
    pub warp: u32,
    pub sectors: u64,
    pub requests: u64,
    pub conflicts: u64,
    pub divwarps: u64,
    pub steps: u64,
}

#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeJson {
    pub min: u64,
    pub max: u64,
    pub total: u64,
}

#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinMaxJson {
    pub min: u64,
    pub max: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct SiteJson {
    pub kind: &'static str,
    pub file: String,
    pub line: u32,
    pub column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<&'static str>,
    pub executions: u64,
    /// Sectors per request (global sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sectors: Option<RangeJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal_sectors: Option<u64>,
    /// Conflict degree per access (shared sites; an atomic's lanes on one
    /// word serialise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<MinMaxJson>,
    /// The most lanes of an atomic request on one address (atomic sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contention: Option<MinMaxJson>,
    pub divergent: u64,
    /// Executions whose active lanes disagreed on the address or condition.
    pub nonuniform: u64,
    /// The most active lanes of any execution.
    pub lanes_max: u32,
    /// Sectors per request over the executions with `lanes_max` lanes
    /// (global sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sectors_at_max: Option<MinMaxJson>,
    /// Sectors over each request's own ideal, over the same executions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excess_at_max: Option<MinMaxJson>,
    /// Conflict degree over the executions with `lanes_max` lanes (shared
    /// sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_at_max: Option<MinMaxJson>,
    /// Wavefronts per access (shared sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wavefronts: Option<MinMaxJson>,
    /// Wavefronts the accesses would take without bank conflicts, in all
    /// (shared sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal_wavefronts: Option<u64>,
    /// Distinct warps, (block, warp) pairs, that ran the branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warps: Option<u64>,
    /// Distinct warps the branch split at least once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergent_warps: Option<u64>,
    /// Per warp of the block (linear thread id / 32): in how many blocks it
    /// ran the branch and in how many the branch split it (branches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by_warp: Option<Vec<WarpSiteJson>>,
}

#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpSiteJson {
    pub executed: u64,
    pub diverged: u64,
    /// Blocks where this warp ran the branch with all 32 lanes at least
    /// once: where a whole-warp claim can be checked.
    pub whole: u64,
}

/// A site's key in the report.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    file: String,
    line: u32,
    column: u32,
    kind: SiteKind,
    space: Option<&'static str>,
}

fn key(m: &Module, info: &SiteInfo, stats: &SiteStats) -> Key {
    let (file, line, column) = info.position(m);
    let space = match info.kind {
        SiteKind::Branch => None,
        _ => Some(stats.space.map_or("unknown", |s| s.name())),
    };
    Key {
        file,
        line,
        column,
        kind: info.kind,
        space,
    }
}

fn range(r: &Range) -> RangeJson {
    RangeJson {
        min: r.min,
        max: r.max,
        total: r.total,
    }
}

fn min_max(r: &Range) -> MinMaxJson {
    MinMaxJson {
        min: r.min,
        max: r.max,
    }
}

/// Sites merged by key, in source order: the requests of one access
/// (`memory::lower`'s pieces) and copies of one instruction are one site
/// of the report, as in the static one.
pub fn sites(m: &Module, outcome: &Outcome) -> Vec<SiteJson> {
    merged_sites(m, &outcome.sites)
}

/// [`sites`] of any list of per-instruction figures (several launches'
/// summed, for a whole program).
pub fn merged_sites(m: &Module, sites: &[(SiteInfo, SiteStats)]) -> Vec<SiteJson> {
    let mut merged: BTreeMap<Key, SiteStats> = BTreeMap::new();
    for (info, stats) in sites {
        merged.entry(key(m, info, stats)).or_default().merge(stats);
    }
    merged
        .into_iter()
        .map(|(k, s)| {
            let global = k.space == Some("global");
            let shared = k.space == Some("shared");
            let branch = k.kind == SiteKind::Branch;
            SiteJson {
                kind: k.kind.name(),
                file: k.file,
                line: k.line,
                column: k.column,
                space: k.space,
                executions: s.executions,
                sectors: global.then(|| range(&s.sectors)),
                ideal_sectors: global.then_some(s.ideal_sectors),
                conflict: shared.then(|| min_max(&s.conflict)),
                contention: (k.kind == SiteKind::Atomic && s.contention.count > 0)
                    .then(|| min_max(&s.contention)),
                divergent: s.divergent,
                nonuniform: s.nonuniform,
                lanes_max: s.lanes_max,
                sectors_at_max: global.then(|| min_max(&s.sectors_at_max)),
                excess_at_max: global.then(|| min_max(&s.excess_at_max)),
                conflict_at_max: shared.then(|| min_max(&s.conflict_at_max)),
                wavefronts: shared.then(|| min_max(&s.wavefronts)),
                ideal_wavefronts: shared.then_some(s.ideal_wavefronts),
                warps: branch.then_some(s.warps),
                divergent_warps: branch.then_some(s.divergent_warps),
                by_warp: branch.then(|| {
                    s.by_warp
                        .iter()
                        .map(|&(executed, diverged, whole)| WarpSiteJson {
                            executed,
                            diverged,
                            whole,
                        })
                        .collect()
                }),
            }
        })
        .collect()
}

/// The buffers to dump: name and optional element type override.
pub type Dumps = [(String, Option<Elem>)];

/// A buffer's elements, as JSON numbers.
pub fn buffer_values(
    outcome: &Outcome,
    name: &str,
    elem: Option<Elem>,
) -> Option<Vec<serde_json::Value>> {
    let b = outcome.buffer(name)?;
    let e = elem.or(b.elem).unwrap_or(Elem::U8);
    Some(b.data.chunks_exact(e.bytes()).map(|c| e.value(c)).collect())
}

/// The report of a run, or of one stopped by `stop` (with the outcome up
/// to the stop).
pub fn build(
    m: &Module,
    outcome: &Outcome,
    stop: Option<&SimError>,
    dumps: &Dumps,
) -> Result<Report, String> {
    let f = m.func(outcome.kernel);
    let mut buffers = BTreeMap::new();
    for (name, elem) in dumps {
        let values = buffer_values(outcome, name, *elem).ok_or_else(|| {
            let names: Vec<&str> = outcome.buffers.iter().map(|b| b.name.as_str()).collect();
            format!(
                "--dump {name}: no such buffer (buffers: {})",
                names.join(", ")
            )
        })?;
        buffers.insert(name.clone(), values);
    }
    Ok(Report {
        kernel: f.demangled.clone(),
        mangled: f.name.clone(),
        grid: outcome.config.grid,
        block: outcome.config.block,
        status: stop.map_or("ok", |e| e.kind.status()),
        stop: stop.map(stop_report::json),
        totals: (&outcome.totals).into(),
        blocks: outcome
            .blocks
            .iter()
            .map(|b| BlockJson {
                block: b.block,
                totals: (&b.counters).into(),
            })
            .collect(),
        warps: outcome
            .warps
            .iter()
            .map(|w| WarpJson {
                block: w.block,
                warp: w.warp,
                sectors: w.counters.sectors,
                requests: w.counters.requests,
                conflicts: w.counters.conflicts,
                divwarps: w.counters.divwarps,
                steps: w.counters.steps,
            })
            .collect(),
        sites: sites(m, outcome),
        buffers,
        printf: outcome.output.clone(),
        cycles: outcome.cycles.clone(),
    })
}

/// The human-readable report; a stop comes first.
pub fn text(r: &Report) -> String {
    let mut out = r
        .stop
        .as_ref()
        .map_or_else(String::new, |stop| stop_report::text(r.status, stop));
    let t = &r.totals;
    let dims = |d: [u32; 3]| format!("({},{},{})", d[0], d[1], d[2]);
    let _ = writeln!(
        out,
        "{}: grid {} block {}, {} blocks, {} warps run",
        r.kernel,
        dims(r.grid),
        dims(r.block),
        r.blocks.len(),
        r.warps.len()
    );
    let _ = writeln!(
        out,
        "  steps {} ({} thread-instructions), divergent branches {}",
        t.steps, t.thread_instructions, t.divwarps
    );
    let _ = writeln!(
        out,
        "  global: {} requests, {} sectors (ideal {})",
        t.requests, t.sectors, t.ideal_sectors
    );
    let _ = writeln!(
        out,
        "  shared: {} wavefronts, {} from bank conflicts",
        t.wavefronts, t.conflicts
    );
    if r.blocks.len() > 1 && r.blocks.len() <= 16 {
        out.push_str("blocks:\n");
        for b in &r.blocks {
            let _ = writeln!(
                out,
                "  {}  steps {}, sectors {}, conflicts {}, divergent {}",
                dims(b.block),
                b.totals.steps,
                b.totals.sectors,
                b.totals.conflicts,
                b.totals.divwarps
            );
        }
    }
    out.push_str("sites:\n");
    for s in &r.sites {
        let place = format!("{}:{}:{}", s.file, s.line, s.column);
        let mut detail = match (&s.sectors, &s.conflict) {
            (Some(x), _) => format!(
                "sectors/request {}..{} (total {}, ideal {})",
                x.min,
                x.max,
                x.total,
                s.ideal_sectors.unwrap_or(0)
            ),
            (_, Some(c)) => {
                let mut d = format!("conflict {}..{}-way", c.min, c.max);
                if let Some(w) = &s.wavefronts {
                    let _ = write!(
                        d,
                        ", wavefronts {}..{} (ideal {})",
                        w.min,
                        w.max,
                        s.ideal_wavefronts.unwrap_or(0)
                    );
                }
                d
            }
            _ if s.kind == "branch" => format!(
                "divergent {} (in {} of {} warps)",
                s.divergent,
                s.divergent_warps.unwrap_or(0),
                s.warps.unwrap_or(0)
            ),
            _ => String::new(),
        };
        if s.nonuniform > 0 && s.kind != "branch" {
            let _ = write!(detail, ", lanes disagree {}x", s.nonuniform);
        }
        let _ = writeln!(
            out,
            "  {place:<28} {:<6} {:<8} executions {:<8} {detail}",
            s.kind,
            s.space.unwrap_or(""),
            s.executions
        );
    }
    for (name, values) in &r.buffers {
        let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let _ = writeln!(out, "{name} = [{}]", shown.join(", "));
    }
    if let Some(c) = &r.cycles {
        out.push_str(&super::cycles::text::render(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(s: &SiteJson) -> serde_json::Value {
        serde_json::to_value(s).unwrap()
    }

    fn base(kind: &'static str, space: Option<&'static str>) -> SiteJson {
        SiteJson {
            kind,
            file: "k.cu".into(),
            line: 3,
            column: 5,
            space,
            executions: 2,
            sectors: None,
            ideal_sectors: None,
            conflict: None,
            contention: None,
            divergent: 0,
            nonuniform: 0,
            lanes_max: 32,
            sectors_at_max: None,
            excess_at_max: None,
            conflict_at_max: None,
            wavefronts: None,
            ideal_wavefronts: None,
            warps: None,
            divergent_warps: None,
            by_warp: None,
        }
    }

    #[test]
    fn site_keys_are_additive() {
        let mm = |min, max| Some(MinMaxJson { min, max });
        let shared = SiteJson {
            conflict: mm(1, 2),
            conflict_at_max: mm(1, 1),
            wavefronts: mm(2, 4),
            ideal_wavefronts: Some(4),
            ..base("load", Some("shared"))
        };
        assert_eq!(
            json(&shared),
            serde_json::json!({
                "kind": "load", "file": "k.cu", "line": 3, "column": 5,
                "space": "shared", "executions": 2, "conflict": {"min": 1, "max": 2},
                "divergent": 0, "nonuniform": 0, "lanes_max": 32,
                "conflict_at_max": {"min": 1, "max": 1},
                "wavefronts": {"min": 2, "max": 4}, "ideal_wavefronts": 4
            })
        );
        let branch = SiteJson {
            warps: Some(2),
            divergent_warps: Some(1),
            by_warp: Some(vec![
                WarpSiteJson {
                    executed: 1,
                    diverged: 1,
                    whole: 1,
                },
                WarpSiteJson {
                    executed: 1,
                    diverged: 0,
                    whole: 0,
                },
            ]),
            ..base("branch", None)
        };
        assert_eq!(
            json(&branch),
            serde_json::json!({
                "kind": "branch", "file": "k.cu", "line": 3, "column": 5,
                "executions": 2, "divergent": 0, "nonuniform": 0, "lanes_max": 32,
                "warps": 2, "divergent_warps": 1,
                "by_warp": [{"executed": 1, "diverged": 1, "whole": 1},
                            {"executed": 1, "diverged": 0, "whole": 0}]
            })
        );
    }
}
