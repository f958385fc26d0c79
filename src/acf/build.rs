//! From SSA values to ACF expressions, on demand and memoised.
//!
//! Integer arithmetic becomes polynomial arithmetic (casts are taken as
//! exact, and index arithmetic over unknowns is assumed not to wrap, as
//! clang's `nsw` says; a result whose known range can leave its width is
//! read modulo it, and unsigned operations read possibly negative values
//! modulo 2^width). Division, remainder,
//! shifts and masks by constants, bit operations, comparisons, `select`
//! and min/max become operator atoms, simplified where the operands'
//! congruences decide them. Special registers become the per-thread leaves
//! and the uniform unknowns; a resolved block shape makes `blockDim`
//! a constant.
//!
//! **Phis.** A loop-header phi (the graph's loop facts name them, with
//! their incoming values split into entries and back edges) entered on one
//! edge, whose back edges each add a uniform step to it, is split into a
//! uniform unknown for the iteration plus the thread part of its initial
//! value: `i = tid; i += 256` gives `[i] + tid`, with `[i] ≡ 0 (mod 256)`.
//! The step is read symbolically, so pointer counters moved by GEPs count
//! too. Other phis are the common value of their incoming
//! values, or, for a two-way merge under one branch (GPUCheck's Eq. 2 in
//! its two-predicate case), `select(c, a, b)`. Anything else is a leaf.
//!
//! **Calls** (IACF) to functions we have the body of return the callee's
//! expression in a context of the call's arguments: one context per
//! distinct argument list, up to [`MAX_CONTEXTS`] per function; past that,
//! and for recursive functions, the parameters are leaves.
//!
//! **Loads** take the value of a store to the same address earlier in the
//! same straight-line code with nothing written in between; otherwise they
//! are leaves.
//!
//! **Leaves** are thread-dependent ([`Atom::Opaque`]) exactly when the
//! taint analysis says so, uniform ([`Uniform::Value`]) otherwise.
//!
//! **Budgets.** An expression larger than [`MAX_SIZE`] atoms, or deeper
//! than [`MAX_DEPTH`] operands, becomes a leaf: never a hang.

use super::expr::*;
use crate::dataflow::{FastMap as HashMap, FastSet as HashSet};
use crate::graph::loop_facts::HeaderPhi;
use crate::graph::ModuleGraphs;
use crate::ir::gep::{self, Index};
use crate::ir::intrinsics::{Dim, SReg};
use crate::ir::{
    BlockId, Callee, Const, FuncId, InstId, InstKind, Intrinsic, Module, Opcode, TypeKind, Value,
};
use crate::taint::KernelDeps;

/// Largest expression kept, in atom occurrences.
pub const MAX_SIZE: usize = 64;
/// Deepest operand chain followed.
pub const MAX_DEPTH: usize = 200;
/// Calling contexts kept per function (IACF's k-limit); past it, calls
/// share the function's generic context.
pub const MAX_CONTEXTS: usize = 8;

/// Builds and memoises the ACF of one kernel's values.
pub struct Builder<'a> {
    m: &'a Module,
    graphs: &'a ModuleGraphs,
    deps: &'a KernelDeps,
    kernel: FuncId,
    /// The block shape, when known.
    block: Option<[u32; 3]>,
    pub arena: Arena,
    memo: HashMap<(CtxId, Value), ExprId>,
    /// Memo keys in insertion order, so a loop phi's trial can be undone.
    log: Vec<(CtxId, Value)>,
    active: HashSet<(CtxId, Value)>,
    /// The instructions being built, innermost last: the readers of the
    /// operands being fetched.
    users: Vec<InstId>,
    depth: usize,
    /// Values that fell back to a leaf because of a budget.
    pub over_budget: usize,
    /// Each context's parameters; `None` makes them leaves.
    args: HashMap<CtxId, Option<Vec<ExprId>>>,
    ctx_ids: HashMap<(FuncId, Vec<ExprId>), CtxId>,
    roots: HashMap<FuncId, CtxId>,
    per_func: HashMap<FuncId, Vec<CtxId>>,
    /// Kernel parameters given a value (`--param`): constants, not atoms.
    pinned: HashMap<u32, i128>,
    /// Pointer parameters' congruences where not `cudaMalloc`'s 0 mod 256.
    bases: HashMap<u32, Congruence>,
}

impl<'a> Builder<'a> {
    pub fn new(
        m: &'a Module,
        graphs: &'a ModuleGraphs,
        deps: &'a KernelDeps,
        kernel: FuncId,
        block: Option<[u32; 3]>,
    ) -> Self {
        Builder {
            m,
            graphs,
            deps,
            kernel,
            block,
            arena: Arena::default(),
            memo: HashMap::default(),
            log: Vec::new(),
            active: HashSet::default(),
            users: Vec::new(),
            depth: 0,
            over_budget: 0,
            args: HashMap::default(),
            ctx_ids: HashMap::default(),
            roots: HashMap::default(),
            per_func: HashMap::default(),
            pinned: HashMap::default(),
            bases: HashMap::default(),
        }
    }

    /// Reads the kernel's integer parameters `(index, value)` as those
    /// numbers: every expression, condition and address then has them.
    pub fn pin(&mut self, values: &[(u32, i128)]) {
        self.pinned.extend(values.iter().copied());
    }

