//! Programs to our IR through `ir::builder`, as clang would shape them:
//! variables become phis at joins, loop headers and loop exits; every
//! instruction gets a line of its own, so each branch and access is a
//! site of its own in both reports.
//!
//! What keeps every run finite and in bounds: loop bounds are masked to
//! 0..=7, global indices to the 1 MiB buffers `iota_arguments` gives,
//! shared ones to the arrays; divisors are positive constants; device
//! functions call only later ones (no recursion).

use super::ast::*;
use super::uniformity::Scope;
use warpcheck::ir::builder::{FunctionBuilder, ModuleBuilder};
use warpcheck::ir::{
    addrspace, BlockId, Const, FuncId, InstKind, IntPred, Module, Opcode, RmwOp, TypeId, TypeKind,
    Value,
};

/// The kernel's name in the lowered module.
pub const KERNEL: &str = "random_kernel";
/// Bytes of each buffer the kernel is run with (`iota_arguments`).
pub const BUFFER_BYTES: u64 = 1 << 20;
/// Bytes of the 1-D shared array.
const SHARED_BYTES: u64 = 4096;
/// Bytes of the `__constant__` table, and what it holds: `c[i] = 3i % 17`
/// (small values, some repeated, so that reads of it make tests that
/// split warps when the index does).
const CONSTANT_BYTES: u64 = 256;
/// Bytes of `__device__ int d[]`, which `__constant__ int *cp` points to.
const DEVICE_BYTES: u64 = 1024;
/// The tile is `[TILE_ROWS][TILE_COLS]` 4-byte words.
const TILE_ROWS: i64 = 32;
const TILE_COLS: i64 = 33;

/// The module-wide things every function refers to.
struct Env {
    i1: TypeId,
    i32: TypeId,
    i64: TypeId,
    shared_ty: TypeId,
    tile_ty: TypeId,
    shared: Value,
    shared_generic: Value,
    tile: Value,
    constant_ty: TypeId,
    constant: Value,
    generic: TypeId,
    /// `__constant__ int *cp`, pointing to `__device__ int d[256]`.
    cptr: Value,
}

/// Lowers a program to a module with one kernel, [`KERNEL`], taking
/// `(p0, p1, p2, n0, n1, m)`.
pub fn lower(p: &Program) -> Module {
    let mut mb = ModuleBuilder::new();
    let (i1, i32t, i64t, void) = (mb.int(1), mb.int(32), mb.int(64), mb.void());
    let generic = mb.ptr(addrspace::GENERIC);
    let shared_ty = mb.ty(TypeKind::Array(i32t, SHARED_BYTES / 4));
    let row = mb.ty(TypeKind::Array(i32t, TILE_COLS as u64));
    let tile_ty = mb.ty(TypeKind::Array(row, TILE_ROWS as u64));
    let shared = mb.global("s", shared_ty, addrspace::SHARED);
    let tile = mb.global("tile", tile_ty, addrspace::SHARED);
    let shared_generic = mb.const_expr(Opcode::AddrSpaceCast, generic, vec![shared]);
    let constant_ty = mb.ty(TypeKind::Array(i32t, CONSTANT_BYTES / 4));
    let constant = mb.global("c", constant_ty, addrspace::CONSTANT);
    let elems = (0..CONSTANT_BYTES as i64 / 4)
        .map(|i| mb.const_int(32, 3 * i % 17))
        .collect();
    let table = mb.module.intern_const(Const::Aggregate {
        ty: constant_ty,
        elems,
    });
    let device_ty = mb.ty(TypeKind::Array(i32t, DEVICE_BYTES / 4));
    let device = mb.global("d", device_ty, addrspace::GLOBAL);
    let cptr = mb.global("cp", generic, addrspace::CONSTANT);
    let device_generic = mb.const_expr(Opcode::AddrSpaceCast, generic, vec![device]);
    for (g, init) in [(constant, table), (cptr, device_generic)] {
        if let Value::Global(g) = g {
            mb.module.globals[g.index()].init = Some(init);
        }
    }
    let env = Env {
        i1,
        i32: i32t,
        i64: i64t,
        shared_ty,
        tile_ty,
        shared,
        shared_generic,
        tile,
        constant_ty,
        constant,
        generic,
        cptr,
    };
    let mut line = 1;
    // Last first, so each function can call those after it.
    let mut funcs: Vec<Option<FuncId>> = vec![None; p.funcs.len()];
    for (i, g) in p.funcs.iter().enumerate().rev() {
        let fb = mb.define(&format!("f{i}"), &[i32t, i32t, generic], i32t);
        let id = fb.func;
        let scope = Scope::device(p.funcs.len());
        let mut l = Lower::new(fb, &env, funcs.clone(), scope, line);
        l.params = [Value::Arg(0), Value::Arg(1)];
        l.small = Value::Arg(0);
        l.bufs = vec![Value::Arg(2)];
        l.vars = std::array::from_fn(|v| l.params[v % INT_PARAMS]);
        l.block(&g.body);
        let r = l.expr(&g.ret);
        l.fb.ret(Some(r));
        line = l.fb.next_line();
        funcs[i] = Some(id);
    }
    let params = [generic, generic, generic, i32t, i32t, i32t];
    let mut fb = mb.define(KERNEL, &params, void);
    fb.kernel();
    let mut l = Lower::new(fb, &env, funcs, Scope::kernel(p), line);
    l.params = [Value::Arg(3), Value::Arg(4)];
    l.small = Value::Arg(5);
    l.bufs = (0..BUFFERS as u32).map(Value::Arg).collect();
    for v in 0..VARS {
        l.vars[v] = match p.init.get(v) {
            Some(e) => l.expr(e),
            None => l.fb.const_int(32, 0),
        };
    }
    l.block(&p.body);
    l.fb.ret(None);
    mb.finish()
}

