//! Potential functions and their constraints (Absynth-style, RaCuda §6).
//!
//! Each node of the warp graph gets a template: a nonnegative combination
//! of base functions, the constant 1, atoms `max(0, e)` and products of two
//! atoms. Atoms start as each loop's remaining iterations `max(0, T − k)`
//! (its trip bound less its counter) and are closed backwards over the
//! edges with the counters' assignments substituted (`k := 0` on entry,
//! `k := k + 1` on the back edge); an atom reaching a node where one with
//! the same linear part exists is rewritten onto it:
//!
//! * `max(0, e + d) ≤ max(0, e) + d` for `d ≥ 0` (increment),
//! * `max(0, e − d) = max(0, e) − d` when a fact on the edge gives
//!   `e − d ≥ 0` (decrement: the back edge's `T − k − 1 ≥ 0`, or a guard),
//! * `max(0, e − d) ≤ max(0, e)` otherwise (monotonicity),
//! * products multiply the right-hand sides (both are nonnegative).
//!
//! One row per edge and monomial says the potential before covers the
//! edge's cost plus the potential after: coefficient-wise, which is sound
//! as every monomial is nonnegative.

use super::affine::{Affine, Sym};
use super::bound::{Factors, Mono, Poly};
use super::conditions::{Env, Ranges};
use super::lp::{Lp, Row, VarId};
use super::rat::Rat;
use super::remainder::Link;
use super::warp_graph::{NodeId, WarpGraph};
use crate::dataflow::FastMap as HashMap;
use crate::graph::LoopId;
use crate::ir::BlockId;

/// Atoms per node past which no more are added.
const MAX_ATOMS: usize = 12;

/// One node's template.
#[derive(Default)]
struct Template {
    /// Atom arguments: `max(0, atom)`.
    atoms: Vec<Affine>,
    /// Linear part → atom index.
    keys: HashMap<Affine, usize>,
    /// Monomials as sorted atom indices; `[]` is the constant.
    monos: Vec<Vec<usize>>,
    mono_index: HashMap<Vec<usize>, usize>,
    /// The LP variable of the first monomial.
    first: usize,
}

/// A linear combination of one node's monomials: `(mono, coeff)`.
type Lin = Vec<(usize, Rat)>;

/// An atom carried over an edge: a combination of the source's atoms
/// (`None`: the constant).
type Carried = Vec<(Option<usize>, Rat)>;

/// The constraint system of one kernel, without the costs.
pub struct System {
    templates: Vec<Template>,
    pub lp: Lp,
    /// Each row of `lp` in exact arithmetic (its bound is 0 or the edge's
    /// cost): what a solution is checked against before it is believed.
    exact: Vec<Vec<(VarId, Rat)>>,
    /// Per edge of the graph: its rows, `(row, constant monomial?)`.
    const_rows: Vec<Option<usize>>,
    pub entry: NodeId,
}

/// What the system needs besides the graph.
pub struct Inputs<'a, 'e> {
    pub env: &'a Env<'e>,
    /// Per loop, its trip bound (`None`: unknown; the loop must cost
    /// nothing).
    pub trips: &'a [Option<Affine>],
    /// Facts `a ≥ 0` per CFG edge.
    pub facts: &'a HashMap<(BlockId, BlockId), Vec<Affine>>,
    /// The trip factors the trip bounds mention: an edge's facts bound
    /// them from below (`n ≥ 1` gives `⌈n/stride⌉ ≥ 1`).
    pub factors: &'a Factors,
    /// Remainder loops tied to their unrolled main loops: a second trip
    /// bound each, over a symbol the edges into their middle block
    /// rewrite.
    pub links: &'a [Link],
    pub degree: usize,
}

/// How an edge moves the loop counters.
struct Updates {
    entered: Vec<LoopId>,
    back: Option<LoopId>,
    /// Symbols that equal an affine of the source's state on this edge.
    substs: Vec<(Sym, Affine)>,
}

