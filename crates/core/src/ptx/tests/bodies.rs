//! Whole bodies: runs for one thread, address windows, and summaries.

use super::{body, exec};
use crate::ir::intrinsics::{LaneMask, SReg};
use crate::ptx::inst::*;
use crate::ptx::space::Windows;
use crate::ptx::summary::{EffectKind, Summary};
use crate::ptx::{sreg, Special};

#[test]
fn cvta_shared_round_trip() {
    let w = Windows::default();
    let there = exec("cvta.shared.u64 $0, $1;", "=l,l", &[0, 0x40], &[])[0];
    assert_eq!(there, w.shared + 0x40);
    assert_eq!(w.space_of(there), Space::Shared);
    let back = exec("cvta.to.shared.u64 $0, $1;", "=l,l", &[0, there], &[])[0];
    assert_eq!(back, 0x40);
    // 32-bit forms keep the low word of the offset.
    let back32 = exec("cvta.to.shared.u32 $0, $1;", "=r,r", &[0, there], &[])[0];
    assert_eq!(back32, 0x40);
    assert_eq!(w.space_of(0x1000), Space::Global);
}

#[test]
fn reserved_shared_window_of_cooperative_groups() {
    // CUDA 12.4's reserved_shared_ptr(): offset 0x20 becomes a generic
    // pointer 0x20 into the shared window.
    let text = "{\n\t .reg .u32 start;\n\t .reg .u64 extended;\n\t mov.u32 start, %reserved_smem_offset_1;\n\t cvt.u64.u32 extended, start;\n\t cvta.shared.u64 $0, extended;\n\t}";
    let slot = Special::ReservedSmem(sreg::ReservedSmem::Slot(1));
    let out = exec(text, "=l", &[0], &[(slot, 0x20)]);
    assert_eq!(out[0], Windows::default().shared + 0x20);
    let s = Summary::of(&body(text, "=l"));
    assert!(s.is_pure() && s.outputs[0].1.is_uniform_alone());
}

#[test]
fn lane_registers_and_packing() {
    let lane = Special::Sreg(SReg::LaneId);
    let lt = Special::Sreg(SReg::LaneMask(LaneMask::Lt));
    let out = exec(
        "mov.u32 $0, %laneid; mov.u32 $1, %lanemask_lt;",
        "=r,=r",
        &[],
        &[(lane, 5), (lt, sreg::lane_mask(LaneMask::Lt, 5).into())],
    );
    assert_eq!(out, [5, 0x1f]);
    // Pack low then high word; unpack gives them back.
    assert_eq!(
        exec("mov.b64 $0, {$1, $2};", "=l,r,r", &[0, 0x1111, 0x2222], &[])[0],
        0x2222_0000_1111
    );
    assert_eq!(
        exec(
            "mov.b64 {$0, $1}, $2;",
            "=r,=r,l",
            &[0, 0, 0xaaaa_bbbb_cccc_dddd],
            &[]
        ),
        [0xcccc_dddd, 0xaaaa_bbbb, 0xaaaa_bbbb_cccc_dddd]
    );
    let s = Summary::of(&body("mov.u32 $0, %laneid;", "=r"));
    assert_eq!(
        s.outputs[0].1.varying_specials().collect::<Vec<_>>(),
        [lane]
    );
}

#[test]
fn guards_and_tied_operands() {
    // elect.sync in CUDA's invoke_one: `$1` is tied to input 4 and set
    // to 1 only where `p` holds. Here `p` comes from a compare instead,
    // so the body runs on one thread.
    let text = "{ .reg .pred p; setp.ne.u32 p, $2, 0; @p mov.s32 $1, 1; }";
    assert_eq!(exec(text, "=r,=r,r,0,1", &[0, 0, 3, 0, 0], &[])[1], 1);
    assert_eq!(exec(text, "=r,=r,r,0,1", &[0, 0, 0, 0, 42], &[])[1], 42);
    let elect = "{\n\t .reg .pred p;\n\t  elect.sync $0|p, $2;\n\t @p mov.s32 $1, 1;\n\t}";
    let s = Summary::of(&body(elect, "=r,=r,r,0,1"));
    // $1 keeps input 4 where p fails, and p comes from other lanes (and
    // the mask, input 2).
    let one = &s.outputs[1].1;
    assert_eq!(one.inputs, [2, 4]);
    assert!(one.other_lanes);
    assert_eq!(s.effects[0].kind, EffectKind::WarpSync);
}

