//! Thread dependence as an IFDS problem (GPUCheck §3.1), solved by the
//! generic tabulation of `dataflow::ifds` over the kernel's supergraph.
//!
//! The facts (see `facts`) are SSA values that may differ between the
//! lanes of a warp, per-thread memory locations whose copies may differ,
//! and two helpers (`Masked`, `SharedWrite`). Flow functions (`flow`)
//! combine data dependence, the control rules of `control` (joins, loop
//! exits, skewed loops, per-thread writes under dependent branches) and the
//! instruction rules of `rules` (sources, warp-uniform registers and
//! primitives, memory). Calls are followed context-sensitively: a device
//! function gets one tabulation per entry fact, and returns only flow back
//! to the calls that entered with that fact.
//!
//! Memory shared between threads is not flow-sensitive: another warp can
//! write it at any time. The analysis runs in rounds: a round that finds
//! dependent data written to a shared location (`SharedWrite`) is followed
//! by one where every read of that location is a source; it stops when a
//! round finds nothing new (the set of locations only grows). A round does
//! not start over: the solver re-applies the flow functions of the reads of
//! shared memory and extends its fixpoint from there.

mod asm;
mod bits;
mod control;
mod facts;
mod flow;
mod kernel;
mod layout;
mod liveness;
mod memory;
mod results;
mod rules;

#[cfg(test)]
mod tests;

use super::{DependenceAnalysis, KernelDeps, KernelScope};
use crate::budget::{Exhausted, Meter};
use crate::dataflow::Solver;
use flow::TaintProblem;
use kernel::Kernel;
use memory::SharedTaint;
use std::cell::RefCell;

/// The IFDS thread-dependence analysis.
#[derive(Copy, Clone, Debug, Default)]
pub struct IfdsTaint;

impl DependenceAnalysis for IfdsTaint {
    /// Records its size (path and summary edges, rounds) on the current
    /// span.
    fn analyze_within(
        &self,
        scope: &KernelScope<'_>,
        meter: &Meter,
    ) -> Result<KernelDeps, Exhausted> {
        let KernelScope {
            m,
            graphs,
            kernel,
            reached,
            spaces,
        } = *scope;
        let k = Kernel::new(m, graphs, reached, spaces);
        let problem = TaintProblem {
            k: &k,
            shared: RefCell::new(SharedTaint::new(k.locs.shared_count())),
            entry: k.layout.proc_of[&kernel],
        };
        let mut solver = Solver::new(&problem);
        // Rounds: one more than those that found dependent shared memory.
        let mut rounds = 0;
        loop {
            rounds += 1;
            solver.run_checked(|edges| {
                meter.ifds_facts(edges)?;
                meter.time()
            })?;
            let found = results::shared_writes(&k, solver.solution());
            if !problem.shared.borrow_mut().add(&k.locs, &found) {
                break;
            }
            // Only reads of shared memory learn anything from the new
            // locations: apply their flow functions again.
            solver.revisit(|n| k.reads_shared(n));
        }
        let solution = solver.into_solution();
        let stats = solution.stats();
        let span = tracing::Span::current();
        span.record("path_edges", stats.path_edges);
        span.record("summary_edges", stats.summary_edges);
        span.record("rounds", rounds);
        Ok(results::kernel_deps(&problem, &solution))
    }
}
