//! Logical conditions: what is known of each integer SSA value, per lane,
//! as affine bounds over the bound's symbols (RaCuda §6, the abstraction
//! domain's constraint part). Loop counters (the graph's loop facts) are
//! split into their start plus step times the loop's iteration counter
//! (the ACF's `[i0] + tid` split),
//! branch guards refine the numeric ranges of symbols, and the rest is
//! interval arithmetic over `add`, `mul`, shifts, masks, divisions and
//! extensions. Everything here holds for every lane of every warp, so a
//! bound derived from it is a bound on the warp (the slowest lane).

use super::affine::{Affine, Sym};
use super::rat::Rat;
use crate::dataflow::FastMap as HashMap;
use crate::graph::loop_facts::{self, Amount, Counter, LoopFacts};
use crate::graph::FunctionGraphs;
use crate::ir::intrinsics::SReg;
use crate::ir::{BlockId, Function, Inst, InstKind, IntPred, Intrinsic, Module, Opcode, Value};

/// Per-lane lower and upper bounds of a value (`None`: unbounded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Val {
    pub lo: Option<Affine>,
    pub hi: Option<Affine>,
}

impl Val {
    pub fn exact(a: Affine) -> Val {
        Val {
            lo: Some(a.clone()),
            hi: Some(a),
        }
    }

    pub fn range(lo: i128, hi: i128) -> Val {
        Val {
            lo: Some(Affine::int(lo)),
            hi: Some(Affine::int(hi)),
        }
    }

    /// The value itself, when the bounds meet.
    pub fn as_exact(&self) -> Option<&Affine> {
        match (&self.lo, &self.hi) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        }
    }
}

/// Numeric ranges of symbols, refined by guards.
#[derive(Clone, Debug, Default)]
pub struct Ranges {
    map: HashMap<Sym, (Option<Rat>, Option<Rat>)>,
}

/// What the values of one kernel are computed from.
pub struct Env<'a> {
    pub m: &'a Module,
    pub f: &'a Function,
    pub g: &'a FunctionGraphs,
    pub block: [u32; 3],
    /// Per parameter: declared unsigned in the C++ signature.
    pub unsigned: Vec<bool>,
}

impl<'a> Env<'a> {
    /// Integer width of a value's type.
    pub fn bits(&self, v: Value) -> Option<u32> {
        self.m.types.int_bits(self.m.value_type(self.f, v))
    }

    /// The kernel's loop counters and exit tests.
    pub fn loop_facts(&self) -> &'a LoopFacts {
        self.g.loop_facts(self.m, self.f)
    }

    /// The default numeric range of a symbol.
    fn default_range(&self, s: Sym) -> (Option<Rat>, Option<Rat>) {
        let int = |v: i128| Some(Rat::int(v));
        match s {
            Sym::Param(i) => {
                let bits = self.bits(Value::Arg(i)).unwrap_or(32).min(64);
                if self.unsigned.get(i as usize).copied().unwrap_or(false) {
                    (int(0), int((1i128 << bits) - 1))
                } else {
                    (int(-(1i128 << (bits - 1))), int((1i128 << (bits - 1)) - 1))
                }
            }
            Sym::GridDim(0) => (int(1), int(i32::MAX as i128)),
            Sym::GridDim(_) => (int(1), int(65535)),
            Sym::BlockIdx(0) => (int(0), int(i32::MAX as i128 - 1)),
            Sym::BlockIdx(_) => (int(0), int(65534)),
            Sym::Tid(d) => (int(0), int(i128::from(self.block[usize::from(d)]) - 1)),
            Sym::LaneId => (int(0), int(31)),
            Sym::Ghost(_) | Sym::Factor(_) | Sym::Rem(_) => (int(0), None),
        }
    }

    /// Replaces the symbols that differ between lanes and blocks by the
    /// bound that keeps `a` an upper (`upper`) or lower bound for all of
    /// them.
    pub fn eliminate(&self, a: &Affine, upper: bool) -> Affine {
        let mut r = a.clone();
        for (&s, &c) in &a.terms {
            if !s.is_per_thread() {
                continue;
            }
            let take_high = (c > Rat::ZERO) == upper;
            let by = match (s, take_high) {
                (_, false) => Affine::int(0),
                (Sym::BlockIdx(d), true) => Affine::sym(Sym::GridDim(d)).plus(-Rat::ONE),
                (Sym::Tid(d), true) => Affine::int(i128::from(self.block[usize::from(d)]) - 1),
                (_, true) => Affine::int(31),
            };
            r = r.subst(s, &by);
        }
        r
    }
}

impl Ranges {
    pub fn get(&self, env: &Env<'_>, s: Sym) -> (Option<Rat>, Option<Rat>) {
        self.map
            .get(&s)
            .copied()
            .unwrap_or_else(|| env.default_range(s))
    }

