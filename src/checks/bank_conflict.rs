#![doc = include_str!("bank_conflict.md")]

mod padding;
pub mod remedy;

use super::addresses::{self, ceil_div, WarpAddresses};
use super::fix::{Fix, SourceReader};
use super::{Check, Figure, Verdict};
use crate::acf::expr::{Atom, Congruence, Uniform};
use crate::acf::lanes::{Column, LANES};
use crate::analysis::{KernelAnalysis, Site};
use crate::finding::{Finding, Kind, Severity};
use crate::hw;
use crate::ir::{Module, SiteKind};
use crate::memory::lower::{Repeat, Whole};
use crate::memory::Space;
use serde::Serialize;

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictClass {
    None,
    Conflict,
    Unknown,
}

impl ConflictClass {
    pub fn name(self) -> &'static str {
        match self {
            ConflictClass::None => "none",
            ConflictClass::Conflict => "conflict",
            ConflictClass::Unknown => "unknown",
        }
    }
}

pub use super::figures::MinMax;

/// The bank-conflict degree of one shared access.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Conflict {
    /// Degree (1 = conflict-free) over every execution the lanes allow.
    pub min: u64,
    pub max: u64,
    pub class: ConflictClass,
    /// With the most lanes active, over the base alignments.
    pub full_min: u64,
    pub full_max: u64,
    pub wavefronts: MinMax,
    pub ideal_wavefronts: u64,
    /// The most wavefronts one warp's request takes past its ideal (one per
    /// phase with an active lane), over the warps: what the simulator
    /// counts as conflicts, and what the cost stage charges. Fewer lanes
    /// never take more, so the warps' `may` lanes bound it.
    #[serde(skip)]
    pub excess: u64,
    /// In a loop whose counter the launch fixes: the degrees on each
    /// iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<Iterations>,
    /// An atomic's contention: the most lanes of a request that update one
    /// address (they serialise), over every execution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contention: Option<MinMax>,
    /// A change checked to make the access better ([`remedy`]): what the
    /// hint advises.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remedy: Option<remedy::Remedy>,
}

/// An access's degrees per value of its loop's counter.
pub type Iterations = super::figures::Iterations<IterationRow>;

/// One iteration: the counter's value and the degrees then, over the
/// warps of the block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IterationRow {
    pub value: i64,
    pub min: u64,
    pub max: u64,
    pub class: ConflictClass,
    /// [`Conflict::excess`] on this iteration (the cost stage sums them).
    #[serde(skip)]
    pub excess: u64,
    /// The most wavefronts a request takes on this iteration (the time
    /// bounds' shared-memory traffic sums them).
    #[serde(skip)]
    pub wavefronts: u64,
}

impl Figure for Conflict {
    const KEY: &'static str = "conflict";
}

const WORD: i128 = hw::BANK_WIDTH_BYTES as i128;
const BANKS: i128 = hw::SHARED_BANKS as i128;
/// Addresses repeat their bank pattern every 128 bytes.
const ROW: i128 = WORD * BANKS;

/// Lanes per phase for an access of `bytes` per lane.
pub fn phase_lanes(bytes: u64) -> usize {
    match bytes {
        0..=4 => LANES,
        5..=8 => LANES / 2,
        _ => LANES / 4,
    }
}

/// `(degree, wavefronts, ideal wavefronts)` of the lanes of `mask` at
/// `base + d[l]`, `bytes` each.
pub fn degree(d: &Column, mask: u32, base: i128, bytes: u64) -> (u64, u64, u64) {
    degree_of(d, mask, base, bytes, false)
}

