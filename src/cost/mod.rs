//! Cost bounds: automated amortized resource analysis (RaCuda §4, §6) over
//! the kernel's optimised IR, per warp, for the four metrics of RaCuda's
//! Table 1, solved as linear programs.
//!
//! The pieces, in order:
//!
//! * [`metric`]: what each instruction, edge and divergent branch costs,
//!   from the ACF checks' per-site figures (the simulator's counters are
//!   the truth these must cover).
//! * [`conditions`]: the logical conditions — per-lane affine bounds of the
//!   integer values, loop counters split into start plus step times an
//!   iteration counter, guards as facts.
//! * [`trips`]: one trip bound per loop, from an exit test on a counter,
//!   rotated `icmp eq/ne` exits and unrolled loops included.
//! * [`warp_graph`]: the paths a warp takes, divergent branches serialised.
//! * [`potential`]: templates of potential functions and the constraints
//!   that make them pay; [`lp`] solves them (CBC, behind a trait).
//! * [`bound`]: the result as a polynomial to print, write and evaluate,
//!   or the least of two: the LP is solved leading degree first and, when
//!   that bound has a parameter in it, constant first too.
//!
//! **Deviation from RaCuda, by design.** Potential is carried by one
//! iteration counter per loop (the uniform `[i0]` of the ACF's split of a
//! counter into `[i0] + tid`), not by the source's variables: the trip
//! bound derived from the real counter, its guards and its lanes is the
//! fact that releases it on the back edge. This handles rotated and
//! unrolled loops, thread-dependent counters and grid strides alike, and
//! the counter is uniform by construction, so RaCuda's set X of
//! potential-carrying variables needs no tracking.
//!
//! **Invariant:** reads `ir`, `graph`, `analysis`, `acf` and the checks'
//! figures, never `sim`; sees the LP solver only through [`lp::Solver`];
//! a failed solve is "no bound" with a reason, not an error.

pub mod affine;
pub mod bound;
mod cbc;
pub mod conditions;
pub mod lp;
pub mod metric;
pub mod potential;
pub mod rat;
pub mod remainder;
pub mod report;
pub mod sanity;
pub mod splits;
pub mod sweeps;
pub mod trips;
pub mod warp_graph;

use crate::analysis::KernelAnalysis;
use crate::budget::Meter;
use crate::checks::SiteFigures;
use crate::dataflow::FastMap as HashMap;
use crate::graph::{FunctionGraphs, LoopId};
use crate::ir::{BlockId, FileId, Module};
use affine::Affine;
use bound::{Bound, Factors, Names, Poly};
pub use cbc::Cbc;
pub use metric::{Metric, Weights};
use potential::Order;
use rat::Rat;
use std::time::Instant;
use tracing::field::Empty;
pub use trips::Trip;
use warp_graph::{Pay, WarpGraph};

/// What the user configured.
#[derive(Clone, Debug)]
pub struct Options {
    /// Highest degree of the base functions (products of atoms).
    pub degree: usize,
    pub weights: Weights,
    /// The metrics to bound.
    pub metrics: Vec<Metric>,
    /// Also bound each loop's and each line's share.
    pub attribution: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            degree: 2,
            weights: Weights::default(),
            metrics: Metric::ALL.to_vec(),
            attribution: true,
        }
    }
}

/// Where part of a bound comes from: a loop or a source line. Shares
/// are the leading-degree-first solution's (one LP solve each), not the
/// least of several like the whole bound.
#[derive(Clone, Debug)]
pub struct Share {
    pub file: Option<FileId>,
    pub line: u32,
    pub bound: Poly,
}

/// One metric's bound for one kernel.
#[derive(Clone, Debug)]
pub struct MetricBound {
    pub metric: Metric,
    /// The per-warp bound, or why there is none.
    pub bound: Result<Bound, String>,
    /// Per loop (by its header's line): the part of the bound spent in it.
    pub loops: Vec<Share>,
    /// Per source line with a cost: the part spent on it.
    pub lines: Vec<Share>,
}

