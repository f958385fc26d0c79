//! The analysis on modules built by hand, one rule at a time. Each test's
//! comment gives the IR and the expectation derived from the rule.

use super::IfdsTaint;
use crate::graph::ModuleGraphs;
use crate::ir::builder::{FunctionBuilder, ModuleBuilder};
use crate::ir::{addrspace, BlockId, FuncId, IntPred, Module, Opcode, RmwOp, TypeId, Value};
use crate::memory::Spaces;
use crate::taint::{DependenceAnalysis, KernelDeps, Why};

pub(super) fn deps(m: &Module, kernel: &str) -> KernelDeps {
    let graphs = ModuleGraphs::new(m);
    let k = m.find_function(kernel).expect("kernel");
    let reached = graphs.calls.reachable_from(k);
    let spaces = Spaces::for_kernel(m, k, &reached);
    IfdsTaint.analyze(&crate::taint::KernelScope {
        m,
        graphs: &graphs,
        kernel: k,
        reached: &reached,
        spaces: &spaces,
    })
}

pub(super) fn i32t(mb: &mut ModuleBuilder) -> TypeId {
    mb.int(32)
}

/// Starts the kernel `void k(params)`.
pub(super) fn define_kernel<'m>(
    mb: &'m mut ModuleBuilder,
    params: &[TypeId],
) -> FunctionBuilder<'m> {
    let void = mb.void();
    let mut fb = mb.define("k", params, void);
    fb.kernel();
    fb
}

/// The finished module and the analysis of its kernel `k`.
pub(super) fn finish(mb: ModuleBuilder) -> (Module, KernelDeps) {
    let m = mb.finish();
    let d = deps(&m, "k");
    (m, d)
}

/// `v & 1 != 0`.
pub(super) fn odd(fb: &mut FunctionBuilder<'_>, v: Value) -> Value {
    let one = fb.const_int(32, 1);
    let bit = fb.binary(Opcode::And, v, one);
    let zero = fb_zero(fb);
    fb.icmp(IntPred::Ne, bit, zero)
}

/// `if (c) x = a; else x = b; return phi(x)`-shaped diamond from the
/// current block: returns the phi.
fn diamond(fb: &mut FunctionBuilder<'_>, ty: TypeId, c: Value, a: Value, b: Value) -> Value {
    let (t, e, j) = (fb.block(), fb.block(), fb.block());
    fb.cond_br(c, t, e);
    fb.switch_to(t);
    fb.br(j);
    fb.switch_to(e);
    fb.br(j);
    fb.switch_to(j);
    fb.phi(ty, &[(a, t), (b, e)])
}

#[test]
fn special_registers_split_into_sources_and_uniform() {
    let mut mb = ModuleBuilder::new();
    let mut fb = define_kernel(&mut mb, &[]);
    let dependent =
        ["tid.x", "tid.y", "tid.z", "laneid", "lanemask.lt", "clock"].map(|r| fb.sreg(r));
    let uniform =
        ["ctaid.x", "ntid.x", "nctaid.y", "warpid", "nwarpid", "smid"].map(|r| fb.sreg(r));
    fb.ret(None);
    let (_, d) = finish(mb);
    let f = FuncId(0);
    for v in dependent {
        assert!(d.is_dependent(f, v), "{v:?}");
        assert!(matches!(d.why(f, v), Some(Why::Source(_))));
    }
    for v in uniform {
        assert!(!d.is_dependent(f, v), "{v:?}");
    }
}

