//! From the solver's answer to [`KernelDeps`]: which values are dependent
//! where defined, which only at some uses, and a [`Why`] for each, read off
//! the solver's provenance (the step that first generated each fact).

use super::facts::{Fact, FactKind};
use super::flow::TaintProblem;
use super::kernel::Kernel;
use super::layout::{Node, Proc};
use super::memory::SharedTaint;
use super::rules::{ResultRule, WriteData};
use crate::dataflow::{FastMap, FastSet, Solution, Supergraph};
use crate::ir::{InstId, Opcode, Value};
use crate::taint::{FuncDeps, KernelDeps, Source, Why};
use std::collections::BTreeMap;

type Answer = Solution<Node, Fact>;

/// The writes of dependent data to shared locations the solution found:
/// `(write node, location)`.
pub fn shared_writes(k: &Kernel, s: &Answer) -> Vec<(Node, u32)> {
    let mut found: Vec<(Node, u32)> = s
        .generations()
        .filter_map(|((_, d), (from, _))| match k.facts.decode(d) {
            FactKind::SharedWrite(l) => Some((from, l)),
            _ => None,
        })
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// Which of `branches` (a terminator's node and its condition's fact)
/// the solution finds dependent.
pub fn dependent_branches(s: &Answer, branches: &FastSet<(Node, Fact)>) -> Vec<Node> {
    let mut found: Vec<Node> = s
        .path_edges()
        .filter(|&(_, n, d)| branches.contains(&(n, d)))
        .map(|(_, n, _)| n)
        .collect();
    found.sort_unstable();
    found.dedup();
    found
}

pub fn kernel_deps(problem: &TaintProblem, s: &Answer) -> KernelDeps {
    let r = Reader::new(problem, s);
    let mut funcs: Vec<FuncDeps> =
        r.k.layout
            .funcs
            .iter()
            .map(|&f| {
                let func = r.k.layout.m.func(f);
                FuncDeps::new(func.insts.len(), func.params.len())
            })
            .collect();
    r.values(&mut funcs);
    r.late_uses(&mut funcs);
    r.effects(&mut funcs);
    KernelDeps {
        kernel: r.k.layout.funcs[problem.entry as usize],
        funcs: r.k.layout.funcs.iter().copied().zip(funcs).collect(),
    }
}

struct Reader<'a, 'k, 'm> {
    k: &'k Kernel<'m>,
    shared: std::cell::Ref<'a, SharedTaint>,
    s: &'a Answer,
    /// Per per-thread location: the earliest write that made it dependent.
    per_thread_cause: FastMap<u32, Node>,
    /// Per value fact: the earliest place it was generated away from its
    /// definition (a loop exit), and from what.
    escapes: FastMap<Fact, (Node, (Node, Fact))>,
}

impl<'a, 'k, 'm> Reader<'a, 'k, 'm> {
    fn new(problem: &'a TaintProblem<'k, 'm>, s: &'a Answer) -> Self {
        let k = problem.k;
        let mut per_thread_cause: FastMap<u32, Node> = FastMap::default();
        let mut escapes: FastMap<Fact, (Node, (Node, Fact))> = FastMap::default();
        for ((n, d), from) in s.generations() {
            match k.facts.decode(d) {
                FactKind::PerThread(l) => {
                    let slot = per_thread_cause.entry(l).or_insert(from.0);
                    *slot = (*slot).min(from.0);
                }
                FactKind::Value(p, Value::Inst(i)) if k.layout.after_def(p, i) != Some(n) => {
                    let slot = escapes.entry(d).or_insert((n, from));
                    if n < slot.0 {
                        *slot = (n, from);
                    }
                }
                _ => {}
            }
        }
        Reader {
            k,
            shared: problem.shared.borrow(),
            s,
            per_thread_cause,
            escapes,
        }
    }

    fn term(&self, p: Proc, branch: usize) -> InstId {
        self.k.procs[p as usize].control.branches[branch].term
    }

    fn memory(&self, at: (Proc, InstId)) -> Why {
        Why::Memory {
            func: self.k.layout.funcs[at.0 as usize],
            store: at.1,
        }
    }

    /// Dependence where each instruction and parameter is defined.
    fn values(&self, funcs: &mut [FuncDeps]) {
        let layout = &self.k.layout;
        for (p, deps) in funcs.iter_mut().enumerate() {
            let p = p as Proc;
            for i in layout.func(p).inst_ids() {
                let Some(n) = layout.after_def(p, i) else {
                    continue;
                };
                if let Some(from) = self.s.generated_from(n, self.k.facts.inst(p, i)) {
                    deps.insts[i.index()] = Some(self.why_defined(p, i, from));
                }
            }
            let start = layout.start_of(p);
            for a in 0..deps.args.len() {
                let fact = self
                    .k
                    .facts
                    .value(p, Value::Arg(a as u32))
                    .expect("a parameter");
                if let Some((call, _)) = self.s.generated_from(start, fact) {
                    let (q, c) = layout.locate(call);
                    deps.args[a] = Some(Why::Arg {
                        caller: layout.funcs[q as usize],
                        call: c,
                    });
                }
            }
        }
    }

