//! Warps of a block, expressions instantiated per warp, branch conditions
//! per lane, and which lanes can be active in each block.
//!
//! A warp is 32 consecutive linear thread ids (`x + y·X + z·X·Y`) of the
//! block; the last one may be partial.
//!
//! **Active lanes.** For each warp and block, `may` holds the lanes that
//! can be active when the block runs and `must` those that are active
//! every time it runs (given that it runs at all). A block with no control
//! dependence runs with every lane. Otherwise each controlling branch
//! passes on its own `may`/`must` restricted to the lanes its condition
//! sends that way: all of them for a uniform condition, exactly those for
//! a condition known per lane, and (for `must`) none for anything else. A
//! block with several controlling edges gets the union for `may` and
//! nothing for `must`. Loops make this a fixpoint: `may` only grows from
//! empty and `must` only shrinks from the full warp. Inside a loop whose
//! exit can split the warp, lanes drop out over the iterations, so no lane
//! is `must` there.

use super::expr::*;
use super::lanes::{self, Column, Lanes, ALL, LANES};
use crate::ir::{BlockId, Function, InstKind, IntPred};
use std::cell::RefCell;
use std::sync::Arc;

/// One warp of the block.
#[derive(Clone, Debug)]
pub struct Warp {
    /// Warp index within the block.
    pub index: u32,
    /// Each lane's `(x, y, z)`.
    pub tid: [[u32; 3]; LANES],
    /// Lanes that exist (all but the tail of a partial last warp).
    pub exists: u32,
}

/// The warps of a block of shape `block`.
pub fn warps(block: [u32; 3]) -> Vec<Warp> {
    let [bx, by, bz] = block.map(|d| d.max(1));
    let threads = u64::from(bx) * u64::from(by) * u64::from(bz);
    let count = threads.div_ceil(LANES as u64);
    (0..count)
        .map(|w| {
            let mut tid = [[0; 3]; LANES];
            let mut exists = 0u32;
            for (l, t) in tid.iter_mut().enumerate() {
                let linear = w * LANES as u64 + l as u64;
                let x = linear % u64::from(bx);
                let y = (linear / u64::from(bx)) % u64::from(by);
                let z = linear / (u64::from(bx) * u64::from(by));
                *t = [x as u32, y as u32, z as u32];
                if linear < threads {
                    exists |= 1 << l;
                }
            }
            Warp {
                index: w as u32,
                tid,
                exists,
            }
        })
        .collect()
}

/// What the warps of a block share: the lanes of every expression that
/// comes out the same in each warp, worked out once. An expression's lanes
/// depend on the warp only through `threadIdx`, and only through a
/// dimension whose column differs between warps (`threadIdx.x` of a
/// `32 × 8` block is the same `0..32` in all of them).
pub struct Shared {
    /// Per dimension, whether every warp has the same `threadIdx` column.
    same_tid: [bool; 3],
    /// Per atom: unknown yet, or whether its lanes differ between warps.
    varies: Vec<Option<bool>>,
    memo: Dense<ExprId>,
    atoms: Dense<AtomId>,
}

impl Shared {
    pub fn new(warps: &[Warp], arena: &Arena) -> RefCell<Self> {
        let same_tid = std::array::from_fn(|k| {
            warps
                .iter()
                .all(|w| (0..LANES).all(|l| w.tid[l][k] == warps[0].tid[l][k]))
        });
        RefCell::new(Shared {
            same_tid,
            varies: vec![None; arena.num_atoms()],
            memo: Dense::with_len(arena.num_exprs()),
            atoms: Dense::with_len(arena.num_atoms()),
        })
    }

    /// Whether the lanes of `e` may differ between warps.
    fn expr_varies(&mut self, arena: &Arena, e: ExprId) -> bool {
        arena
            .poly(e)
            .terms
            .iter()
            .any(|(m, _)| m.iter().any(|&a| self.atom_varies(arena, a)))
    }

    fn atom_varies(&mut self, arena: &Arena, a: AtomId) -> bool {
        if let Some(&Some(v)) = self.varies.get(a.index()) {
            return v;
        }
        let v = match arena.atom(a) {
            Atom::Tid(d) => !self.same_tid[super::build::dim_index(*d)],
            Atom::Op(_, args) => args.iter().any(|&x| self.expr_varies(arena, x)),
            Atom::Uniform(_) | Atom::LaneId | Atom::Opaque(..) | Atom::Pending(..) => false,
        };
        if self.varies.len() <= a.index() {
            self.varies.resize(a.index() + 1, None);
        }
        self.varies[a.index()] = Some(v);
        v
    }
}

/// Lanes by dense id, filled on demand.
pub struct Dense<K> {
    slots: Vec<Option<Arc<Lanes>>>,
    key: std::marker::PhantomData<K>,
}

impl<K> Default for Dense<K> {
    fn default() -> Self {
        Dense::with_len(0)
    }
}

