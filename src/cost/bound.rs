//! Bounds as polynomials: rational coefficients over named factors
//! (`max(0, h − 1)`, `⌈n/(256·gridDim.x)⌉`), printed for people, written
//! as a machine form scripts can evaluate, and evaluated at given
//! parameters by `warpcheck bound` and the tests. A [`Bound`] is the least
//! of several such polynomials, each a bound on its own.

use super::affine::{Affine, FactorId, Sym};
use super::rat::Rat;
use serde::Serialize;
use std::collections::BTreeMap;

/// `⌈max(0, num)/den⌉`: a trip count over a symbolic stride.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Factor {
    pub num: Affine,
    pub den: Affine,
}

/// The factors of one kernel.
#[derive(Clone, Debug, Default)]
pub struct Factors {
    list: Vec<Factor>,
}

impl Factors {
    pub fn intern(&mut self, f: Factor) -> FactorId {
        if let Some(i) = self.list.iter().position(|x| *x == f) {
            return FactorId(i as u32);
        }
        self.list.push(f);
        FactorId(self.list.len() as u32 - 1)
    }

    /// Every factor with its id.
    pub fn iter(&self) -> impl Iterator<Item = (FactorId, &Factor)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, f)| (FactorId(i as u32), f))
    }

    pub fn get(&self, id: FactorId) -> &Factor {
        &self.list[id.0 as usize]
    }
}

/// A product of `max(0, ·)` atoms; empty for the constant term.
pub type Mono = Vec<Affine>;

/// `Σ coeff · Π max(0, atom)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Poly {
    pub terms: BTreeMap<Mono, Rat>,
}

impl Poly {
    pub fn constant(c: Rat) -> Poly {
        let mut p = Poly::default();
        p.add(Vec::new(), c);
        p
    }

    pub fn add(&mut self, mut m: Mono, c: Rat) {
        m.sort();
        let v = self.terms.get(&m).copied().unwrap_or(Rat::ZERO) + c;
        if v.is_zero() {
            self.terms.remove(&m);
        } else {
            self.terms.insert(m, v);
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn degree(&self) -> usize {
        self.terms.keys().map(Vec::len).max().unwrap_or(0)
    }

    /// The value where every atom is 1: the sum of the coefficients.
    pub fn at_ones(&self) -> Rat {
        self.terms.values().fold(Rat::ZERO, |a, &c| a + c)
    }
}

/// Whether `p ≤ q` wherever both are defined, read off the coefficients:
/// every monomial is a product of `max(0, ·)` atoms, so `q − p` with no
/// negative coefficient is nonnegative everywhere.
pub fn at_most(p: &Poly, q: &Poly) -> bool {
    let monos = p.terms.keys().chain(q.terms.keys());
    monos.into_iter().all(|m| {
        let (a, b) = (p.terms.get(m), q.terms.get(m));
        let (a, b) = (
            a.copied().unwrap_or(Rat::ZERO),
            b.copied().unwrap_or(Rat::ZERO),
        );
        a.is_finite() && b.is_finite() && a <= b
    })
}

/// The least of several polynomials, each an upper bound on its own (the
/// LP solved in different orders: the leading degree first is tight for
/// large parameters, the constant first for small ones), so their
/// pointwise minimum is one too. Never empty; no piece is at most another
/// (see [`at_most`]); the first is the leading-degree-first one (or one at
/// most it everywhere, which replaced it).
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    pieces: Vec<Poly>,
}

impl Bound {
    pub fn new(p: Poly) -> Bound {
        Bound { pieces: vec![p] }
    }

    /// Every piece, the leading-degree-first one first.
    pub fn pieces(&self) -> &[Poly] {
        &self.pieces
    }

    /// The leading-degree-first piece: a bound on its own.
    pub fn first(&self) -> &Poly {
        &self.pieces[0]
    }

