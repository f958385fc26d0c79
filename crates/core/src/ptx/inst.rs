//! The typed instructions of an asm body: each PTX form we read, with its
//! type suffix and qualifiers decoded, and operands resolved to asm
//! operands (`$n`), registers the body declares, immediates or special
//! registers.

use super::sreg::Special;
pub use crate::ir::intrinsics::{ShflMode, VoteMode};

/// A PTX fundamental type suffix (`.u32`, `.f64`, `.pred`, ...).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Ty {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    F32,
    F64,
    Pred,
}

impl Ty {
    /// Reads a suffix without its dot (`u32`).
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "b128" => Ty::B128,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f16x2" => Ty::F16x2,
            "bf16" => Ty::Bf16,
            "bf16x2" => Ty::Bf16x2,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }

    pub fn bits(self) -> u32 {
        match self {
            Ty::Pred => 1,
            Ty::B8 | Ty::U8 | Ty::S8 => 8,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 | Ty::Bf16 => 16,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 | Ty::F16x2 | Ty::Bf16x2 => 32,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 64,
            Ty::B128 => 128,
        }
    }

    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            Ty::F16 | Ty::F16x2 | Ty::Bf16 | Ty::Bf16x2 | Ty::F32 | Ty::F64
        )
    }
}

/// A state space of a memory instruction or a `cvta`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Space {
    /// No space named: a generic address.
    Generic,
    Global,
    Shared,
    /// `.shared::cluster`: shared memory of any block of the cluster.
    SharedCluster,
    Local,
    Const,
    Param,
}

/// Memory-ordering semantics (`.relaxed`, `.acquire`, ...).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    /// `.volatile`: relaxed at system scope for each access.
    Volatile,
    /// `fence.sc`.
    Sc,
}

/// The set of threads an ordering or an atomic is coherent with.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

/// A register of the body: an asm operand or one the body declares.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Reg {
    /// `$n`: the n-th operand of the constraint string.
    Arg(u32),
    /// A `.reg` the body declares, by index into [`super::Body::locals`].
    Local(u32),
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Operand {
    Reg(Reg),
    /// An immediate as a bit pattern: integers sign-extended to 64 bits,
    /// `0fXXXXXXXX` single-precision bits, `0dXXXXXXXXXXXXXXXX` doubles.
    Imm(u64),
    Special(Special),
    /// `_`: the result is discarded.
    Sink,
}

/// A predicate operand, possibly negated (`!p`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct PredOperand {
    pub value: Operand,
    pub negated: bool,
}

/// `[base]` or `[base+offset]`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Address {
    pub base: Operand,
    pub offset: i64,
}

/// Integer and floating-point two-operand arithmetic.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BinOp {
    Add,
    Sub,
    /// `mul.lo` (and plain `mul` of floats).
    MulLo,
    MulHi,
    /// `mul.wide`: the full product, twice the type's width.
    MulWide,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    /// `shr`: arithmetic for signed types, logical otherwise.
    Shr,
}

/// `mad.lo`/`.hi`/`.wide`; `Fma` for floating point (`mad.rn.f32`, `fma.rn`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum MadMode {
    Lo,
    Hi,
    Wide,
    Fma,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    Not,
    Neg,
    Abs,
    Brev,
    Popc,
    Clz,
}

/// `setp` comparisons: integer ones, then the unordered float ones.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned spellings (`lo`, `ls`, `hi`, `hs`) of `b`-typed compares.
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// `prmt.b32` modes: the default takes four selector nibbles.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum PrmtMode {
    Default,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// `cvt` rounding modifiers.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Round {
    /// Floating-point result rounding: `.rn`, `.rz`, `.rm`, `.rp`.
    Rn,
    Rz,
    Rm,
    Rp,
    /// Integer result rounding: `.rni`, `.rzi`, `.rmi`, `.rpi`.
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// The `.approx` transcendental forms.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ApproxFn {
    Rcp,
    Sqrt,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exch,
    Cas,
    Inc,
    Dec,
}

/// `redux.sync` operations.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// How `bar.red` combines its predicate.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BarReduce {
    Popc,
    And,
    Or,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BarKind {
    /// `bar.sync`, `barrier.sync`: arrive and wait.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red`: arrive, wait and combine a predicate.
    Red(BarReduce),
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FenceKind {
    /// `fence.sc`.
    Sc,
    /// `fence.acq_rel`.
    AcqRel,
    /// `membar` (equivalent to `fence.sc` since sm_70).
    Membar,
}

/// The qualifiers of a load or store.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct MemQual {
    pub space: Space,
    pub sem: Sem,
    pub scope: Option<Scope>,
    /// `.ca`, `.cg`, `.cs`, `.lu`, `.cv`, `.wb`, `.wt`, without the dot.
    pub cache: Option<String>,
    /// `.nc`: through the non-coherent (read-only) cache.
    pub nc: bool,
    /// `.L1::no_allocate`, `.L2::64B` and the like, without the dot.
    pub hints: Vec<String>,
}

