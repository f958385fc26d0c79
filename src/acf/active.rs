//! Which lanes of a warp can be active in each block (see the `warp`
//! module docs for the rules).

use super::lanes::{ALL, LANES};
use super::warp::Cond;
use crate::graph::FunctionGraphs;
use crate::ir::BlockId;

/// Per block, the `(branch, successor position)` edges it is control
/// dependent on; built once per function and shared by every warp.
///
/// Control dependence says when a block in a loop runs *again*: a block
/// that post-dominates the loop's header (the header itself, the join
/// after an `if` in the body, a rotated loop's latch) depends on the
/// back edge only, not on how the loop was entered. Without a branch
/// before the loop (a constant trip count needs no guard) nothing would
/// give such a block the lanes of the first iteration. So a loop's
/// header, and a block that depends on a back edge, also keep the edges
/// that enter that loop from outside.
pub struct ControlEdges {
    edges: Vec<Vec<(BlockId, usize)>>,
    entries: Vec<Vec<(BlockId, usize)>>,
}

impl ControlEdges {
    pub fn new(g: &FunctionGraphs) -> Self {
        let cfg = &g.cfg;
        let mut into_loop = vec![Vec::new(); cfg.num_blocks()];
        for (_, lp) in g.loops.iter() {
            let h = lp.header;
            for &p in cfg.preds(h).iter().filter(|&&p| !lp.contains(p)) {
                for (s, &succ) in cfg.succs(p).iter().enumerate() {
                    if succ == h {
                        into_loop[h.index()].push((p, s));
                    }
                }
            }
        }
        let mut edges = vec![Vec::new(); cfg.num_blocks()];
        // A header runs with the lanes that enter its loop, whatever it
        // depends on (a header-exit loop's header depends on its own test).
        let mut entries = into_loop.clone();
        for &b in cfg.reverse_post_order() {
            for &branch in g.cdg.deps_of(b) {
                for (s, &succ) in cfg.succs(branch).iter().enumerate() {
                    // The edge decides `b` when `b` post-dominates its target.
                    if !g.pdom.dominates(b, succ) {
                        continue;
                    }
                    edges[b.index()].push((branch, s));
                    for &e in &into_loop[succ.index()] {
                        if !entries[b.index()].contains(&e) {
                            entries[b.index()].push(e);
                        }
                    }
                }
            }
        }
        ControlEdges { edges, entries }
    }
}

/// The lanes of `(may, must)` at `branch` that take its edge `s`.
fn along<'c>(
    state: &[(u32, u32)],
    cond: &impl Fn(BlockId) -> Option<&'c Cond>,
    (branch, s): (BlockId, usize),
    whole_warps: bool,
    branches: bool,
) -> (u32, u32) {
    let (pmay, pmust) = state[branch.index()];
    if !branches {
        return (pmay, pmust);
    }
    match cond(branch) {
        Some(c @ Cond::Threshold { bounded: true, .. }) if whole_warps => {
            let r = c.reach_of(s);
            (pmay & r, pmust & r)
        }
        Some(c) => c.edge(s, (pmay, pmust)),
        None => (pmay, 0),
    }
}

/// `(may, must)` lanes of every block (indexed by block) for one warp.
///
/// With `whole_warps`, a bounds check (`bounded`) passes whole warps: true
/// of every warp but the one its threshold falls in, which is what the
/// divergence classes assume. Without it, `must` holds in every warp.
pub fn active_lanes<'c>(
    g: &FunctionGraphs,
    control: &ControlEdges,
    entry: (u32, u32),
    cond: impl Fn(BlockId) -> Option<&'c Cond>,
    whole_warps: bool,
) -> Vec<(u32, u32)> {
    let cfg = &g.cfg;
    let mut state = vec![(0u32, entry.1); cfg.num_blocks()];
    for _round in 0..(2 * LANES + 4) {
        let mut changed = false;
        for &b in cfg.reverse_post_order() {
            let edges = &control.edges[b.index()];
            let entries = &control.entries[b.index()];
            let new = if edges.is_empty() {
                entry
            } else {
                let (mut may, mut must) = (0, ALL);
                for &e in edges {
                    let (emay, emust) = along(&state, &cond, e, whole_warps, true);
                    may |= emay;
                    must &= emust;
                }
                // A block that runs again on a back edge also runs with
                // the lanes that enter the loop.
                for &e in entries {
                    let branches = cfg.succs(e.0).len() > 1;
                    let (emay, emust) = along(&state, &cond, e, whole_warps, branches);
                    may |= emay;
                    must &= emust;
                }
                (may & entry.0, must & entry.1 & may)
            };
            let old = state[b.index()];
            let merged = (old.0 | new.0, old.1 & new.1);
            if merged != old {
                state[b.index()] = merged;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Lanes leave a loop whose exit they disagree on over several
    // iterations: inside it, none is sure to be active. An exit known per
    // lane sends the same lanes out on every iteration, which the
    // fixpoint's `must` already takes away from the staying side.
    for (_, lp) in g.loops.iter() {
        let parts = lp.exiting.iter().any(|&x| {
            g.cfg.is_branch(x)
                && !matches!(
                    cond(x),
                    None | Some(Cond::Uniform)
                        | Some(Cond::PerLane(_))
                        | Some(Cond::Gated { .. })
                        | Some(Cond::Threshold { bounded: true, .. })
                )
        });
        if parts {
            for b in &lp.blocks {
                state[b.index()].1 = 0;
            }
        }
    }
    for (b, s) in state.iter_mut().enumerate() {
        if !cfg.reachable(BlockId::new(b)) {
            *s = (0, 0);
        }
    }
    state
}
