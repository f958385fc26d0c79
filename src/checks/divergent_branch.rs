#![doc = include_str!("divergent_branch.md")]

mod shape;

use super::idioms::{self, Idiom};
use super::{Check, Figure, Verdict};
use crate::acf::expr::CtxId;
use crate::acf::lanes::lanes;
use crate::acf::warp::{self, Cond};
use crate::acf::KernelAcf;
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::finding::{Kind, Severity};
use crate::ir::{BlockId, Module, SiteKind};
use serde::Serialize;
pub use shape::Shape;

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
    /// In a loop whose counter the launch fixes: the warps that split on
    /// each iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Iterations>,
    /// What the branch is for, when it is a known idiom (a leader lane, a
    /// halo load, a bounds check): the message and hint say so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idiom: Option<Idiom>,
    /// Whether a `bounded` class comes from a threshold that one value
    /// splits at most one warp of (a bounds check), rather than from only
    /// one warp being able to split at all.
    #[serde(skip)]
    pub threshold: bool,
    /// How the lanes split, when the hint has a checked change for it (a
    /// range of threads, a reduction's interleaved test).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
}

/// A branch's figures per value of its loop's counter.
pub type Iterations = super::figures::Iterations<IterationRow>;

/// One iteration: the counter's value and the warps that split then.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationRow {
    pub value: i64,
    pub split_min: u32,
    pub split_max: u32,
}

/// One warp's outcome.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Uniform,
    Split,
    /// May split; when the condition is a threshold that is the same in
    /// every execution, the integer thresholds that would split it.
    Maybe(Option<Vec<(i128, i128)>>),
    /// May split, by thresholds joined with `&&` or `||` (this many), each
    /// of which splits at most one warp of the block.
    MaybeParts(u32),
}

impl Figure for Divergence {
    const KEY: &'static str = "divergence";
}

/// Classifies the branch `site` (a branch site of `k`).
fn divergence(m: &Module, k: &KernelAnalysis, site: &Site) -> Divergence {
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    let contexts = acf.contexts(site.func);
    let table = match contexts {
        [c] if site.thread_dependent => iteration_table(m, k, site, *c, block),
        _ => None,
    };
    let outcomes: Vec<Outcome> = (0..acf.warps.len())
        .map(|w| {
            if !site.thread_dependent {
                return Outcome::Uniform;
            }
            // Over calling contexts: definite only where they all agree.
            let each: Vec<Outcome> = contexts
                .iter()
                .map(|&c| warp_outcome(acf, w, c, block))
                .collect();
            match each.split_first() {
                None => Outcome::Maybe(None),
                Some((first, rest)) if rest.iter().all(|o| o == first) => first.clone(),
                Some(_) => Outcome::Maybe(None),
            }
        })
        .collect();
    Divergence {
        iterations: table,
        ..classify(&outcomes)
    }
}

/// Warp `w` on each iteration of the ladder of block `b`: its outcome,
/// and whether the iteration certainly runs the branch.
fn iteration_outcomes(acf: &KernelAcf, w: usize, c: CtxId, b: BlockId) -> Option<Vec<Outcome>> {
    let ladder = acf.ladder(c, b)?;
    (0..ladder.values.len())
        .map(|k| {
            let it = acf.iteration(w, c, b, k)?;
            Some(lane_outcome(it.may, it.must, it.cond.as_ref()))
        })
        .collect()
}

