//! Decoding of ordinary (non-call) instructions.

use super::shape;
use super::FuncDecoder;
use crate::ir::gep::{self, Index};
use crate::ir::SiteKind;
use crate::ir::{InstId, InstKind, Opcode, TypeId, TypeKind, Value};
use crate::sim::addr;
use crate::sim::code::{
    Atomic, Gep, Leaves, Op, Reinterpret, RmwKind, ShuffleVector, Switch, Trap,
};
use crate::sim::exec::MAX_VALUE_BYTES;
use crate::sim::scalar::{mask, Cast, FloatOp, IntOp, Scalar};

/// The integer operation of a binary opcode.
pub fn int_op(op: Opcode) -> Option<IntOp> {
    Some(match op {
        Opcode::Add => IntOp::Add,
        Opcode::Sub => IntOp::Sub,
        Opcode::Mul => IntOp::Mul,
        Opcode::UDiv => IntOp::UDiv,
        Opcode::SDiv => IntOp::SDiv,
        Opcode::URem => IntOp::URem,
        Opcode::SRem => IntOp::SRem,
        Opcode::Shl => IntOp::Shl,
        Opcode::LShr => IntOp::LShr,
        Opcode::AShr => IntOp::AShr,
        Opcode::And => IntOp::And,
        Opcode::Or => IntOp::Or,
        Opcode::Xor => IntOp::Xor,
        _ => return None,
    })
}

fn float_op(op: Opcode) -> Option<FloatOp> {
    Some(match op {
        Opcode::FAdd => FloatOp::Add,
        Opcode::FSub => FloatOp::Sub,
        Opcode::FMul => FloatOp::Mul,
        Opcode::FDiv => FloatOp::Div,
        Opcode::FRem => FloatOp::Rem,
        _ => return None,
    })
}

/// Element counts fit a byte; wider vectors are not something clang emits
/// for NVPTX.
pub(super) fn count(n: u32) -> Result<u8, String> {
    u8::try_from(n).map_err(|_| format!("vectors of {n} elements"))
}

fn int_bits(s: Scalar) -> Result<u8, String> {
    match s {
        Scalar::Int(b) => Ok(b),
        _ => Err("an integer operation on floats".into()),
    }
}

fn float_ty(s: Scalar) -> Result<crate::sim::scalar::FTy, String> {
    s.float()
        .ok_or_else(|| "a float operation on integers".into())
}

impl FuncDecoder<'_, '_> {
    pub(super) fn ty_of(&self, v: Value) -> TypeId {
        self.d.m.value_type(self.func, v)
    }

    /// Decodes one non-phi instruction; `None` when it does nothing at run
    /// time (debug and lifetime markers).
    pub(super) fn inst(&mut self, i: InstId) -> Result<Option<Op>, String> {
        let inst = self.func.inst(i);
        let op = match inst.op {
            Opcode::Ret => self.ret(i)?,
            Opcode::Br => self.branch(i)?,
            Opcode::Switch => self.switch(i)?,
            Opcode::Unreachable => Op::Trap(Box::new(Trap::Unreachable)),
            Opcode::Call => return self.call(i),
            _ if inst.op.is_binary() => self.binary(i)?,
            Opcode::FNeg => self.fneg(i)?,
            Opcode::ICmp | Opcode::FCmp => self.compare(i)?,
            Opcode::Select => self.select(i)?,
            _ if inst.op.is_cast() => self.cast(i)?,
            Opcode::Freeze => Op::Copy {
                n: shape::words(&self.d.m.types, inst.ty),
                dst: self.inst_slot[i.index()],
                src: self.slot(inst.operands[0])?,
            },
            Opcode::GetElementPtr => self.gep(i)?,
            Opcode::Alloca => self.alloca(i)?,
            Opcode::Load | Opcode::Store | Opcode::AtomicRmw | Opcode::CmpXchg => self.memory(i)?,
            Opcode::Fence => Op::Nop,
            Opcode::ExtractValue | Opcode::InsertValue => self.aggregate(i)?,
            Opcode::ExtractElement | Opcode::InsertElement => self.vector_element(i)?,
            Opcode::ShuffleVector => self.shuffle(i)?,
            Opcode::Phi => unreachable!("phis are decoded as edge copies"),
            _ => return Err("not an instruction the simulator runs".into()),
        };
        Ok(Some(op))
    }

    fn ret(&mut self, i: InstId) -> Result<Op, String> {
        Ok(match self.func.inst(i).operands.first() {
            Some(&v) => Op::Ret {
                src: self.slot(v)?,
                words: shape::words(&self.d.m.types, self.ty_of(v)),
            },
            None => Op::Ret { src: 0, words: 0 },
        })
    }

