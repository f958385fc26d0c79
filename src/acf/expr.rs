//! ACF expressions: a canonical sum of products over interned atoms.
//!
//! An expression ([`Poly`]) is a sorted list of terms `coefficient ×
//! monomial`, a monomial a sorted list of atoms (a product; repeats are
//! powers). Atoms are the leaves — constants live in the coefficients —
//! and the operators that are not polynomial (division, remainder, bit
//! operations, comparisons, select, min/max), each over interned
//! expressions. Equal expressions get equal [`ExprId`]s, so `x - x` folds
//! to 0 even when `x` is `(a + b) / 4`.
//!
//! Every uniform atom carries what is known of it modulo some number
//! ([`Congruence`]): a `cudaMalloc` pointer is 0 mod 256, `blockIdx.x *
//! 256` is 0 mod 256 by its coefficient, a loop counter `tid + 256 k` has a
//! uniform part that is 0 mod 256. That is what lets the warp-level
//! reasoning decide `(blockIdx.x * 256 + threadIdx.x) / 32` per lane.

use crate::dataflow::FastMap as HashMap;
use crate::hw;
use crate::ir::entity::entity;
use crate::ir::intrinsics::Dim;
use crate::ir::{EntityVec, FuncId, GlobalId, InstId, IntPred, Value};

entity!(
    /// An interned atom of one kernel's ACF arena.
    AtomId
);
entity!(
    /// An interned expression of one kernel's ACF arena.
    ExprId
);
entity!(
    /// A calling context: a function with what its parameters are (IACF).
    /// Leaves are per context, so two calls of one function never share
    /// an unknown.
    CtxId
);

/// Where a symbolic uniform unknown `[v]` comes from.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Uniform {
    /// A kernel parameter, by position.
    Param(u32, Pointer),
    BlockIdx(Dim),
    GridDim(Dim),
    /// `blockDim` when the block shape is not known.
    BlockDim(Dim),
    /// The address of a global variable (shared arrays, `__constant__`).
    Global(GlobalId),
    /// The uniform part of a loop-header phi: its value on the iteration.
    LoopPhi(CtxId, InstId),
    /// A uniform value with no structure we use (a uniform load, a float,
    /// a call).
    Value(CtxId, Value),
    /// A non-polynomial operator over uniform expressions, made while
    /// instantiating a warp (`min(w, [n])` for warp `w`).
    Op(Op, Vec<ExprId>),
}

/// Whether a parameter is a pointer (and so `cudaMalloc`-aligned).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Pointer {
    Yes,
    No,
}

/// How a division rounds.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Round {
    /// Towards minus infinity: `lshr`, `ashr`, `udiv`, masks.
    Floor,
    /// Towards zero: `sdiv`, `srem`.
    Trunc,
}

/// The operators that are not polynomial.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Op {
    Div(Round),
    Rem(Round),
    And,
    Or,
    Xor,
    /// Shift left by a non-constant amount.
    Shl,
    /// Comparison as a 0/1 predicate.
    Cmp(IntPred),
    /// `select(c, a, b)`.
    Select,
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Atom {
    Uniform(Uniform),
    /// `threadIdx.{x,y,z}`.
    Tid(Dim),
    /// `%laneid`: the linear thread id mod 32.
    LaneId,
    /// A thread-dependent value with no structure we use (a dependent load,
    /// a float, an atomic's result). Thread-dependent exactly when the taint
    /// analysis says so.
    Opaque(CtxId, Value),
    /// A loop-header phi while its back edges are explored.
    Pending(CtxId, InstId),
    /// A non-polynomial operator over expressions with thread leaves.
    Op(Op, Vec<ExprId>),
}

/// A product of atoms, sorted; empty for the constant term.
pub type Mono = smallvec::SmallVec<[AtomId; 2]>;

/// `Σ coefficient × monomial`, sorted by monomial, no zero coefficients.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Poly {
    pub terms: Vec<(Mono, i128)>,
}

/// `x ≡ residue (mod modulus)`; modulus 0 means `x == residue` exactly,
/// modulus 1 means nothing is known.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Congruence {
    pub modulus: i128,
    pub residue: i128,
}

impl Congruence {
    pub const UNKNOWN: Congruence = Congruence {
        modulus: 1,
        residue: 0,
    };

    pub fn exact(v: i128) -> Self {
        Congruence {
            modulus: 0,
            residue: v,
        }
    }

