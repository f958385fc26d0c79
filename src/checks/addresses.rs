//! The byte addresses of one memory site, per warp, as the memory checks
//! need them: a uniform base (known only modulo some number) plus each
//! lane's offset.

use crate::acf::expr::CtxId;
use crate::acf::expr::{gcd, Atom, AtomId, Congruence, Poly};
use crate::acf::lanes::{lanes, Column, Lanes};
use crate::acf::KernelAcf;
use crate::analysis::{KernelAnalysis, Site};
use crate::ir::intrinsics::Dim;
use crate::ir::{BlockId, Module, Value};

/// One warp's view of a site's address.
#[derive(Clone)]
pub enum WarpAddresses {
    /// No lane can be active here.
    Idle,
    /// `base + d[l]`, with what is known of the base modulo small numbers.
    Offsets {
        may: u32,
        must: u32,
        /// The lanes the warp has, active or not.
        exists: u32,
        d: Box<Column>,
        base: Congruence,
    },
    /// The lanes' offsets are not known relative to each other; `scaled`
    /// when they are, given one uniform atom's value.
    Unknown {
        may: u32,
        scaled: Option<Box<Scaled>>,
    },
}

/// Offsets `d[l] + a·c[l]` from a base: what a warp's addresses are as a
/// function of one uniform atom `a` (a kernel parameter in a stride).
#[derive(Clone)]
pub struct Scaled {
    pub must: u32,
    pub exists: u32,
    pub d: Column,
    pub atom: AtomId,
    pub c: Column,
    /// What is known of the base modulo small numbers, whatever `a` is.
    pub base: Congruence,
}

impl Scaled {
    /// The least `N` from which, for every `n ≥ N`, the lanes of `mask`
    /// with different `c[l]` are at least `gap` bytes apart (`|n·Δc| ≥
    /// gap + the spread of d`); `None` when no two differ.
    pub fn apart_from(&self, mask: u32, gap: i128) -> Option<i128> {
        let mut cs: Vec<i128> = lanes(mask).map(|l| self.c[l]).collect();
        cs.sort_unstable();
        cs.dedup();
        let step = cs.windows(2).map(|w| w[1] - w[0]).min()?;
        let ds: Vec<i128> = lanes(mask).map(|l| self.d[l]).collect();
        let spread = ds.iter().max()? - ds.iter().min()?;
        Some(ceil_div(gap + spread, step).max(1))
    }

    /// The most `unit`-sized pieces (sectors) the lanes of `may` touch with
    /// `bytes` each, whatever the atom's value: the lanes that agree on
    /// `c[l]` are a group whose offsets from `base + n·c` are known, and
    /// where that group's start falls in a sector depends only on `n`
    /// modulo `unit` (and the base's residue), so the groups' sums over
    /// those residues bound every value (groups that overlap share
    /// sectors, never add any). A 16×16 transpose store `out[x·h + y]`:
    /// 16 pairs of lanes 4 bytes apart, each in one sector when `h` is
    /// even, two pairs across a boundary when it is odd: at most 18.
    pub fn most_pieces(&self, may: u32, bytes: i128, unit: i128) -> u64 {
        let mut groups: Vec<(i128, u32)> = Vec::new();
        for l in lanes(may) {
            match groups.iter_mut().find(|g| g.0 == self.c[l]) {
                Some(g) => g.1 |= 1 << l,
                None => groups.push((self.c[l], 1 << l)),
            }
        }
        let bases = WarpAddresses::residues(self.base, unit);
        let mut most = 0;
        for r in 0..unit {
            for &b in &bases {
                let total: u64 = groups
                    .iter()
                    .map(|&(c, mask)| pieces(&self.d, mask, b + r * c, bytes, unit).len() as u64)
                    .sum();
                most = most.max(total);
            }
        }
        most
    }

    /// The warp's addresses with `a = n`.
    pub fn at(&self, may: u32, n: i128) -> WarpAddresses {
        WarpAddresses::Offsets {
            may,
            must: self.must,
            exists: self.exists,
            d: Box::new(std::array::from_fn(|l| self.d[l] + n * self.c[l])),
            base: self.base,
        }
    }
}