fn updates(
    g: &WarpGraph,
    inp: &Inputs<'_, '_>,
    from: NodeId,
    to: NodeId,
    logical: (BlockId, BlockId),
) -> Updates {
    let (a, b) = (&g.nodes[from].scope, &g.nodes[to].scope);
    let entered = b.iter().filter(|l| !a.contains(l)).copied().collect();
    let loops = &inp.env.g.loops;
    let back = b
        .iter()
        .copied()
        .filter(|l| a.contains(l))
        .find(|&l| loops.get(l).header == logical.1 && loops.get(l).contains(logical.0));
    let substs = inp
        .links
        .iter()
        .flat_map(|k| {
            k.substs
                .iter()
                .filter(|(e, _)| *e == logical)
                .map(|(_, a)| (Sym::Rem(k.rem), a.clone()))
        })
        .collect();
    Updates {
        entered,
        back,
        substs,
    }
}

fn apply(a: &Affine, u: &Updates) -> Affine {
    let mut r = a.clone();
    for &l in &u.entered {
        r = r.subst(Sym::Ghost(l), &Affine::int(0));
    }
    if let Some(l) = u.back {
        r = r.subst(Sym::Ghost(l), &Affine::sym(Sym::Ghost(l)).plus(Rat::ONE));
    }
    for (s, by) in &u.substs {
        r = r.subst(*s, by);
    }
    r
}

/// Lowers each atom `max(0, lin + o)` to `max(0, lin − d)` where every
/// edge into its node has a fact `lin ≥ d` (a loop's guard `w > 0` in
/// front of its preheader): there it is exactly `lin − d`, so the edges in
/// release `d` a unit (decrement by the fact) and the edges out pay it
/// back only where the next atom is higher. The first iteration can then
/// pay the loop's setup, and a launch that skips the loop does not
/// (addSub0's steps: `57·w/2 + 3` beside `29·w/2 + 31`, and `w = 0`
/// returns after 3).
fn lower_offsets(g: &WarpGraph, inp: &Inputs<'_, '_>, templates: &mut [Template]) {
    let mut into: Vec<Vec<usize>> = vec![Vec::new(); templates.len()];
    for (i, e) in g.edges.iter().enumerate() {
        if let Some(to) = e.to {
            into[to.index()].push(i);
        }
    }
    for (n, t) in templates.iter_mut().enumerate() {
        if into[n].is_empty() {
            continue;
        }
        for a in &mut t.atoms {
            let Some((lin, _, off)) = a.normalize() else {
                continue;
            };
            // The least `d` with `lin ≥ d` after every edge in.
            let mut least: Option<Rat> = None;
            for &i in &into[n] {
                let e = &g.edges[i];
                let u = updates(g, inp, e.from, NodeId::new(n), e.logical);
                let scope = &g.nodes[e.from].scope;
                // `lin` after the edge, in the source's terms: λ·(l + o).
                let d = apply(&lin, &u).normalize().and_then(|(l, lambda, o)| {
                    let facts = inp.facts.get(&e.logical)?;
                    facts
                        .iter()
                        .filter(|f| in_scope(f, scope))
                        .filter_map(|f| f.normalize())
                        .filter(|(fl, _, _)| *fl == l)
                        // `l ≥ −fo`, so `lin = λ·(l + o) ≥ λ·(o − fo)`.
                        .map(|(_, _, fo)| lambda * (o - fo))
                        .max()
                });
                least = match (least, d) {
                    (_, None) => Some(Rat::ZERO),
                    (None, Some(d)) => Some(d),
                    (Some(x), Some(d)) => Some(x.min(d)),
                };
            }
            if let Some(d) = least.filter(|d| d.is_finite() && *d > Rat::ZERO) {
                if -d < off {
                    *a = lin.plus(-d);
                }
            }
        }
    }
}

/// Whether the symbols of `a` are all in `scope`.
fn in_scope(a: &Affine, scope: &[LoopId]) -> bool {
    a.terms.keys().all(|s| match s {
        Sym::Ghost(l) => scope.contains(l),
        s => !s.is_per_thread(),
    })
}

