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
///
/// The constant term is kept apart from the others, inline: most
/// instantiated expressions are just a number per lane (anything of
/// `threadIdx` and constants), and those then allocate nothing.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Lanes {
    /// Each lane's constant term (zero where there is none).
    konst: Store,
    /// Per non-empty monomial of uniform atoms, each lane's coefficient:
    /// sorted by monomial, no column all zero.
    terms: Vec<(Mono, Store)>,
    /// Lanes whose value is unknown.
    pub unknown: u32,
}

pub const ALL: u32 = u32::MAX;

impl Lanes {
    pub fn unknown() -> Lanes {
        Lanes {
            unknown: ALL,
            ..Lanes::default()
        }
    }

    pub fn column(c: Column) -> Lanes {
        Lanes::numbers(narrow(&c))
    }

    /// Each lane's number, as stored.
    fn numbers(konst: Store) -> Lanes {
        Lanes {
            konst,
            terms: Vec::new(),
            unknown: 0,
        }
    }

    pub fn constant(k: i128) -> Lanes {
        Lanes::numbers([k as i64; LANES])
    }

    /// The same uniform polynomial in every lane.
    pub fn broadcast(p: &Poly) -> Lanes {
        let mut sum = Sum::default();
        for (m, c) in &p.terms {
            sum.push(m, [*c as i64; LANES]);
        }
        sum.finish()
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
        let times =
            |a: &Store, b: &Store| -> Store { std::array::from_fn(|l| a[l].wrapping_mul(b[l])) };
        let mut sum = Sum {
            konst: times(&self.konst, &o.konst),
            unknown: self.unknown | o.unknown,
            ..Sum::default()
        };
        for (m, c) in &o.terms {
            sum.push(m, times(&self.konst, c));
        }
        for (m1, c1) in &self.terms {
            sum.push(m1, times(c1, &o.konst));
            for (m2, c2) in &o.terms {
                let mut m = m1.clone();
                m.extend_from_slice(m2);
                m.sort_unstable();
                sum.terms.push((m, times(c1, c2)));
            }
        }
        sum.finish()
    }

    /// Whether no lane of `mask` is unknown or has a uniform term.
    fn is_concrete(&self, mask: u32) -> bool {
        self.unknown & mask == 0
            && self
                .terms
                .iter()
                .all(|(_, c)| lanes(mask).all(|l| c[l] == 0))
    }

    /// Each lane's number, when no lane of `mask` has a uniform unknown.
    pub fn concrete(&self, mask: u32) -> Option<Column> {
        self.is_concrete(mask).then(|| widen(&self.konst))
    }

    /// [`Lanes::concrete`] over every lane, as stored.
    fn numbers_of_all(&self) -> Option<&Store> {
        (self.unknown == 0 && self.terms.is_empty()).then_some(&self.konst)
    }

    /// The uniform part `U` (no constant term) and each lane's number `d`,
    /// when every non-constant term has one coefficient over `mask`.
    pub fn split(&self, mask: u32) -> Option<(Poly, Column)> {
        if self.unknown & mask != 0 || mask == 0 {
            return None;
        }
        let first = mask.trailing_zeros() as usize;
        let mut u = Vec::with_capacity(self.terms.len());
        for (m, c) in &self.terms {
            if !same_over(c, mask) {
                return None;
            }
            u.push((m.clone(), i128::from(c[first])));
        }
        Some((Poly::from_terms(u), widen(&self.konst)))
    }

    /// As [`Lanes::split`], where one uniform atom `a` alone has
    /// coefficients that differ between the lanes of `mask`: `(U, d, a,
    /// c)` with each lane's value `U + d[l] + a·c[l]` (`a[r * n + k]`
    /// with `r` from `threadIdx.x`). The figures of such an address are
    /// functions of `a`.
    pub fn split_scaled(&self, mask: u32) -> Option<(Poly, Column, AtomId, Column)> {
        if self.unknown & mask != 0 || mask == 0 {
            return None;
        }
        let first = mask.trailing_zeros() as usize;
        let mut u = Vec::with_capacity(self.terms.len());
        let mut scaled = None;
        for (m, c) in &self.terms {
            if same_over(c, mask) {
                u.push((m.clone(), i128::from(c[first])));
            } else if m.len() == 1 && scaled.is_none() {
                scaled = Some((m[0], widen(c)));
            } else {
                return None;
            }
        }
        let (a, c) = scaled?;
        Some((Poly::from_terms(u), widen(&self.konst), a, c))
    }

    /// Whether every lane has the same value (a cheap test before
    /// [`Lanes::uniform`]).
    pub fn is_lane_constant(&self) -> bool {
        self.unknown == 0
            && same_over(&self.konst, ALL)
            && self.terms.iter().all(|(_, c)| same_over(c, ALL))
    }

