//! Control-flow and call graphs, built once per module and shared by every
//! later stage.
//!
//! Per function: the [`Cfg`](cfg::Cfg), dominator and post-dominator trees
//! ([`DomTree`](dom::DomTree); the post-dominator tree is where lanes
//! meet again, with paths into traps and `unreachable` left out, see
//! `reconverge`), control dependence
//! ([`ControlDeps`](cdg::ControlDeps)), natural loops
//! ([`Loops`](loops::Loops)) and their counters and exit tests
//! ([`LoopFacts`](loop_facts::LoopFacts), read on first use). Per module:
//! the [`CallGraph`](callgraph::CallGraph).
//! All of them consider only blocks reachable from the entry.

pub mod callgraph;
pub mod cdg;
pub mod cfg;
pub mod dom;
pub mod loop_facts;
pub mod loops;
mod reconverge;

#[cfg(test)]
mod fixtures;

pub use callgraph::{CallGraph, CallSite};
pub use cdg::ControlDeps;
pub use cfg::Cfg;
pub use dom::{DomKind, DomTree};
pub use loop_facts::LoopFacts;
pub use loops::{IrreducibleCycle, Loop, LoopId, Loops};

use std::sync::OnceLock;

use crate::ir::{BlockId, FuncId, Function, Module};

/// Every per-function graph of one definition.
#[derive(Clone, Debug)]
pub struct FunctionGraphs {
    pub cfg: Cfg,
    pub dom: DomTree,
    pub pdom: DomTree,
    pub cdg: ControlDeps,
    pub loops: Loops,
    loop_facts: OnceLock<LoopFacts>,
}

impl FunctionGraphs {
    pub fn new(func: &Function) -> Self {
        let cfg = Cfg::new(func);
        let dom = DomTree::dominators(&cfg);
        let pdom = DomTree::post_dominators(&cfg);
        let cdg = ControlDeps::new(&cfg, &pdom);
        let loops = Loops::new(&cfg, &dom);
        FunctionGraphs {
            cfg,
            dom,
            pdom,
            cdg,
            loops,
            loop_facts: OnceLock::new(),
        }
    }

    /// The blocks one side of branch block `b` runs before its lanes meet
    /// again: those reachable from successor `succ` without passing the
    /// reconvergence point (`b`'s immediate post-dominator), and `b`
    /// itself when the side comes back to it (a loop's next iteration,
    /// which its exit test also runs), not expanded past. What a warp
    /// that splits at `b` runs twice, once per side.
    pub fn branch_side(&self, b: BlockId, succ: BlockId) -> Vec<BlockId> {
        let meet = self.pdom.idom(b);
        let mut seen = vec![false; self.cfg.num_blocks()];
        let mut out = Vec::new();
        let mut work = vec![succ];
        while let Some(x) = work.pop() {
            if Some(x) == meet || std::mem::replace(&mut seen[x.index()], true) {
                continue;
            }
            out.push(x);
            if x != b {
                work.extend(self.cfg.succs(x).iter().copied());
            }
        }
        out.sort();
        out
    }

    /// The innermost loop whose exit the branch ending `u` is
    /// ([`loop_facts::exit_of`]).
    pub fn exit_of(&self, u: BlockId) -> Option<LoopId> {
        loop_facts::exit_of(&self.cfg, &self.loops, u)
    }

    /// The counters and exit tests of `func`'s loops, computed on the
    /// first call; `func` (of module `m`) must be the function these
    /// graphs were built from.
    pub fn loop_facts(&self, m: &Module, func: &Function) -> &LoopFacts {
        self.loop_facts.get_or_init(|| {
            debug_assert_eq!(func.blocks.len(), self.cfg.num_blocks());
            LoopFacts::new(m, func, &self.cfg, &self.loops, &self.dom)
        })
    }
}

/// The graphs of a whole module.
#[derive(Clone, Debug)]
pub struct ModuleGraphs {
    /// Indexed by [`FuncId`]; `None` for declarations.
    pub funcs: Vec<Option<FunctionGraphs>>,
    pub calls: CallGraph,
}

impl ModuleGraphs {
    pub fn new(m: &Module) -> Self {
        let funcs = m
            .funcs
            .iter()
            .map(|f| (!f.is_declaration).then(|| FunctionGraphs::new(f)))
            .collect();
        ModuleGraphs {
            funcs,
            calls: CallGraph::new(m),
        }
    }

    /// The call graph alone: no function's graphs yet ([`Self::build`]
    /// adds them as they are needed).
    pub fn calls_only(m: &Module) -> Self {
        ModuleGraphs {
            funcs: (0..m.funcs.len()).map(|_| None).collect(),
            calls: CallGraph::new(m),
        }
    }

    /// Builds the graphs of the definitions among `funcs` that have none.
    pub fn build(&mut self, m: &Module, funcs: impl IntoIterator<Item = FuncId>) {
        for f in funcs {
            let func = m.func(f);
            let slot = &mut self.funcs[f.index()];
            if slot.is_none() && !func.is_declaration {
                *slot = Some(FunctionGraphs::new(func));
            }
        }
    }

    /// Drops the graphs of `funcs` (no longer needed: their memory goes).
    pub fn drop_graphs(&mut self, funcs: impl IntoIterator<Item = FuncId>) {
        for f in funcs {
            self.funcs[f.index()] = None;
        }
    }

    /// The graphs of `f`, or `None` for a declaration.
    pub fn get(&self, f: FuncId) -> Option<&FunctionGraphs> {
        self.funcs[f.index()].as_ref()
    }

    /// The graphs of definition `f`.
    ///
    /// # Panics
    /// If `f` is a declaration.
    pub fn func(&self, f: FuncId) -> &FunctionGraphs {
        self.get(f).expect("graphs of a declaration")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;

    #[test]
    fn module_graphs_skip_declarations() {
        // Kernel k is a while loop whose body reads tid.x: 0 -> 1 -> {2 -> 1, 3}.
        let mut mb = ModuleBuilder::new();
        let i1 = mb.int(1);
        let void = mb.void();
        let mut fb = mb.define("k", &[i1], void);
        fb.kernel();
        let (header, body, exit) = (fb.block(), fb.block(), fb.block());
        fb.br(header);
        fb.switch_to(header);
        fb.cond_br(crate::ir::Value::Arg(0), body, exit);
        fb.switch_to(body);
        fb.sreg("tid.x");
        fb.br(header);
        fb.switch_to(exit);
        fb.ret(None);
        let m = mb.finish();

        let graphs = ModuleGraphs::new(&m);
        let tid = m
            .find_function("llvm.nvvm.read.ptx.sreg.tid.x")
            .expect("declared");
        assert!(graphs.get(tid).is_none());
        let k = graphs.func(FuncId(0));
        assert_eq!(k.loops.len(), 1);
        assert_eq!(k.pdom.idom(header), Some(exit));
        assert_eq!(k.cdg.dependents(header), [header, body]);
        assert_eq!(graphs.calls.reachable_from(FuncId(0)), [FuncId(0)]);
        assert_eq!(graphs.calls.callees(FuncId(0)), [tid]);
        // The loop's exit branch: the body is one side, with the test it
        // comes back to (the next iteration's); the exit is where lanes
        // meet.
        assert_eq!(k.branch_side(header, body), [header, body]);
        assert!(k.branch_side(header, exit).is_empty());
    }
}
