//! `warpcheck time` on kernels whose bounds are derived by hand in the
//! comments, the structures it cannot bound (and why), and its JSON.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use serde_json::Value;

fn time(file: &str, extra: &[&str]) -> Value {
    let out = warpcheck()
        .arg("time")
        .arg(fixture(file))
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    helpers::common::ok_json(&out)
}

const TRIANGLE: &str = "tests/fixtures/time/triangle_sum.ll";

/// `time` on TriangleSum's IR, c = 16, 16 threads, on the paper's machine.
fn triangle(extra: &[&str]) -> Value {
    let paper = [
        "--block-dim",
        "16",
        "--param",
        "c=16",
        "--machine",
        "preset=paper",
    ];
    time(TRIANGLE, &[&paper[..], extra].concat())
}

/// TriangleSum (`triangle_sum.ll`, c = 16, 16 threads: one warp) on the
/// paper's machine (P = 1, instructions 1 cycle, memory 10, barriers free).
///
/// The warp graph serialises the two thread-dependent branches: `i < L`
/// (the split path runs the latch side's phi copy, 1, then the body) and
/// `d % (t+1) == 0` (both `inc`, 2 + 1 copy, and the direct edge's copy,
/// 1). The worst round then issues header 2 + 1 + body 3 + inc 3 + 1 +
/// `d % 2` 3 + load block 5 + copy 1 + latch 5 + back edge 3 = 27
/// instructions, and takes 27 + 9 (the load's 10 cycles) = 36 cycles.
/// The loop takes its back edge at most c - 1 = 15 times: 16 rounds, the
/// last leaving by the exit edge (1 copy, not 3). With entry 5 + 3 copies
/// and exit 4:
///   work per warp = 16·27 - 2 + 8 + 4 = 442 (the cost stage: 27c + 10);
///   span per warp = 16·36 - 2 + 8 + 4 = 586 (36c + 10).
/// One warp alone on the SM never waits for a slot (q = 0), so the
/// abstract CTA simulation gives the span, 586; work/span gives W/P + S =
/// 442/1 + 586 = 1028. The simulation takes 427 (tests/time_cycles.rs).
#[test]
fn triangle_sum_bounds_by_hand() {
    let j = triangle(&["--simulate"]);
    assert_eq!(j["kernel"], "triangle_sum");
    assert_eq!(j["params"]["c"], 16.0);
    assert_eq!(j["work"]["per_warp"], "27·max(0, c) + 10");
    assert_eq!(j["work"]["value"], 442.0);
    assert_eq!(j["span"]["value"], 586.0);
    assert_eq!(j["methods"]["abstract-cta"]["block_cycles"], 586.0);
    assert_eq!(j["methods"]["work-span"]["block_cycles"], 1028.0);
    assert_eq!(j["method"], "abstract-cta");
    assert_eq!(j["bound_cycles"], 586.0);
    assert_eq!(j["simulated_cycles"], 427);
    // The 16 rounds' loads: 9 cycles of stall each on the worst path.
    assert_eq!(j["breakdown"]["memory"], 144.0);
    assert_eq!(j["issue_wait"], 0);
}

/// Two blocks share the paper's single SM: N = 2 warps, P = 1, so a
/// ready warp may wait q = ⌊(2 - 1)/1⌋ = 1 cycle per instruction. The
/// worst path issues 442 instructions: 586 + 442 = 1028 per block (and
/// launch, one wave). Work/span counts both blocks' work: 2·442/1 + 586 =
/// 1470. The simulation takes 774.
#[test]
fn round_robin_wait_grows_with_the_warps_on_the_sm() {
    let j = triangle(&["--grid", "2", "--simulate"]);
    assert_eq!(j["resident_warps"], 2);
    assert_eq!(j["issue_wait"], 1);
    assert_eq!(j["methods"]["abstract-cta"]["launch_cycles"], 1028.0);
    assert_eq!(j["methods"]["work-span"]["launch_cycles"], 1470.0);
    assert_eq!(j["simulated_cycles"], 774);
    // One block per SM: two waves, each bounded as one block alone.
    let j = triangle(&["--grid", "2", "--machine", "blocks_per_sm=1"]);
    assert_eq!(j["waves"]["waves"], 2);
    assert_eq!(j["bound_cycles"], 2.0 * 586.0);
}