#[test]
fn warp_primitives_depend_only_on_what_can_differ() {
    // tid, ctaid; then:
    //   ballot(0xffffffff, tid)          uniform: one answer for the warp
    //   ballot(tid, 1)                   dependent mask: dependent
    //   barrier0.popc(tid)               block-wide: uniform
    //   shfl.idx(m, tid, 0, 31)          broadcast from lane 0: uniform
    //   shfl.idx(m, ctaid, tid, 31)      dependent source lane: dependent
    //   shfl.down(m, tid, 1, 31)         neighbour's tid: dependent
    //   shfl.down(m, ctaid, 1, 31)       neighbour's ctaid is ctaid: uniform
    //   shfl.idx(m, tid, 0, 0x181f)      lane 0 of each 8-lane segment: dependent
    //   match.any(m, tid)                dependent
    //   match.any(m, ctaid)              uniform: every lane holds it
    //   redux.sync.add(tid, 0xffffffff)  one sum for the warp: uniform
    //   redux.sync.add(1, tid)           dependent mask: dependent
    //   activemask()                     the lanes running it: uniform
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let cta = fb.sreg("ctaid.x");
    let (full, zero, one) = (
        fb.const_int(32, -1),
        fb.const_int(32, 0),
        fb.const_int(32, 1),
    );
    let (clamp, segments) = (fb.const_int(32, 31), fb.const_int(32, 0x181f));
    let ballot = "llvm.nvvm.vote.ballot.sync";
    let vote_uniform = fb.intrinsic(ballot, i32, vec![full, tid]);
    let vote_masked = fb.intrinsic(ballot, i32, vec![tid, one]);
    let popc = fb.intrinsic("llvm.nvvm.barrier0.popc", i32, vec![tid]);
    let idx = "llvm.nvvm.shfl.sync.idx.i32";
    let down = "llvm.nvvm.shfl.sync.down.i32";
    let broadcast = fb.intrinsic(idx, i32, vec![full, tid, zero, clamp]);
    let gather = fb.intrinsic(idx, i32, vec![full, cta, tid, clamp]);
    let shift = fb.intrinsic(down, i32, vec![full, tid, one, clamp]);
    let shift_uniform = fb.intrinsic(down, i32, vec![full, cta, one, clamp]);
    let segmented = fb.intrinsic(idx, i32, vec![full, tid, zero, segments]);
    let any = "llvm.nvvm.match.any.sync.i32";
    let match_tid = fb.intrinsic(any, i32, vec![full, tid]);
    let match_cta = fb.intrinsic(any, i32, vec![full, cta]);
    let redux = "llvm.nvvm.redux.sync.add";
    let sum = fb.intrinsic(redux, i32, vec![tid, full]);
    let sum_masked = fb.intrinsic(redux, i32, vec![one, tid]);
    let active = fb.intrinsic("llvm.nvvm.activemask", i32, vec![]);
    fb.ret(None);
    let (_, d) = finish(mb);
    let dep = |v| d.is_dependent(FuncId(0), v);
    assert!(!dep(vote_uniform) && dep(vote_masked) && !dep(popc));
    assert!(!dep(broadcast) && dep(gather) && dep(shift) && !dep(shift_uniform));
    assert!(dep(segmented) && dep(match_tid) && !dep(match_cta));
    assert!(!dep(sum) && dep(sum_masked) && !dep(active));
}

#[test]
fn atomics_are_sources_and_taint_memory_with_their_operand() {
    // @g = global (global space). %old = atomicrmw add @g, 1: a source.
    // %x = load @g: uniform (the atomic wrote uniform data).
    // atomicrmw xchg @h, tid; %y = load @h: dependent, via memory.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let g = mb.global("g", i32, addrspace::GLOBAL);
    let h = mb.global("h", i32, addrspace::GLOBAL);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let one = fb.const_int(32, 1);
    let old = fb.atomic_rmw(RmwOp::Add, g, one);
    let x = fb.load(i32, g);
    fb.atomic_rmw(RmwOp::Xchg, h, tid);
    let y = fb.load(i32, h);
    fb.ret(None);
    let (_, d) = finish(mb);
    let f = FuncId(0);
    assert!(d.is_dependent(f, old) && !d.is_dependent(f, x));
    assert!(matches!(d.why(f, y), Some(Why::Memory { .. })));
}