    /// What is known of pointer parameters' addresses (see
    /// [`super::Input::pointer_bases`]).
    pub fn bases(&mut self, bases: &[(u32, Congruence)]) {
        self.bases.extend(bases.iter().copied());
    }

    /// The ACF of `v` in function `f`.
    pub fn value(&mut self, c: CtxId, v: Value) -> ExprId {
        if let Some(&e) = self.memo.get(&(c, v)) {
            return e;
        }
        if self.depth >= MAX_DEPTH || !self.active.insert((c, v)) {
            self.over_budget += usize::from(self.depth >= MAX_DEPTH);
            let p = self.leaf(c, v);
            return self.arena.intern(p);
        }
        self.depth += 1;
        let mut p = self.compute(c, v);
        self.depth -= 1;
        self.active.remove(&(c, v));
        if p.size() > MAX_SIZE {
            self.over_budget += 1;
            p = self.leaf(c, v);
        }
        let e = self.arena.intern(p);
        self.remember(c, v, e);
        e
    }

    fn remember(&mut self, c: CtxId, v: Value, e: ExprId) {
        if self.memo.insert((c, v), e).is_none() {
            self.log.push((c, v));
        }
    }

    /// `v` as the instruction being built reads it. A value that leaves a
    /// loop through an exit lanes take on different iterations differs
    /// between them there, whatever it was inside: it is a leaf.
    fn poly(&mut self, c: CtxId, v: Value) -> Poly {
        let f = self.arena.func_of(c);
        if let (Some(&user), Value::Inst(def)) = (self.users.last(), v) {
            if self.escapes(c, def, user) && self.deps.is_dependent_at(f, v, user) {
                let a = self
                    .arena
                    .intern_atom(Atom::Opaque(c, v), Congruence::UNKNOWN);
                return Poly::atom(a);
            }
        }
        let e = self.value(c, v);
        self.arena.poly(e).clone()
    }

    /// Whether some loop holds `def` but not `user`.
    fn escapes(&self, c: CtxId, def: InstId, user: InstId) -> bool {
        let f = self.arena.func_of(c);
        let func = self.m.func(f);
        let g = self.graphs.func(f);
        let ub = func.inst(user).block;
        let mut l = g.loops.loop_of(func.inst(def).block);
        while let Some(id) = l {
            let lp = g.loops.get(id);
            if !lp.contains(ub) {
                return true;
            }
            l = lp.parent;
        }
        false
    }

    /// A value with no structure we use.
    fn leaf(&mut self, c: CtxId, v: Value) -> Poly {
        let f = self.arena.func_of(c);
        let atom = if self.deps.is_dependent(f, v) {
            Atom::Opaque(c, v)
        } else {
            Atom::Uniform(Uniform::Value(c, v))
        };
        Poly::atom(self.arena.intern_atom(atom, Congruence::UNKNOWN))
    }

    fn uniform(&mut self, u: Uniform, c: Congruence) -> Poly {
        Poly::atom(self.arena.intern_atom(Atom::Uniform(u), c))
    }

    fn compute(&mut self, c: CtxId, v: Value) -> Poly {
        let f = self.arena.func_of(c);
        match v {
            Value::Const(k) => self.constant(c, v, k),
            Value::Arg(a) if f == self.kernel => {
                let ty = self.m.func(f).params[a as usize].ty;
                if let Some(&k) = self.pinned.get(&a) {
                    Poly::constant(k)
                } else if self.m.types.is_ptr(ty) {
                    let c = self
                        .bases
                        .get(&a)
                        .copied()
                        .unwrap_or(Congruence::new(crate::hw::MALLOC_ALIGN as i128, 0));
                    self.uniform(Uniform::Param(a, Pointer::Yes), c)
                } else {
                    self.uniform(Uniform::Param(a, Pointer::No), Congruence::UNKNOWN)
                }
            }
            Value::Arg(a) => match self.args.get(&c).and_then(|x| x.as_ref()) {
                Some(args) => self.arena.poly(args[a as usize]).clone(),
                None => self.leaf(c, v),
            },
            Value::Global(g) => {
                let align = self.m.global(g).align.max(1);
                self.uniform(Uniform::Global(g), Congruence::new(align as i128, 0))
            }
            Value::Inst(i) => self.inst(c, i),
            // What no IR value shows (an address inline asm computes from
            // a lane register) may differ in every lane.
            Value::Opaque => Poly::atom(
                self.arena
                    .intern_atom(Atom::Opaque(c, v), Congruence::UNKNOWN),
            ),
            _ => self.leaf(c, v),
        }
    }

    fn constant(&mut self, c: CtxId, v: Value, k: crate::ir::ConstId) -> Poly {
        match self.m.konst(k) {
            k @ Const::Int { .. } => Poly::constant(k.as_i64().map_or(0, i128::from)),
            Const::Null(_) | Const::Zero(_) => Poly::constant(0),
            Const::Expr {
                op,
                operands,
                kind,
                ty,
            } => {
                let (op, operands, kind, ty) = (*op, operands.clone(), kind.clone(), *ty);
                self.operation(c, v, op, &operands, &kind, ty)
                    .unwrap_or_else(|| self.leaf(c, v))
            }
            _ => self.leaf(c, v),
        }
    }