    /// Why instruction `i` became dependent, given the step generating it.
    fn why_defined(&self, p: Proc, i: InstId, (from, d): (Node, Fact)) -> Why {
        let layout = &self.k.layout;
        let func = layout.func(p);
        let inst = func.inst(i);
        let info = &self.k.procs[p as usize];
        let (fp, fi) = layout.locate(from);
        match self.k.facts.decode(d) {
            // From the callee's exit: returned. From the call itself: the
            // call runs in a loop a dependent branch skews.
            _ if layout.shapes[p as usize].callee[i.index()].is_some() => {
                if (fp, fi) == (p, i) {
                    self.skew_why(p, d, fi)
                } else {
                    Why::Return {
                        callee: layout.funcs[fp as usize],
                        ret: fi,
                    }
                }
            }
            FactKind::Zero => match info.rules[i.index()].result {
                ResultRule::Source(s) => Why::Source(s),
                _ => {
                    let read = info.rules[i.index()].read.as_ref();
                    let cause = read
                        .and_then(|r| r.target.shared)
                        .and_then(|l| self.shared.cause(layout.node(p, i), l));
                    cause.map_or(Why::Source(Source::Opaque), |c| self.memory(c))
                }
            },
            FactKind::Value(_, o) if inst.op == Opcode::Phi => {
                let from_block = func.inst(fi).block;
                let edge = super::control::incoming_on(
                    func,
                    &layout.shapes[p as usize],
                    inst.block,
                    from_block,
                );
                if edge.into_iter().any(|(phi, v)| phi == i && v == o) {
                    return Why::Operand(o);
                }
                let control = &info.control;
                let on = control.branches_on(o);
                let join = on
                    .iter()
                    .find(|&&b| control.branches[b].joins.contains(inst.block.index()));
                match join {
                    Some(&b) => Why::Join {
                        branch: self.term(p, b),
                    },
                    None => Why::LoopExit {
                        branch: on.first().map_or(fi, |&b| self.term(p, b)),
                    },
                }
            }
            FactKind::Value(_, o) if inst.operands.contains(&o) => Why::Operand(o),
            FactKind::Value(..) => self.skew_why(p, d, fi),
            FactKind::PerThread(l) => match self.per_thread_cause.get(&l) {
                Some(&store) => self.memory(layout.locate(store)),
                None => Why::Source(Source::Opaque),
            },
            FactKind::Masked | FactKind::SharedWrite(_) => Why::Source(Source::Opaque),
        }
    }

    /// A value of a skewed loop, generated from the condition fact `cond`.
    fn skew_why(&self, p: Proc, cond: Fact, fallback: InstId) -> Why {
        let on = match self.k.facts.decode(cond) {
            FactKind::Value(_, c) => self.k.procs[p as usize].control.branches_on(c),
            _ => &[],
        };
        Why::LoopSkew {
            branch: on.first().map_or(fallback, |&b| self.term(p, b)),
        }
    }

    /// Uses that see a value dependent only because it left a loop.
    fn late_uses(&self, funcs: &mut [FuncDeps]) {
        let layout = &self.k.layout;
        let mut succs = Vec::new();
        let mut found: BTreeMap<(Proc, InstId, InstId), Why> = BTreeMap::new();
        for (_, n, d) in self.s.path_edges() {
            let FactKind::Value(p, v @ Value::Inst(def)) = self.k.facts.decode(d) else {
                continue;
            };
            if funcs[p as usize].insts[def.index()].is_some() {
                continue;
            }
            let Some(why) = self.escape_why(d) else {
                continue;
            };
            let (_, j) = layout.locate(n);
            let func = layout.func(p);
            let inst = func.inst(j);
            if inst.operands.contains(&v) {
                found.entry((p, j, def)).or_insert(why);
            }
            if inst.op.is_terminator() {
                succs.clear();
                layout.successors(n, &mut succs);
                for &m in &succs {
                    let to = func.inst(layout.locate(m).1).block;
                    let shape = &layout.shapes[p as usize];
                    for (phi, _) in super::control::incoming_on(func, shape, to, inst.block)
                        .filter(|&(_, x)| x == v)
                    {
                        found.entry((p, phi, def)).or_insert(why);
                    }
                }
            }
        }
        for ((p, user, def), why) in found {
            funcs[p as usize].late.insert((user, Value::Inst(def)), why);
        }
    }

