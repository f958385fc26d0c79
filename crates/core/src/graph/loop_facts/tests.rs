//! Loop facts of the loop shapes clang -O2 emits, built by hand. Block 0
//! is the entry; each test names its blocks in the order it creates them.

use super::*;
use crate::graph::{Cfg, DomTree};
use crate::ir::builder::{FunctionBuilder, ModuleBuilder};
use crate::ir::{FuncId, TypeId};

/// The facts and loops of the module's first function.
fn facts(m: &Module) -> (LoopFacts, Loops) {
    let f = m.func(FuncId(0));
    let cfg = Cfg::new(f);
    let dom = DomTree::dominators(&cfg);
    let loops = Loops::new(&cfg, &dom);
    (LoopFacts::new(m, f, &cfg, &loops, &dom), loops)
}

fn id(v: Value) -> InstId {
    match v {
        Value::Inst(i) => i,
        _ => panic!("{v:?} is no instruction"),
    }
}

const NSW: IntFlags = IntFlags {
    nsw: true,
    nuw: false,
    exact: false,
};
const NUW_NSW: IntFlags = IntFlags {
    nsw: true,
    nuw: true,
    exact: false,
};

/// Builds a kernel `k(i32 n)` whose body `build` writes.
fn kernel(build: impl FnOnce(&mut FunctionBuilder<'_>, TypeId)) -> Module {
    let mut mb = ModuleBuilder::new();
    let (i32t, void) = (mb.int(32), mb.void());
    let mut fb = mb.define("k", &[i32t], void);
    fb.kernel();
    build(&mut fb, i32t);
    mb.finish()
}

/// `next = h op k` with flags.
fn update(fb: &mut FunctionBuilder<'_>, op: Opcode, a: Value, b: Value, flags: IntFlags) -> Value {
    let v = fb.binary(op, a, b);
    fb.flags(v, flags);
    v
}

#[test]
fn rotated_loop_tests_the_next_value_for_inequality() {
    // for (i = 0; i < n; i++), rotated: entry guards `n > 0`, the body
    // block 1 is header and latch, and `icmp eq %next, %n` leaves.
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (body, exit) = (fb.block(), fb.block());
        let zero = fb.const_int(32, 0);
        let enter = fb.icmp(IntPred::Sgt, n, zero);
        fb.cond_br(enter, body, exit);
        fb.switch_to(body);
        let i = fb.phi(i32t, &[(zero, BlockId(0))]);
        let one = fb.const_int(32, 1);
        let next = update(fb, Opcode::Add, i, one, NUW_NSW);
        let done = fb.icmp(IntPred::Eq, next, n);
        fb.cond_br(done, exit, body);
        fb.add_incoming(i, next, body);
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some((i, next, done, zero, one));
    });
    let (i, next, done, zero, _) = vals.unwrap();
    let (f, loops) = facts(&m);
    let l = LoopId(0);
    assert_eq!(loops.len(), 1);
    let phi = f.header_phi(id(i)).unwrap();
    assert_eq!(phi.entries, [(zero, BlockId(0))]);
    assert_eq!(phi.backs, [(next, BlockId(1))]);
    let step = Step {
        op: StepOp::Add,
        amount: Amount::Const(1),
        flags: NUW_NSW,
    };
    let counter = Counter {
        phi: id(i),
        lp: l,
        start: zero,
        next,
        step: Some(step),
    };
    assert_eq!(f.counter(id(i)), Some(&counter));
    // The true outcome leaves, so the loop goes on while `next != n`,
    // which reads the counter after its step: 1 past `i`.
    let test = ExitTest {
        cmp: id(done),
        pred: IntPred::Ne,
        lhs: next,
        rhs: Value::Arg(0),
        counter: Some(CounterTest {
            phi: id(i),
            read: Read::Next,
            bound: Value::Arg(0),
            pred: IntPred::Ne,
        }),
    };
    let exit = Exit {
        block: BlockId(1),
        stay: false,
        every_iteration: true,
        tests: vec![test],
    };
    assert_eq!(f.exits(l), [exit]);
    assert_eq!(Read::Next.offset(Some(&step)), Some(1));
    // `nsw` and `nuw`: it wraps in no reading.
    assert!(!step.may_wrap(IntPred::Ne) && !step.may_wrap(IntPred::Slt));
}

