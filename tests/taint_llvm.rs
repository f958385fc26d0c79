//! warpcheck against LLVM's own UniformityAnalysis (`opt-19
//! -passes='print<uniformity>'`), through `check --compare-uniformity`.
//!
//! The bar: whatever LLVM calls uniform, warpcheck calls uniform too,
//! except where LLVM's answer rests on an assumption documented in
//! `compare` (memory read by a converged warp while a write may run;
//! loop iterations kept apart). And warpcheck must prove uniform some of what LLVM cannot.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The reasons `compare` documents for "dependent here, uniform to LLVM".
const DOCUMENTED: [&str; 2] = [
    "memory a thread-dependent write may change during the read (LLVM assumes one value per uniform address)",
    "lanes meet on different iterations of a loop (LLVM counts iterations apart)",
];

fn compare_json(files: &[PathBuf]) -> Value {
    let out = run(warpcheck()
        .args(["check", "--compare-uniformity", "--format", "json"])
        .args(files));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

fn disagreements(report: &Value) -> Vec<&Value> {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["functions"].as_array().unwrap())
        .flat_map(|f| f["disagreements"].as_array().unwrap())
        .collect()
}

#[test]
fn never_dependent_where_llvm_is_uniform_on_any_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = cu_files(&fixture("cu"));
    files.extend(cu_files(&root.join("examples")));
    assert!(files.len() >= 15, "fixtures found: {files:?}");
    let report = compare_json(&files);
    let summary = &report["summary"];
    eprintln!("{summary:#}");
    assert_eq!(
        summary["skipped"], 0,
        "every function matched LLVM's output"
    );
    for d in disagreements(&report) {
        if d["warpcheck_dependent"] == true {
            assert_eq!(d["llvm_divergent"], false);
            let reason = d["reason"].as_str().unwrap();
            assert!(DOCUMENTED.contains(&reason), "undocumented: {d:#}");
        }
    }
    // Sharper than LLVM: branches and accesses it calls divergent that we
    // prove uniform (blockIdx, device-function parameters, broadcasts...).
    assert!(summary["branches"]["llvm_only"].as_u64().unwrap() > 10);
    assert!(summary["accesses"]["llvm_only"].as_u64().unwrap() > 10);
    assert!(summary["branches"]["agree"].as_u64().unwrap() > 20);
}

#[test]
fn device_parameter_uniform_in_its_kernel_context() {
    let report = compare_json(&[fixture("cu/taint_context.cu")]);
    let functions = report["files"][0]["functions"].as_array().unwrap();
    let scaled_in = |kernel: &str| {
        functions
            .iter()
            .find(|f| {
                f["function"] == "scaled(int*, int)"
                    && f["kernel"].as_str().unwrap().starts_with(kernel)
            })
            .unwrap()
    };
    // LLVM assumes the parameter v divergent; called with blockIdx.x it is not.
    let branch = |f: &Value| {
        f["disagreements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["kind"] == "branch" && d["line"] == 4)
            .cloned()
    };
    let d = branch(scaled_in("with_block(")).expect("a disagreement at line 4");
    assert_eq!(d["llvm_divergent"], true);
    assert_eq!(
        d["reason"],
        "device-function parameter (LLVM assumes divergent)"
    );
    assert!(
        branch(scaled_in("with_thread(")).is_none(),
        "both divergent there"
    );
}

/// Lanes with odd threadIdx.x store it to shared @s; after the join every
/// lane reads @s through an addrspace(3) pointer: with no barrier in
/// `warp_sync`, after one in `broadcast`.
const WARP_SYNCHRONOUS: &str = r#"
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@s = internal addrspace(3) global i32 undef, align 4

define void @warp_sync(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %odd = and i32 %tid, 1
  %c = icmp ne i32 %odd, 0
  br i1 %c, label %write, label %read
write:
  store i32 %tid, ptr addrspace(3) @s, align 4
  br label %read
read:
  %x = load i32, ptr addrspace(3) @s, align 4
  %big = icmp sgt i32 %x, 3
  br i1 %big, label %yes, label %done
yes:
  store i32 1, ptr addrspace(1) %out, align 4
  br label %done
done:
  ret void
}

define void @broadcast(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %odd = and i32 %tid, 1
  %c = icmp ne i32 %odd, 0
  br i1 %c, label %write, label %read
write:
  store i32 %tid, ptr addrspace(3) @s, align 4
  br label %read
read:
  call void @llvm.nvvm.barrier0()
  %y = load i32, ptr addrspace(3) @s, align 4
  %big = icmp sgt i32 %y, 3
  br i1 %big, label %yes, label %done
yes:
  store i32 1, ptr addrspace(1) %out, align 4
  br label %done
done:
  ret void
}

define void @read_then_write(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  call void @llvm.nvvm.barrier0()
  %z = load i32, ptr addrspace(3) @s, align 4
  store i32 %tid, ptr addrspace(3) @s, align 4
  store i32 %z, ptr addrspace(1) %out, align 4
  ret void
}

define void @global_after_barrier(ptr addrspace(1) %g) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  store i32 %tid, ptr addrspace(1) %g, align 4
  call void @llvm.nvvm.barrier0()
  %w = load i32, ptr addrspace(1) %g, align 4
  %gep = getelementptr i32, ptr addrspace(1) %g, i32 1
  store i32 %w, ptr addrspace(1) %gep, align 4
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()

!nvvm.annotations = !{!0, !1, !2, !3}
!0 = !{ptr @warp_sync, !"kernel", i32 1}
!1 = !{ptr @broadcast, !"kernel", i32 1}
!2 = !{ptr @read_then_write, !"kernel", i32 1}
!3 = !{ptr @global_after_barrier, !"kernel", i32 1}
"#;

#[test]
fn memory_is_where_llvm_calls_uniform_what_we_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("warp_sync.ll");
    std::fs::write(&file, WARP_SYNCHRONOUS).unwrap();
    let report = compare_json(&[file]);
    let ours_only: Vec<&Value> = disagreements(&report)
        .into_iter()
        .filter(|d| d["warpcheck_dependent"] == true)
        .collect();
    // In warp_sync: %x (a value), %big (a value) and the branch on %big.
    // In broadcast the barrier orders every write before the read, which
    // then returns one value: both analyses agree it is uniform. In
    // read_then_write a thread that runs ahead stores while others read
    // (%z); in global_after_barrier other blocks store to %g at any time,
    // no barrier of this block orders them (%w).
    assert_eq!(ours_only.len(), 5, "{ours_only:#?}");
    for d in &ours_only {
        assert_eq!(d["reason"], DOCUMENTED[0]);
        assert_ne!(d["value"], "%y");
    }
    for v in ["%z", "%w"] {
        assert!(ours_only.iter().any(|d| d["value"] == v), "{v}");
    }
    assert!(ours_only
        .iter()
        .any(|d| d["kind"] == "branch" && d["value"] == "%big"));
}

#[test]
fn text_report_lists_disagreements_per_function_and_a_table() {
    let out = run(warpcheck()
        .args(["check", "--compare-uniformity"])
        .arg(fixture("cu/taint_context.cu")));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("scaled(int*, int) in kernel with_block(int*):"),
        "{text}"
    );
    assert!(text.contains("branch %cmp"), "{text}");
    assert!(
        text.contains("LLVM divergent, warpcheck uniform, by reason:"),
        "{text}"
    );
    assert!(text.contains("device-function parameter (LLVM assumes divergent)"));
}