impl<K> Dense<K> {
    /// Room for the ids below `n` (more are added as they come).
    fn with_len(n: usize) -> Self {
        Dense {
            slots: vec![None; n],
            key: std::marker::PhantomData,
        }
    }
}

impl<K: crate::ir::entity::Entity> Dense<K> {
    pub fn get(&self, k: K) -> Option<&Arc<Lanes>> {
        self.slots.get(k.index()).and_then(Option::as_ref)
    }

    fn insert(&mut self, k: K, l: Arc<Lanes>) {
        if self.slots.len() <= k.index() {
            self.slots.resize(k.index() + 1, None);
        }
        self.slots[k.index()] = Some(l);
    }
}

/// Instantiates expressions for one warp, memoised; what is the same in
/// every warp goes to (and comes from) the block's [`Shared`] tables.
pub struct Evaluator<'w> {
    warp: &'w Warp,
    shared: &'w RefCell<Shared>,
    memo: Dense<ExprId>,
    atoms: Dense<AtomId>,
}

impl<'w> Evaluator<'w> {
    pub fn new(warp: &'w Warp, shared: &'w RefCell<Shared>, arena: &Arena) -> Self {
        Evaluator {
            warp,
            shared,
            memo: Dense::with_len(arena.num_exprs()),
            atoms: Dense::with_len(arena.num_atoms()),
        }
    }

    /// The lanes of every expression evaluated so far.
    pub fn into_values(self) -> Dense<ExprId> {
        self.memo
    }

    /// Forgets the lanes of every expression `keep` does not name, and of
    /// every atom: once a warp's sites are evaluated, what is left of the
    /// expressions they were built from would only hold memory (32 warps
    /// of a 1024-thread block, each with the lanes of every
    /// subexpression). What is needed again is worked out again.
    pub fn keep_only(&mut self, keep: &[bool]) {
        for (i, slot) in self.memo.slots.iter_mut().enumerate() {
            if !keep.get(i).copied().unwrap_or(false) {
                *slot = None;
            }
        }
        self.atoms = Dense::default();
    }

    pub fn eval(&mut self, arena: &mut Arena, e: ExprId) -> Arc<Lanes> {
        if let Some(l) = self.memo.get(e) {
            return l.clone();
        }
        let l = {
            let mut shared = self.shared.borrow_mut();
            if shared.expr_varies(arena, e) {
                None
            } else {
                Some(shared.memo.get(e).cloned())
            }
        };
        let l = match l {
            // The same in every warp, and done.
            Some(Some(l)) => l,
            // The same in every warp: the first to need it works it out.
            Some(None) => {
                let l = self.compute(arena, e);
                self.shared.borrow_mut().memo.insert(e, l.clone());
                l
            }
            None => self.compute(arena, e),
        };
        self.memo.insert(e, l.clone());
        l
    }

    fn compute(&mut self, arena: &mut Arena, e: ExprId) -> Arc<Lanes> {
        if !arena.is_thread(e) {
            // Uniform: the same polynomial in every lane, nothing to
            // instantiate.
            return Arc::new(Lanes::broadcast(arena.poly(e)));
        }
        if let [(mono, 1)] = arena.poly(e).terms.as_slice() {
            if let [a] = mono.as_slice() {
                // The expression is one atom: share its lanes.
                return self.atom(arena, *a);
            }
        }
        let terms: smallvec::SmallVec<[(Mono, i128); 4]> =
            arena.poly(e).terms.iter().cloned().collect();
        let mut sum = lanes::Sum::default();
        for (mono, c) in terms {
            match mono.as_slice() {
                [] => sum.add_constant(c),
                [a] => {
                    let x = self.atom(arena, *a);
                    sum.add_scaled(&x, c);
                }
                _ => {
                    let mut prod = Lanes::constant(c);
                    for a in mono {
                        let x = self.atom(arena, a);
                        prod = prod.mul(&x);
                    }
                    sum.add(prod);
                }
            }
        }
        Arc::new(sum.finish())
    }

    fn atom(&mut self, arena: &mut Arena, a: AtomId) -> Arc<Lanes> {
        if let Some(l) = self.atoms.get(a) {
            return l.clone();
        }
        let l = {
            let mut shared = self.shared.borrow_mut();
            if shared.atom_varies(arena, a) {
                None
            } else {
                Some(shared.atoms.get(a).cloned())
            }
        };
        let l = match l {
            Some(Some(l)) => l,
            Some(None) => {
                let l = Arc::new(self.compute_atom(arena, a));
                self.shared.borrow_mut().atoms.insert(a, l.clone());
                l
            }
            None => Arc::new(self.compute_atom(arena, a)),
        };
        self.atoms.insert(a, l.clone());
        l
    }

