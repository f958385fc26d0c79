//! `llvm.nvvm.*` arithmetic: approximate and rounded float operations,
//! integer helpers, conversions and address-space queries.
//!
//! Flush-to-zero variants (`.ftz`) are computed like the plain ones; the
//! mode suffixes `rn rz rm rp` round to nearest, toward zero, down and up.

use super::int_fns as i;
use super::rounding::{self, Mode};
use super::special::{double, single};
use super::PureFn;
use crate::sim::addr;
use crate::sim::scalar::{bits_f32, bits_f64, f32_of, f64_of, float_to_int, mask, sext};

/// `rest` is the name after `llvm.nvvm.`.
pub fn nvvm(rest: &str) -> Option<PureFn> {
    let plain = rest.replace(".ftz", "");
    let name = plain.as_str();
    if let Some(f) = float_op(name) {
        return Some(f);
    }
    if let Some(f) = conversion(name) {
        return Some(f);
    }
    Some(match name {
        "prmt" => PureFn::Raw(i::byte_perm),
        "fns" => PureFn::Raw(i::find_nth_set),
        "brev32" => PureFn::Raw(|a, _| i::bitreverse(a, 32)),
        "brev64" => PureFn::Raw(|a, _| i::bitreverse(a, 64)),
        "clz.i" => PureFn::Raw(|a, _| i::ctlz(a, 32)),
        "clz.ll" => PureFn::Raw(|a, _| i::ctlz(a, 64)),
        "popc.i" => PureFn::Raw(|a, _| i::ctpop(a, 32)),
        "popc.ll" => PureFn::Raw(|a, _| i::ctpop(a, 64)),
        "abs.i" => PureFn::Raw(|a, _| i::abs(a, 32)),
        "abs.ll" => PureFn::Raw(|a, _| i::abs(a, 64)),
        "min.i" => PureFn::Raw(|a, _| i::smin(a, 32)),
        "min.ll" => PureFn::Raw(|a, _| i::smin(a, 64)),
        "min.ui" | "min.ull" => PureFn::Raw(i::umin),
        "max.i" => PureFn::Raw(|a, _| i::smax(a, 32)),
        "max.ll" => PureFn::Raw(|a, _| i::smax(a, 64)),
        "max.ui" | "max.ull" => PureFn::Raw(i::umax),
        "mulhi.i" => PureFn::Raw(|a, _| i::mulhi_signed(a, 32)),
        "mulhi.ui" => PureFn::Raw(|a, _| i::mulhi_unsigned(a, 32)),
        "mulhi.ll" => PureFn::Raw(|a, _| i::mulhi_signed(a, 64)),
        "mulhi.ull" => PureFn::Raw(|a, _| i::mulhi_unsigned(a, 64)),
        "mul24.i" => PureFn::Raw(i::mul24_signed),
        "mul24.ui" => PureFn::Raw(i::mul24_unsigned),
        "sad.i" => PureFn::Raw(i::sad_signed),
        "sad.ui" => PureFn::Raw(i::sad_unsigned),
        "isspacep.global" => PureFn::Raw(|a, _| u64::from(addr::tag(a[0]) == addr::GLOBAL)),
        "isspacep.shared" => PureFn::Raw(|a, _| u64::from(addr::tag(a[0]) == addr::SHARED)),
        "isspacep.const" => PureFn::Raw(|a, _| u64::from(addr::tag(a[0]) == addr::CONSTANT)),
        "isspacep.local" => PureFn::Raw(|a, _| u64::from(addr::tag(a[0]) == addr::LOCAL)),
        _ => return None,
    })
}

fn mode(suffix: &str) -> Option<Mode> {
    Some(match suffix {
        "rn" => Mode::Nearest,
        "rz" => Mode::Zero,
        "rm" => Mode::Down,
        "rp" => Mode::Up,
        _ => return None,
    })
}

/// Instantiates a const-generic rounding function for a runtime mode.
macro_rules! by_mode {
    ($f:ident, $m:expr) => {
        match $m {
            Mode::Nearest => PureFn::Raw($f::<0>),
            Mode::Zero => PureFn::Raw($f::<1>),
            Mode::Up => PureFn::Raw($f::<2>),
            Mode::Down => PureFn::Raw($f::<3>),
        }
    };
}
pub(super) use by_mode;