#[test]
fn header_tested_loop_with_a_parameter_bound_on_either_side() {
    // for (i = 0; i < n; i++) not rotated: header 1 tests `n > i` (the
    // bound on the left), body 2 is the latch, 3 the exit.
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (header, body, exit) = (fb.block(), fb.block(), fb.block());
        fb.br(header);
        fb.switch_to(header);
        let zero = fb.const_int(32, 0);
        let i = fb.phi(i32t, &[(zero, BlockId(0))]);
        let more = fb.icmp(IntPred::Sgt, n, i);
        fb.cond_br(more, body, exit);
        fb.switch_to(body);
        let one = fb.const_int(32, 1);
        let next = update(fb, Opcode::Add, i, one, NSW);
        fb.br(header);
        fb.add_incoming(i, next, body);
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some((i, more));
    });
    let (i, more) = vals.unwrap();
    let (f, _) = facts(&m);
    let [exit] = f.exits(LoopId(0)) else {
        panic!("one exit")
    };
    assert_eq!(
        (exit.block, exit.stay, exit.every_iteration),
        (BlockId(1), true, true)
    );
    // `n > i` holds to stay; with the counter on the left it is `i < n`,
    // read before the step (offset 0).
    let [test] = &exit.tests[..] else {
        panic!("one test")
    };
    assert_eq!(test.cmp, id(more));
    assert_eq!(
        (test.pred, test.lhs, test.rhs),
        (IntPred::Sgt, Value::Arg(0), i)
    );
    let expected = CounterTest {
        phi: id(i),
        read: Read::Phi,
        bound: Value::Arg(0),
        pred: IntPred::Slt,
    };
    assert_eq!(test.counter, Some(expected));
    assert_eq!(Read::Phi.offset(None), Some(0));
    // `nsw` only: a signed test sees no wrap, an unsigned one may.
    let step = f.counter(id(i)).unwrap().step.unwrap();
    assert!(!step.may_wrap(IntPred::Slt) && step.may_wrap(IntPred::Ult));
}

/// clang's runtime unrolling of `for (i = 0; i < n; i++)` by 4, the main
/// loop's bound `u = n & main_mask`:
///   0 entry: u = n & main_mask, x = n & 3; n ≥ 4 ? 1 : 2
///   1 body4: i, niter; i4 = i + 4; niter4 = niter + 4;
///            niter4 == u ? 2 : 1
///   2 mid:   i.unr = phi [0, entry], [i4, body4]; x != 0 ? 3 : 4
///   3 rem:   j = phi [j1, rem], [i.unr, mid] (back edge first),
///            e = phi [e1, rem], [0, mid]; j1 = j + 1; e1 = e + 1;
///            e1 == x ? 4 : 3
///   4 exit
/// Returns the module and `(i, niter, niter4, u, x, i_unr, j, j1, e, e1)`.
fn unrolled_by_four(main_mask: i64) -> (Module, [Value; 10]) {
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (body4, mid, rem, exit) = (fb.block(), fb.block(), fb.block(), fb.block());
        let (zero, one, three, four) = (
            fb.const_int(32, 0),
            fb.const_int(32, 1),
            fb.const_int(32, 3),
            fb.const_int(32, 4),
        );
        let high = fb.const_int(32, main_mask);
        let u = fb.binary(Opcode::And, n, high);
        let x = fb.binary(Opcode::And, n, three);
        let big = fb.icmp(IntPred::Uge, n, four);
        fb.cond_br(big, body4, mid);
        fb.switch_to(body4);
        let i = fb.phi(i32t, &[(zero, BlockId(0))]);
        let niter = fb.phi(i32t, &[(zero, BlockId(0))]);
        let i4 = update(fb, Opcode::Add, i, four, NUW_NSW);
        let niter4 = update(fb, Opcode::Add, niter, four, IntFlags::default());
        let done4 = fb.icmp(IntPred::Eq, niter4, u);
        fb.cond_br(done4, mid, body4);
        fb.add_incoming(i, i4, body4);
        fb.add_incoming(niter, niter4, body4);
        fb.switch_to(mid);
        let i_unr = fb.phi(i32t, &[(zero, BlockId(0)), (i4, body4)]);
        let any = fb.icmp(IntPred::Ne, x, zero);
        fb.cond_br(any, rem, exit);
        fb.switch_to(rem);
        let j = fb.phi(i32t, &[]);
        let e = fb.phi(i32t, &[]);
        let j1 = update(fb, Opcode::Add, j, one, NUW_NSW);
        let e1 = update(fb, Opcode::Add, e, one, IntFlags::default());
        let done = fb.icmp(IntPred::Eq, e1, x);
        fb.cond_br(done, exit, rem);
        fb.add_incoming(j, j1, rem);
        fb.add_incoming(j, i_unr, mid);
        fb.add_incoming(e, e1, rem);
        fb.add_incoming(e, zero, mid);
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some([i, niter, niter4, u, x, i_unr, j, j1, e, e1]);
    });
    (m, vals.unwrap())
}

