//! Which forms read, what they read as, and the errors of the others.

use super::body;
use crate::ptx::inst::*;
use crate::ptx::Body;

/// Asm bodies from CUDA 12.4's and clang 19's headers, and the forms the
/// reader promises; each must read without error.
const READABLE: &[(&str, &str)] = &[
    ("mov.u32 $0, %laneid;", "=r"),
    ("mov.u32 $0, %lanemask_eq;", "=r"),
    ("mov.u32 $0, %envreg1;", "=r"),
    ("mov.u32 $0, %warpid;", "=r"),
    ("mov.u32 $0, %nwarpid;", "=r"),
    ("mov.u32 $0, %smid;", "=r"),
    ("mov.u32 $0, %dynamic_smem_size;", "=r"),
    ("mov.u32 $0, %total_smem_size;", "=r"),
    ("mov.u32 $0, %reserved_smem_offset_begin;", "=r"),
    ("mov.u32 $0, %reserved_smem_offset_end;", "=r"),
    ("mov.u32 $0, %reserved_smem_offset_cap;", "=r"),
    ("mov.u32 $0, %reserved_smem_offset_0;", "=r"),
    ("mov.u32 $0, %clock;", "=r"),
    ("mov.u64 $0, %clock64;", "=l"),
    ("mov.u64 $0, %globaltimer;", "=l"),
    ("mov.u32 $0, %tid.x;", "=r"),
    ("mov.b32 $0, $1;", "=r,r"),
    ("mov.f32 $0, 0f3F800000;", "=f"),
    ("atom.add.release.gpu.u32 $0,[$1],$2;", "=r,l,r,~{memory}"),
    ("ld.acquire.gpu.u32 $0,[$1];", "=r,l,~{memory}"),
    ("atom.or.acq_rel.cta.b32 $0,[$1],$2;", "=r,l,r,~{memory}"),
    ("red.or.release.cta.b32 [$0],$1;", "l,r,~{memory}"),
    ("red.and.relaxed.cta.b32 [$0],$1;", "l,r,~{memory}"),
    ("ld.acquire.cta.u32 $0,[$1];", "=r,l,~{memory}"),
    ("trap;", ""),
    ("nanosleep.u32 $0;", "r"),
    ("shf.l.wrap.b32 $0, $1, $2, $3;", "=r,r,r,r"),
    ("shf.r.clamp.b32 $0, $1, $2, $3;", "=r,r,r,r"),
    ("atom.add.v2.f32         {$0, $1}, [$2], {$3, $4};", "=f,=f,l,f,f"),
    ("atom.cta.add.v4.f32         {$0, $1, $2, $3}, [$4], {$5, $6, $7, $8};", "=f,=f,=f,=f,l,f,f,f,f"),
    ("cp.async.ca.shared.global [$0], [$1], $2, $3;", "r,l,n,n,~{memory}"),
    ("cp.async.commit_group;", ""),
    ("cp.async.wait_group $0;", "n"),
    ("cp.async.wait_all;", ""),
    ("{\n\t .reg .pred p;\n\t  elect.sync $0|p, $2;\n\t @p mov.s32 $1, 1;\n\t}", "=r,=r,r,0,1"),
    ("cvta.to.param.u64 $0, $1;", "=l,l"),
    ("cvta.global.u64 $0, $1;", "=l,l"),
    ("cvta.to.local.u32 $0, $1;", "=r,r"),
    ("cvta.const.u64 $0, $1;", "=l,l"),
    ("cvt.u64.u32 $0, $1;", "=l,r"),
    ("cvt.rn.f32.s32 $0, $1;", "=f,r"),
    ("cvt.rzi.ftz.s32.f32 $0, $1;", "=r,f"),
    ("mov.b64 $0, {$1,$2};", "=l,r,r"),
    ("mov.b64 {$0,$1}, $2;", "=r,=r,l"),
    ("mul.wide.u32 $0, $1, $2;", "=l,r,r"),
    ("mul.hi.s32 $0, $1, $2;", "=r,r,r"),
    ("mad.lo.u32 $0, $1, $2, $3;", "=r,r,r,r"),
    ("mad.wide.s32 $0, $1, $2, $3;", "=l,r,r,l"),
    ("fma.rn.ftz.f32 $0, $1, $2, $3;", "=f,f,f,f"),
    ("add.sat.s32 $0, $1, $2;", "=r,r,r"),
    ("sub.u64 $0, $1, 8;", "=l,l"),
    ("and.b32 $0, $1, 0xff;", "=r,r"),
    ("or.b64 $0, $1, $2;", "=l,l,l"),
    ("xor.b32 $0, $1, $2;", "=r,r,r"),
    ("not.b32 $0, $1;", "=r,r"),
    ("shl.b32 $0, $1, 3;", "=r,r"),
    ("shr.s32 $0, $1, $2;", "=r,r,r"),
    ("{ .reg .pred p; setp.ne.and.u32 p, $1, 0, 1; selp.u32 $0, 1, 0, p; }", "=r,r"),
    ("{ .reg .pred %p<2>; setp.lt.f32 %p0|%p1, $1, $2; selp.f32 $0, $1, $2, %p1; }", "=f,f,f"),
    ("prmt.b32 $0, $1, $2, $3;", "=r,r,r,r"),
    ("prmt.b32.f4e $0, $1, $2, $3;", "=r,r,r,r"),
    ("prmt.b32.rc16 $0, $1, 0, $2;", "=r,r,r"),
    ("bfe.s32 $0, $1, $2, $3;", "=r,r,r,r"),
    ("bfi.b64 $0, $1, $2, $3, $4;", "=l,l,l,r,r"),
    ("lop3.b32 $0, $1, $2, $3, 0x96;", "=r,r,r,r"),
    ("brev.b32 $0, $1;", "=r,r"),
    ("popc.b64 $0, $1;", "=r,l"),
    ("clz.b32 $0, $1;", "=r,r"),
    ("rcp.approx.ftz.f64 $0, $1;", "=d,d"),
    ("sqrt.approx.f32 $0, $1;", "=f,f"),
    ("rsqrt.approx.ftz.f32 $0, $1;", "=f,f"),
    ("ex2.approx.ftz.f32 $0, $1;", "=f,f"),
    ("lg2.approx.f32 $0, $1;", "=f,f"),
    ("sin.approx.ftz.f32 $0, $1;", "=f,f"),
    ("cos.approx.f32 $0, $1;", "=f,f"),
    ("ld.global.nc.s32 $0, [$1];", "=r,l"),
    ("ld.global.nc.v2.s8 {$0,$1}, [$2];", "=r,=r,l"),
    ("ld.global.cg.v4.u32 {$0,$1,$2,$3}, [$4+16];", "=r,=r,=r,=r,l"),
    ("ld.global.L1::no_allocate.f32 $0, [$1];", "=f,l"),
    ("ld.volatile.shared.u32 $0, [$1];", "=r,r"),
    ("ld.relaxed.sys.global.u64 $0, [$1];", "=l,l"),
    ("ld.param.u32 $0, [$1];", "=r,l"),
    ("ld.const.f64 $0, [$1];", "=d,l"),
    ("ld.local.u16 $0, [$1];", "=h,l"),
    ("ld.u8 $0, [$1];", "=c,l"),
    ("st.global.wt.u32 [$0], $1;", "l,r,~{memory}"),
    ("st.shared.v2.f32 [$0+8], {$1,$2};", "r,f,f"),
    ("st.release.gpu.u32 [$0], $1;", "l,r"),
    ("st.volatile.global.cs.u64 [$0], $1;", "l,l"),
    ("atom.global.cas.b32 $0, [$1], $2, $3;", "=r,l,r,r"),
    ("atom.shared.exch.b64 $0, [$1], $2;", "=l,r,l"),
    ("atom.sys.global.inc.u32 $0, [$1], $2;", "=r,l,r"),
    ("atom.dec.u32 $0, [$1], $2;", "=r,l,r"),
    ("atom.min.s32 $0, [$1], $2;", "=r,l,r"),
    ("atom.max.u64 $0, [$1], $2;", "=l,l,l"),
    ("atom.xor.b32 $0, [$1], $2;", "=r,l,r"),
    ("red.global.add.f32 [$0], $1;", "l,f"),
    ("fence.acq_rel.cta;", ""),
    ("fence.sc.gpu;", ""),
    ("membar.gl;", ""),
    ("membar.sys;", ""),
    ("shfl.sync.up.b32 $0, $1, 1, 0, $2;", "=r,r,r"),
    ("shfl.sync.down.b32 $0, $1, $2, 0x1f, 0xffffffff;", "=r,r,r"),
    ("{ .reg .pred p; shfl.sync.bfly.b32 $0|p, $1, $2, 0x1f, -1; selp.u32 $1, 1, 0, p; }", "=r,=r,r"),
    ("shfl.sync.idx.b32 $0, $1, $2, 0x1f, $3;", "=r,r,r,r"),
    ("{ .reg .pred p; setp.ne.u32 p, $1, 0; vote.sync.all.pred p, p, $2; selp.u32 $0, 1, 0, p; }", "=r,r,r"),
    ("{ .reg .pred p; setp.ne.u32 p, $1, 0; vote.sync.any.pred p, !p, $2; selp.u32 $0, 1, 0, p; }", "=r,r,r"),
    ("{ .reg .pred p; setp.ne.u32 p, $1, 0; vote.sync.uni.pred p, p, $2; selp.u32 $0, 1, 0, p; }", "=r,r,r"),
    ("{ .reg .pred p; setp.ne.u32 p, $1, 0; vote.sync.ballot.b32 $0, p, $2; }", "=r,r,r"),
    ("match.any.sync.b32 $0, $1, $2;", "=r,r,r"),
    ("{ .reg .pred p; match.all.sync.b64 $0|p, $1, $2; }", "=r,l,r"),
    ("redux.sync.add.u32 $0, $1, $2;", "=r,r,r"),
    ("redux.sync.min.s32 $0, $1, $2;", "=r,r,r"),
    ("redux.sync.or.b32 $0, $1, $2;", "=r,r,r"),
    ("bar.sync 0;", ""),
    ("bar.sync 1, 64;", ""),
    ("barrier.sync.aligned 0;", ""),
    ("barrier.sync $0;", "r"),
    ("bar.arrive 1, 64;", ""),
    ("bar.red.popc.u32 $0, 0, $1;", "=r,b"),
    ("{ .reg .pred p; bar.red.and.pred p, 0, !p; }", ""),
    ("{ .reg .pred __$$temp1;\n\t setp.ne.u32 __$$temp1, $1, 0; selp.u32 $0, 1, 0, __$$temp1; }", "=r,r"),
];

