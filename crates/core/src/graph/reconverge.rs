//! Where the lanes of a warp meet again: the one graph that post-dominance,
//! and so control dependence, the taint join rules, temporal divergence and
//! the simulator's reconvergence, are all computed on.
//!
//! It is the CFG with two changes.
//!
//! **Paths that never come back are left out.** A block that ends in
//! `unreachable` or calls a function that does not return (`__trap`,
//! `__assertfail`, anything `noreturn`) *aborts*: it ends the thread or the
//! whole kernel. A block every path of which ends in an abort is *doomed*.
//! Edges from a block that can still finish into a doomed block are dropped,
//! and so are the edges out of abort blocks. Doomed blocks keep their own
//! edges and hang off the virtual exit through their aborts, so code inside
//! a doomed region (an `assert`'s `printf`, say) still has post-dominators.
//!
//! Why this is sound: lanes that take such an edge never reach any later
//! program point. `__trap` and a failed `assert` end the whole launch, and
//! `unreachable` is undefined behaviour, so a defined execution never gets
//! there. No lane can observe a value merged "after" the abort, and no lane
//! waits for the aborted ones anywhere: the lanes that carry on meet where
//! they would have met had the doomed side not existed. Keeping the edge
//! would instead make the virtual exit the meeting point of every branch
//! that guards an `assert`, and every loop holding one would look like one
//! that lanes leave on different iterations. A real `ret`, in a loop or not,
//! still ends a thread that other lanes may outlive, so it stays an exit.
//!
//! **Every path reaches the virtual exit.** It is joined from the `ret`
//! blocks, from the aborts, and from each closed region with no exit at all
//! (an infinite loop, such as a persistent kernel spinning on a work queue),
//! through one fake edge from its first block in RPO: the loop header when
//! the loop is natural. Every other block reaches one of these. The fake
//! edge reads "the loop might stop at its header". It only adds paths, so
//! post-dominance can only shrink and control dependence only grow.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::cfg::Cfg;
use crate::ir::BlockId;

/// The graph lanes meet on (see the module docs).
pub(crate) struct MeetGraph {
    /// Kept CFG edges, sources in RPO.
    pub edges: Vec<(BlockId, BlockId)>,
    /// Blocks joined to the virtual exit: returns, closed exitless regions'
    /// heads, then aborts; each group in RPO.
    pub exits: Vec<BlockId>,
}

impl MeetGraph {
    pub fn new(cfg: &Cfg) -> Self {
        let n = cfg.num_blocks();
        // Abort blocks go nowhere, as far as meeting is concerned.
        let succs = |b: BlockId| -> &[BlockId] {
            if cfg.aborts(b) {
                &[]
            } else {
                cfg.succs(b)
            }
        };
        let reachable_rpo = cfg.reverse_post_order();
        let returns: Vec<BlockId> = reachable_rpo
            .iter()
            .copied()
            .filter(|&b| succs(b).is_empty() && !cfg.aborts(b))
            .collect();
        let aborts: Vec<BlockId> = reachable_rpo
            .iter()
            .copied()
            .filter(|&b| cfg.aborts(b))
            .collect();

        let ends: Vec<BlockId> = returns.iter().chain(&aborts).copied().collect();
        let can_end = reaching(cfg, &succs, &ends);
        let heads = exitless_heads(cfg, &succs, &can_end);

        let finishing: Vec<BlockId> = returns.iter().chain(&heads).copied().collect();
        let live = reaching(cfg, &succs, &finishing);
        // Nothing can finish (the kernel always traps): keep every edge.
        let any_live = !finishing.is_empty();
        let doomed = |b: BlockId| any_live && !live[b.index()];

        let edges = cfg
            .edges()
            .filter(|&(a, b)| !cfg.aborts(a) && (doomed(a) || !doomed(b)))
            .collect();
        let mut exits = returns;
        exits.extend(heads);
        exits.extend(aborts);
        debug_assert!(n == 0 || !exits.is_empty() || cfg.reverse_post_order().is_empty());
        MeetGraph { edges, exits }
    }
}

/// Reachable blocks with a path (along `succs`) to one of `targets`.
fn reaching<'c>(
    cfg: &'c Cfg,
    succs: &impl Fn(BlockId) -> &'c [BlockId],
    targets: &[BlockId],
) -> Vec<bool> {
    let mut seen = vec![false; cfg.num_blocks()];
    let mut work = targets.to_vec();
    for e in &work {
        seen[e.index()] = true;
    }
    while let Some(b) = work.pop() {
        for &p in cfg.preds(b) {
            if cfg.reachable(p) && !seen[p.index()] && succs(p).contains(&b) {
                seen[p.index()] = true;
                work.push(p);
            }
        }
    }
    seen
}

