//! The IFDS tabulation algorithm of Reps, Horwitz and Sagiv, "Precise
//! Interprocedural Dataflow Analysis via Graph Reachability" (POPL 1995),
//! in the forward, per-entry form of Naeem, Lhoták and Rodriguez,
//! "Practical Extensions to the IFDS Algorithm" (CC 2010).
//!
//! # Reading this next to the paper
//!
//! A *path edge* `⟨s_p, d1⟩ → ⟨n, d2⟩` says: fact `d2` may hold at node `n`
//! of procedure `p` along some valid path on which `d1` held at `p`'s start
//! node `s_p`. It is stored as the triple `(d1, n, d2)`; `s_p` is implied by
//! `n`. The paper's `ForwardTabulateSLRPs` becomes [`Solver::solve`], which
//! pops path edges off the worklist and extends them by node kind:
//!
//! * a *call node* `c`: the call flow function maps `d2` into facts `d3` at
//!   each callee's start node, where tabulation begins with the self edge
//!   `⟨s_q, d3⟩ → ⟨s_q, d3⟩` (procedures are analysed *per entry fact*, on
//!   demand, rather than all at once). Facts that bypass the callee follow
//!   the call-to-return flow function to the return site, as do the
//!   *summary edges* already known for `(c, d2)`.
//! * an *exit node* `e` of `q`: `⟨s_q, d1⟩ → ⟨e, d2⟩` is an *end summary*
//!   of `q`. For every caller that entered `q` with `d1` (the `incoming`
//!   table), the return flow function turns `d2` into facts `d5` at the
//!   return site, giving the summary edge `⟨c, d4⟩ → ⟨r, d5⟩`, which is
//!   then applied in every context that reached `c` with `d4`.
//! * any other node: the normal flow function, to each successor.
//!
//! Because summaries are keyed by the fact at the call, a procedure is
//! tabulated once per entry fact however many call sites reach it, and
//! returns only flow back to the call sites that entered with the matching
//! fact: the result is the meet over *valid* (call/return matched) paths.
//!
//! # The zero fact
//!
//! `Λ` ([`IfdsProblem::zero`]) holds everywhere the program can reach. The
//! solver carries it along every edge itself; flow functions only say what
//! `Λ` *generates* (sources of facts that hold regardless of the input).
//!
//! # Provenance
//!
//! The first time a fact appears at a node from a *different* fact (a
//! generation, not a pass-through), the solver records where it came from.
//! Analyses use this to explain their answers; because the worklist is
//! first-in first-out, the recorded step lies on a shortest derivation.

use super::fast_hash::{FastMap, FastSet};
use std::collections::VecDeque;
use std::fmt::Debug;
use std::hash::Hash;

/// The interprocedural control-flow graph the problem runs on.
pub trait Supergraph {
    type Node: Copy + Eq + Hash + Debug;
    type Proc: Copy + Eq + Hash + Debug;

    fn proc_of(&self, n: Self::Node) -> Self::Proc;
    /// The start node `s_p` of a procedure.
    fn start_of(&self, p: Self::Proc) -> Self::Node;
    /// Intraprocedural successors; for a call node, its return sites.
    fn successors(&self, n: Self::Node, out: &mut Vec<Self::Node>);
    /// The procedures a call node enters; nothing for any other node.
    fn callees(&self, n: Self::Node, out: &mut Vec<Self::Proc>);
    /// Whether `n` returns to the callers of its procedure.
    fn is_exit(&self, n: Self::Node) -> bool;
}

type NodeOf<P> = <<P as IfdsProblem>::Graph as Supergraph>::Node;
type ProcOf<P> = <<P as IfdsProblem>::Graph as Supergraph>::Proc;
type FactOf<P> = <P as IfdsProblem>::Fact;
/// A fact at a node: one vertex of the exploded supergraph.
type At<P> = (NodeOf<P>, FactOf<P>);
/// A procedure entered with a fact.
type Entry<P> = (ProcOf<P>, FactOf<P>);
type Summary<P> = SummaryEdge<NodeOf<P>, FactOf<P>>;

/// An IFDS problem: a finite fact domain and distributive flow functions,
/// each given as "what one input fact becomes" (its micro-functions).
/// Flow functions push their output facts to `out`; an input fact that is
/// not pushed is killed.
pub trait IfdsProblem {
    type Graph: Supergraph;
    type Fact: Copy + Eq + Hash + Debug;