#[test]
fn every_listed_form_reads() {
    for &(text, constraints) in READABLE {
        let b = body(text, constraints);
        assert!(!b.insts.is_empty() || text.is_empty(), "{text:?}");
    }
}

#[test]
fn typed_forms_carry_their_qualifiers() {
    let op = |text: &str, c: &str| body(text, c).insts.remove(0).op;
    let Op::Ld {
        mem,
        vec,
        ty,
        dsts,
        addr,
    } = op(
        "ld.global.cg.v4.u32 {$0,$1,$2,$3}, [$4+16];",
        "=r,=r,=r,=r,l",
    )
    else {
        panic!()
    };
    assert_eq!(
        (mem.space, mem.cache.as_deref(), vec, ty),
        (Space::Global, Some("cg"), 4, Ty::U32)
    );
    assert_eq!(dsts.len(), 4);
    assert_eq!(addr.offset, 16);
    let Op::Atom {
        scope,
        sem,
        vec,
        srcs,
        ..
    } = op(
        "atom.cta.add.v4.f32 {$0, $1, $2, $3}, [$4], {$5, $6, $7, $8};",
        "=f,=f,=f,=f,l,f,f,f,f",
    )
    else {
        panic!()
    };
    assert_eq!(
        (scope, sem, vec, srcs.len()),
        (Scope::Cta, Sem::Relaxed, 4, 4)
    );
    assert_eq!(
        op("fence.sc.gpu;", ""),
        Op::Fence {
            kind: FenceKind::Sc,
            scope: Scope::Gpu
        }
    );
    assert_eq!(
        op("membar.gl;", ""),
        Op::Fence {
            kind: FenceKind::Membar,
            scope: Scope::Gpu
        }
    );
    let Op::Bar {
        kind,
        aligned,
        id,
        count,
        ..
    } = op("barrier.sync $0, 64;", "r")
    else {
        panic!()
    };
    assert_eq!(
        (kind, aligned, id, count),
        (
            BarKind::Sync,
            false,
            Operand::Reg(Reg::Arg(0)),
            Some(Operand::Imm(64))
        )
    );
    let Op::Shfl { mode, pred_out, .. } =
        op("shfl.sync.bfly.b32 $0|$1, $2, 1, 0x1f, -1;", "=r,=b,r")
    else {
        panic!()
    };
    assert_eq!(
        (mode, pred_out),
        (ShflMode::Bfly, Some(Operand::Reg(Reg::Arg(1))))
    );
}

