//! Barrier phases: where in a kernel two threads may be at the same time,
//! so that one may read memory while the other writes it.
//!
//! Threads run at their own pace between barriers (independent thread
//! scheduling lets even the lanes of a warp part), and a barrier holds
//! every thread until all have arrived: it ends one *phase* and starts the
//! next. What was written before a barrier has one value for every thread
//! after it; what is written in the same phase as a read may be read
//! before the write by one thread and after it by another. Two points `x`
//! and `y` *overlap* (another thread may be at `y` while one is at `x`)
//! when
//!
//! * a barrier-free path leads from `x` to `y` or from `y` to `x`: one
//!   thread is ahead of the other on the same path, around loops too (the
//!   write of the next iteration and the read of this one);
//! * a branch where threads may part reaches both through its successors
//!   without a barrier;
//! * barriers that threads may pass together (below) start barrier-free
//!   paths to both.
//!
//! **Where threads part.** `__syncthreads()` is `bar.sync`, which is
//! `.aligned`: every thread of the block must run the same barrier
//! instruction. So a branch that *decides barriers* (its successors reach
//! different barriers first) goes the same way in every thread, and the
//! points behind its two sides never overlap. Any other branch may part
//! the threads. The rule is the program's to keep, and thread dependence
//! can show it broken ([`Phases::split_at`]): a branch that decides
//! barriers yet differs between lanes, say a loop running
//! `__syncthreads()` `threadIdx.x` times. Such a branch parts threads like
//! any other, and the barriers they reach first may be passed together
//! (since Volta a barrier counts threads, not instructions): those
//! barriers are one from then on, and so are the barriers after them.
//! (A branch uniform in each warp but not across the block, on `%warpid`
//! or a vote, in front of different barriers, is left to the rule.)
//!
//! **Which barriers count** ([`Scope`]). For a block: `__syncthreads()`
//! and its reductions (`barrier0.popc/and/or`), `bar.sync id` without a
//! thread count, inline asm that is such a barrier and touches no memory,
//! and the grid barrier. A barrier with a thread count (`bar.sync 1, 64`)
//! holds only that many threads, and warp-level synchronisation
//! (`__syncwarp`, shuffles, votes) only lanes of one warp: the other
//! threads run on, so neither ends a phase. Nor does the unaligned
//! `barrier.sync`, which threads may reach at different instructions. For the grid (memory that
//! other blocks write too): only the grid barrier, since no block barrier
//! orders the threads of two blocks.
//!
//! The graph is every instruction of the functions the kernel reaches, a
//! call entering its callee and each `ret` going back to every call site
//! (returns are not matched to their calls: more paths, never fewer).

use crate::dataflow::{Bits, FastMap};
use crate::graph::ModuleGraphs;
use crate::ir::{Callee, FuncId, Inst, InstId, Intrinsic, Module, Opcode};
use crate::ptx::inst::{BarKind, Op};
use crate::ptx::summary::EffectKind;

/// A program point: an instruction of a function the kernel reaches.
pub type Point = (FuncId, InstId);

/// Which threads the phases are of, and so which barriers end them.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Scope {
    /// The threads of one block: block barriers and the grid barrier.
    Block,
    /// Every thread of the launch: the grid barrier only.
    Grid,
}

/// A set of nodes, one bit each.
type NodeSet = Bits;

/// Adjacency lists packed into one vector.
#[derive(Clone, Debug, Default)]
struct Edges {
    start: Vec<u32>,
    to: Vec<u32>,
}

impl Edges {
    fn from_lists(lists: &[Vec<u32>]) -> Self {
        let mut e = Edges {
            start: Vec::with_capacity(lists.len() + 1),
            to: Vec::new(),
        };
        for l in lists {
            e.start.push(e.to.len() as u32);
            e.to.extend(l);
        }
        e.start.push(e.to.len() as u32);
        e
    }

    fn of(&self, n: usize) -> &[u32] {
        &self.to[self.start[n] as usize..self.start[n + 1] as usize]
    }
}

/// Points that may run while another thread is at a given point: the
/// answer of [`Phases::overlap`].
#[derive(Clone, Debug)]
pub struct Overlap(NodeSet);

