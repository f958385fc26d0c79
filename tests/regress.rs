//! Known bugs found by the random campaigns (`random_kernels.rs`,
//! `scripts/fuzz-ir.sh`), as minimal fixtures under
//! `tests/fixtures/regress/`. Each test states the right answer, derived
//! by hand; it is ignored while the bug is open.

mod common;

use common::*;

/// `header_exit_loop.ll`: `for (i = 0; i < (t & 1); i++) {}` tested in the
/// loop header, then `out[t] = i` (t = threadIdx.x, 64 threads).
///
/// * The header branch: at the first test even lanes leave and odd lanes
///   stay, so it splits both warps (the simulator agrees: 2 of 2).
/// * The store's address `out + 4 t` differs in every lane: it is
///   thread-dependent.
#[test]
fn header_exit_loop_splits_and_its_exit_store_is_dependent() {
    let r = check_json("regress/header_exit_loop.ll", &["--block-dim", "64"]);
    let k = &r["kernels"][0];
    let site = |kind: &str, line: u64| {
        k["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == kind && s["line"] == line)
            .unwrap_or_else(|| panic!("no {kind} on line {line}"))
            .clone()
    };
    let branch = site("branch", 3);
    assert_eq!(
        branch["divergence"]["by_warp"],
        serde_json::json!(["split", "split"])
    );
    assert_eq!(site("store", 5)["thread_dependent"], true);
}

/// `impact/order.cu`'s `split_64` (odd lanes loop 64 times, even lanes 64
/// times in another loop; found by `time_soundness.rs` when the impact
/// fixtures sat in `cu/`): on the paper machine (1-cycle instructions,
/// one issue slot) with 64 threads, each of the 2 warps runs both loops
/// one after the other (about 900 instructions), and the two warps share
/// the one issue slot: about 1800 cycles, which the simulator's cycle mode
/// gives (1832). The abstract-CTA bound said 951: its loop rows counted
/// a loop's entries by the logical CFG edge, and the edge where the first
/// side reconverges stands for the edge into the join block while it goes
/// on to the second side's loop header, so that loop got no iterations
/// past its first.
#[test]
fn abstract_cta_covers_a_split_with_loops_on_both_sides() {
    let out = run(warpcheck()
        .args(["time", "--kernel", "split_64", "--block-dim", "64"])
        .args(["--machine", "preset=paper", "--machine", "sms=108"])
        .args(["--simulate", "--format", "json"])
        .args([
            "--arg",
            "in=buf:512:zero:f32",
            "--arg",
            "out=buf:512:zero:f32",
        ])
        .arg(fixture("impact/order.cu")));
    let r = ok_json(&out);
    let simulated = r["simulated_cycles"].as_f64().unwrap();
    for (name, m) in r["methods"].as_object().unwrap() {
        if let Some(b) = m["launch_cycles"].as_f64() {
            assert!(
                b >= simulated,
                "{name}: {m} below the simulated {simulated}"
            );
        }
    }
}
