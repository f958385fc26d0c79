//! The register-to-register forms, value by value.

use super::exec;
use crate::ptx::eval::*;
use crate::ptx::inst::*;

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