/// The phases of one kernel's threads (see the module documentation).
#[derive(Clone, Debug)]
pub struct Phases {
    index: FastMap<FuncId, u32>,
    /// Per reached function, its first node.
    base: Vec<u32>,
    succ: Edges,
    pred: Edges,
    /// Per node, its index in `barriers` if it is one.
    barrier_of: Vec<Option<u32>>,
    barriers: Vec<u32>,
    /// Conditional branches and switches (a `ret` going back to several
    /// call sites does not part threads: each returns to its own).
    branches: NodeSet,
    /// Per node, the barriers reachable from it without passing one (an
    /// index into `sets`), over barrier indices.
    first: Vec<u32>,
    sets: Vec<NodeSet>,
    /// Union-find over barrier indices: barriers passed together.
    parent: Vec<u32>,
    /// Branches that decide barriers but were found to part threads.
    split: Vec<bool>,
}

impl Phases {
    /// The phases of the threads of `scope` over the functions `reached`
    /// (the kernel first).
    pub fn new(m: &Module, graphs: &ModuleGraphs, reached: &[FuncId], scope: Scope) -> Self {
        let index: FastMap<FuncId, u32> = reached
            .iter()
            .enumerate()
            .map(|(p, &f)| (f, p as u32))
            .collect();
        let mut base = Vec::with_capacity(reached.len());
        let mut nodes = 0usize;
        for &f in reached {
            base.push(nodes as u32);
            nodes += m.func(f).insts.len();
        }
        let node = |f: FuncId, i: InstId| (base[index[&f] as usize] + i.0) as usize;
        let succ = successors(m, graphs, reached, &node);
        let mut pred: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for (n, out) in succ.iter().enumerate() {
            for &s in out {
                pred[s as usize].push(n as u32);
            }
        }
        let mut barrier_of = vec![None; nodes];
        let mut barriers = Vec::new();
        let mut branches = NodeSet::new(nodes);
        for &f in reached {
            let func = m.func(f);
            for i in func.inst_ids() {
                let (n, inst) = (node(f, i), func.inst(i));
                if is_barrier(m, inst, scope) {
                    barrier_of[n] = Some(barriers.len() as u32);
                    barriers.push(n as u32);
                }
                if matches!(inst.op, Opcode::Br | Opcode::Switch) && succ[n].len() > 1 {
                    branches.insert(n);
                }
            }
        }
        let count = barriers.len() as u32;
        let mut phases = Phases {
            index,
            base,
            succ: Edges::from_lists(&succ),
            pred: Edges::from_lists(&pred),
            barrier_of,
            barriers,
            branches,
            first: Vec::new(),
            sets: Vec::new(),
            parent: (0..count).collect(),
            split: vec![false; nodes],
        };
        phases.find_first_barriers();
        phases
    }

    fn node(&self, (f, i): Point) -> Option<usize> {
        let p = *self.index.get(&f)?;
        Some((self.base[p as usize] + i.0) as usize)
    }

    fn nodes(&self) -> usize {
        self.barrier_of.len()
    }

    fn is_barrier(&self, n: usize) -> bool {
        self.barrier_of[n].is_some()
    }

    /// Per node, the barriers first reached from it (itself, for a
    /// barrier): a backward fixpoint over the graph, the sets interned.
    fn find_first_barriers(&mut self) {
        let n = self.nodes();
        let mut reach: Vec<NodeSet> = vec![NodeSet::new(self.barriers.len()); n];
        let mut work: Vec<u32> = Vec::new();
        for (k, &b) in self.barriers.iter().enumerate() {
            reach[b as usize].insert(k);
            work.push(b);
        }
        while let Some(x) = work.pop() {
            for &p in self.pred.of(x as usize) {
                if self.is_barrier(p as usize) {
                    continue;
                }
                let from = reach[x as usize].clone();
                if reach[p as usize].union_with(&from) {
                    work.push(p);
                }
            }
        }
        let mut interned: FastMap<NodeSet, u32> = FastMap::default();
        self.first = reach
            .into_iter()
            .map(|set| {
                let next = interned.len() as u32;
                *interned.entry(set.clone()).or_insert_with(|| {
                    self.sets.push(set);
                    next
                })
            })
            .collect();
    }

