//! Natural loops, and the irreducible cycles that are not natural loops.
//!
//! A back edge `t -> h` is one where `h` dominates `t`; the natural loop of
//! `h` is `h` plus every block reaching a latch `t` without passing `h`, over
//! all of `h`'s back edges. Two natural loops are disjoint or nested, which
//! gives the loop tree. Cycles left once back edges are removed have no
//! dominating header (several entries); they are reported as
//! [`IrreducibleCycle`]s, not as loops, so analyses can stay conservative.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::cfg::Cfg;
use super::dom::{DomKind, DomTree};
use crate::ir::BlockId;

/// A loop of one function's [`Loops`]; ids follow the headers' RPO, so a
/// parent's id is smaller than its children's.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct LoopId(pub u32);

impl LoopId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// All vectors are sorted by block id.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Loop {
    pub header: BlockId,
    /// The header and the body, including nested loops.
    pub blocks: Vec<BlockId>,
    /// Sources of back edges to the header.
    pub latches: Vec<BlockId>,
    /// Blocks of the loop with a successor outside it.
    pub exiting: Vec<BlockId>,
    /// `(exiting, exit)` edges leaving the loop.
    pub exit_edges: Vec<(BlockId, BlockId)>,
    /// Blocks outside the loop entered from it.
    pub exits: Vec<BlockId>,
    pub parent: Option<LoopId>,
    pub children: Vec<LoopId>,
    /// 1 for an outermost loop.
    pub depth: u32,
}

impl Loop {
    pub fn contains(&self, b: BlockId) -> bool {
        self.blocks.binary_search(&b).is_ok()
    }
}

/// A cycle with more than one entry, e.g. made by `goto` into a loop body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IrreducibleCycle {
    /// The strongly connected blocks, sorted.
    pub blocks: Vec<BlockId>,
    /// Blocks of the cycle with a predecessor outside it, sorted.
    pub entries: Vec<BlockId>,
}

#[derive(Clone, Debug)]
pub struct Loops {
    loops: Vec<Loop>,
    innermost: Vec<Option<LoopId>>,
    irreducible: Vec<IrreducibleCycle>,
}

impl Loops {
    /// `dom` must be the dominator tree of `cfg`.
    pub fn new(cfg: &Cfg, dom: &DomTree) -> Self {
        debug_assert_eq!(dom.kind(), DomKind::Dominators);
        let is_back_edge = |t: BlockId, h: BlockId| dom.dominates(h, t);
        let mut loops: Vec<Loop> = Vec::new();
        let mut innermost = vec![None; cfg.num_blocks()];
        // Outer headers dominate inner ones, so they come first in RPO: when a
        // loop is built, `innermost[header]` is its parent.
        for &h in cfg.reverse_post_order() {
            let latches: Vec<BlockId> =
                sorted(cfg.preds(h).iter().copied().filter(|&t| is_back_edge(t, h)));
            if latches.is_empty() {
                continue;
            }
            let id = LoopId(loops.len() as u32);
            let parent = innermost[h.index()];
            let lp = natural_loop(cfg, h, latches, parent, &loops);
            for &b in &lp.blocks {
                innermost[b.index()] = Some(id);
            }
            if let Some(p) = parent {
                loops[p.index()].children.push(id);
            }
            loops.push(lp);
        }
        let irreducible = irreducible_cycles(cfg, &is_back_edge);
        Loops {
            loops,
            innermost,
            irreducible,
        }
    }

