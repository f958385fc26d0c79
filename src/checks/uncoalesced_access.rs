#![doc = include_str!("uncoalesced_access.md")]

mod advice;

use super::addresses::{self, ceil_div, distinct_bytes, pieces, WarpAddresses};
use super::{Check, Figure, Verdict};
use crate::acf::expr::{Atom, AtomId, Congruence, Pointer, Uniform};
use crate::acf::lanes::Column;
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::dataflow::FastMap as HashMap;
use crate::finding::{Kind, Severity};
use crate::hw;
use crate::ir::{Module, SiteKind};
use crate::memory::lower::{Repeat, Whole};
use crate::memory::Space;
pub use advice::Advice;
use serde::Serialize;

#[derive(Copy, Clone, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SectorClass {
    Coalesced,
    Uncoalesced,
    Unknown,
}

impl SectorClass {
    pub fn name(self) -> &'static str {
        match self {
            SectorClass::Coalesced => "coalesced",
            SectorClass::Uncoalesced => "uncoalesced",
            SectorClass::Unknown => "unknown",
        }
    }
}

/// An access's sectors per value of its loop's counter (a loop whose
/// counter the launch fixes, as for branches and bank conflicts).
pub type SectorIterations = super::figures::Iterations<SectorRow>;

/// One iteration: the counter's value and the sectors per request then,
/// over the warps of the block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SectorRow {
    pub value: i64,
    pub min: u64,
    pub max: u64,
    pub ideal: u64,
    pub class: SectorClass,
}

/// Sectors per request of one global access.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sectors {
    /// Over every execution the lanes allow.
    pub min: u64,
    pub max: u64,
    /// The same bytes contiguous and aligned, with the most lanes active.
    pub ideal: u64,
    pub class: SectorClass,
    /// With the most lanes active: the range over the base alignments.
    pub full_min: u64,
    pub full_max: u64,
    /// Bytes between neighbouring lanes along `dim`, when constant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dim: Option<&'static str>,
    /// The stride is a struct size other than 1, 2, 4, 8 or 16 bytes.
    pub type_inconsistent: bool,
    /// The excess comes only from lanes a branch leaves inactive: with
    /// every lane of the warp active the access would be coalesced.
    pub sparse: bool,
    /// In a loop whose counter the launch fixes: the sectors on each
    /// iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<SectorIterations>,
    /// The class holds only for values of a kernel parameter from some
    /// value on; `min`, `full_min` and `ideal` are over those values,
    /// `max` and `full_max` over every value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
    /// An atomic's contention: the most lanes of a request that update one
    /// address (the L2 serialises them), over every execution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contention: Option<super::figures::MinMax>,
    /// A change worked out for this access ([`advice`]): what the hint
    /// advises.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<Advice>,
    /// Accesses of the same warp and iteration at a constant distance
    /// (the other fields of a struct) and what they fetch together; set
    /// for the whole kernel at once, after every site is measured
    /// ([`attach_siblings`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub siblings: Option<super::siblings::Siblings>,
}

/// The parameter a class depends on and the values it holds for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Condition {
    /// The kernel parameter (its name in the source, else `argN`).
    pub param: String,
    #[serde(skip)]
    pub atom: AtomId,
    /// The class holds for every value `≥ from` (not for `from - 1`,
    /// unless `from` is 1).
    pub from: i64,
    /// From this value on the sectors per request are `steady_min ..=
    /// steady_max`.
    pub steady_from: i64,
    pub steady_min: u64,
    pub steady_max: u64,
    /// Bytes between neighbouring lanes per unit of the parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stride: Option<i64>,
}

impl Figure for Sectors {
    const KEY: &'static str = "sectors";
}

const SECTOR: i128 = hw::SECTOR_BYTES as i128;

