//! The simulator as the oracle for the ACF checks: every definite class
//! and every [min, max] that `check` gives must hold in the simulated
//! launch of the same IR.
//!
//! Runs every kernel of `tests/fixtures/cu/*.cu` and `examples/*.cu` at
//! several block shapes (the static analysis told the same shape) and
//! integer parameters, with 1 MiB buffers filled 0, 1, 2, ... Per site
//! (joined on kind, file, line and column):
//!
//! * divergence: a warp the analysis says splits must split in every block
//!   where it runs the branch; one it says is uniform must never split;
//! * sectors and conflict degrees: every simulated request lies within the
//!   static [min, max]; with the most lanes active, `coalesced` means at
//!   most one sector over the ideal, `uncoalesced` more, `none` degree 1 and
//!   `conflict` more than 1.
//!
//! Kernels that fault or use what the simulator does not run are skipped
//! and counted. Definite claims hold for warps whose lanes can all be
//! active; the parameters here keep bounds checks from cutting a warp.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use warpcheck::analysis::{self, BlockDim, BlockDimSource, Options};
use warpcheck::diag::json::Report;
use warpcheck::ir::{FuncId, Module};
use warpcheck::sim::report::{self, SiteJson};
use warpcheck::sim::{self, LaunchConfig};
use warpcheck::taint::ifds::IfdsTaint;

/// The static figures merged per key: the union of the ranges; a class
/// only when every site of the key agrees.
#[derive(Default, Debug)]
struct Static {
    /// Per warp: "split" if any site splits it, "uniform" if all are
    /// uniform, else "maybe".
    by_warp: Vec<&'static str>,
    sectors: Option<(u64, u64, u64, Option<String>)>,
    conflict: Option<(u64, u64, Option<String>)>,
}

