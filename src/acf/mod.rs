//! Arithmetic Control Form (GPUCheck §3.2–3.3): a symbolic expression per
//! SSA value, and what it says about the lanes of each warp.
//!
//! * [`expr`]: canonical sums of products over atoms — constants, uniform
//!   unknowns `[v]` with what is known of them modulo small numbers, the
//!   per-thread leaves `threadIdx.{x,y,z}` and the lane id, opaque
//!   thread-dependent leaves, and operator atoms (division, remainder, bit
//!   operations, comparisons, select, min/max).
//! * [`build`]: values to expressions, on demand and memoised, with loop
//!   counters split into a uniform iteration part plus a thread part.
//! * [`lanes`]: an expression instantiated for the 32 lanes of a warp; the
//!   difference between two lanes is the difference of their columns.
//! * [`warp`]: the warps of the block, each branch condition per lane, and
//!   the lanes that can be active in each block.
//!
//! **Invariant:** `acf` reads `ir`, `graph` and `taint` and never `sim`,
//! `analysis` or the checks; it knows nothing of LLVM.

mod active;
pub mod build;
mod cases;
pub mod display;
pub mod expr;
mod invariance;
mod iterations;
pub mod ladder;
pub mod lane_exits;
pub mod lanes;
pub mod warp;

use crate::budget::{Exhausted, Meter};
use crate::dataflow::FastMap as HashMap;
use crate::graph::ModuleGraphs;
use crate::ir::{BlockId, FuncId, Module, Value};
use crate::taint::KernelDeps;
use expr::{Arena, CtxId, ExprId};
use lanes::Lanes;
use warp::{Cond, Evaluator, Warp};

/// Per warp: what the checks read.
#[derive(Default)]
pub struct WarpFacts {
    /// The lanes of every expression the warp evaluated.
    values: warp::Dense<ExprId>,
    conds: HashMap<(CtxId, BlockId), Cond>,
    /// Per context, `(may, must)` per block.
    active: HashMap<CtxId, Vec<(u32, u32)>>,
    /// `must` without assuming bounds checks pass whole warps.
    strict: HashMap<CtxId, Vec<u32>>,
    lane_exits: HashMap<(CtxId, BlockId), lane_exits::LaneExits>,
    /// Per site block with a [`ladder::Ladder`], per value of its counter:
    /// the branch's condition (branch blocks only) and the block's lanes.
    iterations: HashMap<(CtxId, BlockId), Vec<Iteration>>,
}

/// A site's block on one iteration of a per-iteration sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Iteration {
    /// The block's branch condition, when it ends in one.
    pub cond: Option<Cond>,
    /// `(may, must)` active lanes, as [`KernelAcf::active`].
    pub may: u32,
    pub must: u32,
    /// As [`KernelAcf::active_strict`].
    pub strict: u32,
}

/// The ACF of one kernel, instantiated for every warp of its block and
/// every calling context of the functions it reaches.
pub struct KernelAcf {
    pub kernel: FuncId,
    pub arena: Arena,
    exprs: HashMap<(CtxId, Value), ExprId>,
    contexts: HashMap<FuncId, Vec<CtxId>>,
    pub block: [u32; 3],
    pub warps: Vec<Warp>,
    facts: Vec<WarpFacts>,
    /// Sites in a loop whose counter the launch fixes.
    ladders: HashMap<(CtxId, BlockId), ladder::Ladder>,
    /// Per value at such a site, its expression on each iteration.
    iter_exprs: HashMap<(CtxId, Value), Vec<ExprId>>,
    /// Per value whose lanes some warp cannot place, its cases (see
    /// [`cases`]).
    cases: HashMap<(CtxId, Value), Vec<ExprId>>,
    /// Expressions that fell back to leaves on a budget.
    pub over_budget: usize,
}

impl std::fmt::Debug for KernelAcf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelAcf")
            .field("block", &self.block)
            .field("warps", &self.warps.len())
            .field("exprs", &self.arena.num_exprs())
            .field("contexts", &self.arena.num_ctxs())
            .finish()
    }
}

