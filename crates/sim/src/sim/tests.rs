//! The simulator on modules built by hand (no clang): shared arrays behind
//! `addrspacecast` constant expressions, and a loop whose phis swap.

use super::*;
use crate::ir::builder::ModuleBuilder;
use crate::ir::{addrspace, IntPred, Opcode, Value};

fn ints(o: &Outcome, name: &str) -> Vec<i32> {
    o.buffer(name)
        .unwrap()
        .data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn out_buffer(bytes: u64) -> (String, ArgValue) {
    (
        "arg0".into(),
        ArgValue::Buffer(BufferSpec {
            bytes,
            init: Init::Zero,
            elem: None,
        }),
    )
}

/// `s[t] = t; __syncthreads(); out[t] = s[63 - t];` with `s` reached, as
/// clang writes it, through `addrspacecast (ptr addrspace(3) @s to ptr)`.
#[test]
fn shared_array_through_a_generic_pointer() {
    let mut mb = ModuleBuilder::new();
    let (i32t, i64t, void) = (mb.int(32), mb.int(64), mb.void());
    let generic = mb.ptr(addrspace::GENERIC);
    let arr = mb.ty(TypeKind::Array(i32t, 64));
    let s = mb.global("s", arr, addrspace::SHARED);
    let s_generic = mb.const_expr(Opcode::AddrSpaceCast, generic, vec![s]);
    let (zero, c63) = (mb.const_int(64, 0), mb.const_int(32, 63));
    let mut fb = mb.define("k", &[generic], void);
    fb.kernel();
    let t = fb.sreg("tid.x");
    let t64 = fb.cast(Opcode::ZExt, t, i64t);
    let p = fb.gep(arr, s_generic, &[zero, t64]);
    fb.store(t, p);
    fb.intrinsic("llvm.nvvm.barrier0", void, vec![]);
    let r = fb.binary(Opcode::Sub, c63, t);
    let r64 = fb.cast(Opcode::ZExt, r, i64t);
    let q = fb.gep(arr, s_generic, &[zero, r64]);
    let v = fb.load(i32t, q);
    let o = fb.gep(i32t, Value::Arg(0), &[t64]);
    fb.store(v, o);
    fb.ret(None);
    let m = mb.finish();

    let config = LaunchConfig {
        block: [64, 1, 1],
        ..LaunchConfig::default()
    };
    let o = simulate(&m, FuncId(0), &config, &[out_buffer(256)]).unwrap();
    let out = ints(&o, "arg0");
    assert!((0..64).all(|t| out[t] == 63 - t as i32));
    // Both shared accesses touch 32 consecutive words per warp: no conflict.
    assert_eq!(o.totals.conflicts, 0);
    assert_eq!(o.totals.wavefronts, 4);
    for (info, stats) in &o.sites {
        if info.kind != crate::ir::SiteKind::Branch {
            assert_eq!((stats.lanes_max, stats.by_warp.len()), (32, 0));
        }
    }
    let shared: Vec<_> = o
        .sites
        .iter()
        .filter(|(_, s)| s.space == Some(crate::memory::Space::Shared))
        .collect();
    assert_eq!(shared.len(), 2);
    for (_, s) in shared {
        // Two warps, one wavefront each.
        assert_eq!(
            (s.wavefronts.max, s.wavefronts.total, s.ideal_wavefronts),
            (1, 2, 2)
        );
        assert_eq!((s.conflict_at_max.min, s.conflict_at_max.max), (1, 1));
    }
}

/// A loop run `t % 4` times whose phis swap `a` and `b` each trip:
/// header: i = phi [0, entry], [i + 1, latch]; a = phi [t, entry], [b, latch];
/// b = phi [100, entry], [a, latch]. The exit test splits the warp at the
/// first three trips (a quarter of the lanes leaves each time).
#[test]
fn loop_phis_swap_in_parallel_and_exits_diverge() {
    let mut mb = ModuleBuilder::new();
    let (i32t, i64t, void) = (mb.int(32), mb.int(64), mb.void());
    let generic = mb.ptr(addrspace::GENERIC);
    let (c0, c1, c3, c100, c1000) = (
        mb.const_int(32, 0),
        mb.const_int(32, 1),
        mb.const_int(32, 3),
        mb.const_int(32, 100),
        mb.const_int(32, 1000),
    );
    let mut fb = mb.define("k", &[generic], void);
    fb.kernel();
    let (header, latch, exit) = (fb.block(), fb.block(), fb.block());
    let t = fb.sreg("tid.x");
    let trips = fb.binary(Opcode::And, t, c3);
    fb.br(header);
    fb.switch_to(header);
    let entry = crate::ir::BlockId(0);
    let i = fb.phi(i32t, &[(c0, entry)]);
    let a = fb.phi(i32t, &[(t, entry)]);
    let b = fb.phi(i32t, &[(c100, entry)]);
    fb.at_line(7);
    let more = fb.icmp(IntPred::Ult, i, trips);
    fb.cond_br(more, latch, exit);
    fb.switch_to(latch);
    let next = fb.binary(Opcode::Add, i, c1);
    fb.add_incoming(i, next, latch);
    fb.add_incoming(a, b, latch);
    fb.add_incoming(b, a, latch);
    fb.br(header);
    fb.switch_to(exit);
    let high = fb.binary(Opcode::Mul, a, c1000);
    let packed = fb.binary(Opcode::Add, high, b);
    let t64 = fb.cast(Opcode::ZExt, t, i64t);
    let o = fb.gep(i32t, Value::Arg(0), &[t64]);
    fb.store(packed, o);
    fb.ret(None);
    let m = mb.finish();

    let config = LaunchConfig {
        block: [32, 1, 1],
        ..LaunchConfig::default()
    };
    let o = simulate(&m, FuncId(0), &config, &[out_buffer(128)]).unwrap();
    let out = ints(&o, "arg0");
    for t in 0..32 {
        let (a, b) = if (t % 4) % 2 == 0 { (t, 100) } else { (100, t) };
        assert_eq!(out[t as usize], a * 1000 + b, "thread {t}");
    }
    // Trips 0..3: the exit test runs 4 times and splits the warp 3 times.
    assert_eq!(o.totals.divwarps, 3);
    let (_, stats) = o
        .sites
        .iter()
        .find(|(s, _)| s.kind == crate::ir::SiteKind::Branch)
        .unwrap();
    assert_eq!((stats.executions, stats.divergent), (4, 3));
    // One warp, split three times, counts once; the first test has all 32
    // lanes.
    assert_eq!((stats.warps, stats.divergent_warps), (1, 1));
    assert_eq!(
        (stats.by_warp.clone(), stats.lanes_max),
        (vec![(1, 1, 1)], 32)
    );
}
