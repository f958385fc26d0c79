//! Float functions Rust's standard library lacks, at both precisions. The
//! special functions (erf, gamma, Bessel) come from the C math library the
//! standard library already links; the inverses are Newton iterations on them.

/// The C math library: pure functions of their scalar arguments.
mod c {
    use std::ffi::c_int;
    extern "C" {
        pub fn erf(x: f64) -> f64;
        pub fn erff(x: f32) -> f32;
        pub fn erfc(x: f64) -> f64;
        pub fn erfcf(x: f32) -> f32;
        pub fn tgamma(x: f64) -> f64;
        pub fn tgammaf(x: f32) -> f32;
        pub fn lgamma(x: f64) -> f64;
        pub fn lgammaf(x: f32) -> f32;
        pub fn j0(x: f64) -> f64;
        pub fn j0f(x: f32) -> f32;
        pub fn j1(x: f64) -> f64;
        pub fn j1f(x: f32) -> f32;
        pub fn y0(x: f64) -> f64;
        pub fn y0f(x: f32) -> f32;
        pub fn y1(x: f64) -> f64;
        pub fn y1f(x: f32) -> f32;
        pub fn jn(n: c_int, x: f64) -> f64;
        pub fn jnf(n: c_int, x: f32) -> f32;
        pub fn yn(n: c_int, x: f64) -> f64;
        pub fn ynf(n: c_int, x: f32) -> f32;
        pub fn remainder(x: f64, y: f64) -> f64;
        pub fn remainderf(x: f32, y: f32) -> f32;
        pub fn remquo(x: f64, y: f64, q: *mut c_int) -> f64;
        pub fn remquof(x: f32, y: f32, q: *mut c_int) -> f32;
        pub fn nextafter(x: f64, y: f64) -> f64;
        pub fn nextafterf(x: f32, y: f32) -> f32;
        pub fn ldexp(x: f64, e: c_int) -> f64;
        pub fn ldexpf(x: f32, e: c_int) -> f32;
        pub fn frexp(x: f64, e: *mut c_int) -> f64;
        pub fn frexpf(x: f32, e: *mut c_int) -> f32;
    }
}

