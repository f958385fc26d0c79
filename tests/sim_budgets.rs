//! The simulator always terminates: a step or time budget stops a kernel
//! that runs on, a warp that spins on memory nobody writes is a livelock,
//! and threads that can never all meet at `__syncthreads()` are a
//! deadlock. Each stop exits with code 1 and a report (text and JSON)
//! placing the warps at their lines and loops, with the costs counted
//! until the stop. Line numbers come from `tests/fixtures/hangs/sim_hangs.cu`.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use serde_json::Value;
use warpcheck::sim::{Budget, ErrorKind, Init};

const FIXTURE: &str = "tests/fixtures/hangs/sim_hangs.cu";
const FILE: &str = "tests/fixtures/hangs/sim_hangs.cu";
/// One warp of `forever`.
const FOREVER: [&str; 4] = ["--block", "32", "--arg", "out=buf:128"];

/// `warpcheck simulate` on a kernel of the fixture: exit code, stdout, stderr.
fn simulate(kernel: &str, args: &[&str]) -> (i32, String, String) {
    let out = warpcheck()
        .args(["simulate", FIXTURE, "--kernel", kernel])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap(),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The JSON report of a run that the kernel stops (exit code 1).
fn stopped(kernel: &str, args: &[&str]) -> Value {
    let (code, out, err) = simulate(kernel, &[args, &["--format", "json"]].concat());
    assert_eq!(code, 1, "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `(warp, lanes, state, line, loop line)` of each group in `stop.warps`
/// (line 0 where there is none).
fn groups(r: &Value) -> Vec<(u64, String, String, u64, u64)> {
    r["stop"]["warps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_eq!(g["block"], serde_json::json!([0, 0, 0]));
            if let Some(f) = g["file"].as_str() {
                assert_eq!(f, FILE);
            }
            (
                g["warp"].as_u64().unwrap(),
                g["lanes"].as_str().unwrap().to_string(),
                g["state"].as_str().unwrap().to_string(),
                g["line"].as_u64().unwrap_or(0),
                g["loop"]["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn group(
    warp: u64,
    lanes: &str,
    state: &str,
    line: u64,
    in_loop: u64,
) -> (u64, String, String, u64, u64) {
    (warp, lanes.into(), state.into(), line, in_loop)
}

#[test]
fn an_infinite_loop_stops_at_the_step_limit_in_its_loop() {
    let limit = [&FOREVER[..], &["--max-steps", "1000"]].concat();
    let r = stopped("forever", &limit);
    assert_eq!(r["status"], "step-limit");
    // Stopped at the top of the loop of line 7, about to compute line 8.
    assert_eq!(groups(&r), vec![group(0, "0-31", "running", 8, 7)]);
    assert_eq!(
        (&r["stop"]["file"], &r["stop"]["line"]),
        (&FILE.into(), &8.into())
    );
    // The partial costs: each iteration stores 32 consecutive ints (128
    // aligned bytes, 4 sectors), and at least one iteration ran.
    let t = &r["totals"];
    let requests = t["requests"].as_u64().unwrap();
    assert!(requests > 0);
    assert_eq!(t["sectors"].as_u64(), Some(4 * requests));
    assert!(t["steps"].as_u64().unwrap() >= 1000);

    let (code, text, err) = simulate("forever", &limit);
    assert_eq!(code, 1);
    assert!(
        err.contains("step limit") && err.contains("1000 warp instructions"),
        "{err}"
    );
    assert!(
        text.contains(&format!("warp 0 lanes 0-31: running at {FILE}:8:"))
            && text.contains(&format!("in the loop at {FILE}:7:")),
        "{text}"
    );
}

#[test]
fn a_step_budget_cut_keeps_the_costs_counted_so_far() {
    // clang -O2 compiles `counted` (loop not unrolled) to: entry 2
    // instructions (compare, branch), preheader 3 (ntid, tid, branch) and
    // a phi copy into the loop, then per iteration 8 instructions (mul,
    // add, zext, gep, store, add, compare, branch) and a phi copy on the
    // back edge: 6 + 9k steps after k iterations, and 906 in all for 100
    // (6 + 9·100 - 1 back edge not taken + 1 ret). The budget is looked at
    // where control moves, so --max-steps 500 stops at the first k with
    // 6 + 9k >= 500: k = 55, 501 steps, 55 stores of 4 sectors each.
    let args = ["--block", "32", "--arg", "out=buf:12800", "--arg", "n=100"];
    let r = stopped("counted", &[&args[..], &["--max-steps", "500"]].concat());
    assert_eq!(r["status"], "step-limit");
    let t = &r["totals"];
    assert_eq!(
        (&t["steps"], &t["requests"], &t["sectors"]),
        (&501.into(), &55.into(), &220.into())
    );
    // About to store again (line 74) in the loop of line 73.
    assert_eq!(groups(&r), vec![group(0, "0-31", "running", 74, 73)]);
    let store = r["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "store")
        .unwrap();
    assert_eq!(
        (&store["line"], &store["executions"]),
        (&74.into(), &55.into())
    );

    // The library stops the same way and keeps the same partial outcome;
    // the whole run is larger on every count.
    let m = compile(FIXTURE);
    let mut config = launch([1, 1, 1], [32, 1, 1]);
    let out = [buf("out", 12800, Init::Zero), int("n", 100)];
    let full = run(&m, "counted", &config, &out).totals;
    assert_eq!((full.steps, full.requests, full.sectors), (906, 100, 400));
    config.budget.max_steps = Some(500);
    let e = try_run(&m, "counted", &config, &out).unwrap_err();
    assert_eq!(e.kind, ErrorKind::StepLimit);
    let partial = e.details.partial.expect("a partial outcome");
    let part = partial.totals;
    assert_eq!((part.steps, part.requests, part.sectors), (501, 55, 220));
    // out[32 i + t] = i for the 55 iterations that ran, 0 after.
    let values = ints(&partial, "out");
    assert_eq!((values[54 * 32 + 5], values[55 * 32 + 5]), (54, 0));
}

#[test]
fn a_timeout_stops_an_endless_loop() {
    // No step limit: only the clock can stop it.
    let r = stopped(
        "forever",
        &[&FOREVER[..], &["--max-steps", "0", "--timeout", "0.2"]].concat(),
    );
    assert_eq!(r["status"], "timeout");
    assert_eq!(groups(&r), vec![group(0, "0-31", "running", 8, 7)]);
    assert!(r["stop"]["message"].as_str().unwrap().contains("timeout"));
}

#[test]
fn a_spin_on_a_flag_nobody_sets_is_a_livelock() {
    // Two warps both spin in the loop of line 15 on the atomic of line 16.
    let r = stopped(
        "spin_on_flag",
        &[
            "--block",
            "64",
            "--arg",
            "flag=buf:4",
            "--arg",
            "out=buf:256",
        ],
    );
    assert_eq!(r["status"], "livelock");
    assert_eq!(
        groups(&r),
        vec![
            group(0, "0-31", "spinning", 16, 15),
            group(1, "0-31", "spinning", 16, 15)
        ]
    );
    let reads: Vec<&Value> = r["stop"]["reads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["line"])
        .collect();
    assert_eq!(reads, vec![&Value::from(16)]);
    assert_eq!(r["stop"]["line"], 15);

    // A volatile read: loop of line 22, read on line 23.
    let (code, text, err) = simulate(
        "spin_volatile",
        &[
            "--block",
            "32",
            "--arg",
            "flag=buf:4",
            "--arg",
            "out=buf:128",
        ],
    );
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("{FILE}:22:")) && err.contains("livelock"),
        "{err}"
    );
    assert!(
        text.contains(&format!("warp 0 lanes 0-31: spinning at {FILE}:23:"))
            && text.contains(&format!("in the loop at {FILE}:22:"))
            && text.contains(&format!("reads: {FILE}:23:")),
        "{text}"
    );

    // The library reports it too, with its default budget.
    let m = compile(FIXTURE);
    let args = [buf("flag", 4, Init::Zero), buf("out", 128, Init::Zero)];
    let e = try_run(&m, "spin_volatile", &launch([1, 1, 1], [32, 1, 1]), &args).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Livelock);
}

#[test]
fn a_flag_set_by_a_later_warp_is_no_livelock() {
    // Warp 0 spins first; once parked, warp 1 runs and sets the flag to 7,
    // and warp 0 leaves its loop and stores it.
    let m = compile(FIXTURE);
    let args = [buf("flag", 4, Init::Zero), buf("out", 256, Init::Zero)];
    let o = run(&m, "handoff", &launch([1, 1, 1], [64, 1, 1]), &args);
    let out = ints(&o, "out");
    assert!(
        out[..32].iter().all(|&v| v == 7) && out[32..].iter().all(|&v| v == 0),
        "{out:?}"
    );
    // With the flag already set, nothing spins.
    let args = [data("flag", i32_bytes(&[1])), buf("out", 128, Init::Zero)];
    assert!(try_run(&m, "spin_on_flag", &launch([1, 1, 1], [32, 1, 1]), &args).is_ok());
}

#[test]
fn barriers_in_both_arms_of_a_warp_splitting_branch_deadlock() {
    // Threads 0..47 take the first arm: warp 0 and lanes 0-15 of warp 1
    // wait at line 43; lanes 16-31 of warp 1 are left to run the else arm
    // (line 45) and its barrier (line 46).
    let r = stopped("split_barriers", &["--block", "64", "--arg", "a=buf:256"]);
    assert_eq!(r["status"], "deadlock");
    assert_eq!(
        groups(&r),
        vec![
            group(0, "0-31", "barrier", 43, 0),
            group(1, "0-15", "barrier", 43, 0),
            group(1, "16-31", "pending", 45, 0),
        ]
    );
    let message = r["stop"]["message"].as_str().unwrap();
    assert!(
        message.contains("reached by lanes 0-15 of warp 1 while lanes 16-31 are on another path"),
        "{message}"
    );
    assert_eq!(
        (&r["stop"]["line"], &r["stop"]["thread"]),
        (&43.into(), &serde_json::json!([32, 0, 0]))
    );
}

#[test]
fn warps_at_different_barriers_meet_since_barrier_zero_counts_threads() {
    // Warp 0 waits at the first arm's barrier, warp 1 at the second's:
    // every thread arrives, so both go on and add 1.
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "warp_barriers",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("a", 256, Init::Zero)],
    );
    let a = floats(&o, "a");
    assert!(
        a[..32].iter().all(|&v| v == 2.0) && a[32..].iter().all(|&v| v == 3.0),
        "{a:?}"
    );
}

#[test]
fn an_early_exit_before_a_barrier_deadlocks() {
    // n = 16: warp 1 exits entirely; warp 0 waits at line 66 with lanes
    // 0-15 while lanes 16-31 are on their way out.
    let r = stopped(
        "early_exit",
        &["--block", "64", "--arg", "a=buf:256", "--arg", "n=16"],
    );
    assert_eq!(r["status"], "deadlock");
    let g = groups(&r);
    assert_eq!(g[0], group(0, "0-15", "barrier", 66, 0));
    assert_eq!(
        (g[1].0, g[1].1.as_str(), g[1].2.as_str()),
        (0, "16-31", "returning")
    );
    assert_eq!(g[2], group(1, "0-31", "exited", 0, 0));
    assert!(r["stop"]["message"]
        .as_str()
        .unwrap()
        .contains("can never complete"));
    // The stores before the barrier were counted: one per warp that got
    // that far (warp 0, lanes 0-15: 64 bytes, 2 sectors).
    assert_eq!(
        (&r["totals"]["requests"], &r["totals"]["sectors"]),
        (&1.into(), &2.into())
    );
}

#[test]
fn memory_faults_report_their_status_and_partial_costs() {
    // Lane 16 of the only warp writes a[32], past a 128-byte buffer; the
    // store is counted before any lane writes: 1 request over bytes
    // 64..191, 4 sectors.
    let out = warpcheck()
        .args([
            "simulate",
            "tests/fixtures/cu/sim_errors.cu",
            "--kernel",
            "past_the_end",
            "--format",
            "json",
        ])
        .args(["--block", "32", "--arg", "a=buf:128", "--arg", "n=16"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "memory-error");
    assert_eq!(
        (&r["stop"]["line"], &r["stop"]["thread"]),
        (&3.into(), &serde_json::json!([16, 0, 0]))
    );
    assert!(r["stop"]["address"].is_u64());
    assert_eq!(
        (&r["totals"]["requests"], &r["totals"]["sectors"]),
        (&1.into(), &4.into())
    );
}

#[test]
fn a_run_that_completes_is_ok() {
    let (code, out, _) = simulate(
        "counted",
        &[
            "--block",
            "32",
            "--arg",
            "out=buf:1280",
            "--arg",
            "n=10",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 0);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["status"], "ok");
    assert!(r.get("stop").is_none());
    // The default budget leaves 20 times the room of the largest launch
    // measured over the examples and fixtures (30.5 M steps, see budget.rs).
    let b = Budget::default();
    assert!(b.max_steps.unwrap() >= 20 * 30_500_000 && b.timeout.is_some());
}