    /// Adds `p` as a piece, unless a piece is already at most it; drops
    /// the pieces it is at most.
    pub fn push(&mut self, p: Poly) {
        if self.pieces.iter().any(|q| at_most(q, &p)) {
            return;
        }
        self.pieces.retain(|q| !at_most(&p, q));
        self.pieces.push(p);
    }

    /// Zero everywhere (a zero piece is at most every other, so it is the
    /// only one).
    pub fn is_zero(&self) -> bool {
        self.pieces.iter().any(Poly::is_zero)
    }

    /// At least `a·self + b·other` for `a, b ≥ 0`: the least of the sums
    /// of the `k`-th pieces (a shorter side repeats its last). Any piece
    /// of each side makes a sound sum; pieces of the same rank come from
    /// the same LP order (both tight for large parameters, or both for
    /// small ones), so every pair would add pieces to print, not tightness.
    pub fn combine(&self, a: Rat, other: &Bound, b: Rat) -> Bound {
        let (n, m) = (self.pieces.len(), other.pieces.len());
        let mut out: Option<Bound> = None;
        for k in 0..n.max(m) {
            let (p, q) = (&self.pieces[k.min(n - 1)], &other.pieces[k.min(m - 1)]);
            let mut sum = Poly::default();
            for (c, poly) in [(a, p), (b, q)] {
                for (mono, x) in &poly.terms {
                    sum.add(mono.clone(), *x * c);
                }
            }
            match &mut out {
                Some(o) => o.push(sum),
                None => out = Some(Bound::new(sum)),
            }
        }
        out.expect("a bound has a piece")
    }
}

/// How to name and evaluate the symbols of one kernel's bounds.
#[derive(Clone, Debug)]
pub struct Names {
    /// Kernel parameters by position (source names, else `argN`).
    pub params: Vec<String>,
    pub factors: Factors,
    /// Parameters declared unsigned: `max(0, n)` prints as `n`.
    pub unsigned: Vec<bool>,
}

/// Values for the symbols: parameters by name, and the grid.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub values: BTreeMap<String, f64>,
    pub grid: [u32; 3],
}

fn dim(d: u8) -> &'static str {
    ["x", "y", "z"].get(usize::from(d)).copied().unwrap_or("?")
}

impl Names {
    fn sym(&self, s: Sym, machine: bool) -> String {
        match s {
            Sym::Param(i) => self
                .params
                .get(i as usize)
                .cloned()
                .unwrap_or_else(|| format!("arg{i}")),
            Sym::GridDim(d) => format!("gridDim.{}", dim(d)),
            Sym::BlockIdx(d) => format!("blockIdx.{}", dim(d)),
            Sym::Tid(d) => format!("threadIdx.{}", dim(d)),
            Sym::LaneId => "laneid".into(),
            Sym::Ghost(l) => format!("k{}", l.0),
            Sym::Rem(l) => format!("r{}", l.0),
            Sym::Factor(f) => {
                let x = self.factors.get(f);
                // A large trip count kept as a symbol (see `trips`): its
                // value, when it is one.
                let whole = x.den == Affine::int(1);
                if let Some(n) = x.num.as_constant().filter(|_| whole) {
                    return n
                        .max(Rat::ZERO)
                        .ceil()
                        .map_or("overflow".into(), |v| v.to_string());
                }
                if machine {
                    format!(
                        "ceil(max0({}) / ({}))",
                        self.affine(&x.num, true),
                        self.affine(&x.den, true)
                    )
                } else {
                    let den = self.affine(&x.den, false);
                    let den = if x.den.terms.len() + usize::from(!x.den.konst.is_zero()) > 1
                        || x.den.terms.values().any(|c| *c != Rat::ONE)
                    {
                        format!("({den})")
                    } else {
                        den
                    };
                    // A numerator that may be negative counts from 0.
                    let num = self.affine(&x.num, false);
                    let may_be_negative =
                        x.num.konst < Rat::ZERO || x.num.terms.values().any(|c| *c < Rat::ZERO);
                    let num = if may_be_negative {
                        format!("max(0, {num})")
                    } else if x.num.terms.len() + usize::from(!x.num.konst.is_zero()) > 1 {
                        format!("({num})")
                    } else {
                        num
                    };
                    format!("⌈{num}/{den}⌉")
                }
            }
        }
    }

