//! The NVVM and LLVM intrinsics (and the libdevice and CUDA runtime
//! routines) warpcheck knows by name. Classifying them once here keeps
//! every analysis, and the simulator, a `match` on what a call is rather
//! than on how LLVM spells it.

/// A dimension of a 3-D special register.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn index(self) -> usize {
        self as usize
    }

    fn parse(s: &str) -> Option<Dim> {
        match s {
            "x" => Some(Dim::X),
            "y" => Some(Dim::Y),
            "z" => Some(Dim::Z),
            _ => None,
        }
    }
}

/// PTX special registers (`llvm.nvvm.read.ptx.sreg.*`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum SReg {
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    Nctaid(Dim),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    WarpSize,
    /// `%lanemask_eq` and friends: differ per lane by definition.
    LaneMask(LaneMask),
    /// Clocks and timers: differ between threads and runs.
    Clock,
}

impl SReg {
    /// Classifies the register named after `llvm.nvvm.read.ptx.sreg.`.
    pub fn parse(reg: &str) -> Option<SReg> {
        let dim = |prefix: &str| reg.strip_prefix(prefix).and_then(Dim::parse);
        if let Some(d) = dim("tid.") {
            return Some(SReg::Tid(d));
        }
        if let Some(d) = dim("ntid.") {
            return Some(SReg::Ntid(d));
        }
        if let Some(d) = dim("ctaid.") {
            return Some(SReg::Ctaid(d));
        }
        if let Some(d) = dim("nctaid.") {
            return Some(SReg::Nctaid(d));
        }
        Some(match reg {
            "laneid" => SReg::LaneId,
            "warpid" => SReg::WarpId,
            "nwarpid" => SReg::NWarpId,
            "smid" => SReg::SmId,
            "nsmid" => SReg::NSmId,
            "gridid" => SReg::GridId,
            "warpsize" => SReg::WarpSize,
            "lanemask.eq" => SReg::LaneMask(LaneMask::Eq),
            "lanemask.le" => SReg::LaneMask(LaneMask::Le),
            "lanemask.lt" => SReg::LaneMask(LaneMask::Lt),
            "lanemask.ge" => SReg::LaneMask(LaneMask::Ge),
            "lanemask.gt" => SReg::LaneMask(LaneMask::Gt),
            _ if reg.starts_with("clock") || reg.starts_with("globaltimer") => SReg::Clock,
            _ => return None,
        })
    }
}

/// Which lanes a `%lanemask_*` register sets, relative to the reading lane.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum LaneMask {
    Eq,
    Le,
    Lt,
    Ge,
    Gt,
}

/// How a `__syncthreads` variant combines its predicate.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BarrierReduce {
    None,
    Popc,
    And,
    Or,
}

/// A block-wide barrier: which barrier and threads its operands name, and
/// how it combines a predicate.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Barrier {
    pub reduce: BarrierReduce,
    pub operands: BarrierOperands,
    /// `.aligned`: every thread that waits reaches the same instruction
    /// (all forms but `barrier.sync` and `barrier.sync.cnt`).
    pub aligned: bool,
}

impl Barrier {
    /// Whether the whole block meets here at one instruction: `.aligned`
    /// and without a thread count, so that it ends a phase of the block's
    /// threads (`__syncthreads` and its reductions, `barrier.n`).
    pub fn ends_block_phase(self) -> bool {
        self.aligned && self.operands != BarrierOperands::IdAndCount
    }
}

/// What a barrier's operands say, besides a reduction's predicate.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BarrierOperands {
    /// `barrier0` and its reductions: barrier 0, every thread of the
    /// block; operand 0 is the predicate of a reduction.
    Implicit,
    /// `barrier.n(id)`, `barrier.sync(id)`: operand 0 names the barrier.
    Id,
    /// `barrier(id, n)`, `barrier.sync.cnt(id, n)`: operand 1 is the
    /// number of threads that meet there.
    IdAndCount,
}

/// What an NVVM atomic (`llvm.nvvm.atomic.*`) does to memory. `Add` adds
/// floats when its operand is one (`add.gen.f`, `load.add.f32`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum AtomicOp {
    Add,
    Exch,
    Max,
    Min,
    /// Wrapping increment (`atomicInc`): old >= operand gives 0.
    Inc,
    /// Wrapping decrement (`atomicDec`): old == 0 or old > operand gives
    /// the operand.
    Dec,
    And,
    Or,
    Xor,
    Cas,
}

