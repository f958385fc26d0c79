//! `guessed-shape`: one note per kernel analysed at the default block
//! shape although its code reads `threadIdx.y`/`z` or `blockDim`: nothing
//! (no `reqntid`, `--block-dim`, `Kernels:` entry, launch with a constant
//! block in the same file, nor `__launch_bounds__`) gave its shape, and
//! its findings hold for 256×1×1 only — a 16×16 tile kernel analysed as
//! one row of 256 threads reads "1 of 8 warps" where it splits all 8.

use super::KernelNote;
use crate::analysis::{shape_text, BlockDimSource, KernelAnalysis, ModuleAnalysis};
use crate::finding::{Finding, Kind, Severity};
use crate::ir::intrinsics::{Dim, Intrinsic, SReg};
use crate::ir::Position;

pub const GUESSED_SHAPE: KernelNote = KernelNote {
    kind: Kind {
        name: "guessed-shape",
        summary:
            "a kernel that reads threadIdx.y/z or blockDim is analysed at a guessed block shape",
        explanation: "Which lanes share a warp, and so every divergence, coalescing and \
             bank-conflict figure, depends on the block shape. warpcheck takes it from the \
             kernel's `reqntid`, `--block-dim` or a `.warpcheck.yaml` `Kernels:` entry, the \
             `<<<grid, block>>>` launches in the same `.cu` file (when the block is a constant or \
             a `dim3` of constants), or `__launch_bounds__`, in that order; with none of them it \
             assumes 256×1×1. This note says so for a kernel whose code reads `threadIdx.y`, \
             `threadIdx.z` or `blockDim`, where the guess most likely differs from the real \
             launch. Give the real shape in any of those ways.",
    },
    always: false,
    make: note,
};

/// The special register reads that make the shape matter beyond x.
fn shape_dependent(r: SReg) -> Option<&'static str> {
    Some(match r {
        SReg::Tid(Dim::Y) => "threadIdx.y",
        SReg::Tid(Dim::Z) => "threadIdx.z",
        SReg::Ntid(Dim::X) => "blockDim.x",
        SReg::Ntid(Dim::Y) => "blockDim.y",
        SReg::Ntid(Dim::Z) => "blockDim.z",
        _ => return None,
    })
}

fn note(a: &ModuleAnalysis<'_>, k: &KernelAnalysis) -> Option<Finding> {
    if k.block_dim.source != BlockDimSource::Default {
        return None;
    }
    let m = a.module;
    let mut reads = k.reached.iter().flat_map(|&f| {
        let func = m.func(f);
        func.inst_ids()
            .filter_map(move |i| match m.called_intrinsic(func.inst(i))? {
                Intrinsic::SReg(r) => shape_dependent(r).map(|what| (f, i, what)),
                _ => None,
            })
    });
    let (f, i, what) = reads.next()?;
    let mut names = vec![what];
    for (_, _, w) in reads {
        if !names.contains(&w) {
            names.push(w);
        }
    }
    let kernel = m.func(k.kernel);
    let func = m.func(f);
    let shape = shape_text(k.block_dim.dims);
    let mut notes: Vec<String> = k
        .shapes
        .unknown_blocks()
        .map(|l| {
            format!(
                "launched at {}:{} with a block computed at run time",
                l.file, l.line
            )
        })
        .collect();
    notes.push(format!(
        "hint: give the real shape: launch it in this file with a constant block \
         (`<<<grid, dim3(16, 16)>>>`), `__launch_bounds__`, `--block-dim X,Y,Z`, or \
         `Kernels: {{'{}': {{block: [X, Y, Z]}}}}` in .warpcheck.yaml",
        kernel.short_name()
    ));
    Some(Finding {
        check: GUESSED_SHAPE.kind.name,
        severity: Severity::Note,
        func: f,
        inst: Some(i),
        pos: m.inst_pos(func, i).map(|p| Position::resolve(m, &p)),
        kernel: kernel.demangled.clone(),
        function: func.demangled.clone(),
        message: format!(
            "block shape not known: analysed as {shape}, but this kernel reads {}; its findings hold for {shape} only",
            names.join(", ")
        ),
        notes,
        data: None,
        impact: None,
    })
}
