//! libdevice (`__nv_*`): the math library CUDA kernels call. Only the
//! declarations are in the IR; these are the definitions.

use super::int_fns as i;
use super::nvvm::{by_mode, convert, d2f, d2int, f2int, int2d, int2f};
use super::rounding::{self, Mode};
use super::special::{double, single};
use super::{float_fns, PureFn};
use crate::sim::scalar::{bits_f32, bits_f64, f32_of, f64_of, float_to_int, mask, Scalar};

/// `rest` is the name after `__nv_`.
pub fn libdevice(rest: &str) -> Option<PureFn> {
    // `__nv_sin` is the double, `__nv_sinf` the float.
    if let Some(f) = float_fns::lookup(rest, true) {
        return Some(f);
    }
    if let Some(base) = rest.strip_suffix('f') {
        if let Some(f) = float_fns::lookup(base, false) {
            return Some(f);
        }
    }
    if let Some(f) = fast(rest)
        .or_else(|| rounded(rest))
        .or_else(|| converted(rest))
    {
        return Some(f);
    }
    Some(match rest {
        "powif" => PureFn::Raw(|a, _| bits_f32(f32_of(a[0]).powi(a[1] as i32))),
        "powi" => PureFn::Raw(|a, _| bits_f64(f64_of(a[0]).powi(a[1] as i32))),
        "ldexpf" | "scalbnf" => {
            PureFn::Raw(|a, _| bits_f32(single::ldexp(f32_of(a[0]), a[1] as i32)))
        }
        "ldexp" | "scalbn" => {
            PureFn::Raw(|a, _| bits_f64(double::ldexp(f64_of(a[0]), a[1] as i32)))
        }
        "ilogbf" => PureFn::Raw(|a, _| ilogb(f64::from(f32_of(a[0])))),
        "ilogb" => PureFn::Raw(|a, _| ilogb(f64_of(a[0]))),
        "jnf" => PureFn::Raw(|a, _| bits_f32(single::jn(a[0] as i32, f32_of(a[1])))),
        "jn" => PureFn::Raw(|a, _| bits_f64(double::jn(a[0] as i32, f64_of(a[1])))),
        "ynf" => PureFn::Raw(|a, _| bits_f32(single::yn(a[0] as i32, f32_of(a[1])))),
        "yn" => PureFn::Raw(|a, _| bits_f64(double::yn(a[0] as i32, f64_of(a[1])))),
        "llrintf" => PureFn::Raw(|a, _| to_i64(f64::from(f32_of(a[0])).round_ties_even())),
        "llrint" => PureFn::Raw(|a, _| to_i64(f64_of(a[0]).round_ties_even())),
        "llroundf" => PureFn::Raw(|a, _| to_i64(f64::from(f32_of(a[0])).round())),
        "llround" => PureFn::Raw(|a, _| to_i64(f64_of(a[0]).round())),
        "norm4df" => PureFn::Raw(|a, _| {
            let v: Vec<f32> = a[..4].iter().map(|&w| f32_of(w)).collect();
            bits_f32(single::norm4d(v[0], v[1], v[2], v[3]))
        }),
        "norm4d" => PureFn::Raw(|a, _| {
            bits_f64(double::norm4d(
                f64_of(a[0]),
                f64_of(a[1]),
                f64_of(a[2]),
                f64_of(a[3]),
            ))
        }),
        "nanf" => PureFn::Raw(|_, _| bits_f32(f32::NAN)),
        "nan" => PureFn::Raw(|_, _| bits_f64(f64::NAN)),
        "isnanf" => PureFn::Raw(|a, _| u64::from(f32_of(a[0]).is_nan())),
        "isnand" => PureFn::Raw(|a, _| u64::from(f64_of(a[0]).is_nan())),
        "isinff" => PureFn::Raw(|a, _| u64::from(f32_of(a[0]).is_infinite())),
        "isinfd" => PureFn::Raw(|a, _| u64::from(f64_of(a[0]).is_infinite())),
        "finitef" => PureFn::Raw(|a, _| u64::from(f32_of(a[0]).is_finite())),
        "isfinited" => PureFn::Raw(|a, _| u64::from(f64_of(a[0]).is_finite())),
        "signbitf" => PureFn::Raw(|a, _| u64::from(f32_of(a[0]).is_sign_negative())),
        "signbitd" => PureFn::Raw(|a, _| u64::from(f64_of(a[0]).is_sign_negative())),
        "float_as_int" | "float_as_uint" | "int_as_float" | "uint_as_float" => {
            PureFn::Raw(|a, _| a[0] & mask(32))
        }
        "double_as_longlong" | "longlong_as_double" => PureFn::Raw(|a, _| a[0]),
        "double2hiint" => PureFn::Raw(|a, _| a[0] >> 32),
        "double2loint" => PureFn::Raw(|a, _| a[0] & mask(32)),
        "hiloint2double" => PureFn::Raw(|a, _| (a[0] << 32) | (a[1] & mask(32))),
        "popc" => PureFn::Raw(|a, _| i::ctpop(a, 32)),
        "popcll" => PureFn::Raw(|a, _| i::ctpop(a, 64)),
        "clz" => PureFn::Raw(|a, _| i::ctlz(a, 32)),
        "clzll" => PureFn::Raw(|a, _| i::ctlz(a, 64)),
        "ffs" => PureFn::Raw(|a, _| i::ffs(a, 32)),
        "ffsll" => PureFn::Raw(|a, _| i::ffs(a, 64)),
        "brev" => PureFn::Raw(|a, _| i::bitreverse(a, 32)),
        "brevll" => PureFn::Raw(|a, _| i::bitreverse(a, 64)),
        "mulhi" => PureFn::Raw(|a, _| i::mulhi_signed(a, 32)),
        "umulhi" => PureFn::Raw(|a, _| i::mulhi_unsigned(a, 32)),
        "mul64hi" => PureFn::Raw(|a, _| i::mulhi_signed(a, 64)),
        "umul64hi" => PureFn::Raw(|a, _| i::mulhi_unsigned(a, 64)),
        "mul24" => PureFn::Raw(i::mul24_signed),
        "umul24" => PureFn::Raw(i::mul24_unsigned),
        "sad" => PureFn::Raw(i::sad_signed),
        "usad" => PureFn::Raw(i::sad_unsigned),
        "byte_perm" => PureFn::Raw(i::byte_perm),
        "abs" => PureFn::Raw(|a, _| i::abs(a, 32)),
        "llabs" => PureFn::Raw(|a, _| i::abs(a, 64)),
        "min" => PureFn::Raw(|a, _| i::smin(a, 32)),
        "max" => PureFn::Raw(|a, _| i::smax(a, 32)),
        "llmin" => PureFn::Raw(|a, _| i::smin(a, 64)),
        "llmax" => PureFn::Raw(|a, _| i::smax(a, 64)),
        "umin" | "ullmin" => PureFn::Raw(i::umin),
        "umax" | "ullmax" => PureFn::Raw(i::umax),
        _ => return None,
    })
}

