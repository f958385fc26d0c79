//! Scalars and the operations on them: the kinds of scalar ([`Scalar`],
//! [`FTy`]), the operations decoded code names ([`IntOp`], [`FloatOp`],
//! [`Cast`]), and the meaning of each on register words. The interpreter
//! applies these lane by lane and the constant folder once, so there is a
//! single definition of every operation. The decoded form (`code.rs`) and
//! the math library both build on this file, which needs neither.
//!
//! Integers arrive zero-extended to their width and leave that way. No
//! function here panics, whatever the operands: inactive lanes are computed
//! too (their results are discarded) and may hold anything. Where LLVM says
//! poison (division by zero, over-wide shifts) we return 0; float-to-integer
//! conversions saturate like PTX `cvt.rzi`.

use super::fp16;
use crate::ir::{FloatPred, IntPred};

/// A scalar as registers and memory know it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Scalar {
    /// An integer (or pointer, as `Int(64)`) of that many bits.
    Int(u8),
    F16,
    BF16,
    F32,
    F64,
}

impl Scalar {
    /// Bytes in memory.
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::Int(bits) => u32::from(bits).div_ceil(8),
            Scalar::F16 | Scalar::BF16 => 2,
            Scalar::F32 => 4,
            Scalar::F64 => 8,
        }
    }

    pub fn float(self) -> Option<FTy> {
        match self {
            Scalar::F16 => Some(FTy::F16),
            Scalar::BF16 => Some(FTy::BF16),
            Scalar::F32 => Some(FTy::F32),
            Scalar::F64 => Some(FTy::F64),
            Scalar::Int(_) => None,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FTy {
    F16,
    BF16,
    F32,
    F64,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    UDiv,
    SDiv,
    URem,
    SRem,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// A conversion between scalars.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Cast {
    /// `trunc`, `zext`, `ptrtoint`: keep the low bits of the zero-extended value.
    ZeroExt {
        to: u8,
    },
    SignExt {
        from: u8,
        to: u8,
    },
    FloatToInt {
        from: FTy,
        to: u8,
        signed: bool,
    },
    IntToFloat {
        from: u8,
        to: FTy,
        signed: bool,
    },
    FloatToFloat {
        from: FTy,
        to: FTy,
    },
    /// `inttoptr` into a specific space: an untagged integer (a 32-bit
    /// shared or local offset) gets that space's tag.
    IntToPtr {
        from: u8,
        tag: u8,
    },
}

#[inline]
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Sign-extends the low `bits` (1..=64) of `v`.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    let s = 64 - bits.clamp(1, 64);
    ((v << s) as i64) >> s
}

#[inline]
pub fn int_op(op: IntOp, bits: u32, a: u64, b: u64) -> u64 {
    let r = match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::Mul => a.wrapping_mul(b),
        IntOp::UDiv => a.checked_div(b).unwrap_or(0),
        IntOp::URem => a.checked_rem(b).unwrap_or(0),
        IntOp::SDiv => sext(a, bits)
            .checked_div(sext(b, bits))
            .map_or(0, |q| q as u64),
        IntOp::SRem => sext(a, bits)
            .checked_rem(sext(b, bits))
            .map_or(0, |q| q as u64),
        IntOp::Shl if b < u64::from(bits) => a << b,
        IntOp::LShr if b < u64::from(bits) => a >> b,
        IntOp::AShr if b < u64::from(bits) => (sext(a, bits) >> b) as u64,
        IntOp::Shl | IntOp::LShr | IntOp::AShr => 0,
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
    };
    r & mask(bits)
}

#[inline(always)]
pub fn icmp(pred: IntPred, bits: u32, a: u64, b: u64) -> bool {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    match pred {
        IntPred::Eq => a == b,
        IntPred::Ne => a != b,
        IntPred::Ugt => a > b,
        IntPred::Uge => a >= b,
        IntPred::Ult => a < b,
        IntPred::Ule => a <= b,
        IntPred::Sgt => sa > sb,
        IntPred::Sge => sa >= sb,
        IntPred::Slt => sa < sb,
        IntPred::Sle => sa <= sb,
    }
}

/// [`icmp`] as a register word (0 or 1).
#[inline(always)]
pub fn icmp_word(pred: IntPred, bits: u32, a: u64, b: u64) -> u64 {
    u64::from(icmp(pred, bits, a, b))
}