    fn inst(&mut self, c: CtxId, i: InstId) -> Poly {
        let f = self.arena.func_of(c);
        let m = self.m;
        let inst = m.func(f).inst(i);
        let v = Value::Inst(i);
        self.users.push(i);
        let built = match inst.op {
            Opcode::Phi => Some(self.phi(c, i)),
            Opcode::Load => Some(self.load(c, i)),
            Opcode::Call => self.call(c, i),
            op => self.operation(c, v, op, &inst.operands, &inst.kind, inst.ty),
        };
        self.users.pop();
        let p = built.unwrap_or_else(|| self.leaf(c, v));
        // Never call uniform what the taint analysis proves may differ: an
        // expression of uniform atoms only, for a dependent value, missed
        // how lanes part (loop skew, say).
        let e = self.arena.intern(p.clone());
        if self.deps.is_dependent(f, v) && !self.arena.is_thread(e) && p.as_const().is_none() {
            return self.leaf(c, v);
        }
        p
    }

    /// Arithmetic, casts, comparisons, `select` and GEPs, for instructions
    /// and constant expressions alike.
    fn operation(
        &mut self,
        c: CtxId,
        v: Value,
        op: Opcode,
        ops: &[Value],
        kind: &InstKind,
        ty: crate::ir::TypeId,
    ) -> Option<Poly> {
        let is_int_or_ptr = matches!(self.m.types.kind(ty), TypeKind::Int(_) | TypeKind::Ptr(_));
        if !is_int_or_ptr && op != Opcode::GetElementPtr {
            return None;
        }
        let bin = |b: &mut Self| (b.poly(c, ops[0]), b.poly(c, ops[1]));
        Some(match op {
            Opcode::Add => {
                let (a, b) = bin(self);
                self.in_width(c, v, a.add(&b))
            }
            Opcode::Sub => {
                let (a, b) = bin(self);
                self.in_width(c, v, a.sub(&b))
            }
            Opcode::Mul => {
                let (a, b) = bin(self);
                self.in_width(c, v, a.mul(&b))
            }
            Opcode::Shl => {
                let (a, b) = bin(self);
                match b.as_const() {
                    Some(s) if (0..64).contains(&s) => self.in_width(c, v, a.scale(1i128 << s)),
                    _ => self.op(Op::Shl, vec![a, b]),
                }
            }
            Opcode::LShr | Opcode::AShr => {
                let (a, b) = bin(self);
                let s = b.as_const().filter(|s| (0..64).contains(s))?;
                let k = Poly::constant(1i128 << s);
                if op == Opcode::LShr {
                    self.unsigned_result(c, ops, Op::Div(Round::Floor), (a, k))
                } else {
                    self.op(Op::Div(Round::Floor), vec![a, k])
                }
            }
            Opcode::UDiv => {
                let (a, b) = bin(self);
                self.unsigned_result(c, ops, Op::Div(Round::Floor), (a, b))
            }
            Opcode::SDiv => self.binop(c, ops, Op::Div(Round::Trunc)),
            Opcode::URem => {
                let (a, b) = bin(self);
                self.unsigned_result(c, ops, Op::Rem(Round::Floor), (a, b))
            }
            Opcode::SRem => self.binop(c, ops, Op::Rem(Round::Trunc)),
            Opcode::And => {
                let (a, b) = bin(self);
                self.and(a, b)
            }
            Opcode::Or => {
                let (a, b) = bin(self);
                disjoint_sum(&self.arena, &a, &b).unwrap_or_else(|| self.op(Op::Or, vec![a, b]))
            }
            Opcode::Xor => {
                let (a, b) = bin(self);
                match (a.as_const(), b.as_const()) {
                    // `~x` is `-1 - x`.
                    (_, Some(-1)) => Poly::constant(-1).sub(&a),
                    (Some(-1), _) => Poly::constant(-1).sub(&b),
                    _ => self.op(Op::Xor, vec![a, b]),
                }
            }
            Opcode::ICmp => {
                let InstKind::ICmp(p) = kind else {
                    return None;
                };
                if matches!(
                    p,
                    crate::ir::IntPred::Ult
                        | crate::ir::IntPred::Ule
                        | crate::ir::IntPred::Ugt
                        | crate::ir::IntPred::Uge
                ) {
                    self.unsigned_binop(c, ops, Op::Cmp(*p))
                } else {
                    self.binop(c, ops, Op::Cmp(*p))
                }
            }
            Opcode::Select => {
                let cond = self.poly(c, ops[0]);
                let (a, b) = (self.poly(c, ops[1]), self.poly(c, ops[2]));
                self.op(Op::Select, vec![cond, a, b])
            }
            Opcode::Trunc => {
                let a = self.poly(c, ops[0]);
                self.in_width(c, v, a)
            }
            Opcode::ZExt
            | Opcode::SExt
            | Opcode::BitCast
            | Opcode::AddrSpaceCast
            | Opcode::PtrToInt
            | Opcode::IntToPtr
            | Opcode::Freeze => self.poly(c, ops[0]),
            Opcode::GetElementPtr => {
                let InstKind::Gep { source, .. } = kind else {
                    return None;
                };
                self.gep(c, v, *source, ops)?
            }
            _ => return None,
        })
    }

    fn binop(&mut self, c: CtxId, ops: &[Value], op: Op) -> Poly {
        let (a, b) = (self.poly(c, ops[0]), self.poly(c, ops[1]));
        self.op(op, vec![a, b])
    }