#[test]
fn unrolled_by_four_with_a_remainder_loop() {
    let (m, [i, niter, niter4, u, x, i_unr, j, j1, e, e1]) = unrolled_by_four(-4);
    let (f, loops) = facts(&m);
    // Headers 1 and 3 in RPO: the unrolled loop is 0, the remainder 1.
    assert_eq!(loops.len(), 2);
    let (body4, rem) = (LoopId(0), LoopId(1));
    let add = |k: i128, flags: IntFlags| {
        Some(Step {
            op: StepOp::Add,
            amount: Amount::Const(k),
            flags,
        })
    };
    assert_eq!(f.counter(id(i)).unwrap().step, add(4, NUW_NSW));
    assert_eq!(
        f.counter(id(niter)).unwrap().step,
        add(4, IntFlags::default())
    );
    let ids: Vec<InstId> = f.counters_of(body4).map(|c| c.phi).collect();
    assert_eq!(ids, [id(i), id(niter)]);
    // The unrolled loop leaves when `niter + 4 == u`: its counter is
    // `niter`, after the step, 4 past it; `u` is computed before the loop.
    let t = f.exits(body4)[0].tests[0].counter.unwrap();
    let expected = CounterTest {
        phi: id(niter),
        read: Read::Next,
        bound: u,
        pred: IntPred::Ne,
    };
    assert_eq!(t, expected);
    assert_eq!(
        t.read.offset(f.counter(id(niter)).unwrap().step.as_ref()),
        Some(4)
    );
    // The remainder's phis list the back edge first; entries and backs
    // still split by where the edge comes from.
    let jp = f.header_phi(id(j)).unwrap();
    assert_eq!(jp.entries, [(i_unr, BlockId(2))]);
    assert_eq!(jp.backs, [(j1, BlockId(3))]);
    let jc = f.counter(id(j)).unwrap();
    assert_eq!((jc.lp, jc.start, jc.next), (rem, i_unr, j1));
    assert_eq!(jc.step, add(1, NUW_NSW));
    let t = f.exits(rem)[0].tests[0].counter.unwrap();
    assert_eq!((t.phi, t.read, t.bound), (id(e), Read::Next, x));
    assert_eq!(f.counter(id(e)).unwrap().next, e1);
    // `mid`'s phi merges two paths but heads no loop.
    assert!(f.header_phi(id(i_unr)).is_none());
    // The unflagged `niter` may wrap where it is tested for equality.
    let nc = f.counter(id(niter)).unwrap();
    assert_eq!(nc.next, niter4);
    assert!(nc.step.unwrap().may_wrap(IntPred::Ne));
}

