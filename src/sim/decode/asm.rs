//! Decoding of inline asm: each PTX instruction of the body
//! ([`crate::ptx`]) becomes ops of our own, so that an asm load, shuffle
//! or barrier costs what the same IR would. The body's registers become
//! slots of the calling function: inputs are the call's argument slots,
//! outputs the words of its result, `.reg` declarations fresh slots.
//! Register-to-register forms run lane by lane through
//! [`crate::ptx::run::step`]; memory forms become loads, stores, atomics
//! and copies with a site each; warp forms become warp ops; `bar.sync 0`
//! is `__syncthreads()`; fences, `nanosleep` and the `cp.async` group
//! markers cost a step and do nothing else (the simulator's memory is
//! sequentially consistent, and a `cp.async` completes at once).
//! A form outside this set decodes to an error naming the PTX
//! instruction, raised if the body ever runs.

use super::FuncDecoder;
use crate::analysis::SiteKind;
use crate::ir::intrinsics::BarrierReduce;
use crate::ir::{AsmId, InstId, RmwOp};
use crate::ptx::inst::{
    AtomOp, BarKind, BarReduce, Inst, Op as P, Operand, PredOperand, ReduxOp, Reg, Space, Ty,
    UnaryOp,
};
use crate::ptx::{Body, Class};
use crate::sim::addr;
use crate::sim::code::{
    Atomic, Cast, Leaf, Leaves, MemOp, Op, PtxAlu, Redux, RmwKind, Scalar, Slot, Trap, Warp,
};

/// The slots of one body's registers.
struct Regs {
    args: Vec<Slot>,
    locals: Vec<Slot>,
}

impl FuncDecoder<'_, '_> {
    /// The ops of asm call `i`, starting with one that counts the run.
    pub(super) fn asm(&mut self, i: InstId, id: AsmId) -> Vec<Op> {
        let mut ops = vec![Op::AsmRun { asm: id.0 }];
        let body = match Body::of(self.d.m.asm(id)) {
            Ok(b) => b,
            Err(e) => {
                ops.push(Op::Unsupported(Box::new(format!("unsupported {e}"))));
                return ops;
            }
        };
        let regs = match self.asm_regs(i, &body, &mut ops) {
            Ok(r) => r,
            Err(why) => {
                ops.push(Op::Unsupported(Box::new(format!("inline asm: {why}"))));
                return ops;
            }
        };
        for inst in &body.insts {
            let mut x = AsmInst {
                body: &body,
                regs: &regs,
                inst,
                ops: Vec::new(),
            };
            match self.asm_inst(i, &mut x) {
                Ok(()) => match inst.guard {
                    // Every op of a guarded instruction runs under the guard.
                    Some(g) => {
                        let pred = x.regs.slot(g.value);
                        for op in x.ops {
                            ops.push(Op::Guard {
                                pred,
                                negated: g.negated,
                            });
                            ops.push(op);
                        }
                    }
                    None => ops.append(&mut x.ops),
                },
                Err(why) => {
                    let msg = format!(
                        "unsupported inline asm line {}: `{}`: {why}",
                        inst.line, inst.opcode
                    );
                    ops.push(Op::Unsupported(Box::new(msg)));
                    break;
                }
            }
        }
        ops
    }

    /// Slots for the body's operands and `.reg`s; outputs tied to an input
    /// start with its value.
    fn asm_regs(&mut self, i: InstId, body: &Body, ops: &mut Vec<Op>) -> Result<Regs, String> {
        let types = &self.d.m.types;
        let inst = self.func.inst(i);
        let c = &body.constraints;
        let result = self.inst_slot[i.index()];
        let mut args = Vec::with_capacity(c.operands.len());
        for (n, k) in c.operands.iter().enumerate() {
            if k.indirect || k.class == Class::Mem {
                return Err("memory operands (`m`, `=*m`) are not simulated".into());
            }
            let slot = match c.binding(n as u32) {
                Some(crate::ptx::Binding::Result(field)) => {
                    let start = super::shape::member(types, inst.ty, &[field])
                        .map_or(0, |(start, ..)| start);
                    result + start
                }
                Some(crate::ptx::Binding::Arg(a)) => {
                    let v = *inst
                        .operands
                        .get(a as usize)
                        .ok_or("an operand the call does not pass")?;
                    self.slot(v)?
                }
                None => unreachable!("every operand has a binding"),
            };
            args.push(slot);
        }
        for n in 0..c.operands.len() as u32 {
            if let Some(k) = c.tied_input(n) {
                ops.push(Op::Copy {
                    n: 1,
                    dst: args[n as usize],
                    src: args[k as usize],
                });
            }
        }
        let locals = body.locals.iter().map(|_| self.alloc(1)).collect();
        Ok(Regs { args, locals })
    }