    pub fn new(modulus: i128, residue: i128) -> Self {
        // Keep moduli small enough to multiply without overflow.
        let modulus = if modulus.abs() > 1 << 60 {
            gcd(modulus, 1 << 60)
        } else {
            modulus.abs()
        };
        let residue = if modulus == 0 {
            residue
        } else {
            residue.rem_euclid(modulus)
        };
        Congruence { modulus, residue }
    }

    fn add(self, o: Congruence) -> Congruence {
        Congruence::new(gcd(self.modulus, o.modulus), self.residue + o.residue)
    }

    fn scale(self, c: i128) -> Congruence {
        Congruence::new(
            self.modulus.saturating_mul(c),
            self.residue.saturating_mul(c),
        )
    }

    /// What holds of a value that is one of two: `self` or `o`.
    pub fn either(self, o: Congruence) -> Congruence {
        let m = gcd(gcd(self.modulus, o.modulus), self.residue - o.residue);
        Congruence::new(m, self.residue)
    }

    /// The residue modulo `m`, if this congruence decides it.
    pub fn residue_mod(self, m: i128) -> Option<i128> {
        (self.modulus == 0 || self.modulus % m == 0).then(|| self.residue.rem_euclid(m))
    }
}

pub fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// What is known of an atom.
#[derive(Copy, Clone, Debug)]
pub struct AtomFacts {
    /// Contains a per-thread leaf: may differ between lanes.
    pub thread: bool,
    /// For uniform atoms.
    pub congruence: Congruence,
    /// Bounds on its values when they are known (see [`Arena::range`]),
    /// computed once when the atom is interned: operator atoms share
    /// their operands, and walking them again on every query can take
    /// exponential time (`x = (x >> 1) + (x & 1)` unrolled).
    pub range: Option<(i128, i128)>,
}

/// The interning tables of one kernel's expressions.
#[derive(Default)]
pub struct Arena {
    atoms: EntityVec<AtomId, Atom>,
    facts: EntityVec<AtomId, AtomFacts>,
    atom_ids: HashMap<Atom, AtomId>,
    exprs: EntityVec<ExprId, Poly>,
    expr_ids: HashMap<Poly, ExprId>,
    /// Loop counters with a constant start and a constant step per
    /// iteration: `[i]` is `start + k·step` on iteration `k`.
    counters: HashMap<AtomId, (i128, i128)>,
    /// The function of each calling context.
    ctx_funcs: EntityVec<CtxId, FuncId>,
}

impl Arena {
    pub fn atom(&self, a: AtomId) -> &Atom {
        &self.atoms[a]
    }

    pub fn facts(&self, a: AtomId) -> AtomFacts {
        self.facts[a]
    }

    pub fn poly(&self, e: ExprId) -> &Poly {
        &self.exprs[e]
    }

    /// A new calling context of `f`.
    pub fn new_ctx(&mut self, f: FuncId) -> CtxId {
        self.ctx_funcs.push(f)
    }

    /// The function a context is of.
    pub fn func_of(&self, c: CtxId) -> FuncId {
        self.ctx_funcs[c]
    }

    pub fn num_ctxs(&self) -> usize {
        self.ctx_funcs.len()
    }

    /// Records that loop-counter atom `a` starts at `start` and moves by
    /// `step` each iteration.
    pub fn set_counter(&mut self, a: AtomId, start: i128, step: i128) {
        self.counters.insert(a, (start, step));
    }

    /// `(start, step)` of a loop-counter atom, when both are constants.
    /// Whether `p` is at least 0: non-negative coefficients over atoms
    /// that are (thread and block indices and sizes, pointers, counters
    /// from 0 up, remainders and quotients of such).
    pub fn non_negative(&self, p: &Poly) -> bool {
        p.terms
            .iter()
            .all(|(mono, k)| *k >= 0 && mono.iter().all(|&a| self.non_negative_atom(a)))
    }