fn static_sites(kernel: &Value) -> BTreeMap<SiteKey, Static> {
    let mut out: BTreeMap<SiteKey, Static> = BTreeMap::new();
    for s in kernel["sites"].as_array().unwrap() {
        let key = static_key(s);
        let e = out.entry(key).or_default();
        if let Some(w) = s["divergence"]["by_warp"].as_array() {
            let merged: Vec<&'static str> = w
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let x = match x.as_str().unwrap() {
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
        if s["sectors"].is_object() {
            let v = &s["sectors"];
            let (lo, hi, ideal) = (
                v["min"].as_u64().unwrap(),
                v["max"].as_u64().unwrap(),
                v["ideal"].as_u64().unwrap(),
            );
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
        if s["conflict"].is_object() {
            let v = &s["conflict"];
            let (lo, hi) = (v["min"].as_u64().unwrap(), v["max"].as_u64().unwrap());
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

fn shapes(m: &Module, k: FuncId) -> Vec<[u32; 3]> {
    let b = m.func(k).launch;
    b.reqntid
        .or(b.maxntid)
        .map_or_else(|| vec![[256, 1, 1], [64, 1, 1], [32, 8, 1]], |b| vec![b])
}

#[derive(Default, Debug)]
struct Tally {
    branches: usize,
    warps: usize,
    global: usize,
    shared: usize,
    runs: usize,
    skipped: usize,
    disagreements: Vec<String>,
}

fn compare(kernel: &str, st: &Static, s: &SiteJson, t: &mut Tally) {
    let mut bad = |what: String| {
        t.disagreements.push(format!(
            "{kernel}: {}:{}:{} {}: {what}",
            s.file, s.line, s.column, s.kind
        ))
    };
    if let Some(by) = &s.by_warp {
        t.branches += 1;
        for (w, ws) in by.iter().enumerate() {
            if ws.executed == 0 {
                continue;
            }
            t.warps += 1;
            match st.by_warp.get(w).copied() {
                Some("split") if ws.diverged != ws.executed => bad(format!(
                    "warp {w} said to split, but ran undivided in {} of {} blocks",
                    ws.executed - ws.diverged,
                    ws.executed
                )),
                Some("uniform") if ws.diverged > 0 => bad(format!(
                    "warp {w} said uniform, but split in {} of {} blocks",
                    ws.diverged, ws.executed
                )),
                None => bad(format!("warp {w} ran the branch but has no static outcome")),
                _ => {}
            }
        }
    }
    if let (Some(sim), Some((lo, hi, ideal, class))) = (&s.sectors, &st.sectors) {
        t.global += 1;
        if sim.min < *lo || sim.max > *hi {
            bad(format!(
                "sectors {}..{} outside static {lo}..{hi}",
                sim.min, sim.max
            ));
        }
        if let Some(at) = &s.sectors_at_max {
            match class.as_deref() {
                Some("coalesced") if at.max > ideal + 1 => {
                    bad(format!("coalesced, but {} sectors (ideal {ideal})", at.max))
                }
                Some("uncoalesced") if at.min <= ideal + 1 => bad(format!(
                    "uncoalesced, but {} sectors (ideal {ideal})",
                    at.min
                )),
                _ => {}
            }
        }
    }
    if let (Some(sim), Some((lo, hi, class))) = (&s.conflict, &st.conflict) {
        t.shared += 1;
        if sim.min < *lo || sim.max > *hi {
            bad(format!(
                "conflict degree {}..{} outside static {lo}..{hi}",
                sim.min, sim.max
            ));
        }
        if let Some(at) = &s.conflict_at_max {
            match class.as_deref() {
                Some("none") if at.max > 1 => bad(format!("conflict-free, but {}-way", at.max)),
                Some("conflict") if at.min <= 1 => bad("a conflict, but conflict-free".into()),
                _ => {}
            }
        }
    }
}

fn check_file(path: &Path, t: &mut Tally) {
    let m = compile(path.to_str().unwrap());
    for k in m.kernels().filter(|&k| !m.func(k).is_declaration) {
        let name = m.func(k).name.clone();
        for block in shapes(&m, k) {
            let opts = Options {
                block_dim: Some(BlockDim {
                    dims: block,
                    source: BlockDimSource::Option,
                }),
                ..Options::default()
            };
            let a = analysis::analyze(&m, &opts, &IfdsTaint);
            let figures = warpcheck::checks::measure_all(&a);
            let mut r = Report::new();
            r.add(&a, &figures, &[]);
            let json = serde_json::to_value(&r).unwrap();
            let kernel = json["kernels"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["mangled"] == name.as_str())
                .unwrap();
            let statics = static_sites(kernel);
            // 1000 on the first shape only: loops bounded by it are long.
            let ints: &[i128] = if block == shapes(&m, k)[0] {
                &[128, 1000]
            } else {
                &[128]
            };
            for &int in ints {
                let config = LaunchConfig {
                    grid: [2, 1, 1],
                    block,
                    ..LaunchConfig::default()
                };
                let Ok(o) = sim::simulate(&m, k, &config, &iota_arguments(&m, k, int)) else {
                    t.skipped += 1;
                    continue;
                };
                t.runs += 1;
                for s in report::sites(&m, &o) {
                    let key = sim_key(&s);
                    match statics.get(&key) {
                        Some(st) => compare(&format!("{name} {block:?} n={int}"), st, &s, t),
                        None => t
                            .disagreements
                            .push(format!("{name}: simulated site {key:?} has no static site")),
                    }
                }
            }
        }
    }
}

#[test]
fn no_simulated_warp_contradicts_a_static_figure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = cu_files(&root.join("tests/fixtures/cu"));
    files.extend(cu_files(&root.join("examples")));
    let mut t = Tally::default();
    for f in &files {
        check_file(f, &mut t);
    }
    eprintln!(
        "oracle: {} runs ({} skipped); {} branch sites over {} warps, {} global and {} shared sites checked",
        t.runs, t.skipped, t.branches, t.warps, t.global, t.shared
    );
    assert!(
        t.runs > 100 && t.warps > 500 && t.global > 100 && t.shared > 20,
        "{t:?}"
    );
    assert!(
        t.disagreements.is_empty(),
        "{} disagreements:\n{}",
        t.disagreements.len(),
        t.disagreements.join("\n")
    );
}
