//! Kernel pointer parameters point into `cudaMalloc` allocations, which
//! are 256-byte aligned: the analysis assumes it (JSON `pointer_params`),
//! adds the offsets the host's launches show (`k<<<…>>>(p + 1)`), and
//! `--no-malloc-alignment` or `MallocAlignment: false` turn it off. With
//! it, 2-D warps get exact sector counts. Figures are counted by hand.

mod common;

use common::*;
use serde_json::Value;

/// `(param, align, offset)` of a kernel's pointer parameters.
fn pointers(r: &Value, name: &str) -> Vec<(String, u64, u64)> {
    kernel(r, name)["pointer_params"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        p["param"].as_str().unwrap().to_string(),
                        p["align"].as_u64().unwrap(),
                        p["offset"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `(kind, min, max)` sectors of the global accesses of a kernel's line.
fn sectors(r: &Value, name: &str, line: u64) -> Vec<(String, u64, u64)> {
    let mut v: Vec<_> = kernel(r, name)["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["line"] == line && s["space"] == "global")
        .map(|s| {
            (
                s["kind"].as_str().unwrap().to_string(),
                s["sectors"]["min"].as_u64().unwrap(),
                s["sectors"]["max"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn p(name: &str, align: u64, offset: u64) -> (String, u64, u64) {
    (name.to_string(), align, offset)
}

fn s(kind: &str, min: u64, max: u64) -> (String, u64, u64) {
    (kind.to_string(), min, max)
}

#[test]
fn host_launches_shift_the_bases() {
    let r = check_json("cu/host_offsets.cu", &[]);
    // shifted<<<…>>>(a + 1, b): out is 4 bytes into its allocation. A
    // warp's 32 floats from 4 + 128w bytes: 5 sectors; in: 4.
    assert_eq!(
        pointers(&r, "shifted"),
        vec![p("out", 256, 4), p("in", 256, 0)]
    );
    assert_eq!(
        sectors(&r, "shifted", 7),
        vec![s("load", 4, 4), s("store", 5, 5)]
    );
    // both<<<…>>>(a, b) and (a + 2, b + 8): out is 0 or 8 bytes in, so
    // only 0 mod 8 holds (4 or 5 sectors); in is 0 or 32 bytes in, 0 mod
    // 32, a whole sector: 4.
    assert_eq!(pointers(&r, "both"), vec![p("out", 8, 0), p("in", 32, 0)]);
    assert_eq!(
        sectors(&r, "both", 12),
        vec![s("load", 4, 4), s("store", 4, 5)]
    );
}

#[test]
fn the_assumption_can_be_turned_off() {
    // Without it a float pointer is only 4-byte aligned: 128 bytes start
    // anywhere in a sector that a float can, 4 or 5 sectors.
    let r = check_json("cu/host_offsets.cu", &["--no-malloc-alignment"]);
    assert_eq!(pointers(&r, "shifted"), vec![p("out", 1, 0), p("in", 1, 0)]);
    assert_eq!(
        sectors(&r, "shifted", 7),
        vec![s("load", 4, 5), s("store", 4, 5)]
    );
    // The configuration's key does the same.
    let dir = tempfile::tempdir().unwrap();
    let cu = dir.path().join("host_offsets.cu");
    std::fs::copy(fixture("cu/host_offsets.cu"), &cu).unwrap();
    std::fs::write(
        dir.path().join(".warpcheck.yaml"),
        "MallocAlignment: false\n",
    )
    .unwrap();
    let out = run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(&cu));
    let r = ok_json(&out);
    assert_eq!(pointers(&r, "both"), vec![p("out", 1, 0), p("in", 1, 0)]);
    assert_eq!(
        sectors(&r, "both", 12),
        vec![s("load", 4, 5), s("store", 4, 5)]
    );
}

/// The naive transpose's store, `out[x * height + y]` in 16×16 blocks: a
/// warp is rows y = 2w and 2w + 1 of 16 lanes x, so lanes (x, 2w) and
/// (x, 2w + 1) are 4 bytes apart and the 16 pairs `4·height` bytes apart.
/// From a 256-byte aligned `out` (and 128·blockIdx terms), a pair starts
/// at 4·(x·height + 2w) mod 32: a multiple of 8 at an even height, so
/// each pair is in one sector: 16. At an odd height x·height mod 8 runs
/// through every residue twice over 16 lanes, so exactly two pairs start
/// at 28 mod 32 and straddle a boundary: 18.
fn transpose_store(extra: &[&str]) -> Value {
    let out = run(warpcheck()
        .args([
            "check",
            "--format",
            "json",
            "--sites",
            "--block-dim",
            "16,16",
        ])
        .args(extra)
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/transpose.cu")));
    let r = ok_json(&out);
    kernel(&r, "transpose_naive")["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "store")
        .unwrap()["sectors"]
        .clone()
}

#[test]
fn a_2d_transpose_store_is_16_sectors_at_even_heights_at_most_18() {
    let even = transpose_store(&["--param", "height=64"]);
    assert_eq!(
        (even["full_min"].as_u64(), even["full_max"].as_u64()),
        (Some(16), Some(16))
    );
    let odd = transpose_store(&["--param", "height=63"]);
    assert_eq!(
        (odd["full_min"].as_u64(), odd["full_max"].as_u64()),
        (Some(18), Some(18))
    );
    // Any height: at most 18 (was 32, the pairs' bases taken as unknown).
    let any = transpose_store(&[]);
    assert_eq!(any["max"].as_u64(), Some(18), "{any}");
    assert_eq!(any["class"], "uncoalesced");
}