fn add_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::single::add(
        f32_of(a[0]),
        f32_of(a[1]),
        Mode::from_index(M),
    ))
}
fn add_d<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f64(rounding::double::add(
        f64_of(a[0]),
        f64_of(a[1]),
        Mode::from_index(M),
    ))
}
fn mul_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::single::mul(
        f32_of(a[0]),
        f32_of(a[1]),
        Mode::from_index(M),
    ))
}
fn mul_d<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f64(rounding::double::mul(
        f64_of(a[0]),
        f64_of(a[1]),
        Mode::from_index(M),
    ))
}
fn div_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::single::div(
        f32_of(a[0]),
        f32_of(a[1]),
        Mode::from_index(M),
    ))
}
fn div_d<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f64(rounding::double::div(
        f64_of(a[0]),
        f64_of(a[1]),
        Mode::from_index(M),
    ))
}
fn rcp_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::single::div(
        1.0,
        f32_of(a[0]),
        Mode::from_index(M),
    ))
}
fn rcp_d<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f64(rounding::double::div(
        1.0,
        f64_of(a[0]),
        Mode::from_index(M),
    ))
}
fn sqrt_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::single::sqrt(f32_of(a[0]), Mode::from_index(M)))
}
fn sqrt_d<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f64(rounding::double::sqrt(f64_of(a[0]), Mode::from_index(M)))
}
fn fma_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    let (x, y, z) = (f32_of(a[0]), f32_of(a[1]), f32_of(a[2]));
    bits_f32(rounding::fma_f32(x, y, z, Mode::from_index(M)))
}
/// `f64` FMA with a directed mode is rounded to nearest (no wider type to
/// find the error sign in).
fn fma_d(a: &[u64], _: u32) -> u64 {
    bits_f64(f64_of(a[0]).mul_add(f64_of(a[1]), f64_of(a[2])))
}

/// `add.rn.f`, `div.approx.f`, `sqrt.rz.d`, `ex2.approx.f`, `fmin.nan.f`...
fn float_op(name: &str) -> Option<PureFn> {
    let parts: Vec<&str> = name.split('.').collect();
    let (op, ty) = (parts[0], *parts.last()?);
    let double = match ty {
        "f" => false,
        "d" => true,
        _ => return None,
    };
    let middle = &parts[1..parts.len() - 1];
    let rounding = middle.iter().find_map(|s| mode(s));
    let r = rounding.unwrap_or(Mode::Nearest);
    Some(match (op, double) {
        ("add", false) => by_mode!(add_f, r),
        ("add", true) => by_mode!(add_d, r),
        ("mul", false) => by_mode!(mul_f, r),
        ("mul", true) => by_mode!(mul_d, r),
        ("div", false) => by_mode!(div_f, r),
        ("div", true) => by_mode!(div_d, r),
        ("rcp", false) => by_mode!(rcp_f, r),
        ("rcp", true) => by_mode!(rcp_d, r),
        ("sqrt", false) => by_mode!(sqrt_f, r),
        ("sqrt", true) => by_mode!(sqrt_d, r),
        ("fma", false) => by_mode!(fma_f, r),
        ("fma", true) => PureFn::Raw(fma_d),
        ("rsqrt", false) => PureFn::F32(single::rsqrt),
        ("rsqrt", true) => PureFn::F64(double::rsqrt),
        ("ex2", false) => PureFn::F32(f32::exp2),
        ("ex2", true) => PureFn::F64(f64::exp2),
        ("lg2", false) => PureFn::F32(f32::log2),
        ("lg2", true) => PureFn::F64(f64::log2),
        ("sin", false) => PureFn::F32(f32::sin),
        ("cos", false) => PureFn::F32(f32::cos),
        ("fabs", false) => PureFn::F32(f32::abs),
        ("fabs", true) => PureFn::F64(f64::abs),
        ("saturate", false) => PureFn::F32(single::saturate),
        ("saturate", true) => PureFn::F64(double::saturate),
        ("floor", false) => PureFn::F32(f32::floor),
        ("floor", true) => PureFn::F64(f64::floor),
        ("ceil", false) => PureFn::F32(f32::ceil),
        ("ceil", true) => PureFn::F64(f64::ceil),
        ("trunc", false) => PureFn::F32(f32::trunc),
        ("trunc", true) => PureFn::F64(f64::trunc),
        ("round", false) => PureFn::F32(f32::round),
        ("round", true) => PureFn::F64(f64::round),
        // `.nan` variants propagate NaN like IEEE minimum/maximum.
        ("fmin", false) if middle.contains(&"nan") => PureFn::F32x2(single::minimum),
        ("fmax", false) if middle.contains(&"nan") => PureFn::F32x2(single::maximum),
        ("fmin", false) if middle.is_empty() => PureFn::F32x2(f32::min),
        ("fmax", false) if middle.is_empty() => PureFn::F32x2(f32::max),
        ("fmin", true) if middle.is_empty() => PureFn::F64x2(f64::min),
        ("fmax", true) if middle.is_empty() => PureFn::F64x2(f64::max),
        _ => return None,
    })
}

