//! Whether a uniform expression has one value in every execution of a
//! block: none of its atoms is redefined in a loop around the block.

use super::expr::{Arena, Atom, Poly, Uniform};
use crate::graph::FunctionGraphs;
use crate::ir::{BlockId, FuncId, Module, Value};

/// The terms of `u` that change inside a loop around `b`.
pub fn variant_terms(
    m: &Module,
    g: &FunctionGraphs,
    arena: &Arena,
    u: &Poly,
    f: FuncId,
    b: BlockId,
) -> Poly {
    Poly::from_terms(
        u.terms
            .iter()
            .filter(|t| !loop_invariant(m, g, arena, &Poly::from_terms([(*t).clone()]), f, b))
            .cloned(),
    )
}

pub fn loop_invariant(
    m: &Module,
    g: &FunctionGraphs,
    arena: &Arena,
    u: &Poly,
    f: FuncId,
    b: BlockId,
) -> bool {
    let in_loop_with_b = |def: BlockId| {
        let mut l = g.loops.loop_of(b);
        while let Some(id) = l {
            let lp = g.loops.get(id);
            if lp.contains(def) {
                return true;
            }
            l = lp.parent;
        }
        false
    };
    u.terms.iter().all(|(mono, _)| {
        mono.iter().all(|&a| match arena.atom(a) {
            Atom::Uniform(Uniform::LoopPhi(c, i))
            | Atom::Uniform(Uniform::Value(c, Value::Inst(i))) => {
                arena.func_of(*c) == f && !in_loop_with_b(m.func(f).inst(*i).block)
            }
            Atom::Uniform(Uniform::Op(_, args)) => args
                .iter()
                .all(|&e| loop_invariant(m, g, arena, arena.poly(e), f, b)),
            Atom::Uniform(_) => true,
            _ => false,
        })
    })
}
