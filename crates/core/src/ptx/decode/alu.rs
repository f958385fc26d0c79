//! Register-to-register forms: moves, conversions, arithmetic, logic and
//! bit manipulation.

use super::super::inst::*;
use super::{Args, Mods, SPACES};
use crate::ptx::parse::RawOperand;
use crate::ptx::PtxError;

const INTS: &[Ty] = &[Ty::U16, Ty::U32, Ty::U64, Ty::S16, Ty::S32, Ty::S64];
const BITS: &[Ty] = &[Ty::B16, Ty::B32, Ty::B64];
const FLOATS: &[Ty] = &[Ty::F32, Ty::F64];

fn union(sets: &[&[Ty]]) -> Vec<Ty> {
    sets.iter().flat_map(|s| s.iter().copied()).collect()
}

/// Float rounding and flushing: only the defaults (`.rn`) and `.ftz`,
/// which the evaluator models exactly.
fn float_mods(m: &mut Mods, ty: Ty) -> Result<bool, PtxError> {
    let ftz = m.take("ftz");
    m.take("rn");
    if (ftz && ty != Ty::F32) || m.pick(&[("rz", ()), ("rm", ()), ("rp", ())]).is_some() {
        return Err(m.unsupported());
    }
    Ok(ftz)
}

pub fn mov(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let ty = m.ty(&union(&[INTS, BITS, FLOATS, &[Ty::Pred, Ty::B128]]))?;
    a.count(2)?;
    let split = |parts: &[Operand]| {
        let n = parts.len() as u32;
        if matches!(n, 2 | 4) && ty.bits() % n == 0 && ty.bits() > 16 {
            Ok(parts.to_vec())
        } else {
            Err(a.unsupported())
        }
    };
    match (a.shape(0)?, a.shape(1)?) {
        (RawOperand::One(dst), RawOperand::Vector(parts)) => Ok(Op::Pack {
            ty,
            dst: *dst,
            parts: split(parts)?,
        }),
        (RawOperand::Vector(dsts), RawOperand::One(src)) => Ok(Op::Unpack {
            ty,
            dsts: split(dsts)?,
            src: *src,
        }),
        _ => Ok(Op::Mov {
            ty,
            dst: a.one(0)?,
            src: a.one(1)?,
        }),
    }
}

/// `cvta.SPACE.size` (to generic) and `cvta.to.SPACE.size`.
pub fn cvta(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let to_generic = !m.take("to");
    let space = m.require(SPACES)?;
    let ty = m.ty(&[Ty::U32, Ty::U64])?;
    a.count(2)?;
    Ok(Op::Cvta {
        to_generic,
        space,
        ty,
        dst: a.one(0)?,
        src: a.one(1)?,
    })
}

pub fn cvt(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let round = m.pick(&[
        ("rn", Round::Rn),
        ("rz", Round::Rz),
        ("rm", Round::Rm),
        ("rp", Round::Rp),
        ("rni", Round::Rni),
        ("rzi", Round::Rzi),
        ("rmi", Round::Rmi),
        ("rpi", Round::Rpi),
    ]);
    let ftz = m.take("ftz");
    let sat = m.take("sat");
    let allowed = union(&[INTS, FLOATS, &[Ty::U8, Ty::S8, Ty::F16, Ty::Bf16]]);
    let [to, from] = m.types()[..] else {
        return Err(m.unsupported());
    };
    if !allowed.contains(&to) || !allowed.contains(&from) {
        return Err(m.unsupported());
    }
    a.count(2)?;
    Ok(Op::Cvt {
        to,
        from,
        round,
        ftz,
        sat,
        dst: a.one(0)?,
        src: a.one(1)?,
    })
}