/// [`degree`]; for an atomic (`serialise`) every lane's word counts, so
/// lanes on one word (a broadcast for a load) take a wavefront each.
pub fn degree_of(
    d: &Column,
    mask: u32,
    base: i128,
    bytes: u64,
    serialise: bool,
) -> (u64, u64, u64) {
    let per = phase_lanes(bytes);
    let (mut worst, mut waves, mut ideal) = (0u64, 0u64, 0u64);
    for phase in 0..LANES / per {
        let phase_mask = (((1u64 << per) - 1) << (phase * per)) as u32 & mask;
        if phase_mask == 0 {
            continue;
        }
        let mut per_bank = [0u64; BANKS as usize];
        if serialise {
            for l in crate::acf::lanes::lanes(phase_mask) {
                for w in addresses::pieces(d, 1 << l, base, bytes as i128, WORD) {
                    per_bank[w.rem_euclid(BANKS as i64) as usize] += 1;
                }
            }
        } else {
            for w in addresses::pieces(d, phase_mask, base, bytes as i128, WORD) {
                per_bank[w.rem_euclid(BANKS as i64) as usize] += 1;
            }
        }
        let deg = per_bank.iter().copied().max().unwrap_or(1).max(1);
        worst = worst.max(deg);
        waves += deg;
        ideal += 1;
    }
    (worst.max(1), waves, ideal)
}

/// A warp's lanes as the degrees see them: active lanes (may, must),
/// offsets, and the base's possible residues in a row of banks.
type WarpKey = (u32, u32, Column, Vec<i128>);

/// One warp's degrees over the base's residues.
#[derive(Copy, Clone)]
struct WarpDegrees {
    fmin: u64,
    fmax: u64,
    /// Fewest over every execution (lanes of `must` only).
    partial: u64,
    waves_min: u64,
    waves_max: u64,
    ideal: u64,
}

/// The residues of the base in a row of banks. Moving every lane by a
/// whole word turns the banks round: the degrees stay, so only sub-word
/// alignments can differ.
fn bank_residues(base: &Congruence) -> Vec<i128> {
    let step = crate::acf::expr::gcd(base.modulus, ROW);
    if base.modulus != 0 && step % WORD == 0 {
        // Whole words apart: the first stands for all.
        return vec![base.residue.rem_euclid(step)];
    }
    WarpAddresses::residues(*base, ROW)
}

fn warp_degrees(
    d: &Column,
    (may, must): (u32, u32),
    residues: &[i128],
    bytes: u64,
    serialise: bool,
) -> WarpDegrees {
    let degree = |d: &Column, mask, r, bytes| degree_of(d, mask, r, bytes, serialise);
    let full: Vec<(u64, u64, u64)> = residues.iter().map(|&r| degree(d, may, r, bytes)).collect();
    let fmin = full.iter().map(|x| x.0).min().unwrap();
    let partial = if must == may {
        fmin
    } else if must != 0 {
        residues
            .iter()
            .map(|&r| degree(d, must, r, bytes).0)
            .min()
            .unwrap()
    } else {
        1
    };
    WarpDegrees {
        fmin,
        fmax: full.iter().map(|x| x.0).max().unwrap(),
        partial,
        waves_min: full.iter().map(|x| x.1).min().unwrap(),
        waves_max: full.iter().map(|x| x.1).max().unwrap(),
        ideal: full[0].2,
    }
}

/// The conflicts of the shared access `site`: over every iteration, and
/// per iteration when its loop is swept.
fn conflict(m: &Module, k: &KernelAnalysis, site: &Site) -> Conflict {
    let bytes = site.bytes.max(1);
    // An atomic serialises on one word: no array bounds its lanes' overlap.
    let serialise = site.kind == SiteKind::Atomic;
    let words = object_words(m, k, site).filter(|_| !serialise);
    let conflict_over = |items, bytes| conflict_over(items, bytes, words, serialise);
    let plain = conflict_over(addresses::per_warp(m, k, site), bytes);
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    let &[c] = acf.contexts(site.func) else {
        return plain;
    };
    let (Some(ladder), Some(its)) = (
        acf.ladder(c, block),
        addresses::per_iteration(acf, site, c, block),
    ) else {
        return plain;
    };
    // The figures over every iteration, unless the whole loop decides a
    // class (it holds with the most lanes active) that they do not: then
    // that class, with the degrees no iteration exceeds.
    let swept = conflict_over(addresses::per_warp_swept(m, k, site), bytes);
    let all = if swept.class == ConflictClass::Unknown && plain.class != ConflictClass::Unknown {
        narrowed(plain, &swept)
    } else {
        swept
    };
    let rows = ladder
        .values
        .iter()
        .zip(its)
        .map(|(&value, items)| {
            let x = conflict_over(items, bytes);
            IterationRow {
                value: value as i64,
                min: x.min,
                max: x.max,
                class: x.class,
                excess: x.excess,
                wavefronts: x.wavefronts.max,
            }
        })
        .collect();
    let counter = m.counter_label(m.func(site.func), ladder.phi);
    Conflict {
        iterations: Some(Iterations {
            counter: super::divergent_branch::source_name(&counter),
            certain: ladder.certain,
            rows,
        }),
        ..all
    }
}

