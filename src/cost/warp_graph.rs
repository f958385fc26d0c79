//! The paths a warp can take, with divergence serialised (Q:If4): where a
//! branch can split the warp, the lanes of one side run to the
//! reconvergence point (the branch's immediate post-dominator), then the
//! lanes of the other side, then all go on together. We build that as a
//! graph over copies of the CFG: a divergent branch gets three ways out,
//! either side alone (the warp did not split) and the split, which enters
//! a copy of one side whose arrival at the reconvergence point continues
//! with the other side. The copy is of the side that does not come back to
//! the branch (a loop exit's way out, an `if`'s arm), so a loop whose exit
//! diverges pays for the lanes that leave on every iteration and keeps
//! iterating for the rest. A branch both of whose sides loop back to it
//! has no bound.
//!
//! A split at a loop's exit is not paid there: the exits of one loop
//! split a warp at most a few times per entry (`super::splits`), so each
//! edge into the loop's header from outside pays those splits instead,
//! and the sums of its swept accesses (`super::sweeps`).
//!
//! Every node knows the loops whose iteration counters are in scope: its
//! block's loops, plus, in a copy, those of the branch the copy was made
//! for (their counters do not move while one side runs).

use crate::dataflow::FastMap as HashMap;
use crate::graph::{FunctionGraphs, LoopId};
use crate::ir::entity::entity;
use crate::ir::{BlockId, EntityVec, Function, Opcode};

entity!(
    /// A node of a [`WarpGraph`]: a block in one copy.
    NodeId
);
entity!(
    /// A copy of part of the CFG made for one divergent branch.
    CopyId
);

/// What an edge of the warp graph pays, besides the cost of the block it
/// leaves.
#[derive(Clone, Debug, PartialEq)]
pub enum Pay {
    /// The phi copies of a CFG edge.
    Phis(BlockId, BlockId),
    /// A warp split.
    Divergence,
    /// The splits the entered loop's exits can make before the next entry.
    Splits(u32),
    /// What the entered loop's swept accesses cost per entry
    /// (`super::sweeps`).
    Entry(LoopId),
}

#[derive(Clone, Debug)]
pub struct Edge {
    pub from: NodeId,
    /// `None`: the warp is done.
    pub to: Option<NodeId>,
    /// The CFG edge this stands for (for facts and back edges).
    pub logical: (BlockId, BlockId),
    pub pays: Vec<Pay>,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub block: BlockId,
    pub copy: CopyId,
    /// Loops whose counters are in scope, sorted.
    pub scope: Vec<LoopId>,
}

struct Copy {
    /// Blocks of the copied side.
    region: Vec<bool>,
    /// The reconvergence block (`None`: the threads' end).
    reconv: Option<BlockId>,
    /// Where the warp goes on once the side is done.
    cont: NodeId,
    /// Loops of the branch, carried through the copy.
    carried: Vec<LoopId>,
}

pub struct WarpGraph {
    pub nodes: EntityVec<NodeId, Node>,
    pub edges: Vec<Edge>,
    pub entry: NodeId,
}

/// Most nodes before we give up on a kernel with too many nested
/// divergent branches.
pub const MAX_NODES: usize = 20_000;

struct Builder<'a> {
    f: &'a Function,
    g: &'a FunctionGraphs,
    divergent: &'a dyn Fn(BlockId) -> bool,
    /// Per loop: the splits its exits can make per entry, and the guards
    /// whose split the loop's entry pays.
    splits: &'a super::splits::Splits,
    nodes: EntityVec<NodeId, Node>,
    index: HashMap<(BlockId, CopyId), NodeId>,
    copies: EntityVec<CopyId, Option<Copy>>,
    edges: Vec<Edge>,
    work: Vec<NodeId>,
}

/// The loops holding `b`, outermost first.
pub fn loops_of(g: &FunctionGraphs, b: BlockId) -> Vec<LoopId> {
    let mut out = Vec::new();
    let mut l = g.loops.loop_of(b);
    while let Some(x) = l {
        out.push(x);
        l = g.loops.get(x).parent;
    }
    out.sort();
    out
}