    /// Whether every lane of `mask` has the same value: whether
    /// [`Lanes::uniform`] gives one.
    pub fn is_uniform(&self, mask: u32) -> bool {
        self.unknown & mask == 0
            && mask != 0
            && same_over(&self.konst, mask)
            && self.terms.iter().all(|(_, c)| same_over(c, mask))
    }

    /// The one value all lanes of `mask` share, if they do.
    pub fn uniform(&self, mask: u32) -> Option<Poly> {
        if !self.is_uniform(mask) {
            return None;
        }
        let first = mask.trailing_zeros() as usize;
        let konst = (Mono::new(), i128::from(self.konst[first]));
        let rest = self
            .terms
            .iter()
            .map(|(m, c)| (m.clone(), i128::from(c[first])));
        Some(Poly::from_terms(std::iter::once(konst).chain(rest)))
    }

    /// [`Lanes::uniform`] when it is a constant.
    pub fn uniform_constant(&self, mask: u32) -> Option<i128> {
        let first = mask.trailing_zeros() as usize;
        (self.is_uniform(mask) && self.terms.iter().all(|(_, c)| c[first] == 0))
            .then(|| i128::from(self.konst[first]))
    }

    /// Picks lane by lane: `self` where `cond[l]`, else `other`.
    pub fn pick(&self, other: &Lanes, cond: &[bool; LANES]) -> Lanes {
        let choose = |a: &Store, b: &Store| -> Store {
            std::array::from_fn(|l| if cond[l] { a[l] } else { b[l] })
        };
        let zero = [0; LANES];
        let mut unknown = 0;
        for (l, &t) in cond.iter().enumerate() {
            let src = if t { self.unknown } else { other.unknown };
            unknown |= src & (1 << l);
        }
        let mut sum = Sum {
            konst: choose(&self.konst, &other.konst),
            unknown,
            ..Sum::default()
        };
        for (m, c) in &self.terms {
            sum.push(m, choose(c, &zero));
        }
        for (m, c) in &other.terms {
            sum.push(m, choose(&zero, c));
        }
        sum.finish()
    }
}

/// Whether the lanes of `mask` hold one coefficient.
fn same_over(c: &Store, mask: u32) -> bool {
    if mask == 0 {
        return true;
    }
    if mask == ALL {
        return c.iter().all(|&x| x == c[0]);
    }
    let first = c[mask.trailing_zeros() as usize];
    lanes(mask).all(|l| c[l] == first)
}

/// A sum of lanes built term by term and merged once at the end: the
/// evaluation of a polynomial allocates one list, not one per term, and
/// none when it has only constant terms.
#[derive(Default)]
pub struct Sum {
    konst: Store,
    terms: Vec<(Mono, Store)>,
    unknown: u32,
}

impl Sum {
    /// Adds `k · x`.
    pub fn add_scaled(&mut self, x: &Lanes, k: i128) {
        self.unknown |= x.unknown;
        let k = k as i64;
        for (s, v) in self.konst.iter_mut().zip(&x.konst) {
            *s = s.wrapping_add(v.wrapping_mul(k));
        }
        self.terms.extend(
            x.terms
                .iter()
                .map(|(m, c)| (m.clone(), c.map(|v| v.wrapping_mul(k)))),
        );
    }

    /// Adds `x`, taking its terms.
    pub fn add(&mut self, x: Lanes) {
        self.unknown |= x.unknown;
        for (s, v) in self.konst.iter_mut().zip(&x.konst) {
            *s = s.wrapping_add(*v);
        }
        self.terms.extend(x.terms);
    }

    /// Adds the same number in every lane.
    pub fn add_constant(&mut self, k: i128) {
        let k = k as i64;
        for s in &mut self.konst {
            *s = s.wrapping_add(k);
        }
    }

    /// Adds the term `c · m`, the constant one when `m` is empty.
    fn push(&mut self, m: &Mono, c: Store) {
        if m.is_empty() {
            for (s, v) in self.konst.iter_mut().zip(&c) {
                *s = s.wrapping_add(*v);
            }
        } else {
            self.terms.push((m.clone(), c));
        }
    }

    pub fn finish(self) -> Lanes {
        let Sum {
            konst,
            mut terms,
            unknown,
        } = self;
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
        Lanes {
            konst,
            terms,
            unknown,
        }
    }
}

/// The lanes set in `mask`, lowest first.
pub fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        (rest != 0).then(|| {
            let l = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            l
        })
    })
}

