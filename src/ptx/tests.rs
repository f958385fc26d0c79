//! Reading and evaluating asm bodies, with results worked out by hand from
//! the PTX ISA's definitions.

use super::eval::*;
use super::inst::*;
use super::run::run;
use super::space::Windows;
use super::summary::{EffectKind, Summary};
use super::*;
use crate::ir::intrinsics::LaneMask;

fn body(text: &str, constraints: &str) -> Body {
    Body::parse(text, constraints).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Runs a body with the given operand values; specials come from `sregs`.
fn exec(text: &str, constraints: &str, operands: &[u64], sregs: &[(Special, u64)]) -> Vec<u64> {
    let b = body(text, constraints);
    let mut special = |s: Special| sregs.iter().find(|r| r.0 == s).map_or(0, |r| r.1);
    run(&b, operands, &mut special, &Windows::default()).unwrap()
}

const A: u32 = 0x3322_1100; // bytes 0..3
const B: u32 = 0x7766_5544; // bytes 4..7

#[test]
fn prmt_default_selectors() {
    // Selector 0x3210 copies bytes 0..3: `a` itself.
    assert_eq!(prmt(PrmtMode::Default, A, B, 0x3210), A);
    // 0x4567: result bytes 0..3 are source bytes 7, 6, 5, 4.
    assert_eq!(prmt(PrmtMode::Default, A, B, 0x4567), 0x4455_6677);
    // Bit 3 replicates the chosen byte's sign: byte 0 = 0x7f (positive),
    // byte 1 = 0x80 (negative); selectors 8, 9, 8, 9 give 00 ff 00 ff.
    assert_eq!(prmt(PrmtMode::Default, 0x0000_807f, 0, 0x9898), 0xff00_ff00);
}

#[test]
fn prmt_modes() {
    // f4e, c = 1: bytes 4 3 2 1 (most significant first).
    assert_eq!(prmt(PrmtMode::F4e, A, B, 1), 0x4433_2211);
    // b4e, c = 0: bytes 5 6 7 0.
    assert_eq!(prmt(PrmtMode::B4e, A, B, 0), 0x5566_7700);
    // rc8, c = 2: byte 2 four times.
    assert_eq!(prmt(PrmtMode::Rc8, A, B, 2), 0x2222_2222);
    // ecl, c = 2: bytes 3 2 2 2. ecr, c = 1: bytes 1 1 1 0.
    assert_eq!(prmt(PrmtMode::Ecl, A, B, 2), 0x3322_2222);
    assert_eq!(prmt(PrmtMode::Ecr, A, B, 1), 0x1111_1100);
    // rc16, c = 1: the upper half-word twice (bytes 3 2 3 2).
    assert_eq!(prmt(PrmtMode::Rc16, A, B, 1), 0x3322_3322);
    // Only c & 3 counts in the modes: c = 6 is c = 2.
    assert_eq!(prmt(PrmtMode::Rc8, A, B, 6), 0x2222_2222);
}

#[test]
fn bit_field_extract_and_insert() {
    let a = 0xabcd_1234;
    // Bits 8..15 of 0xabcd1234 are 0x12, positive as a signed field.
    assert_eq!(bfe(Ty::U32, a, 8, 8), 0x12);
    assert_eq!(bfe(Ty::S32, a, 8, 8), 0x12);
    // Bits 12..19 are 0xd1; bit 19 is set, so the signed field extends.
    assert_eq!(bfe(Ty::U32, a, 12, 8), 0xd1);
    assert_eq!(bfe(Ty::S32, a, 12, 8), 0xffff_ffd1);
    // A field past bit 31: the bits above read as the sign (bit 31) when
    // signed, as zero when not.
    assert_eq!(bfe(Ty::S32, 0x8000_0000, 28, 8), 0xffff_fff8);
    assert_eq!(bfe(Ty::U32, 0x8000_0000, 28, 8), 0x8);
    assert_eq!(bfe(Ty::S32, a, 4, 0), 0);
    // 64-bit: bits 32..47 of 0x8000_1234_0000_0000 are 0x1234.
    assert_eq!(bfe(Ty::S64, 0x8000_1234_0000_0000, 32, 16), 0x1234);
    // Position and length count mod 256: 264 is 8.
    assert_eq!(bfe(Ty::U32, a, 264, 8), 0x12);
    // Insert 4 bits of 0xff at bit 8 of 0x12345678: 0x678 -> 0xf78.
    assert_eq!(bfi(Ty::B32, 0xff, 0x1234_5678, 8, 4), 0x1234_5f78);
    // A field reaching past bit 31 is clipped; a position past it changes nothing.
    assert_eq!(bfi(Ty::B32, 0xff, 0, 28, 8), 0xf000_0000);
    assert_eq!(bfi(Ty::B32, 0xff, 7, 40, 8), 7);
}

#[test]
fn lop3_tables() {
    // 0x96 = 0xF0 ^ 0xCC ^ 0xAA: three-way xor.
    assert_eq!(
        lop3(0xf0f0_f0f0, 0xcccc_cccc, 0xaaaa_aaaa, 0x96),
        0x9696_9696
    );
    // 1100 ^ 1010 ^ 1001 = 1111.
    assert_eq!(lop3(0b1100, 0b1010, 0b1001, 0x96), 0b1111);
    // 0xE8 = majority: per bit 1,1,1 -> 1; 1,0,0 -> 0; 0,1,0 -> 0; 0,0,1 -> 0.
    assert_eq!(lop3(0b1100, 0b1010, 0b1001, 0xe8), 0b1000);
    // 0xF0 is `a` alone, 0xAA is `c` alone.
    assert_eq!(lop3(0x1234, 0xffff, 0, 0xf0), 0x1234);
    assert_eq!(lop3(0, 0xffff, 0x5678, 0xaa), 0x5678);
}

#[test]
fn funnel_shifts() {
    let (lo, hi) = (0x8000_0001, 0x0000_0001);
    // hi:lo = 0x00000001_80000001; << 4 = 0x00000018_00000010: upper word 0x18.
    assert_eq!(shf(true, false, lo, hi, 4), 0x18);
    // .wrap takes 36 mod 32 = 4; .clamp takes min(36, 32) = 32: the upper
    // word becomes lo.
    assert_eq!(shf(true, false, lo, hi, 36), 0x18);
    assert_eq!(shf(true, true, lo, hi, 36), lo);
    // >> 4 = 0x00000000_18000000: lower word 0x18000000.
    assert_eq!(shf(false, false, lo, hi, 4), 0x1800_0000);
    assert_eq!(shf(false, true, lo, hi, 40), hi);
    assert_eq!(shf(true, false, lo, hi, 0), hi);
}

#[test]
fn bit_counts_and_reversal() {
    assert_eq!(unary(UnaryOp::Brev, Ty::B32, 1).unwrap(), 0x8000_0000);
    // 0x12345678 = 0001 0010 0011 0100 0101 0110 0111 1000; reversed
    // 0001 1110 0110 1010 0010 1100 0100 1000 = 0x1e6a2c48.
    assert_eq!(
        unary(UnaryOp::Brev, Ty::B32, 0x1234_5678).unwrap(),
        0x1e6a_2c48
    );
    assert_eq!(unary(UnaryOp::Brev, Ty::B64, 1).unwrap(), 1 << 63);
    assert_eq!(unary(UnaryOp::Clz, Ty::B32, 0).unwrap(), 32);
    // Bit 16 set: bits 31..17 are the 15 leading zeros.
    assert_eq!(unary(UnaryOp::Clz, Ty::B32, 0x0001_0000).unwrap(), 15);
    assert_eq!(unary(UnaryOp::Clz, Ty::B64, 1).unwrap(), 63);
    assert_eq!(unary(UnaryOp::Popc, Ty::B32, 0xf0f0).unwrap(), 8);
    assert_eq!(unary(UnaryOp::Not, Ty::B32, 0).unwrap(), 0xffff_ffff);
    assert_eq!(unary(UnaryOp::Neg, Ty::S32, 5).unwrap(), 0xffff_fffb);
}

#[test]
fn integer_arithmetic() {
    let m1 = 0xffff_ffff;
    // 0x7fffffff + 1 saturates at 0x7fffffff; without .sat it wraps.
    assert_eq!(
        binary(BinOp::Add, Ty::S32, true, false, 0x7fff_ffff, 1).unwrap(),
        0x7fff_ffff
    );
    assert_eq!(
        binary(BinOp::Add, Ty::S32, false, false, 0x7fff_ffff, 1).unwrap(),
        0x8000_0000
    );
    // (2^32 - 1)^2 = 0xfffffffe_00000001.
    assert_eq!(
        binary(BinOp::MulHi, Ty::U32, false, false, m1, m1).unwrap(),
        0xffff_fffe
    );
    assert_eq!(
        binary(BinOp::MulLo, Ty::U32, false, false, m1, m1).unwrap(),
        1
    );
    // Signed: (-1) * (-1) = 1, high word 0.
    assert_eq!(
        binary(BinOp::MulHi, Ty::S32, false, false, m1, m1).unwrap(),
        0
    );
    // -2 * 3 = -6 over 64 bits.
    assert_eq!(
        binary(BinOp::MulWide, Ty::S32, false, false, 0xffff_fffe, 3).unwrap(),
        (-6i64) as u64
    );
    assert_eq!(mad(MadMode::Lo, Ty::S32, false, 3, 4, 5).unwrap(), 17);
    // (2^32 - 1) * 2 + 1 = 0x1_ffffffff.
    assert_eq!(
        mad(MadMode::Wide, Ty::U32, false, m1, 2, 1).unwrap(),
        0x1_ffff_ffff
    );
    // -8 >> 1 = -4 arithmetically; 0x80000000 >> 31 = 1 logically.
    assert_eq!(
        binary(BinOp::Shr, Ty::S32, false, false, 0xffff_fff8, 1).unwrap(),
        0xffff_fffc
    );
    assert_eq!(
        binary(BinOp::Shr, Ty::U32, false, false, 0x8000_0000, 31).unwrap(),
        1
    );
    // Shifts by the width or more: zero, or the sign for signed shr.
    assert_eq!(binary(BinOp::Shl, Ty::B32, false, false, 1, 40).unwrap(), 0);
    assert_eq!(
        binary(BinOp::Shr, Ty::S32, false, false, 0x8000_0000, 40).unwrap(),
        m1
    );
    assert_eq!(
        binary(BinOp::Min, Ty::S32, false, false, m1, 1).unwrap(),
        m1
    );
    assert_eq!(binary(BinOp::Min, Ty::U32, false, false, m1, 1).unwrap(), 1);
}

#[test]
fn comparisons_and_selects() {
    let f = |x: f32| u64::from(x.to_bits());
    assert!(setp(Cmp::Lt, Ty::S32, 0xffff_ffff, 0).unwrap());
    assert!(!setp(Cmp::Lt, Ty::U32, 0xffff_ffff, 0).unwrap());
    assert!(setp(Cmp::Lo, Ty::B32, 1, 2).unwrap());
    // NaN: ordered comparisons fail, unordered ones hold.
    assert!(!setp(Cmp::Ne, Ty::F32, f(f32::NAN), f(1.0)).unwrap());
    assert!(setp(Cmp::Neu, Ty::F32, f(f32::NAN), f(1.0)).unwrap());
    assert!(setp(Cmp::Nan, Ty::F32, f(1.0), f(f32::NAN)).unwrap());
    // setp.lt.and.s32 p|q, -1, 0, !r with r = 0: p = true and true, q = false and true.
    let out = exec(
        "{ .reg .pred p, q, r; setp.eq.u32 r, 1, 0; setp.lt.and.s32 p|q, -1, 0, !r; selp.b32 $0, 7, 9, p; selp.b32 $1, 7, 9, q; }",
        "=r,=r",
        &[],
        &[],
    );
    assert_eq!(out, [7, 9]);
}

#[test]
fn conversions() {
    assert_eq!(
        cvt(Ty::U64, Ty::U32, None, false, false, 0xffff_ffff).unwrap(),
        0xffff_ffff
    );
    assert_eq!(
        cvt(Ty::S64, Ty::S32, None, false, false, 0xffff_ffff).unwrap(),
        u64::MAX
    );
    assert_eq!(
        cvt(Ty::U16, Ty::U32, None, false, false, 0x1_2345).unwrap(),
        0x2345
    );
    // .sat clamps to the destination: -5 -> 0 and 300 -> 255 as u8.
    assert_eq!(
        cvt(Ty::U8, Ty::S32, None, false, true, (-5i64) as u64).unwrap(),
        0
    );
    assert_eq!(cvt(Ty::U8, Ty::S32, None, false, true, 300).unwrap(), 255);
    let f = |x: f32| u64::from(x.to_bits());
    // -2.7 toward zero is -2; 2.5 to nearest even is 2; -2.5 down is -3.
    assert_eq!(
        cvt(Ty::S32, Ty::F32, Some(Round::Rzi), false, false, f(-2.7)).unwrap(),
        0xffff_fffe
    );
    assert_eq!(
        cvt(Ty::S32, Ty::F32, Some(Round::Rni), false, false, f(2.5)).unwrap(),
        2
    );
    assert_eq!(
        cvt(Ty::S32, Ty::F32, Some(Round::Rmi), false, false, f(-2.5)).unwrap(),
        0xffff_fffd
    );
    // Float to integer saturates; NaN gives 0.
    assert_eq!(
        cvt(Ty::U32, Ty::F32, Some(Round::Rzi), false, false, f(1e10)).unwrap(),
        0xffff_ffff
    );
    assert_eq!(
        cvt(Ty::U64, Ty::F32, Some(Round::Rzi), false, false, f(1e30)).unwrap(),
        u64::MAX
    );
    assert_eq!(
        cvt(
            Ty::U32,
            Ty::F32,
            Some(Round::Rzi),
            false,
            false,
            f(f32::NAN)
        )
        .unwrap(),
        0
    );
    // -3 as a float is 0xc0400000 (sign, exponent 128, mantissa 0.5).
    assert_eq!(
        cvt(
            Ty::F32,
            Ty::S32,
            Some(Round::Rn),
            false,
            false,
            (-3i64) as u64
        )
        .unwrap(),
        0xc040_0000
    );
    assert_eq!(
        cvt(Ty::F64, Ty::F32, None, false, false, f(0.5)).unwrap(),
        0.5f64.to_bits()
    );
    assert!(cvt(Ty::F32, Ty::F16, None, false, false, 0).is_err());
}

#[test]
fn approximate_functions() {
    let f = |x: f32| u64::from(x.to_bits());
    assert_eq!(
        approx(ApproxFn::Rcp, Ty::F32, false, f(4.0)).unwrap(),
        f(0.25)
    );
    assert_eq!(
        approx(ApproxFn::Rsqrt, Ty::F32, false, f(16.0)).unwrap(),
        f(0.25)
    );
    assert_eq!(
        approx(ApproxFn::Ex2, Ty::F32, false, f(3.0)).unwrap(),
        f(8.0)
    );
    assert_eq!(
        approx(ApproxFn::Lg2, Ty::F32, false, f(8.0)).unwrap(),
        f(3.0)
    );
    // .ftz flushes a subnormal input to zero: rcp(+0) = +inf.
    let tiny = f(f32::from_bits(1));
    assert_eq!(
        approx(ApproxFn::Rcp, Ty::F32, true, tiny).unwrap(),
        f(f32::INFINITY)
    );
}

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
    let lane = Special::LaneId;
    let lt = Special::LaneMask(LaneMask::Lt);
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
