//! Branches and accesses inside loops (issue 23): the lanes a uniform loop
//! keeps, per-iteration sweeps of a counter the launch shape determines,
//! and guarded lanes. Fixture: `fixtures/cu/acf_loops.cu`; every figure
//! is derived here by hand.

mod common;
use common::*;
use serde_json::Value;

/// Every branch on `line` of `kernel` (clang may copy one: unrolled or
/// rotated loops).
fn divergences<'a>(r: &'a Value, kernel: &str, line: u64) -> Vec<&'a Value> {
    let found: Vec<&Value> = sites(r, kernel, "branch", line)
        .into_iter()
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
        assert_eq!((d["split_min"].as_u64(), d["split_max"].as_u64()), (Some(1), Some(1)));
    }
    // `threadIdx.x % 2`: odd and even lanes in every warp: 8 of 8.
    for d in divergences(&r, "odd_in_loop", 15) {
        assert_eq!(d["class"], "total", "{d}");
        assert_eq!(d["split_min"], 8, "{d}");
    }
}
