//! Loop exits that test a counter against a per-lane bound:
//! `for (i = 0; i < threadIdx.x; i++)`.
//!
//! The counter `[i]` has one value per iteration, so the test alone says
//! only "some threshold splits the lanes". But the loop goes on while any
//! lane stays, so the counter runs through every iteration some lane
//! needs: with a constant start and step, each lane's exit iteration is a
//! number, and the warp splits exactly when the lanes that enter the loop
//! leave on different iterations.
//!
//! This holds when the branch is the loop's only exit and runs once per
//! iteration (as its [`Exit`](crate::graph::loop_facts::Exit) in the loop
//! facts says), and the test is `c·[i] + V + d[lane]` with `V` a constant.

use super::expr::{compare, Arena, Atom, Uniform};
use super::lanes::{lanes, LANES};
use super::warp::Cond;
use crate::graph::FunctionGraphs;
use crate::ir::{BlockId, FuncId, Module};

/// Iterations simulated before giving up.
const MAX_ITERATIONS: i128 = 1 << 12;

/// Each lane's exit iteration and the lanes that enter the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneExits {
    /// `None` past the budget.
    pub exits: [Option<u32>; LANES],
    pub entry_may: u32,
    pub entry_must: u32,
}

impl LaneExits {
    /// Whether the lanes of `mask` leave on at least two iterations;
    /// `None` if some lane's iteration is not known.
    pub fn differ(&self, mask: u32) -> Option<bool> {
        let mut seen: Option<u32> = None;
        let mut differ = false;
        for l in lanes(mask) {
            let e = self.exits[l]?;
            match seen {
                None => seen = Some(e),
                Some(s) if s != e => differ = true,
                _ => {}
            }
        }
        Some(differ)
    }
}

/// The lane exits of the branch ending `b`, if its shape allows them.
pub fn lane_exits<'c>(
    arena: &Arena,
    g: &FunctionGraphs,
    m: &Module,
    (f, b): (FuncId, BlockId),
    cond: &Cond,
    active: &dyn Fn(BlockId) -> (u32, u32),
    conds: &dyn Fn(BlockId) -> Option<&'c Cond>,
) -> Option<LaneExits> {
    let Cond::Threshold { pred, u, d, .. } = cond else {
        return None;
    };
    let func = m.func(f);
    let l = g.loops.loop_of(b)?;
    let lp = g.loops.get(l);
    let exit = g.loop_facts(m, func).exit(l, b)?;
    if lp.exiting != [b] || !exit.every_iteration {
        return None;
    }
    // The branch leaves on its condition's `true` outcome.
    let exit_first = !exit.stay;
    // u = c·[i] + v with [i] this loop's counter.
    let (mut c, mut v, mut counter) = (0, 0, None);
    for (mono, k) in &u.terms {
        match mono.as_slice() {
            [] => v = *k,
            [a] => match arena.atom(*a) {
                Atom::Uniform(Uniform::LoopPhi(ctx, i))
                    if arena.func_of(*ctx) == f && func.inst(*i).block == lp.header =>
                {
                    c = *k;
                    counter = arena.counter(*a);
                }
                _ => return None,
            },
            _ => return None,
        }
    }
    let (start, step) = counter?;
    let mut exits = [None; LANES];
    let mut left = u32::MAX;
    let mut k = 0i128;
    while left != 0 && k < MAX_ITERATIONS {
        let uk = c * (start + k * step) + v;
        for l in lanes(left) {
            let taken_first = compare(*pred, uk + d[l], 0);
            if taken_first == exit_first {
                exits[l] = Some(k as u32);
                left &= !(1 << l);
            }
        }
        k += 1;
    }
    let (entry_may, entry_must) = entry(g, lp.header, |x| lp.contains(x), active, conds);
    Some(LaneExits {
        exits,
        entry_may,
        entry_must,
    })
}

/// Lanes that enter the loop at `header` from outside it.
fn entry<'c>(
    g: &FunctionGraphs,
    header: BlockId,
    inside: impl Fn(BlockId) -> bool,
    active: &dyn Fn(BlockId) -> (u32, u32),
    conds: &dyn Fn(BlockId) -> Option<&'c Cond>,
) -> (u32, u32) {
    let (mut may, mut must, mut edges) = (0, 0, 0);
    for &p in g
        .cfg
        .preds(header)
        .iter()
        .filter(|&&p| !inside(p) && g.cfg.reachable(p))
    {
        let (pmay, pmust) = active(p);
        let s = g
            .cfg
            .succs(p)
            .iter()
            .position(|&x| x == header)
            .unwrap_or(0);
        let (emay, emust) = if g.cfg.succs(p).len() < 2 {
            (pmay, pmust)
        } else {
            match conds(p) {
                Some(c @ Cond::Threshold { bounded: true, .. }) => {
                    let r = c.reach_of(s);
                    (pmay & r, pmust & r)
                }
                Some(c) => c.edge(s, (pmay, pmust)),
                None => (pmay, 0),
            }
        };
        may |= emay;
        must = emust;
        edges += 1;
    }
    (may, if edges == 1 { must } else { 0 })
}