    pub fn len(&self) -> usize {
        self.loops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = LoopId> {
        (0..self.loops.len() as u32).map(LoopId)
    }

    pub fn get(&self, l: LoopId) -> &Loop {
        &self.loops[l.index()]
    }

    pub fn iter(&self) -> impl Iterator<Item = (LoopId, &Loop)> {
        self.ids().zip(&self.loops)
    }

    /// The innermost natural loop holding `b`.
    pub fn loop_of(&self, b: BlockId) -> Option<LoopId> {
        self.innermost[b.index()]
    }

    /// Natural-loop nesting depth of `b`; 0 outside every loop.
    pub fn depth_of(&self, b: BlockId) -> u32 {
        self.loop_of(b).map_or(0, |l| self.get(l).depth)
    }

    pub fn contains(&self, l: LoopId, b: BlockId) -> bool {
        self.get(l).contains(b)
    }

    /// Cycles that are not natural loops; empty for a reducible CFG.
    pub fn irreducible(&self) -> &[IrreducibleCycle] {
        &self.irreducible
    }

    pub fn is_reducible(&self) -> bool {
        self.irreducible.is_empty()
    }

    /// Whether `b` lies on an irreducible cycle.
    pub fn in_irreducible(&self, b: BlockId) -> bool {
        self.irreducible
            .iter()
            .any(|c| c.blocks.binary_search(&b).is_ok())
    }
}

/// Builds the loop of `header` from its back edges' sources.
fn natural_loop(
    cfg: &Cfg,
    header: BlockId,
    latches: Vec<BlockId>,
    parent: Option<LoopId>,
    loops: &[Loop],
) -> Loop {
    let mut inside = vec![false; cfg.num_blocks()];
    inside[header.index()] = true;
    let mut work = Vec::new();
    for &t in &latches {
        if !inside[t.index()] {
            inside[t.index()] = true;
            work.push(t);
        }
    }
    while let Some(b) = work.pop() {
        for &p in cfg.preds(b) {
            if cfg.reachable(p) && !inside[p.index()] {
                inside[p.index()] = true;
                work.push(p);
            }
        }
    }
    let blocks: Vec<BlockId> = (0..inside.len())
        .filter(|&i| inside[i])
        .map(BlockId::new)
        .collect();
    let exit_edges: Vec<(BlockId, BlockId)> = blocks
        .iter()
        .flat_map(|&b| cfg.succs(b).iter().map(move |&s| (b, s)))
        .filter(|&(_, s)| !inside[s.index()])
        .collect();
    Loop {
        header,
        exiting: sorted(exit_edges.iter().map(|e| e.0)),
        exits: sorted(exit_edges.iter().map(|e| e.1)),
        exit_edges: sorted(exit_edges.iter().copied()),
        blocks,
        latches,
        parent,
        children: Vec::new(),
        depth: parent.map_or(1, |p| loops[p.index()].depth + 1),
    }
}

/// Strongly connected regions of the reachable CFG without its back edges.
fn irreducible_cycles(
    cfg: &Cfg,
    is_back_edge: &dyn Fn(BlockId, BlockId) -> bool,
) -> Vec<IrreducibleCycle> {
    let mut forward = DiGraph::<(), ()>::with_capacity(cfg.num_blocks(), 0);
    for _ in 0..cfg.num_blocks() {
        forward.add_node(());
    }
    for (a, b) in cfg.edges().filter(|&(a, b)| !is_back_edge(a, b)) {
        forward.add_edge(NodeIndex::new(a.index()), NodeIndex::new(b.index()), ());
    }
    let mut cycles: Vec<IrreducibleCycle> = tarjan_scc(&forward)
        .into_iter()
        .filter(|scc| scc.len() > 1)
        .map(|scc| {
            let blocks = sorted(scc.into_iter().map(|n| BlockId::new(n.index())));
            let entries = blocks
                .iter()
                .copied()
                .filter(|&b| {
                    cfg.preds(b)
                        .iter()
                        .any(|&p| cfg.reachable(p) && blocks.binary_search(&p).is_err())
                })
                .collect();
            IrreducibleCycle { blocks, entries }
        })
        .collect();
    cycles.sort_by(|x, y| x.blocks.cmp(&y.blocks));
    cycles
}

/// Collects, sorts and deduplicates.
fn sorted<T: Ord>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::{self, *};
    use crate::ir::Function;

    fn loops(f: &Function) -> Loops {
        let cfg = Cfg::new(f);
        Loops::new(&cfg, &DomTree::dominators(&cfg))
    }

    /// `loop_of` every block, as loop indices.
    fn innermost(l: &Loops, blocks: usize) -> Vec<Option<u32>> {
        (0..blocks).map(|i| l.loop_of(b(i)).map(|x| x.0)).collect()
    }

    #[test]
    fn straight_line_and_branches_have_no_loops() {
        for f in [diamond(), if_then(), switch3(), with_dead_block()] {
            let l = loops(&f);
            assert!(l.is_empty() && l.is_reducible());
        }
    }

    #[test]
    fn while_loop() {
        // Back edge 2 -> 1; the header 1 leaves to 3.
        let l = loops(&fixtures::while_loop());
        assert_eq!(l.len(), 1);
        let lp = l.get(LoopId(0));
        assert_eq!(lp.header, b(1));
        assert_eq!(lp.blocks, ids(&[1, 2]));
        assert_eq!(lp.latches, ids(&[2]));
        assert_eq!(lp.exiting, ids(&[1]));
        assert_eq!(lp.exit_edges, vec![(b(1), b(3))]);
        assert_eq!(lp.exits, ids(&[3]));
        assert_eq!((lp.parent, lp.depth), (None, 1));
        assert_eq!(innermost(&l, 4), [None, Some(0), Some(0), None]);
    }