pub fn binary(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let (op, allowed) = match m.base {
        "add" | "sub" | "min" | "max" => {
            let op = match m.base {
                "add" => BinOp::Add,
                "sub" => BinOp::Sub,
                "min" => BinOp::Min,
                _ => BinOp::Max,
            };
            (op, union(&[INTS, FLOATS]))
        }
        "mul" => {
            let mode = m.pick(&[
                ("lo", BinOp::MulLo),
                ("hi", BinOp::MulHi),
                ("wide", BinOp::MulWide),
            ]);
            let ty = m.types();
            let float = matches!(ty[..], [t] if t.is_float());
            let op = match (mode, float) {
                (None, true) => BinOp::MulLo,
                (Some(mode), false) => mode,
                _ => return Err(m.unsupported()),
            };
            return finish_binary(m, a, op, &ty, &union(&[INTS, FLOATS]));
        }
        "and" | "or" | "xor" => {
            let op = match m.base {
                "and" => BinOp::And,
                "or" => BinOp::Or,
                _ => BinOp::Xor,
            };
            (op, union(&[BITS, &[Ty::Pred]]))
        }
        "shl" => (BinOp::Shl, BITS.to_vec()),
        _ => (BinOp::Shr, union(&[BITS, INTS])),
    };
    let ty = m.types();
    finish_binary(m, a, op, &ty, &allowed)
}

fn finish_binary(
    m: &mut Mods,
    a: &Args,
    op: BinOp,
    ty: &[Ty],
    allowed: &[Ty],
) -> Result<Op, PtxError> {
    let ty = match ty[..] {
        [t] if allowed.contains(&t) => t,
        _ => return Err(m.unsupported()),
    };
    let sat = m.take("sat");
    if sat && !(ty == Ty::S32 && matches!(op, BinOp::Add | BinOp::Sub)) {
        return Err(m.unsupported());
    }
    let ftz = if ty.is_float() {
        float_mods(m, ty)?
    } else {
        false
    };
    a.count(3)?;
    Ok(Op::Binary {
        op,
        ty,
        sat,
        ftz,
        dst: a.one(0)?,
        a: a.one(1)?,
        b: a.one(2)?,
    })
}

/// `mad.lo/.hi/.wide` of integers; `mad.rn`/`fma.rn` of floats.
pub fn mad(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let mode = m.pick(&[
        ("lo", MadMode::Lo),
        ("hi", MadMode::Hi),
        ("wide", MadMode::Wide),
    ]);
    let ty = m.ty(&union(&[INTS, FLOATS]))?;
    let (mode, ftz) = match (mode, ty.is_float()) {
        (None, true) => {
            if !m.take("rn") {
                return Err(m.unsupported());
            }
            (MadMode::Fma, float_mods(m, ty)?)
        }
        (Some(mode), false) if m.base == "mad" => (mode, false),
        _ => return Err(m.unsupported()),
    };
    a.count(4)?;
    Ok(Op::Mad {
        mode,
        ty,
        ftz,
        dst: a.one(0)?,
        a: a.one(1)?,
        b: a.one(2)?,
        c: a.one(3)?,
    })
}

pub fn unary(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let signed: &[Ty] = &[Ty::S16, Ty::S32, Ty::S64];
    let (op, allowed) = match m.base {
        "not" => (UnaryOp::Not, union(&[BITS, &[Ty::Pred]])),
        "neg" => (UnaryOp::Neg, union(&[signed, FLOATS])),
        "abs" => (UnaryOp::Abs, union(&[signed, FLOATS])),
        "brev" => (UnaryOp::Brev, vec![Ty::B32, Ty::B64]),
        "popc" => (UnaryOp::Popc, vec![Ty::B32, Ty::B64]),
        _ => (UnaryOp::Clz, vec![Ty::B32, Ty::B64]),
    };
    let ty = m.ty(&allowed)?;
    if ty.is_float() {
        float_mods(m, ty)?;
    }
    a.count(2)?;
    Ok(Op::Unary {
        op,
        ty,
        dst: a.one(0)?,
        a: a.one(1)?,
    })
}

pub fn selp(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let ty = m.ty(&union(&[INTS, BITS, FLOATS]))?;
    a.count(4)?;
    Ok(Op::Selp {
        ty,
        dst: a.one(0)?,
        a: a.one(1)?,
        b: a.one(2)?,
        c: a.pred(3)?,
    })
}

