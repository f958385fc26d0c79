//! Which reads of shared memory may observe a write of thread-dependent
//! data, by the rules in `memory`: a read sees a dependent write to a
//! location it may alias when the two may run at once (the phases of the
//! block for shared memory, of the grid for the rest); a read of constant
//! memory sees none. A write that may land after its instruction, in a
//! later phase (an asynchronous copy, `cp.async`, completes at a wait; code
//! no analysis sees into may start one), may meet any read.

use super::kernel::Kernel;
use super::layout::{Node, Proc};
use super::memory::SharedTaint;
use super::rules::WriteData;
use crate::dataflow::FastMap;
use crate::graph::ModuleGraphs;
use crate::ir::{Callee, InstId, Intrinsic, Module};
use crate::memory::phases::{Overlap, Phases, Point, Scope};
use crate::memory::Space;
use crate::ptx::summary::EffectKind;
use std::collections::BTreeSet;

pub struct Visibility {
    block: Phases,
    grid: Phases,
    /// Every read of a shared location outside constant memory (a load,
    /// or a copy's source): its node and the location.
    reads: Vec<(Node, u32)>,
    /// The dependent writes found so far, by node: `(node, location)`.
    writes: BTreeSet<(Node, u32)>,
    /// What may run while a write does, per write node and scope; cleared
    /// when the phases change.
    overlaps: FastMap<(Node, Scope), Overlap>,
    /// Per write node: whether it may land after its instruction.
    deferred: FastMap<Node, bool>,
}

impl Visibility {
    pub fn new(k: &Kernel, m: &Module, graphs: &ModuleGraphs) -> Self {
        let mut reads = Vec::new();
        for (p, info) in k.procs.iter().enumerate() {
            for (i, rule) in info.rules.iter().enumerate() {
                let n = k.layout.node(p as Proc, InstId::new(i));
                let copied = rule.writes.iter().filter_map(|w| match &w.data {
                    WriteData::Copy(from) => Some(from),
                    _ => None,
                });
                for r in rule.read.iter().chain(copied) {
                    let l = r.target.shared;
                    if let Some(l) = l.filter(|&l| k.locs.shared_space(l) != Space::Constant) {
                        reads.push((n, l));
                    }
                }
            }
        }
        reads.sort_unstable();
        reads.dedup();
        let reached = &k.layout.funcs;
        Visibility {
            block: Phases::new(m, graphs, reached, Scope::Block),
            grid: Phases::new(m, graphs, reached, Scope::Grid),
            reads,
            writes: BTreeSet::new(),
            overlaps: FastMap::default(),
            deferred: FastMap::default(),
        }
    }

    fn point(k: &Kernel, n: Node) -> Point {
        let (p, i) = k.layout.locate(n);
        (k.layout.funcs[p as usize], i)
    }

    /// Whether the branch at `n` decides which barrier comes next (of the
    /// block or of the grid), so that its dependence changes the phases.
    pub fn decides_barriers(&self, k: &Kernel, n: Node) -> bool {
        let at = Self::point(k, n);
        self.block.decides_barriers(at) || self.grid.decides_barriers(at)
    }

    /// Takes what a round found: the dependent writes `(node, location)`
    /// and the branches deciding barriers whose condition is dependent.
    /// Records in `shared` each read that now observes a dependent write,
    /// and returns their nodes.
    pub fn update(
        &mut self,
        k: &Kernel,
        m: &Module,
        writes: &[(Node, u32)],
        branches: &[Node],
        shared: &mut SharedTaint,
    ) -> Vec<Node> {
        let mut split = false;
        for &b in branches {
            let at = Self::point(k, b);
            split |= self.block.split_at(at);
            split |= self.grid.split_at(at);
        }
        if split {
            self.overlaps.clear();
        }
        self.writes.extend(writes.iter().copied());
        for &(w, _) in writes {
            self.deferred.entry(w).or_insert_with(|| deferred(k, m, w));
        }
        let mut fresh = Vec::new();
        for &(r, l) in &self.reads {
            if shared.sees(r, l) {
                continue;
            }
            let (scope, phases) = match k.locs.shared_space(l) {
                Space::Shared => (Scope::Block, &self.block),
                _ => (Scope::Grid, &self.grid),
            };
            let read = Self::point(k, r);
            let (overlaps, deferred) = (&mut self.overlaps, &self.deferred);
            let cause = self
                .writes
                .iter()
                .filter(|&&(_, wl)| k.locs.shared_alias(l, wl))
                .find(|&&(w, _)| {
                    if deferred[&w] {
                        return true;
                    }
                    let o = overlaps
                        .entry((w, scope))
                        .or_insert_with(|| phases.overlap(Self::point(k, w)));
                    phases.overlaps(o, read)
                });
            if let Some(&(w, _)) = cause {
                shared.add(r, l, k.layout.locate(w));
                fresh.push(r);
            }
        }
        fresh.sort_unstable();
        fresh.dedup();
        fresh
    }
}

/// Whether the write at node `n` may land after its instruction: an
/// asynchronous copy, or a call no analysis sees into.
fn deferred(k: &Kernel, m: &Module, n: Node) -> bool {
    let (p, i) = k.layout.locate(n);
    let inst = k.layout.func(p).inst(i);
    match inst.callee() {
        None => false,
        Some(Callee::InlineAsm(_)) => crate::memory::asm::read(m, inst).is_none_or(|(_, s)| {
            s.effects
                .iter()
                .any(|e| matches!(e.kind, EffectKind::AsyncCopy { .. }))
        }),
        Some(Callee::Direct(g)) if m.func(g).is_declaration => {
            matches!(m.func(g).intrinsic, None | Some(Intrinsic::Unknown))
        }
        Some(Callee::Direct(_)) => false,
        Some(Callee::Indirect) => true,
    }
}
