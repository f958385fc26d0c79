//! Directed rounding (`__fadd_rz`, `__float2int_ru`, `__ll2float_rd`, ...).
//!
//! Each operation is computed rounded to nearest, then the sign of the
//! rounding error, found exactly with an error-free transformation (TwoSum,
//! or an FMA residual), says whether to step one ulp toward the mode.

use std::cmp::Ordering;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Mode {
    Nearest,
    Zero,
    Up,
    Down,
}

impl Mode {
    /// The libdevice suffix: `rn`, `rz`, `ru`, `rd`.
    pub fn parse(suffix: &str) -> Option<Mode> {
        Some(match suffix {
            "rn" => Mode::Nearest,
            "rz" => Mode::Zero,
            "ru" => Mode::Up,
            "rd" => Mode::Down,
            _ => return None,
        })
    }

    /// For const-generic instantiation: `Mode::from_index(M)`.
    pub const fn from_index(i: u8) -> Mode {
        match i {
            1 => Mode::Zero,
            2 => Mode::Up,
            3 => Mode::Down,
            _ => Mode::Nearest,
        }
    }

    /// Rounds a float to an integral value in this mode.
    pub fn integral(self, x: f64) -> f64 {
        match self {
            Mode::Nearest => x.round_ties_even(),
            Mode::Zero => x.trunc(),
            Mode::Up => x.ceil(),
            Mode::Down => x.floor(),
        }
    }
}

macro_rules! precision {
    ($module:ident, $t:ident) => {
        pub mod $module {
            use super::{Mode, Ordering};
            type F = $t;

            /// Steps the nearest result `r` toward the mode, given how the
            /// exact result compares with it.
            pub fn adjust(r: F, exact_vs_r: Ordering, mode: Mode) -> F {
                if !r.is_finite() || exact_vs_r == Ordering::Equal {
                    return r;
                }
                let up = exact_vs_r == Ordering::Greater;
                match mode {
                    Mode::Nearest => r,
                    Mode::Up if up => r.next_up(),
                    Mode::Down if !up => r.next_down(),
                    // Toward zero: step back when rounding went away from it.
                    Mode::Zero if up && r < 0.0 => r.next_up(),
                    Mode::Zero if !up && r > 0.0 => r.next_down(),
                    _ => r,
                }
            }

            fn sign(x: F) -> Ordering {
                x.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
            }

            pub fn add(a: F, b: F, mode: Mode) -> F {
                let s = a + b;
                let bb = s - a;
                let err = (a - (s - bb)) + (b - bb);
                adjust(s, sign(err), mode)
            }
            pub fn mul(a: F, b: F, mode: Mode) -> F {
                let p = a * b;
                adjust(p, sign(a.mul_add(b, -p)), mode)
            }
            pub fn div(a: F, b: F, mode: Mode) -> F {
                let q = a / b;
                let r = (-q).mul_add(b, a);
                let s = if b < 0.0 { sign(r).reverse() } else { sign(r) };
                adjust(q, s, mode)
            }
            pub fn sqrt(a: F, mode: Mode) -> F {
                let s = a.sqrt();
                adjust(s, sign((-s).mul_add(s, a)), mode)
            }
            /// A 64-bit integer (as i128 to hold both signednesses) to float.
            pub fn from_int(v: i128, mode: Mode) -> F {
                let r = v as F;
                let exact = if r.is_finite() {
                    v.cmp(&(r as i128))
                } else {
                    Ordering::Equal
                };
                adjust(r, exact, mode)
            }
        }
    };
}

precision!(single, f32);
precision!(double, f64);

/// `fma` with directed rounding for `f32`: the product is exact in `f64`
/// and TwoSum there gives the sign of the remaining error.
pub fn fma_f32(a: f32, b: f32, c: f32, mode: Mode) -> f32 {
    let p = f64::from(a) * f64::from(b);
    let s = p + f64::from(c);
    let bb = s - p;
    let err = (p - (s - bb)) + (f64::from(c) - bb);
    let r = s as f32;
    let exact = (s - f64::from(r)) + err;
    single::adjust(r, exact.partial_cmp(&0.0).unwrap_or(Ordering::Equal), mode)
}

/// `double` to `float` in a mode.
pub fn narrow(x: f64, mode: Mode) -> f32 {
    let r = x as f32;
    let exact = x.partial_cmp(&f64::from(r)).unwrap_or(Ordering::Equal);
    single::adjust(r, exact, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_brackets_the_exact_result() {
        // 1 + 2^-30 is not a float: rn and rz give 1, ru gives the next float.
        let tiny = 2f32.powi(-30);
        assert_eq!(single::add(1.0, tiny, Mode::Nearest), 1.0);
        assert_eq!(single::add(1.0, tiny, Mode::Zero), 1.0);
        assert_eq!(single::add(1.0, tiny, Mode::Up), 1.0f32.next_up());
        assert_eq!(single::add(-1.0, -tiny, Mode::Zero), -1.0);
        assert_eq!(single::add(-1.0, -tiny, Mode::Down), (-1.0f32).next_down());
        // 1/3 rounds down to nearest in binary; ru must be above it.
        let third_up = single::div(1.0, 3.0, Mode::Up);
        assert!(f64::from(third_up) > 1.0 / 3.0);
        assert!(f64::from(single::div(1.0, 3.0, Mode::Down)) < 1.0 / 3.0);
        assert!(f64::from(single::div(1.0, -3.0, Mode::Up)) > -1.0 / 3.0);
        assert_eq!(single::sqrt(4.0, Mode::Up), 2.0);
        assert!(double::sqrt(2.0, Mode::Down) < std::f64::consts::SQRT_2 + 1e-17);
        // 2^24 + 1 is not a float: rd gives 2^24, ru 2^24 + 2.
        let v = (1i128 << 24) + 1;
        assert_eq!(single::from_int(v, Mode::Down), 16777216.0);
        assert_eq!(single::from_int(v, Mode::Up), 16777218.0);
        assert_eq!(narrow(1.0 + 1e-12, Mode::Up), 1.0f32.next_up());
        assert_eq!(fma_f32(1.0, 1.0, tiny, Mode::Up), 1.0f32.next_up());
        assert_eq!(Mode::Up.integral(1.2), 2.0);
    }
}