impl WarpAddresses {
    /// These addresses with the uniform atom of a [`Scaled`] warp set to
    /// `n` (the others as they are).
    pub fn at(&self, n: i128) -> WarpAddresses {
        match self {
            WarpAddresses::Unknown {
                may,
                scaled: Some(sc),
            } => sc.at(*may, n),
            other => other.clone(),
        }
    }

    /// The residues modulo `unit` the base can have.
    pub fn residues(base: Congruence, unit: i128) -> Vec<i128> {
        if base.modulus == 0 {
            return vec![base.residue.rem_euclid(unit)];
        }
        let step = gcd(base.modulus, unit);
        let first = base.residue.rem_euclid(step);
        (0..unit / step).map(|k| first + k * step).collect()
    }
}

/// The sites standing for each request of a copy loop (`site.repeat`
/// other than once): the loop's byte `k` is `site` `k` bytes further on.
/// Costs repeat every `period` bytes (a sector, a row of banks) for a
/// base of known residue, so the first `period` bytes stand for all.
/// `None` for a site issued once.
pub fn loop_sites(site: &Site, period: u64) -> Option<Vec<Site>> {
    use crate::memory::lower::Repeat;
    let n = match site.repeat {
        Repeat::Once => return None,
        Repeat::Times(n) => n.min(period),
        Repeat::PerLane => period,
    };
    Some(
        (0..n)
            .map(|k| Site {
                offset: site.offset + k as i64,
                why: Vec::new(),
                ..site.clone()
            })
            .collect(),
    )
}

/// The addresses of `site` in each warp of the block, for each calling
/// context of its function.
pub fn per_warp(m: &Module, k: &KernelAnalysis, site: &Site) -> Vec<WarpAddresses> {
    per_warp_in(m, k, site, false)
}

/// As [`per_warp`], with a site in a swept loop taken per iteration: every
/// value of the counter the block can run with has its warps, so the
/// items together cover every execution, with fewer lanes in some.
pub fn per_warp_swept(m: &Module, k: &KernelAnalysis, site: &Site) -> Vec<WarpAddresses> {
    per_warp_in(m, k, site, true)
}

fn per_warp_in(m: &Module, k: &KernelAnalysis, site: &Site, swept: bool) -> Vec<WarpAddresses> {
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    let contexts = acf.contexts(site.func);
    if contexts.is_empty() {
        // Nothing built (a kernel over budget): any lane may be anywhere.
        return acf
            .warps
            .iter()
            .map(|w| WarpAddresses::Unknown {
                may: w.exists,
                scaled: None,
            })
            .collect();
    }
    let mut out = Vec::new();
    for &c in contexts {
        match per_iteration(acf, site, c, block).filter(|_| swept) {
            Some(its) => out.extend(its.into_iter().flatten()),
            None => {
                for w in 0..acf.warps.len() {
                    let (may, _) = acf.active(w, c, block);
                    let must = acf.active_strict(w, c, block);
                    let plain =
                        warp_addresses(acf, w, (may, must), acf.lanes(w, c, site.value), site);
                    out.extend(
                        match plain {
                            WarpAddresses::Unknown { .. } => {
                                placed_cases(acf, w, c, site, (may, must))
                            }
                            _ => None,
                        }
                        .unwrap_or_else(|| vec![plain]),
                    );
                }
            }
        }
    }
    out
}

