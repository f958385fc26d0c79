//! The decoded form the interpreter runs: one flat `Vec<Op>` per function
//! with every operand resolved to a register slot, so the hot loop never
//! looks at the IR, a type table or a hash map.
//!
//! A value occupies one slot per scalar leaf (a `<4 x float>` takes four
//! consecutive slots, `{ i32, i1 }` two). Each slot holds 32 lanes of `u64`
//! (struct of arrays): lane `l` of slot `s` lives at `s * 32 + l`. Integers
//! are kept zero-extended to their width, floats as their bit patterns,
//! pointers in the encoding of [`super::addr`].

use super::math::PureFn;
use super::scalar::{Cast, FTy, FloatOp, IntOp, Scalar};
pub use crate::ir::intrinsics::Redux;
use crate::ir::intrinsics::{BarrierReduce, ShflMode, VoteMode};
use crate::ir::{FuncId, InstId, IntPred, Module, Position, RmwOp, SiteKind};
use std::collections::BTreeMap;

pub type Slot = u32;

/// The block id standing for the post-dominator tree's virtual exit.
pub const EXIT: u32 = u32::MAX;

/// One scalar of a value laid out in memory.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Leaf {
    pub offset: u32,
    pub scalar: Scalar,
}

/// A read-modify-write operation, from `atomicrmw` or an NVVM intrinsic.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum RmwKind {
    Rmw(RmwOp),
    /// Compare and swap: operand `cmp` against the old value.
    Cas,
}

#[derive(Clone, Debug)]
pub struct Atomic {
    pub kind: RmwKind,
    pub scalar: Scalar,
    pub dst: Slot,
    pub addr: Slot,
    pub val: Slot,
    /// The expected value of a compare-and-swap.
    pub cmp: Slot,
    /// `cmpxchg` returns `{ old, success }`: the success flag goes to `dst + 1`.
    pub with_flag: bool,
    pub site: u32,
}

/// `getelementptr`: a constant offset plus scaled variable indices.
#[derive(Clone, Debug)]
pub struct Gep {
    pub dst: Slot,
    pub base: Slot,
    pub offset: i64,
    /// (index slot, index bits, scale in bytes).
    pub indices: Vec<(Slot, u8, i64)>,
}

/// A load or store of a vector or aggregate, leaf by leaf.
#[derive(Clone, Debug)]
pub struct Leaves {
    /// The register value: loaded into, or stored from.
    pub value: Slot,
    pub addr: Slot,
    pub leaves: Vec<Leaf>,
    /// Bytes the whole value spans, for the cost model.
    pub bytes: u32,
    pub site: u32,
}

/// A bit cast between values of different leaf shapes (`<2 x half>` to `i32`).
#[derive(Clone, Debug)]
pub struct Reinterpret {
    pub dst: Slot,
    pub src: Slot,
    pub from: Vec<Leaf>,
    pub to: Vec<Leaf>,
    pub bytes: u32,
}

#[derive(Clone, Debug)]
pub struct ShuffleVector {
    pub dst: Slot,
    pub a: Slot,
    pub b: Slot,
    /// Element count of `a` (indices at or past it pick from `b`).
    pub len: u32,
    /// Source element per result element; `None` for poison.
    pub mask: Vec<Option<u32>>,
}

/// `memcpy`/`memmove` (`load_site` is for the source) or `memset`; the
/// sites are [`Requests`] indices.
#[derive(Clone, Debug)]
pub struct MemOp {
    pub dst: Slot,
    /// The source address, or the byte value for `memset`.
    pub src: Slot,
    pub len: Slot,
    pub len_bits: u8,
    pub is_set: bool,
    pub store_site: u32,
    pub load_site: u32,
}

#[derive(Clone, Debug)]
pub struct Call {
    /// Index into [`super::Program::funcs`].
    pub callee: u32,
    /// Caller slot and word count of each argument, in order.
    pub args: Vec<(Slot, u32)>,
    pub dst: Slot,
    pub ret_words: u32,
}

