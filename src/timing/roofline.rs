//! The throughput term of the time bound: the most bytes a launch moves,
//! at the machine's bandwidths. Per warp the cost stage bounds the global
//! sectors (its `sectors` metric) and the shared-memory wavefronts (each
//! shared access at its bank-conflict figure); the launch moves at most
//! the per-warp bound times the warps of the grid, the busiest SM at most
//! its blocks' warps' worth of wavefronts. Both bounds add the time the
//! throughput limits take ([`Throughput::delay`]): why adding is sound is
//! in [`crate::machine::throughput`].

use super::costs::wavefront_costs;
use crate::analysis::KernelAnalysis;
use crate::budget::Meter;
use crate::checks::SiteFigures;
use crate::cost::bound::{Bound, Names, Params};
use crate::cost::metric::{self, Metric, Weights};
use crate::cost::Problem;
use crate::ir::Module;
use crate::machine::{Machine, Throughput, Traffic};

/// The throughput term of one launch.
#[derive(Clone, Debug)]
pub struct Roofline {
    /// Global sectors per warp, at most.
    pub sectors: Bound,
    /// Shared-memory wavefronts per warp, at most.
    pub wavefronts: Bound,
    /// The launch's traffic, at most, at the parameters.
    pub traffic: Traffic,
    /// The cycles each limit needs for it.
    pub throughput: Throughput,
}

/// The launch's shape: warps per block, blocks, SMs.
pub struct Shape {
    pub warps_per_block: u64,
    pub blocks: u64,
    pub sms: u32,
}

/// The throughput term of kernel `k`'s launch of `shape` at `at`.
#[allow(clippy::too_many_arguments)]
pub fn roofline(
    m: &Module,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    problem: &Problem,
    (names, at): (&Names, &Params),
    machine: &Machine,
    shape: &Shape,
    meter: &Meter,
) -> Result<Roofline, String> {
    let f = m.func(k.kernel);
    let everything = |_: crate::ir::InstId, _: crate::ir::BlockId| true;
    let sector_costs = metric::costs(m, k, figures, Metric::Sectors, &Weights::default())?;
    let sectors = problem.solve(f, &sector_costs, &everything, meter)?;
    let wavefronts = problem.solve(f, &wavefront_costs(m, k, figures)?, &everything, meter)?;
    let value = |b: &Bound| {
        names.eval_bound(b, at).ok_or_else(|| {
            "give every parameter the bytes moved depend on a value (--param NAME=VALUE)"
                .to_string()
        })
    };
    let warps = shape.warps_per_block as f64;
    let busiest = shape.blocks.div_ceil(u64::from(shape.sms.max(1)));
    let traffic = Traffic {
        sectors: value(&sectors)? * warps * shape.blocks as f64,
        sm_wavefronts: value(&wavefronts)? * warps * busiest as f64,
    };
    Ok(Roofline {
        throughput: machine.throughput(&traffic),
        sectors,
        wavefronts,
        traffic,
    })
}

impl Roofline {
    /// What dominates a bound of `latency` cycles (its latency and issue
    /// part) plus this term: the slowest resource when the throughput
    /// part is the larger, else `None`.
    pub fn dominant(&self, latency: f64) -> Option<(&'static str, f64)> {
        let (resource, cycles) = self.throughput.floor();
        (self.throughput.delay() > latency && cycles > 0.0).then_some((resource, cycles))
    }
}