    /// The value of an operand known when decoding: an immediate, or an
    /// `n` operand the call passes as a constant.
    fn asm_const(&self, i: InstId, body: &Body, o: Operand) -> Option<u64> {
        match o {
            Operand::Imm(v) => Some(v),
            Operand::Reg(Reg::Arg(n)) => {
                let v = body.input_value(self.func.inst(i), n)?;
                self.d.m.int_value(v).map(|v| v as u64)
            }
            _ => None,
        }
    }

    /// A slot holding the immediate `v`, shared by the function's uses.
    fn imm(&mut self, v: u64) -> Slot {
        if let Some(&s) = self.imm_slot.get(&v) {
            return s;
        }
        let s = self.alloc(1);
        self.template.push((s, v));
        self.imm_slot.insert(v, s);
        s
    }

    /// The slot an operand reads: a register's, an immediate's, or a fresh
    /// one a special register is read into.
    fn asm_read(&mut self, x: &mut AsmInst, o: Operand) -> Slot {
        match o {
            Operand::Reg(_) => x.regs.slot(o),
            Operand::Imm(v) => self.imm(v),
            Operand::Special(reg) => {
                let dst = self.alloc(1);
                x.ops.push(match reg {
                    crate::ptx::Special::Sreg(reg) => Op::Special { dst, reg },
                    reg => Op::AsmSpecial { dst, reg },
                });
                dst
            }
            Operand::Sink => self.alloc(1),
        }
    }

    /// A predicate as 0/1, complemented for `!p`.
    fn asm_pred(&mut self, x: &mut AsmInst, p: PredOperand) -> Slot {
        let s = self.asm_read(x, p.value);
        if !p.negated {
            return s;
        }
        let dst = self.alloc(1);
        x.ops.push(Op::Ptx(Box::new(PtxAlu {
            op: P::Unary {
                op: UnaryOp::Not,
                ty: Ty::Pred,
                dst: Operand::Sink,
                a: Operand::Sink,
            },
            reads: vec![s],
            writes: vec![(dst, 1)],
            opcode: x.inst.opcode.clone(),
            line: x.inst.line,
        })));
        dst
    }

    /// Where a written operand goes (a scratch slot for `_`).
    fn asm_write(&mut self, x: &AsmInst, o: Operand) -> Slot {
        match o {
            Operand::Reg(_) => x.regs.slot(o),
            _ => self.alloc(1),
        }
    }

    /// The address of a memory instruction, computed into a fresh slot.
    fn asm_addr(
        &mut self,
        x: &mut AsmInst,
        a: crate::ptx::inst::Address,
        space: Space,
    ) -> Result<Slot, String> {
        let tag = match space {
            Space::Shared | Space::SharedCluster => addr::SHARED,
            Space::Local => addr::LOCAL,
            Space::Const => addr::CONSTANT,
            Space::Global | Space::Generic => 0,
            Space::Param => return Err("the parameter space is not simulated".into()),
        };
        let base = self.asm_read(x, a.base);
        let offset = i32::try_from(a.offset).map_err(|_| "an address offset over 2 GiB")?;
        let dst = self.alloc(1);
        x.ops.push(Op::AsmAddr {
            dst,
            base,
            offset,
            tag,
        });
        Ok(dst)
    }

    /// Moves a loaded value into its register, sign-extending signed
    /// types narrower than it.
    fn asm_widen(&mut self, x: &mut AsmInst, ty: Ty, from: Slot, to: Operand) {
        let dst = self.asm_write(x, to);
        let bits = match to {
            Operand::Reg(r) => x.body.reg_bits(r),
            _ => 64,
        };
        x.ops.push(if ty.is_signed() && ty.bits() < bits {
            Op::Cast {
                cast: Cast::SignExt {
                    from: ty.bits() as u8,
                    to: bits as u8,
                },
                n: 1,
                dst,
                a: from,
            }
        } else {
            Op::Copy {
                n: 1,
                dst,
                src: from,
            }
        });
    }