#[test]
fn phi_at_the_join_of_a_dependent_branch() {
    // c = tid & 1; br c ? t : e; phi [1, t], [2, e]: dependent (Join).
    // phi [5, t], [5, e]: the same value from both sides: uniform.
    // Then on a uniform branch (ctaid & 1), phi [1, t], [2, e]: uniform.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let one = fb.const_int(32, 1);
    let two = fb.const_int(32, 2);
    let five = fb.const_int(32, 5);
    let c = odd(&mut fb, tid);
    let merged = diamond(&mut fb, i32, c, one, two);
    let same = fb.phi(i32, &[(five, BlockId(1)), (five, BlockId(2))]);
    let cta = fb.sreg("ctaid.x");
    let cu = odd(&mut fb, cta);
    let uniform = diamond(&mut fb, i32, cu, one, two);
    fb.ret(None);
    let (_, d) = finish(mb);
    let f = FuncId(0);
    assert!(matches!(d.why(f, merged), Some(Why::Join { .. })));
    assert!(!d.is_dependent(f, same) && !d.is_dependent(f, uniform));
}

pub(super) fn fb_zero(fb: &mut FunctionBuilder<'_>) -> Value {
    fb.const_int(32, 0)
}

#[test]
fn join_behind_a_uniform_branch_on_one_side() {
    // Where Eq. 1 read literally says uniform: 0 branches on tid to 1 and
    // 2; 1 branches on the argument to 3 (-> join 4) or 5 (-> exit 6);
    // 2 goes to 4. Both sides reach 4 by disjoint paths, and 4's
    // controlling conditions are exactly those of 3, so only the
    // disjoint-path (sync dependence) rule sees that its phi is dependent.
    let mut mb = ModuleBuilder::new();
    let (i32, i1) = (i32t(&mut mb), mb.int(1));
    let mut fb = define_kernel(&mut mb, &[i1]);
    let b: Vec<BlockId> = (0..6).map(|_| fb.block()).collect();
    let (b1, b2, b3, b4, b5, b6) = (b[0], b[1], b[2], b[3], b[4], b[5]);
    let tid = fb.sreg("tid.x");
    let zero = fb_zero(&mut fb);
    let c = fb.icmp(IntPred::Eq, tid, zero);
    fb.cond_br(c, b1, b2);
    fb.switch_to(b1);
    fb.cond_br(Value::Arg(0), b3, b5);
    fb.switch_to(b2);
    fb.br(b4);
    fb.switch_to(b3);
    fb.br(b4);
    fb.switch_to(b4);
    let (one, two) = (fb.const_int(32, 1), fb.const_int(32, 2));
    let phi = fb.phi(i32, &[(one, b3), (two, b2)]);
    fb.br(b6);
    fb.switch_to(b5);
    fb.br(b6);
    fb.switch_to(b6);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(matches!(d.why(FuncId(0), phi), Some(Why::Join { .. })));
}

/// What [`counting_loop`] built.
pub(super) struct CountingLoop {
    pub(super) header: BlockId,
    pub(super) body: BlockId,
    pub(super) exit: BlockId,
    pub(super) i: Value,
    pub(super) cond: Value,
    pub(super) inc: Value,
    /// `i * 2`, in the exit block.
    pub(super) after: Value,
}

/// `for (i = 0; i < bound; i++) {}; after = i * 2` from the current block;
/// leaves the builder in the exit block.
pub(super) fn counting_loop(
    fb: &mut FunctionBuilder<'_>,
    i32: TypeId,
    bound: Value,
) -> CountingLoop {
    let entry = fb.current();
    let (h, body, exit) = (fb.block(), fb.block(), fb.block());
    fb.br(h);
    fb.switch_to(h);
    let zero = fb_zero(fb);
    let i = fb.phi(i32, &[(zero, entry)]);
    let c = fb.icmp(IntPred::Slt, i, bound);
    fb.cond_br(c, body, exit);
    fb.switch_to(body);
    let one = fb.const_int(32, 1);
    let inc = fb.binary(Opcode::Add, i, one);
    fb.add_incoming(i, inc, body);
    fb.br(h);
    fb.switch_to(exit);
    let two = fb.const_int(32, 2);
    let after = fb.binary(Opcode::Mul, i, two);
    CountingLoop {
        header: h,
        body,
        exit,
        i,
        cond: c,
        inc,
        after,
    }
}

