#![doc = include_str!("divergent_branch.md")]

use super::{Check, CheckContext};
use crate::acf::expr::{Arena, Atom, Congruence, Poly, Uniform};
use crate::acf::lanes::lanes;
use crate::acf::warp::Cond;
use crate::acf::KernelAcf;
use crate::analysis::{KernelAnalysis, Site};
use crate::diag::{Finding, Position, Severity};
use crate::graph::FunctionGraphs;
use crate::ir::{BlockId, FuncId, IntPred, Module, Value};
use serde::Serialize;

/// A branch's classification.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivClass {
    None,
    Total,
    Partial,
    Bounded,
    Unknown,
}

impl DivClass {
    pub fn name(self) -> &'static str {
        match self {
            DivClass::None => "none",
            DivClass::Total => "total",
            DivClass::Partial => "partial",
            DivClass::Bounded => "bounded",
            DivClass::Unknown => "unknown",
        }
    }
}

/// What a branch does to the warps of a block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Divergence {
    /// Fractions of the block's warps that split.
    pub min: f64,
    pub max: f64,
    pub class: DivClass,
    /// Warps in the block.
    pub warps: u32,
    /// Warps that certainly split, and that may.
    pub split_min: u32,
    pub split_max: u32,
    /// Per warp of the block: `split`, `uniform` or `maybe`.
    pub by_warp: Vec<&'static str>,
}

/// One warp's outcome.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Uniform,
    Split,
    /// May split; when the condition is a threshold that is the same in
    /// every execution, the integer thresholds that would split it.
    Maybe(Option<Vec<(i128, i128)>>),
}

/// Classifies the branch `site` (a branch site of `k`).
pub fn measure(m: &Module, g: &FunctionGraphs, k: &KernelAnalysis, site: &Site) -> Divergence {
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    let invariant = |arena: &Arena, u: &Poly| loop_invariant(m, g, arena, u, site.func, block);
    let outcomes: Vec<Outcome> = (0..acf.warps.len())
        .map(|w| {
            if !site.thread_dependent {
                return Outcome::Uniform;
            }
            warp_outcome(acf, w, site.func, block, &invariant)
        })
        .collect();
    classify(&outcomes)
}

fn warp_outcome(
    acf: &KernelAcf,
    w: usize,
    f: FuncId,
    b: BlockId,
    invariant: &dyn Fn(&Arena, &Poly) -> bool,
) -> Outcome {
    let (may, must) = acf.active(w, f, b);
    if may == 0 {
        return Outcome::Uniform;
    }
    match acf.cond(w, f, b) {
        None | Some(Cond::Unknown) => Outcome::Maybe(None),
        Some(Cond::Uniform) => Outcome::Uniform,
        Some(Cond::PerLane(t)) => {
            let differ = |mask: u32| {
                let mut it = lanes(mask).map(|l| t[l]);
                it.next().is_some_and(|first| it.any(|x| x != first))
            };
            if !differ(may) {
                Outcome::Uniform
            } else if differ(must) {
                Outcome::Split
            } else {
                Outcome::Maybe(None)
            }
        }
        Some(Cond::Threshold { pred, u, d, .. }) => {
            let t = congruence_of_negation(acf.arena.congruence(u));
            let ds: Vec<i128> = lanes(may).map(|l| d[l]).collect();
            match splitting_thresholds(*pred, &ds, t) {
                None => Outcome::Uniform,
                Some(set) => Outcome::Maybe(invariant(&acf.arena, u).then_some(set)),
            }
        }
    }
}

/// `T = -U`: what is known of the threshold modulo small numbers.
fn congruence_of_negation(c: Congruence) -> Congruence {
    Congruence::new(c.modulus, -c.residue)
}