    fn asm_inst(&mut self, i: InstId, x: &mut AsmInst) -> Result<(), String> {
        let inst = x.inst;
        let site = |d: &mut Self, kind| d.d.site(kind, d.fid, i);
        match &inst.op {
            P::Ld {
                mem,
                vec,
                ty,
                dsts,
                addr,
            } => {
                let scalar = mem_scalar(*ty)?;
                let at = self.asm_addr(x, *addr, mem.space)?;
                let site = site(self, SiteKind::Load);
                let tmp = self.alloc(u32::from(*vec));
                x.ops.push(vector_op(tmp, at, scalar, *vec, site, false));
                for (k, &d) in dsts.iter().enumerate() {
                    self.asm_widen(x, *ty, tmp + k as u32, d);
                }
            }
            P::St {
                mem,
                vec,
                ty,
                addr,
                srcs,
            } => {
                let scalar = mem_scalar(*ty)?;
                let at = self.asm_addr(x, *addr, mem.space)?;
                let site = site(self, SiteKind::Store);
                let tmp = self.alloc(u32::from(*vec));
                for (k, &s) in srcs.iter().enumerate() {
                    let src = self.asm_read(x, s);
                    x.ops.push(Op::Copy {
                        n: 1,
                        dst: tmp + k as u32,
                        src,
                    });
                }
                x.ops.push(vector_op(tmp, at, scalar, *vec, site, true));
            }
            P::Atom {
                op,
                space,
                ty,
                dsts,
                addr,
                srcs,
                ..
            } => {
                let scalar = mem_scalar(*ty)?;
                let kind = rmw(*op, *ty)?;
                let first = self.asm_addr(x, *addr, *space)?;
                let site = site(self, SiteKind::Atomic);
                let (cmp, values) = match kind {
                    RmwKind::Cas => (self.asm_read(x, srcs[0]), &srcs[1..]),
                    RmwKind::Rmw(_) => (0, &srcs[..]),
                };
                // A vector atomic is one per element, each its own request.
                for (k, &v) in values.iter().enumerate() {
                    let at = if k == 0 {
                        first
                    } else {
                        let dst = self.alloc(1);
                        x.ops.push(Op::AsmAddr {
                            dst,
                            base: first,
                            offset: (k as u32 * scalar.bytes()) as i32,
                            tag: 0,
                        });
                        dst
                    };
                    let val = self.asm_read(x, v);
                    let dst = match dsts.get(k) {
                        Some(&d) => self.asm_write(x, d),
                        None => self.alloc(1),
                    };
                    x.ops.push(Op::Atomic(Box::new(Atomic {
                        kind,
                        scalar,
                        dst,
                        addr: at,
                        val,
                        cmp,
                        with_flag: false,
                        site,
                    })));
                }
            }
            P::CpAsync {
                dst,
                src,
                size,
                src_size,
            } => {
                let size = self.asm_const(i, x.body, *size);
                let whole = match src_size.map(|s| self.asm_const(i, x.body, s)) {
                    None => size,
                    Some(src) if src == size => size,
                    Some(_) => None,
                };
                let n = whole.ok_or(
                    "a copy with a zero-filled tail or a size known only at run time is not simulated",
                )?;
                let to = self.asm_addr(x, *dst, Space::Shared)?;
                let from = self.asm_addr(x, *src, Space::Global)?;
                let load_site = site(self, SiteKind::Load);
                let store_site = site(self, SiteKind::Store);
                let len = self.imm(n);
                x.ops.push(Op::Mem(Box::new(MemOp {
                    dst: to,
                    src: from,
                    len,
                    len_bits: 32,
                    is_set: false,
                    store_site,
                    load_site,
                })));
            }
            P::Fence { .. } | P::Nanosleep { .. } | P::CpAsyncCommit | P::CpAsyncWait { .. } => {
                x.ops.push(Op::Nop)
            }
            P::Trap => x.ops.push(Op::Trap(Box::new(Trap::Trap))),
            P::Bar {
                kind,
                id,
                count,
                result,
                pred,
                ..
            } => {
                let reduce = match kind {
                    BarKind::Sync => BarrierReduce::None,
                    BarKind::Red(r) => match r {
                        BarReduce::Popc => BarrierReduce::Popc,
                        BarReduce::And => BarrierReduce::And,
                        BarReduce::Or => BarrierReduce::Or,
                    },
                    BarKind::Arrive => return Err("`bar.arrive` is not simulated".into()),
                };
                if *id != Operand::Imm(0) || count.is_some() {
                    return Err("named barriers and barriers with a thread count are not simulated (only barrier 0, `__syncthreads()`)".into());
                }
                let pred = match pred {
                    Some(p) => self.asm_pred(x, *p),
                    None => 0,
                };
                let dst = match result {
                    Some(r) => self.asm_write(x, *r),
                    None => 0,
                };
                x.ops.push(Op::Barrier { reduce, dst, pred });
            }
            op @ (P::Shfl { .. }
            | P::Vote { .. }
            | P::Match { .. }
            | P::Redux { .. }
            | P::Elect { .. }) => self.asm_warp(x, op),
            op => {
                let mut reads = Vec::new();
                for o in op.reads() {
                    reads.push(self.asm_read(x, o));
                }
                let writes = op
                    .writes()
                    .into_iter()
                    .map(|o| {
                        let bits = match o {
                            Operand::Reg(r) => x.body.reg_bits(r),
                            _ => 64,
                        };
                        (self.asm_write(x, o), bits)
                    })
                    .collect();
                x.ops.push(Op::Ptx(Box::new(PtxAlu {
                    op: op.clone(),
                    reads,
                    writes,
                    opcode: inst.opcode.clone(),
                    line: inst.line,
                })));
            }
        }
        Ok(())
    }

