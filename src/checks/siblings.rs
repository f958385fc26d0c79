//! Accesses that fetch their sectors together: the fields of one struct
//! read (or written) one after another by the same warp in the same
//! iteration, `p[i].lat` and `p[i].lng`. Each alone touches more sectors
//! than its bytes need (8 per request for 4-byte loads 8 bytes apart,
//! ideal 4), but its siblings use the rest of those sectors, so the DRAM
//! moves each sector once; what the pair wastes is requests, each of which
//! the L1 serves a 128-byte line at a time.
//!
//! **Who is a sibling.** Global loads (or stores) of one function, not
//! atomics or copy loops, whose blocks run together: the same block, or
//! one dominating the other and the other post-dominating it (on
//! `graph`'s reconvergence tree) in the same innermost loop, so that every
//! warp that runs one runs the other in the same iteration with the same
//! lanes, never on different sides of a branch nor in different
//! iterations (nor a copy of one source access that unrolling made
//! reading the same bytes again: that is the next iteration of the
//! source's loop). Their addresses differ by a constant: the ACF of the
//! two pointers has the same non-constant part in every calling context
//! (the same array, the same lane and loop terms). A group is kept only when
//! it spans at most the lane stride (the fields of one element: a
//! neighbouring element's field at a stride's distance is a different
//! reuse, which a cache may or may not keep).
//!
//! **What is measured**, per warp, at the base residues all the members
//! allow: the sectors the group touches together (the union), the
//! sectors its bytes need (the group's ideal), and for this access the
//! 128-byte lines its request touches beyond those its own bytes need
//! (its extra L1 requests). For 4-byte fields that cover an 8- or 16-byte
//! struct at its stride, the vector load that reads the struct at once
//! (`float2`, `float4`) is evaluated at the same lanes: the hint names it
//! only when that load is ideal.

use super::addresses::{self, ceil_div, distinct_bytes, distinct_bytes_of, pieces, WarpAddresses};
use crate::acf::expr::{Congruence, Mono, Poly};
use crate::acf::lanes::Column;
use crate::acf::KernelAcf;
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::dataflow::FastMap as HashMap;
use crate::graph::FunctionGraphs;
use crate::hw;
use crate::ir::{BlockId, FuncId, Module, SiteKind, TypeKind};
use crate::memory::lower::{Repeat, Whole};
use crate::memory::Space;
use serde::Serialize;

const SECTOR: i128 = hw::SECTOR_BYTES as i128;
const LINE: i128 = hw::LINE_BYTES as i128;

/// The most accesses a group may have (an unrolled loop over a long row
/// makes more; they are left as they are).
const MOST: usize = 32;

/// What an access fetches together with its siblings (see the module
/// docs); figures per execution of the group by one warp, the most over
/// the warps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Siblings {
    /// The other accesses of the group, but for pieces of this access's
    /// own instruction (a struct copy's), which `pieces` counts.
    pub with: Vec<SiblingAt>,
    pub pieces: u64,
    /// Accesses in the group, this one included.
    pub accesses: u64,
    /// Sectors the group touches together.
    pub union: u64,
    /// Sectors the group's bytes need, contiguous and aligned.
    pub ideal: u64,
    /// This access's 128-byte L1 requests beyond those its bytes need.
    pub extra_requests: u64,
    /// The vector access that reads the group in one request per lane,
    /// where it is ideal at these lanes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<VectorRead>,
}

/// Where a sibling is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SiblingAt {
    pub kind: &'static str,
    pub line: u32,
    pub column: u32,
}

/// One vector access for the group: its type, bytes per lane and sectors
/// per request (the ideal, or it would not be said).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VectorRead {
    #[serde(rename = "type")]
    pub ty: &'static str,
    pub bytes: u64,
    pub sectors: u64,
}

impl Siblings {
    /// Sectors of DRAM traffic the group moves beyond its bytes' ideal,
    /// this access's equal part of them.
    pub fn dram_excess(&self) -> f64 {
        self.union.saturating_sub(self.ideal) as f64 / self.accesses.max(1) as f64
    }

