//! Hand-built CFG shapes shared by the graph unit tests.
//!
//! A shape lists each block's successors in terminator order: none is `ret`,
//! one is `br`, two are `br i1` (then, else) and more are a `switch` whose
//! first successor is the default. Block `i` of the shape is `BlockId(i)`.

use crate::ir::builder::ModuleBuilder;
use crate::ir::{BlockId, Function, InstKind, Opcode, Value};

/// Builds `f(i1 %c)` with the given shape; every branch tests `%c`.
pub fn shape(succs: &[&[usize]]) -> Function {
    shape_with_unreachable(succs, &[])
}

/// Like [`shape`], but the listed successor-less blocks end in `unreachable`.
pub fn shape_with_unreachable(succs: &[&[usize]], unreachable: &[usize]) -> Function {
    let mut mb = ModuleBuilder::new();
    let i1 = mb.int(1);
    let void = mb.void();
    let mut fb = mb.define("f", &[i1], void);
    for _ in 1..succs.len() {
        fb.block();
    }
    let cond = Value::Arg(0);
    for (b, targets) in succs.iter().enumerate() {
        fb.switch_to(BlockId::new(b));
        let t: Vec<BlockId> = targets.iter().map(|&s| BlockId::new(s)).collect();
        match t.as_slice() {
            [] if unreachable.contains(&b) => {
                let void = fb.m.types.void();
                fb.inst(Opcode::Unreachable, void, vec![], InstKind::Plain);
            }
            [] => fb.ret(None),
            [to] => fb.br(*to),
            [then, els] => fb.cond_br(cond, *then, *els),
            [default, cases @ ..] => {
                let cases = cases.iter().enumerate().map(|(v, &b)| (v as i128, b));
                fb.switch(cond, *default, cases.collect());
            }
        }
    }
    let id = fb.func;
    mb.finish().funcs.swap_remove(id.index())
}

/// Block ids from indices, for comparing against expected lists.
pub fn ids(blocks: &[usize]) -> Vec<BlockId> {
    blocks.iter().map(|&b| BlockId::new(b)).collect()
}

pub fn b(i: usize) -> BlockId {
    BlockId::new(i)
}

/// if/else: 0 -> {1, 2} -> 3.
pub fn diamond() -> Function {
    shape(&[&[1, 2], &[3], &[3], &[]])
}

/// if without else: 0 -> {1, 2}, 1 -> 2.
pub fn if_then() -> Function {
    shape(&[&[1, 2], &[2], &[]])
}

/// `while (c) body;`: 0 -> 1 (header) -> {2 (body) -> 1, 3 (exit)}.
pub fn while_loop() -> Function {
    shape(&[&[1], &[2, 3], &[1], &[]])
}

/// Two nested loops; the inner body breaks out of both (goto-style):
///
/// ```text
/// 0 -> 1                  entry
/// 1 -> {2, 7}             outer header; 7 = return
/// 2 -> {3, 5}             inner header; 5 = inner exit, outer latch
/// 3 -> {6, 4}             inner body: break to 6, else continue at 4
/// 4 -> 2                  inner latch
/// 5 -> 1                  outer latch
/// 6 -> 7                  break target, outside both loops
/// ```
pub fn nested_break() -> Function {
    shape(&[&[1], &[2, 7], &[3, 5], &[6, 4], &[2], &[1], &[7], &[]])
}

/// `while (true) { a; if (c) break; b; }`: 1 = a (header), 2 = test,
/// 3 = b (latch), 4 = after the loop.
pub fn mid_exit() -> Function {
    shape(&[&[1], &[2], &[4, 3], &[1], &[]])
}

/// `switch` with default 4 and cases 1, 2, 3, 3 (two cases share block 3);
/// every case falls to 4.
pub fn switch3() -> Function {
    shape(&[&[4, 1, 2, 3, 3], &[4], &[4], &[4], &[]])
}

/// `if (c) for (;;) { if (d) x; else y; } return;`: the loop 1-2-3 never
/// reaches the only exit 4.
pub fn infinite() -> Function {
    shape(&[&[1, 4], &[2, 3], &[1], &[1], &[]])
}

/// `for (;;);`: no exit block at all, 1 loops on itself.
pub fn spin() -> Function {
    shape(&[&[1], &[1]])
}

/// 1 is dead (no predecessor); 0 branches to a return (2) and to a trap (3).
pub fn with_dead_block() -> Function {
    shape_with_unreachable(&[&[2, 3], &[2], &[], &[]], &[3])
}

/// A cycle 1 <-> 2 entered at both 1 and 2 from 0; 1 exits to 3.
pub fn irreducible() -> Function {
    shape(&[&[1, 2], &[2, 3], &[1], &[]])
}

/// A natural loop (header 1, latch 4) whose body holds the irreducible
/// cycle 2 <-> 3, entered at both from the header.
pub fn irreducible_in_loop() -> Function {
    shape(&[&[1], &[2, 3], &[3, 4], &[2], &[1, 5], &[]])
}