#[test]
fn temporal_divergence_out_of_a_loop_with_a_dependent_exit() {
    // for (i = 0; i < tid; i++); after = i * 2.
    // In the loop every active lane has the same i: uniform. Lanes leave on
    // different iterations, so after the loop i differs: the use is
    // dependent, and so is `after`.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let CountingLoop { i, after, inc, .. } = counting_loop(&mut fb, i32, tid);
    fb.ret(None);
    let (m, d) = finish(mb);
    let f = FuncId(0);
    assert!(!d.is_dependent(f, i) && !d.is_dependent(f, inc));
    let Value::Inst(user) = after else { panic!() };
    assert!(matches!(d.why_at(f, i, user), Some(Why::LoopExit { .. })));
    assert_eq!(d.why(f, after), Some(Why::Operand(i)));
    let chain = crate::taint::explain(&d, &m, f, after);
    assert_eq!(chain.first().map(String::as_str), Some("threadIdx.x"));
}

#[test]
fn uniform_loop_bound_leaves_the_loop_uniform() {
    // The same loop bounded by the parameter n: nothing is dependent.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = define_kernel(&mut mb, &[i32]);
    let CountingLoop { i, after, .. } = counting_loop(&mut fb, i32, Value::Arg(0));
    fb.ret(None);
    let (_, d) = finish(mb);
    let Value::Inst(user) = after else { panic!() };
    assert!(!d.is_dependent_at(FuncId(0), i, user) && !d.is_dependent(FuncId(0), after));
}

#[test]
fn per_thread_memory_written_by_dependent_code() {
    // %a = alloca i32 (scalar); %b = alloca i32 (scalar):
    //   store tid, %a; %x = load %a           dependent (value)
    //   store 7, %b; %y = load %b             uniform
    //   store 7, %a; %z = load %a             uniform: the store replaced all of %a
    //   if (tid & 1) store 9, %b; join; %w = load %b: dependent (control)
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = define_kernel(&mut mb, &[]);
    let a = fb.alloca(i32);
    let b = fb.alloca(i32);
    let tid = fb.sreg("tid.x");
    fb.store(tid, a);
    let x = fb.load(i32, a);
    let seven = fb.const_int(32, 7);
    fb.store(seven, b);
    let y = fb.load(i32, b);
    fb.store(seven, a);
    let z = fb.load(i32, a);
    let c = odd(&mut fb, tid);
    let (t, j) = (fb.block(), fb.block());
    fb.cond_br(c, t, j);
    fb.switch_to(t);
    let nine = fb.const_int(32, 9);
    fb.store(nine, b);
    fb.br(j);
    fb.switch_to(j);
    let w = fb.load(i32, b);
    fb.ret(None);
    let (_, d) = finish(mb);
    let f = FuncId(0);
    assert!(matches!(d.why(f, x), Some(Why::Memory { .. })));
    assert!(!d.is_dependent(f, y) && !d.is_dependent(f, z));
    let Some(Why::Memory { store, .. }) = d.why(f, w) else {
        panic!("w: {:?}", d.why(f, w))
    };
    assert!(matches!(d.effect(f, store), Some(Why::Control { .. })));
}