/// The bounds of one kernel.
#[derive(Clone, Debug)]
pub struct KernelBounds {
    pub names: Names,
    pub metrics: Vec<MetricBound>,
    /// Warps per block, for launch-wide bounds.
    pub warps_per_block: u32,
    pub lp_vars: usize,
    pub lp_rows: usize,
    pub seconds: f64,
    /// A panic while bounding: every metric is "no bound" with it, and
    /// `warpcheck bound` exits 3.
    pub internal: Option<String>,
}

impl KernelBounds {
    pub fn get(&self, m: Metric) -> Option<&MetricBound> {
        self.metrics.iter().find(|b| b.metric == m)
    }
}

/// Where a loop is in the source: its back edge's branch (clang gives it
/// the `for` or `while` line), else its header's first located instruction.
fn loop_pos(m: &Module, f: &crate::ir::Function, lp: &crate::graph::Loop) -> Option<(FileId, u32)> {
    let latch = lp
        .latches
        .iter()
        .filter_map(|&t| f.blocks[t.index()].insts.last())
        .find_map(|&i| line_of(m, f, i));
    latch.or_else(|| {
        f.blocks[lp.header.index()]
            .insts
            .iter()
            .find_map(|&x| line_of(m, f, x))
    })
}

/// A line of code, for attribution.
fn line_of(m: &Module, f: &crate::ir::Function, i: crate::ir::InstId) -> Option<(FileId, u32)> {
    m.inst_pos(f, i)
        .filter(|p| p.line > 0)
        .map(|p| (p.file, p.line))
}

/// A kernel's bound problem before any costs: the warp graph, each
/// loop's trip bound and the potential system. One is solved for each
/// metric (and by `timing` for its own per-instruction costs).
pub struct Problem {
    pub graph: WarpGraph,
    /// The swept accesses' blocks whose loop entries pay for them.
    swept: sweeps::Swept,
    system: potential::System,
    /// Why each loop without a trip bound has none (why a solve fails).
    unbounded: Vec<String>,
    /// The trip factors the bounds mention, to evaluate them.
    factors: Factors,
    pub lp_vars: usize,
    pub lp_rows: usize,
    /// Whether some loop's entry pays its exits' splits.
    per_entry_splits: bool,
    /// The same kernel with every divergent loop exit charged each time
    /// it runs ([`splits::Splits::each_time`]), when some loop's entry
    /// pays its exits' splits: where a loop runs fewer iterations than it
    /// could split a warp, its bounds are the smaller ones.
    each_time: Option<Box<Problem>>,
}

/// What [`prepare`] finds: the names bounds are written in, the trip
/// bounds, and the problem, or why there is none.
pub struct Prepared {
    pub names: Names,
    pub trips: Vec<Trip>,
    pub problem: Result<Problem, String>,
}

/// Builds `k`'s bound problem (within `meter`'s LP rows).
pub fn prepare(
    m: &Module,
    g: &FunctionGraphs,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    degree: usize,
    meter: &Meter,
) -> Prepared {
    let f = m.func(k.kernel);
    let mut names = names_of(f);
    let env = conditions::Env {
        m,
        f,
        g,
        block: k.block_dim.dims,
        unsigned: names.unsigned.clone(),
    };
    let trips = trips::trip_bounds(&env, &mut names.factors);
    let build = |each_time| {
        let inputs = (&trips[..], &names.factors);
        problem(&env, (k, figures), inputs, (degree, each_time), meter).map(|mut p| {
            p.factors = names.factors.clone();
            p
        })
    };
    let problem = build(false).map(|mut p| {
        if p.per_entry_splits {
            p.each_time = build(true).ok().map(Box::new);
        }
        p
    });
    Prepared {
        names,
        trips,
        problem,
    }
}

/// The names a kernel's bounds are written in, before any factor.
pub fn names_of(f: &crate::ir::Function) -> Names {
    Names {
        params: f
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| p.name.clone().unwrap_or_else(|| format!("arg{i}")))
            .collect(),
        factors: Factors::default(),
        unsigned: conditions::unsigned_params(&f.demangled, f.params.len()),
    }
}

