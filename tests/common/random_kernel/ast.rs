//! The generated programs: a structured CUDA-like kernel (ifs, counted
//! loops with conditional breaks, barriers, warp primitives, calls) over
//! 32-bit integers. Every tree is a valid program: `lower` masks indices
//! into the buffers and drops what a context does not allow (see
//! `uniformity.rs`), so shrinking can cut anything anywhere.
//!
//! Programs serialise to JSON: a failing one is saved as a regression
//! fixture and replayed by `random_kernels.rs`. `Display` prints it as C.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How many mutable variables a function has (`v0`..`v3`).
pub const VARS: usize = 4;
/// Integer parameters of the kernel (`n0`, `n1`) and of a device function.
pub const INT_PARAMS: usize = 2;
/// Global buffers the kernel takes (`p0`..`p2`).
pub const BUFFERS: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dim {
    X,
    Y,
    Z,
}

/// The leaves of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Leaf {
    Const(i32),
    /// `threadIdx`, `blockDim`, `blockIdx`.
    Tid(Dim),
    Ntid(Dim),
    Ctaid(Dim),
    /// `%laneid`.
    LaneId,
    /// `threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)`.
    Linear,
    /// `Linear % 32` and `Linear / 32`, as arithmetic.
    Lane,
    Warp,
    /// An integer parameter (of the kernel, or of the device function).
    Param(u8),
    /// A mutable variable.
    Var(u8),
    /// The counter of an enclosing loop (0 is the innermost); 0 outside loops.
    Counter(u8),
    /// The kernel's third integer parameter `m`, run with a value below 32
    /// (a guard `t <= m` that narrows the lanes; the analysis does not
    /// know the value). A device function's first parameter.
    Small,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
    SMin,
    SMax,
    UMin,
    UMax,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ShiftOp {
    Shl,
    LShr,
    AShr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DivOp {
    UDiv,
    SDiv,
    URem,
    SRem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pred {
    Eq,
    Ne,
    Ult,
    Ule,
    Ugt,
    Uge,
    Slt,
    Sle,
    Sgt,
    Sge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shfl {
    Idx,
    Up,
    Down,
    Bfly,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Vote {
    Ballot,
    All,
    Any,
}

/// Bytes per element of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Width {
    W1,
    W2,
    W4,
    W8,
}

impl Width {
    pub fn bytes(self) -> u64 {
        match self {
            Width::W1 => 1,
            Width::W2 => 2,
            Width::W4 => 4,
            Width::W8 => 8,
        }
    }
}

/// What an access reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Buf {
    /// A kernel buffer parameter (a device function's pointer parameter).
    Global(u8),
    /// `__shared__ int s[1024]`, directly or through a generic pointer.
    Shared { generic: bool },
    /// `__shared__ int tile[32][33]`: `index` picks the row, `col` the column.
    Tile,
    /// `__constant__ int c[64]`, set before the launch: read only (a store
    /// or atomic to it is dropped).
    Constant,
    /// `cp[index]` through `__constant__ int *cp`, which points to
    /// `__device__ int d[256]`: global memory through a pointer read from a
    /// constant parameter structure.
    ConstPtr,
    /// `p0[lane * n + (index & 15)]` with `n` an integer parameter: a row
    /// per lane, `n` elements apart (a parametric class).
    Rows(u8),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Access {
    pub buf: Buf,
    pub width: Width,
    /// Masked to the buffer's elements: `index & (2^mask_bits - 1)` for
    /// global buffers, the size of the shared array otherwise.
    pub index: Expr,
    pub mask_bits: u8,
    /// The column of a `Tile` access (ignored otherwise).
    pub col: Expr,
}

/// Where a vector access points: `reinterpret_cast<uint4 *>(p)` of a
/// kernel buffer, or of the shared array (directly or through a generic
/// pointer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VecBase {
    Global(u8),
    Shared { generic: bool },
}

/// A vector element (`uint4`, `float2`, `uchar4`, `double2`, an aligned
/// struct of `lanes` fields) read or written field by field, as clang -O2
/// leaves it: one scalar access per field at constant offsets from the
/// element's address, the first stating the vector's alignment (shifted
/// right `align_shift` times, not below a field's) and field `j` the
/// largest power of two dividing both that and its offset. The backend
/// merges such pieces (`memory/lower/vector.rs`); the simulator and the
/// analysis must count the same requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VecAccess {
    pub base: VecBase,
    /// Bytes per field.
    pub elem: Width,
    /// Fields of the vector: 2 or 4 (others read as 4).
    pub lanes: u8,
    pub align_shift: u8,
    /// Fields addressed as a struct's (`gep %struct, q, 0, j`) rather than
    /// by byte offsets (`gep i8, q, 4j`).
    pub fields: bool,
    /// Fields accessed last first.
    pub reversed: bool,
    /// A field left out (`v.x`, `v.y`, `v.w` only), if any.
    pub skip: Option<u8>,
    /// The vector's index, masked to the buffer's vectors
    /// (`index & (2^mask_bits - 1)` in global memory).
    pub index: Expr,
    pub mask_bits: u8,
}

impl VecAccess {
    pub fn lanes(&self) -> u64 {
        if self.lanes == 2 {
            2
        } else {
            4
        }
    }

    /// Bytes of the whole vector.
    pub fn bytes(&self) -> u64 {
        self.lanes() * self.elem.bytes()
    }

    /// The alignment the first field states.
    pub fn align(&self) -> u64 {
        (self.bytes() >> (self.align_shift % 4)).max(self.elem.bytes())
    }

    /// The fields accessed, in program order.
    pub fn pieces(&self) -> Vec<u64> {
        let skip = self.skip.map(|k| u64::from(k) % self.lanes());
        let mut out: Vec<u64> = (0..self.lanes()).filter(|&j| Some(j) != skip).collect();
        if self.reversed {
            out.reverse();
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cond {
    pub pred: Pred,
    pub a: Expr,
    pub b: Expr,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Leaf(Leaf),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Shift by a constant below 32.
    Shift(ShiftOp, Box<Expr>, u8),
    /// Division or remainder by a positive constant.
    Div(DivOp, Box<Expr>, u16),
    Select(Box<Cond>, Box<Expr>, Box<Expr>),
    Load(Box<Access>),
    /// `__shfl_*_sync(~0, value, lane)`; its value alone where a warp may be
    /// partly active.
    Shfl(Shfl, Box<Expr>, Box<Expr>),
    /// `__ballot_sync` / `__all_sync` / `__any_sync`; the condition as 0/1
    /// where a warp may be partly active.
    Vote(Vote, Box<Cond>),
    /// A call of device function `f` with two integers and buffer `buf`;
    /// its first argument where `f` does not exist or may not be called
    /// (a device function calls only those after it).
    Call(u8, Box<Expr>, Box<Expr>, u8),
    /// The fields of a vector element read one by one, xor-ed together.
    VecLoad(Box<VecAccess>),
}

/// Where a counted loop tests its counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoopShape {
    /// In the header, before each iteration (`while`, unoptimised code).
    Header,
    /// A guard before the loop and a test at the latch, as clang -O2
    /// rotates loops.
    Rotated,
    /// `for (c = 1; c < blockDim.x; c *= 2)`, rotated; the bound
    /// expression is not used (a reduction's ladder: the counter takes
    /// values the launch fixes).
    Doubling,
    /// `for (c = blockDim.x / 2; c > 0; c >>= 1)`, rotated.
    Halving,
    /// `for (c = 1; c < (bound & 127); c <<= 1)`, rotated: a ladder up to
    /// a constant, a parameter or a thread-dependent value.
    DoublingTo,
    /// `for (c = (bound & 127); c > 0; c >>= 1)`, rotated.
    HalvingFrom,
    /// `for (c = tid; c < (bound & 255); c += blockDim.x)`, rotated: a
    /// block-stride loop, whose trip count differs between threads.
    BlockStride,
}

/// How threads share a value through `s` and a barrier, the shapes whose
/// dependence the analysis decides by barrier phases. `tid` is the linear
/// thread index; the barrier is dropped where control may differ within
/// the block, which leaves the twin without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Share {
    /// `s[tid] = e; __syncthreads(); v = s[k];`: a cooperative fill, then
    /// a broadcast read.
    Fill,
    /// `if (tid == 0) s[k] = e; __syncthreads(); v = s[k];`: a leader's flag.
    Leader,
    /// `__syncthreads(); v = s[k]; s[tid] = e;`: stores after the read, in
    /// its phase.
    ReadThenStore,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    Assign(u8, Expr),
    Store(Access, Expr),
    AtomicAdd(Access, Expr),
    If(Cond, Vec<Stmt>, Vec<Stmt>),
    /// `for (c = 0; c < (bound & 7); c++)`.
    Loop(LoopShape, Expr, Vec<Stmt>),
    /// `if (cond) break;` out of the innermost loop; nothing outside loops.
    BreakIf(Cond),
    /// `__syncthreads()`; dropped where control may differ within the block.
    Barrier,
    /// `v = ...` through shared memory: the shape, the variable, the
    /// index `k` read (masked to `s`) and the value `e` stored.
    Share(Share, u8, Expr, Expr),
    /// The fields of a vector element written one by one: field `j`
    /// gets `e + j`.
    VecStore(VecAccess, Expr),
}

/// `int fN(int n0, int n1, int *p0)`: may call only functions after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceFn {
    pub body: Vec<Stmt>,
    pub ret: Expr,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Program {
    /// The variables' initial values.
    pub init: Vec<Expr>,
    pub body: Vec<Stmt>,
    pub funcs: Vec<DeviceFn>,
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |d: &Dim| match d {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        };
        match self {
            Leaf::Const(c) => write!(f, "{c}"),
            Leaf::Tid(x) => write!(f, "threadIdx.{}", d(x)),
            Leaf::Ntid(x) => write!(f, "blockDim.{}", d(x)),
            Leaf::Ctaid(x) => write!(f, "blockIdx.{}", d(x)),
            Leaf::LaneId => write!(f, "laneid()"),
            Leaf::Linear => write!(f, "tid"),
            Leaf::Lane => write!(f, "(tid % 32)"),
            Leaf::Warp => write!(f, "(tid / 32)"),
            Leaf::Param(p) => write!(f, "n{p}"),
            Leaf::Var(v) => write!(f, "v{v}"),
            Leaf::Counter(c) => write!(f, "c{c}"),
            Leaf::Small => write!(f, "m"),
        }
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ty = format!("i{}", self.width.bytes() * 8);
        match self.buf {
            Buf::Global(b) => write!(
                f,
                "(({ty}*)p{b})[({}) & {:#x}]",
                self.index,
                (1u64 << self.mask_bits) - 1
            ),
            Buf::Shared { generic } => {
                let g = if generic { "generic " } else { "" };
                write!(f, "(({g}{ty}*)s)[{}]", self.index)
            }
            Buf::Tile => write!(f, "(({ty}*)tile[{}])[{}]", self.index, self.col),
            Buf::Constant => write!(f, "(({ty}*)c)[{}]", self.index),
            Buf::ConstPtr => write!(f, "(({ty}*)cp)[{}]", self.index),
            Buf::Rows(n) => write!(
                f,
                "(({ty}*)p0)[(long)lane * n{} + (({}) & 15)]",
                n as usize % INT_PARAMS,
                self.index
            ),
        }
    }
}

impl fmt::Display for VecAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = match self.base {
            VecBase::Global(b) => format!("p{b}"),
            VecBase::Shared { generic: false } => "s".into(),
            VecBase::Shared { generic: true } => "(generic)s".into(),
        };
        let how = if self.fields { "struct" } else { "vec" };
        write!(
            f,
            "(({how}<i{} x {}, align {}>*){base})[({}) & {:#x}].fields{:?}",
            self.elem.bytes() * 8,
            self.lanes(),
            self.align(),
            self.index,
            (1u64 << self.mask_bits.min(40)) - 1,
            self.pieces()
        )
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = format!("{:?}", self.pred).to_lowercase();
        write!(f, "{p}({}, {})", self.a, self.b)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lower = |x: &dyn fmt::Debug| format!("{x:?}").to_lowercase();
        match self {
            Expr::Leaf(l) => write!(f, "{l}"),
            Expr::Bin(op, a, b) => write!(f, "{}({a}, {b})", lower(op)),
            Expr::Shift(op, a, k) => write!(f, "{}({a}, {k})", lower(op)),
            Expr::Div(op, a, k) => write!(f, "{}({a}, {k})", lower(op)),
            Expr::Select(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Expr::Load(a) => write!(f, "{a}"),
            Expr::Shfl(m, v, l) => write!(f, "shfl_{}({v}, {l})", lower(m)),
            Expr::Vote(m, c) => write!(f, "{}({c})", lower(m)),
            Expr::Call(g, a, b, p) => write!(f, "f{g}({a}, {b}, p{p})"),
            Expr::VecLoad(a) => write!(f, "xor_fields({a})"),
        }
    }
}