    /// The numeric range of `a`.
    pub fn of(&self, env: &Env<'_>, a: &Affine) -> (Option<Rat>, Option<Rat>) {
        if !a.is_finite() {
            return (None, None);
        }
        let (mut lo, mut hi) = (Some(a.konst), Some(a.konst));
        for (&s, &c) in &a.terms {
            let (slo, shi) = self.get(env, s);
            let (for_lo, for_hi) = if c > Rat::ZERO {
                (slo, shi)
            } else {
                (shi, slo)
            };
            lo = lo
                .zip(for_lo)
                .and_then(|(x, y)| x.checked_add(c.checked_mul(y)?));
            hi = hi
                .zip(for_hi)
                .and_then(|(x, y)| x.checked_add(c.checked_mul(y)?));
        }
        (lo, hi)
    }

    /// Whether `a ≥ 0` for every value of the symbols.
    pub fn nonneg(&self, env: &Env<'_>, a: &Affine) -> bool {
        self.of(env, a).0.is_some_and(|lo| lo >= Rat::ZERO)
    }

    /// Narrows each factor `⌈max(0, num)/den⌉` from below by its
    /// numerator's range: a positive numerator over a positive
    /// denominator is at least 1 (the guard `start < n` before a
    /// grid-stride loop makes its `⌈n/stride⌉` trip count at least 1).
    pub fn bound_factors(&mut self, env: &Env<'_>, factors: &super::bound::Factors) {
        for (id, f) in factors.iter() {
            let num_lo = self.of(env, &f.num).0;
            let den_lo = self.of(env, &f.den).0;
            if num_lo.is_some_and(|n| n > Rat::ZERO) && den_lo.is_some_and(|d| d > Rat::ZERO) {
                let s = Sym::Factor(id);
                let (lo, hi) = self.get(env, s);
                let lo = lo.map_or(Rat::ONE, |x| x.max(Rat::ONE));
                self.map.insert(s, (Some(lo), hi));
            }
        }
    }

    /// Narrows the ranges with the fact `a ≥ 0` (one pass per symbol).
    pub fn assume(&mut self, env: &Env<'_>, a: &Affine) {
        for (&s, &c) in &a.terms {
            let mut rest = a.clone();
            rest.terms.remove(&s);
            // c·s ≥ -rest ≥ -(max of rest).
            let Some(rest_hi) = self.of(env, &rest).1 else {
                continue;
            };
            let bound = -rest_hi * c.recip();
            let (mut lo, mut hi) = self.get(env, s);
            // Every symbol is an integer. An overflow narrows nothing.
            if c > Rat::ZERO {
                let Some(b) = bound.ceil().map(Rat::int) else {
                    continue;
                };
                lo = Some(lo.map_or(b, |x| x.max(b)));
            } else {
                let Some(b) = bound.floor().map(Rat::int) else {
                    continue;
                };
                hi = Some(hi.map_or(b, |x| x.min(b)));
            }
            self.map.insert(s, (lo, hi));
        }
    }
}

/// The values of one kernel under one set of ranges, memoised.
pub struct Values<'e, 'a> {
    pub env: &'e Env<'a>,
    pub ranges: Ranges,
    memo: HashMap<Value, Val>,
    busy: Vec<Value>,
    /// Numeric bounds guards put on values that are no symbol
    /// (`x & 3 ≠ 0` gives `x & 3 ≥ 1`).
    refined: HashMap<Value, (Option<i128>, Option<i128>)>,
}

impl<'e, 'a> Values<'e, 'a> {
    pub fn new(env: &'e Env<'a>, ranges: Ranges) -> Self {
        Values {
            env,
            ranges,
            memo: HashMap::default(),
            busy: Vec::new(),
            refined: HashMap::default(),
        }
    }

    /// Narrows `v` to `lo..=hi` (a guard on it holds).
    pub fn refine(&mut self, v: Value, lo: Option<i128>, hi: Option<i128>) {
        let e = self.refined.entry(v).or_insert((None, None));
        e.0 = e.0.max(lo).or(lo);
        e.1 = match (e.1, hi) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.memo.clear();
    }

    /// Applies a guard `lhs pred rhs` (outcome `truth`) with a constant
    /// side to the other side's numeric bounds.
    pub fn refine_compare(&mut self, pred: IntPred, lhs: Value, rhs: Value, truth: bool) {
        let pred = if truth { pred } else { pred.negated() };
        let (x, c, pred) = match (self.konst(lhs), self.konst(rhs)) {
            (None, Some(c)) => (lhs, c, pred),
            (Some(c), None) => (rhs, c, pred.swapped()),
            _ => return,
        };
        if pred.is_unsigned() && !(self.nonneg(x) && c >= 0) {
            return;
        }
        let lo_num = self.val(x).lo.and_then(|l| self.ranges.of(self.env, &l).0);
        let hi_num = self.val(x).hi.and_then(|h| self.ranges.of(self.env, &h).1);
        let (lo, hi) = match pred {
            IntPred::Slt | IntPred::Ult => (None, Some(c - 1)),
            IntPred::Sle | IntPred::Ule => (None, Some(c)),
            IntPred::Sgt | IntPred::Ugt => (Some(c + 1), None),
            IntPred::Sge | IntPred::Uge => (Some(c), None),
            IntPred::Eq => (Some(c), Some(c)),
            IntPred::Ne if lo_num == Some(Rat::int(c)) => (Some(c + 1), None),
            IntPred::Ne if hi_num == Some(Rat::int(c)) => (None, Some(c - 1)),
            IntPred::Ne => return,
        };
        self.refine(x, lo, hi);
    }