impl Builder<'_> {
    fn node(&mut self, block: BlockId, copy: CopyId) -> NodeId {
        if let Some(&n) = self.index.get(&(block, copy)) {
            return n;
        }
        let mut scope = loops_of(self.g, block);
        if let Some(c) = &self.copies[copy] {
            scope.extend(&c.carried);
            scope.sort();
            scope.dedup();
        }
        let n = self.nodes.push(Node { block, copy, scope });
        self.index.insert((block, copy), n);
        self.work.push(n);
        n
    }

    /// Where going from `from` to CFG block `to` leads inside `copy`.
    fn target(&mut self, copy: CopyId, to: BlockId) -> NodeId {
        let redirect = match &self.copies[copy] {
            Some(c) if Some(to) == c.reconv => Some(c.cont),
            _ => None,
        };
        match redirect {
            Some(n) => n,
            None => self.node(to, copy),
        }
    }

    /// Where a `ret` leads: the end, or in a copy the other side.
    fn ret_target(&self, copy: CopyId) -> Option<NodeId> {
        self.copies[copy].as_ref().map(|c| c.cont)
    }

    /// Blocks reachable from `s` without passing `stop`.
    fn side(&self, s: BlockId, stop: Option<BlockId>) -> Vec<bool> {
        let mut seen = vec![false; self.f.blocks.len()];
        if Some(s) == stop {
            return seen;
        }
        let mut work = vec![s];
        seen[s.index()] = true;
        while let Some(b) = work.pop() {
            for &x in self.g.cfg.succs(b) {
                if Some(x) != stop && !seen[x.index()] {
                    seen[x.index()] = true;
                    work.push(x);
                }
            }
        }
        seen
    }

    fn edge(
        &mut self,
        from: NodeId,
        to: Option<NodeId>,
        logical: (BlockId, BlockId),
        mut pays: Vec<Pay>,
    ) {
        let from_block = self.nodes[from].block;
        if let Some(to) = to {
            let b = self.nodes[to].block;
            if let Some(l) = self.g.loops.loop_of(b) {
                let lp = self.g.loops.get(l);
                // Entering `l` (and any loop it nests in with the same
                // header; those are `l` itself in a reducible graph).
                let n = self.splits.per_entry.get(l.index()).copied().unwrap_or(0);
                if lp.header == b && !lp.contains(from_block) {
                    pays.push(Pay::Entry(l));
                    if n > 0 {
                        pays.push(Pay::Splits(n));
                    }
                }
            }
        }
        self.edges.push(Edge {
            from,
            to,
            logical,
            pays,
        });
    }

    fn expand(&mut self, n: NodeId) -> Result<(), String> {
        let (u, copy) = (self.nodes[n].block, self.nodes[n].copy);
        let succs = self.g.cfg.succs(u).to_vec();
        let term = self.f.terminator(u).map(|t| t.op);
        if succs.is_empty() {
            let to = match term {
                Some(Opcode::Ret) => self.ret_target(copy),
                _ => None,
            };
            self.edge(n, to, (u, u), Vec::new());
            return Ok(());
        }
        let mut distinct = succs.clone();
        distinct.sort();
        distinct.dedup();
        for &s in &distinct {
            let to = self.target(copy, s);
            self.edge(n, Some(to), (u, s), vec![Pay::Phis(u, s)]);
        }
        if distinct.len() < 2 || !(self.divergent)(u) {
            return Ok(());
        }
        if distinct.len() > 2 {
            return Err("a switch that can split a warp".into());
        }
        let r = self.g.pdom.idom(u);
        let (s1, s2) = (distinct[0], distinct[1]);
        let mut both = vec![Pay::Phis(u, s1), Pay::Phis(u, s2)];
        // A loop exit's splits were paid on entering the loop, and so
        // were a covered guard's.
        let paid = (self.g.exit_of(u).is_some() && !self.splits.each_time)
            || self.splits.covered_guards.contains(&u);
        if !paid {
            both.push(Pay::Divergence);
        }
        // One side empty: the split costs the divergence and both edges.
        for (empty, other) in [(s1, s2), (s2, s1)] {
            if Some(empty) == r {
                let to = self.target(copy, other);
                self.edge(n, Some(to), (u, other), both);
                return Ok(());
            }
        }
        let (r1, r2) = (self.side(s1, r), self.side(s2, r));
        let (first, region, second) = match (r1[u.index()], r2[u.index()]) {
            (false, _) => (s1, r1, s2),
            (true, false) => (s2, r2, s1),
            (true, true) => {
                return Err("a divergent branch whose both sides loop back to it".into())
            }
        };
        if self.nodes.len() > MAX_NODES {
            return Err(format!(
                "more than {MAX_NODES} paths through nested divergent branches"
            ));
        }
        let cont = self.target(copy, second);
        let mut carried = self.nodes[n].scope.clone();
        if let Some(c) = &self.copies[copy] {
            carried.extend(&c.carried);
            carried.sort();
            carried.dedup();
        }
        let c = self.copies.push(Some(Copy {
            region,
            reconv: r,
            cont,
            carried,
        }));
        debug_assert!(self.copies[c]
            .as_ref()
            .is_some_and(|x| x.region[first.index()]));
        let to = self.node(first, c);
        self.edge(n, Some(to), (u, first), both);
        Ok(())
    }
}

impl WarpGraph {
    /// The warp graph of `f`; `divergent(b)` says whether the branch ending
    /// `b` can split a warp, `splits` how often the exits of each loop can
    /// split it per entry (see `super::splits::exit_splits`).
    pub fn new(
        f: &Function,
        g: &FunctionGraphs,
        divergent: &dyn Fn(BlockId) -> bool,
        splits: &super::splits::Splits,
    ) -> Result<WarpGraph, String> {
        let mut b = Builder {
            f,
            g,
            divergent,
            splits,
            nodes: EntityVec::default(),
            index: HashMap::default(),
            copies: EntityVec::default(),
            edges: Vec::new(),
            work: Vec::new(),
        };
        let original = b.copies.push(None);
        let entry = b.node(g.cfg.entry(), original);
        while let Some(n) = b.work.pop() {
            b.expand(n)?;
            if b.nodes.len() > MAX_NODES {
                return Err(format!(
                    "more than {MAX_NODES} paths through nested divergent branches"
                ));
            }
        }
        Ok(WarpGraph {
            nodes: b.nodes,
            edges: b.edges,
            entry,
        })
    }
}
