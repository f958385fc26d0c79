//! Phases on kernels built by hand. `W` and `R` stand for a store and a
//! load of `@s`; each test says which pairs may run at once and why.

use super::{Phases, Point, Scope};
use crate::graph::ModuleGraphs;
use crate::ir::builder::{FunctionBuilder, ModuleBuilder};
use crate::ir::{addrspace, FuncId, InstId, IntPred, Module, TypeId, Value};

/// A kernel under construction with the values every test needs.
struct K<'m> {
    fb: FunctionBuilder<'m>,
    i32: TypeId,
    s: Value,
    tid: Value,
}

impl K<'_> {
    fn here(&self) -> Point {
        let f = self.fb.func;
        (f, InstId::new(self.fb.m.func(f).insts.len() - 1))
    }

    fn write(&mut self) -> Point {
        self.fb.store(self.tid, self.s);
        self.here()
    }

    fn read(&mut self) -> Point {
        self.fb.load(self.i32, self.s);
        self.here()
    }

    fn barrier(&mut self, name: &str, args: Vec<Value>) {
        let void = self.fb.m.types.void();
        self.fb.intrinsic(name, void, args);
    }

    fn sync(&mut self) {
        self.barrier("llvm.nvvm.barrier0", vec![]);
    }

    /// `tid < n`: a condition that differs between threads.
    fn cond(&mut self, n: i64) -> Value {
        let n = self.fb.const_int(32, n);
        self.fb.icmp(IntPred::Slt, self.tid, n)
    }
}

/// Builds kernel `k` with `body`, and the module's block and grid phases.
fn kernel(body: impl FnOnce(&mut K<'_>) -> Vec<Point>) -> (Module, Vec<Point>) {
    let mut mb = ModuleBuilder::new();
    let (i32, void) = (mb.int(32), mb.void());
    let s = mb.global("s", i32, addrspace::SHARED);
    let mut fb = mb.define("k", &[], void);
    fb.kernel();
    let tid = fb.sreg("tid.x");
    let mut k = K { fb, i32, s, tid };
    let points = body(&mut k);
    k.fb.ret(None);
    (mb.finish(), points)
}

fn phases(m: &Module, scope: Scope) -> Phases {
    let graphs = ModuleGraphs::new(m);
    let k = m.find_function("k").expect("kernel");
    let reached = graphs.calls.reachable_from(k);
    Phases::new(m, &graphs, &reached, scope)
}

#[test]
fn a_barrier_orders_both_ways_on_a_straight_path() {
    // W1; R1; bar; R2; W2. R1 may run with W1 (same thread, or one thread
    // behind another: both ways). R2 and W2 likewise. Across the barrier,
    // nothing: W1 is done before any thread reaches R2, and no thread
    // reaches W2 before every thread has passed R1.
    let (m, p) = kernel(|k| {
        let (w1, r1) = (k.write(), k.read());
        k.sync();
        let (r2, w2) = (k.read(), k.write());
        vec![w1, r1, r2, w2]
    });
    let [w1, r1, r2, w2] = p[..] else { panic!() };
    let ph = phases(&m, Scope::Block);
    assert!(ph.may_overlap(w1, r1) && ph.may_overlap(r1, w1));
    assert!(ph.may_overlap(w2, r2) && ph.may_overlap(r2, w2));
    assert!(!ph.may_overlap(w1, r2) && !ph.may_overlap(w2, r1));
    assert!(!ph.may_overlap(r2, w1) && !ph.may_overlap(r1, w2));
    assert!(ph.may_overlap(w1, w1), "other threads run the same write");
    // The grid's only barrier is the grid barrier: all of them overlap.
    let grid = phases(&m, Scope::Grid);
    assert!(grid.may_overlap(w1, r2) && grid.may_overlap(w2, r1));
}

/// `loop: header; body; latch -> header | exit`, with `body` building the
/// loop's statements; `lanes` makes the trip count differ between threads.
fn looped(k: &mut K<'_>, lanes: bool, body: impl FnOnce(&mut K<'_>) -> Vec<Point>) -> Vec<Point> {
    let (head, exit) = (k.fb.block(), k.fb.block());
    k.fb.br(head);
    k.fb.switch_to(head);
    let points = body(k);
    let c = if lanes {
        k.cond(5)
    } else {
        let n = k.fb.sreg("ntid.x");
        let eight = k.fb.const_int(32, 8);
        k.fb.icmp(IntPred::Slt, n, eight)
    };
    k.fb.cond_br(c, head, exit);
    k.fb.switch_to(exit);
    points
}