    /// Bounds on the values `p` can take, when every atom in it has known
    /// bounds (thread and lane indices, block sizes, constants, floored
    /// quotients and remainders by constants); `None` otherwise. It decides
    /// whether a sum can leave its integer width (`tid + 0x7fffffff`).
    pub fn range(&self, p: &Poly) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (0i128, 0i128);
        for (mono, k) in &p.terms {
            let (mut mlo, mut mhi) = (1i128, 1i128);
            for &a in mono {
                let (alo, ahi) = self.atom_range(a)?;
                let products = [
                    mlo.checked_mul(alo)?,
                    mlo.checked_mul(ahi)?,
                    mhi.checked_mul(alo)?,
                    mhi.checked_mul(ahi)?,
                ];
                mlo = *products.iter().min().unwrap();
                mhi = *products.iter().max().unwrap();
            }
            let (tlo, thi) = if *k >= 0 {
                (mlo.checked_mul(*k)?, mhi.checked_mul(*k)?)
            } else {
                (mhi.checked_mul(*k)?, mlo.checked_mul(*k)?)
            };
            lo = lo.checked_add(tlo)?;
            hi = hi.checked_add(thi)?;
        }
        Some((lo, hi))
    }

    fn atom_range(&self, a: AtomId) -> Option<(i128, i128)> {
        self.facts[a].range
    }

    /// The range of a new atom, from its operands' (already interned).
    fn range_of_atom(&self, atom: &Atom) -> Option<(i128, i128)> {
        let max_dim = |d: Dim| hw::MAX_BLOCK_DIM[d.index()] as i128;
        match atom {
            Atom::Tid(d) => Some((0, max_dim(*d) - 1)),
            Atom::LaneId => Some((0, hw::WARP_SIZE as i128 - 1)),
            Atom::Uniform(Uniform::BlockDim(d)) => Some((1, max_dim(*d))),
            Atom::Uniform(Uniform::Op(op, args)) | Atom::Op(op, args) => {
                let range = |i: usize| self.range(self.poly(*args.get(i)?));
                let divisor = || self.poly(*args.get(1)?).as_const().filter(|&k| k > 0);
                let hull = |(a, b): (i128, i128), (c, d): (i128, i128)| (a.min(c), b.max(d));
                match op {
                    Op::Cmp(_) => Some((0, 1)),
                    Op::Select => Some(hull(range(1)?, range(2)?)),
                    Op::Min { signed: true } | Op::Max { signed: true } => {
                        Some(hull(range(0)?, range(1)?))
                    }
                    // Only of a known value: `x mod 2^32` is also how an
                    // unsigned operation reads an unknown `x`, whose range
                    // would then make every sum with it look like it wraps.
                    Op::Rem(Round::Floor) => {
                        let (k, (lo, hi)) = (divisor()?, range(0)?);
                        Some(if lo >= 0 && hi < k {
                            (lo, hi)
                        } else {
                            (0, k - 1)
                        })
                    }
                    Op::Div(Round::Floor) => {
                        let (k, (lo, hi)) = (divisor()?, range(0)?);
                        Some((lo.div_euclid(k), hi.div_euclid(k)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn non_negative_atom(&self, a: AtomId) -> bool {
        match self.atom(a) {
            Atom::Tid(_) | Atom::LaneId => true,
            Atom::Uniform(
                Uniform::BlockIdx(_)
                | Uniform::GridDim(_)
                | Uniform::BlockDim(_)
                | Uniform::Global(_)
                | Uniform::Param(_, Pointer::Yes),
            ) => true,
            // A counter that starts at 0 or above and counts up.
            Atom::Uniform(Uniform::LoopPhi(..)) => self
                .counter(a)
                .is_some_and(|(start, step)| start >= 0 && step >= 0),
            Atom::Uniform(Uniform::Op(op, args)) | Atom::Op(op, args) => match (op, &args[..]) {
                (Op::Rem(Round::Floor), [_, k]) => self.poly(*k).as_const().is_some_and(|k| k > 0),
                (Op::Div(Round::Floor), [x, k]) => {
                    self.non_negative(self.poly(*x))
                        && self.poly(*k).as_const().is_some_and(|k| k > 0)
                }
                _ => false,
            },
            _ => false,
        }
    }

    pub fn counter(&self, a: AtomId) -> Option<(i128, i128)> {
        self.counters.get(&a).copied()
    }

    pub fn num_atoms(&self) -> usize {
        self.atoms.len()
    }

    pub fn num_exprs(&self) -> usize {
        self.exprs.len()
    }

    pub fn intern_atom(&mut self, atom: Atom, congruence: Congruence) -> AtomId {
        if let Some(&a) = self.atom_ids.get(&atom) {
            return a;
        }
        let thread = match &atom {
            Atom::Uniform(_) => false,
            Atom::Tid(_) | Atom::LaneId | Atom::Opaque(..) | Atom::Pending(..) => true,
            Atom::Op(_, args) => args.iter().any(|&e| self.is_thread(e)),
        };
        let id = self.atoms.push(atom.clone());
        let range = self.range_of_atom(&atom);
        self.facts.push(AtomFacts {
            thread,
            congruence,
            range,
        });
        self.atom_ids.insert(atom, id);
        id
    }

    pub fn intern(&mut self, p: Poly) -> ExprId {
        if let Some(&e) = self.expr_ids.get(&p) {
            return e;
        }
        let id = self.exprs.push(p.clone());
        self.expr_ids.insert(p, id);
        id
    }

    /// Whether `e` may differ between lanes.
    pub fn is_thread(&self, e: ExprId) -> bool {
        self.exprs[e]
            .terms
            .iter()
            .any(|(m, _)| m.iter().any(|&a| self.facts[a].thread))
    }

    /// Whether atom `a` appears anywhere in `e`, operator arguments
    /// included.
    pub fn mentions(&self, e: ExprId, a: AtomId) -> bool {
        self.exprs[e].terms.iter().any(|(m, _)| {
            m.iter().any(|&b| {
                b == a
                    || match &self.atoms[b] {
                        Atom::Op(_, args) | Atom::Uniform(Uniform::Op(_, args)) => {
                            args.iter().any(|&x| self.mentions(x, a))
                        }
                        _ => false,
                    }
            })
        })
    }

    /// What is known of a uniform polynomial modulo small numbers.
    pub fn congruence(&self, p: &Poly) -> Congruence {
        let mut c = Congruence::exact(0);
        for (m, k) in &p.terms {
            let term = match m.as_slice() {
                [] => Congruence::exact(*k),
                [a] => self.facts[*a].congruence.scale(*k),
                atoms => {
                    // A product: its factors' moduli multiply when every
                    // factor is 0 modulo its own.
                    let all_zero = atoms.iter().all(|&a| {
                        let f = self.facts[a].congruence;
                        f.modulus != 0 && f.residue == 0
                    });
                    let modulus = if all_zero {
                        atoms.iter().fold(*k, |acc, &a| {
                            acc.saturating_mul(self.facts[a].congruence.modulus)
                        })
                    } else {
                        *k
                    };
                    Congruence::new(modulus, 0)
                }
            };
            c = c.add(term);
        }
        c
    }
}

impl Poly {
    pub fn constant(c: i128) -> Poly {
        if c == 0 {
            Poly::default()
        } else {
            Poly {
                terms: vec![(Mono::new(), c)],
            }
        }
    }

    pub fn atom(a: AtomId) -> Poly {
        Poly {
            terms: vec![(smallvec::smallvec![a], 1)],
        }
    }

    /// The value, when the polynomial is a constant.
    pub fn as_const(&self) -> Option<i128> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_empty() => Some(*c),
            _ => None,
        }
    }

    pub fn constant_term(&self) -> i128 {
        self.terms
            .iter()
            .find(|(m, _)| m.is_empty())
            .map_or(0, |t| t.1)
    }

    /// Builds from unsorted terms, merging equal monomials.
    pub fn from_terms(terms: impl IntoIterator<Item = (Mono, i128)>) -> Poly {
        let mut terms: Vec<(Mono, i128)> = terms
            .into_iter()
            .map(|(mut m, c)| {
                m.sort_unstable();
                (m, c)
            })
            .collect();
        if terms.len() > 1 {
            terms.sort_by(|a, b| a.0.cmp(&b.0));
            terms.dedup_by(|later, kept| {
                let same = later.0 == kept.0;
                if same {
                    kept.1 = kept.1.wrapping_add(later.1);
                }
                same
            });
        }
        terms.retain(|t| t.1 != 0);
        Poly { terms }
    }

    pub fn add(&self, o: &Poly) -> Poly {
        Poly::from_terms(self.terms.iter().chain(&o.terms).cloned())
    }

    pub fn scale(&self, k: i128) -> Poly {
        Poly::from_terms(
            self.terms
                .iter()
                .map(|(m, c)| (m.clone(), c.wrapping_mul(k))),
        )
    }

    pub fn sub(&self, o: &Poly) -> Poly {
        self.add(&o.scale(-1))
    }

    pub fn mul(&self, o: &Poly) -> Poly {
        let mut terms = Vec::with_capacity(self.terms.len() * o.terms.len());
        for (m1, c1) in &self.terms {
            for (m2, c2) in &o.terms {
                let mut m = m1.clone();
                m.extend_from_slice(m2);
                terms.push((m, c1.wrapping_mul(*c2)));
            }
        }
        Poly::from_terms(terms)
    }

    /// Exact division by `k`, when every coefficient is a multiple of it.
    pub fn div_exact(&self, k: i128) -> Option<Poly> {
        (k != 0 && self.terms.iter().all(|(_, c)| c % k == 0)).then(|| Poly {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), c / k)).collect(),
        })
    }

    /// Number of atom occurrences: the size the budgets count.
    pub fn size(&self) -> usize {
        self.terms.iter().map(|(m, _)| m.len() + 1).sum()
    }
}

/// Evaluates a comparison on two integers.
pub fn compare(pred: IntPred, a: i128, b: i128) -> bool {
    use IntPred::*;
    match pred {
        Eq => a == b,
        Ne => a != b,
        Slt | Ult => a < b,
        Sle | Ule => a <= b,
        Sgt | Ugt => a > b,
        Sge | Uge => a >= b,
    }
}

/// Division rounding as `round` says.
pub fn divide(a: i128, b: i128, round: Round) -> Option<i128> {
    if b == 0 {
        return None;
    }
    Some(match round {
        Round::Floor => a.div_euclid(b) - if b < 0 && a.rem_euclid(b) != 0 { 1 } else { 0 },
        Round::Trunc => a / b,
    })
}

/// The remainder matching [`divide`].
pub fn remainder(a: i128, b: i128, round: Round) -> Option<i128> {
    let q = divide(a, b, round)?;
    Some(a - q * b)
}

/// Applies a binary operator to constants.
#[inline]
pub fn fold(op: Op, args: &[i128]) -> Option<i128> {
    Some(match (op, args) {
        (Op::Div(r), [a, b]) => divide(*a, *b, r)?,
        (Op::Rem(r), [a, b]) => remainder(*a, *b, r)?,
        (Op::And, [a, b]) => a & b,
        (Op::Or, [a, b]) => a | b,
        (Op::Xor, [a, b]) => a ^ b,
        (Op::Shl, [a, b]) => {
            if !(0..64).contains(b) {
                return None;
            }
            a.checked_shl(*b as u32)?
        }
        (Op::Cmp(p), [a, b]) => compare(p, *a, *b) as i128,
        (Op::Select, [c, a, b]) => {
            if *c != 0 {
                *a
            } else {
                *b
            }
        }
        (Op::Min { .. }, [a, b]) => *a.min(b),
        (Op::Max { .. }, [a, b]) => *a.max(b),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomials_are_canonical() {
        let mut ar = Arena::default();
        let x = ar.intern_atom(Atom::Tid(Dim::X), Congruence::UNKNOWN);
        let n = ar.intern_atom(
            Atom::Uniform(Uniform::Param(0, Pointer::No)),
            Congruence::UNKNOWN,
        );
        // (x + n)(x - n) = x² - n², whatever the order of the factors.
        let px = Poly::atom(x);
        let pn = Poly::atom(n);
        let a = px.add(&pn).mul(&px.sub(&pn));
        let b = px.mul(&px).sub(&pn.mul(&pn));
        assert_eq!(a, b);
        assert_eq!(ar.intern(a), ar.intern(b));
        assert_eq!(px.sub(&px), Poly::constant(0));
        assert_eq!(
            Poly::constant(3).add(&Poly::constant(4)).as_const(),
            Some(7)
        );
    }

    #[test]
    fn congruences_follow_coefficients() {
        let mut ar = Arena::default();
        let b = ar.intern_atom(
            Atom::Uniform(Uniform::BlockIdx(Dim::X)),
            Congruence::UNKNOWN,
        );
        let p = ar.intern_atom(
            Atom::Uniform(Uniform::Param(0, Pointer::Yes)),
            Congruence::new(256, 0),
        );
        // 256 b + 5 ≡ 5 (mod 256); p + 4 · 256 b ≡ 0 (mod 256).
        let e = Poly::atom(b).scale(256).add(&Poly::constant(5));
        assert_eq!(ar.congruence(&e), Congruence::new(256, 5));
        let addr = Poly::atom(p).add(&Poly::atom(b).scale(1024));
        assert_eq!(ar.congruence(&addr).residue_mod(32), Some(0));
        // 6 b + 3 ≡ 3 (mod 6): 3 mod 2 is decided, mod 4 is not.
        let odd = Poly::atom(b).scale(6).add(&Poly::constant(3));
        assert_eq!(ar.congruence(&odd).residue_mod(2), Some(1));
        assert_eq!(ar.congruence(&odd).residue_mod(4), None);
    }

    #[test]
    fn rounding() {
        assert_eq!(divide(-7, 2, Round::Floor), Some(-4));
        assert_eq!(divide(-7, 2, Round::Trunc), Some(-3));
        assert_eq!(remainder(-7, 2, Round::Floor), Some(1));
        assert_eq!(remainder(-7, 2, Round::Trunc), Some(-1));
        assert_eq!(divide(7, 0, Round::Floor), None);
    }
}