    /// An operator that reads its operands as unsigned.
    fn unsigned_binop(&mut self, c: CtxId, ops: &[Value], op: Op) -> Poly {
        let a = self.poly(c, ops[0]);
        let b = self.poly(c, ops[1]);
        let (a, b) = (self.unsigned(c, ops[0], a), self.unsigned(c, ops[1], b));
        self.op(op, vec![a, b])
    }

    /// `a op b` (a division or remainder) on the unsigned readings of the
    /// operands `ops`, read back as signed when the result can reach
    /// 2^(width-1): `-t >> 0` is `-t` again, not `2^32 - t`. A dividend
    /// that is already non-negative, or a constant divisor of at least 2
    /// (a remainder: at most 2^(width-1)), keeps the result below it.
    fn unsigned_result(&mut self, c: CtxId, ops: &[Value], op: Op, (a, b): (Poly, Poly)) -> Poly {
        let wraps = !self.non_negative(&a);
        let (ua, ub) = (
            self.unsigned(c, ops[0], a),
            self.unsigned(c, ops[1], b.clone()),
        );
        let r = self.op(op, vec![ua, ub]);
        let bits = self.int_bits(c, ops[0]);
        let small = match (op, b.as_const(), bits) {
            (Op::Div(_), Some(k), _) => k >= 2,
            (Op::Rem(_), Some(k), Some(w)) if w < 127 => k >= 1 && k <= 1i128 << (w - 1),
            _ => false,
        };
        if wraps && !small {
            self.signed(c, ops[0], r)
        } else {
            r
        }
    }

    /// `p`, the value of `v`, as an unsigned operation reads it: itself
    /// when it cannot be negative, else `p mod 2^width` (the ACF's
    /// integers do not wrap; `0u - t` is `2^32 - t`, not `-t`).
    fn unsigned(&mut self, c: CtxId, v: Value, p: Poly) -> Poly {
        if self.non_negative(&p) {
            return p;
        }
        let f = self.arena.func_of(c);
        let ty = self.m.value_type(self.m.func(f), v);
        let bits = match self.m.types.kind(ty) {
            TypeKind::Int(b) => *b,
            TypeKind::Ptr(_) => 64,
            _ => return p,
        };
        if bits >= 127 {
            return p;
        }
        self.op(
            Op::Rem(Round::Floor),
            vec![p, Poly::constant(1i128 << bits)],
        )
    }

    /// `p`, an unsigned reading of `v`'s type, read as signed again
    /// (`2^32 - 64` is `-64`).
    fn signed(&mut self, c: CtxId, v: Value, p: Poly) -> Poly {
        let Some(bits) = self.int_bits(c, v).filter(|&b| b < 127) else {
            return p;
        };
        let half = Poly::constant(1i128 << (bits - 1));
        let shifted = self.op(
            Op::Rem(Round::Floor),
            vec![p.add(&half), Poly::constant(1i128 << bits)],
        );
        shifted.sub(&half)
    }

    /// `p`, the exact result of `v`'s operation, as `v`'s width holds it:
    /// itself unless its known range can leave the signed range, when it is
    /// read modulo the width (`tid + 0x7fffffff` is negative from lane 1
    /// on). A range that depends on unknowns (parameters, block indices)
    /// keeps the assumption that index arithmetic does not overflow
    /// (clang's `nsw`).
    fn in_width(&mut self, c: CtxId, v: Value, p: Poly) -> Poly {
        let Some(bits) = self.int_bits(c, v).filter(|&b| b < 127) else {
            return p;
        };
        let half = 1i128 << (bits - 1);
        match self.arena.range(&p) {
            Some((lo, hi)) if lo < -half || hi >= half => self.signed(c, v, p),
            _ => p,
        }
    }

    /// The width of `v`'s integer type, in the function of context `c`.
    fn int_bits(&self, c: CtxId, v: Value) -> Option<u32> {
        let f = self.arena.func_of(c);
        self.m.types.int_bits(self.m.value_type(self.m.func(f), v))
    }

    /// Whether `p` is at least 0 (see [`Arena::non_negative`]).
    fn non_negative(&self, p: &Poly) -> bool {
        self.arena.non_negative(p)
    }

    /// `a & b`: masks `2^k - 1` are remainders, masks `-2^k` round down.
    fn and(&mut self, a: Poly, b: Poly) -> Poly {
        let (x, mask) = match (a.as_const(), b.as_const()) {
            (_, Some(k)) => (a, k),
            (Some(k), _) => (b, k),
            _ => return self.op(Op::And, vec![a, b]),
        };
        if mask > 0 && (mask + 1).count_ones() == 1 {
            return self.op(Op::Rem(Round::Floor), vec![x, Poly::constant(mask + 1)]);
        }
        if mask < 0 && (-mask).count_ones() == 1 {
            let low = self.op(
                Op::Rem(Round::Floor),
                vec![x.clone(), Poly::constant(-mask)],
            );
            return x.sub(&low);
        }
        self.op(Op::And, vec![x, Poly::constant(mask)])
    }

    /// An operator over polynomials, simplified (see [`Arena::op`]).
    fn op(&mut self, op: Op, args: Vec<Poly>) -> Poly {
        let ids = args.into_iter().map(|p| self.arena.intern(p)).collect();
        self.arena.op(op, ids)
    }