/// A loop being lowered: its counter, exit block, and the variables on
/// each edge into the exit.
struct LoopCtx {
    counter: Value,
    exit: BlockId,
    exits: Vec<(BlockId, [Value; VARS])>,
}

struct Lower<'e, 'm> {
    fb: FunctionBuilder<'m>,
    env: &'e Env,
    /// Every device function by number, `None` for those this function
    /// may not call.
    callable: Vec<Option<FuncId>>,
    params: [Value; INT_PARAMS],
    /// What [`Leaf::Small`] reads.
    small: Value,
    bufs: Vec<Value>,
    vars: [Value; VARS],
    loops: Vec<LoopCtx>,
    scope: Scope,
}

impl<'e, 'm> Lower<'e, 'm> {
    fn new(
        mut fb: FunctionBuilder<'m>,
        env: &'e Env,
        callable: Vec<Option<FuncId>>,
        scope: Scope,
        line: u32,
    ) -> Self {
        fb.line_per_inst(line);
        let zero = fb.const_int(32, 0);
        Lower {
            fb,
            env,
            callable,
            params: [zero; INT_PARAMS],
            small: zero,
            bufs: Vec::new(),
            vars: [zero; VARS],
            loops: Vec::new(),
            scope,
        }
    }

    fn c32(&mut self, v: i64) -> Value {
        self.fb.const_int(32, v)
    }

    fn sreg(&mut self, name: &str, d: Dim) -> Value {
        let d = match d {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        };
        self.fb.sreg(&format!("{name}.{d}"))
    }

    fn linear(&mut self) -> Value {
        let (x, y, z) = (
            self.sreg("tid", Dim::X),
            self.sreg("tid", Dim::Y),
            self.sreg("tid", Dim::Z),
        );
        let (nx, ny) = (self.sreg("ntid", Dim::X), self.sreg("ntid", Dim::Y));
        let zy = self.fb.binary(Opcode::Mul, z, ny);
        let yz = self.fb.binary(Opcode::Add, y, zy);
        let row = self.fb.binary(Opcode::Mul, yz, nx);
        self.fb.binary(Opcode::Add, x, row)
    }

