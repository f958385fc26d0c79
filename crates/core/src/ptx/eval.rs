//! What the register-to-register forms compute, on 64-bit bit patterns as
//! the simulator holds registers. Results are masked to their type's
//! width; signed inputs are sign-extended from theirs. Each function
//! follows the PTX ISA's definition of its instruction; the `.approx`
//! forms return the correctly rounded value (the hardware's is within
//! the documented error of it).

use super::inst::*;

/// A form the evaluator does not compute (memory, other lanes, or a
/// type it does not model, such as `.f16`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct EvalError {
    pub message: String,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn unsupported<T>(what: impl std::fmt::Display) -> Result<T, EvalError> {
    Err(EvalError {
        message: format!("{what} is not evaluated"),
    })
}

/// The low `bits` bits set.
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

/// `v`'s low `bits` bits, sign-extended.
pub fn sext(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits.clamp(1, 64);
    ((v << shift) as i64) >> shift
}

/// The integer `v` holds as a `ty`.
fn int(ty: Ty, v: u64) -> i128 {
    if ty.is_signed() {
        i128::from(sext(v, ty.bits()))
    } else {
        i128::from(v & mask(ty.bits()))
    }
}

/// An integer result as `ty`'s bit pattern (wrapping).
fn wrap(ty: Ty, v: i128) -> u64 {
    (v as u64) & mask(ty.bits())
}

fn ftz32(x: f32, ftz: bool) -> f32 {
    if ftz && x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    }
}

/// A float operand widened to `f64` (exactly), single precision flushed
/// first when `ftz`.
fn float(ty: Ty, v: u64, ftz: bool) -> Result<f64, EvalError> {
    match ty {
        Ty::F32 => Ok(f64::from(ftz32(f32::from_bits(v as u32), ftz))),
        Ty::F64 => Ok(f64::from_bits(v)),
        _ => unsupported(format!("`.{ty:?}` arithmetic")),
    }
}

/// A float result rounded to `ty` and flushed when `ftz`.
fn float_bits(ty: Ty, x: f64, ftz: bool) -> u64 {
    match ty {
        Ty::F32 => u64::from(ftz32(x as f32, ftz).to_bits()),
        _ => x.to_bits(),
    }
}

/// The full `2w`-bit product of two `w`-bit integers, as bits.
fn product(ty: Ty, a: u64, b: u64) -> u128 {
    (int(ty, a) as u128).wrapping_mul(int(ty, b) as u128)
}

pub fn binary(op: BinOp, ty: Ty, sat: bool, ftz: bool, a: u64, b: u64) -> Result<u64, EvalError> {
    let w = ty.bits();
    if ty.is_float() {
        let (x, y) = (float(ty, a, ftz)?, float(ty, b, ftz)?);
        // Single precision computed in double then rounded is correctly
        // rounded for + - * (53 >= 2 * 24 + 2 bits).
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::MulLo => x * y,
            BinOp::Min => x.min(y),
            BinOp::Max => x.max(y),
            _ => return unsupported(format!("`{op:?}` of floats")),
        };
        return Ok(float_bits(ty, r, ftz));
    }
    let (x, y) = (int(ty, a), int(ty, b));
    let shift = (b & 0xffff_ffff) as u32;
    Ok(match op {
        BinOp::Add | BinOp::Sub => {
            let r = if op == BinOp::Add { x + y } else { x - y };
            if sat {
                wrap(ty, r.clamp(i128::from(i32::MIN), i128::from(i32::MAX)))
            } else {
                wrap(ty, r)
            }
        }
        BinOp::MulLo => (product(ty, a, b) as u64) & mask(w),
        BinOp::MulHi => ((product(ty, a, b) >> w) as u64) & mask(w),
        BinOp::MulWide if w <= 32 => (product(ty, a, b) as u64) & mask(2 * w),
        BinOp::MulWide => return unsupported("`mul.wide` of 64-bit values"),
        BinOp::Min => wrap(ty, x.min(y)),
        BinOp::Max => wrap(ty, x.max(y)),
        BinOp::And => a & b & mask(w),
        BinOp::Or => (a | b) & mask(w),
        BinOp::Xor => (a ^ b) & mask(w),
        BinOp::Shl if shift >= w => 0,
        BinOp::Shl => (a << shift) & mask(w),
        // Signed shifts fill with the sign, others with zeros.
        BinOp::Shr => wrap(ty, x >> shift.min(w)),
    })
}

