//! Thread dependence through memory shared between threads (the rules of
//! `memory`): constant memory, order, and broadcasts after a barrier, each
//! with the twins that must stay dependent. Each comment gives the IR and
//! the expectation derived from the rules.

use super::tests::{define_kernel, fb_zero, finish, i32t, odd};
use crate::ir::builder::{FunctionBuilder, ModuleBuilder};
use crate::ir::{addrspace, FuncId, IntPred, Opcode, RmwOp, TypeId, TypeKind, Value};
use crate::taint::{KernelDeps, Why};

const K: FuncId = FuncId(0);

fn via_memory(d: &KernelDeps, v: Value) -> bool {
    matches!(d.why(K, v), Some(Why::Memory { .. }))
}

fn sync(fb: &mut FunctionBuilder<'_>) {
    let void = fb.m.types.void();
    fb.intrinsic("llvm.nvvm.barrier0", void, vec![]);
}

/// `&a[i]` for an `[64 x i32]` array `a`.
fn element(fb: &mut FunctionBuilder<'_>, arr: TypeId, a: Value, i: Value) -> Value {
    let i64t = fb.m.types.int(64);
    let i = fb.cast(Opcode::ZExt, i, i64t);
    let zero = fb.const_int(64, 0);
    fb.gep(arr, a, &[zero, i])
}

#[test]
fn constant_memory_is_never_written() {
    // @c = addrspace(4) i32. kernel(ptr %p):
    //   %q = load ptr, %p; store tid, %q   a dependent write, anywhere
    //   %x = load @c                       uniform: constant memory is read-only
    //   %y = load addrspacecast(@c)        uniform: traced to constant memory
    //   %z = load i32, %p                  dependent: %q may point into %p's
    //                                      buffer, and other blocks run the
    //                                      store at any time
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let ptr = mb.ptr(addrspace::GENERIC);
    let c = mb.global("c", i32, addrspace::CONSTANT);
    let generic_c = mb.const_expr(Opcode::AddrSpaceCast, ptr, vec![c]);
    let mut fb = define_kernel(&mut mb, &[ptr]);
    let q = fb.load(ptr, Value::Arg(0));
    let tid = fb.sreg("tid.x");
    fb.store(tid, q);
    let x = fb.load(i32, c);
    let y = fb.load(i32, generic_c);
    let z = fb.load(i32, Value::Arg(0));
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(!d.is_dependent(K, x) && !d.is_dependent(K, y));
    assert!(via_memory(&d, z));
}

#[test]
fn a_cooperative_fill_then_a_broadcast() {
    // @s = shared [64 x i32]:
    //   s[tid] = tid; bar; %x = s[0]   uniform: the fill is complete and no
    //                                  write runs in the read's phase
    //   %y = s[tid]                    dependent: its address
    //   bar; s[tid] = tid; %z = s[1]   dependent: no barrier between
    // (Without the second barrier, the second fill would run in the phase
    // of %x too: a thread ahead would write s[0] while others read it.)
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let arr = mb.ty(TypeKind::Array(i32, 64));
    let s = mb.global("s", arr, addrspace::SHARED);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let mine = element(&mut fb, arr, s, tid);
    fb.store(tid, mine);
    sync(&mut fb);
    let zero = fb_zero(&mut fb);
    let first = element(&mut fb, arr, s, zero);
    let x = fb.load(i32, first);
    let y = fb.load(i32, mine);
    sync(&mut fb);
    fb.store(tid, mine);
    let one = fb.const_int(32, 1);
    let second = element(&mut fb, arr, s, one);
    let z = fb.load(i32, second);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(!d.is_dependent(K, x));
    assert!(matches!(d.why(K, y), Some(Why::Operand(_))));
    assert!(via_memory(&d, z));
}

#[test]
fn a_leader_writes_then_a_barrier() {
    // @t = shared i32:
    //   if (tid == 0) t = tid; bar; %x = t        uniform: one value after the barrier
    //   bar; if (tid == 1) t = tid; %y = t         dependent: lane 1 may write
    //                                              before or after others read
    //   bar; %z = t; if (tid == 2) t = tid          dependent: lane 2 may run ahead
    //                                              and write before others read
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let t = mb.global("t", i32, addrspace::SHARED);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let leader = |fb: &mut FunctionBuilder<'_>, lane: i64| {
        let l = fb.const_int(32, lane);
        let c = fb.icmp(IntPred::Eq, tid, l);
        let (then, join) = (fb.block(), fb.block());
        fb.cond_br(c, then, join);
        fb.switch_to(then);
        fb.store(tid, t);
        fb.br(join);
        fb.switch_to(join);
    };
    leader(&mut fb, 0);
    sync(&mut fb);
    let x = fb.load(i32, t);
    sync(&mut fb);
    leader(&mut fb, 1);
    let y = fb.load(i32, t);
    sync(&mut fb);
    let z = fb.load(i32, t);
    leader(&mut fb, 2);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(!d.is_dependent(K, x));
    assert!(via_memory(&d, y) && via_memory(&d, z));
}

