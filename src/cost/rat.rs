//! Exact rational numbers for bound coefficients: loop bounds divide by
//! steps (`(n + 31)/32`), and LP solutions are read back as fractions so
//! that printed bounds are exact.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Mul, Neg, Sub};

/// `num / den` in lowest terms, `den > 0`.
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

    pub fn new(num: i128, den: i128) -> Rat {
        assert!(den != 0, "zero denominator");
        let g = gcd(num, den).max(1);
        let s = if den < 0 { -1 } else { 1 };
        Rat {
            num: s * num / g,
            den: s * den / g,
        }
    }

    pub fn int(v: i128) -> Rat {
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

    pub fn floor(self) -> i128 {
        self.num.div_euclid(self.den)
    }

    pub fn ceil(self) -> i128 {
        -(-self.num).div_euclid(self.den)
    }

    pub fn abs(self) -> Rat {
        Rat {
            num: self.num.abs(),
            den: self.den,
        }
    }

    pub fn to_f64(self) -> f64 {
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

    pub fn checked_mul(self, o: Rat) -> Option<Rat> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(o.num / g2)?;
        let den = (self.den / g2).checked_mul(o.den / g1)?;
        Some(Rat::new(num, den))
    }

    pub fn checked_add(self, o: Rat) -> Option<Rat> {
        let g = gcd(self.den, o.den).max(1);
        let num = self
            .num
            .checked_mul(o.den / g)?
            .checked_add(o.num.checked_mul(self.den / g)?)?;
        Some(Rat::new(num, (self.den / g).checked_mul(o.den)?))
    }

    pub fn recip(self) -> Rat {
        Rat::new(self.den, self.num)
    }
}

impl Add for Rat {
    type Output = Rat;
    fn add(self, o: Rat) -> Rat {
        self.checked_add(o).expect("rational overflow")
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
        Rat {
            num: -self.num,
            den: self.den,
        }
    }
}

impl Mul for Rat {
    type Output = Rat;
    fn mul(self, o: Rat) -> Rat {
        self.checked_mul(o).expect("rational overflow")
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        (self.num * o.den).cmp(&(o.num * self.den))
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
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
        assert_eq!(Rat::new(-3, 2).floor(), -2);
        assert_eq!(Rat::new(-3, 2).ceil(), -1);
        assert_eq!(Rat::new(7, 2).ceil(), 4);
        assert_eq!(Rat::new(1, 3) + Rat::new(1, 6), Rat::new(1, 2));
        assert!(Rat::new(1, 3) < Rat::new(1, 2));
        assert_eq!(Rat::approximate(0.333333333, 64), Rat::new(1, 3));
        assert_eq!(Rat::approximate(7.0, 64), Rat::int(7));
        assert_eq!(Rat::new(3, 4).to_string(), "3/4");
    }
}