pub fn mad(mode: MadMode, ty: Ty, ftz: bool, a: u64, b: u64, c: u64) -> Result<u64, EvalError> {
    let w = ty.bits();
    let p = product(ty, a, b);
    Ok(match mode {
        MadMode::Lo => (p as u64).wrapping_add(c) & mask(w),
        MadMode::Hi => ((p >> w) as u64).wrapping_add(c) & mask(w),
        MadMode::Wide if w <= 32 => (p as u64).wrapping_add(c) & mask(2 * w),
        MadMode::Wide => return unsupported("`mad.wide` of 64-bit values"),
        MadMode::Fma => {
            let (x, y, z) = (float(ty, a, ftz)?, float(ty, b, ftz)?, float(ty, c, ftz)?);
            match ty {
                Ty::F32 => {
                    let r = (x as f32).mul_add(y as f32, z as f32);
                    float_bits(ty, f64::from(r), ftz)
                }
                _ => x.mul_add(y, z).to_bits(),
            }
        }
    })
}

pub fn unary(op: UnaryOp, ty: Ty, a: u64) -> Result<u64, EvalError> {
    let w = ty.bits();
    let sign = 1u64 << (w - 1);
    Ok(match op {
        UnaryOp::Not => !a & mask(w),
        UnaryOp::Neg if ty.is_float() => (a ^ sign) & mask(w),
        UnaryOp::Abs if ty.is_float() => a & !sign & mask(w),
        UnaryOp::Neg => wrap(ty, -int(ty, a)),
        UnaryOp::Abs => wrap(ty, int(ty, a).abs()),
        UnaryOp::Brev => (a & mask(w)).reverse_bits() >> (64 - w),
        UnaryOp::Popc => u64::from((a & mask(w)).count_ones()),
        UnaryOp::Clz => u64::from((a & mask(w)).leading_zeros() - (64 - w)),
    })
}

pub fn setp(cmp: Cmp, ty: Ty, a: u64, b: u64) -> Result<bool, EvalError> {
    if ty.is_float() {
        let (x, y) = (float(ty, a, false)?, float(ty, b, false)?);
        let unordered = x.is_nan() || y.is_nan();
        let ordered = |r: bool| !unordered && r;
        let or_nan = |r: bool| unordered || r;
        return Ok(match cmp {
            Cmp::Eq => ordered(x == y),
            Cmp::Ne => ordered(x != y),
            Cmp::Lt => ordered(x < y),
            Cmp::Le => ordered(x <= y),
            Cmp::Gt => ordered(x > y),
            Cmp::Ge => ordered(x >= y),
            Cmp::Equ => or_nan(x == y),
            Cmp::Neu => or_nan(x != y),
            Cmp::Ltu => or_nan(x < y),
            Cmp::Leu => or_nan(x <= y),
            Cmp::Gtu => or_nan(x > y),
            Cmp::Geu => or_nan(x >= y),
            Cmp::Num => !unordered,
            Cmp::Nan => unordered,
            Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => {
                return unsupported("an unsigned comparison of floats")
            }
        });
    }
    let (x, y) = (int(ty, a), int(ty, b));
    let (ux, uy) = (a & mask(ty.bits()), b & mask(ty.bits()));
    Ok(match cmp {
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
        Cmp::Lo => ux < uy,
        Cmp::Ls => ux <= uy,
        Cmp::Hi => ux > uy,
        Cmp::Hs => ux >= uy,
        _ => return unsupported("an unordered comparison of integers"),
    })
}

pub fn bool_op(op: BoolOp, x: bool, y: bool) -> bool {
    match op {
        BoolOp::And => x && y,
        BoolOp::Or => x || y,
        BoolOp::Xor => x ^ y,
    }
}

/// `prmt.b32`: each result byte is one of the eight bytes of `b:a`
/// (`a` holds bytes 0-3). The default mode reads a 4-bit selector per
/// byte from `c` (bit 3 replicates the chosen byte's sign); the others
/// pick by `c & 3` from a fixed pattern.
pub fn prmt(mode: PrmtMode, a: u32, b: u32, c: u32) -> u32 {
    let source = (u64::from(b) << 32) | u64::from(a);
    let s = c & 3;
    let selector = |byte: u32| -> u32 {
        match mode {
            PrmtMode::Default => (c >> (4 * byte)) & 0xf,
            // Four consecutive bytes starting at byte `s`.
            PrmtMode::F4e => s + byte,
            // Four consecutive bytes downwards from byte `s`, wrapping.
            PrmtMode::B4e => (s + 8 - byte) % 8,
            // Byte `s` everywhere.
            PrmtMode::Rc8 => s,
            // Bytes below `s` become byte `s`.
            PrmtMode::Ecl => byte.max(s),
            // Bytes above `s` become byte `s`.
            PrmtMode::Ecr => byte.min(s),
            // Half-word `s & 1` twice.
            PrmtMode::Rc16 => 2 * (s & 1) + (byte & 1),
        }
    };
    (0..4).fold(0, |out, byte| {
        let sel = selector(byte);
        let value = ((source >> (8 * (sel & 7))) & 0xff) as u32;
        let value = if sel & 8 != 0 {
            if value & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            value
        };
        out | (value << (8 * byte))
    })
}