    fn graph(&self) -> &Self::Graph;
    /// The special fact `Λ` that holds wherever the program reaches.
    fn zero(&self) -> Self::Fact;
    /// Start nodes of the procedures the program is entered at; `Λ` holds
    /// there.
    fn entry_points(&self) -> Vec<NodeOf<Self>>;

    /// Along the intraprocedural edge `n -> succ` (not out of call nodes).
    fn normal_flow(
        &self,
        n: NodeOf<Self>,
        succ: NodeOf<Self>,
        d: Self::Fact,
        out: &mut Vec<Self::Fact>,
    );
    /// From call node `call` into the start of `callee`.
    fn call_flow(
        &self,
        call: NodeOf<Self>,
        callee: ProcOf<Self>,
        d: Self::Fact,
        out: &mut Vec<Self::Fact>,
    );
    /// From `exit` of `callee` back to `ret_site` after `call`.
    fn return_flow(
        &self,
        call: NodeOf<Self>,
        callee: ProcOf<Self>,
        exit: NodeOf<Self>,
        ret_site: NodeOf<Self>,
        d: Self::Fact,
        out: &mut Vec<Self::Fact>,
    );
    /// From `call` to `ret_site` around the callees: the caller's facts the
    /// call cannot change.
    fn call_to_return_flow(
        &self,
        call: NodeOf<Self>,
        ret_site: NodeOf<Self>,
        d: Self::Fact,
        out: &mut Vec<Self::Fact>,
    );
}

/// A summary edge `⟨c, d4⟩ → ⟨ret_site, fact⟩`, with the exit fact it came
/// from (for provenance).
#[derive(Copy, Clone, Debug)]
struct SummaryEdge<N, F> {
    ret_site: N,
    fact: F,
    exit: N,
    exit_fact: F,
}

/// Counters, for benchmarks and tests.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SolverStats {
    pub path_edges: usize,
    pub summary_edges: usize,
    /// Distinct `(procedure, entry fact)` pairs tabulated.
    pub procedure_entries: usize,
}

/// Worklist steps between two calls of a run's budget check.
const CHECK_EVERY: u32 = 512;

/// The tabulation state for one problem.
pub struct Solver<'p, P: IfdsProblem> {
    problem: &'p P,
    zero: P::Fact,
    seeded: bool,
    /// Path edges, provenance and counters: what the solver hands back.
    result: Solution<NodeOf<P>, P::Fact>,
    worklist: VecDeque<(P::Fact, NodeOf<P>, P::Fact)>,
    /// For `(c, d2)`: every `d1` with a path edge `⟨s_p, d1⟩ → ⟨c, d2⟩`.
    call_contexts: FastMap<At<P>, Vec<P::Fact>>,
    /// For `(q, d3)`: the `(c, d2)` whose call flow entered `q` with `d3`.
    incoming: FastMap<Entry<P>, Vec<At<P>>>,
    incoming_seen: FastSet<(Entry<P>, At<P>)>,
    /// For `(q, d1)`: the `(e, d2)` with `⟨s_q, d1⟩ → ⟨e, d2⟩`, `e` an exit.
    end_summaries: FastMap<Entry<P>, Vec<At<P>>>,
    summaries: FastMap<At<P>, Vec<Summary<P>>>,
    summary_seen: FastSet<(At<P>, At<P>)>,
}

impl<'p, P: IfdsProblem> Solver<'p, P> {
    pub fn new(problem: &'p P) -> Self {
        Solver {
            problem,
            zero: problem.zero(),
            seeded: false,
            result: Solution {
                path_edges: FastSet::default(),
                generated: FastMap::default(),
                stats: SolverStats::default(),
            },
            worklist: VecDeque::new(),
            call_contexts: FastMap::default(),
            incoming: FastMap::default(),
            incoming_seen: FastSet::default(),
            end_summaries: FastMap::default(),
            summaries: FastMap::default(),
            summary_seen: FastSet::default(),
        }
    }

    /// Runs the tabulation to its fixpoint.
    pub fn solve(mut self) -> Solution<NodeOf<P>, P::Fact> {
        self.run();
        self.result
    }

    /// Starts at the entry points (the first time) and extends path edges
    /// until nothing new appears.
    pub fn run(&mut self) {
        let unlimited: Result<(), std::convert::Infallible> = self.run_checked(|_| Ok(()));
        let Ok(()) = unlimited;
    }