/// What the ACF is built from: one kernel's IR, graphs and thread
/// dependence.
#[derive(Copy, Clone)]
pub struct Input<'a> {
    pub m: &'a Module,
    pub graphs: &'a ModuleGraphs,
    pub deps: &'a KernelDeps,
    pub kernel: FuncId,
    /// Defined functions the kernel reaches, kernel first.
    pub reached: &'a [FuncId],
    /// Integer parameters with a known value (`--param`): index, value.
    pub pinned: &'a [(u32, i128)],
    /// What is known of each pointer parameter's address modulo small
    /// numbers (`cudaMalloc`'s 256-byte alignment and the offset a host
    /// launch adds): index, congruence; a pointer parameter not listed
    /// is 0 mod 256.
    pub pointer_bases: &'a [(u32, expr::Congruence)],
}

/// Branches whose conditions are worked out in every warp between two
/// prunings of the warps' subexpression lanes ([`warp::Evaluator::keep_only`]).
const KEEP_EVERY: usize = 64;

/// Where a context is entered from: the caller's context and block.
type CallSites = HashMap<CtxId, Vec<(CtxId, BlockId)>>;

impl KernelAcf {
    /// Builds the expressions of `values` (branch conditions and addresses,
    /// each with the block that uses it) and of every branch condition in
    /// `reached`, in every calling
    /// context, and instantiates them for each warp of a block of shape
    /// `block`.
    pub fn new(
        input: &Input<'_>,
        block: [u32; 3],
        values: &[(FuncId, Value, BlockId)],
        meter: &Meter,
    ) -> Result<Self, Exhausted> {
        let Input {
            m,
            graphs,
            deps,
            kernel,
            reached,
            pinned,
            pointer_bases,
        } = *input;
        let mut b = build::Builder::new(m, graphs, deps, kernel, Some(block));
        b.pin(pinned);
        b.bases(pointer_bases);
        let (order, calls) = discover_contexts(&mut b, m, graphs, kernel, reached);
        // Each built value is bounded (depth and size); the kernel's total,
        // time and the process's memory are checked between them.
        let check = |arena: &Arena| -> Result<(), Exhausted> {
            meter.acf_exprs(arena.num_exprs())?;
            meter.time_and_memory()
        };
        let built = Built::new(&mut b, m, graphs, &order, values, &check)?;
        let nwarps = warp::warps(block).len();
        let branches_and_uses = (&built.branches[..], &built.used_at);
        let sweeps = iterations::Ladders::find(&mut b, m, graphs, branches_and_uses, nwarps);
        let contexts: HashMap<FuncId, Vec<CtxId>> = reached
            .iter()
            .map(|&f| (f, b.contexts_of(f).to_vec()))
            .collect();
        let over_budget = b.over_budget;
        let mut arena = b.arena;
        let sweeps = sweeps.substitute(&mut arena);
        let warps = warp::warps(block);
        let shared = warp::Shared::new(&warps, &arena);
        let mut evs: Vec<Evaluator> = warps
            .iter()
            .map(|w| Evaluator::new(w, &shared, &arena))
            .collect();
        let mut facts: Vec<WarpFacts> = warps.iter().map(|_| WarpFacts::default()).collect();
        // What the checks read of each warp: the sites' and branches'
        // values, and theirs on each iteration of a ladder. The lanes of
        // the subexpressions they are built from are dropped as the warps
        // go (every few branches, after each warp's sites), else 32 warps
        // each hold the lanes of every subexpression at once.
        let mut keep = vec![false; arena.num_exprs()];
        let kept = built
            .exprs
            .values()
            .chain(sweeps.iter_exprs.values().flatten());
        for &e in kept {
            if let Some(k) = keep.get_mut(e.index()) {
                *k = true;
            }
        }
        let mut warp_state = (&mut arena, &mut evs[..], &mut facts[..]);
        branch_conditions(m, graphs, &mut warp_state, &built.branches, &keep, &check)?;
        let control: HashMap<FuncId, active::ControlEdges> = reached
            .iter()
            .map(|&f| (f, active::ControlEdges::new(graphs.func(f))))
            .collect();
        for ((w, ev), wf) in warps.iter().zip(&mut evs).zip(&mut facts) {
            let entries = warp_lanes(w, wf, (&order, &calls), &control, graphs, &arena, kernel);
            for (&(c, v), &e) in &built.exprs {
                let runs = |b: &BlockId| {
                    wf.active
                        .get(&c)
                        .and_then(|a| a.get(b.index()))
                        .is_none_or(|x| x.0 != 0)
                };
                if built
                    .used_at
                    .get(&(c, v))
                    .is_none_or(|at| at.iter().any(runs))
                {
                    ev.eval(&mut arena, e);
                    // A warp's values are most of what the ACF holds.
                    meter.memory()?;
                }
            }
            check(&arena)?;
            find_lane_exits(m, graphs, &arena, wf, &built.branches);
            let ctl = |f: FuncId| &control[&f];
            sweeps.run(&mut arena, ev, wf, (m, graphs), (&ctl, &entries));
            ev.keep_only(&keep);
            check(&arena)?;
        }
        // In the order the sites were given, each (context, value) once.
        let mut seen = std::collections::HashSet::new();
        let sites: Vec<((CtxId, Value), ExprId)> = values
            .iter()
            .flat_map(|&(f, v, _)| contexts.get(&f).into_iter().flatten().map(move |&c| (c, v)))
            .filter(|k| seen.insert(*k))
            .filter_map(|k| Some((k, *built.exprs.get(&k)?)))
            .collect();
        let cases = cases::find(&mut arena, &mut evs, &warps, sites);
        keep.resize(arena.num_exprs(), false);
        for &e in cases.values().flatten() {
            keep[e.index()] = true;
        }
        for ev in &mut evs {
            ev.keep_only(&keep);
        }
        check(&arena)?;
        for (ev, wf) in evs.into_iter().zip(&mut facts) {
            wf.values = ev.into_values();
        }
        let span = tracing::Span::current();
        span.record("exprs", arena.num_exprs());
        span.record("contexts", order.len());
        span.record("leaves_on_budget", over_budget);
        Ok(KernelAcf {
            kernel,
            arena,
            exprs: built.exprs,
            contexts,
            block,
            warps,
            facts,
            ladders: sweeps.ladders,
            iter_exprs: sweeps.iter_exprs,
            cases,
            over_budget,
        })
    }