/// One PTX instruction, decoded.
#[derive(Clone, PartialEq, Debug)]
pub enum Op {
    /// `mov`: `src` is a register, an immediate or a special register.
    Mov {
        ty: Ty,
        dst: Operand,
        src: Operand,
    },
    /// `mov.b64 d, {a, b}`: `parts[0]` is the least significant.
    Pack {
        ty: Ty,
        dst: Operand,
        parts: Vec<Operand>,
    },
    /// `mov.b64 {a, b}, s`: `dsts[0]` gets the least significant part.
    Unpack {
        ty: Ty,
        dsts: Vec<Operand>,
        src: Operand,
    },
    /// `cvta.SPACE` (`to_generic`) or `cvta.to.SPACE`.
    Cvta {
        to_generic: bool,
        space: Space,
        ty: Ty,
        dst: Operand,
        src: Operand,
    },
    Cvt {
        to: Ty,
        from: Ty,
        round: Option<Round>,
        ftz: bool,
        sat: bool,
        dst: Operand,
        src: Operand,
    },
    /// `sat` clamps `add`/`sub` of `.s32` (and floats to [0, 1]); `ftz`
    /// flushes single-precision subnormals to zero.
    Binary {
        op: BinOp,
        ty: Ty,
        sat: bool,
        ftz: bool,
        dst: Operand,
        a: Operand,
        b: Operand,
    },
    Mad {
        mode: MadMode,
        ty: Ty,
        ftz: bool,
        dst: Operand,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    Unary {
        op: UnaryOp,
        ty: Ty,
        dst: Operand,
        a: Operand,
    },
    /// `selp d, a, b, c`: `a` where `c` holds, else `b`.
    Selp {
        ty: Ty,
        dst: Operand,
        a: Operand,
        b: Operand,
        c: PredOperand,
    },
    /// `setp.cmp[.bool] p[|q], a, b[, c]`: `q` gets the complement.
    Setp {
        cmp: Cmp,
        ty: Ty,
        dst: Operand,
        dst_not: Option<Operand>,
        a: Operand,
        b: Operand,
        combine: Option<(BoolOp, PredOperand)>,
    },
    Prmt {
        mode: PrmtMode,
        dst: Operand,
        a: Operand,
        b: Operand,
        c: Operand,
    },
    Bfe {
        ty: Ty,
        dst: Operand,
        a: Operand,
        pos: Operand,
        len: Operand,
    },
    /// `bfi d, insert, base, pos, len`: the low `len` bits of `insert`
    /// replace those of `base` from bit `pos` up.
    Bfi {
        ty: Ty,
        dst: Operand,
        insert: Operand,
        base: Operand,
        pos: Operand,
        len: Operand,
    },
    Lop3 {
        dst: Operand,
        a: Operand,
        b: Operand,
        c: Operand,
        lut: u8,
    },
    /// `shf.l`/`shf.r` on the 64-bit `hi:lo`, `.wrap` or `.clamp`.
    Shf {
        left: bool,
        clamp: bool,
        dst: Operand,
        lo: Operand,
        hi: Operand,
        n: Operand,
    },
    Approx {
        f: ApproxFn,
        ty: Ty,
        ftz: bool,
        dst: Operand,
        a: Operand,
    },
    Ld {
        mem: MemQual,
        vec: u8,
        ty: Ty,
        dsts: Vec<Operand>,
        addr: Address,
    },
    St {
        mem: MemQual,
        vec: u8,
        ty: Ty,
        addr: Address,
        srcs: Vec<Operand>,
    },
    /// `atom` (with `dsts`) and `red` (without): `srcs` holds one value
    /// per vector element, or compare then swap for `.cas`.
    Atom {
        op: AtomOp,
        space: Space,
        sem: Sem,
        scope: Scope,
        ty: Ty,
        vec: u8,
        dsts: Vec<Operand>,
        addr: Address,
        srcs: Vec<Operand>,
    },
    Fence {
        kind: FenceKind,
        scope: Scope,
    },
    Shfl {
        mode: ShflMode,
        dst: Operand,
        pred_out: Option<Operand>,
        a: Operand,
        b: Operand,
        c: Operand,
        mask: Operand,
    },
    Vote {
        mode: VoteMode,
        dst: Operand,
        pred: PredOperand,
        mask: Operand,
    },
    Match {
        all: bool,
        ty: Ty,
        dst: Operand,
        pred_out: Option<Operand>,
        a: Operand,
        mask: Operand,
    },
    Redux {
        op: ReduxOp,
        ty: Ty,
        dst: Operand,
        a: Operand,
        mask: Operand,
    },
    /// `elect.sync d|p, mask`: one leader lane of `mask`.
    Elect {
        dst: Operand,
        pred_out: Option<Operand>,
        mask: Operand,
    },
    /// Block barriers. `result` and `pred` only for `bar.red`.
    Bar {
        kind: BarKind,
        aligned: bool,
        id: Operand,
        count: Option<Operand>,
        result: Option<Operand>,
        pred: Option<PredOperand>,
    },
    Nanosleep {
        t: Operand,
    },
    Trap,
    /// `cp.async.ca|cg.shared.global [dst], [src], size[, src_size]`.
    CpAsync {
        dst: Address,
        src: Address,
        size: Operand,
        src_size: Option<Operand>,
    },
    CpAsyncCommit,
    /// `cp.async.wait_group n`; `None` for `cp.async.wait_all`.
    CpAsyncWait {
        groups: Option<Operand>,
    },
}

/// An instruction of a body with its guard and where it was written.
#[derive(Clone, PartialEq, Debug)]
pub struct Inst {
    /// `@p` / `@!p`: runs only where the predicate holds.
    pub guard: Option<PredOperand>,
    pub op: Op,
    /// The opcode as written (`ld.global.nc.v2.s32`), for messages.
    pub opcode: String,
    /// 1-based line within the asm text.
    pub line: u32,
}

impl Op {
    /// Every operand the instruction reads, in a fixed order per form; the
    /// evaluator ([`super::eval`]) takes their values in this order.
    pub fn reads(&self) -> Vec<Operand> {
        let pred = |p: &PredOperand| p.value;
        match self {
            Op::Mov { src, .. } | Op::Cvta { src, .. } | Op::Cvt { src, .. } => vec![*src],
            Op::Unpack { src, .. } => vec![*src],
            Op::Pack { parts, .. } => parts.clone(),
            Op::Binary { a, b, .. } => vec![*a, *b],
            Op::Mad { a, b, c, .. } => vec![*a, *b, *c],
            Op::Unary { a, .. } | Op::Approx { a, .. } => vec![*a],
            Op::Selp { a, b, c, .. } => vec![*a, *b, pred(c)],
            Op::Setp { a, b, combine, .. } => {
                let mut v = vec![*a, *b];
                v.extend(combine.iter().map(|(_, c)| pred(c)));
                v
            }
            Op::Prmt { a, b, c, .. } | Op::Lop3 { a, b, c, .. } => vec![*a, *b, *c],
            Op::Bfe { a, pos, len, .. } => vec![*a, *pos, *len],
            Op::Bfi {
                insert,
                base,
                pos,
                len,
                ..
            } => vec![*insert, *base, *pos, *len],
            Op::Shf { lo, hi, n, .. } => vec![*lo, *hi, *n],
            Op::Ld { addr, .. } => vec![addr.base],
            Op::St { addr, srcs, .. } | Op::Atom { addr, srcs, .. } => std::iter::once(addr.base)
                .chain(srcs.iter().copied())
                .collect(),
            Op::Shfl { a, b, c, mask, .. } => vec![*a, *b, *c, *mask],
            Op::Vote { pred: p, mask, .. } => vec![pred(p), *mask],
            Op::Match { a, mask, .. } | Op::Redux { a, mask, .. } => vec![*a, *mask],
            Op::Elect { mask, .. } => vec![*mask],
            Op::Bar {
                id, count, pred: p, ..
            } => std::iter::once(*id)
                .chain(*count)
                .chain(p.iter().map(pred))
                .collect(),
            Op::Nanosleep { t } => vec![*t],
            Op::CpAsync {
                dst,
                src,
                size,
                src_size,
            } => [dst.base, src.base, *size]
                .into_iter()
                .chain(*src_size)
                .collect(),
            Op::CpAsyncWait { groups } => groups.iter().copied().collect(),
            Op::Fence { .. } | Op::Trap | Op::CpAsyncCommit => Vec::new(),
        }
    }

