//! Branches and accesses inside loops (issue 23): the lanes a uniform loop
//! keeps, per-iteration sweeps of a counter the launch shape determines,
//! and guarded lanes. Fixture: `fixtures/cu/acf_loops.cu`; every figure
//! is derived here by hand.

mod common;
use common::*;
use serde_json::Value;

/// Every thread-dependent branch on `line` of `kernel` (clang may copy
/// one: unrolled or rotated loops).
fn divergences<'a>(r: &'a Value, kernel: &str, line: u64) -> Vec<&'a Value> {
    let found: Vec<&Value> = sites(r, kernel, "branch", line)
        .into_iter()
        .filter(|s| s["thread_dependent"] == true)
        .map(|s| &s["divergence"])
        .collect();
    assert!(!found.is_empty(), "no branch on line {line} of {kernel}");
    found
}

#[test]
fn uniform_trip_loops_keep_the_class_of_their_body() {
    let r = check_json("cu/acf_loops.cu", &["--block-dim", "256"]);
    // `for (i = 0; i < h; i++) if (threadIdx.x == 0)`: `h` is unknown but
    // the same in every lane, so every lane of a warp runs every
    // iteration. Lane 0 of warp 0 goes one way, lanes 1..31 the other:
    // warp 0 splits, warps 1..7 (threads 32..255) never: 1 of 8.
    for d in divergences(&r, "first_in_loop", 9) {
        assert_eq!(d["class"], "partial", "{d}");
        assert_eq!(
            (d["split_min"].as_u64(), d["split_max"].as_u64()),
            (Some(1), Some(1))
        );
    }
    // `threadIdx.x % 2`: odd and even lanes in every warp: 8 of 8. Clang
    // unrolls by 2 and also tests `h % 2 == 0 || t % 2 == 0` for the odd
    // trip; the plain copy is the one whose figure is the branch's.
    let plain: Vec<&Value> = sites(&r, "odd_in_loop", "branch", 15)
        .into_iter()
        .filter(|s| s["acf"] == "((tid.x % 2) == 0)")
        .map(|s| &s["divergence"])
        .collect();
    // Clang 22 keeps two copies of it; each has the figure.
    assert!(!plain.is_empty() && plain.len() <= 2, "{plain:?}");
    for d in plain {
        assert_eq!(d["class"], "total", "{d}");
        assert_eq!(d["split_min"], 8, "{d}");
    }
}

#[test]
fn lanes_that_break_out_leave_the_rest_of_the_body() {
    let r = check_json("cu/acf_loops.cu", &["--block-dim", "256"]);
    // Clang hoists `if (t < 16) break;` into the guard `h < 1 || t < 16`:
    // when `h >= 1`, lanes 0..15 of warp 0 skip the loop and lanes 16..31
    // run it, so the guard may split warp 0 (never surely: h is unknown)
    // and no other warp (t >= 32 there): at most 1 of 8, `bounded`.
    let guard: Vec<&Value> = sites(&r, "break_half", "branch", 22)
        .into_iter()
        .filter(|s| s["thread_dependent"] == true)
        .map(|s| &s["divergence"])
        .collect();
    assert_eq!(guard.len(), 1, "{guard:?}");
    assert_eq!(guard[0]["class"], "bounded", "{}", guard[0]);
    assert_eq!(guard[0]["split_max"], 1, "{}", guard[0]);
    // In the body only lanes 16..31 of warp 0 are active, odd and even
    // among them: warp 0 splits, as do warps 1..7 with all their lanes.
    let body: Vec<&Value> = sites(&r, "break_half", "branch", 24)
        .into_iter()
        .filter(|s| s["acf"] == "((tid.x % 2) == 0)")
        .map(|s| &s["divergence"])
        .collect();
    assert!(!body.is_empty() && body.len() <= 2, "{body:?}");
    for d in body {
        // Clang 22 unswitches the loop on `t & 1` instead of hoisting the
        // break; either way lanes 16..31 of warp 0 run the body whenever
        // it runs, the first iteration's lanes included.
        assert_eq!(d["class"], "total", "{d}");
    }
}