fn to_i64(x: f64) -> u64 {
    float_to_int(x, 64, true)
}

/// `ilogb`: the unbiased exponent as an int; FP_ILOGB0 / FP_ILOGBNAN are
/// `INT_MIN`, infinity gives `INT_MAX`.
fn ilogb(x: f64) -> u64 {
    let r: i32 = if x == 0.0 || x.is_nan() {
        i32::MIN
    } else if x.is_infinite() {
        i32::MAX
    } else {
        double::frexp(x).1 - 1
    };
    u64::from(r as u32)
}

/// The `__nv_fast_*` intrinsics behind `__expf`, `__sinf`, `__fdividef`...
fn fast(rest: &str) -> Option<PureFn> {
    let base = rest.strip_prefix("fast_")?.strip_suffix('f')?;
    float_fns::lookup(base, false)
}

fn sub_f<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f32(rounding::single::add(
        f32_of(a[0]),
        -f32_of(a[1]),
        Mode::from_index(M),
    ))
}
fn sub_d<const M: u8>(a: &[u64], _: u32) -> u64 {
    bits_f64(rounding::double::add(
        f64_of(a[0]),
        -f64_of(a[1]),
        Mode::from_index(M),
    ))
}

/// `__nv_fadd_rz`, `__nv_dsqrt_ru`, `__nv_fmaf_rd`, `__nv_frsqrt_rn`...
fn rounded(rest: &str) -> Option<PureFn> {
    let (op, suffix) = rest.rsplit_once('_')?;
    let m = Mode::parse(suffix)?;
    // The same operations as the `llvm.nvvm` ones, under libdevice names.
    let nvvm_name = |o: &str, t: &str| {
        let s = match m {
            Mode::Nearest => "rn",
            Mode::Zero => "rz",
            Mode::Up => "rp",
            Mode::Down => "rm",
        };
        super::nvvm(&format!("{o}.{s}.{t}"))
    };
    match op {
        "fsub" => Some(by_mode!(sub_f, m)),
        "dsub" => Some(by_mode!(sub_d, m)),
        "frsqrt" => Some(PureFn::F32(single::rsqrt)),
        "fadd" | "fmul" | "fdiv" | "frcp" | "fsqrt" => nvvm_name(&op[1..], "f"),
        "fmaf" => nvvm_name("fma", "f"),
        "dadd" | "dmul" | "ddiv" | "drcp" | "dsqrt" => nvvm_name(&op[1..], "d"),
        "fma" => nvvm_name("fma", "d"),
        _ => None,
    }
}