    /// The barriers reached first from the successors of `n`.
    fn first_after(&self, n: usize) -> NodeSet {
        let mut all = NodeSet::new(self.barriers.len());
        for &s in self.succ.of(n) {
            all.union_with(&self.sets[self.first[s as usize] as usize]);
        }
        all
    }

    /// Whether the branch at `n` decides which barrier its threads meet
    /// next: its successors reach different barriers first.
    fn decides(&self, n: usize) -> bool {
        let out = self.succ.of(n);
        out.iter()
            .any(|&s| self.first[s as usize] != self.first[out[0] as usize])
    }

    /// Whether threads may take different successors of node `n`.
    fn parts(&self, n: usize) -> bool {
        self.branches.contains(n) && (self.split[n] || !self.decides(n))
    }

    /// Whether the branch at `at` decides barriers (so that only thread
    /// dependence found there can make it part threads).
    pub fn decides_barriers(&self, at: Point) -> bool {
        self.node(at)
            .is_some_and(|n| self.branches.contains(n) && self.decides(n))
    }

    /// Records that threads may take different ways at the branch `at`,
    /// though it decides barriers; whether the phases changed.
    pub fn split_at(&mut self, at: Point) -> bool {
        let Some(n) = self.node(at) else { return false };
        if self.split[n] || !self.decides(n) {
            return false;
        }
        self.split[n] = true;
        let first = self.first_after(n);
        self.merge(&first);
        // Threads released together from different barriers meet the
        // barriers after them together too.
        loop {
            let mut changed = false;
            for members in self.classes() {
                let mut next = NodeSet::new(self.barriers.len());
                for b in members {
                    next.union_with(&self.first_after(self.barriers[b] as usize));
                }
                changed |= self.merge(&next);
            }
            if !changed {
                return true;
            }
        }
    }

    fn find(&self, mut b: usize) -> usize {
        while self.parent[b] as usize != b {
            b = self.parent[b] as usize;
        }
        b
    }

    /// Makes the barriers of `set` one; whether any two were apart.
    fn merge(&mut self, set: &NodeSet) -> bool {
        let mut changed = false;
        let mut members = set.iter();
        let Some(first) = members.next() else {
            return false;
        };
        let root = self.find(first);
        for b in members {
            let r = self.find(b);
            if r != root {
                self.parent[r] = root as u32;
                changed = true;
            }
        }
        changed
    }

    /// The barriers passed together, in groups of two or more.
    fn classes(&self) -> Vec<Vec<usize>> {
        let mut by_root: FastMap<usize, Vec<usize>> = FastMap::default();
        for b in 0..self.barriers.len() {
            by_root.entry(self.find(b)).or_default().push(b);
        }
        let mut groups: Vec<Vec<usize>> = by_root.into_values().filter(|g| g.len() > 1).collect();
        groups.sort();
        groups
    }

    /// Every point that may run in one thread while another is at `x`
    /// (`x` itself included): empty if `x` is not reached.
    pub fn overlap(&self, x: Point) -> Overlap {
        let mut seen = NodeSet::new(self.nodes());
        let Some(start) = self.node(x) else {
            return Overlap(seen);
        };
        // Behind `x`, up to the barriers that start its phases.
        let mut behind = NodeSet::new(self.nodes());
        let mut starts = NodeSet::new(self.barriers.len());
        let mut stack = vec![start];
        behind.insert(start);
        while let Some(n) = stack.pop() {
            for &p in self.pred.of(n) {
                match self.barrier_of[p as usize] {
                    Some(b) => {
                        starts.insert(b as usize);
                    }
                    None if behind.insert(p as usize) => stack.push(p as usize),
                    None => {}
                }
            }
        }
        let mut seeds = vec![start];
        for n in behind.iter().filter(|&n| self.parts(n)) {
            seeds.extend(self.succ.of(n).iter().map(|&s| s as usize));
        }
        let classes = self.classes();
        for b in starts.iter() {
            let root = self.find(b);
            for group in classes.iter().filter(|g| self.find(g[0]) == root) {
                for &other in group {
                    let at = self.barriers[other] as usize;
                    seeds.extend(self.succ.of(at).iter().map(|&s| s as usize));
                }
            }
        }
        // Ahead of `x` and of every place a thread may have parted from it.
        let mut stack: Vec<usize> = Vec::new();
        for s in seeds {
            if !self.is_barrier(s) && seen.insert(s) {
                stack.push(s);
            }
        }
        while let Some(n) = stack.pop() {
            for &s in self.succ.of(n) {
                if !self.is_barrier(s as usize) && seen.insert(s as usize) {
                    stack.push(s as usize);
                }
            }
        }
        seen.union_with(&behind);
        Overlap(seen)
    }