    /// Narrows the ranges with `a ≥ 0` (values are recomputed).
    pub fn assume(&mut self, a: &Affine) {
        self.ranges.assume(self.env, a);
        self.memo.clear();
    }

    pub fn val(&mut self, v: Value) -> Val {
        if let Some(x) = self.memo.get(&v) {
            return x.clone();
        }
        if self.busy.contains(&v) || self.busy.len() > 200 {
            return Val::default();
        }
        self.busy.push(v);
        let mut r = self.compute(v);
        self.busy.pop();
        if let Some(&(lo, hi)) = self.refined.get(&v) {
            let weaker = |a: &Option<Affine>, c: i128, low: bool, this: &Self| match a {
                None => true,
                Some(a) => {
                    let (alo, ahi) = this.ranges.of(this.env, a);
                    if low {
                        alo.is_none_or(|x| x < Rat::int(c))
                    } else {
                        ahi.is_none_or(|x| x > Rat::int(c))
                    }
                }
            };
            if let Some(c) = lo.filter(|&c| weaker(&r.lo, c, true, self)) {
                r.lo = Some(Affine::int(c));
            }
            if let Some(c) = hi.filter(|&c| weaker(&r.hi, c, false, self)) {
                r.hi = Some(Affine::int(c));
            }
        }
        self.memo.insert(v, r.clone());
        r
    }

    /// `Some(true)` when `a ≥ b` always, `Some(false)` when `a ≤ b`.
    fn order(&self, a: &Affine, b: &Affine) -> Option<bool> {
        let d = a.sub(b);
        let (lo, hi) = self.ranges.of(self.env, &d);
        if lo.is_some_and(|x| x >= Rat::ZERO) {
            Some(true)
        } else if hi.is_some_and(|x| x <= Rat::ZERO) {
            Some(false)
        } else {
            None
        }
    }

    fn min(&self, a: Option<Affine>, b: Option<Affine>) -> Option<Affine> {
        let (a, b) = (a?, b?);
        match self.order(&a, &b) {
            Some(true) => Some(b),
            Some(false) => Some(a),
            None => None,
        }
    }

    fn max(&self, a: Option<Affine>, b: Option<Affine>) -> Option<Affine> {
        let (a, b) = (a?, b?);
        match self.order(&a, &b) {
            Some(true) => Some(a),
            Some(false) => Some(b),
            None => None,
        }
    }

    fn hull(&self, a: Val, b: Val) -> Val {
        Val {
            lo: self.min(a.lo, b.lo),
            hi: self.max(a.hi, b.hi),
        }
    }

    /// Whether the value is provably nonnegative.
    pub fn nonneg(&mut self, v: Value) -> bool {
        let lo = self.val(v).lo;
        lo.is_some_and(|lo| self.ranges.nonneg(self.env, &lo))
    }

    fn width_range(&self, v: Value, signed: bool) -> Val {
        match self.env.bits(v) {
            Some(b) if b <= 62 && signed => Val::range(-(1 << (b - 1)), (1 << (b - 1)) - 1),
            Some(b) if b <= 62 => Val::range(0, (1 << b) - 1),
            _ => Val::default(),
        }
    }

    fn compute(&mut self, v: Value) -> Val {
        let env = self.env;
        match v {
            Value::Const(_) => match env.m.int_value(v) {
                Some(c) if env.bits(v) == Some(1) => Val::exact(Affine::int(i128::from(c & 1))),
                Some(c) => Val::exact(Affine::int(i128::from(c))),
                None => Val::default(),
            },
            Value::Arg(i) if env.bits(v).is_some() => Val::exact(Affine::sym(Sym::Param(i))),
            Value::Inst(i) => self.inst(i),
            _ => Val::default(),
        }
    }

    fn konst(&mut self, v: Value) -> Option<i128> {
        self.val(v)
            .as_exact()?
            .as_constant()
            .filter(|c| c.is_integer())
            .map(|c| c.num())
    }