    /// An integer or float binary operation, per element.
    fn binary(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let (s, n) = shape::element(&self.d.m.types, inst.ty)?;
        let dst = self.inst_slot[i.index()];
        let (a, b) = (self.slot(inst.operands[0])?, self.slot(inst.operands[1])?);
        let n = count(n)?;
        Ok(match (int_op(inst.op), float_op(inst.op)) {
            (Some(op), _) => Op::Int {
                op,
                bits: int_bits(s)?,
                n,
                dst,
                a,
                b,
            },
            (_, Some(op)) => Op::Float {
                op,
                ty: float_ty(s)?,
                n,
                dst,
                a,
                b,
            },
            _ => unreachable!("binary opcodes are integer or float"),
        })
    }

    fn fneg(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let (s, n) = shape::element(&self.d.m.types, inst.ty)?;
        Ok(Op::FNeg {
            ty: float_ty(s)?,
            n: count(n)?,
            dst: self.inst_slot[i.index()],
            a: self.slot(inst.operands[0])?,
        })
    }

    /// `icmp` or `fcmp`, per element of the operands.
    fn compare(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let ops = &inst.operands;
        let (s, n) = shape::element(&self.d.m.types, self.ty_of(ops[0]))?;
        let dst = self.inst_slot[i.index()];
        let (a, b) = (self.slot(ops[0])?, self.slot(ops[1])?);
        let n = count(n)?;
        Ok(match &inst.kind {
            InstKind::ICmp(pred) => Op::ICmp {
                pred: *pred,
                bits: int_bits(s)?,
                n,
                dst,
                a,
                b,
            },
            InstKind::FCmp(pred) => Op::FCmp {
                pred: *pred,
                ty: float_ty(s)?,
                n,
                dst,
                a,
                b,
            },
            _ => return Err("a compare without a predicate".into()),
        })
    }

    /// `select`, on one condition or one per element.
    fn select(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let m = self.d.m;
        let types = &m.types;
        let ops = &inst.operands;
        Ok(Op::Select {
            n: count(shape::words(types, inst.ty))?,
            per_elem: matches!(types.kind(self.ty_of(ops[0])), TypeKind::Vector(..)),
            dst: self.inst_slot[i.index()],
            cond: self.slot(ops[0])?,
            a: self.slot(ops[1])?,
            b: self.slot(ops[2])?,
        })
    }

    /// A local array: its bytes, fixed or times a count read at run time.
    fn alloca(&mut self, i: InstId) -> Result<Op, String> {
        let m = self.d.m;
        let types = &m.types;
        let inst = self.func.inst(i);
        let InstKind::Alloca { allocated } = inst.kind else {
            return Err("an alloca without a type".into());
        };
        let size = types.size(allocated);
        let align = types.get(allocated).align.max(1) as u32;
        let n = inst.operands[0];
        let (size, count) = match m.int_value(n) {
            Some(c) => (size * c.max(0) as u64, None),
            None => {
                let bits = int_bits(shape::scalar(types, self.ty_of(n))?)?;
                (size, Some((self.slot(n)?, bits)))
            }
        };
        Ok(Op::Alloca {
            dst: self.inst_slot[i.index()],
            size: u32::try_from(size).map_err(|_| "a local array over 4 GiB")?,
            align,
            count,
        })
    }

    /// A load, store or atomic: an access site of its own.
    fn memory(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let ops = &inst.operands;
        let dst = self.inst_slot[i.index()];
        match inst.op {
            Opcode::Load => {
                let site = self.d.access(SiteKind::Load, self.fid, i);
                self.load(inst.ty, dst, ops[0], site)
            }
            Opcode::Store => {
                let site = self.d.access(SiteKind::Store, self.fid, i);
                self.store(ops[0], ops[1], site)
            }
            _ => {
                let site = self.d.access(SiteKind::Atomic, self.fid, i);
                let scalar = shape::scalar(&self.d.m.types, self.ty_of(ops[1]))?;
                let kind = match &inst.kind {
                    InstKind::AtomicRmw { op } => RmwKind::Rmw(*op),
                    _ => RmwKind::Cas,
                };
                self.atomic(i, kind, scalar, inst.op == Opcode::CmpXchg, site)
            }
        }
    }

    /// `extractvalue` (a copy of the member's words) or `insertvalue`.
    fn aggregate(&mut self, i: InstId) -> Result<Op, String> {
        let m = self.d.m;
        let types = &m.types;
        let inst = self.func.inst(i);
        let ops = &inst.operands;
        let InstKind::Indices(idx) = &inst.kind else {
            return Err("no indices".into());
        };
        let agg_ty = self.ty_of(ops[0]);
        let (start, n, _) =
            shape::member(types, agg_ty, idx).ok_or("indices outside the aggregate")?;
        let dst = self.inst_slot[i.index()];
        Ok(if inst.op == Opcode::ExtractValue {
            Op::Copy {
                n,
                dst,
                src: self.slot(ops[0])? + start,
            }
        } else {
            Op::InsertValue {
                dst,
                agg: self.slot(ops[0])?,
                val: self.slot(ops[1])?,
                start,
                agg_words: shape::words(types, agg_ty),
                val_words: n,
            }
        })
    }