/// For lanes with values `d` and the test `d + U pred 0` with `T = -U ≡ t`:
/// `None` when no allowed `T` splits the lanes, else the integer ranges of
/// `T` that do.
fn splitting_thresholds(pred: IntPred, d: &[i128], t: Congruence) -> Option<Vec<(i128, i128)>> {
    let (lo, hi) = (*d.iter().min()?, *d.iter().max()?);
    if lo == hi {
        return None;
    }
    let allowed = |a: i128, b: i128| -> bool {
        // Some T in [a, b] with T ≡ t.residue (mod t.modulus)?
        if a > b {
            return false;
        }
        if t.modulus == 0 {
            return (a..=b).contains(&t.residue);
        }
        let first = a + (t.residue - a).rem_euclid(t.modulus);
        first <= b
    };
    use IntPred::*;
    let ranges: Vec<(i128, i128)> = match pred {
        // d < T splits for T in (lo, hi]; d <= T for T in [lo, hi).
        Slt | Ult | Sge | Uge => vec![(lo + 1, hi)],
        Sle | Ule | Sgt | Ugt => vec![(lo, hi - 1)],
        Eq | Ne => {
            let mut v: Vec<i128> = d.to_vec();
            v.sort_unstable();
            v.dedup();
            v.into_iter().map(|x| (x, x)).collect()
        }
    };
    let ranges: Vec<(i128, i128)> = ranges.into_iter().filter(|&(a, b)| allowed(a, b)).collect();
    (!ranges.is_empty()).then_some(ranges)
}

/// Whether `u` has one value in every execution of `b` in a block: none
/// of its atoms changes inside a loop holding `b`.
fn loop_invariant(
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
            Atom::Uniform(Uniform::LoopPhi(func, i))
            | Atom::Uniform(Uniform::Value(func, Value::Inst(i))) => {
                *func == f && !in_loop_with_b(m.func(f).inst(*i).block)
            }
            Atom::Uniform(Uniform::Op(_, args)) => args
                .iter()
                .all(|&e| loop_invariant(m, g, arena, arena.poly(e), f, b)),
            Atom::Uniform(_) => true,
            _ => false,
        })
    })
}

fn classify(outcomes: &[Outcome]) -> Divergence {
    let warps = outcomes.len() as u32;
    let split = outcomes.iter().filter(|o| **o == Outcome::Split).count() as u32;
    let maybe: Vec<&Option<Vec<(i128, i128)>>> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Maybe(s) => Some(s),
            _ => None,
        })
        .collect();
    let may = maybe.len() as u32;
    let bounded = may > 0 && split == 0 && at_most_one(&maybe);
    let (class, split_max) = if may == 0 {
        let class = match split {
            0 => DivClass::None,
            s if s == warps => DivClass::Total,
            _ => DivClass::Partial,
        };
        (class, split)
    } else if bounded {
        (DivClass::Bounded, 1)
    } else {
        (DivClass::Unknown, split + may)
    };
    let frac = |n: u32| {
        if warps == 0 {
            0.0
        } else {
            f64::from(n) / f64::from(warps)
        }
    };
    Divergence {
        min: frac(split),
        max: frac(split_max),
        class,
        warps,
        split_min: split,
        split_max,
        by_warp: outcomes
            .iter()
            .map(|o| match o {
                Outcome::Uniform => "uniform",
                Outcome::Split => "split",
                Outcome::Maybe(_) => "maybe",
            })
            .collect(),
    }
}

/// Whether the warps' splitting thresholds are pairwise disjoint, so one
/// threshold value splits at most one warp.
fn at_most_one(sets: &[&Option<Vec<(i128, i128)>>]) -> bool {
    let mut ranges: Vec<(i128, i128, usize)> = Vec::new();
    for (w, s) in sets.iter().enumerate() {
        let Some(s) = s else { return false };
        ranges.extend(s.iter().map(|&(a, b)| (a, b, w)));
    }
    ranges.sort_unstable();
    // Ranges of one warp may overlap each other; across warps they must not.
    let mut reach: Vec<(i128, usize)> = Vec::new();
    for &(a, b, w) in &ranges {
        if reach.iter().any(|&(end, v)| v != w && end >= a) {
            return false;
        }
        reach.retain(|&(end, _)| end >= a);
        reach.push((b, w));
    }
    true
}

pub struct DivergentBranch;

