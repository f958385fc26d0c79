//! An expression instantiated for the 32 lanes of one warp.
//!
//! Each lane's value is a polynomial over the uniform atoms only: the
//! thread leaves are replaced by the lane's own `threadIdx` and lane id.
//! [`Lanes`] keeps, per uniform monomial, the 32 lanes' coefficients. The
//! difference between two lanes, `ACF_t(e) − ACF_t0(e)`, is then the
//! difference of their columns: uniform terms whose coefficients agree
//! cancel, and what is left is a number when only the constant term
//! differs.
//!
//! Operators whose operands differ between lanes are decided per lane
//! where the uniform part's congruence allows: `([b]·256 + tid) / 32` is
//! `8[b] + ⌊tid / 32⌋` and `([b]·256 + tid) % 32` is `tid % 32`. Signed
//! division and remainder are taken on non-negative values (index
//! arithmetic). What cannot be decided makes the lanes unknown.

use super::expr::*;
use crate::hw::WARP_SIZE;

pub const LANES: usize = WARP_SIZE as usize;
pub type Column = [i128; LANES];
/// How coefficients are kept: index arithmetic fits 64 bits, and the
/// evaluation's hot loops run on them (wrapping, like the IR's integers).
type Store = [i64; LANES];

fn narrow(c: &Column) -> Store {
    c.map(|x| x as i64)
}

fn widen(c: &Store) -> Column {
    c.map(i128::from)
}

/// One warp's view of an expression.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Lanes {
    /// Per monomial of uniform atoms, each lane's coefficient.
    terms: Vec<(Mono, Store)>,
    /// Lanes whose value is unknown.
    pub unknown: u32,
}

pub const ALL: u32 = u32::MAX;

impl Lanes {
    pub fn unknown() -> Lanes {
        Lanes {
            terms: Vec::new(),
            unknown: ALL,
        }
    }

    pub fn column(c: Column) -> Lanes {
        Lanes::from_terms(vec![(Mono::new(), narrow(&c))], 0)
    }

    pub fn constant(k: i128) -> Lanes {
        Lanes::from_terms(vec![(Mono::new(), [k as i64; LANES])], 0)
    }

    /// The same uniform polynomial in every lane.
    pub fn broadcast(p: &Poly) -> Lanes {
        Lanes::from_terms(
            p.terms
                .iter()
                .map(|(m, c)| (m.clone(), [*c as i64; LANES]))
                .collect(),
            0,
        )
    }

    fn from_terms(mut terms: Vec<(Mono, Store)>, unknown: u32) -> Lanes {
        if terms.len() > 1 {
            terms.sort_by(|a, b| a.0.cmp(&b.0));
            // `dedup_by` hands the later element first: fold it into the
            // earlier one it matches.
            terms.dedup_by(|later, kept| {
                if later.0 != kept.0 {
                    return false;
                }
                for (x, y) in kept.1.iter_mut().zip(&later.1) {
                    *x = x.wrapping_add(*y);
                }
                true
            });
        }
        terms.retain(|(_, c)| c.iter().any(|&x| x != 0));
        Lanes { terms, unknown }
    }

    pub fn add(&self, o: &Lanes) -> Lanes {
        let mut sum = Sum::default();
        sum.add_scaled(self, 1);
        sum.add_scaled(o, 1);
        sum.finish()
    }

    pub fn scale(&self, k: i128) -> Lanes {
        let mut sum = Sum::default();
        sum.add_scaled(self, k);
        sum.finish()
    }

    pub fn sub(&self, o: &Lanes) -> Lanes {
        let mut sum = Sum::default();
        sum.add_scaled(self, 1);
        sum.add_scaled(o, -1);
        sum.finish()
    }

