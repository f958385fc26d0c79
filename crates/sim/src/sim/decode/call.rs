//! Decoding of calls: device functions, and every intrinsic or library
//! routine by its classification (`ir::intrinsics`).

use super::inst::count;
use super::shape;
use super::FuncDecoder;
use crate::ir::intrinsics::{AtomicOp, BarrierOperands, BarrierReduce, Family, Intrinsic};
use crate::ir::SiteKind;
use crate::ir::{Callee, InstId, RmwOp, TypeKind};
use crate::sim::code::{Call, Math, MemOp, Op, OutParams, RmwKind, Trap, Warp};
use crate::sim::exec::MAX_MATH_ARGS;
use crate::sim::math;
use crate::sim::scalar::Scalar;

impl FuncDecoder<'_, '_> {
    pub(super) fn call(&mut self, i: InstId) -> Result<Option<Op>, String> {
        let m = self.d.m;
        let inst = self.func.inst(i);
        let callee = match inst.callee() {
            Some(Callee::Direct(f)) => f,
            Some(Callee::InlineAsm(_)) => unreachable!("asm calls are decoded by `asm`"),
            _ => return Err("calls through function pointers are not simulated".into()),
        };
        let target = m.func(callee);
        if !target.is_declaration {
            let mut args = Vec::with_capacity(inst.operands.len());
            for &a in &inst.operands {
                args.push((self.slot(a)?, shape::words(&m.types, self.ty_of(a))));
            }
            return Ok(Some(Op::Call(Box::new(Call {
                callee: self.d.func_index(callee),
                args,
                dst: self.inst_slot[i.index()],
                ret_words: shape::words(&m.types, inst.ty),
            }))));
        }
        let name = target.name.as_str();
        if let Some(op) = self.known_call(i, name, target.intrinsic)? {
            return Ok(op);
        }
        Err(format!("no definition of `{name}` in the module"))
    }

    /// Intrinsics and library routines, as `ir::intrinsics` classifies
    /// them; `Ok(None)` when the call is not one the simulator knows.
    fn known_call(
        &mut self,
        i: InstId,
        name: &str,
        intrinsic: Option<Intrinsic>,
    ) -> Result<Option<Option<Op>>, String> {
        let m = self.d.m;
        let inst = self.func.inst(i);
        let dst = self.inst_slot[i.index()];
        let ops = inst.operands.clone();
        let Some(intrinsic) = intrinsic else {
            return Ok(None);
        };
        let op = match intrinsic {
            Intrinsic::NoOp | Intrinsic::Assume => return Ok(Some(None)),
            Intrinsic::SReg(reg) => Op::Special { dst, reg },
            Intrinsic::Atomic(op) => {
                let site = self.d.access(SiteKind::Atomic, self.fid, i);
                let scalar = shape::scalar(&m.types, inst.ty)?;
                let kind = op
                    .map(|op| rmw_kind(op, scalar))
                    .ok_or_else(|| format!("the atomic intrinsic `{name}`"))?;
                self.atomic(i, kind, scalar, false, site)?
            }
            Intrinsic::Redux(op) => Op::Warp(Box::new(Warp::Redux {
                op: op.ok_or_else(|| format!("`{name}`"))?,
                dst,
                value: self.slot(ops[0])?,
                mask: self.slot(ops[1])?,
            })),
            // Old-style address-space conversions: our pointers need none.
            Intrinsic::PtrCast => Op::Copy {
                n: 1,
                dst,
                src: self.slot(ops[0])?,
            },
            Intrinsic::Prefetch | Intrinsic::Sleep | Intrinsic::Fence => Op::Nop,
            Intrinsic::WarpSync => Op::WarpSync {
                mask: self.slot(ops[0])?,
            },
            Intrinsic::GridSync => Op::GridSync,
            Intrinsic::ActiveMask => Op::Warp(Box::new(Warp::ActiveMask { dst })),
            Intrinsic::Trap => Op::Trap(Box::new(Trap::Trap)),
            Intrinsic::AssertFail => Op::Trap(Box::new(Trap::Assert {
                message: self.slot(ops[0])?,
                file: self.slot(ops[1])?,
                line: self.slot(ops[2])?,
            })),
            Intrinsic::Barrier(b) => {
                // Only the barrier __syncthreads uses, for the whole block.
                let whole_block = match b.operands {
                    BarrierOperands::Implicit => true,
                    BarrierOperands::Id => m.int_value(ops[0]) == Some(0),
                    BarrierOperands::IdAndCount => false,
                };
                if !whole_block {
                    return Err("named barriers or barriers with a thread count".into());
                }
                let pred = match b.reduce {
                    BarrierReduce::None => 0,
                    _ => self.slot(ops[0])?,
                };
                Op::Barrier {
                    reduce: b.reduce,
                    dst,
                    pred,
                }
            }
            Intrinsic::Shfl { mode, pred } => Op::Warp(Box::new(Warp::Shfl {
                mode,
                dst,
                value: self.slot(ops[1])?,
                lane: self.slot(ops[2])?,
                clamp: self.slot(ops[3])?,
                with_pred: pred,
            })),
            Intrinsic::Vote(mode) => Op::Warp(Box::new(Warp::Vote {
                mode,
                dst,
                mask: self.slot(ops[0])?,
                pred: self.slot(ops[1])?,
            })),
            Intrinsic::MatchAny => Op::Warp(Box::new(Warp::MatchAny {
                dst,
                mask: self.slot(ops[0])?,
                value: self.slot(ops[1])?,
            })),
            Intrinsic::MatchAll => Op::Warp(Box::new(Warp::MatchAll {
                dst,
                mask: self.slot(ops[0])?,
                value: self.slot(ops[1])?,
            })),
            Intrinsic::GlobalLoad => {
                let site = self.d.access(SiteKind::Load, self.fid, i);
                self.load(inst.ty, dst, ops[0], site)?
            }
            Intrinsic::MemCpy | Intrinsic::MemMove | Intrinsic::MemSet => {
                let is_set = intrinsic == Intrinsic::MemSet;
                let load_site = if is_set {
                    u32::MAX
                } else {
                    self.d.access(SiteKind::Load, self.fid, i)
                };
                let store_site = self.d.access(SiteKind::Store, self.fid, i);
                let len_bits = match shape::scalar(&m.types, self.ty_of(ops[2]))? {
                    Scalar::Int(b) => b,
                    _ => return Err("a non-integer length".into()),
                };
                Op::Mem(Box::new(MemOp {
                    dst: self.slot(ops[0])?,
                    src: self.slot(ops[1])?,
                    len: self.slot(ops[2])?,
                    len_bits,
                    is_set,
                    store_site,
                    load_site,
                }))
            }
            Intrinsic::Printf => Op::Printf {
                dst,
                format: self.slot(ops[0])?,
                args: self.slot(ops[1])?,
            },
            // The simulator's math tables may know what the classification
            // leaves unknown.
            Intrinsic::Pure { .. } | Intrinsic::MinMax(_) | Intrinsic::Unknown => {
                return self.math(i, name)
            }
        };
        Ok(Some(Some(op)))
    }

