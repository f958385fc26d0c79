//! The loader reads LLVM 19's and LLVM 22's spellings of the same kernel
//! alike (ARCHITECTURE.md, "LLVM 19 and 22"): both IR files parse in both
//! builds, so each build checks both paths through the loader.

use warpcheck::ir::intrinsics::{Barrier, BarrierOperands, BarrierReduce, Intrinsic};
use warpcheck::ir::{llvm, Callee, Module, Opcode};

fn load(name: &str) -> Module {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ir")
        .join(name);
    llvm::load_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Each barrier call's intrinsic and argument count, in order.
fn barriers(m: &Module) -> Vec<(Intrinsic, usize)> {
    let k = m.kernels().next().expect("a kernel");
    let f = m.func(k);
    f.insts
        .iter()
        .filter(|i| i.op == Opcode::Call)
        .filter_map(|i| match i.callee() {
            Some(Callee::Direct(c)) => m.func(c).intrinsic.map(|x| (x, i.operands.len())),
            _ => None,
        })
        .filter(|(x, _)| matches!(x, Intrinsic::Barrier(_)))
        .collect()
}

#[test]
fn kernel_and_launch_bounds_in_both_spellings() {
    for name in ["llvm19_forms.ll", "llvm22_forms.ll"] {
        let m = load(name);
        let kernels: Vec<_> = m.kernels().collect();
        assert_eq!(kernels.len(), 1, "{name}");
        let b = m.func(kernels[0]).launch;
        // maxntid x = 64, y = 2, z not given: 1.
        assert_eq!(b.maxntid, Some([64, 2, 1]), "{name}");
        assert_eq!(b.reqntid, None, "{name}");
        assert_eq!(b.minctasm, Some(4), "{name}");
    }
}

#[test]
fn barriers_read_as_llvm19_calls_in_both_spellings() {
    // __syncthreads() with no argument, then __syncthreads_count(p) with
    // the predicate alone: LLVM 22's barrier id 0 is dropped.
    let barrier0 = |reduce| {
        Intrinsic::Barrier(Barrier {
            reduce,
            operands: BarrierOperands::Implicit,
            aligned: true,
        })
    };
    let expected = vec![
        (barrier0(BarrierReduce::None), 0),
        (barrier0(BarrierReduce::Popc), 1),
    ];
    for name in ["llvm19_forms.ll", "llvm22_forms.ll"] {
        assert_eq!(barriers(&load(name)), expected, "{name}");
    }
}