impl Template {
    fn insert(&mut self, lin: Affine, off: Rat) -> bool {
        // An atom whose arithmetic overflowed is no atom.
        if !(lin.is_finite() && off.is_finite()) {
            return false;
        }
        if self.keys.contains_key(&lin) || self.atoms.len() >= MAX_ATOMS {
            return false;
        }
        self.keys.insert(lin.clone(), self.atoms.len());
        self.atoms.push(lin.plus(off));
        true
    }

    fn build_monos(&mut self, degree: usize) {
        let n = self.atoms.len();
        let mut monos = vec![Vec::new()];
        if degree >= 1 {
            monos.extend((0..n).map(|i| vec![i]));
        }
        if degree >= 2 {
            for i in 0..n {
                for j in i..n {
                    monos.push(vec![i, j]);
                }
            }
        }
        self.mono_index = monos
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, m)| (m, i))
            .collect();
        self.monos = monos;
    }

    fn var(&self, mono: usize) -> VarId {
        VarId::new(self.first + mono)
    }
}

impl System {
    pub fn new(g: &WarpGraph, inp: &Inputs<'_, '_>) -> System {
        let n = g.nodes.len();
        let mut templates: Vec<Template> = (0..n).map(|_| Template::default()).collect();
        // Seeds: every loop in scope, its remaining iterations.
        for id in g.nodes.keys() {
            for &l in &g.nodes[id].scope {
                let Some(t) = &inp.trips[l.index()] else {
                    continue;
                };
                let d = t.sub(&Affine::sym(Sym::Ghost(l)));
                if let Some((lin, _, off)) = d.normalize() {
                    templates[id.index()].insert(lin, off);
                }
            }
            for k in inp.links {
                if g.nodes[id].scope.contains(&k.rem) {
                    let d = k.trip.sub(&Affine::sym(Sym::Ghost(k.rem)));
                    if let Some((lin, _, off)) = d.normalize() {
                        templates[id.index()].insert(lin, off);
                    }
                }
            }
        }
        // Closure backwards over the edges.
        let mut changed = true;
        while changed {
            changed = false;
            for e in &g.edges {
                let Some(to) = e.to else { continue };
                let u = updates(g, inp, e.from, to, e.logical);
                let moved: Vec<Affine> = templates[to.index()]
                    .atoms
                    .iter()
                    .map(|a| apply(a, &u))
                    .collect();
                let scope = &g.nodes[e.from].scope;
                for a in moved {
                    let Some((lin, _, _)) = a.normalize() else {
                        continue;
                    };
                    if in_scope(&lin, scope) {
                        changed |= templates[e.from.index()].insert(lin, Rat::ZERO);
                    }
                }
            }
        }
        lower_offsets(g, inp, &mut templates);
        let mut first = 0;
        for t in &mut templates {
            t.build_monos(inp.degree);
            t.first = first;
            first += t.monos.len();
        }
        let mut sys = System {
            templates,
            lp: Lp {
                vars: first,
                rows: Vec::new(),
            },
            exact: Vec::new(),
            const_rows: Vec::new(),
            entry: g.entry,
        };
        for e in &g.edges {
            let row = sys.edge_rows(g, inp, e.from, e.to, e.logical);
            sys.const_rows.push(row);
        }
        sys
    }