    /// The ACF of a kernel whose analysis stopped on a budget: the warps
    /// of its block, and nothing known of any value.
    pub fn empty(kernel: FuncId, block: [u32; 3]) -> Self {
        let warps = warp::warps(block);
        KernelAcf {
            kernel,
            arena: Arena::default(),
            exprs: HashMap::default(),
            contexts: HashMap::default(),
            block,
            facts: warps.iter().map(|_| WarpFacts::default()).collect(),
            warps,
            ladders: HashMap::default(),
            iter_exprs: HashMap::default(),
            cases: HashMap::default(),
            over_budget: 0,
        }
    }

    /// The calling contexts of `f` in this kernel.
    pub fn contexts(&self, f: FuncId) -> &[CtxId] {
        self.contexts.get(&f).map_or(&[], Vec::as_slice)
    }

    /// The ACF of `v` in `f` as text, one per distinct context
    /// expression, if it was built; never longer than about
    /// [`display::BUDGET`] characters.
    pub fn render(&self, m: &Module, f: FuncId, v: Value) -> Option<String> {
        let names = display::Names {
            m,
            kernel: self.kernel,
        };
        let mut texts: Vec<String> = Vec::new();
        for &c in self.contexts(f) {
            let t = display::render(&self.arena, names, self.expr(c, v)?);
            if !texts.contains(&t) {
                texts.push(t);
            }
        }
        (!texts.is_empty()).then(|| display::join(&texts))
    }

    /// The expression built for `v` in context `c`, if it was asked for.
    pub fn expr(&self, c: CtxId, v: Value) -> Option<ExprId> {
        self.exprs.get(&(c, v)).copied()
    }

    /// `v` instantiated for warp `w`.
    pub fn lanes(&self, w: usize, c: CtxId, v: Value) -> Option<&Lanes> {
        self.facts[w].values.get(self.expr(c, v)?).map(|l| &**l)
    }