/// `__nv_float2int_rn`, `__nv_ull2double_rz`, `__nv_double2float_ru`...
fn converted(rest: &str) -> Option<PureFn> {
    let (what, suffix) = rest.rsplit_once('_')?;
    let m = Mode::parse(suffix)?;
    Some(match what {
        "float2int" => convert!(f2int, m, 32, true),
        "float2uint" => convert!(f2int, m, 32, false),
        "float2ll" => convert!(f2int, m, 64, true),
        "float2ull" => convert!(f2int, m, 64, false),
        "double2int" => convert!(d2int, m, 32, true),
        "double2uint" => convert!(d2int, m, 32, false),
        "double2ll" => convert!(d2int, m, 64, true),
        "double2ull" => convert!(d2int, m, 64, false),
        "int2float" => convert!(int2f, m, 32, true),
        "uint2float" => convert!(int2f, m, 32, false),
        "ll2float" => convert!(int2f, m, 64, true),
        "ull2float" => convert!(int2f, m, 64, false),
        "int2double" => convert!(int2d, m, 32, true),
        "uint2double" => convert!(int2d, m, 32, false),
        "ll2double" => convert!(int2d, m, 64, true),
        "ull2double" => convert!(int2d, m, 64, false),
        "double2float" => by_mode!(d2f, m),
        _ => return None,
    })
}

/// A libdevice function that writes results through pointer arguments.
pub struct OutParamFn {
    pub f: PureFn,
    /// Leading value arguments; the rest are the output pointers.
    pub values: usize,
    /// The scalar each output pointer receives (result words 1, 2).
    pub outputs: Vec<Scalar>,
    /// Whether result word 0 is returned.
    pub returns: bool,
}

