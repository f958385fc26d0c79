//! Decoding of calls: device functions, and every intrinsic or libdevice
//! routine by its name.

use super::inst::count;
use super::shape;
use super::FuncDecoder;
use crate::ir::intrinsics::{Intrinsic, SReg};
use crate::ir::SiteKind;
use crate::ir::{Callee, InstId, RmwOp, TypeKind};
use crate::sim::code::{Call, Math, MemOp, Op, OutParams, Redux, RmwKind, Trap, Warp};
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
        if let Some(op) = self.known_call(i, name)? {
            return Ok(op);
        }
        Err(format!("no definition of `{name}` in the module"))
    }

    /// Intrinsics and library routines; `Ok(None)` when the name is not one.
    fn known_call(&mut self, i: InstId, name: &str) -> Result<Option<Option<Op>>, String> {
        let m = self.d.m;
        let inst = self.func.inst(i);
        let dst = self.inst_slot[i.index()];
        let ops = inst.operands.clone();
        let some = |op| Ok(Some(Some(op)));
        if let Some(reg) = name.strip_prefix("llvm.nvvm.read.ptx.sreg.") {
            let reg = special(reg).ok_or_else(|| format!("the special register %{reg}"))?;
            return some(Op::Special { dst, reg });
        }
        if let Some(rest) = name.strip_prefix("llvm.nvvm.atomic.") {
            let site = self.d.site(SiteKind::Atomic, self.fid, i);
            let scalar = shape::scalar(&m.types, inst.ty)?;
            let kind = nvvm_atomic(rest, scalar)
                .ok_or_else(|| format!("the atomic intrinsic `{name}`"))?;
            return some(self.atomic(i, kind, scalar, false, site)?);
        }
        if let Some(rest) = name.strip_prefix("llvm.nvvm.redux.sync.") {
            let op = redux(rest).ok_or_else(|| format!("`{name}`"))?;
            return some(Op::Warp(Box::new(Warp::Redux {
                op,
                dst,
                value: self.slot(ops[0])?,
                mask: self.slot(ops[1])?,
            })));
        }
        if name.starts_with("llvm.nvvm.ptr.") {
            // Old-style address-space conversions: our pointers need none.
            return some(Op::Copy {
                n: 1,
                dst,
                src: self.slot(ops[0])?,
            });
        }
        if name.starts_with("llvm.nvvm.prefetch") || name.starts_with("llvm.prefetch") {
            return some(Op::Nop);
        }
        match name {
            "__warpcheck_grid_sync" => return some(Op::GridSync),
            "llvm.nvvm.activemask" => return some(Op::Warp(Box::new(Warp::ActiveMask { dst }))),
            "llvm.nvvm.nanosleep" => return some(Op::Nop),

            "llvm.trap" | "llvm.ubsantrap" | "llvm.debugtrap" => {
                return some(Op::Trap(Box::new(Trap::Trap)))
            }
            "__assertfail" => {
                return some(Op::Trap(Box::new(Trap::Assert {
                    message: self.slot(ops[0])?,
                    file: self.slot(ops[1])?,
                    line: self.slot(ops[2])?,
                })))
            }
            _ => {}
        }
        if let Some(op) = self.classified(i, name)? {
            return Ok(Some(op));
        }
        if let Some(out) = math::out_params(name) {
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
        let f = if name.starts_with("__nv_") {
            math::libdevice(name)
        } else if let Some(rest) = name.strip_prefix("llvm.nvvm.") {
            math::nvvm(rest)
        } else if name.starts_with("llvm.") {
            ret.as_ref()
                .ok()
                .and_then(|&(r, _)| math::llvm(name, r, arg))
        } else {
            None
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

    /// Calls the IR's intrinsic table already classifies.
    fn classified(&mut self, i: InstId, name: &str) -> Result<Option<Option<Op>>, String> {
        let m = self.d.m;
        let inst = self.func.inst(i);
        let dst = self.inst_slot[i.index()];
        let ops = inst.operands.clone();
        let Some(intrinsic) = Intrinsic::from_name(name) else {
            return Ok(None);
        };
        let op = match intrinsic {
            Intrinsic::NoOp => return Ok(Some(None)),
            Intrinsic::Fence | Intrinsic::WarpSync => Op::Nop,
            Intrinsic::Barrier(reduce) => {
                let named = name.starts_with("llvm.nvvm.barrier.") || name == "llvm.nvvm.barrier";
                if named {
                    // `barrier.sync(id)`: only the barrier __syncthreads uses.
                    if name.ends_with(".cnt") || m.int_value(ops[0]) != Some(0) {
                        return Err("named barriers or barriers with a thread count".into());
                    }
                }
                let pred = match reduce {
                    crate::ir::intrinsics::BarrierReduce::None => 0,
                    _ => self.slot(ops[0])?,
                };
                Op::Barrier { reduce, dst, pred }
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
                let site = self.d.site(SiteKind::Load, self.fid, i);
                self.load(inst.ty, dst, ops[0], site)?
            }
            Intrinsic::MemCpy | Intrinsic::MemMove | Intrinsic::MemSet => {
                let is_set = intrinsic == Intrinsic::MemSet;
                let load_site = if is_set {
                    u32::MAX
                } else {
                    self.d.site(SiteKind::Load, self.fid, i)
                };
                let store_site = self.d.site(SiteKind::Store, self.fid, i);
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
            _ => return Ok(None),
        };
        Ok(Some(Some(op)))
    }
}

/// The IR's classification of the register, held to the clocks the sim
/// knows how to read.
fn special(reg: &str) -> Option<SReg> {
    match SReg::parse(reg)? {
        SReg::Clock if !matches!(reg, "clock" | "clock64" | "globaltimer") => None,
        r => Some(r),
    }
}

/// `load.inc.32.p0`, `add.gen.f.cta.f32.p0`, `cas.gen.i.sys.i64.p0`, ...
fn nvvm_atomic(rest: &str, scalar: Scalar) -> Option<RmwKind> {
    let float = scalar.float().is_some();
    if let Some(op) = rest.strip_prefix("load.") {
        return Some(RmwKind::Rmw(match op.split('.').next()? {
            "inc" => RmwOp::UIncWrap,
            "dec" => RmwOp::UDecWrap,
            "add" if float => RmwOp::FAdd,
            "add" => RmwOp::Add,
            _ => return None,
        }));
    }
    let op = rest.split('.').next()?;
    if op == "cas" {
        return Some(RmwKind::Cas);
    }
    // `__nvvm_atom_cta_max_gen_ui` lowers to the same `.i` intrinsic as the
    // signed form; we follow the intrinsic, which is signed.
    Some(RmwKind::Rmw(match op {
        "add" if float => RmwOp::FAdd,
        "add" => RmwOp::Add,
        "exch" => RmwOp::Xchg,
        "max" => RmwOp::Max,
        "min" => RmwOp::Min,
        "inc" => RmwOp::UIncWrap,
        "dec" => RmwOp::UDecWrap,
        "and" => RmwOp::And,
        "or" => RmwOp::Or,
        "xor" => RmwOp::Xor,
        _ => return None,
    }))
}

fn redux(op: &str) -> Option<Redux> {
    Some(match op {
        "add" => Redux::Add,
        "min" => Redux::Min,
        "max" => Redux::Max,
        "umin" => Redux::UMin,
        "umax" => Redux::UMax,
        "and" => Redux::And,
        "or" => Redux::Or,
        "xor" => Redux::Xor,
        _ => return None,
    })
}
