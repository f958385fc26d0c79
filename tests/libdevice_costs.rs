//! The libdevice table of `machine::libdevice`, measured again: every
//! libdevice function without pointer parameters that clang declares
//! (`__clang_cuda_libdevice_declares.h`) is wrapped in a `noinline`
//! device function, compiled by clang 19 at `-O2` for sm_80 with the CUDA
//! 12.4 toolkit's libdevice linked, and the wrapper's instructions (but
//! its `ret`) are counted by class. A row that differs (in an LLVM 22
//! build, whose reader upgrades the IR, a body's issue slots by more than a
//! tenth), or a function the table lacks, fails the test, which prints the
//! measured table.
//!
//! And what the table is for: a kernel calling `expf` has the same share
//! of its time for its other sites whether libdevice is linked (the body
//! inlined) or not (a call to `__nv_expf`), with a toolkit's headers (and
//! warpcheck's declarations of the pure libdevice functions before them)
//! or with warpcheck's own.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::{Module, Opcode};
use warpcheck::machine::libdevice::{body, Body, BODIES};
use warpcheck::machine::{class_of, Class};

/// clang 19 (the table's compiler, whatever LLVM this build reads IR
/// with), or `None` when it is not installed.
fn clang19() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/lib/llvm-19/bin/clang");
    p.is_file().then_some(p)
}

/// `(return type, name, parameter types)` of each libdevice function that
/// clang declares without pointer parameters.
fn declarations(clang: &Path) -> Vec<(String, String, Vec<String>)> {
    let out = Command::new(clang)
        .arg("-print-resource-dir")
        .output()
        .unwrap();
    let dir = String::from_utf8(out.stdout).unwrap();
    let header = Path::new(dir.trim()).join("include/__clang_cuda_libdevice_declares.h");
    let text = std::fs::read_to_string(&header).unwrap();
    // Leave out what only old toolkits declare (`#if CUDA_VERSION …`).
    let mut kept = String::new();
    let mut old = false;
    for line in text.lines() {
        if line.starts_with("#if CUDA_VERSION") {
            old = true;
        } else if old && line.starts_with("#endif") {
            old = false;
        } else if !old {
            kept += line;
            kept.push('\n');
        }
    }
    let mut out = Vec::new();
    for decl in kept.split(';') {
        let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(rest) = decl
            .rsplit("__DEVICE__ ")
            .next()
            .filter(|_| decl.contains("__DEVICE__"))
        else {
            continue;
        };
        let Some((head, params)) = rest.split_once('(') else {
            continue;
        };
        let Some((ret, name)) = head.rsplit_once(' ') else {
            continue;
        };
        let Some(name) = name.strip_prefix("__nv_") else {
            continue;
        };
        if params.contains('*') || ret.contains('*') || ret == "void" {
            continue;
        }
        let params: Vec<String> = params
            .trim_end_matches(')')
            .split(',')
            .map(|p| {
                // Drop the parameter's name: the type is what precedes it.
                let words: Vec<&str> = p.split_whitespace().collect();
                words[..words.len().saturating_sub(1)].join(" ")
            })
            .filter(|t| !t.is_empty())
            .collect();
        out.push((ret.to_string(), name.to_string(), params));
    }
    out
}

/// Compiles `cu` to `ll` with clang 19 at `-O2` for sm_80, libdevice
/// linked from the toolkit at `root`, with `flags`.
fn linked(clang: &Path, root: &Path, cu: &Path, ll: &Path, flags: &[&str]) {
    let out = Command::new(clang)
        .args([
            "-x",
            "cuda",
            "--cuda-device-only",
            "--cuda-gpu-arch=sm_80",
            "-O2",
        ])
        .args(flags)
        .arg(format!("--cuda-path={}", root.display()))
        .args(["-Wno-unknown-cuda-version", "-S", "-emit-llvm", "-o"])
        .arg(ll)
        .arg(cu)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}: {err}", cu.display());
}

/// The wrappers and a kernel that keeps them.
fn source(decls: &[(String, String, Vec<String>)]) -> String {
    let mut s = String::new();
    for (ret, name, params) in decls {
        let args: Vec<String> = (0..params.len()).map(|i| format!("a{i}")).collect();
        let typed: Vec<String> = params
            .iter()
            .zip(&args)
            .map(|(t, a)| format!("{t} {a}"))
            .collect();
        s += &format!(
            "extern \"C\" __device__ __attribute__((noinline)) {ret} w_{name}({}) {{ return __nv_{name}({}); }}\n",
            typed.join(", "),
            args.join(", ")
        );
    }
    s +=
        "__global__ void keep(unsigned long long *p) {\n  unsigned long long x = p[threadIdx.x];\n";
    for (i, (ret, name, params)) in decls.iter().enumerate() {
        let args: Vec<String> = params.iter().map(|t| format!("({t})x")).collect();
        s += &format!("  p[{i}] = ({ret})w_{name}({});\n", args.join(", "))
            .replace("p[", "p[threadIdx.x + ");
    }
    s + "}\n"
}

/// Each wrapper's body by class.
fn measure(m: &Module) -> BTreeMap<String, Body> {
    let mut out = BTreeMap::new();
    for f in &m.funcs {
        let Some(name) = f.name.strip_prefix("w_") else {
            continue;
        };
        let mut b = Body {
            alu: 0,
            fp64: 0,
            div: 0,
            math: 0,
            memory: 0,
        };
        for block in &f.blocks {
            for &i in &block.insts {
                let inst = f.inst(i);
                if matches!(inst.op, Opcode::Phi | Opcode::Ret) {
                    continue;
                }
                match class_of(m, f, inst) {
                    Class::Alu | Class::Warp | Class::Barrier => b.alu += 1,
                    Class::Fp64 => b.fp64 += 1,
                    Class::Div => b.div += 1,
                    Class::Math => b.math += 1,
                    Class::Memory => b.memory += 1,
                    Class::Free => {}
                }
            }
        }
        out.insert(name.to_string(), b);
    }
    out
}

