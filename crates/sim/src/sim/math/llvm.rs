//! Target-independent `llvm.*` intrinsics that are pure functions.

use super::int_fns as i;
use super::special::{double, single};
use super::{float_fn, PureFn};
use crate::ir::intrinsics::overload_base;
use crate::sim::scalar::{bits_f32, bits_f64, f32_of, f64_of, float_to_int, to_f64, FTy, Scalar};

/// `rest` is the name after `llvm.`, `ret` the result's element scalar,
/// `arg` the first operand's.
pub fn llvm(rest: &str, ret: Scalar, arg: Option<Scalar>) -> Option<PureFn> {
    let base = overload_base(rest);
    if let Some(f) = float_fn(base, ret) {
        return Some(f);
    }
    let double = matches!(ret, Scalar::F64);
    let from_double = matches!(arg, Some(Scalar::F64));
    Some(match base {
        "smax" => PureFn::Raw(i::smax),
        "smin" => PureFn::Raw(i::smin),
        "umax" => PureFn::Raw(i::umax),
        "umin" => PureFn::Raw(i::umin),
        "abs" => PureFn::Raw(i::abs),
        "ctpop" => PureFn::Raw(i::ctpop),
        "ctlz" => PureFn::Raw(i::ctlz),
        "cttz" => PureFn::Raw(i::cttz),
        "bitreverse" => PureFn::Raw(i::bitreverse),
        "bswap" => PureFn::Raw(i::bswap),
        "fshl" => PureFn::Raw(i::fshl),
        "fshr" => PureFn::Raw(i::fshr),
        "sadd.sat" => PureFn::Raw(i::sadd_sat),
        "ssub.sat" => PureFn::Raw(i::ssub_sat),
        "uadd.sat" => PureFn::Raw(i::uadd_sat),
        "usub.sat" => PureFn::Raw(i::usub_sat),
        "sadd.with.overflow" => PureFn::Raw2(i::sadd_overflow),
        "ssub.with.overflow" => PureFn::Raw2(i::ssub_overflow),
        "smul.with.overflow" => PureFn::Raw2(i::smul_overflow),
        "uadd.with.overflow" => PureFn::Raw2(i::uadd_overflow),
        "usub.with.overflow" => PureFn::Raw2(i::usub_overflow),
        "umul.with.overflow" => PureFn::Raw2(i::umul_overflow),
        "scmp" => PureFn::Raw(i::scmp),
        "ucmp" => PureFn::Raw(i::ucmp),
        "expect" | "expect.with.probability" | "threadlocal.address" | "ssa.copy" => {
            PureFn::Raw(|a, _| a[0])
        }
        "powi" if double => PureFn::Raw(|a, _| bits_f64(f64_of(a[0]).powi(a[1] as i32))),
        "powi" => PureFn::Raw(|a, _| bits_f32(f32_of(a[0]).powi(a[1] as i32))),
        "ldexp" if double => PureFn::Raw(|a, _| bits_f64(double::ldexp(f64_of(a[0]), a[1] as i32))),
        "ldexp" => PureFn::Raw(|a, _| bits_f32(single::ldexp(f32_of(a[0]), a[1] as i32))),
        "frexp" if double => PureFn::Raw2(|a, _| {
            let (m, e) = double::frexp(f64_of(a[0]));
            (bits_f64(m), u64::from(e as u32))
        }),
        "frexp" => PureFn::Raw2(|a, _| {
            let (m, e) = single::frexp(f32_of(a[0]));
            (bits_f32(m), u64::from(e as u32))
        }),
        // Float to integer in the result's width.
        "lround" | "llround" if from_double => {
            PureFn::Raw(|a, bits| float_to_int(f64_of(a[0]).round(), bits, true))
        }
        "lround" | "llround" => {
            PureFn::Raw(|a, bits| float_to_int(f64::from(f32_of(a[0]).round()), bits, true))
        }
        "lrint" | "llrint" if from_double => {
            PureFn::Raw(|a, bits| float_to_int(f64_of(a[0]).round_ties_even(), bits, true))
        }
        "lrint" | "llrint" => PureFn::Raw(|a, bits| {
            float_to_int(f64::from(f32_of(a[0]).round_ties_even()), bits, true)
        }),
        "fptosi.sat" if from_double => {
            PureFn::Raw(|a, bits| float_to_int(f64_of(a[0]), bits, true))
        }
        "fptosi.sat" => PureFn::Raw(|a, bits| float_to_int(to_f64(FTy::F32, a[0]), bits, true)),
        "fptoui.sat" if from_double => {
            PureFn::Raw(|a, bits| float_to_int(f64_of(a[0]), bits, false))
        }
        "fptoui.sat" => PureFn::Raw(|a, bits| float_to_int(to_f64(FTy::F32, a[0]), bits, false)),
        "is.fpclass" if from_double => {
            PureFn::Raw(|a, _| fpclass(f64_of(a[0]), a[1], f64::MIN_POSITIVE))
        }
        "is.fpclass" => {
            PureFn::Raw(|a, _| fpclass(f64::from(f32_of(a[0])), a[1], f64::from(f32::MIN_POSITIVE)))
        }
        _ => return None,
    })
}

/// `llvm.is.fpclass`: bit k of `test` asks for class k (0 signalling NaN,
/// 1 quiet NaN, 2 -inf, 3 -normal, 4 -subnormal, 5 -0, 6 +0, 7 +subnormal,
/// 8 +normal, 9 +inf). `smallest_normal` is that of the operand's type
/// (an `f32` arrives widened to `f64`).
fn fpclass(x: f64, test: u64, smallest_normal: f64) -> u64 {
    let class = if x.is_nan() {
        1
    } else {
        let negative_class = if x.is_infinite() {
            2
        } else if x == 0.0 {
            5
        } else if x.abs() < smallest_normal {
            4
        } else {
            3
        };
        if x.is_sign_negative() {
            negative_class
        } else {
            // The positive classes mirror the negative ones around 5.5.
            11 - negative_class
        }
    };
    u64::from(test >> class & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates() {
        let f = llvm("smax.i32", Scalar::Int(32), Some(Scalar::Int(32))).unwrap();
        assert_eq!(f.eval(&[0xffff_ffff, 2], 32)[0], 2);
        let f = llvm("sqrt.f32", Scalar::F32, Some(Scalar::F32)).unwrap();
        assert_eq!(f32_of(f.eval(&[bits_f32(9.0)], 0)[0]), 3.0);
        let f = llvm("is.fpclass.f32", Scalar::Int(1), Some(Scalar::F32)).unwrap();
        // 0x3 = any NaN; 0x204 = any infinity.
        assert_eq!(f.eval(&[bits_f32(f32::NAN), 0x3], 0)[0], 1);
        assert_eq!(f.eval(&[bits_f32(1.0), 0x3], 0)[0], 0);
        assert_eq!(f.eval(&[bits_f32(-f32::INFINITY), 0x204], 0)[0], 1);
        assert_eq!(f.eval(&[bits_f32(1.0), 1 << 8], 0)[0], 1);
        assert!(llvm("nosuch.i32", Scalar::Int(32), None).is_none());
    }
}
