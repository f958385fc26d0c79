//! Exact rational numbers for bound coefficients: loop bounds divide by
//! steps (`(n + 31)/32`), and LP solutions are read back as fractions so
//! that printed bounds are exact.
//!
//! The arithmetic is total: a result that leaves `i128` (a product of
//! three 64-bit parameters' ranges) is [`Rat::OVERFLOW`], which every
//! later operation keeps, like a float's NaN. Whoever turns numbers into a
//! claim (a trip bound, a fact, an LP row, a range) checks
//! [`Rat::is_finite`] and makes that quantity unknown, so an overflow is a
//! missing bound, never a panic and never a wrong number.
//!
//! Written here rather than taken from `num-rational`: its `Ratio<i128>`
//! panics where this must give the overflow (a zero denominator, the sign
//! of `i128::MIN` flipped in a gcd or a normalisation), so every operation
//! would need a guard around it, and it has no sticky overflow value.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};

/// `num / den` in lowest terms, `den > 0`; `den == 0` is the overflow.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Rat {
    num: i128,
    den: i128,
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Rat {
    pub const ZERO: Rat = Rat { num: 0, den: 1 };
    pub const ONE: Rat = Rat { num: 1, den: 1 };
    /// A result too large for `i128` (or a division by zero): unknown.
    pub const OVERFLOW: Rat = Rat { num: 0, den: 0 };

    /// `num / den`; [`Rat::OVERFLOW`] for a zero denominator or a sign
    /// that cannot be flipped.
    pub fn new(num: i128, den: i128) -> Rat {
        if den == 0 {
            return Rat::OVERFLOW;
        }
        let g = gcd(num, den).max(1);
        let (num, den) = (num / g, den / g);
        if den < 0 {
            match (num.checked_neg(), den.checked_neg()) {
                (Some(n), Some(d)) => Rat { num: n, den: d },
                _ => Rat::OVERFLOW,
            }
        } else {
            Rat { num, den }
        }
    }

    /// Whether this is a number, not [`Rat::OVERFLOW`].
    pub fn is_finite(self) -> bool {
        self.den != 0
    }

    pub fn int(v: i128) -> Rat {
        if v == i128::MIN {
            return Rat::OVERFLOW;
        }
        Rat { num: v, den: 1 }
    }

    pub fn num(self) -> i128 {
        self.num
    }

    pub fn den(self) -> i128 {
        self.den
    }

    pub fn is_zero(self) -> bool {
        self.num == 0
    }

    pub fn is_integer(self) -> bool {
        self.den == 1
    }

    /// `⌊self⌋`; `None` for the overflow.
    pub fn floor(self) -> Option<i128> {
        self.is_finite().then(|| self.num.div_euclid(self.den))
    }

    /// `⌈self⌉`; `None` for the overflow.
    pub fn ceil(self) -> Option<i128> {
        if !self.is_finite() {
            return None;
        }
        self.num.checked_neg()?.div_euclid(self.den).checked_neg()
    }

    pub fn abs(self) -> Rat {
        match self.num.checked_abs() {
            Some(num) => Rat { num, den: self.den },
            None => Rat::OVERFLOW,
        }
    }

    /// The value as a float; NaN for the overflow.
    pub fn to_f64(self) -> f64 {
        if !self.is_finite() {
            return f64::NAN;
        }
        self.num as f64 / self.den as f64
    }

    /// The fraction with denominator at most `max_den` nearest to `x`
    /// (LP solutions come back as floats).
    pub fn approximate(x: f64, max_den: i128) -> Rat {
        let mut best = Rat::int(x.round() as i128);
        let mut err = (x - best.to_f64()).abs();
        for den in 2..=max_den {
            let r = Rat::new((x * den as f64).round() as i128, den);
            let e = (x - r.to_f64()).abs();
            if e + 1e-12 < err {
                best = r;
                err = e;
            }
        }
        best
    }

    /// The product; `None` on overflow (of either operand or the result).
    pub fn checked_mul(self, o: Rat) -> Option<Rat> {
        if !(self.is_finite() && o.is_finite()) {
            return None;
        }
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(o.num / g2)?;
        let den = (self.den / g2).checked_mul(o.den / g1)?;
        Some(Rat::new(num, den)).filter(|r| r.is_finite())
    }

    /// The sum; `None` on overflow (of either operand or the result).
    pub fn checked_add(self, o: Rat) -> Option<Rat> {
        if !(self.is_finite() && o.is_finite()) {
            return None;
        }
        let g = gcd(self.den, o.den).max(1);
        let num = self
            .num
            .checked_mul(o.den / g)?
            .checked_add(o.num.checked_mul(self.den / g)?)?;
        Some(Rat::new(num, (self.den / g).checked_mul(o.den)?)).filter(|r| r.is_finite())
    }

    /// `1/self`; the overflow for zero.
    pub fn recip(self) -> Rat {
        if !self.is_finite() {
            return Rat::OVERFLOW;
        }
        Rat::new(self.den, self.num)
    }
}