    /// [`Self::run`], asking `check` every few hundred steps (with the
    /// number of path edges so far) whether to go on; its error stops the
    /// run with the solution incomplete.
    pub fn run_checked<E>(
        &mut self,
        mut check: impl FnMut(usize) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.seeded {
            self.seeded = true;
            for start in self.problem.entry_points() {
                self.propagate(self.zero, start, self.zero);
            }
        }
        let graph = self.problem.graph();
        let mut succs = Vec::new();
        let mut callees = Vec::new();
        let mut out = Vec::new();
        let mut steps = 0u32;
        while let Some((d1, n, d2)) = self.worklist.pop_front() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(CHECK_EVERY) {
                check(self.result.path_edges.len())?;
            }
            callees.clear();
            graph.callees(n, &mut callees);
            if !callees.is_empty() {
                self.process_call(d1, n, d2, &callees);
                continue;
            }
            succs.clear();
            graph.successors(n, &mut succs);
            for &m in &succs {
                out.clear();
                self.flow_out(d2, &mut out, |p, out| p.normal_flow(n, m, d2, out));
                for &d3 in &out {
                    self.propagate_from((n, d2), d1, m, d3);
                }
            }
            if graph.is_exit(n) {
                self.process_exit(d1, n, d2);
            }
        }
        self.result.stats.path_edges = self.result.path_edges.len();
        self.result.stats.summary_edges = self.summary_seen.len();
        check(self.result.path_edges.len())
    }

    /// Queues every path edge ending at a node `at` accepts, so the next
    /// [`Self::run`] applies their flow functions again. For problems whose
    /// flow functions have learnt more since (side information that only
    /// grows, so they only add outputs): the fixpoint then covers it
    /// without starting over.
    pub fn revisit(&mut self, at: impl Fn(NodeOf<P>) -> bool) {
        let again: Vec<_> = self
            .result
            .path_edges
            .iter()
            .filter(|e| at(e.1))
            .copied()
            .collect();
        self.worklist.extend(again);
    }

    /// The answer so far (complete after [`Self::run`]).
    pub fn solution(&self) -> &Solution<NodeOf<P>, P::Fact> {
        &self.result
    }

    pub fn into_solution(self) -> Solution<NodeOf<P>, P::Fact> {
        self.result
    }

    /// Runs one flow function, adding `Λ → Λ` when the input is `Λ`.
    fn flow_out(
        &self,
        d: P::Fact,
        out: &mut Vec<P::Fact>,
        flow: impl FnOnce(&P, &mut Vec<P::Fact>),
    ) {
        flow(self.problem, out);
        if d == self.zero && !out.contains(&self.zero) {
            out.push(self.zero);
        }
    }

    fn propagate(&mut self, d1: P::Fact, n: NodeOf<P>, d2: P::Fact) {
        if self.result.path_edges.insert((d1, n, d2)) {
            self.worklist.push_back((d1, n, d2));
        }
    }

    /// Propagates `d3` at `m`, recording `from` if this generates `d3`.
    fn propagate_from(
        &mut self,
        from: (NodeOf<P>, P::Fact),
        d1: P::Fact,
        m: NodeOf<P>,
        d3: P::Fact,
    ) {
        if d3 != from.1 {
            self.result.generated.entry((m, d3)).or_insert(from);
        }
        self.propagate(d1, m, d3);
    }

    fn process_call(&mut self, d1: P::Fact, c: NodeOf<P>, d2: P::Fact, callees: &[ProcOf<P>]) {
        let contexts = self.call_contexts.entry((c, d2)).or_default();
        let first = contexts.is_empty();
        if !contexts.contains(&d1) {
            contexts.push(d1);
        }
        // What enters the callees depends on `d2` alone: do it once.
        if first {
            for &q in callees {
                self.enter_callee(c, d2, q);
            }
        }
        let mut succs = Vec::new();
        self.problem.graph().successors(c, &mut succs);
        for r in succs {
            let mut out = Vec::new();
            self.flow_out(d2, &mut out, |p, out| p.call_to_return_flow(c, r, d2, out));
            for d3 in out {
                self.propagate_from((c, d2), d1, r, d3);
            }
            let known: Vec<_> = self
                .summaries
                .get(&(c, d2))
                .map(|s| s.iter().filter(|e| e.ret_site == r).copied().collect())
                .unwrap_or_default();
            for s in known {
                self.propagate_from((s.exit, s.exit_fact), d1, r, s.fact);
            }
        }
    }

    /// Starts (or joins) the tabulation of `q` for what `d2` at `c` becomes.
    fn enter_callee(&mut self, c: NodeOf<P>, d2: P::Fact, q: ProcOf<P>) {
        let start = self.problem.graph().start_of(q);
        let mut out = Vec::new();
        self.flow_out(d2, &mut out, |p, out| p.call_flow(c, q, d2, out));
        for d3 in out {
            if d3 != d2 {
                self.result.generated.entry((start, d3)).or_insert((c, d2));
            }
            if self.result.path_edges.insert((d3, start, d3)) {
                self.result.stats.procedure_entries += 1;
                self.worklist.push_back((d3, start, d3));
            }
            if self.incoming_seen.insert(((q, d3), (c, d2))) {
                self.incoming.entry((q, d3)).or_default().push((c, d2));
                let ends = self
                    .end_summaries
                    .get(&(q, d3))
                    .cloned()
                    .unwrap_or_default();
                for (e, d4) in ends {
                    self.add_summaries(c, d2, q, e, d4);
                }
            }
        }
    }

    fn process_exit(&mut self, d1: P::Fact, e: NodeOf<P>, d2: P::Fact) {
        let q = self.problem.graph().proc_of(e);
        let ends = self.end_summaries.entry((q, d1)).or_default();
        if !ends.contains(&(e, d2)) {
            ends.push((e, d2));
        }
        let callers = self.incoming.get(&(q, d1)).cloned().unwrap_or_default();
        for (c, d_call) in callers {
            self.add_summaries(c, d_call, q, e, d2);
        }
    }

    /// Turns the end summary `⟨s_q, ·⟩ → ⟨e, d_exit⟩` into summary edges
    /// for the call `(c, d_call)` and applies the new ones.
    fn add_summaries(
        &mut self,
        c: NodeOf<P>,
        d_call: P::Fact,
        q: ProcOf<P>,
        e: NodeOf<P>,
        d_exit: P::Fact,
    ) {
        let mut succs = Vec::new();
        self.problem.graph().successors(c, &mut succs);
        for r in succs {
            let mut out = Vec::new();
            self.flow_out(d_exit, &mut out, |p, out| {
                p.return_flow(c, q, e, r, d_exit, out)
            });
            for d5 in out {
                if !self.summary_seen.insert(((c, d_call), (r, d5))) {
                    continue;
                }
                let edge = SummaryEdge {
                    ret_site: r,
                    fact: d5,
                    exit: e,
                    exit_fact: d_exit,
                };
                self.summaries.entry((c, d_call)).or_default().push(edge);
                let contexts = self
                    .call_contexts
                    .get(&(c, d_call))
                    .cloned()
                    .unwrap_or_default();
                for d1 in contexts {
                    self.propagate_from((e, d_exit), d1, r, d5);
                }
            }
        }
    }
}