#[test]
fn atomics_are_writes_in_their_phase() {
    // @tot = shared i32, @g = global i32:
    //   atomicrmw add @tot, tid; bar; %x = tot    uniform: the total, once all added
    //   atomicrmw add @g, tid; bar; %y = g         dependent: other blocks add at any time
    //   bar; %z = tot; atomicrmw add @tot, tid      dependent: added while read
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let tot = mb.global("tot", i32, addrspace::SHARED);
    let g = mb.global("g", i32, addrspace::GLOBAL);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    fb.atomic_rmw(RmwOp::Add, tot, tid);
    fb.atomic_rmw(RmwOp::Add, g, tid);
    sync(&mut fb);
    let x = fb.load(i32, tot);
    let y = fb.load(i32, g);
    sync(&mut fb);
    let z = fb.load(i32, tot);
    fb.atomic_rmw(RmwOp::Add, tot, tid);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(!d.is_dependent(K, x));
    assert!(via_memory(&d, y) && via_memory(&d, z));
}

/// `for (i = 0; i < n; i++) { body }` with `n` the kernel's parameter 0;
/// returns what `body` returned.
fn uniform_loop<T>(
    fb: &mut FunctionBuilder<'_>,
    body: impl FnOnce(&mut FunctionBuilder<'_>) -> T,
) -> T {
    let i32 = fb.m.types.int(32);
    let entry = fb.current();
    let (head, exit) = (fb.block(), fb.block());
    fb.br(head);
    fb.switch_to(head);
    let zero = fb.const_int(32, 0);
    let i = fb.phi(i32, &[(zero, entry)]);
    let out = body(fb);
    let one = fb.const_int(32, 1);
    let next = fb.binary(Opcode::Add, i, one);
    let latch = fb.current();
    fb.add_incoming(i, next, latch);
    let more = fb.icmp(IntPred::Slt, next, Value::Arg(0));
    fb.cond_br(more, head, exit);
    fb.switch_to(exit);
    out
}

#[test]
fn order_decides_and_loops_carry_writes_back() {
    // @t = shared i32, @g = global i32, n uniform:
    //   %a = t; bar; t = tid                   uniform: the write is a barrier later
    //   %b = g; bar; g = tid                   dependent: other blocks write g any time
    //   loop n { %c = t; t = tid }             dependent: the next iteration's write
    //                                          (or a thread ahead) comes before the read
    //   loop n { %e = t; bar; t = tid; bar }   uniform: a barrier each way round
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let t = mb.global("t", i32, addrspace::SHARED);
    let g = mb.global("g", i32, addrspace::GLOBAL);
    let mut fb = define_kernel(&mut mb, &[i32]);
    let tid = fb.sreg("tid.x");
    let a = fb.load(i32, t);
    let b = fb.load(i32, g);
    sync(&mut fb);
    fb.store(tid, t);
    fb.store(tid, g);
    sync(&mut fb);
    let c = uniform_loop(&mut fb, |fb| {
        let c = fb.load(i32, t);
        fb.store(tid, t);
        c
    });
    sync(&mut fb);
    let e = uniform_loop(&mut fb, |fb| {
        let e = fb.load(i32, t);
        sync(fb);
        fb.store(tid, t);
        sync(fb);
        e
    });
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(!d.is_dependent(K, a) && !d.is_dependent(K, e));
    assert!(via_memory(&d, b) && via_memory(&d, c));
}

#[test]
fn a_barrier_some_lanes_skip_does_not_separate() {
    // @t = shared i32; for r in [tid.x, ctaid.x]:
    //   if (r & 1) { bar; %x = t } else { bar; t = tid }
    // With tid.x the lanes meet at the two barriers as one: the writers
    // then write while the readers read (dependent). With ctaid.x every
    // thread of the block takes one side: uniform.
    for (reg, dependent) in [("tid.x", true), ("ctaid.x", false)] {
        let mut mb = ModuleBuilder::new();
        let i32 = i32t(&mut mb);
        let t = mb.global("t", i32, addrspace::SHARED);
        let mut fb = define_kernel(&mut mb, &[]);
        let tid = fb.sreg("tid.x");
        let r = fb.sreg(reg);
        let c = odd(&mut fb, r);
        let (read, write, join) = (fb.block(), fb.block(), fb.block());
        fb.cond_br(c, read, write);
        fb.switch_to(read);
        sync(&mut fb);
        let x = fb.load(i32, t);
        fb.br(join);
        fb.switch_to(write);
        sync(&mut fb);
        fb.store(tid, t);
        fb.br(join);
        fb.switch_to(join);
        fb.ret(None);
        let (_, d) = finish(mb);
        assert_eq!(d.is_dependent(K, x), dependent, "{reg}");
    }
}

#[test]
fn only_whole_block_barriers_separate() {
    // @t = shared i32, and between `t = tid` and `%x = t`:
    //   __syncwarp(~0)        one warp only: dependent
    //   bar.sync 1, 64        64 threads only: dependent
    //   __syncthreads_count   the whole block: uniform
    let cases: [(&str, bool); 3] = [
        ("llvm.nvvm.bar.warp.sync", true),
        ("llvm.nvvm.barrier", true),
        ("llvm.nvvm.barrier0.popc", false),
    ];
    for (name, dependent) in cases {
        let mut mb = ModuleBuilder::new();
        let i32 = i32t(&mut mb);
        let t = mb.global("t", i32, addrspace::SHARED);
        let mut fb = define_kernel(&mut mb, &[]);
        let tid = fb.sreg("tid.x");
        fb.store(tid, t);
        let args = match name {
            "llvm.nvvm.barrier" => vec![fb.const_int(32, 1), fb.const_int(32, 64)],
            _ => vec![fb.const_int(32, -1)],
        };
        let ret = if name.ends_with("popc") {
            i32
        } else {
            fb.m.types.void()
        };
        fb.intrinsic(name, ret, args);
        let x = fb.load(i32, t);
        fb.ret(None);
        let (_, d) = finish(mb);
        assert_eq!(d.is_dependent(K, x), dependent, "{name}");
    }
}

#[test]
fn the_explanation_names_the_racing_write() {
    // @t = shared i32: t = 7 + tid (line 1); bar; t = tid (line 2);
    // %x = t: dependent through the second write, the one in its phase.
    let mut mb = ModuleBuilder::new();
    let i32 = i32t(&mut mb);
    let t = mb.global("t", i32, addrspace::SHARED);
    let mut fb = define_kernel(&mut mb, &[]);
    let tid = fb.sreg("tid.x");
    let seven = fb.const_int(32, 7);
    let v = fb.binary(Opcode::Add, seven, tid);
    fb.store(v, t);
    sync(&mut fb);
    fb.store(tid, t);
    let second = crate::ir::InstId::new(fb.m.func(K).insts.len() - 1);
    let x = fb.load(i32, t);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert_eq!(
        d.why(K, x),
        Some(Why::Memory {
            func: K,
            store: second
        })
    );
}

#[test]
fn writes_reach_only_what_their_pointer_may_point_to() {
    // @a, @b = shared [64 x i32], @flag = shared i32, @tab = constant ptr:
    //   %p = select (tid & 1), @a, @b; store tid, %p   a dependent write to @a or @b
    //   %q = load ptr, @tab; store tid, %q              a dependent write to global
    //                                                   memory: the host wrote @tab,
    //                                                   and no shared address is stored
    //   %x = load @flag                                 uniform: neither reaches @flag
    // Kernel `leaks` first stores @flag's address to global memory (%out):
    // %q may then be it, and %x is dependent.
    let mut mb = ModuleBuilder::new();
    let (i32, void) = (i32t(&mut mb), mb.void());
    let ptr = mb.ptr(addrspace::GENERIC);
    let arr = mb.ty(TypeKind::Array(i32, 64));
    let a = mb.global("a", arr, addrspace::SHARED);
    let b = mb.global("b", arr, addrspace::SHARED);
    let flag = mb.global("flag", i32, addrspace::SHARED);
    let tab = mb.global("tab", ptr, addrspace::CONSTANT);
    let generic_flag = mb.const_expr(Opcode::AddrSpaceCast, ptr, vec![flag]);
    let mut reads = Vec::new();
    for (name, leak) in [("k", false), ("leaks", true)] {
        let mut fb = mb.define(name, &[ptr], void);
        fb.kernel();
        if leak {
            fb.store(generic_flag, Value::Arg(0));
        }
        let tid = fb.sreg("tid.x");
        let c = odd(&mut fb, tid);
        let p = fb.select(c, a, b);
        fb.store(tid, p);
        let q = fb.load(ptr, tab);
        fb.store(tid, q);
        reads.push((fb.func, fb.load(i32, flag)));
        fb.ret(None);
    }
    let m = mb.finish();
    for (name, (f, x)) in ["k", "leaks"].into_iter().zip(reads) {
        let d = super::tests::deps(&m, name);
        assert_eq!(d.is_dependent(f, x), name == "leaks", "{name}");
    }
}

#[test]
fn an_asynchronous_copy_may_land_in_any_phase() {
    // @s = shared i32, kernel(ptr %g):
    //   cp.async.ca.shared.global [@s], [%g + tid], 4; bar; %x = s
    // The copy completes at a `cp.async.wait`, not at the instruction: it
    // may land after the barrier, while %x reads. Dependent.
    let mut mb = ModuleBuilder::new();
    let (i32, void) = (i32t(&mut mb), mb.void());
    let ptr = mb.ptr(addrspace::GENERIC);
    let s = mb.global("s", i32, addrspace::SHARED);
    let mut fb = define_kernel(&mut mb, &[ptr]);
    let tid = fb.sreg("tid.x");
    let from = fb.gep(i32, Value::Arg(0), &[tid]);
    fb.asm(
        "cp.async.ca.shared.global [$0], [$1], 4;",
        "l,l,~{memory}",
        true,
        void,
        vec![s, from],
    );
    sync(&mut fb);
    let x = fb.load(i32, s);
    fb.ret(None);
    let (_, d) = finish(mb);
    assert!(via_memory(&d, x), "{:?}", d.why(K, x));
}