    fn leaf(&mut self, l: Leaf) -> Value {
        match l {
            Leaf::Const(c) => self.c32(c.into()),
            Leaf::Tid(d) => self.sreg("tid", d),
            Leaf::Ntid(d) => self.sreg("ntid", d),
            Leaf::Ctaid(d) => self.sreg("ctaid", d),
            Leaf::LaneId => self.fb.sreg("laneid"),
            Leaf::Linear => self.linear(),
            Leaf::Lane => {
                let (t, m) = (self.linear(), self.c32(31));
                self.fb.binary(Opcode::And, t, m)
            }
            Leaf::Warp => {
                let (t, k) = (self.linear(), self.c32(5));
                self.fb.binary(Opcode::LShr, t, k)
            }
            Leaf::Param(k) => self.params[k as usize % INT_PARAMS],
            Leaf::Small => self.small,
            Leaf::Var(v) => self.vars[v as usize % VARS],
            Leaf::Counter(k) => match self.loops.len() {
                0 => self.c32(0),
                n => self.loops[n - 1 - k as usize % n].counter,
            },
        }
    }

    fn cond(&mut self, c: &Cond) -> Value {
        let (a, b) = (self.expr(&c.a), self.expr(&c.b));
        let pred = match c.pred {
            Pred::Eq => IntPred::Eq,
            Pred::Ne => IntPred::Ne,
            Pred::Ult => IntPred::Ult,
            Pred::Ule => IntPred::Ule,
            Pred::Ugt => IntPred::Ugt,
            Pred::Uge => IntPred::Uge,
            Pred::Slt => IntPred::Slt,
            Pred::Sle => IntPred::Sle,
            Pred::Sgt => IntPred::Sgt,
            Pred::Sge => IntPred::Sge,
        };
        self.fb.icmp(pred, a, b)
    }