    /// Every register the instruction writes, in a fixed order per form
    /// (the evaluator returns values in this order). `_` sinks included.
    pub fn writes(&self) -> Vec<Operand> {
        match self {
            Op::Mov { dst, .. }
            | Op::Pack { dst, .. }
            | Op::Cvta { dst, .. }
            | Op::Cvt { dst, .. }
            | Op::Binary { dst, .. }
            | Op::Mad { dst, .. }
            | Op::Unary { dst, .. }
            | Op::Selp { dst, .. }
            | Op::Prmt { dst, .. }
            | Op::Bfe { dst, .. }
            | Op::Bfi { dst, .. }
            | Op::Lop3 { dst, .. }
            | Op::Shf { dst, .. }
            | Op::Approx { dst, .. }
            | Op::Vote { dst, .. }
            | Op::Redux { dst, .. } => vec![*dst],
            Op::Setp { dst, dst_not, .. } => std::iter::once(*dst).chain(*dst_not).collect(),
            Op::Shfl { dst, pred_out, .. }
            | Op::Match { dst, pred_out, .. }
            | Op::Elect { dst, pred_out, .. } => std::iter::once(*dst).chain(*pred_out).collect(),
            Op::Unpack { dsts, .. } | Op::Ld { dsts, .. } | Op::Atom { dsts, .. } => dsts.clone(),
            Op::Bar { result, .. } => result.iter().copied().collect(),
            Op::St { .. }
            | Op::Fence { .. }
            | Op::Nanosleep { .. }
            | Op::Trap
            | Op::CpAsync { .. }
            | Op::CpAsyncCommit
            | Op::CpAsyncWait { .. } => Vec::new(),
        }
    }
}