#[test]
fn around_a_loop_the_next_iteration_writes_while_this_one_reads() {
    // loop { bar; R; W }: a thread ahead writes (W of this iteration)
    // while another reads R: they overlap. loop { R; bar; W; bar }: R and
    // W are always a barrier apart, whichever way round the loop.
    let (m, p) = kernel(|k| {
        looped(k, false, |k| {
            k.sync();
            vec![k.read(), k.write()]
        })
    });
    assert!(phases(&m, Scope::Block).may_overlap(p[1], p[0]));
    let (m, p) = kernel(|k| {
        looped(k, false, |k| {
            let r = k.read();
            k.sync();
            let w = k.write();
            k.sync();
            vec![r, w]
        })
    });
    let ph = phases(&m, Scope::Block);
    assert!(!ph.may_overlap(p[1], p[0]) && !ph.may_overlap(p[0], p[1]));
}

#[test]
fn a_cooperative_loop_then_a_broadcast() {
    // W0; bar; loop (uniform) { if (tid < 5) W1; bar }; R.
    // The loop test decides barriers (the body's or none), so every
    // thread leaves after the same barrier: R never runs with W1 or W0.
    let (m, p) = kernel(|k| {
        let w0 = k.write();
        k.sync();
        let w1 = looped(k, false, |k| {
            let c = k.cond(5);
            let (t, j) = (k.fb.block(), k.fb.block());
            k.fb.cond_br(c, t, j);
            k.fb.switch_to(t);
            let w1 = k.write();
            k.fb.br(j);
            k.fb.switch_to(j);
            k.sync();
            vec![w1]
        });
        vec![w0, w1[0], k.read()]
    });
    let [w0, w1, r] = p[..] else { panic!() };
    let ph = phases(&m, Scope::Block);
    assert!(!ph.may_overlap(w1, r) && !ph.may_overlap(w0, r));
    assert!(ph.may_overlap(w1, w1));
}

#[test]
fn threads_part_where_a_branch_decides_no_barrier() {
    // if (tid < 5) W else R; bar: both sides meet the same barrier next,
    // so threads may take either: W and R overlap though no path joins
    // them. if (tid < 5) { bar; R } else { W; bar }: the branch decides
    // which barrier comes next, so (CUDA's rule) all threads go one way.
    let (m, p) = kernel(|k| {
        let c = k.cond(5);
        let (t, e, j) = (k.fb.block(), k.fb.block(), k.fb.block());
        k.fb.cond_br(c, t, e);
        k.fb.switch_to(t);
        let w = k.write();
        k.fb.br(j);
        k.fb.switch_to(e);
        let r = k.read();
        k.fb.br(j);
        k.fb.switch_to(j);
        k.sync();
        vec![w, r]
    });
    assert!(phases(&m, Scope::Block).may_overlap(p[0], p[1]));
    let (m, p) = kernel(|k| {
        let c = k.cond(5);
        let (t, e, j) = (k.fb.block(), k.fb.block(), k.fb.block());
        k.fb.cond_br(c, t, e);
        k.fb.switch_to(t);
        k.sync();
        let r = k.read();
        k.fb.br(j);
        k.fb.switch_to(e);
        k.sync();
        let w = k.write();
        k.fb.br(j);
        k.fb.switch_to(j);
        vec![w, r, c_point(k)]
    });
    let [w, r, branch] = p[..] else { panic!() };
    let mut ph = phases(&m, Scope::Block);
    assert!(ph.decides_barriers(branch));
    assert!(!ph.may_overlap(w, r));
    // Thread dependence finds the branch differs between lanes: the two
    // barriers are then one, and W (after one) overlaps R (after the other).
    assert!(ph.split_at(branch) && !ph.split_at(branch));
    assert!(ph.may_overlap(w, r) && ph.may_overlap(r, w));
}

