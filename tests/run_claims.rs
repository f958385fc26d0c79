//! `warpcheck run` beside `check`: every kernel a program launches is
//! analysed at the block shape of its launches, and each site that ran
//! gets check's claim and a verdict (confirmed, measured where check left
//! it open, contradicted). The program (tests/fixtures/run/claims.cu)
//! checks its own results; the figures below are counted by hand.

mod common;

use common::{fixture, stderr, warpcheck};
use serde_json::Value;

fn claims_report() -> Value {
    report_of("claims")
}

/// The run report of `tests/fixtures/run/NAME.cu`, which must pass its
/// own check.
fn report_of(name: &str) -> Value {
    common::plugin();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json");
    let out = common::run(
        warpcheck()
            .args(["run", "--format", "json", "-o"])
            .arg(&report)
            .arg(fixture(&format!("run/{name}.cu"))),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap()
}

fn kernel<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kernel"].as_str().unwrap().starts_with(name))
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

/// The site of `kind` at `line` (the first of them by column).
fn site<'a>(k: &'a Value, kind: &str, line: u64) -> &'a Value {
    k["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == kind && s["line"] == line)
        .unwrap_or_else(|| panic!("no {kind} at line {line}"))
}

fn per_request(s: &Value) -> f64 {
    s["sectors"]["total"].as_f64().unwrap() / s["executions"].as_f64().unwrap()
}

fn verdict(s: &Value) -> (&str, &str) {
    (
        s["static"]["claim"].as_str().unwrap_or("none"),
        s["static"]["verdict"].as_str().unwrap(),
    )
}

/// 2 x 2 blocks of 32 x 8 threads, 4 rows each: 128 warp requests per
/// access. The load reads 32 consecutive floats of a row (128 bytes, 4
/// sectors); the store writes one float per row of `out`, 256 bytes
/// apart: 32 sectors a request.
#[test]
fn the_naive_transpose_is_confirmed_uncoalesced() {
    let r = claims_report();
    let k = kernel(&r, "transpose_naive");
    assert_eq!(k["block"], serde_json::json!([32, 8, 1]));
    let store = site(k, "store", 14);
    assert_eq!(store["executions"], 128);
    assert_eq!(per_request(store), 32.0);
    let (claim, v) = verdict(store);
    assert!(claim.starts_with("uncoalesced"), "{claim}");
    assert_eq!(v, "confirmed");
    let load = site(k, "load", 14);
    assert_eq!(per_request(load), 4.0);
    assert!(verdict(load).0.starts_with("coalesced"));
    assert_eq!(verdict(load).1, "confirmed");
}

/// `tile[T][T + 1]`: lane `tx` of the column read is at word `33 tx + c`,
/// bank `(tx + c) mod 32`, all different; `tile[T][T]` puts the 32 lanes
/// of `tile[tx][r]` at word `32 tx + r`, all in bank `r`: 32-way.
#[test]
fn padding_and_its_absence_are_confirmed_in_shared_memory() {
    let r = claims_report();
    let tiled = kernel(&r, "transpose_tiled");
    let read = site(tiled, "load", 26);
    assert_eq!(read["conflict"]["max"], 1);
    assert_eq!(verdict(read), ("conflict-free, 1..1-way", "confirmed"));
    let sums = kernel(&r, "column_sums");
    let column = site(sums, "load", 36);
    assert_eq!(column["conflict"]["max"], 32);
    assert_eq!(verdict(column), ("bank conflicts, 32..32-way", "confirmed"));
}

/// `copy(out, in + 1, n - 1)`: the pointer is 4 bytes into its
/// allocation, not where check assumes a `cudaMalloc` pointer is, so the
/// kernel is analysed again without that assumption. Each full warp's 128
/// bytes then straddle 5 sectors; the last of the 128 warps (4095 = 127 *
/// 32 + 31 threads) reads 124 bytes ending on a 128-byte line: 4. `i < n`
/// depends on `n`, which check does not know: measured, it split that one
/// warp.
#[test]
fn a_pointer_inside_its_allocation_is_analysed_without_malloc_alignment() {
    let r = claims_report();
    let k = kernel(&r, "copy");
    assert_eq!(
        k["static"]["pointers_off_alignment"],
        serde_json::json!(["in at offset 4"])
    );
    let load = site(k, "load", 44);
    assert_eq!(load["sectors"]["total"], 127 * 5 + 4);
    assert_eq!(verdict(load).1, "confirmed");
    let branch = site(k, "branch", 43);
    assert_eq!(branch["divergent"], 1);
    assert_eq!(verdict(branch).1, "measured");
}

/// Every site that ran: 2 + 4 + 6 + 3; only the copy's bound check is
/// left open by check.
#[test]
fn no_claim_is_contradicted() {
    let r = claims_report();
    let a = &r["agreement"];
    assert_eq!(a["contradictions"], serde_json::json!([]), "{a}");
    assert_eq!(a["sites"], 15);
    assert_eq!(a["confirmed"], 14);
    assert_eq!(a["measured"], 1);
    assert_eq!(a["contradicted"], 0);
}

#[test]
fn the_text_report_puts_each_claim_beside_its_figures() {
    common::plugin();
    let out = common::run(warpcheck().arg("run").arg(fixture("run/claims.cu")));
    let err = stderr(&out);
    assert!(
        err.contains(
            "32.00 per request [check: uncoalesced, 32..32 sectors per request: confirmed]"
        ),
        "{err}"
    );
    assert!(
        err.contains("14 confirmed, 1 left open by check and measured here, 0 contradicted"),
        "{err}"
    );
    assert!(!err.contains("CONTRADICTION"), "{err}");
}

/// classic.cu: a tree reduction, a shared-atomic histogram, a tiled
/// matrix product and a stencil with a halo, each checked by the program.
/// The reduction's `t < half` runs 8 times in each of 8 warps of 4 blocks
/// (256 warp executions) and splits warp 0 when `half` is 16, 8, 4, 2 and
/// 1: 20 times, as check says of warp 0 and no other. The product's
/// `as[ty][j]` reads one word per half-warp, 16 words (16 banks) apart,
/// and `bs[j][tx]` the same 16 words in both halves: no conflict. The
/// histogram's last `atomicAdd(&bins[t], ...)` by 16 lanes covers 64
/// bytes: 2 sectors in each of 2 blocks.
#[test]
fn classic_kernels_confirm_checks_claims() {
    let r = report_of("classic");
    let a = &r["agreement"];
    assert_eq!(a["contradictions"], serde_json::json!([]), "{a}");
    assert_eq!(a["contradicted"], 0);
    let reduce = site(kernel(&r, "block_sum"), "branch", 17);
    assert_eq!(reduce["executions"], 256);
    assert_eq!(reduce["divergent"], 20);
    assert_eq!(
        verdict(reduce),
        ("splits 1, not 7, unknown 0 of 8 warps", "confirmed")
    );
    let mm = kernel(&r, "matmul");
    for s in mm["sites"].as_array().unwrap() {
        if s["line"] == 47 && s["kind"] == "load" {
            assert_eq!(s["conflict"]["max"], 1, "{s}");
            assert_eq!(verdict(s), ("conflict-free, 1..1-way", "confirmed"));
        }
    }
    let bins = kernel(&r, "histogram")["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "atomic" && s["space"] == "global")
        .unwrap();
    assert_eq!(bins["executions"], 2);
    assert_eq!(bins["sectors"]["total"], 4);
    assert_eq!(verdict(bins).1, "confirmed");
}
