//! Pointer origins: the address space and root object behind a pointer.

use super::escape::SharedEscape;
pub use super::space::Space;
use crate::dataflow::FastMap as HashMap;
use crate::dataflow::FastSet as HashSet;
use crate::ir::{
    AsmId, Callee, Const, FuncId, Function, GlobalId, InstId, InstKind, Module, Opcode, TypeKind,
    Value,
};
use crate::ptx::summary::Summary;
use crate::ptx::{Binding, Body};
use std::cell::RefCell;

/// The object a pointer points into, named kernel-wide.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Root {
    /// A pointer parameter of the kernel.
    KernelParam(u32),
    Global(GlobalId),
    /// An `alloca` of some function reached by the kernel.
    Alloca(FuncId, InstId),
    Unknown,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Origin {
    pub space: Space,
    pub root: Root,
}

impl Origin {
    pub const UNKNOWN: Origin = Origin {
        space: Space::Unknown,
        root: Root::Unknown,
    };

    /// Least upper bound: keep what both sides agree on.
    pub fn join(self, other: Origin) -> Origin {
        Origin {
            space: if self.space == other.space {
                self.space
            } else {
                Space::Unknown
            },
            root: if self.root == other.root {
                self.root
            } else {
                Root::Unknown
            },
        }
    }
}

fn join_opt(a: Option<Origin>, b: Option<Origin>) -> Option<Origin> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.join(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// What a pointer may point into, as finely as thread dependence asks: its
/// origin, the objects a `phi` or `select` chooses between (where the
/// origin's root is unknown), and whether it may point to shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pointer {
    pub origin: Origin,
    /// Sorted; `[Root::Unknown]` when any is unknown.
    pub roots: Vec<Root>,
    pub shared: bool,
}

impl From<Origin> for Pointer {
    fn from(origin: Origin) -> Self {
        Pointer {
            origin,
            roots: vec![origin.root],
            shared: !matches!(origin.space, Space::Global | Space::Local | Space::Constant),
        }
    }
}

/// Pointer origins for every function a kernel reaches.
#[derive(Clone, Debug, Default)]
pub struct Spaces {
    /// Origins of pointer parameters of reached device functions; `None`
    /// while no call site has been seen (or for non-pointers).
    args: HashMap<FuncId, Vec<Option<Origin>>>,
    kernel: FuncId,
    /// The module's asm bodies that read, with their summaries.
    asm: HashMap<AsmId, (Body, Summary)>,
    /// Origins asked for once the parameters' were final: thread
    /// dependence and the sites ask again for every access's pointer.
    known: RefCell<HashMap<(FuncId, Value), Origin>>,
    /// Which values may hold a shared address.
    shared: SharedEscape,
    /// Some reached function stores the address of a local variable
    /// (an `alloca`) to memory: a pointer loaded from memory may be local.
    stores_local_address: bool,
}

