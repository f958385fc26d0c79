//! Each hint's change, applied to a copy of its kernel and analysed again:
//! the figure the hint promised holds. The expectations are worked out by
//! hand in each test's comments; the hint only has to name the change and
//! the figure, and the copy has to bear it out.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// `check --format json --min-impact 0 --sites` of `text` (written as
/// `name` in a fresh directory) at block shape `block`.
fn analyse(name: &str, text: &str, block: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    analyse_path(&path, block)
}

fn analyse_path(path: &Path, block: &str) -> Value {
    let out = run(warpcheck()
        .args(["check", "--format", "json", "--sites", "--min-impact", "0"])
        .args(["--no-host-launches", "--block-dim", block])
        .arg(path));
    ok_json(&out)
}

fn source(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("cu/hints/{name}"))).unwrap()
}

/// The fixture, analysed as it is.
fn original(name: &str, block: &str) -> Value {
    analyse_path(&fixture(&format!("cu/hints/{name}")), block)
}

/// The fixture with `from` replaced by `to` (which must be there).
fn changed(name: &str, block: &str, from: &str, to: &str) -> Value {
    let text = source(name);
    assert!(text.contains(from), "{name} has no `{from}`");
    analyse(name, &text.replace(from, to), block)
}

fn findings<'a>(r: &'a Value, check: &str) -> Vec<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == check)
        .collect()
}

/// The one finding of `check` at `line`.
fn at<'a>(r: &'a Value, check: &str, line: u64) -> &'a Value {
    let all = findings(r, check);
    let here: Vec<_> = all.iter().filter(|f| f["line"] == line).collect();
    assert_eq!(here.len(), 1, "{check} at line {line}: {all:#?}");
    here[0]
}