    fn compute_atom(&mut self, arena: &mut Arena, a: AtomId) -> Lanes {
        let (op, args): (Op, smallvec::SmallVec<[ExprId; 3]>) = match arena.atom(a) {
            Atom::Uniform(_) => return Lanes::broadcast(&Poly::atom(a)),
            Atom::Tid(d) => {
                let k = super::build::dim_index(*d);
                return Lanes::column(std::array::from_fn(|l| self.warp.tid[l][k].into()));
            }
            Atom::LaneId => return Lanes::column(std::array::from_fn(|l| l as i128)),
            Atom::Opaque(..) | Atom::Pending(..) => return Lanes::unknown(),
            Atom::Op(op, args) => (*op, args.iter().copied().collect()),
        };
        let vals: smallvec::SmallVec<[Arc<Lanes>; 3]> =
            args.iter().map(|&x| self.eval(arena, x)).collect();
        let uniform: Option<Vec<Poly>> = if vals.iter().all(|v| v.is_lane_constant()) {
            vals.iter().map(|v| v.uniform(ALL)).collect()
        } else {
            None
        };
        match uniform {
            Some(polys) => {
                let ids = polys.into_iter().map(|p| arena.intern(p)).collect();
                Lanes::broadcast(&arena.op(op, ids))
            }
            None => {
                let refs: smallvec::SmallVec<[&Lanes; 3]> = vals.iter().map(|v| &**v).collect();
                lanes::apply(arena, op, &refs)
            }
        }
    }
}

/// What a branch condition does in one warp.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// One value in every lane (not necessarily known).
    Uniform,
    /// Each lane's successor, by position in the terminator's list.
    PerLane([u8; LANES]),
    /// A comparison `U + d[l]  pred  0` with `U` a uniform unknown that
    /// can split the lanes: for the thresholds `T = -U` in `splits`.
    Threshold {
        pred: IntPred,
        u: Poly,
        d: Box<Column>,
        /// The integer ranges of `T` that split the lanes of `may`, when
        /// `U` has one value in every execution of the branch (no atom of
        /// it changes in a loop around the branch), or one value modulo
        /// `period`; `None` otherwise.
        splits: Option<Vec<(i128, i128)>>,
        /// What the parts of `U` that change in a loop are a multiple of
        /// (a grid-stride loop's `blockDim.x * gridDim.x`), when they are.
        period: Option<i128>,
        /// No other warp of the block has a splitting threshold in common
        /// with this one: one value of `U` splits at most one warp, and the
        /// others go one way as a whole.
        bounded: bool,
        /// The lanes that can take each successor: all, unless a uniform
        /// guard beside the test bounds `T` where the test decides (`m <
        /// 16 && t <= m` sends lanes 0..15 only to `true`).
        reach: [u32; 2],
    },
    /// One side of `a && b` or `a || b` is uniform, the other per lane:
    /// each lane goes to successor `t[l]`, unless the uniform side sends
    /// every lane to `all_to` (false for `&&`, true for `||`).
    Gated {
        t: [u8; LANES],
        all_to: u8,
    },
    /// Thresholds joined by `&&` (`and`) or `||`, each a
    /// [`Cond::Threshold`]: `IN_RANGE(x, lo, hi)`, a stencil's halo
    /// bounds. A warp the conjunction splits is one some part splits, so
    /// where each part splits at most one warp of the block (`bounded`),
    /// the whole splits at most as many warps as it has parts.
    Thresholds {
        parts: Vec<Cond>,
        and: bool,
        /// Each lane's value of the parts known per lane (`t >= 1` in
        /// `t >= 1 && t <= hi`), joined the same way; `None` when there
        /// are none.
        lanes: Option<[bool; LANES]>,
    },
    Unknown,
}

impl Cond {
    /// The lanes of `(may, must)` at the branch that take successor `s`:
    /// all of them for a uniform condition, exactly those it names for a
    /// per-lane one; a gated one sends exactly its lanes to the side the
    /// uniform part cannot force, and may send all to the other. Anything
    /// else may send any lane, none surely.
    pub fn edge(&self, s: usize, (may, must): (u32, u32)) -> (u32, u32) {
        let to = |t: &[u8; LANES]| {
            lanes::lanes(ALL)
                .filter(|&l| t[l] as usize == s)
                .fold(0u32, |m, l| m | 1 << l)
        };
        match self {
            Cond::Uniform => (may, must),
            Cond::PerLane(t) => (may & to(t), must & to(t)),
            Cond::Gated { t, all_to } if usize::from(*all_to) == s => (may, must & to(t)),
            Cond::Gated { t, .. } => (may & to(t), must & to(t)),
            Cond::Threshold { .. } | Cond::Thresholds { .. } => (may & self.reach_of(s), 0),
            Cond::Unknown => (may, 0),
        }
    }