impl Spaces {
    /// Traces pointers for `kernel` and every function in `reached`,
    /// iterating until parameter origins stop changing across calls.
    pub fn for_kernel(m: &Module, kernel: FuncId, reached: &[FuncId]) -> Spaces {
        let mut spaces = Spaces {
            args: HashMap::default(),
            kernel,
            asm: (0..m.asms.len())
                .filter_map(|a| {
                    let body = Body::of(&m.asms[a]).ok()?;
                    let summary = Summary::of(&body);
                    Some((AsmId::new(a), (body, summary)))
                })
                .collect(),
            known: RefCell::default(),
            shared: SharedEscape::for_kernel(m, kernel, reached),
            stores_local_address: stores_local_address(m, reached),
        };
        for &f in reached {
            spaces.args.insert(f, vec![None; m.func(f).params.len()]);
        }
        // Each round can only move origins up a lattice of height 3
        // (None, exact, Unknown), so this stops; the cap guards bad input.
        for _ in 0..=reached.len() * 3 + 2 {
            let mut changed = false;
            for &f in reached {
                let func = m.func(f);
                for inst in &func.insts {
                    let Some(crate::ir::Callee::Direct(callee)) = inst.callee() else {
                        continue;
                    };
                    if !spaces.args.contains_key(&callee) {
                        continue;
                    }
                    for (i, &a) in inst.operands.iter().enumerate() {
                        if !m.types.is_ptr(m.value_type(func, a)) {
                            continue;
                        }
                        let o = spaces.traced(m, f, a);
                        let slot = &mut spaces.args.get_mut(&callee).expect("reached")[i];
                        let joined = join_opt(*slot, Some(o));
                        if joined != *slot {
                            *slot = joined;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        spaces
    }

    /// Where the pointer `v` of function `f` points.
    pub fn origin(&self, m: &Module, f: FuncId, v: Value) -> Origin {
        if let Some(&o) = self.known.borrow().get(&(f, v)) {
            return o;
        }
        let o = self.traced(m, f, v);
        self.known.borrow_mut().insert((f, v), o);
        o
    }

    /// What the pointer `v` of function `f` may point into (see [`Pointer`]).
    pub fn pointer(&self, m: &Module, f: FuncId, v: Value) -> Pointer {
        let origin = self.origin(m, f, v);
        let roots = match origin.root {
            Root::Unknown => self.roots(m, f, v),
            root => vec![root],
        };
        let shared = self.shared.may_point_to_shared(m, f, v, origin.space);
        Pointer {
            origin,
            roots,
            shared,
        }
    }

    /// The objects pointer `v` of `f` may point into: where
    /// [`Self::origin`] joins the sides of a `phi` or `select` of two
    /// arrays into an unknown root, this keeps both. `undef`, `poison` and
    /// null sides point nowhere.
    fn roots(&self, m: &Module, f: FuncId, v: Value) -> Vec<Root> {
        let func = m.func(f);
        let mut seen = HashSet::default();
        let mut work = vec![v];
        let mut roots = Vec::new();
        while let Some(v) = work.pop() {
            if !seen.insert(v) {
                continue;
            }
            let through: &[Value] = match v {
                Value::Inst(i) => {
                    let inst = func.inst(i);
                    match inst.op {
                        Opcode::Phi => &inst.operands,
                        Opcode::Select => &inst.operands[1..],
                        Opcode::GetElementPtr | Opcode::BitCast | Opcode::AddrSpaceCast => {
                            &inst.operands[..1]
                        }
                        _ => &[],
                    }
                }
                Value::Const(c)
                    if matches!(
                        m.konst(c),
                        Const::Null(_) | Const::Undef(_) | Const::Poison(_)
                    ) =>
                {
                    continue
                }
                _ => &[],
            };
            if !through.is_empty() {
                work.extend_from_slice(through);
                continue;
            }
            match self.origin(m, f, v).root {
                Root::Unknown => return vec![Root::Unknown],
                root => roots.push(root),
            }
        }
        roots.sort_unstable();
        roots.dedup();
        if roots.is_empty() {
            roots.push(Root::Unknown);
        }
        roots
    }

    /// [`Spaces::origin`] traced afresh, as the parameters' origins stand.
    fn traced(&self, m: &Module, f: FuncId, v: Value) -> Origin {
        let mut seen = HashSet::default();
        self.trace(m, f, m.func(f), v, &mut seen)
            .unwrap_or(Origin::UNKNOWN)
    }

    /// Where access `a` of function `f` goes: where its address points,
    /// in the space the instruction names if it names one.
    pub fn access_origin(&self, m: &Module, f: FuncId, a: &super::Access) -> Origin {
        let o = self.origin(m, f, a.address);
        match a.space {
            Some(space) => Origin { space, ..o },
            None => o,
        }
    }

    /// Where result field `field` of asm call `call` points.
    fn asm_output(
        &self,
        m: &Module,
        f: FuncId,
        func: &Function,
        call: InstId,
        field: u32,
        seen: &mut HashSet<Value>,
    ) -> Option<Origin> {
        let inst = func.inst(call);
        let Some(Callee::InlineAsm(a)) = inst.callee() else {
            return Some(Origin::UNKNOWN);
        };
        let Some((body, summary)) = self.asm.get(&a) else {
            return Some(Origin::UNKNOWN);
        };
        let c = &body.constraints;
        let Some((_, out)) = summary
            .outputs
            .iter()
            .find(|(n, _)| c.binding(*n) == Some(Binding::Result(field)))
        else {
            return Some(Origin::UNKNOWN);
        };
        super::asm::output_origin(body, inst, out, &mut |v| self.trace(m, f, func, v, seen))
    }

    /// `None` means "no information yet" (a phi cycle), which joins away.
    fn trace(
        &self,
        m: &Module,
        f: FuncId,
        func: &Function,
        v: Value,
        seen: &mut HashSet<Value>,
    ) -> Option<Origin> {
        // An explicit address space on the pointer type settles the space.
        let declared = match m.types.kind(m.value_type(func, v)) {
            TypeKind::Ptr(n) => Space::from_addrspace(*n),
            _ => None,
        };
        // Only instructions close cycles; a constant met again (the same
        // `__constant__` struct's address on two paths) is traced again.
        if matches!(v, Value::Inst(_)) && !seen.insert(v) {
            return None;
        }
        let traced = match v {
            Value::Arg(i) => self.arg_origin(m, f, func, i),
            Value::Global(g) => Some(Origin {
                space: Space::from_addrspace(m.global(g).addrspace).unwrap_or(Space::Global),
                root: Root::Global(g),
            }),
            Value::Inst(i) => {
                let inst = func.inst(i);
                match inst.op {
                    Opcode::Alloca => Some(Origin {
                        space: Space::Local,
                        root: Root::Alloca(f, i),
                    }),
                    // An integer made of a pointer (for inline asm, say)
                    // and back points where the pointer did.
                    Opcode::GetElementPtr
                    | Opcode::BitCast
                    | Opcode::AddrSpaceCast
                    | Opcode::PtrToInt
                    | Opcode::IntToPtr => self.trace(m, f, func, inst.operands[0], seen),
                    Opcode::Phi => inst.operands.iter().fold(None, |acc, &o| {
                        join_opt(acc, self.trace(m, f, func, o, seen))
                    }),
                    Opcode::Select => inst.operands[1..].iter().fold(None, |acc, &o| {
                        join_opt(acc, self.trace(m, f, func, o, seen))
                    }),
                    Opcode::Call if m.called_asm(inst).is_some() => {
                        self.asm_output(m, f, func, i, 0, seen)
                    }
                    Opcode::Load if m.types.is_ptr(inst.ty) => {
                        Some(self.loaded_pointer(m, f, func, i, seen))
                    }
                    Opcode::ExtractValue => match (inst.operands[0], &inst.kind) {
                        (Value::Inst(c), InstKind::Indices(idx)) if idx.len() == 1 => {
                            self.asm_output(m, f, func, c, idx[0], seen)
                        }
                        _ => Some(Origin::UNKNOWN),
                    },
                    _ => Some(Origin::UNKNOWN),
                }
            }
            Value::Const(c) => match m.konst(c) {
                Const::Expr {
                    op: Opcode::GetElementPtr | Opcode::BitCast | Opcode::AddrSpaceCast,
                    operands,
                    ..
                } => self.trace(m, f, func, operands[0], seen),
                // No access goes through these (it would fault or be
                // undefined): a phi's other values say where it points.
                Const::Null(_) | Const::Undef(_) | Const::Poison(_) => None,
                _ => Some(Origin::UNKNOWN),
            },
            Value::Func(_) | Value::Opaque => Some(Origin::UNKNOWN),
        };
        match (declared, traced) {
            (Some(space), Some(o)) => Some(Origin { space, ..o }),
            (Some(space), None) => Some(Origin {
                space,
                root: Root::Unknown,
            }),
            (None, t) => t,
        }
    }

    /// Where a pointer loaded from memory by `load` points. The host fills
    /// kernel arguments and `__constant__` memory, and the host only has
    /// global addresses: a pointer read from memory that a kernel pointer
    /// parameter or a `__constant__` variable points to is taken to point
    /// to global memory (its object unknown), unless the kernel may have
    /// stored a shared or local address there (the escape analysis says
    /// the loaded value may be shared; any store of a local address).
    /// [`Spaces::assumed_global`] says which pointers rest on this.
    fn loaded_pointer(
        &self,
        m: &Module,
        f: FuncId,
        func: &Function,
        load: InstId,
        seen: &mut HashSet<Value>,
    ) -> Origin {
        let from = self
            .trace(m, f, func, func.inst(load).operands[0], seen)
            .unwrap_or(Origin::UNKNOWN);
        let host_filled = matches!(from.space, Space::Global | Space::Constant);
        if host_filled
            && !self.stores_local_address
            && !self.shared.may_hold(m, f, Value::Inst(load))
        {
            Origin {
                space: Space::Global,
                root: Root::Unknown,
            }
        } else {
            Origin::UNKNOWN
        }
    }

    /// Whether `v` points to global memory only by the assumption of
    /// [`Self::loaded_pointer`]: its origin is global and some pointer it
    /// is made from was loaded from memory.
    pub fn assumed_global(&self, m: &Module, f: FuncId, v: Value) -> bool {
        if self.origin(m, f, v).space != Space::Global {
            return false;
        }
        let func = m.func(f);
        let mut seen = HashSet::default();
        let mut work = vec![v];
        while let Some(v) = work.pop() {
            let Value::Inst(i) = v else { continue };
            if !seen.insert(i) {
                continue;
            }
            let inst = func.inst(i);
            match inst.op {
                Opcode::Load => return true,
                Opcode::Phi => work.extend_from_slice(&inst.operands),
                Opcode::Select => work.extend_from_slice(&inst.operands[1..]),
                Opcode::GetElementPtr
                | Opcode::BitCast
                | Opcode::AddrSpaceCast
                | Opcode::PtrToInt
                | Opcode::IntToPtr => work.push(inst.operands[0]),
                _ => {}
            }
        }
        false
    }

    fn arg_origin(&self, m: &Module, f: FuncId, func: &Function, i: u32) -> Option<Origin> {
        if f == self.kernel {
            // Kernel pointer parameters point to global memory (cudaMalloc).
            let ptr = m.types.is_ptr(func.params[i as usize].ty);
            return Some(if ptr {
                Origin {
                    space: Space::Global,
                    root: Root::KernelParam(i),
                }
            } else {
                Origin::UNKNOWN
            });
        }
        match self.args.get(&f) {
            Some(args) => args[i as usize],
            None => Some(Origin::UNKNOWN),
        }
    }
}

/// Whether a function in `reached` stores a pointer made from an
/// `alloca` (through casts, `getelementptr`s, `phi`s and `select`s) to
/// memory.
fn stores_local_address(m: &Module, reached: &[FuncId]) -> bool {
    reached.iter().any(|&f| {
        let func = m.func(f);
        let mut seen = HashSet::default();
        let mut work: Vec<Value> = func
            .insts
            .iter()
            .filter(|inst| inst.op == Opcode::Store)
            .map(|inst| inst.operands[0])
            .collect();
        while let Some(v) = work.pop() {
            let Value::Inst(i) = v else { continue };
            if !seen.insert(i) {
                continue;
            }
            let def = func.inst(i);
            match def.op {
                Opcode::Alloca => return true,
                Opcode::Phi => work.extend_from_slice(&def.operands),
                Opcode::Select => work.extend_from_slice(&def.operands[1..]),
                Opcode::GetElementPtr
                | Opcode::BitCast
                | Opcode::AddrSpaceCast
                | Opcode::PtrToInt => work.push(def.operands[0]),
                _ => {}
            }
        }
        false
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{TypeKind, Value};

    /// kernel(ptr %g) { %s = gep [64 x float] addrspacecast(@s), 0, 3; load %s;
    /// %a = alloca float; store %a; %p = select c, %g, %s; load %p; call dev(%g) }
    /// dev(ptr %q) { load %q }
    #[test]
    fn traces_roots_through_casts_selects_and_calls() {
        let mut mb = ModuleBuilder::new();
        let ptr = mb.ptr(0);
        let void = mb.void();
        let f32t = mb.ty(TypeKind::Float);
        let arr = mb.ty(TypeKind::Array(f32t, 64));
        let shared = mb.global("s", arr, 3);
        let cast = mb.const_expr(Opcode::AddrSpaceCast, ptr, vec![shared]);
        let dev = {
            let mut fb = mb.define("dev", &[ptr], void);
            fb.load(f32t, Value::Arg(0));
            fb.ret(None);
            fb.func
        };
        let (kernel, sel, alloca, gep) = {
            let mut fb = mb.define("k", &[ptr], void);
            fb.kernel();
            let zero = fb.const_int(64, 0);
            let three = fb.const_int(64, 3);
            let gep = fb.gep(arr, cast, &[zero, three]);
            let alloca = fb.alloca(f32t);
            let tid = fb.sreg("tid.x");
            let one = fb.const_int(32, 1);
            let c = fb.icmp(crate::ir::IntPred::Eq, tid, one);
            let sel = fb.select(c, Value::Arg(0), gep);
            fb.call(dev, vec![Value::Arg(0)]);
            fb.ret(None);
            (fb.func, sel, alloca, gep)
        };
        let m = mb.finish();
        let spaces = Spaces::for_kernel(&m, kernel, &[kernel, dev]);
        let o = |f, v| spaces.origin(&m, f, v);
        assert_eq!(
            o(kernel, Value::Arg(0)),
            Origin {
                space: Space::Global,
                root: Root::KernelParam(0)
            }
        );
        assert_eq!(o(kernel, gep).space, Space::Shared);
        assert_eq!(o(kernel, gep).root, Root::Global(GlobalId(0)));
        let Value::Inst(a) = alloca else { panic!() };
        assert_eq!(
            o(kernel, alloca),
            Origin {
                space: Space::Local,
                root: Root::Alloca(kernel, a)
            }
        );
        // A select of a global and a shared pointer: nothing in common.
        assert_eq!(o(kernel, sel), Origin::UNKNOWN);
        // The device function's parameter takes its one call site's origin.
        assert_eq!(o(dev, Value::Arg(0)).space, Space::Global);
    }

    #[test]
    fn explicit_address_space_wins_and_unknown_callers_stay_unknown() {
        let mut mb = ModuleBuilder::new();
        let ptr3 = mb.ptr(3);
        let ptr = mb.ptr(0);
        let void = mb.void();
        let dev = {
            let mut fb = mb.define("dev", &[ptr3, ptr], void);
            fb.ret(None);
            fb.func
        };
        let m = mb.finish();
        // Not reached from any kernel: no call sites, so no origin is known,
        // except what the pointer type itself says.
        let spaces = Spaces::for_kernel(&m, FuncId(99), &[dev]);
        assert_eq!(spaces.origin(&m, dev, Value::Arg(0)).space, Space::Shared);
        assert_eq!(spaces.origin(&m, dev, Value::Arg(1)), Origin::UNKNOWN);
    }
}