/// The first block in RPO of each closed region that no end can be reached
/// from (a sink SCC of the exitless blocks), in RPO.
fn exitless_heads<'c>(
    cfg: &'c Cfg,
    succs: &impl Fn(BlockId) -> &'c [BlockId],
    can_end: &[bool],
) -> Vec<BlockId> {
    let exitless = |b: BlockId| cfg.reachable(b) && !can_end[b.index()];
    // Edges out of exitless blocks stay exitless, so this is the region's graph.
    let mut region = DiGraph::<(), ()>::with_capacity(cfg.num_blocks(), 0);
    for _ in 0..cfg.num_blocks() {
        region.add_node(());
    }
    for &a in cfg.reverse_post_order().iter().filter(|&&a| exitless(a)) {
        for &b in succs(a) {
            region.add_edge(NodeIndex::new(a.index()), NodeIndex::new(b.index()), ());
        }
    }
    let closed = |scc: &[BlockId]| {
        scc.iter()
            .all(|&b| succs(b).iter().all(|s| scc.contains(s)))
    };
    let mut heads: Vec<BlockId> = tarjan_scc(&region)
        .into_iter()
        .map(|scc| {
            scc.into_iter()
                .map(|n| BlockId::new(n.index()))
                .collect::<Vec<_>>()
        })
        .filter(|scc| exitless(scc[0]) && closed(scc))
        .filter_map(|scc| scc.into_iter().min_by_key(|&b| cfg.rpo_index(b)))
        .collect();
    heads.sort_by_key(|&b| cfg.rpo_index(b));
    heads
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::*;

    fn exits(f: &crate::ir::Function) -> Vec<BlockId> {
        MeetGraph::new(&Cfg::new(f)).exits
    }

    #[test]
    fn terminating_function_joins_its_returns_and_aborts() {
        assert_eq!(exits(&nested_break()), ids(&[7]));
        // 2 returns, 3 is `unreachable`.
        assert_eq!(exits(&with_dead_block()), ids(&[2, 3]));
    }

    #[test]
    fn infinite_loop_joins_its_header() {
        // Exit 4, plus the header 1 of the closed region {1, 2, 3}.
        assert_eq!(exits(&infinite()), ids(&[4, 1]));
        // No exit at all: only the self-loop 1.
        assert_eq!(exits(&spin()), ids(&[1]));
    }

    #[test]
    fn exitless_path_into_a_closed_loop_is_not_joined() {
        // 0 -> 1 -> 2 -> {3 -> 2}: 1 and 2-3 never exit; only the cycle's
        // first block 2 is joined, 1 reaches it.
        assert_eq!(exits(&shape(&[&[1], &[2], &[3], &[2]])), ids(&[2]));
    }

    #[test]
    fn edges_into_doomed_code_are_dropped() {
        // 0 -> {1, 4}; 1 -> {2, 3}; 2 -> 3 (a printf before the trap 3);
        // 4 returns. 1, 2 and 3 can only abort: the edge 0 -> 1 goes, the
        // doomed region keeps its own edges.
        let f = shape_with_unreachable(&[&[1, 4], &[2, 3], &[3], &[], &[]], &[3]);
        let g = MeetGraph::new(&Cfg::new(&f));
        assert_eq!(g.exits, ids(&[4, 3]));
        let edges: Vec<(usize, usize)> = g
            .edges
            .iter()
            .map(|(a, b)| (a.index(), b.index()))
            .collect();
        assert_eq!(edges, [(0, 4), (1, 2), (1, 3), (2, 3)]);
    }

    #[test]
    fn a_kernel_that_always_traps_keeps_every_edge() {
        let f = shape_with_unreachable(&[&[1, 2], &[2], &[]], &[2]);
        let g = MeetGraph::new(&Cfg::new(&f));
        assert_eq!(g.exits, ids(&[2]));
        assert_eq!(g.edges.len(), 3);
    }

    #[test]
    fn a_loop_that_can_only_spin_or_trap_is_doomed() {
        // 0 -> {1, 3}; 1 -> {1, 2}; 2 traps; 3 returns. Lanes in 1 spin
        // until they trap (or for ever): they never reach 3, so 0 -> 1 goes.
        // 1 can reach an abort, so it is no closed exitless region.
        let f = shape_with_unreachable(&[&[1, 3], &[1, 2], &[], &[]], &[2]);
        let g = MeetGraph::new(&Cfg::new(&f));
        assert_eq!(g.exits, ids(&[3, 2]));
        let edges: Vec<(usize, usize)> = g
            .edges
            .iter()
            .map(|(a, b)| (a.index(), b.index()))
            .collect();
        assert_eq!(edges, [(0, 3), (1, 1), (1, 2)]);
    }
}