    fn inst(&mut self, id: crate::ir::InstId) -> Val {
        let env = self.env;
        let inst = env.f.inst(id);
        let ops = &inst.operands;
        let lin = |a: Val, b: Val, f: &dyn Fn(&Affine, &Affine) -> Affine, flip: bool| {
            // a + b (flip = false) or a - b (flip = true).
            let (blo, bhi) = if flip { (b.hi, b.lo) } else { (b.lo, b.hi) };
            Val {
                lo: a.lo.zip(blo).map(|(x, y)| f(&x, &y)),
                hi: a.hi.zip(bhi).map(|(x, y)| f(&x, &y)),
            }
        };
        match inst.op {
            Opcode::Add => {
                let (a, b) = (self.val(ops[0]), self.val(ops[1]));
                lin(a, b, &|x, y| x.add(y), false)
            }
            Opcode::Sub => {
                let (a, b) = (self.val(ops[0]), self.val(ops[1]));
                lin(a, b, &|x, y| x.sub(y), true)
            }
            Opcode::Or if self.disjoint(ops[0], ops[1]) => {
                let (a, b) = (self.val(ops[0]), self.val(ops[1]));
                lin(a, b, &|x, y| x.add(y), false)
            }
            Opcode::Mul | Opcode::Shl => {
                let (x, c) = match (self.konst(ops[0]), self.konst(ops[1])) {
                    (_, Some(c)) => (ops[0], c),
                    (Some(c), None) if inst.op == Opcode::Mul => (ops[1], c),
                    _ => return self.product(ops[0], ops[1]),
                };
                let k = if inst.op == Opcode::Shl {
                    if !(0..62).contains(&c) {
                        return Val::default();
                    }
                    1i128 << c
                } else {
                    c
                };
                self.scaled(x, Rat::int(k))
            }
            Opcode::UDiv | Opcode::SDiv | Opcode::LShr | Opcode::AShr => {
                let Some(c) = self.konst(ops[1]) else {
                    return Val::default();
                };
                let d = if matches!(inst.op, Opcode::LShr | Opcode::AShr) {
                    if !(0..62).contains(&c) {
                        return Val::default();
                    }
                    1i128 << c
                } else {
                    c
                };
                self.divided(ops[0], d, inst.op)
            }
            Opcode::URem | Opcode::SRem => match self.konst(ops[1]) {
                Some(c) if c > 0 && self.nonneg(ops[0]) => {
                    let x = self.val(ops[0]).hi;
                    let hi = self.min(x, Some(Affine::int(c - 1)));
                    Val {
                        lo: Some(Affine::int(0)),
                        hi: hi.or(Some(Affine::int(c - 1))),
                    }
                }
                Some(c) if c > 0 && inst.op == Opcode::SRem => Val::range(-(c - 1), c - 1),
                _ => Val::default(),
            },
            Opcode::And => self.masked(ops[0], ops[1]),
            Opcode::ZExt => {
                if self.nonneg(ops[0]) {
                    self.val(ops[0])
                } else {
                    self.width_range(ops[0], false)
                }
            }
            Opcode::SExt | Opcode::Trunc | Opcode::Freeze => {
                let x = self.val(ops[0]);
                if x == Val::default() {
                    self.width_range(Value::Inst(id), true)
                } else {
                    x
                }
            }
            Opcode::ICmp => Val::range(0, 1),
            Opcode::Select => {
                let (a, b) = (self.val(ops[1]), self.val(ops[2]));
                self.hull(a, b)
            }
            Opcode::Phi => self.phi(id),
            Opcode::Call => self.call(id),
            _ if env.bits(Value::Inst(id)) == Some(1) => Val::range(0, 1),
            _ => Val::default(),
        }
    }

    /// An upper bound on `a − b` per lane, when the two share a term
    /// that cancels (`aBegin + wA` against `aBegin = wA·blockIdx.x`: the
    /// product is no affine form, but the difference is `wA`). `None`
    /// when nothing cancels (the bounds of `a` and `b` apart are as good)
    /// or a remaining term has no bound.
    pub fn gap(&mut self, a: Value, b: Value) -> Option<Affine> {
        let mut terms: Vec<(Value, Rat)> = Vec::new();
        let mut konst = Rat::ZERO;
        let (mut seen_a, mut seen_b) = (Vec::new(), Vec::new());
        self.leaves(a, Rat::ONE, &mut terms, &mut konst, 0);
        seen_a.extend(terms.iter().map(|t| t.0));
        self.leaves(b, -Rat::ONE, &mut terms, &mut konst, 0);
        seen_b.extend(terms.iter().skip(seen_a.len()).map(|t| t.0));
        // Sum the coefficients per leaf.
        let mut net: Vec<(Value, Rat)> = Vec::new();
        for (v, c) in terms {
            match net.iter_mut().find(|x| x.0 == v) {
                Some(x) => x.1 = x.1 + c,
                None => net.push((v, c)),
            }
        }
        let cancels = net
            .iter()
            .any(|(v, c)| c.is_zero() && seen_a.contains(v) && seen_b.contains(v));
        if !cancels {
            return None;
        }
        let mut out = Affine::constant(konst);
        for (v, c) in net.into_iter().filter(|x| !x.1.is_zero()) {
            let x = self.val(v);
            let side = if c > Rat::ZERO { x.hi } else { x.lo };
            out = out.add(&side?.scale(c));
        }
        out.is_finite().then_some(out)
    }