/// `rest` is the name after `__nv_`.
pub fn out_params(rest: &str) -> Option<OutParamFn> {
    let out = |f, values, outputs: &[Scalar], returns| OutParamFn {
        f,
        values,
        outputs: outputs.to_vec(),
        returns,
    };
    let (f32_, f64_, i32_) = (Scalar::F32, Scalar::F64, Scalar::Int(32));
    Some(match rest {
        "sincosf" | "fast_sincosf" => out(
            PureFn::Raw3(|a, _| {
                let x = f32_of(a[0]);
                [0, bits_f32(x.sin()), bits_f32(x.cos())]
            }),
            1,
            &[f32_, f32_],
            false,
        ),
        "sincos" => out(
            PureFn::Raw3(|a, _| {
                let x = f64_of(a[0]);
                [0, bits_f64(x.sin()), bits_f64(x.cos())]
            }),
            1,
            &[f64_, f64_],
            false,
        ),
        "sincospif" => out(
            PureFn::Raw3(|a, _| {
                let x = f32_of(a[0]);
                [0, bits_f32(single::sinpi(x)), bits_f32(single::cospi(x))]
            }),
            1,
            &[f32_, f32_],
            false,
        ),
        "sincospi" => out(
            PureFn::Raw3(|a, _| {
                let x = f64_of(a[0]);
                [0, bits_f64(double::sinpi(x)), bits_f64(double::cospi(x))]
            }),
            1,
            &[f64_, f64_],
            false,
        ),
        "frexpf" => out(
            PureFn::Raw2(|a, _| {
                let (m, e) = single::frexp(f32_of(a[0]));
                (bits_f32(m), u64::from(e as u32))
            }),
            1,
            &[i32_],
            true,
        ),
        "frexp" => out(
            PureFn::Raw2(|a, _| {
                let (m, e) = double::frexp(f64_of(a[0]));
                (bits_f64(m), u64::from(e as u32))
            }),
            1,
            &[i32_],
            true,
        ),
        "modff" => out(
            PureFn::Raw2(|a, _| {
                let (frac, whole) = single::modf(f32_of(a[0]));
                (bits_f32(frac), bits_f32(whole))
            }),
            1,
            &[f32_],
            true,
        ),
        "modf" => out(
            PureFn::Raw2(|a, _| {
                let (frac, whole) = double::modf(f64_of(a[0]));
                (bits_f64(frac), bits_f64(whole))
            }),
            1,
            &[f64_],
            true,
        ),
        "remquof" => out(
            PureFn::Raw2(|a, _| {
                let (r, q) = single::remquo(f32_of(a[0]), f32_of(a[1]));
                (bits_f32(r), u64::from(q as u32))
            }),
            2,
            &[i32_],
            true,
        ),
        "remquo" => out(
            PureFn::Raw2(|a, _| {
                let (r, q) = double::remquo(f64_of(a[0]), f64_of(a[1]));
                (bits_f64(r), u64::from(q as u32))
            }),
            2,
            &[i32_],
            true,
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `name` without libdevice's `__nv_`.
    fn call(name: &str, args: &[u64]) -> u64 {
        libdevice(name)
            .unwrap_or_else(|| panic!("{name}"))
            .eval(args, 0)[0]
    }

    #[test]
    fn names_pick_precision() {
        assert_eq!(f32_of(call("sinf", &[bits_f32(0.0)])), 0.0);
        assert_eq!(f64_of(call("exp", &[bits_f64(0.0)])), 1.0);
        assert_eq!(f32_of(call("erff", &[bits_f32(0.0)])), 0.0);
        assert_eq!(f64_of(call("erf", &[bits_f64(0.0)])), 0.0);
        assert_eq!(f32_of(call("fast_expf", &[bits_f32(0.0)])), 1.0);
        assert_eq!(
            f32_of(call("fast_fdividef", &[bits_f32(1.0), bits_f32(4.0)])),
            0.25
        );
        assert_eq!(f32_of(call("saturatef", &[bits_f32(2.0)])), 1.0);
        assert_eq!(f32_of(call("powf", &[bits_f32(2.0), bits_f32(3.0)])), 8.0);
    }

    #[test]
    fn rounded_and_converted() {
        let tiny = bits_f32(2f32.powi(-30));
        assert_eq!(
            f32_of(call("fadd_ru", &[bits_f32(1.0), tiny])),
            1.0f32.next_up()
        );
        assert_eq!(
            f32_of(call("fsub_rd", &[bits_f32(1.0), tiny])),
            1.0f32.next_down()
        );
        assert_eq!(call("float2int_rn", &[bits_f32(2.5)]), 2);
        assert_eq!(call("float2int_ru", &[bits_f32(2.1)]), 3);
        assert_eq!(call("double2ll_rz", &[bits_f64(-2.9)]), (-2i64) as u64);
        assert_eq!(f64_of(call("int2double_rn", &[mask(32)])), -1.0);
        assert_eq!(call("ilogbf", &[bits_f32(8.0)]), 3);
        assert_eq!(call("clz", &[1]), 31);
        assert!(libdevice("nosuch").is_none());
    }

    #[test]
    fn out_parameters() {
        let f = out_params("sincosf").unwrap();
        let [_, s, c] = f.f.eval(&[bits_f32(0.0)], 0);
        assert_eq!((f32_of(s), f32_of(c)), (0.0, 1.0));
        assert_eq!(f.outputs.len(), 2);
        let f = out_params("frexpf").unwrap();
        let [m, e, _] = f.f.eval(&[bits_f32(8.0)], 0);
        assert_eq!((f32_of(m), e), (0.5, 4));
    }
}
