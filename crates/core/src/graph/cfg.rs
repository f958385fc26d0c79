//! The control-flow graph of one function, as adjacency lists.
//!
//! Successor lists keep the terminator's order (then before else, switch
//! default first) so diagnostics can name "the taken side"; duplicates, such
//! as two switch cases sharing a block, are dropped.

use crate::ir::{BlockId, Function, InstKind, Opcode};

#[derive(Clone, Debug)]
pub struct Cfg {
    succs: Vec<Vec<BlockId>>,
    preds: Vec<Vec<BlockId>>,
    rpo: Vec<BlockId>,
    /// Position in `rpo`; `None` for blocks the entry cannot reach.
    rpo_index: Vec<Option<u32>>,
    exits: Vec<BlockId>,
    /// Blocks that end the thread or the kernel: `unreachable`, or a call
    /// that never returns.
    aborts: Vec<bool>,
}

impl Cfg {
    /// Builds the graph; a declaration gives an empty graph.
    pub fn new(func: &Function) -> Self {
        let succs: Vec<Vec<BlockId>> = func
            .block_ids()
            .map(|b| dedup_in_order(func.successors(b)))
            .collect();
        // Successors are distinct, so each predecessor is pushed once.
        let mut preds = vec![Vec::new(); succs.len()];
        for (b, targets) in succs.iter().enumerate() {
            for t in targets {
                preds[t.index()].push(BlockId::new(b));
            }
        }
        let rpo = depth_first_rpo(&succs);
        let mut rpo_index = vec![None; succs.len()];
        for (i, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = Some(i as u32);
        }
        let exits = rpo
            .iter()
            .copied()
            .filter(|b| succs[b.index()].is_empty())
            .collect();
        let aborts = func.block_ids().map(|b| aborts(func, b)).collect();
        Cfg {
            succs,
            preds,
            rpo,
            rpo_index,
            exits,
            aborts,
        }
    }

    pub fn num_blocks(&self) -> usize {
        self.succs.len()
    }

    pub fn entry(&self) -> BlockId {
        BlockId(0)
    }

    /// Distinct successors, in terminator order.
    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        &self.succs[b.index()]
    }

    /// Distinct predecessors in block order, dead ones included (a phi may
    /// still name them).
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        &self.preds[b.index()]
    }

    /// Whether `b` chooses between two or more distinct successors.
    pub fn is_branch(&self, b: BlockId) -> bool {
        self.succs(b).len() > 1
    }

    /// The blocks reachable from the entry, in reverse post-order.
    pub fn reverse_post_order(&self) -> &[BlockId] {
        &self.rpo
    }

    /// `b`'s position in [`Cfg::reverse_post_order`], if reachable.
    pub fn rpo_index(&self, b: BlockId) -> Option<usize> {
        self.rpo_index[b.index()].map(|i| i as usize)
    }

    pub fn reachable(&self, b: BlockId) -> bool {
        self.rpo_index[b.index()].is_some()
    }

    /// Reachable blocks without successors (`ret`, `unreachable`), in RPO.
    pub fn exits(&self) -> &[BlockId] {
        &self.exits
    }

    /// Whether `b` ends the thread or the kernel instead of going on: it
    /// ends in `unreachable` or calls a function that never returns. See
    /// `reconverge` for what that means for where lanes meet.
    pub fn aborts(&self, b: BlockId) -> bool {
        self.aborts[b.index()]
    }

    /// Every edge of the reachable part of the graph, sources in RPO.
    pub fn edges(&self) -> impl Iterator<Item = (BlockId, BlockId)> + '_ {
        self.rpo
            .iter()
            .flat_map(move |&a| self.succs(a).iter().map(move |&b| (a, b)))
    }
}

fn aborts(func: &Function, b: BlockId) -> bool {
    func.blocks[b.index()].insts.iter().any(|&i| {
        let inst = func.inst(i);
        inst.op == Opcode::Unreachable || matches!(inst.kind, InstKind::Call { noreturn: true, .. })
    })
}

fn dedup_in_order(blocks: Vec<BlockId>) -> Vec<BlockId> {
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        if !out.contains(&b) {
            out.push(b);
        }
    }
    out
}

/// Iterative DFS from block 0 (kernels can have thousands of blocks).
/// Successors are visited last-first so the RPO lists them first-first.
fn depth_first_rpo(succs: &[Vec<BlockId>]) -> Vec<BlockId> {
    if succs.is_empty() {
        return Vec::new();
    }
    let mut visited = vec![false; succs.len()];
    let mut post = Vec::with_capacity(succs.len());
    let mut stack = vec![(BlockId(0), succs[0].len())];
    visited[0] = true;
    while let Some((b, left)) = stack.last_mut() {
        if *left == 0 {
            post.push(*b);
            stack.pop();
            continue;
        }
        *left -= 1;
        let next = succs[b.index()][*left];
        if !visited[next.index()] {
            visited[next.index()] = true;
            stack.push((next, succs[next.index()].len()));
        }
    }
    post.reverse();
    post
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::*;

    #[test]
    fn diamond_succs_preds_and_rpo() {
        let cfg = Cfg::new(&diamond());
        assert_eq!(cfg.succs(b(0)), ids(&[1, 2]));
        assert_eq!(cfg.preds(b(3)), ids(&[1, 2]));
        assert_eq!(cfg.reverse_post_order(), ids(&[0, 1, 2, 3]));
        assert_eq!(cfg.exits(), ids(&[3]));
        assert!(cfg.is_branch(b(0)) && !cfg.is_branch(b(1)));
    }

    #[test]
    fn switch_successors_are_deduplicated_in_order() {
        let cfg = Cfg::new(&switch3());
        assert_eq!(cfg.succs(b(0)), ids(&[4, 1, 2, 3]));
        assert_eq!(cfg.preds(b(3)), ids(&[0]));
        assert_eq!(cfg.preds(b(4)), ids(&[0, 1, 2, 3]));
    }

    #[test]
    fn while_loop_rpo_puts_header_before_body() {
        let cfg = Cfg::new(&while_loop());
        assert_eq!(cfg.reverse_post_order(), ids(&[0, 1, 2, 3]));
        assert_eq!(cfg.preds(b(1)), ids(&[0, 2]));
        assert_eq!(cfg.edges().count(), 4);
    }

    #[test]
    fn dead_block_is_unreachable_but_keeps_its_edge() {
        let cfg = Cfg::new(&with_dead_block());
        assert!(!cfg.reachable(b(1)));
        assert_eq!(cfg.rpo_index(b(1)), None);
        assert_eq!(cfg.preds(b(2)), ids(&[0, 1]));
        assert!(cfg.edges().all(|(a, _)| a != b(1)));
        // Both `ret` (2) and `unreachable` (3) end the function; only 3
        // aborts.
        assert_eq!(cfg.exits(), ids(&[2, 3]));
        assert!(cfg.aborts(b(3)) && !cfg.aborts(b(2)) && !cfg.aborts(b(0)));
    }

    #[test]
    fn spin_has_no_exit() {
        let cfg = Cfg::new(&spin());
        assert!(cfg.exits().is_empty());
        assert_eq!(cfg.succs(b(1)), ids(&[1]));
    }

    #[test]
    fn declaration_gives_empty_graph() {
        let mut f = diamond();
        f.blocks.clear();
        f.insts.clear();
        let cfg = Cfg::new(&f);
        assert_eq!(cfg.num_blocks(), 0);
        assert!(cfg.reverse_post_order().is_empty());
    }
}