    /// Lanes of `mask` sent to successor `s`: exact, or `None` if unknown.
    pub fn lanes_to(&self, s: usize, mask: u32) -> Option<u32> {
        match self {
            Cond::PerLane(t) => Some(
                lanes::lanes(mask)
                    .filter(|&l| t[l] as usize == s)
                    .fold(0, |m, l| m | 1 << l),
            ),
            _ => None,
        }
    }
}

impl Cond {
    /// The lanes that can take successor `s` (see `reach`).
    pub fn reach_of(&self, s: usize) -> u32 {
        match self {
            Cond::Threshold { reach, .. } => reach.get(s).copied().unwrap_or(ALL),
            // Successor 0 is `true`: every part holds (`&&`) or one does
            // (`||`); successor 1 the other way round.
            Cond::Thresholds { parts, and, lanes } => {
                let reaches = parts.iter().map(|p| p.reach_of(s));
                // The lanes whose known part does not decide for the
                // other successor.
                let known = lanes.map_or(ALL, |t| {
                    (0..LANES)
                        .filter(|&l| t[l] == (s == 0))
                        .fold(0u32, |m, l| m | 1 << l)
                });
                if (s == 0) == *and {
                    reaches.fold(known, |m, r| m & r)
                } else {
                    reaches.fold(0, |m, r| m | r) | known
                }
            }
            _ => ALL,
        }
    }

    /// Whether every part of the condition is a threshold that splits at
    /// most one warp of the block, and how many parts there are.
    pub fn bounded_parts(&self) -> Option<u32> {
        match self {
            Cond::Threshold { bounded: true, .. } => Some(1),
            Cond::Thresholds { parts, .. } => parts
                .iter()
                .map(|p| matches!(p, Cond::Threshold { bounded: true, .. }).then_some(1))
                .sum(),
            _ => None,
        }
    }
}

/// A uniform comparison beside a per-lane test in `a && b` (`a || b`):
/// where the test decides, it holds (fails), so `P` lies in `[lo, hi]`;
/// `succ` is the successor the test then sends its passing (failing)
/// lanes to, 0 (1).
pub struct Guard {
    p: Poly,
    lo: i128,
    hi: i128,
    succ: usize,
}

/// What a uniform comparison `P pred K` (or `K pred P`) says of `P` when it
/// holds (`holds`) or fails.
fn uniform_range(arena: &Arena, e: ExprId, holds: bool) -> Option<Guard> {
    const WIDE: i128 = 1 << 64;
    let [(mono, 1)] = arena.poly(e).terms.as_slice() else {
        return None;
    };
    let [atom] = mono.as_slice() else { return None };
    let Atom::Uniform(Uniform::Op(Op::Cmp(pred), args)) = arena.atom(*atom) else {
        return None;
    };
    let (x, y) = (arena.poly(args[0]), arena.poly(args[1]));
    let (p, pred, k) = match (x.as_const(), y.as_const()) {
        (None, Some(k)) => (x, *pred, k),
        (Some(k), None) => (y, pred.swapped(), k),
        _ => return None,
    };
    let pred = if holds { pred } else { pred.negated() };
    use IntPred::*;
    let (lo, hi) = match pred {
        Slt => (-WIDE, k - 1),
        Sle => (-WIDE, k),
        Sgt => (k + 1, WIDE),
        Sge => (k, WIDE),
        Eq => (k, k),
        // Below a non-negative bound as unsigned: not negative either.
        Ult if k > 0 => (0, k - 1),
        Ule if k >= 0 => (0, k),
        _ => return None,
    };
    Some(Guard {
        p: p.clone(),
        lo,
        hi,
        succ: usize::from(!holds),
    })
}

/// The range of `T = -U` when `U = ±P + c` and `P` lies in `[lo, hi]`.
fn threshold_range(u: &Poly, g: &Guard) -> Option<(i128, i128)> {
    let (p, lo, hi) = (&g.p, g.lo, g.hi);
    [1, -1].into_iter().find_map(|s: i128| {
        let c0 = u.sub(&p.scale(s)).as_const()?;
        let (a, b) = (s * lo + c0, s * hi + c0);
        let (ulo, uhi) = (a.min(b), a.max(b));
        Some((-uhi, -ulo))
    })
}

/// The lanes of `mask` whose `d pred T` holds for some `T` in `[lo, hi]`
/// (signed predicates; any lane for the others).
fn reach(pred: IntPred, d: &Column, mask: u32, (lo, hi): (i128, i128)) -> u32 {
    use IntPred::*;
    lanes::lanes(mask)
        .filter(|&l| {
            let x = d[l];
            match pred {
                Slt => x < hi,
                Sle => x <= hi,
                Sgt => x > lo,
                Sge => x >= lo,
                Eq => (lo..=hi).contains(&x),
                Ne => !(lo == hi && x == lo),
                _ => true,
            }
        })
        .fold(0, |m, l| m | 1 << l)
}

