//! `warpcheck run`'s measured figures beside `check`'s claims: each kernel
//! is analysed at the block shapes the program launched it with, and every
//! site the launches ran is compared with the static claim of its key
//! (`agreement`). A claim `check` left undecided is now measured; a
//! definite one is confirmed or, loudly, contradicted (a bug in the
//! analysis).
//!
//! The analysis takes kernel pointers as `cudaMalloc`'s, 256-byte aligned;
//! a launch that passed a pointer inside an allocation at another offset
//! does not meet that assumption, so such a kernel is analysed again with
//! only the alignment its accesses state.

use crate::agreement::{self, MeasuredSite, Tally};
use crate::analysis::{self, BlockDim, BlockDimSource, Options};
use crate::diag::json::Report;
use crate::ir::{FuncId, Module};
use crate::taint::ifds::IfdsTaint;
use serde_json::{json, Value};
use std::path::Path;

/// Adds `static` to every measured site of `report` (a run's JSON) and an
/// `agreement` summary to the report.
pub fn annotate(report: &mut Value, device: &Path) -> Result<(), String> {
    let m = crate::ir::llvm::load_file(device).map_err(|e| e.to_string())?;
    let mut tally = Tally::default();
    let mut counts = Counts::default();
    let kernels = report["kernels"].as_array_mut();
    for entry in kernels.into_iter().flatten() {
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            annotate_kernel(&m, entry, &mut tally, &mut counts)
        }));
        if let Err(e) | Ok(Err(e)) = found.map_err(|_| "internal error".to_string()) {
            entry["static"] = json!({ "error": e });
        }
    }
    let precision = tally.precision();
    report["agreement"] = json!({
        "sites": counts.confirmed + counts.measured + counts.contradicted,
        "confirmed": counts.confirmed,
        "measured": counts.measured,
        "contradicted": counts.contradicted,
        "contradictions": tally.disagreements,
        "precision": {
            "definite": precision.definite,
            "undecided": precision.undecided,
            "shown": precision.shown,
            "ends": precision.ends,
            "ends_met": precision.ends_met,
        },
    });
    Ok(())
}

/// Sites by verdict.
#[derive(Default)]
struct Counts {
    confirmed: usize,
    measured: usize,
    contradicted: usize,
}

fn annotate_kernel(
    m: &Module,
    entry: &mut Value,
    tally: &mut Tally,
    counts: &mut Counts,
) -> Result<(), String> {
    let mangled = entry["mangled"].as_str().unwrap_or_default().to_string();
    let k = m
        .find_function(&mangled)
        .ok_or_else(|| format!("no kernel {mangled} in the device module"))?;
    let block = shape(&entry["block"]).ok_or("no block shape")?;
    let mut statics = static_kernel(m, k, block, true)?;
    let off = misplaced(&statics, entry);
    if !off.is_empty() {
        statics = static_kernel(m, k, block, false)?;
    }
    entry["static"] = json!({
        "block": block,
        "malloc_alignment": off.is_empty(),
        "pointers_off_alignment": off,
    });
    let sites = agreement::static_sites(&statics);
    let least = entry["least_ints"].clone();
    // A parameter the launches did not pass as an integer: no value, so no
    // class that needs one is checked.
    let int = |name: &str| least[name].as_i64().map_or(i128::MIN, i128::from);
    let label = format!(
        "{} at block ({},{},{})",
        entry["kernel"].as_str().unwrap_or(&mangled),
        block[0],
        block[1],
        block[2]
    );
    tally.scope = label.clone();
    for site in entry["sites"].as_array_mut().into_iter().flatten() {
        let Ok(measured) = serde_json::from_value::<MeasuredSite>(site.clone()) else {
            continue;
        };
        if measured.executions == 0 {
            continue;
        }
        let Some(st) = sites.get(&measured.key()) else {
            let what = format!(
                "{label}: {}: ran, but check has no site there",
                measured.place()
            );
            tally.disagreements.push(what.clone());
            counts.contradicted += 1;
            site["static"] = json!({
                "claim": null,
                "verdict": "contradicted",
                "contradictions": [what],
            });
            continue;
        };
        let verdict = agreement::compare(&label, st, &measured, &int, tally);
        let (claim, definite) = st.summary();
        let word = if !verdict.contradictions.is_empty() {
            counts.contradicted += 1;
            "contradicted"
        } else if definite {
            counts.confirmed += 1;
            "confirmed"
        } else {
            counts.measured += 1;
            "measured"
        };
        site["static"] = json!({
            "claim": claim,
            "verdict": word,
            "contradictions": verdict.contradictions,
        });
    }
    Ok(())
}

fn shape(v: &Value) -> Option<[u32; 3]> {
    let d = |i: usize| v[i].as_u64().and_then(|x| u32::try_from(x).ok());
    Some([d(0)?, d(1)?, d(2)?])
}

/// `check --format json`'s entry for kernel `k` analysed at `block`.
fn static_kernel(
    m: &Module,
    k: FuncId,
    block: [u32; 3],
    malloc_alignment: bool,
) -> Result<Value, String> {
    let opts = Options {
        block_dim: Some(BlockDim {
            dims: block,
            source: BlockDimSource::Option,
        }),
        no_explanations: true,
        no_malloc_alignment: !malloc_alignment,
        ..Options::default()
    };
    let a = analysis::analyze_kernels(m, analysis::graphs(m), &opts, &IfdsTaint, &[k]);
    let figures = crate::checks::measure_all(&a);
    let mut r = Report::new();
    r.add(&a, &figures, &[]);
    let v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
    let name = &m.func(k).name;
    v["kernels"]
        .as_array()
        .and_then(|ks| ks.iter().find(|x| x["mangled"] == name.as_str()))
        .cloned()
        .ok_or_else(|| format!("check did not analyse {name}"))
}

/// The pointer parameters some launch passed off the alignment the static
/// figures assumed, as `name at offset N`.
fn misplaced(statics: &Value, entry: &Value) -> Vec<String> {
    let mut off = Vec::new();
    for p in statics["pointer_params"].as_array().into_iter().flatten() {
        let name = p["param"].as_str().unwrap_or_default();
        let align = p["align"].as_u64().unwrap_or(1).max(1);
        let want = p["offset"].as_u64().unwrap_or(0) % align;
        for o in entry["pointer_offsets"][name]
            .as_array()
            .into_iter()
            .flatten()
        {
            let o = o.as_u64().unwrap_or(0);
            if o % align != want {
                off.push(format!("{name} at offset {o}"));
            }
        }
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_inside_an_allocation_is_off_the_assumed_alignment() {
        let statics = json!({"pointer_params": [
            {"param": "a", "align": 256, "offset": 0},
            {"param": "b", "align": 16, "offset": 4},
        ]});
        let entry = json!({"pointer_offsets": {"a": [0, 512], "b": [4, 20, 8]}});
        assert_eq!(misplaced(&statics, &entry), ["b at offset 8"]);
        let entry = json!({"pointer_offsets": {"a": [4]}});
        assert_eq!(misplaced(&statics, &entry), ["a at offset 4"]);
        assert!(misplaced(&statics, &json!({})).is_empty());
    }
}