/// Warps that meet at different barriers: no abstract bound (with the
/// lines), and work/span sums the two warps' spans.
#[test]
fn barriers_under_thread_dependent_control() {
    let j = time(
        "tests/fixtures/time/structures.cu",
        &[
            "--kernel",
            "split_barrier",
            "--block-dim",
            "64",
            "--simulate",
        ],
    );
    let why = j["methods"]["abstract-cta"]["reason"].as_str().unwrap();
    assert!(
        why.contains("barrier at line 18") && why.contains("branch at line 16"),
        "{why}"
    );
    assert_eq!(j["method"], "work-span");
    assert_eq!(j["span"]["factor"], 2.0);
    assert!(j["bound_cycles"].as_f64().unwrap() >= j["simulated_cycles"].as_f64().unwrap());
}

#[test]
fn no_bound_says_why() {
    let j = time(
        "tests/fixtures/time/structures.cu",
        &["--kernel", "chase", "--block-dim", "64"],
    );
    assert!(j["bound_cycles"].is_null());
    let why = j["reason"].as_str().unwrap();
    assert!(why.contains("loop at line 6 has no trip bound"), "{why}");
    // A parameter the trip counts need.
    let j = time(TRIANGLE, &["--block-dim", "16"]);
    assert!(j["bound_cycles"].is_null());
    assert!(j["reason"].as_str().unwrap().contains("value of c"), "{j}");
    // A grid-wide barrier.
    let j = time(
        "tests/fixtures/cu/cg_grid.cu",
        &["--kernel", "mirror", "--block-dim", "64", "--no-cuda"],
    );
    assert!(
        j["reason"].as_str().unwrap().contains("grid-wide barrier"),
        "{j}"
    );
}