#[inline]
pub fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline]
pub fn f64_of(v: u64) -> f64 {
    f64::from_bits(v)
}

#[inline]
pub fn bits_f32(x: f32) -> u64 {
    u64::from(x.to_bits())
}

#[inline]
pub fn bits_f64(x: f64) -> u64 {
    x.to_bits()
}

/// A float register word widened to `f32` (half and bfloat) or read as is.
fn narrow_to_f32(ty: FTy, v: u64) -> f32 {
    match ty {
        FTy::F16 => fp16::f16_to_f32(v as u16),
        FTy::BF16 => fp16::bf16_to_f32(v as u16),
        FTy::F32 | FTy::F64 => f32_of(v),
    }
}

fn f32_to_narrow(ty: FTy, x: f32) -> u64 {
    match ty {
        FTy::F16 => u64::from(fp16::f32_to_f16(x)),
        FTy::BF16 => u64::from(fp16::f32_to_bf16(x)),
        FTy::F32 | FTy::F64 => bits_f32(x),
    }
}

/// The value of a float register word.
#[inline]
pub fn to_f64(ty: FTy, v: u64) -> f64 {
    match ty {
        FTy::F64 => f64_of(v),
        _ => f64::from(narrow_to_f32(ty, v)),
    }
}

/// Rounds to `ty` and returns the register word.
#[inline]
pub fn from_f64(ty: FTy, x: f64) -> u64 {
    match ty {
        FTy::F64 => bits_f64(x),
        _ => f32_to_narrow(ty, x as f32),
    }
}

fn float_apply<F32: Fn(f32, f32) -> f32, F64: Fn(f64, f64) -> f64>(
    ty: FTy,
    a: u64,
    b: u64,
    f: F32,
    d: F64,
) -> u64 {
    match ty {
        FTy::F64 => bits_f64(d(f64_of(a), f64_of(b))),
        _ => f32_to_narrow(ty, f(narrow_to_f32(ty, a), narrow_to_f32(ty, b))),
    }
}

#[inline]
pub fn float_op(op: FloatOp, ty: FTy, a: u64, b: u64) -> u64 {
    match op {
        FloatOp::Add => float_apply(ty, a, b, |x, y| x + y, |x, y| x + y),
        FloatOp::Sub => float_apply(ty, a, b, |x, y| x - y, |x, y| x - y),
        FloatOp::Mul => float_apply(ty, a, b, |x, y| x * y, |x, y| x * y),
        FloatOp::Div => float_apply(ty, a, b, |x, y| x / y, |x, y| x / y),
        FloatOp::Rem => float_apply(ty, a, b, |x, y| x % y, |x, y| x % y),
    }
}

#[inline]
pub fn fneg(ty: FTy, a: u64) -> u64 {
    let sign = match ty {
        FTy::F16 | FTy::BF16 => 1 << 15,
        FTy::F32 => 1 << 31,
        FTy::F64 => 1 << 63,
    };
    a ^ sign
}

#[inline]
pub fn fcmp(pred: FloatPred, ty: FTy, a: u64, b: u64) -> bool {
    let (x, y) = (to_f64(ty, a), to_f64(ty, b));
    let unordered = x.is_nan() || y.is_nan();
    match pred {
        FloatPred::False => false,
        FloatPred::True => true,
        FloatPred::Ord => !unordered,
        FloatPred::Uno => unordered,
        FloatPred::Oeq => x == y,
        FloatPred::Ogt => x > y,
        FloatPred::Oge => x >= y,
        FloatPred::Olt => x < y,
        FloatPred::Ole => x <= y,
        FloatPred::One => !unordered && x != y,
        FloatPred::Ueq => unordered || x == y,
        FloatPred::Ugt => unordered || x > y,
        FloatPred::Uge => unordered || x >= y,
        FloatPred::Ult => unordered || x < y,
        FloatPred::Ule => unordered || x <= y,
        FloatPred::Une => unordered || x != y,
    }
}

/// Float to integer, truncating toward zero and saturating at the bounds of
/// the `bits`-wide type; NaN gives 0.
pub fn float_to_int(x: f64, bits: u32, signed: bool) -> u64 {
    if x.is_nan() {
        return 0;
    }
    let t = x.trunc();
    let r = if signed {
        let lo = -(2f64.powi(bits as i32 - 1));
        let hi = -lo - 1.0;
        (t.clamp(lo, hi) as i64) as u64
    } else {
        let hi = 2f64.powi(bits as i32) - 1.0;
        t.clamp(0.0, hi) as u64
    };
    r & mask(bits)
}