    /// `max(0, a)` after the edge, as a combination of the source's atoms
    /// (`None` for the constant) that is at least it; `None` if the source
    /// has no atom to carry it.
    fn carry(
        &self,
        from: NodeId,
        a: &Affine,
        facts: &[Affine],
        ranges: &Ranges,
        env: &Env<'_>,
    ) -> Option<Carried> {
        let Some((lin, lambda, off)) = a.normalize() else {
            let c = a.konst.max(Rat::ZERO);
            return Some(if c.is_zero() {
                Vec::new()
            } else {
                vec![(None, c)]
            });
        };
        let t = &self.templates[from.index()];
        let &i = t.keys.get(&lin)?;
        let rep = t.atoms[i].sub(&lin).konst;
        let delta = off - rep;
        let mut out = vec![(Some(i), lambda)];
        if delta > Rat::ZERO {
            out.push((None, lambda * delta));
        } else if delta < Rat::ZERO {
            let arg = lin.plus(off);
            let by_fact = facts.iter().any(|f| {
                f.normalize()
                    .is_some_and(|(fl, _, fo)| fl == lin && fo <= off)
            });
            if by_fact || ranges.nonneg(env, &arg) {
                out.push((None, lambda * delta));
            }
        }
        Some(out)
    }

    /// Adds the rows of one edge; returns the index of its constant row.
    fn edge_rows(
        &mut self,
        g: &WarpGraph,
        inp: &Inputs<'_, '_>,
        from: NodeId,
        to: Option<NodeId>,
        logical: (BlockId, BlockId),
    ) -> Option<usize> {
        let src = &self.templates[from.index()];
        // Σ over the source's monomials: q_from[μ] − (what the target needs).
        let mut need: Vec<Lin> = vec![Vec::new(); src.monos.len()];
        let mut forced_zero: Vec<VarId> = Vec::new();
        if let Some(to) = to {
            let u = updates(g, inp, from, to, logical);
            let scope = &g.nodes[from].scope;
            let mut facts: Vec<Affine> = inp
                .facts
                .get(&logical)
                .map(|f| f.iter().filter(|a| in_scope(a, scope)).cloned().collect())
                .unwrap_or_default();
            if let Some(t) = u
                .back
                .and_then(|l| inp.trips[l.index()].as_ref().map(|t| (l, t)))
            {
                facts.push(t.1.sub(&Affine::sym(Sym::Ghost(t.0))).plus(-Rat::ONE));
            }
            for k in inp.links {
                if u.back == Some(k.rem) {
                    facts.push(k.trip.sub(&Affine::sym(Sym::Ghost(k.rem))).plus(-Rat::ONE));
                }
                if k.entry_fact.0 == logical {
                    facts.push(k.entry_fact.1.clone());
                }
            }
            let mut ranges = Ranges::default();
            for f in &facts {
                ranges.assume(inp.env, f);
            }
            ranges.bound_factors(inp.env, inp.factors);
            let dst = &self.templates[to.index()];
            let carried: Vec<Option<Carried>> = dst
                .atoms
                .iter()
                .map(|a| {
                    let moved = apply(a, &u);
                    if !in_scope(&moved, scope) {
                        return None;
                    }
                    self.carry(from, &moved, &facts, &ranges, inp.env)
                })
                .collect();
            for (m, mono) in dst.monos.iter().enumerate() {
                let var = dst.var(m);
                // The product of the carried atoms.
                let mut prod: Vec<(Vec<usize>, Rat)> = vec![(Vec::new(), Rat::ONE)];
                let mut ok = true;
                for &ai in mono {
                    let Some(c) = &carried[ai] else {
                        ok = false;
                        break;
                    };
                    let mut next = Vec::new();
                    for (pm, pc) in &prod {
                        for (atom, ac) in c {
                            let mut nm = pm.clone();
                            if let Some(x) = atom {
                                nm.push(*x);
                            }
                            nm.sort();
                            next.push((nm, *pc * *ac));
                        }
                    }
                    prod = next;
                }
                if !ok {
                    forced_zero.push(var);
                    continue;
                }
                for (pm, pc) in prod {
                    match src.mono_index.get(&pm) {
                        Some(&mi) => need[mi].push((m, pc)),
                        None => {
                            forced_zero.push(var);
                            break;
                        }
                    }
                }
            }
            let dst_first = dst.first;
            let mut const_row = None;
            let mut rows = Vec::new();
            for (mi, needs) in need.into_iter().enumerate() {
                let mut terms = vec![(src.var(mi), Rat::ONE)];
                for (m, c) in needs {
                    terms.push((VarId::new(dst_first + m), -c));
                }
                if terms.len() == 1 && mi != 0 {
                    continue;
                }
                if mi == 0 {
                    const_row = Some(self.lp.rows.len() + rows.len());
                }
                rows.push(terms);
            }
            rows.extend(forced_zero.into_iter().map(|v| vec![(v, -Rat::ONE)]));
            for r in rows {
                self.push_row(r);
            }
            return const_row;
        }
        let idx = self.lp.rows.len();
        self.push_row(vec![(src.var(0), Rat::ONE)]);
        Some(idx)
    }