    #[test]
    fn nested_loops_with_break() {
        // Back edges 5 -> 1 (outer) and 4 -> 2 (inner). Inner body from the
        // latch 4: 4 <- 3 <- 2. Outer body from 5: 5 <- 2 <- {1, 4 <- 3}.
        // The break 3 -> 6 leaves both loops.
        let l = loops(&fixtures::nested_break());
        assert_eq!(l.len(), 2);
        let (outer, inner) = (l.get(LoopId(0)), l.get(LoopId(1)));
        assert_eq!(outer.header, b(1));
        assert_eq!(outer.blocks, ids(&[1, 2, 3, 4, 5]));
        assert_eq!(outer.latches, ids(&[5]));
        assert_eq!(outer.exiting, ids(&[1, 3]));
        assert_eq!(outer.exit_edges, vec![(b(1), b(7)), (b(3), b(6))]);
        assert_eq!(outer.exits, ids(&[6, 7]));
        assert_eq!(outer.children, vec![LoopId(1)]);
        assert_eq!(inner.header, b(2));
        assert_eq!(inner.blocks, ids(&[2, 3, 4]));
        assert_eq!(inner.latches, ids(&[4]));
        assert_eq!(inner.exiting, ids(&[2, 3]));
        assert_eq!(inner.exit_edges, vec![(b(2), b(5)), (b(3), b(6))]);
        assert_eq!(inner.exits, ids(&[5, 6]));
        assert_eq!((inner.parent, inner.depth), (Some(LoopId(0)), 2));
        let expected = [
            None,
            Some(0),
            Some(1),
            Some(1),
            Some(1),
            Some(0),
            None,
            None,
        ];
        assert_eq!(innermost(&l, 8), expected);
        assert_eq!(l.depth_of(b(3)), 2);
        assert!(l.contains(LoopId(0), b(4)) && !l.contains(LoopId(1), b(5)));
    }

    #[test]
    fn loop_with_exit_in_the_middle() {
        // Back edge 3 -> 1; the middle block 2 is the only exiting block.
        let l = loops(&mid_exit());
        let lp = l.get(LoopId(0));
        assert_eq!(lp.blocks, ids(&[1, 2, 3]));
        assert_eq!(lp.latches, ids(&[3]));
        assert_eq!(lp.exiting, ids(&[2]));
        assert_eq!(lp.exits, ids(&[4]));
    }

    #[test]
    fn infinite_loops_have_no_exits() {
        // Two latches 2 and 3 into 1; nothing leaves.
        let l = loops(&infinite());
        let lp = l.get(LoopId(0));
        assert_eq!(lp.blocks, ids(&[1, 2, 3]));
        assert_eq!(lp.latches, ids(&[2, 3]));
        assert!(lp.exiting.is_empty() && lp.exits.is_empty());
        // A self-loop is its own header and latch.
        let l = loops(&spin());
        assert_eq!(l.get(LoopId(0)).blocks, ids(&[1]));
        assert_eq!(l.get(LoopId(0)).latches, ids(&[1]));
    }

    #[test]
    fn irreducible_cycle_is_reported_not_looped() {
        // 1 <-> 2, entered at both from 0: neither dominates the other.
        let l = loops(&irreducible());
        assert!(l.is_empty() && !l.is_reducible());
        let expected = IrreducibleCycle {
            blocks: ids(&[1, 2]),
            entries: ids(&[1, 2]),
        };
        assert_eq!(l.irreducible(), [expected]);
        assert!(l.in_irreducible(b(2)) && !l.in_irreducible(b(3)));
    }

    #[test]
    fn irreducible_cycle_inside_a_natural_loop() {
        // Loop 1..4 (latch 4) holds the cycle 2 <-> 3 entered from 1 at both.
        let l = loops(&irreducible_in_loop());
        assert_eq!(l.len(), 1);
        assert_eq!(l.get(LoopId(0)).blocks, ids(&[1, 2, 3, 4]));
        assert_eq!(l.irreducible().len(), 1);
        assert_eq!(l.irreducible()[0].blocks, ids(&[2, 3]));
        assert_eq!(l.irreducible()[0].entries, ids(&[2, 3]));
        assert_eq!(l.loop_of(b(3)), Some(LoopId(0)));
    }
}
