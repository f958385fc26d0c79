//! Dominator and post-dominator trees.
//!
//! Immediate dominators come from a Cooper–Harvey–Kennedy solver;
//! the tree is then numbered by one DFS so `dominates` is two comparisons.
//! Only blocks reachable from the entry are in either tree: dead code
//! dominates nothing and is dominated by nothing.
//!
//! The post-dominator tree is the reconvergence tree: it is computed on the
//! graph where lanes meet (`reconverge`: paths into `unreachable` and traps
//! left out), rooted at a virtual exit that is not a block and is joined
//! from returns, aborts and the header of every infinite loop. Its children
//! are [`DomTree::roots`], and their `idom` is `None`.

use super::cfg::Cfg;
use super::reconverge::MeetGraph;
use crate::ir::BlockId;

/// Which relation a [`DomTree`] holds.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum DomKind {
    Dominators,
    PostDominators,
}

#[derive(Clone, Debug)]
pub struct DomTree {
    kind: DomKind,
    idom: Vec<Option<BlockId>>,
    children: Vec<Vec<BlockId>>,
    roots: Vec<BlockId>,
    /// `(first, last)` preorder numbers of the block's subtree; `None` when
    /// the block is not in the tree.
    span: Vec<Option<(u32, u32)>>,
    preorder: Vec<BlockId>,
}

impl DomTree {
    /// `a` dominates `b` when every path from the entry to `b` passes `a`.
    pub fn dominators(cfg: &Cfg) -> Self {
        let n = cfg.num_blocks();
        if n == 0 {
            return Self::from_parents(DomKind::Dominators, Vec::new(), Vec::new());
        }
        let edges = cfg.edges().map(|(a, b)| (a.index(), b.index()));
        let solved = immediate_dominators(n, cfg.entry().index(), edges);
        let parents = solved.iter().map(|p| p.map(BlockId::new)).collect();
        Self::from_parents(DomKind::Dominators, parents, vec![cfg.entry()])
    }

    /// `a` post-dominates `b` when every path from `b` to the (virtual) exit
    /// passes `a`, on the graph where lanes meet: lanes that split at `b`
    /// meet again at its immediate post-dominator.
    pub fn post_dominators(cfg: &Cfg) -> Self {
        let n = cfg.num_blocks();
        let exit = n;
        let meet = MeetGraph::new(cfg);
        let reversed = meet.edges.iter().map(|&(a, b)| (b.index(), a.index()));
        let joined = meet.exits.iter().map(|&b| (exit, b.index()));
        let solved = immediate_dominators(n + 1, exit, reversed.chain(joined));

        let mut roots = Vec::new();
        let parents = (0..n)
            .map(|b| match solved[b] {
                Some(p) if p == exit => {
                    roots.push(BlockId::new(b));
                    None
                }
                p => p.map(BlockId::new),
            })
            .collect();
        Self::from_parents(DomKind::PostDominators, parents, roots)
    }

    fn from_parents(kind: DomKind, idom: Vec<Option<BlockId>>, roots: Vec<BlockId>) -> Self {
        let mut children = vec![Vec::new(); idom.len()];
        for (b, parent) in idom.iter().enumerate() {
            if let Some(p) = parent {
                children[p.index()].push(BlockId::new(b));
            }
        }
        let mut tree = DomTree {
            kind,
            span: vec![None; idom.len()],
            idom,
            children,
            roots,
            preorder: Vec::new(),
        };
        tree.number();
        tree
    }

    /// Assigns preorder spans with an explicit stack (deep trees are common
    /// in long straight-line kernels).
    fn number(&mut self) {
        for &root in &self.roots {
            let mut stack = vec![(root, 0usize)];
            self.span[root.index()] = Some((self.preorder.len() as u32, 0));
            self.preorder.push(root);
            while let Some((b, next)) = stack.last_mut() {
                let Some(&child) = self.children[b.index()].get(*next) else {
                    let last = self.preorder.len() as u32 - 1;
                    if let Some(span) = &mut self.span[b.index()] {
                        span.1 = last;
                    }
                    stack.pop();
                    continue;
                };
                *next += 1;
                self.span[child.index()] = Some((self.preorder.len() as u32, 0));
                self.preorder.push(child);
                stack.push((child, 0));
            }
        }
    }