    fn gep(
        &mut self,
        c: CtxId,
        _v: Value,
        source: crate::ir::TypeId,
        ops: &[Value],
    ) -> Option<Poly> {
        let indices: Vec<Index<Value>> = ops[1..]
            .iter()
            .map(|&x| match self.m.int_value(x) {
                Some(c) => Index::Const(c),
                None => Index::Var(x),
            })
            .collect();
        let (offset, vars) = gep::offsets(&self.m.types, source, &indices).ok()?;
        let mut p = self.poly(c, ops[0]).add(&Poly::constant(offset.into()));
        for (x, scale) in vars {
            let idx = self.poly(c, x);
            p = p.add(&idx.scale(scale.into()));
        }
        Some(p)
    }

    fn call(&mut self, c: CtxId, i: InstId) -> Option<Poly> {
        let f = self.arena.func_of(c);
        let inst = self.m.func(f).inst(i);
        if let Callee::InlineAsm(a) = inst.callee()? {
            return self.asm_copy(c, inst, a);
        }
        let Callee::Direct(callee) = inst.callee()? else {
            return None;
        };
        if self.m.func(callee).intrinsic.is_none() {
            return self.returned(c, i, callee);
        }
        let uniform = |b: &mut Self, u| b.uniform(u, Congruence::UNKNOWN);
        Some(match self.m.func(callee).intrinsic? {
            Intrinsic::SReg(r) => match r {
                SReg::Tid(d) => {
                    Poly::atom(self.arena.intern_atom(Atom::Tid(d), Congruence::UNKNOWN))
                }
                SReg::LaneId => {
                    Poly::atom(self.arena.intern_atom(Atom::LaneId, Congruence::UNKNOWN))
                }
                SReg::Ctaid(d) => uniform(self, Uniform::BlockIdx(d)),
                SReg::Nctaid(d) => uniform(self, Uniform::GridDim(d)),
                SReg::Ntid(d) => match self.block {
                    Some(b) => Poly::constant(b[dim_index(d)].into()),
                    None => uniform(self, Uniform::BlockDim(d)),
                },
                SReg::WarpSize => Poly::constant(crate::hw::WARP_SIZE.into()),
                _ => return None,
            },
            Intrinsic::MinMax(mm) if inst.operands.len() == 2 => {
                let op = match mm.max {
                    false => Op::Min { signed: mm.signed },
                    true => Op::Max { signed: mm.signed },
                };
                let ops = inst.operands.clone();
                self.min_max(c, &ops, op)
            }
            Intrinsic::Pure { .. }
                if inst.operands.len() == 2
                    && crate::ir::intrinsics::is_unsigned_saturating_sub(
                        &self.m.func(callee).name,
                    ) =>
            {
                // `a − b`, or 0 where that would wrap: `umax(a, b) − b`
                // (clang's `i == 0 ? 0 : i − 1`).
                let ops = inst.operands.clone();
                let b = self.poly(c, ops[1]);
                self.min_max(c, &ops, Op::Max { signed: false }).sub(&b)
            }
            _ => return None,
        })
    }

    /// `op` (a min or max) of the two operands `ops`.
    fn min_max(&mut self, c: CtxId, ops: &[Value], op: Op) -> Poly {
        let (a, b) = (self.poly(c, ops[0]), self.poly(c, ops[1]));
        let wraps = !(self.non_negative(&a) && self.non_negative(&b));
        if matches!(op, Op::Min { signed: false } | Op::Max { signed: false }) && wraps {
            // The result is one of the operands read as unsigned: back to
            // the signed reading the other operations use.
            let r = self.unsigned_binop(c, ops, op);
            self.signed(c, ops[0], r)
        } else {
            self.binop(c, ops, op)
        }
    }

    /// An asm call whose one output is a copy of a register the ACF knows
    /// (`mov.u32 %0, %laneid;`, as CUDA's headers read the lane) or of an
    /// input.
    fn asm_copy(&mut self, c: CtxId, inst: &crate::ir::Inst, a: crate::ir::AsmId) -> Option<Poly> {
        let body = crate::ptx::Body::of(self.m.asm(a)).ok()?;
        let k = &body.constraints;
        let [n] = (0..k.operands.len() as u32)
            .filter(|&n| k.is_output(n))
            .collect::<Vec<_>>()[..]
        else {
            return None;
        };
        let atom = |b: &mut Self, atom| Poly::atom(b.arena.intern_atom(atom, Congruence::UNKNOWN));
        match body.copy_of(n)? {
            crate::ptx::Operand::Special(crate::ptx::Special::Sreg(r)) => match r {
                SReg::LaneId => Some(atom(self, Atom::LaneId)),
                SReg::Tid(d) => Some(atom(self, Atom::Tid(d))),
                _ => None,
            },
            crate::ptx::Operand::Imm(v) => {
                let bits = body.reg_bits(crate::ptx::Reg::Arg(n));
                Some(Poly::constant(i128::from(v & crate::ptx::eval::mask(bits))))
            }
            crate::ptx::Operand::Reg(crate::ptx::Reg::Arg(k)) => {
                let v = body.input_value(inst, k)?;
                Some(self.poly(c, v))
            }
            _ => None,
        }
    }

