//! Cycle mode (`simulate --cycles`) on kernels whose cycle counts are
//! derived by hand in the comments: Hirvisalo's TriangleSum on his paper
//! machine (one SM issuing one instruction per cycle, 1-cycle
//! instructions, 10-cycle memory, free barriers), alone and with two
//! blocks sharing the SM round-robin, and in waves.
//!
//! We derive the counts for 32-thread warps (warpcheck has no warp-size
//! option): the paper's launch of 16 threads is one warp whose lanes
//! 16-31 are idle.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::machine::Machine;
use warpcheck::sim::cycles::CycleReport;
use warpcheck::sim::{Init, LaunchConfig};

/// TriangleSum's arguments: a 16 x 16 matrix, 16 sums, c = 16.
fn triangle_args() -> [(String, warpcheck::sim::ArgValue); 3] {
    [
        buf("m", 4 * 16 * 16, Init::Iota),
        buf("v", 4 * 16, Init::Zero),
        int("c", 16),
    ]
}

/// `triangle_sum.ll` (the hand-written IR of `triangle_sum.cu`) with
/// `c = 16` over `grid` blocks of 16 threads on `machine`.
fn triangle(grid: u32, machine: Machine) -> (warpcheck::sim::Outcome, CycleReport) {
    let m = compile("tests/fixtures/time/triangle_sum.ll");
    let config = LaunchConfig {
        grid: [grid, 1, 1],
        block: [16, 1, 1],
        machine: Some(machine),
        ..LaunchConfig::default()
    };
    let o = run(&m, "triangle_sum", &config, &triangle_args());
    let c = o.cycles.clone().expect("cycle mode");
    (o, c)
}

/// The paper's launch (16 threads, c = 16) on the paper's machine.
///
/// The IR issues, per warp (steps; a phi copy is one step):
///   entry: 5 instructions + 3 phi copies into the loop            =   8
///   round d (d = 0..15), lanes t = 0..15, body when d <= t:
///     header `i < L`: 2; for d >= 1 lanes t < d go straight to the
///       latch (1 phi copy) while lanes t >= d run the body: split
///     body `d % (t+1) == 0`: 3; true for all at d = 0 (inc: 2 + 1
///       copy), false for every running lane at d >= 1 (1 copy)
///     `d % 2`: 3; even d: 1 copy; odd d: the load block, 5 + 1 copy
///     latch: barrier, d+1, i+c, test, branch = 5; back edge 3 copies
///       (d < 15), the exit edge 1 copy (d = 15)
///   d = 0:            2 + 0 + 3 + 3 + 3 + 1 + 5 + 3 = 20
///   d = 2, 4, .., 14: 2 + 1 + 3 + 1 + 3 + 1 + 5 + 3 = 19  (x7 = 133)
///   d = 1, 3, .., 13: 2 + 1 + 3 + 1 + 3 + 6 + 5 + 3 = 24  (x7 = 168)
///   d = 15:           2 + 1 + 3 + 1 + 3 + 6 + 5 + 1 = 22
///   exit: sext, gep, store, ret                                   =   4
///   steps = 8 + 20 + 133 + 168 + 22 + 4 = 355.
/// One warp never waits for an issue slot and a barrier with one warp
/// releases it on arrival, so the block takes the sum of its latencies:
/// 355 cycles of issue plus 9 more for each of the 8 loads (odd d):
/// 355 + 72 = 427.
///
/// Breakdown: the loads' 72 cycles are memory stall. Divergence is what
/// the split warp (d >= 1) issues: body 3 + copy 1 + `d % 2` 3, then 1
/// copy (even d) or the load block 5 + copy 1 (odd d): 8 x 7 rounds + 13 x
/// 8 rounds = 160. The rest, 427 - 72 - 160 = 195, is issue; line 18 (the
/// load) has 8 x 9 = 72 of stall and 8 x 6 = 48 of divergence.
#[test]
fn triangle_sum_takes_427_cycles_on_the_paper_machine() {
    let (o, c) = triangle(1, Machine::paper());
    assert_eq!(o.totals.steps, 355);
    assert_eq!(c.launch_cycles, 427);
    assert_eq!(c.blocks[0].cycles, 427);
    assert_eq!(c.blocks[0].work, 355);
    // One warp: its span is its whole time.
    assert_eq!(c.blocks[0].span, 427);
    let b = c.breakdown;
    assert_eq!(
        (b.issue, b.memory, b.barrier, b.divergence),
        (195, 72, 0, 160)
    );
    let line18 = c.lines.iter().find(|l| l.line == 18).unwrap();
    assert_eq!(line18.file, "triangle_sum.cu");
    assert_eq!((line18.cycles.memory, line18.cycles.divergence), (72, 48));
}

