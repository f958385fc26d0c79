//! Sources of thread dependence and the warp-uniform values that are not,
//! on .cu fixtures compiled by clang-19. Each fixture line says what it
//! expects and why.

mod common;
use common::*;

/// The `why` chain of the single site of that kind on that line.
fn why(report: &serde_json::Value, kernel: &str, kind: &str, line: u64) -> Vec<String> {
    let found = sites(report, kernel, kind, line);
    assert_eq!(found.len(), 1, "{kind} sites on line {line}: {found:#?}");
    found[0]["why"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn thread_and_lane_ids_are_sources() {
    let r = check_json("cu/taint_sources.cu", &[]);
    for (line, source) in [
        (3, "threadIdx.x"),
        (4, "threadIdx.y"),
        (5, "threadIdx.z"),
        (6, "the lane id"),
    ] {
        assert_dependent(&r, "sources", "branch", line, true);
        assert_eq!(why(&r, "sources", "branch", line)[0], source, "line {line}");
    }
}

#[test]
fn atomic_results_are_sources() {
    let r = check_json("cu/taint_sources.cu", &[]);
    // atomicrmw (atomicAdd), cmpxchg (atomicCAS), llvm.nvvm.atomic.* (atomicInc).
    for line in [7, 8, 9] {
        assert_dependent(&r, "sources", "branch", line, true);
        assert_eq!(why(&r, "sources", "branch", line)[0], "an atomic's result");
        // The atomic's own address is uniform: counter[0].
        assert_dependent(&r, "sources", "atomic", line, false);
    }
}

#[test]
fn shuffles_and_match_of_dependent_values_are_dependent() {
    let r = check_json("cu/taint_sources.cu", &[]);
    // __shfl_down_sync of threadIdx.x reads a neighbour's threadIdx.x.
    assert_dependent(&r, "sources", "branch", 10, true);
    // __match_any_sync(threadIdx.x): which lanes share my value.
    assert_dependent(&r, "sources", "branch", 12, true);
}

#[test]
fn loads_from_dependent_addresses_and_memory_are_dependent() {
    let r = check_json("cu/taint_sources.cu", &[]);
    // counter[threadIdx.x]: the address, then the loaded value.
    assert_dependent(&r, "sources", "load", 13, true);
    assert_dependent(&r, "sources", "branch", 13, true);
    // tile and data were written with threadIdx.x; both reads are at
    // block-uniform addresses. After the barrier every write to the shared
    // tile is complete and none runs in the read's phase: one value for
    // the block (uniform). Global memory is written by other blocks too,
    // which no barrier of this block orders: the read still sees
    // per-thread data.
    assert_dependent(&r, "through_memory", "load", 22, false);
    assert_dependent(&r, "through_memory", "branch", 22, false);
    assert_dependent(&r, "through_memory", "load", 23, false);
    assert_dependent(&r, "through_memory", "branch", 23, true);
    let chain = why(&r, "through_memory", "branch", 23);
    assert_eq!(chain[0], "threadIdx.x");
    assert!(
        chain.iter().any(|s| s.starts_with("memory via")),
        "{chain:?}"
    );
}

#[test]
fn warp_uniform_values_are_not_sources() {
    let r = check_json("cu/taint_uniform.cu", &[]);
    // blockIdx, blockDim, gridDim, warpid, nwarpid, smid, votes, ballot,
    // __syncthreads_count/and/or, a parameter, a broadcast from lane 0.
    for line in 3..=17 {
        assert_dependent(&r, "uniform", "branch", line, false);
    }
}

#[test]
fn shuffle_broadcast_from_lane_zero_is_uniform() {
    let r = check_json("cu/taint_shuffle.cu", &[]);
    // v differs per lane, but every lane receives lane 0's v.
    assert_dependent(&r, "shuffles", "load", 3, true);
    assert_dependent(&r, "shuffles", "branch", 5, false);
    // From lane threadIdx.x ^ 1, from the next lane, and from lane 0 of
    // each 8-lane segment: dependent.
    for line in [8, 11, 14] {
        assert_dependent(&r, "shuffles", "branch", line, true);
    }
    assert_eq!(
        why(&r, "shuffles", "branch", 8)[..2],
        // `threadIdx.x ^ 1` (the `^` at 7:55), no variable of its own.
        ["threadIdx.x", "the arithmetic at 7:55"]
    );
}
