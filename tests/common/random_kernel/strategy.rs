//! proptest strategies for programs, biased towards what GPU code does:
//! thread ids scaled by small strides and offset, compares against small
//! constants, shared tiles, nested control a few levels deep.

use super::ast::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

fn dim() -> impl Strategy<Value = Dim> {
    prop_oneof![4 => Just(Dim::X), 2 => Just(Dim::Y), 1 => Just(Dim::Z)]
}

fn leaf() -> impl Strategy<Value = Leaf> {
    let consts = vec![0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 33, 64, 127, -1];
    prop_oneof![
        3 => select(consts).prop_map(Leaf::Const),
        4 => dim().prop_map(Leaf::Tid),
        1 => dim().prop_map(Leaf::Ntid),
        1 => dim().prop_map(Leaf::Ctaid),
        1 => Just(Leaf::LaneId),
        2 => Just(Leaf::Linear),
        2 => Just(Leaf::Lane),
        2 => Just(Leaf::Warp),
        1 => (0..INT_PARAMS as u8).prop_map(Leaf::Param),
        2 => (0..VARS as u8).prop_map(Leaf::Var),
        2 => (0..3u8).prop_map(Leaf::Counter),
        1 => Just(Leaf::Small),
    ]
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Bin(op, Box::new(a), Box::new(b))
}

/// Which constructs to generate beyond the always-on ones. Each switch
/// stands for a known bug of the analysis (see `random_kernels.rs`):
/// `cargo test` leaves them off so that it checks everything else, and
/// `scripts/random-campaign.sh --all` turns them on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Knobs {
    /// Loops that test their counter in the header.
    pub header_loops: bool,
    /// Unsigned comparisons, min/max, division and right shifts, of
    /// values that may be negative.
    pub unsigned_ops: bool,
    /// Ladders to or from a masked bound and block-stride loops, whose
    /// trip counts the cost stage does not bound (`time_soundness.rs`
    /// leaves them out).
    pub wide_loops: bool,
}

fn pred(k: Knobs) -> impl Strategy<Value = Pred> {
    let mut preds = vec![
        Pred::Eq,
        Pred::Ne,
        Pred::Slt,
        Pred::Sle,
        Pred::Sgt,
        Pred::Sge,
    ];
    if k.unsigned_ops {
        preds.extend([Pred::Ult, Pred::Ule, Pred::Ugt, Pred::Uge]);
    }
    select(preds)
}

/// A comparison, usually of a thread-dependent value with a small constant;
/// sometimes a guard that narrows with the innermost loop's counter, as
/// reductions do (`t < c`, `t % (2c) == 0`, `2c·t < blockDim.x`), or with
/// the parameter `m` (below 32 in the runs: `t <= m` leaves a warp's
/// first `m + 1` lanes, Rodinia nw's guard).
fn cond(e: BoxedStrategy<Expr>, k: Knobs) -> impl Strategy<Value = Cond> {
    let small = select(vec![0, 1, 2, 3, 4, 5, 8, 16, 17, 31, 32, 63, 64, 100])
        .prop_map(|c| Expr::Leaf(Leaf::Const(c)));
    let rhs = prop_oneof![2 => small, 1 => e.clone()];
    let plain = (pred(k), e, rhs).prop_map(|(pred, a, b)| Cond { pred, a, b });
    let tid = select(vec![Leaf::Tid(Dim::X), Leaf::Linear, Leaf::Lane]).prop_map(Expr::Leaf);
    let c = || Expr::Leaf(Leaf::Counter(0));
    let k2 = |x: Expr| bin(BinOp::Mul, Expr::Leaf(Leaf::Const(2)), x);
    let narrowing = (tid, 0..4u8, pred(k)).prop_map(move |(t, shape, pred)| match shape {
        0 => Cond { pred, a: t, b: c() },
        3 => Cond {
            pred,
            a: t,
            b: Expr::Leaf(Leaf::Small),
        },
        1 => Cond {
            pred: Pred::Eq,
            a: bin(
                BinOp::And,
                t,
                bin(BinOp::Sub, k2(c()), Expr::Leaf(Leaf::Const(1))),
            ),
            b: Expr::Leaf(Leaf::Const(0)),
        },
        _ => Cond {
            pred: Pred::Slt,
            a: bin(BinOp::Mul, k2(c()), t),
            b: Expr::Leaf(Leaf::Ntid(Dim::X)),
        },
    });
    prop_oneof![4 => plain, 1 => narrowing]
}

