//! Constants and constant expressions folded to register words, with the
//! addresses of globals already known.

use super::shape;
use crate::ir::gep::{self, Index};
use crate::ir::{Const, ConstId, FuncId, InstKind, Module, Opcode, TypeKind, Value};
use crate::sim::addr;
use crate::sim::scalar::{self, mask, Cast, Scalar};

pub struct ConstEval<'a> {
    pub m: &'a Module,
    /// The encoded address of every global, by `GlobalId`.
    pub global_addr: &'a [u64],
}

impl ConstEval<'_> {
    /// Words of an operand that is not an instruction result or argument.
    pub fn value(&self, v: Value) -> Result<Vec<u64>, String> {
        match v {
            Value::Const(c) => self.konst(c),
            Value::Global(g) => Ok(vec![self.global_addr[g.index()]]),
            Value::Func(f) => Ok(vec![function_address(f)]),
            _ => Err("an opaque operand (label, inline asm or metadata)".into()),
        }
    }

    pub fn konst(&self, id: ConstId) -> Result<Vec<u64>, String> {
        let types = &self.m.types;
        let c = self.m.konst(id);
        let ty = c.ty();
        match c {
            Const::Int { bits, value, .. } => {
                if *bits > 64 {
                    return Err(format!("{bits}-bit integer constants"));
                }
                Ok(vec![(*value as u64) & mask(*bits)])
            }
            Const::Float { value, .. } => {
                let s = shape::scalar(types, ty)?;
                let fty = s.float().ok_or("a float constant of integer type")?;
                Ok(vec![scalar::from_f64(fty, *value)])
            }
            Const::Null(_) | Const::Undef(_) | Const::Poison(_) | Const::Zero(_) => {
                Ok(vec![0; shape::words(types, ty) as usize])
            }
            Const::Aggregate { elems, .. } => {
                let mut out = Vec::new();
                for &e in elems {
                    out.extend(self.value(e)?);
                }
                Ok(out)
            }
            Const::Expr {
                op, operands, kind, ..
            } => self.expr(*op, operands, kind, ty),
            Const::Other { text, .. } => Err(format!("the constant `{text}`")),
        }
    }

    fn scalar_operand(&self, v: Value) -> Result<u64, String> {
        self.value(v)?
            .first()
            .copied()
            .ok_or_else(|| "an empty constant".into())
    }

    fn expr(
        &self,
        op: Opcode,
        operands: &[Value],
        kind: &InstKind,
        ty: crate::ir::TypeId,
    ) -> Result<Vec<u64>, String> {
        let types = &self.m.types;
        let bits_of = |t| match shape::scalar(types, t) {
            Ok(Scalar::Int(b)) => Ok(b),
            _ => Err(format!("a constant `{}` on non-integers", op.mnemonic())),
        };
        let operand_ty = |i: usize| operand_type(self.m, operands[i]);
        match op {
            Opcode::GetElementPtr => {
                let InstKind::Gep { source, .. } = kind else {
                    return Err("a malformed constant getelementptr".into());
                };
                let base = self.scalar_operand(operands[0])?;
                let mut indices = Vec::new();
                for &v in &operands[1..] {
                    let i = self.m.int_value(v).ok_or("a non-integer constant index")?;
                    indices.push(Index::<()>::Const(i));
                }
                let (offset, _) = gep::offsets(types, *source, &indices)?;
                Ok(vec![base.wrapping_add(offset as u64)])
            }
            Opcode::AddrSpaceCast | Opcode::BitCast | Opcode::Freeze => self.value(operands[0]),
            Opcode::PtrToInt | Opcode::Trunc | Opcode::ZExt => {
                let to = bits_of(ty)?;
                Ok(vec![scalar::cast(
                    Cast::ZeroExt { to },
                    self.scalar_operand(operands[0])?,
                )])
            }
            Opcode::IntToPtr => {
                let space = match types.kind(ty) {
                    TypeKind::Ptr(s) => *s,
                    _ => 0,
                };
                let cast = Cast::IntToPtr {
                    from: 64,
                    tag: addr::tag_for_space(space),
                };
                Ok(vec![scalar::cast(cast, self.scalar_operand(operands[0])?)])
            }
            Opcode::SExt => {
                let from = bits_of(operand_ty(0))?;
                let to = bits_of(ty)?;
                Ok(vec![scalar::cast(
                    Cast::SignExt { from, to },
                    self.scalar_operand(operands[0])?,
                )])
            }
            _ if op.is_binary() => {
                let int_op = super::inst::int_op(op).ok_or("a constant float expression")?;
                let bits = u32::from(bits_of(ty)?);
                let (a, b) = (
                    self.scalar_operand(operands[0])?,
                    self.scalar_operand(operands[1])?,
                );
                Ok(vec![scalar::int_op(int_op, bits, a, b)])
            }
            Opcode::ICmp => {
                let InstKind::ICmp(pred) = kind else {
                    return Err("a malformed constant icmp".into());
                };
                let bits = u32::from(bits_of(operand_ty(0))?);
                let (a, b) = (
                    self.scalar_operand(operands[0])?,
                    self.scalar_operand(operands[1])?,
                );
                Ok(vec![u64::from(scalar::icmp(*pred, bits, a, b))])
            }
            _ => Err(format!("constant `{}` expressions", op.mnemonic())),
        }
    }

    /// The bytes of an initializer laid out as `ty` in memory.
    pub fn bytes(&self, init: Value, ty: crate::ir::TypeId) -> Result<Vec<u8>, String> {
        let types = &self.m.types;
        let mut out = vec![0u8; types.size(ty) as usize];
        let words = self.value(init)?;
        for (leaf, w) in shape::leaves(types, ty)?.iter().zip(words) {
            let n = leaf.scalar.bytes() as usize;
            let at = leaf.offset as usize;
            out[at..at + n].copy_from_slice(&w.to_le_bytes()[..n]);
        }
        Ok(out)
    }
}

/// Function addresses are never dereferenced; they only need to be
/// distinct and recognisable.
pub fn function_address(f: FuncId) -> u64 {
    addr::encode(addr::FUNCTION, f.0, 0)
}

/// The type of a constant operand (constants have no enclosing function
/// for [`Module::value_type`]).
fn operand_type(m: &Module, v: Value) -> crate::ir::TypeId {
    match v {
        Value::Const(c) => m.konst(c).ty(),
        _ => m.types.ptr_generic_or_default(),
    }
}