    /// `v·coeff` as a sum of leaves through `add`, `sub`, `sext` and
    /// products by constants (the same no-overflow reading as [`Self::val`]).
    fn leaves(
        &mut self,
        v: Value,
        coeff: Rat,
        out: &mut Vec<(Value, Rat)>,
        konst: &mut Rat,
        depth: u32,
    ) {
        if let Some(c) = self.konst(v) {
            *konst = *konst + coeff * Rat::int(c);
            return;
        }
        let Value::Inst(id) = v else {
            out.push((v, coeff));
            return;
        };
        let inst = self.env.f.inst(id);
        let ops = inst.operands.clone();
        if depth > 16 {
            out.push((v, coeff));
            return;
        }
        match inst.op {
            Opcode::Add => {
                self.leaves(ops[0], coeff, out, konst, depth + 1);
                self.leaves(ops[1], coeff, out, konst, depth + 1);
            }
            Opcode::Sub => {
                self.leaves(ops[0], coeff, out, konst, depth + 1);
                self.leaves(ops[1], -coeff, out, konst, depth + 1);
            }
            Opcode::SExt => self.leaves(ops[0], coeff, out, konst, depth + 1),
            Opcode::ZExt if self.nonneg(ops[0]) => {
                self.leaves(ops[0], coeff, out, konst, depth + 1)
            }
            Opcode::Mul | Opcode::Shl => {
                let k = match (self.konst(ops[0]), self.konst(ops[1])) {
                    (_, Some(c)) if inst.op == Opcode::Shl && (0..62).contains(&c) => {
                        Some((ops[0], 1i128 << c))
                    }
                    (_, Some(c)) if inst.op == Opcode::Mul => Some((ops[0], c)),
                    (Some(c), None) if inst.op == Opcode::Mul => Some((ops[1], c)),
                    _ => None,
                };
                match k {
                    Some((x, c)) => self.leaves(x, coeff * Rat::int(c), out, konst, depth + 1),
                    None => out.push((v, coeff)),
                }
            }
            _ => out.push((v, coeff)),
        }
    }

    /// `x·k`.
    fn scaled(&mut self, x: Value, k: Rat) -> Val {
        let a = self.val(x);
        if k >= Rat::ZERO {
            Val {
                lo: a.lo.map(|l| l.scale(k)),
                hi: a.hi.map(|h| h.scale(k)),
            }
        } else {
            Val {
                lo: a.hi.map(|h| h.scale(k)),
                hi: a.lo.map(|l| l.scale(k)),
            }
        }
    }

    /// A product of two non-constant values: only numeric bounds.
    fn product(&mut self, a: Value, b: Value) -> Val {
        let (x, y) = (self.val(a), self.val(b));
        let num = |v: &Val, this: &Self| {
            let lo = v.lo.as_ref().and_then(|l| this.ranges.of(this.env, l).0);
            let hi = v.hi.as_ref().and_then(|h| this.ranges.of(this.env, h).1);
            (lo, hi)
        };
        let ((al, ah), (bl, bh)) = (num(&x, self), num(&y, self));
        match (al, ah, bl, bh) {
            (Some(al), Some(ah), Some(bl), Some(bh)) => {
                // Checked: a product beyond i128 (three 64-bit
                // parameters) is simply unknown.
                let c = [(al, bl), (al, bh), (ah, bl), (ah, bh)].map(|(x, y)| x.checked_mul(y));
                let (Some(lo), Some(hi)) = (
                    c.iter().min().copied().flatten(),
                    c.iter().max().copied().flatten(),
                ) else {
                    return Val::default();
                };
                if c.iter().any(Option::is_none) {
                    return Val::default();
                }
                Val {
                    lo: Some(Affine::constant(lo)),
                    hi: Some(Affine::constant(hi)),
                }
            }
            _ => Val::default(),
        }
    }

    /// `x / d` rounded as `op` does, for a positive constant `d`.
    fn divided(&mut self, x: Value, d: i128, op: Opcode) -> Val {
        if d <= 0 {
            return Val::default();
        }
        let unsigned = matches!(op, Opcode::UDiv | Opcode::LShr);
        let nonneg = self.nonneg(x);
        if unsigned && !nonneg {
            return Val::default();
        }
        let a = self.val(x);
        // A known constant divides exactly (clang 22 starts a halving loop
        // at `blockDim.x >> 1`, a constant for a given block shape).
        if let Some(c) = a.as_exact().and_then(|e| e.as_constant()) {
            if c.is_integer() {
                let n = c.num();
                // sdiv truncates; shifts and unsigned division floor.
                let q = if op == Opcode::SDiv {
                    n / d
                } else {
                    n.div_euclid(d)
                };
                return Val::exact(Affine::int(q));
            }
        }
        let inv = Rat::new(1, d);
        let slack = Rat::new(d - 1, d);
        // Floor for nonnegative operands (and arithmetic shifts); sdiv of a
        // negative operand rounds up.
        let up_possible = op == Opcode::SDiv && !nonneg;
        Val {
            lo: a.lo.map(|l| l.scale(inv).plus(-slack)),
            hi: a.hi.map(|h| {
                let q = h.scale(inv);
                if up_possible {
                    q.plus(slack)
                } else {
                    q
                }
            }),
        }
    }