/// The most sectors one warp's request of `site` can touch when its
/// address is `U + Σ c·tid.d + Σ S·tid.d'` with `U` and the `S` uniform but
/// unknown (a row stride `wA·tid.y`): the lanes that agree on the
/// dimensions with a symbolic stride form a group at known offsets from
/// its own unknown base, so the request touches at most the sum over the
/// groups of their sectors at the worst alignment (two rows of 16 floats
/// in a 16 × 16 block: 3 + 3, not 32). `None` when the address has any
/// other per-lane part (a load, a product of thread indices).
fn row_groups_cap(k: &KernelAnalysis, site: &Site, bytes: i128) -> Option<u64> {
    use crate::acf::expr::Atom;
    let acf = &k.acf;
    let &c = acf.contexts(site.func).first()?;
    let p = acf.arena.poly(acf.expr(c, site.value)?);
    let (mut known, mut grouped) = ([0i128; 3], [false; 3]);
    for (mono, coeff) in &p.terms {
        let thread: Vec<_> = mono
            .iter()
            .filter(|&&a| acf.arena.facts(a).thread)
            .collect();
        let dim = match thread.as_slice() {
            [] => continue,
            [&a] => match acf.arena.atom(a) {
                Atom::Tid(d) => d.index(),
                _ => return None,
            },
            _ => return None,
        };
        if mono.len() == 1 {
            known[dim] += coeff;
        } else {
            grouped[dim] = true;
        }
    }
    // The alignment the access promises, for the groups' unknown bases.
    let align = i128::from(site.align).clamp(1, SECTOR);
    let mut worst = 0u64;
    for w in &acf.warps {
        let mut groups: Vec<([u32; 3], Vec<i128>)> = Vec::new();
        for l in (0..hw::WARP_SIZE as usize).filter(|&l| w.exists >> l & 1 == 1) {
            let t = w.tid[l];
            let key = std::array::from_fn(|d| if grouped[d] { t[d] } else { 0 });
            let off = (0..3).map(|d| known[d] * i128::from(t[d])).sum();
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(off),
                None => groups.push((key, vec![off])),
            }
        }
        let mut total = 0u64;
        for (_, offs) in &groups {
            let mut d: Column = [0; 32];
            for (i, &o) in offs.iter().enumerate() {
                d[i] = o;
            }
            let mask = if offs.len() >= 32 {
                u32::MAX
            } else {
                (1u32 << offs.len()) - 1
            };
            // Each lane's address is a multiple of `align`, so the group's
            // base is one of gcd(align, offsets).
            let step = offs
                .iter()
                .fold(align, |g, &o| crate::acf::expr::gcd(g, o.abs()))
                .max(1);
            let most = (0..SECTOR / step)
                .map(|r| pieces(&d, mask, r * step, bytes, SECTOR).len() as u64)
                .max()
                .unwrap_or(0);
            total += most;
        }
        worst = worst.max(total);
    }
    Some(worst)
}

/// The sectors of the global access `site`, and per iteration when its
/// loop is swept.
fn sectors(m: &Module, k: &KernelAnalysis, site: &Site) -> Sectors {
    let plain = sectors_over(m, addresses::per_warp(m, k, site), k, site);
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
    let rows = ladder
        .values
        .iter()
        .zip(its)
        .map(|(&value, items)| {
            let x = sectors_over(m, items, k, site);
            SectorRow {
                value: value as i64,
                min: x.min,
                max: x.max,
                ideal: x.ideal,
                class: x.class,
            }
        })
        .collect();
    let counter = m.value_label(m.func(site.func), crate::ir::Value::Inst(ladder.phi));
    Sectors {
        iterations: Some(SectorIterations {
            counter: super::divergent_branch::source_name(&counter),
            certain: ladder.certain,
            rows,
        }),
        ..plain
    }
}

/// The sectors over the warp addresses `items` (warps, iterations).
fn sectors_over(m: &Module, items: Vec<WarpAddresses>, k: &KernelAnalysis, site: &Site) -> Sectors {
    let bytes = site.bytes.max(1) as i128;
    let contention = (site.kind == SiteKind::Atomic).then(|| {
        let (min, max) = addresses::contention(&items);
        super::figures::MinMax { min, max }
    });
    // The row-group cap of unknown addresses, worked out once if needed.
    let cell = std::cell::OnceCell::new();
    let cap = || *cell.get_or_init(|| row_groups_cap(k, site, bytes));
    let mut sec = sectors_of(&items, bytes, &cap);
    if sec.class == SectorClass::Unknown {
        if let Some(mut p) = parametric(m, k, &items, bytes, &cap) {
            // The most sectors stay those of any value (cost bounds take
            // them, for a parameter they do not know).
            (p.max, p.full_max) = (p.max.max(sec.max), p.full_max.max(sec.full_max));
            sec = p;
        }
    }
    let (stride, dim) = lane_stride(k, site);
    sec.type_inconsistent = stride.is_some_and(|s| {
        let s = s.unsigned_abs();
        s > site.bytes && !matches!(s, 1 | 2 | 4 | 8 | 16) && s < 4096 && s % site.bytes.max(1) == 0
    });
    (sec.stride, sec.dim) = (stride, dim);
    if let (Some(c), Some(d)) = (&mut sec.condition, dim) {
        c.stride = addresses::scaled_stride(&k.acf, site, d, c.atom);
    }
    sec.contention = contention;
    sec
}