/// Defines one precision's functions; `$t` is the float type and the
/// remaining names are that precision's C functions.
macro_rules! precision {
    ($module:ident, $t:ident, $erf:ident, $erfc:ident, $tgamma:ident, $lgamma:ident,
     $j0:ident, $j1:ident, $y0:ident, $y1:ident, $jn:ident, $yn:ident,
     $remainder:ident, $remquo:ident, $nextafter:ident, $ldexp:ident, $frexp:ident) => {
        pub mod $module {
            use super::c;
            use std::ffi::c_int;
            type F = $t;
            const PI: F = std::$t::consts::PI;
            const SQRT_2: F = std::$t::consts::SQRT_2;
            const FRAC_2_SQRT_PI: F = std::$t::consts::FRAC_2_SQRT_PI;

            // SAFETY (all `unsafe` below): C math functions of plain
            // scalars; out-pointers point at a local.
            pub fn erf(x: F) -> F {
                unsafe { c::$erf(x) }
            }
            pub fn erfc(x: F) -> F {
                unsafe { c::$erfc(x) }
            }
            pub fn tgamma(x: F) -> F {
                unsafe { c::$tgamma(x) }
            }
            pub fn lgamma(x: F) -> F {
                unsafe { c::$lgamma(x) }
            }
            pub fn j0(x: F) -> F {
                unsafe { c::$j0(x) }
            }
            pub fn j1(x: F) -> F {
                unsafe { c::$j1(x) }
            }
            pub fn y0(x: F) -> F {
                unsafe { c::$y0(x) }
            }
            pub fn y1(x: F) -> F {
                unsafe { c::$y1(x) }
            }
            pub fn jn(n: i32, x: F) -> F {
                unsafe { c::$jn(n as c_int, x) }
            }
            pub fn yn(n: i32, x: F) -> F {
                unsafe { c::$yn(n as c_int, x) }
            }
            pub fn remainder(x: F, y: F) -> F {
                unsafe { c::$remainder(x, y) }
            }
            pub fn remquo(x: F, y: F) -> (F, i32) {
                let mut q: c_int = 0;
                let r = unsafe { c::$remquo(x, y, &mut q) };
                (r, q as i32)
            }
            pub fn nextafter(x: F, y: F) -> F {
                unsafe { c::$nextafter(x, y) }
            }
            pub fn ldexp(x: F, e: i32) -> F {
                unsafe { c::$ldexp(x, e as c_int) }
            }
            pub fn frexp(x: F) -> (F, i32) {
                let mut e: c_int = 0;
                let m = unsafe { c::$frexp(x, &mut e) };
                (m, e as i32)
            }
            pub fn modf(x: F) -> (F, F) {
                let whole = x.trunc();
                let frac = if x.is_infinite() {
                    (0.0 as F).copysign(x)
                } else {
                    x - whole
                };
                (frac, whole)
            }
            pub fn fmod(x: F, y: F) -> F {
                x % y
            }
            pub fn exp10(x: F) -> F {
                (10.0 as F).powf(x)
            }
            /// The unbiased exponent, as a float (`logb(8) = 3`).
            pub fn logb(x: F) -> F {
                if x == 0.0 {
                    return F::NEG_INFINITY;
                }
                if !x.is_finite() {
                    return x.abs();
                }
                frexp(x).1 as F - 1.0
            }
            /// Reduces `x` modulo 2 exactly before scaling by pi.
            fn pi_reduced(x: F) -> F {
                PI * (x - 2.0 * (x / 2.0).round())
            }
            pub fn sinpi(x: F) -> F {
                if x == x.trunc() {
                    return (0.0 as F).copysign(x);
                }
                pi_reduced(x).sin()
            }
            pub fn cospi(x: F) -> F {
                if (x + 0.5) == (x + 0.5).trunc() && x.is_finite() {
                    return 0.0;
                }
                pi_reduced(x).cos()
            }
            pub fn rsqrt(x: F) -> F {
                1.0 / x.sqrt()
            }
            pub fn rcbrt(x: F) -> F {
                1.0 / x.cbrt()
            }
            pub fn rhypot(x: F, y: F) -> F {
                1.0 / x.hypot(y)
            }
            pub fn fdim(x: F, y: F) -> F {
                if x.is_nan() || y.is_nan() {
                    F::NAN
                } else if x > y {
                    x - y
                } else {
                    0.0
                }
            }
            /// Clamps to [0, 1]; NaN gives 0 (PTX `.sat`).
            pub fn saturate(x: F) -> F {
                if x.is_nan() {
                    0.0
                } else {
                    x.clamp(0.0, 1.0)
                }
            }
            pub fn identity(x: F) -> F {
                x
            }
            pub fn div(x: F, y: F) -> F {
                x / y
            }
            pub fn minimum(x: F, y: F) -> F {
                if x.is_nan() || y.is_nan() {
                    F::NAN
                } else if x == y {
                    if x.is_sign_negative() {
                        x
                    } else {
                        y
                    }
                } else {
                    x.min(y)
                }
            }
            pub fn maximum(x: F, y: F) -> F {
                if x.is_nan() || y.is_nan() {
                    F::NAN
                } else if x == y {
                    if x.is_sign_positive() {
                        x
                    } else {
                        y
                    }
                } else {
                    x.max(y)
                }
            }
            pub fn norm3d(a: F, b: F, c: F) -> F {
                a.hypot(b).hypot(c)
            }
            pub fn rnorm3d(a: F, b: F, c: F) -> F {
                1.0 / norm3d(a, b, c)
            }
            pub fn norm4d(a: F, b: F, c: F, d: F) -> F {
                a.hypot(b).hypot(c).hypot(d)
            }
            /// Newton steps on `erf(x) = y` from a logarithmic first guess.
            pub fn erfinv(y: F) -> F {
                if y.is_nan() || y.abs() > 1.0 {
                    return F::NAN;
                }
                if y.abs() == 1.0 {
                    return F::INFINITY.copysign(y);
                }
                if y.abs() > 0.5 {
                    return erfcinv(1.0 - y.abs()).copysign(y);
                }
                let mut x = y * PI.sqrt() / 2.0;
                for _ in 0..8 {
                    let step = (erf(x) - y) / (FRAC_2_SQRT_PI * (-x * x).exp());
                    x -= step;
                    if step.abs() <= F::EPSILON * x.abs() {
                        break;
                    }
                }
                x
            }
            /// Newton steps on `ln erfc(x) = ln y`, which is nearly
            /// quadratic where erfc itself is far too curved; the tail
            /// `erfc(x) ~ exp(-x^2) / (x sqrt(pi))` gives the first guess.
            pub fn erfcinv(y: F) -> F {
                if y.is_nan() || !(0.0..=2.0).contains(&y) {
                    return F::NAN;
                }
                if y == 0.0 {
                    return F::INFINITY;
                }
                if y == 2.0 {
                    return F::NEG_INFINITY;
                }
                if y > 1.0 {
                    return -erfcinv(2.0 - y);
                }
                if y > 0.5 {
                    return erfinv(1.0 - y);
                }
                let mut x = (-y.ln()).sqrt();
                for _ in 0..40 {
                    let e = erfc(x);
                    let step = (e.ln() - y.ln()) * e / (FRAC_2_SQRT_PI * (-x * x).exp());
                    x += step;
                    if step.abs() <= F::EPSILON * x.abs() {
                        break;
                    }
                }
                x
            }
            /// `exp(x^2) erfc(x)`, by its asymptotic series where erfc underflows.
            pub fn erfcx(x: F) -> F {
                if x < 25.0 {
                    return (x * x).exp() * erfc(x);
                }
                let inv2 = 1.0 / (2.0 * x * x);
                (1.0 - inv2 + 3.0 * inv2 * inv2) / (x * PI.sqrt())
            }
            pub fn normcdf(x: F) -> F {
                0.5 * erfc(-x / SQRT_2)
            }
            pub fn normcdfinv(p: F) -> F {
                -SQRT_2 * erfcinv(2.0 * p)
            }
        }
    };
}