impl AtomicOp {
    /// The name after `atomic.`: `load.inc.32`, `add.gen.f.cta`,
    /// `cas.gen.i.sys`, ...
    fn parse(rest: &str) -> Option<AtomicOp> {
        if let Some(op) = rest.strip_prefix("load.") {
            return match op.split('.').next() {
                Some("inc") => Some(AtomicOp::Inc),
                Some("dec") => Some(AtomicOp::Dec),
                Some("add") => Some(AtomicOp::Add),
                _ => None,
            };
        }
        Some(match rest.split('.').next()? {
            "add" => AtomicOp::Add,
            "exch" => AtomicOp::Exch,
            "max" => AtomicOp::Max,
            "min" => AtomicOp::Min,
            "inc" => AtomicOp::Inc,
            "dec" => AtomicOp::Dec,
            "and" => AtomicOp::And,
            "or" => AtomicOp::Or,
            "xor" => AtomicOp::Xor,
            "cas" => AtomicOp::Cas,
            _ => return None,
        })
    }
}

/// What `redux.sync` combines the mask's lanes with, on 32-bit integers
/// (`Min`/`Max` signed, `UMin`/`UMax` unsigned).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Redux {
    Add,
    Min,
    Max,
    UMin,
    UMax,
    And,
    Or,
    Xor,
}

impl Redux {
    fn parse(op: &str) -> Option<Redux> {
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
}

/// `llvm.smin`, `llvm.smax`, `llvm.umin` and `llvm.umax`: the smaller or
/// larger of two integers.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct MinMax {
    pub max: bool,
    pub signed: bool,
}

impl MinMax {
    fn parse(base: &str) -> Option<MinMax> {
        let (signed, max) = match base {
            "smin" => (true, false),
            "smax" => (true, true),
            "umin" => (false, false),
            "umax" => (false, true),
            _ => return None,
        };
        Some(MinMax { max, signed })
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

/// The `c` operand of `shfl.sync`, unpacked. Bits 8-12 are the segment
/// mask: lanes that agree on those bits form a segment, and a shuffle
/// never reads across segments (zero: the whole warp is one). Bits 0-4 are
/// the clamp: the last lane of a segment a source may be (for `up`, the
/// first lane that may read from below).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct ShflControl {
    pub segment_mask: u32,
    pub clamp: u32,
}

impl ShflControl {
    pub fn from_bits(c: u32) -> ShflControl {
        ShflControl {
            segment_mask: (c >> 8) & 0x1f,
            clamp: c & 0x1f,
        }
    }

    pub fn bits(self) -> u32 {
        (self.segment_mask << 8) | self.clamp
    }

    /// What CUDA's `__shfl_*_sync(mask, v, x, width)` passes for segments
    /// of `width` lanes (a power of two up to 32): the segment mask
    /// `32 - width`, clamp 31, or 0 for `up`, whose sources lie below.
    pub fn cuda(mode: ShflMode, width: u32) -> ShflControl {
        let clamp = if mode == ShflMode::Up { 0 } else { 31 };
        ShflControl::from_bits(((32 - width) << 8) | clamp)
    }

    /// One segment: `idx` then reads the same lane for every lane.
    pub fn whole_warp(self) -> bool {
        self.segment_mask == 0
    }

