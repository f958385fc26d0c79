//! Float functions by base name, each at `f32` and `f64`: shared by
//! libdevice (`__nv_sinf`/`__nv_sin`) and LLVM (`llvm.sin.f32`).

use super::special as sp;
use super::PureFn;

type Unary = (&'static str, fn(f32) -> f32, fn(f64) -> f64);
type Binary = (&'static str, fn(f32, f32) -> f32, fn(f64, f64) -> f64);
type Ternary = (
    &'static str,
    fn(f32, f32, f32) -> f32,
    fn(f64, f64, f64) -> f64,
);

const UNARY: &[Unary] = &[
    ("sqrt", f32::sqrt, f64::sqrt),
    ("fabs", f32::abs, f64::abs),
    ("floor", f32::floor, f64::floor),
    ("ceil", f32::ceil, f64::ceil),
    ("trunc", f32::trunc, f64::trunc),
    ("round", f32::round, f64::round),
    ("rint", f32::round_ties_even, f64::round_ties_even),
    ("nearbyint", f32::round_ties_even, f64::round_ties_even),
    ("roundeven", f32::round_ties_even, f64::round_ties_even),
    ("exp", f32::exp, f64::exp),
    ("exp2", f32::exp2, f64::exp2),
    ("exp10", sp::single::exp10, sp::double::exp10),
    ("expm1", f32::exp_m1, f64::exp_m1),
    ("log", f32::ln, f64::ln),
    ("log2", f32::log2, f64::log2),
    ("log10", f32::log10, f64::log10),
    ("log1p", f32::ln_1p, f64::ln_1p),
    ("logb", sp::single::logb, sp::double::logb),
    ("sin", f32::sin, f64::sin),
    ("cos", f32::cos, f64::cos),
    ("tan", f32::tan, f64::tan),
    ("asin", f32::asin, f64::asin),
    ("acos", f32::acos, f64::acos),
    ("atan", f32::atan, f64::atan),
    ("sinh", f32::sinh, f64::sinh),
    ("cosh", f32::cosh, f64::cosh),
    ("tanh", f32::tanh, f64::tanh),
    ("asinh", f32::asinh, f64::asinh),
    ("acosh", f32::acosh, f64::acosh),
    ("atanh", f32::atanh, f64::atanh),
    ("sinpi", sp::single::sinpi, sp::double::sinpi),
    ("cospi", sp::single::cospi, sp::double::cospi),
    ("erf", sp::single::erf, sp::double::erf),
    ("erfc", sp::single::erfc, sp::double::erfc),
    ("erfinv", sp::single::erfinv, sp::double::erfinv),
    ("erfcinv", sp::single::erfcinv, sp::double::erfcinv),
    ("erfcx", sp::single::erfcx, sp::double::erfcx),
    ("normcdf", sp::single::normcdf, sp::double::normcdf),
    ("normcdfinv", sp::single::normcdfinv, sp::double::normcdfinv),
    ("lgamma", sp::single::lgamma, sp::double::lgamma),
    ("tgamma", sp::single::tgamma, sp::double::tgamma),
    ("cbrt", f32::cbrt, f64::cbrt),
    ("rcbrt", sp::single::rcbrt, sp::double::rcbrt),
    ("rsqrt", sp::single::rsqrt, sp::double::rsqrt),
    ("j0", sp::single::j0, sp::double::j0),
    ("j1", sp::single::j1, sp::double::j1),
    ("y0", sp::single::y0, sp::double::y0),
    ("y1", sp::single::y1, sp::double::y1),
    ("saturate", sp::single::saturate, sp::double::saturate),
    ("canonicalize", sp::single::identity, sp::double::identity),
];

const BINARY: &[Binary] = &[
    ("pow", f32::powf, f64::powf),
    ("atan2", f32::atan2, f64::atan2),
    ("fmod", sp::single::fmod, sp::double::fmod),
    ("remainder", sp::single::remainder, sp::double::remainder),
    ("fdim", sp::single::fdim, sp::double::fdim),
    ("hypot", f32::hypot, f64::hypot),
    ("rhypot", sp::single::rhypot, sp::double::rhypot),
    ("nextafter", sp::single::nextafter, sp::double::nextafter),
    ("copysign", f32::copysign, f64::copysign),
    // fmin/fmax and LLVM's minnum/maxnum return the other operand for a NaN.
    ("fmin", f32::min, f64::min),
    ("fmax", f32::max, f64::max),
    ("minnum", f32::min, f64::min),
    ("maxnum", f32::max, f64::max),
    // minimum/maximum propagate NaN and order -0 < +0.
    ("minimum", sp::single::minimum, sp::double::minimum),
    ("maximum", sp::single::maximum, sp::double::maximum),
    ("fdivide", sp::single::div, sp::double::div),
];

const TERNARY: &[Ternary] = &[
    ("fma", f32::mul_add, f64::mul_add),
    ("fmuladd", f32::mul_add, f64::mul_add),
    ("norm3d", sp::single::norm3d, sp::double::norm3d),
    ("rnorm3d", sp::single::rnorm3d, sp::double::rnorm3d),
];

pub fn lookup(base: &str, double: bool) -> Option<PureFn> {
    if let Some(&(_, f, d)) = UNARY.iter().find(|e| e.0 == base) {
        return Some(if double {
            PureFn::F64(d)
        } else {
            PureFn::F32(f)
        });
    }
    if let Some(&(_, f, d)) = BINARY.iter().find(|e| e.0 == base) {
        return Some(if double {
            PureFn::F64x2(d)
        } else {
            PureFn::F32x2(f)
        });
    }
    if let Some(&(_, f, d)) = TERNARY.iter().find(|e| e.0 == base) {
        return Some(if double {
            PureFn::F64x3(d)
        } else {
            PureFn::F32x3(f)
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scalar::{bits_f32, bits_f64, f32_of, f64_of};

    #[test]
    fn finds_both_precisions() {
        let sinf = lookup("sin", false).unwrap();
        let [r, _, _] = sinf.eval(&[bits_f32(0.5)], 0);
        assert_eq!(f32_of(r), 0.5f32.sin());
        let pow = lookup("pow", true).unwrap();
        let [r, _, _] = pow.eval(&[bits_f64(2.0), bits_f64(10.0)], 0);
        assert_eq!(f64_of(r), 1024.0);
        assert!(lookup("nosuch", false).is_none());
    }
}