fn write_block(f: &mut fmt::Formatter<'_>, stmts: &[Stmt], depth: usize) -> fmt::Result {
    for s in stmts {
        write_stmt(f, s, depth)?;
    }
    Ok(())
}

fn write_stmt(f: &mut fmt::Formatter<'_>, s: &Stmt, depth: usize) -> fmt::Result {
    let pad = "  ".repeat(depth);
    match s {
        Stmt::Assign(v, e) => writeln!(f, "{pad}v{v} = {e};"),
        Stmt::Store(a, e) => writeln!(f, "{pad}{a} = {e};"),
        Stmt::AtomicAdd(a, e) => writeln!(f, "{pad}atomicAdd(&{a}, {e});"),
        Stmt::If(c, t, e) => {
            writeln!(f, "{pad}if ({c}) {{")?;
            write_block(f, t, depth + 1)?;
            if !e.is_empty() {
                writeln!(f, "{pad}}} else {{")?;
                write_block(f, e, depth + 1)?;
            }
            writeln!(f, "{pad}}}")
        }
        Stmt::Loop(shape, bound, body) => {
            match shape {
                LoopShape::Header => writeln!(f, "{pad}for (c = 0; c < (({bound}) & 7); c++) {{")?,
                LoopShape::Rotated => writeln!(
                    f,
                    "{pad}for (c = 0; c < (({bound}) & 7); c++) {{ /* rotated */"
                )?,
                LoopShape::Doubling => writeln!(f, "{pad}for (c = 1; c < blockDim.x; c *= 2) {{")?,
                LoopShape::Halving => {
                    writeln!(f, "{pad}for (c = blockDim.x / 2; c > 0; c >>= 1) {{")?
                }
                LoopShape::DoublingTo => {
                    writeln!(f, "{pad}for (c = 1; c < (({bound}) & 127); c <<= 1) {{")?
                }
                LoopShape::HalvingFrom => {
                    writeln!(f, "{pad}for (c = (({bound}) & 127); c > 0; c >>= 1) {{")?
                }
                LoopShape::BlockStride => writeln!(
                    f,
                    "{pad}for (c = tid; c < (({bound}) & 255); c += blockDim.x) {{"
                )?,
            }
            write_block(f, body, depth + 1)?;
            writeln!(f, "{pad}}}")
        }
        Stmt::BreakIf(c) => writeln!(f, "{pad}if ({c}) break;"),
        Stmt::Barrier => writeln!(f, "{pad}__syncthreads();"),
        Stmt::Share(shape, v, k, e) => {
            let read = format!("{pad}v{v} = s[{k}];");
            match shape {
                Share::Fill => writeln!(f, "{pad}s[tid] = {e};\n{pad}__syncthreads();\n{read}"),
                Share::Leader => writeln!(
                    f,
                    "{pad}if (tid == 0) s[{k}] = {e};\n{pad}__syncthreads();\n{read}"
                ),
                Share::ReadThenStore => {
                    writeln!(f, "{pad}__syncthreads();\n{read}\n{pad}s[tid] = {e};")
                }
            }
        }
        Stmt::VecStore(a, e) => writeln!(f, "{pad}{a} = {e} + field;"),
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, g) in self.funcs.iter().enumerate() {
            writeln!(f, "int f{i}(int n0, int n1, int *p0) {{")?;
            write_block(f, &g.body, 1)?;
            writeln!(f, "  return {};\n}}", g.ret)?;
        }
        writeln!(
            f,
            "kernel(int *p0, int *p1, int *p2, int n0, int n1, int m) {{"
        )?;
        for (i, e) in self.init.iter().enumerate() {
            writeln!(f, "  v{i} = {e};")?;
        }
        write_block(f, &self.body, 1)?;
        writeln!(f, "}}")
    }
}
