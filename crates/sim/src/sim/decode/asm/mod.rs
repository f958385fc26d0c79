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
//! instruction, raised if the body ever runs. `mem` decodes the memory
//! forms, `sync` the barriers and warp forms.

mod mem;
mod sync;

use super::FuncDecoder;
use crate::ir::{AsmId, InstId};
use crate::ptx::inst::{Inst, Op as P, Operand, PredOperand, Reg, Space, Ty, UnaryOp};
use crate::ptx::{Body, Class};
use crate::sim::addr;
use crate::sim::code::{Op, PtxAlu, Slot, Trap};
use crate::sim::exec::asm::MAX_PTX_READS;
use crate::sim::scalar::Cast;

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
                ops.push(Op::Unsupported(Box::new(e.to_string())));
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
                        "inline asm line {}: `{}` cannot be simulated: {why}",
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
        match &inst.op {
            P::Ld { .. } | P::St { .. } | P::Atom { .. } | P::CpAsync { .. } => {
                self.asm_memory(i, x)?
            }
            P::Fence { .. } | P::Nanosleep { .. } | P::CpAsyncCommit | P::CpAsyncWait { .. } => {
                x.ops.push(Op::Nop)
            }
            P::Trap => x.ops.push(Op::Trap(Box::new(Trap::Trap))),
            P::Bar { .. } => self.asm_barrier(x)?,
            op @ (P::Shfl { .. }
            | P::Vote { .. }
            | P::Match { .. }
            | P::Redux { .. }
            | P::Elect { .. }) => self.asm_warp(x, op),
            op => {
                if op.reads().len() > MAX_PTX_READS {
                    return Err(format!("more than {MAX_PTX_READS} operands"));
                }
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
}

/// One instruction being decoded, and the ops it becomes.
pub(super) struct AsmInst<'b> {
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
