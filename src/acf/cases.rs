//! Case splits of a site's value on the uniform unknowns that keep its
//! lanes apart.
//!
//! A warp's lanes of `select([c], A, B)` are unknown when the uniform
//! condition `[c]` is: `(blockIdx.y == 0) ? north : south`. Yet every lane
//! takes the same arm, so the value is `A` in every lane or `B` in every
//! lane, and each of those is placed.
//!
//! Likewise an operator between a lane value `x = u + d[l]` (`u` uniform,
//! the same in every warp, `d[l]` a number per lane) and a uniform `y`:
//! a clamp `min(threadIdx.x + 1, [n])` or a boundary test `i == 0`,
//! `i != [nx] - 1`, `i < [n]`. Whatever `y` is, it cuts the lanes at one
//! place: beyond them all (no lane clamped, no lane equal, every lane
//! below), or at `u + v` for one `v` among the lanes' offsets, each of
//! which is tried as a number (then `x − y = d[l] − v` in every lane).
//!
//! The cases together cover every value the unknowns can take, so a
//! figure's least and greatest over the cases bound it: the memory checks
//! use them where the plain value leaves the lanes unknown. A case may not
//! happen (a bound the launch never passes); it can only widen a range.

use super::expr::{Arena, Atom, AtomId, ExprId, Op, Poly, Uniform};
use super::warp::{Evaluator, Warp};
use crate::dataflow::{FastMap as HashMap, FastSet as HashSet};
use crate::ir::IntPred;

/// At most this many cases per value: the product over its splits.
const MAX_CASES: usize = 512;
/// At most this many atoms split in one value (each has at least 2 cases).
const MAX_SPLITS: usize = 9;
/// At most this many cases evaluated in a warp, per kernel: each keeps its
/// lanes.
const MAX_EVALS: usize = 1 << 16;
/// At most this many expressions made for cases, per kernel: each changed
/// operand of a case is a new expression, with its lanes in every warp
/// (dwt2d's deep index arithmetic took 500 MB without it).
const MAX_EXPRS: usize = 1 << 14;

/// How one atom of a value is split.
enum Split {
    /// A uniform comparison: it is 0 or 1.
    Flag(AtomId),
    /// `op(x, y)` (in that order when `lane_first`) of a thread-dependent
    /// `lane` argument, `base + d[l]` with `d[l]` within `range` in every
    /// warp, and a uniform `other`: the atom is one of `beyond`, or the
    /// operator with `other` set to `base + v` for a `v` around `range`.
    Cut {
        atom: AtomId,
        op: Op,
        lane: ExprId,
        lane_first: bool,
        other: ExprId,
        base: Poly,
        range: (i128, i128),
        beyond: Vec<Poly>,
    },
}

impl Split {
    fn atom(&self) -> AtomId {
        match *self {
            Split::Flag(a) | Split::Cut { atom: a, .. } => a,
        }
    }

    fn count(&self) -> usize {
        match self {
            Split::Flag(_) => 2,
            Split::Cut {
                range: (lo, hi),
                beyond,
                ..
            } => (hi - lo + 3) as usize + beyond.len(),
        }
    }

    /// Each case: what the atom is, and what the case says of another
    /// atom. A cut at `v` is `other = base + v`, which may pin a uniform
    /// unknown: `i == 0` at the lane with `threadIdx.x == v` needs
    /// `256·[blockIdx.x] = −v`. Cases that cannot happen (no integer
    /// solves that) are left out.
    fn replacements(&self, arena: &mut Arena) -> Vec<Vec<(AtomId, Poly)>> {
        match self {
            Split::Flag(a) => vec![vec![(*a, Poly::constant(0))], vec![(*a, Poly::constant(1))]],
            Split::Cut {
                atom,
                op,
                lane,
                lane_first,
                other,
                base,
                range: (lo, hi),
                beyond,
            } => {
                let mut out: Vec<Vec<(AtomId, Poly)>> =
                    beyond.iter().map(|p| vec![(*atom, p.clone())]).collect();
                let gap = arena.poly(*other).sub(base);
                // One past each end: `x < y` with `y` just above every lane.
                for v in lo - 1..=hi + 1 {
                    let k = arena.intern(base.add(&Poly::constant(v)));
                    let args = if *lane_first {
                        vec![*lane, k]
                    } else {
                        vec![k, *lane]
                    };
                    let mut case = vec![(*atom, arena.op(*op, args))];
                    // This case is `other = base + v` exactly.
                    match solve(arena, &gap, v) {
                        Solved::Atom(a, p) => case.push((a, p)),
                        Solved::Never => continue,
                        Solved::Open => {}
                    }
                    out.push(case);
                }
                out
            }
        }
    }
}

/// What `gap = v` says of the atoms in `gap`.
enum Solved {
    /// Atom = polynomial.
    Atom(AtomId, Poly),
    /// No integer values make it hold.
    Never,
    /// Nothing usable.
    Open,
}