precision!(
    single, f32, erff, erfcf, tgammaf, lgammaf, j0f, j1f, y0f, y1f, jnf, ynf, remainderf, remquof,
    nextafterf, ldexpf, frexpf
);
precision!(
    double, f64, erf, erfc, tgamma, lgamma, j0, j1, y0, y1, jn, yn, remainder, remquo, nextafter,
    ldexp, frexp
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverses_invert() {
        for y in [-0.9, -0.3, 0.0, 0.2, 0.7, 0.999] {
            let x = double::erfinv(y);
            assert!((double::erf(x) - y).abs() < 1e-14, "erfinv({y}) = {x}");
        }
        for y in [1e-300, 1e-10, 0.01, 0.3, 1.0, 1.6] {
            let x = double::erfcinv(y);
            assert!(
                ((double::erfc(x) - y) / y).abs() < 1e-12,
                "erfcinv({y}) = {x}"
            );
        }
        assert!((single::normcdfinv(0.975) - 1.959_964).abs() < 1e-4);
        assert_eq!(double::logb(8.0), 3.0);
        assert_eq!(single::sinpi(1.0), 0.0);
        assert_eq!(double::cospi(0.5), 0.0);
        assert_eq!(double::frexp(8.0), (0.5, 4));
        assert_eq!(single::modf(-2.5), (-0.5, -2.0));
        assert!(double::minimum(f64::NAN, 1.0).is_nan());
        assert!(double::minimum(0.0, -0.0).is_sign_negative());
    }
}
