//! Static bounds on a kernel's cycles, by two methods, the smaller one
//! reported (both are sound for the machine of `sim::cycles`):
//!
//! * **Work and span** (RaCuda §5, Theorem 2). The SM's scheduler is
//!   greedy, so the blocks resident on it finish within W/P + S cycles: W
//!   the warp instructions they issue, S their longest chain of latencies
//!   (RaCuda's span). Per warp, the cost stage bounds the instructions
//!   (its `steps` metric) and the latencies (each instruction weighted by
//!   its latency, barriers by their cost). W is the per-warp bound times
//!   the warps resident on the SM. When every warp meets the same
//!   barriers, the per-warp latency bound is also the block's span (each
//!   stretch between barriers is bounded by one path of the warp graph);
//!   otherwise S is the sum over the block's warps.
//! * **Abstract CTA simulation** ([`super::abstract_cta`]): the longest
//!   path of the abstract warp with every instruction charged its latency
//!   plus the most cycles round-robin can make a ready warp wait.
//!
//! A launch runs in waves: the busiest SM runs at most `waves` of them,
//! each bounded as above.
//!
//! Both methods then add the throughput term ([`super::roofline`]): the
//! cycles the most bytes the launch can move take at the machine's DRAM,
//! L2 and shared-memory rates. The latency bounds assume memory serves
//! every request at once; queueing behind other bytes delays any chain of
//! the launch by at most those cycles (`machine::throughput`), so the sum
//! is an upper bound where the latency bound alone can be below physics.

use super::abstract_cta::{self, AbstractPath, LineShare, Shares};
use super::costs::{barriers_uniform, kernel_costs};
use super::roofline::{self, Roofline, Shape};
use super::NOMINAL_TRIPS;
use crate::analysis::KernelAnalysis;
use crate::budget::Meter;
use crate::checks::SiteFigures;
use crate::cost::bound::{Bound, Names, Params};
use crate::cost::metric::{self, Metric, Weights};
use crate::cost::rat::Rat;
use crate::graph::FunctionGraphs;
use crate::ir::Module;
use crate::machine::{static_shared_bytes, Machine, Residency, Waves};
use std::time::Instant;

/// Which method gave the reported bound.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Method {
    WorkSpan,
    AbstractCta,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::WorkSpan => "work-span",
            Method::AbstractCta => "abstract-cta",
        }
    }
}

/// One method's bounds: a block (in its wave) and the launch, both with
/// the throughput term.
#[derive(Clone, Debug, PartialEq)]
pub struct Cycles {
    pub block: f64,
    pub launch: f64,
    /// The throughput term included in `block` and `launch`.
    pub throughput: f64,
}

impl Cycles {
    /// The launch's latency and issue part.
    pub fn latency(&self) -> f64 {
        self.launch - self.throughput
    }
}

/// The work/span method's pieces.
#[derive(Clone, Debug)]
pub struct WorkSpan {
    /// Warp instructions per warp, at most.
    pub work: Bound,
    /// A warp's chain of latencies, at most.
    pub span: Bound,
    /// Per block in its wave: `work_factor·work + span_factor·span`.
    pub work_factor: Rat,
    pub span_factor: Rat,
    /// Why the span is the sum over the warps, when it is.
    pub span_note: Option<String>,
    /// At the parameters (`None`: one is missing).
    pub work_value: Option<f64>,
    pub span_value: Option<f64>,
}

impl WorkSpan {
    /// The block bound: the least of the sums of a work and a span piece.
    pub fn block_bound(&self) -> Bound {
        self.work
            .combine(self.work_factor, &self.span, self.span_factor)
    }
}

/// Everything `warpcheck time` reports about one kernel.
#[derive(Clone, Debug)]
pub struct TimeBound {
    pub names: Names,
    pub residency: Result<Residency, String>,
    pub waves: Option<Waves>,
    /// Warps resident on an SM with the block: N_high.
    pub resident_warps: u64,
    /// The most cycles a ready warp waits for an issue slot.
    pub wait: u64,
    pub work_span: Result<WorkSpan, String>,
    pub work_span_cycles: Result<Cycles, String>,
    pub abstract_cta: Result<Cycles, String>,
    /// The throughput term both methods include.
    pub roofline: Result<Roofline, String>,
    /// The abstract warp's worst path (also when its bound does not hold:
    /// it still says where the time goes).
    pub path: Option<AbstractPath>,
    /// `path` runs loops whose trip count needs a missing parameter
    /// [`NOMINAL_TRIPS`] times: a shape, not a bound.
    pub nominal: bool,
    /// The smaller bound and its method.
    pub chosen: Option<(Method, Cycles)>,
    pub seconds: f64,
}

