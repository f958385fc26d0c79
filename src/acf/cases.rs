//! Case splits of a site's value on the uniform unknowns that keep its
//! lanes apart.
//!
//! A warp's lanes of `select([c], A, B)` are unknown when the uniform
//! condition `[c]` is: `(blockIdx.y == 0) ? north : south`. Yet every lane
//! takes the same arm, so the value is `A` in every lane or `B` in every
//! lane, and each of those is placed. Likewise a clamp to a uniform bound,
//! `min(threadIdx.x + 1, [n])`: whatever `[n]` is, it either clamps no
//! lane (the value is `threadIdx.x + 1`), every lane (the value is `[n]`,
//! the same in all), or it lies among the lanes' own values, each of which
//! is tried as a number.
//!
//! The cases together cover every value the unknowns can take, so a
//! figure's least and greatest over the cases bound it: the memory checks
//! use them where the plain value leaves the lanes unknown. A case may not
//! happen (a bound the launch never passes); it can only widen a range.

use super::expr::{Arena, Atom, AtomId, ExprId, Op, Poly, Uniform};
use super::warp::{Evaluator, Warp};
use crate::dataflow::FastMap as HashMap;

/// At most this many cases per value: the product over its splits.
const MAX_CASES: usize = 512;
/// At most this many cases evaluated in a warp, per kernel: each keeps its
/// lanes.
const MAX_EVALS: usize = 1 << 16;

/// How one atom of a value is split.
enum Split {
    /// A uniform 0/1 condition of a select: it is 0 or 1.
    Flag(AtomId),
    /// `min`/`max` of a thread-dependent `lane` argument, `base + d[l]`
    /// with `base` uniform and the same in every warp and `d[l]` within
    /// `range`, and a uniform `bound`.
    Clamp {
        atom: AtomId,
        op: Op,
        lane: ExprId,
        bound: ExprId,
        base: Poly,
        range: (i128, i128),
    },
}

impl Split {
    fn atom(&self) -> AtomId {
        match *self {
            Split::Flag(a) | Split::Clamp { atom: a, .. } => a,
        }
    }

    fn count(&self) -> usize {
        match *self {
            Split::Flag(_) => 2,
            Split::Clamp {
                range: (lo, hi), ..
            } => (hi - lo + 3) as usize,
        }
    }

    /// What the atom is in each case.
    fn replacements(&self, arena: &mut Arena) -> Vec<Poly> {
        match *self {
            Split::Flag(_) => vec![Poly::constant(0), Poly::constant(1)],
            Split::Clamp {
                op,
                lane,
                bound,
                ref base,
                range: (lo, hi),
                ..
            } => {
                // No lane clamped, every lane clamped, or the bound among
                // the lanes' values.
                let mut out = vec![arena.poly(lane).clone(), arena.poly(bound).clone()];
                for v in lo..=hi {
                    let k = arena.intern(base.add(&Poly::constant(v)));
                    out.push(arena.op(op, vec![lane, k]));
                }
                out
            }
        }
    }
}

/// The atoms of `e` (operator arguments included) that can be split: its
/// uniform comparisons (0 or 1: a select's condition, a shift by a flag)
/// and its clamps of a lane value to a uniform bound.
fn splits(arena: &Arena, e: ExprId, found: &mut Vec<AtomId>) {
    for (mono, _) in &arena.poly(e).terms {
        for &a in mono {
            let (Atom::Op(op, args) | Atom::Uniform(Uniform::Op(op, args))) = arena.atom(a) else {
                continue;
            };
            let clamp = matches!((op, args.as_slice()), (Op::Min { .. } | Op::Max { .. }, [x, y])
                if arena.is_thread(*x) != arena.is_thread(*y));
            let flag = matches!(op, Op::Cmp(_)) && !arena.facts(a).thread;
            if (clamp || flag) && !found.contains(&a) {
                found.push(a);
            }
            // A clamp's cases cover every value of its bound: what the
            // bound is made of need not be split.
            for &x in args.iter().filter(|&&x| !clamp || arena.is_thread(x)) {
                splits(arena, x, found);
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
        (Op::Min { signed } | Op::Max { signed }, &[x, y]) => {
            let (lane, bound) = if arena.is_thread(x) { (x, y) } else { (y, x) };
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
            // Unsigned order is the numbers' order only when none is
            // negative (and the uniform part adds nothing unknown).
            if lo > hi || (!signed && (lo < 0 || !base.terms.is_empty())) {
                return None;
            }
            Some(Split::Clamp {
                atom: a,
                op,
                lane,
                bound,
                base,
                range: (lo, hi),
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
    splits(arena, e, &mut atoms);
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
        let atom = s.atom();
        let with = s.replacements(arena);
        let mut next = Vec::with_capacity(exprs.len() * with.len());
        for &x in &exprs {
            for p in &with {
                let mut memo = HashMap::default();
                next.push(arena.replace(x, atom, p, &mut memo));
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
        if evals > MAX_EVALS {
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