    /// "with the load at column 81 of this line it uses every byte it
    /// fetches: one extra request, no extra DRAM traffic".
    pub fn text(&self, s: &Site) -> String {
        let line = s.pos.as_ref().map_or(0, |p| p.line);
        let mut names: Vec<String> = Vec::new();
        if self.pieces > 0 {
            let whole = match s.piece.map(|p| p.whole) {
                Some(Whole::Copy) => "copy",
                Some(Whole::Fill) => "fill",
                _ => s.kind.name(),
            };
            names.push(format!(
                "the other {} of the {whole}",
                plural(self.pieces, "piece")
            ));
        }
        let kind = s.kind.name();
        let col = s.pos.as_ref().map_or(0, |p| p.col);
        // Accesses clang placed where this one is (loads hoisted out of a
        // loop take the loop's place).
        let here = self
            .with
            .iter()
            .filter(|a| line > 0 && (a.line, a.column) == (line, col))
            .count();
        if here > 0 {
            names.push(match here {
                1 => format!("the other {kind} at this column"),
                n => format!("the {n} other {kind}s at this column"),
            });
        }
        let mut others: Vec<&SiblingAt> = self
            .with
            .iter()
            .filter(|a| line == 0 || (a.line, a.column) != (line, col))
            .collect();
        others.sort_by_key(|a| (a.line, a.column));
        others.dedup();
        if !others.is_empty() {
            let here = line > 0 && others.iter().all(|o| o.line == line);
            let places: Vec<String> = others
                .iter()
                .map(|o| match here {
                    true => o.column.to_string(),
                    false => format!("{}:{}", o.line, o.column),
                })
                .collect();
            names.push(match (here, places.len()) {
                (true, 1) => format!("the {kind} at column {} of this line", places[0]),
                (true, _) => format!("the {kind}s at columns {} of this line", join(&places)),
                (false, 1) => format!("the {kind} at {}", places[0]),
                (false, _) => format!("the {kind}s at {}", join(&places)),
            });
        }
        let requests = match self.extra_requests {
            0 => "no extra request".to_string(),
            1 => "one extra request".to_string(),
            n => format!("{n} extra requests"),
        };
        let outcome = if self.union <= self.ideal {
            format!("it uses every byte it fetches: {requests}, no extra DRAM traffic")
        } else {
            format!(
                "together they fetch {} sectors for {} sectors of bytes: {} excess from DRAM, {requests}",
                self.union,
                self.ideal,
                self.union - self.ideal
            )
        };
        format!("with {} {outcome}", join(&names))
    }
}

/// "a and b", "a, b and c".
fn join(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "1 piece", "3 pieces".
fn plural(n: u64, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        _ => format!("{n} {what}s"),
    }
}

/// The sibling groups of one kernel's accesses, each group's figures
/// worked out once for all its members.
pub struct Groups<'k> {
    k: &'k KernelAnalysis,
    /// Candidates by function, kind and the hash of their address's
    /// varying part: only accesses whose addresses vary alike can be
    /// siblings, so only those are compared.
    buckets: HashMap<(FuncId, SiteKind, u64), Vec<usize>>,
    memo: HashMap<Vec<usize>, Option<Together>>,
}