    /// A pure function from the simulator's table of its family.
    fn math(&mut self, i: InstId, name: &str) -> Result<Option<Option<Op>>, String> {
        let m = self.d.m;
        let inst = self.func.inst(i);
        let dst = self.inst_slot[i.index()];
        let ops = inst.operands.clone();
        let some = |op| Ok(Some(Some(op)));
        let Some((family, rest)) = Family::split(name) else {
            return Ok(None);
        };
        let out = match family {
            Family::Libdevice => math::out_params(rest),
            _ => None,
        };
        if let Some(out) = out {
            let args = ops[..out.values]
                .iter()
                .map(|&a| Ok((self.slot(a)?, false)))
                .collect::<Result<Vec<_>, String>>()?;
            let outputs = ops[out.values..]
                .iter()
                .zip(&out.outputs)
                .map(|(&p, &s)| Ok((self.slot(p)?, s)))
                .collect::<Result<Vec<_>, String>>()?;
            let math = Math {
                f: out.f,
                dst,
                args,
                bits: 0,
                n: 1,
                results: 1,
            };
            return some(Op::OutParams(Box::new(OutParams {
                math,
                outputs,
                returns: out.returns,
            })));
        }
        let ret = self.result_scalar(inst.ty);
        let arg = ops
            .first()
            .and_then(|&a| shape::element(&m.types, self.ty_of(a)).ok())
            .map(|(s, _)| s);
        let f = match family {
            Family::Libdevice => math::libdevice(rest),
            Family::Nvvm => math::nvvm(rest),
            Family::Llvm => ret
                .as_ref()
                .ok()
                .and_then(|&(r, _)| math::llvm(rest, r, arg)),
        };
        let Some(f) = f else { return Ok(None) };
        let (ret, n) = ret?;
        let bits = match (ret, arg) {
            (Scalar::Int(b), _) => b,
            (_, Some(Scalar::Int(b))) => b,
            _ => 0,
        };
        if ops.len() > MAX_MATH_ARGS {
            return Err(format!("math functions of {} arguments", ops.len()));
        }
        let mut args = Vec::with_capacity(ops.len());
        for &a in &ops {
            let vector = matches!(m.types.kind(self.ty_of(a)), TypeKind::Vector(..));
            args.push((self.slot(a)?, vector));
        }
        some(Op::Math(Box::new(Math {
            results: f.results(),
            f,
            dst,
            args,
            bits,
            n: count(n)?,
        })))
    }

    /// The scalar and element count of a math result; `{ iN, i1 }` and
    /// `{ float, i32 }` results count as their first field.
    fn result_scalar(&self, ty: crate::ir::TypeId) -> Result<(Scalar, u32), String> {
        let types = &self.d.m.types;
        match types.kind(ty) {
            TypeKind::Struct { fields, .. } if !fields.is_empty() => {
                Ok((shape::scalar(types, fields[0])?, 1))
            }
            _ => shape::element(types, ty),
        }
    }
}

/// What an NVVM atomic does to a value of `scalar`.
fn rmw_kind(op: AtomicOp, scalar: Scalar) -> RmwKind {
    // `__nvvm_atom_cta_max_gen_ui` lowers to the same `.i` intrinsic as the
    // signed form; we follow the intrinsic, which is signed.
    RmwKind::Rmw(match op {
        AtomicOp::Cas => return RmwKind::Cas,
        AtomicOp::Add if scalar.float().is_some() => RmwOp::FAdd,
        AtomicOp::Add => RmwOp::Add,
        AtomicOp::Exch => RmwOp::Xchg,
        AtomicOp::Max => RmwOp::Max,
        AtomicOp::Min => RmwOp::Min,
        AtomicOp::Inc => RmwOp::UIncWrap,
        AtomicOp::Dec => RmwOp::UDecWrap,
        AtomicOp::And => RmwOp::And,
        AtomicOp::Or => RmwOp::Or,
        AtomicOp::Xor => RmwOp::Xor,
    })
}
