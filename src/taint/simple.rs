//! A simple, sound thread-dependence analysis: data dependence plus merges
//! at the joins of dependent branches, iterated to a fixpoint over the
//! functions a kernel reaches. Context-insensitive within a kernel: a device
//! function's parameter is dependent if any call site in the kernel passes a
//! dependent value.

use super::{DependenceAnalysis, FuncDeps, KernelDeps, Source, Why};
use crate::graph::{FunctionGraphs, ModuleGraphs};
use crate::ir::intrinsics::{SReg, ShflMode};
use crate::ir::{BlockId, Callee, FuncId, Function, InstId, Intrinsic, Module, Opcode, Value};
use crate::memory::{access_of, AccessKind, Root, Space, Spaces};
use std::collections::{HashMap, HashSet};

/// The foundation's intra-procedural taint with call-site joins.
pub struct SimpleTaint;

impl DependenceAnalysis for SimpleTaint {
    fn analyze(
        &self,
        m: &Module,
        graphs: &ModuleGraphs,
        kernel: FuncId,
        reached: &[FuncId],
        spaces: &Spaces,
    ) -> KernelDeps {
        let mut state = State {
            m,
            graphs,
            spaces,
            reached: reached.iter().copied().collect(),
            deps: KernelDeps {
                kernel,
                funcs: reached
                    .iter()
                    .map(|&f| {
                        let func = m.func(f);
                        (f, FuncDeps::new(func.insts.len(), func.params.len()))
                    })
                    .collect(),
            },
            returns: HashMap::new(),
            memory: HashMap::new(),
        };
        // Every round either marks something new or stops; marks only grow.
        loop {
            let mut changed = false;
            for &f in reached {
                changed |= state.function(f);
            }
            if !changed {
                break;
            }
        }
        state.deps
    }
}

/// Memory that holds thread-dependent values, keyed by space and root.
type TaintedMemory = HashMap<(Space, Root), (FuncId, InstId)>;

struct State<'a> {
    m: &'a Module,
    graphs: &'a ModuleGraphs,
    spaces: &'a Spaces,
    reached: HashSet<FuncId>,
    deps: KernelDeps,
    /// A dependent `ret` of each function, if any.
    returns: HashMap<FuncId, InstId>,
    memory: TaintedMemory,
}

