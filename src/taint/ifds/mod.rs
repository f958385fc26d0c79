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
//! Memory shared between threads is read by threads that run at their own
//! pace, so whether a read observes a dependent write is a question of
//! barrier phases, not of one thread's paths (`memory`, `visible`). The
//! analysis runs in rounds: a round finds the writes of dependent data to
//! shared locations (`SharedWrite`) and the dependent branches in front of
//! barriers, and the next makes every read that may run with one of those
//! writes a source; it stops when a round finds no new such read (the sets
//! only grow). A round does not start over: the solver re-applies the flow
//! functions of the reads it learnt about and extends its fixpoint.

mod asm;
mod control;
mod facts;
mod flow;
mod kernel;
mod layout;
mod liveness;
mod memory;
mod results;
mod rules;
mod visible;

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod tests;

use super::{DependenceAnalysis, KernelDeps, KernelScope};
use crate::budget::{Exhausted, Meter};
use crate::dataflow::{FastSet, Solver};
use flow::TaintProblem;
use kernel::Kernel;
use memory::SharedTaint;
use std::cell::RefCell;
use visible::Visibility;

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
            shared: RefCell::new(SharedTaint::default()),
            entry: k.layout.proc_of[&kernel],
        };
        let mut visible = Visibility::new(&k, m, graphs);
        let branches = barrier_branches(&k, &visible);
        let mut solver = Solver::new(&problem);
        // Rounds: one more than those that found reads of dependent data.
        let mut rounds = 0;
        loop {
            rounds += 1;
            solver.run_checked(|edges| {
                meter.ifds_facts(edges)?;
                meter.time()
            })?;
            let writes = results::shared_writes(&k, solver.solution());
            let split = results::dependent_branches(solver.solution(), &branches);
            let fresh = visible.update(&k, m, &writes, &split, &mut problem.shared.borrow_mut());
            // The phases' searches count against the kernel's time too.
            meter.time()?;
            if fresh.is_empty() {
                break;
            }
            // Only the reads that learnt of a write change: apply their
            // flow functions again.
            solver.revisit(|n| fresh.binary_search(&n).is_ok());
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

/// The branches in front of barriers (deciding which comes next), with
/// their condition's fact: where thread dependence changes the phases.
fn barrier_branches(k: &Kernel, visible: &Visibility) -> FastSet<(layout::Node, facts::Fact)> {
    let mut found = FastSet::default();
    for (p, info) in k.procs.iter().enumerate() {
        let p = p as layout::Proc;
        for br in &info.control.branches {
            let n = k.layout.node(p, br.term);
            if let Some(d) = k.facts.value(p, br.cond) {
                if visible.decides_barriers(k, n) {
                    found.insert((n, d));
                }
            }
        }
    }
    found
}
