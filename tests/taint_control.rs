//! Thread dependence that flows through control and memory rather than
//! data: joins, loop exits, per-thread and shared memory, and calls, on
//! .cu fixtures compiled by clang-19 (expectations in their comments).

mod common;
use common::*;

fn why(report: &serde_json::Value, kernel: &str, kind: &str, line: u64) -> Vec<String> {
    let found = sites(report, kernel, kind, line);
    assert!(!found.is_empty(), "no {kind} on line {line} of {kernel}");
    found[0]["why"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Whether an explanation's step is `what` on `line` (`the comparison at
/// 5:7`); the column is clang's, which clang 19 and 22 place apart.
fn is_at(label: &str, what: &str, line: u32) -> bool {
    label.starts_with(&format!("{what} at {line}:"))
}

#[test]
fn phi_at_the_join_of_a_dependent_branch() {
    let r = check_json("cu/taint_join.cu", &[]);
    assert_dependent(&r, "join", "branch", 5, true);
    // x is n on odd lanes and 2n on even ones: no data from threadIdx.x
    // reaches it, the branch on line 5 does.
    assert_dependent(&r, "join", "branch", 13, true);
    let chain = why(&r, "join", "branch", 13);
    assert_eq!(chain.first().map(String::as_str), Some("threadIdx.x"));
    // Named as written: line 5's test `if (threadIdx.x & 1)`, then x
    // (debug info names the phi).
    assert!(
        chain.iter().any(|l| is_at(l, "the comparison", 5)),
        "through line 5's condition: {chain:?}"
    );
    assert!(chain.contains(&"x".to_string()), "{chain:?}");
    // The same shape on blockIdx.x: uniform.
    assert_dependent(&r, "join_uniform", "branch", 20, false);
    assert_dependent(&r, "join_uniform", "branch", 28, false);
}

#[test]
fn temporal_divergence_out_of_a_dependent_loop() {
    let r = check_json("cu/taint_loop.cu", &[]);
    assert_dependent(&r, "count_up", "branch", 5, true);
    // Inside the loop i and h are the same in every lane still running it.
    assert_dependent(&r, "count_up", "store", 6, false);
    // After it, h depends on how many iterations each lane ran.
    assert_dependent(&r, "count_up", "branch", 9, true);
    assert_dependent(&r, "count_up", "store", 10, true);
    let chain = why(&r, "count_up", "branch", 9);
    // The loop's exit test `i <= threadIdx.x`, then h as it leaves,
    // compared in `if (h > 5)`.
    assert_eq!(chain.len(), 4, "{chain:?}");
    assert_eq!([&chain[0], &chain[2]], ["threadIdx.x", "h"], "{chain:?}");
    assert!(is_at(&chain[1], "the comparison", 5), "{chain:?}");
    assert!(is_at(&chain[3], "the comparison", 9), "{chain:?}");
    for (kind, line) in [("branch", 17), ("store", 18), ("branch", 21), ("store", 22)] {
        assert_dependent(&r, "count_to_n", kind, line, false);
    }
}

#[test]
fn per_thread_memory_written_by_dependent_code() {
    let r = check_json("cu/taint_local.cu", &[]);
    // a[n & 7] = threadIdx.x, then a[(n >> 3) & 7]: the address is
    // uniform, the value read back is not.
    assert_dependent(&r, "local_value", "load", 11, false);
    assert_dependent(&r, "local_value", "branch", 11, true);
    // a[threadIdx.x & 7] = 1: each lane's copy differs at a different index.
    assert_dependent(&r, "local_index", "store", 18, true);
    assert_dependent(&r, "local_index", "branch", 19, true);
    // Only uniform values at uniform indices: uniform.
    assert_dependent(&r, "local_uniform", "branch", 27, false);
    assert_eq!(spaces(&r, "local_value", "load", 11), ["local"]);
}

#[test]
fn shared_memory_broadcast_after_a_barrier_is_uniform() {
    let r = check_json("cu/taint_shared.cu", &[]);
    assert_dependent(&r, "broadcast", "branch", 4, true);
    // Lane 0 alone stores a block-uniform value; after the barrier every
    // thread reads that one value.
    assert_dependent(&r, "broadcast", "store", 5, false);
    assert_dependent(&r, "broadcast", "load", 7, false);
    assert_dependent(&r, "broadcast", "branch", 7, false);
    // Every thread stores its own element; after the barrier all of them
    // are written, and every thread reads the same one (a block-uniform
    // index): one value. (`tests/taint_memory.rs` has the twins.)
    assert_dependent(&r, "gather", "branch", 15, false);
}

#[test]
fn device_function_branch_per_calling_kernel() {
    let r = check_json("cu/taint_context.cu", &[]);
    let branch = |k: &str| sites(&r, k, "branch", 4);
    assert_eq!(branch("with_block")[0]["function"], "scaled(int*, int)");
    assert_eq!(branch("with_block")[0]["thread_dependent"], false);
    assert_eq!(branch("with_thread")[0]["thread_dependent"], true);
    // `if (v > 16)`: v is the parameter, then its comparison.
    let chain = why(&r, "with_thread", "branch", 4);
    assert_eq!(chain[..2], ["threadIdx.x", "v"], "{chain:?}");
    assert!(is_at(&chain[2], "the comparison", 4), "{chain:?}");
}

#[test]
fn returns_flow_back_only_to_their_own_call() {
    let r = check_json("cu/taint_context.cu", &[]);
    // scaled(log, blockIdx.x) and scaled(log, threadIdx.x) in one kernel:
    // the first result stays uniform.
    assert_dependent(&r, "both", "branch", 21, false);
    assert_dependent(&r, "both", "branch", 23, true);
    // Inside scaled, the union over both calls: dependent.
    assert_dependent(&r, "both", "branch", 4, true);
}

#[test]
fn recursion_terminates_and_stays_sound() {
    let r = check_json("cu/taint_recursion.cu", &[]);
    assert_dependent(&r, "walk_thread", "branch", 3, true);
    assert_dependent(&r, "walk_block", "branch", 3, false);
    assert_dependent(&r, "walk_block", "branch", 14, false);
}