impl State<'_> {
    fn dep(&self, f: FuncId, v: Value) -> bool {
        self.deps.is_dependent(f, v)
    }

    /// Runs the rules over `f` until nothing changes; reports whether
    /// anything visible to other functions (or `f` itself) changed.
    fn function(&mut self, f: FuncId) -> bool {
        let m = self.m;
        let func = m.func(f);
        let Some(g) = self.graphs.get(f) else {
            return false;
        };
        let mut any = false;
        loop {
            let mut changed = false;
            for b in g.cfg.reverse_post_order().to_vec() {
                for &i in &func.blocks[b.index()].insts {
                    changed |= self.instruction(f, func, i);
                }
            }
            changed |= self.divergent_joins(f, func, g);
            changed |= self.loop_exits(f, func, g);
            if !changed {
                break;
            }
            any = true;
        }
        any
    }

    fn mark(&mut self, f: FuncId, i: InstId, why: Why) -> bool {
        let slot = &mut self.deps.funcs.get_mut(&f).expect("reached").insts[i.index()];
        if slot.is_some() {
            return false;
        }
        *slot = Some(why);
        true
    }

    fn mark_memory(&mut self, key: (Space, Root), at: (FuncId, InstId)) -> bool {
        if self.memory.contains_key(&key) {
            return false;
        }
        self.memory.insert(key, at);
        true
    }

    /// A store to memory a later load of `origin` may observe.
    fn memory_why(&self, space: Space, root: Root) -> Option<Why> {
        let hit = |k: &(Space, Root)| {
            let space_ok = k.0 == space || k.0 == Space::Unknown || space == Space::Unknown;
            let root_ok = k.1 == root || k.1 == Root::Unknown || root == Root::Unknown;
            space_ok && root_ok
        };
        let mut hits: Vec<_> = self.memory.iter().filter(|(k, _)| hit(k)).collect();
        hits.sort();
        hits.first()
            .map(|(_, &(func, store))| Why::Memory { func, store })
    }

    fn first_dependent(&self, f: FuncId, ops: &[Value]) -> Option<Why> {
        ops.iter()
            .find(|&&o| self.dep(f, o))
            .map(|&o| Why::Operand(o))
    }

    fn instruction(&mut self, f: FuncId, func: &Function, i: InstId) -> bool {
        let m = self.m;
        let inst = func.inst(i);
        let mut changed = self.memory_effects(f, func, i);
        if self.dep(f, Value::Inst(i)) {
            return changed;
        }
        let why = match inst.op {
            Opcode::AtomicRmw | Opcode::CmpXchg => Some(Why::Source(Source::Atomic)),
            Opcode::Load => self.first_dependent(f, &inst.operands).or_else(|| {
                let o = self.spaces.origin(m, f, inst.operands[0]);
                self.memory_why(o.space, o.root)
            }),
            Opcode::Call => self.call(f, func, i),
            Opcode::Alloca => None,
            _ => self.first_dependent(f, &inst.operands),
        };
        if let Some(w) = why {
            changed |= self.mark(f, i, w);
        }
        changed
    }

    /// Records stores of dependent values (and, for per-thread local memory,
    /// stores at dependent addresses or under dependent control).
    fn memory_effects(&mut self, f: FuncId, func: &Function, i: InstId) -> bool {
        let m = self.m;
        let inst = func.inst(i);
        let mut changed = false;
        for access in access_of(m, func, i) {
            if access.kind == AccessKind::Load {
                continue;
            }
            let o = self.spaces.origin(m, f, access.address);
            let stored_dependent = match inst.op {
                Opcode::Store => self.dep(f, inst.operands[0]),
                Opcode::AtomicRmw | Opcode::CmpXchg => {
                    inst.operands[1..].iter().any(|&v| self.dep(f, v))
                }
                _ => self.copy_source_dependent(f, func, i),
            };
            let per_thread = o.space == Space::Local
                && (self.dep(f, access.address) || self.in_divergent_region(f, inst.block));
            if stored_dependent || per_thread {
                changed |= self.mark_memory((o.space, o.root), (f, i));
            }
        }
        changed
    }

    /// For `memcpy`-like intrinsics: whether the source holds dependent data.
    fn copy_source_dependent(&self, f: FuncId, func: &Function, i: InstId) -> bool {
        let inst = func.inst(i);
        let m = self.m;
        match m.called_intrinsic(inst) {
            Some(Intrinsic::MemCpy | Intrinsic::MemMove) => {
                let o = self.spaces.origin(m, f, inst.operands[1]);
                self.dep(f, inst.operands[1]) || self.memory_why(o.space, o.root).is_some()
            }
            Some(Intrinsic::MemSet) => self.dep(f, inst.operands[1]),
            _ => inst.operands[1..].iter().any(|&v| self.dep(f, v)),
        }
    }

    fn call(&mut self, f: FuncId, func: &Function, i: InstId) -> Option<Why> {
        let m = self.m;
        let inst = func.inst(i);
        let callee = match inst.callee()? {
            Callee::Direct(c) => c,
            Callee::Indirect | Callee::InlineAsm => return Some(Why::Source(Source::Opaque)),
        };
        let target = m.func(callee);
        if let Some(intr) = target.intrinsic {
            return self.intrinsic(f, intr, &inst.operands, i, func);
        }
        if target.is_declaration || !self.reached.contains(&callee) {
            // An external function we cannot see: assume the worst.
            return Some(Why::Source(Source::Opaque));
        }
        self.pass_arguments(f, i, callee, &inst.operands);
        self.returns
            .get(&callee)
            .map(|&ret| Why::Return { callee, ret })
    }

    fn pass_arguments(&mut self, f: FuncId, call: InstId, callee: FuncId, args: &[Value]) {
        for (k, &a) in args.iter().enumerate() {
            if self.dep(f, a) {
                let slot = &mut self.deps.funcs.get_mut(&callee).expect("reached").args[k];
                slot.get_or_insert(Why::Arg { caller: f, call });
            }
        }
    }

    fn intrinsic(
        &self,
        f: FuncId,
        intr: Intrinsic,
        ops: &[Value],
        _i: InstId,
        _func: &Function,
    ) -> Option<Why> {
        match intr {
            Intrinsic::SReg(SReg::Tid(d)) => Some(Why::Source(Source::ThreadIdx(d))),
            Intrinsic::SReg(SReg::LaneId) => Some(Why::Source(Source::LaneId)),
            Intrinsic::SReg(SReg::LaneMask) => Some(Why::Source(Source::LaneMask)),
            Intrinsic::SReg(SReg::Clock) => Some(Why::Source(Source::Clock)),
            Intrinsic::SReg(_) => None,
            Intrinsic::Atomic => Some(Why::Source(Source::Atomic)),
            Intrinsic::MatchAny => Some(Why::Source(Source::MatchAny)),
            Intrinsic::Unknown => Some(Why::Source(Source::Opaque)),
            // A shuffle of a uniform value yields that value in every lane.
            Intrinsic::Shfl { mode, .. } => {
                let value = ops.get(1).copied();
                let broadcast =
                    mode == ShflMode::Idx && ops.get(2).is_some_and(|&l| !self.dep(f, l));
                match value {
                    Some(v) if self.dep(f, v) && !broadcast => Some(Why::Source(Source::Shuffle)),
                    _ => None,
                }
            }
            Intrinsic::GlobalLoad => self.first_dependent(f, ops).or_else(|| {
                let o = self.spaces.origin(self.m, f, ops[0]);
                self.memory_why(o.space, o.root)
            }),
            _ => self.first_dependent(f, ops),
        }
    }

    fn in_divergent_region(&self, f: FuncId, b: BlockId) -> bool {
        let Some(g) = self.graphs.get(f) else {
            return false;
        };
        let func = self.m.func(f);
        func.block_ids().any(|c| {
            func.terminator(c).is_some_and(|t| {
                t.is_conditional_branch()
                    && self.dep(f, t.operands[0])
                    && branch_region(g, func, c).contains(&b)
            })
        })
    }

    /// Phis merging values at (or inside) the region a dependent branch
    /// controls see different values in different lanes.
    fn divergent_joins(&mut self, f: FuncId, func: &Function, g: &FunctionGraphs) -> bool {
        let mut changed = false;
        for c in func.block_ids() {
            let Some(t) = func.terminator(c) else {
                continue;
            };
            if !t.is_conditional_branch() || !self.dep(f, t.operands[0]) {
                continue;
            }
            let branch = *func.blocks[c.index()].insts.last().expect("terminator");
            let mut joins = branch_region(g, func, c);
            joins.extend(g.pdom.idom(c));
            for b in joins {
                for &i in &func.blocks[b.index()].insts {
                    let inst = func.inst(i);
                    if inst.op == Opcode::Phi && has_distinct_incoming(&inst.operands) {
                        changed |= self.mark(f, i, Why::Join { branch });
                    }
                }
            }
        }
        if changed {
            return true;
        }
        // Record a dependent return so callers see it.
        for i in func.inst_ids() {
            let inst = func.inst(i);
            if inst.op == Opcode::Ret
                && inst.operands.first().is_some_and(|&v| self.dep(f, v))
                && !self.returns.contains_key(&f)
            {
                self.returns.insert(f, i);
                changed = true;
            }
        }
        changed
    }

    /// Values defined in a loop and used after it, when lanes may leave the
    /// loop on different iterations (temporal divergence).
    fn loop_exits(&mut self, f: FuncId, func: &Function, g: &FunctionGraphs) -> bool {
        let mut changed = false;
        for l in g.loops.ids() {
            let lp = g.loops.get(l);
            let dependent_exit = lp.exiting.iter().find_map(|&e| {
                let t = func.terminator(e)?;
                let id = *func.blocks[e.index()].insts.last()?;
                (t.is_conditional_branch() && self.dep(f, t.operands[0])).then_some(id)
            });
            let Some(branch) = dependent_exit else {
                continue;
            };
            for &b in &lp.blocks {
                for &i in &func.blocks[b.index()].insts {
                    if self.dep(f, Value::Inst(i)) {
                        continue;
                    }
                    let used_outside = func.insts.iter().any(|u| {
                        !lp.blocks.contains(&u.block) && u.operands.contains(&Value::Inst(i))
                    });
                    if used_outside {
                        changed |= self.mark(f, i, Why::LoopExit { branch });
                    }
                }
            }
        }
        changed
    }
}

/// Blocks reachable from the branch at `c` before its immediate
/// post-dominator: where lanes may be on different paths.
fn branch_region(g: &FunctionGraphs, func: &Function, c: BlockId) -> Vec<BlockId> {
    let stop = g.pdom.idom(c);
    let mut seen = HashSet::new();
    let mut stack: Vec<BlockId> = func.successors(c);
    while let Some(b) = stack.pop() {
        if Some(b) == stop || !seen.insert(b) {
            continue;
        }
        stack.extend(func.successors(b));
    }
    let mut region: Vec<_> = seen.into_iter().collect();
    region.sort();
    region
}

fn has_distinct_incoming(ops: &[Value]) -> bool {
    ops.iter().any(|o| *o != ops[0])
}