/// `define i32 @id(i32 %v) { %r = add %v, 1; ret %r }`
fn add_one(mb: &mut ModuleBuilder) -> FuncId {
    let i32 = i32t(mb);
    let mut fb = mb.define("add_one", &[i32], i32);
    let one = fb.const_int(32, 1);
    let r = fb.binary(Opcode::Add, Value::Arg(0), one);
    fb.ret(Some(r));
    fb.func
}

#[test]
fn calls_are_context_sensitive_within_a_kernel() {
    // %u = add_one(ctaid); %t = add_one(tid): only %t is dependent, though
    // add_one's parameter is dependent in the kernel (via the second call).
    let mut mb = ModuleBuilder::new();
    let callee = add_one(&mut mb);
    let mut fb = define_kernel(&mut mb, &[]);
    let cta = fb.sreg("ctaid.x");
    let tid = fb.sreg("tid.x");
    let u = fb.call(callee, vec![cta]);
    let t = fb.call(callee, vec![tid]);
    fb.ret(None);
    let kernel = fb.func;
    let (m, d) = finish(mb);
    assert!(!d.is_dependent(kernel, u));
    assert!(matches!(d.why(kernel, t), Some(Why::Return { .. })));
    assert!(matches!(
        d.why(callee, Value::Arg(0)),
        Some(Why::Arg { .. })
    ));
    let chain = crate::taint::explain(&d, &m, kernel, t);
    assert_eq!(chain.first().map(String::as_str), Some("threadIdx.x"));
    assert_eq!(
        chain.len(),
        4,
        "threadIdx.x → parameter 1 → %r → %t: {chain:?}"
    );
}

#[test]
fn recursion_terminates_and_stays_sound() {
    // rec(n) = n < 1 ? n : rec(n - 1) + 1, called with tid and with ctaid.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = mb.define("rec", &[i32], i32);
    let rec = fb.func;
    let (base, step) = (fb.block(), fb.block());
    let one = fb.const_int(32, 1);
    let c = fb.icmp(IntPred::Slt, Value::Arg(0), one);
    fb.cond_br(c, base, step);
    fb.switch_to(base);
    fb.ret(Some(Value::Arg(0)));
    fb.switch_to(step);
    let less = fb.binary(Opcode::Sub, Value::Arg(0), one);
    let inner = fb.call(rec, vec![less]);
    let more = fb.binary(Opcode::Add, inner, one);
    fb.ret(Some(more));
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let cta = fb.sreg("ctaid.x");
    let t = fb.call(rec, vec![tid]);
    let u = fb.call(rec, vec![cta]);
    fb.ret(None);
    let kernel = fb.func;
    let (_, d) = finish(mb);
    assert!(d.is_dependent(kernel, t) && !d.is_dependent(kernel, u));
    assert!(d.is_dependent(rec, c) && d.is_dependent(rec, inner));
}

#[test]
fn different_returns_under_a_dependent_branch() {
    // pick() { if (tid & 1) return 1; return 2; }: the call's result is
    // dependent though neither ret returns a dependent value.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let mut fb = mb.define("pick", &[], i32);
    let pick = fb.func;
    let (a, b) = (fb.block(), fb.block());
    let tid = fb.sreg("tid.x");
    let one = fb.const_int(32, 1);
    let c = odd(&mut fb, tid);
    fb.cond_br(c, a, b);
    fb.switch_to(a);
    fb.ret(Some(one));
    fb.switch_to(b);
    let two = fb.const_int(32, 2);
    fb.ret(Some(two));
    let mut fb = define_kernel(&mut mb, &[]);
    let r = fb.call(pick, vec![]);
    fb.ret(None);
    let kernel = fb.func;
    let (m, d) = finish(mb);
    assert!(d.is_dependent(kernel, r));
    let chain = crate::taint::explain(&d, &m, kernel, r);
    assert_eq!(
        chain.first().map(String::as_str),
        Some("threadIdx.x"),
        "{chain:?}"
    );
}