    /// `Σ c·x ≥ 0`, in floats for the solver and exactly for the check.
    fn push_row(&mut self, terms: Vec<(VarId, Rat)>) {
        self.lp.rows.push(Row {
            terms: terms.iter().map(|&(v, c)| (v, c.to_f64())).collect(),
            lo: 0.0,
        });
        self.exact.push(terms);
    }

    /// Why the rows cannot be solved as floats: a coefficient that
    /// overflowed, or one past what a float solver resolves next to 1.
    pub fn numeric_trouble(&self, costs: &[Rat]) -> Option<String> {
        let coeffs = self
            .exact
            .iter()
            .flatten()
            .map(|t| t.1)
            .chain(costs.iter().copied());
        let mut largest = Rat::ZERO;
        for c in coeffs {
            if !c.is_finite() {
                return Some("its arithmetic overflows (coefficients beyond 2^127)".into());
            }
            largest = largest.max(c.abs());
        }
        (largest > Rat::int(LARGEST_COEFF)).then(|| {
            format!(
                "a coefficient of its LP ({}) is too large for the solver's floating point \
                 (at most 2^{})",
                largest.floor().unwrap_or(i128::MAX),
                LARGEST_COEFF.ilog2()
            )
        })
    }

    /// Checks `x` against every row in exact arithmetic, with `costs` on
    /// the edges' constant rows: the LP solver works in floats, and a
    /// bound is printed only if its coefficients really pay.
    pub fn verify(&self, costs: &[Rat], x: &[Rat]) -> Result<(), String> {
        let mut lo = vec![Rat::ZERO; self.exact.len()];
        for (row, c) in self.const_rows.iter().zip(costs) {
            if let Some(r) = row {
                lo[*r] = *c;
            }
        }
        if x.iter().any(|v| !v.is_finite() || *v < Rat::ZERO) {
            return Err("the LP solver's answer is not a nonnegative solution".into());
        }
        for (r, terms) in self.exact.iter().enumerate() {
            let lhs = terms.iter().try_fold(Rat::ZERO, |a, &(v, c)| {
                a.checked_add(c.checked_mul(x[v.index()])?)
            });
            match lhs {
                Some(l) if l >= lo[r] => {}
                Some(_) => {
                    return Err("the LP solver's answer fails one of its constraints in \
                         exact arithmetic (floating-point trouble)"
                        .into())
                }
                None => return Err("checking the LP's answer overflows".into()),
            }
        }
        Ok(())
    }

    /// The LP with each edge's cost on its constant row, for a solve in
    /// `order`.
    pub fn with_costs(&self, costs: &[Rat], order: Order) -> Lp {
        let mut lp = self.lp.clone();
        for (row, c) in self.const_rows.iter().zip(costs) {
            if let Some(r) = row {
                lp.rows[*r].lo = c.to_f64();
            }
        }
        if let Order::ConstantFirst { max_degree } | Order::SumFirst { max_degree } = order {
            let t = &self.templates[self.entry.index()];
            for (m, mono) in t.monos.iter().enumerate() {
                if mono.len() > max_degree {
                    lp.rows.push(Row {
                        terms: vec![(t.var(m), -1.0)],
                        lo: 0.0,
                    });
                }
            }
        }
        lp
    }