    /// IACF: the value a call returns, as the callee computes it in the
    /// context of this call's arguments.
    fn returned(&mut self, c: CtxId, i: InstId, callee: FuncId) -> Option<Poly> {
        let g = self.m.func(callee);
        if g.is_declaration || self.graphs.calls.is_recursive(callee) {
            return None;
        }
        let inner = self.call_context(c, i)?;
        let rets: Vec<Value> = g
            .block_ids()
            .filter_map(|b| g.terminator(b))
            .filter(|t| t.op == Opcode::Ret)
            .filter_map(|t| t.operands.first().copied())
            .collect();
        let exprs: Vec<ExprId> = rets.iter().map(|&v| self.value(inner, v)).collect();
        let first = *exprs.first()?;
        exprs
            .iter()
            .all(|&e| e == first)
            .then(|| self.arena.poly(first).clone())
    }

    /// The context a call at instruction `i` of context `c` enters: its
    /// callee with the arguments' expressions, or the callee's generic
    /// context past [`MAX_CONTEXTS`] or for recursive callees.
    pub fn call_context(&mut self, c: CtxId, i: InstId) -> Option<CtxId> {
        let f = self.arena.func_of(c);
        let inst = self.m.func(f).inst(i);
        let Some(Callee::Direct(callee)) = inst.callee() else {
            return None;
        };
        let g = self.m.func(callee);
        if g.is_declaration || g.intrinsic.is_some() {
            return None;
        }
        if self.graphs.calls.is_recursive(callee) {
            return Some(self.root(callee));
        }
        let ops = inst.operands.clone();
        self.users.push(i);
        let args: Vec<ExprId> = ops
            .iter()
            .map(|&a| {
                let p = self.poly(c, a);
                self.arena.intern(p)
            })
            .collect();
        self.users.pop();
        if let Some(&ctx) = self.ctx_ids.get(&(callee, args.clone())) {
            return Some(ctx);
        }
        let known = self.per_func.get(&callee).map_or(0, Vec::len);
        if known >= MAX_CONTEXTS {
            return Some(self.root(callee));
        }
        let ctx = self.arena.new_ctx(callee);
        self.args.insert(ctx, Some(args.clone()));
        self.ctx_ids.insert((callee, args), ctx);
        self.per_func.entry(callee).or_default().push(ctx);
        Some(ctx)
    }

    /// The context of `f` whose parameters are leaves (for the kernel:
    /// its own parameters).
    pub fn root(&mut self, f: FuncId) -> CtxId {
        if let Some(&c) = self.roots.get(&f) {
            return c;
        }
        let c = self.arena.new_ctx(f);
        self.args.insert(c, None);
        self.roots.insert(f, c);
        self.per_func.entry(f).or_default().push(c);
        c
    }

    /// Every context of `f` built so far.
    pub fn contexts_of(&self, f: FuncId) -> &[CtxId] {
        self.per_func.get(&f).map_or(&[], Vec::as_slice)
    }

    fn phi(&mut self, c: CtxId, i: InstId) -> Poly {
        let f = self.arena.func_of(c);
        let func = self.m.func(f);
        let inst = func.inst(i);
        let InstKind::Phi { blocks } = &inst.kind else {
            return self.leaf(c, Value::Inst(i));
        };
        let facts = self.graphs.func(f).loop_facts(self.m, func);
        if let Some(header) = facts.header_phi(i) {
            return self
                .loop_phi(c, header)
                .unwrap_or_else(|| self.leaf(c, Value::Inst(i)));
        }
        let incoming: Vec<(Value, BlockId)> = inst
            .operands
            .iter()
            .copied()
            .zip(blocks.iter().copied())
            .collect();
        self.merge(c, i, &incoming)
    }

    /// A loop-header phi entered on one edge as `[iteration] + thread part
    /// of the start`, when every back edge adds a uniform step (the step
    /// is read symbolically: `next − h` with `h` a placeholder).
    fn loop_phi(&mut self, c: CtxId, header: &HeaderPhi) -> Option<Poly> {
        let i = header.phi;
        let [(init, _)] = header.entries[..] else {
            return None;
        };
        let start = self.poly(c, init);
        let pending = self
            .arena
            .intern_atom(Atom::Pending(c, i), Congruence::UNKNOWN);
        let mark = self.log.len();
        let pending_e = self.arena.intern(Poly::atom(pending));
        self.remember(c, Value::Inst(i), pending_e);
        // Values on the way here (the latch's compare that asked for this
        // phi, say) are computed afresh against the placeholder; the depth
        // limit still bounds any other cycle.
        let outer = std::mem::take(&mut self.active);
        let mut steps = Vec::new();
        for &(back, _) in &header.backs {
            let next = self.poly(c, back);
            let step = next.sub(&Poly::atom(pending));
            let e = self.arena.intern(step.clone());
            if self.arena.mentions(e, pending) || self.arena.is_thread(e) {
                steps.clear();
                break;
            }
            steps.push(step);
        }
        self.active = outer;
        // Undo everything built while the phi stood for itself.
        for key in self.log.drain(mark..) {
            self.memo.remove(&key);
        }
        if steps.is_empty() {
            return None;
        }
        let (thread, uniform): (Vec<_>, Vec<_>) = start
            .terms
            .iter()
            .cloned()
            .partition(|(m, _)| m.iter().any(|&a| self.arena.facts(a).thread));
        let uniform_start = Poly::from_terms(uniform);
        let mut cong = self.arena.congruence(&uniform_start);
        for s in &steps {
            let sc = self.arena.congruence(s);
            cong = Congruence::new(gcd(gcd(cong.modulus, sc.modulus), sc.residue), cong.residue);
        }
        let iter = self.uniform(Uniform::LoopPhi(c, i), cong);
        let step = steps[0]
            .as_const()
            .filter(|k| steps.iter().all(|s| s.as_const() == Some(*k)));
        if let (Some(start), Some(step), [(m, 1)]) =
            (uniform_start.as_const(), step, iter.terms.as_slice())
        {
            self.arena.set_counter(m[0], start, step);
        }
        Some(iter.add(&Poly::from_terms(thread)))
    }