#[test]
fn callee_writing_caller_memory_for_part_of_the_warp() {
    // set(p) { *p = 5; }  kernel: %a = alloca; store 1, %a;
    // if (tid & 1) set(%a); join; %x = load %a: dependent (lanes that
    // called set hold 5, the others 1). With a uniform branch: uniform.
    let mut mb = ModuleBuilder::new();
    let (void, i32) = (mb.void(), i32t(&mut mb));
    let ptr = mb.ptr(addrspace::GENERIC);
    let mut fb = mb.define("set", &[ptr], void);
    let set = fb.func;
    let five = fb.const_int(32, 5);
    fb.store(five, Value::Arg(0));
    fb.ret(None);
    for (name, reg) in [("k", "tid.x"), ("u", "ctaid.x")] {
        let mut fb = mb.define(name, &[], void);
        fb.kernel();
        let a = fb.alloca(i32);
        let one = fb.const_int(32, 1);
        fb.store(one, a);
        let r = fb.sreg(reg);
        let c = odd(&mut fb, r);
        let (t, j) = (fb.block(), fb.block());
        fb.cond_br(c, t, j);
        fb.switch_to(t);
        fb.call(set, vec![a]);
        fb.br(j);
        fb.switch_to(j);
        fb.load(i32, a);
        fb.ret(None);
    }
    let m = mb.finish();
    let load = |kernel: &str| {
        let f = m.find_function(kernel).unwrap();
        let last = m.func(f).insts.len() - 2;
        (f, Value::Inst(crate::ir::InstId::new(last)))
    };
    let (k, x) = load("k");
    let d = deps(&m, "k");
    let Some(Why::Memory { func, store }) = d.why(k, x) else {
        panic!("{:?}", d.why(k, x))
    };
    assert_eq!(func, set);
    assert!(matches!(d.effect(set, store), Some(Why::Called { .. })));
    let chain = crate::taint::explain(&d, &m, k, x);
    assert_eq!(
        chain.first().map(String::as_str),
        Some("threadIdx.x"),
        "{chain:?}"
    );
    let (u, y) = load("u");
    assert!(!deps(&m, "u").is_dependent(u, y));
}

