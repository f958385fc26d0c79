//! `warpcheck run`'s sanitizer on small whole programs
//! (tests/fixtures/run): shared-memory races and reads of device memory
//! nothing wrote are reported at their lines with the threads and block,
//! and correct programs (synchronised reductions, atomics, memset or
//! kernel-written buffers) get no report. Needs `cargo build` first (the
//! runtime is in libwarpcheck.so, beside the binary).
//!
//! The simulator runs a block's warps in order, each until it waits at a
//! barrier or ends, lanes lowest first; which access of a race comes
//! first below follows from that order.

mod common;

use common::{fixture, stderr, stdout, warpcheck};
use serde_json::Value;
use std::process::Output;

fn run(name: &str, extra: &[&str]) -> Output {
    common::plugin();
    let file = fixture(&format!("run/{name}.cu"));
    common::run(warpcheck().arg("run").args(extra).arg(file))
}

/// The run's JSON report and the run's output.
fn run_json(name: &str, extra: &[&str]) -> (Value, Output) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json");
    let mut args = vec!["--format", "json", "-o", report.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run(name, &args);
    let text = std::fs::read(&report).unwrap_or_else(|_| panic!("no report: {}", stderr(&out)));
    (serde_json::from_slice(&text).unwrap(), out)
}

fn errors(r: &Value) -> Vec<Value> {
    r["errors"].as_array().cloned().unwrap_or_default()
}

/// A program that should get no report: it passes its own check, and the
/// report has no error.
fn clean(name: &str, says: &str) {
    let (r, out) = run_json(name, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), says);
    assert_eq!(errors(&r), Vec::<Value>::new());
    assert!(!stderr(&out).contains("========="), "{}", stderr(&out));
}

/// `s[t] = t` (line 10, the `=` at column 8) then `s[(t + 32) % 64]`
/// (line 11, column 12) in a block of 64: warp 0 runs first and reads
/// slots 32-63 before warp 1 stores them, so thread 32's store of `s[32]`
/// races with thread 0's read of it; warp 1's reads of warp 0's slots are
/// the same pair of lines, reported once. The launch goes on: no error
/// for the program, exit 0.
#[test]
fn a_shared_memory_race_is_reported_at_both_lines() {
    let (r, out) = run_json("race_shared", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "sync: no error\n");
    assert_eq!(
        err.matches("========= warpcheck run: race in").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("race in rotate(int*): "),
        "the kernel is named: {err}"
    );
    assert!(
        err.contains("race_shared.cu:11:12 read by thread (0,0,0) and "),
        "{err}"
    );
    assert!(
        err.contains(
            "race_shared.cu:10:8 write by thread (32,0,0) in block (0,0,0), with no barrier between"
        ),
        "{err}"
    );
    let e = errors(&r);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["kind"], "race");
    assert_eq!(
        (e[0]["line"].as_u64(), e[0]["column"].as_u64()),
        (Some(11), Some(12))
    );
    assert_eq!(e[0]["access"], "read");
    assert_eq!(e[0]["thread"], serde_json::json!([0, 0, 0]));
    assert_eq!(e[0]["block"], serde_json::json!([0, 0, 0]));
    let other = &e[0]["related"];
    assert_eq!(
        (other["line"].as_u64(), other["column"].as_u64()),
        (Some(10), Some(8))
    );
    assert_eq!(other["access"], "write");
    assert_eq!(other["thread"], serde_json::json!([32, 0, 0]));
}

/// A tree reduction with `__syncthreads()` between its steps and the last
/// warp's steps ordered by `__syncwarp()` between each read and write.
#[test]
fn a_synchronised_reduction_has_no_race() {
    clean("reduce_synced", "sums right\n");
}

/// The pre-Volta warp-synchronous reduction: lines 14-19 are
/// `v[t] += v[t + o]` for o = 32, 16, 8, 4, 2, 1 (the `+=` at column 10,
/// the second `v` at 13) by lanes 0-31 of warp 0, with no `__syncwarp()`.
/// On line 15 lane 0 reads `v[16]`, which lane 16 wrote on line 14; and
/// lane 16 then writes `v[16]` on line 15 after lane 0 read it there. So
/// each of lines 15-19 races with the line before (write, read) and with
/// itself (read, write): 10 pairs. Line 14's `v[t + 32]` was written
/// before the barrier, and each lane's `v[t]` is its own.
#[test]
fn a_warp_synchronous_reduction_without_syncwarp_races() {
    let (r, out) = run_json("warp_reduce_volatile", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warp_reduce_volatile.cu:14:10 write by thread (16,0,0) and "),
        "{err}"
    );
    assert!(
        err.contains("warp_reduce_volatile.cu:15:13 read by thread (0,0,0) in block (0,0,0), with no __syncwarp or barrier between"),
        "{err}"
    );
    let e = errors(&r);
    assert_eq!(e.len(), 10, "{e:?}");
    let mut pairs: Vec<(u64, u64)> = e
        .iter()
        .map(|x| {
            (
                x["line"].as_u64().unwrap(),
                x["related"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    pairs.sort();
    let mut want: Vec<(u64, u64)> = (15..=19).flat_map(|l| [(l - 1, l), (l, l)]).collect();
    want.sort();
    assert_eq!(pairs, want);
    assert!(e.iter().all(|x| x["kind"] == "race"));
}

/// Atomics on shared bins race only with each other; the clearing and the
/// reading are on the other sides of barriers.
#[test]
fn shared_atomics_do_not_race() {
    clean("shared_atomics", "bins right\n");
}

/// 1000 ints copied into an allocation of 1001, and `in[i]` read for
/// `i <= 1000` (line 8, `in` at column 18): thread 1000 is thread
/// 1000 - 3 * 256 = 232 of block 3, and it reads bytes 4000-4003, which
/// nothing wrote. `out` has 1001 ints and the kernel writes them all.
#[test]
fn an_uninitialised_read_is_reported_at_its_line() {
    let (r, out) = run_json("uninitialized_read", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "sync: no error\n");
    assert!(
        err.contains("uninitialized_read.cu:8:18: uninitialized __global__ read of size 4 bytes: offset 4000 of 'cudaMalloc #1' (4004 bytes) was never written"),
        "{err}"
    );
    assert!(
        err.contains("by thread (232,0,0) in block (3,0,0)"),
        "{err}"
    );
    let e = errors(&r);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0]["kind"], "uninitialized-read");
    assert_eq!(e[0]["line"], 8);
    assert_eq!(e[0]["thread"], serde_json::json!([232, 0, 0]));
    assert_eq!(e[0]["block"], serde_json::json!([3, 0, 0]));
}

#[test]
fn a_memset_buffer_and_a_device_variable_are_written() {
    clean("memset_read", "all 3\n");
}

/// Written by one kernel, copied on the device, read by the next.
#[test]
fn a_buffer_written_by_a_kernel_is_written_for_the_next() {
    clean("kernel_to_kernel", "all squares\n");
}

/// `--error-exitcode` turns any finding (a race, an out-of-bounds write)
/// into that exit code, and leaves a clean run's alone.
#[test]
fn error_exitcode_applies_to_every_finding() {
    assert_eq!(
        run("race_shared", &["--error-exitcode", "7"]).status.code(),
        Some(7)
    );
    // The program itself exits 3 after its out-of-bounds write.
    assert_eq!(
        run("out_of_bounds", &["--error-exitcode", "9"])
            .status
            .code(),
        Some(9)
    );
    let out = run("reduce_synced", &["--error-exitcode", "7"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