/// The JSON fields the issue names are always there.
#[test]
fn json_shape() {
    let j = time(TRIANGLE, &["--block-dim", "16", "--param", "c=4"]);
    for key in [
        "kernel",
        "params",
        "bound_cycles",
        "method",
        "work",
        "span",
        "simulated_cycles",
        "breakdown",
    ] {
        assert!(j.get(key).is_some(), "no {key}: {j}");
    }
    assert!(j["simulated_cycles"].is_null());
    let b = &j["breakdown"];
    let sum: f64 = ["issue", "memory", "barrier", "divergence", "bandwidth"]
        .iter()
        .map(|k| b[k].as_f64().unwrap())
        .sum();
    assert!(
        (sum - j["bound_cycles"].as_f64().unwrap()).abs() < 1.0,
        "{j}"
    );
    // Text: the bound, the method and the note at the kernel's line.
    let out = warpcheck()
        .arg("time")
        .arg(fixture(TRIANGLE))
        .args(["--block-dim", "16", "--param", "c=4"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("by abstract-cta"), "{text}");
    assert!(text.contains("triangle_sum.cu:8: note: time ≤"), "{text}");
    // Bad input: exit 2 with the reason.
    let out = warpcheck()
        .arg("time")
        .arg(fixture(TRIANGLE))
        .args(["--machine", "nonsense=1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown machine key"));
}

/// `check --bounds` and the plugin (when bounds are asked for) add a time
/// note at the kernel's line naming the dominant term; without parameters
/// it is the block's symbolic work/span bound and the worst path's shape.
#[test]
fn time_notes_in_check_and_the_plugin() {
    let out = warpcheck()
        .args(["check", "--bounds", "--block-dim", "16"])
        .arg(fixture(TRIANGLE))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let note = text
        .lines()
        .find(|l| l.contains("note: time per block ≤"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(note.contains("(work-span)"), "{note}");
    assert!(note.contains("memory stalls at line 18"), "{note}");
    let plugin = helpers::common::plugin();
    let opt = |bounds: &str| {
        let out = std::process::Command::new(helpers::common::llvm_tool("opt"))
            .env("WARPCHECK_BOUNDS", bounds)
            .arg(format!("-load-pass-plugin={}", plugin.display()))
            .args(["-passes=warpcheck", "-disable-output"])
            .arg("-pass-remarks-analysis=warpcheck")
            .arg(fixture(TRIANGLE))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let with = opt("1");
    assert!(with.contains("time per block ≤"), "{with}");
    assert!(!opt("0").contains("time per block"));
}

const ROOFLINE: &str = "tests/fixtures/time/roofline.cu";

/// The issue's triad, `c[i] = a[i] + s * b[i]` at n = 2^24 in blocks of
/// 256 (65,536 blocks, 2^19 warps), on the A100 model.
///
/// Each warp loads 32 consecutive floats of `a` and of `b` and stores 32
/// of `c`: 128 bytes each, 4 sectors each (the warp's first element is
/// 128-byte aligned in a `cudaMalloc` buffer), 12 sectors per warp. The
/// launch moves 12 · 2^19 = 6,291,456 sectors = 201,326,592 bytes. At
/// 1555 GB/s and 1410 MHz DRAM needs 201,326,592 · 1410 / 1,555,000 =
/// 182,553.4 cycles, 182,554 whole; L2 at 5120 bytes per cycle 39,321.6,
/// 39,322. The bound adds both to its latency and issue part, so it is at
/// least 221,876 cycles = 157.4 µs: above the 98 µs that 201 MB take at
/// the 80 GB part's 2.04 TB/s, and above the 129.5 µs they take at the
/// model's 1555 GB/s. The DRAM term exceeds the latency part (the issue
/// names 61.6 µs, under 86,900 cycles), so bandwidth dominates.
#[test]
fn a_memory_bound_triad_is_bounded_by_bandwidth() {
    let j = time(
        ROOFLINE,
        &[
            "--kernel",
            "triad",
            "--block-dim",
            "256",
            "--grid",
            "65536",
            "--param",
            "n=16777216",
            "--param",
            "s=2",
        ],
    );
    let t = &j["throughput"];
    assert_eq!(t["sectors_per_warp"], "12");
    assert_eq!(t["sectors"], 6_291_456.0);
    assert_eq!(t["bytes"], 201_326_592.0);
    assert_eq!(t["dram_cycles"], 182_554.0);
    assert_eq!(t["l2_cycles"], 39_322.0);
    assert_eq!(t["shared_cycles"], 0.0);
    assert_eq!(t["cycles"], 182_554.0 + 39_322.0);
    let bound = j["bound_cycles"].as_f64().unwrap();
    let latency = j["latency_cycles"].as_f64().unwrap();
    assert!((bound - latency - 221_876.0).abs() <= 1.0, "{j}");
    assert!(latency < 182_554.0, "{j}");
    assert!(j["microseconds"].as_f64().unwrap() >= 98.0, "{j}");
    assert_eq!(j["limited_by"], "DRAM bandwidth");
    let note = j["note"].as_str().unwrap();
    assert!(note.starts_with("DRAM bandwidth dominates"), "{note}");
    assert_eq!(j["breakdown"]["bandwidth"], 221_876.0);
    // The 80 GB part: 201,326,592 · 1410 / 2,039,000 = 139,220.4 cycles
    // (98.7 µs) of DRAM alone.
    let j = time(
        ROOFLINE,
        &[
            "--kernel",
            "triad",
            "--block-dim",
            "256",
            "--grid",
            "65536",
            "--param",
            "n=16777216",
            "--param",
            "s=2",
            "--machine",
            "dram_gbps=2039",
        ],
    );
    assert_eq!(j["throughput"]["dram_cycles"], 139_221.0);
    assert!(j["microseconds"].as_f64().unwrap() >= 98.0, "{j}");
    // The text names the term too.
    let out = warpcheck()
        .arg("time")
        .arg(fixture(ROOFLINE))
        .args(["--kernel", "triad", "--block-dim", "256", "--grid", "65536"])
        .args(["--param", "n=16777216", "--param", "s=2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DRAM bandwidth dominates"), "{text}");
    assert!(text.contains("roofline: latency and issue"), "{text}");
}

/// A chain of 1000 dependent FMAs per thread and one store: 4 sectors
/// per warp, 8192 warps, 32,768 sectors = 1 MiB, 951 cycles of DRAM;
/// the chain alone is 1000 · 4 cycles of ALU latency per warp, and the
/// bound over 2 waves far more. Issue or latency dominates, not bandwidth.
#[test]
fn a_compute_bound_kernel_is_bounded_by_issue_or_latency() {
    let j = time(
        ROOFLINE,
        &[
            "--kernel",
            "fma_chain",
            "--block-dim",
            "256",
            "--grid",
            "1024",
            "--param",
            "iters=1000",
        ],
    );
    assert_eq!(j["throughput"]["sectors"], 32_768.0);
    assert_eq!(j["limited_by"], "latency and issue");
    let note = j["note"].as_str().unwrap();
    assert!(
        note.starts_with("issuing instructions") || note.starts_with("memory stalls"),
        "{note}"
    );
    assert!(j["latency_cycles"].as_f64().unwrap() > 2.0 * 4000.0, "{j}");
}

/// The simulator's launch is no faster than the bandwidth allows.
///
/// Triad at n = 2^20 (4096 blocks): 2^20 · 12 = 12,582,912 bytes, which
/// DRAM moves in 12,582,912 · 1410 / 1,555,000 = 11,409.4 cycles: the
/// simulated launch is 11,410, as the static latency part (which covers
/// the replay) is below that. `column` on the paper machine with one
/// shared wavefront per cycle: 216 blocks on its one SM, 8 warps each,
/// two accesses per warp whose 32 lanes all hit bank 0 (32 wavefronts
/// each): 216 · 8 · 2 · 32 = 110,592 wavefronts, 110,592 cycles.
#[test]
fn simulated_cycles_respect_the_throughput_limits() {
    let j = time(
        ROOFLINE,
        &[
            "--kernel",
            "triad",
            "--block-dim",
            "256",
            "--grid",
            "4096",
            "--param",
            "n=1048576",
            "--param",
            "s=2",
            "--simulate",
        ],
    );
    assert!(j["latency_cycles"].as_f64().unwrap() < 11_410.0, "{j}");
    assert_eq!(j["simulated_cycles"], 11_410);
    assert!(j["bound_cycles"].as_f64().unwrap() >= 11_410.0, "{j}");
    let j = time(
        ROOFLINE,
        &[
            "--kernel",
            "column",
            "--block-dim",
            "256",
            "--grid",
            "216",
            "--machine",
            "preset=paper",
            "--machine",
            "shared_wavefronts_per_cycle=1",
            "--simulate",
            "--arg",
            "out=buf:4096",
        ],
    );
    assert_eq!(j["throughput"]["wavefronts_per_warp"], "64");
    assert_eq!(j["throughput"]["sm_wavefronts"], 110_592.0);
    assert_eq!(j["simulated_cycles"], 110_592);
    assert_eq!(j["limited_by"], "shared-memory bandwidth");
    assert!(j["bound_cycles"].as_f64().unwrap() >= 110_592.0, "{j}");
    // The paper's machine has no limits: the replay alone.
    let j = time(
        ROOFLINE,
        &[
            "--kernel",
            "column",
            "--block-dim",
            "256",
            "--grid",
            "216",
            "--machine",
            "preset=paper",
            "--simulate",
            "--arg",
            "out=buf:4096",
        ],
    );
    assert_eq!(j["throughput"]["cycles"], 0.0);
    assert_eq!(j["limited_by"], "latency and issue");
    assert!(j["simulated_cycles"].as_u64().unwrap() < 110_592, "{j}");
}

/// reduce1 at 256 threads: its shared-memory traffic per warp is what
/// each entry into the ladder pays, not the worst value's wavefronts on
/// every iteration. Per access (two loads and a store of `sdata[2·s·tid]`)
/// the values s = 1..128 take 2, 4, 8, 8, 8, 4, 2 and 1 wavefronts (the
/// conflict degrees: tests/cost_bounds.rs derives them): 37, 111 for the
/// three; with the conflict-free store `sdata[tid]` and the broadcast
/// read of `sdata[0]`, 113 (8 on each of 8 iterations for 3 accesses was
/// 194).
#[test]
fn a_swept_loop_pays_its_shared_wavefronts_once_per_entry() {
    let j = time(
        "tests/fixtures/cu/cost_reduce.cu",
        &[
            "--kernel",
            "reduce1",
            "--block-dim",
            "256",
            "--grid",
            "1000",
            "--param",
            "n=256000",
            "--shared-bytes",
            "1024",
        ],
    );
    assert_eq!(j["throughput"]["wavefronts_per_warp"], "113", "{j}");
}