/// A panic's message, for the "no bound" it becomes.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    format!("internal error while bounding this kernel ({text}); please report it")
}

fn problem(
    env: &conditions::Env<'_>,
    (k, figures): (&KernelAnalysis, &[SiteFigures]),
    (trips, factors): (&[Trip], &Factors),
    (degree, each_time): (usize, bool),
    meter: &Meter,
) -> Result<Problem, String> {
    let (m, f, g) = (env.m, env.f, env.g);
    if !g.loops.is_reducible() {
        return Err("the control flow has a cycle with two entries".into());
    }
    let divergent = metric::divergent_branches(m, k, figures);
    let is_divergent = |b: BlockId| divergent.contains(&b);
    let splits = if each_time {
        splits::Splits::each_time()
    } else {
        let mut s = splits::exit_splits(env, (&k.acf, k.kernel), &is_divergent);
        splits::ladder_splits(&mut s, env, k, figures, &is_divergent);
        s
    };
    let graph = WarpGraph::new(f, g, &is_divergent, &splits)?;
    let swept = sweeps::swept_blocks(env, k, &is_divergent);
    // Facts per CFG edge, with the thread symbols weakened away; each edge
    // narrows its own ranges.
    let mut facts: HashMap<(BlockId, BlockId), Vec<Affine>> = HashMap::default();
    for e in &graph.edges {
        if facts.contains_key(&e.logical) || e.logical.0 == e.logical.1 && e.to.is_none() {
            continue;
        }
        // The warp graph of a large kernel has many edges, each with its
        // facts: the kernel's time and the process's memory bind here.
        if let Err(e) = meter.time_and_memory() {
            return Err(format!("the {e} ran out"));
        }
        let mut vals = conditions::Values::new(env, conditions::Ranges::default());
        let fs = conditions::edge_facts(&mut vals, e.logical.0, e.logical.1)
            .iter()
            .map(|a| env.eliminate(a, true))
            .collect();
        facts.insert(e.logical, fs);
    }
    let trip_of: Vec<Option<Affine>> = trips
        .iter()
        .map(|t| match t {
            Trip::Bounded(a) => Some(a.clone()),
            Trip::Unknown(_) => None,
        })
        .collect();
    let inputs = potential::Inputs {
        env,
        trips: &trip_of,
        facts: &facts,
        links: &remainder::links(env),
        factors,
        degree,
    };
    let system = potential::System::new(&graph, &inputs);
    let (lp_vars, lp_rows) = (system.lp.vars, system.lp.rows.len());
    tracing::Span::current().record("lp_vars", lp_vars);
    tracing::Span::current().record("lp_rows", lp_rows);
    meter
        .lp_rows(lp_rows)
        .map_err(|e| format!("the {e} ran out"))?;
    let unbounded = trips
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Trip::Unknown(why) => {
                let line = loop_pos(m, f, g.loops.get(LoopId(i as u32)))
                    .map_or(String::new(), |(_, l)| format!(" at line {l}"));
                Some(format!("the loop{line} has no trip bound: {why}"))
            }
            _ => None,
        })
        .collect();
    Ok(Problem {
        graph,
        swept,
        system,
        unbounded,
        factors: Factors::default(),
        lp_vars,
        lp_rows,
        each_time: None,
        per_entry_splits: splits.any_per_entry(),
    })
}