/// Integer to float, rounding once (an `i64` goes straight to `f32`, not
/// through `f64`).
pub fn int_to_float(v: u64, bits: u32, signed: bool, to: FTy) -> u64 {
    let v = v & mask(bits);
    match (to, signed) {
        (FTy::F64, true) => bits_f64(sext(v, bits) as f64),
        (FTy::F64, false) => bits_f64(v as f64),
        (_, true) => f32_to_narrow(to, sext(v, bits) as f32),
        (_, false) => f32_to_narrow(to, v as f32),
    }
}

pub fn float_to_float(from: FTy, to: FTy, v: u64) -> u64 {
    match (from, to) {
        (FTy::F64, FTy::F64) => v,
        (FTy::F64, _) => from_f64(to, f64_of(v)),
        (_, FTy::F64) => bits_f64(f64::from(narrow_to_f32(from, v))),
        _ => f32_to_narrow(to, narrow_to_f32(from, v)),
    }
}

#[inline]
pub fn cast(c: Cast, v: u64) -> u64 {
    match c {
        Cast::ZeroExt { to } => v & mask(u32::from(to)),
        Cast::SignExt { from, to } => sext(v, u32::from(from)) as u64 & mask(u32::from(to)),
        Cast::FloatToInt { from, to, signed } => {
            float_to_int(to_f64(from, v), u32::from(to), signed)
        }
        Cast::IntToFloat { from, to, signed } => int_to_float(v, u32::from(from), signed, to),
        Cast::FloatToFloat { from, to } => float_to_float(from, to, v),
        Cast::IntToPtr { from, tag } => {
            let v = v & mask(u32::from(from));
            if tag != 0 && super::addr::tag(v) == 0 {
                super::addr::encode(tag, 0, v)
            } else {
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_respect_signedness() {
        // i8: 200 + 100 = 300 wraps to 44.
        assert_eq!(int_op(IntOp::Add, 8, 200, 100), 44);
        // i32: -7 / 2 = -3 (toward zero), -7 % 2 = -1.
        let m7 = (-7i64 as u64) & mask(32);
        assert_eq!(sext(int_op(IntOp::SDiv, 32, m7, 2), 32), -3);
        assert_eq!(sext(int_op(IntOp::SRem, 32, m7, 2), 32), -1);
        assert_eq!(int_op(IntOp::UDiv, 32, m7, 2), 0x7fff_fffc);
        assert_eq!(int_op(IntOp::AShr, 32, m7, 1), (-4i64 as u64) & mask(32));
        assert_eq!(int_op(IntOp::LShr, 32, m7, 28), 0xf);
        assert_eq!(int_op(IntOp::UDiv, 32, 5, 0), 0);
        assert_eq!(int_op(IntOp::Shl, 32, 1, 40), 0);
        assert!(icmp(IntPred::Slt, 32, m7, 0));
        assert!(!icmp(IntPred::Ult, 32, m7, 0));
        assert_eq!(int_op(IntOp::Sub, 1, 0, 1), 1);
    }

    #[test]
    fn floats_and_conversions() {
        let a = bits_f32(1.5);
        let b = bits_f32(2.25);
        assert_eq!(f32_of(float_op(FloatOp::Mul, FTy::F32, a, b)), 3.375);
        assert!(fcmp(FloatPred::Uno, FTy::F32, bits_f32(f32::NAN), a));
        assert!(!fcmp(FloatPred::Oeq, FTy::F32, bits_f32(f32::NAN), a));
        assert_eq!(float_to_int(-3.7, 32, true), (-3i64 as u64) & mask(32));
        assert_eq!(float_to_int(1e20, 32, true), 0x7fff_ffff);
        assert_eq!(float_to_int(-1.0, 32, false), 0);
        // i64 2^60 + 1 rounds once to f32 2^60.
        let big = (1u64 << 60) + 1;
        assert_eq!(
            f32_of(int_to_float(big, 64, false, FTy::F32)),
            2f32.powi(60)
        );
        let h = float_to_float(FTy::F32, FTy::F16, bits_f32(0.5));
        assert_eq!(h, 0x3800);
        assert_eq!(f64_of(float_to_float(FTy::F16, FTy::F64, h)), 0.5);
        assert_eq!(fneg(FTy::F32, a), bits_f32(-1.5));
    }
}