impl TimeBound {
    /// The chosen bound's launch cycles split like the worst path.
    pub fn breakdown(&self) -> Option<(Shares, Vec<LineShare>)> {
        let (_, c) = self.chosen.as_ref()?;
        let path = self.path.as_ref()?;
        let k = if path.cycles > 0.0 {
            c.latency() / path.cycles
        } else {
            0.0
        };
        let lines = path
            .lines
            .iter()
            .map(|l| LineShare {
                cycles: l.cycles.scaled(k),
                ..l.clone()
            })
            .collect();
        Some((path.shares.scaled(k), lines))
    }
}

/// What the bounds are for: the machine, the parameters and grid, and
/// the dynamic shared memory per block.
pub struct Request<'a> {
    pub machine: &'a Machine,
    pub at: &'a Params,
    pub dynamic_shared: u64,
}

/// Bounds kernel `k`'s cycles for `req`.
pub fn time_kernel(
    m: &Module,
    g: &FunctionGraphs,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    req: &Request<'_>,
    meter: &Meter,
) -> TimeBound {
    let start = Instant::now();
    let machine = req.machine;
    let f = m.func(k.kernel);
    let threads: u32 = k.block_dim.dims.iter().product();
    let blocks: u64 = req.at.grid.iter().map(|&d| u64::from(d)).product();
    let residency = machine.residency(threads, static_shared_bytes(m) + req.dynamic_shared);
    let waves = residency
        .as_ref()
        .ok()
        .map(|r| Waves::new(blocks, machine.sms, r));
    let n = u64::from(threads.div_ceil(crate::hw::WARP_SIZE).max(1));
    let resident_warps = waves.map_or(n, |w| w.resident * n);
    let p = u64::from(machine.issue_rate.max(1));
    let wait = (resident_warps - 1) / p;
    let prepared = crate::cost::prepare(m, g, k, figures, 2, meter);
    let mut out = TimeBound {
        names: prepared.names.clone(),
        residency: residency.clone(),
        waves,
        resident_warps,
        wait,
        work_span: Err(String::new()),
        work_span_cycles: Err(String::new()),
        abstract_cta: Err(String::new()),
        roofline: Err(String::new()),
        path: None,
        nominal: false,
        chosen: None,
        seconds: 0.0,
    };
    let setup = (|| {
        let waves = waves.ok_or_else(|| residency.clone().err().unwrap_or_default())?;
        let problem = prepared.problem.as_ref().map_err(Clone::clone)?;
        let steps = metric::costs(m, k, figures, Metric::Steps, &Weights::default())?;
        let costs = kernel_costs(m, k, figures, machine)?;
        Ok::<_, String>((waves, problem, steps, costs))
    })();
    let (waves, problem, steps, costs) = match setup {
        Ok(x) => x,
        Err(e) => {
            out.work_span = Err(e.clone());
            out.work_span_cycles = Err(e.clone());
            out.abstract_cta = Err(e.clone());
            out.roofline = Err(e);
            out.seconds = start.elapsed().as_secs_f64();
            return out;
        }
    };
    let uniform = barriers_uniform(m, k, g, &costs.barriers);
    let per_warp = (&steps, &costs.as_costs(machine, 0));
    let warps = (n, resident_warps, p);
    let names_at = (&out.names, req.at);
    let ws = work_span(f, problem, per_warp, &uniform, warps, names_at, meter);
    out.work_span_cycles = ws.as_ref().map_err(Clone::clone).and_then(|ws| {
        let block = out
            .names
            .eval_bound(&ws.block_bound(), req.at)
            .ok_or_else(|| {
                "give every parameter the bound names a value (--param NAME=VALUE)".to_string()
            })?;
        Ok(Cycles {
            block,
            launch: block * waves.waves as f64,
            throughput: 0.0,
        })
    });
    out.work_span = ws;
    // Abstract CTA simulation.
    let path_at = |nominal| {
        abstract_cta::trip_values(
            &prepared.trips,
            &out.names,
            (g, problem.unbounded()),
            req.at,
            nominal,
        )
        .and_then(|trips| {
            abstract_cta::longest_path(m, f, g, problem, &costs, &trips, (machine, wait))
        })
    };
    let path = path_at(None);
    out.abstract_cta = match (&path, &uniform) {
        (Err(e), _) => Err(e.clone()),
        (Ok(_), Err(why)) => Err(why.clone()),
        (Ok(p), Ok(())) => Ok(Cycles {
            block: p.cycles,
            launch: p.cycles * waves.waves as f64,
            throughput: 0.0,
        }),
    };
    // Without the parameters some trip counts need, the worst path's
    // shape at a nominal trip count still says where the time goes.
    out.path = match path {
        Ok(p) => Some(p),
        Err(_) => {
            out.nominal = true;
            path_at(Some(NOMINAL_TRIPS)).ok()
        }
    };
    // The throughput term, on both methods.
    let shape = Shape {
        warps_per_block: n,
        blocks,
        sms: machine.sms,
    };
    let names_at = (&out.names, req.at);
    out.roofline = roofline::roofline(m, k, figures, problem, names_at, machine, &shape, meter);
    out.add_throughput(machine);
    out.seconds = start.elapsed().as_secs_f64();
    out
}

