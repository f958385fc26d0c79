//! Operations that only read and write registers.

use super::lanes::{self, each, map1, map2, map3, row, row_mut, write, LANES};
use crate::ir::IntPred;
use crate::sim::code::{Math, Op, Reinterpret, ShuffleVector};
use crate::sim::memory::{read_le, write_le};
use crate::sim::scalar::{self, sext, Cast, FloatOp, IntOp};

/// [`map2_n`] with the operation fixed per arm, so each compiles to its own
/// tight lane loop over the one definition `scalar::$f`.
macro_rules! map2_per_op {
    (
        $regs:expr, $mask:expr, $n:expr, $slots:expr,
        $f:ident($op:ident, $arg:expr), $ty:ident::{ $($name:ident),* }
    ) => {
        match $op {
            $($ty::$name => {
                map2_n($regs, $mask, $n, $slots, |x, y| scalar::$f($ty::$name, $arg, x, y))
            })*
        }
    };
}

/// Runs `op` if it is a register-only operation; `false` otherwise.
#[inline(always)]
pub fn exec(op: &Op, regs: &mut [u64], mask: u32) -> bool {
    match *op {
        Op::Int {
            op,
            bits,
            n,
            dst,
            a,
            b,
        } => {
            let bits = u32::from(bits);
            map2_per_op!(regs, mask, n, [dst, a, b], int_op(op, bits), IntOp::{
                Add, Sub, Mul, UDiv, SDiv, URem, SRem, Shl, LShr, AShr, And, Or, Xor
            })
        }
        Op::Float {
            op,
            ty,
            n,
            dst,
            a,
            b,
        } => map2_per_op!(regs, mask, n, [dst, a, b], float_op(op, ty), FloatOp::{
            Add, Sub, Mul, Div, Rem
        }),
        Op::FNeg { ty, n, dst, a } => map1_n(regs, mask, n, [dst, a], |x| scalar::fneg(ty, x)),
        Op::ICmp {
            pred,
            bits,
            n,
            dst,
            a,
            b,
        } => {
            let bits = u32::from(bits);
            map2_per_op!(regs, mask, n, [dst, a, b], icmp_word(pred, bits), IntPred::{
                Eq, Ne, Ugt, Uge, Ult, Ule, Sgt, Sge, Slt, Sle
            })
        }
        Op::FCmp {
            pred,
            ty,
            n,
            dst,
            a,
            b,
        } => map2_n(regs, mask, n, [dst, a, b], |x, y| {
            u64::from(scalar::fcmp(pred, ty, x, y))
        }),
        Op::Select {
            n,
            per_elem,
            dst,
            cond,
            a,
            b,
        } => {
            for k in 0..u32::from(n) {
                let c = if per_elem { cond + k } else { cond };
                map3(regs, mask, dst + k, [c, a + k, b + k], |c, x, y| {
                    if c & 1 != 0 {
                        x
                    } else {
                        y
                    }
                });
            }
        }
        Op::Cast { cast, n, dst, a } => match cast {
            // The casts of address arithmetic, with their lane loops
            // free of the dispatch on the kind.
            Cast::ZeroExt { to } => {
                let m = scalar::mask(u32::from(to));
                map1_n(regs, mask, n, [dst, a], |x| x & m)
            }
            Cast::SignExt { from, to } => {
                let (from, m) = (u32::from(from), scalar::mask(u32::from(to)));
                map1_n(regs, mask, n, [dst, a], |x| sext(x, from) as u64 & m)
            }
            _ => map1_n(regs, mask, n, [dst, a], |x| scalar::cast(cast, x)),
        },
        Op::Copy { n, dst, src } => lanes::copy(regs, mask, dst, src, n),
        Op::InsertValue {
            dst,
            agg,
            val,
            start,
            agg_words,
            val_words,
        } => {
            lanes::copy(regs, mask, dst, agg, agg_words);
            lanes::copy(regs, mask, dst + start, val, val_words);
        }
        Op::Reinterpret(ref r) => reinterpret(r, regs, mask),
        Op::Gep(ref g) => {
            let base = row(regs, g.base);
            let mut out: [u64; LANES] =
                std::array::from_fn(|l| base[l].wrapping_add(g.offset as u64));
            for &(s, bits, scale) in &g.indices {
                let idx = row(regs, s);
                for l in 0..LANES {
                    let step = sext(idx[l], u32::from(bits)).wrapping_mul(scale);
                    out[l] = out[l].wrapping_add(step as u64);
                }
            }
            write(regs, g.dst, &out, mask);
        }
        Op::ExtractElement {
            dst,
            vec,
            idx,
            idx_bits,
            len,
        } => {
            let i = *row(regs, idx);
            let out: [u64; LANES] = std::array::from_fn(|l| {
                let k = i[l] & scalar::mask(u32::from(idx_bits));
                if k < u64::from(len) {
                    row(regs, vec + k as u32)[l]
                } else {
                    0
                }
            });
            write(regs, dst, &out, mask);
        }
        Op::InsertElement {
            dst,
            vec,
            val,
            idx,
            idx_bits,
            len,
        } => {
            lanes::copy(regs, mask, dst, vec, len);
            let (i, v) = (*row(regs, idx), *row(regs, val));
            each(mask, |l| {
                let k = i[l] & scalar::mask(u32::from(idx_bits));
                if k < u64::from(len) {
                    row_mut(regs, dst + k as u32)[l] = v[l];
                }
            });
        }
        Op::ShuffleVector(ref s) => shuffle_vector(s, regs, mask),
        Op::Math(ref m) => math(m, regs, mask),
        Op::AsmAddr {
            dst,
            base,
            offset,
            tag,
        } => map1(regs, mask, dst, base, |b| {
            let b = if tag != 0 && crate::sim::addr::tag(b) == 0 {
                b | u64::from(tag) << crate::sim::addr::SPACE_SHIFT
            } else {
                b
            };
            b.wrapping_add(offset as i64 as u64)
        }),
        _ => return false,
    }
    true
}

