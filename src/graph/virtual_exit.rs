//! Which blocks the post-dominator tree's virtual exit is joined from.
//!
//! Every exit block flows into the virtual exit. A region that can never
//! reach an exit (an infinite loop, such as a persistent kernel spinning on a
//! work queue) would otherwise have no post-dominators at all. So each closed
//! exitless region (a sink SCC: no edge leaves it) also gets one fake edge
//! to the virtual exit, from its first block in RPO: the loop header when the
//! loop is natural. Every other exitless block reaches some sink SCC, so this
//! makes the whole reachable CFG reach the virtual exit.
//!
//! The fake edge reads "the loop might stop at its header". It only adds
//! paths, so post-dominance can only shrink and control dependence only
//! grow: conservative for the checks that consume them.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::cfg::Cfg;
use crate::ir::BlockId;

/// Exit blocks, then the heads of closed exitless regions; each in RPO.
pub(crate) fn virtual_exit_preds(cfg: &Cfg) -> Vec<BlockId> {
    let can_exit = blocks_reaching_an_exit(cfg);
    let exitless = |b: BlockId| cfg.reachable(b) && !can_exit[b.index()];

    // Edges out of exitless blocks stay exitless, so this is the region's graph.
    let mut region = DiGraph::<(), ()>::with_capacity(cfg.num_blocks(), 0);
    for _ in 0..cfg.num_blocks() {
        region.add_node(());
    }
    for (a, b) in cfg.edges().filter(|&(a, _)| exitless(a)) {
        region.add_edge(NodeIndex::new(a.index()), NodeIndex::new(b.index()), ());
    }

    let mut heads: Vec<BlockId> = tarjan_scc(&region)
        .into_iter()
        .map(|scc| {
            scc.into_iter()
                .map(|n| BlockId::new(n.index()))
                .collect::<Vec<_>>()
        })
        .filter(|scc| exitless(scc[0]) && is_closed(cfg, scc))
        .filter_map(|scc| scc.into_iter().min_by_key(|&b| cfg.rpo_index(b)))
        .collect();
    heads.sort_by_key(|&b| cfg.rpo_index(b));

    let mut preds = cfg.exits().to_vec();
    preds.extend(heads);
    preds
}

/// Reachable blocks with a path to an exit block.
fn blocks_reaching_an_exit(cfg: &Cfg) -> Vec<bool> {
    let mut seen = vec![false; cfg.num_blocks()];
    let mut work = cfg.exits().to_vec();
    for e in &work {
        seen[e.index()] = true;
    }
    while let Some(b) = work.pop() {
        for &p in cfg.preds(b) {
            if cfg.reachable(p) && !seen[p.index()] {
                seen[p.index()] = true;
                work.push(p);
            }
        }
    }
    seen
}

/// Whether no edge leaves the set `scc`.
fn is_closed(cfg: &Cfg, scc: &[BlockId]) -> bool {
    scc.iter()
        .all(|&b| cfg.succs(b).iter().all(|s| scc.contains(s)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::*;

    #[test]
    fn terminating_function_joins_only_its_exits() {
        assert_eq!(virtual_exit_preds(&Cfg::new(&nested_break())), ids(&[7]));
        assert_eq!(
            virtual_exit_preds(&Cfg::new(&with_dead_block())),
            ids(&[2, 3])
        );
    }

    #[test]
    fn infinite_loop_joins_its_header() {
        // Exit 4, plus the header 1 of the closed region {1, 2, 3}.
        assert_eq!(virtual_exit_preds(&Cfg::new(&infinite())), ids(&[4, 1]));
        // No exit at all: only the self-loop 1.
        assert_eq!(virtual_exit_preds(&Cfg::new(&spin())), ids(&[1]));
    }

    #[test]
    fn exitless_path_into_a_closed_loop_is_not_joined() {
        // 0 -> 1 -> 2 -> {3 -> 2}: 1 and 2-3 never exit; only the cycle's
        // first block 2 is joined, 1 reaches it.
        let cfg = Cfg::new(&shape(&[&[1], &[2], &[3], &[2]]));
        assert_eq!(virtual_exit_preds(&cfg), ids(&[2]));
    }
}
