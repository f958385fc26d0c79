//! `scripts/gpu-validate.sh`, the parts that run without a GPU: the dry
//! run (launches, harnesses and the simulator's figures) and the reading
//! of Nsight Compute's CSV. Figures derived by hand.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn script() -> Command {
    let mut c = Command::new("python3");
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu_validate.py"));
    c
}

#[test]
fn a_dry_run_prints_the_launch_the_harness_and_the_simulators_figures() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    let out = run(script()
        .args(["--dry-run", "--warpcheck", env!("CARGO_BIN_EXE_warpcheck")])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vector_add.cu")));
    let text = stdout(&out);
    assert!(out.status.success(), "{}{}", text, stderr(&out));
    // vector_add<<<2, 256>>>(a, b, c, n = 128): threads 0..127 of block 0
    // (4 warps) run `c[i] = a[i] + b[i]`, 3 requests of 4 sectors each
    // (32 floats from a 256-byte aligned base): 4.00 sectors per request;
    // no shared memory, and `i < n` splits no warp.
    assert!(
        text.contains("| vector_add.cu | vector_add | - / 4.00 | - / 0 | - / 0 |"),
        "{text}"
    );
    assert!(
        text.contains("vector_add<<<dim3(2,1,1), dim3(256,1,1)>>>"),
        "{text}"
    );
    assert!(text.contains("--arg arg3=128"), "{text}");
}

#[test]
fn without_a_gpu_it_says_what_is_missing() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    let out = run(script().args(["--nvcc", "no-such-nvcc", "--ncu", "no-such-ncu"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no-such-nvcc"), "{}", stderr(&out));
}

#[test]
fn nsight_computes_csv_is_read() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    // ncu --csv's layout: a header row, one row per metric.
    let csv = "==PROF== Connected to process\n\
        \"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
        \"0\",\"1\",\"harness\",\"h\",\"copy16\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"sector\",\"512\"\n\
        \"0\",\"1\",\"harness\",\"h\",\"copy16\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\",\"sector\",\"512\"\n\
        \"0\",\"1\",\"harness\",\"h\",\"copy16\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\",\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\",\"request\",\"32\"\n\
        \"0\",\"1\",\"harness\",\"h\",\"copy16\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\",\"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum\",\"request\",\"32\"\n\
        \"0\",\"1\",\"harness\",\"h\",\"copy16\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\",\"smsp__sass_branch_targets_threads_divergent.sum\",\"\",\"0\"\n\
        \"0\",\"1\",\"harness\",\"h\",\"copy16\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"Command line profiler metrics\",\"smsp__inst_executed.sum\",\"inst\",\"1,024\"\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.csv");
    std::fs::write(&path, csv).unwrap();
    let out = run(script().arg("--parse-ncu").arg(&path));
    let text = stdout(&out);
    // 8 warps × 4 + 4 pieces of a 16-byte struct copy: 1024 sectors over
    // 64 requests, 16 per request; the thousands separator read.
    assert_eq!(
        text.trim(),
        "copy16: sectors/request 16.00, divergent 0, instructions 1024, requests 64, sectors 1024",
        "{}",
        stderr(&out)
    );
}
