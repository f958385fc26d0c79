//! Branches that split warps on purpose, named so that a finding says what
//! the code does instead of advising to make the condition uniform:
//!
//! * a **leader lane** (`lane == 0`, `warp.thread_rank() == 0`): one lane
//!   per warp, or one thread of the block (`threadIdx.x == 0`), runs a
//!   side that stores, updates atomically or exchanges with a shuffle;
//! * a **halo load** (`threadIdx.x < RADIUS`): the first or last threads
//!   of each row of the block, and only they, run a side that loads from
//!   global memory and stores to shared memory (a tile's edge staged; a
//!   reduction's `if (t < s) s[t] += s[t + s]` is not one);
//! * a **bounds check** (`i < n`, `i` the global index): only the warp
//!   that straddles `n` can split (the divergence class `bounded`).
//!
//! Leaders and halos are read from the lanes the ACF sends to each side,
//! so `laneid == 0`, `threadIdx.x % 32 == 0` and `(threadIdx.x & 31) == 0`
//! are one idiom: the lanes decide, not the spelling.

use crate::acf::lanes::lanes;
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::ir::intrinsics::Intrinsic;
use crate::ir::{BlockId, Opcode, SiteKind};
use crate::memory::Space;
use serde::Serialize;

/// A branch idiom (the JSON `divergence.idiom`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Idiom {
    /// One lane per warp takes a side that stores, updates or shuffles.
    LeaderLane,
    /// One thread of the block takes such a side.
    LeaderThread,
    /// The first or last threads of each row load a tile's edge.
    Halo,
    /// Only the warp that straddles the bound can split.
    BoundsCheck,
}

/// What a side of a branch does, as far as the idioms care.
#[derive(Default, Debug)]
struct Effects {
    /// Loads from global memory and stores to shared memory: staging.
    global_loads: bool,
    shared_stores: bool,
    /// Stores, atomics, shuffles and votes: what a leader does for its warp.
    leader: bool,
}

/// How the divergence check classed a branch, as far as idioms care.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Split {
    /// Known warps split (classes `total` and `partial`).
    Known,
    /// At most the warp that straddles a threshold (class `bounded`).
    Bounded,
    /// None, or not known.
    Other,
}

/// The idiom of the branch at `s`, which splits warps as `split` says.
pub fn of_branch(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    s: &Site,
    split: Split,
) -> Option<Idiom> {
    match split {
        Split::Bounded => return Some(Idiom::BoundsCheck),
        Split::Other => return None,
        Split::Known => {}
    }
    let m = a.module;
    let f = m.func(s.func);
    let b = f.inst(s.inst).block;
    let succs = f.successors(b);
    let &[c] = k.acf.contexts(s.func) else {
        return None;
    };
    if succs.len() != 2 || succs[0] == succs[1] {
        return None;
    }
    // Per side, per warp: the lanes that take it (exact, or no idiom).
    let mut taken: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for w in 0..k.acf.warps.len() {
        let (may, _) = k.acf.active(w, c, b);
        let cond = k.acf.cond(w, c, b);
        for (side, t) in taken.iter_mut().enumerate() {
            let mask = match cond {
                _ if may == 0 => 0,
                Some(cond) => cond.lanes_to(side, may)?,
                None => return None,
            };
            t.push(mask);
        }
    }
    let g = a.graphs.get(s.func)?;
    (0..2).find_map(|side| {
        let effects = effects(a, k, s, &g.branch_side(b, succs[side]));
        idiom_of_lanes(k, &taken[side], &effects)
    })
}

/// The idiom of the side that the lanes `taken` (per warp) run.
fn idiom_of_lanes(k: &KernelAnalysis, taken: &[u32], effects: &Effects) -> Option<Idiom> {
    let counts: Vec<u32> = taken.iter().map(|m| m.count_ones()).collect();
    let total: u32 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    if effects.leader && counts.iter().all(|&n| n <= 1) {
        return Some(if total == 1 {
            Idiom::LeaderThread
        } else {
            Idiom::LeaderLane
        });
    }
    if effects.global_loads && effects.shared_stores && is_row_edge(k, taken) {
        return Some(Idiom::Halo);
    }
    None
}

/// Whether the lanes `taken` are exactly the threads with `threadIdx.x`
/// below some `r`, or at least some `r`, with `r` at most half the row.
fn is_row_edge(k: &KernelAnalysis, taken: &[u32]) -> bool {
    let width = k.block_dim.dims[0].max(1);
    let mut xs_in = Vec::new();
    let mut xs_out = Vec::new();
    for (w, warp) in k.acf.warps.iter().enumerate() {
        for l in lanes(warp.exists) {
            let x = warp.tid[l][0];
            if taken.get(w).is_some_and(|m| m & (1 << l) != 0) {
                xs_in.push(x);
            } else {
                xs_out.push(x);
            }
        }
    }
    let (Some(&in_max), Some(&in_min)) = (xs_in.iter().max(), xs_in.iter().min()) else {
        return false;
    };
    let low = xs_out.iter().all(|&x| x > in_max) && in_max < width / 2;
    let high = xs_out.iter().all(|&x| x < in_min) && in_min >= width - width / 2;
    low || high
}

/// What the blocks of one side do.
fn effects(a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &Site, side: &[BlockId]) -> Effects {
    let m = a.module;
    let f = m.func(s.func);
    let mut e = Effects::default();
    for site in k.sites.iter().filter(|x| x.func == s.func) {
        if side.binary_search(&f.inst(site.inst).block).is_err() {
            continue;
        }
        let space = site.space;
        match site.kind {
            SiteKind::Load => e.global_loads |= space == Some(Space::Global),
            SiteKind::Store => {
                e.leader = true;
                e.shared_stores |= space == Some(Space::Shared);
            }
            SiteKind::Atomic => e.leader = true,
            SiteKind::Branch => {}
        }
    }
    for &b in side {
        for &i in &f.blocks[b.index()].insts {
            let inst = f.inst(i);
            let warp_op = matches!(
                m.called_intrinsic(inst),
                Some(
                    Intrinsic::Shfl { .. }
                        | Intrinsic::Vote(_)
                        | Intrinsic::Redux(_)
                        | Intrinsic::Atomic(_)
                )
            );
            let memory = matches!(inst.op, Opcode::Store | Opcode::AtomicRmw | Opcode::CmpXchg);
            e.leader |= warp_op || memory;
        }
    }
    e
}