/// `bfe`: `len` bits of `a` from `pos` (both taken mod 256), zero- or
/// sign-extended; bits past the top read as the extension.
pub fn bfe(ty: Ty, a: u64, pos: u64, len: u64) -> u64 {
    let msb = ty.bits() - 1;
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    let bit = |i: u32| (a >> i) & 1;
    let sign = if ty.is_signed() && len > 0 {
        bit((pos + len - 1).min(msb))
    } else {
        0
    };
    (0..=msb).fold(0, |d, i| {
        let v = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sign
        };
        d | (v << i)
    })
}

/// `bfi`: `base` with bits `pos..pos+len` replaced by the low bits of
/// `insert` (both counts mod 256, clipped at the top).
pub fn bfi(ty: Ty, insert: u64, base: u64, pos: u64, len: u64) -> u64 {
    let w = ty.bits();
    let (pos, len) = ((pos & 0xff) as u32, (len & 0xff) as u32);
    if pos >= w {
        return base & mask(w);
    }
    let field = mask(len.min(w - pos)) << pos;
    ((base & !field) | ((insert << pos) & field)) & mask(w)
}

/// `lop3.b32`: bit `i` of the result is bit `4a + 2b + c` of `lut`, for
/// the bits `a`, `b`, `c` of the operands at `i` (so `lut` is the
/// function applied to 0xF0, 0xCC, 0xAA).
pub fn lop3(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    (0..32).fold(0, |d, i| {
        let index = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d | (u32::from((lut >> index) & 1) << i)
    })
}

/// `shf.l`/`shf.r`: shift the 64-bit `hi:lo` and keep the upper (left)
/// or lower (right) word. `.wrap` takes the count mod 32, `.clamp`
/// saturates it at 32.
pub fn shf(left: bool, clamp: bool, lo: u32, hi: u32, n: u32) -> u32 {
    let n = if clamp { n.min(32) } else { n & 31 };
    let pair = (u64::from(hi) << 32) | u64::from(lo);
    if left {
        ((pair << n) >> 32) as u32
    } else {
        (pair >> n) as u32
    }
}

/// `cvt` between integers (extended by the source's signedness, then
/// truncated or, with `.sat`, clamped), from floats to integers (rounded
/// as asked, saturating, NaN to 0), from integers to floats and between
/// single and double precision.
pub fn cvt(
    to: Ty,
    from: Ty,
    round: Option<Round>,
    ftz: bool,
    sat: bool,
    a: u64,
) -> Result<u64, EvalError> {
    let limits = |t: Ty| {
        if t.is_signed() {
            let half = 1i128 << (t.bits() - 1);
            (-half, half - 1)
        } else {
            (0, (1i128 << t.bits()) - 1)
        }
    };
    match (to.is_float(), from.is_float()) {
        (false, false) => {
            let v = int(from, a);
            let (lo, hi) = limits(to);
            Ok(wrap(to, if sat { v.clamp(lo, hi) } else { v }))
        }
        (false, true) => {
            let x = float(from, a, ftz)?;
            let x = match round {
                Some(Round::Rni) => x.round_ties_even(),
                Some(Round::Rzi) | None => x.trunc(),
                Some(Round::Rmi) => x.floor(),
                Some(Round::Rpi) => x.ceil(),
                Some(r) => return unsupported(format!("`cvt` to an integer with `{r:?}`")),
            };
            let (lo, hi) = limits(to);
            // `hi as f64` may round up (2^64 - 1 becomes 2^64): compare
            // before converting.
            let v = if x.is_nan() {
                0
            } else if x >= hi as f64 {
                hi
            } else if x <= lo as f64 {
                lo
            } else {
                x as i128
            };
            Ok(wrap(to, v))
        }
        (true, false) => {
            if !matches!(round, None | Some(Round::Rn)) {
                return unsupported(format!("`cvt` of an integer with `{round:?}`"));
            }
            let v = int(from, a);
            match to {
                Ty::F32 => Ok(u64::from((v as f32).to_bits())),
                Ty::F64 => Ok((v as f64).to_bits()),
                _ => unsupported(format!("`cvt` to `.{to:?}`")),
            }
        }
        (true, true) => {
            let x = float(from, a, ftz)?;
            let x = match round {
                Some(Round::Rni) => x.round_ties_even(),
                Some(Round::Rzi) => x.trunc(),
                Some(Round::Rmi) => x.floor(),
                Some(Round::Rpi) => x.ceil(),
                None | Some(Round::Rn) => x,
                Some(r) => return unsupported(format!("`cvt` between floats with `{r:?}`")),
            };
            let x = if sat { x.clamp(0.0, 1.0) } else { x };
            match to {
                Ty::F32 | Ty::F64 => Ok(float_bits(to, x, ftz)),
                _ => unsupported(format!("`cvt` to `.{to:?}`")),
            }
        }
    }
}

