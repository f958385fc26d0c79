//! The checks a bound must pass before it is printed: whatever the LP
//! answered, a warp runs some whole path through the kernel, so a bound
//! below the cheapest such path at any launch is an internal
//! inconsistency (a wrong fact, a wrong trip bound, a solver that rounded
//! a constraint away), reported as "no bound" with that reason instead of
//! a number.

use super::affine::{Affine, Sym};
use super::bound::{Factors, Poly};
use super::rat::Rat;
use super::warp_graph::WarpGraph;
use crate::ir::{Function, Opcode};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The cost of the cheapest path from the warp graph's entry to an end
/// (Dijkstra; costs are nonnegative). An end that is no `ret` (a trap,
/// `unreachable`) may stop the warp anywhere in its block, so its block
/// costs nothing there. `None` when no end is reachable or a cost
/// overflowed.
pub fn cheapest_path(f: &Function, g: &WarpGraph, costs: &[Rat]) -> Option<Rat> {
    if costs.iter().any(|c| !c.is_finite() || *c < Rat::ZERO) {
        return None;
    }
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
    for (i, e) in g.edges.iter().enumerate() {
        out[e.from.index()].push(i);
    }
    let mut dist: Vec<Option<Rat>> = vec![None; g.nodes.len()];
    let mut heap = BinaryHeap::new();
    dist[g.entry.index()] = Some(Rat::ZERO);
    heap.push(Reverse((Rat::ZERO, g.entry.index())));
    let mut best: Option<Rat> = None;
    while let Some(Reverse((d, n))) = heap.pop() {
        if dist[n].is_some_and(|x| x < d) {
            continue;
        }
        for &i in &out[n] {
            let e = &g.edges[i];
            match e.to {
                Some(t) => {
                    let nd = d.checked_add(costs[i])?;
                    if dist[t.index()].is_none_or(|x| nd < x) {
                        dist[t.index()] = Some(nd);
                        heap.push(Reverse((nd, t.index())));
                    }
                }
                None => {
                    let returns = f
                        .terminator(g.nodes[e.from].block)
                        .is_some_and(|t| t.op == Opcode::Ret);
                    let end = if returns { d.checked_add(costs[i])? } else { d };
                    best = Some(best.map_or(end, |b| b.min(end)));
                }
            }
        }
    }
    best
}

/// The bound's value at a launch every kernel accepts: every integer
/// parameter 0 and a grid of one block. `None` when a factor's stride is
/// not positive there (no such launch to compare with) or a symbol has no
/// value at the kernel's entry.
pub fn at_origin(p: &Poly, factors: &Factors) -> Option<Rat> {
    let mut total = Rat::ZERO;
    for (mono, c) in &p.terms {
        let mut v = *c;
        for a in mono {
            v = v.checked_mul(affine_at_origin(a, factors)?.max(Rat::ZERO))?;
        }
        total = total.checked_add(v)?;
    }
    Some(total)
}

fn affine_at_origin(a: &Affine, factors: &Factors) -> Option<Rat> {
    let mut v = a.konst;
    for (&s, &c) in &a.terms {
        let x = match s {
            Sym::Param(_) => Rat::ZERO,
            Sym::GridDim(_) => Rat::ONE,
            Sym::Factor(id) => {
                let f = factors.get(id);
                let num = affine_at_origin(&f.num, factors)?.max(Rat::ZERO);
                let den = affine_at_origin(&f.den, factors)?;
                if den <= Rat::ZERO {
                    return None;
                }
                Rat::int(num.checked_mul(den.recip())?.ceil()?)
            }
            _ => return None,
        };
        v = v.checked_add(c.checked_mul(x)?)?;
    }
    v.is_finite().then_some(v)
}

/// "No bound" unless `p` is at least the cheapest path at the origin
/// launch (see [`at_origin`]).
pub fn check(p: &Poly, factors: &Factors, cheapest: Option<Rat>) -> Result<(), String> {
    let (Some(least), Some(value)) = (cheapest, at_origin(p, factors)) else {
        return Ok(());
    };
    if value < least {
        return Err(format!(
            "internal inconsistency: the bound is {value} with every parameter 0 on one \
             block, below the {least} that the cheapest path through the kernel costs; \
             please report this kernel"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::bound::Factor;

    #[test]
    fn a_bound_below_the_cheapest_path_is_no_bound() {
        let factors = Factors::default();
        // 0 where every warp spends at least 11: the silent zero.
        let zero = Poly::default();
        assert!(check(&zero, &factors, Some(Rat::int(11))).is_err());
        // 10·max(0, n) + 11 is 11 at n = 0: enough.
        let mut p = Poly::constant(Rat::int(11));
        p.add(vec![Affine::sym(Sym::Param(0))], Rat::int(10));
        assert!(check(&p, &factors, Some(Rat::int(11))).is_ok());
        // 10·max(0, n + 1) + 0 is 10 at n = 0, one short.
        let mut q = Poly::default();
        q.add(
            vec![Affine::sym(Sym::Param(0)).plus(Rat::ONE)],
            Rat::int(10),
        );
        assert!(check(&q, &factors, Some(Rat::int(11))).is_err());
    }

    #[test]
    fn factors_at_the_origin_round_up() {
        let mut factors = Factors::default();
        // ⌈max0(n + 300)/(256·gridDim.x)⌉ at n = 0, one block: ⌈300/256⌉ = 2.
        let f = factors.intern(Factor {
            num: Affine::sym(Sym::Param(0)).plus(Rat::int(300)),
            den: Affine::sym(Sym::GridDim(0)).scale(Rat::int(256)),
        });
        let mut p = Poly::default();
        p.add(vec![Affine::sym(Sym::Factor(f))], Rat::int(3));
        assert_eq!(at_origin(&p, &factors), Some(Rat::int(6)));
    }
}