/// The result: every path edge, and where each fact was generated.
pub struct Solution<N, F> {
    path_edges: FastSet<(F, N, F)>,
    generated: FastMap<(N, F), (N, F)>,
    stats: SolverStats,
}

impl<N: Copy + Eq + Hash, F: Copy + Eq + Hash> Solution<N, F> {
    /// Every `(d1, n, d2)`: `d2` holds at `n` in the context where `d1`
    /// held at the start of `n`'s procedure.
    pub fn path_edges(&self) -> impl Iterator<Item = (F, N, F)> + '_ {
        self.path_edges.iter().copied()
    }

    /// Whether `d` holds at `n` in any context.
    pub fn holds(&self, n: N, d: F, contexts: &[F]) -> bool {
        contexts
            .iter()
            .any(|&d1| self.path_edges.contains(&(d1, n, d)))
    }

    /// The facts holding at each node, over all contexts (`Λ` included).
    pub fn facts_by_node(&self) -> FastMap<N, Vec<F>> {
        let mut by_node: FastMap<N, Vec<F>> = FastMap::default();
        let mut seen = FastSet::default();
        for &(_, n, d) in &self.path_edges {
            if seen.insert((n, d)) {
                by_node.entry(n).or_default().push(d);
            }
        }
        by_node
    }

    /// Where `d` was first generated at `n`: the node and fact it came
    /// from, if `d` did not merely pass through.
    pub fn generated_from(&self, n: N, d: F) -> Option<(N, F)> {
        self.generated.get(&(n, d)).copied()
    }

    /// Every generation step `((n, d), (from_node, from_fact))`.
    pub fn generations(&self) -> impl Iterator<Item = ((N, F), (N, F))> + '_ {
        self.generated.iter().map(|(&k, &v)| (k, v))
    }

    pub fn stats(&self) -> SolverStats {
        self.stats
    }
}