    /// The lane that `lane` reads given the operand `b` (a lane index or
    /// an offset), and whether it is in range; out of range, a lane reads
    /// its own value (PTX ISA, `shfl.sync`).
    pub fn source(self, mode: ShflMode, lane: u32, b: u32) -> (u32, bool) {
        let (b, seg) = (b & 0x1f, self.segment_mask);
        let min_lane = lane & seg;
        let max_lane = min_lane | (self.clamp & !seg);
        let (j, ok) = match mode {
            ShflMode::Up => {
                let j = i64::from(lane) - i64::from(b);
                (j, j >= i64::from(max_lane))
            }
            ShflMode::Down => {
                let j = i64::from(lane) + i64::from(b);
                (j, j <= i64::from(max_lane))
            }
            ShflMode::Bfly => {
                let j = i64::from(lane ^ b);
                (j, j <= i64::from(max_lane))
            }
            ShflMode::Idx => {
                let j = i64::from(min_lane | (b & !seg & 0x1f));
                (j, j <= i64::from(max_lane))
            }
        };
        if ok {
            ((j as u32) & 31, true)
        } else {
            (lane, false)
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// The families of names [`Intrinsic`] reads; the simulator keeps a table
/// of the pure functions of each.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Family {
    /// `llvm.nvvm.*`.
    Nvvm,
    /// The target-independent `llvm.*`.
    Llvm,
    /// libdevice's `__nv_*`.
    Libdevice,
}

impl Family {
    /// The family of `name` and the name within it: `(Nvvm, "fabs.f")`
    /// for `llvm.nvvm.fabs.f`, `(Libdevice, "sinf")` for `__nv_sinf`.
    pub fn split(name: &str) -> Option<(Family, &str)> {
        if let Some(rest) = name.strip_prefix("llvm.nvvm.") {
            return Some((Family::Nvvm, rest));
        }
        if let Some(rest) = name.strip_prefix("llvm.") {
            return Some((Family::Llvm, rest));
        }
        name.strip_prefix("__nv_")
            .map(|rest| (Family::Libdevice, rest))
    }
}

/// An overloaded `llvm.*` intrinsic's name (after `llvm.`) without its
/// type suffixes: `sadd.with.overflow` for `sadd.with.overflow.i32`.
pub fn overload_base(rest: &str) -> &str {
    let is_type = |seg: &str| {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        seg == "bf16"
            || ["i", "f", "p"]
                .iter()
                .any(|p| seg.strip_prefix(p).is_some_and(digits))
            || (seg.starts_with('v')
                && seg.len() > 2
                && seg[1..].starts_with(|c: char| c.is_ascii_digit()))
    };
    let mut end = rest.len();
    for seg in rest.rsplit('.') {
        if !is_type(seg) {
            break;
        }
        end -= seg.len() + 1;
    }
    &rest[..end.min(rest.len())]
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Intrinsic {
    SReg(SReg),
    /// A block-wide barrier (`__syncthreads`, its reducing forms, `bar.sync`).
    Barrier(Barrier),
    /// `__syncwarp`.
    WarpSync,
    /// Memory fences (`__threadfence*`).
    Fence,
    /// `shfl.sync.*`: operands are mask, value, lane/offset, clamp. With
    /// `pred` the result is `{value, in-range}`.
    Shfl {
        mode: ShflMode,
        pred: bool,
    },
    /// `vote.*.sync`: operands are mask and predicate.
    Vote(VoteMode),
    /// `match.any.sync`: lanes holding equal values.
    MatchAny,
    /// `match.all.sync`.
    MatchAll,
    /// `activemask`: the lanes executing it.
    ActiveMask,
    /// `redux.sync.*`: operands are value and mask. `None`: an operation
    /// not modelled (newer PTX's float reductions).
    Redux(Option<Redux>),
    /// Atomic read-modify-write intrinsics (`llvm.nvvm.atomic.*`); operand
    /// 0 is the address. `None`: an operation not modelled.
    Atomic(Option<AtomicOp>),
    /// `ldg`/`ldu` global loads; operand 0 is the address.
    GlobalLoad,
    /// `llvm.nvvm.ptr.*.to.*`: operand 0 moved between the generic and a
    /// specific address space.
    PtrCast,
    /// Cache hints (`llvm.prefetch`, `llvm.nvvm.prefetch*`).
    Prefetch,
    /// `nanosleep`.
    Sleep,
    MemCpy,
    MemMove,
    MemSet,
    /// No effect on values or memory the analyses model (lifetime, debug).
    NoOp,
    /// `llvm.assume(c)`: no effect either, but `c` holds once it has run
    /// (LLVM makes it undefined behaviour otherwise), which the cost
    /// stage takes as a fact.
    Assume,
    /// Integer minimum or maximum (a pure function too).
    MinMax(MinMax),
    /// A pure function of its operands: math, bit ops, libdevice. `alu`:
    /// one arithmetic instruction (bit operations, `abs`, min/max, add,
    /// multiply, `fma`), as opposed to what the special-function unit or a
    /// libdevice routine computes.
    Pure {
        alu: bool,
    },
    /// Device-side `printf`.
    Printf,
    /// `llvm.trap`, `llvm.ubsantrap`, `llvm.debugtrap`.
    Trap,
    /// `__assertfail(message, file, line, function, char size)`: CUDA's
    /// failed `assert`.
    AssertFail,
    /// `__warpcheck_grid_sync()`: the grid-wide barrier warpcheck's
    /// `cooperative_groups.h` declares for `this_grid().sync()`.
    GridSync,
    /// An intrinsic we do not know; analyses must be conservative.
    Unknown,
}

/// The intrinsic clang reads special register `reg` (`tid.x`, `laneid`)
/// with, for modules built by hand.
pub fn sreg_intrinsic(reg: &str) -> String {
    format!("llvm.nvvm.read.ptx.sreg.{reg}")
}

/// The debug intrinsics the loader reads source names from (LLVM 19's
/// intrinsic format): `llvm.dbg.value` binds a value to a variable,
/// `llvm.dbg.declare` its storage. Both are [`Intrinsic::NoOp`].
pub const DBG_VALUE: &str = "llvm.dbg.value";
pub const DBG_DECLARE: &str = "llvm.dbg.declare";

/// Whether `name` is `llvm.usub.sat.*`: `a − b`, or 0 where that would
/// wrap. It is [`Intrinsic::Pure`]; the ACF reads it as `umax(a, b) − b`
/// (clang's form of `i == 0 ? 0 : i − 1`).
pub fn is_unsigned_saturating_sub(name: &str) -> bool {
    matches!(Family::split(name), Some((Family::Llvm, rest)) if overload_base(rest) == "usub.sat")
}

/// Functions known never to return whatever their attributes say, for
/// modules built without them (`ir::builder`, IR written by hand).
pub fn never_returns(name: &str) -> bool {
    matches!(
        name,
        "llvm.trap" | "llvm.ubsantrap" | "__assertfail" | "__trap" | "abort"
    )
}

impl Intrinsic {
    /// Classifies a declared function by name; `None` for ordinary functions.
    pub fn from_name(name: &str) -> Option<Intrinsic> {
        Some(match Family::split(name) {
            Some((Family::Nvvm, rest)) => Self::nvvm(rest),
            Some((Family::Llvm, rest)) => Self::generic(rest),
            Some((Family::Libdevice, _)) => Intrinsic::Pure { alu: false },
            None => match name {
                "vprintf" => Intrinsic::Printf,
                "__assertfail" => Intrinsic::AssertFail,
                "__warpcheck_grid_sync" => Intrinsic::GridSync,
                _ => return None,
            },
        })
    }

    fn nvvm(rest: &str) -> Intrinsic {
        if let Some(reg) = rest.strip_prefix("read.ptx.sreg.") {
            return SReg::parse(reg).map_or(Intrinsic::Unknown, Intrinsic::SReg);
        }
        if let Some(barrier) = Self::barrier(rest) {
            return Intrinsic::Barrier(barrier);
        }
        let starts = |p: &str| rest.starts_with(p);
        match rest {
            "bar.warp.sync" => Intrinsic::WarpSync,
            "activemask" => Intrinsic::ActiveMask,
            "nanosleep" => Intrinsic::Sleep,
            _ if starts("membar") || starts("fence") => Intrinsic::Fence,
            _ if starts("shfl.sync.") => Self::shfl(&rest["shfl.sync.".len()..]),
            _ if starts("vote.") => Self::vote(&rest["vote.".len()..]),
            _ if starts("match.any.sync") => Intrinsic::MatchAny,
            _ if starts("match.all.sync") => Intrinsic::MatchAll,
            _ if starts("redux.sync.") => {
                Intrinsic::Redux(Redux::parse(&rest["redux.sync.".len()..]))
            }
            _ if starts("atomic.") => Intrinsic::Atomic(AtomicOp::parse(&rest["atomic.".len()..])),
            _ if starts("ldg.global") || starts("ldu.global") => Intrinsic::GlobalLoad,
            _ if starts("ptr.") => Intrinsic::PtrCast,
            _ if starts("prefetch") => Intrinsic::Prefetch,
            _ if Self::is_nvvm_math(rest) => Intrinsic::Pure {
                alu: Self::is_nvvm_alu(rest),
            },
            _ => Intrinsic::Unknown,
        }
    }

    fn barrier(rest: &str) -> Option<Barrier> {
        let (reduce, operands) = match rest {
            "barrier0" => (BarrierReduce::None, BarrierOperands::Implicit),
            "barrier0.popc" => (BarrierReduce::Popc, BarrierOperands::Implicit),
            "barrier0.and" => (BarrierReduce::And, BarrierOperands::Implicit),
            "barrier0.or" => (BarrierReduce::Or, BarrierOperands::Implicit),
            "barrier.n" | "barrier.sync" => (BarrierReduce::None, BarrierOperands::Id),
            "barrier" | "barrier.sync.cnt" => (BarrierReduce::None, BarrierOperands::IdAndCount),
            _ => return None,
        };
        // `barrier.sync` (and `.cnt`) is PTX's `barrier.sync`, which lets
        // threads wait at different instructions; the others are
        // `bar.sync`, that is `barrier.sync.aligned`.
        let aligned = !rest.starts_with("barrier.sync");
        Some(Barrier {
            reduce,
            operands,
            aligned,
        })
    }

    fn shfl(rest: &str) -> Intrinsic {
        let mut parts = rest.split('.');
        let mode = match parts.next() {
            Some("idx") => ShflMode::Idx,
            Some("up") => ShflMode::Up,
            Some("down") => ShflMode::Down,
            Some("bfly") => ShflMode::Bfly,
            _ => return Intrinsic::Unknown,
        };
        let pred = parts.any(|p| p == "p");
        Intrinsic::Shfl { mode, pred }
    }

    fn vote(rest: &str) -> Intrinsic {
        let mode = match rest.split('.').next() {
            Some("all") => VoteMode::All,
            Some("any") => VoteMode::Any,
            Some("uni") => VoteMode::Uni,
            Some("ballot") => VoteMode::Ballot,
            _ => return Intrinsic::Unknown,
        };
        Intrinsic::Vote(mode)
    }

    /// NVVM arithmetic intrinsics: pure functions of their operands.
    fn is_nvvm_math(rest: &str) -> bool {
        const PREFIXES: &[&str] = &[
            "fabs", "fmin", "fmax", "sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "div",
            "mul", "mul24", "umul24", "mulhi", "fma", "add", "saturate", "floor", "ceil", "trunc",
            "round", "prmt", "brev", "clz", "popc", "abs", "min", "max", "f2", "d2", "i2", "ui2",
            "ll2", "ull2", "bitcast", "lohi", "sad", "isspacep", "fns", "bf2", "h2", "ff2",
            "copysign",
        ];
        PREFIXES.iter().any(|p| rest.starts_with(p))
    }

    /// The NVVM arithmetic that is one ALU instruction.
    fn is_nvvm_alu(rest: &str) -> bool {
        const PREFIXES: &[&str] = &[
            "fabs", "fmin", "fmax", "fma", "add", "mul", "prmt", "brev", "clz", "popc", "abs",
            "min", "max", "bitcast", "lohi",
        ];
        PREFIXES.iter().any(|p| rest.starts_with(p))
    }

    /// The target-independent arithmetic that is one ALU instruction.
    fn is_generic_alu(rest: &str) -> bool {
        const PREFIXES: &[&str] = &[
            "abs",
            "fabs",
            "fma",
            "fmuladd",
            "minnum",
            "maxnum",
            "minimum",
            "maximum",
            "copysign",
            "ctpop",
            "ctlz",
            "cttz",
            "bitreverse",
            "bswap",
            "fshl",
            "fshr",
            "expect",
        ];
        PREFIXES.iter().any(|p| rest.starts_with(p))
    }

    fn generic(rest: &str) -> Intrinsic {
        const NOOPS: &[&str] = &[
            "lifetime.",
            "dbg.",
            "invariant.",
            "experimental.noalias",
            "sideeffect",
            "donothing",
            "pseudoprobe",
            "var.annotation",
            "ptr.annotation",
            "launder",
            "strip.invariant",
        ];
        const PURE: &[&str] = &[
            "smax",
            "smin",
            "umax",
            "umin",
            "abs",
            "fabs",
            "sqrt",
            "fma",
            "fmuladd",
            "minnum",
            "maxnum",
            "minimum",
            "maximum",
            "floor",
            "ceil",
            "trunc",
            "round",
            "rint",
            "nearbyint",
            "lround",
            "llround",
            "lrint",
            "llrint",
            "copysign",
            "ctpop",
            "ctlz",
            "cttz",
            "bitreverse",
            "bswap",
            "fshl",
            "fshr",
            "exp",
            "exp2",
            "exp10",
            "log",
            "log2",
            "log10",
            "sin",
            "cos",
            "tan",
            "pow",
            "powi",
            "ldexp",
            "frexp",
            "sadd.",
            "uadd.",
            "ssub.",
            "usub.",
            "smul.",
            "umul.",
            "sshl.",
            "ushl.",
            "expect",
            "is.fpclass",
            "canonicalize",
            "vector.reduce",
            "fptosi.sat",
            "fptoui.sat",
            "scmp",
            "ucmp",
            "threadlocal.address",
        ];
        if NOOPS.iter().any(|p| rest.starts_with(p)) {
            return Intrinsic::NoOp;
        }
        match rest {
            "assume" => return Intrinsic::Assume,
            "trap" | "ubsantrap" | "debugtrap" => return Intrinsic::Trap,
            _ if rest.starts_with("prefetch") => return Intrinsic::Prefetch,
            _ => {}
        }
        if let Some(m) = rest.split('.').next().and_then(MinMax::parse) {
            return Intrinsic::MinMax(m);
        }
        if rest.starts_with("memcpy") {
            return Intrinsic::MemCpy;
        }
        if rest.starts_with("memmove") {
            return Intrinsic::MemMove;
        }
        if rest.starts_with("memset") {
            return Intrinsic::MemSet;
        }
        if PURE.iter().any(|p| rest.starts_with(p)) {
            return Intrinsic::Pure {
                alu: Self::is_generic_alu(rest),
            };
        }
        Intrinsic::Unknown
    }

    /// Whether the intrinsic reads or writes memory through operand 0.
    pub fn accesses_memory(self) -> bool {
        matches!(
            self,
            Intrinsic::Atomic(_)
                | Intrinsic::GlobalLoad
                | Intrinsic::MemCpy
                | Intrinsic::MemMove
                | Intrinsic::MemSet
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_special_registers() {
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.read.ptx.sreg.tid.y"),
            Some(Intrinsic::SReg(SReg::Tid(Dim::Y)))
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.read.ptx.sreg.nctaid.z"),
            Some(Intrinsic::SReg(SReg::Nctaid(Dim::Z)))
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.read.ptx.sreg.laneid"),
            Some(Intrinsic::SReg(SReg::LaneId))
        );
        assert_eq!(
            SReg::parse("lanemask.lt"),
            Some(SReg::LaneMask(LaneMask::Lt))
        );
        assert_eq!(SReg::parse("lanemask.xx"), None);
    }

    #[test]
    fn classifies_warp_primitives() {
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.shfl.sync.down.i32"),
            Some(Intrinsic::Shfl {
                mode: ShflMode::Down,
                pred: false
            })
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.shfl.sync.idx.f32p"),
            Some(Intrinsic::Shfl {
                mode: ShflMode::Idx,
                pred: false
            })
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.vote.ballot.sync"),
            Some(Intrinsic::Vote(VoteMode::Ballot))
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.barrier0.popc"),
            Some(Intrinsic::Barrier(Barrier {
                reduce: BarrierReduce::Popc,
                operands: BarrierOperands::Implicit,
                aligned: true,
            }))
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.activemask"),
            Some(Intrinsic::ActiveMask)
        );
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.redux.sync.umax"),
            Some(Intrinsic::Redux(Some(Redux::UMax)))
        );
        // A reduction the simulator has no operation for is still one.
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.redux.sync.fmin.abs"),
            Some(Intrinsic::Redux(None))
        );
    }

    #[test]
    fn barriers_say_what_their_operands_name() {
        let barrier = |name: &str| match Intrinsic::from_name(name) {
            Some(Intrinsic::Barrier(b)) => (b.reduce, b.operands),
            other => panic!("{name}: {other:?}"),
        };
        use BarrierOperands::*;
        assert_eq!(
            barrier("llvm.nvvm.barrier0"),
            (BarrierReduce::None, Implicit)
        );
        assert_eq!(
            barrier("llvm.nvvm.barrier0.or"),
            (BarrierReduce::Or, Implicit)
        );
        // __nvvm_bar_n(id) and __barrier_sync(id).
        assert_eq!(barrier("llvm.nvvm.barrier.n"), (BarrierReduce::None, Id));
        assert_eq!(barrier("llvm.nvvm.barrier.sync"), (BarrierReduce::None, Id));
        // __nvvm_bar(id, n) and __barrier_sync_count(id, n).
        assert_eq!(
            barrier("llvm.nvvm.barrier"),
            (BarrierReduce::None, IdAndCount)
        );
        assert_eq!(
            barrier("llvm.nvvm.barrier.sync.cnt"),
            (BarrierReduce::None, IdAndCount)
        );
        // Cluster barriers are not the block's.
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.barrier.cluster.wait"),
            Some(Intrinsic::Unknown)
        );
    }

