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
pub mod display;
pub mod expr;
mod invariance;
pub mod lanes;
pub mod sweep;
pub mod warp;

use crate::graph::ModuleGraphs;
use crate::ir::{BlockId, FuncId, Module, Value};
use crate::taint::KernelDeps;
use expr::{Arena, ExprId};
use lanes::Lanes;
use std::collections::HashMap;
use warp::{Cond, Evaluator, Warp};

/// Per warp: what the checks read.
#[derive(Default)]
pub struct WarpFacts {
    values: HashMap<ExprId, std::rc::Rc<Lanes>>,
    conds: HashMap<(FuncId, BlockId), Cond>,
    /// Per function, `(may, must)` per block.
    active: HashMap<FuncId, Vec<(u32, u32)>>,
    /// `must` without assuming bounds checks pass whole warps.
    strict: HashMap<FuncId, Vec<u32>>,
    sweeps: HashMap<(FuncId, BlockId), sweep::Sweep>,
}

/// The ACF of one kernel, instantiated for every warp of its block.
pub struct KernelAcf {
    pub kernel: FuncId,
    pub arena: Arena,
    exprs: HashMap<(FuncId, Value), ExprId>,
    pub block: [u32; 3],
    pub warps: Vec<Warp>,
    facts: Vec<WarpFacts>,
    /// Expressions that fell back to leaves on a budget.
    pub over_budget: usize,
}

impl std::fmt::Debug for KernelAcf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelAcf")
            .field("block", &self.block)
            .field("warps", &self.warps.len())
            .field("exprs", &self.arena.num_exprs())
            .finish()
    }
}

impl KernelAcf {
    /// Builds the expressions of `values` (branch conditions and addresses)
    /// and of every branch condition in `reached`, and instantiates them
    /// for each warp of a block of shape `block`.
    pub fn new(
        m: &Module,
        graphs: &ModuleGraphs,
        deps: &KernelDeps,
        kernel: FuncId,
        reached: &[FuncId],
        block: [u32; 3],
        values: &[(FuncId, Value)],
    ) -> Self {
        let mut b = build::Builder::new(m, graphs, deps, kernel, Some(block));
        let mut exprs = HashMap::new();
        let mut branches = Vec::new();
        for &f in reached {
            let func = m.func(f);
            for blk in func.block_ids() {
                if !graphs.func(f).cfg.reachable(blk) {
                    continue;
                }
                let Some(t) = func.terminator(blk) else {
                    continue;
                };
                if t.is_conditional_branch() {
                    let c = t.operands[0];
                    let e = b.value(f, c);
                    exprs.insert((f, c), e);
                    branches.push((f, blk, e));
                }
            }
        }
        for &(f, v) in values {
            let e = b.value(f, v);
            exprs.insert((f, v), e);
        }
        let over_budget = b.over_budget;
        let mut arena = b.arena;
        let warps = warp::warps(block);
        let mut evs: Vec<Evaluator> = warps.iter().map(Evaluator::new).collect();
        let mut facts: Vec<WarpFacts> = warps.iter().map(|_| WarpFacts::default()).collect();
        for (ev, wf) in evs.iter_mut().zip(&mut facts) {
            for &(f, blk, e) in &branches {
                let variant = |ar: &Arena, u: &expr::Poly| {
                    invariance::variant_terms(m, graphs.func(f), ar, u, f, blk)
                };
                let c = warp::condition(&mut arena, ev, m.func(f), blk, e, &variant);
                wf.conds.insert((f, blk), c);
            }
        }
        for &(f, blk, _) in &branches {
            let mut conds: Vec<&mut Cond> = facts
                .iter_mut()
                .filter_map(|wf| wf.conds.get_mut(&(f, blk)))
                .collect();
            warp::mark_bounded(&mut conds);
        }
        let control: HashMap<FuncId, active::ControlEdges> = reached
            .iter()
            .map(|&f| (f, active::ControlEdges::new(graphs.func(f))))
            .collect();
        for ((w, ev), wf) in warps.iter().zip(&mut evs).zip(&mut facts) {
            for &f in reached {
                let entry = if f == kernel {
                    (w.exists, w.exists)
                } else {
                    (w.exists, 0)
                };
                let g = graphs.func(f);
                let cond = |b: BlockId| wf.conds.get(&(f, b));
                let lanes = active::active_lanes(g, &control[&f], entry, cond, true);
                let bounded = wf.conds.iter().any(|((h, _), c)| {
                    *h == f && matches!(c, Cond::Threshold { bounded: true, .. })
                });
                let strict = if bounded {
                    active::active_lanes(g, &control[&f], entry, cond, false)
                } else {
                    lanes.clone()
                };
                wf.strict.insert(f, strict.iter().map(|x| x.1).collect());
                wf.active.insert(f, lanes);
            }
            for &e in exprs.values() {
                let l = ev.eval(&mut arena, e);
                wf.values.insert(e, l);
            }
            for &(f, blk, _) in &branches {
                let Some(c) = wf.conds.get(&(f, blk)) else {
                    continue;
                };
                let g = graphs.func(f);
                let active = |b: BlockId| wf.active[&f][b.index()];
                let cond = |b: BlockId| wf.conds.get(&(f, b));
                if let Some(s) = sweep::sweep(&arena, g, m.func(f), (f, blk), c, &active, &cond) {
                    wf.sweeps.insert((f, blk), s);
                }
            }
        }
        drop(evs);
        KernelAcf {
            kernel,
            arena,
            exprs,
            block,
            warps,
            facts,
            over_budget,
        }
    }