impl Problem {
    /// The least bound on the costs `costs` of the instructions `keep`
    /// selects, or why there is none: the LP's leading-degree-first
    /// solution and, where that has a parameter in it, the constant-first
    /// and every-atom-at-1-first ones (see [`Order`]), each checked on its
    /// own, and where splits cost something the solutions of the
    /// each-time charge; the bound is their minimum. An extra solve that
    /// fails leaves the others.
    pub fn solve(
        &self,
        f: &crate::ir::Function,
        costs: &metric::Costs,
        keep: &dyn Fn(crate::ir::InstId, BlockId) -> bool,
        meter: &Meter,
    ) -> Result<Bound, String> {
        let edge_costs = self.checked_costs(f, costs, keep, meter)?;
        let first = self.solve_in(f, &edge_costs, Order::HighestFirst, meter)?;
        let mut bound = Bound::new(first);
        // A constant bound is already least everywhere.
        let max_degree = bound.first().degree();
        if max_degree >= 1 {
            for order in [
                Order::ConstantFirst { max_degree },
                Order::SumFirst { max_degree },
            ] {
                if meter.time().is_err() {
                    break;
                }
                if let Ok(p) = self.solve_in(f, &edge_costs, order, meter) {
                    bound.push(p);
                }
            }
        }
        // Splits cost nothing in most metrics: then the other charge of
        // them bounds the same. Its pieces are for loops of a few
        // iterations; one that is not below every piece where each atom
        // is 1 would only win where the loops do not run.
        if let Some(other) = self
            .each_time
            .as_ref()
            .filter(|_| costs.divergence > Rat::ZERO)
        {
            if let Ok(b) = other.solve(f, costs, keep, meter) {
                for p in b.pieces() {
                    if bound.pieces().iter().all(|q| p.at_ones() < q.at_ones()) {
                        bound.push(p.clone());
                    }
                }
            }
        }
        Ok(bound)
    }

    /// The leading-degree-first bound alone (one LP solve): what the
    /// per-loop and per-line shares use.
    pub fn solve_first(
        &self,
        f: &crate::ir::Function,
        costs: &metric::Costs,
        keep: &dyn Fn(crate::ir::InstId, BlockId) -> bool,
        meter: &Meter,
    ) -> Result<Poly, String> {
        let edge_costs = self.checked_costs(f, costs, keep, meter)?;
        self.solve_in(f, &edge_costs, Order::HighestFirst, meter)
    }

    /// The edges' costs, if the time is not out and a float LP can take
    /// them.
    fn checked_costs(
        &self,
        f: &crate::ir::Function,
        costs: &metric::Costs,
        keep: &dyn Fn(crate::ir::InstId, BlockId) -> bool,
        meter: &Meter,
    ) -> Result<Vec<Rat>, String> {
        if let Err(e) = meter.time_and_memory() {
            return Err(format!("the {e} ran out"));
        }
        let edge_costs = self.edge_costs(f, costs, keep);
        match self.system.numeric_trouble(&edge_costs) {
            Some(why) => Err(why),
            None => Ok(edge_costs),
        }
    }

    /// One lexicographic solve in `order`, believed only once it pays
    /// every row exactly and covers the cheapest path.
    fn solve_in(
        &self,
        f: &crate::ir::Function,
        edge_costs: &[Rat],
        order: Order,
        meter: &Meter,
    ) -> Result<Poly, String> {
        let lp = self.system.with_costs(edge_costs, order);
        let seconds = meter.seconds_left().unwrap_or(30.0).min(30.0);
        let solver = Cbc { seconds };
        let x = lp::lexicographic(&solver, &lp, &self.system.rounds(order)).map_err(|e| {
            if self.unbounded.is_empty() {
                e
            } else {
                self.unbounded.join("; ")
            }
        })?;
        // The solver works in floats: its answer is believed only once it
        // pays every row exactly, and only if it covers the cheapest path.
        let x = potential::rationals(&x);
        self.system.verify(edge_costs, &x)?;
        let p = self.system.entry_poly(&x);
        let cheapest = sanity::cheapest_path(f, &self.graph, edge_costs);
        sanity::check(&p, &self.factors, cheapest)?;
        Ok(p)
    }

    /// The cost of each warp-graph edge: the instructions of the block it
    /// leaves that `keep` selects, and what the edge itself pays (charged
    /// to the block it leaves).
    pub fn edge_costs(
        &self,
        f: &crate::ir::Function,
        costs: &metric::Costs,
        keep: &dyn Fn(crate::ir::InstId, BlockId) -> bool,
    ) -> Vec<Rat> {
        edge_costs(f, (&self.graph, &self.swept), costs, keep)
    }

    /// Why each loop without a trip bound has none.
    pub fn unbounded(&self) -> &[String] {
        &self.unbounded
    }
}