    #[test]
    fn atomics_name_their_operation() {
        let op = |name: &str| match Intrinsic::from_name(name) {
            Some(Intrinsic::Atomic(op)) => op,
            other => panic!("{name}: {other:?}"),
        };
        // atomicInc/atomicDec (LLVM 19) and the scoped forms of
        // __nvvm_atom_cta_* and __nvvm_atom_sys_*.
        assert_eq!(op("llvm.nvvm.atomic.load.inc.32.p0"), Some(AtomicOp::Inc));
        assert_eq!(op("llvm.nvvm.atomic.load.dec.32.p0"), Some(AtomicOp::Dec));
        assert_eq!(op("llvm.nvvm.atomic.load.add.f32.p0"), Some(AtomicOp::Add));
        assert_eq!(
            op("llvm.nvvm.atomic.add.gen.f.cta.f32.p0"),
            Some(AtomicOp::Add)
        );
        assert_eq!(
            op("llvm.nvvm.atomic.exch.gen.i.sys.i32.p0"),
            Some(AtomicOp::Exch)
        );
        assert_eq!(
            op("llvm.nvvm.atomic.max.gen.i.cta.i64.p0"),
            Some(AtomicOp::Max)
        );
        assert_eq!(
            op("llvm.nvvm.atomic.cas.gen.i.sys.i32.p0"),
            Some(AtomicOp::Cas)
        );
        // `load.` forms exist for inc, dec and add only.
        assert_eq!(op("llvm.nvvm.atomic.load.max.32.p0"), None);
        assert_eq!(op("llvm.nvvm.atomic.nand.gen.i.cta.i32.p0"), None);
    }