#[test]
fn grid_stride_loop_adds_an_invariant() {
    // for (i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x *
    // gridDim.x), rotated: block 1 tests `next < n`.
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (body, exit) = (fb.block(), fb.block());
        let tid = fb.sreg("tid.x");
        let ntid = fb.sreg("ntid.x");
        let ctaid = fb.sreg("ctaid.x");
        let nctaid = fb.sreg("nctaid.x");
        let base = fb.binary(Opcode::Mul, ctaid, ntid);
        let start = fb.binary(Opcode::Add, base, tid);
        let stride = fb.binary(Opcode::Mul, nctaid, ntid);
        let enter = fb.icmp(IntPred::Slt, start, n);
        fb.cond_br(enter, body, exit);
        fb.switch_to(body);
        let i = fb.phi(i32t, &[(start, BlockId(0))]);
        // clang writes the stride first here: the addition commutes.
        let next = update(fb, Opcode::Add, stride, i, NSW);
        let more = fb.icmp(IntPred::Slt, next, n);
        fb.cond_br(more, body, exit);
        fb.add_incoming(i, next, body);
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some((i, start, stride, next));
    });
    let (i, start, stride, next) = vals.unwrap();
    let (f, _) = facts(&m);
    let c = f.counter(id(i)).unwrap();
    assert_eq!((c.start, c.next), (start, next));
    let step = c.step.unwrap();
    assert_eq!(
        (step.op, step.amount),
        (StepOp::Add, Amount::Invariant(stride))
    );
    assert_eq!(step.added(), Some(Amount::Invariant(stride)));
    let exit = &f.exits(LoopId(0))[0];
    assert!(exit.stay && exit.every_iteration);
    let t = exit.tests[0].counter.unwrap();
    assert_eq!(
        (t.read, t.bound, t.pred),
        (Read::Next, Value::Arg(0), IntPred::Slt)
    );
    // After a symbolic step the compared value is no constant offset.
    assert_eq!(t.read.offset(Some(&step)), None);
}

/// A rotated loop at block 1 whose counter starts at `start(fb)` and
/// moves by `step(fb, h)`, leaving when `h pred bound` is true; returns
/// the module, the phi and its update.
fn rotated(
    start: impl FnOnce(&mut FunctionBuilder<'_>) -> Value,
    step: impl FnOnce(&mut FunctionBuilder<'_>, Value) -> Value,
    (pred, bound): (IntPred, i64),
) -> (Module, Value, Value) {
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let (body, exit) = (fb.block(), fb.block());
        let s = start(fb);
        fb.br(body);
        fb.switch_to(body);
        let h = fb.phi(i32t, &[(s, BlockId(0))]);
        let next = step(fb, h);
        let k = fb.const_int(32, bound);
        let leave = fb.icmp(pred, h, k);
        fb.cond_br(leave, exit, body);
        fb.add_incoming(h, next, body);
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some((h, next));
    });
    let (h, next) = vals.unwrap();
    (m, h, next)
}

/// The step of the counter `h` of [`rotated`]'s module.
fn step_of(m: &Module, h: Value) -> Option<Step> {
    facts(m).0.counter(id(h)).unwrap().step
}