impl<'k> Groups<'k> {
    pub fn new(k: &'k KernelAnalysis) -> Groups<'k> {
        let mut buckets: HashMap<_, Vec<usize>> = HashMap::default();
        for (i, s) in k.sites.iter().enumerate().filter(|(_, s)| candidate(s)) {
            if let Some(h) = varying_hash(&k.acf, s) {
                buckets.entry((s.func, s.kind, h)).or_default().push(i);
            }
        }
        Groups {
            k,
            buckets,
            memo: HashMap::default(),
        }
    }

    /// The siblings of site `i` of the kernel, whose lanes are `stride`
    /// bytes apart; `None` when it has none (or they cannot be placed).
    pub fn of(&mut self, a: &ModuleAnalysis<'_>, i: usize, stride: i64) -> Option<Siblings> {
        let (m, k) = (a.module, self.k);
        let s = &k.sites[i];
        let g = a.graphs.get(s.func)?;
        let bucket = self
            .buckets
            .get(&(s.func, s.kind, varying_hash(&k.acf, s)?))?;
        let members = group(m, g, k, (i, bucket), stride)?;
        let key: Vec<usize> = members.iter().map(|&(t, _)| t).collect();
        let fig = self
            .memo
            .entry(key)
            .or_insert_with_key(|key| together(m, k, key))
            .as_ref()?;
        let me = members.iter().position(|&(t, _)| t == i)?;
        Some(Siblings {
            with: members
                .iter()
                .map(|&(t, _)| &k.sites[t])
                .filter(|t| t.inst != s.inst)
                .map(|t| SiblingAt {
                    kind: t.kind.name(),
                    line: t.pos.as_ref().map_or(0, |p| p.line),
                    column: t.pos.as_ref().map_or(0, |p| p.col),
                })
                .collect(),
            pieces: members
                .iter()
                .filter(|&&(t, _)| t != i && k.sites[t].inst == s.inst)
                .count() as u64,
            accesses: members.len() as u64,
            union: fig.union,
            ideal: fig.ideal,
            extra_requests: fig.extra_requests[me],
            vector: vector_read(m, k, &members, stride),
        })
    }
}

/// Whether site `t` can be anyone's sibling: a global load or store,
/// issued once per execution, whose address differs between lanes.
fn candidate(t: &Site) -> bool {
    matches!(t.kind, SiteKind::Load | SiteKind::Store)
        && t.space == Some(Space::Global)
        && t.thread_dependent
        && t.repeat == Repeat::Once
}

/// Site `i`'s group (itself included), as indices of `k.sites` in order,
/// with each member's byte distance from the lowest, when it has siblings
/// and spans at most `stride` bytes.
fn group(
    m: &Module,
    g: &FunctionGraphs,
    k: &KernelAnalysis,
    (i, bucket): (usize, &[usize]),
    stride: i64,
) -> Option<Vec<(usize, i128)>> {
    let s = &k.sites[i];
    if !candidate(s) {
        return None;
    }
    let f = m.func(s.func);
    let block = f.inst(s.inst).block;
    // Another instruction at the same place reading the same bytes is a
    // copy of one source access that unrolling made: another iteration of
    // the source's loop, which reloads what this one read.
    let unrolled = |t: &Site, d: i128| {
        d == 0 && t.inst != s.inst && t.pos == s.pos && s.pos.as_ref().is_some_and(|p| p.line > 0)
    };
    let mut members: Vec<(usize, i128)> = bucket
        .iter()
        .map(|&j| (j, &k.sites[j]))
        .filter(|(_, t)| candidate(t) && t.kind == s.kind && t.func == s.func)
        .filter(|(_, t)| same_iteration(g, block, f.inst(t.inst).block))
        .filter_map(|(j, t)| Some((j, distance(&k.acf, s, t)?)))
        .filter(|&(j, d)| !unrolled(&k.sites[j], d))
        .collect();
    let lo = members.iter().map(|&(_, d)| d).min()?;
    let hi = members
        .iter()
        .map(|&(t, d)| d + i128::from(k.sites[t].bytes))
        .max()?;
    if members.len() < 2 || members.len() > MOST || hi - lo > i128::from(stride.unsigned_abs()) {
        return None;
    }
    members.iter_mut().for_each(|m| m.1 -= lo);
    Some(members)
}

/// Whether every warp that runs block `a` runs block `b` in the same
/// iteration of the loops around them, with the same lanes: one
/// dominates the other, which post-dominates it, in one innermost loop.
fn same_iteration(g: &FunctionGraphs, a: BlockId, b: BlockId) -> bool {
    if a == b {
        return true;
    }
    let together = |x, y| g.dom.dominates(x, y) && g.pdom.dominates(y, x);
    g.loops.loop_of(a) == g.loops.loop_of(b) && (together(a, b) || together(b, a))
}

/// The bytes from `s`'s request to `t`'s, when the two addresses differ
/// by the same constant in every calling context.
fn distance(acf: &KernelAcf, s: &Site, t: &Site) -> Option<i128> {
    let contexts = acf.contexts(s.func);
    let mut found = None;
    for &c in contexts {
        let (es, et) = (acf.expr(c, s.value)?, acf.expr(c, t.value)?);
        let d = constant_apart(acf.arena.poly(es), acf.arena.poly(et))?;
        if *found.get_or_insert(d) != d {
            return None;
        }
    }
    Some(found? + i128::from(t.offset) - i128::from(s.offset))
}

/// A hash of the non-constant part of `s`'s address in its first
/// calling context: equal for accesses a constant apart.
fn varying_hash(acf: &KernelAcf, s: &Site) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let &c = acf.contexts(s.func).first()?;
    let p = acf.arena.poly(acf.expr(c, s.value)?);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    p.terms
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .for_each(|t| t.hash(&mut h));
    Some(h.finish())
}

/// `q − p` when the two differ only in their constant terms (compared
/// in place: every site of a kernel is compared with every other).
fn constant_apart(p: &Poly, q: &Poly) -> Option<i128> {
    let varying = |x: &&(Mono, i128)| !x.0.is_empty();
    let same = p.terms.len().abs_diff(q.terms.len()) <= 1
        && p.terms
            .iter()
            .filter(varying)
            .eq(q.terms.iter().filter(varying));
    same.then(|| q.constant_term() - p.constant_term())
}