/// From the entry block of a kernel with two `i1` parameters:
/// 0 -> H. H: i = phi [0, 0], [i+1, L], [i+1, P]; br arg0 ? B : P.
/// B: br tid==i ? L : P.  L -> H.  P: `in_p(i)`; br arg1 ? H : X.
/// Returns `i` and what `in_p` built; leaves the builder in X.
fn skewed_loop(
    fb: &mut FunctionBuilder<'_>,
    i32: TypeId,
    in_p: impl FnOnce(&mut FunctionBuilder<'_>, Value) -> Value,
) -> (Value, Value) {
    let tid = fb.sreg("tid.x");
    let (h, b, l, p, x) = (fb.block(), fb.block(), fb.block(), fb.block(), fb.block());
    fb.br(h);
    fb.switch_to(h);
    let zero = fb_zero(fb);
    let i = fb.phi(i32, &[(zero, BlockId(0))]);
    fb.cond_br(Value::Arg(0), b, p);
    fb.switch_to(b);
    let c = fb.icmp(IntPred::Eq, tid, i);
    fb.cond_br(c, l, p);
    fb.switch_to(l);
    let one = fb.const_int(32, 1);
    let next_l = fb.binary(Opcode::Add, i, one);
    fb.add_incoming(i, next_l, l);
    fb.br(h);
    fb.switch_to(p);
    let at_p = in_p(fb, i);
    let next_p = fb.binary(Opcode::Add, i, one);
    fb.add_incoming(i, next_p, p);
    fb.cond_br(Value::Arg(1), h, x);
    fb.switch_to(x);
    (i, at_p)
}

#[test]
fn lanes_waiting_inside_a_loop_skew_its_values() {
    // 0 -> H. H: i = phi [0, 0], [i+1, L], [i+1, P]; br u(arg) ? B : P.
    // B: br tid==i ? L : P.  L -> H.  P: use = i * 2; br arg2 ? H : X.
    // B's post-dominator P is inside the loop, and lanes taking L go round
    // through H before reaching it: at P lanes hold different i.
    let mut mb = ModuleBuilder::new();
    let (i32, i1) = (i32t(&mut mb), mb.int(1));
    let mut fb = define_kernel(&mut mb, &[i1, i1]);
    let (i, used) = skewed_loop(&mut fb, i32, |fb, i| {
        let two = fb.const_int(32, 2);
        fb.binary(Opcode::Mul, i, two)
    });
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(d.is_dependent(FuncId(0), used));
    assert!(d.is_dependent(FuncId(0), i));
}

/// read(p) { return *p; }  kernel(ptr %g): %a = alloca i32; store 1, %a;
/// [store %a, %g if `escape`]; %q = load ptr, %g; store tid, %q;
/// %r = read(%a). Returns whether %r is dependent.
fn read_after_a_write_through_a_loaded_pointer(escape: bool) -> bool {
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let ptr = mb.ptr(addrspace::GENERIC);
    let mut fb = mb.define("read", &[ptr], i32);
    let read = fb.func;
    let v = fb.load(i32, Value::Arg(0));
    fb.ret(Some(v));
    let mut fb = define_kernel(&mut mb, &[ptr]);
    let a = fb.alloca(i32);
    let one = fb.const_int(32, 1);
    fb.store(one, a);
    if escape {
        fb.store(a, Value::Arg(0));
    }
    let q = fb.load(ptr, Value::Arg(0));
    let tid = fb.sreg("tid.x");
    fb.store(tid, q);
    let r = fb.call(read, vec![a]);
    fb.ret(None);
    let kernel = fb.func;
    let (_, d) = finish(mb);
    d.is_dependent(kernel, r)
}

#[test]
fn callee_reads_what_an_unknown_pointer_may_have_written() {
    // The kernel stored %a's address where %q is loaded from, so %q may
    // be %a: the dependent write may have gone to %a, and read(%a) is
    // dependent.
    assert!(read_after_a_write_through_a_loaded_pointer(true));
    // Without that store, %q was written by the host, which has only
    // global addresses (memory::Spaces, the loaded-pointer assumption):
    // the write cannot reach the local %a.
    assert!(!read_after_a_write_through_a_loaded_pointer(false));
}

#[test]
fn call_in_a_skewed_loop_returns_a_dependent_value() {
    // The skewed loop of `lanes_waiting_inside_a_loop_skew_its_values`,
    // with P calling get(%g) { return *g; }. Nothing the call reads is
    // dependent, but lanes run P in different iterations, when *g may hold
    // different values: the result is dependent (LoopSkew at the call).
    let mut mb = ModuleBuilder::new();
    let (i32, i1) = (i32t(&mut mb), mb.int(1));
    let ptr = mb.ptr(addrspace::GLOBAL);
    let mut fb = mb.define("get", &[ptr], i32);
    let get = fb.func;
    let v = fb.load(i32, Value::Arg(0));
    fb.ret(Some(v));
    let mut fb = define_kernel(&mut mb, &[i1, i1, ptr]);
    let (_, got) = skewed_loop(&mut fb, i32, |fb, _| fb.call(get, vec![Value::Arg(2)]));
    fb.ret(None);
    let kernel = fb.func;
    let (_, d) = finish(mb);
    assert!(
        matches!(d.why(kernel, got), Some(Why::LoopSkew { .. })),
        "{:?}",
        d.why(kernel, got)
    );
}

#[test]
fn condition_also_used_before_its_branch_still_decides_the_join() {
    // c = tid & 1 != 0; store (zext c) to @g; br c: the store is c's last
    // use before the branch, which must still see c's fact for the join.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let g = mb.global("g", i32, addrspace::GLOBAL);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let one = fb.const_int(32, 1);
    let c = odd(&mut fb, tid);
    let wide = fb.cast(Opcode::ZExt, c, i32);
    fb.store(wide, g);
    let two = fb.const_int(32, 2);
    let merged = diamond(&mut fb, i32, c, one, two);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(matches!(d.why(FuncId(0), merged), Some(Why::Join { .. })));
}

/// Inline asm read with the PTX reader:
/// `%l = asm "mov.u32 $0, %laneid;"` is a lane-id source;
/// `%r = asm "mov.u32 $0, %reserved_smem_offset_1;"` is uniform, and so
/// is `asm "add.u32 $0, $1, 1;" (%r)`; the same add of `tid.x` depends on
/// it; a ballot of `tid.x & 1` over mask -1 is one answer per warp; a body
/// the reader cannot read is an opaque source.
#[test]
fn inline_asm_by_its_ptx() {
    let mut mb = ModuleBuilder::new();
    let i32t = i32t(&mut mb);
    let mut fb = define_kernel(&mut mb, &[]);
    let lane = fb.asm("mov.u32 $0, %laneid;", "=r", false, i32t, vec![]);
    let reserved = fb.asm(
        "mov.u32 $0, %reserved_smem_offset_1;",
        "=r",
        false,
        i32t,
        vec![],
    );
    let add = "add.u32 $0, $1, 1;";
    let from_reserved = fb.asm(add, "=r,r", false, i32t, vec![reserved]);
    let tid = fb.sreg("tid.x");
    let from_tid = fb.asm(add, "=r,r", false, i32t, vec![tid]);
    let one = fb.const_int(32, 1);
    let bit = fb.binary(Opcode::And, tid, one);
    let all = fb.const_int(32, -1);
    let ballot = fb.asm(
        "{ .reg .pred p; setp.ne.u32 p, $1, 0; vote.sync.ballot.b32 $0, p, $2; }",
        "=r,r,r",
        false,
        i32t,
        vec![bit, all],
    );
    let unread = fb.asm("frobnicate.u32 $0;", "=r", false, i32t, vec![]);
    fb.ret(None);
    let (_, d) = finish(mb);
    let f = FuncId(0);
    assert_eq!(
        d.why(f, lane),
        Some(Why::Source(crate::taint::Source::LaneId))
    );
    assert!(!d.is_dependent(f, reserved));
    assert!(!d.is_dependent(f, from_reserved));
    assert_eq!(d.why(f, from_tid), Some(Why::Operand(tid)));
    assert!(!d.is_dependent(f, ballot));
    assert_eq!(
        d.why(f, unread),
        Some(Why::Source(crate::taint::Source::Opaque))
    );
}

/// `asm volatile("st.shared.u32 [$0], $1;" :: "l"(&s), "r"(v))` writes
/// `s` like a store: `load s` depends on it when `v` is `tid.x`
/// (kernel `k`), not when it is `ctaid.x` (kernel `u`).
#[test]
fn inline_asm_stores_write_memory() {
    for (reg, dependent) in [("tid.x", true), ("ctaid.x", false)] {
        let mut mb = ModuleBuilder::new();
        let i32t = i32t(&mut mb);
        let void = mb.void();
        let s = mb.global("s", i32t, addrspace::SHARED);
        let mut fb = define_kernel(&mut mb, &[]);
        let v = fb.sreg(reg);
        fb.asm(
            "st.shared.u32 [$0], $1;",
            "l,r,~{memory}",
            true,
            void,
            vec![s, v],
        );
        let x = fb.load(i32t, s);
        fb.ret(None);
        let (_, d) = finish(mb);
        assert_eq!(d.is_dependent(FuncId(0), x), dependent, "{reg}");
        if dependent {
            assert!(matches!(d.why(FuncId(0), x), Some(Why::Memory { .. })));
        }
    }
}