    /// Shuffles, votes, matches, reductions and elections as the warp ops
    /// of the same intrinsics; results needing two words go through a
    /// scratch pair.
    fn asm_warp(&mut self, x: &mut AsmInst, op: &P) {
        let pair = |d: &mut Self, x: &mut AsmInst, w: Warp, tmp: Slot, dst: Operand, p| {
            x.ops.push(Op::Warp(Box::new(w)));
            let to = d.asm_write(x, dst);
            x.ops.push(Op::Copy {
                n: 1,
                dst: to,
                src: tmp,
            });
            if let Some(p) = p {
                let to = d.asm_write(x, p);
                x.ops.push(Op::Copy {
                    n: 1,
                    dst: to,
                    src: tmp + 1,
                });
            }
        };
        match *op {
            P::Shfl {
                mode,
                dst,
                pred_out,
                a,
                b,
                c,
                ..
            } => {
                let (value, lane, clamp) = (
                    self.asm_read(x, a),
                    self.asm_read(x, b),
                    self.asm_read(x, c),
                );
                let tmp = self.alloc(2);
                let w = Warp::Shfl {
                    mode,
                    dst: tmp,
                    value,
                    lane,
                    clamp,
                    with_pred: pred_out.is_some(),
                };
                pair(self, x, w, tmp, dst, pred_out);
            }
            P::Vote {
                mode,
                dst,
                pred,
                mask,
            } => {
                let pred = self.asm_pred(x, pred);
                let mask = self.asm_read(x, mask);
                let dst = self.asm_write(x, dst);
                x.ops.push(Op::Warp(Box::new(Warp::Vote {
                    mode,
                    dst,
                    mask,
                    pred,
                })));
            }
            P::Match {
                all,
                dst,
                pred_out,
                a,
                mask,
                ..
            } => {
                let (value, mask) = (self.asm_read(x, a), self.asm_read(x, mask));
                if all {
                    let tmp = self.alloc(2);
                    let w = Warp::MatchAll {
                        dst: tmp,
                        mask,
                        value,
                    };
                    pair(self, x, w, tmp, dst, pred_out);
                } else {
                    let dst = self.asm_write(x, dst);
                    x.ops
                        .push(Op::Warp(Box::new(Warp::MatchAny { dst, mask, value })));
                }
            }
            P::Redux {
                op,
                ty,
                dst,
                a,
                mask,
            } => {
                let signed = ty.is_signed();
                let op = match op {
                    ReduxOp::Add => Redux::Add,
                    ReduxOp::Min if signed => Redux::Min,
                    ReduxOp::Min => Redux::UMin,
                    ReduxOp::Max if signed => Redux::Max,
                    ReduxOp::Max => Redux::UMax,
                    ReduxOp::And => Redux::And,
                    ReduxOp::Or => Redux::Or,
                    ReduxOp::Xor => Redux::Xor,
                };
                let (value, mask) = (self.asm_read(x, a), self.asm_read(x, mask));
                let dst = self.asm_write(x, dst);
                x.ops.push(Op::Warp(Box::new(Warp::Redux {
                    op,
                    dst,
                    value,
                    mask,
                })));
            }
            P::Elect {
                dst,
                pred_out,
                mask,
            } => {
                let mask = self.asm_read(x, mask);
                let tmp = self.alloc(2);
                pair(self, x, Warp::Elect { dst: tmp, mask }, tmp, dst, pred_out);
            }
            _ => unreachable!("only warp forms come here"),
        }
    }
}