    /// A phi outside loop headers: the common incoming value, or selects
    /// on the branches that decide which edge came in.
    fn merge(&mut self, c: CtxId, i: InstId, incoming: &[(Value, BlockId)]) -> Poly {
        let f = self.arena.func_of(c);
        // An undefined incoming value may be anything: whatever the other
        // edges bring will do.
        let defined: Vec<(Value, BlockId)> = incoming
            .iter()
            .copied()
            .filter(|(v, _)| !self.is_undef(*v))
            .collect();
        let exprs: Vec<ExprId> = defined.iter().map(|(v, _)| self.value(c, *v)).collect();
        if let Some(&first) = exprs.first() {
            if exprs.iter().all(|&e| e == first) {
                return self.arena.poly(first).clone();
            }
        }
        let v = Value::Inst(i);
        if !self.deps.is_dependent(f, v) {
            return self.leaf(c, v);
        }
        let join = self.m.func(f).inst(i).block;
        let edges: Vec<(ExprId, BlockId)> =
            exprs.into_iter().zip(defined.iter().map(|e| e.1)).collect();
        match self.gate(c, join, &edges, GATE_DEPTH) {
            Some(p) => p,
            None => self.leaf(c, v),
        }
    }

    /// The value that arrives at `join` over one of `edges` (value, the
    /// block the edge leaves), as selects on the branches that decide the
    /// edge (gated SSA): the nearest block dominating every edge's source
    /// must end in a two-way branch whose sides each enter a region
    /// (single-entry: the side's target has that block as its only
    /// predecessor) holding the edges of one side. `None` when a path is
    /// not decided that way (a side entered from elsewhere too, as in
    /// `a || b`'s shared target), or past `depth` nested branches.
    fn gate(
        &mut self,
        c: CtxId,
        join: BlockId,
        edges: &[(ExprId, BlockId)],
        depth: u32,
    ) -> Option<Poly> {
        let first = edges.first()?.0;
        if edges.iter().all(|&(e, _)| e == first) {
            return Some(self.arena.poly(first).clone());
        }
        if depth == 0 {
            return None;
        }
        let f = self.arena.func_of(c);
        let func = self.m.func(f);
        let g = self.graphs.func(f);
        let root =
            edges
                .iter()
                .map(|e| e.1)
                .try_fold(None, |acc: Option<BlockId>, b| match acc {
                    None => Some(Some(b)),
                    Some(a) => g.dom.common_dominator(a, b).map(Some),
                })??;
        let term = func.terminator(root)?;
        let InstKind::Br { targets } = &term.kind else {
            return None;
        };
        let [t, e] = targets[..] else { return None };
        if t == e {
            return None;
        }
        let entered =
            |x: BlockId, p: BlockId| x != join && g.cfg.preds(x) == [root] && g.dom.dominates(x, p);
        let (mut on_t, mut on_e) = (Vec::new(), Vec::new());
        for &(v, p) in edges {
            let side = if p == root {
                join == t
            } else if entered(t, p) {
                true
            } else if entered(e, p) {
                false
            } else {
                return None;
            };
            if side { &mut on_t } else { &mut on_e }.push((v, p));
        }
        if on_t.is_empty() || on_e.is_empty() {
            return None;
        }
        let cond = term.operands[0];
        let a = self.gate(c, join, &on_t, depth - 1)?;
        let b = self.gate(c, join, &on_e, depth - 1)?;
        let cond = self.poly(c, cond);
        Some(self.op(Op::Select, vec![cond, a, b]))
    }

    fn is_undef(&self, v: Value) -> bool {
        matches!(v, Value::Const(c) if matches!(self.m.konst(c), Const::Undef(_) | Const::Poison(_)))
    }

    /// A load from where the same straight-line code just stored.
    fn load(&mut self, c: CtxId, i: InstId) -> Poly {
        let f = self.arena.func_of(c);
        let func = self.m.func(f);
        let inst = func.inst(i);
        let v = Value::Inst(i);
        let addr = self.value(c, inst.operands[0]);
        let block = &func.blocks[inst.block.index()].insts;
        let at = block.iter().position(|&x| x == i).unwrap_or(0);
        for &j in block[..at].iter().rev() {
            let prior = func.inst(j);
            match prior.op {
                Opcode::Store => {
                    if self.value(c, prior.operands[1]) == addr
                        && self.m.value_type(func, prior.operands[0]) == inst.ty
                    {
                        return self.poly(c, prior.operands[0]);
                    }
                    return self.leaf(c, v);
                }
                Opcode::Call | Opcode::AtomicRmw | Opcode::CmpXchg | Opcode::Fence => {
                    return self.leaf(c, v)
                }
                _ => {}
            }
        }
        self.leaf(c, v)
    }
}