    #[test]
    fn classifies_what_the_simulator_runs() {
        let of = |name: &str| Intrinsic::from_name(name).unwrap();
        assert_eq!(of("llvm.nvvm.ptr.gen.to.shared.p3.p0"), Intrinsic::PtrCast);
        assert_eq!(of("llvm.nvvm.ptr.local.to.gen.p0.p5"), Intrinsic::PtrCast);
        assert_eq!(of("llvm.nvvm.prefetch.global.L2"), Intrinsic::Prefetch);
        assert_eq!(of("llvm.prefetch.p0"), Intrinsic::Prefetch);
        assert_eq!(of("llvm.nvvm.nanosleep"), Intrinsic::Sleep);
        for trap in ["llvm.trap", "llvm.ubsantrap", "llvm.debugtrap"] {
            assert_eq!(of(trap), Intrinsic::Trap, "{trap}");
        }
        assert_eq!(of("__assertfail"), Intrinsic::AssertFail);
        assert_eq!(of("__warpcheck_grid_sync"), Intrinsic::GridSync);
        assert_eq!(of("vprintf"), Intrinsic::Printf);
    }

    #[test]
    fn integer_min_and_max() {
        let mm = |max, signed| Some(Intrinsic::MinMax(MinMax { max, signed }));
        assert_eq!(Intrinsic::from_name("llvm.smin.i32"), mm(false, true));
        assert_eq!(Intrinsic::from_name("llvm.smax.i64"), mm(true, true));
        assert_eq!(Intrinsic::from_name("llvm.umin.v4i32"), mm(false, false));
        assert_eq!(Intrinsic::from_name("llvm.umax.i16"), mm(true, false));
        // Float minimum and NVVM's own min stay pure functions.
        let alu = Some(Intrinsic::Pure { alu: true });
        assert_eq!(Intrinsic::from_name("llvm.minnum.f32"), alu);
        assert_eq!(Intrinsic::from_name("llvm.nvvm.min.ui"), alu);
    }