impl Add for Rat {
    type Output = Rat;
    fn add(self, o: Rat) -> Rat {
        self.checked_add(o).unwrap_or(Rat::OVERFLOW)
    }
}

impl Sub for Rat {
    type Output = Rat;
    fn sub(self, o: Rat) -> Rat {
        self + -o
    }
}

impl Neg for Rat {
    type Output = Rat;
    fn neg(self) -> Rat {
        match self.num.checked_neg() {
            Some(num) if self.is_finite() => Rat { num, den: self.den },
            _ => Rat::OVERFLOW,
        }
    }
}

impl Mul for Rat {
    type Output = Rat;
    fn mul(self, o: Rat) -> Rat {
        self.checked_mul(o).unwrap_or(Rat::OVERFLOW)
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A total order for sorting and map keys: the overflow sorts above every
/// number. Sign tests on a value that may have overflowed must check
/// [`Rat::is_finite`] first (ranges and facts do).
impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        match (self.is_finite(), o.is_finite()) {
            (false, false) => return Ordering::Equal,
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            (true, true) => {}
        }
        // Exact: compare a/b with c/d through floor parts and remainders
        // so that no product can overflow.
        cmp_fractions(self.num, self.den, o.num, o.den)
    }
}

/// `a/b` against `c/d` for positive `b`, `d`, without overflow (continued
/// fractions: compare the integer parts, then the reciprocals of the
/// remainders, reversed).
fn cmp_fractions(a: i128, b: i128, c: i128, d: i128) -> Ordering {
    let (qa, ra) = (a.div_euclid(b), a.rem_euclid(b));
    let (qc, rc) = (c.div_euclid(d), c.rem_euclid(d));
    match qa.cmp(&qc) {
        Ordering::Equal => {}
        other => return other,
    }
    match (ra == 0, rc == 0) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        // ra/b vs rc/d, both in (0, 1): the reverse of b/ra vs d/rc.
        (false, false) => cmp_fractions(d, rc, b, ra),
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.is_finite() {
            write!(f, "overflow")
        } else if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_terms_and_rounding() {
        assert_eq!(Rat::new(6, -4), Rat::new(-3, 2));
        assert_eq!(Rat::new(-3, 2).floor(), Some(-2));
        assert_eq!(Rat::new(-3, 2).ceil(), Some(-1));
        assert_eq!(Rat::new(7, 2).ceil(), Some(4));
        assert_eq!(Rat::new(1, 3) + Rat::new(1, 6), Rat::new(1, 2));
        assert!(Rat::new(1, 3) < Rat::new(1, 2));
        assert_eq!(Rat::approximate(0.333333333, 64), Rat::new(1, 3));
        assert_eq!(Rat::approximate(7.0, 64), Rat::int(7));
        assert_eq!(Rat::new(3, 4).to_string(), "3/4");
    }

    #[test]
    fn overflow_is_a_value_that_sticks() {
        // 2^64 · 2^64 = 2^128 leaves i128 (max 2^127 − 1).
        let big = Rat::int(1 << 64);
        let o = big * big;
        assert!(!o.is_finite());
        assert!(!(o + Rat::ONE).is_finite());
        assert!(!(-o).is_finite());
        assert!(!(o * Rat::ZERO).is_finite());
        assert_eq!(o.ceil(), None);
        assert!(o.checked_add(Rat::ONE).is_none());
        assert!(!Rat::new(1, 0).is_finite());
        assert!(!Rat::int(i128::MIN).is_finite());
        // (2^126 + 2^126) = 2^127 overflows too.
        assert!(!(Rat::int(1 << 126) + Rat::int(1 << 126)).is_finite());
        // Sorting stays total: the overflow above every number.
        assert!(o > Rat::int(i128::MAX));
    }

    #[test]
    fn comparison_never_overflows() {
        // Cross products of these would be about 2^250.
        let a = Rat::new(i128::MAX, i128::MAX - 1);
        let b = Rat::new(i128::MAX - 1, i128::MAX - 2);
        // (m)/(m−1) = 1 + 1/(m−1) < 1 + 1/(m−2).
        assert!(a < b);
        assert!(Rat::new(-7, 3) < Rat::new(-2, 1));
        assert_eq!(Rat::new(4, 6).cmp(&Rat::new(2, 3)), Ordering::Equal);
    }
}