/// The sectors of accesses of `bytes` at the addresses `items` (the
/// warps of each context, or of each iteration): the stride is left out.
fn sectors_of(items: &[WarpAddresses], bytes: i128, cap: &dyn Fn() -> Option<u64>) -> Sectors {
    let per_lane = (ceil_div(bytes, SECTOR)).max(1) as u64;
    let (mut lo, mut hi, mut ideal) = (u64::MAX, 0u64, 0u64);
    let (mut full_lo, mut full_hi) = (u64::MAX, 0u64);
    let mut classes = Vec::new();
    let mut dense_coalesced = true;
    let mut seen: HashMap<WarpKey, WarpSectors> = HashMap::default();
    for wa in items {
        match wa {
            WarpAddresses::Idle => {}
            WarpAddresses::Unknown { may, scaled } => {
                let n = u64::from(may.count_ones());
                let cap = cap();
                // Lanes placed but for one uniform atom (a row stride):
                // their groups at every alignment the atom allows.
                let grouped = scaled
                    .as_ref()
                    .map_or(u64::MAX, |sc| sc.most_pieces(*may, bytes, SECTOR));
                let most = (n * per_lane).min(cap.unwrap_or(u64::MAX)).min(grouped);
                lo = lo.min(per_lane);
                hi = hi.max(most);
                full_lo = full_lo.min(per_lane);
                full_hi = full_hi.max(most);
                ideal = ideal.max(ceil_div(n as i128 * bytes, SECTOR) as u64);
                classes.push((SectorClass::Unknown, may.count_ones()));
            }
            WarpAddresses::Offsets {
                may,
                must,
                exists,
                d,
                base,
            } => {
                let (may, must, exists, base) = (*may, *must, *exists, *base);
                // Warps whose offsets differ by whole sectors cost the same.
                let shift = d.iter().min().copied().unwrap_or(0).div_euclid(SECTOR) * SECTOR;
                let key: WarpKey = (
                    d.iter().map(|x| x - shift).collect(),
                    [may, must, exists],
                    WarpAddresses::residues(base, SECTOR),
                );
                let w = *seen
                    .entry(key)
                    .or_insert_with(|| warp_sectors(d, [may, must, exists], base, bytes, per_lane));
                let WarpSectors {
                    partial_min,
                    fmin,
                    fmax,
                    id,
                    dense_ok,
                } = w;
                dense_coalesced &= dense_ok;
                lo = lo.min(partial_min);
                hi = hi.max(fmax);
                full_lo = full_lo.min(fmin);
                full_hi = full_hi.max(fmax);
                ideal = ideal.max(id);
                let c = if fmax <= id + 1 {
                    SectorClass::Coalesced
                } else if fmin > id + 1 {
                    SectorClass::Uncoalesced
                } else {
                    SectorClass::Unknown
                };
                classes.push((c, may.count_ones()));
            }
        }
    }
    // No warp can run it at this shape (a copy clang made for iterations
    // the shape never reaches): no request, no excess.
    use SectorClass::{Coalesced, Uncoalesced, Unknown};
    let class = super::figures::site_class(&classes, [Coalesced, Uncoalesced, Unknown, Coalesced]);
    if lo == u64::MAX {
        (lo, full_lo) = (0, 0);
    }
    let sparse = class == SectorClass::Uncoalesced && dense_coalesced;
    Sectors {
        sparse,
        min: lo,
        max: hi,
        ideal,
        class,
        full_min: full_lo,
        full_max: full_hi,
        stride: None,
        dim: None,
        type_inconsistent: false,
        condition: None,
        iterations: None,
        contention: None,
        advice: None,
        siblings: None,
    }
}

/// The most values of a parameter evaluated before its class is known
/// for every larger one.
const PARAM_SPAN: i128 = 512;