    #[test]
    fn arithmetic_says_whether_the_alu_computes_it() {
        let alu = |name: &str| match Intrinsic::from_name(name) {
            Some(Intrinsic::Pure { alu }) => alu,
            other => panic!("{name}: {other:?}"),
        };
        // Bit operations, abs, add, multiply and fma: one instruction.
        for name in [
            "llvm.ctlz.i32",
            "llvm.fshl.i32",
            "llvm.abs.i32",
            "llvm.fma.f32",
            "llvm.fmuladd.f64",
            "llvm.nvvm.mul24.i",
            "llvm.nvvm.add.rn.d",
            "llvm.nvvm.prmt",
            "llvm.nvvm.bitcast.f2i",
        ] {
            assert!(alu(name), "{name}");
        }
        // Transcendentals, square roots, rounding, conversions, libdevice.
        for name in [
            "llvm.sqrt.f32",
            "llvm.exp2.f32",
            "llvm.floor.f64",
            "llvm.nvvm.ex2.approx.f",
            "llvm.nvvm.rcp.rn.d",
            "llvm.nvvm.f2i.rz",
            "__nv_fminf",
        ] {
            assert!(!alu(name), "{name}");
        }
    }

    #[test]
    fn families_and_overload_bases() {
        assert_eq!(
            Family::split("llvm.nvvm.fabs.f"),
            Some((Family::Nvvm, "fabs.f"))
        );
        assert_eq!(
            Family::split("llvm.fabs.f32"),
            Some((Family::Llvm, "fabs.f32"))
        );
        assert_eq!(
            Family::split("__nv_sinf"),
            Some((Family::Libdevice, "sinf"))
        );
        assert_eq!(Family::split("vprintf"), None);
        assert_eq!(
            overload_base("sadd.with.overflow.i32"),
            "sadd.with.overflow"
        );
        assert_eq!(overload_base("fma.v2f32"), "fma");
        assert_eq!(overload_base("fptosi.sat.i32.f32"), "fptosi.sat");
        assert_eq!(overload_base("exp2.f32"), "exp2");
        assert_eq!(overload_base("memcpy.p0.p1.i64"), "memcpy");
        assert_eq!(overload_base("ctlz.i32"), "ctlz");
        assert_eq!(overload_base("fma.bf16"), "fma");
        // Not a type: `v` must be followed by digits, then more.
        assert_eq!(
            overload_base("vector.reduce.add.v4i32"),
            "vector.reduce.add"
        );
    }