    /// `3·n + w/2 − 1` (or `3*n + (1/2)*w - 1` for machines).
    pub fn affine(&self, a: &Affine, machine: bool) -> String {
        let (mul, minus) = if machine { ("*", "-") } else { ("·", "−") };
        let mut out = String::new();
        let mut first = true;
        let mut push = |c: Rat, name: Option<String>| {
            let neg = c < Rat::ZERO;
            let c = c.abs();
            if first {
                if neg {
                    out.push_str(if machine { "-" } else { "−" });
                }
            } else {
                let sep = if neg {
                    format!(" {minus} ")
                } else {
                    " + ".to_string()
                };
                out.push_str(&sep);
            }
            first = false;
            match name {
                None => out.push_str(&c.to_string()),
                Some(n) if c == Rat::ONE => out.push_str(&n),
                Some(n) if machine => out.push_str(&format!("({c}){mul}{n}")),
                Some(n) if c.is_integer() => out.push_str(&format!("{c}{mul}{n}")),
                Some(n) => out.push_str(&format!("{}{mul}{n}/{}", c.num(), c.den())),
            }
        };
        for (&s, &c) in &a.terms {
            push(c, Some(self.sym(s, machine)));
        }
        if !a.konst.is_zero() || a.terms.is_empty() {
            push(a.konst, None);
        }
        out
    }

    /// Whether `a` can never be negative (factors, the grid, unsigned
    /// parameters with nonnegative coefficients and constant).
    fn never_negative(&self, a: &Affine) -> bool {
        a.konst >= Rat::ZERO
            && a.terms.iter().all(|(&s, &c)| {
                c > Rat::ZERO
                    && match s {
                        Sym::Param(i) => self.unsigned.get(i as usize).copied().unwrap_or(false),
                        Sym::GridDim(_) | Sym::Factor(_) => true,
                        _ => false,
                    }
            })
    }

    fn atom(&self, a: &Affine, machine: bool) -> String {
        if machine {
            return format!("max0({})", self.affine(a, true));
        }
        let inner = self.affine(a, false);
        if self.never_negative(a) {
            if a.terms.len() + usize::from(!a.konst.is_zero()) > 1 {
                format!("({inner})")
            } else {
                inner
            }
        } else {
            format!("max(0, {inner})")
        }
    }

    /// The human form: `14·max(0, h) + 7`.
    pub fn render(&self, p: &Poly) -> String {
        if p.is_zero() {
            return "0".into();
        }
        // Highest degree first, constant last.
        let mut terms: Vec<(&Mono, &Rat)> = p.terms.iter().collect();
        terms.sort_by_key(|(m, _)| std::cmp::Reverse(m.len()));
        let mut out = String::new();
        for (i, (m, &c)) in terms.iter().enumerate() {
            let neg = c < Rat::ZERO;
            if i > 0 {
                out.push_str(if neg { " − " } else { " + " });
            } else if neg {
                out.push('−');
            }
            let c = c.abs();
            let factors: Vec<String> = m.iter().map(|a| self.atom(a, false)).collect();
            let body = factors.join("·");
            match (factors.is_empty(), c == Rat::ONE, c.is_integer()) {
                (true, _, _) => out.push_str(&c.to_string()),
                (false, true, _) => out.push_str(&body),
                (false, false, true) => out.push_str(&format!("{c}·{body}")),
                (false, false, false) if c.num() == 1 => {
                    out.push_str(&format!("{body}/{}", c.den()))
                }
                (false, false, false) => out.push_str(&format!("{}·{body}/{}", c.num(), c.den())),
            }
        }
        out
    }

    /// `p` for one piece, `min(p₁, p₂)` for several.
    pub fn render_bound(&self, b: &Bound) -> String {
        match b.pieces() {
            [p] => self.render(p),
            ps => {
                let parts: Vec<String> = ps.iter().map(|p| self.render(p)).collect();
                format!("min({})", parts.join(", "))
            }
        }
    }

