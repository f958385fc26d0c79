//! `scripts/gpu-validate.sh`, the parts that run without a GPU: `prepare`
//! (launches, harnesses and the simulator's figures), `compare` against a
//! report made by hand, and the reading of Nsight Compute's CSV. Figures
//! derived by hand.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;

fn script() -> Command {
    let mut c = Command::new("python3");
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu_validate.py"));
    c
}

/// `prepare` of the bundled vector add into a fresh directory: the plan.
fn prepared(dir: &Path) -> serde_json::Value {
    let out = run(script()
        .args(["prepare"])
        .arg(dir)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vector_add.cu"))
        .args(["--warpcheck", env!("CARGO_BIN_EXE_warpcheck")]));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    serde_json::from_str(&std::fs::read_to_string(dir.join("plan.json")).unwrap()).unwrap()
}

#[test]
fn prepare_writes_the_harness_and_the_simulators_figures() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    let dir = tempfile::tempdir().unwrap();
    let plan = prepared(dir.path());
    // vector_add<<<2, 256>>>(a, b, c, n = 128): threads 0..127 of block 0
    // (4 warps) run `c[i] = a[i] + b[i]`, 3 requests of 4 sectors each
    // (32 floats from a 256-byte aligned base): 12 requests, 48 sectors;
    // no shared memory, and `i < n` splits no warp.
    let file = &plan["files"][0];
    assert_eq!(file["file"], "examples/vector_add.cu", "{plan:#}");
    let totals = &file["kernels"][0]["sim"]["totals"];
    assert_eq!(totals["requests"], 12, "{totals:#}");
    assert_eq!(totals["sectors"], 48, "{totals:#}");
    assert_eq!(totals["wavefronts"], 0, "{totals:#}");
    assert_eq!(totals["divwarps"], 0, "{totals:#}");
    let harness =
        std::fs::read_to_string(dir.path().join(file["harness"].as_str().unwrap())).unwrap();
    assert!(
        harness.contains("vector_add<<<dim3(2,1,1), dim3(256,1,1), 8192>>>(WcPtr{arg0}"),
        "{harness}"
    );
    assert!(harness.contains("(int)128"), "{harness}");
}

#[test]
fn compare_tables_the_gpus_figures_beside_the_simulators() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    let dir = tempfile::tempdir().unwrap();
    let plan = prepared(dir.path());
    let file = &plan["files"][0];
    let mangled = file["kernels"][0]["mangled"].as_str().unwrap();
    // What `ncu --page raw --csv` prints for the launch: a row per kernel,
    // a column per metric; 36 + 12 sectors, 8 + 4 requests as above.
    let raw = format!(
        "\"ID\",\"Kernel Name\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\",\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\",\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\",\"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum\",\"smsp__inst_executed.sum\"\n\
         \"\",\"\",\"sector\",\"sector\",\"\",\"\",\"inst\"\n\
         \"0\",\"{mangled}\",\"32\",\"16\",\"8\",\"4\",\"176\"\n"
    );
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let gpu = serde_json::json!({ file["harness"].as_str().unwrap(): { "raw": raw } });
    let mut gz = gzip(&serde_json::to_vec(&gpu).unwrap());
    std::fs::write(results.join("gpu.json.gz"), &mut gz).unwrap();
    let out = run(script().arg("compare").arg(dir.path()).arg(&results));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("| vector_add.cu | vector_add | 48 / 48 | 12 / 12 | 0 / 0 | 0 / 0 | 176 / "),
        "{text}"
    );
    assert!(
        text.contains(
            "1 kernels compared; global sectors equal in 1, requests in 1, shared wavefronts in 1."
        ),
        "{text}"
    );
}

/// `bytes` as a gzip stream, written by python3's gzip module (the test
/// needs no compression crate).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import gzip,sys; sys.stdout.buffer.write(gzip.compress(sys.stdin.buffer.read()))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    child.wait_with_output().unwrap().stdout
}

#[test]
fn without_a_gpu_it_says_what_is_missing() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    let out = run(script().args([
        "gpu",
        "work",
        "out",
        "--nvcc",
        "no-such-nvcc",
        "--ncu",
        "no-such-ncu",
    ]));
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
    let out = run(script().arg("parse").arg(&path));
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

/// `prepare --ptx`: clang's PTX of the file beside the harness, which
/// loads it and launches each kernel by its mangled name through the
/// driver API, with every argument an lvalue of its parameter's type.
#[test]
fn prepare_with_ptx_launches_clangs_code_through_the_driver() {
    if Command::new("python3").arg("--version").output().is_err() {
        return skip("gpu_validate", "no python3");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run(script()
        .args(["prepare", "--ptx", "--clang"])
        .arg(clang())
        .arg(dir.path())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/vector_add.cu"))
        .args(["--warpcheck", env!("CARGO_BIN_EXE_warpcheck")]));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("plan.json")).unwrap())
            .unwrap();
    let file = &plan["files"][0];
    let mangled = file["kernels"][0]["mangled"].as_str().unwrap();
    let ptx = std::fs::read_to_string(dir.path().join(file["ptx"].as_str().unwrap())).unwrap();
    assert!(ptx.contains(&format!(".entry {mangled}(")), "{ptx}");
    let harness =
        std::fs::read_to_string(dir.path().join(file["harness"].as_str().unwrap())).unwrap();
    assert!(harness.contains("cuModuleLoad(&wc_module, \""), "{harness}");
    assert!(harness.contains("int arg3 = (int)128;"), "{harness}");
    assert!(
        harness.contains("void *wc_params[] = {&arg0, &arg1, &arg2, &arg3};"),
        "{harness}"
    );
    assert!(
        harness.contains(&format!(
            "wc_launch(\"{mangled}\", dim3(2,1,1), dim3(256,1,1), wc_params);"
        )),
        "{harness}"
    );
    assert!(!harness.contains("<<<"), "{harness}");
}