    pub fn mul(&self, o: &Lanes) -> Lanes {
        let mut terms = Vec::new();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &o.terms {
                let mut m = m1.clone();
                m.extend_from_slice(m2);
                m.sort_unstable();
                let mut c = [0; LANES];
                for l in 0..LANES {
                    c[l] = c1[l].wrapping_mul(c2[l]);
                }
                terms.push((m, c));
            }
        }
        Lanes::from_terms(terms, self.unknown | o.unknown)
    }

    /// Each lane's number, when no lane of `mask` has a uniform unknown.
    pub fn concrete(&self, mask: u32) -> Option<Column> {
        if self.unknown & mask != 0 {
            return None;
        }
        let mut out = [0; LANES];
        for (m, c) in &self.terms {
            if m.is_empty() {
                out = widen(c);
            } else if lanes(mask).any(|l| c[l] != 0) {
                return None;
            }
        }
        Some(out)
    }

    /// The uniform part `U` (no constant term) and each lane's number `d`,
    /// when every non-constant term has one coefficient over `mask`.
    pub fn split(&self, mask: u32) -> Option<(Poly, Column)> {
        if self.unknown & mask != 0 || mask == 0 {
            return None;
        }
        let first = mask.trailing_zeros() as usize;
        let mut d = [0; LANES];
        let mut u = Vec::new();
        for (m, c) in &self.terms {
            if m.is_empty() {
                d = widen(c);
            } else if lanes(mask).all(|l| c[l] == c[first]) {
                u.push((m.clone(), i128::from(c[first])));
            } else {
                return None;
            }
        }
        Some((Poly::from_terms(u), d))
    }

    /// Whether every lane has the same value (a cheap test before
    /// [`Lanes::uniform`]).
    pub fn is_lane_constant(&self) -> bool {
        self.unknown == 0 && self.terms.iter().all(|(_, c)| c.iter().all(|&x| x == c[0]))
    }

    /// The one value all lanes of `mask` share, if they do.
    pub fn uniform(&self, mask: u32) -> Option<Poly> {
        if self.unknown & mask != 0 || mask == 0 {
            return None;
        }
        let first = mask.trailing_zeros() as usize;
        let same = |c: &Store| lanes(mask).all(|l| c[l] == c[first]);
        if !self.terms.iter().all(|(_, c)| same(c)) {
            return None;
        }
        Some(Poly::from_terms(
            self.terms
                .iter()
                .map(|(m, c)| (m.clone(), i128::from(c[first])))
                .collect::<Vec<_>>(),
        ))
    }

    /// Picks lane by lane: `self` where `cond[l]`, else `other`.
    pub fn pick(&self, other: &Lanes, cond: &[bool; LANES]) -> Lanes {
        let mut terms = Vec::new();
        for (m, c) in &self.terms {
            terms.push((
                m.clone(),
                std::array::from_fn(|l| if cond[l] { c[l] } else { 0 }),
            ));
        }
        for (m, c) in &other.terms {
            terms.push((
                m.clone(),
                std::array::from_fn(|l| if cond[l] { 0 } else { c[l] }),
            ));
        }
        let mut unknown = 0;
        for (l, &t) in cond.iter().enumerate() {
            let src = if t { self.unknown } else { other.unknown };
            unknown |= src & (1 << l);
        }
        Lanes::from_terms(terms, unknown)
    }
}

/// A sum of lanes built term by term and merged once at the end: the
/// evaluation of a polynomial allocates one list, not one per term.
#[derive(Default)]
pub struct Sum {
    terms: Vec<(Mono, Store)>,
    unknown: u32,
}

impl Sum {
    /// Adds `k · x`.
    pub fn add_scaled(&mut self, x: &Lanes, k: i128) {
        self.unknown |= x.unknown;
        let k = k as i64;
        self.terms.extend(
            x.terms
                .iter()
                .map(|(m, c)| (m.clone(), c.map(|v| v.wrapping_mul(k)))),
        );
    }

    /// Adds `x`, taking its terms.
    pub fn add(&mut self, x: Lanes) {
        self.unknown |= x.unknown;
        self.terms.extend(x.terms);
    }

    /// Adds the same number in every lane.
    pub fn add_constant(&mut self, k: i128) {
        self.terms.push((Mono::new(), [k as i64; LANES]));
    }

    pub fn finish(self) -> Lanes {
        Lanes::from_terms(self.terms, self.unknown)
    }
}

/// The lanes set in `mask`.
pub fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |&l| mask & (1 << l) != 0)
}

/// Applies `op` lane by lane where the operands allow it. Operands that
/// are the same in every lane are handled by the caller (the result is a
/// uniform expression).
pub fn apply(arena: &mut Arena, op: Op, args: &[&Lanes]) -> Lanes {
    let all = ALL;
    match (op, args) {
        (Op::Div(r) | Op::Rem(r), [x, k]) => {
            let Some(k) = k.uniform(all).and_then(|p| p.as_const()).filter(|&k| k > 0) else {
                return per_lane(op, args);
            };
            divide_lanes(arena, op, r, x, k)
        }
        (Op::Cmp(_), [a, b]) => per_lane(op, &[&a.sub(b), &Lanes::constant(0)]),
        (Op::Min { .. } | Op::Max { .. }, [a, b]) => match a.sub(b).concrete(all) {
            Some(d) => {
                let take_a = std::array::from_fn(|l| (d[l] < 0) == matches!(op, Op::Min { .. }));
                a.pick(b, &take_a)
            }
            None => Lanes::unknown(),
        },
        (Op::Select, [c, a, b]) => match c.concrete(all) {
            Some(c) => a.pick(b, &c.map(|x| x != 0)),
            None => Lanes::unknown(),
        },
        (Op::And | Op::Or | Op::Xor, [a, b]) => {
            bitwise(arena, op, a, b).unwrap_or_else(Lanes::unknown)
        }
        _ => per_lane(op, args),
    }
}