    /// The machine form: monomials with exact coefficients over factors a
    /// script can evaluate (`max0(h - 1)`, `ceil(max0(n) / (256*gridDim.x))`).
    pub fn machine(&self, p: &Poly) -> Vec<TermJson> {
        p.terms
            .iter()
            .map(|(m, c)| TermJson {
                coeff: [c.num() as i64, c.den() as i64],
                factors: m.iter().map(|a| self.atom(a, true)).collect(),
            })
            .collect()
    }

    fn value(&self, s: Sym, at: &Params) -> Option<f64> {
        match s {
            Sym::Param(i) => at.values.get(self.params.get(i as usize)?).copied(),
            Sym::GridDim(d) => Some(f64::from(*at.grid.get(usize::from(d))?)),
            Sym::Factor(f) => {
                let x = self.factors.get(f);
                let env = |s| self.value(s, at);
                let (n, d) = (x.num.eval(&env)?, x.den.eval(&env)?);
                (d > 0.0).then(|| (n.max(0.0) / d).ceil())
            }
            _ => None,
        }
    }

    /// The bound at `at`: `None` if a parameter it mentions has no value.
    pub fn eval(&self, p: &Poly, at: &Params) -> Option<f64> {
        let env = |s| self.value(s, at);
        let mut total = 0.0;
        for (m, c) in &p.terms {
            let mut v = c.to_f64();
            for a in m {
                v *= a.eval(&env)?.max(0.0);
            }
            total += v;
        }
        Some(total)
    }

    /// The least bound at `at` of the pieces whose parameters all have a
    /// value (each piece bounds on its own): `None` if no piece has.
    pub fn eval_bound(&self, b: &Bound, at: &Params) -> Option<f64> {
        b.pieces()
            .iter()
            .filter_map(|p| self.eval(p, at))
            .reduce(f64::min)
    }
}