    fn expr(&mut self, e: &Expr) -> Value {
        let i32t = self.env.i32;
        match e {
            Expr::Leaf(l) => self.leaf(*l),
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                let plain = match op {
                    BinOp::Add => Opcode::Add,
                    BinOp::Sub => Opcode::Sub,
                    BinOp::Mul => Opcode::Mul,
                    BinOp::And => Opcode::And,
                    BinOp::Or => Opcode::Or,
                    BinOp::Xor => Opcode::Xor,
                    BinOp::SMin | BinOp::SMax | BinOp::UMin | BinOp::UMax => {
                        let name = format!("llvm.{}.i32", format!("{op:?}").to_lowercase());
                        return self.fb.intrinsic(&name, i32t, vec![a, b]);
                    }
                };
                self.fb.binary(plain, a, b)
            }
            Expr::Shift(op, a, k) => {
                let a = self.expr(a);
                let k = self.c32(i64::from(k % 32));
                let op = match op {
                    ShiftOp::Shl => Opcode::Shl,
                    ShiftOp::LShr => Opcode::LShr,
                    ShiftOp::AShr => Opcode::AShr,
                };
                self.fb.binary(op, a, k)
            }
            Expr::Div(op, a, d) => {
                let a = self.expr(a);
                let d = self.c32(i64::from((*d).max(1)));
                let op = match op {
                    DivOp::UDiv => Opcode::UDiv,
                    DivOp::SDiv => Opcode::SDiv,
                    DivOp::URem => Opcode::URem,
                    DivOp::SRem => Opcode::SRem,
                };
                self.fb.binary(op, a, d)
            }
            Expr::Select(c, a, b) => {
                let c = self.cond(c);
                let (a, b) = (self.expr(a), self.expr(b));
                self.fb.select(c, a, b)
            }
            Expr::Load(acc) => {
                let (addr, w) = self.address(acc);
                let ty = self.fb.m.types.int(w.bytes() as u32 * 8);
                let v = self.fb.load(ty, addr);
                self.widen_to_i32(v, w)
            }
            Expr::Shfl(mode, v, lane) if self.scope.warp_ops_allowed() => {
                let (v, lane) = (self.expr(v), self.expr(lane));
                let m31 = self.c32(31);
                let lane = self.fb.binary(Opcode::And, lane, m31);
                let (mode, clamp) = match mode {
                    Shfl::Idx => ("idx", 31),
                    Shfl::Up => ("up", 0),
                    Shfl::Down => ("down", 31),
                    Shfl::Bfly => ("bfly", 31),
                };
                let (all, clamp) = (self.c32(-1), self.c32(clamp));
                let name = format!("llvm.nvvm.shfl.sync.{mode}.i32");
                self.fb.intrinsic(&name, i32t, vec![all, v, lane, clamp])
            }
            Expr::Shfl(_, v, _) => self.expr(v),
            Expr::Vote(mode, c) => {
                let c = self.cond(c);
                if !self.scope.warp_ops_allowed() {
                    return self.fb.cast(Opcode::ZExt, c, i32t);
                }
                let all = self.c32(-1);
                let i1 = self.env.i1;
                match mode {
                    Vote::Ballot => {
                        self.fb
                            .intrinsic("llvm.nvvm.vote.ballot.sync", i32t, vec![all, c])
                    }
                    Vote::All | Vote::Any => {
                        let name = if *mode == Vote::All { "all" } else { "any" };
                        let name = format!("llvm.nvvm.vote.{name}.sync");
                        let r = self.fb.intrinsic(&name, i1, vec![all, c]);
                        self.fb.cast(Opcode::ZExt, r, i32t)
                    }
                }
            }
            Expr::Call(g, a, b, buf)
                if self
                    .callable
                    .get(usize::from(*g))
                    .is_some_and(Option::is_some) =>
            {
                let f = self.callable[usize::from(*g)].expect("callable");
                let (a, b) = (self.expr(a), self.expr(b));
                let p = self.bufs[*buf as usize % self.bufs.len()];
                self.fb.call(f, vec![a, b, p])
            }
            Expr::Call(_, a, _, _) => self.expr(a),
            Expr::VecLoad(acc) => {
                let pieces = self.vec_pieces(acc);
                let loaded: Vec<Value> = pieces
                    .iter()
                    .map(|&(addr, align)| {
                        let ty = self.fb.m.types.int(acc.elem.bytes() as u32 * 8);
                        let kind = InstKind::Load {
                            align,
                            volatile: false,
                        };
                        self.fb.inst(Opcode::Load, ty, vec![addr], kind)
                    })
                    .collect();
                let mut out = self.c32(0);
                for v in loaded {
                    let v = self.widen_to_i32(v, acc.elem);
                    out = self.fb.binary(Opcode::Xor, out, v);
                }
                out
            }
        }
    }

    /// The address and stated alignment of each field a vector access
    /// touches, in program order (see [`VecAccess`]).
    fn vec_pieces(&mut self, acc: &VecAccess) -> Vec<(Value, u32)> {
        let bytes = acc.bytes();
        let elem = self.fb.m.types.int(acc.elem.bytes() as u32 * 8);
        let fields = vec![elem; acc.lanes() as usize];
        let vty = self.fb.m.types.intern(TypeKind::Struct {
            fields,
            packed: false,
        });
        let idx = self.expr(&acc.index);
        let (base, elems) = match acc.base {
            VecBase::Global(b) => {
                let max_bits = (BUFFER_BYTES / bytes).trailing_zeros();
                let bits = u32::from(acc.mask_bits).clamp(1, max_bits);
                (self.bufs[b as usize % self.bufs.len()], 1i64 << bits)
            }
            VecBase::Shared { generic } => {
                let base = if generic {
                    self.env.shared_generic
                } else {
                    self.env.shared
                };
                (base, (SHARED_BYTES / bytes) as i64)
            }
        };
        let i = self.index(idx, elems - 1);
        let q = self.fb.gep(vty, base, &[i]);
        let i8t = self.fb.m.types.int(8);
        let align = acc.align();
        acc.pieces()
            .into_iter()
            .map(|j| {
                let off = j * acc.elem.bytes();
                let addr = match (j, acc.fields) {
                    (0, _) => q,
                    (_, true) => {
                        let (zero, field) = (self.c32(0), self.c32(j as i64));
                        self.fb.gep(vty, q, &[zero, field])
                    }
                    (_, false) => {
                        let off = self.fb.const_int(64, off as i64);
                        self.fb.gep(i8t, q, &[off])
                    }
                };
                // What clang states: the vector's alignment at offset 0,
                // the largest power of two dividing both elsewhere.
                let stated = if off == 0 {
                    align
                } else {
                    align.min(1 << off.trailing_zeros())
                };
                (addr, stated as u32)
            })
            .collect()
    }

    /// A loaded value of width `w` as an `i32`.
    fn widen_to_i32(&mut self, v: Value, w: Width) -> Value {
        let i32t = self.env.i32;
        match w {
            Width::W1 | Width::W2 => self.fb.cast(Opcode::SExt, v, i32t),
            Width::W4 => v,
            Width::W8 => self.fb.cast(Opcode::Trunc, v, i32t),
        }
    }

    /// An `i32` as a value of width `w`.
    fn narrow_from_i32(&mut self, v: Value, w: Width) -> Value {
        let ty = self.fb.m.types.int(w.bytes() as u32 * 8);
        match w {
            Width::W1 | Width::W2 => self.fb.cast(Opcode::Trunc, v, ty),
            Width::W4 => v,
            Width::W8 => self.fb.cast(Opcode::SExt, v, ty),
        }
    }

    /// `v & mask`, widened to the 64-bit index a GEP takes.
    fn index(&mut self, v: Value, mask: i64) -> Value {
        let m = self.c32(mask);
        let masked = self.fb.binary(Opcode::And, v, m);
        let i64t = self.env.i64;
        self.fb.cast(Opcode::ZExt, masked, i64t)
    }

    /// The address of an access and the width it really has (a tile's
    /// elements are 4 bytes, so 8-byte tile accesses become 4-byte ones).
    fn address(&mut self, acc: &Access) -> (Value, Width) {
        let width = match (acc.buf, acc.width) {
            (Buf::Tile, Width::W8) => Width::W4,
            (_, w) => w,
        };
        let wty = self.fb.m.types.int(width.bytes() as u32 * 8);
        let log_w = width.bytes().trailing_zeros();
        let idx = self.expr(&acc.index);
        let zero = self.fb.const_int(64, 0);
        let addr = match acc.buf {
            Buf::Global(b) => {
                let max_bits = BUFFER_BYTES.trailing_zeros() - log_w;
                let bits = u32::from(acc.mask_bits).clamp(1, max_bits);
                let i = self.index(idx, (1 << bits) - 1);
                let base = self.bufs[b as usize % self.bufs.len()];
                self.fb.gep(wty, base, &[i])
            }
            Buf::Shared { generic } => {
                let elems = (SHARED_BYTES >> log_w) as i64;
                let i = self.index(idx, elems - 1);
                let base = if generic {
                    self.env.shared_generic
                } else {
                    self.env.shared
                };
                if width == Width::W4 {
                    self.fb.gep(self.env.shared_ty, base, &[zero, i])
                } else {
                    self.fb.gep(wty, base, &[i])
                }
            }
            Buf::Constant => {
                let elems = (CONSTANT_BYTES >> log_w) as i64;
                let i = self.index(idx, elems - 1);
                if width == Width::W4 {
                    self.fb
                        .gep(self.env.constant_ty, self.env.constant, &[zero, i])
                } else {
                    self.fb.gep(wty, self.env.constant, &[i])
                }
            }
            Buf::ConstPtr => {
                let elems = (DEVICE_BYTES >> log_w) as i64;
                let i = self.index(idx, elems - 1);
                let base = self.fb.load(self.env.generic, self.env.cptr);
                self.fb.gep(wty, base, &[i])
            }
            Buf::Rows(n) => {
                // In 64 bits, as clang widens `r * n` for an index: the
                // product of a lane (0..31) and a 32-bit parameter cannot
                // wrap, so the address stays a polynomial in n.
                let i64t = self.env.i64;
                let lane = self.leaf(Leaf::Lane);
                let lane = self.fb.cast(Opcode::ZExt, lane, i64t);
                // A device function's parameters are whatever its callers
                // pass (negative too): rows one element apart there.
                let n = if self.bufs.len() == BUFFERS {
                    self.params[n as usize % INT_PARAMS]
                } else {
                    self.c32(1)
                };
                let n = self.fb.cast(Opcode::SExt, n, i64t);
                let row = self.fb.binary(Opcode::Mul, lane, n);
                let col = self.index(idx, 15);
                let i = self.fb.binary(Opcode::Add, row, col);
                self.fb.gep(wty, self.bufs[0], &[i])
            }
            Buf::Tile => {
                let row = self.index(idx, TILE_ROWS - 1);
                // Masked first, so the remainder is of a non-negative value.
                let col = self.expr(&acc.col);
                let mask = self.c32(0xffff);
                let col = self.fb.binary(Opcode::And, col, mask);
                let cols = self.c32(TILE_COLS);
                let col = self.fb.binary(Opcode::URem, col, cols);
                let i64t = self.env.i64;
                let col = self.fb.cast(Opcode::ZExt, col, i64t);
                self.fb
                    .gep(self.env.tile_ty, self.env.tile, &[zero, row, col])
            }
        };
        (addr, width)
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign(v, e) => {
                self.vars[*v as usize % VARS] = self.expr(e);
                self.scope.assign(*v, e);
            }
            Stmt::Store(acc, _) | Stmt::AtomicAdd(acc, _) if acc.buf == Buf::Constant => {}
            Stmt::Store(acc, e) => {
                let v = self.expr(e);
                let (addr, w) = self.address(acc);
                let v = self.narrow_from_i32(v, w);
                self.fb.store(v, addr);
            }
            Stmt::AtomicAdd(acc, e) => {
                let v = self.expr(e);
                let mut acc = acc.clone();
                if acc.width.bytes() < 4 {
                    acc.width = Width::W4;
                }
                let (addr, w) = self.address(&acc);
                let v = self.narrow_from_i32(v, w);
                self.fb.atomic_rmw(RmwOp::Add, addr, v);
            }
            Stmt::If(c, t, e) => self.if_else(c, t, e),
            Stmt::Loop(shape, bound, body) => self.counted_loop(*shape, bound, body),
            Stmt::BreakIf(c) => self.break_if(c),
            Stmt::Barrier if self.scope.barrier_allowed() => {
                let void = self.fb.m.types.void();
                self.fb.intrinsic("llvm.nvvm.barrier0", void, vec![]);
            }
            Stmt::Barrier => {}
            Stmt::Share(shape, v, k, e) => self.share(*shape, *v, k, e),
            Stmt::VecStore(acc, e) => {
                let v = self.expr(e);
                let pieces = self.vec_pieces(acc);
                // Every value first: the stores must follow one another.
                let values: Vec<Value> = acc
                    .pieces()
                    .into_iter()
                    .map(|j| {
                        let k = self.c32(j as i64);
                        let x = self.fb.binary(Opcode::Add, v, k);
                        self.narrow_from_i32(x, acc.elem)
                    })
                    .collect();
                let void = self.fb.m.types.void();
                for ((addr, align), x) in pieces.into_iter().zip(values) {
                    let kind = InstKind::Store {
                        align,
                        volatile: false,
                    };
                    self.fb.inst(Opcode::Store, void, vec![x, addr], kind);
                }
            }
        }
    }

    /// A [`Share`] shape through `s`: its stores, the barrier (where the
    /// block's control allows one), the read of `s[k]` into `v`.
    fn share(&mut self, shape: Share, v: u8, k: &Expr, e: &Expr) {
        let elems = (SHARED_BYTES / 4) as i64;
        let slot = |l: &mut Self, i: Value| {
            let i = l.index(i, elems - 1);
            let zero = l.fb.const_int(64, 0);
            l.fb.gep(l.env.shared_ty, l.env.shared, &[zero, i])
        };
        let (k, value) = (self.expr(k), self.expr(e));
        let tid = self.linear();
        match shape {
            Share::Fill => {
                let mine = slot(self, tid);
                self.fb.store(value, mine);
            }
            Share::Leader => {
                let zero = self.c32(0);
                let leader = self.fb.icmp(IntPred::Eq, tid, zero);
                let (then_b, join) = (self.fb.block(), self.fb.block());
                self.fb.cond_br(leader, then_b, join);
                self.fb.switch_to(then_b);
                let at = slot(self, k);
                self.fb.store(value, at);
                self.fb.br(join);
                self.fb.switch_to(join);
            }
            Share::ReadThenStore => {}
        }
        if self.scope.barrier_allowed() {
            let void = self.fb.m.types.void();
            self.fb.intrinsic("llvm.nvvm.barrier0", void, vec![]);
        }
        let at = slot(self, k);
        self.vars[v as usize % VARS] = self.fb.load(self.env.i32, at);
        self.scope.loaded(v);
        if shape == Share::ReadThenStore {
            let mine = slot(self, tid);
            self.fb.store(value, mine);
        }
    }

    /// Phis in the current block for the variables that differ between
    /// the incoming edges.
    fn join(&mut self, incoming: &[(BlockId, [Value; VARS])]) {
        let i32t = self.env.i32;
        for v in 0..VARS {
            let first = incoming[0].1[v];
            self.vars[v] = if incoming.iter().all(|(_, vars)| vars[v] == first) {
                first
            } else {
                let edges: Vec<(Value, BlockId)> =
                    incoming.iter().map(|(b, vars)| (vars[v], *b)).collect();
                self.fb.phi(i32t, &edges)
            };
        }
    }

    fn if_else(&mut self, c: &Cond, t: &[Stmt], e: &[Stmt]) {
        let cv = self.cond(c);
        let inner = self.scope.enter_if(c);
        let outer = std::mem::replace(&mut self.scope, inner.clone());
        let (then_b, join) = (self.fb.block(), self.fb.block());
        let else_b = (!e.is_empty()).then(|| self.fb.block());
        let from = self.fb.current();
        self.fb.cond_br(cv, then_b, else_b.unwrap_or(join));
        let before = self.vars;

        self.fb.switch_to(then_b);
        self.block(t);
        let then_edge = (self.fb.current(), self.vars);
        self.fb.br(join);
        let then_scope = std::mem::replace(&mut self.scope, inner);

        self.vars = before;
        let else_edge = match else_b {
            Some(b) => {
                self.fb.switch_to(b);
                self.block(e);
                let edge = (self.fb.current(), self.vars);
                self.fb.br(join);
                edge
            }
            None => (from, before),
        };
        let else_scope = std::mem::replace(&mut self.scope, outer);

        self.fb.switch_to(join);
        self.join(&[then_edge, else_edge]);
        self.scope.leave_if(c, t, e, &then_scope, &else_scope);
    }

    /// `for (c = 0; c < (bound & 7); c++) body`, testing `c` in the
    /// header or, rotated, in a guard and at the latch; or a doubling or
    /// halving ladder over `blockDim.x`, rotated.
    fn counted_loop(&mut self, shape: LoopShape, bound: &Expr, body: &[Stmt]) {
        let i32t = self.env.i32;
        let b = match shape {
            LoopShape::Doubling | LoopShape::Halving => self.expr(&Expr::Leaf(Leaf::Ntid(Dim::X))),
            _ => {
                let b = self.expr(bound);
                let mask = match shape {
                    LoopShape::DoublingTo | LoopShape::HalvingFrom => 127,
                    LoopShape::BlockStride => 255,
                    _ => 7,
                };
                let mask = self.c32(mask);
                self.fb.binary(Opcode::And, b, mask)
            }
        };
        let (inner, exit_uni) = self.scope.enter_loop(shape, bound, body);
        let outer = std::mem::replace(&mut self.scope, inner);
        let pre = self.fb.current();
        let (header, body_b, exit) = (self.fb.block(), self.fb.block(), self.fb.block());
        let zero = self.c32(0);
        let one = self.c32(1);
        let start = match shape {
            LoopShape::Doubling | LoopShape::DoublingTo => one,
            LoopShape::Halving => self.fb.binary(Opcode::LShr, b, one),
            LoopShape::HalvingFrom => b,
            LoopShape::BlockStride => self.linear(),
            LoopShape::Header | LoopShape::Rotated => zero,
        };
        let before = self.vars;
        let mut exits = Vec::new();
        match shape {
            LoopShape::Header => self.fb.br(header),
            // 0 < b, 1 < blockDim.x, 0 < blockDim.x / 2, tid < b.
            _ => {
                let enter = match shape {
                    LoopShape::Halving | LoopShape::HalvingFrom => {
                        self.fb.icmp(IntPred::Ult, zero, start)
                    }
                    _ => self.fb.icmp(IntPred::Ult, start, b),
                };
                self.fb.cond_br(enter, header, exit);
                exits.push((pre, before));
            }
        }

        self.fb.switch_to(header);
        let counter = self.fb.phi(i32t, &[(start, pre)]);
        let changed = super::uniformity::assigned(body);
        let mut phis = Vec::new();
        for v in (0..VARS).filter(|&v| changed[v]) {
            let phi = self.fb.phi(i32t, &[(self.vars[v], pre)]);
            self.vars[v] = phi;
            phis.push((v, phi));
        }
        if shape == LoopShape::Header {
            let more = self.fb.icmp(IntPred::Ult, counter, b);
            self.fb.cond_br(more, body_b, exit);
            exits.push((header, self.vars));
        } else {
            self.fb.br(body_b);
        }
        self.loops.push(LoopCtx {
            counter,
            exit,
            exits,
        });

        self.fb.switch_to(body_b);
        self.block(body);
        let latch = self.fb.current();
        let next = match shape {
            LoopShape::Doubling | LoopShape::DoublingTo => {
                self.fb.binary(Opcode::Shl, counter, one)
            }
            LoopShape::Halving | LoopShape::HalvingFrom => {
                self.fb.binary(Opcode::LShr, counter, one)
            }
            LoopShape::BlockStride => {
                let step = self.sreg("ntid", Dim::X);
                self.fb.binary(Opcode::Add, counter, step)
            }
            LoopShape::Header | LoopShape::Rotated => self.fb.binary(Opcode::Add, counter, one),
        };
        let mut ctx = self.loops.pop().expect("the loop just pushed");
        if shape == LoopShape::Header {
            self.fb.br(header);
        } else {
            let more = if matches!(shape, LoopShape::Halving | LoopShape::HalvingFrom) {
                self.fb.icmp(IntPred::Ult, zero, next)
            } else {
                self.fb.icmp(IntPred::Ult, next, b)
            };
            self.fb.cond_br(more, header, exit);
            ctx.exits.push((latch, self.vars));
        }
        self.fb.add_incoming(counter, next, latch);
        for (v, phi) in phis {
            self.fb.add_incoming(phi, self.vars[v], latch);
        }
        let body_scope = std::mem::replace(&mut self.scope, outer);

        self.fb.switch_to(exit);
        self.join(&ctx.exits);
        self.scope.leave_loop(body, &body_scope, exit_uni);
    }

    fn break_if(&mut self, c: &Cond) {
        if self.loops.is_empty() {
            return;
        }
        let cv = self.cond(c);
        let cont = self.fb.block();
        let from = self.fb.current();
        let ctx = self.loops.last_mut().expect("inside a loop");
        ctx.exits.push((from, self.vars));
        let exit = ctx.exit;
        self.fb.cond_br(cv, exit, cont);
        self.fb.switch_to(cont);
        self.scope.break_if(c);
    }
}