/// Solves `gap = v` for an atom that `gap` holds once, linearly: `k·a + r
/// = v` gives `a = (v − r) / k`, a number when `r` is one (or no integer,
/// then the case cannot happen), else a polynomial when `k` is ±1.
fn solve(arena: &Arena, gap: &Poly, v: i128) -> Solved {
    for (mono, k) in &gap.terms {
        let [a] = mono.as_slice() else {
            continue;
        };
        let rest = gap.sub(&Poly::atom(*a).scale(*k));
        // Only plain atoms besides it (an operator may hold `a`, and
        // walking operators' operands can take exponential time).
        let elsewhere = rest.terms.iter().any(|(m, _)| {
            m.iter().any(|&b| {
                b == *a || matches!(arena.atom(b), Atom::Op(..) | Atom::Uniform(Uniform::Op(..)))
            })
        });
        if elsewhere {
            continue;
        }
        let num = Poly::constant(v).sub(&rest);
        return match (num.as_const(), *k) {
            (Some(n), k) if n % k == 0 => Solved::Atom(*a, Poly::constant(n / k)),
            (Some(_), _) => Solved::Never,
            (None, 1) => Solved::Atom(*a, num),
            (None, -1) => Solved::Atom(*a, num.scale(-1)),
            _ => continue,
        };
    }
    Solved::Open
}

/// The atoms of `e` (operator arguments included) that can be split: its
/// uniform comparisons (0 or 1: a select's condition, a shift by a flag)
/// and its clamps of a lane value to a uniform bound.
fn splits(arena: &Arena, e: ExprId, found: &mut Vec<AtomId>, seen: &mut HashSet<AtomId>) {
    for (mono, _) in &arena.poly(e).terms {
        for &a in mono {
            // Operands are shared: each atom once (a mirrored index
            // unrolled 32 times is a chain, walked as a tree 2^32 times).
            if !seen.insert(a) {
                continue;
            }
            let (Atom::Op(op, args) | Atom::Uniform(Uniform::Op(op, args))) = arena.atom(a) else {
                continue;
            };
            let clamp = matches!((op, args.as_slice()), (Op::Min { .. } | Op::Max { .. } | Op::Cmp(_), [x, y])
                if arena.is_thread(*x) != arena.is_thread(*y));
            let flag = matches!(op, Op::Cmp(_)) && !arena.facts(a).thread;
            if clamp || flag {
                found.push(a);
                if found.len() > MAX_SPLITS {
                    return;
                }
            }
            // A clamp's cases cover every value of its bound: what the
            // bound is made of need not be split.
            for &x in args.iter().filter(|&&x| !clamp || arena.is_thread(x)) {
                splits(arena, x, found, seen);
            }
        }
    }
}