    /// `extractelement` or `insertelement` at an index read at run time.
    fn vector_element(&mut self, i: InstId) -> Result<Op, String> {
        let m = self.d.m;
        let types = &m.types;
        let inst = self.func.inst(i);
        let ops = &inst.operands;
        let extract = inst.op == Opcode::ExtractElement;
        let vec = ops[0];
        let len = shape::words(types, self.ty_of(vec));
        let idx = if extract { ops[1] } else { ops[2] };
        let idx_bits = int_bits(shape::scalar(types, self.ty_of(idx))?)?;
        let dst = self.inst_slot[i.index()];
        Ok(if extract {
            Op::ExtractElement {
                dst,
                vec: self.slot(vec)?,
                idx: self.slot(idx)?,
                idx_bits,
                len,
            }
        } else {
            Op::InsertElement {
                dst,
                vec: self.slot(vec)?,
                val: self.slot(ops[1])?,
                idx: self.slot(idx)?,
                idx_bits,
                len,
            }
        })
    }

    fn shuffle(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let ops = &inst.operands;
        let InstKind::Mask(mask) = &inst.kind else {
            return Err("a shufflevector without a mask".into());
        };
        Ok(Op::ShuffleVector(Box::new(ShuffleVector {
            dst: self.inst_slot[i.index()],
            a: self.slot(ops[0])?,
            b: self.slot(ops[1])?,
            len: shape::words(&self.d.m.types, self.ty_of(ops[0])),
            mask: mask.iter().map(|&k| u32::try_from(k).ok()).collect(),
        })))
    }

    fn branch(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let InstKind::Br { targets } = &inst.kind else {
            return Err("a branch without targets".into());
        };
        let from = inst.block;
        match targets.as_slice() {
            [t] => Ok(Op::Br {
                edge: self.edge(from, *t)?,
            }),
            [t, f] => Ok(Op::CondBr {
                cond: self.slot(inst.operands[0])?,
                edges: [self.edge(from, *t)?, self.edge(from, *f)?],
                site: self.d.site(SiteKind::Branch, self.fid, i),
                ipdom: self.ipdom[from.index()],
            }),
            _ => Err("a branch with more than two targets".into()),
        }
    }

    fn switch(&mut self, i: InstId) -> Result<Op, String> {
        let inst = self.func.inst(i);
        let InstKind::Switch { default, cases } = &inst.kind else {
            return Err("a switch without cases".into());
        };
        let from = inst.block;
        let bits = int_bits(shape::scalar(
            &self.d.m.types,
            self.ty_of(inst.operands[0]),
        )?)?;
        let mut decoded = Vec::with_capacity(cases.len());
        for &(value, target) in cases {
            decoded.push((
                (value as u64) & mask(u32::from(bits)),
                self.edge(from, target)?,
            ));
        }
        Ok(Op::Switch(Box::new(Switch {
            cond: self.slot(inst.operands[0])?,
            bits,
            cases: decoded,
            default: self.edge(from, *default)?,
            site: self.d.site(SiteKind::Branch, self.fid, i),
            ipdom: self.ipdom[from.index()],
        })))
    }

