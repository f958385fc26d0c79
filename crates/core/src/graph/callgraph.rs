//! The call graph of a module: who calls whom, what a kernel reaches, and an
//! order in which callee summaries are ready before their callers need them.
//!
//! Only direct calls are edges. Calls through a pointer and inline asm are
//! kept as call sites with their [`Callee`] so analyses can see them and give
//! up (or assume the worst) where they occur.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::{Callee, FuncId, InstId, Module};

/// One `call` instruction.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct CallSite {
    pub inst: InstId,
    pub callee: Callee,
}

#[derive(Clone, Debug)]
pub struct CallGraph {
    sites: Vec<Vec<CallSite>>,
    callees: Vec<Vec<FuncId>>,
    callers: Vec<Vec<FuncId>>,
    defined: Vec<bool>,
    recursive: Vec<bool>,
    /// Strongly connected groups of definitions, callees before callers.
    sccs: Vec<Vec<FuncId>>,
}

impl CallGraph {
    pub fn new(m: &Module) -> Self {
        let sites: Vec<Vec<CallSite>> = m
            .funcs
            .iter()
            .map(|func| {
                func.inst_ids()
                    .filter_map(|inst| {
                        func.inst(inst)
                            .callee()
                            .map(|callee| CallSite { inst, callee })
                    })
                    .collect()
            })
            .collect();
        let callees: Vec<Vec<FuncId>> = sites.iter().map(|s| direct_callees(s)).collect();
        let mut callers = vec![Vec::new(); m.funcs.len()];
        for (f, targets) in callees.iter().enumerate() {
            for g in targets {
                callers[g.index()].push(FuncId::new(f));
            }
        }
        let defined: Vec<bool> = m.funcs.iter().map(|f| !f.is_declaration).collect();
        let recursive_groups = strongly_connected(&callees);
        let mut recursive = vec![false; m.funcs.len()];
        for scc in &recursive_groups {
            let cyclic = scc.len() > 1 || callees[scc[0].index()].contains(&scc[0]);
            for f in scc {
                recursive[f.index()] = cyclic;
            }
        }
        let sccs = recursive_groups
            .into_iter()
            .filter(|scc| defined[scc[0].index()])
            .collect();
        CallGraph {
            sites,
            callees,
            callers,
            defined,
            recursive,
            sccs,
        }
    }

    /// Every call instruction of `f`, in instruction order.
    pub fn call_sites(&self, f: FuncId) -> &[CallSite] {
        &self.sites[f.index()]
    }

    /// Distinct direct callees of `f` (declarations included), in the order
    /// of their first call.
    pub fn callees(&self, f: FuncId) -> &[FuncId] {
        &self.callees[f.index()]
    }

    /// Distinct functions calling `f` directly, in id order.
    pub fn callers(&self, f: FuncId) -> &[FuncId] {
        &self.callers[f.index()]
    }

    /// Whether `f` calls through a function pointer.
    pub fn has_indirect_calls(&self, f: FuncId) -> bool {
        self.has_call_where(f, |c| c == Callee::Indirect)
    }

    /// Whether `f` contains inline asm (whose effects we cannot see).
    pub fn has_inline_asm(&self, f: FuncId) -> bool {
        self.has_call_where(f, |c| matches!(c, Callee::InlineAsm(_)))
    }

    fn has_call_where(&self, f: FuncId, pred: impl Fn(Callee) -> bool) -> bool {
        self.call_sites(f).iter().any(|s| pred(s.callee))
    }

    /// Whether `f` can call itself, directly or through others.
    pub fn is_recursive(&self, f: FuncId) -> bool {
        self.recursive[f.index()]
    }

    /// Definitions reachable from `root` through direct calls, breadth
    /// first in call order, `root` first. Empty if `root` is a declaration.
    pub fn reachable_from(&self, root: FuncId) -> Vec<FuncId> {
        if !self.defined[root.index()] {
            return Vec::new();
        }
        let mut seen = vec![false; self.defined.len()];
        seen[root.index()] = true;
        let mut order = vec![root];
        let mut next = 0;
        while let Some(&f) = order.get(next) {
            next += 1;
            for &g in self.callees(f) {
                if self.defined[g.index()] && !seen[g.index()] {
                    seen[g.index()] = true;
                    order.push(g);
                }
            }
        }
        order
    }

    /// Groups of mutually recursive definitions (singletons otherwise),
    /// callees' groups before their callers', each group in id order.
    pub fn sccs(&self) -> &[Vec<FuncId>] {
        &self.sccs
    }

    /// Definitions with callees before callers (within a recursive group,
    /// in id order): the order to compute summaries in.
    pub fn bottom_up(&self) -> impl Iterator<Item = FuncId> + '_ {
        self.sccs.iter().flatten().copied()
    }
}

fn direct_callees(sites: &[CallSite]) -> Vec<FuncId> {
    let mut out = Vec::new();
    for site in sites {
        if let Callee::Direct(g) = site.callee {
            if !out.contains(&g) {
                out.push(g);
            }
        }
    }
    out
}