    pub fn kind(&self) -> DomKind {
        self.kind
    }

    /// The immediate (post-)dominator; `None` for the entry, for children of
    /// the virtual exit and for dead blocks.
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom[b.index()]
    }

    /// Whether `a` (post-)dominates `b`; reflexive for blocks in the tree.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        match (self.span[a.index()], self.span[b.index()]) {
            (Some((first, last)), Some((at, _))) => first <= at && at <= last,
            _ => false,
        }
    }

    /// The nearest block that (post-)dominates both `a` and `b`.
    pub fn common_dominator(&self, a: BlockId, b: BlockId) -> Option<BlockId> {
        let mut x = Some(a);
        while let Some(d) = x {
            if self.dominates(d, b) {
                return Some(d);
            }
            x = self.idom(d);
        }
        None
    }

    pub fn strictly_dominates(&self, a: BlockId, b: BlockId) -> bool {
        a != b && self.dominates(a, b)
    }

    /// Blocks whose immediate (post-)dominator is `b`, in block order.
    pub fn children(&self, b: BlockId) -> &[BlockId] {
        &self.children[b.index()]
    }

    /// Tops of the tree: the entry, or the children of the virtual exit.
    pub fn roots(&self) -> &[BlockId] {
        &self.roots
    }

    /// Whether `b` is in the tree, i.e. reachable from the entry.
    pub fn contains(&self, b: BlockId) -> bool {
        self.span[b.index()].is_some()
    }

    /// Blocks of the tree, parents before children.
    pub fn preorder(&self) -> &[BlockId] {
        &self.preorder
    }
}

/// Immediate dominators of the nodes reachable from `root` (`None` for
/// the root and the rest), by Cooper, Harvey and Kennedy's iteration in
/// reverse postorder over dense indices: petgraph's version hashes every
/// node, and the trees are unique, so both give the same answer.
pub fn immediate_dominators(
    nodes: usize,
    root: usize,
    edges: impl Iterator<Item = (usize, usize)>,
) -> Vec<Option<usize>> {
    const NONE: usize = usize::MAX;
    let mut succs = vec![Vec::new(); nodes];
    let mut preds = vec![Vec::new(); nodes];
    for (a, b) in edges {
        succs[a].push(b);
        preds[b].push(a);
    }
    let order = postorder(&succs, root);
    let mut rank = vec![NONE; nodes];
    for (i, &n) in order.iter().enumerate() {
        rank[n] = i;
    }
    let mut idom = vec![NONE; nodes];
    idom[root] = root;
    let mut changed = true;
    while changed {
        changed = false;
        // The root finishes last: skip it.
        for &n in order.iter().rev().skip(1) {
            let new =
                preds[n]
                    .iter()
                    .filter(|&&p| idom[p] != NONE)
                    .fold(NONE, |acc, &p| match acc {
                        NONE => p,
                        _ => intersect(&idom, &rank, p, acc),
                    });
            if new != idom[n] {
                idom[n] = new;
                changed = true;
            }
        }
    }
    (0..nodes)
        .map(|n| (n != root && idom[n] != NONE).then_some(idom[n]))
        .collect()
}

/// The nearest common dominator of `a` and `b`, walking up by postorder
/// rank.
fn intersect(idom: &[usize], rank: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while rank[a] < rank[b] {
            a = idom[a];
        }
        while rank[b] < rank[a] {
            b = idom[b];
        }
    }
    a
}