    #[test]
    fn classifies_generic_and_libdevice() {
        assert_eq!(
            Intrinsic::from_name("llvm.lifetime.start.p0"),
            Some(Intrinsic::NoOp)
        );
        // A fact for the cost stage, so not a plain no-op.
        assert_eq!(Intrinsic::from_name("llvm.assume"), Some(Intrinsic::Assume));
        assert_eq!(
            Intrinsic::from_name("llvm.memcpy.p0.p0.i64"),
            Some(Intrinsic::MemCpy)
        );
        assert_eq!(
            Intrinsic::from_name("llvm.ctpop.i32"),
            Some(Intrinsic::Pure { alu: true })
        );
        assert_eq!(
            Intrinsic::from_name("__nv_expf"),
            Some(Intrinsic::Pure { alu: false })
        );
        assert_eq!(Intrinsic::from_name("_Z3foov"), None);
        assert_eq!(
            Intrinsic::from_name("llvm.nvvm.something.new"),
            Some(Intrinsic::Unknown)
        );
    }

    #[test]
    fn shuffle_control_words_are_what_cuda_packs() {
        // Width 32: no segment bits; clamp 31, or 0 for up.
        assert_eq!(ShflControl::cuda(ShflMode::Down, 32).bits(), 0x1f);
        assert_eq!(ShflControl::cuda(ShflMode::Up, 32).bits(), 0);
        // Width 8: lanes agree on bits 3-4, so 32 - 8 = 24 = 0b11000.
        let c = ShflControl::cuda(ShflMode::Idx, 8);
        assert_eq!(c.bits(), (24 << 8) | 0x1f);
        assert_eq!(c.segment_mask, 0b11000);
        assert!(!c.whole_warp());
        assert!(ShflControl::cuda(ShflMode::Bfly, 32).whole_warp());
        // Bits beyond the two fields are not part of the word.
        assert_eq!(ShflControl::from_bits(0xffff_ffff).bits(), 0x1f1f);
    }