/// Applies `op` lane by lane where the operands allow it. Operands that
/// are the same in every lane are handled by the caller (the result is a
/// uniform expression).
pub fn apply(arena: &mut Arena, op: Op, args: &[&Lanes]) -> Lanes {
    let all = ALL;
    match (op, args) {
        (Op::Div(r) | Op::Rem(r), [x, k]) => {
            let Some(k) = k.uniform_constant(all).filter(|&k| k > 0) else {
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
    let cols: Option<smallvec::SmallVec<[&Store; 3]>> =
        args.iter().map(|a| a.numbers_of_all()).collect();
    cols.and_then(|cols| fold_lanes(op, &cols))
        .map_or_else(Lanes::unknown, Lanes::numbers)
}

/// [`fold`] in every lane, `None` if it fails in one. Each operator gets
/// its own loop (the `fold` inside is inlined with the operator known),
/// so the match on the operator runs once per warp, not once per lane.
fn fold_lanes(op: Op, cols: &[&Store]) -> Option<Store> {
    match (op, cols) {
        (Op::Cmp(p), [a, b]) => each2(a, b, |x, y| fold(Op::Cmp(p), &[x, y])),
        (Op::Div(r), [a, b]) => each2(a, b, |x, y| fold(Op::Div(r), &[x, y])),
        (Op::Rem(r), [a, b]) => each2(a, b, |x, y| fold(Op::Rem(r), &[x, y])),
        (Op::And, [a, b]) => each2(a, b, |x, y| fold(Op::And, &[x, y])),
        (Op::Select, [c, a, b]) => {
            let mut out = [0; LANES];
            for (l, slot) in out.iter_mut().enumerate() {
                let v = [c[l], a[l], b[l]].map(i128::from);
                *slot = fold(Op::Select, &v)? as i64;
            }
            Some(out)
        }
        _ => {
            let mut out = [0; LANES];
            let n = cols.len().min(3);
            let mut vals = [0i128; 3];
            for (l, slot) in out.iter_mut().enumerate() {
                for (v, c) in vals.iter_mut().zip(cols) {
                    *v = i128::from(c[l]);
                }
                *slot = fold(op, &vals[..n])? as i64;
            }
            Some(out)
        }
    }
}

/// `f` on each lane's pair of numbers (as `i128`, like the IR's constant
/// folding), narrowed back to the store.
#[inline(always)]
fn each2(a: &Store, b: &Store, f: impl Fn(i128, i128) -> Option<i128>) -> Option<Store> {
    let mut out = [0; LANES];
    for (l, slot) in out.iter_mut().enumerate() {
        *slot = f(i128::from(a[l]), i128::from(b[l]))? as i64;
    }
    Some(out)
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
    // Truncation is flooring on non-negative values only: with a uniform
    // part, that needs `U >= 0` and every lane's `d >= 0`; `(-64n - t) %
    // 32` is `-(t % 32)`, not `32 - t % 32`, and `n`'s sign is unknown.
    let round = if u.terms.is_empty() { r } else { Round::Floor };
    if r == Round::Trunc
        && !u.terms.is_empty()
        && !(arena.non_negative(&u) && d.iter().all(|&v| v >= 0))
    {
        return Lanes::unknown();
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `4·tid·n + 4·k` over lanes with tid = lane: the `n` term's column
    /// differs between lanes, the `k` term's does not.
    #[test]
    fn one_lane_varying_atom_is_split_scaled() {
        let mut ar = Arena::default();
        let n = ar.intern_atom(
            Atom::Uniform(Uniform::Param(0, Pointer::No)),
            Congruence::UNKNOWN,
        );
        let k = ar.intern_atom(
            Atom::Uniform(Uniform::Param(1, Pointer::No)),
            Congruence::UNKNOWN,
        );
        let tid = Lanes::column(std::array::from_fn(|l| l as i128));
        let addr = tid
            .mul(&Lanes::broadcast(&Poly::atom(n)))
            .add(&Lanes::broadcast(&Poly::atom(k)))
            .scale(4);
        assert!(addr.split(ALL).is_none(), "the n column varies");
        let (u, d, a, c) = addr.split_scaled(ALL).unwrap();
        assert_eq!(a, n);
        assert_eq!(u, Poly::atom(k).scale(4));
        assert!(d.iter().all(|&x| x == 0));
        assert_eq!(c[5], 20, "4 bytes per unit of n per lane");
        // Over one lane the n term is one value: a plain split.
        assert!(addr.split(1 << 5).is_some());
        // Two varying atoms are no function of one.
        let both = addr.add(&tid.mul(&Lanes::broadcast(&Poly::atom(k))));
        assert!(both.split_scaled(ALL).is_none());
    }
}