#[test]
fn memory_effects() {
    let s = Summary::of(&body(
        "atom.add.release.gpu.u32 $0,[$1],$2;",
        "=r,l,r,~{memory}",
    ));
    let EffectKind::Atomic {
        op,
        space,
        bytes,
        sem,
        scope,
        returns,
        address,
        value,
    } = &s.effects[0].kind
    else {
        panic!("{s:?}")
    };
    assert_eq!(
        (*op, *space, *bytes, *sem, *scope, *returns),
        (
            AtomOp::Add,
            Space::Generic,
            4,
            Sem::Release,
            Scope::Gpu,
            true
        )
    );
    assert_eq!(
        (address.inputs.as_slice(), value.inputs.as_slice()),
        ([1].as_slice(), [2].as_slice())
    );
    assert!(s.outputs[0].1.memory);
    let s = Summary::of(&body(
        "ld.global.nc.v4.s32 {$0,$1,$2,$3}, [$4+16];",
        "=r,=r,=r,=r,l",
    ));
    assert!(matches!(
        s.effects[0].kind,
        EffectKind::Load {
            space: Space::Global,
            bytes: 16,
            nc: true,
            ..
        }
    ));
    let s = Summary::of(&body("red.and.relaxed.cta.b32 [$0],$1;", "l,r,~{memory}"));
    assert!(matches!(
        s.effects[0].kind,
        EffectKind::Atomic {
            returns: false,
            scope: Scope::Cta,
            ..
        }
    ));
    let s = Summary::of(&body("bar.red.popc.u32 $0, 0, $1;", "=r,b"));
    assert!(matches!(
        s.effects[0].kind,
        EffectKind::Barrier {
            kind: BarKind::Red(BarReduce::Popc),
            aligned: true
        }
    ));
}

#[test]
fn lanes_see_warp_primitives_as_the_taint_rules_do() {
    use crate::ptx::varies::{LaneSource, Variance, Varies};
    let lane = Special::Sreg(SReg::LaneId);
    // %laneid differs per lane; the reserved window does not.
    let v = Variance::of(&body("mov.u32 $0, %laneid;", "=r"));
    assert_eq!(v.output(0).sources, [LaneSource::Special(lane)]);
    let v = Variance::of(&body("mov.u32 $0, %reserved_smem_offset_1;", "=r"));
    assert!(v.output(0).is_uniform());
    // A ballot of a per-lane predicate ($2) is one answer for the mask's
    // lanes: it varies with the mask ($1) only.
    let v = Variance::of(&body(
        "{ .reg .pred p; setp.ne.u32 p, $2, 0; vote.sync.ballot.b32 $0, p, $1; }",
        "=r,r,r",
    ));
    assert_eq!(v.output(0).inputs, [1]);
    // A whole-warp broadcast (c = 0x1f: segment mask 0) depends on the
    // source lane ($2), not the value ($1); a shuffle down on the value,
    // and its in-range predicate on the lane.
    let v = Variance::of(&body("shfl.sync.idx.b32 $0, $1, $2, 0x1f, -1;", "=r,r,r"));
    assert_eq!(v.output(0).inputs, [2]);
    let v = Variance::of(&body(
        "{ .reg .pred p; shfl.sync.down.b32 $0|p, $2, 1, 0x1f, -1; selp.u32 $1, 1, 0, p; }",
        "=r,=r,r",
    ));
    assert_eq!(v.output(0).inputs, [2]);
    assert_eq!(v.output(1).sources, [LaneSource::ShuffleRange]);
    // A load varies with its address and the memory it reads (instruction
    // 0); an atomic's result in any case.
    let v = Variance::of(&body("ld.global.u32 $0, [$1];", "=r,l"));
    assert_eq!(
        v.output(0),
        Varies {
            inputs: vec![1],
            loads: vec![0],
            ..Varies::default()
        }
    );
    assert_eq!(
        v.addresses[0],
        [Varies {
            inputs: vec![1],
            ..Varies::default()
        }]
    );
    let v = Variance::of(&body("atom.add.u32 $0, [$1], $2;", "=r,l,r"));
    assert_eq!(v.output(0).sources, [LaneSource::Atomic]);
    // elect.sync: the leader's id is one per mask, the predicate is not.
    let elect = "{\n\t .reg .pred p;\n\t  elect.sync $0|p, $2;\n\t @p mov.s32 $1, 1;\n\t}";
    let v = Variance::of(&body(elect, "=r,=r,r,0,1"));
    assert_eq!(v.output(0).inputs, [2]);
    assert_eq!(v.output(1).sources, [LaneSource::Elected]);
}

#[test]
fn copies_and_bound_inputs() {
    let b = body("mov.u32 $0, %laneid;", "=r");
    assert_eq!(
        b.copy_of(0),
        Some(Operand::Special(Special::Sreg(SReg::LaneId)))
    );
    // A narrower mov, or one after arithmetic, is not a plain copy.
    assert_eq!(body("add.u32 $0, $1, 1;", "=r,r").copy_of(0), None);
    assert_eq!(body("mov.u16 $0, $1;", "=r,r").copy_of(0), None);
    assert_eq!(
        body("mov.b32 $0, $1;", "=r,r").copy_of(0),
        Some(Operand::Reg(Reg::Arg(1)))
    );
    // The cvta window of the reserved shared memory marks the output.
    let text = "{\n\t .reg .u32 start;\n\t .reg .u64 extended;\n\t mov.u32 start, %reserved_smem_offset_1;\n\t cvt.u64.u32 extended, start;\n\t cvta.shared.u64 $0, extended;\n\t}";
    let s = Summary::of(&body(text, "=l"));
    assert_eq!(s.outputs[0].1.windows, [Space::Shared]);
}
