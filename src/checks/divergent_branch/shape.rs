//! The shape of a branch's split, for its hint: a range of threads (a
//! bound on the thread index, which splits only the warp it falls in),
//! or a tree reduction's interleaved test, whose sequential form splits
//! only warp 0. "Make the condition uniform per warp" is said only of
//! neither.

use super::Divergence;
use crate::acf::lanes::lanes;
use crate::acf::warp::Cond;
use crate::analysis::{KernelAnalysis, Site};
use crate::hw::WARP_SIZE;
use crate::ir::Module;
use serde::Serialize;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Every warp's lanes go one way below a bound and the other above it:
    /// one value of the bound splits at most one warp.
    Range,
    /// A loop whose counter doubles or halves splits more than one warp on
    /// some iteration; the sequential form (`t < s`, `s` halving from half
    /// the block) splits at most `split` warps on any iteration, and none
    /// once `s` is a multiple of 32.
    Interleaved { split: u32 },
}

/// The branch's shape, if it is one of these.
pub fn of(m: &Module, k: &KernelAnalysis, site: &Site, d: &Divergence) -> Option<Shape> {
    // A loop's test is a range on every iteration where each splits at
    // most the one warp its bound falls in (`2·k·t < n`).
    let ladder_range = k.acf.warps.len() > 1
        && d.iterations
            .as_ref()
            .is_some_and(|t| t.rows.iter().all(|r| r.split_max <= 1));
    if ladder_range || (d.iterations.is_none() && d.split_max <= 1 && range(m, k, site)) {
        return Some(Shape::Range);
    }
    interleaved(k, d)
}

/// Whether every warp's condition is a threshold on lane offsets that
/// grow (or shrink) with the lane: the lanes on each side are a run.
fn range(m: &Module, k: &KernelAnalysis, site: &Site) -> bool {
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    let mut any = false;
    for &c in acf.contexts(site.func) {
        for w in 0..acf.warps.len() {
            let (may, _) = acf.active(w, c, block);
            match acf.cond(w, c, block) {
                None | Some(Cond::Uniform) => {}
                Some(Cond::Threshold { d, .. }) => {
                    let seq: Vec<i128> = lanes(may).map(|l| d[l]).collect();
                    let up = seq.windows(2).all(|x| x[0] <= x[1]);
                    let down = seq.windows(2).all(|x| x[0] >= x[1]);
                    if !(up || down) {
                        return false;
                    }
                    any = true;
                }
                Some(_) => return false,
            }
        }
    }
    any
}

/// A ladder of halving or doubling values on which the branch splits
/// more than one warp: the warps the sequential form splits instead.
fn interleaved(k: &KernelAnalysis, d: &Divergence) -> Option<Shape> {
    let t = d.iterations.as_ref()?;
    if t.rows.iter().all(|r| r.split_max <= 1) || t.rows.len() < 2 {
        return None;
    }
    let mut values: Vec<i64> = t.rows.iter().map(|r| r.value).collect();
    values.sort_unstable();
    if values[0] <= 0 || values.windows(2).any(|x| x[1] != 2 * x[0]) {
        return None;
    }
    // Sequential: `s` from half the block down to 1; on each, the lanes
    // below `s` take the side, splitting the warp `s` falls inside.
    let threads = (k.acf.warps.len() as u64 * u64::from(WARP_SIZE)).max(2);
    let mut split = 0;
    let mut s = threads / 2;
    while s >= 1 {
        split = split.max(u32::from(!s.is_multiple_of(u64::from(WARP_SIZE))));
        s /= 2;
    }
    Some(Shape::Interleaved { split })
}

impl Shape {
    /// The hint that says what to do.
    pub fn hint(self, counter: &str) -> String {
        match self {
            Shape::Range => "the condition bounds a range of threads: only the warp the bound falls in splits, the least a range can split; nothing to change unless the guarded side is long".to_string(),
            Shape::Interleaved { split } => format!(
                "use sequential addressing: let the first threads do the work on each iteration (`if (t < s)` with s halving from blockDim.x / 2, in place of the test on {counter}): at most {split} warp splits on any iteration, warp 0 once s is below 32"
            ),
        }
    }
}