    #[test]
    fn shuffle_sources_follow_ptx() {
        let down = ShflControl::cuda(ShflMode::Down, 32);
        // __shfl_down_sync(v, 1): lane 3 reads 4; lane 31 has no lane 32.
        assert_eq!(down.source(ShflMode::Down, 3, 1), (4, true));
        assert_eq!(down.source(ShflMode::Down, 31, 1), (31, false));
        // __shfl_up_sync(v, 1): lane 0 has nothing below and keeps its own.
        let up = ShflControl::cuda(ShflMode::Up, 32);
        assert_eq!(up.source(ShflMode::Up, 0, 1), (0, false));
        assert_eq!(up.source(ShflMode::Up, 5, 1), (4, true));
        // Width 16: segments 0-15 and 16-31. xor 2 from 17 is 19; idx 3
        // from lane 20 is the third lane of its segment, 16 + 3.
        let c = ShflControl::cuda(ShflMode::Bfly, 16);
        assert_eq!(c.source(ShflMode::Bfly, 17, 2), (19, true));
        assert_eq!(c.source(ShflMode::Idx, 20, 3), (19, true));
        // Up by 2 in width 16: lane 17 would cross into the first segment.
        let c = ShflControl::cuda(ShflMode::Up, 16);
        assert_eq!(c.source(ShflMode::Up, 17, 2), (17, false));
        assert_eq!(c.source(ShflMode::Up, 18, 2), (16, true));
        // Down by 4 in width 8: lane 6 would leave its segment (0-7),
        // lane 2 reads 6.
        let c8 = ShflControl::cuda(ShflMode::Down, 8);
        assert_eq!(c8.source(ShflMode::Down, 6, 4), (6, false));
        assert_eq!(c8.source(ShflMode::Down, 2, 4), (6, true));
        // The lane operand counts modulo 32: idx 35 in the whole warp is 3.
        let whole = ShflControl::cuda(ShflMode::Idx, 32);
        assert_eq!(whole.source(ShflMode::Idx, 9, 35), (3, true));
    }
}