    /// The condition of the branch ending `b`, in warp `w`.
    pub fn cond(&self, w: usize, c: CtxId, b: BlockId) -> Option<&Cond> {
        self.facts[w].conds.get(&(c, b))
    }

    /// Each lane's exit iteration, for a loop exit that tests a counter
    /// against a per-lane bound (see [`lane_exits`]).
    pub fn lane_exits(&self, w: usize, c: CtxId, b: BlockId) -> Option<&lane_exits::LaneExits> {
        self.facts[w].lane_exits.get(&(c, b))
    }

    /// The values of a loop counter the launch fixes, on the iterations
    /// that run block `b` (see [`ladder`]).
    pub fn ladder(&self, c: CtxId, b: BlockId) -> Option<&ladder::Ladder> {
        self.ladders.get(&(c, b))
    }

    /// Block `b` of warp `w` on iteration `k` of its [`Self::ladder`].
    pub fn iteration(&self, w: usize, c: CtxId, b: BlockId, k: usize) -> Option<&Iteration> {
        self.facts[w].iterations.get(&(c, b))?.get(k)
    }

    /// `v` instantiated for warp `w` on iteration `k` of the ladder of
    /// the blocks that use it.
    pub fn iteration_lanes(&self, w: usize, c: CtxId, v: Value, k: usize) -> Option<&Lanes> {
        let e = *self.iter_exprs.get(&(c, v))?.get(k)?;
        self.facts[w].values.get(e).map(|l| &**l)
    }

    /// `v` instantiated for warp `w` in each of its cases, when its lanes
    /// are not placed in some warp and it has cases (see [`cases`]).
    pub fn case_lanes(&self, w: usize, c: CtxId, v: Value) -> Option<Vec<&Lanes>> {
        let es = self.cases.get(&(c, v))?;
        es.iter()
            .map(|&e| self.facts[w].values.get(e).map(|l| &**l))
            .collect()
    }