    /// `x & mask`.
    fn masked(&mut self, x: Value, mask: Value) -> Val {
        let (x, c) = match (self.konst(x), self.konst(mask)) {
            (_, Some(c)) => (x, c),
            (Some(c), None) => (mask, c),
            _ => return Val::default(),
        };
        if c >= 0 && (c + 1) & c == 0 {
            // A low mask: the value mod 2^k, at most the value when that is
            // nonnegative.
            let hi = if self.nonneg(x) {
                let h = self.val(x).hi;
                self.min(h, Some(Affine::int(c)))
            } else {
                None
            };
            return Val {
                lo: Some(Affine::int(0)),
                hi: hi.or(Some(Affine::int(c))),
            };
        }
        let low = c.trailing_zeros().min(62);
        let clears_low = c >> low << low == c;
        if self.nonneg(x) && clears_low {
            // Clears the low bits (and maybe bits the value never has): the
            // value rounded down to a multiple of 2^low.
            // The mask keeps every bit a nonnegative value of its width can
            // have above the low ones (or the value's bound says so).
            let keep = c | ((1 << low) - 1);
            let width_ok = self.env.bits(x).is_some_and(|b| {
                b <= 63 && keep & ((1i128 << (b - 1)) - 1) == (1i128 << (b - 1)) - 1
            });
            let fits = c < 0
                || width_ok
                || self
                    .val(x)
                    .hi
                    .and_then(|h| self.ranges.of(self.env, &h).1)
                    .is_some_and(|h| h <= Rat::int(keep));
            if fits {
                let a = self.val(x);
                return Val {
                    lo: a.lo.map(|l| l.plus(-Rat::int((1 << low) - 1))),
                    hi: a.hi,
                };
            }
        }
        if c >= 0 {
            return Val::range(0, c);
        }
        Val::default()
    }

    /// Whether `a | b` adds: no bit set in both (one a multiple of a power
    /// of two the other is below).
    fn disjoint(&mut self, a: Value, b: Value) -> bool {
        let (x, c) = match (self.konst(a), self.konst(b)) {
            (_, Some(c)) => (a, c),
            (Some(c), None) => (b, c),
            _ => return false,
        };
        if c < 0 {
            return false;
        }
        let need = 128 - (c as u128).leading_zeros();
        congruence_bits(self.env, x) >= need
    }

    fn call(&mut self, id: crate::ir::InstId) -> Val {
        let env = self.env;
        let inst = env.f.inst(id);
        match env.m.called_intrinsic(inst) {
            Some(Intrinsic::SReg(r)) => match r {
                SReg::Tid(d) => Val::exact(Affine::sym(Sym::Tid(d.index() as u8))),
                SReg::Ntid(d) => Val::exact(Affine::int(i128::from(env.block[d.index()]))),
                SReg::Ctaid(d) => Val::exact(Affine::sym(Sym::BlockIdx(d.index() as u8))),
                SReg::Nctaid(d) => Val::exact(Affine::sym(Sym::GridDim(d.index() as u8))),
                SReg::LaneId => Val::exact(Affine::sym(Sym::LaneId)),
                SReg::WarpSize => Val::exact(Affine::int(32)),
                _ => Val::default(),
            },
            Some(Intrinsic::MinMax(mm)) => {
                let (a, b) = (self.val(inst.operands[0]), self.val(inst.operands[1]));
                let h = self.hull(a.clone(), b.clone());
                if mm.max {
                    Val {
                        lo: self.max(a.lo.clone(), b.lo.clone()).or(a.lo).or(b.lo),
                        hi: h.hi,
                    }
                } else {
                    Val {
                        lo: h.lo,
                        hi: self.min(a.hi.clone(), b.hi.clone()).or(a.hi).or(b.hi),
                    }
                }
            }
            _ => Val::default(),
        }
    }

    fn phi(&mut self, id: crate::ir::InstId) -> Val {
        let env = self.env;
        let facts = env.loop_facts();
        if let Some(counter) = facts.counter(id) {
            return self.induction(counter);
        }
        if facts.header_phi(id).is_some() {
            // A header phi that is no counter: only its width.
            return Val::default();
        }
        let inst = env.f.inst(id);
        let mut acc: Option<Val> = None;
        for &x in &inst.operands {
            let v = self.val(x);
            acc = Some(match acc {
                None => v,
                Some(a) => self.hull(a, v),
            });
        }
        acc.unwrap_or_default()
    }