/// `plain` (the loop's counter unknown) within the bounds of `swept`
/// (each of its values): both hold of every execution, so their
/// intersection does. A guard on the counter (`tx <= m` for `m < 16`)
/// admits fewer lanes on every iteration than an unknown `m` would: nw's
/// `temp[m - tx + 1][tx + 1]` is 8-way at worst, not the 16-way of 32
/// lanes.
fn narrowed(plain: Conflict, swept: &Conflict) -> Conflict {
    let max = plain.max.min(swept.max).max(1);
    let full_max = plain.full_max.min(swept.full_max).max(1);
    let waves_max = plain.wavefronts.max.min(swept.wavefronts.max);
    Conflict {
        min: plain.min.max(swept.min).min(max),
        max,
        class: if full_max == 1 {
            ConflictClass::None
        } else {
            plain.class
        },
        full_min: plain.full_min.min(full_max),
        full_max,
        excess: plain.excess.min(swept.excess),
        wavefronts: MinMax {
            min: plain
                .wavefronts
                .min
                .max(swept.wavefronts.min)
                .min(waves_max),
            max: waves_max,
        },
        ..plain
    }
}

/// The 4-byte words of the `__shared__` array the site's address points
/// into, when it is one array of known size (`s[f(x)]` with `s` a sized
/// `__shared__` array): every lane's word is one of them, so however the
/// index falls, a bank holds at most `⌈words/32⌉` of them
/// (`s_hist[data % 256]` over 256 words: 8-way at worst, not 32). An access
/// outside the array is a fault the simulator reports, not a cost.
fn object_words(m: &Module, k: &KernelAnalysis, site: &Site) -> Option<u64> {
    let acf = &k.acf;
    let &c = acf.contexts(site.func).first()?;
    let p = acf.arena.poly(acf.expr(c, site.value)?);
    let mut globals = p.terms.iter().filter_map(|(mono, coeff)| {
        let &[a] = mono.as_slice() else {
            return None;
        };
        match acf.arena.atom(a) {
            Atom::Uniform(Uniform::Global(g)) => Some((*g, *coeff)),
            _ => None,
        }
    });
    let (g, coeff) = globals.next()?;
    if coeff != 1 || globals.next().is_some() {
        return None;
    }
    let global = m.global(g);
    let ty = m.types.get(global.value_ty);
    if Space::from_addrspace(global.addrspace) != Some(Space::Shared) || ty.size == 0 {
        return None;
    }
    // Word-aligned arrays start a word; others may straddle one more.
    let extra = u64::from(!ty.align.is_multiple_of(hw::BANK_WIDTH_BYTES));
    Some(ty.size.div_ceil(hw::BANK_WIDTH_BYTES) + extra)
}

