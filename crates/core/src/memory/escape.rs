//! Which values may hold an address in shared memory.
//!
//! A shared-memory address means something only inside its block, so the
//! host never makes one: kernel parameters, and memory as the kernel
//! finds it, hold none. A value holds one when it is computed from a
//! `__shared__` variable (casts, offsets, `phi`s, any arithmetic on it),
//! comes from code no analysis sees into (an external call, inline asm,
//! which may run `cvta.shared`), or is loaded from memory after the kernel
//! stored one there. The first shared address to reach memory must come
//! from a store (or atomic, or opaque call) of a value of the first two
//! kinds, so when the kernel has none ("no shared address escapes"), no
//! pointer loaded from memory points to shared memory: one read from a
//! table of pointers (`d_unique[bx].d_tRowLoc`) then writes global memory
//! only.

use super::space::Space;
use crate::dataflow::FastMap;
use crate::ir::{
    addrspace, Callee, Const, FuncId, Inst, Intrinsic, Module, Opcode, TypeId, TypeKind, Value,
};

/// Per function the kernel reaches: which of its instructions and
/// parameters may hold a shared address.
#[derive(Clone, Debug, Default)]
pub struct SharedEscape {
    insts: FastMap<FuncId, Vec<bool>>,
    args: FastMap<FuncId, Vec<bool>>,
    /// Whether the kernel may store a shared address to memory.
    pub escapes: bool,
}

impl SharedEscape {
    pub fn for_kernel(m: &Module, kernel: FuncId, reached: &[FuncId]) -> Self {
        let mut e = SharedEscape::default();
        for &f in reached {
            let func = m.func(f);
            e.insts.insert(f, vec![false; func.insts.len()]);
            e.args.insert(f, vec![false; func.params.len()]);
        }
        // First as if memory held no shared address; if then one reaches
        // memory, loads may give one back.
        e.settle(m, kernel, reached);
        e.escapes = reached.iter().any(|&f| {
            let func = m.func(f);
            func.insts.iter().any(|inst| e.escapes_at(m, f, inst))
        });
        if e.escapes {
            e.settle(m, kernel, reached);
        }
        e
    }

    /// Whether value `v` of function `f` may hold a shared address.
    pub fn may_hold(&self, m: &Module, f: FuncId, v: Value) -> bool {
        match v {
            Value::Inst(i) => self.insts.get(&f).is_none_or(|h| h[i.index()]),
            Value::Arg(a) => self.args.get(&f).is_none_or(|h| h[a as usize]),
            Value::Global(g) => m.global(g).addrspace == addrspace::SHARED,
            Value::Const(c) => match m.konst(c) {
                Const::Expr { operands, .. } => operands.iter().any(|&o| self.may_hold(m, f, o)),
                _ => false,
            },
            Value::Func(_) => false,
            Value::Opaque => true,
        }
    }

    /// Whether a pointer with origin space `space` may point to shared
    /// memory.
    pub fn may_point_to_shared(&self, m: &Module, f: FuncId, v: Value, space: Space) -> bool {
        match space {
            Space::Shared => true,
            Space::Unknown => self.may_hold(m, f, v),
            Space::Global | Space::Local | Space::Constant => false,
        }
    }