/// The sectors of an access whose lanes' offsets are `d[l] + n·c[l]` for
/// an integer kernel parameter `n` (`a[r * n + k]`, `r` from threadIdx),
/// when one class holds for every `n` from some value on.
///
/// Why evaluating finitely many values decides all of them: from the `N`
/// of [`addresses::Scaled::apart_from`] on, lanes with different `c[l]`
/// are a sector and an access apart, so they share no sector; each group
/// of lanes with one `c[l]` then touches as many sectors as its offsets
/// from `base + n·c` do, which depends on `n` only modulo 32 (the sector),
/// and the ideal is the groups' bytes added up, the same for every such
/// `n`. So `N ..= N + 31` stand for every `n ≥ N`; below `N` each value is
/// evaluated, down to the first that differs (or to 1).
fn parametric(
    m: &Module,
    k: &KernelAnalysis,
    items: &[WarpAddresses],
    bytes: i128,
    cap: &dyn Fn() -> Option<u64>,
) -> Option<Sectors> {
    let mut atom = None;
    let mut from_n: i128 = 1;
    for it in items {
        match it {
            WarpAddresses::Unknown { scaled: None, .. } => return None,
            WarpAddresses::Unknown {
                may,
                scaled: Some(sc),
            } => {
                if *atom.get_or_insert(sc.atom) != sc.atom {
                    return None;
                }
                let apart = sc.apart_from(may | sc.exists, SECTOR + bytes)?;
                from_n = from_n.max(apart);
            }
            _ => {}
        }
    }
    let atom = atom?;
    let Atom::Uniform(Uniform::Param(i, Pointer::No)) = *k.acf.arena.atom(atom) else {
        return None;
    };
    if from_n > PARAM_SPAN {
        return None;
    }
    let at = |n: i128| {
        let with: Vec<WarpAddresses> = items.iter().map(|it| it.at(n)).collect();
        sectors_of(&with, bytes, cap)
    };
    let mut steady = at(from_n);
    let class = steady.class;
    if class == SectorClass::Unknown {
        return None;
    }
    for n in from_n + 1..from_n + SECTOR {
        let s = at(n);
        if s.class != class {
            return None;
        }
        steady = merged(steady, &s);
    }
    let (mut all, mut from, mut steady_from) = (steady.clone(), from_n, from_n);
    let mut still_steady = true;
    for n in (1..from_n).rev() {
        let s = at(n);
        if s.class != class {
            break;
        }
        still_steady &= s.full_min >= steady.full_min && s.full_max <= steady.full_max;
        if still_steady {
            steady_from = n;
        }
        all = merged(all, &s);
        from = n;
    }
    let f = m.func(k.kernel);
    let name = f.params[i as usize]
        .name
        .clone()
        .unwrap_or_else(|| format!("arg{i}"));
    all.condition = Some(Condition {
        param: name,
        atom,
        from: from as i64,
        steady_from: steady_from as i64,
        steady_min: steady.full_min,
        steady_max: steady.full_max,
        stride: None,
    });
    Some(all)
}

/// Figures that hold for either of two sets of executions of one class.
fn merged(a: Sectors, b: &Sectors) -> Sectors {
    Sectors {
        min: a.min.min(b.min),
        max: a.max.max(b.max),
        ideal: a.ideal.max(b.ideal),
        full_min: a.full_min.min(b.full_min),
        full_max: a.full_max.max(b.full_max),
        sparse: a.sparse && b.sparse,
        ..a
    }
}

/// A warp's offsets (shifted to the first sector), its lane masks and
/// the base's possible residues: warps with equal keys cost the same.
type WarpKey = (Vec<i128>, [u32; 3], Vec<i128>);

/// One warp's sectors for its lanes' offsets.
#[derive(Copy, Clone)]
struct WarpSectors {
    /// Fewest over every execution.
    partial_min: u64,
    /// With the `may` lanes, over the base alignments.
    fmin: u64,
    fmax: u64,
    /// The ideal for the `may` lanes' bytes.
    id: u64,
    /// With every lane of the warp, at most one over the ideal.
    dense_ok: bool,
}