/// The conflicts over the warp addresses `items` (warps, iterations), of
/// an access into an array of `words` words when that is known.
fn conflict_over(
    items: Vec<WarpAddresses>,
    bytes: u64,
    words: Option<u64>,
    serialise: bool,
) -> Conflict {
    let (mut lo, mut hi, mut full_lo, mut full_hi) = (u64::MAX, 0, u64::MAX, 0);
    let (mut wlo, mut whi, mut ideal, mut excess) = (u64::MAX, 0, 0, 0);
    let contention = serialise.then(|| addresses::contention(&items));
    let mut classes = Vec::new();
    let mut seen: Vec<(WarpKey, WarpDegrees)> = Vec::new();
    for wa in items {
        match wa {
            WarpAddresses::Idle => {}
            WarpAddresses::Unknown { may, .. } => {
                let per = phase_lanes(bytes);
                let words_per_lane = ceil_div(bytes as i128, WORD).max(1) as u64;
                let in_array = words.map_or(u64::MAX, |w| w.div_ceil(hw::SHARED_BANKS));
                let worst = (per.min(may.count_ones() as usize) as u64 * words_per_lane)
                    .min(32)
                    .min(in_array)
                    .max(1);
                let phases = (0..LANES / per)
                    .filter(|p| (((1u64 << per) - 1) << (p * per)) as u32 & may != 0)
                    .count() as u64;
                lo = lo.min(1);
                full_lo = full_lo.min(1);
                hi = hi.max(worst);
                full_hi = full_hi.max(worst);
                wlo = wlo.min(1);
                whi = whi.max(worst * phases);
                ideal = ideal.max(phases);
                excess = excess.max((worst - 1) * phases);
                // At most one lane's words in a phase cannot conflict.
                let c = if worst <= 1 {
                    ConflictClass::None
                } else {
                    ConflictClass::Unknown
                };
                classes.push((c, may.count_ones()));
            }
            WarpAddresses::Offsets {
                may, must, d, base, ..
            } => {
                // Warps whose lanes sit alike (the same offsets from their
                // first active lane, whose address has the same residues)
                // have the same degrees: worked out once per site. Warp w
                // of `s[tid]` is warp 0 moved by 128·w bytes.
                let shift = d[may.trailing_zeros() as usize];
                let residues = bank_residues(&Congruence::new(base.modulus, base.residue + shift));
                let key = (may, must, d.map(|x| x - shift), residues);
                let w = match seen.iter().find(|(k, _)| *k == key) {
                    Some(&(_, w)) => w,
                    None => {
                        let w = warp_degrees(&key.2, (may, must), &key.3, bytes, serialise);
                        seen.push((key, w));
                        w
                    }
                };
                let (fmin, fmax, partial) = (w.fmin, w.fmax, w.partial);
                let one_lane_waves = if must == 0 { 1 } else { u64::MAX };
                lo = lo.min(partial);
                hi = hi.max(fmax);
                full_lo = full_lo.min(fmin);
                full_hi = full_hi.max(fmax);
                wlo = wlo.min(w.waves_min).min(one_lane_waves);
                whi = whi.max(w.waves_max);
                ideal = ideal.max(w.ideal);
                excess = excess.max(w.waves_max.saturating_sub(w.ideal));
                let c = if fmax == 1 {
                    ConflictClass::None
                } else if fmin > 1 {
                    ConflictClass::Conflict
                } else {
                    ConflictClass::Unknown
                };
                classes.push((c, may.count_ones()));
            }
        }
    }
    // No warp can run it at this shape: no request, no conflict.
    use ConflictClass::{Conflict as Worse, None as Fine, Unknown};
    let class = super::figures::site_class(&classes, [Fine, Worse, Unknown, Fine]);
    if lo == u64::MAX {
        (lo, full_lo, wlo) = (1, 1, 0);
    }
    Conflict {
        min: lo,
        max: hi.max(1),
        class,
        full_min: full_lo,
        full_max: full_hi.max(1),
        wavefronts: MinMax { min: wlo, max: whi },
        ideal_wavefronts: ideal,
        excess,
        iterations: None,
        contention: contention.map(|(min, max)| MinMax { min, max }),
        remedy: None,
    }
}

/// The worst iterations, when some conflict whenever they run: `for k = 4..16
/// (2, 4, 8, 8, 8, 4, 2, 1-way for k = 1..128)`.
fn worst_iterations(t: &Iterations) -> Option<(u64, String)> {
    // A row's class holds whenever the access runs on that iteration.
    let sure = |r: &IterationRow| r.class == ConflictClass::Conflict;
    let worst = t.rows.iter().filter(|r| sure(r)).map(|r| r.max).max()?;
    let at: Vec<i64> = t
        .rows
        .iter()
        .filter(|r| sure(r) && r.max == worst)
        .map(|r| r.value)
        .collect();
    let span = |v: &[i64]| match v {
        [one] => one.to_string(),
        [a, .., b] => format!("{a}..{b}"),
        [] => String::new(),
    };
    let all: Vec<i64> = t.rows.iter().map(|r| r.value).collect();
    let each: Vec<String> = t
        .rows
        .iter()
        .map(|r| {
            if r.min == r.max {
                r.max.to_string()
            } else {
                format!("{}..{}", r.min, r.max)
            }
        })
        .collect();
    Some((
        worst,
        format!(
            " for {c} = {} ({}-way for {c} = {})",
            span(&at),
            each.join(", "),
            span(&all),
            c = t.counter
        ),
    ))
}