/// The rows of the one branch on `line`: `(value, split_min, split_max)`.
fn rows(r: &Value, kernel: &str, line: u64) -> Vec<(i64, u64, u64)> {
    let d = divergences(r, kernel, line);
    // Copies of the branch (clang 22 peels some) must agree.
    assert!(
        d.iter().all(|c| c["iterations"] == d[0]["iterations"]),
        "{d:?}"
    );
    let it = &d[0]["iterations"];
    assert_eq!(it["certain"], true, "{it}");
    assert_eq!(it["counter"], "k", "{it}");
    it["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows on {kernel}:{line}: {}", d[0]))
        .iter()
        .map(|x| {
            (
                x["value"].as_i64().unwrap(),
                x["split_min"].as_u64().unwrap(),
                x["split_max"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `1, 2, 4, ..` below `n`.
fn doubling(n: i64) -> Vec<i64> {
    (0..).map(|e| 1 << e).take_while(|&k| k < n).collect()
}

#[test]
fn reduction_ladders_are_decided_per_iteration() {
    for threads in [128i64, 256, 512] {
        let r = check_json("cu/acf_loops.cu", &["--block-dim", &threads.to_string()]);
        let warps = (threads / 32) as u64;

        // Interleaved, `t % (2k) == 0` for k = 1, 2, .., threads/2. While
        // 2k <= 32 every warp holds lanes on both sides (lane 0 passes,
        // lane 1 does not): all warps split. Past that the passing threads
        // are 2k apart, so one warp in 2k/32 holds one of them (lane 0)
        // and splits, the others skip as a whole: threads/(2k) warps.
        let expected: Vec<(i64, u64, u64)> = doubling(threads)
            .into_iter()
            .map(|k| {
                let n = if 2 * k <= 32 {
                    warps
                } else {
                    (threads / (2 * k)) as u64
                };
                (k, n, n)
            })
            .collect();
        assert_eq!(rows(&r, "interleaved", 35), expected, "{threads} threads");
        let d = divergences(&r, "interleaved", 35)[0];
        assert_eq!(d["class"], "total", "{d}");

        // Strided, `2k·t < threads`: threads t < threads/(2k) pass. That
        // is a multiple of 32 (whole warps) until threads/(2k) < 32; from
        // there on only warp 0 holds both sides (1 of them), down to k =
        // threads/2 where t = 0 alone passes.
        let expected: Vec<(i64, u64, u64)> = doubling(threads)
            .into_iter()
            .map(|k| {
                let n = u64::from(threads / (2 * k) < 32);
                (k, n, n)
            })
            .collect();
        assert_eq!(rows(&r, "strided", 48), expected, "{threads} threads");
        let d = divergences(&r, "strided", 48)[0];
        assert_eq!(
            (d["class"].as_str(), d["split_min"].as_u64()),
            (Some("partial"), Some(1))
        );

        // Sequential, `t < k` for k = threads/2, .., 1 (halving): whole
        // warps while k is a multiple of 32, warp 0 alone splits for
        // k = 16, 8, 4, 2, 1.
        let mut halving = doubling(threads);
        halving.reverse();
        let expected: Vec<(i64, u64, u64)> = halving
            .into_iter()
            .map(|k| (k, u64::from(k < 32), u64::from(k < 32)))
            .collect();
        assert_eq!(rows(&r, "sequential", 60), expected, "{threads} threads");
        let d = divergences(&r, "sequential", 60)[0];
        assert_eq!(
            (d["class"].as_str(), d["split_min"].as_u64()),
            (Some("partial"), Some(1))
        );
    }
}

#[test]
fn per_iteration_messages_name_the_counter() {
    // `--min-impact 0`: the messages are checked, and a reduction's
    // halving branch is cheap enough to be a note by default.
    let out = run(warpcheck()
        .args(["check", "--block-dim", "256", "--min-impact", "0"])
        .arg(fixture("cu/acf_loops.cu")));
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &stderr(&out);
    // 256 threads: 8 of 8 for k = 1..16, then 256/64 = 4, 2, 1.
    assert!(
        text.contains("branch diverges in 8 of 8 warps (every warp) for k = 1..16, then 4, 2, 1 of 8 (k = 32..128)"),
        "{text}"
    );
    // The halving loop, rotated by clang: its phi holds the k before the
    // shift, and the message shows the k the condition compares.
    assert!(
        text.contains(
            "branch diverges in 1 of 8 warps for k = 16..1, after 0, 0, 0 of 8 (k = 128..32)"
        ),
        "{text}"
    );
}

#[test]
fn strided_reduction_conflicts_per_iteration() {
    for threads in [128i64, 256, 512] {
        let r = check_json("cu/acf_loops.cu", &["--block-dim", &threads.to_string()]);
        // `s[i]` and `s[i + k]` with `i = 2k·t`, for threads t below
        // threads/(2k): word 2k·t, bank 2k·t mod 32. A full warp puts its
        // lanes in 32/min(2k, 32) banks: min(2k, 32)-way. Once fewer than
        // 32 threads pass (threads/(2k) < 32) only warp 0 runs, with A =
        // threads/(2k) lanes: ⌈A·min(2k, 32)/32⌉-way. `+ k` moves every
        // lane by the same k words: the same degrees.
        let expected: Vec<(i64, u64, u64, &str)> = doubling(threads)
            .into_iter()
            .map(|k| {
                let per = (2 * k).min(32);
                let a = threads / (2 * k);
                let deg = if a >= 32 { per } else { (a * per + 31) / 32 } as u64;
                (k, deg, deg, if deg > 1 { "conflict" } else { "none" })
            })
            .collect();
        let shared: Vec<&Value> = kernel(&r, "strided")["sites"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["line"] == 48 && s["conflict"].is_object())
            .collect();
        // The load of s[i], the load of s[i + k], the store to s[i].
        assert_eq!(shared.len(), 3, "{shared:?}");
        for s in shared {
            let rows: Vec<(i64, u64, u64, &str)> = s["conflict"]["iterations"]["rows"]
                .as_array()
                .unwrap_or_else(|| panic!("{s}"))
                .iter()
                .map(|x| {
                    (
                        x["value"].as_i64().unwrap(),
                        x["min"].as_u64().unwrap(),
                        x["max"].as_u64().unwrap(),
                        x["class"].as_str().unwrap(),
                    )
                })
                .collect();
            assert_eq!(rows, expected, "{threads} threads: {s}");
            // Over the whole loop: from 1 (k = threads/2, one lane) to the
            // worst row: 4-way at 128 threads, 8 at 256, 16 at 512.
            let worst = expected.iter().map(|x| x.2).max();
            assert_eq!(worst, Some((threads / 32) as u64));
            assert_eq!(
                (s["conflict"]["min"].as_u64(), s["conflict"]["max"].as_u64()),
                (Some(1), worst),
                "{s}"
            );
        }
    }
    // `--min-impact 0`: the messages are checked, and a reduction's
    // halving branch is cheap enough to be a note by default.
    let out = run(warpcheck()
        .args(["check", "--block-dim", "256", "--min-impact", "0"])
        .arg(fixture("cu/acf_loops.cu")));
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &stderr(&out);
    // `s[i] += s[i + k]`: the loads of `s[i]` and `s[i + k]` and the
    // store of `s[i]` conflict alike, one warning led by the first access
    // (by column, the load of `s[i]`) that lists the three.
    assert!(
        text.contains("up to 8-way bank conflict on a shared load for k = 4..16 (2, 4, 8, 8, 8, 4, 2, 1-way for k = 1..128) (3 accesses of the shared array s on this line, one cause: load at column 30, store at column 30, load at column 33)"),
        "{text}"
    );
}

/// The conflict figure of the one shared store on `line` of `kernel`.
fn store_conflict<'a>(r: &'a Value, kernel: &str, line: u64) -> &'a Value {
    let found = sites(r, kernel, "store", line);
    let shared: Vec<&&Value> = found.iter().filter(|s| s["conflict"].is_object()).collect();
    assert_eq!(shared.len(), 1, "{found:?}");
    &shared[0]["conflict"]
}

#[test]
fn guards_bound_the_lanes_of_the_figures() {
    let r = check_json("cu/acf_loops.cu", &["--block-dim", "256"]);
    // `m < 16 && t <= m`: the store runs for t = 0..m with m <= 15, all in
    // warp 0; `s[32t]` puts every lane in bank 0: m + 1 ways, at most 16
    // (m = 15), at least 1 (m = 0). Warps 1..7 (t >= 32) never store.
    let c = store_conflict(&r, "guarded", 72);
    assert_eq!(c["class"], "conflict", "{c}");
    assert_eq!(
        (c["full_max"].as_u64(), c["max"].as_u64(), c["min"].as_u64()),
        (Some(16), Some(16), Some(1)),
        "{c}"
    );
    let d: Vec<&Value> = sites(&r, "guarded", "branch", 72)
        .into_iter()
        .filter(|s| s["thread_dependent"] == true)
        .collect();
    assert_eq!(d.len(), 1, "{d:?}");
    let by_warp = &d[0]["divergence"]["by_warp"];
    // Warp 0 splits for m = 0..14 and not otherwise; the others never.
    assert_eq!(by_warp[0], "maybe", "{by_warp}");
    for w in 1..8 {
        assert_eq!(by_warp[w], "uniform", "{by_warp}");
    }
    // `(t & 31) < 8`: lanes 0..7 at words 4t: banks 0, 4, .., 28, one word
    // each: no conflict. `t < 16`: lanes 0..15 of warp 0 at words 32t + 1,
    // all in bank 1: 16-way.
    let c = store_conflict(&r, "lane_guards", 83);
    assert_eq!(
        (c["class"].as_str(), c["full_max"].as_u64()),
        (Some("none"), Some(1)),
        "{c}"
    );
    let c = store_conflict(&r, "lane_guards", 84);
    assert_eq!(
        (c["class"].as_str(), c["full_max"].as_u64()),
        (Some("conflict"), Some(16)),
        "{c}"
    );
}

#[test]
fn guards_on_a_constant_loop_counter_bound_the_lanes() {
    for block in ["32", "64", "256"] {
        let r = check_json("cu/acf_loops.cu", &["--block-dim", block]);
        // Every copy of `if (t <= m)` on line 102 (clang unrolls by 2):
        // for m = 0..15 lanes 0..m of warp 0 go in, the rest of warp 0
        // (lanes m+1..31, m <= 15) does not: warp 0 splits on every
        // iteration, no other warp does (t >= 32 never goes in). With one
        // warp in the block, that is every warp.
        let class = if block == "32" { "total" } else { "partial" };
        let d = divergences(&r, "needle", 102);
        assert!(!d.is_empty());
        for d in &d {
            assert_eq!(d["class"], class, "block {block}: {d}");
            assert_eq!(
                (d["split_min"].as_u64(), d["split_max"].as_u64()),
                (Some(1), Some(1))
            );
        }
        // The store on line 104: word 17(m - t + 1) + t + 1 = 17m + 18 - 16t;
        // with lanes 0..m active, even lanes share one bank and odd lanes
        // another, ceil((m + 1) / 2) ways: 8 at m = 14 and 15, never 16
        // (that would need 32 lanes).
        let stores: Vec<&Value> = sites(&r, "needle", "store", 104)
            .into_iter()
            .filter(|s| s["conflict"].is_object())
            .map(|s| &s["conflict"])
            .collect();
        assert!(!stores.is_empty());
        for c in stores {
            assert_eq!(c["class"], "conflict", "block {block}: {c}");
            assert_eq!(
                (c["full_max"].as_u64(), c["max"].as_u64()),
                (Some(8), Some(8)),
                "{c}"
            );
            // The body runs: some wavefronts on every copy.
            assert_eq!(c["wavefronts"]["max"], 8, "{c}");
        }
    }
}

#[test]
fn a_second_counter_of_the_loop_is_swept_with_the_first() {
    // `upsweep`: offset doubles beside d. Rows per value of d, derived in
    // the fixture: at 256 threads 2, 4, 8, 16, 16, 8, 4, 2, 1-way; at 128
    // threads the stride of 16 words meets 16 lanes in two banks (8-way)
    // and the stride of 32 words 8 lanes in one (8-way).
    for (threads, ways) in [
        (256, vec![2, 4, 8, 16, 16, 8, 4, 2, 1]),
        (128, vec![2, 4, 8, 8, 8, 4, 2, 1]),
    ] {
        let r = check_json("cu/acf_loops.cu", &["--block-dim", &threads.to_string()]);
        let s = sites(&r, "upsweep", "load", 129);
        assert_eq!(s.len(), 2, "{s:#?}");
        for s in s {
            let c = &s["conflict"];
            let rows: Vec<(i64, u64, u64)> = c["iterations"]["rows"]
                .as_array()
                .unwrap_or_else(|| panic!("{c}"))
                .iter()
                .map(|x| {
                    (
                        x["value"].as_i64().unwrap(),
                        x["min"].as_u64().unwrap(),
                        x["max"].as_u64().unwrap(),
                    )
                })
                .collect();
            let expected: Vec<(i64, u64, u64)> = ways
                .iter()
                .enumerate()
                .map(|(k, &w)| ((threads >> k) as i64, w, w))
                .collect();
            assert_eq!(rows, expected, "{threads} threads: {c}");
            assert_eq!(c["max"], 16.min(threads / 16), "{c}");
        }
    }
}