    /// The loop exit that made value fact `d` dependent after its loop.
    fn escape_why(&self, d: Fact) -> Option<Why> {
        let &(_, (from, cond)) = self.escapes.get(&d)?;
        let (p, term) = self.k.layout.locate(from);
        let FactKind::Value(_, c) = self.k.facts.decode(cond) else {
            return None;
        };
        let control = &self.k.procs[p as usize].control;
        let branch = control
            .branches_on(c)
            .first()
            .map_or(term, |&b| self.term(p, b));
        Some(Why::LoopExit { branch })
    }

    /// Why writes made memory dependent, why calls entered their callee
    /// with part of the warp, and why returns merged different values.
    fn effects(&self, funcs: &mut [FuncDeps]) {
        let layout = &self.k.layout;
        let mut found: BTreeMap<(Proc, InstId), Why> = BTreeMap::new();
        let mut gens: Vec<((Node, Fact), (Node, Fact))> = self.s.generations().collect();
        gens.sort();
        for ((n, d), (from, cause)) in gens {
            let (p, i) = layout.locate(from);
            match self.k.facts.decode(d) {
                FactKind::PerThread(_) | FactKind::SharedWrite(_)
                    if !found.contains_key(&(p, i)) =>
                {
                    let why = self.write_why(p, i, cause, &mut found);
                    found.insert((p, i), why);
                }
                FactKind::Value(q, Value::Inst(c)) if layout.after_def(q, c) == Some(n) => {
                    // A call result merged from different `ret`s.
                    let returned = layout.func(p).inst(i).operands.first().copied();
                    if let FactKind::Value(_, o) = self.k.facts.decode(cause) {
                        let is_call = layout.shapes[q as usize].callee[c.index()].is_some();
                        if is_call && returned != Some(o) {
                            let control = &self.k.procs[p as usize].control;
                            let b = control
                                .branches_on(o)
                                .iter()
                                .find(|&&b| control.branches[b].exit_join);
                            if let Some(&b) = b {
                                found.entry((p, i)).or_insert(Why::Join {
                                    branch: self.term(p, b),
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for ((p, i), why) in found {
            funcs[p as usize].effects.insert(i, why);
        }
    }

    /// Why write `i` of `p` made memory dependent, given the fact that
    /// caused it. Records, for a write under `Masked`, why the calls on the
    /// way entered with part of the warp.
    fn write_why(
        &self,
        p: Proc,
        i: InstId,
        cause: Fact,
        found: &mut BTreeMap<(Proc, InstId), Why>,
    ) -> Why {
        let info = &self.k.procs[p as usize];
        let func = self.k.layout.func(p);
        let inst = func.inst(i);
        match self.k.facts.decode(cause) {
            FactKind::Value(_, o) if inst.operands.contains(&o) => Why::Operand(o),
            FactKind::Value(_, o) => {
                let on = info.control.branches_on(o);
                let b = on
                    .iter()
                    .find(|&&b| info.control.branches[b].region.contains(inst.block.index()))
                    .or(on.first());
                b.map_or(Why::Source(Source::Opaque), |&b| Why::Control {
                    branch: self.term(p, b),
                })
            }
            FactKind::PerThread(l) => match self.per_thread_cause.get(&l) {
                Some(&n) => self.memory(self.k.layout.locate(n)),
                None => Why::Source(Source::Opaque),
            },
            FactKind::Masked => self.masked_why(p, found),
            FactKind::Zero => {
                let copied = info.rules[i.index()]
                    .writes
                    .iter()
                    .find_map(|w| match &w.data {
                        WriteData::Copy(from) => from.target.shared,
                        _ => None,
                    });
                let node = self.k.layout.node(p, i);
                match copied.and_then(|l| self.shared.cause(node, l)) {
                    Some(c) => self.memory(c),
                    None => Why::Source(Source::Opaque),
                }
            }
            FactKind::SharedWrite(_) => Why::Source(Source::Opaque),
        }
    }

    /// The call that entered `p` with part of the warp, recording why that
    /// call did (a branch around it, or its own caller's call).
    fn masked_why(&self, p: Proc, found: &mut BTreeMap<(Proc, InstId), Why>) -> Why {
        let layout = &self.k.layout;
        let start = layout.start_of(p);
        let Some((call, cause)) = self
            .s
            .generated_from(start, super::facts::FactSpace::masked())
        else {
            return Why::Source(Source::Opaque);
        };
        let (q, c) = layout.locate(call);
        if !found.contains_key(&(q, c)) {
            // Guards recursion: a provisional answer while the caller's is found.
            found.insert((q, c), Why::Source(Source::Opaque));
            let why = self.write_why(q, c, cause, found);
            found.insert((q, c), why);
        }
        Why::Called {
            caller: layout.funcs[q as usize],
            call: c,
        }
    }
}