/// A shared atomic whose lanes may update one address: they serialise.
fn contention_verdict(c: &Conflict) -> Option<Verdict> {
    let most = c.contention.as_ref()?;
    if most.max <= 1 {
        return None;
    }
    let hint = "give each lane (or warp) its own copy and combine them once (privatisation), or reduce within the warp first (__reduce_add_sync, shuffles) so one lane updates";
    let (severity, message) = match c.class {
        ConflictClass::Conflict if most.min == most.max && most.max == c.full_max => (
            Severity::Warning,
            format!(
                "shared atomic: contention: {} lanes update one address, {} wavefronts per request (ideal {})",
                most.max, c.wavefronts.max, c.ideal_wavefronts
            ),
        ),
        ConflictClass::Conflict => (
            Severity::Warning,
            format!(
                "shared atomic: contention: up to {} lanes update one address ({}-way with the bank conflicts, {} wavefronts per request, ideal {})",
                most.max, c.full_max, c.wavefronts.max, c.ideal_wavefronts
            ),
        ),
        ConflictClass::None => return None,
        ConflictClass::Unknown => (
            Severity::Note,
            format!(
                "shared atomic: contention: up to {} lanes update one address, depending on values unknown here ({} to {} ways)",
                most.max, c.min, c.max
            ),
        ),
    };
    Some(Verdict {
        severity,
        message,
        hint: Some(hint.to_string()),
    })
}

/// The figure of `s`: one request, or a copy loop's requests together.
fn measure_conflict(m: &Module, k: &KernelAnalysis, s: &Site) -> Conflict {
    let Some(bytes) = addresses::loop_sites(s, ROW as u64) else {
        return conflict(m, k, s);
    };
    // A copy loop: every byte's request (a row of banks repeats).
    let mut all = bytes.iter().map(|b| conflict(m, k, b));
    let first = all.next().expect("a copy loop has a byte");
    let mut c = all.fold(first, |a, b| Conflict {
        min: a.min.min(b.min),
        max: a.max.max(b.max),
        class: if a.class == b.class {
            a.class
        } else {
            ConflictClass::Unknown
        },
        full_min: a.full_min.min(b.full_min),
        full_max: a.full_max.max(b.full_max),
        wavefronts: MinMax {
            min: a.wavefronts.min.min(b.wavefronts.min),
            max: a.wavefronts.max.max(b.wavefronts.max),
        },
        ideal_wavefronts: a.ideal_wavefronts.max(b.ideal_wavefronts),
        excess: a.excess.max(b.excess),
        iterations: None,
        contention: a.contention.or(b.contention),
        remedy: None,
    });
    if s.repeat == Repeat::PerLane {
        (c.min, c.wavefronts.min) = (1, c.wavefronts.min.min(1));
    }
    c
}

pub struct BankConflict;

impl Check for BankConflict {
    const KIND: Kind = Kind {
        name: "bank-conflict",
        summary: "a shared-memory access makes lanes of a warp wait on the same bank",
        explanation: include_str!("bank_conflict.md"),
    };
    type Figure = Conflict;
    const GROUPED: bool = true;

    /// Padding the rows of a shared array by one element ([`padding`]).
    fn fix(m: &Module, f: &Finding, source: SourceReader<'_>) -> Option<Fix> {
        padding::fix(m, f, source)
    }

    /// Thread-dependent shared accesses: lanes at one address share a
    /// word (a broadcast), never a conflict. And every shared atomic: its
    /// lanes at one address serialise.
    fn applies(s: &Site) -> bool {
        s.kind != SiteKind::Branch
            && s.space == Some(Space::Shared)
            && (s.thread_dependent || s.kind == SiteKind::Atomic)
    }