/// The per-iteration rows of a branch in a swept loop.
fn iteration_table(
    m: &Module,
    k: &KernelAnalysis,
    site: &Site,
    c: CtxId,
    b: BlockId,
) -> Option<Iterations> {
    let acf = &k.acf;
    let ladder = acf.ladder(c, b)?;
    let per_warp: Vec<Vec<Outcome>> = (0..acf.warps.len())
        .map(|w| iteration_outcomes(acf, w, c, b))
        .collect::<Option<_>>()?;
    let mut rows: Vec<IterationRow> = ladder
        .values
        .iter()
        .enumerate()
        .map(|(k, &value)| {
            let count =
                |f: &dyn Fn(&Outcome) -> bool| per_warp.iter().filter(|o| f(&o[k])).count() as u32;
            let split = count(&|o| *o == Outcome::Split);
            let maybe = count(&|o| matches!(o, Outcome::Maybe(_) | Outcome::MaybeParts(_)));
            IterationRow {
                value: value as i64,
                split_min: if ladder.certain { split } else { 0 },
                split_max: split + maybe,
            }
        })
        .collect();
    let func = m.func(site.func);
    let mut counter = m.counter_label(func, ladder.phi);
    // Show what the condition compares (`s` rather than a rotated loop's
    // previous `s`) when it reads the counter through one expression.
    let shown = acf
        .expr(c, site.value)
        .and_then(|e| acf.arena.reader_of(e, ladder.atom));
    if let Some(r) = shown {
        let values: Option<Vec<i128>> = ladder
            .values
            .iter()
            .map(|&v| acf.arena.atom_value_at(r, ladder.atom, v))
            .collect();
        if let Some(values) = values {
            // The condition may read the counter through a no-op (clang 22
            // compares `k mod 2^32`): the same values keep the phi's name.
            let same = values == ladder.values;
            for (row, v) in rows.iter_mut().zip(values) {
                row.value = v as i64;
            }
            // A rotated loop's phi `s.in` holds the `s` before the step.
            counter = match counter.strip_suffix(".in") {
                Some(s) => s.to_string(),
                None if same => counter,
                None => {
                    let names = crate::acf::display::Names {
                        m,
                        kernel: k.kernel,
                    };
                    let shown = crate::acf::display::atom(&acf.arena, names, r);
                    // An expression past a glance (`[(256 / [(2·[d] %
                    // 4294967296)])]`) reads worse than the operand's own
                    // label: its variable, or "the division at 61:30".
                    match shown.len() <= 24 && !shown.contains('[') {
                        true => shown,
                        false => compared_label(m, k, site).unwrap_or(shown),
                    }
                }
            };
        }
    }
    Some(Iterations {
        counter: source_name(&counter),
        certain: ladder.certain,
        rows,
    })
}

/// The label of the uniform operand of `site`'s comparison (the value
/// the sweep evaluates), when there is one such instruction.
fn compared_label(m: &Module, k: &KernelAnalysis, site: &Site) -> Option<String> {
    let func = m.func(site.func);
    let crate::ir::Value::Inst(cmp) = site.value else {
        return None;
    };
    let uniform: Vec<_> = func
        .inst(cmp)
        .operands
        .iter()
        .filter(|&&o| matches!(o, crate::ir::Value::Inst(_)))
        .filter(|&&o| !k.deps.is_dependent(site.func, o))
        .collect();
    match uniform[..] {
        [&o] => Some(source_name(&m.value_label(func, o))),
        _ => None,
    }
}

/// `k` for clang's `%k.027` (a copy of source variable `k`), other names
/// without their `%`, and "the counter" for an unnamed value.
pub(crate) fn source_name(label: &str) -> String {
    let Some(name) = label.strip_prefix('%') else {
        return label.to_string();
    };
    let mut parts = name.split('.');
    let base = parts.next().unwrap_or(name);
    let copies = parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let ident = base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && base.bytes().next().is_some_and(|b| !b.is_ascii_digit());
    match (ident, copies) {
        (true, true) => base.to_string(),
        (true, false) => name.to_string(),
        // An unnamed value (`%184 (phi)`, no `-g`).
        (false, _) => "the counter".to_string(),
    }
}