/// A pure math function applied lane by lane (and element by element).
#[derive(Clone, Debug)]
pub struct Math {
    pub f: PureFn,
    pub dst: Slot,
    /// Argument slots; `true` for vectors, read element by element.
    pub args: Vec<(Slot, bool)>,
    /// Integer width for width-generic intrinsics (`llvm.smax.i16`).
    pub bits: u8,
    /// Vector elements (1 for scalars).
    pub n: u8,
    /// Result words per element (2 for `{ iN, i1 }` results).
    pub results: u8,
}

/// Operations that read other lanes of the warp.
#[derive(Clone, Debug)]
pub enum Warp {
    /// `shfl.sync`: operands mask, value, lane or offset, packed clamp.
    Shfl {
        mode: ShflMode,
        dst: Slot,
        value: Slot,
        lane: Slot,
        clamp: Slot,
        /// The `p` form also returns whether the source lane was in range.
        with_pred: bool,
    },
    Vote {
        mode: VoteMode,
        dst: Slot,
        mask: Slot,
        pred: Slot,
    },
    MatchAny {
        dst: Slot,
        mask: Slot,
        value: Slot,
    },
    /// Returns `{ mask, all-equal }`.
    MatchAll {
        dst: Slot,
        mask: Slot,
        value: Slot,
    },
    Redux {
        op: Redux,
        dst: Slot,
        value: Slot,
        mask: Slot,
    },
    ActiveMask {
        dst: Slot,
    },
    /// `elect.sync`: the lowest active lane of the mask leads; `dst` gets
    /// its lane number, `dst + 1` whether this lane is it.
    Elect {
        dst: Slot,
        mask: Slot,
    },
}

/// A register-to-register instruction of an inline-asm body
/// ([`crate::ptx::run::step`]), lane by lane.
#[derive(Clone, Debug)]
pub struct PtxAlu {
    pub op: crate::ptx::Op,
    /// The values of [`crate::ptx::Op::reads`], in order.
    pub reads: Vec<Slot>,
    /// Where each result goes, with the register's width in bits.
    pub writes: Vec<(Slot, u32)>,
    /// The instruction as written, for errors.
    pub opcode: String,
    /// Its line in the asm text.
    pub line: u32,
}

#[derive(Clone, Debug)]
pub struct Switch {
    pub cond: Slot,
    pub bits: u8,
    /// (case value, edge), the value zero-extended from `bits`.
    pub cases: Vec<(u64, u32)>,
    pub default: u32,
    pub site: u32,
    pub ipdom: u32,
}

/// A call of a function that writes through pointers (`sincosf`, `frexpf`):
/// the pure part computes the results, which are then stored.
#[derive(Clone, Debug)]
pub struct OutParams {
    pub math: Math,
    /// Pointer arguments receiving result words `1..`, with their scalar.
    pub outputs: Vec<(Slot, Scalar)>,
    /// Whether result word 0 is the return value (else `void`).
    pub returns: bool,
}

/// Why the kernel stops with an error when it reaches this.
#[derive(Clone, Debug)]
pub enum Trap {
    /// `llvm.trap` / `__trap()`.
    Trap,
    /// `__assertfail(message, file, line, function, size)`.
    Assert {
        message: Slot,
        file: Slot,
        line: Slot,
    },
    Unreachable,
}