    fn measure(m: &Module, k: &KernelAnalysis, s: &Site) -> Conflict {
        let c = measure_conflict(m, k, s);
        Conflict {
            remedy: remedy::remedy(m, k, s, &c),
            ..c
        }
    }

    fn judge(s: &Site, c: &Conflict) -> Option<Verdict> {
        if let Some(v) = contention_verdict(c) {
            return Some(v);
        }
        // A struct copied or filled in pieces: name the copy.
        if let (Some(of), ConflictClass::Conflict) = (s.piece, c.class) {
            if of.whole != Whole::Value && s.repeat == Repeat::Once {
                return Some(Verdict {
                    severity: Severity::Warning,
                    message: format!(
                        "struct {} of {} bytes as {} × {}-byte accesses: {}-way bank conflict, {} wavefronts per request (ideal {})",
                        if of.whole == Whole::Fill { "fill" } else { "copy" },
                        of.bytes,
                        of.count,
                        s.bytes,
                        c.full_max,
                        c.wavefronts.max,
                        c.ideal_wavefronts
                    ),
                    hint: Some(
                        super::uncoalesced_access::copy_hint(of.bytes, s.bytes, s.repeat).into(),
                    ),
                });
            }
        }
        let (severity, message) = match c.class {
            // A loop whose counter the launch fixes: its worst iterations.
            ConflictClass::Conflict | ConflictClass::Unknown
                if c.iterations.as_ref().and_then(worst_iterations).is_some() =>
            {
                let (worst, at) = c.iterations.as_ref().and_then(worst_iterations).unwrap();
                (
                    Severity::Warning,
                    format!(
                        "up to {worst}-way bank conflict on a shared {}{at}",
                        s.kind.name()
                    ),
                )
            }
            ConflictClass::Conflict => (
                Severity::Warning,
                format!(
                    "{}-way bank conflict on a shared {}: {} wavefronts per request (ideal {})",
                    c.full_max,
                    s.kind.name(),
                    c.wavefronts.max,
                    c.ideal_wavefronts
                ),
            ),
            ConflictClass::None => return None,
            ConflictClass::Unknown => (
                Severity::Note,
                format!(
                    "shared {}: bank conflicts of {} to {} ways, depending on values unknown here",
                    s.kind.name(),
                    c.min,
                    c.max
                ),
            ),
        };
        Some(Verdict {
            severity,
            message,
            hint: Some(
                c.remedy
                    .as_ref()
                    .map_or_else(|| remedy::GENERAL_HINT.to_string(), remedy::Remedy::hint),
            ),
        })
    }

    /// The worst degree with the most lanes active.
    fn rank(c: &Conflict) -> i64 {
        c.full_max as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(f: impl Fn(i128) -> i128) -> Column {
        std::array::from_fn(|l| f(l as i128))
    }

    #[test]
    fn degrees_by_hand() {
        // s[t]: 32 words, 32 banks. s[2t]: banks 0,2,..,30 hold 2 words.
        assert_eq!(degree(&col(|t| 4 * t), u32::MAX, 0, 4).0, 1);
        assert_eq!(degree(&col(|t| 8 * t), u32::MAX, 0, 4).0, 2);
        // s[4t]: 8 banks, 4 words each; s[32t]: one bank, 32 words.
        assert_eq!(degree(&col(|t| 16 * t), u32::MAX, 0, 4).0, 4);
        assert_eq!(degree(&col(|t| 128 * t), u32::MAX, 0, 4).0, 32);
        // s[33t] and s[t/2] (pairs of lanes share a word: broadcast).
        assert_eq!(degree(&col(|t| 132 * t), u32::MAX, 0, 4).0, 1);
        assert_eq!(degree(&col(|t| 4 * (t / 2)), u32::MAX, 0, 4).0, 1);
        // double s[t]: two phases of 16 lanes x 2 words, conflict-free.
        assert_eq!(degree(&col(|t| 8 * t), u32::MAX, 0, 8), (1, 2, 2));
        // float4 s[t]: four phases of 8 lanes x 4 words.
        assert_eq!(degree(&col(|t| 16 * t), u32::MAX, 0, 16), (1, 4, 4));
    }
}