fn warp_outcome(acf: &KernelAcf, w: usize, f: CtxId, b: BlockId) -> Outcome {
    let (may, must) = acf.active(w, f, b);
    if may == 0 {
        return Outcome::Uniform;
    }
    if let Some(s) = acf.lane_exits(w, f, b) {
        return match (s.differ(s.entry_must), s.differ(s.entry_may)) {
            (Some(true), _) => Outcome::Split,
            (_, Some(false)) => Outcome::Uniform,
            _ => Outcome::Maybe(None),
        };
    }
    if let (Some(each), Some(ladder)) = (iteration_outcomes(acf, w, f, b), acf.ladder(f, b)) {
        // Splits if a certain iteration splits it; uniform if none can.
        return if ladder.certain && each.contains(&Outcome::Split) {
            Outcome::Split
        } else if each.iter().all(|o| *o == Outcome::Uniform) {
            Outcome::Uniform
        } else {
            Outcome::Maybe(None)
        };
    }
    lane_outcome(may, must, acf.cond(w, f, b))
}

/// What a condition does to the lanes `may` (all that can be active) and
/// `must` (those active every time).
fn lane_outcome(may: u32, must: u32, cond: Option<&Cond>) -> Outcome {
    if may == 0 {
        return Outcome::Uniform;
    }
    match cond {
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
        Some(Cond::Threshold { splits, .. }) => Outcome::Maybe(splits.clone()),
        Some(
            c @ Cond::Thresholds {
                and, lanes: each, ..
            },
        ) => {
            let known: Vec<bool> = each.map_or(Vec::new(), |t| lanes(may).map(|l| t[l]).collect());
            match (known.first(), c.bounded_parts()) {
                // The known part sends every lane past the thresholds.
                (Some(&first), _) if known.iter().all(|&x| x == first) && first != *and => {
                    Outcome::Uniform
                }
                // It parts the lanes itself: they may split, whatever the
                // thresholds do.
                (Some(&first), _) if known.iter().any(|&x| x != first) => Outcome::Maybe(None),
                (_, Some(n)) => Outcome::MaybeParts(n),
                (_, None) => Outcome::Maybe(None),
            }
        }
        // The uniform side may send every lane one way: never a sure split.
        Some(Cond::Gated { t, .. }) => {
            let mut it = lanes(may).map(|l| t[l]);
            if it.next().is_some_and(|first| it.any(|x| x != first)) {
                Outcome::Maybe(None)
            } else {
                Outcome::Uniform
            }
        }
    }
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
    // Joined thresholds: each part splits at most one warp.
    let joined: Vec<u32> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::MaybeParts(n) => Some(*n),
            _ => None,
        })
        .collect();
    let may = (maybe.len() + joined.len()) as u32;
    let sets: Option<Vec<&Vec<(i128, i128)>>> = maybe.iter().map(|s| s.as_ref()).collect();
    let (threshold, most) = if joined.is_empty() {
        let t = may > 0 && split == 0 && sets.is_some_and(|s| warp::disjoint(&s));
        (t, 1)
    } else {
        // Warps that may split otherwise count one each.
        let most = joined.iter().copied().max().unwrap_or(0) + maybe.len() as u32;
        (split == 0 && most < may, most)
    };
    // One warp that may split and none that must: at most one splits,
    // whatever decides it (data, a block index).
    let bounded = threshold || (may == 1 && split == 0);
    let most = if threshold { most } else { 1 };
    let (class, split_max) = if may == 0 {
        let class = match split {
            0 => DivClass::None,
            s if s == warps => DivClass::Total,
            _ => DivClass::Partial,
        };
        (class, split)
    } else if bounded {
        (DivClass::Bounded, most)
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
                Outcome::Maybe(_) | Outcome::MaybeParts(_) => "maybe",
            })
            .collect(),
        iterations: None,
        idiom: None,
        shape: None,
        threshold,
    }
}