#[derive(Clone, Debug)]
pub enum Op {
    Int {
        op: IntOp,
        bits: u8,
        n: u8,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    Float {
        op: FloatOp,
        ty: FTy,
        n: u8,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    FNeg {
        ty: FTy,
        n: u8,
        dst: Slot,
        a: Slot,
    },
    ICmp {
        pred: IntPred,
        bits: u8,
        n: u8,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    FCmp {
        pred: crate::ir::FloatPred,
        ty: FTy,
        n: u8,
        dst: Slot,
        a: Slot,
        b: Slot,
    },
    /// `n` result words; with `per_elem` the condition is a vector too.
    Select {
        n: u8,
        per_elem: bool,
        dst: Slot,
        cond: Slot,
        a: Slot,
        b: Slot,
    },
    Cast {
        cast: Cast,
        n: u8,
        dst: Slot,
        a: Slot,
    },
    /// Copies `n` words (freeze, same-shape bit casts, extract/insertvalue parts).
    Copy {
        n: u32,
        dst: Slot,
        src: Slot,
    },
    /// `insertvalue`: the aggregate with `val_words` words at `start` replaced.
    InsertValue {
        dst: Slot,
        agg: Slot,
        val: Slot,
        start: u32,
        agg_words: u32,
        val_words: u32,
    },
    Reinterpret(Box<Reinterpret>),
    Gep(Box<Gep>),
    /// Element `idx` of a vector of `len` one-word elements.
    ExtractElement {
        dst: Slot,
        vec: Slot,
        idx: Slot,
        idx_bits: u8,
        len: u32,
    },
    InsertElement {
        dst: Slot,
        vec: Slot,
        val: Slot,
        idx: Slot,
        idx_bits: u8,
        len: u32,
    },
    ShuffleVector(Box<ShuffleVector>),
    Load {
        dst: Slot,
        addr: Slot,
        scalar: Scalar,
        site: u32,
    },
    LoadLeaves(Box<Leaves>),
    Store {
        src: Slot,
        addr: Slot,
        scalar: Scalar,
        site: u32,
    },
    StoreLeaves(Box<Leaves>),
    Atomic(Box<Atomic>),
    Mem(Box<MemOp>),
    Alloca {
        dst: Slot,
        size: u32,
        align: u32,
        /// A variable element count, with its width.
        count: Option<(Slot, u8)>,
    },
    Call(Box<Call>),
    Special {
        dst: Slot,
        reg: crate::ir::intrinsics::SReg,
    },
    Math(Box<Math>),
    OutParams(Box<OutParams>),
    Warp(Box<Warp>),
    /// `__syncthreads()` and its reducing forms (`pred` unused for `None`).
    Barrier {
        reduce: BarrierReduce,
        dst: Slot,
        pred: Slot,
    },
    /// Device `printf`: format string and packed argument buffer.
    Printf {
        dst: Slot,
        format: Slot,
        args: Slot,
    },
    /// Fences, hints: issued, nothing to compute.
    Nop,
    /// `__syncwarp(mask)`: orders the memory accesses of the lanes it
    /// names, which the race check reads; nothing to compute.
    WarpSync {
        mask: Slot,
    },
    Trap(Box<Trap>),
    Br {
        edge: u32,
    },
    CondBr {
        cond: Slot,
        /// Edges taken on true and on false.
        edges: [u32; 2],
        site: u32,
        ipdom: u32,
    },
    Switch(Box<Switch>),
    Ret {
        src: Slot,
        words: u32,
    },
    /// Decoding failed; running it is an error naming the instruction.
    Unsupported(Box<String>),
    /// A PTX register-to-register instruction of an asm body.
    Ptx(Box<PtxAlu>),
    /// The address a PTX memory instruction uses: `base + offset`, where
    /// a base without a space tag (a 32-bit shared offset, or one
    /// `cvta.to.shared` made) gets the instruction's space `tag` (0:
    /// global or generic, used as it is).
    AsmAddr {
        dst: Slot,
        base: Slot,
        offset: i32,
        tag: u8,
    },
    /// A PTX special register that no NVVM intrinsic reads (the reserved
    /// shared-memory window, shared-memory sizes, environment registers).
    AsmSpecial {
        dst: Slot,
        reg: crate::ptx::Special,
    },
    /// The next op runs only in the lanes whose predicate `pred` holds
    /// (fails, when `negated`): a PTX guard `@p`.
    Guard {
        pred: Slot,
        negated: bool,
    },
    /// Entering the asm body with this index in the module's table.
    AsmRun {
        asm: u32,
    },
    /// `__warpcheck_grid_sync()`: every thread of the grid meets here.
    GridSync,
}

/// A CFG edge with the phi copies it performs.
#[derive(Clone, Debug)]
pub struct Edge {
    pub target: u32,
    pub pc: u32,
    /// (destination, source) word copies, done as one parallel copy.
    pub copies: Vec<(Slot, Slot)>,
    /// Some destination is also a source: copy through a buffer.
    pub parallel: bool,
    /// Phi instructions executed, for the step count.
    pub phis: u32,
}

/// A decoded function.
#[derive(Clone, Debug)]
pub struct Func {
    pub id: FuncId,
    pub code: Vec<Op>,
    /// The IR instruction each op came from (for error positions).
    pub origin: Vec<InstId>,
    /// First op of each block (after its phis).
    pub block_pc: Vec<u32>,
    /// Blocks from which no path reaches a barrier (or a call, which might):
    /// lanes waiting there will return without meeting a `__syncthreads()`.
    pub barrier_free: Vec<bool>,
    pub edges: Vec<Edge>,
    /// Slot and word count of each parameter.
    pub params: Vec<(Slot, u32)>,
    /// Where `ret` leaves the return value until the frame is popped.
    pub ret_slot: Slot,
    pub slots: u32,
    /// The register file with every constant already in place.
    pub template: Vec<u64>,
}

impl Func {
    /// The block an op belongs to.
    pub fn block_of(&self, pc: u32) -> usize {
        self.block_pc
            .partition_point(|&start| start <= pc)
            .saturating_sub(1)
    }
}

/// A branch, or one request of a memory access (`memory::lower`'s
/// pieces), as the cost report names it.
#[derive(Clone, Debug)]
pub struct SiteInfo {
    pub kind: SiteKind,
    pub func: FuncId,
    /// The instruction whose position the site has.
    pub inst: InstId,
}

/// How one access of an op is counted: a request per piece the backend
/// makes of it (none for a piece of a merged vector access), each at its
/// own site. Memory ops name their access by its index in
/// [`super::Program::requests`].
#[derive(Clone, Debug, Default)]
pub struct Requests {
    pub pieces: Vec<Request>,
    /// The instruction making the access, for the sanitizer's reports.
    pub inst: Option<(FuncId, InstId)>,
}

/// One piece: `bytes` (0: the op's own width per lane) at `offset` from
/// the access's address, issued once or once per byte of a copy loop.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub site: u32,
    pub offset: i32,
    pub bytes: u32,
    pub repeat: crate::memory::lower::Repeat,
    /// An atomic: its lanes serialise on one address.
    pub atomic: bool,
}

impl SiteInfo {
    /// The site's source position: file, line and column (empty and zero
    /// without debug info), as the report keys it.
    pub fn position(&self, m: &Module) -> (String, u32, u32) {
        let f = m.func(self.func);
        let pos = m.inst_pos(f, self.inst).map(|p| Position::resolve(m, &p));
        pos.map(|p| (p.file, p.line, p.col)).unwrap_or_default()
    }
}

/// Numbers the branch sites by the report key they merge into (branches
/// have no space, so the key, their position, is known before the run):
/// branches sharing a number are one site of the report, and a warp
/// running any of them runs that site. Returns each site's number
/// (`u32::MAX` for memory sites) and how many numbers there are.
pub fn branch_groups(m: &Module, sites: &[SiteInfo]) -> (Vec<u32>, usize) {
    let mut numbers: BTreeMap<(String, u32, u32), u32> = BTreeMap::new();
    let groups = sites
        .iter()
        .map(|info| match info.kind {
            SiteKind::Branch => {
                let next = numbers.len() as u32;
                *numbers.entry(info.position(m)).or_insert(next)
            }
            _ => u32::MAX,
        })
        .collect();
    (groups, numbers.len())
}