/// One monomial of the machine form.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TermJson {
    /// `[numerator, denominator]`.
    pub coeff: [i64; 2],
    pub factors: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            params: vec!["h".into(), "n".into()],
            factors: Factors::default(),
            unsigned: vec![false, true],
        }
    }

    #[test]
    fn renders_and_evaluates() {
        let h = Affine::sym(Sym::Param(0));
        let n = Affine::sym(Sym::Param(1));
        let mut p = Poly::constant(Rat::int(7));
        p.add(vec![h.plus(-Rat::ONE)], Rat::int(14));
        p.add(vec![n.clone(), n.clone()], Rat::new(1, 2));
        let names = names();
        // Degree 2 first; n is unsigned, so no max; h − 1 may be negative.
        assert_eq!(names.render(&p), "n·n/2 + 14·max(0, h − 1) + 7");
        let at = Params {
            values: BTreeMap::from([("h".to_string(), 0.0), ("n".to_string(), 4.0)]),
            grid: [1, 1, 1],
        };
        // 16/2 + 14·max(0, −1) + 7 = 15.
        assert_eq!(names.eval(&p, &at), Some(15.0));
        let m = names.machine(&p);
        assert!(m
            .iter()
            .any(|t| t.factors == ["max0(h - 1)"] && t.coeff == [14, 1]));
    }

    #[test]
    fn factors_round_up() {
        let mut names = names();
        let f = names.factors.intern(Factor {
            num: Affine::sym(Sym::Param(1)),
            den: Affine::sym(Sym::GridDim(0)).scale(Rat::int(256)),
        });
        let mut p = Poly::default();
        p.add(vec![Affine::sym(Sym::Factor(f))], Rat::int(3));
        assert_eq!(names.render(&p), "3·⌈n/(256·gridDim.x)⌉");
        let at = Params {
            values: BTreeMap::from([("n".to_string(), 1000.0)]),
            grid: [2, 1, 1],
        };
        // ⌈1000/512⌉ = 2.
        assert_eq!(names.eval(&p, &at), Some(6.0));
    }

    /// `c1·max(0, n) + c0` over the unsigned `n`.
    fn line(c1: i128, c0: i128) -> Poly {
        let mut p = Poly::constant(Rat::int(c0));
        p.add(vec![Affine::sym(Sym::Param(1))], Rat::int(c1));
        p
    }

    fn at_n(n: f64) -> Params {
        Params {
            values: BTreeMap::from([("n".to_string(), n)]),
            grid: [1, 1, 1],
        }
    }

    #[test]
    fn a_bound_is_the_least_of_its_pieces() {
        // A loop unrolled by 8 of 7 steps a trip (cost_unroll.cu's
        // unrollChain): 21·n/8 + 421/8 and 7·n + 20 cross at
        // 35·n/8 = 261/8, n = 261/35 ≈ 7.5.
        let names = names();
        let mut rounds = Poly::constant(Rat::new(421, 8));
        rounds.add(vec![Affine::sym(Sym::Param(1))], Rat::new(21, 8));
        let mut b = Bound::new(rounds);
        b.push(line(7, 20));
        assert_eq!(b.pieces().len(), 2);
        assert_eq!(names.render_bound(&b), "min(21·n/8 + 421/8, 7·n + 20)");
        // n = 5: min(65.75, 55); n = 15: min(92, 125); n = 0: min(52.625, 20).
        assert_eq!(names.eval_bound(&b, &at_n(5.0)), Some(55.0));
        assert_eq!(names.eval_bound(&b, &at_n(15.0)), Some(92.0));
        assert_eq!(names.eval_bound(&b, &at_n(0.0)), Some(20.0));
        // Without n neither piece has a value.
        assert_eq!(names.eval_bound(&b, &Params::default()), None);
        // One piece renders as itself.
        assert_eq!(names.render_bound(&Bound::new(line(7, 20))), "7·n + 20");
    }

    #[test]
    fn a_piece_at_least_another_is_dropped() {
        // 7·n + 20 ≤ 7·n + 21 and ≤ 8·n + 20 everywhere (n ≥ 0 in every
        // monomial); 7·n + 20 and 6·n + 30 cross, so both stay.
        let mut b = Bound::new(line(7, 20));
        b.push(line(7, 21));
        b.push(line(8, 20));
        b.push(line(7, 20));
        assert_eq!(b.pieces(), [line(7, 20)]);
        b.push(line(6, 30));
        assert_eq!(b.pieces(), [line(7, 20), line(6, 30)]);
        // A new piece below an old one replaces it.
        b.push(line(6, 19));
        assert_eq!(b.pieces(), [line(6, 19)]);
        assert!(!b.is_zero());
        b.push(Poly::default());
        assert!(b.is_zero());
    }

    #[test]
    fn combining_sums_the_pieces_of_each_rank() {
        // 2·min(7n + 20, 6n + 30) + 3·min(n + 1, 5): the first pieces
        // give 14n + 40 + 3n + 3 = 17n + 43, the second 12n + 60 + 15 =
        // 12n + 75. At n = 2: 77 = 2·34 + 3·3, the least at n = 2 too
        // (2·min(34, 42) + 3·min(3, 5)); at n = 10: 195 = 2·90 + 15.
        let mut a = Bound::new(line(7, 20));
        a.push(line(6, 30));
        let mut b = Bound::new(line(1, 1));
        b.push(line(0, 5));
        let c = a.combine(Rat::int(2), &b, Rat::int(3));
        assert_eq!(c.pieces(), [line(17, 43), line(12, 75)]);
        assert_eq!(names().eval_bound(&c, &at_n(2.0)), Some(77.0));
        assert_eq!(names().eval_bound(&c, &at_n(10.0)), Some(195.0));
        // One piece against two: the one repeats.
        let d = Bound::new(line(1, 0)).combine(Rat::ONE, &a, Rat::ONE);
        assert_eq!(d.pieces(), [line(8, 20), line(7, 30)]);
    }
}