#[test]
fn doubling_counters_shift_or_multiply() {
    // for (s = 1; s < 1024; s *= 2) as `shl nuw nsw %s, 1` and as
    // `mul 2, %s` (constant first: a product commutes).
    let one = |fb: &mut FunctionBuilder<'_>| fb.const_int(32, 1);
    let (m, h, _) = rotated(
        one,
        |fb, h| {
            let k = fb.const_int(32, 1);
            update(fb, Opcode::Shl, h, k, NUW_NSW)
        },
        (IntPred::Sge, 1024),
    );
    let s = step_of(&m, h).unwrap();
    assert_eq!(
        (s.op, s.amount, s.flags),
        (StepOp::Shl, Amount::Const(1), NUW_NSW)
    );
    assert_eq!(s.added(), None);
    assert!(!s.may_wrap(IntPred::Slt));
    let (m, h, _) = rotated(
        one,
        |fb, h| {
            let k = fb.const_int(32, 2);
            fb.binary(Opcode::Mul, k, h)
        },
        (IntPred::Sge, 1024),
    );
    let s = step_of(&m, h).unwrap();
    assert_eq!((s.op, s.amount), (StepOp::Mul, Amount::Const(2)));
    // Unflagged, a doubling counter may wrap in every reading.
    assert!(s.may_wrap(IntPred::Slt) && s.may_wrap(IntPred::Ult) && s.may_wrap(IntPred::Ne));
    // `1 << s` shifts a constant by the counter: no step of `s`.
    let (m, h, _) = rotated(
        one,
        |fb, h| {
            let k = fb.const_int(32, 1);
            fb.binary(Opcode::Shl, k, h)
        },
        (IntPred::Sge, 1024),
    );
    assert_eq!(step_of(&m, h), None);
}

#[test]
fn halving_counters_shift_or_divide() {
    // for (s = blockDim.x >> 1; s > 0; s >>= 1): rotated on `s`, it stays
    // while `s >= 2` (the test leaves on `s < 2`).
    let half = |fb: &mut FunctionBuilder<'_>| {
        let ntid = fb.sreg("ntid.x");
        let one = fb.const_int(32, 1);
        fb.binary(Opcode::LShr, ntid, one)
    };
    let exact = IntFlags {
        exact: true,
        ..IntFlags::default()
    };
    for (op, k, flags) in [
        (Opcode::LShr, 1, IntFlags::default()),
        (Opcode::AShr, 1, IntFlags::default()),
        (Opcode::UDiv, 2, exact),
        (Opcode::SDiv, 2, IntFlags::default()),
    ] {
        let (m, h, _) = rotated(
            half,
            |fb, h| {
                let c = fb.const_int(32, k);
                update(fb, op, h, c, flags)
            },
            (IntPred::Ult, 2),
        );
        let s = step_of(&m, h).unwrap();
        assert_eq!(s.amount, Amount::Const(i128::from(k)));
        assert_eq!(s.flags, flags);
        assert_eq!(s.added(), None);
        // Towards zero: no wrap whatever the flags.
        assert!(!s.may_wrap(IntPred::Ult) && !s.may_wrap(IntPred::Ne));
        let (f, _) = facts(&m);
        let t = f.exits(LoopId(0))[0].tests[0].counter.unwrap();
        assert_eq!((t.read, t.pred), (Read::Phi, IntPred::Uge));
    }
    // `2 / s` is no step of `s`: a division does not commute.
    let (m, h, _) = rotated(
        half,
        |fb, h| {
            let c = fb.const_int(32, 2);
            fb.binary(Opcode::UDiv, c, h)
        },
        (IntPred::Ult, 2),
    );
    assert_eq!(step_of(&m, h), None);
}

#[test]
fn down_counting_loops_add_minus_one_or_subtract_one() {
    // for (i = n; i > 0; i--): rotated on `i`, it stays while `i > 1`
    // (the test leaves on `i <= 1`); the update is `add %i, -1` or
    // `sub %i, 1`, each taking 1 off per iteration.
    let n = |_: &mut FunctionBuilder<'_>| Value::Arg(0);
    for (op, k) in [(Opcode::Add, -1), (Opcode::Sub, 1)] {
        let (m, h, _) = rotated(
            n,
            |fb, h| {
                let c = fb.const_int(32, k);
                update(fb, op, h, c, NSW)
            },
            (IntPred::Sle, 1),
        );
        let (f, _) = facts(&m);
        let c = f.counter(id(h)).unwrap();
        assert_eq!(c.start, Value::Arg(0));
        assert_eq!(c.step.unwrap().added(), Some(Amount::Const(-1)));
        let t = f.exits(LoopId(0))[0].tests[0].counter.unwrap();
        assert_eq!((t.read, t.pred), (Read::Phi, IntPred::Sgt));
        assert_eq!(Read::Next.offset(c.step.as_ref()), Some(-1));
    }
    // `1 - i` flips the counter about 1 each iteration: no step.
    let (m, h, _) = rotated(
        n,
        |fb, h| {
            let c = fb.const_int(32, 1);
            fb.binary(Opcode::Sub, c, h)
        },
        (IntPred::Sle, 1),
    );
    assert_eq!(step_of(&m, h), None);
}

