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
        }]
    };
    match inst.op {
        Opcode::Load => one(AccessKind::Load, inst.operands[0], m.types.size(inst.ty)),
        Opcode::Store => one(AccessKind::Store, inst.operands[1], size(inst.operands[0])),
        Opcode::AtomicRmw => one(AccessKind::Atomic, inst.operands[0], size(inst.operands[1])),
        Opcode::CmpXchg => one(AccessKind::Atomic, inst.operands[0], size(inst.operands[1])),
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
                Intrinsic::Atomic => {
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
                    },
                    Access {
                        kind: AccessKind::Store,
                        address: inst.operands[0],
                        bytes: len(),
                    },
                ],
                Intrinsic::MemSet => one(AccessKind::Store, inst.operands[0], len()),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}
