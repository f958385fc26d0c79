//! Where an access sits in the rows of a two-dimensional `__shared__`
//! array: the variables of its address that step whole rows. Padding the
//! rows (`tile[32][33]` for `tile[32][32]`) moves each row `pad` elements
//! further on, so an address with row index `r` moves by `r · pad ·
//! element`; the bank-conflict check re-evaluates its lanes under that
//! before it advises a pitch.

use crate::ir::gep::{self, Index};
use crate::ir::{addrspace, Const, Function, GlobalId, InstKind, Module, Opcode, TypeKind, Value};

/// The row terms of an access into `global`, a `[rows][cols]` array of
/// `elem_bytes`-byte elements.
#[derive(Clone, Debug, PartialEq)]
pub struct RowTerms {
    pub global: GlobalId,
    pub rows: u64,
    pub cols: u64,
    pub elem_bytes: u64,
    /// Each variable of the address that steps rows, with the rows one
    /// unit of it steps (`tile[ty][tx]`: `ty`, 1).
    pub terms: Vec<(Value, i64)>,
}

/// The row terms of `address`, when it is a chain of GEPs and casts from
/// a two-dimensional `__shared__` array (none when its row is a constant);
/// `None` for anything else (a one-dimensional array, a pointer from
/// memory).
pub fn row_terms(m: &Module, func: &Function, address: Value) -> Option<RowTerms> {
    let mut vars: Vec<(Value, i64)> = Vec::new();
    let mut v = address;
    for _ in 0..16 {
        v = match v {
            Value::Global(g) => return rows_of(m, g, &vars),
            Value::Inst(i) => {
                let inst = func.inst(i);
                match (&inst.kind, inst.op) {
                    (InstKind::Gep { source, .. }, _) => {
                        let indices: Vec<Index<Value>> = inst.operands[1..]
                            .iter()
                            .map(|&x| match m.int_value(x) {
                                Some(c) => Index::Const(c),
                                None => Index::Var(x),
                            })
                            .collect();
                        let (_, found) = gep::offsets(&m.types, *source, &indices).ok()?;
                        vars.extend(found);
                        *inst.operands.first()?
                    }
                    (_, Opcode::AddrSpaceCast | Opcode::BitCast) => *inst.operands.first()?,
                    _ => return None,
                }
            }
            // A constant GEP moves every lane alike: padding moves its
            // constant rows alike too, which no degree sees.
            Value::Const(c) => match m.konst(c) {
                Const::Expr {
                    op: Opcode::AddrSpaceCast | Opcode::BitCast | Opcode::GetElementPtr,
                    operands,
                    ..
                } if operands[1..].iter().all(|&x| m.int_value(x).is_some()) => {
                    *operands.first()?
                }
                _ => return None,
            },
            _ => return None,
        };
    }
    None
}

/// `g`'s shape and the variables of `vars` (with their byte scales) that
/// step its rows.
fn rows_of(m: &Module, g: GlobalId, vars: &[(Value, i64)]) -> Option<RowTerms> {
    let global = m.global(g);
    if global.addrspace != addrspace::SHARED {
        return None;
    }
    let TypeKind::Array(row, rows) = m.types.kind(global.value_ty) else {
        return None;
    };
    let TypeKind::Array(elem, cols) = m.types.kind(*row) else {
        return None;
    };
    let elem_bytes = m.types.size(*elem);
    let row_bytes = (elem_bytes * cols) as i64;
    if row_bytes == 0 {
        return None;
    }
    let terms: Vec<(Value, i64)> = vars
        .iter()
        .filter(|(_, scale)| scale % row_bytes == 0)
        .map(|&(x, scale)| (x, scale / row_bytes))
        .collect();
    Some(RowTerms {
        global: g,
        rows: *rows,
        cols: *cols,
        elem_bytes,
        terms,
    })
}

/// The shared global an address points into, through GEPs and casts.
pub fn shared_global(m: &Module, func: &Function, mut v: Value) -> Option<GlobalId> {
    for _ in 0..16 {
        v = match v {
            Value::Global(g) => return (m.global(g).addrspace == addrspace::SHARED).then_some(g),
            Value::Inst(i) => {
                let inst = func.inst(i);
                match inst.op {
                    Opcode::GetElementPtr | Opcode::AddrSpaceCast | Opcode::BitCast => {
                        *inst.operands.first()?
                    }
                    _ => return None,
                }
            }
            Value::Const(c) => match m.konst(c) {
                Const::Expr { operands, .. } => *operands.first()?,
                _ => return None,
            },
            _ => return None,
        };
    }
    None
}