    /// The ACF of `v` as text, if it was built.
    pub fn render(&self, m: &Module, f: FuncId, v: Value) -> Option<String> {
        let names = display::Names {
            m,
            kernel: self.kernel,
        };
        Some(display::render(&self.arena, names, self.expr(f, v)?))
    }

    /// The expression built for `v` in `f`, if it was asked for.
    pub fn expr(&self, f: FuncId, v: Value) -> Option<ExprId> {
        self.exprs.get(&(f, v)).copied()
    }

    /// `v` instantiated for warp `w`.
    pub fn lanes(&self, w: usize, f: FuncId, v: Value) -> Option<&Lanes> {
        self.facts[w].values.get(&self.expr(f, v)?).map(|l| &**l)
    }

    /// The condition of the branch ending `b`, in warp `w`.
    pub fn cond(&self, w: usize, f: FuncId, b: BlockId) -> Option<&Cond> {
        self.facts[w].conds.get(&(f, b))
    }

    /// Each lane's exit iteration, for a loop exit that tests a counter
    /// against a per-lane bound (see [`sweep`]).
    pub fn sweep(&self, w: usize, f: FuncId, b: BlockId) -> Option<&sweep::Sweep> {
        self.facts[w].sweeps.get(&(f, b))
    }

    /// `(may, must)` active lanes of block `b` in warp `w`.
    pub fn active(&self, w: usize, f: FuncId, b: BlockId) -> (u32, u32) {
        self.facts[w]
            .active
            .get(&f)
            .and_then(|v| v.get(b.index()))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Lanes active every time block `b` runs in warp `w`, even in the
    /// warp a bounds check cuts (for the figures' minimum).
    pub fn active_strict(&self, w: usize, f: FuncId, b: BlockId) -> u32 {
        self.facts[w]
            .strict
            .get(&f)
            .and_then(|v| v.get(b.index()))
            .copied()
            .unwrap_or(0)
    }

    /// Whether `v` has one value in every warp, over the lanes that can be
    /// active where `b` runs: `threadIdx.x / 32`, `threadIdx.y` when
    /// `blockDim.x` is a multiple of 32. Such values count as uniform for
    /// every check.
    pub fn warp_uniform(&self, f: FuncId, b: BlockId, v: Value) -> bool {
        (0..self.warps.len()).all(|w| {
            let (may, _) = self.active(w, f, b);
            may == 0
                || self
                    .lanes(w, f, v)
                    .is_some_and(|l| l.uniform(may).is_some())
        })
    }
}
