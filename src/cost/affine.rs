//! Affine forms over the symbols a bound may mention: the kernel's integer
//! parameters, the grid, the block and thread indices (eliminated before a
//! bound is printed), one iteration counter per loop, and derived factors
//! such as `⌈n/(256·gridDim.x)⌉`.

use super::rat::Rat;
use crate::graph::LoopId;
use std::collections::BTreeMap;

/// A derived nonnegative quantity (see [`super::bound::Factor`]).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct FactorId(pub u32);

/// A dimension of a 3-D index (0 = x, 1 = y, 2 = z).
pub type Axis = u8;

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Sym {
    /// A kernel parameter, by position.
    Param(u32),
    GridDim(Axis),
    BlockIdx(Axis),
    Tid(Axis),
    LaneId,
    /// How many times the warp has taken the back edges of a loop since it
    /// entered it: the uniform potential-carrying variable of that loop.
    Ghost(LoopId),
    Factor(FactorId),
    /// The trip count `n & (U−1)` of an unrolled loop's remainder loop
    /// (see `remainder`): rewritten away before any bound is printed.
    Rem(LoopId),
}

impl Sym {
    /// Symbols that differ between the threads or blocks of a launch: a
    /// per-warp bound holds for all of them, so none may remain in it.
    pub fn is_per_thread(self) -> bool {
        matches!(self, Sym::BlockIdx(_) | Sym::Tid(_) | Sym::LaneId)
    }
}

/// `konst + Σ coeff·sym`, no zero coefficients.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Affine {
    pub terms: BTreeMap<Sym, Rat>,
    pub konst: Rat,
}

impl Default for Rat {
    fn default() -> Self {
        Rat::ZERO
    }
}

impl Affine {
    pub fn constant(c: Rat) -> Affine {
        Affine {
            terms: BTreeMap::new(),
            konst: c,
        }
    }

    pub fn int(c: i128) -> Affine {
        Affine::constant(Rat::int(c))
    }

    pub fn sym(s: Sym) -> Affine {
        Affine {
            terms: BTreeMap::from([(s, Rat::ONE)]),
            konst: Rat::ZERO,
        }
    }

    /// Whether no coefficient overflowed (see [`Rat::OVERFLOW`]).
    pub fn is_finite(&self) -> bool {
        self.konst.is_finite() && self.terms.values().all(|c| c.is_finite())
    }

    pub fn as_constant(&self) -> Option<Rat> {
        self.terms.is_empty().then_some(self.konst)
    }

    pub fn coeff(&self, s: Sym) -> Rat {
        self.terms.get(&s).copied().unwrap_or(Rat::ZERO)
    }

    pub fn add(&self, o: &Affine) -> Affine {
        let mut r = self.clone();
        for (&s, &c) in &o.terms {
            r.add_term(s, c);
        }
        r.konst = r.konst + o.konst;
        r
    }

    pub fn sub(&self, o: &Affine) -> Affine {
        self.add(&o.scale(-Rat::ONE))
    }

    pub fn plus(&self, c: Rat) -> Affine {
        let mut r = self.clone();
        r.konst = r.konst + c;
        r
    }

    pub fn scale(&self, k: Rat) -> Affine {
        if k.is_zero() {
            return Affine::default();
        }
        Affine {
            terms: self.terms.iter().map(|(&s, &c)| (s, c * k)).collect(),
            konst: self.konst * k,
        }
    }

    pub fn add_term(&mut self, s: Sym, c: Rat) {
        let v = self.coeff(s) + c;
        if v.is_zero() {
            self.terms.remove(&s);
        } else {
            self.terms.insert(s, v);
        }
    }

    /// Replaces `s` by `by`.
    pub fn subst(&self, s: Sym, by: &Affine) -> Affine {
        match self.terms.get(&s) {
            None => self.clone(),
            Some(&c) => {
                let mut r = self.clone();
                r.terms.remove(&s);
                r.add(&by.scale(c))
            }
        }
    }

    pub fn mentions(&self, pred: impl Fn(Sym) -> bool) -> bool {
        self.terms.keys().any(|&s| pred(s))
    }

    /// `self = λ·(lin + off)` with `lin` a primitive integer form (coprime
    /// coefficients, no constant) and `λ > 0`: the atom `max0(self)` is
    /// `λ·max0(lin + off)`. `None` for a constant.
    pub fn normalize(&self) -> Option<(Affine, Rat, Rat)> {
        if self.terms.is_empty() {
            return None;
        }
        // λ = gcd of numerators / lcm of denominators.
        let (mut g, mut l) = (0i128, 1i128);
        for c in self.terms.values() {
            g = gcd(g, c.num());
            l = l / gcd(l, c.den()) * c.den();
        }
        let lambda = Rat::new(g, l);
        let lin = Affine {
            terms: self
                .terms
                .iter()
                .map(|(&s, &c)| (s, c * lambda.recip()))
                .collect(),
            konst: Rat::ZERO,
        };
        Some((lin, lambda, self.konst * lambda.recip()))
    }

    /// The value at `env` (every symbol must have one).
    pub fn eval(&self, env: &dyn Fn(Sym) -> Option<f64>) -> Option<f64> {
        let mut v = self.konst.to_f64();
        for (&s, &c) in &self.terms {
            v += c.to_f64() * env(s)?;
        }
        Some(v)
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_forms_share_their_linear_part() {
        let n = Affine::sym(Sym::Param(0));
        let k = Affine::sym(Sym::Ghost(LoopId(0)));
        // (n - 1)/2 - k/2 = 1/2·(n - k - 1)
        let e = n
            .plus(-Rat::ONE)
            .scale(Rat::new(1, 2))
            .sub(&k.scale(Rat::new(1, 2)));
        let (lin, lambda, off) = e.normalize().unwrap();
        assert_eq!(lambda, Rat::new(1, 2));
        assert_eq!(off, Rat::int(-1));
        assert_eq!(lin, n.sub(&k));
        // After k := k + 1 the same linear part, offset one lower.
        let next = e.subst(Sym::Ghost(LoopId(0)), &k.plus(Rat::ONE));
        let (lin2, _, off2) = next.normalize().unwrap();
        assert_eq!((lin2, off2), (lin, Rat::int(-2)));
    }
}