/// Folds lane by lane when every operand is a number in every lane.
fn per_lane(op: Op, args: &[&Lanes]) -> Lanes {
    let cols: Option<Vec<Column>> = args.iter().map(|a| a.concrete(ALL)).collect();
    let Some(cols) = cols else {
        return Lanes::unknown();
    };
    let mut out = [0; LANES];
    let mut vals = [0i128; 3];
    let n = cols.len().min(3);
    for (l, slot) in out.iter_mut().enumerate() {
        for (v, c) in vals.iter_mut().zip(&cols) {
            *v = c[l];
        }
        match fold(op, &vals[..n]) {
            Some(v) => *slot = v,
            None => return Lanes::unknown(),
        }
    }
    Lanes::column(out)
}

/// `x / k` or `x % k` for `x = U + d`: decided when `U`'s residue modulo
/// `k` is known.
fn divide_lanes(arena: &mut Arena, op: Op, r: Round, x: &Lanes, k: i128) -> Lanes {
    let Some((u, d)) = x.split(ALL) else {
        return Lanes::unknown();
    };
    let Some(rc) = arena.congruence(&u).residue_mod(k) else {
        return if u.terms.is_empty() {
            per_lane(op, &[x, &Lanes::constant(k)])
        } else {
            Lanes::unknown()
        };
    };
    let low: Column = d.map(|v| v + rc);
    let round = if u.terms.is_empty() { r } else { Round::Floor };
    match op {
        Op::Rem(_) => {
            let col = low.map(|v| remainder(v, k, round).unwrap_or(0));
            Lanes::column(col)
        }
        _ => {
            let base = u.sub(&Poly::constant(rc));
            let q = match base.div_exact(k) {
                Some(q) => q,
                None => {
                    let be = arena.intern(base);
                    let ke = arena.intern(Poly::constant(k));
                    arena.op(Op::Div(Round::Floor), vec![be, ke])
                }
            };
            let col = low.map(|v| divide(v, k, round).unwrap_or(0));
            Lanes::broadcast(&q).add(&Lanes::column(col))
        }
    }
}

/// Bit operations where at most one operand has a uniform part and the
/// other's bits stay below the part's known zero bits.
fn bitwise(arena: &Arena, op: Op, a: &Lanes, b: &Lanes) -> Option<Lanes> {
    if let (Some(x), Some(y)) = (a.concrete(ALL), b.concrete(ALL)) {
        let mut out = [0; LANES];
        for l in 0..LANES {
            out[l] = fold(op, &[x[l], y[l]])?;
        }
        return Some(Lanes::column(out));
    }
    let (big, small) = if b.concrete(ALL).is_some() {
        (a, b)
    } else {
        (b, a)
    };
    let small = small.concrete(ALL)?;
    let (u, d) = big.split(ALL)?;
    // `U = U0 + r` with `U0` a multiple of 2^k.
    let c = arena.congruence(&u);
    let k = if c.modulus == 0 {
        62
    } else {
        c.modulus.trailing_zeros().min(62)
    };
    let unit = 1i128 << k;
    let r = c.residue.rem_euclid(unit);
    let low: Column = d.map(|v| v + r);
    if low.iter().any(|&v| !(0..unit).contains(&v)) {
        return None;
    }
    let small_below = small.iter().all(|&v| (0..unit).contains(&v));
    let small_high_ones = small.iter().all(|&v| v >> k == -1);
    let high = u.sub(&Poly::constant(r));
    let mut out = [0; LANES];
    for l in 0..LANES {
        out[l] = fold(op, &[low[l], small[l]])?;
    }
    match op {
        Op::And if small_below => Some(Lanes::column(out)),
        Op::And if small_high_ones => Some(Lanes::broadcast(&high).add(&Lanes::column(out))),
        Op::Or | Op::Xor if small_below => Some(Lanes::broadcast(&high).add(&Lanes::column(out))),
        _ => None,
    }
}