#[test]
fn unsupported_forms_name_the_instruction() {
    let err = |text: &str, c: &str| Body::parse(text, c).unwrap_err().to_string();
    // SIMD video instructions from clang's device functions are outside the set.
    let e = err("vabsdiff4.u32.u32.u32 $0,$1,$2,$3;", "=r,r,r,r");
    assert!(
        e.contains("unsupported PTX instruction `vabsdiff4.u32.u32.u32`"),
        "{e}"
    );
    let e = err("{\n add.cc.u32 $0, $1, $2;\n}", "=r,r,r");
    assert!(
        e.contains("line 2") && e.contains("`.cc`") && e.contains("add.cc.u32"),
        "{e}"
    );
    assert!(err("brkpt;", "").contains("`brkpt`"));
    assert!(err("mov.u32 $0, %bogus;", "=r").contains("unknown register `%bogus`"));
    assert!(err("mov.u32 $1, $0;", "=r,r").contains("writes `$1`, which is an input"));
    assert!(err("mov.u32 $0, $3;", "=r,r").contains("`$3` has no constraint"));
    assert!(err("shfl.up.b32 $0, $1, 1, 0;", "=r,r").contains("shfl.up.b32"));
    assert!(err("ld.relaxed.global.u32 $0, [$1];", "=r,l").contains("ld.relaxed.global.u32"));
    assert!(err("lop3.b32 $0, $1, $2, $3, $4;", "=r,r,r,r,r").contains("should be an immediate"));
    assert!(err("mov.u32 $0, 1", "=r").contains("expected `,`, found the end"));
    assert!(err("mov.u32 $0;", "=r").contains("takes 2 operands, not 1"));
}