/// The condition of the branch ending `b`, evaluated for one warp.
pub fn condition(
    arena: &mut Arena,
    ev: &mut Evaluator<'_>,
    func: &Function,
    b: BlockId,
    cond: ExprId,
    variant: &dyn Fn(&Arena, &Poly) -> Poly,
) -> Cond {
    let Some(term) = func.terminator(b) else {
        return Cond::Unknown;
    };
    let value = ev.eval(arena, cond);
    if let Some(u) = value.uniform(ev.warp.exists) {
        // A number for the whole warp: every lane goes one known way.
        return match u.as_const() {
            Some(k) => match value.concrete(ev.warp.exists) {
                Some(_) if matches!(term.kind, InstKind::Br { .. }) => {
                    Cond::PerLane([u8::from(k == 0); LANES])
                }
                _ => Cond::Uniform,
            },
            None => Cond::Uniform,
        };
    }
    match &term.kind {
        InstKind::Br { .. } => {
            if let Some(c) = value.concrete(ev.warp.exists) {
                return Cond::PerLane(c.map(|x| u8::from(x == 0)));
            }
            combined(arena, ev, cond, variant, None).unwrap_or(Cond::Unknown)
        }
        InstKind::Switch { cases, .. } => {
            let Some(c) = value.concrete(ev.warp.exists) else {
                return Cond::Unknown;
            };
            let succs = term.successors();
            let mut t = [0u8; LANES];
            for (l, slot) in t.iter_mut().enumerate() {
                let target = cases
                    .iter()
                    .find(|(k, _)| *k == c[l])
                    .map_or(succs[0], |x| x.1);
                *slot = succs.iter().position(|&s| s == target).unwrap_or(0) as u8;
            }
            Cond::PerLane(t)
        }
        _ => Cond::Unknown,
    }
}

/// `a pred b` with `a - b = U + d`: a threshold on the lanes' `d`;
/// uniform when no threshold the congruence of `U` allows splits them.
fn threshold(
    arena: &mut Arena,
    ev: &mut Evaluator<'_>,
    cond: ExprId,
    variant: &dyn Fn(&Arena, &Poly) -> Poly,
    guard: Option<&Guard>,
) -> Option<Cond> {
    let [(mono, 1)] = arena.poly(cond).terms.as_slice() else {
        return None;
    };
    let [atom] = mono.as_slice() else { return None };
    let Atom::Op(Op::Cmp(pred), args) = arena.atom(*atom) else {
        return None;
    };
    let (pred, x, y) = (*pred, args[0], args[1]);
    let a = ev.eval(arena, x);
    let b = ev.eval(arena, y);
    let (u, d) = a.sub(&b).split(ev.warp.exists)?;
    let t = arena.congruence(&u);
    let t = Congruence::new(t.modulus, -t.residue);
    let ds: Vec<i128> = lanes::lanes(ev.warp.exists).map(|l| d[l]).collect();
    let Some(mut ranges) = splitting_thresholds(pred, &ds, t) else {
        return Some(Cond::Uniform);
    };
    // A guard beside the test bounds its threshold where it passes.
    let bound = guard.and_then(|g| threshold_range(&u, g));
    let signed = matches!(
        pred,
        IntPred::Slt | IntPred::Sle | IntPred::Sgt | IntPred::Sge | IntPred::Eq | IntPred::Ne
    );
    let mut reaches = [ALL; 2];
    if let (Some((lo, hi)), Some(g)) = (bound.filter(|_| signed), guard) {
        ranges = ranges
            .into_iter()
            .filter_map(|(a, b)| (a.max(lo) <= b.min(hi)).then_some((a.max(lo), b.min(hi))))
            .collect();
        if ranges.is_empty() {
            // No threshold the guard allows splits the lanes: all go the
            // way `T = hi` sends them (every allowed `T` does the same).
            // That is the branch's way whenever the guard lets the test
            // decide; the same way the guard forces is then every way.
            let first = ev.warp.exists.trailing_zeros() as usize;
            let to = usize::from(!compare(pred, d[first] - hi, 0));
            return Some(if to == g.succ {
                Cond::Uniform
            } else {
                Cond::PerLane([to as u8; LANES])
            });
        }
        // The lanes that can go the way the test sends them when the
        // guard holds: passing for `&&`, failing for `||`.
        let p = if g.succ == 0 { pred } else { pred.negated() };
        reaches[g.succ] = reach(p, &d, ev.warp.exists, (lo, hi));
    }
    let moving = variant(arena, &u);
    let (splits, period) = if moving.terms.is_empty() {
        (Some(ranges), None)
    } else {
        let c = arena.congruence(&moving);
        if c.modulus > 1 {
            (Some(ranges), Some(c.modulus))
        } else if lock_step(arena, &moving) {
            // Every warp of the block has the same `U` on its k-th
            // iteration: per iteration, the ranges part the warps as
            // for a fixed `U`.
            (Some(ranges), None)
        } else {
            (None, None)
        }
    };
    Some(Cond::Threshold {
        pred,
        u,
        d: Box::new(d),
        splits,
        period,
        bounded: false,
        reach: reaches,
    })
}