/// Bounds every metric of one kernel. A panic inside costs this kernel's
/// bounds only: each metric is "no bound" with it, and `internal` says so.
pub fn bound_kernel(
    m: &Module,
    g: &FunctionGraphs,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    opts: &Options,
    meter: &Meter,
) -> KernelBounds {
    let start = Instant::now();
    let run = || bound_kernel_unguarded(m, g, k, figures, opts, meter);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(kb) => kb,
        Err(payload) => {
            let why = panic_message(payload.as_ref());
            let threads: u32 = k.block_dim.dims.iter().product();
            let out = KernelBounds {
                names: names_of(m.func(k.kernel)),
                metrics: no_bounds(opts, &why),
                warps_per_block: threads.div_ceil(crate::hw::WARP_SIZE),
                lp_vars: 0,
                lp_rows: 0,
                seconds: 0.0,
                internal: Some(why),
            };
            finish(out, start)
        }
    }
}

fn bound_kernel_unguarded(
    m: &Module,
    g: &FunctionGraphs,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    opts: &Options,
    meter: &Meter,
) -> KernelBounds {
    let start = Instant::now();
    let span = tracing::info_span!("cost", lp_vars = Empty, lp_rows = Empty, loops = Empty);
    let _e = span.enter();
    let f = m.func(k.kernel);
    span.record("loops", g.loops.len());
    let prepared = prepare(m, g, k, figures, opts.degree, meter);
    let threads: u32 = k.block_dim.dims.iter().product();
    let mut out = KernelBounds {
        names: prepared.names,
        metrics: Vec::new(),
        warps_per_block: threads.div_ceil(crate::hw::WARP_SIZE),
        lp_vars: 0,
        lp_rows: 0,
        seconds: 0.0,
        internal: None,
    };
    let problem = match prepared.problem {
        Ok(p) => p,
        Err(why) => {
            out.metrics = no_bounds(opts, &why);
            return finish(out, start);
        }
    };
    out.lp_vars = problem.lp_vars;
    out.lp_rows = problem.lp_rows;
    for &metric in &opts.metrics {
        let costs = match metric::costs(m, k, figures, metric, &opts.weights) {
            Ok(c) => c,
            Err(e) => {
                out.metrics.push(MetricBound {
                    metric,
                    bound: Err(e),
                    loops: Vec::new(),
                    lines: Vec::new(),
                });
                continue;
            }
        };
        let bound = problem.solve(f, &costs, &|_, _| true, meter);
        let solve = |keep: &dyn Fn(crate::ir::InstId, BlockId) -> bool| {
            problem.solve_first(f, &costs, keep, meter)
        };
        let mut mb = MetricBound {
            metric,
            bound,
            loops: Vec::new(),
            lines: Vec::new(),
        };
        if opts.attribution && mb.bound.as_ref().is_ok_and(|b| !b.is_zero()) {
            for (_, lp) in g.loops.iter() {
                let inside = |_: crate::ir::InstId, b: BlockId| lp.contains(b);
                if let Ok(p) = solve(&inside) {
                    if !p.is_zero() {
                        let pos = loop_pos(m, f, lp);
                        mb.loops.push(Share {
                            file: pos.map(|p| p.0),
                            line: pos.map_or(0, |p| p.1),
                            bound: p,
                        });
                    }
                }
            }
            let mut lines: Vec<(FileId, u32)> = costs
                .inst
                .keys()
                .chain(costs.per_entry.iter().map(|p| &p.inst))
                .filter_map(|&i| line_of(m, f, i))
                .collect();
            lines.sort();
            lines.dedup();
            for (file, line) in lines.into_iter().take(MAX_LINES) {
                let on_line =
                    |i: crate::ir::InstId, _: BlockId| line_of(m, f, i) == Some((file, line));
                if let Ok(p) = solve(&on_line) {
                    if !p.is_zero() {
                        mb.lines.push(Share {
                            file: Some(file),
                            line,
                            bound: p,
                        });
                    }
                }
            }
        }
        out.metrics.push(mb);
    }
    finish(out, start)
}