impl Check for DivergentBranch {
    fn name(&self) -> &'static str {
        "divergent-branch"
    }

    fn summary(&self) -> &'static str {
        "a branch splits the warps of a block (how many, from the lanes' arithmetic)"
    }

    fn explanation(&self) -> &'static str {
        include_str!("divergent_branch.md")
    }

    fn run(&self, cx: &CheckContext<'_, '_>) -> Vec<Finding> {
        let m = cx.analysis.module;
        let kernel = m.func(cx.kernel.kernel).demangled.clone();
        let mut out = Vec::new();
        for (s, fig) in cx.kernel.sites.iter().zip(cx.figures) {
            let Some(d) = &fig.divergence else { continue };
            if !s.thread_dependent {
                continue;
            }
            let (severity, message) = match d.class {
                DivClass::Total | DivClass::Partial => (
                    Severity::Warning,
                    format!(
                        "branch diverges in {} of {} warps{}; lanes of a warp take different paths",
                        d.split_min,
                        d.warps,
                        if d.class == DivClass::Total { " (every warp)" } else { "" }
                    ),
                ),
                DivClass::Bounded => (
                    Severity::Note,
                    format!(
                        "bounds-style branch: at most 1 of {} warps per block can diverge here",
                        d.warps
                    ),
                ),
                DivClass::None => (
                    Severity::Note,
                    "branch depends on the thread but never splits a warp".to_string(),
                ),
                DivClass::Unknown => (
                    Severity::Note,
                    format!(
                        "branch may diverge in up to {} of {} warps (depends on data or values unknown here)",
                        d.split_max, d.warps
                    ),
                ),
            };
            let mut notes = vec![format!("dependence: {}", s.why.join(" → "))];
            if severity == Severity::Warning {
                notes.push(
                    "hint: make the condition uniform per warp (e.g. test threadIdx.x / 32), or compute both sides and pick with min/max or a select".into(),
                );
            }
            out.push(Finding {
                check: self.name(),
                severity,
                func: s.func,
                inst: Some(s.inst),
                pos: s.pos.as_ref().map(|p| Position::resolve(m, p)),
                kernel: kernel.clone(),
                function: m.func(s.func).demangled.clone(),
                message,
                notes,
                data: serde_json::to_value(d).ok(),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_respect_congruences() {
        // Lanes 32..64 of `i = 256k + tid < 1024`: d = tid, T = 1024 - 256k
        // is 0 mod 32, never inside (32, 63].
        let d: Vec<i128> = (32..64).collect();
        let t = Congruence::new(256, 0);
        assert_eq!(splitting_thresholds(IntPred::Slt, &d, t), None);
        // With T unknown it can fall anywhere in (32, 63].
        assert_eq!(
            splitting_thresholds(IntPred::Slt, &d, Congruence::UNKNOWN),
            Some(vec![(33, 63)])
        );
        // Equality with a value of the warp.
        let s = splitting_thresholds(IntPred::Eq, &[1, 2, 3], Congruence::new(2, 0)).unwrap();
        assert_eq!(s, vec![(1, 1), (2, 2), (3, 3)]);
    }

    #[test]
    fn disjoint_thresholds_bound_the_split_warps() {
        let a = Some(vec![(1, 31)]);
        let b = Some(vec![(33, 63)]);
        assert!(at_most_one(&[&a, &b]));
        let c = Some(vec![(30, 40)]);
        assert!(!at_most_one(&[&a, &c]));
        assert!(!at_most_one(&[&a, &None]));
    }

    #[test]
    fn classes_from_outcomes() {
        use Outcome::*;
        let d = classify(&[
            Split, Uniform, Uniform, Uniform, Uniform, Uniform, Uniform, Uniform,
        ]);
        assert_eq!((d.class, d.min, d.max), (DivClass::Partial, 0.125, 0.125));
        assert_eq!(classify(&[Split, Split]).class, DivClass::Total);
        assert_eq!(classify(&[Uniform, Uniform]).class, DivClass::None);
        assert_eq!(classify(&[Maybe(None), Uniform]).class, DivClass::Unknown);
    }
}