/// The split of the operator atom `a`, given every warp's lanes.
fn split_of(
    arena: &mut Arena,
    a: AtomId,
    evs: &mut [Evaluator<'_>],
    warps: &[Warp],
) -> Option<Split> {
    let (Atom::Op(op, args) | Atom::Uniform(Uniform::Op(op, args))) = arena.atom(a).clone() else {
        return None;
    };
    match (op, args.as_slice()) {
        (Op::Cmp(_), _) if !arena.facts(a).thread => Some(Split::Flag(a)),
        (Op::Min { .. } | Op::Max { .. } | Op::Cmp(_), &[x, y]) => {
            let lane_first = arena.is_thread(x);
            let (lane, other) = if lane_first { (x, y) } else { (y, x) };
            // `lane` is `u + d[l]` with the same uniform `u` in every warp.
            let mut base: Option<Poly> = None;
            let (mut lo, mut hi) = (i128::MAX, i128::MIN);
            for (ev, w) in evs.iter_mut().zip(warps) {
                let (u, d) = ev.eval(arena, lane).split(w.exists)?;
                if base.get_or_insert_with(|| u.clone()) != &u {
                    return None;
                }
                for l in super::lanes::lanes(w.exists) {
                    lo = lo.min(d[l]);
                    hi = hi.max(d[l]);
                }
            }
            let base = base?;
            // Unsigned order is the numbers' order where the lane values
            // cannot be negative (an `other` that reads as negative is
            // beyond them all).
            let unsigned = match op {
                Op::Min { signed } | Op::Max { signed } => !signed,
                Op::Cmp(p) => p.is_unsigned(),
                _ => false,
            };
            if lo > hi || (unsigned && !arena.non_negative(arena.poly(lane))) {
                return None;
            }
            // Beyond every lane: a clamp leaves the lane value or gives
            // `other` to all; a comparison holds in every lane or none.
            let beyond = match op {
                // At most the lanes of one offset are equal: none is.
                Op::Cmp(IntPred::Eq) if lo < hi => vec![Poly::constant(0)],
                Op::Cmp(IntPred::Ne) if lo < hi => vec![Poly::constant(1)],
                Op::Cmp(_) => vec![Poly::constant(0), Poly::constant(1)],
                _ => vec![arena.poly(lane).clone(), arena.poly(other).clone()],
            };
            Some(Split::Cut {
                atom: a,
                op,
                lane,
                lane_first,
                other,
                base,
                range: (lo, hi),
                beyond,
            })
        }
        _ => None,
    }
}

/// The cases of `e`: one expression per combination of its splits'
/// replacements; `None` when it has none or too many.
fn cases_of(
    arena: &mut Arena,
    e: ExprId,
    evs: &mut [Evaluator<'_>],
    warps: &[Warp],
) -> Option<Vec<ExprId>> {
    let mut atoms = Vec::new();
    splits(arena, e, &mut atoms, &mut HashSet::default());
    if atoms.len() > MAX_SPLITS {
        return None;
    }
    let mut splits: Vec<Split> = Vec::new();
    for a in atoms {
        // Selects on one condition split once.
        if let Some(s) = split_of(arena, a, evs, warps) {
            if !splits.iter().any(|x| x.atom() == s.atom()) {
                splits.push(s);
            }
        }
    }
    if splits.is_empty() {
        return None;
    }
    let total = splits.iter().try_fold(1usize, |n, s| {
        n.checked_mul(s.count()).filter(|&n| n <= MAX_CASES)
    })?;
    let mut out = Vec::with_capacity(total);
    let mut exprs = vec![e];
    for s in &splits {
        let with = s.replacements(arena);
        let mut next = Vec::with_capacity(exprs.len() * with.len());
        for &x in &exprs {
            for case in &with {
                let mut y = x;
                for (atom, p) in case {
                    y = arena.replace(y, *atom, p, &mut HashMap::default());
                }
                next.push(y);
            }
        }
        exprs = next;
    }
    out.extend(exprs);
    Some(out)
}

/// The cases of each value in `values` whose lanes some warp cannot place,
/// evaluated in every warp.
pub fn find<K: Copy + Eq + std::hash::Hash>(
    arena: &mut Arena,
    evs: &mut [Evaluator<'_>],
    warps: &[Warp],
    values: impl IntoIterator<Item = (K, ExprId)>,
) -> HashMap<K, Vec<ExprId>> {
    let mut out = HashMap::default();
    let mut evals = 0;
    let first = arena.num_exprs();
    for (key, e) in values {
        if !arena.is_thread(e) {
            continue;
        }
        let placed = evs
            .iter_mut()
            .zip(warps)
            .all(|(ev, w)| ev.eval(arena, e).split(w.exists).is_some());
        if placed {
            continue;
        }
        let Some(cases) = cases_of(arena, e, evs, warps) else {
            continue;
        };
        evals += cases.len() * warps.len();
        if evals > MAX_EVALS || arena.num_exprs() - first > MAX_EXPRS {
            break;
        }
        for ev in evs.iter_mut() {
            for &x in &cases {
                ev.eval(arena, x);
            }
        }
        out.insert(key, cases);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acf::expr::Congruence;
    use crate::ir::intrinsics::Dim;

    fn atom(arena: &mut Arena, u: Uniform) -> AtomId {
        arena.intern_atom(Atom::Uniform(u), Congruence::UNKNOWN)
    }

    #[test]
    fn a_cut_pins_the_unknown_it_solves_for() {
        let mut arena = Arena::default();
        let b = atom(&mut arena, Uniform::BlockIdx(Dim::X));
        let n = atom(&mut arena, Uniform::Param(0, crate::acf::expr::Pointer::No));
        // `256·[b] + t == 0` at the lane with t = v: 256·[b] = −v.
        let gap = Poly::atom(b).scale(-256);
        assert!(
            matches!(solve(&arena, &gap, 0), Solved::Atom(a, p) if a == b && p.as_const() == Some(0))
        );
        assert!(
            matches!(solve(&arena, &gap, -512), Solved::Atom(a, p) if a == b && p.as_const() == Some(2))
        );
        assert!(matches!(solve(&arena, &gap, 3), Solved::Never));
        // `i == [n] − 1` with i = [b] + t: [n] − 1 − [b] = v, so [n] = v + 1 + [b].
        let gap = Poly::atom(n).add(&Poly::constant(-1)).sub(&Poly::atom(b));
        let Solved::Atom(a, p) = solve(&arena, &gap, 5) else {
            panic!("unsolved");
        };
        assert_eq!(a, b, "the first atom held once is solved for");
        assert_eq!(p, Poly::atom(n).add(&Poly::constant(-6)));
        // `[b]·[n]` holds no atom linearly.
        let gap = Poly::atom(b).mul(&Poly::atom(n));
        assert!(matches!(solve(&arena, &gap, 1), Solved::Open));
    }
}