#[test]
fn conjunct_tests_an_offset_read_and_a_break() {
    // for (i = 0; i + 1 < n && i < 100; i += 2)
    //     if (tid != 0) if (tid == 1) break;
    //   0 entry; 1 header: `i + 1 < n && i < 100` as `select c1, c2,
    //   false`, to 2 or 4; 2: `tid != 0` ? 5 : 3; 3 latch; 4 exit;
    //   5: `tid == 1` ? 4 : 3.
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (header, body, latch, exit) = (fb.block(), fb.block(), fb.block(), fb.block());
        let brk = fb.block();
        let tid = fb.sreg("tid.x");
        fb.br(header);
        fb.switch_to(header);
        let zero = fb.const_int(32, 0);
        let i = fb.phi(i32t, &[(zero, BlockId(0))]);
        let one = fb.const_int(32, 1);
        let i1 = fb.binary(Opcode::Add, i, one);
        let c1 = fb.icmp(IntPred::Slt, i1, n);
        let hundred = fb.const_int(32, 100);
        let c2 = fb.icmp(IntPred::Slt, i, hundred);
        let no = fb.m.const_int(1, 0);
        let both = fb.select(c1, c2, no);
        fb.cond_br(both, body, exit);
        fb.switch_to(body);
        let some = fb.icmp(IntPred::Ne, tid, zero);
        fb.cond_br(some, brk, latch);
        fb.switch_to(brk);
        let stop = fb.icmp(IntPred::Eq, tid, one);
        fb.cond_br(stop, exit, latch);
        fb.switch_to(latch);
        let two = fb.const_int(32, 2);
        let next = fb.binary(Opcode::Add, i, two);
        fb.br(header);
        fb.add_incoming(i, next, latch);
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some((i, c1, c2, stop));
    });
    let (i, c1, c2, stop) = vals.unwrap();
    let (f, _) = facts(&m);
    let exits = f.exits(LoopId(0));
    assert_eq!(exits.len(), 2);
    // The header's test runs every iteration; staying needs both parts.
    let (head, brk) = (&exits[0], &exits[1]);
    assert_eq!(
        (head.block, head.stay, head.every_iteration),
        (BlockId(1), true, true)
    );
    let cmps: Vec<InstId> = head.tests.iter().map(|t| t.cmp).collect();
    assert_eq!(cmps, [id(c1), id(c2)]);
    // `i + 1 < n` reads the counter plus 1; `i < 100` the counter.
    let reads: Vec<Read> = head.tests.iter().map(|t| t.counter.unwrap().read).collect();
    assert_eq!(reads, [Read::Offset(1), Read::Phi]);
    assert_eq!(head.tests[1].counter.unwrap().phi, id(i));
    // The break in block 5 does not dominate the latch 3 (2 reaches it
    // directly): it runs only on some iterations. Staying needs `tid != 1`,
    // which reads no counter.
    assert_eq!(
        (brk.block, brk.stay, brk.every_iteration),
        (BlockId(5), false, false)
    );
    assert_eq!(brk.tests[0].cmp, id(stop));
    assert_eq!(brk.tests[0].pred, IntPred::Ne);
    assert_eq!(brk.tests[0].counter, None);
    assert_eq!(f.exit(LoopId(0), BlockId(5)), Some(brk));
    assert_eq!(f.exit(LoopId(0), BlockId(3)), None);
}