/// How many nested branches a phi's selects may follow.
const GATE_DEPTH: u32 = 8;

pub fn dim_index(d: Dim) -> usize {
    match d {
        Dim::X => 0,
        Dim::Y => 1,
        Dim::Z => 2,
    }
}

impl Arena {
    /// `op(args)`, folded when the arguments decide it, else an atom.
    pub fn op(&mut self, op: Op, args: Vec<ExprId>) -> Poly {
        let consts: Option<Vec<i128>> = args.iter().map(|&e| self.poly(e).as_const()).collect();
        if let Some(c) = consts.as_deref().and_then(|c| fold(op, c)) {
            return Poly::constant(c);
        }
        if let (Op::Cmp(p @ (crate::ir::IntPred::Eq | crate::ir::IntPred::Ne)), [a, b]) =
            (op, args.as_slice())
        {
            // Equal exactly when the difference is 0, overflow or not.
            if let Some(d) = self.poly(*a).sub(self.poly(*b)).as_const() {
                return Poly::constant(i128::from((d == 0) == (p == crate::ir::IntPred::Eq)));
            }
        }
        let k = args.get(1).and_then(|&e| self.poly(e).as_const());
        let x = self.poly(args[0]).clone();
        match (op, k) {
            (Op::Div(_), Some(k)) if k != 0 => {
                if let Some(q) = x.div_exact(k) {
                    return q;
                }
            }
            (Op::Rem(round), Some(k)) if k != 0 => {
                if x.div_exact(k).is_some() {
                    return Poly::constant(0);
                }
                // Uniform or not, a decided residue is the answer: of a
                // flooring remainder always, of one rounding towards zero
                // when the value cannot be negative (`(8t − 1) % 2` is −1
                // at t = 0) or the residue is 0.
                if let Some(r) = self.congruence(&x).residue_mod(k.abs()) {
                    if round == Round::Floor || r == 0 || self.non_negative(&x) {
                        return Poly::constant(r);
                    }
                }
            }
            (Op::Select, _) if args[1] == args[2] => return self.poly(args[1]).clone(),
            _ => {}
        }
        let thread = args.iter().any(|&e| self.is_thread(e));
        let congruence = if thread {
            Congruence::UNKNOWN
        } else {
            self.op_congruence(op, &args, &x, k)
        };
        let atom = if thread {
            Atom::Op(op, args)
        } else {
            Atom::Uniform(Uniform::Op(op, args))
        };
        Poly::atom(self.intern_atom(atom, congruence))
    }

    /// What is known of a uniform `op(x, k)` modulo small numbers; of a
    /// select, min or max, what holds of both choices.
    fn op_congruence(&self, op: Op, args: &[ExprId], x: &Poly, k: Option<i128>) -> Congruence {
        let of = |e: ExprId| self.congruence(self.poly(e));
        match (op, args) {
            (Op::Select, &[_, a, b]) | (Op::Min { .. } | Op::Max { .. }, &[a, b]) => {
                return of(a).either(of(b))
            }
            _ => {}
        }
        let (Op::Div(_), Some(k)) = (op, k) else {
            return Congruence::UNKNOWN;
        };
        let c = self.congruence(x);
        if k > 0 && c.modulus != 0 && c.modulus % k == 0 && c.residue % k == 0 {
            Congruence::new(c.modulus / k, c.residue / k)
        } else {
            Congruence::UNKNOWN
        }
    }
}

/// `a | b` as `a + b` where no bit can be set in both: one side a
/// non-negative constant below 2^k, the other a multiple of 2^k (clang
/// writes `1024·t + 1023` as `or disjoint`).
fn disjoint_sum(arena: &Arena, a: &Poly, b: &Poly) -> Option<Poly> {
    let (p, k) = match (a.as_const(), b.as_const()) {
        (_, Some(k)) => (a, k),
        (Some(k), None) => (b, k),
        _ => return None,
    };
    if k < 0 {
        return None;
    }
    let step = 1i128.checked_shl(128 - (k as u128).leading_zeros())?;
    (arena.congruence(p).residue_mod(step) == Some(0)).then(|| p.add(&Poly::constant(k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_or_below_the_low_zero_bits_adds() {
        let mut ar = Arena::default();
        let t = Poly::atom(ar.intern_atom(Atom::Tid(Dim::X), Congruence::UNKNOWN));
        // 1024 t | 1023 = 1024 t + 1023: t's term has ten zero low bits.
        let row = t.scale(1024);
        let sum = disjoint_sum(&ar, &row, &Poly::constant(1023));
        assert_eq!(sum, Some(row.add(&Poly::constant(1023))));
        assert_eq!(
            disjoint_sum(&ar, &Poly::constant(3), &t.scale(4)),
            Some(t.scale(4).add(&Poly::constant(3)))
        );
        // 1024 t | 1024 may share bit 10; 2 t | 3 may share bit 1.
        assert_eq!(disjoint_sum(&ar, &row, &Poly::constant(1024)), None);
        assert_eq!(disjoint_sum(&ar, &t.scale(2), &Poly::constant(3)), None);
        assert_eq!(disjoint_sum(&ar, &t, &t), None);
    }
}