pub(super) fn f2int<const M: u8, const BITS: u32, const SIGNED: bool>(a: &[u64], _: u32) -> u64 {
    float_to_int(
        Mode::from_index(M).integral(f64::from(f32_of(a[0]))),
        BITS,
        SIGNED,
    )
}
pub(super) fn d2int<const M: u8, const BITS: u32, const SIGNED: bool>(a: &[u64], _: u32) -> u64 {
    float_to_int(Mode::from_index(M).integral(f64_of(a[0])), BITS, SIGNED)
}
pub(super) fn int2f<const M: u8, const BITS: u32, const SIGNED: bool>(a: &[u64], _: u32) -> u64 {
    let v = if SIGNED {
        i128::from(sext(a[0], BITS))
    } else {
        i128::from(a[0] & mask(BITS))
    };
    bits_f32(rounding::single::from_int(v, Mode::from_index(M)))
}
pub(super) fn int2d<const M: u8, const BITS: u32, const SIGNED: bool>(a: &[u64], _: u32) -> u64 {
    let v = if SIGNED {
        i128::from(sext(a[0], BITS))
    } else {
        i128::from(a[0] & mask(BITS))
    };
    bits_f64(rounding::double::from_int(v, Mode::from_index(M)))
}
pub(super) fn d2f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::narrow(f64_of(a[0]), Mode::from_index(M)))
}

/// Picks the const-generic instance for a mode, width and signedness.
macro_rules! convert {
    ($f:ident, $m:expr, $bits:literal, $signed:literal) => {
        match $m {
            Mode::Nearest => PureFn::Raw($f::<0, $bits, $signed>),
            Mode::Zero => PureFn::Raw($f::<1, $bits, $signed>),
            Mode::Up => PureFn::Raw($f::<2, $bits, $signed>),
            Mode::Down => PureFn::Raw($f::<3, $bits, $signed>),
        }
    };
}
pub(super) use convert;

/// `f2i.rz`, `ull2d.rn`, `d2f.rm`, `bitcast.f2i`, `lohi.i2d`, ...
fn conversion(name: &str) -> Option<PureFn> {
    if let Some(f) = match name {
        "bitcast.f2i" | "bitcast.i2f" => Some(PureFn::Raw(|a, _| a[0] & mask(32))),
        "bitcast.d2ll" | "bitcast.ll2d" => Some(PureFn::Raw(|a, _| a[0])),
        "lohi.i2d" => Some(PureFn::Raw(|a, _| (a[1] << 32) | (a[0] & mask(32)))),
        "d2i.lo" => Some(PureFn::Raw(|a, _| a[0] & mask(32))),
        "d2i.hi" => Some(PureFn::Raw(|a, _| a[0] >> 32)),
        _ => None,
    } {
        return Some(f);
    }
    let (what, suffix) = name.split_once('.')?;
    let m = mode(suffix)?;
    Some(match what {
        "f2i" => convert!(f2int, m, 32, true),
        "f2ui" => convert!(f2int, m, 32, false),
        "f2ll" => convert!(f2int, m, 64, true),
        "f2ull" => convert!(f2int, m, 64, false),
        "d2i" => convert!(d2int, m, 32, true),
        "d2ui" => convert!(d2int, m, 32, false),
        "d2ll" => convert!(d2int, m, 64, true),
        "d2ull" => convert!(d2int, m, 64, false),
        "i2f" => convert!(int2f, m, 32, true),
        "ui2f" => convert!(int2f, m, 32, false),
        "ll2f" => convert!(int2f, m, 64, true),
        "ull2f" => convert!(int2f, m, 64, false),
        "i2d" => convert!(int2d, m, 32, true),
        "ui2d" => convert!(int2d, m, 32, false),
        "ll2d" => convert!(int2d, m, 64, true),
        "ull2d" => convert!(int2d, m, 64, false),
        "d2f" => by_mode!(d2f, m),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_ops_and_conversions() {
        let div = nvvm("div.rn.f").unwrap();
        assert_eq!(
            f32_of(div.eval(&[bits_f32(1.0), bits_f32(4.0)], 0)[0]),
            0.25
        );
        let f2i = nvvm("f2i.rm").unwrap();
        assert_eq!(f2i.eval(&[bits_f32(-1.5)], 0)[0], (-2i64 as u64) & mask(32));
        let f2i = nvvm("f2i.rn.ftz").unwrap();
        assert_eq!(f2i.eval(&[bits_f32(2.5)], 0)[0], 2);
        let ex2 = nvvm("ex2.approx.ftz.f").unwrap();
        assert_eq!(f32_of(ex2.eval(&[bits_f32(3.0)], 0)[0]), 8.0);
        let sp = nvvm("isspacep.shared").unwrap();
        assert_eq!(sp.eval(&[addr::encode(addr::SHARED, 0, 4)], 0)[0], 1);
        assert_eq!(sp.eval(&[addr::encode(addr::GLOBAL, 1, 4)], 0)[0], 0);
        assert!(nvvm("no.such").is_none());
    }
}
