//! Whether an access reads a field of an array of structures: its address
//! steps whole structs of a size by a variable index (`p[i].lat`), the
//! case in which a structure of arrays makes the lanes' fields contiguous.

use crate::ir::{Const, Function, InstKind, Module, Opcode, TypeKind, Value};

/// The byte sizes of the structs `address` steps over by a variable index
/// (`getelementptr %struct.P, ptr %p, i64 %i, i32 1`: the size of `P`),
/// through GEPs and casts.
pub fn struct_strides(m: &Module, func: &Function, mut v: Value) -> Vec<u64> {
    let mut sizes = Vec::new();
    for _ in 0..16 {
        v = match v {
            Value::Inst(i) => {
                let inst = func.inst(i);
                match (&inst.kind, inst.op) {
                    (InstKind::Gep { source, .. }, _) => {
                        let stepped = inst
                            .operands
                            .get(1)
                            .is_some_and(|&x| m.int_value(x).is_none());
                        if stepped && matches!(m.types.kind(*source), TypeKind::Struct { .. }) {
                            sizes.push(m.types.size(*source));
                        }
                        inst.operands[0]
                    }
                    (_, Opcode::AddrSpaceCast | Opcode::BitCast) => inst.operands[0],
                    _ => break,
                }
            }
            Value::Const(c) => match m.konst(c) {
                Const::Expr { operands, .. } if !operands.is_empty() => operands[0],
                _ => break,
            },
            _ => break,
        };
    }
    sizes
}