pub fn setp(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let cmp = m.require(&[
        ("eq", Cmp::Eq),
        ("ne", Cmp::Ne),
        ("lt", Cmp::Lt),
        ("le", Cmp::Le),
        ("gt", Cmp::Gt),
        ("ge", Cmp::Ge),
        ("lo", Cmp::Lo),
        ("ls", Cmp::Ls),
        ("hi", Cmp::Hi),
        ("hs", Cmp::Hs),
        ("equ", Cmp::Equ),
        ("neu", Cmp::Neu),
        ("ltu", Cmp::Ltu),
        ("leu", Cmp::Leu),
        ("gtu", Cmp::Gtu),
        ("geu", Cmp::Geu),
        ("num", Cmp::Num),
        ("nan", Cmp::Nan),
    ])?;
    let combine = m.pick(&[
        ("and", BoolOp::And),
        ("or", BoolOp::Or),
        ("xor", BoolOp::Xor),
    ]);
    let ty = m.ty(&union(&[INTS, BITS, FLOATS]))?;
    if ty.is_float() {
        float_mods(m, ty)?;
    }
    let float_only = matches!(
        cmp,
        Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Num | Cmp::Nan
    );
    if float_only && !ty.is_float() {
        return Err(m.unsupported());
    }
    a.count(if combine.is_some() { 4 } else { 3 })?;
    let (dst, dst_not) = a.with_pred(0)?;
    let combine = match combine {
        Some(op) => Some((op, a.pred(3)?)),
        None => None,
    };
    Ok(Op::Setp {
        cmp,
        ty,
        dst,
        dst_not,
        a: a.one(1)?,
        b: a.one(2)?,
        combine,
    })
}

pub fn prmt(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    m.ty(&[Ty::B32])?;
    let mode = m
        .pick(&[
            ("f4e", PrmtMode::F4e),
            ("b4e", PrmtMode::B4e),
            ("rc8", PrmtMode::Rc8),
            ("ecl", PrmtMode::Ecl),
            ("ecr", PrmtMode::Ecr),
            ("rc16", PrmtMode::Rc16),
        ])
        .unwrap_or(PrmtMode::Default);
    a.count(4)?;
    Ok(Op::Prmt {
        mode,
        dst: a.one(0)?,
        a: a.one(1)?,
        b: a.one(2)?,
        c: a.one(3)?,
    })
}

pub fn bitfield(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    if m.base == "bfe" {
        let ty = m.ty(&[Ty::U32, Ty::U64, Ty::S32, Ty::S64])?;
        a.count(4)?;
        return Ok(Op::Bfe {
            ty,
            dst: a.one(0)?,
            a: a.one(1)?,
            pos: a.one(2)?,
            len: a.one(3)?,
        });
    }
    let ty = m.ty(&[Ty::B32, Ty::B64])?;
    a.count(5)?;
    Ok(Op::Bfi {
        ty,
        dst: a.one(0)?,
        insert: a.one(1)?,
        base: a.one(2)?,
        pos: a.one(3)?,
        len: a.one(4)?,
    })
}

pub fn lop3(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    m.ty(&[Ty::B32])?;
    a.count(5)?;
    let lut = u8::try_from(a.imm(4)?).map_err(|_| a.unsupported())?;
    Ok(Op::Lop3 {
        dst: a.one(0)?,
        a: a.one(1)?,
        b: a.one(2)?,
        c: a.one(3)?,
        lut,
    })
}

pub fn shf(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let left = m.require(&[("l", true), ("r", false)])?;
    let clamp = m.require(&[("wrap", false), ("clamp", true)])?;
    m.ty(&[Ty::B32])?;
    a.count(4)?;
    Ok(Op::Shf {
        left,
        clamp,
        dst: a.one(0)?,
        lo: a.one(1)?,
        hi: a.one(2)?,
        n: a.one(3)?,
    })
}

/// `rcp`, `sqrt`, `rsqrt`, `ex2`, `lg2`, `sin`, `cos` with `.approx`.
pub fn approx(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    if !m.take("approx") {
        return Err(m.unsupported());
    }
    let ftz = m.take("ftz");
    let f = match m.base {
        "rcp" => ApproxFn::Rcp,
        "sqrt" => ApproxFn::Sqrt,
        "rsqrt" => ApproxFn::Rsqrt,
        "ex2" => ApproxFn::Ex2,
        "lg2" => ApproxFn::Lg2,
        "sin" => ApproxFn::Sin,
        _ => ApproxFn::Cos,
    };
    // Doubles only for the reciprocals, and only flushed.
    let doubles = matches!(f, ApproxFn::Rcp | ApproxFn::Rsqrt) && ftz;
    let ty = m.ty(if doubles { FLOATS } else { &[Ty::F32] })?;
    a.count(2)?;
    Ok(Op::Approx {
        f,
        ty,
        ftz,
        dst: a.one(0)?,
        a: a.one(1)?,
    })
}
