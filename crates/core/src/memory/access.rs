//! Memory accesses: what an instruction reads or writes, and how many bytes.

use crate::ir::{Function, InstId, Intrinsic, Module, Opcode, Value};

/// How an instruction touches memory.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum AccessKind {
    Load,
    Store,
    Atomic,
}

impl AccessKind {
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Atomic => "atomic",
        }
    }
}

/// One memory access of an instruction (a `memcpy` makes two).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Access {
    pub kind: AccessKind,
    pub address: Value,
    /// Bytes per thread; 0 when not known statically (a variable `memcpy`).
    pub bytes: u64,
    /// The space the instruction itself names (a PTX `ld.shared` in
    /// inline asm), which wins over where the address is traced to.
    pub space: Option<super::Space>,
    /// The address may differ between lanes for a reason no IR value
    /// shows (an asm body computes it from a lane register, say); its
    /// `address` is then `Value::Opaque`.
    pub dependent_inside: bool,
}

/// The memory accesses an instruction performs.
pub fn access_of(m: &Module, func: &Function, i: InstId) -> Vec<Access> {
    let inst = func.inst(i);
    let size = |v: Value| m.types.size(m.value_type(func, v));
    let one = |kind, address, bytes| {
        vec![Access {
            kind,
            address,
            bytes,
            space: None,
            dependent_inside: false,
        }]
    };
    match inst.op {
        Opcode::Load => one(AccessKind::Load, inst.operands[0], m.types.size(inst.ty)),
        Opcode::Store => one(AccessKind::Store, inst.operands[1], size(inst.operands[0])),
        Opcode::AtomicRmw => one(AccessKind::Atomic, inst.operands[0], size(inst.operands[1])),
        Opcode::CmpXchg => one(AccessKind::Atomic, inst.operands[0], size(inst.operands[1])),
        Opcode::Call if m.called_asm(inst).is_some() => super::asm::accesses(m, inst),
        Opcode::Call => {
            let Some(intr) = m.called_intrinsic(inst) else {
                return Vec::new();
            };
            let len = || {
                inst.operands
                    .get(2)
                    .and_then(|&l| m.int_value(l))
                    .map_or(0, |l| l.max(0) as u64)
            };
            match intr {
                Intrinsic::Atomic(_) => {
                    one(AccessKind::Atomic, inst.operands[0], m.types.size(inst.ty))
                }
                Intrinsic::GlobalLoad => {
                    one(AccessKind::Load, inst.operands[0], m.types.size(inst.ty))
                }
                Intrinsic::MemCpy | Intrinsic::MemMove => vec![
                    Access {
                        kind: AccessKind::Load,
                        address: inst.operands[1],
                        bytes: len(),
                        space: None,
                        dependent_inside: false,
                    },
                    Access {
                        kind: AccessKind::Store,
                        address: inst.operands[0],
                        bytes: len(),
                        space: None,
                        dependent_inside: false,
                    },
                ],
                Intrinsic::MemSet => one(AccessKind::Store, inst.operands[0], len()),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}