/// The nodes reachable from `root` in DFS postorder (an explicit stack:
/// long straight-line kernels make deep searches).
fn postorder(succs: &[Vec<usize>], root: usize) -> Vec<usize> {
    let mut seen = vec![false; succs.len()];
    let mut order = Vec::with_capacity(succs.len());
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((n, next)) = stack.last_mut() {
        let n = *n;
        match succs[n].get(*next) {
            Some(&s) => {
                *next += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            }
            None => {
                order.push(n);
                stack.pop();
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::{self, *};
    use crate::ir::Function;

    fn trees(f: &Function) -> (DomTree, DomTree) {
        let cfg = Cfg::new(f);
        (DomTree::dominators(&cfg), DomTree::post_dominators(&cfg))
    }

    /// Checks `idom` of every block against `expected[block]`.
    fn assert_idoms(tree: &DomTree, expected: &[Option<usize>]) {
        let got: Vec<Option<usize>> = (0..expected.len())
            .map(|i| tree.idom(b(i)).map(BlockId::index))
            .collect();
        assert_eq!(got, expected, "{:?}", tree.kind());
    }

    #[test]
    fn diamond() {
        // 0 -> {1, 2} -> 3. Both arms join at 3, so 3 post-dominates all.
        let (dom, pdom) = trees(&fixtures::diamond());
        assert_idoms(&dom, &[None, Some(0), Some(0), Some(0)]);
        assert_idoms(&pdom, &[Some(3), Some(3), Some(3), None]);
        assert_eq!(dom.children(b(0)), ids(&[1, 2, 3]));
        assert_eq!(pdom.roots(), ids(&[3]));
        assert!(dom.dominates(b(0), b(3)) && !dom.dominates(b(1), b(3)));
        assert!(pdom.dominates(b(3), b(0)) && !pdom.dominates(b(1), b(0)));
        assert!(dom.dominates(b(1), b(1)) && !dom.strictly_dominates(b(1), b(1)));
    }

    #[test]
    fn if_then() {
        // 0 -> {1, 2}, 1 -> 2: 2 is reached from 0 directly, so idom(2) = 0;
        // every path from 0 or 1 ends at 2.
        let (dom, pdom) = trees(&fixtures::if_then());
        assert_idoms(&dom, &[None, Some(0), Some(0)]);
        assert_idoms(&pdom, &[Some(2), Some(2), None]);
    }

    #[test]
    fn while_loop() {
        // 0 -> 1 -> {2 -> 1, 3}. The header 1 dominates body and exit;
        // leaving always goes 1 -> 3, so ipdom(1) = 3 and ipdom(2) = 1.
        let (dom, pdom) = trees(&fixtures::while_loop());
        assert_idoms(&dom, &[None, Some(0), Some(1), Some(1)]);
        assert_idoms(&pdom, &[Some(1), Some(3), Some(1), None]);
    }

    #[test]
    fn nested_loops_with_break() {
        // Dominators: the break target 6 is only reached through 3, the
        // inner exit 5 through 2, the return 7 either from 1 or from 6.
        // Post-dominators: 2 and 3 leave either by 5 -> 1 -> 7 or by
        // 6 -> 7, so only 7 post-dominates them; 4 always returns to 2 and
        // 5 to 1.
        let (dom, pdom) = trees(&fixtures::nested_break());
        let dom_expected = [
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(2),
            Some(3),
            Some(1),
        ];
        assert_idoms(&dom, &dom_expected);
        let pdom_expected = [
            Some(1),
            Some(7),
            Some(7),
            Some(7),
            Some(2),
            Some(1),
            Some(7),
            None,
        ];
        assert_idoms(&pdom, &pdom_expected);
        assert!(dom.dominates(b(1), b(6)) && !dom.dominates(b(5), b(6)));
        assert!(pdom.dominates(b(7), b(4)) && !pdom.dominates(b(1), b(3)));
    }

    #[test]
    fn loop_with_exit_in_the_middle() {
        // 0 -> 1 -> 2 -> {4, 3 -> 1}: every path out passes the test 2, so
        // ipdom(1) = 2 and ipdom(3) = 1; the latch 3 is dominated by 2.
        let (dom, pdom) = trees(&mid_exit());
        assert_idoms(&dom, &[None, Some(0), Some(1), Some(2), Some(2)]);
        assert_idoms(&pdom, &[Some(1), Some(2), Some(4), Some(1), None]);
    }

    #[test]
    fn switch_with_three_cases() {
        // 0 switches to 4 (default), 1, 2, 3; every case falls to 4.
        let (dom, pdom) = trees(&switch3());
        assert_idoms(&dom, &[None, Some(0), Some(0), Some(0), Some(0)]);
        assert_idoms(&pdom, &[Some(4), Some(4), Some(4), Some(4), None]);
    }

    #[test]
    fn infinite_loop_still_has_post_dominators() {
        // 0 -> {1, 4}, loop 1 -> {2, 3} -> 1 never exits. The virtual exit
        // is joined from 4 and from the header 1, so 1 and 4 hang off the
        // virtual exit (as does 0, which reaches both), and 2, 3 return to 1.
        let (dom, pdom) = trees(&infinite());
        assert_idoms(&dom, &[None, Some(0), Some(1), Some(1), Some(0)]);
        assert_idoms(&pdom, &[None, None, Some(1), Some(1), None]);
        assert_eq!(pdom.roots(), ids(&[0, 1, 4]));
        assert!(pdom.dominates(b(1), b(2)));
    }

    #[test]
    fn spin_without_any_exit() {
        // 0 -> 1 -> 1: the self-loop 1 is joined to the virtual exit.
        let (dom, pdom) = trees(&spin());
        assert_idoms(&dom, &[None, Some(0)]);
        assert_idoms(&pdom, &[Some(1), None]);
    }

    #[test]
    fn dead_block_is_in_neither_tree() {
        // 0 -> {2 (ret), 3 (unreachable)}; 1 -> 2 is dead. Lanes that go
        // to 3 never come back, so the others meet at 2: ipdom(0) = 2.
        let (dom, pdom) = trees(&with_dead_block());
        assert_idoms(&dom, &[None, None, Some(0), Some(0)]);
        assert_idoms(&pdom, &[Some(2), None, None, None]);
        for tree in [&dom, &pdom] {
            assert!(!tree.contains(b(1)));
            assert!(!tree.dominates(b(1), b(1)));
            assert!(!tree.dominates(b(0), b(1)) && !tree.dominates(b(1), b(2)));
        }
        assert_eq!(pdom.roots(), ids(&[2, 3]));
    }

    #[test]
    fn loop_break_meets_at_the_loop_exit_despite_an_unreachable_default() {
        // The kernel, reduced: an outer loop 1 around an inner loop
        // 2..4 whose body 2 switches to 3 or to an `unreachable` default 6,
        // and whose test 3 breaks (to 5) or continues (to 4 -> 2).
        //   0 -> 1; 1 -> {2, 7}; 2 -> {6, 3}; 3 -> {5, 4}; 4 -> 2;
        //   5 -> 1 (outer latch); 6 unreachable; 7 ret.
        // Without the rule, 3 would reach the virtual exit through 6 and
        // have no real post-dominator; with it, the break meets at 5.
        let f = shape_with_unreachable(
            &[&[1], &[2, 7], &[6, 3], &[5, 4], &[2], &[1], &[], &[]],
            &[6],
        );
        let (_, pdom) = trees(&f);
        assert_eq!(pdom.idom(b(3)), Some(b(5)));
        assert_eq!(pdom.idom(b(2)), Some(b(3)));
        assert_eq!(pdom.idom(b(6)), None);
        assert_eq!(pdom.roots(), ids(&[6, 7]));
    }

    #[test]
    fn irreducible_cycle() {
        // 0 -> {1, 2}, 1 <-> 2, 1 -> 3. Neither cycle block dominates the
        // other (each is entered from 0); 3 is only reached from 1. Every
        // path leaves through 1 -> 3, so ipdom(0) = ipdom(2) = 1.
        let (dom, pdom) = trees(&irreducible());
        assert_idoms(&dom, &[None, Some(0), Some(0), Some(1)]);
        assert_idoms(&pdom, &[Some(1), Some(3), Some(1), None]);
    }

    #[test]
    fn preorder_lists_parents_first() {
        let (dom, _) = trees(&fixtures::nested_break());
        let order = dom.preorder();
        assert_eq!(order.len(), 8);
        for &x in order {
            if let Some(p) = dom.idom(x) {
                let pos = |y| order.iter().position(|&z| z == y);
                assert!(pos(p) < pos(x));
            }
        }
    }
}
