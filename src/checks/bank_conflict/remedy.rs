//! What the bank-conflict hint advises, worked out before it is said.
//!
//! * **A pitch** for a two-dimensional `__shared__` array: rows of
//!   `cols + pad` elements move an access with row index `r` by
//!   `r · pad · element` bytes (`memory::rows`). Each pad from 1 to
//!   [`MAX_PAD`] is tried on every lane of every warp (and every iteration
//!   of a swept loop) of this access and of every other access of the
//!   array; the least pad that makes this one better and no other worse is
//!   advised, with the degree it gives (`tile[32][33]`: 1-way; an
//!   anti-diagonal of `temp[17][17]`: a pitch of 18).
//! * **Sequential addressing** for a one-dimensional array whose lane
//!   stride grows with a loop counter the launch fixes (`s[2·k·t]`, the
//!   tree reduction's interleaved form): indexed by the thread instead,
//!   each iteration's lanes read consecutive words, whose degree is worked
//!   out the same way.
//!
//! Where neither holds, the hint says what makes any access conflict-free
//! and names no change that was not checked.

use super::{conflict_over, degree, Conflict};
use crate::acf::expr::Atom;
use crate::acf::lanes::Column;
use crate::analysis::{KernelAnalysis, Site};
use crate::checks::addresses;
use crate::ir::{Module, SiteKind};
use crate::memory::rows::{row_terms, shared_global};
use crate::memory::Space;
use serde::Serialize;

/// The most elements a row is padded by: a conflict padding cannot fix
/// by then comes from the index arithmetic.
pub const MAX_PAD: u64 = 4;

/// A change to the kernel and the degree the access has under it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Remedy {
    /// Rows of `pitch` elements instead of `cols`.
    Pitch {
        array: String,
        rows: u64,
        cols: u64,
        pitch: u64,
        degree: u64,
    },
    /// The array indexed by the thread, the stride halving.
    Sequential { degree: u64 },
}

impl Remedy {
    /// The hint that says it.
    pub fn hint(&self) -> String {
        match self {
            Remedy::Pitch {
                array,
                rows,
                cols,
                pitch,
                degree,
            } => format!(
                "pad the rows of {array} to {pitch} elements ({array}[{rows}][{pitch}] instead of [{rows}][{cols}]): {degree}-way here, and no other access of {array} gets worse"
            ),
            Remedy::Sequential { degree } => format!(
                "use sequential addressing: index the array by the thread and halve the stride (`for (s = blockDim.x / 2; s > 0; s >>= 1) if (t < s) a[t] += a[t + s];`): {degree}-way on every iteration, and the guard splits only warp 0, once s is below 32"
            ),
        }
    }
}

/// What makes any access conflict-free, when no change was checked.
pub const GENERAL_HINT: &str = "lanes of a warp meet in the same banks: make neighbouring lanes use neighbouring 4-byte words (a stride of an odd number of words is conflict-free)";

/// The remedy for `site`, whose figure is `c`, if one is better.
pub fn remedy(m: &Module, k: &KernelAnalysis, site: &Site, c: &Conflict) -> Option<Remedy> {
    if c.max <= 1 || site.kind == SiteKind::Atomic {
        return None;
    }
    pitch(m, k, site, c.max).or_else(|| sequential(m, k, site, c.max))
}

/// The worst degree of `s` with its array's rows `pad` elements longer;
/// `None` where a lane is not placed.
fn padded(m: &Module, k: &KernelAnalysis, s: &Site, pad: u64) -> Option<u64> {
    let rows = row_terms(m, m.func(s.func), s.value)?;
    let moves: Vec<_> = rows
        .terms
        .iter()
        .map(|&(v, r)| (v, i128::from(r) * (pad * rows.elem_bytes) as i128))
        .collect();
    let items = addresses::per_warp_moved(m, k, s, &moves, true);
    if items
        .iter()
        .any(|w| matches!(w, addresses::WarpAddresses::Unknown { .. }))
    {
        return None;
    }
    Some(conflict_over(items, s.bytes.max(1), None, false).max)
}

fn pitch(m: &Module, k: &KernelAnalysis, site: &Site, now: u64) -> Option<Remedy> {
    let rows = row_terms(m, m.func(site.func), site.value)?;
    let others: Vec<(&Site, u64)> = k
        .sites
        .iter()
        .filter(|s| {
            s.space == Some(Space::Shared)
                && s.thread_dependent
                && !std::ptr::eq(*s, site)
                && shared_global(m, m.func(s.func), s.value) == Some(rows.global)
        })
        .map(|s| Some((s, padded(m, k, s, 0)?)))
        .collect::<Option<_>>()?;
    let mut best: Option<(u64, u64)> = None;
    for pad in 1..=MAX_PAD {
        let Some(here) = padded(m, k, site, pad) else {
            continue;
        };
        let others_fine = others
            .iter()
            .all(|&(s, before)| padded(m, k, s, pad).is_some_and(|after| after <= before));
        if here < now && others_fine && best.is_none_or(|(_, d)| here < d) {
            best = Some((pad, here));
        }
        if here == 1 && others_fine {
            break;
        }
    }
    let (pad, degree) = best?;
    Some(Remedy::Pitch {
        array: m.global_label(rows.global),
        rows: rows.rows,
        cols: rows.cols,
        pitch: rows.cols + pad,
        degree,
    })
}

fn sequential(m: &Module, k: &KernelAnalysis, site: &Site, now: u64) -> Option<Remedy> {
    if row_terms(m, m.func(site.func), site.value).is_some() {
        return None;
    }
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    let &[c] = acf.contexts(site.func) else {
        return None;
    };
    let ladder = acf.ladder(c, block)?;
    let p = acf.arena.poly(acf.expr(c, site.value)?);
    let thread = |a| matches!(acf.arena.atom(a), Atom::Tid(_) | Atom::LaneId);
    let grows = p
        .terms
        .iter()
        .any(|(mono, _)| mono.contains(&ladder.atom) && mono.iter().any(|&a| thread(a)));
    if !grows {
        return None;
    }
    // Lane l at element l: what each iteration's active lanes read then.
    let bytes = site.bytes.max(1);
    let lanes: Column = std::array::from_fn(|l| l as i128 * i128::from(bytes));
    let (worst, _, _) = degree(&lanes, u32::MAX, 0, bytes);
    (worst < now).then_some(Remedy::Sequential { degree: worst })
}
