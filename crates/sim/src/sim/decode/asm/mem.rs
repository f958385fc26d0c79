//! The memory forms of an asm body: `ld`, `st`, `atom`/`red` and
//! `cp.async`, each with a site of its own in the body's order (the
//! static sites' order, so the two reports join).

use super::super::FuncDecoder;
use super::AsmInst;
use crate::ir::SiteKind;
use crate::ir::{InstId, RmwOp};
use crate::ptx::inst::{AtomOp, Op as P, Space, Ty};
use crate::sim::code::{Atomic, Leaf, Leaves, MemOp, Op, RmwKind, Slot};
use crate::sim::scalar::Scalar;

impl FuncDecoder<'_, '_> {
    /// Decodes the memory instruction of `x`, of asm call `i`.
    pub(super) fn asm_memory(&mut self, i: InstId, x: &mut AsmInst) -> Result<(), String> {
        let site = |d: &mut Self, kind| d.d.access(kind, d.fid, i);
        match &x.inst.op {
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
            _ => unreachable!("only memory forms come here"),
        }
        Ok(())
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