#[test]
fn header_phis_that_are_no_counters() {
    // Header 3 entered from 1 and 2 with different values, one latch 4
    // bringing `x + 1` (x loaded in the loop) and a pointer phi; 5 exit.
    let mut vals = None;
    let m = kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (left, right, header, latch, exit) =
            (fb.block(), fb.block(), fb.block(), fb.block(), fb.block());
        let ptr = fb.m.types.intern(crate::ir::TypeKind::Ptr(1));
        let zero = fb.const_int(32, 0);
        let c = fb.icmp(IntPred::Slt, n, zero);
        fb.cond_br(c, left, right);
        fb.switch_to(left);
        fb.br(header);
        fb.switch_to(right);
        fb.br(header);
        fb.switch_to(header);
        let one = fb.const_int(32, 1);
        let two_starts = fb.phi(i32t, &[(zero, left), (one, right)]);
        let null = fb.m.intern_const(crate::ir::Const::Null(ptr));
        let p = fb.phi(ptr, &[(null, left), (null, right)]);
        let moved = fb.phi(i32t, &[(zero, left), (zero, right)]);
        let more = fb.icmp(IntPred::Slt, moved, n);
        fb.cond_br(more, latch, exit);
        fb.switch_to(latch);
        let x = fb.load(i32t, p);
        let bumped = fb.binary(Opcode::Add, moved, x);
        let p1 = fb.gep(i32t, p, &[one]);
        fb.br(header);
        for (phi, v) in [(two_starts, bumped), (p, p1), (moved, bumped)] {
            fb.add_incoming(phi, v, latch);
        }
        fb.switch_to(exit);
        fb.ret(None);
        vals = Some((two_starts, p, moved, more, zero));
    });
    let (two_starts, p, moved, more, zero) = vals.unwrap();
    let (f, _) = facts(&m);
    // All three head the loop; the ACF reads each from entries and backs.
    for phi in [two_starts, p, moved] {
        assert!(f.header_phi(id(phi)).is_some());
    }
    assert_eq!(f.header_phi(id(two_starts)).unwrap().entries.len(), 2);
    // Two start values; a pointer: no counter.
    assert!(f.counter(id(two_starts)).is_none() && f.counter(id(p)).is_none());
    // One start and one update, but it adds a value the loop loads.
    let c = f.counter(id(moved)).unwrap();
    assert_eq!((c.start, c.step), (zero, None));
    // The exit test reads the counter; without a step the consumer runs
    // it or gives up, but the test is still named.
    let t = f.exits(LoopId(0))[0].tests[0].counter.unwrap();
    assert_eq!((t.phi, t.read), (id(moved), Read::Phi));
    assert_eq!(f.exits(LoopId(0))[0].tests[0].cmp, id(more));
}

#[test]
fn a_test_between_two_counters_or_a_variant_has_no_counter_test() {
    // Two counters i, j in one rotated loop (block 1), leaving on
    // `i == j`, on `i == x` with x computed in the loop, or on `n == 7`.
    for which in 0..3 {
        let mut vals = None;
        let m = kernel(|fb, i32t| {
            let n = Value::Arg(0);
            let (body, exit) = (fb.block(), fb.block());
            let zero = fb.const_int(32, 0);
            fb.br(body);
            fb.switch_to(body);
            let i = fb.phi(i32t, &[(zero, BlockId(0))]);
            let j = fb.phi(i32t, &[(n, BlockId(0))]);
            let one = fb.const_int(32, 1);
            let i1 = fb.binary(Opcode::Add, i, one);
            let j1 = fb.binary(Opcode::Sub, j, one);
            let x = fb.binary(Opcode::Mul, j, j);
            let seven = fb.const_int(32, 7);
            let (a, b) = [(i, j), (i, x), (n, seven)][which];
            let leave = fb.icmp(IntPred::Eq, a, b);
            fb.cond_br(leave, exit, body);
            fb.add_incoming(i, i1, body);
            fb.add_incoming(j, j1, body);
            fb.switch_to(exit);
            fb.ret(None);
            vals = Some(leave);
        });
        let leave = vals.unwrap();
        let (f, _) = facts(&m);
        let [test] = &f.exits(LoopId(0))[0].tests[..] else {
            panic!("one test")
        };
        assert_eq!((test.cmp, test.counter), (id(leave), None), "case {which}");
    }
}