/// Whether the uniform expression `p` takes the same sequence of values
/// in every warp of a block: built from launch values and loop counters
/// with a constant start and step (the k-th iteration has the same value
/// in every warp), not from values read inside the loop.
fn lock_step(arena: &Arena, p: &Poly) -> bool {
    p.terms.iter().all(|(mono, _)| {
        mono.iter().all(|&a| match arena.atom(a) {
            Atom::Uniform(Uniform::Op(_, args)) => {
                args.iter().all(|&e| lock_step(arena, arena.poly(e)))
            }
            Atom::Uniform(Uniform::LoopPhi(..)) => arena.counter(a).is_some(),
            Atom::Uniform(Uniform::Value(..)) => false,
            Atom::Uniform(_) => true,
            _ => false,
        })
    })
}

/// A condition that is a comparison, or two of them joined by `and`/`or`
/// (`x < w && y < h` becomes `select(a, b, false)`): when one side is
/// uniform in the warp, the other decides how the lanes part.
fn combined(
    arena: &mut Arena,
    ev: &mut Evaluator<'_>,
    cond: ExprId,
    variant: &dyn Fn(&Arena, &Poly) -> Poly,
    guard: Option<&Guard>,
) -> Option<Cond> {
    if let Some(c) = threshold(arena, ev, cond, variant, guard) {
        return Some(c);
    }
    let p = arena.poly(cond).clone();
    let [(mono, 1)] = p.terms.as_slice() else {
        return None;
    };
    let [atom] = mono.as_slice() else { return None };
    // select(a, false, true) is `!a`.
    if let Atom::Op(Op::Select, args) = arena.atom(*atom).clone() {
        if let (Some(0), Some(1 | -1)) = (
            arena.poly(args[1]).as_const(),
            arena.poly(args[2]).as_const(),
        ) {
            let v = ev.eval(arena, args[0]);
            if let Some(c) = v.concrete(ev.warp.exists) {
                return Some(Cond::PerLane(c.map(|x| u8::from(x != 0))));
            }
            if v.uniform(ev.warp.exists).is_some() {
                return Some(Cond::Uniform);
            }
            return combined(arena, ev, args[0], variant, None).map(negated);
        }
    }
    // (a, b, is_and)
    let (a, b, and) = match arena.atom(*atom).clone() {
        Atom::Op(Op::And, args) => (args[0], args[1], true),
        Atom::Op(Op::Or, args) => (args[0], args[1], false),
        // select(a, b, false) is `a && b`; select(a, true, b) is `a || b`.
        Atom::Op(Op::Select, args) => match (
            arena.poly(args[1]).as_const(),
            arena.poly(args[2]).as_const(),
        ) {
            (_, Some(0)) => (args[0], args[1], true),
            (Some(1 | -1), _) => (args[0], args[2], false),
            _ => return None,
        },
        _ => return None,
    };
    // `g && t`: where `t` decides, the uniform `g` holds; `g || t`: fails.
    let guard_of = |arena: &Arena, other: ExprId| {
        if arena.is_thread(other) {
            None
        } else {
            uniform_range(arena, other, and)
        }
    };
    let (ga, gb) = (guard_of(arena, b), guard_of(arena, a));
    let side =
        |arena: &mut Arena, ev: &mut Evaluator<'_>, e: ExprId, g: Option<&Guard>| -> Option<Cond> {
            let v = ev.eval(arena, e);
            if let Some(c) = v.concrete(ev.warp.exists) {
                return Some(Cond::PerLane(c.map(|x| u8::from(x == 0))));
            }
            if v.uniform(ev.warp.exists).is_some() {
                return Some(Cond::Uniform);
            }
            combined(arena, ev, e, variant, g)
        };
    match (
        side(arena, ev, a, ga.as_ref())?,
        side(arena, ev, b, gb.as_ref())?,
    ) {
        // Per lane on both sides: combine lane by lane (0 is true).
        (Cond::PerLane(x), Cond::PerLane(y)) => Some(Cond::PerLane(std::array::from_fn(|l| {
            let (p, q) = (x[l] == 0, y[l] == 0);
            u8::from(!(if and { p && q } else { p || q }))
        }))),
        // A side that is one unknown value for the whole warp either
        // decides alone (then uniformly) or leaves it to the other side:
        // the other side's split can happen, not must. A threshold says
        // just that; a per-lane split is gated by the uniform side.
        (Cond::Uniform, c) | (c, Cond::Uniform) => match c {
            Cond::PerLane(t) => Some(Cond::Gated {
                t,
                all_to: u8::from(and),
            }),
            Cond::Gated { .. } => Some(Cond::Unknown),
            c => Some(c),
        },
        (x, y) => {
            // Thresholds, and parts known per lane: one list, flattening
            // `&&` (`||`) chains of the same kind.
            let mut parts = Vec::new();
            let mut lanes: Option<[bool; LANES]> = None;
            let mut join = |t: [bool; LANES]| {
                lanes = Some(match lanes {
                    None => t,
                    Some(o) => {
                        std::array::from_fn(|l| if and { o[l] && t[l] } else { o[l] || t[l] })
                    }
                });
            };
            for c in [x, y] {
                match c {
                    c @ Cond::Threshold { .. } => parts.push(c),
                    // Successor 0 is `true`.
                    Cond::PerLane(t) => join(t.map(|x| x == 0)),
                    Cond::Thresholds {
                        parts: inner,
                        and: a,
                        lanes: known,
                    } if a == and => {
                        parts.extend(inner);
                        if let Some(t) = known {
                            join(t);
                        }
                    }
                    _ => return None,
                }
            }
            if parts.is_empty() {
                return None;
            }
            Some(Cond::Thresholds { parts, and, lanes })
        }
    }
}

