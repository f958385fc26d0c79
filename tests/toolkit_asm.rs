//! The inline asm of CUDA 12.4's headers: every asm body clang emits for
//! the cooperative-groups, atomic and warp entry points of
//! `tests/fixtures/toolkit/entry_points.cu` (at sm_70, sm_80 and sm_90),
//! taken from our IR's asm table, must be read by the PTX reader. New
//! uses of these bodies can iterate [`collected`]; the simulator runs
//! every one of them. Skipped, saying why, where the toolkit cannot be had.

mod common;
use common::*;
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::InlineAsm;
use warpcheck::ptx::run::run;
use warpcheck::ptx::space::Windows;
use warpcheck::ptx::summary::Summary;
use warpcheck::ptx::Body;
use warpcheck::sim::{self, ArgValue, BufferSpec, ErrorKind, Init, LaunchConfig};

const ARCHES: &[&str] = &["sm_70", "sm_80", "sm_90"];

/// Each distinct asm body (text, constraints, side effects) with the
/// architectures that emit it; `None`, after printing why, without a
/// toolkit.
fn collected() -> Option<Vec<(InlineAsm, Vec<&'static str>)>> {
    let root = cuda_toolkit_or_skip("the toolkit's asm bodies")?;
    let src = fixture("toolkit/entry_points.cu");
    let mut all: Vec<(InlineAsm, Vec<&'static str>)> = Vec::new();
    for &arch in ARCHES {
        let opts = CompileOptions {
            gpu_arch: arch.into(),
            cuda_path: Some(root.clone()),
            ..CompileOptions::default()
        };
        let m = frontend::load(&src, &opts).unwrap_or_else(|e| panic!("{arch}: {e}"));
        for asm in m.asms {
            // Call-site convergence does not change the body.
            let same = |a: &InlineAsm| {
                a.text == asm.text
                    && a.constraints == asm.constraints
                    && a.side_effects == asm.side_effects
            };
            match all.iter_mut().find(|(a, _)| same(a)) {
                Some((_, arches)) if !arches.contains(&arch) => arches.push(arch),
                Some(_) => {}
                None => all.push((asm, vec![arch])),
            }
        }
    }
    Some(all)
}

#[test]
fn every_asm_body_of_the_toolkit_reads() {
    let Some(all) = collected() else { return };
    let mut failures = Vec::new();
    for (asm, arches) in &all {
        match Body::of(asm) {
            Ok(body) => {
                let forms: Vec<&str> = body.insts.iter().map(|i| i.opcode.as_str()).collect();
                eprintln!(
                    "{:?} {:?} [{}]: {}",
                    asm.text,
                    asm.constraints,
                    arches.join(" "),
                    forms.join(", ")
                );
            }
            Err(e) => failures.push(format!("{:?} ({:?}): {e}", asm.text, asm.constraints)),
        }
    }
    assert!(failures.is_empty(), "unread asm:\n{}", failures.join("\n"));
    // The collection itself works: bodies we know these headers emit are
    // there (lane registers for tiles, the reserved shared window of
    // tiles of 64, the grid barrier, memcpy_async, sm_90's election).
    let texts: Vec<&str> = all.iter().map(|(a, _)| a.text.as_str()).collect();
    for known in [
        "mov.u32 $0, %laneid;",
        "mov.u32 $0, %lanemask_lt;",
        "mov.u32 $0, %envreg1;",
        "atom.add.release.gpu.u32 $0,[$1],$2;",
        "cp.async.commit_group;",
        "shf.l.wrap.b32 $0, $1, $2, $3;",
    ] {
        assert!(texts.contains(&known), "{known} not collected");
    }
    assert!(texts.iter().any(|t| t.contains("%reserved_smem_offset_1")));
    assert!(texts.iter().any(|t| t.contains("elect.sync")));
}

#[test]
fn bodies_needing_no_memory_run_for_one_thread() {
    let Some(all) = collected() else { return };
    let mut ran = 0;
    for (asm, _) in &all {
        let body = Body::of(asm).unwrap();
        if !Summary::of(&body).is_pure() {
            continue;
        }
        let operands = vec![0; body.constraints.operands.len()];
        let result = run(&body, &operands, &mut |_| 0, &Windows::default());
        assert!(result.is_ok(), "{:?}: {result:?}", asm.text);
        ran += 1;
    }
    // Lane registers, envregs, four funnel shifts, the reserved window.
    assert!(ran >= 8, "only {ran} pure bodies");
}

/// Every asm body of the entry points runs in the simulator: each kernel
/// is simulated for one block at each architecture that emits the body
/// (`groups` from sm_80, where CUDA's tiles of 64 keep their scratch in
/// the reserved shared memory; at sm_70 they need a `block_tile_memory`
/// the fixture does not declare), and `atomics_and_intrinsics` once more
/// with `i[9] == 7`, which reaches `__trap()`.
#[test]
fn every_asm_body_runs_in_the_simulator() {
    let Some(all) = collected() else { return };
    let root = cuda_toolkit().unwrap();
    let src = fixture("toolkit/entry_points.cu");
    let mut ran: Vec<&str> = Vec::new();
    for &arch in ARCHES {
        let opts = CompileOptions {
            gpu_arch: arch.into(),
            cuda_path: Some(root.clone()),
            full_debug: true,
            ..CompileOptions::default()
        };
        let m = frontend::load(&src, &opts).unwrap_or_else(|e| panic!("{arch}: {e}"));
        let mut kernels = vec!["grid", "atomics_and_intrinsics", "trap"];
        if arch != "sm_70" {
            kernels.push("groups");
        }
        if arch == "sm_90" {
            kernels.push("sm90");
        }
        for name in kernels {
            let (kernel, args) = arguments(&m, name);
            let launch = LaunchConfig {
                block: [64, 1, 1],
                ..LaunchConfig::default()
            };
            let outcome = match sim::simulate(&m, kernel, &launch, &args) {
                Ok(o) => o,
                // The trap stops the kernel: the asm ran up to it.
                Err(e) if name == "trap" && e.kind == ErrorKind::Trap => e.details.partial.unwrap(),
                Err(e) => panic!("{arch} {name}: {e}"),
            };
            for (a, &runs) in m.asms.iter().zip(&outcome.asm_runs) {
                if runs > 0 && !ran.contains(&a.text.as_str()) {
                    let text = all.iter().find(|(b, _)| b.text == a.text).unwrap();
                    ran.push(text.0.text.as_str());
                }
            }
        }
    }
    let missing: Vec<&str> = all
        .iter()
        .map(|(a, _)| a.text.as_str())
        .filter(|t| !ran.contains(t))
        .collect();
    assert!(missing.is_empty(), "never simulated: {missing:#?}");
}

/// The kernel of an entry-point name, with arguments: 4 KiB buffers, `i`
/// counting 0, 1, 2, ... (so `i[9]` is 9) except for `trap`, which is
/// `atomics_and_intrinsics` with `i[9] = 7`.
fn arguments(
    m: &warpcheck::ir::Module,
    name: &str,
) -> (warpcheck::ir::FuncId, Vec<(String, ArgValue)>) {
    let real = if name == "trap" {
        "atomics_and_intrinsics"
    } else {
        name
    };
    let kernel = m.find_function(real).unwrap_or_else(|| panic!("no {real}"));
    let ints: Vec<u8> = (0..1024i32)
        .map(|k| if name == "trap" && k == 9 { 7 } else { k })
        .flat_map(|k| k.to_le_bytes())
        .collect();
    let args = sim::params(m, kernel)
        .into_iter()
        .map(|p| {
            let init = if p.name == "i" {
                Init::Bytes(ints.clone())
            } else {
                Init::Zero
            };
            let spec = BufferSpec {
                bytes: 4096,
                init,
                elem: None,
            };
            (p.name, ArgValue::Buffer(spec))
        })
        .collect();
    (kernel, args)
}