/// A group's figures: the union and ideal of the group, each member's
/// extra requests.
struct Together {
    union: u64,
    ideal: u64,
    extra_requests: Vec<u64>,
}

/// One member's lanes in one warp: offsets, active lanes, bytes, base.
type Placed<'a> = (&'a Column, u32, i128, Congruence);

/// The union, the group's ideal and each member's extra requests (sites
/// `members` of `k`), the most over the warps; `None` where some member's
/// lanes cannot be placed in some warp.
fn together(m: &Module, k: &KernelAnalysis, members: &[usize]) -> Option<Together> {
    let items: Vec<Vec<WarpAddresses>> = members
        .iter()
        .map(|&t| addresses::per_warp(m, k, &k.sites[t]))
        .collect();
    let n = items[0].len();
    if items.iter().any(|it| it.len() != n) {
        return None;
    }
    let mut out = Together {
        union: 0,
        ideal: 0,
        extra_requests: vec![0; members.len()],
    };
    for w in 0..n {
        let mut placed: Vec<Placed<'_>> = Vec::with_capacity(members.len());
        for (it, &t) in items.iter().zip(members) {
            match &it[w] {
                WarpAddresses::Idle => {}
                WarpAddresses::Offsets { may, d, base, .. } => {
                    placed.push((d, *may, i128::from(k.sites[t].bytes.max(1)), *base))
                }
                WarpAddresses::Unknown { .. } => return None,
            }
        }
        if placed.is_empty() {
            continue;
        }
        // Members run together: a warp runs all of them or none.
        if placed.len() != members.len() {
            return None;
        }
        let bases: Vec<Congruence> = placed.iter().map(|p| p.3).collect();
        let union = residues(&bases, SECTOR)
            .into_iter()
            .map(|r| {
                let mut all: Vec<i64> = placed
                    .iter()
                    .flat_map(|&(d, may, bytes, _)| pieces(d, may, r, bytes, SECTOR))
                    .collect();
                all.sort_unstable();
                all.dedup();
                all.len() as u64
            })
            .max()
            .unwrap_or(0);
        let group_bytes = distinct_bytes_of(placed.iter().flat_map(|&(d, may, bytes, _)| {
            crate::acf::lanes::lanes(may).map(move |l| (d[l], d[l] + bytes))
        }));
        out.union = out.union.max(union);
        out.ideal = out.ideal.max(ceil_div(group_bytes, SECTOR) as u64);
        let lines = residues(&bases, LINE);
        for (extra, &(d, may, bytes, _)) in out.extra_requests.iter_mut().zip(&placed) {
            let most = lines
                .iter()
                .map(|&r| pieces(d, may, r, bytes, LINE).len() as u64)
                .max()
                .unwrap_or(0);
            let ideal = ceil_div(distinct_bytes(d, may, bytes), LINE) as u64;
            *extra = (*extra).max(most.saturating_sub(ideal));
        }
    }
    (out.union > 0).then_some(out)
}

/// The residues modulo `unit` that every member's base allows: each is a
/// fact about the same uniform base, sharpened by a member's alignment.
fn residues(bases: &[Congruence], unit: i128) -> Vec<i128> {
    let mut r = WarpAddresses::residues(bases[0], unit);
    for b in &bases[1..] {
        let other = WarpAddresses::residues(*b, unit);
        r.retain(|x| other.contains(x));
    }
    if r.is_empty() {
        WarpAddresses::residues(bases[0], unit)
    } else {
        r
    }
}