/// The condition `!c` of a two-way branch: each lane takes the other
/// successor.
fn negated(c: Cond) -> Cond {
    match c {
        Cond::PerLane(t) => Cond::PerLane(t.map(|x| u8::from(x == 0))),
        Cond::Threshold {
            pred,
            u,
            d,
            splits,
            period,
            bounded,
            reach,
        } => Cond::Threshold {
            pred: pred.negated(),
            u,
            d,
            splits,
            period,
            bounded,
            reach: [reach[1], reach[0]],
        },
        Cond::Thresholds { parts, and, lanes } => Cond::Thresholds {
            parts: parts.into_iter().map(negated).collect(),
            and: !and,
            lanes: lanes.map(|t| t.map(|x| !x)),
        },
        Cond::Gated { t, all_to } => Cond::Gated {
            t: t.map(|x| u8::from(x == 0)),
            all_to: u8::from(all_to == 0),
        },
        c @ (Cond::Uniform | Cond::Unknown) => c,
    }
}

/// For lanes with values `d` and the test `d + U pred 0` with `T = -U ≡ t`:
/// `None` when no allowed `T` splits the lanes, else the integer ranges of
/// `T` that do.
pub fn splitting_thresholds(pred: IntPred, d: &[i128], t: Congruence) -> Option<Vec<(i128, i128)>> {
    let (lo, hi) = (*d.iter().min()?, *d.iter().max()?);
    if lo == hi {
        return None;
    }
    let allowed = |a: i128, b: i128| -> bool {
        if a > b {
            return false;
        }
        if t.modulus == 0 {
            return (a..=b).contains(&t.residue);
        }
        a + (t.residue - a).rem_euclid(t.modulus) <= b
    };
    use IntPred::*;
    let ranges: Vec<(i128, i128)> = match pred {
        // d < T splits for T in (lo, hi]; d <= T for T in [lo, hi).
        Slt | Ult | Sge | Uge => vec![(lo + 1, hi)],
        Sle | Ule | Sgt | Ugt => vec![(lo, hi - 1)],
        Eq | Ne => {
            let mut v: Vec<i128> = d.to_vec();
            v.sort_unstable();
            v.dedup();
            v.into_iter().map(|x| (x, x)).collect()
        }
    };
    let ranges: Vec<(i128, i128)> = ranges.into_iter().filter(|&(a, b)| allowed(a, b)).collect();
    (!ranges.is_empty()).then_some(ranges)
}

/// Whether the warps' splitting thresholds are pairwise disjoint, so one
/// threshold value splits at most one warp.
pub fn disjoint(sets: &[&Vec<(i128, i128)>]) -> bool {
    let mut ranges: Vec<(i128, i128, usize)> = Vec::new();
    for (w, s) in sets.iter().enumerate() {
        ranges.extend(s.iter().map(|&(a, b)| (a, b, w)));
    }
    ranges.sort_unstable();
    let mut reach: Vec<(i128, usize)> = Vec::new();
    for &(a, b, w) in &ranges {
        if reach.iter().any(|&(end, v)| v != w && end >= a) {
            return false;
        }
        reach.retain(|&(end, _)| end >= a);
        reach.push((b, w));
    }
    true
}