/// The conditional branch ending the entry block of `k`.
fn c_point(k: &K<'_>) -> Point {
    let f = k.fb.func;
    let func = k.fb.m.func(f);
    (f, *func.blocks[0].insts.last().expect("terminator"))
}

#[test]
fn a_loop_of_barriers_run_a_different_number_of_times() {
    // loop (tid < 5) { bar1; W }; bar2; R. With the trip count per thread,
    // a thread that left the loop waits at bar2 while another waits at
    // bar1: they pass together, and the latter then writes (W) while the
    // former reads (R).
    let (m, p) = kernel(|k| {
        let w = looped(k, true, |k| {
            k.sync();
            vec![k.write()]
        });
        let latch = k.here_prev();
        k.sync();
        vec![w[0], k.read(), latch]
    });
    let [w, r, latch] = p[..] else { panic!() };
    let mut ph = phases(&m, Scope::Block);
    assert!(!ph.may_overlap(w, r));
    assert!(ph.split_at(latch));
    assert!(ph.may_overlap(w, r));
}

impl K<'_> {
    /// The terminator of the block before the current one (a loop's latch
    /// after [`looped`]).
    fn here_prev(&self) -> Point {
        let f = self.fb.func;
        let func = self.fb.m.func(f);
        let b = self.fb.current().index() - 1;
        (f, *func.blocks[b].insts.last().expect("terminator"))
    }
}

#[test]
fn barriers_in_callees_and_barriers_that_do_not_count() {
    // dev() { bar }: W; dev(); R — the call holds a barrier.
    // W; bar.sync 1, 64 (a thread count); __syncwarp; R — neither is a
    // block barrier: W and R overlap. Grid scope: only the grid barrier.
    let mut mb = ModuleBuilder::new();
    let (i32, void) = (mb.int(32), mb.void());
    let s = mb.global("s", i32, addrspace::SHARED);
    let dev = {
        let mut fb = mb.define("dev", &[], void);
        fb.intrinsic("llvm.nvvm.barrier0", void, vec![]);
        fb.ret(None);
        fb.func
    };
    let mut fb = mb.define("k", &[], void);
    fb.kernel();
    let tid = fb.sreg("tid.x");
    let mut k = K { fb, i32, s, tid };
    let w1 = k.write();
    k.fb.call(dev, vec![]);
    let r1 = k.read();
    let w2 = k.write();
    let (one, sixty_four, all) = (
        k.fb.const_int(32, 1),
        k.fb.const_int(32, 64),
        k.fb.const_int(32, -1),
    );
    k.barrier("llvm.nvvm.barrier", vec![one, sixty_four]);
    k.barrier("llvm.nvvm.bar.warp.sync", vec![all]);
    let r2 = k.read();
    k.barrier("__warpcheck_grid_sync", vec![]);
    let r3 = k.read();
    k.fb.ret(None);
    let m = mb.finish();
    let ph = phases(&m, Scope::Block);
    assert!(!ph.may_overlap(w1, r1));
    assert!(ph.may_overlap(w2, r2));
    assert!(!ph.may_overlap(w2, r3));
    let grid = phases(&m, Scope::Grid);
    assert!(grid.may_overlap(w1, r1) && !grid.may_overlap(w2, r3));
    assert_eq!(FuncId(0), dev);
}

#[test]
fn inline_asm_barriers_count_when_aligned_and_whole() {
    // W; asm(barrier); R for three bodies: `bar.sync 0;` holds the whole
    // block (aligned): W and R a phase apart. `bar.sync 1, 64;` holds 64
    // threads, `barrier.sync 0;` may be met at other instructions: neither
    // ends a phase.
    for (text, separates) in [
        ("bar.sync 0;", true),
        ("bar.sync 1, 64;", false),
        ("barrier.sync 0;", false),
    ] {
        let (m, p) = kernel(|k| {
            let w = k.write();
            let void = k.fb.m.types.void();
            k.fb.asm(text, "~{memory}", true, void, vec![]);
            vec![w, k.read()]
        });
        let ph = phases(&m, Scope::Block);
        assert_eq!(!ph.may_overlap(p[0], p[1]), separates, "{text}");
    }
}