fn warp_sectors(
    d: &Column,
    [may, must, exists]: [u32; 3],
    base: Congruence,
    bytes: i128,
    per_lane: u64,
) -> WarpSectors {
    let residues = WarpAddresses::residues(base, SECTOR);
    let count = |mask: u32, r: i128| pieces(d, mask, r, bytes, SECTOR).len() as u64;
    let full: Vec<u64> = residues.iter().map(|&r| count(may, r)).collect();
    let (fmin, fmax) = (*full.iter().min().unwrap(), *full.iter().max().unwrap());
    let partial_min = if must == may {
        fmin
    } else if must != 0 {
        residues.iter().map(|&r| count(must, r)).min().unwrap()
    } else {
        per_lane
    };
    let id = ceil_div(distinct_bytes(d, may, bytes), SECTOR) as u64;
    let dense_ideal = ceil_div(distinct_bytes(d, exists, bytes), SECTOR) as u64;
    let dense_ok = residues
        .iter()
        .all(|&r| count(exists, r) <= dense_ideal + 1);
    WarpSectors {
        partial_min,
        fmin,
        fmax,
        id,
        dense_ok,
    }
}

/// The byte step between neighbouring lanes: along x, or along y when x
/// does not move the address.
fn lane_stride(k: &KernelAnalysis, site: &Site) -> (Option<i64>, Option<&'static str>) {
    let s = addresses::strides(&k.acf, site);
    for (i, name) in [(0, "x"), (1, "y"), (2, "z")] {
        match s[i] {
            Some(Some(c)) if c != 0 => return (i64::try_from(c).ok(), Some(name)),
            Some(None) => return (None, Some(name)),
            _ => {}
        }
    }
    (None, None)
}

pub struct UncoalescedAccess;

impl Check for UncoalescedAccess {
    const KIND: Kind = Kind {
        name: "uncoalesced-access",
        summary: "a global access needs more 32-byte sectors per request than its bytes do",
        explanation: include_str!("uncoalesced_access.md"),
    };
    type Figure = Sectors;
    const GROUPED: bool = true;

    /// Thread-dependent global accesses: a uniform address is one request
    /// of the fewest sectors. And every global atomic, for its contention.
    fn applies(s: &Site) -> bool {
        s.kind != SiteKind::Branch
            && s.space == Some(Space::Global)
            && (s.thread_dependent || s.kind == SiteKind::Atomic)
    }

    fn measure(m: &Module, k: &KernelAnalysis, s: &Site) -> Sectors {
        let Some(bytes) = addresses::loop_sites(s, hw::SECTOR_BYTES) else {
            return sectors(m, k, s);
        };
        // A copy loop: every byte's request. Lanes whose own length ends
        // drop out of a run-time-length loop, down to one.
        let mut all = bytes.iter().map(|b| sectors(m, k, b));
        let first = all.next().expect("a copy loop has a byte");
        let mut sec = all.fold(first, |a, b| Sectors {
            class: if a.class == b.class {
                a.class
            } else {
                SectorClass::Unknown
            },
            ..merged(a, &b)
        });
        if s.repeat == Repeat::PerLane {
            sec.min = sec.min.min(1);
        }
        sec
    }

    fn measure_in(a: &ModuleAnalysis<'_>, k: &KernelAnalysis, s: &Site) -> Sectors {
        let sec = Self::measure(a.module, k, s);
        Sectors {
            advice: advice::advise(a, k, s, &sec),
            ..sec
        }
    }