fn hint(f: &Value) -> String {
    f["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find_map(|n| n.strip_prefix("hint: "))
        .unwrap_or_else(|| panic!("no hint: {f:#}"))
        .to_string()
}

#[test]
fn a_pitch_of_33_makes_the_column_read_conflict_free() {
    // tile[tx][ty] at pitch 32: lane l (tx = l) at word 32·l, all in bank
    // 0: 32-way. At pitch 33, word 33·l: bank l, 1-way. The row-wise
    // store tile[ty][tx] stays 1-way at either pitch.
    let r = original("tile_column.cu", "32,32");
    let h = hint(at(&r, "bank-conflict", 11));
    assert!(
        h.contains(
            "pad the rows of tile to 33 elements (tile[32][33] instead of [32][32]): 1-way here"
        ),
        "{h}"
    );
    let fixed = changed("tile_column.cu", "32,32", "tile[T][T]", "tile[T][T + 1]");
    assert!(findings(&fixed, "bank-conflict").is_empty(), "{fixed:#}");
}

#[test]
fn the_anti_diagonal_of_a_17_wide_tile_wants_a_pitch_of_18() {
    // temp[m - tx + 1][tx + 1]: word (m - tx + 1)·P + tx + 1, lanes P - 1
    // words apart. P = 17: 16 words, 2 banks for 16 lanes, 8-way once
    // m = 15 lets all 16 through. P = 18: 17 words apart, an odd stride,
    // 16 banks: 1-way. The other reads step P - 1 and P + 0 words' rows
    // alike, and the halo writes step whole rows or words.
    let r = original("anti_diagonal.cu", "16");
    let h = hint(at(&r, "bank-conflict", 13));
    assert!(
        h.contains(
            "pad the rows of temp to 18 elements (temp[17][18] instead of [17][17]): 1-way here"
        ),
        "{h}"
    );
    let fixed = changed(
        "anti_diagonal.cu",
        "16",
        "temp[B + 1][B + 1]",
        "temp[B + 1][B + 2]",
    );
    assert!(findings(&fixed, "bank-conflict").is_empty(), "{fixed:#}");
}

/// The sequential form of both reductions' loops.
const SEQUENTIAL: &str =
    "for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {\n    if (t < k) s[t] += s[t + k];";

/// A divergent branch's rows: (counter value, warps that may split).
fn rows(f: &Value) -> Vec<(i64, u64)> {
    f["data"]["iterations"]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows: {f:#}"))
        .iter()
        .map(|r| {
            (
                r["value"].as_i64().unwrap(),
                r["split_max"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `t < k` for k = 128, 64, …, 1 over 8 warps: no warp splits while k is
/// a multiple of 32; below, only warp 0 (lanes 0..k-1 in, the rest out).
fn sequential_rows() -> Vec<(i64, u64)> {
    [128, 64, 32, 16, 8, 4, 2, 1]
        .into_iter()
        .map(|k| (k, u64::from(k % 32 != 0)))
        .collect()
}

#[test]
fn sequential_addressing_for_a_strided_ladder() {
    // s[2kt] and s[2kt + k]: lanes 2k words apart, min(2k, 32)-way while
    // a whole warp is in (2, 4, 8-way for k = 1, 2, 4). Indexed by t, each
    // iteration's lanes are consecutive words: 1-way.
    let r = original("strided_ladder.cu", "256");
    let h = hint(at(&r, "bank-conflict", 10));
    assert!(
        h.contains("use sequential addressing") && h.contains("1-way on every iteration"),
        "{h}"
    );
    let from = "for (unsigned k = 1; k < blockDim.x; k *= 2) {\n    unsigned i = 2 * k * t;\n    if (i < blockDim.x) s[i] += s[i + k];";
    let fixed = changed("strided_ladder.cu", "256", from, SEQUENTIAL);
    assert!(findings(&fixed, "bank-conflict").is_empty(), "{fixed:#}");
    let branch = at(&fixed, "divergent-branch", 9);
    let mut got = rows(branch);
    got.sort_by_key(|r| -r.0);
    assert_eq!(got, sequential_rows());
}

#[test]
fn sequential_addressing_for_an_interleaved_test() {
    // t % 2k == 0: while 2k <= 32 every warp has lanes on both sides (8
    // of 8 split); the sequential form splits at most warp 0.
    let r = original("interleaved.cu", "256");
    let f = at(&r, "divergent-branch", 9);
    let h = hint(f);
    assert!(
        h.contains("use sequential addressing")
            && h.contains("at most 1 warp splits on any iteration"),
        "{h}"
    );
    assert!(rows(f).iter().any(|r| r.1 == 8), "{f:#}");
    let from = "for (unsigned k = 1; k < blockDim.x; k *= 2) {\n    if (t % (2 * k) == 0) s[t] += s[t + k];";
    let fixed = changed("interleaved.cu", "256", from, SEQUENTIAL);
    let mut got = rows(at(&fixed, "divergent-branch", 9));
    got.sort_by_key(|r| -r.0);
    assert_eq!(got, sequential_rows());
    assert!(got.iter().all(|r| r.1 <= 1));
}

#[test]
fn a_structure_of_arrays_only_where_lanes_step_whole_structs() {
    // b[i].mass: 28 bytes between lanes, 32 lanes over 896 bytes: 28 or
    // 29 sectors; one float per lane ideally: 128 bytes, 4 sectors.
    let r = original("fields.cu", "256");
    let h = hint(at(&r, "uncoalesced-access", 5));
    assert!(
        h.contains("one field of an array of 28-byte structures")
            && h.contains("4 sectors per request"),
        "{h}"
    );
    let text = source("fields.cu")
        .replace("const Body *b", "const float *mass")
        .replace("b[i].mass", "mass[i]");
    let fixed = analyse("fields.cu", &text, "256");
    assert!(
        findings(&fixed, "uncoalesced-access").is_empty(),
        "{fixed:#}"
    );
    // A transpose whose stride is 28 bytes only at height = 7 steps no
    // struct: no structure-of-arrays hint there.
    let out = run(warpcheck()
        .args([
            "check",
            "--format",
            "json",
            "--min-impact",
            "0",
            "--no-host-launches",
        ])
        .args(["--block-dim", "16,16", "--param", "height=7"])
        .arg(fixture("cu/hints/swapped.cu")));
    let r = ok_json(&out);
    let h = hint(at(&r, "uncoalesced-access", 5));
    assert!(!h.contains("structure"), "{h}");
}

/// The most sectors per request of the site at `line`.
fn sectors(r: &Value, line: u64) -> u64 {
    r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|k| k["sites"].as_array().unwrap())
        .filter(|s| s["line"] == line && s["sectors"].is_object())
        .map(|s| s["sectors"]["full_max"].as_u64().unwrap())
        .max()
        .unwrap_or_else(|| panic!("no sectors at line {line}"))
}

#[test]
fn swapping_the_thread_dimensions_for_a_parameter_stride() {
    // out[x·height + y] over 16x16: threadIdx.x steps 4·height bytes.
    // Swapped, each half-warp (one threadIdx.y) writes 16 floats in a
    // row, 64 bytes: 2 sectors, or 3 where the row starts mid-sector
    // (height odd); two rows: at most 6, ideal 4.
    let r = original("swapped.cu", "16,16");
    let h = hint(at(&r, "uncoalesced-access", 5));
    assert!(
        h.contains("swap the roles of threadIdx.x and threadIdx.y")
            && h.contains("6 sectors per request (ideal 4)"),
        "{h}"
    );
    let text = source("swapped.cu")
        .replace("blockDim.x + threadIdx.x", "blockDim.x + threadIdx.Y")
        .replace("blockDim.y + threadIdx.y", "blockDim.y + threadIdx.x")
        .replace("threadIdx.Y", "threadIdx.y");
    let fixed = analyse("swapped.cu", &text, "16,16");
    assert!(sectors(&fixed, 5) <= 6, "{fixed:#}");
}

#[test]
fn a_register_accumulator_for_a_store_in_every_iteration() {
    // out[j2·M + j1] is stored on each of K iterations at an address the
    // loop keeps; accumulated in a register, it is stored once.
    let r = original("accumulate.cu", "256");
    let f = at(&r, "uncoalesced-access", 6);
    assert!(hint(f).contains("accumulate in a register and store once after the loop"));
    let executions = |f: &Value| f["impact"]["inputs"]["executions"].as_f64().unwrap();
    assert!(executions(f) > 1.0, "{f:#}");
    let from = "  for (int k = 0; k < K; k++)\n    out[j2 * M + j1] += a[k * M + j2];";
    let to = "  float acc = out[j2 * M + j1];\n  for (int k = 0; k < K; k++)\n    acc += a[k * M + j2];\n  out[j2 * M + j1] = acc;";
    let fixed = changed("accumulate.cu", "256", from, to);
    // The load before the loop and the store after it are one cause.
    let after: Vec<_> = findings(&fixed, "uncoalesced-access")
        .into_iter()
        .filter(|f| {
            f["line"] == 8
                || f["data"]["lines"]
                    .as_array()
                    .is_some_and(|l| l.contains(&8.into()))
        })
        .collect();
    assert_eq!(after.len(), 1, "{fixed:#}");
    assert_eq!(executions(after[0]), 1.0, "{:#}", after[0]);
}

#[test]
fn a_range_guard_is_not_told_to_be_uniform() {
    // threadIdx.x < 3 over 256 threads: lanes 0..2 of warp 0 in, the
    // rest out; warps 1..7 all out. Only the warp the bound falls in.
    let r = original("range_guard.cu", "256");
    let f = at(&r, "divergent-branch", 4);
    let h = hint(f);
    assert!(!h.contains("uniform per warp"), "{h}");
    assert_eq!(f["data"]["split_max"], 1, "{f:#}");
}

#[test]
fn lanes_along_the_loop_for_a_row_per_thread() {
    // m[r·1024 + c]: lanes 4096 bytes apart, one sector each (32); the
    // loop on c steps 4 bytes. A warp per row, lanes on c, c + 1, …: 32
    // floats in a row, 128 bytes: 4 sectors aligned, 5 at worst.
    let r = original("row_sums.cu", "256");
    let h = hint(at(&r, "uncoalesced-access", 7));
    assert!(
        h.contains("let neighbouring lanes take neighbouring values of c")
            && h.contains("5 sectors per request (ideal 4)"),
        "{h}"
    );
    let from = "  int r = blockIdx.x * blockDim.x + threadIdx.x;\n  if (r >= rows) return;\n  float s = 0.0f;\n  for (int c = 0; c < COLS; c++) s += m[r * COLS + c];";
    let to = "  int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;\n  if (r >= rows) return;\n  float s = 0.0f;\n  for (int c = lane; c < COLS; c += 32) s += m[r * COLS + c];\n  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffff, s, o);";
    let fixed = changed("row_sums.cu", "256", from, to);
    assert!(sectors(&fixed, 7) <= 5, "{fixed:#}");
}

#[test]
fn a_recurrence_along_a_row_is_stored_transposed() {
    // x[r·n + c] depends on x[r·n + c - 1]: the loop on c cannot go to the
    // lanes. Lanes step rows, 4·n bytes apart (a sector each for n >= 8).
    // Transposed, x[c·rows + r]: 32 floats side by side, 128 bytes, 4
    // sectors aligned, 5 at worst.
    let r = original("recurrence.cu", "256");
    let hints: Vec<String> = findings(&r, "uncoalesced-access")
        .into_iter()
        .map(hint)
        .collect();
    assert!(!hints.is_empty(), "{r:#}");
    for h in &hints {
        assert!(!h.contains("loop on c"), "{h}");
        assert!(
            h.contains("store the array transposed")
                && h.contains("5 sectors per request (ideal 4)"),
            "{h}"
        );
    }
    let text = source("recurrence.cu")
        .replace("int n)", "int n, int rows)")
        .replace("x[r * n + c - 1]", "x[(c - 1) * rows + r]")
        .replace("r * n + c", "c * rows + r");
    let fixed = analyse("recurrence.cu", &text, "256");
    assert!(sectors(&fixed, 6) <= 5, "{fixed:#}");
}

#[test]
fn a_sparse_level_of_a_scan_is_read_from_a_compact_array() {
    // data[2·iter·g + iter − 1]: lanes 8·iter bytes apart, a sector each
    // once iter ≥ 4 (32 per request). The parameter spaces and places the
    // lanes, so there is no row to transpose: read compactly, data[g] is
    // 32 words side by side, 4 sectors aligned, 5 at worst.
    let r = original("scan_level.cu", "256");
    let f = at(&r, "uncoalesced-access", 5);
    let h = hint(f);
    assert!(
        h.contains("write them to a compact array")
            && h.contains("5 sectors per request (ideal 4)"),
        "{h}"
    );
    assert!(!h.contains("transposed"), "{h}");
    let fixed = changed(
        "scan_level.cu",
        "256",
        "data[2 * iter * g + iter - 1]",
        "data[g]",
    );
    assert!(sectors(&fixed, 5) <= 5, "{fixed:#}");
}

#[test]
fn a_state_updated_in_a_loop_is_worked_on_as_a_local_copy() {
    // states[t].w[i & 15]: lanes 64 bytes apart (32 sectors per request),
    // loaded and stored on each of n iterations. Copied to a local State
    // before the loop and back after it, the global accesses of states
    // run once per thread, outside the loop (lines 7 and 15 of the copy).
    let r = original("rng_state.cu", "256");
    let h = hint(at(&r, "uncoalesced-access", 9));
    assert!(
        h.contains("its own 64-byte structure in this loop")
            && h.contains("copy it to a local variable"),
        "{h}"
    );
    assert!(!h.contains("structure of arrays"), "{h}");
    let from = "  float sum = 0.0f;\n  for (int i = 0; i < n; i++) {\n    unsigned x = states[t].w[i & 15];";
    let to = "  State s = states[t];\n  float sum = 0.0f;\n  for (int i = 0; i < n; i++) {\n    unsigned x = s.w[i & 15];";
    let text = source("rng_state.cu")
        .replace(from, to)
        .replace("    states[t].w[i & 15] = x;", "    s.w[i & 15] = x;")
        .replace("  out[t] = sum;", "  states[t] = s;\n  out[t] = sum;");
    assert!(text.contains("State s = states[t];") && text.contains("states[t] = s;"));
    let fixed = analyse("rng_state.cu", &text, "256");
    for f in findings(&fixed, "uncoalesced-access") {
        let line = f["line"].as_u64().unwrap();
        assert!(
            line == 7 || line == 15,
            "an access of states left in the loop: {f:#}"
        );
        let runs = f["impact"]["inputs"]["executions"].as_f64().unwrap();
        assert_eq!(runs, 1.0, "{f:#}");
    }
}

#[test]
fn a_loop_that_maps_a_row_per_thread_is_stored_transposed() {
    // y[t·91 + i] for i < 91: lanes 364 bytes apart, a sector each (32).
    // The loop maps each element (nothing carried from one i to the
    // next), so the advice is the layout, not lanes along i: transposed,
    // y[i·4096 + t] is 32 floats side by side, 4 sectors aligned, 5 at
    // worst.
    let r = original("row_map.cu", "256");
    for f in findings(&r, "uncoalesced-access") {
        let h = hint(f);
        assert!(!h.contains("loop on i"), "{h}");
        assert!(
            h.contains("store the array transposed")
                && h.contains("5 sectors per request (ideal 4)"),
            "{h}"
        );
    }
    let text = source("row_map.cu").replace("t * EQ + i", "i * 4096 + t");
    let fixed = analyse("row_map.cu", &text, "256");
    assert!(sectors(&fixed, 7) <= 5, "{fixed:#}");
}

#[test]
fn a_row_end_written_as_an_or_is_a_row_per_lane() {
    // r·1024 | 1023 is r·1024 + 1023: lanes 4096 bytes apart (the message
    // says so, and the hint is the transposed layout); transposed, the
    // lanes' elements x[1023·1024 + r] are side by side: at most 5.
    let r = original("last_column.cu", "256");
    let all = findings(&r, "uncoalesced-access");
    assert!(!all.is_empty(), "{r:#}");
    for f in all {
        let message = f["message"].as_str().unwrap();
        assert!(message.contains("4096 bytes apart"), "{f:#}");
        assert!(hint(f).contains("store the array transposed"), "{f:#}");
    }
    let text = source("last_column.cu").replace("r * N + (N - 1)", "(N - 1) * N + r");
    let fixed = analyse("last_column.cu", &text, "256");
    assert!(sectors(&fixed, 6) <= 5, "{fixed:#}");
}