    /// `h = start + step·k` on the loop's iteration `k`, for a counter
    /// that adds a constant; a nonnegative invariant step only keeps the
    /// start as a lower bound.
    fn induction(&mut self, counter: &Counter) -> Val {
        let s = self.val(counter.start);
        let k = Affine::sym(Sym::Ghost(counter.lp));
        match counter.step.and_then(|st| st.added()) {
            Some(Amount::Const(c)) => {
                let ck = k.scale(Rat::int(c));
                Val {
                    lo: s.lo.map(|l| l.add(&ck)),
                    hi: s.hi.map(|h| h.add(&ck)),
                }
            }
            Some(Amount::Invariant(v)) if self.nonneg(v) => Val { lo: s.lo, hi: None },
            _ => Val::default(),
        }
    }
}

/// How many low bits of `v` are known zero (from shifts, multiplications
/// by even constants and masks).
pub fn congruence_bits(env: &Env<'_>, v: Value) -> u32 {
    fn go(env: &Env<'_>, v: Value, depth: u32) -> u32 {
        if depth > 16 {
            return 0;
        }
        if let Some(c) = env.m.int_value(v) {
            return if c == 0 { 64 } else { c.trailing_zeros() };
        }
        let Value::Inst(i) = v else { return 0 };
        let inst = env.f.inst(i);
        let ops = &inst.operands;
        let k = |x: Value| env.m.int_value(x);
        match inst.op {
            Opcode::Shl => match k(ops[1]) {
                Some(c) if (0..64).contains(&c) => go(env, ops[0], depth + 1) + c as u32,
                _ => 0,
            },
            Opcode::Mul => go(env, ops[0], depth + 1) + go(env, ops[1], depth + 1),
            Opcode::And => go(env, ops[0], depth + 1).max(go(env, ops[1], depth + 1)),
            Opcode::Add | Opcode::Sub => go(env, ops[0], depth + 1).min(go(env, ops[1], depth + 1)),
            Opcode::ZExt | Opcode::SExt | Opcode::Trunc => go(env, ops[0], depth + 1),
            Opcode::Call => match env.m.called_intrinsic(inst) {
                Some(Intrinsic::SReg(SReg::Ntid(d))) => env.block[d.index()].trailing_zeros(),
                _ => 0,
            },
            _ => 0,
        }
        .min(64)
    }
    go(env, v, 0)
}

/// A comparison as a fact `a ≥ 0` on the symbols (or two), when its
/// operands are known exactly enough: `lhs pred rhs` is `truth`.
pub fn facts_of_compare(
    vals: &mut Values<'_, '_>,
    pred: IntPred,
    lhs: Value,
    rhs: Value,
    truth: bool,
) -> Vec<Affine> {
    let pred = if truth { pred } else { pred.negated() };
    let (a, b) = (vals.val(lhs), vals.val(rhs));
    if pred.is_unsigned() && !(vals.nonneg(lhs) && vals.nonneg(rhs)) {
        // `a <u b` with b ≥ 0 still gives 0 ≤ a < b.
        if matches!(pred, IntPred::Ult | IntPred::Ule) && vals.nonneg(rhs) {
            let mut out = less(&a, &b, pred == IntPred::Ule);
            if let Some(x) = a.as_exact() {
                out.push(x.clone());
            }
            return out;
        }
        return Vec::new();
    }
    match pred {
        IntPred::Slt | IntPred::Ult => less(&a, &b, false),
        IntPred::Sle | IntPred::Ule => less(&a, &b, true),
        IntPred::Sgt | IntPred::Ugt => less(&b, &a, false),
        IntPred::Sge | IntPred::Uge => less(&b, &a, true),
        IntPred::Eq => {
            let mut v = less(&a, &b, true);
            v.extend(less(&b, &a, true));
            v
        }
        IntPred::Ne => {
            // Only at an end of a range: an integer x ≠ c with x ≥ c gives
            // x ≥ c + 1, so hi(x) ≥ c + 1 (`(h − 1) >> 1 ≠ 0` gives h ≥ 3).
            let Some(c) = b.as_exact().and_then(|c| c.as_constant()) else {
                return Vec::new();
            };
            if !c.is_integer() {
                return Vec::new();
            }
            let env = vals.env;
            let least = a.lo.as_ref().and_then(|l| vals.ranges.of(env, l).0);
            let most = a.hi.as_ref().and_then(|h| vals.ranges.of(env, h).1);
            // The ranges may have taken the step already (`refine_compare`
            // runs first: `w > 0`, `w ≠ 1` leaves w's least value 2), so
            // the end is past c; then `x ≥ least` is the fact.
            let (least, most) = (least.and_then(Rat::ceil), most.and_then(Rat::floor));
            match (&a.lo, &a.hi) {
                (_, Some(h)) if least.is_some_and(|l| l >= c.num()) => {
                    let l = least.unwrap_or(0).max(c.num() + 1);
                    vec![h.plus(-Rat::int(l))]
                }
                (Some(l), _) if most.is_some_and(|m| m <= c.num()) => {
                    let m = most.unwrap_or(0).min(c.num() - 1);
                    vec![l.scale(-Rat::ONE).plus(Rat::int(m))]
                }
                _ => Vec::new(),
            }
        }
    }
}