    fn judge(s: &Site, sec: &Sectors) -> Option<Verdict> {
        if let Some(v) = sibling_verdict(s, sec) {
            return Some(v);
        }
        if let Some(v) = piece_verdict(s, sec) {
            return Some(v);
        }
        // A global atomic's lanes on one address serialise: a note of its
        // own where the sectors say nothing (counters are often meant so),
        // else said beside them.
        let contention = sec.contention.as_ref().filter(|c| c.max > 1).map(|c| {
            let lanes = match c.min == c.max {
                true => c.max.to_string(),
                false => format!("up to {}", c.max),
            };
            format!("contention: {lanes} lanes update one address")
        });
        if let Some(c) = &contention {
            if sec.class == SectorClass::Coalesced || !s.thread_dependent {
                return Some(Verdict {
                    severity: Severity::Note,
                    message: format!("global atomic: {c}, one after another"),
                    hint: Some("reduce within the warp first (__reduce_add_sync, shuffles) so one lane updates, or give blocks their own copies".into()),
                });
            }
        }
        let (severity, message) = match sec.class {
            SectorClass::Uncoalesced if sec.sparse => (
                Severity::Note,
                format!(
                    "{} access{}: sectors per request {} (ideal {}) because a branch leaves lanes of the warp inactive; with every lane active it would be coalesced",
                    s.kind.name(),
                    for_values(sec),
                    sec.full_max,
                    sec.ideal
                ),
            ),
            SectorClass::Uncoalesced => (
                Severity::Warning,
                format!(
                    "uncoalesced {} access{}: sectors per request {}{} (ideal {}, {} excess){}{}",
                    s.kind.name(),
                    for_values(sec),
                    if sec.condition.is_some() { "up to " } else { "" },
                    sec.full_max,
                    sec.ideal,
                    sec.full_max.saturating_sub(sec.ideal),
                    steady_text(sec),
                    stride_text(sec)
                ),
            ),
            SectorClass::Coalesced => return None,
            SectorClass::Unknown => (
                Severity::Note,
                format!(
                    "{} access: sectors per request {}..{} (ideal {}){}",
                    s.kind.name(),
                    sec.min,
                    sec.max,
                    sec.ideal,
                    stride_text(sec)
                ),
            ),
        };
        let message = match contention {
            Some(c) => format!("{message}; {c}"),
            None => message,
        };
        Some(Verdict {
            severity,
            message,
            hint: Some(hint(s, sec)),
        })
    }

    /// The sectors over the ideal.
    fn rank(sec: &Sectors) -> i64 {
        sec.full_max as i64 - sec.ideal as i64
    }
}

/// An access whose siblings use the sectors it fetches: the figures, what
/// the group wastes (requests, DRAM traffic only past the union) and, for
/// fields that cover a struct, the vector load that reads them at once.
fn sibling_verdict(s: &Site, sec: &Sectors) -> Option<Verdict> {
    let sib = sec.siblings.as_ref()?;
    if sec.class != SectorClass::Uncoalesced || sec.sparse || sec.contention.is_some() {
        return None;
    }
    let (message, hint) = match piece_verdict(s, sec) {
        Some(v) => (format!("{}; {}", v.message, sib.text(s)), v.hint),
        None => (
            format!(
                "uncoalesced {} access: sectors per request {} (ideal {}); {}{}",
                s.kind.name(),
                sec.full_max,
                sec.ideal,
                sib.text(s),
                stride_text(sec)
            ),
            Some(hint(s, sec)),
        ),
    };
    Some(Verdict {
        severity: Severity::Warning,
        message,
        hint: sib
            .vector
            .as_ref()
            .and_then(vector_hint)
            .map(String::from)
            .or(hint),
    })
}

/// Reading 4-byte fields that cover a struct as one vector.
fn vector_hint(v: &super::siblings::VectorRead) -> Option<&'static str> {
    Some(match v.ty {
        "float2" => "read the pair as one float2 (the struct __align__(8), or through a const float2 *): one 8-byte request per lane",
        "int2" => "read the pair as one int2 (the struct __align__(8), or through a const int2 *): one 8-byte request per lane",
        "float4" => "read the four fields as one float4 (the struct __align__(16), or through a const float4 *): one 16-byte request per lane",
        "int4" => "read the four fields as one int4 (the struct __align__(16), or through a const int4 *): one 16-byte request per lane",
        _ => return None,
    })
}

/// A request of a struct copy or fill the backend splits into pieces:
/// the warning names the copy, its pieces and what would make it fewer
/// and wider ("struct copy of 16 bytes as 4 × 4-byte accesses").
fn piece_verdict(s: &Site, sec: &Sectors) -> Option<Verdict> {
    let of = s.piece?;
    if sec.class != SectorClass::Uncoalesced || sec.sparse {
        return None;
    }
    let what = match of.whole {
        Whole::Fill => "struct fill".to_string(),
        Whole::Copy => "struct copy".to_string(),
        Whole::Value => format!("under-aligned {}", s.kind.name()),
    };
    let pieces = match s.repeat {
        Repeat::Once => format!("{} × {}-byte accesses", of.count, s.bytes),
        _ => "a loop of 1-byte accesses".to_string(),
    };
    let of_bytes = match s.repeat {
        Repeat::PerLane => "a length known at run time".to_string(),
        _ => format!("{} bytes", of.bytes),
    };
    let hint = match of.whole {
        Whole::Value => "align the data to its size (__align__) so that it moves in one access",
        _ => copy_hint(of.bytes, s.bytes, s.repeat),
    };
    Some(Verdict {
        severity: Severity::Warning,
        message: format!(
            "{what} of {of_bytes} as {pieces}: {} sectors per request, ideal {}{}",
            sec.full_max,
            sec.ideal,
            stride_text(sec)
        ),
        hint: Some(hint.to_string()),
    })
}

