//! The static claims of one site, merged over the sites of its key.

use serde_json::Value;
use std::collections::BTreeMap;

use super::{static_key, SiteKey};

/// The static figures merged per key: the union of the ranges; a class
/// only when every site of the key agrees.
#[derive(Default, Debug)]
pub struct Static {
    /// Every site of the key is uniform per warp: not thread-dependent,
    /// or dependent with `warp_uniform`.
    pub uniform: bool,
    /// Per warp: "split" if any site splits it, "uniform" if all are
    /// uniform, else "maybe".
    pub by_warp: Vec<&'static str>,
    pub sectors: Option<(u64, u64, u64, Option<String>)>,
    /// The sectors' figures hold only where each named integer parameter
    /// is at least its bound (a class that depends on a stride parameter:
    /// `condition.param` and `condition.from`).
    pub sectors_from: Vec<(String, i64)>,
    pub conflict: Option<(u64, u64, Option<String>)>,
    /// The hull of the per-iteration rows' `[min, max]` (a site's own
    /// range where it has no rows), for the sectors and the conflict
    /// degree: the counter takes only the rows' values, so every request
    /// lies within one row's range.
    pub sector_rows: Option<(u64, u64)>,
    pub conflict_rows: Option<(u64, u64)>,
    /// An atomic's most lanes on one address, over its sites.
    pub contention: Option<u64>,
}

/// The hull of a figure's per-iteration rows, else of the figure itself.
fn rows_hull(v: &Value) -> (u64, u64) {
    let own = min_max(v);
    let Some(rows) = v["iterations"]["rows"].as_array().filter(|r| !r.is_empty()) else {
        return own;
    };
    rows.iter().fold((u64::MAX, 0), |(lo, hi), r| {
        (
            lo.min(r["min"].as_u64().unwrap_or(own.0)),
            hi.max(r["max"].as_u64().unwrap_or(own.1)),
        )
    })
}

/// A figure's `[min, max]`; a report without them claims nothing
/// (`[0, u64::MAX]`).
fn min_max(v: &Value) -> (u64, u64) {
    (
        v["min"].as_u64().unwrap_or(0),
        v["max"].as_u64().unwrap_or(u64::MAX),
    )
}

fn hull(a: Option<(u64, u64)>, b: (u64, u64)) -> Option<(u64, u64)> {
    Some(a.map_or(b, |(lo, hi)| (lo.min(b.0), hi.max(b.1))))
}

/// The sites of one kernel of a `check --format json` report, by key.
pub fn static_sites(kernel: &Value) -> BTreeMap<SiteKey, Static> {
    let mut out: BTreeMap<SiteKey, Static> = BTreeMap::new();
    for s in kernel["sites"].as_array().into_iter().flatten() {
        let key = static_key(s);
        let first = !out.contains_key(&key);
        let e = out.entry(key).or_default();
        let uniform = s["thread_dependent"] == false || s["warp_uniform"] == true;
        e.uniform = uniform && (first || e.uniform);
        if let Some(w) = s["divergence"]["by_warp"].as_array() {
            let merged: Vec<&'static str> = w
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let x = match x.as_str().unwrap_or_default() {
                        "split" => "split",
                        "uniform" => "uniform",
                        _ => "maybe",
                    };
                    match (e.by_warp.get(i).copied(), x) {
                        (None, x) => x,
                        (Some("split"), _) | (_, "split") => "split",
                        (Some("uniform"), "uniform") => "uniform",
                        _ => "maybe",
                    }
                })
                .collect();
            e.by_warp = merged;
        }
        let class = |v: &Value| v["class"].as_str().map(str::to_string);
        // A uniform global access (clang may give it the position of a
        // dependent one: `B[j * w + i] += A[i]`) is one request of the
        // sectors its bytes span, coalesced.
        let one_address = uniform && s["kind"] != "branch" && s["space"] == "global";
        if one_address && !s["sectors"].is_object() {
            let bytes = s["bytes"].as_u64().unwrap_or(4).max(1);
            let (lo, hi, ideal) = (
                bytes.div_ceil(32),
                bytes.div_ceil(32) + 1,
                bytes.div_ceil(32),
            );
            e.sector_rows = hull(e.sector_rows, (lo, hi));
            e.sectors = Some(match e.sectors.take() {
                None => (lo, hi, ideal, Some("coalesced".to_string())),
                Some((a, b, i, c)) => (
                    a.min(lo),
                    b.max(hi),
                    i.max(ideal),
                    c.filter(|c| c == "coalesced"),
                ),
            });
        }
        if s["sectors"].is_object() {
            let v = &s["sectors"];
            let (lo, hi) = min_max(v);
            let ideal = v["ideal"].as_u64().unwrap_or(0);
            e.sector_rows = hull(e.sector_rows, rows_hull(v));
            if let Some(from) = v["condition"]["from"].as_i64() {
                let param = v["condition"]["param"].as_str().unwrap_or_default();
                e.sectors_from.push((param.to_string(), from));
            }
            e.sectors = Some(match e.sectors.take() {
                None => (lo, hi, ideal, class(v)),
                Some((a, b, i, c)) => (
                    a.min(lo),
                    b.max(hi),
                    i.max(ideal),
                    c.filter(|c| Some(c) == class(v).as_ref()),
                ),
            });
        }
        for fig in ["sectors", "conflict"] {
            if let Some(most) = s[fig]["contention"]["max"].as_u64() {
                e.contention = Some(e.contention.map_or(most, |c| c.max(most)));
            }
        }
        if s["conflict"].is_object() {
            let v = &s["conflict"];
            let (lo, hi) = min_max(v);
            e.conflict_rows = hull(e.conflict_rows, rows_hull(v));
            e.conflict = Some(match e.conflict.take() {
                None => (lo, hi, class(v)),
                Some((a, b, c)) => (
                    a.min(lo),
                    b.max(hi),
                    c.filter(|c| Some(c) == class(v).as_ref()),
                ),
            });
        }
    }
    out
}

impl Static {
    /// The claim in words, for a report beside the measured figures, and
    /// whether it is definite (a class or outcome; else the run is what
    /// decides it).
    pub fn summary(&self) -> (String, bool) {
        if let Some((lo, hi, _, class)) = &self.sectors {
            let class = class.as_deref().unwrap_or("unknown");
            let definite = class != "unknown";
            return (format!("{class}, {lo}..{hi} sectors per request"), definite);
        }
        if let Some((lo, hi, class)) = &self.conflict {
            let class = class.as_deref().unwrap_or("unknown");
            let definite = class != "unknown";
            let what = match class {
                "none" => "conflict-free".to_string(),
                "conflict" => "bank conflicts".to_string(),
                other => other.to_string(),
            };
            return (format!("{what}, {lo}..{hi}-way"), definite);
        }
        if !self.by_warp.is_empty() {
            let count = |o: &str| self.by_warp.iter().filter(|&&w| w == o).count();
            let (split, whole) = (count("split"), count("uniform"));
            let n = self.by_warp.len();
            let text = match (split, whole) {
                (s, _) if s == n => format!("splits every warp ({n})"),
                (_, w) if w == n => format!("no warp splits ({n})"),
                (0, 0) => format!("may split (all {n} warps unknown)"),
                (s, w) => format!("splits {s}, not {w}, unknown {} of {n} warps", n - s - w),
            };
            return (text, split + whole == n);
        }
        if self.uniform {
            return ("uniform per warp".into(), true);
        }
        ("thread-dependent".into(), false)
    }
}
