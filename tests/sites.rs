//! Sites in the JSON report: branches and memory accesses, their address
//! spaces, sizes, and thread dependence, on .cu fixtures compiled by clang-19.
//! Expectations are derived by hand in the fixtures' comments.

mod common;
use common::*;

#[test]
fn thread_index_branch_is_dependent() {
    let r = check_json("cu/branches.cu", &[]);
    // threadIdx.x % 2 alternates between neighbouring lanes.
    assert_dependent(&r, "odd_even", "branch", 3, true);
    // a[threadIdx.x]: each lane has its own address.
    assert_dependent(&r, "odd_even", "load", 4, true);
}

#[test]
fn block_index_and_argument_branches_are_uniform() {
    let r = check_json("cu/branches.cu", &[]);
    // blockIdx.x is one value for every thread of a block.
    assert_dependent(&r, "by_block", "branch", 8, false);
    // a[blockIdx.x * blockDim.x]: one address for the whole warp.
    assert_dependent(&r, "by_block", "store", 9, false);
    // The loop bound n is a kernel argument, and i counts the same in every lane.
    assert_dependent(&r, "by_param", "branch", 13, false);
    assert_dependent(&r, "by_param", "load", 14, false);
}

#[test]
fn inline_asm_is_assumed_dependent() {
    let r = check_json("cu/branches.cu", &[]);
    assert_dependent(&r, "by_lane", "branch", 20, true);
}

#[test]
fn address_spaces_and_sizes() {
    let r = check_json("cu/spaces.cu", &[]);
    // Line 7: tile[t] = g[t].
    assert_eq!(spaces(&r, "spaces", "load", 7), ["global"]);
    assert_eq!(spaces(&r, "spaces", "store", 7), ["shared"]);
    // Line 10: scratch[i] = tile[...]: the loop is unrolled, every copy the same.
    assert_eq!(spaces(&r, "spaces", "load", 10), ["shared"]);
    assert_eq!(spaces(&r, "spaces", "store", 10), ["local"]);
    // Line 11: g[t] = scratch[n & 15] * coeff[n & 15].
    assert_eq!(spaces(&r, "spaces", "load", 11), ["constant", "local"]);
    assert_eq!(spaces(&r, "spaces", "store", 11), ["global"]);
    // Sizes: floats are 4 bytes, doubles 8.
    for s in sites(&r, "spaces", "load", 7) {
        assert_eq!(s["bytes"], 4);
    }
    for kind in ["load", "store"] {
        for s in sites(&r, "spaces", kind, 12) {
            assert_eq!(s["space"], "global");
            assert_eq!(s["bytes"], 8);
        }
    }
    // The unrolled scratch[i] stores have constant addresses: uniform.
    assert_dependent(&r, "spaces", "store", 10, false);
    // scratch[n & 15] and coeff[n & 15]: uniform index.
    assert_dependent(&r, "spaces", "load", 11, false);
}

#[test]
fn device_function_reported_per_kernel_context() {
    let r = check_json("cu/device_call.cu", &[]);
    let branch = |k: &str| sites(&r, k, "branch", 4);
    assert_eq!(branch("with_thread").len(), 1);
    assert_eq!(
        branch("with_thread")[0]["function"],
        "store_if_positive(float*, int)"
    );
    assert_eq!(branch("with_thread")[0]["thread_dependent"], true);
    assert_eq!(branch("with_block")[0]["thread_dependent"], false);
}

#[test]
fn atomic_results_are_sources() {
    let r = check_json("cu/atomics.cu", &[]);
    // The atomicAdd wrapper comes from a header: its site is placed at the call.
    let atomics = sites(&r, "ticket", "atomic", 3);
    assert_eq!(atomics.len(), 1);
    assert_eq!(atomics[0]["space"], "global");
    assert_eq!(atomics[0]["bytes"], 4);
    assert!(atomics[0]["file"].as_str().unwrap().ends_with("atomics.cu"));
    assert_dependent(&r, "ticket", "branch", 4, true);
}

#[test]
fn block_dim_sources() {
    let r = check_json("cu/launch_bounds.cu", &[]);
    assert_eq!(
        kernel(&r, "bounded")["block_dim"],
        serde_json::json!([128, 1, 1])
    );
    assert_eq!(kernel(&r, "bounded")["block_dim_source"], "launch_bounds");
    assert_eq!(
        kernel(&r, "unbounded")["block_dim"],
        serde_json::json!([256, 1, 1])
    );
    assert_eq!(kernel(&r, "unbounded")["block_dim_source"], "default");
    let r = check_json("cu/launch_bounds.cu", &["--block-dim", "32,4"]);
    assert_eq!(
        kernel(&r, "bounded")["block_dim"],
        serde_json::json!([32, 4, 1])
    );
    assert_eq!(kernel(&r, "bounded")["block_dim_source"], "option");
}

#[test]
fn kernel_metadata() {
    let r = check_json("cu/branches.cu", &[]);
    let k = kernel(&r, "odd_even");
    assert_eq!(k["name"], "odd_even(float*)");
    assert_eq!(k["mangled"], "_Z8odd_evenPf");
    assert_eq!(k["line"], 2);
    assert!(k["file"].as_str().unwrap().ends_with("branches.cu"));
    assert_eq!(r["tool"], "warpcheck");
}