    /// Propagates until nothing changes: each round can only set flags.
    fn settle(&mut self, m: &Module, kernel: FuncId, reached: &[FuncId]) {
        loop {
            let mut changed = false;
            for &f in reached {
                let func = m.func(f);
                for i in func.inst_ids() {
                    if !self.insts[&f][i.index()] && self.holds(m, f, func.inst(i)) {
                        self.insts.get_mut(&f).expect("reached")[i.index()] = true;
                        changed = true;
                    }
                    changed |= self.pass_arguments(m, kernel, f, func.inst(i));
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// Whether the result of `inst` may hold a shared address, from what
    /// is known of its operands.
    fn holds(&self, m: &Module, f: FuncId, inst: &Inst) -> bool {
        let any = || inst.operands.iter().any(|&o| self.may_hold(m, f, o));
        // What code we cannot see returns may be an address only if it is
        // a pointer or an integer wide enough for one (`cvta` makes 32- and
        // 64-bit ones).
        let valued = can_hold_address(m, inst.ty);
        match inst.op {
            Opcode::Load => self.escapes,
            Opcode::Alloca | Opcode::ICmp | Opcode::FCmp => false,
            Opcode::AtomicRmw | Opcode::CmpXchg => self.escapes,
            Opcode::Call => match inst.callee() {
                Some(Callee::Direct(g)) if self.insts.contains_key(&g) => {
                    let callee = m.func(g);
                    callee.inst_ids().any(|r| {
                        let ret = callee.inst(r);
                        ret.op == Opcode::Ret
                            && ret
                                .operands
                                .first()
                                .is_some_and(|&v| self.may_hold(m, g, v))
                    })
                }
                _ => match m.called_intrinsic(inst) {
                    Some(Intrinsic::SReg(_)) => false,
                    Some(Intrinsic::Atomic(_) | Intrinsic::GlobalLoad) => self.escapes,
                    Some(Intrinsic::Unknown) | None => valued,
                    Some(_) => any(),
                },
            },
            _ => any(),
        }
    }

    /// Marks the parameters of a reached callee that `inst` (a call) passes
    /// a shared address to; whether any was new.
    fn pass_arguments(&mut self, m: &Module, kernel: FuncId, f: FuncId, inst: &Inst) -> bool {
        let Some(Callee::Direct(g)) = inst.callee() else {
            return false;
        };
        if g == kernel || !self.args.contains_key(&g) {
            return false;
        }
        let mut changed = false;
        for (k, &a) in inst.operands.iter().enumerate() {
            if self.may_hold(m, f, a) && !self.args[&g][k] {
                self.args.get_mut(&g).expect("reached")[k] = true;
                changed = true;
            }
        }
        changed
    }

    /// Whether `inst` may put a shared address into memory: a store or
    /// atomic of one, or a call the analyses cannot see into that gets one.
    fn escapes_at(&self, m: &Module, f: FuncId, inst: &Inst) -> bool {
        let holds = |vals: &[Value]| vals.iter().any(|&v| self.may_hold(m, f, v));
        match inst.op {
            Opcode::Store => holds(&inst.operands[..1]),
            Opcode::AtomicRmw | Opcode::CmpXchg => holds(&inst.operands[1..]),
            Opcode::Call => match inst.callee() {
                Some(Callee::Direct(g)) if self.insts.contains_key(&g) => false,
                _ => match m.called_intrinsic(inst) {
                    Some(Intrinsic::Atomic(_)) => holds(inst.operands.get(1..).unwrap_or(&[])),
                    Some(Intrinsic::Unknown) | None => holds(&inst.operands),
                    Some(_) => false,
                },
            },
            _ => false,
        }
    }
}

/// Whether a value of type `ty` is, or holds, a pointer or an integer of
/// at least 32 bits.
fn can_hold_address(m: &Module, ty: TypeId) -> bool {
    match m.types.kind(ty) {
        TypeKind::Ptr(_) => true,
        TypeKind::Int(bits) => *bits >= 32,
        TypeKind::Array(e, _) | TypeKind::Vector(e, _) => can_hold_address(m, *e),
        TypeKind::Struct { fields, .. } => fields.iter().any(|&t| can_hold_address(m, t)),
        TypeKind::Other(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;

    /// kernel(ptr %tab): %p = load ptr, %tab; store 1, %p  — then, in a
    /// second kernel, store (addrspacecast @s), %tab first.
    #[test]
    fn loaded_pointers_are_shared_only_once_a_shared_address_is_stored() {
        let mut mb = ModuleBuilder::new();
        let (i32, void) = (mb.int(32), mb.void());
        let ptr = mb.ptr(addrspace::GENERIC);
        let s = mb.global("s", i32, addrspace::SHARED);
        let generic_s = mb.const_expr(Opcode::AddrSpaceCast, ptr, vec![s]);
        let mut kernels = Vec::new();
        for (name, leak) in [("keeps", false), ("leaks", true)] {
            let mut fb = mb.define(name, &[ptr], void);
            fb.kernel();
            if leak {
                fb.store(generic_s, Value::Arg(0));
            }
            let p = fb.load(ptr, Value::Arg(0));
            let one = fb.const_int(32, 1);
            let q = fb.binary(Opcode::Add, one, one);
            fb.store(q, p);
            fb.ret(None);
            kernels.push((fb.func, p, q));
        }
        let m = mb.finish();
        for (k, p, q) in kernels {
            let e = SharedEscape::for_kernel(&m, k, &[k]);
            let leaks = m.func(k).name == "leaks";
            assert_eq!(e.escapes, leaks);
            assert_eq!(e.may_hold(&m, k, p), leaks);
            assert!(!e.may_hold(&m, k, q));
            assert!(e.may_hold(&m, k, generic_s) && !e.may_hold(&m, k, Value::Arg(0)));
        }
    }
}
