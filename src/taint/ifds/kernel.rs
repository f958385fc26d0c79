//! Everything the flow functions look up, computed once per kernel: the
//! supergraph, fact numbering, memory locations, and per function its
//! instruction rules, control effects and liveness.

use super::control::Control;
use super::facts::FactSpace;
use super::layout::{Layout, Proc};
use super::liveness::Liveness;
use super::memory::Locations;
use super::rules::{InstRule, RuleBuilder, WriteData};
use crate::dataflow::Bits;
use crate::graph::ModuleGraphs;
use crate::ir::{FuncId, Module};
use crate::memory::{Root, Spaces};

/// Per-thread locations a procedure (with its callees) may touch.
#[derive(Clone, Debug)]
pub struct Reach {
    /// Through a pointer of unknown origin: any of them.
    pub all: bool,
    pub locs: Bits,
}

pub struct ProcInfo {
    pub rules: Vec<InstRule>,
    pub control: Control,
    pub live: Liveness,
    pub recursive: bool,
    pub reach: Reach,
    /// Whether it (or a callee) writes per-thread memory of another frame,
    /// which makes the `Masked` fact matter inside it.
    pub writes_foreign: bool,
}

pub struct Kernel<'m> {
    pub layout: Layout<'m>,
    pub facts: FactSpace,
    pub locs: Locations,
    pub procs: Vec<ProcInfo>,
}

impl<'m> Kernel<'m> {
    pub fn new(m: &'m Module, graphs: &ModuleGraphs, reached: &[FuncId], spaces: &Spaces) -> Self {
        let layout = Layout::new(m, graphs, reached);
        let mut locs = Locations::default();
        let rules: Vec<Vec<InstRule>> = reached
            .iter()
            .enumerate()
            .map(|(p, &f)| {
                let mut builder = RuleBuilder {
                    m,
                    spaces,
                    locs: &mut locs,
                };
                let shape = &layout.shapes[p];
                m.func(f)
                    .inst_ids()
                    .map(|i| builder.rule(f, i, shape.callee[i.index()].is_some()))
                    .collect()
            })
            .collect();
        let mut procs: Vec<ProcInfo> = Vec::with_capacity(reached.len());
        for (p, (&f, rules)) in reached.iter().zip(rules).enumerate() {
            let func = m.func(f);
            let g = graphs.func(f);
            let shape = &layout.shapes[p];
            let mut control = Control::new(m, func, g);
            let live = Liveness::new(func, &g.cfg, shape, &control.control_uses());
            control.find_escapes(m, func, g, shape, &live);
            procs.push(ProcInfo {
                rules,
                control,
                live,
                recursive: graphs.calls.is_recursive(f),
                reach: Reach {
                    all: false,
                    locs: Bits::new(0),
                },
                writes_foreign: false,
            });
        }
        let sizes: Vec<(usize, usize)> = reached
            .iter()
            .map(|&f| (m.func(f).params.len(), m.func(f).insts.len()))
            .collect();
        let facts = FactSpace::new(&sizes, locs.per_thread_count(), locs.shared_count());
        let mut kernel = Kernel {
            layout,
            facts,
            locs,
            procs,
        };
        kernel.find_reach();
        kernel
    }

    /// Whether procedure `q` (or a callee) may read or write per-thread
    /// location `loc` or one that overlaps it.
    pub fn may_touch(&self, q: Proc, loc: u32) -> bool {
        let reach = &self.procs[q as usize].reach;
        reach.all
            || reach.locs.contains(loc as usize)
            || (self.locs.per_thread_root(loc) == Root::Unknown
                && reach.locs.iter().next().is_some())
    }

    /// Whether per-thread location `loc` is a frame slot of `p` that dies
    /// when `p` returns (not so for recursive functions, whose frames the
    /// abstraction merges).
    pub fn own_frame(&self, p: Proc, loc: u32) -> bool {
        let f = self.layout.funcs[p as usize];
        matches!(self.locs.per_thread_root(loc), Root::Alloca(g, _) if g == f)
            && !self.procs[p as usize].recursive
    }

    /// Direct per-thread accesses, then closure over calls.
    fn find_reach(&mut self) {
        let n = self.procs.len();
        let count = self.locs.per_thread_count();
        for p in 0..n {
            let mut reach = Reach {
                all: false,
                locs: Bits::new(count),
            };
            let mut foreign = false;
            let rules = &self.procs[p].rules;
            let refs = rules
                .iter()
                .flat_map(|r| r.read.iter().chain(r.writes.iter().map(|w| &w.to)));
            for r in refs {
                if let Some(l) = r.target.per_thread {
                    reach.all |= self.locs.per_thread_root(l) == Root::Unknown;
                    reach.locs.insert(l as usize);
                }
            }
            for r in rules.iter().flat_map(|r| &r.writes) {
                if let WriteData::Copy(from) = &r.data {
                    if let Some(l) = from.target.per_thread {
                        reach.all |= self.locs.per_thread_root(l) == Root::Unknown;
                        reach.locs.insert(l as usize);
                    }
                }
                foreign |= r.to.target.per_thread.is_some() && !r.frame_local;
            }
            self.procs[p].reach = reach;
            self.procs[p].writes_foreign = foreign;
        }
        // What a callee reaches, its callers reach.
        let mut changed = true;
        while changed {
            changed = false;
            for p in 0..n {
                for q in self.callees(p as Proc) {
                    if q as usize == p {
                        continue;
                    }
                    let (callee_reach, callee_foreign) = {
                        let info = &self.procs[q as usize];
                        (info.reach.clone(), info.writes_foreign)
                    };
                    let info = &mut self.procs[p];
                    changed |= info.reach.locs.union_with(&callee_reach.locs);
                    changed |= callee_reach.all && !info.reach.all;
                    info.reach.all |= callee_reach.all;
                    changed |= callee_foreign && !info.writes_foreign;
                    info.writes_foreign |= callee_foreign;
                }
            }
        }
    }

    fn callees(&self, p: Proc) -> Vec<Proc> {
        let mut out: Vec<Proc> = self.layout.shapes[p as usize]
            .callee
            .iter()
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}
