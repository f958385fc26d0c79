//! The forms of an asm body that involve other threads: block barriers
//! as `__syncthreads()` and its reducing forms, and the warp forms as the
//! warp operations of the same intrinsics.

use super::super::FuncDecoder;
use super::AsmInst;
use crate::ir::intrinsics::BarrierReduce;
use crate::ptx::inst::{BarKind, BarReduce, Op as P, Operand, ReduxOp};
use crate::sim::code::{Op, Redux, Slot, Warp};

impl FuncDecoder<'_, '_> {
    /// `bar.sync 0`, `barrier.sync 0` and `bar.red` (barrier 0 only).
    pub(super) fn asm_barrier(&mut self, x: &mut AsmInst) -> Result<(), String> {
        match &x.inst.op {
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
                    BarKind::Arrive => {
                        return Err("an arrival without a wait is not simulated".into())
                    }
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
            _ => unreachable!("only barriers come here"),
        }
        Ok(())
    }

    /// Shuffles, votes, matches, reductions and elections as the warp ops
    /// of the same intrinsics; results needing two words go through a
    /// scratch pair.
    pub(super) fn asm_warp(&mut self, x: &mut AsmInst, op: &P) {
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