    /// The entry's objectives in `order`: one round per degree, and for
    /// [`Order::ConstantFirst`] the sum of every coefficient after the
    /// constant's.
    pub fn rounds(&self, order: Order) -> Vec<Vec<(VarId, f64)>> {
        let t = &self.templates[self.entry.index()];
        let maxdeg = t.monos.iter().map(Vec::len).max().unwrap_or(0);
        let of_degree = |d: usize| -> Vec<(VarId, f64)> {
            (0..t.monos.len())
                .filter(|&m| t.monos[m].len() == d)
                .map(|m| (t.var(m), 1.0))
                .collect()
        };
        let leading_first = (0..=maxdeg).rev().map(of_degree);
        let every = || (0..t.monos.len()).map(|m| (t.var(m), 1.0)).collect();
        match order {
            Order::HighestFirst => leading_first.collect(),
            Order::ConstantFirst { .. } => [of_degree(0), every()]
                .into_iter()
                .chain(leading_first)
                .collect(),
            Order::SumFirst { .. } => std::iter::once(every()).chain(leading_first).collect(),
        }
    }

    /// The entry's potential in a solution.
    pub fn entry_poly(&self, x: &[Rat]) -> Poly {
        let t = &self.templates[self.entry.index()];
        let mut p = Poly::default();
        for (m, mono) in t.monos.iter().enumerate() {
            let v = x[t.var(m).index()];
            if v.is_zero() {
                continue;
            }
            let atoms: Mono = mono.iter().map(|&i| t.atoms[i].clone()).collect();
            p.add(atoms, v);
        }
        p
    }
}

/// The order of the entry's lexicographic rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Leading degree first: never trades a smaller constant for a larger
    /// leading term, so tight for large parameters.
    HighestFirst,
    /// The constant first, then the bound where every atom is 1 (the sum
    /// of the coefficients), then leading degree first: the least cost
    /// where the parameters are small, at the price of a steeper slope
    /// (e.g. `7·n + 20` for a loop unrolled by 8 of 7 steps an
    /// iteration, where the rounds alone pay `21·n/8 + 421/8`). The
    /// entry's monomials above `max_degree` stay 0: otherwise the
    /// constant moves into `n·n`, 0 at `n = 0`.
    ConstantFirst { max_degree: usize },
    /// The bound where every atom is 1 first, then leading degree first,
    /// capped like [`Order::ConstantFirst`]: between the two, where the
    /// least constant costs a steep slope (`14·n + 13` against `7·n + 20`
    /// when skipping the loop costs 13 and each of its first 7 trips 7).
    SumFirst { max_degree: usize },
}

/// The largest LP coefficient we trust a float solver with: CBC's
/// tolerances are about 1e-7 relative to 1, and a row's terms must stay
/// resolvable next to each other (2^40 ≈ 1.1e12 leaves room for steps of
/// 1 in the rounding of a double's 53 bits).
pub const LARGEST_COEFF: i128 = 1 << 40;

/// A float solution as exact fractions: tiny values are zero, negative
/// round-off is zero.
pub fn rationals(x: &[f64]) -> Vec<Rat> {
    x.iter()
        .map(|&v| {
            if !v.is_finite() {
                Rat::OVERFLOW
            } else if v.abs() < 1e-9 || v < 0.0 {
                Rat::ZERO
            } else {
                rational(v)
            }
        })
        .collect()
}

/// An LP value as an exact fraction: the simplest one within the solver's
/// tolerance, else rounded up on a fine grid (never below the value).
pub fn rational(x: f64) -> Rat {
    let tol = 1e-5 * x.abs().max(1.0);
    for den in 1..=1024i128 {
        let num = (x * den as f64).round();
        if (num / den as f64 - x).abs() <= tol {
            return Rat::new(num as i128, den);
        }
    }
    if !x.is_finite() || x.abs() > 1e30 {
        return Rat::OVERFLOW;
    }
    Rat::new((x * 1e6).ceil() as i128, 1_000_000)
}
