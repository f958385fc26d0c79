//! Control dependence (Ferrante, Ottenstein and Warren, 1987).
//!
//! `b` is control dependent on branch `a` when `a` decides whether `b` runs:
//! some successor of `a` leads only to paths through `b`, another can avoid
//! it. Divergence checks use it to find the blocks a thread-dependent branch
//! splits a warp over. For each edge `a -> s` where `s` does not
//! post-dominate `a`, every block from `s` up the post-dominator tree to
//! (excluding) `ipdom(a)` depends on `a`. A loop header whose exit test it
//! holds therefore depends on itself.
//!
//! Only real branches (two or more distinct successors) are sources: the
//! virtual exit's fake edges from infinite-loop headers (see `reconverge`)
//! are not decisions a thread makes.

use super::cfg::Cfg;
use super::dom::{DomKind, DomTree};
use crate::ir::BlockId;

#[derive(Clone, Debug)]
pub struct ControlDeps {
    deps: Vec<Vec<BlockId>>,
    dependents: Vec<Vec<BlockId>>,
}

impl ControlDeps {
    /// `pdom` must be the post-dominator tree of `cfg`.
    pub fn new(cfg: &Cfg, pdom: &DomTree) -> Self {
        debug_assert_eq!(pdom.kind(), DomKind::PostDominators);
        let n = cfg.num_blocks();
        let mut deps: Vec<Vec<BlockId>> = vec![Vec::new(); n];
        let mut dependents: Vec<Vec<BlockId>> = vec![Vec::new(); n];
        for &a in cfg.reverse_post_order() {
            if !cfg.is_branch(a) {
                continue;
            }
            let stop = pdom.idom(a);
            for &s in cfg.succs(a) {
                if pdom.dominates(s, a) {
                    continue;
                }
                // `ipdom(a)` post-dominates `s` (or is the virtual exit, `None`),
                // so this walk ends.
                let mut at = Some(s);
                while at != stop {
                    let Some(b) = at else { break };
                    // Walks from two successors of `a` can meet below
                    // `ipdom(a)`; `a`'s entries are pushed together, so the
                    // last one tells.
                    if deps[b.index()].last() != Some(&a) {
                        dependents[a.index()].push(b);
                        deps[b.index()].push(a);
                    }
                    at = pdom.idom(b);
                }
            }
        }
        for list in deps.iter_mut().chain(dependents.iter_mut()) {
            list.sort();
        }
        ControlDeps { deps, dependents }
    }

    /// The branch blocks deciding whether `b` runs, in block order.
    pub fn deps_of(&self, b: BlockId) -> &[BlockId] {
        &self.deps[b.index()]
    }

