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
