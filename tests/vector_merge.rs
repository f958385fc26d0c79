//! The backend's vector merging (issue 23, cause 5; `memory/lower/vector.rs`):
//! clang -O2 splits a `uint4`, `float4` or `uchar4` access into scalar
//! pieces and `llc` merges them again, so the GPU makes one request of
//! the whole width. Expectations are derived by hand below; the rule is
//! checked against `llc -mcpu=sm_80`'s PTX of the same IR, and the
//! simulator counts the same requests.

#[path = "common/sim.rs"]
mod helpers;

use helpers::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

const FIXTURE: &str = "cu/vector_merge.cu";

/// `(kind, bytes, min, max, ideal)` of a kernel's global access sites, in
/// program order.
fn accesses(report: &Value, name: &str) -> Vec<(String, u64, u64, u64, u64)> {
    kernel(report, name)["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["space"] == "global")
        .map(|s| {
            let n = |k: &str| s["sectors"][k].as_u64().unwrap();
            (
                s["kind"].as_str().unwrap().to_string(),
                s["bytes"].as_u64().unwrap(),
                n("min"),
                n("max"),
                n("ideal"),
            )
        })
        .collect()
}

fn site(kind: &str, bytes: u64, min: u64, max: u64, ideal: u64) -> (String, u64, u64, u64, u64) {
    (kind.to_string(), bytes, min, max, ideal)
}

#[test]
fn merged_vector_accesses_are_one_request_of_their_width() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    // uint4 at t·16 from a cudaMalloc (256-aligned) base: a warp's 32
    // lanes read 32 × 16 = 512 contiguous bytes = 16 sectors, and the
    // ideal for 512 bytes is 16: coalesced. (Counted as four 4-byte
    // pieces it was 16 sectors per request against an ideal of 4.)
    assert_eq!(
        accesses(&r, "copy_uint4"),
        vec![site("load", 16, 16, 16, 16), site("store", 16, 16, 16, 16)]
    );
    // uchar4 at x·4: 32 × 4 = 128 bytes = 4 sectors, ideal 4 (one
    // st.u32, not four st.u8 of 4 sectors each).
    assert_eq!(accesses(&r, "pixels"), vec![site("store", 4, 4, 4, 4)]);
    // Two float4 loads and one float4 store, 16 sectors each.
    assert_eq!(
        accesses(&r, "add_float4"),
        vec![
            site("load", 16, 16, 16, 16),
            site("load", 16, 16, 16, 16),
            site("store", 16, 16, 16, 16)
        ]
    );
    // Three 4-byte fields of a 12-byte record: no vector width; lane t at
    // 12t + 4f spans 12·31 + 4 = 376 bytes = 12 sectors, ideal 4.
    let scalar = [site("load", 4, 12, 12, 4), site("store", 4, 12, 12, 4)];
    assert_eq!(
        accesses(&r, "three_floats"),
        scalar.iter().cycle().take(6).cloned().collect::<Vec<_>>()
    );
    // Stores that may alias the next load keep the pieces apart: lane t
    // at 16t + 4f, 32 lanes = 16 sectors per piece, ideal 4.
    let piece = [site("load", 4, 16, 16, 4), site("store", 4, 16, 16, 4)];
    assert_eq!(
        accesses(&r, "interleaved"),
        piece.iter().cycle().take(8).cloned().collect::<Vec<_>>()
    );
    // The merged accesses are no uncoalesced findings; the others are.
    let warned: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "uncoalesced-access" && f["severity"] == "warning")
        .map(|f| f["kernel"].as_str().unwrap())
        .collect();
    assert!(
        warned
            .iter()
            .all(|k| k.starts_with("three_floats") || k.starts_with("interleaved")),
        "{warned:?}"
    );
}

/// The PTX `ld.global`/`st.global` of each kernel, as `(kind, bytes)`:
/// `ld.global.v4.f32` is one 16-byte load, `st.global.u32` one 4-byte
/// store.
fn ptx_accesses(ptx: &str) -> BTreeMap<String, Vec<(String, u64)>> {
    let mut out: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    let mut current = String::new();
    for line in ptx.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            current = rest.trim_end_matches('(').to_string();
            out.entry(current.clone()).or_default();
            continue;
        }
        let mut parts = line.split_whitespace().next().unwrap_or("").split('.');
        let kind = match parts.next() {
            Some("ld") => "load",
            Some("st") => "store",
            _ => continue,
        };
        let rest: Vec<&str> = parts.collect();
        if rest.first() != Some(&"global") {
            continue;
        }
        let lanes = match rest.get(1) {
            Some(&"v2") => 2,
            Some(&"v4") => 4,
            _ => 1,
        };
        let ty = rest.last().unwrap();
        let bits: u64 = ty[1..].parse().unwrap_or(8);
        out.get_mut(&current)
            .unwrap()
            .push((kind.to_string(), lanes * bits / 8));
    }
    out
}

#[test]
fn the_rule_matches_llc_for_the_fixtures() {
    let llc = llvm_tool("llc");
    if Command::new(&llc).arg("--version").output().is_err() {
        return skip(
            "the_rule_matches_llc_for_the_fixtures",
            &format!("no {llc}"),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let ll = dir.path().join("vector_merge.ll");
    let out = run(Command::new(clang())
        .args([
            "--cuda-device-only",
            "--cuda-gpu-arch=sm_80",
            "-O2",
            "-S",
            "-emit-llvm",
        ])
        .args(no_toolkit_flags())
        .arg(fixture(FIXTURE))
        .arg("-o")
        .arg(&ll));
    assert!(out.status.success(), "{}", stderr(&out));
    let ptx = dir.path().join("vector_merge.ptx");
    let out = run(Command::new(&llc)
        .args(["-mcpu=sm_80", "-o"])
        .arg(&ptx)
        .arg(&ll));
    assert!(out.status.success(), "{}", stderr(&out));
    let from_llc = ptx_accesses(&std::fs::read_to_string(&ptx).unwrap());
    let report = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(&ll)));
    let mut ours: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for k in report["kernels"].as_array().unwrap() {
        let mut v: Vec<(String, u64)> = k["sites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["space"] == "global")
            .map(|s| {
                (
                    s["kind"].as_str().unwrap().into(),
                    s["bytes"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort();
        ours.insert(k["mangled"].as_str().unwrap().to_string(), v);
    }
    let mut theirs = from_llc;
    theirs.values_mut().for_each(|v| v.sort());
    assert_eq!(ours.len(), 5, "{ours:?}");
    assert_eq!(ours, theirs);
}

#[test]
fn the_simulator_counts_the_merged_requests() {
    use warpcheck::sim::{report, Init};
    let m = helpers::compile("tests/fixtures/cu/vector_merge.cu");
    let args = [
        helpers::buf("out", 64 * 16, Init::Zero),
        helpers::buf("in", 64 * 16, Init::Zero),
    ];
    let o = helpers::run(
        &m,
        "copy_uint4",
        &helpers::launch([1, 1, 1], [64, 1, 1]),
        &args,
    );
    // 2 warps, one 16-byte load and one 16-byte store each: 4 requests
    // of 16 sectors (512 bytes).
    assert_eq!((o.totals.requests, o.totals.sectors), (4, 64));
    let sites = report::sites(&m, &o);
    let global: Vec<_> = sites.iter().filter(|s| s.space == Some("global")).collect();
    assert_eq!(global.len(), 2, "{sites:?}");
    for s in global {
        assert_eq!(s.executions, 2);
        assert_eq!(
            s.sectors_at_max.as_ref().map(|r| (r.min, r.max)),
            Some((16, 16))
        );
    }
}