/// The addresses of `site` with each `(value, bytes)` of `moves` added
/// as that value's lanes times `bytes` (what padding a shared array's
/// rows does to an access, `memory::rows`), per warp of each context, or
/// per iteration of the site's ladder when `swept`. A warp whose lanes of
/// a move are unknown is unknown: a remedy is judged only where every
/// lane is placed.
pub fn per_warp_moved(
    m: &Module,
    k: &KernelAnalysis,
    site: &Site,
    moves: &[(Value, i128)],
    swept: bool,
) -> Vec<WarpAddresses> {
    let acf = &k.acf;
    let block = m.func(site.func).inst(site.inst).block;
    fn moved<'a>(
        site: &Site,
        moves: &[(Value, i128)],
        get: &dyn Fn(Value) -> Option<&'a Lanes>,
    ) -> Option<Lanes> {
        let mut lanes = get(site.value)?.clone();
        for &(v, bytes) in moves {
            lanes = lanes.add(&get(v)?.scale(bytes));
        }
        Some(lanes)
    }
    let mut out = Vec::new();
    for &c in acf.contexts(site.func) {
        // As `per_iteration`: the ladder's rows only where every warp has each.
        let ladder = acf.ladder(c, block).filter(|l| {
            swept
                && (0..l.values.len()).all(|it| {
                    (0..acf.warps.len()).all(|w| acf.iteration(w, c, block, it).is_some())
                })
        });
        let iterations = ladder.map_or(1, |l| l.values.len());
        for it in 0..iterations {
            for w in 0..acf.warps.len() {
                let (active, lanes) = match ladder {
                    Some(_) => {
                        let i = acf.iteration(w, c, block, it).expect("checked above");
                        let get = |v| acf.iteration_lanes(w, c, v, it);
                        ((i.may, i.strict), moved(site, moves, &get))
                    }
                    None => {
                        let active = (acf.active(w, c, block).0, acf.active_strict(w, c, block));
                        (active, moved(site, moves, &|v| acf.lanes(w, c, v)))
                    }
                };
                out.push(warp_addresses(acf, w, active, lanes.as_ref(), site));
            }
        }
    }
    out
}

/// The warp's addresses in each case of the site's value (see
/// [`crate::acf::cases`]), when every case places its lanes: together they
/// cover what the warp can do.
fn placed_cases(
    acf: &KernelAcf,
    w: usize,
    c: CtxId,
    site: &Site,
    active: (u32, u32),
) -> Option<Vec<WarpAddresses>> {
    let cases: Vec<WarpAddresses> = acf
        .case_lanes(w, c, site.value)?
        .into_iter()
        .map(|l| warp_addresses(acf, w, active, Some(l), site))
        .collect();
    cases
        .iter()
        .all(|x| !matches!(x, WarpAddresses::Unknown { .. }))
        .then_some(cases)
}

/// Per iteration of the ladder of the site's block (see
/// [`crate::acf::ladder`]), the addresses in each warp; `None` when the
/// block has no ladder. Every value of the counter the block can run with
/// has its row, so the rows together cover every execution.
pub fn per_iteration(
    acf: &KernelAcf,
    site: &Site,
    c: CtxId,
    block: BlockId,
) -> Option<Vec<Vec<WarpAddresses>>> {
    let ladder = acf.ladder(c, block)?;
    (0..ladder.values.len())
        .map(|k| {
            (0..acf.warps.len())
                .map(|w| {
                    let it = acf.iteration(w, c, block, k)?;
                    let lanes = acf.iteration_lanes(w, c, site.value, k);
                    Some(warp_addresses(acf, w, (it.may, it.strict), lanes, site))
                })
                .collect()
        })
        .collect()
}

/// The warp's addresses of `site`'s request: its address value's lanes
/// plus the request's offset (a piece of a struct copy).
fn warp_addresses(
    acf: &KernelAcf,
    w: usize,
    (may, must): (u32, u32),
    lanes: Option<&Lanes>,
    site: &Site,
) -> WarpAddresses {
    if may == 0 {
        return WarpAddresses::Idle;
    }
    let Some(lanes) = lanes else {
        return WarpAddresses::Unknown { may, scaled: None };
    };
    let exists = acf.warps[w].exists;
    let (align, offset) = (site.align, i128::from(site.offset));
    let shifted = |mut d: Column| {
        d.iter_mut().for_each(|x| *x += offset);
        d
    };
    match lanes.split(may).map(|(u, d)| (u, shifted(d))) {
        Some((u, d)) => {
            let base = aligned(
                acf.arena.congruence(&u),
                d[may.trailing_zeros() as usize],
                align,
            );
            WarpAddresses::Offsets {
                may,
                must,
                exists,
                d: Box::new(d),
                base,
            }
        }
        None => WarpAddresses::Unknown {
            may,
            scaled: lanes.split_scaled(may).map(|(u, d, atom, c)| {
                Box::new(Scaled {
                    must,
                    exists,
                    d: shifted(d),
                    atom,
                    c,
                    base: acf.arena.congruence(&u),
                })
            }),
        },
    }
}