/// Facts for `a < b` (or `a ≤ b`): `hi(b) - a - 1 ≥ 0` when `a` is exact,
/// `b - lo(a) - 1 ≥ 0` when `b` is.
fn less(a: &Val, b: &Val, or_equal: bool) -> Vec<Affine> {
    let gap = if or_equal { Rat::ZERO } else { -Rat::ONE };
    let mut out = Vec::new();
    if let (Some(x), Some(bh)) = (a.as_exact(), &b.hi) {
        out.push(bh.sub(x).plus(gap));
    }
    if let (Some(y), Some(al)) = (b.as_exact(), &a.lo) {
        out.push(y.sub(al).plus(gap));
    }
    out
}

/// Facts that hold on the edge `from → to`: the conditions of the
/// dominating branches whose outcome leads here and the `llvm.assume`s of
/// the dominating blocks (clang 22 enters an unrolled loop's remainder
/// under `assume(n % 4 != 0)` instead of a branch), outermost first, and
/// `from`'s own. Each narrows `vals`' ranges before the next is read
/// (`w > 0` then `w ≠ 1` gives `w ≥ 2`).
pub fn edge_facts(vals: &mut Values<'_, '_>, from: BlockId, to: BlockId) -> Vec<Affine> {
    let env = vals.env;
    // Innermost first: (block, the edge out of it known to be taken).
    let mut chain = vec![(from, Some(to))];
    let mut b = from;
    while let Some(d) = env.g.dom.idom(b) {
        // The edge d → s is certain if s dominates `from` and d is its
        // only predecessor.
        let s = env
            .g
            .cfg
            .succs(d)
            .iter()
            .copied()
            .find(|&s| env.g.dom.dominates(s, from) && env.g.cfg.preds(s).len() == 1 && s != d);
        chain.push((d, s));
        b = d;
    }
    let mut out = Vec::new();
    for (d, s) in chain.into_iter().rev() {
        // A block that ran to its end ran its assumes.
        let mut atoms = Vec::new();
        for &i in &env.f.blocks[d.index()].insts {
            let inst = env.f.inst(i);
            if is_assume(env.m, inst) {
                loop_facts::conjuncts(env.m, env.f, inst.operands[0], true, &mut atoms);
            }
        }
        if let (Some(s), Some(t)) = (s, env.f.terminator(d)) {
            if let InstKind::Br { targets } = &t.kind {
                if targets.len() == 2 && targets[0] != targets[1] {
                    let stays = targets[0] == s;
                    loop_facts::conjuncts(env.m, env.f, t.operands[0], stays, &mut atoms);
                }
            }
        }
        for (c, tr) in atoms {
            let Value::Inst(ci) = c else { continue };
            let ci = env.f.inst(ci);
            if let InstKind::ICmp(p) = ci.kind {
                vals.refine_compare(p, ci.operands[0], ci.operands[1], tr);
                let facts = facts_of_compare(vals, p, ci.operands[0], ci.operands[1], tr);
                // A fact whose arithmetic overflowed says nothing.
                for fact in facts.into_iter().filter(Affine::is_finite) {
                    vals.assume(&env.eliminate(&fact, true));
                    out.push(fact);
                }
            }
        }
    }
    out
}

/// `llvm.assume(c)`: `c` holds once the call has run (LLVM makes it
/// undefined behaviour otherwise).
fn is_assume(m: &Module, inst: &Inst) -> bool {
    m.called_intrinsic(inst) == Some(Intrinsic::Assume) && inst.operands.len() == 1
}

/// Whether a function parameter is declared unsigned, from the demangled
/// signature `name(int, unsigned int, float*)`.
pub fn unsigned_params(demangled: &str, count: usize) -> Vec<bool> {
    let inside = demangled
        .find('(')
        .map(|i| &demangled[i + 1..demangled.rfind(')').unwrap_or(demangled.len())])
        .unwrap_or("");
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in inside.chars() {
        depth += match ch {
            '<' | '(' => 1,
            '>' | ')' => -1,
            _ => 0,
        };
        if ch == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    parts.push(cur);
    if parts.len() != count {
        return vec![false; count];
    }
    parts
        .iter()
        .map(|p| {
            let p = p.trim();
            !p.contains('*') && (p.starts_with("unsigned") || p == "size_t")
        })
        .collect()
}