    fn cast(&mut self, i: InstId) -> Result<Op, String> {
        let m = self.d.m;
        let types = &m.types;
        let inst = self.func.inst(i);
        let src = inst.operands[0];
        let dst = self.inst_slot[i.index()];
        let a = self.slot(src)?;
        let from_ty = self.ty_of(src);
        if matches!(inst.op, Opcode::AddrSpaceCast | Opcode::BitCast) {
            let (from, to) = (
                shape::leaves(types, from_ty)?,
                shape::leaves(types, inst.ty)?,
            );
            let same_shape = from.len() == to.len()
                && from
                    .iter()
                    .zip(&to)
                    .all(|(x, y)| x.scalar.bytes() == y.scalar.bytes());
            if same_shape {
                return Ok(Op::Copy {
                    n: to.len() as u32,
                    dst,
                    src: a,
                });
            }
            if types.size(inst.ty) as usize > MAX_VALUE_BYTES {
                return Err(format!("bit casts of values over {MAX_VALUE_BYTES} bytes"));
            }
            return Ok(Op::Reinterpret(Box::new(Reinterpret {
                dst,
                src: a,
                bytes: types.size(inst.ty) as u32,
                from,
                to,
            })));
        }
        let (from, n) = shape::element(types, from_ty)?;
        let (to, _) = shape::element(types, inst.ty)?;
        let cast = match inst.op {
            Opcode::Trunc | Opcode::ZExt | Opcode::PtrToInt => Cast::ZeroExt { to: int_bits(to)? },
            Opcode::SExt => Cast::SignExt {
                from: int_bits(from)?,
                to: int_bits(to)?,
            },
            Opcode::FPToSI | Opcode::FPToUI => Cast::FloatToInt {
                from: float_ty(from)?,
                to: int_bits(to)?,
                signed: inst.op == Opcode::FPToSI,
            },
            Opcode::SIToFP | Opcode::UIToFP => Cast::IntToFloat {
                from: int_bits(from)?,
                to: float_ty(to)?,
                signed: inst.op == Opcode::SIToFP,
            },
            Opcode::FPTrunc | Opcode::FPExt => Cast::FloatToFloat {
                from: float_ty(from)?,
                to: float_ty(to)?,
            },
            Opcode::IntToPtr => {
                let space = match types.kind(inst.ty) {
                    TypeKind::Ptr(s) => *s,
                    _ => 0,
                };
                Cast::IntToPtr {
                    from: int_bits(from)?,
                    tag: addr::tag_for_space(space),
                }
            }
            _ => return Err("an unknown cast".into()),
        };
        Ok(Op::Cast {
            cast,
            n: count(n)?,
            dst,
            a,
        })
    }

    fn gep(&mut self, i: InstId) -> Result<Op, String> {
        let m = self.d.m;
        let inst = self.func.inst(i);
        let InstKind::Gep { source, .. } = inst.kind else {
            return Err("a getelementptr without a source type".into());
        };
        if matches!(m.types.kind(inst.ty), TypeKind::Vector(..)) {
            return Err("vector getelementptr".into());
        }
        let mut indices = Vec::new();
        for &v in &inst.operands[1..] {
            indices.push(match m.int_value(v) {
                Some(c) => Index::Const(c),
                None => {
                    let bits = int_bits(shape::scalar(&m.types, self.ty_of(v))?)?;
                    Index::Var((self.slot(v)?, bits))
                }
            });
        }
        let (offset, vars) = gep::offsets(&m.types, source, &indices)?;
        Ok(Op::Gep(Box::new(Gep {
            dst: self.inst_slot[i.index()],
            base: self.slot(inst.operands[0])?,
            offset,
            indices: vars.into_iter().map(|((s, b), k)| (s, b, k)).collect(),
        })))
    }

    /// An atomic on the address in operand 0, with the value in operand 1,
    /// or for compare-and-swap the expected value in 1 and the new in 2.
    pub(super) fn atomic(
        &mut self,
        i: InstId,
        kind: RmwKind,
        scalar: Scalar,
        with_flag: bool,
        site: u32,
    ) -> Result<Op, String> {
        let ops = &self.func.inst(i).operands;
        let (cmp, val) = if kind == RmwKind::Cas {
            (self.slot(ops[1])?, self.slot(ops[2])?)
        } else {
            (0, self.slot(ops[1])?)
        };
        Ok(Op::Atomic(Box::new(Atomic {
            kind,
            scalar,
            dst: self.inst_slot[i.index()],
            addr: self.slot(ops[0])?,
            val,
            cmp,
            with_flag,
            site,
        })))
    }

    /// A load of a value of type `ty` (also used for `ldg`).
    pub(super) fn load(
        &mut self,
        ty: TypeId,
        dst: u32,
        address: Value,
        site: u32,
    ) -> Result<Op, String> {
        let m = self.d.m;
        let types = &m.types;
        let addr = self.slot(address)?;
        let leaves = shape::leaves(types, ty)?;
        Ok(match leaves.as_slice() {
            [one] if one.offset == 0 => Op::Load {
                dst,
                addr,
                scalar: one.scalar,
                site,
            },
            _ => Op::LoadLeaves(Box::new(Leaves {
                value: dst,
                addr,
                bytes: types.size(ty) as u32,
                leaves,
                site,
            })),
        })
    }

    fn store(&mut self, value: Value, address: Value, site: u32) -> Result<Op, String> {
        let m = self.d.m;
        let types = &m.types;
        let ty = self.ty_of(value);
        let (src, addr) = (self.slot(value)?, self.slot(address)?);
        let leaves = shape::leaves(types, ty)?;
        Ok(match leaves.as_slice() {
            [one] if one.offset == 0 => Op::Store {
                src,
                addr,
                scalar: one.scalar,
                site,
            },
            _ => Op::StoreLeaves(Box::new(Leaves {
                value: src,
                addr,
                bytes: types.size(ty) as u32,
                leaves,
                site,
            })),
        })
    }
}
