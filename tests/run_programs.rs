//! `warpcheck run` on small whole programs (tests/fixtures/run): each is
//! built for the CPU runtime and run, and its own exit code, its output
//! and warpcheck's report are checked. Needs `cargo build` first (the
//! runtime is in libwarpcheck.so, beside the binary).

mod common;

use common::{fixture, stderr, stdout, warpcheck};
use std::process::Output;

fn run(name: &str, extra: &[&str]) -> Output {
    common::plugin();
    let file = fixture(&format!("run/{name}.cu"));
    common::run(warpcheck().arg("run").args(extra).arg(file))
}

#[test]
fn vector_add_passes_its_own_check() {
    let out = run("vector_add", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "vector_add: all 1000 elements right\n");
    // The report goes to stderr, never into the program's output.
    assert!(stderr(&out).contains(
        "vector_add(float const*, float const*, float*, int) at block (256,1,1): 1 launch"
    ));
}

/// The per-site counters, summed over the launch: 1000 threads in 4
/// blocks of 256 are 32 warps; warp 31 (threads 992-1023) has 8 threads
/// below n and 24 above, so `i < n` splits it and no other. Each full
/// warp loads 32 consecutive floats, 128 bytes from a 256-byte aligned
/// buffer: 4 sectors; warp 31's 8 lanes read 32 bytes, 1 sector. So each
/// access makes 32 requests of 31 * 4 + 1 = 125 sectors, all ideal.
#[test]
fn vector_add_counters_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("run.json");
    let out = run(
        "vector_add",
        &["--format", "json", "-o", report.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let k = &r["kernels"][0];
    assert_eq!(k["launches"], 1);
    assert_eq!(k["blocks"], 4);
    let sites = k["sites"].as_array().unwrap();
    let branch: Vec<_> = sites.iter().filter(|s| s["kind"] == "branch").collect();
    assert_eq!(branch.len(), 1);
    assert_eq!(branch[0]["line"], 8);
    assert_eq!(branch[0]["executions"], 32);
    assert_eq!(branch[0]["divergent"], 1);
    let global: Vec<_> = sites.iter().filter(|s| s["space"] == "global").collect();
    assert_eq!(global.len(), 3, "two loads and a store");
    for s in global {
        assert_eq!(s["line"], 9);
        assert_eq!(s["executions"], 32);
        assert_eq!(s["sectors"]["total"], 125);
        assert_eq!(s["ideal_sectors"], 125);
    }
    assert!(r["errors"].as_array().unwrap().is_empty());
    assert!(r["fatal"].is_null());
}

#[test]
fn a_wrong_kernel_fails_the_programs_own_check() {
    let out = run("wrong_kernel", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // a[0] - b[0] = 0 - 1.
    assert_eq!(stdout(&out), "mismatch at 0: -1\n");
}

/// Thread 1000 is thread 1000 - 3 * 256 = 232 of block 3; it writes
/// `c[1000]`, the 4 bytes right after the 4000-byte allocation.
#[test]
fn an_out_of_bounds_write_is_reported_at_its_line() {
    let out = run("out_of_bounds", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("out_of_bounds.cu:9:10: invalid __global__ write of size 4 bytes"),
        "{err}"
    );
    assert!(
        err.contains("0 bytes after the end of 'cudaMalloc #1' (4000 bytes)"),
        "{err}"
    );
    assert!(
        err.contains("by thread (232,0,0) in block (3,0,0)"),
        "{err}"
    );
    assert_eq!(
        stdout(&out),
        "sync: an illegal memory access was encountered\n"
    );
}

#[test]
fn a_use_after_free_is_reported_at_its_line() {
    let out = run("use_after_free", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("use_after_free.cu:6:22: invalid __global__ read of size 4 bytes"),
        "{err}"
    );
    assert!(err.contains("which the program has freed"), "{err}");
    assert!(err.contains("by thread (0,0,0) in block (0,0,0)"), "{err}");
    assert_eq!(stdout(&out), "sync: cudaErrorIllegalAddress\n");
}

#[test]
fn an_unsupported_call_is_named() {
    let out = run("unsupported_call", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "the program calls cudaGraphLaunch, which warpcheck's runtime does not provide"
        ),
        "{err}"
    );
}

#[test]
fn events_time_a_launch() {
    let out = run("events", &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).ends_with("ms (no error)\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_compile_error_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.cu");
    std::fs::write(
        &bad,
        "__global__ void k() { undeclared(); }\nint main() {}\n",
    )
    .unwrap();
    common::plugin();
    let out = common::run(warpcheck().arg("run").arg(&bad));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.cu"), "{}", stderr(&out));
}

/// A host side that includes `<omp.h>` builds where the compiler has none
/// (warpcheck's stand-in answers as one thread; without `-fopenmp` the
/// pragma is ignored). Where clang has its own `<omp.h>`, that one is
/// found first and the program needs OpenMP's runtime: not this test.
#[test]
fn openmp_host_code_runs_on_one_thread() {
    let resource = std::process::Command::new(common::clang())
        .arg("-print-resource-dir")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if std::path::Path::new(&resource)
        .join("include/omp.h")
        .exists()
    {
        return common::skip(
            "openmp_host_code_runs_on_one_thread",
            "clang has its own omp.h",
        );
    }
    let out = run("openmp_host", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "1 thread(s), 0 wrong\n");
}

/// Tiles of 64 and 128 threads (several warps, as the CUDA samples'
/// reduction makes them) reduce with `cg::reduce`, and the program checks
/// every thread's sum, tile rank and tile count itself.
#[test]
fn multi_warp_tiles_reduce_across_their_warps() {
    let out = run("multi_warp_tiles", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "multi-warp tiles: 0 wrong\n");
}

/// The program fills two managed arrays on the host, doubles one into the
/// other in a kernel given both inside a structure, adds one to elements
/// 100..199 through a pointer into the middle, copies and fills managed
/// memory with the runtime's calls, and checks every value itself.
#[test]
fn managed_memory_is_shared_by_host_and_kernels() {
    let out = run("managed", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "managed: 0 wrong\n");
    assert!(!stderr(&out).contains("========="), "{}", stderr(&out));
}

/// 65 threads write `a[threadIdx.x]` into 64 ints: thread 64 writes the 4
/// bytes right after the 256-byte allocation.
#[test]
fn managed_memory_is_held_to_its_bounds() {
    let out = run("managed_out_of_bounds", &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("managed_out_of_bounds.cu:5:47: invalid __global__ write of size 4 bytes"),
        "{err}"
    );
    assert!(
        err.contains("0 bytes after the end of 'cudaMallocManaged #1' (256 bytes)"),
        "{err}"
    );
    assert!(err.contains("by thread (64,0,0) in block (0,0,0)"), "{err}");
    assert_eq!(stdout(&out), "sync: cudaErrorIllegalAddress\n");
}

/// The device has the machine model's 40 GiB; 1 MiB of `cudaMalloc` and
/// then 4096 managed bytes are in use until both are freed. The program
/// exits 1 unless a null pointer gives an invalid value that
/// `cudaThreadExit` clears.
#[test]
fn mem_get_info_counts_live_allocations() {
    let out = run("mem_info", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "total {}, used 0 {} {} 0\n",
            40u64 << 30,
            1 << 20,
            (1 << 20) + 4096
        )
    );
}

/// A 5 x 3 x 2 box from (2, 1, 1) of an 8 x 6 x 4 host array goes into a
/// pitched allocation, a kernel adds 100 to each element, and the box
/// comes back into a compact array: the program checks every element
/// against the host array it came from.
#[test]
fn memcpy_3d_copies_a_box_both_ways() {
    let out = run("memcpy3d", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "memcpy3d: 0 wrong\n");
}
