//! The inline asm of CUDA 12.4's headers: every asm body clang emits for
//! the cooperative-groups, atomic and warp entry points of
//! `tests/fixtures/toolkit/entry_points.cu` (at sm_70, sm_80 and sm_90),
//! taken from our IR's asm table, must be read by the PTX reader. New
//! uses of these bodies (the simulator's, say) can iterate
//! [`collected`]. Skipped, saying why, where the toolkit cannot be had.

mod common;
use common::*;
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::InlineAsm;
use warpcheck::ptx::run::run;
use warpcheck::ptx::space::Windows;
use warpcheck::ptx::summary::Summary;
use warpcheck::ptx::Body;

const ARCHES: &[&str] = &["sm_70", "sm_80", "sm_90"];

/// Each distinct asm body (text, constraints, side effects) with the
/// architectures that emit it; `None`, after printing why, without a
/// toolkit.
fn collected() -> Option<Vec<(InlineAsm, Vec<&'static str>)>> {
    let root = match cuda_toolkit() {
        Ok(root) => root,
        Err(e) => {
            eprintln!("skipping: no CUDA 12.4 toolkit: {e}");
            return None;
        }
    };
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