/// Marks the thresholds of one branch `bounded` when no two warps share a
/// splitting threshold; `conds` holds the branch's condition per warp. A
/// threshold that moves by a `period` stays in one warp if the lanes' `d`
/// over the block span less than the period.
pub fn mark_bounded(conds: &mut [&mut Cond]) {
    // Each part of joined thresholds on its own, over the warps where
    // the condition is joined thresholds of that many parts.
    let parts = conds.iter().find_map(|c| match &**c {
        Cond::Thresholds { parts, .. } => Some(parts.len()),
        _ => None,
    });
    if let Some(n) = parts {
        for i in 0..n {
            let mut ith: Vec<&mut Cond> = conds
                .iter_mut()
                .filter_map(|c| match &mut **c {
                    Cond::Thresholds { parts, .. } if parts.len() == n => Some(&mut parts[i]),
                    _ => None,
                })
                .collect();
            mark_bounded(&mut ith);
        }
        return;
    }
    let mut span: Option<(i128, i128)> = None;
    let mut period = i128::MAX;
    for c in conds.iter() {
        if let Cond::Threshold { d, period: p, .. } = &**c {
            let (lo, hi) = (*d.iter().min().unwrap(), *d.iter().max().unwrap());
            span = Some(span.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
            if let Some(p) = p {
                period = period.min(*p);
            }
        }
    }
    if let Some((lo, hi)) = span {
        if period != i128::MAX && hi - lo >= period {
            return;
        }
    }
    let sets: Option<Vec<&Vec<(i128, i128)>>> = conds
        .iter()
        .filter_map(|c| match &**c {
            Cond::Threshold { splits, .. } => Some(splits.as_ref()),
            _ => None,
        })
        .collect();
    let Some(sets) = sets else { return };
    if sets.is_empty() || !disjoint(&sets) {
        return;
    }
    for c in conds.iter_mut() {
        if let Cond::Threshold { bounded, .. } = &mut **c {
            *bounded = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_respect_congruences() {
        // Lanes 32..64 of `i = 256k + tid < 1024`: d = tid, T = 1024 - 256k
        // is 0 mod 32, never inside (32, 63].
        let d: Vec<i128> = (32..64).collect();
        let t = Congruence::new(256, 0);
        assert_eq!(splitting_thresholds(IntPred::Slt, &d, t), None);
        // With T unknown it can fall anywhere in (32, 63].
        assert_eq!(
            splitting_thresholds(IntPred::Slt, &d, Congruence::UNKNOWN),
            Some(vec![(33, 63)])
        );
        // d == T with T even among d = 1, 2, 3: only T = 2 splits.
        let s = splitting_thresholds(IntPred::Eq, &[1, 2, 3], Congruence::new(2, 0)).unwrap();
        assert_eq!(s, vec![(2, 2)]);
    }

    #[test]
    fn disjoint_thresholds_bound_the_split_warps() {
        let (a, b, c) = (vec![(1, 31)], vec![(33, 63)], vec![(30, 40)]);
        assert!(disjoint(&[&a, &b]));
        assert!(!disjoint(&[&a, &c]));
    }

    #[test]
    fn gated_conditions_send_exact_lanes_one_way() {
        // `u || t < 16`: lanes 0..15 true (successor 0), the rest false.
        let t: [u8; LANES] = std::array::from_fn(|l| u8::from(l >= 16));
        let c = Cond::Gated { t, all_to: 0 };
        // The false side runs with exactly lanes 16..31 when it runs; the
        // true side may have all 32 (u true), surely lanes 0..15.
        assert_eq!(c.edge(1, (ALL, ALL)), (0xffff_0000, 0xffff_0000));
        assert_eq!(c.edge(0, (ALL, ALL)), (ALL, 0x0000_ffff));
    }

    #[test]
    fn guards_bound_thresholds() {
        // `t <= m` is `-[m] + t <= 0`: U = -[m], T = [m]. With `m <= 15`
        // (a guard `m < 16`), T lies in (-inf, 15].
        let m = AtomId::new(0);
        let g = Guard {
            p: Poly::atom(m),
            lo: -100,
            hi: 15,
            succ: 0,
        };
        let u = Poly::atom(m).scale(-1);
        assert_eq!(threshold_range(&u, &g), Some((-100, 15)));
        // Lanes 0..31 of warp 0: `d <= T` can hold for d = 0..15 only.
        let d: Column = std::array::from_fn(|l| l as i128);
        assert_eq!(reach(IntPred::Sle, &d, ALL, (-100, 15)), 0xffff);
        // `U = -[m] + 1` is not `±[m]` plus nothing: still found, shifted.
        let u1 = u.add(&Poly::constant(1));
        assert_eq!(threshold_range(&u1, &g), Some((-101, 14)));
    }

    #[test]
    fn warps_of_2d_blocks() {
        // 16 x 4: warp 0 holds rows y = 0, 1; lane 17 is (1, 1).
        let w = warps([16, 4, 1]);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].tid[17], [1, 1, 0]);
        assert_eq!(w[1].tid[0], [0, 2, 0]);
        assert_eq!(w[1].exists, u32::MAX);
        // 48 threads: the second warp has 16 lanes.
        let w = warps([48, 1, 1]);
        assert_eq!(w[1].exists, 0xffff);
    }
}