/// [`map1`] over `n` elements in consecutive slots.
#[inline(always)]
fn map1_n(regs: &mut [u64], mask: u32, n: u8, [dst, a]: [u32; 2], f: impl Fn(u64) -> u64) {
    for k in 0..u32::from(n) {
        map1(regs, mask, dst + k, a + k, &f);
    }
}

/// [`map2`] over `n` elements in consecutive slots.
#[inline(always)]
fn map2_n(regs: &mut [u64], mask: u32, n: u8, [dst, a, b]: [u32; 3], f: impl Fn(u64, u64) -> u64) {
    for k in 0..u32::from(n) {
        map2(regs, mask, dst + k, a + k, b + k, &f);
    }
}

/// A bit cast between leaf shapes: through the bytes, little-endian.
fn reinterpret(r: &Reinterpret, regs: &mut [u64], mask: u32) {
    let mut bytes = [0u8; super::MAX_VALUE_BYTES];
    each(mask, |l| {
        for (k, leaf) in r.from.iter().enumerate() {
            let at = leaf.offset as usize;
            let n = leaf.scalar.bytes() as usize;
            write_le(&mut bytes[at..at + n], row(regs, r.src + k as u32)[l]);
        }
        for (k, leaf) in r.to.iter().enumerate() {
            let at = leaf.offset as usize;
            let n = leaf.scalar.bytes() as usize;
            row_mut(regs, r.dst + k as u32)[l] = read_le(&bytes[at..at + n]);
        }
    });
}

fn shuffle_vector(s: &ShuffleVector, regs: &mut [u64], mask: u32) {
    for (k, pick) in s.mask.iter().enumerate() {
        let out = match *pick {
            Some(j) if j < s.len => *row(regs, s.a + j),
            Some(j) => *row(regs, s.b + (j - s.len)),
            None => [0; LANES],
        };
        write(regs, s.dst + k as u32, &out, mask);
    }
}

/// Math functions can be expensive: only the active lanes are computed.
fn math(m: &Math, regs: &mut [u64], mask: u32) {
    let mut args = [0u64; super::MAX_MATH_ARGS];
    for k in 0..u32::from(m.n) {
        each(mask, |l| {
            for (i, &(s, vector)) in m.args.iter().enumerate() {
                args[i] = row(regs, if vector { s + k } else { s })[l];
            }
            let r = m.f.eval(&args[..m.args.len()], u32::from(m.bits));
            // Several results are a struct of vectors: word w of element k
            // is at w * n + k.
            for (w, &v) in r.iter().enumerate().take(usize::from(m.results)) {
                row_mut(regs, m.dst + w as u32 * u32::from(m.n) + k)[l] = v;
            }
        });
    }
}