/// `for (i = 0; i < n; i++)` rotated by clang: block 0 guards with
/// `guard_pred(0, n)`, block 1 is header and latch, leaving unless
/// `next < n`; block 2 is the exit.
fn rotated_behind(guard_pred: IntPred) -> Module {
    kernel(|fb, i32t| {
        let n = Value::Arg(0);
        let (body, exit) = (fb.block(), fb.block());
        let zero = fb.const_int(32, 0);
        let enter = fb.icmp(guard_pred, zero, n);
        fb.cond_br(enter, body, exit);
        fb.switch_to(body);
        let i = fb.phi(i32t, &[(zero, BlockId(0))]);
        let one = fb.const_int(32, 1);
        let next = update(fb, Opcode::Add, i, one, NSW);
        let more = fb.icmp(IntPred::Slt, next, n);
        fb.cond_br(more, body, exit);
        fb.add_incoming(i, next, body);
        fb.switch_to(exit);
        fb.ret(None);
    })
}

#[test]
fn the_guard_rotation_leaves_repeats_the_exit_test_on_the_start() {
    // `0 < n` is the exit test `next < n` made on the start: block 0
    // guards the loop, whose one exit is block 1's branch.
    let (f, _) = facts(&rotated_behind(IntPred::Slt));
    let guard = Guard {
        block: BlockId(0),
        exit: BlockId(1),
    };
    assert_eq!(f.guards(LoopId(0)), [guard]);
    // `0 <= n` lets a lane in that the exit test would stop: no guard.
    let (f, _) = facts(&rotated_behind(IntPred::Sle));
    assert_eq!(f.guards(LoopId(0)), []);
    // Neither loop is an unrolled one's remainder.
    assert!(f.remainders().is_empty());
}

#[test]
fn an_unrolled_loop_and_its_remainder_are_found_with_their_edges() {
    // `n & -4` is every bit but the two low ones: `n − (n & 3)` always.
    // The remainder (loop 1) is entered from mid (2), which the main
    // loop's latch (1) and the guard `n ≥ 4` (0) reach.
    let (m, _) = unrolled_by_four(-4);
    let (f, _) = facts(&m);
    let [r] = f.remainders() else {
        panic!("one remainder expected: {:?}", f.remainders());
    };
    assert_eq!(
        (r.rem, r.main, r.middle),
        (LoopId(1), LoopId(0), BlockId(2))
    );
    assert_eq!(
        (r.main_exit, r.guard),
        ((BlockId(1), BlockId(2)), (BlockId(0), BlockId(2)))
    );
    assert_eq!(
        (r.count, r.unroll, r.main_mask),
        (Value::Arg(0), 4, MainMask::High)
    );
    // Both tested counters (`e` and `niter`) start at the constant 0.
    assert_eq!(
        (m.int_value(r.starts.0), m.int_value(r.starts.1)),
        (Some(0), Some(0))
    );
    // `n & 0x7ffffffc` leaves the sign out too: `n − (n & 3)` where n ≥ 0.
    let (m, _) = unrolled_by_four(0x7fff_fffc);
    let (f, _) = facts(&m);
    assert_eq!(f.remainders()[0].main_mask, MainMask::HighButSign);
    // `n & -8` is not `n − (n & 3)`: the main loop finishes no remainder.
    let (m, _) = unrolled_by_four(-8);
    assert!(facts(&m).0.remainders().is_empty());
}