/// One instruction being decoded, and the ops it becomes.
struct AsmInst<'b> {
    body: &'b Body,
    regs: &'b Regs,
    inst: &'b Inst,
    ops: Vec<Op>,
}

impl Regs {
    fn slot(&self, o: Operand) -> Slot {
        match o {
            Operand::Reg(Reg::Arg(n)) => self.args[n as usize],
            Operand::Reg(Reg::Local(l)) => self.locals[l as usize],
            _ => unreachable!("only registers have slots of their own"),
        }
    }
}

/// The scalar a memory instruction of type `ty` moves.
fn mem_scalar(ty: Ty) -> Result<Scalar, String> {
    Ok(match ty {
        Ty::F32 => Scalar::F32,
        Ty::F64 => Scalar::F64,
        Ty::Pred | Ty::B128 => return Err(format!("`.{ty:?}` memory accesses are not simulated")),
        t => Scalar::Int(t.bits() as u8),
    })
}

/// `vec` consecutive elements from `tmp` up, at `at`.
fn vector_op(tmp: Slot, at: Slot, scalar: Scalar, vec: u8, site: u32, store: bool) -> Op {
    if vec == 1 {
        return match store {
            true => Op::Store {
                src: tmp,
                addr: at,
                scalar,
                site,
            },
            false => Op::Load {
                dst: tmp,
                addr: at,
                scalar,
                site,
            },
        };
    }
    let leaves: Vec<Leaf> = (0..u32::from(vec))
        .map(|k| Leaf {
            offset: k * scalar.bytes(),
            scalar,
        })
        .collect();
    let x = Box::new(Leaves {
        value: tmp,
        addr: at,
        bytes: scalar.bytes() * u32::from(vec),
        leaves,
        site,
    });
    match store {
        true => Op::StoreLeaves(x),
        false => Op::LoadLeaves(x),
    }
}

/// The read-modify-write of an `atom`/`red` on type `ty`.
fn rmw(op: AtomOp, ty: Ty) -> Result<RmwKind, String> {
    let float = matches!(ty, Ty::F32 | Ty::F64);
    if ty.is_float() && !float {
        return Err(format!("`.{ty:?}` atomics are not simulated"));
    }
    Ok(RmwKind::Rmw(match op {
        AtomOp::Cas => return Ok(RmwKind::Cas),
        AtomOp::Add if float => RmwOp::FAdd,
        AtomOp::Add => RmwOp::Add,
        AtomOp::Min if float => RmwOp::FMin,
        AtomOp::Max if float => RmwOp::FMax,
        AtomOp::Min if ty.is_signed() => RmwOp::Min,
        AtomOp::Max if ty.is_signed() => RmwOp::Max,
        AtomOp::Min => RmwOp::UMin,
        AtomOp::Max => RmwOp::UMax,
        AtomOp::And => RmwOp::And,
        AtomOp::Or => RmwOp::Or,
        AtomOp::Xor => RmwOp::Xor,
        AtomOp::Exch => RmwOp::Xchg,
        AtomOp::Inc => RmwOp::UIncWrap,
        AtomOp::Dec => RmwOp::UDecWrap,
    }))
}