    /// The blocks whose execution `branch` decides, in block order.
    pub fn dependents(&self, branch: BlockId) -> &[BlockId] {
        &self.dependents[branch.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::*;
    use crate::ir::Function;

    fn cdg(f: &Function) -> ControlDeps {
        let cfg = Cfg::new(f);
        ControlDeps::new(&cfg, &DomTree::post_dominators(&cfg))
    }

    /// Checks `deps_of` every block against `expected[block]`, and that
    /// `dependents` is its inverse.
    fn assert_deps(cd: &ControlDeps, expected: &[&[usize]]) {
        for (i, want) in expected.iter().enumerate() {
            assert_eq!(cd.deps_of(b(i)), ids(want), "deps_of({i})");
            for &a in cd.deps_of(b(i)) {
                assert!(cd.dependents(a).contains(&b(i)));
            }
        }
        let total =
            |f: &dyn Fn(BlockId) -> usize| (0..expected.len()).map(|i| f(b(i))).sum::<usize>();
        assert_eq!(
            total(&|x| cd.deps_of(x).len()),
            total(&|x| cd.dependents(x).len())
        );
    }

    #[test]
    fn diamond_arms_depend_on_the_branch() {
        // ipdom(0) = 3: edge 0->1 walks {1}, edge 0->2 walks {2}.
        let cd = cdg(&diamond());
        assert_deps(&cd, &[&[], &[0], &[0], &[]]);
        assert_eq!(cd.dependents(b(0)), ids(&[1, 2]));
    }

    #[test]
    fn if_then_only_the_then_block_depends() {
        // 0->2 is skipped: 2 post-dominates 0.
        assert_deps(&cdg(&if_then()), &[&[], &[0], &[]]);
    }

    #[test]
    fn while_header_depends_on_itself() {
        // Edge 1->2, ipdom(1) = 3: walk 2, then ipdom(2) = 1, then stop.
        let cd = cdg(&while_loop());
        assert_deps(&cd, &[&[], &[1], &[1], &[]]);
        assert_eq!(cd.dependents(b(1)), ids(&[1, 2]));
    }

    #[test]
    fn nested_loops_with_break() {
        // ipdom: 1->7, 2->7, 3->7, 4->2, 5->1.
        // 1->2: {2}.          (1->7 skipped: 7 post-dominates 1.)
        // 2->3: {3}.          2->5: {5, 1}.
        // 3->6: {6}.          3->4: {4, 2}.
        let cd = cdg(&nested_break());
        assert_deps(&cd, &[&[], &[2], &[1, 3], &[2], &[3], &[2], &[3], &[]]);
        assert_eq!(cd.dependents(b(2)), ids(&[1, 3, 5]));
        assert_eq!(cd.dependents(b(3)), ids(&[2, 4, 6]));
    }

    #[test]
    fn mid_exit_test_controls_the_whole_loop() {
        // ipdom: 1->2, 2->4, 3->1. 2->3 walks 3, 1, 2 and stops at 4.
        let cd = cdg(&mid_exit());
        assert_deps(&cd, &[&[], &[2], &[2], &[2], &[]]);
        assert_eq!(cd.dependents(b(2)), ids(&[1, 2, 3]));
    }

    #[test]
    fn switch_cases_depend_on_the_switch() {
        // ipdom(0) = 4; the default edge 0->4 is skipped, the shared case
        // block 3 is listed once.
        let cd = cdg(&switch3());
        assert_deps(&cd, &[&[], &[0], &[0], &[0], &[]]);
    }

    #[test]
    fn switch_cases_sharing_a_join_list_it_once() {
        // 0 switches to 3 (default), 1, 2; 1 and 2 meet at 4, 3 and 4 at 5.
        // ipdom(0) = 5: 0->3 walks {3}, 0->1 {1, 4}, 0->2 {2, 4}.
        let cd = cdg(&shape(&[&[3, 1, 2], &[4], &[4], &[5], &[5], &[]]));
        assert_deps(&cd, &[&[], &[0], &[0], &[0], &[0], &[]]);
        assert_eq!(cd.dependents(b(0)), ids(&[1, 2, 3, 4]));
    }

    #[test]
    fn infinite_loop_blocks_still_get_dependences() {
        // ipdom: 0, 1, 4 -> virtual exit; 2, 3 -> 1.
        // 0->1: {1}. 0->4: {4}. 1->2: {2, 1}. 1->3: {3, 1}.
        let cd = cdg(&infinite());
        assert_deps(&cd, &[&[], &[0, 1], &[1], &[1], &[0]]);
    }

    #[test]
    fn spin_has_no_branch() {
        // The fake edge 1 -> virtual exit makes no decision.
        assert_deps(&cdg(&spin()), &[&[], &[]]);
    }

    #[test]
    fn dead_block_has_no_dependences() {
        // 3 is `unreachable`, so lanes meet at 2: ipdom(0) = 2, and 0->3
        // gives {3} (up to the virtual exit). 2 runs whatever 0 decides.
        let cd = cdg(&with_dead_block());
        assert_deps(&cd, &[&[], &[], &[], &[0]]);
    }

    #[test]
    fn irreducible_cycle() {
        // ipdom: 0->1, 1->3, 2->1. 0->2: {2} (stop at 1); 0->1 skipped.
        // 1->2: {2, 1} (stop at 3); 1->3 skipped.
        assert_deps(&cdg(&irreducible()), &[&[], &[1], &[0, 1], &[]]);
    }
}