/// The base's congruence, sharpened by the access's alignment: every
/// lane's `base + d[l]` is a multiple of `align`, so the base is `−d[l]`
/// modulo it (a `char` array stored to as `float`s starts a word).
pub(super) fn aligned(base: Congruence, d: i128, align: u64) -> Congruence {
    let a = i128::from(align);
    let weaker = base.modulus != 0 && a % base.modulus == 0 && a > base.modulus;
    if weaker && (base.residue + d).rem_euclid(base.modulus) == 0 {
        Congruence::new(a, -d)
    } else {
        base
    }
}

/// The constant byte step between neighbouring lanes along each thread
/// dimension, read off the address's ACF: `Some(None)` when the step is
/// symbolic (a kernel parameter), `None` when the dimension is absent.
pub fn strides(acf: &KernelAcf, site: &Site) -> [Option<Option<i128>>; 3] {
    let Some(e) = acf
        .contexts(site.func)
        .first()
        .and_then(|&c| acf.expr(c, site.value))
    else {
        return [None; 3];
    };
    let p: &Poly = acf.arena.poly(e);
    [Dim::X, Dim::Y, Dim::Z].map(|dim| {
        let mut linear = None;
        let mut symbolic = false;
        for (mono, c) in &p.terms {
            let tids = mono
                .iter()
                .filter(|&&a| *acf.arena.atom(a) == Atom::Tid(dim))
                .count();
            if tids == 0 {
                continue;
            }
            if mono.len() == 1 {
                linear = Some(*c);
            } else {
                symbolic = true;
            }
        }
        match (linear, symbolic) {
            (_, true) => Some(None),
            (Some(c), false) => Some(Some(c)),
            (None, false) => None,
        }
    })
}

/// The bytes between neighbouring lanes along `dim` per unit of the
/// uniform atom `a`: the coefficient of `threadIdx·a` in the site's
/// address, when that is its only term with both.
pub fn scaled_stride(acf: &KernelAcf, site: &Site, dim: &str, a: AtomId) -> Option<i64> {
    let dim = match dim {
        "x" => Dim::X,
        "y" => Dim::Y,
        _ => Dim::Z,
    };
    let e = acf
        .contexts(site.func)
        .first()
        .and_then(|&c| acf.expr(c, site.value))?;
    let p: &Poly = acf.arena.poly(e);
    let mut found = None;
    for (mono, c) in &p.terms {
        if mono.iter().any(|&x| *acf.arena.atom(x) == Atom::Tid(dim)) && mono.contains(&a) {
            if mono.len() != 2 || found.is_some() {
                return None;
            }
            found = i64::try_from(*c).ok();
        }
    }
    found
}

/// The most lanes of `mask` at one offset of `d` (on one address).
pub fn most_on_one(d: &Column, mask: u32) -> u64 {
    let mut offs: Vec<i128> = lanes(mask).map(|l| d[l]).collect();
    offs.sort_unstable();
    offs.chunk_by(|a, b| a == b)
        .map(|r| r.len() as u64)
        .max()
        .unwrap_or(0)
}

/// An atomic's contention over the warps `items`: the fewest and the most
/// lanes of a request on one address (they serialise). Lanes whose
/// offsets are unknown may all meet.
pub fn contention(items: &[WarpAddresses]) -> (u64, u64) {
    let (mut lo, mut hi) = (u64::MAX, 0);
    for wa in items {
        let (l, h) = match wa {
            WarpAddresses::Idle => continue,
            WarpAddresses::Offsets { may, must, d, .. } => {
                (most_on_one(d, *must).max(1), most_on_one(d, *may))
            }
            WarpAddresses::Unknown { may, .. } => (1, u64::from(may.count_ones())),
        };
        (lo, hi) = (lo.min(l), hi.max(h));
    }
    (lo.min(hi).max(1), hi.max(1))
}