/// Two blocks on the paper's single SM share its one issue slot. Their
/// warps run the same 355 instructions (347 of 1 cycle, 8 loads of 10)
/// round-robin, block 0 first: warp A issues instruction j at E_j and B at
/// E_j + 1; A may issue j + 1 once its latency has passed and B has had
/// its turn, so E_{j+1} = E_j + max(2, l_j) (a 1-cycle instruction costs
/// the convoy 2 cycles, a load 10: 10 - 2 = 8 of stall, the paper's
/// max(0, T_memory - N_warps)). The last instruction (ret, 1 cycle)
/// issues at E_355 = 2 x 346 + 10 x 8 = 772 for A and 773 for B: block 0
/// ends at 773, block 1 at 774, the launch at 774.
#[test]
fn two_blocks_share_the_sm_round_robin() {
    let (_, c) = triangle(2, Machine::paper());
    let ends: Vec<u64> = c.blocks.iter().map(|b| b.cycles).collect();
    assert_eq!(ends, vec![773, 774]);
    assert_eq!(c.launch_cycles, 774);
    assert_eq!(c.waves.waves, 1);
}

/// One block per SM and one SM: three blocks run in three waves, one
/// after another, each 427 cycles alone: 3 x 427 = 1281.
#[test]
fn blocks_beyond_residency_run_in_waves() {
    let machine = Machine::paper()
        .with_settings(&["blocks_per_sm=1".into()])
        .unwrap();
    let (_, c) = triangle(3, machine);
    assert_eq!(c.waves.waves, 3);
    let waves: Vec<(u64, u64)> = c.blocks.iter().map(|b| (b.wave, b.cycles)).collect();
    assert_eq!(waves, vec![(0, 427), (1, 427), (2, 427)]);
    assert_eq!(c.launch_cycles, 1281);
    // Two SMs: blocks 0 and 2 on SM 0, block 1 on SM 1: 2 x 427.
    let machine = Machine::paper()
        .with_settings(&["blocks_per_sm=1".into(), "sms=2".into()])
        .unwrap();
    let (_, c) = triangle(3, machine);
    assert_eq!(c.launch_cycles, 854);
}

/// The CUDA source of TriangleSum, compiled by clang: one warp never waits
/// for a slot, so its block takes its span, and Brent's bound (work / P +
/// span) holds with room to spare.
#[test]
fn triangle_sum_cu_runs_in_cycle_mode() {
    let m = compile("tests/fixtures/time/triangle_sum.cu");
    let config = LaunchConfig {
        block: [16, 1, 1],
        machine: Some(Machine::paper()),
        ..LaunchConfig::default()
    };
    let o = run(&m, "triangle_sum", &config, &triangle_args());
    let c = o.cycles.unwrap();
    let b = &c.blocks[0];
    assert_eq!(b.cycles, b.span);
    assert_eq!(b.work, o.totals.steps);
    // The 8 loads of m[i] (odd rounds) stall 9 cycles each.
    assert_eq!(c.breakdown.memory, 72);
}

/// The text and JSON reports of `simulate --cycles`, and its errors.
#[test]
fn simulate_cycles_cli() {
    let file = fixture("tests/fixtures/time/triangle_sum.ll");
    let base = |extra: &[&str]| {
        let mut cmd = warpcheck();
        cmd.arg("simulate")
            .arg(&file)
            .args(["--block", "16", "--arg", "m=buf:1024:iota:f32"])
            .args(["--arg", "v=buf:64", "--arg", "c=16"])
            .args(extra);
        cmd.output().unwrap()
    };
    let out = base(&["--cycles", "--machine", "preset=paper", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["cycles"]["launch_cycles"], 427);
    assert_eq!(j["cycles"]["blocks"][0]["span"], 427);
    assert_eq!(j["cycles"]["breakdown"]["memory"], 72);
    let out = base(&["--cycles", "--machine", "preset=paper"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("launch 427"), "{text}");
    assert!(text.contains("triangle_sum.cu:18"), "{text}");
    // Without --cycles, no cycles; --machine alone is refused.
    let out = base(&["--format", "json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j.get("cycles").is_none());
    let out = base(&["--machine", "issue_rate=2"]);
    assert_eq!(out.status.code(), Some(2));
    let out = base(&["--cycles", "--machine", "issue_rate=0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("issue_rate: must be at least 1"), "{err}");
}