/// `stride * leaf + offset`: strided, offset and (with tid.y) tiled indices.
fn affine(e: BoxedStrategy<Expr>) -> impl Strategy<Value = Expr> {
    let stride = select(vec![0, 1, 1, 1, 2, 3, 4, 8, 16, 17, 32, 33, 64, -1]);
    (stride, leaf(), e).prop_map(|(s, l, off)| {
        let scaled = bin(BinOp::Mul, Expr::Leaf(Leaf::Const(s)), Expr::Leaf(l));
        bin(BinOp::Add, scaled, off)
    })
}

/// An access to read (`loads`: the constant table too) or to write.
fn access(e: BoxedStrategy<Expr>, loads: bool) -> impl Strategy<Value = Access> {
    let buf = prop_oneof![
        4 => (0..BUFFERS as u8).prop_map(Buf::Global),
        2 => any::<bool>().prop_map(|generic| Buf::Shared { generic }),
        1 => Just(Buf::Tile),
        u32::from(loads) => Just(Buf::Constant),
        1 => Just(Buf::ConstPtr),
        1 => (0..INT_PARAMS as u8).prop_map(Buf::Rows),
    ];
    let width = prop_oneof![1 => Just(Width::W1), 1 => Just(Width::W2), 4 => Just(Width::W4), 2 => Just(Width::W8)];
    let index = prop_oneof![3 => affine(e.clone()), 1 => e.clone()];
    (buf, width, index, 4..18u8, affine(e)).prop_map(|(buf, width, index, mask_bits, col)| Access {
        buf,
        width,
        index,
        mask_bits,
        col,
    })
}

/// A vector element read or written field by field ([`VecAccess`]):
/// mostly `uint4`/`float4` (4 × 4 bytes) and `float2`, as stated aligned;
/// sometimes under-aligned, partial or last field first.
fn vec_access(e: BoxedStrategy<Expr>) -> impl Strategy<Value = VecAccess> {
    let base = prop_oneof![
        3 => (0..BUFFERS as u8).prop_map(VecBase::Global),
        2 => any::<bool>().prop_map(|generic| VecBase::Shared { generic }),
    ];
    let elem = prop_oneof![1 => Just(Width::W1), 1 => Just(Width::W2), 3 => Just(Width::W4), 1 => Just(Width::W8)];
    let shape = (
        select(vec![2u8, 4, 4]),
        select(vec![0u8, 0, 0, 1, 2]),
        any::<bool>(),
        proptest::bool::weighted(0.2),
        proptest::option::weighted(0.2, 0..4u8),
    );
    let index = prop_oneof![3 => affine(e.clone()), 1 => e];
    (base, elem, shape, index, 4..18u8).prop_map(
        |(base, elem, (lanes, align_shift, fields, reversed, skip), index, mask_bits)| VecAccess {
            base,
            elem,
            lanes,
            align_shift,
            fields,
            reversed,
            skip,
            index,
            mask_bits,
        },
    )
}

pub fn expr(k: Knobs) -> BoxedStrategy<Expr> {
    leaf()
        .prop_map(Expr::Leaf)
        .prop_recursive(4, 24, 3, move |inner| {
            let mut binops = vec![
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::And,
                BinOp::Or,
                BinOp::Xor,
                BinOp::SMin,
                BinOp::SMax,
            ];
            let mut shifts = vec![ShiftOp::Shl, ShiftOp::AShr];
            let mut divs = vec![DivOp::SDiv, DivOp::SRem];
            if k.unsigned_ops {
                binops.extend([BinOp::UMin, BinOp::UMax]);
                shifts.push(ShiftOp::LShr);
                divs.extend([DivOp::UDiv, DivOp::URem]);
            }
            let (binop, shift, div) = (select(binops), select(shifts), select(divs));
            let divisor = select(vec![1u16, 2, 3, 4, 5, 8, 16, 32, 33]);
            let shfl = select(vec![Shfl::Idx, Shfl::Up, Shfl::Down, Shfl::Bfly]);
            let vote = select(vec![Vote::Ballot, Vote::All, Vote::Any]);
            let e = inner.clone();
            prop_oneof![
                4 => (binop, e.clone(), e.clone()).prop_map(|(o, a, b)| bin(o, a, b)),
                2 => affine(e.clone()),
                1 => (shift, e.clone(), 0..8u8).prop_map(|(o, a, k)| Expr::Shift(o, Box::new(a), k)),
                1 => (div, e.clone(), divisor).prop_map(|(o, a, d)| Expr::Div(o, Box::new(a), d)),
                1 => (cond(e.clone(), k), e.clone(), e.clone())
                    .prop_map(|(c, a, b)| Expr::Select(Box::new(c), Box::new(a), Box::new(b))),
                2 => access(e.clone(), true).prop_map(|a| Expr::Load(Box::new(a))),
                1 => (shfl, e.clone(), e.clone()).prop_map(|(m, v, l)| Expr::Shfl(m, Box::new(v), Box::new(l))),
                1 => (vote, cond(e.clone(), k)).prop_map(|(m, c)| Expr::Vote(m, Box::new(c))),
                1 => (0..3u8, e.clone(), e.clone(), 0..BUFFERS as u8)
                    .prop_map(|(g, a, b, p)| Expr::Call(g, Box::new(a), Box::new(b), p)),
                1 => vec_access(e.clone()).prop_map(|a| Expr::VecLoad(Box::new(a))),
            ]
        })
        .boxed()
}