/// The vector load that reads the whole group at once: 4-byte loads of
/// one type covering every byte of an 8- or 16-byte struct at its stride,
/// read as one `float2`/`float4` (`int2`/`int4`) from the lowest member's
/// address aligned to the struct. Said only where that load is ideal in
/// every warp.
fn vector_read(
    m: &Module,
    k: &KernelAnalysis,
    members: &[(usize, i128)],
    stride: i64,
) -> Option<VectorRead> {
    let size = stride.unsigned_abs();
    if !matches!(size, 8 | 16) {
        return None;
    }
    let mut offsets: Vec<i128> = members.iter().map(|&(_, d)| d).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let fields = (0..size as i128 / 4).map(|i| 4 * i).collect::<Vec<_>>();
    let sites = || members.iter().map(|&(t, _)| &k.sites[t]);
    let loads = sites().all(|t| t.kind == SiteKind::Load && t.bytes == 4 && t.piece.is_none());
    if !loads || offsets != fields {
        return None;
    }
    let kind = |t: &Site| {
        let f = m.func(t.func);
        m.types.kind(f.inst(t.inst).ty).clone()
    };
    let first = kind(&k.sites[members[0].0]);
    if sites().any(|t| kind(t) != first) {
        return None;
    }
    let ty = match (first, size) {
        (TypeKind::Float, 8) => "float2",
        (TypeKind::Float, _) => "float4",
        (TypeKind::Int(32), 8) => "int2",
        (TypeKind::Int(32), _) => "int4",
        _ => return None,
    };
    let &(lowest, _) = members.iter().find(|&&(_, d)| d == 0)?;
    let bytes = i128::from(size);
    let mut sectors = 0;
    for wa in addresses::per_warp(m, k, &k.sites[lowest]) {
        match wa {
            WarpAddresses::Idle => {}
            WarpAddresses::Offsets { may, d, base, .. } => {
                let first = d[may.trailing_zeros() as usize];
                let base = addresses::aligned(base, first, size);
                let most = WarpAddresses::residues(base, SECTOR)
                    .into_iter()
                    .map(|r| pieces(&d, may, r, bytes, SECTOR).len() as u64)
                    .max()
                    .unwrap_or(0);
                if most > ceil_div(distinct_bytes(&d, may, bytes), SECTOR) as u64 {
                    return None;
                }
                sectors = sectors.max(most);
            }
            WarpAddresses::Unknown { .. } => return None,
        }
    }
    (sectors > 0).then_some(VectorRead {
        ty,
        bytes: size,
        sectors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{FileId, FuncId, InstId, SourcePos, Value};

    fn load_at(line: u32, col: u32) -> Site {
        Site {
            kind: SiteKind::Load,
            func: FuncId::new(0),
            inst: InstId::new(0),
            pos: Some(SourcePos {
                file: FileId::new(0),
                line,
                col,
            }),
            space: Some(Space::Global),
            bytes: 4,
            offset: 0,
            align: 4,
            repeat: Repeat::Once,
            piece: None,
            assumed_space: false,
            thread_dependent: true,
            why: Vec::new(),
            value: Value::Arg(0),
        }
    }

    fn siblings(with: &[(u32, u32)], union: u64, ideal: u64, extra: u64) -> Siblings {
        Siblings {
            with: with
                .iter()
                .map(|&(line, column)| SiblingAt {
                    kind: "load",
                    line,
                    column,
                })
                .collect(),
            pieces: 0,
            accesses: with.len() as u64 + 1,
            union,
            ideal,
            extra_requests: extra,
            vector: None,
        }
    }

    #[test]
    fn the_message_names_the_siblings_and_what_the_group_wastes() {
        let s = load_at(70, 43);
        // nn's pair: every byte used.
        assert_eq!(
            siblings(&[(70, 81)], 8, 8, 1).text(&s),
            "with the load at column 81 of this line it uses every byte it fetches: one extra request, no extra DRAM traffic"
        );
        // Two fields of a 24-byte struct: 24 sectors for 8 sectors' bytes.
        assert_eq!(
            siblings(&[(70, 60), (70, 50)], 24, 8, 5).text(&s),
            "with the loads at columns 50 and 60 of this line together they fetch 24 sectors for 8 sectors of bytes: 16 excess from DRAM, 5 extra requests"
        );
        // Siblings on other lines are named by line and column.
        assert_eq!(
            siblings(&[(71, 5), (72, 5)], 12, 12, 2).text(&s),
            "with the loads at 71:5 and 72:5 it uses every byte it fetches: 2 extra requests, no extra DRAM traffic"
        );
        // Loads clang hoisted to one place.
        assert_eq!(
            siblings(&[(70, 43), (70, 43), (70, 43)], 32, 32, 6).text(&s),
            "with the 3 other loads at this column it uses every byte it fetches: 6 extra requests, no extra DRAM traffic"
        );
        // A group's DRAM excess is shared equally.
        assert_eq!(
            siblings(&[(70, 60), (70, 50)], 24, 8, 5).dram_excess(),
            16.0 / 3.0
        );
        assert_eq!(siblings(&[(70, 81)], 8, 8, 1).dram_excess(), 0.0);
    }

    #[test]
    fn residues_every_member_allows() {
        // One base known mod 256 (a cudaMalloc pointer plus 0), another
        // fact about it only mod 4: the exact residue stays.
        let bases = [Congruence::new(4, 0), Congruence::new(256, 64)];
        assert_eq!(residues(&bases, 32), vec![0]);
        assert_eq!(residues(&bases, 128), vec![64]);
    }
}