/// The iterations that split the most warps, then the others in order:
/// ` for counter values 1..16, then 4, 2, 1 of 8 (values 32..128)`.
fn per_iteration(t: &Iterations, union: u32, warps: u32) -> String {
    let rows = &t.rows;
    let Some(worst) = rows.iter().map(|r| r.split_min).max() else {
        return String::new();
    };
    let first = rows.iter().position(|r| r.split_min == worst).unwrap_or(0);
    let last = first
        + rows[first..]
            .iter()
            .take_while(|r| r.split_min == worst)
            .count()
        - 1;
    let span = |rs: &[IterationRow]| match rs {
        [one] => one.value.to_string(),
        [a, .., b] => format!("{}..{}", a.value, b.value),
        [] => String::new(),
    };
    let counts = |rs: &[IterationRow]| {
        rs.iter()
            .map(|r| r.split_min.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = if worst == union {
        String::new()
    } else {
        format!(" over the iterations, at most {worst} at once,")
    };
    let head = &rows[first..=last];
    out += &format!(" for {} = {}", t.counter, span(head));
    let before = &rows[..first];
    if !before.is_empty() {
        out += &format!(
            ", after {} of {warps} ({} = {})",
            counts(before),
            t.counter,
            span(before)
        );
    }
    let after = &rows[last + 1..];
    if !after.is_empty() {
        out += &format!(
            ", then {} of {warps} ({} = {})",
            counts(after),
            t.counter,
            span(after)
        );
    }
    out
}

/// The advice for a branch that is no known idiom.
const GENERIC_HINT: &str = "make the condition uniform per warp (e.g. test threadIdx.x / 32), or compute both sides and pick with min/max or a select";

/// What an idiom's finding says: what the branch is for, then the warps.
fn idiom_message(i: Idiom, d: &Divergence) -> String {
    let warps = format!("{} of {} warps split", d.split_min, d.warps);
    match i {
        Idiom::LeaderLane => {
            format!("leader-lane guard: one lane per warp runs this side for its warp ({warps})")
        }
        Idiom::LeaderThread => {
            format!("single-thread guard: one thread of the block runs this side ({warps})")
        }
        Idiom::Halo => format!(
            "halo load: the threads at the edge of each row load the tile's border ({warps})"
        ),
        Idiom::BoundsCheck => format!("bounds check: {warps}"),
    }
}

/// The advice for an idiom: what it costs, and when it is worth changing.
fn idiom_hint(i: Idiom) -> &'static str {
    match i {
        Idiom::LeaderLane | Idiom::LeaderThread => {
            "a leader doing the store, atomic or shuffle for the others is the usual idiom: it costs only the instructions the one lane runs; keep the guarded code short"
        }
        Idiom::Halo => {
            "halo loads split only the warps at a tile's edge and cost the loads the edge lanes run; if that matters, let one whole warp load the halo"
        }
        Idiom::BoundsCheck => {
            "a bounds check splits at most the last warp of the range; nothing to change"
        }
    }
}

pub struct DivergentBranch;

impl Check for DivergentBranch {
    const KIND: Kind = Kind {
        name: "divergent-branch",
        summary: "a branch splits the warps of a block (how many, from the lanes' arithmetic)",
        explanation: include_str!("divergent_branch.md"),
    };
    /// The single thread-dependence warning this check replaced.
    const RETIRED_NAME: Option<&'static str> = Some("thread-dependent-branch");
    type Figure = Divergence;

    /// Every branch, uniform ones too (their warps never split).
    fn applies(s: &Site) -> bool {
        s.kind == SiteKind::Branch
    }

    fn measure(m: &Module, k: &KernelAnalysis, s: &Site) -> Divergence {
        divergence(m, k, s)
    }

    fn measure_in(a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &Site) -> Divergence {
        let d = divergence(a.module, k, s);
        let split = match d.class {
            DivClass::Total | DivClass::Partial => idioms::Split::Known,
            DivClass::Bounded if d.threshold => idioms::Split::Bounded,
            DivClass::Bounded | DivClass::None | DivClass::Unknown => idioms::Split::Other,
        };
        let shape = (s.thread_dependent && d.split_max > 0)
            .then(|| shape::of(a.module, k, s, &d))
            .flatten();
        Divergence {
            idiom: s
                .thread_dependent
                .then(|| idioms::of_branch(a, k, s, split))
                .flatten(),
            shape,
            ..d
        }
    }

    fn judge(_s: &Site, d: &Divergence) -> Option<Verdict> {
        let (severity, message) = match d.class {
            DivClass::Total | DivClass::Partial => (
                Severity::Warning,
                format!(
                    "branch diverges in {} of {} warps{}{}; lanes of a warp take different paths",
                    d.split_min,
                    d.warps,
                    if d.class == DivClass::Total { " (every warp)" } else { "" },
                    d.iterations
                        .as_ref()
                        .map_or(String::new(), |t| per_iteration(t, d.split_min, d.warps)),
                ),
            ),
            DivClass::Bounded if d.threshold => (
                Severity::Note,
                format!(
                    "bounds-style branch: at most {} of {} warps per block can diverge here",
                    d.split_max, d.warps
                ),
            ),
            DivClass::Bounded => (
                Severity::Note,
                format!(
                    "at most 1 of {} warps per block can diverge here (warp {} only; whether it does depends on data or values unknown here)",
                    d.warps,
                    d.by_warp.iter().position(|w| *w == "maybe").unwrap_or(0)
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
        let counter = d.iterations.as_ref().map_or("the counter", |t| &t.counter);
        let (message, hint) = match (d.idiom, d.shape) {
            (None, Some(sh)) => (message, sh.hint(counter)),
            (None, None) => (message, GENERIC_HINT.to_string()),
            // The bounded class's message already says it.
            (Some(i @ Idiom::BoundsCheck), _) => (message, idiom_hint(i).to_string()),
            (Some(i), _) => (idiom_message(i, d), idiom_hint(i).to_string()),
        };
        Some(Verdict {
            severity,
            message,
            hint: Some(hint),
        })
    }

    /// Warps that certainly split first, then those that may.
    fn rank(d: &Divergence) -> i64 {
        i64::from(d.split_min) * 1000 + i64::from(d.split_max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_as_the_source_does() {
        assert_eq!(source_name("%k.027"), "k");
        assert_eq!(source_name("%stride"), "stride");
        assert_eq!(source_name("%184 (phi)"), "the counter");
    }

    #[test]
    fn per_iteration_messages() {
        let row = |value, n| IterationRow {
            value,
            split_min: n,
            split_max: n,
        };
        let t = Iterations {
            counter: "s".into(),
            certain: true,
            rows: vec![row(1, 8), row(2, 8), row(4, 4), row(8, 2)],
        };
        assert_eq!(
            per_iteration(&t, 8, 8),
            " for s = 1..2, then 4, 2 of 8 (s = 4..8)"
        );
        // Different warps at different iterations: the union is larger.
        let t = Iterations {
            rows: vec![row(0, 0), row(1, 1), row(2, 1)],
            ..t
        };
        assert_eq!(
            per_iteration(&t, 2, 8),
            " over the iterations, at most 1 at once, for s = 1..2, after 0 of 8 (s = 0)"
        );
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
        // Two warps that may split, for reasons unknown: either, both, none.
        assert_eq!(
            classify(&[Maybe(None), Maybe(None), Uniform]).class,
            DivClass::Unknown
        );
        // Only one can: at most one splits, though not by a threshold.
        let d = classify(&[Maybe(None), Uniform]);
        assert_eq!(
            (d.class, d.split_max, d.threshold),
            (DivClass::Bounded, 1, false)
        );
        let d = classify(&[Maybe(Some(vec![(1, 31)])), Maybe(Some(vec![(33, 63)]))]);
        assert_eq!(
            (d.class, d.split_max, d.threshold),
            (DivClass::Bounded, 1, true)
        );
        // `lo <= t && t <= hi` over 8 warps: each end splits at most one.
        let d = classify(&vec![MaybeParts(2); 8]);
        assert_eq!(
            (d.class, d.split_max, d.threshold),
            (DivClass::Bounded, 2, true)
        );
        // With two warps, two ends bound nothing.
        assert_eq!(classify(&vec![MaybeParts(2); 2]).class, DivClass::Unknown);
    }
}