fn share() -> impl Strategy<Value = Share> {
    select(vec![Share::Fill, Share::Leader, Share::ReadThenStore])
}

/// Statements nested up to `depth` levels of ifs (and loops, with `loops`).
fn stmt(depth: u32, loops: bool, k: Knobs) -> BoxedStrategy<Stmt> {
    let e = expr(k);
    let simple = prop_oneof![
        3 => (0..VARS as u8, e.clone()).prop_map(|(v, e)| Stmt::Assign(v, e)),
        3 => (access(e.clone(), false), e.clone()).prop_map(|(a, e)| Stmt::Store(a, e)),
        1 => (access(e.clone(), false), e.clone()).prop_map(|(a, e)| Stmt::AtomicAdd(a, e)),
        1 => cond(e.clone(), k).prop_map(Stmt::BreakIf),
        3 => Just(Stmt::Barrier),
        2 => (share(), 0..VARS as u8, e.clone(), e.clone())
            .prop_map(|(s, v, k, x)| Stmt::Share(s, v, k, x)),
        2 => (vec_access(e.clone()), e.clone()).prop_map(|(a, x)| Stmt::VecStore(a, x)),
    ];
    simple
        .prop_recursive(depth, 32, 4, move |inner| {
            let ifs = (
                cond(e.clone(), k),
                vec(inner.clone(), 0..4),
                vec(inner.clone(), 0..3),
            )
                .prop_map(|(c, t, f)| Stmt::If(c, t, f));
            let wide = u32::from(k.wide_loops);
            let shape = prop_oneof![
                2 * u32::from(k.header_loops) => Just(LoopShape::Header),
                2 => Just(LoopShape::Rotated),
                1 => Just(LoopShape::Doubling),
                1 => Just(LoopShape::Halving),
                wide => Just(LoopShape::DoublingTo),
                wide => Just(LoopShape::HalvingFrom),
                wide => Just(LoopShape::BlockStride),
            ];
            // Sometimes a break first in the body: taken on the first
            // iteration by the lanes the condition picks.
            let first_break = proptest::option::weighted(0.25, cond(e.clone(), k));
            let counted = (shape, e.clone(), first_break, vec(inner, 1..4)).prop_map(
                |(shape, b, first, mut body)| {
                    if let Some(c) = first {
                        body.insert(0, Stmt::BreakIf(c));
                    }
                    Stmt::Loop(shape, b, body)
                },
            );
            if loops {
                prop_oneof![2 => ifs, 1 => counted].boxed()
            } else {
                ifs.boxed()
            }
        })
        .boxed()
}

/// Device functions have no loops, so a call in a loop nest stays cheap.
fn device_fn(k: Knobs) -> impl Strategy<Value = DeviceFn> {
    (vec(stmt(2, false, k), 0..4), expr(k)).prop_map(|(body, ret)| DeviceFn { body, ret })
}

pub fn program(k: Knobs) -> impl Strategy<Value = Program> {
    (
        vec(expr(k), VARS),
        vec(stmt(3, true, k), 1..8),
        vec(device_fn(k), 0..3),
    )
        .prop_map(|(init, body, funcs)| Program { init, body, funcs })
}