#[test]
fn the_table_is_what_libdevice_inlines() {
    let Some(root) = common::cuda_toolkit_or_skip("the libdevice table") else {
        return;
    };
    let Some(clang) = clang19() else {
        common::skip("the libdevice table", "no clang 19");
        return;
    };
    let decls = declarations(&clang);
    assert!(decls.len() > 300, "{} declarations", decls.len());
    let dir = tempfile::tempdir().unwrap();
    let cu = dir.path().join("bodies.cu");
    let ll = dir.path().join("bodies.ll");
    std::fs::write(&cu, source(&decls)).unwrap();
    linked(&clang, &root, &cu, &ll, &[]);
    let m = frontend::load(&ll, &CompileOptions::default()).unwrap();
    let measured = measure(&m);
    assert_eq!(measured.len(), decls.len(), "a wrapper was dropped");
    let table = measured
        .iter()
        .map(|(n, b)| {
            format!(
                "    (\"{n}\", Body::new([{}, {}, {}, {}, {}])),",
                b.alu, b.fp64, b.div, b.math, b.memory
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    // The table was measured by the LLVM 19 build. Another major reads the
    // same IR upgraded (some `llvm.nvvm.*` calls become generic
    // intrinsics), which may move an instruction between classes: there,
    // each body's issue slots must agree within a tenth (or 2).
    let agrees = |n: &str, b: &Body| match body(n) {
        None => false,
        Some(t) if warpcheck::ir::major::LLVM_MAJOR == 19 => t == b,
        Some(t) => t.issues().abs_diff(b.issues()) <= (t.issues() / 10).max(2),
    };
    let wrong: Vec<&String> = measured
        .iter()
        .filter(|(n, b)| !agrees(n, b))
        .map(|(n, _)| n)
        .collect();
    assert!(
        wrong.is_empty() && BODIES.len() == measured.len(),
        "rows that differ: {wrong:?}; the measured table:\n{table}"
    );
}

/// The one uncoalesced-access finding of each kernel in the report of
/// `args` (block of 256, `--min-impact 0`): its share of the kernel's
/// time and its executions per warp.
fn shares(args: &[&str]) -> BTreeMap<String, (f64, f64)> {
    let out = common::run(
        common::warpcheck()
            .args([
                "check",
                "--format",
                "json",
                "--block-dim",
                "256",
                "--min-impact",
                "0",
            ])
            .args(args),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found = BTreeMap::new();
    for f in r["findings"].as_array().unwrap() {
        if f["check"] != "uncoalesced-access" {
            continue;
        }
        let kernel = f["kernel"].as_str().unwrap();
        let name = kernel[..kernel.find('(').unwrap()].to_string();
        let i = &f["impact"];
        let old = found.insert(
            name,
            (
                i["share"].as_f64().unwrap(),
                i["inputs"]["executions"].as_f64().unwrap(),
            ),
        );
        assert!(old.is_none(), "two findings in {kernel}: {r:#}");
    }
    found
}

/// `tests/fixtures/cu/libdevice_call.cu`, block of 256. `decay` loads
/// `in[2 * i]` (8 sectors for 4: 4 excess) once, then runs 64 dependent
/// `expf`. Built with libdevice linked, each `expf` is its inlined body
/// (12 instructions); built without (a toolkit's headers with
/// `-nocudalib`, or warpcheck's own), it is a call of `__nv_expf`, which
/// the table gives the same body. The load's share of the kernel's time
/// must agree within 2×; costed as one math instruction, the call made it
/// over 3× larger. `accumulate` adds `expf(in[k])` to `acc[2 * i]` 64
/// times: with libdevice linked, clang moves that load and store out of
/// the loop (once each per warp); a call of a function not known to be
/// pure would keep them in it (32 times each, unrolled by 2) and make
/// them 22% of the kernel where they are 2.4%, so the toolkit's headers
/// get warpcheck's declarations of libdevice's pure functions.
#[test]
fn a_calls_share_does_not_swing_with_libdevice() {
    let Some(root) = common::cuda_toolkit_or_skip("the libdevice call's share") else {
        return;
    };
    let Some(clang) = clang19() else {
        common::skip("the libdevice call's share", "no clang 19");
        return;
    };
    let cu = common::fixture("cu/libdevice_call.cu");
    let dir = tempfile::tempdir().unwrap();
    let ll = dir.path().join("linked.ll");
    linked(&clang, &root, &cu, &ll, &["-g"]);
    let text = std::fs::read_to_string(&ll).unwrap();
    assert!(!text.contains("@__nv_expf("), "libdevice was not linked");
    let with = shares(&[ll.to_str().unwrap()]);
    assert_eq!(with.len(), 2, "{with:?}");
    assert_eq!(with["accumulate"].1, 1.0, "{with:?}");
    let root = root.display().to_string();
    let cu = cu.to_str().unwrap();
    for args in [
        vec!["--cuda-path", root.as_str(), cu],
        vec!["--no-cuda", cu],
    ] {
        let without = shares(&args);
        for (kernel, &(share, executions)) in &with {
            let (other, runs) = without[kernel];
            assert_eq!(runs, executions, "{args:?}: {kernel}");
            let ratio = share.max(other) / share.min(other);
            assert!(
                ratio <= 2.0,
                "{args:?}: {kernel}: {other} without libdevice, {share} with it"
            );
        }
    }
}
