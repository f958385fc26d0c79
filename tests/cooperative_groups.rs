//! Cooperative groups without a toolkit: kernels written with warpcheck's
//! own `cooperative_groups.h` compile, load, place their findings in the
//! user's file, and simulate to the sums worked out by hand.

#[path = "common/sim.rs"]
mod helpers;

use helpers::common;
use helpers::*;
use std::process::Command;
use warpcheck::ir::{self, Callee, Module};
use warpcheck::sim::Init;

const FIXTURE: &str = "tests/fixtures/cu/cg_subset.cu";

/// Calls in kernel `name` to functions whose name starts with `prefix`.
fn calls_to(m: &Module, name: &str, prefix: &str) -> usize {
    let f = m.func(kernel(m, name));
    f.insts
        .iter()
        .filter(|i| match i.callee() {
            Some(Callee::Direct(c)) => m.func(c).name.starts_with(prefix),
            _ => false,
        })
        .count()
}

#[test]
fn plain_clang_with_the_embedded_headers_gives_ir_we_load() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cg.ll");
    let status = Command::new(common::clang())
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_80"])
        .args(["-O2", "-S", "-emit-llvm"])
        .args(common::no_toolkit_flags())
        .arg("-o")
        .arg(&out)
        .arg(fixture(FIXTURE))
        .status()
        .expect("run clang");
    assert!(status.success());
    let m = ir::llvm::load_file(&out).expect("loads");
    for k in [
        "tile_sum",
        "block_sum",
        "tile_ops",
        "odd_lanes",
        "two_phases",
    ] {
        assert!(m.func(kernel(&m, k)).is_kernel, "{k}");
    }
    // A tile of 32 reduces in log2(32) = 5 butterfly steps (16, 8, 4, 2, 1).
    assert_eq!(calls_to(&m, "tile_sum", "llvm.nvvm.shfl.sync.bfly"), 5);
    // The grid barrier is the named call the simulator will recognise.
    assert_eq!(calls_to(&m, "two_phases", "__warpcheck_grid_sync"), 1);
    // No inline asm anywhere: everything is an intrinsic.
    assert!(m.asms.is_empty());
}

#[test]
fn findings_point_at_the_users_lines() {
    let out = common::run(
        common::warpcheck()
            .args(["check", "--no-cuda", "--notes", "--format", "json"])
            .arg(fixture(FIXTURE)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        // Branches inside cg::reduce are placed at the call, not in the header.
        let file = f["file"].as_str().unwrap();
        assert!(file.ends_with("cg_subset.cu"), "{f:#}");
    }
}

#[test]
fn tile_reduction_sums_each_block() {
    let m = compile_no_cuda(FIXTURE);
    let input: Vec<i32> = (0..256).collect();
    let o = run(
        &m,
        "tile_sum",
        &launch([2, 1, 1], [128, 1, 1]),
        &[
            data("in", i32_bytes(&input)),
            buf("out", 8, Init::Zero),
            int("n", 200),
        ],
    );
    // Block 0: 0 + ... + 127 = 127 * 128 / 2 = 8128. Block 1: i = 128..199
    // (n = 200), 72 values averaging 163.5: 11772.
    assert_eq!(ints(&o, "out"), [8128, 11772]);
}

#[test]
fn block_sync_reduction() {
    let m = compile_no_cuda(FIXTURE);
    let input: Vec<i32> = (0..512).collect();
    let o = run(
        &m,
        "block_sum",
        &launch([2, 1, 1], [256, 1, 1]),
        &[data("in", i32_bytes(&input)), buf("out", 8, Init::Zero)],
    );
    // 0 + ... + 255 = 32640; 256 + ... + 511 = 32640 + 256 * 256 = 98176.
    assert_eq!(ints(&o, "out"), [32640, 98176]);
}

/// Runs `name(in, out)` on one warp whose lane r reads in[r] = r; `out`.
fn one_warp(name: &str, out_bytes: u64) -> Vec<i32> {
    let m = compile_no_cuda(FIXTURE);
    let input: Vec<i32> = (0..32).collect();
    let o = run(
        &m,
        name,
        &launch([1, 1, 1], [32, 1, 1]),
        &[
            data("in", i32_bytes(&input)),
            buf("out", out_bytes, Init::Zero),
        ],
    );
    ints(&o, "out")
}

#[test]
fn small_tiles_shuffle_and_vote_by_rank() {
    let out = one_warp("tile_ops", 768);
    let lane = |r: usize| &out[6 * r..6 * r + 6];
    // Lane r holds r. Lane 5: its tile of 16 is lanes 0..15 (min 0, max
    // 15); its tile of 4 is lanes 4..7: rank 0 holds 4, the next lane 6,
    // so 4 + 2*6 = 16; the previous lane holds 4 and rank 1 ^ 3 = 2 holds
    // 6, so 4 - 6 = -2; all four are positive (ballot 0b1111 = 15) and it
    // is tile 5 / 4 = 1 of its 16 (15 + 16 = 31); no negative, all
    // non-negative (0 + 2), two tiles of 16 in 32 threads (4 * 2): 10.
    assert_eq!(lane(5), [0, 15, 16, -2, 31, 10]);
    // Lane 0: nothing before it (shfl_up keeps its own 0), lane 3 across
    // (0 - 3); lane 0's vote is 0 > 0, false: ballot 0b1110 = 14.
    assert_eq!(lane(0), [0, 15, 2, -3, 14, 10]);
    // Lane 17: tile of 16 is 16..31; tile of 4 is 16..19, rank 1 of it:
    // 16 + 2*18 = 52, 16 - 18 = -2; tile 1 / 4 = 0 of its 16: 15.
    assert_eq!(lane(17), [16, 31, 52, -2, 15, 10]);
}

#[test]
fn coalesced_odd_lanes_rank_among_themselves() {
    let out = one_warp("odd_lanes", 256);
    // The 16 odd lanes sum 1 + 3 + ... + 31 = 16^2 = 256. Lane r = 2k + 1
    // has rank k; all 16 vote yes (ballot 0xffff = 65535); rank 1 is lane 3.
    for k in 0..16 {
        let r = 2 * k + 1;
        assert_eq!(out[2 * r], 256, "lane {r}");
        assert_eq!(
            out[2 * r + 1],
            k as i32 + 100 * 16 + 1000 * 65535 + 3,
            "lane {r}"
        );
        // Even lanes write nothing.
        assert_eq!(out[2 * (r - 1)..2 * r], [0, 0], "lane {}", r - 1);
    }
}