    /// `(may, must)` active lanes of block `b` in warp `w`.
    pub fn active(&self, w: usize, c: CtxId, b: BlockId) -> (u32, u32) {
        self.facts[w]
            .active
            .get(&c)
            .and_then(|v| v.get(b.index()))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Lanes active every time block `b` runs in warp `w`, even in the
    /// warp a bounds check cuts (for the figures' minimum).
    pub fn active_strict(&self, w: usize, c: CtxId, b: BlockId) -> u32 {
        self.facts[w]
            .strict
            .get(&c)
            .and_then(|v| v.get(b.index()))
            .copied()
            .unwrap_or(0)
    }

    /// Whether `v` has one value in every warp, over the lanes that can be
    /// active where `b` runs: `threadIdx.x / 32`, `threadIdx.y` when
    /// `blockDim.x` is a multiple of 32. Such values count as uniform for
    /// every check.
    pub fn warp_uniform(&self, f: FuncId, b: BlockId, v: Value) -> bool {
        self.contexts(f).iter().all(|&c| {
            (0..self.warps.len()).all(|w| {
                let (may, _) = self.active(w, c, b);
                may == 0
                    || self
                        .lanes(w, c, v)
                        .is_some_and(|l| l.uniform(may).is_some())
            })
        })
    }
}

/// The expressions the warps evaluate, as built.
struct Built {
    exprs: HashMap<(CtxId, Value), ExprId>,
    /// Each reachable conditional branch: its context, block and condition.
    branches: Vec<(CtxId, BlockId, ExprId)>,
    /// The blocks that use each site value.
    used_at: HashMap<(CtxId, Value), Vec<BlockId>>,
}

impl Built {
    /// The condition of every reachable branch in each context, then the
    /// sites' values (`values`) in every context of their function.
    fn new(
        b: &mut build::Builder<'_>,
        m: &Module,
        graphs: &ModuleGraphs,
        order: &[CtxId],
        values: &[(FuncId, Value, BlockId)],
        check: &dyn Fn(&Arena) -> Result<(), Exhausted>,
    ) -> Result<Self, Exhausted> {
        let mut exprs = HashMap::default();
        let mut branches = Vec::new();
        for &c in order {
            let f = b.arena.func_of(c);
            let func = m.func(f);
            for blk in func.block_ids() {
                if !graphs.func(f).cfg.reachable(blk) {
                    continue;
                }
                let Some(t) = func.terminator(blk) else {
                    continue;
                };
                if t.is_conditional_branch() {
                    let v = t.operands[0];
                    let e = b.value(c, v);
                    exprs.insert((c, v), e);
                    branches.push((c, blk, e));
                    check(&b.arena)?;
                }
            }
        }
        // Where each value is used: a warp that never runs those blocks
        // never needs its lanes (the checks see an idle warp first).
        let mut used_at: HashMap<(CtxId, Value), Vec<BlockId>> = HashMap::default();
        for &(f, v, at) in values {
            for c in b.contexts_of(f).to_vec() {
                let e = b.value(c, v);
                exprs.insert((c, v), e);
                used_at.entry((c, v)).or_default().push(at);
            }
            check(&b.arena)?;
        }
        Ok(Built {
            exprs,
            branches,
            used_at,
        })
    }
}

/// Each branch's condition in every warp, then which of them are bounded
/// (`warp::mark_bounded`). The subexpressions' lanes not in `keep` are
/// dropped every [`KEEP_EVERY`] branches.
fn branch_conditions(
    m: &Module,
    graphs: &ModuleGraphs,
    (arena, evs, facts): &mut (&mut Arena, &mut [Evaluator<'_>], &mut [WarpFacts]),
    branches: &[(CtxId, BlockId, ExprId)],
    keep: &[bool],
    check: &dyn Fn(&Arena) -> Result<(), Exhausted>,
) -> Result<(), Exhausted> {
    for (i, &(c, blk, e)) in branches.iter().enumerate() {
        if i % KEEP_EVERY == KEEP_EVERY - 1 {
            for ev in evs.iter_mut() {
                ev.keep_only(keep);
            }
        }
        let f = arena.func_of(c);
        // The part of a threshold that moves in a loop is the same in
        // most warps: work it out once per branch.
        let seen: std::cell::RefCell<HashMap<expr::Poly, expr::Poly>> = Default::default();
        let variant = |ar: &Arena, u: &expr::Poly| {
            if let Some(v) = seen.borrow().get(u) {
                return v.clone();
            }
            let v = invariance::variant_terms(m, graphs.func(f), ar, u, f, blk);
            seen.borrow_mut().insert(u.clone(), v.clone());
            v
        };
        let uniform = !arena.is_thread(e);
        for (ev, wf) in evs.iter_mut().zip(facts.iter_mut()) {
            let cond = if uniform {
                Cond::Uniform
            } else {
                warp::condition(arena, ev, m.func(f), blk, e, &variant)
            };
            wf.conds.insert((c, blk), cond);
        }
        check(arena)?;
    }
    for &(c, blk, _) in branches {
        let mut conds: Vec<&mut Cond> = facts
            .iter_mut()
            .filter_map(|wf| wf.conds.get_mut(&(c, blk)))
            .collect();
        warp::mark_bounded(&mut conds);
    }
    Ok(())
}

/// The lanes of warp `w` that can and must be active in each block of
/// each context (`wf.active`, and `wf.strict` without assuming that
/// bounds checks pass whole warps), contexts in `order`, callers first;
/// returns each context's entry lanes, plain and strict.
fn warp_lanes(
    w: &Warp,
    wf: &mut WarpFacts,
    (order, calls): (&[CtxId], &CallSites),
    control: &HashMap<FuncId, active::ControlEdges>,
    graphs: &ModuleGraphs,
    arena: &Arena,
    kernel: FuncId,
) -> iterations::Entries {
    let mut entries = HashMap::default();
    for (k, &c) in order.iter().enumerate() {
        let f = arena.func_of(c);
        let Some(edges) = control.get(&f) else {
            continue;
        };
        let at = |x: CtxId, b: BlockId| wf.active[&x][b.index()];
        let entry = entry_lanes(w, c, k, (order, calls), at, f == kernel);
        // Strict: a caller's bounds check cuts the lanes it passes.
        let strict_at = |x: CtxId, b: BlockId| (at(x, b).0, wf.strict[&x][b.index()]);
        let strict_entry = entry_lanes(w, c, k, (order, calls), strict_at, f == kernel);
        let g = graphs.func(f);
        let cond = |b: BlockId| wf.conds.get(&(c, b));
        let lanes = active::active_lanes(g, edges, entry, cond, true);
        let bounded = wf
            .conds
            .iter()
            .any(|((h, _), x)| *h == c && matches!(x, Cond::Threshold { bounded: true, .. }));
        let strict = if bounded || strict_entry != entry {
            active::active_lanes(g, edges, strict_entry, cond, false)
        } else {
            lanes.clone()
        };
        wf.strict.insert(c, strict.iter().map(|x| x.1).collect());
        wf.active.insert(c, lanes);
        entries.insert(c, (entry, strict_entry));
    }
    entries
}

/// The lane exits ([`lane_exits`]) of the branches whose shape allows
/// them, in one warp.
fn find_lane_exits(
    m: &Module,
    graphs: &ModuleGraphs,
    arena: &Arena,
    wf: &mut WarpFacts,
    branches: &[(CtxId, BlockId, ExprId)],
) {
    for &(c, blk, _) in branches {
        let Some(cond) = wf.conds.get(&(c, blk)) else {
            continue;
        };
        let f = arena.func_of(c);
        let g = graphs.func(f);
        let active = |b: BlockId| wf.active[&c][b.index()];
        let conds = |b: BlockId| wf.conds.get(&(c, b));
        if let Some(s) = lane_exits::lane_exits(arena, g, m, (f, blk), cond, &active, &conds) {
            wf.lane_exits.insert((c, blk), s);
        }
    }
}

/// Every context reached from the kernel's, callers before callees, and
/// the call sites that enter each.
fn discover_contexts(
    b: &mut build::Builder<'_>,
    m: &Module,
    graphs: &ModuleGraphs,
    kernel: FuncId,
    reached: &[FuncId],
) -> (Vec<CtxId>, CallSites) {
    let mut order = vec![b.root(kernel)];
    let mut calls: CallSites = HashMap::default();
    let mut k = 0;
    while k < order.len() {
        let c = order[k];
        k += 1;
        let f = b.arena.func_of(c);
        let func = m.func(f);
        for blk in func
            .block_ids()
            .filter(|&x| graphs.func(f).cfg.reachable(x))
        {
            for &i in &func.blocks[blk.index()].insts {
                let Some(inner) = b.call_context(c, i) else {
                    continue;
                };
                calls.entry(inner).or_default().push((c, blk));
                if !order.contains(&inner) {
                    order.push(inner);
                }
            }
        }
    }
    // Functions reached only in ways we do not follow (through pointers).
    for &f in reached {
        if b.contexts_of(f).is_empty() {
            order.push(b.root(f));
        }
    }
    (order, calls)
}

/// The lanes that enter context `c` (the `k`-th in `order`): those active
/// at its call sites (`lanes_at`: may and must), when every caller's lanes
/// are already known.
fn entry_lanes(
    w: &Warp,
    c: CtxId,
    k: usize,
    (order, calls): (&[CtxId], &CallSites),
    lanes_at: impl Fn(CtxId, BlockId) -> (u32, u32),
    is_kernel: bool,
) -> (u32, u32) {
    if is_kernel && k == 0 {
        return (w.exists, w.exists);
    }
    let Some(sites) = calls.get(&c) else {
        return (w.exists, 0);
    };
    let known = sites.iter().all(|(caller, _)| {
        order
            .iter()
            .position(|x| x == caller)
            .is_some_and(|p| p < k)
    });
    if !known {
        return (w.exists, 0);
    }
    let (mut may, mut must) = (0, u32::MAX);
    for &(caller, blk) in sites {
        let (a, b) = lanes_at(caller, blk);
        may |= a;
        must &= b;
    }
    (may, if sites.len() == 1 { must } else { 0 })
}