    /// Whether `y` is in `o` (an answer of [`Self::overlap`]).
    pub fn overlaps(&self, o: &Overlap, y: Point) -> bool {
        self.node(y).is_some_and(|n| o.0.contains(n))
    }

    /// Whether another thread may be at `y` while one is at `x`.
    pub fn may_overlap(&self, x: Point, y: Point) -> bool {
        self.overlaps(&self.overlap(x), y)
    }
}

/// Per node (numbered by `node`), its successors: the next instruction,
/// a block's successors' first instructions, a callee's entry for a call
/// to a reached function, and every return site of a function for its
/// `ret`s.
fn successors(
    m: &Module,
    graphs: &ModuleGraphs,
    reached: &[FuncId],
    node: &dyn Fn(FuncId, InstId) -> usize,
) -> Vec<Vec<u32>> {
    let nodes: usize = reached.iter().map(|&f| m.func(f).insts.len()).sum();
    let mut succ: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    let mut return_sites: FastMap<FuncId, Vec<u32>> = FastMap::default();
    for &f in reached {
        let func = m.func(f);
        let cfg = &graphs.func(f).cfg;
        for b in func.block_ids() {
            let insts = &func.blocks[b.index()].insts;
            for (k, &i) in insts.iter().enumerate() {
                let callee = match func.inst(i).callee() {
                    Some(Callee::Direct(g)) if reached.contains(&g) => Some(g),
                    _ => None,
                };
                let out = &mut succ[node(f, i)];
                match (callee, insts.get(k + 1)) {
                    (Some(g), Some(&next)) => {
                        out.push(node(g, m.func(g).blocks[0].insts[0]) as u32);
                        return_sites
                            .entry(g)
                            .or_default()
                            .push(node(f, next) as u32);
                    }
                    (_, Some(&next)) => out.push(node(f, next) as u32),
                    (_, None) => {
                        for &s in cfg.succs(b) {
                            let first = node(f, func.blocks[s.index()].insts[0]) as u32;
                            if !out.contains(&first) {
                                out.push(first);
                            }
                        }
                    }
                }
            }
        }
    }
    for (&g, sites) in &return_sites {
        let func = m.func(g);
        for i in func.inst_ids().filter(|&i| func.inst(i).op == Opcode::Ret) {
            succ[node(g, i)].extend(sites);
        }
    }
    succ
}

/// Whether `inst` ends a phase of the threads of `scope`.
fn is_barrier(m: &Module, inst: &Inst, scope: Scope) -> bool {
    if let Some(Callee::InlineAsm(_)) = inst.callee() {
        return scope == Scope::Block && asm_barrier(m, inst);
    }
    match m.called_intrinsic(inst) {
        Some(Intrinsic::GridSync) => true,
        Some(Intrinsic::Barrier(b)) => scope == Scope::Block && b.ends_block_phase(),
        _ => false,
    }
}

/// Inline asm that waits at an aligned barrier of the whole block (no
/// thread count, no guard) and touches no memory: a barrier between
/// accesses.
fn asm_barrier(m: &Module, inst: &Inst) -> bool {
    let Some((body, summary)) = super::asm::read(m, inst) else {
        return false;
    };
    let whole_block = body.insts.iter().any(|i| {
        i.guard.is_none()
            && matches!(
                i.op,
                Op::Bar {
                    kind: BarKind::Sync | BarKind::Red(_),
                    aligned: true,
                    count: None,
                    ..
                }
            )
    });
    let touches_memory = summary.effects.iter().any(|e| {
        matches!(
            e.kind,
            EffectKind::Load { .. }
                | EffectKind::Store { .. }
                | EffectKind::Atomic { .. }
                | EffectKind::AsyncCopy { .. }
        )
    });
    whole_block && !touches_memory
}

#[cfg(test)]
mod tests;