/// What makes a struct copy's pieces fewer and wider: one vector access
/// per lane where the struct is one's size, else 8-byte pieces. A copy
/// moves at most 8 bytes an instruction however aligned, so an aligned
/// 16-byte struct is read as one value to be one request.
pub fn copy_hint(bytes: u64, piece: u64, repeat: Repeat) -> &'static str {
    match (bytes, piece, repeat) {
        (_, _, Repeat::Times(_) | Repeat::PerLane) => {
            "a copy of 128 bytes or more is a loop of 1-byte accesses: copy it in a loop of float4 or int4"
        }
        (16, 8, _) => {
            "a struct copy moves at most 8 bytes at a time: read and write the value as one float4 (field by field, or through a const float4 *) for one 16-byte access"
        }
        (16, _, _) => "copy as float4 or align the struct to 16",
        (8, _, _) => "copy as float2 or align the struct to 8",
        (4, _, _) => "copy as a float or int, or align the struct to 4",
        _ => "align the struct to 8 (__align__(8)) for 8-byte pieces, or copy it as float4s",
    }
}

/// ` for n ≥ 2` where the class holds from a parameter's value on.
fn for_values(sec: &Sectors) -> String {
    match &sec.condition {
        Some(c) => format!(" for {} ≥ {}", c.param, c.from),
        None => String::new(),
    }
}

/// `; 32 for n ≥ 8` where the figure settles after the class does.
fn steady_text(sec: &Sectors) -> String {
    let Some(c) = &sec.condition else {
        return String::new();
    };
    let figure = if c.steady_min == c.steady_max {
        c.steady_max.to_string()
    } else {
        format!("{}..{}", c.steady_min, c.steady_max)
    };
    format!("; {figure} for {} ≥ {}", c.param, c.steady_from)
}

fn stride_text(sec: &Sectors) -> String {
    if let (Some(c), Some(d)) = (&sec.condition, sec.dim) {
        return match c.stride {
            Some(k) => format!(
                "; neighbouring lanes are {k}·{} bytes apart along threadIdx.{d}",
                c.param
            ),
            None => format!(
                "; the step between lanes along threadIdx.{d} grows with {}",
                c.param
            ),
        };
    }
    match (sec.stride, sec.dim) {
        (Some(st), Some(d)) => {
            format!("; neighbouring lanes are {st} bytes apart along threadIdx.{d}")
        }
        (None, Some(d)) => {
            format!("; the step between lanes along threadIdx.{d} is not a constant")
        }
        _ => String::new(),
    }
}

fn hint(s: &Site, sec: &Sectors) -> String {
    if let Some(a) = &sec.advice {
        return a.hint(sec, s.bytes);
    }
    if sec.dim == Some("y") {
        "swap the roles of threadIdx.x and threadIdx.y so that threadIdx.x indexes the contiguous dimension".into()
    } else {
        "make neighbouring lanes touch neighbouring elements, or stage the data through shared memory".into()
    }
}

/// Fills in [`Sectors::siblings`] for the accesses of kernel `k` that have
/// siblings, once every site has its figures (`figures`, in the order of
/// `k.sites`): a group's union needs every member's lanes.
pub(super) fn attach_siblings(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    figures: &mut [super::SiteFigures],
) {
    let mut groups = super::siblings::Groups::new(k);
    for (i, fig) in figures.iter_mut().enumerate() {
        let Some(sec) = fig.get_mut::<Sectors>() else {
            continue;
        };
        // A class that holds for some values of a parameter, or none, has
        // no one union.
        if sec.condition.is_some() || sec.class == SectorClass::Unknown {
            continue;
        }
        if let Some(stride) = sec.stride {
            sec.siblings = groups.of(a, i, stride);
        }
    }
}