/// Tarjan's SCCs, which petgraph emits sinks first (callees first).
fn strongly_connected(callees: &[Vec<FuncId>]) -> Vec<Vec<FuncId>> {
    let mut graph = DiGraph::<(), ()>::with_capacity(callees.len(), 0);
    for _ in callees {
        graph.add_node(());
    }
    for (f, targets) in callees.iter().enumerate() {
        for g in targets {
            graph.add_edge(NodeIndex::new(f), NodeIndex::new(g.index()), ());
        }
    }
    tarjan_scc(&graph)
        .into_iter()
        .map(|scc| {
            let mut funcs: Vec<FuncId> = scc.into_iter().map(|n| FuncId::new(n.index())).collect();
            funcs.sort();
            funcs
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{AsmId, InstKind, Opcode};

    fn d(i: u32) -> Callee {
        Callee::Direct(FuncId(i))
    }

    fn fs(ids: &[u32]) -> Vec<FuncId> {
        ids.iter().map(|&i| FuncId(i)).collect()
    }

    /// Definitions `defs[i]` get `FuncId(i)` and make the listed calls;
    /// declarations `decls` follow. Calls are raw instructions, so a
    /// definition may call one built after it.
    fn module(defs: &[(&str, &[Callee])], decls: &[&str]) -> Module {
        let mut mb = ModuleBuilder::new();
        let void = mb.void();
        for (name, calls) in defs {
            let mut fb = mb.define(name, &[], void);
            for &callee in *calls {
                fb.inst(
                    Opcode::Call,
                    void,
                    vec![],
                    InstKind::Call {
                        callee,
                        noreturn: false,
                        ptr_align: [0; 2],
                    },
                );
            }
            fb.ret(None);
        }
        for name in decls {
            mb.declare(name, &[], void);
        }
        mb.finish()
    }

    #[test]
    fn kernel_reaches_two_device_functions() {
        // 0 k -> {1 f, 2 g, 4 sreg}; f -> g; 3 h is never called.
        let m = module(
            &[
                ("k", &[d(1), d(4), d(2), d(1)]),
                ("f", &[d(2)]),
                ("g", &[]),
                ("h", &[d(2)]),
            ],
            &["llvm.nvvm.read.ptx.sreg.tid.x"],
        );
        let cg = CallGraph::new(&m);
        assert_eq!(cg.call_sites(FuncId(0)).len(), 4);
        assert_eq!(cg.callees(FuncId(0)), fs(&[1, 4, 2]));
        assert_eq!(cg.callers(FuncId(2)), fs(&[0, 1, 3]));
        assert_eq!(cg.callers(FuncId(4)), fs(&[0]));
        assert_eq!(cg.reachable_from(FuncId(0)), fs(&[0, 1, 2]));
        assert_eq!(cg.reachable_from(FuncId(4)), fs(&[]));
        assert!((0..5).all(|f| !cg.is_recursive(FuncId(f))));

        let order: Vec<FuncId> = cg.bottom_up().collect();
        let pos = |f: u32| order.iter().position(|&g| g == FuncId(f)).expect("defined");
        assert_eq!(order.len(), 4, "declarations are left out");
        assert!(pos(2) < pos(1) && pos(1) < pos(0) && pos(2) < pos(3));
    }

    #[test]
    fn mutual_and_self_recursion() {
        // 0 k -> 1 a <-> 2 b; 3 c -> 3 c; 4 leaf called by b.
        let m = module(
            &[
                ("k", &[d(1), d(3)]),
                ("a", &[d(2)]),
                ("b", &[d(1), d(4)]),
                ("c", &[d(3)]),
                ("leaf", &[]),
            ],
            &[],
        );
        let cg = CallGraph::new(&m);
        let recursive: Vec<bool> = (0..5).map(|f| cg.is_recursive(FuncId(f))).collect();
        assert_eq!(recursive, [false, true, true, true, false]);
        assert_eq!(cg.reachable_from(FuncId(0)), fs(&[0, 1, 3, 2, 4]));

        let group = |f: u32| {
            cg.sccs()
                .iter()
                .position(|s| s.contains(&FuncId(f)))
                .expect("in a group")
        };
        assert_eq!(cg.sccs()[group(1)], fs(&[1, 2]));
        assert_eq!(group(1), group(2));
        assert!(group(4) < group(1) && group(1) < group(0) && group(3) < group(0));
    }

    #[test]
    fn indirect_calls_and_inline_asm_are_recorded() {
        let m = module(
            &[
                ("k", &[Callee::Indirect, d(1)]),
                ("f", &[Callee::InlineAsm(AsmId(0))]),
            ],
            &[],
        );
        let cg = CallGraph::new(&m);
        assert!(cg.has_indirect_calls(FuncId(0)) && !cg.has_inline_asm(FuncId(0)));
        assert!(cg.has_inline_asm(FuncId(1)) && !cg.has_indirect_calls(FuncId(1)));
        assert_eq!(cg.call_sites(FuncId(0))[0].callee, Callee::Indirect);
        assert_eq!(cg.call_sites(FuncId(0))[1].inst, InstId(1));
        assert_eq!(cg.callees(FuncId(0)), fs(&[1]));
    }
}
