//! An unrolled loop and its remainder as the one loop they are. The loop
//! facts find the shape (`graph::loop_facts::Remainder`: a main loop that
//! steps by `U` up to `n & ~(U−1)`, a remainder that counts from 0 to
//! `n & (U−1)`, entered from a middle block X that the main loop and a
//! guard reach); here it is evaluated.
//!
//! The remainder's own trip bound is the constant `U − 1`, paid on top of
//! the main loop's `n/U`. Here it gets a second bound, `r − 1` back edges
//! with `r` a symbol for the value `n & (U−1)`, and `r` is rewritten on
//! each edge into `X` by what it equals there: `n − U·(k_main + 1)` where
//! the main loop leaves (its counter has just reached `n & ~(U−1)`), `n`
//! on the guard's edge (`0 ≤ n < U` there). Back at the main loop, the
//! remainder's iterations are the main loop's remaining ones times `U`, so
//! the potential that pays `n` iterations pays both loops. `r` never
//! reaches a node before `X`: every edge into `X` rewrites it.

use super::affine::{Affine, Sym};
use super::conditions::{self, Env, Ranges, Values};
use super::rat::Rat;
use crate::graph::loop_facts::{MainMask, Remainder};
use crate::graph::LoopId;
use crate::ir::{BlockId, Value};

/// A remainder loop tied to its main loop.
#[derive(Clone, Debug)]
pub struct Link {
    /// The remainder loop.
    pub rem: LoopId,
    /// Its trip bound over `Sym::Rem(rem)`: `r − 1` back edges.
    pub trip: Affine,
    /// On these CFG edges into the middle block, `r` equals the affine.
    pub substs: Vec<((BlockId, BlockId), Affine)>,
    /// `r − 1 ≥ 0` on the edge that enters the remainder (`r ≠ 0`).
    pub entry_fact: ((BlockId, BlockId), Affine),
}

/// The links of every remainder loop of the kernel in clang's shape.
pub fn links(env: &Env<'_>) -> Vec<Link> {
    let remainders = env.loop_facts().remainders();
    remainders.iter().filter_map(|r| link(env, r)).collect()
}

fn starts_at_zero(vals: &mut Values<'_, '_>, v: Value) -> bool {
    vals.val(v).as_exact().and_then(|a| a.as_constant()) == Some(Rat::ZERO)
}

/// The link of remainder `r`, when its counters start at 0, its count is
/// uniform and the masks and the guard give `r` its values.
fn link(env: &Env<'_>, r: &Remainder) -> Option<Link> {
    let mut vals = Values::new(env, Ranges::default());
    if !starts_at_zero(&mut vals, r.starts.0) || !starts_at_zero(&mut vals, r.starts.1) {
        return None;
    }
    let x_aff = vals.val(r.count).as_exact()?.clone();
    if x_aff.mentions(|s| s.is_per_thread() || matches!(s, Sym::Ghost(_) | Sym::Rem(_))) {
        return None;
    }
    // `x & C = x − (x & (U − 1))` needs x ≥ 0 where main exits when C
    // leaves out the sign.
    if r.main_mask == MainMask::HighButSign {
        let mut at_exit = Values::new(env, Ranges::default());
        conditions::edge_facts(&mut at_exit, r.main_exit.0, r.main_exit.1);
        if !at_exit.ranges.nonneg(env, &x_aff) {
            return None;
        }
    }
    // On the guard's edge, 0 ≤ x < U: x & (U − 1) = x.
    let u = r.unroll as i128;
    let mut at_guard = Values::new(env, Ranges::default());
    conditions::edge_facts(&mut at_guard, r.guard.0, r.guard.1);
    let (lo, hi) = at_guard.ranges.of(env, &x_aff);
    if !(lo.is_some_and(|l| l >= Rat::ZERO) && hi.is_some_and(|h| h < Rat::int(u))) {
        return None;
    }
    let k_main = Affine::sym(Sym::Ghost(r.main));
    let after_main = x_aff.sub(&k_main.plus(Rat::ONE).scale(Rat::int(u)));
    let header = env.g.loops.get(r.rem).header;
    Some(Link {
        rem: r.rem,
        trip: Affine::sym(Sym::Rem(r.rem)).plus(-Rat::ONE),
        substs: vec![(r.main_exit, after_main), (r.guard, x_aff)],
        entry_fact: (
            (r.middle, header),
            Affine::sym(Sym::Rem(r.rem)).plus(-Rat::ONE),
        ),
    })
}