/// Lines per metric that get their own share.
const MAX_LINES: usize = 32;

fn finish(mut out: KernelBounds, start: Instant) -> KernelBounds {
    out.seconds = start.elapsed().as_secs_f64();
    out
}

/// The cost of each warp-graph edge: the instructions of the block it
/// leaves that `keep` selects, and what the edge itself pays (charged to
/// the block it leaves). A swept access (`costs.per_entry`) whose block is
/// in `swept` for its loop is paid by the loop's entries, else per
/// execution.
fn edge_costs(
    f: &crate::ir::Function,
    (graph, swept): (&WarpGraph, &sweeps::Swept),
    costs: &metric::Costs,
    keep: &dyn Fn(crate::ir::InstId, BlockId) -> bool,
) -> Vec<Rat> {
    let per_entry = |p: &metric::PerEntry| swept.get(&p.block) == Some(&p.lp);
    let mut block_cost: HashMap<BlockId, Rat> = HashMap::default();
    let mut entry_cost: HashMap<LoopId, Rat> = HashMap::default();
    graph
        .edges
        .iter()
        .map(|e| {
            let b = graph.nodes[e.from].block;
            let base = *block_cost.entry(b).or_insert_with(|| {
                let each = costs
                    .per_entry
                    .iter()
                    .filter(|p| p.block == b && !per_entry(p) && keep(p.inst, b))
                    .fold(Rat::ZERO, |a, p| a + p.each);
                f.blocks[b.index()]
                    .insts
                    .iter()
                    .filter(|&&i| keep(i, b))
                    .filter_map(|i| costs.inst.get(i))
                    .fold(each, |a, &c| a + c)
            });
            let term = *f.blocks[b.index()]
                .insts
                .last()
                .expect("a block has a terminator");
            let pays = e.pays.iter().fold(Rat::ZERO, |a, p| match p {
                Pay::Phis(u, v) if keep(term, *u) => {
                    a + costs.phi * Rat::int(phi_count(f, *u, *v) as i128)
                }
                Pay::Divergence if keep(term, b) => a + costs.divergence,
                Pay::Splits(n) if keep(term, b) => a + costs.divergence * Rat::int(i128::from(*n)),
                Pay::Entry(l) => {
                    a + *entry_cost.entry(*l).or_insert_with(|| {
                        costs
                            .per_entry
                            .iter()
                            .filter(|p| p.lp == *l && per_entry(p) && keep(p.inst, p.block))
                            .fold(Rat::ZERO, |a, p| a + p.sum)
                    })
                }
                _ => a,
            });
            base + pays
        })
        .collect()
}

/// Phis of `to` that copy a value in from `from`.
fn phi_count(f: &crate::ir::Function, from: BlockId, to: BlockId) -> usize {
    f.blocks[to.index()]
        .insts
        .iter()
        .map(|&i| f.inst(i))
        .take_while(|i| i.op == crate::ir::Opcode::Phi)
        .filter(
            |i| matches!(&i.kind, crate::ir::InstKind::Phi { blocks } if blocks.contains(&from)),
        )
        .count()
}

/// Bounds for every kernel of an analysed module, each within its own
/// budget (time and LP rows), in the order of `a.kernels`.
pub fn bound_module(
    a: &crate::analysis::ModuleAnalysis<'_>,
    figures: &[Vec<SiteFigures>],
    opts: &Options,
    budget: &crate::budget::Budget,
) -> Vec<KernelBounds> {
    a.kernels
        .iter()
        .zip(figures)
        .map(|(k, figs)| {
            let g = a.graphs.func(k.kernel);
            bound_kernel(a.module, g, k, figs, opts, &budget.start())
        })
        .collect()
}

/// Every asked metric without a bound, for one reason.
fn no_bounds(opts: &Options, why: &str) -> Vec<MetricBound> {
    opts.metrics
        .iter()
        .map(|&metric| MetricBound {
            metric,
            bound: Err(why.to_string()),
            loops: Vec::new(),
            lines: Vec::new(),
        })
        .collect()
}