pub fn approx(f: ApproxFn, ty: Ty, ftz: bool, a: u64) -> Result<u64, EvalError> {
    let x = float(ty, a, ftz)?;
    let r = match f {
        ApproxFn::Rcp => 1.0 / x,
        ApproxFn::Sqrt => x.sqrt(),
        ApproxFn::Rsqrt => 1.0 / x.sqrt(),
        ApproxFn::Ex2 => x.exp2(),
        ApproxFn::Lg2 => x.log2(),
        ApproxFn::Sin => x.sin(),
        ApproxFn::Cos => x.cos(),
    };
    Ok(float_bits(ty, r, ftz))
}

/// A predicate operand's truth, given its register's value.
pub fn truth(p: &PredOperand, value: u64) -> bool {
    (value & 1 != 0) ^ p.negated
}

/// Evaluates a register-to-register form. `inputs` are the values of
/// [`Op::reads`] (special registers and immediates already read); the
/// result holds one value per [`Op::writes`].
pub fn alu(op: &Op, inputs: &[u64]) -> Result<Vec<u64>, EvalError> {
    let arg = |k: usize| inputs.get(k).copied().unwrap_or(0);
    let one = |v: u64| Ok(vec![v]);
    match op {
        Op::Mov { ty, .. } => one(arg(0) & mask(ty.bits())),
        Op::Pack { ty, parts, .. } if ty.bits() <= 64 => {
            let w = ty.bits() / parts.len() as u32;
            let packed =
                (0..parts.len()).fold(0, |d, k| d | ((arg(k) & mask(w)) << (k as u32 * w)));
            one(packed)
        }
        Op::Unpack { ty, dsts, .. } if ty.bits() <= 64 => {
            let w = ty.bits() / dsts.len() as u32;
            Ok((0..dsts.len() as u32)
                .map(|k| (arg(0) >> (k * w)) & mask(w))
                .collect())
        }
        Op::Cvt {
            to,
            from,
            round,
            ftz,
            sat,
            ..
        } => one(cvt(*to, *from, *round, *ftz, *sat, arg(0))?),
        Op::Binary {
            op, ty, sat, ftz, ..
        } => one(binary(*op, *ty, *sat, *ftz, arg(0), arg(1))?),
        Op::Mad { mode, ty, ftz, .. } => one(mad(*mode, *ty, *ftz, arg(0), arg(1), arg(2))?),
        Op::Unary { op, ty, .. } => one(unary(*op, *ty, arg(0))?),
        Op::Selp { ty, c, .. } => {
            let v = if truth(c, arg(2)) { arg(0) } else { arg(1) };
            one(v & mask(ty.bits()))
        }
        Op::Setp {
            cmp,
            ty,
            dst_not,
            combine,
            ..
        } => {
            let r = setp(*cmp, *ty, arg(0), arg(1))?;
            let with = |x: bool| match combine {
                Some((op, c)) => bool_op(*op, x, truth(c, arg(2))),
                None => x,
            };
            let mut out = vec![u64::from(with(r))];
            if dst_not.is_some() {
                out.push(u64::from(with(!r)));
            }
            Ok(out)
        }
        Op::Prmt { mode, .. } => one(u64::from(prmt(
            *mode,
            arg(0) as u32,
            arg(1) as u32,
            arg(2) as u32,
        ))),
        Op::Bfe { ty, .. } => one(bfe(*ty, arg(0), arg(1), arg(2))),
        Op::Bfi { ty, .. } => one(bfi(*ty, arg(0), arg(1), arg(2), arg(3))),
        Op::Lop3 { lut, .. } => one(u64::from(lop3(
            arg(0) as u32,
            arg(1) as u32,
            arg(2) as u32,
            *lut,
        ))),
        Op::Shf { left, clamp, .. } => one(u64::from(shf(
            *left,
            *clamp,
            arg(0) as u32,
            arg(1) as u32,
            arg(2) as u32,
        ))),
        Op::Approx { f, ty, ftz, .. } => one(approx(*f, *ty, *ftz, arg(0))?),
        _ => unsupported("this instruction (not register-to-register)"),
    }
}