/// Sectors (or words) touched: the distinct `unit`-sized pieces (`unit` a
/// power of two) the lanes of `mask` cover, with `bytes` from
/// `base + d[l]`, sorted. Offsets are small, so this works in `i64` with
/// shifts, and on the stack for up to two pieces a lane; it is the checks'
/// hot loop.
pub fn pieces(
    d: &Column,
    mask: u32,
    base: i128,
    bytes: i128,
    unit: i128,
) -> smallvec::SmallVec<[i64; 64]> {
    debug_assert!(unit > 0 && unit.count_ones() == 1);
    let shift = unit.trailing_zeros();
    let span = bytes.max(1) as i64 - 1;
    let mut out = smallvec::SmallVec::<[i64; 64]>::new();
    for l in lanes(mask) {
        let a = (base + d[l]) as i64;
        let (first, last) = (a >> shift, (a + span) >> shift);
        out.extend(first..=last);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `⌈a / b⌉` for `b > 0`.
pub fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

/// Distinct bytes the lanes of `mask` touch.
pub fn distinct_bytes(d: &Column, mask: u32, bytes: i128) -> i128 {
    distinct_bytes_of(lanes(mask).map(|l| (d[l], d[l] + bytes)))
}

/// Distinct bytes the byte ranges `[lo, hi)` cover together.
pub fn distinct_bytes_of(spans: impl Iterator<Item = (i128, i128)>) -> i128 {
    let mut spans: Vec<(i128, i128)> = spans.collect();
    spans.sort_unstable();
    let (mut total, mut end) = (0, i128::MIN);
    for (lo, hi) in spans {
        let lo = lo.max(end);
        if hi > lo {
            total += hi - lo;
            end = hi;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residues_of_a_base() {
        // A cudaMalloc pointer: 0 mod 256, so 0 mod 32.
        assert_eq!(
            WarpAddresses::residues(Congruence::new(256, 0), 32),
            vec![0]
        );
        // 4-aligned: eight places in a sector.
        assert_eq!(
            WarpAddresses::residues(Congruence::new(4, 0), 32),
            vec![0, 4, 8, 12, 16, 20, 24, 28]
        );
        assert_eq!(WarpAddresses::residues(Congruence::exact(36), 32), vec![4]);
    }

    #[test]
    fn rows_are_apart_from_n() {
        // Lanes 4 bytes apart per unit of n, no other offset: two lanes
        // are 36 bytes (a sector and a float) apart from n = 9.
        let sc = Scaled {
            must: u32::MAX,
            exists: u32::MAX,
            d: [0; 32],
            atom: AtomId::new(0),
            c: std::array::from_fn(|l| 4 * l as i128),
            base: Congruence::new(4, 0),
        };
        assert_eq!(sc.apart_from(u32::MAX, 32 + 4), Some(9));
        // A column offset of up to 60 bytes (16 lanes of a row) widens it.
        let rows = Scaled {
            d: std::array::from_fn(|l| 4 * (l % 16) as i128),
            c: std::array::from_fn(|l| 4 * (l / 16) as i128),
            ..sc.clone()
        };
        assert_eq!(rows.apart_from(u32::MAX, 36), Some(24));
        // One lane: no two rows.
        assert_eq!(sc.apart_from(1, 36), None);
        if let WarpAddresses::Offsets { d, .. } = sc.at(u32::MAX, 8) {
            assert_eq!(d[3], 96);
        } else {
            panic!("a value of n gives offsets");
        }
    }

    #[test]
    fn sectors_of_unit_stride_and_offset() {
        let d: Column = std::array::from_fn(|l| 4 * l as i128);
        assert_eq!(pieces(&d, u32::MAX, 0, 4, 32).len(), 4);
        assert_eq!(pieces(&d, u32::MAX, 4, 4, 32).len(), 5);
        assert_eq!(distinct_bytes(&d, u32::MAX, 4), 128);
    }
}
