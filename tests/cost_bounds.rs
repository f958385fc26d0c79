//! Cost bounds checked against hand counts, through `warpcheck bound` and
//! `check --bounds`.

mod common;

use common::*;
use serde_json::Value;

fn bound_json(file: &str, kernel: &str, metric: &str, extra: &[&str]) -> Value {
    let out = run(warpcheck()
        .args([
            "bound", "--format", "json", "--kernel", kernel, "--metric", metric,
        ])
        .args(extra)
        .arg(fixture(file)));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// `bound --format json`'s leading-degree-first polynomial: the bound
/// itself when it has one piece, else its first piece.
fn first_piece(j: &Value) -> String {
    let b = match j.get("pieces") {
        Some(ps) => &ps[0]["bound"],
        None => &j["bound"],
    };
    b.as_str().unwrap_or_default().to_string()
}

#[test]
fn vector_add_pays_three_aligned_requests_and_one_split() {
    // A[i], B[i], C[i] with i = 256·blockIdx.x + threadIdx.x: 32 lanes × 4
    // bytes from a 256-aligned buffer at a multiple of 128 bytes = 4 sectors
    // each, 12 per warp, whatever N is.
    let j = bound_json(
        "cu/cost_vector_add.cu",
        "vectorAdd",
        "sectors",
        &["--param", "N=1000"],
    );
    assert_eq!(j["kernel"], "vectorAdd");
    assert_eq!(j["metric"], "sectors");
    assert_eq!(j["bound"], "12");
    assert_eq!(j["value"], 12.0);
    // The bounds check `i < N` may split a warp once.
    let j = bound_json("cu/cost_vector_add.cu", "vectorAdd", "divwarps", &[]);
    assert_eq!(j["bound"], "1");
    assert!(j["value"].is_null() || j["value"] == 1.0);
}

#[test]
fn rotated_loop_costs_per_pair_of_rows() {
    // addSub2 at 64 threads: per iteration j (j = 0, 2, 4, ...) two loads of
    // A[i] (4 sectors each: i = 64·blockIdx.x + threadIdx.x is 128-byte
    // aligned) and a load and a store of B[j·w + i] and of B[(j+1)·w + i]
    // (w unknown: 5 sectors each) = 8 + 20 = 28. The rotated loop runs
    // while j + 2 < h after a first iteration under h > 0: ⌈(h − 2)/2⌉
    // back edges (j + 2 = 2, 4, ... below h), one iteration more than
    // that: 28·⌈max(0, h − 2)/2⌉ + 28. At h = 10: j = 0, 2, 4, 6, 8, five
    // iterations, 140 (the ceiling is exact; (h + 1)/2 paid 154).
    let j = bound_json(
        "cu/cost_addsub.cu",
        "addSub2",
        "sectors",
        &["--block-dim", "64", "--param", "h=10", "--param", "w=64"],
    );
    assert_eq!(j["bound"], "28·⌈max(0, h − 2)/2⌉ + 28");
    assert_eq!(j["value"], 140.0);
}

#[test]
fn triangular_loops_give_a_quadratic_bound() {
    // Row i reads i values, 4 sectors per warp each (32 consecutive floats
    // at a multiple of 128 bytes): Σ_{i<n} 4·i = 2·n² − 2·n, so the leading
    // term is 2·n² whatever the unrolling adds.
    let out = run(warpcheck()
        .args(["check", "--bounds", "--format", "json", "--block-dim", "32"])
        .arg(fixture("cu/cost_triangular.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &kernel(&report, "triangular")["bounds"]["per_warp"]["sectors"];
    // The leading-degree-first polynomial comes first (the bound may be
    // the least of it and others), and it alone is `terms`.
    let bound = b["bound"].as_str().unwrap();
    let first = bound.strip_prefix("min(").unwrap_or(bound);
    assert!(first.starts_with("2·max(0, n)·max(0, n)"), "{bound}");
    let quadratic = b["terms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["factors"].as_array().unwrap().len() == 2)
        .expect("a degree-2 term");
    assert_eq!(quadratic["coeff"], serde_json::json!([2, 1]));
    assert_eq!(
        quadratic["factors"],
        serde_json::json!(["max0(n)", "max0(n)"])
    );
    // The outer loop (line 7) carries the whole quadratic part.
    let outer = b["loops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["line"] == 7)
        .expect("the outer loop's share");
    assert!(outer["bound"]
        .as_str()
        .unwrap()
        .starts_with("2·max(0, n)·max(0, n)"));
}

#[test]
fn a_loop_on_memory_has_no_bound_for_what_it_costs() {
    // `while (i >= 0) i = next[i]` can run any number of times: sectors and
    // steps have no bound, and the reason names the loop's line. It has no
    // shared access, so conflicts are bounded (by 0).
    let j = bound_json("cu/cost_nobound.cu", "chase", "sectors", &[]);
    assert_eq!(j["bound"], "no bound");
    assert!(j["value"].is_null());
    let reason = j["reason"].as_str().unwrap();
    assert!(reason.contains("line 7"), "{reason}");
    let j = bound_json("cu/cost_nobound.cu", "chase", "conflicts", &[]);
    assert_eq!(j["bound"], "0");
}

#[test]
fn weights_scale_steps() {
    // Every instruction and phi copy weighing 2 doubles the steps bound.
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("weights");
    std::fs::write(&w, "inst = 2\nphi = 2\n").unwrap();
    let one = bound_json(
        "cu/cost_vector_add.cu",
        "vectorAdd",
        "steps",
        &["--param", "N=1"],
    );
    let two = bound_json(
        "cu/cost_vector_add.cu",
        "vectorAdd",
        "steps",
        &["--param", "N=1", "--weights", w.to_str().unwrap()],
    );
    assert_eq!(
        two["value"].as_f64().unwrap(),
        2.0 * one["value"].as_f64().unwrap()
    );
}

#[test]
fn bad_metric_and_weights_are_usage_errors() {
    let out = run(warpcheck()
        .args(["bound", "--metric", "flops"])
        .arg(fixture("cu/cost_vector_add.cu")));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--metric"), "{}", stderr(&out));
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("weights");
    std::fs::write(&w, "inst 2\n").unwrap();
    let out = run(warpcheck()
        .args(["bound", "--weights", w.to_str().unwrap()])
        .arg(fixture("cu/cost_vector_add.cu")));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("line 1"), "{}", stderr(&out));
}

#[test]
fn loop_facts_from_assume_shift_and_range_end() {
    // Each iteration of the three loops stores out[32·k + threadIdx.x]:
    // 32 lanes × 4 bytes at a multiple of 128 bytes from a 256-aligned
    // buffer = 4 sectors. Block 256 (8 warps).
    let bound = |kernel: &str| {
        let extra = ["--block-dim", "256"];
        bound_json("ir/cost_loop_facts.ll", kernel, "sectors", &extra)["bound"].clone()
    };
    // `k + 1 == n & 3`, entered under `assume(n & 3 != 0)`: at most 3
    // iterations (without the assume, n & 3 = 0 would wrap the counter).
    assert_eq!(bound("remainder"), "12");
    // s = 256 >> 1 = 128, halved until 0: 128, 64, ..., 1 = 8 iterations.
    assert_eq!(bound("halving"), "32");
    // `(h − 1) >> 1 ≠ 0` guards the loop, so the even count
    // E = (((h − 1) >> 1) + 1) & −2 is at least 2; j = 0, 2, ... meets E
    // after E/2 ≤ ((h − 1)/2 + 1)/2 = (h + 1)/4 iterations: 4·(h + 1)/4.
    // The guard needs h ≥ 3, where (h + 1)/4 ≤ h/3: the constant-first
    // piece 4·h/3 has no constant (the loop is not entered below 3), so
    // it is the smaller one below h = 3 and both are 4 at h = 3.
    assert_eq!(bound("pairs"), "min(max(0, h) + 1, 4·max(0, h)/3)");
    // clang 22's unrolled loop: n iterations, 4 a main-loop trip and 1 a
    // remainder trip, each storing one row (4 sectors): 4·n in all, the
    // remainder paying with the main loop (alone it paid 3 trips, 12
    // sectors, on top).
    assert_eq!(bound("unrolled"), "4·max(0, n)");
}

#[test]
fn without_cbc_a_bound_is_missing_with_the_reason_and_the_rest_stands() {
    // CBC is opened only when a bound is asked for. Pointed at a library
    // that is not there, `bound` still exits 0: the bound is "no bound",
    // the reason says how to install CBC.
    let out = run(warpcheck()
        .env("WARPCHECK_CBC", "/nonexistent/libCbcSolver.so.3")
        .args([
            "bound",
            "--format",
            "json",
            "--kernel",
            "vectorAdd",
            "--metric",
            "sectors",
        ])
        .arg(fixture("cu/cost_vector_add.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(j["bound"], "no bound");
    let reason = j["reason"].as_str().unwrap();
    assert!(
        reason.contains("COIN-OR CBC could not be loaded"),
        "{reason}"
    );
    assert!(reason.contains("coinor-libcbc3"), "{reason}");
    // `check` without --bounds never needs it.
    let out = run(warpcheck()
        .env("WARPCHECK_CBC", "/nonexistent/libCbcSolver.so.3")
        .args(["check", "--format", "json"])
        .arg(fixture("cu/cost_vector_add.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
}

#[test]
fn a_divergent_loop_exit_splits_a_warp_at_most_31_times_per_entry() {
    // escape: each split at `x > 0 && k < n` sends at least one lane out
    // and keeps at least one in, so 32 lanes split at most 31 times, for
    // any n (not n times); clang rotates the loop, and its guard before
    // the loop (the same test at k = 0) may split once more: 32.
    let j = bound_json(
        "cu/cost_splits.cu",
        "escape",
        "divwarps",
        &["--block-dim", "32", "--param", "n=1000"],
    );
    // Charged each time instead, the guard and the tests after the first
    // n − 1 iterations can split (after the n-th, `k < n` sends every
    // lane out): n. The bound is the least of the two.
    assert_eq!(j["bound"], "min(32, max(0, n))");
    assert_eq!(j["value"], 32.0);
    // The simulator agrees: lanes with x = 0, 1, ..., 31 (iota) leave on
    // 32 different iterations (lane 0 at the guard): 31 splits.
    let out = run(warpcheck()
        .args(["bound", "--format", "json", "--kernel", "escape"])
        .args([
            "--metric",
            "divwarps",
            "--block-dim",
            "32",
            "--param",
            "n=1000",
        ])
        .args([
            "--simulate",
            "--arg",
            "v=buf:128:iota",
            "--arg",
            "out=buf:128",
        ])
        .arg(fixture("cu/cost_splits.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["simulated"], 31, "{j}");
    // At n = 3 lanes 0, 1 and 2 leave at the guard and after iterations
    // 1 and 2, the rest after the third: 3 splits, the bound's 3.
    let out = run(warpcheck()
        .args(["bound", "--format", "json", "--kernel", "escape"])
        .args([
            "--metric",
            "divwarps",
            "--block-dim",
            "32",
            "--param",
            "n=3",
        ])
        .args([
            "--simulate",
            "--arg",
            "v=buf:128:iota",
            "--arg",
            "out=buf:128",
        ])
        .arg(fixture("cu/cost_splits.cu")));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["value"], 3.0, "{j}");
    assert_eq!(j["simulated"], 3, "{j}");
}

#[test]
fn a_block_stride_loop_splits_a_warp_once_per_entry() {
    // blockStride at 64 threads: the starts of a warp's lanes span 31 <
    // 64 = the step, so they leave on at most two consecutive iterations:
    // one split, whatever n (it was ⌈n/64⌉ before). clang rotates the
    // loop behind the guard `tid < n`, the same test on the start: lanes
    // failing it leave on "iteration 0", so guard and loop together still
    // split at most once.
    let j = bound_json(
        "cu/cost_splits.cu",
        "blockStride",
        "divwarps",
        &["--block-dim", "64", "--param", "n=100000"],
    );
    assert_eq!(j["bound"], "1");
    // Blocks of 16 threads: one warp of 16 lanes whose starts span 15 <
    // 16: still one split.
    let j = bound_json(
        "cu/cost_splits.cu",
        "blockStride",
        "divwarps",
        &["--block-dim", "16", "--param", "n=1000"],
    );
    assert_eq!(j["bound"], "1");
    // Entered once per row (the outer loop kept rolled): m splits.
    let j = bound_json(
        "cu/cost_splits.cu",
        "blockStrideRows",
        "divwarps",
        &["--block-dim", "64", "--param", "n=1000", "--param", "m=7"],
    );
    assert_eq!(j["bound"], "max(0, m)");
}

/// `bound --simulate` of `kernel` in cost_shared_range.cu at one warp of
/// 32 threads, with `v[L] = L`.
fn shared_range_bound(kernel: &str) -> Value {
    let out = run(warpcheck()
        .args(["bound", "--format", "json", "--kernel", kernel])
        .args(["--metric", "conflicts", "--block-dim", "32", "--simulate"])
        .args(["--arg", "v=buf:128:iota", "--arg", "out=buf:128"])
        .arg(fixture("cu/cost_shared_range.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn an_unknown_shared_index_conflicts_at_most_as_its_array_allows() {
    // s[(32·v) % 256] over 256 words: 8 of them in each bank, so at most
    // an 8-way conflict, 7 extra wavefronts (31 before); the store
    // s[tid % 256] is conflict-free. v[L] = L reaches it: the words
    // 32·(L % 8) are 8 distinct words of bank 0.
    let j = shared_range_bound("lookup256");
    assert_eq!(j["bound"], "7");
    assert_eq!(j["simulated"], 7, "{j}");
    // s[(32·v) % 100] over 100 words: banks 0-3 hold 4 of them (bank 0:
    // 0, 32, 64, 96), so 3 extra at most; v[L] = L reaches all four of
    // bank 0 (L = 0, 1, 2, 3).
    let j = shared_range_bound("lookup100");
    assert_eq!(j["bound"], "3");
    assert_eq!(j["simulated"], 3, "{j}");
}

#[test]
fn a_symbolic_row_stride_costs_each_row_its_sectors() {
    // matrixMulSDK in 16 × 16 blocks: A[a + wA·ty + tx] with wA unknown.
    // A warp holds two rows (ty = 2w, 2w + 1) of 16 consecutive floats;
    // each row starts at its own unknown 4-aligned address, so 64 bytes
    // span at most 3 sectors: 6 per request (not 32, one per lane). The
    // same for B[b + wB·ty + tx] and the store C[c + wB·ty + tx].
    // Unknown alignment: notes, which the JSON carries with --notes.
    let out = run(warpcheck()
        .args([
            "check",
            "--format",
            "json",
            "--notes",
            "--block-dim",
            "16,16",
        ])
        .arg(fixture("cu/cost_tiled.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let maxes: Vec<(u64, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "uncoalesced-access")
        .filter(|f| f["function"].as_str().unwrap().starts_with("matrixMulSDK"))
        .map(|f| {
            (
                f["line"].as_u64().unwrap(),
                f["data"]["max"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(maxes.len(), 3, "{maxes:?}");
    assert!(maxes.iter().all(|&(_, m)| m == 6), "{maxes:?}");
}

#[test]
fn an_unrolled_loop_main_part_is_charged_its_own_iterations_only() {
    // addSub0 at -O2: `for (i = 0; i < w; i++)` unrolled by 2. The main
    // loop runs while i + 2 != w & ~1, entered only when w > 0 and w != 1,
    // i.e. w >= 2: (w & ~1)/2 <= w/2 iterations of 27 instructions and 2
    // phi copies = 29·w/2, with no extra iteration for the remainder
    // (which ran 29 more before: the guard w != 1 gave no fact once the
    // ranges had already stepped w's least value to 2).
    let out = run(warpcheck()
        .args(["check", "--bounds", "--format", "json", "--block-dim", "64"])
        .arg(fixture("cu/cost_addsub.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let loops = kernel(&report, "addSub0")["bounds"]["per_warp"]["steps"]["loops"]
        .as_array()
        .unwrap()
        .clone();
    let bounds: Vec<&str> = loops.iter().map(|l| l["bound"].as_str().unwrap()).collect();
    assert_eq!(bounds, ["29·max(0, w)/2"], "{loops:?}");
}

#[test]
fn a_laddered_loop_branch_pays_only_the_iterations_that_can_split() {
    // reduce2 at 256 threads: `tid < s` for s = 128, 64, ..., 1 splits a
    // warp only for s = 16, 8, 4, 2, 1 (warp 0; from 32 up whole warps
    // agree): 5, not 8. With the bounds check `i < n` (one split) and
    // `tid == 0` (one): 7 for warp 0.
    let out = run(warpcheck()
        .args(["bound", "--format", "json", "--kernel", "reduce2"])
        .args([
            "--metric",
            "divwarps",
            "--block-dim",
            "256",
            "--param",
            "n=5",
        ])
        .args(["--shared-bytes", "1024", "--simulate"])
        .args(["--arg", "g_idata=buf:1024:iota", "--arg", "g_odata=buf:4"])
        .arg(fixture("cu/cost_reduce.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["bound"], "7");
    // n = 5 puts the bounds check's split in warp 0 too: all 7 happen.
    assert_eq!(j["simulated"], 7, "{j}");
}

#[test]
fn a_guarded_grid_stride_loop_runs_its_trip_factor_not_one_more() {
    // histogram256 at 64 threads: `for (pos = 64·blockIdx.x + tid; pos < n;
    // pos += 64·gridDim.x)`. A lane starts at pos >= 0, so it runs at most
    // ⌈n/(64·gridDim.x)⌉ iterations; clang's guard `pos < n` before the
    // rotated loop gives n >= 1 on the way in, so that factor is at least 1
    // and the first iteration is part of it (it was charged on top: one
    // iteration more). Each iteration's atomicAdd on s_hist[data[pos]]
    // serialises the lanes that hit one bin: all 32 when the data agree,
    // 32 wavefronts for the ideal 1, 31 extra (a load's lanes on one word
    // would be one broadcast, and 256 words put at most 8 on a bank).
    // At n = 1000 and 3 blocks: ⌈1000/192⌉ = 6 iterations, 186.
    let j = bound_json(
        "cu/cost_histogram.cu",
        "histogram256",
        "conflicts",
        &["--block-dim", "64", "--param", "n=1000", "--grid", "3"],
    );
    assert_eq!(j["bound"], "31·⌈n/(64·gridDim.x)⌉", "{j}");
    assert_eq!(j["value"], 186.0, "{j}");
}

#[test]
fn an_unrolled_loop_and_its_remainder_pay_as_one_loop() {
    // unrollChain: `for (j = 0; j < n; j++) x = x * x + 1.0f`, which clang
    // unrolls by 8: a main loop of 21 steps a round (2 phi copies, 16
    // float ops, add, icmp, br) while j + 8 != n & ~7, and a remainder of
    // 7 steps a trip (2 phis, fmul, fadd, add, icmp, br) for n & 7 trips.
    // Straight-line: 10 steps before `n > 0`, 3 in the guard block, 2
    // before the main loop, 4 in the middle block, 3 at the end. With
    // n = 8q + r the worst path is 22 + 21q + 7r (20 + 7r when q = 0).
    // Counting both loops as the one loop of n trips: 21n/8 pays the
    // main rounds and 21/8 of each remainder trip, the constant pays the
    // rest, 22 + (7 − 21/8)·7 = 421/8 at r = 7 (the remainder's 7 trips
    // were charged on top of 21n/8 before: 22 + 49 + ...). At n = 15
    // (q = 1, r = 7) the bound is (315 + 421)/8 = 92, and so is the worst
    // path.
    let j = bound_json(
        "cu/cost_unroll.cu",
        "unrollChain",
        "steps",
        &["--block-dim", "32", "--param", "n=15", "--param", "m=0"],
    );
    if warpcheck::ir::major::LLVM_MAJOR >= 22 {
        // Clang 22 lays the remainder out differently: the rounds still
        // pay 21/8 a trip, the constant is looser, and the bound still
        // covers the worst path.
        let bound = first_piece(&j);
        assert!(bound.starts_with("21·max(0, n)/8 + "), "{j}");
        assert!(j["value"].as_f64().is_some_and(|v| v >= 92.0), "{j}");
        return;
    }
    // The leading-degree-first piece (the bound is the least of it and a
    // constant-first one: see the next test).
    assert_eq!(first_piece(&j), "21·max(0, n)/8 + 421/8", "{j}");
    assert_eq!(j["value"], 92.0, "{j}");
}

#[test]
fn an_unrolled_loop_gets_the_least_of_three_bounds() {
    // unrollChain (see above): with n = 8q + r the worst path is
    // 22 + 21q + 7r for q ≥ 1 and 20 + 7r for 1 ≤ n < 8, i.e. 20 + 7n
    // there; n ≤ 0 skips the loop: 10 steps before `n > 0` and 3 at the
    // end, 13. Three LP orders give three lines:
    // - leading degree first: 21·n/8 + 421/8, exact at n = 15 (92);
    // - constant first: 13 at n = 0, then the least slope from there,
    //   14·n + 13 (27 at n = 1, exact);
    // - every atom at 1 first: the least value at n = 1 (27), then the
    //   least slope: 7·n + 20, which covers every n (22 + 21q + 7r ≤
    //   20 + 56q + 7r for q ≥ 1) and is exact for 1 ≤ n < 8.
    // At n = 0: min(421/8, 13, 20) = 13; at n = 5: min(65.75, 83, 55) =
    // 55; at n = 15: min(92, 223, 125) = 92: the worst path each time.
    let at = |n: &str| {
        bound_json(
            "cu/cost_unroll.cu",
            "unrollChain",
            "steps",
            &[
                "--block-dim",
                "32",
                "--param",
                n,
                "--param",
                "m=0",
                "--simulate",
            ],
        )
    };
    let (zero, small, large) = (at("n=0"), at("n=5"), at("n=15"));
    // Each value is the least of its pieces, and covers the simulation.
    for j in [&zero, &small, &large] {
        let least = j["pieces"].as_array().map(|ps| {
            ps.iter()
                .filter_map(|p| p["value"].as_f64())
                .fold(f64::MAX, f64::min)
        });
        assert_eq!(j["value"].as_f64(), least, "{j}");
        assert!(j["value"].as_f64() >= j["simulated"].as_f64(), "{j}");
    }
    if warpcheck::ir::major::LLVM_MAJOR >= 22 {
        return; // clang 22's remainder is laid out differently (see above)
    }
    let all = "min(21·max(0, n)/8 + 421/8, 14·max(0, n) + 13, 7·max(0, n) + 20)";
    assert_eq!(small["bound"], all, "{small}");
    let values = |j: &Value| -> Vec<f64> {
        let ps = j["pieces"].as_array().cloned().unwrap_or_default();
        ps.iter().filter_map(|p| p["value"].as_f64()).collect()
    };
    assert_eq!(values(&zero), [52.625, 13.0, 20.0], "{zero}");
    assert_eq!(zero["value"], 13.0, "{zero}");
    assert_eq!(zero["simulated"], 13, "{zero}");
    assert_eq!(values(&small), [65.75, 83.0, 55.0], "{small}");
    assert_eq!(small["value"], 55.0, "{small}");
    assert_eq!(small["simulated"], 55, "{small}");
    assert_eq!(large["value"], 92.0, "{large}");
    assert_eq!(large["simulated"], 92, "{large}");
    // The text form says which pieces it took the least of.
    let out = run(warpcheck()
        .args(["bound", "--kernel", "unrollChain", "--metric", "steps"])
        .args(["--block-dim", "32", "--param", "n=5", "--param", "m=0"])
        .arg(fixture("cu/cost_unroll.cu")));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("≤ {all}")), "{text}");
    assert!(
        text.contains("at these parameters: 55 (the least of 65.75, 83, 55)"),
        "{text}"
    );
}

#[test]
fn a_launch_that_skips_the_loop_pays_only_what_it_runs() {
    // addSub0 at w = 0: clang rotates `for (i = 0; i < w; i++)` behind the
    // guard `w > 0`, so a warp runs the guard's icmp and br and the ret:
    // 3 steps. The loop's atom starts at `w − 1` after the guard (it is at
    // least 1 there), so the first iteration pays the setup and the
    // constant-first piece is 3 + (its slope)·w: exactly 3 at w = 0.
    let at = |w: &str| {
        bound_json(
            "cu/cost_addsub.cu",
            "addSub0",
            "steps",
            &[
                "--block-dim",
                "64",
                "--grid",
                "2",
                "--param",
                w,
                "--param",
                "h=64",
                "--simulate",
            ],
        )
    };
    let zero = at("w=0");
    assert_eq!(zero["value"], 3.0, "{zero}");
    assert_eq!(zero["simulated"], 3, "{zero}");
    // Larger w: still the least of the pieces, above the simulation.
    for w in ["w=1", "w=2", "w=5"] {
        let j = at(w);
        assert!(j["value"].as_f64() >= j["simulated"].as_f64(), "{j}");
    }
}

#[test]
fn a_short_divergent_loop_splits_a_warp_at_most_once_per_iteration() {
    // mandelbrot: one split where lanes past w return, then the escape
    // loop, whose exit test (`x·x + y·y < 4`, per pixel) can split the
    // warp once per iteration, at most max_iter of them; charged per
    // entry instead, the loop's exits split it at most 31 times. So
    // divwarps ≤ min(1 + 31, 1 + max_iter): 6 at max_iter = 5, 32 from
    // max_iter = 31 on.
    let at = |it: &str| {
        bound_json(
            "cu/cost_mandelbrot.cu",
            "mandelbrot",
            "divwarps",
            &[
                "--block-dim",
                "32",
                "--grid",
                "2,2",
                "--param",
                "w=64",
                "--param",
                "h=2",
                "--param",
                it,
                "--simulate",
            ],
        )
    };
    let short = at("max_iter=5");
    assert_eq!(short["bound"], "min(32, max(0, max_iter) + 1)", "{short}");
    assert_eq!(short["value"], 6.0, "{short}");
    assert!(short["simulated"].as_f64() <= Some(6.0), "{short}");
    assert_eq!(at("max_iter=100")["value"], 32.0);
}

/// `bound --simulate` of `kernel` in `file` at `block` threads (one
/// block, 4 bytes of dynamic shared memory per thread, 8 for doubles):
/// the bound and the simulated worst warp.
fn bound_and_simulated(file: &str, kernel: &str, metric: &str, extra: &[&str]) -> (Value, u64) {
    let out = run(warpcheck()
        .args(["bound", "--format", "json", "--kernel", kernel])
        .args(["--metric", metric, "--simulate"])
        .args(extra)
        .arg(fixture(file)));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sim = j["simulated"].as_u64().unwrap_or_else(|| panic!("{j}"));
    (j["bound"].clone(), sim)
}

/// A reduction of `cost_reduce.cu` at `threads` (one int of dynamic
/// shared memory per thread) over `n` inputs 0, 1, 2, ...: its `metric`
/// bound and the simulated worst warp.
fn reduction(kernel: &str, metric: &str, threads: u32, n: u32) -> (Value, u64) {
    let shared = (4 * threads).to_string();
    let block = threads.to_string();
    let n_param = format!("n={n}");
    let input = format!("g_idata=buf:{}:iota", 4 * n.max(1024));
    bound_and_simulated(
        "cu/cost_reduce.cu",
        kernel,
        metric,
        &[
            "--block-dim",
            &block,
            "--shared-bytes",
            &shared,
            "--param",
            &n_param,
            "--arg",
            &input,
        ],
    )
}

/// reduce1 at `threads`: its conflicts bound and the simulated worst warp.
fn reduce1_conflicts(threads: u32) -> (Value, u64) {
    reduction("reduce1", "conflicts", threads, 4096)
}

#[test]
fn a_swept_loop_access_pays_its_rows_once_per_entry() {
    // reduce1: `for (s = 1; s < blockDim.x; s *= 2) { index = 2·s·tid;
    // if (index < blockDim.x) sdata[index] += sdata[index + s]; }`: two
    // loads and a store at stride 2·s words, over the lanes with
    // tid < blockDim.x/(2·s): a warp's active lanes, at most 32, share
    // the banks that multiples of 2·s words fall in (32/(2·s) of them
    // while 2·s < 32, one after). Extra wavefronts (degree − 1) per
    // access and value of s:
    //   128 threads, s = 1..64: 2-way (64 lanes: a whole warp), 4-way
    //   (32 lanes), then 16, 8, 4 lanes at 8, 16, 32 words: 4-way each,
    //   2 lanes 64 words apart: 2-way, one lane: 1+3+3+3+3+1+0 = 14;
    //   256 threads, s = 1..128: 2, 4, 8-way on whole warps, then 16
    //   lanes 16 words apart (banks 0, 16: 8 each), 8 lanes 32 apart,
    //   4 lanes, 2 lanes: 1+3+7+7+7+3+1+0 = 29;
    //   512 threads, s = 1..256: 2, 4, 8, 16-way (32 lanes 16 words apart),
    //   16 lanes 32 words apart (16-way), then 8, 4, 2, 1 lanes:
    //   1+3+7+15+15+7+3+1+0 = 52.
    // Each entry runs each s once, so a warp pays at most the sum per
    // access: 3·14 = 42, 3·29 = 87, 3·52 = 156 (the worst s times the
    // trips was 3·3·7 = 63, 3·7·8 = 168, 3·15·9 = 405). Warp 0 runs
    // every one of them, and the simulator counts as much.
    for (threads, expected) in [(128, 42), (256, 87), (512, 156)] {
        let (bound, sim) = reduce1_conflicts(threads);
        assert_eq!(bound, expected.to_string(), "{threads} threads");
        assert_eq!(sim, expected, "{threads} threads");
    }
}

#[test]
fn a_swept_loop_in_a_loop_pays_on_every_entry() {
    // ladderRounds: reduce1's ladder inside `for (r = 0; r < rounds; r++)`:
    // each round enters the ladder afresh and pays its 87 (256 threads)
    // or 15 (64 threads: s = 1..32, 2-way on 32, 16, 8, 4 and 2 lanes,
    // then one lane: 5 per access, 3 accesses).
    let (bound, sim) = bound_and_simulated(
        "cu/cost_sweep.cu",
        "ladderRounds",
        "conflicts",
        &[
            "--block-dim",
            "256",
            "--shared-bytes",
            "1024",
            "--param",
            "rounds=3",
        ],
    );
    assert_eq!(bound, "87·max(0, rounds)");
    assert_eq!(sim, 3 * 87);
    let (bound, sim) = bound_and_simulated(
        "cu/cost_sweep.cu",
        "ladderRounds",
        "conflicts",
        &[
            "--block-dim",
            "64",
            "--shared-bytes",
            "256",
            "--param",
            "rounds=2",
        ],
    );
    assert_eq!(bound, "15·max(0, rounds)");
    assert_eq!(sim, 2 * 15);
}

#[test]
fn a_wide_swept_access_pays_its_wavefronts_past_the_ideal() {
    // wideLadder: reduce1's ladder on doubles at 64 threads (s = 1..32).
    // An 8-byte request goes in two phases of 16 lanes, one wavefront each
    // when conflict-free; what a conflict adds is the wavefronts past
    // those. w[2·s·tid] is 16·s bytes apart, words 4·s·t and 4·s·t + 1:
    //   s = 1: 32 lanes; in each phase t and t + 8 share banks: 2-way,
    //     2 + 2 wavefronts for an ideal 2: 2 extra;
    //   s = 2: t < 16, one phase, 32 bytes apart: t, t+4, t+8, t+12 share
    //     banks: 4-way, 3 extra;
    //   s = 4: t < 8, 64 bytes apart: even t on banks 0-1, odd on 16-17:
    //     4-way, 3; s = 8: t < 4, 128 bytes apart: 4-way, 3;
    //   s = 16: 2 lanes: 2-way, 1; s = 32: one lane, 0.
    // 12 per access, two loads and a store: 36 (per execution the worst
    // row's 3 extra for 6 trips was 54).
    let (bound, sim) = bound_and_simulated(
        "cu/cost_sweep.cu",
        "wideLadder",
        "conflicts",
        &["--block-dim", "64", "--shared-bytes", "512"],
    );
    assert_eq!(bound, "36");
    assert_eq!(sim, 36);
}

#[test]
fn an_access_run_twice_an_iteration_pays_per_execution() {
    // twice at 32 threads, k = 1, 2, 4, 8, 16: odd lanes (`skip[t]` = 0)
    // and even lanes reach `s[k·t] += 1` one after the other. Each half is
    // 16 lanes at stride k: 0, 1, 3, 7, 15 extra, so an iteration costs a
    // load and a store 2·(0+1+3+7+15) each = 104 in all. The rows (over
    // all 32 lanes: 0, 1, 3, 7, 15) sum to 26 per access: 52 would be
    // below the simulation, so the access pays its worst row, 15, per
    // execution: 2 accesses × 2 halves × 5 iterations × 15 = 300.
    let (bound, sim) = bound_and_simulated(
        "cu/cost_sweep.cu",
        "twice",
        "conflicts",
        &[
            "--block-dim",
            "32",
            "--shared-bytes",
            "2048",
            "--arg",
            "skip=buf:128:zero",
        ],
    );
    assert_eq!(sim, 104);
    assert_eq!(bound, "300");
}

#[test]
fn a_swept_global_access_pays_its_sectors_once_per_entry() {
    // sector_ladder.cu: the strided reduction in global memory
    // (tests/sector_iterations.rs derives its rows). Per access and
    // entry: 8+16+32+16+8+4+2+1 = 87 sectors at 256 threads, 8+8+8+4+2+1
    // = 31 at 64; two loads and a store: 261 and 93 (the worst row times
    // the trips was 3·32·8 = 768 and 3·8·6 = 144).
    for (threads, expected) in [("256", 261), ("64", 93)] {
        let (bound, sim) = bound_and_simulated(
            "cu/sector_ladder.cu",
            "global_ladder",
            "sectors",
            &["--block-dim", threads, "--grid", "2"],
        );
        assert_eq!(bound, expected.to_string(), "{threads} threads");
        assert_eq!(sim, expected, "{threads} threads");
    }
}

#[test]
fn interleaved_reduction_divwarps_per_iteration() {
    // reduce0: `if (tid % (2·s) == 0)` for s = 1, 2, ..., blockDim.x/2
    // splits warp 0 on every value (lane 0 in, lane 1 out while 2·s ≤
    // 32, lane 0 alone after): log2(blockDim.x) splits per entry. With
    // the bounds check `i < n` and `tid == 0`, one split each: 6 + 2 = 8
    // at 64 threads, 7 + 2 = 9 at 128, 8 + 2 = 10 at 256, 9 + 2 = 11 at
    // 512. n = 5 puts the bounds check's split in warp 0 too.
    for (threads, expected) in [(64u32, 8u64), (128, 9), (256, 10), (512, 11)] {
        let (bound, sim) = reduction("reduce0", "divwarps", threads, 5);
        assert_eq!(bound, expected.to_string(), "{threads} threads");
        assert_eq!(sim, expected, "{threads} threads");
    }
    // reduce2 (`tid < s`, s = blockDim.x/2 down to 1) splits warp 0 only
    // for s = 16..1: 5 + 2 = 7 at every size from 64 up.
    for threads in [64u32, 128, 512] {
        let (bound, sim) = reduction("reduce2", "divwarps", threads, 5);
        assert_eq!(bound, "7", "{threads} threads");
        assert_eq!(sim, 7, "{threads} threads");
    }
}