/// Work and span (see the module's docs): the bounds on a warp's steps and
/// on its chain of latencies (`per_warp`), the work shared by the
/// `resident` warps at `p` a cycle, the span summed over the block's `n`
/// warps where they do not meet the same barriers (`uniform`).
fn work_span(
    f: &crate::ir::Function,
    problem: &crate::cost::Problem,
    (steps, latencies): (&metric::Costs, &metric::Costs),
    uniform: &Result<(), String>,
    (n, resident, p): (u64, u64, u64),
    (names, at): (&Names, &Params),
    meter: &Meter,
) -> Result<WorkSpan, String> {
    let everything = |_: crate::ir::InstId, _: crate::ir::BlockId| true;
    let work = problem.solve(f, steps, &everything, meter)?;
    let span = problem.solve(f, latencies, &everything, meter)?;
    let (span_factor, span_note) = match uniform {
        Ok(()) => (Rat::ONE, None),
        Err(why) => (
            Rat::int(i128::from(n)),
            Some(format!("the span is summed over the block's warps: {why}")),
        ),
    };
    Ok(WorkSpan {
        work_value: names.eval_bound(&work, at),
        span_value: names.eval_bound(&span, at),
        work,
        span,
        work_factor: Rat::new(i128::from(resident), i128::from(p)),
        span_factor,
        span_note,
    })
}

impl TimeBound {
    /// Adds the roofline's throughput term to both methods' cycles (an
    /// error where it is needed and missing), and chooses the method with
    /// the fewer cycles per launch.
    fn add_throughput(&mut self, machine: &Machine) {
        let delay = match &self.roofline {
            Ok(r) => Ok(r.throughput.delay()),
            Err(_) if !machine.throughput_limited() => Ok(0.0),
            Err(e) => Err(format!("the bytes it moves: {e}")),
        };
        for c in [&mut self.work_span_cycles, &mut self.abstract_cta] {
            *c = match (c.clone(), &delay) {
                (Ok(c), Ok(d)) => Ok(Cycles {
                    block: c.block + d,
                    launch: c.launch + d,
                    throughput: *d,
                }),
                (Ok(_), Err(e)) => Err(e.clone()),
                (Err(e), _) => Err(e),
            };
        }
        self.chosen = [
            (Method::AbstractCta, &self.abstract_cta),
            (Method::WorkSpan, &self.work_span_cycles),
        ]
        .into_iter()
        .filter_map(|(method, c)| c.as_ref().ok().map(|c| (method, c.clone())))
        .min_by(|a, b| a.1.launch.total_cmp(&b.1.launch));
    }
}
