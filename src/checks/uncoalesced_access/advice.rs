//! What the uncoalesced-access hint advises, worked out from the access:
//!
//! * **a register accumulator** for a read-modify-write in a loop at an
//!   address the loop does not change (`out[i] += …` per iteration): kept
//!   in a register and stored once after the loop, the access runs once
//!   per entry instead of once per iteration;
//! * **a local copy** of a structure each thread updates in a loop (a
//!   random generator's state), read back from global memory otherwise;
//! * **a structure of arrays** only where the lanes step whole structs of
//!   the lane stride's size (`p[i].lat`), not wherever a stride happens to
//!   be an odd size (a transpose at `height = 7`);
//! * **swapping the thread dimensions** where `threadIdx.y` steps one
//!   element and `threadIdx.x` does not, with the sectors per request the
//!   swapped index gives, worked out on each warp's lanes;
//! * **lanes along the loop** where a loop steps the address one element
//!   and neighbouring lanes are rows apart (not in a recurrence);
//! * **a compact array** where the lanes read a sparse subset of a 1-D
//!   array at a parameter's spacing (a scan's level), and otherwise
//! * **the array transposed** where each lane has its own row.

use super::Sectors;
use crate::acf::expr::{Atom, AtomId, Pointer, Uniform};
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::checks::addresses;
use crate::graph::loops::LoopId;
use crate::graph::FunctionGraphs;
use crate::hw::SECTOR_BYTES;
use crate::ir::intrinsics::Dim;
use crate::ir::{Function, InstId, Opcode, SiteKind, Value};
use crate::memory::fields::struct_strides;
use crate::memory::Space;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Advice {
    /// A store every iteration to an address the loop around it keeps.
    Accumulate,
    /// Lanes read one field of `struct_bytes`-byte structures.
    Fields { struct_bytes: u64 },
    /// Each lane updates its own `struct_bytes`-byte structure in a loop,
    /// reading back what it writes (a random generator's state).
    LocalCopy { struct_bytes: u64 },
    /// `threadIdx.x` and `threadIdx.y` swapped in the index: the most
    /// sectors a request then takes.
    Swap { sectors: u64 },
    /// A loop around the access steps one element (`m[r·COLS + c]` with
    /// `r` the lane's): lanes on neighbouring iterations' elements instead
    /// take at most `sectors` per request.
    LanesAlongLoop { counter: String, sectors: u64 },
    /// Each lane its own row, a sector or more from its neighbour's:
    /// transposed, the lanes' elements side by side take at most
    /// `sectors`.
    Transposed { sectors: u64 },
    /// Lanes read a sparse subset of a 1-D array, spaced by a parameter
    /// that also places them (`data[2·iter·t + iter − 1]`): no row to
    /// transpose; a compact copy of those elements takes `sectors`.
    Compact { sectors: u64 },
}

impl Advice {
    pub fn hint(&self, sec: &Sectors, bytes: u64) -> String {
        match self {
            Advice::Accumulate => "the loop stores to this address on every iteration, and the address does not change in it: accumulate in a register and store once after the loop".to_string(),
            Advice::LocalCopy { struct_bytes } => format!(
                "each thread updates its own {struct_bytes}-byte structure in this loop, reading back what it writes: copy it to a local variable before the loop, work on the copy and store it back once after the loop"
            ),
            Advice::Compact { sectors } => format!(
                "lanes read a sparse subset of the array, spaced by a parameter that also places them (a level of a tree or scan): where an earlier step produces these elements, have it also write them to a compact array (the k-th at k) and read that here: {sectors} sectors per request (ideal {})",
                sec.ideal
            ),
            Advice::Fields { struct_bytes } => format!(
                "lanes read one field of an array of {struct_bytes}-byte structures: a structure of arrays (one array per field) makes them contiguous, {} sectors per request",
                sec.ideal
            ),
            Advice::LanesAlongLoop { counter, sectors } => format!(
                "each step of the loop on {counter} moves {bytes} bytes while neighbouring lanes are far apart: let neighbouring lanes take neighbouring values of {counter} (a warp per row, its lanes striding the loop by 32, then a shuffle reduction): {sectors} sectors per request (ideal {})",
                sec.ideal
            ),
            Advice::Transposed { sectors } => format!(
                "each lane walks its own row, a sector or more from its neighbour's: store the array transposed (element [r][c] at [c][r]) so that neighbouring lanes' elements are adjacent, or give neighbouring lanes neighbouring columns: {sectors} sectors per request (ideal {})",
                sec.ideal
            ),
            Advice::Swap { sectors } => format!(
                "swap the roles of threadIdx.x and threadIdx.y in the kernel: threadIdx.x then steps {bytes} bytes here, {sectors} sectors per request (ideal {}), and no other global access of the kernel takes more sectors than now",
                sec.ideal
            ),
        }
    }
}

/// The advice for `site` with figure `sec`, if one of these applies.
pub fn advise(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    site: &Site,
    sec: &Sectors,
) -> Option<Advice> {
    if site.kind == SiteKind::Atomic || sec.full_max <= sec.ideal {
        return None;
    }
    if read_modify_write(a, site) {
        return Some(Advice::Accumulate);
    }
    let stride = sec.stride.map(i64::unsigned_abs);
    if let Some(s) = stride.filter(|&s| s > site.bytes) {
        if struct_strides(a.module, a.module.func(site.func), site.value).contains(&s) {
            if updated_in_loop(a, site) {
                return Some(Advice::LocalCopy { struct_bytes: s });
            }
            return Some(Advice::Fields { struct_bytes: s });
        }
    }
    if let Some(sectors) = swapped(k, site, sec) {
        return Some(Advice::Swap { sectors });
    }
    if !recurrence(a, site) && reduction(a, site) {
        if let Some(along) = along_loop(a, k, site, sec) {
            return Some(along);
        }
    }
    if let Some(sectors) = compact(k, site, sec) {
        return Some(Advice::Compact { sectors });
    }
    transposed(k, site, sec)
}

/// The sectors a request takes with the lanes' elements side by side,
/// where the address is a sparse 1-D walk: the `threadIdx.x` term's
/// coefficient holds a parameter and every other uniform term (but the
/// base pointer's) holds it too, so no independent column places the
/// lanes (`Size·t + c` with a separate `c` is a matrix's column instead),
/// and a term of the parameter alone offsets them.
fn compact(k: &KernelAnalysis, site: &Site, sec: &Sectors) -> Option<u64> {
    let acf = &k.acf;
    let &c = acf.contexts(site.func).first()?;
    let p = acf.arena.poly(acf.expr(c, site.value)?);
    let is_tid = |a: &AtomId| matches!(acf.arena.atom(*a), Atom::Tid(_));
    let param = |a: &AtomId| {
        matches!(
            acf.arena.atom(*a),
            Atom::Uniform(Uniform::Param(_, Pointer::No))
        )
    };
    let mut spacing: Vec<AtomId> = Vec::new();
    for (mono, _) in &p.terms {
        if mono
            .iter()
            .any(|a| matches!(acf.arena.atom(*a), Atom::Tid(Dim::X)))
        {
            if !mono.iter().all(|a| is_tid(a) || param(a)) || mono.len() != 2 {
                return None;
            }
            spacing.extend(mono.iter().filter(|a| param(a)));
        }
    }
    if spacing.is_empty() {
        return None;
    }
    let placed_by_spacing = p.terms.iter().all(|(mono, _)| {
        let base = matches!(
            mono.as_slice(),
            [a] if matches!(acf.arena.atom(*a), Atom::Uniform(Uniform::Param(_, Pointer::Yes)) | Atom::Uniform(Uniform::Global(_)))
        );
        mono.is_empty() || base || spacing.iter().all(|s| mono.contains(s))
    });
    // The parameter also places the lanes (`+ iter − 1`); with no such
    // term the lanes start their rows (`id[y·w]`): a matrix's column 0.
    spacing.sort_unstable();
    let offset = p
        .terms
        .iter()
        .any(|(mono, c)| *c != 0 && mono.as_slice() == spacing.as_slice());
    if !placed_by_spacing || !offset {
        return None;
    }
    let bytes = i128::from(site.bytes.max(1));
    let sectors = most_sectors(k, bytes, Some(bytes), Some(0))?;
    (sectors < sec.full_max).then_some(sectors)
}

/// Lanes a sector or more apart along threadIdx.x (a constant stride of
/// 32 bytes or more, or a parameter's multiple): the sectors the lanes
/// take with their elements side by side instead.
fn transposed(k: &KernelAnalysis, site: &Site, sec: &Sectors) -> Option<Advice> {
    let bytes = i128::from(site.bytes.max(1));
    let [x, y, _] = addresses::strides(&k.acf, site);
    let far = match x? {
        Some(s) => s.abs() >= i128::from(SECTOR_BYTES),
        None => true,
    };
    if !far {
        return None;
    }
    let sectors = most_sectors(k, bytes, Some(bytes), y.unwrap_or(Some(0)))?;
    (sectors < sec.full_max).then_some(Advice::Transposed { sectors })
}

/// Whether the loop around `site` reduces into a value it carries (`sum
/// += a[r·N + k]`): a phi at its header updated from itself and something
/// else. Only then do lanes on neighbouring iterations (and a shuffle
/// reduction) fit; a loop that maps each element wants the layout changed.
fn reduction(a: &ModuleAnalysis<'_>, site: &Site) -> bool {
    let Some((func, g, l)) = loop_around(a, site) else {
        return false;
    };
    let lp = g.loops.get(l);
    let inside = |v: Value| matches!(v, Value::Inst(i) if lp.blocks.contains(&func.inst(i).block));
    // The update's arithmetic down to its leaves (an unrolled `s + a + b`
    // nests): the phi among them, and a value the loop computes (not a
    // counter's constant or loop-invariant step).
    let update_of = |phi: InstId, v: Value| {
        let (mut stack, mut seen_phi, mut fed) = (vec![(v, 0)], false, false);
        while let Some((v, depth)) = stack.pop() {
            if v == Value::Inst(phi) {
                seen_phi = true;
                continue;
            }
            let arith = match v {
                Value::Inst(i) if depth < 8 => {
                    let inst = func.inst(i);
                    ACCUMULATING.contains(&inst.op).then_some(inst)
                }
                _ => None,
            };
            match arith {
                Some(inst) => stack.extend(inst.operands.iter().map(|&o| (o, depth + 1))),
                None => fed |= inside(v),
            }
        }
        seen_phi && fed
    };
    func.blocks[lp.header.index()].insts.iter().any(|&phi| {
        let inst = func.inst(phi);
        inst.op == Opcode::Phi
            && inst.operands.iter().any(|&v| {
                matches!(v, Value::Inst(u) if ACCUMULATING.contains(&func.inst(u).op))
                    && update_of(phi, v)
            })
    })
}

/// The operators a running sum or product is updated with.
const ACCUMULATING: [Opcode; 6] = [
    Opcode::Add,
    Opcode::FAdd,
    Opcode::Sub,
    Opcode::FSub,
    Opcode::Mul,
    Opcode::FMul,
];

/// The loop around `site`, with its function and graphs.
fn loop_around<'a>(
    a: &'a ModuleAnalysis<'_>,
    site: &Site,
) -> Option<(&'a Function, &'a FunctionGraphs, LoopId)> {
    let func = a.module.func(site.func);
    let g = a.graphs.func(site.func);
    let l = g.loops.loop_of(func.inst(site.inst).block)?;
    Some((func, g, l))
}

/// The bases (`base_of`) of the arrays loop `l` loads from and stores to.
fn loop_bases(func: &Function, g: &FunctionGraphs, l: LoopId) -> (Vec<Value>, Vec<Value>) {
    let (mut loaded, mut stored) = (Vec::new(), Vec::new());
    for &b in &g.loops.get(l).blocks {
        for &i in &func.blocks[b.index()].insts {
            let inst = func.inst(i);
            let Some(base) = inst.address().and_then(|x| base_of(func, x)) else {
                continue;
            };
            match inst.op {
                Opcode::Load => loaded.push(base),
                Opcode::Store => stored.push(base),
                _ => {}
            }
        }
    }
    (loaded, stored)
}

/// Whether the loop around `site` stores to the array `site` accesses
/// (the same base): a structure updated in place every iteration.
fn updated_in_loop(a: &ModuleAnalysis<'_>, site: &Site) -> bool {
    let Some((func, g, l)) = loop_around(a, site) else {
        return false;
    };
    base_of(func, site.value).is_some_and(|base| loop_bases(func, g, l).1.contains(&base))
}

/// Whether the loop around `site` loads an array it also stores to: a
/// recurrence (`X[i] -= X[i - 1]·A[i]`) whose iterations cannot go to
/// different lanes, whichever of its accesses this is.
fn recurrence(a: &ModuleAnalysis<'_>, site: &Site) -> bool {
    let Some((func, g, l)) = loop_around(a, site) else {
        return false;
    };
    let (loaded, stored) = loop_bases(func, g, l);
    loaded.iter().any(|b| stored.contains(b))
}

/// The value an address steps from: through GEPs and casts to an
/// argument, a global or another instruction.
fn base_of(func: &Function, mut v: Value) -> Option<Value> {
    for _ in 0..16 {
        let Value::Inst(i) = v else {
            return Some(v);
        };
        let inst = func.inst(i);
        match inst.op {
            Opcode::GetElementPtr | Opcode::AddrSpaceCast | Opcode::BitCast => {
                v = *inst.operands.first()?;
            }
            _ => return Some(v),
        }
    }
    None
}

/// A counter of a loop around the access whose one step moves the address
/// by one element, while `threadIdx.x` moves it further.
fn along_loop(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    site: &Site,
    sec: &Sectors,
) -> Option<Advice> {
    let bytes = i128::from(site.bytes.max(1));
    if sec.stride.is_none_or(|s| i128::from(s).abs() <= bytes) {
        return None;
    }
    let acf = &k.acf;
    let &c = acf.contexts(site.func).first()?;
    let p = acf.arena.poly(acf.expr(c, site.value)?);
    let phi = p.terms.iter().find_map(|(mono, coeff)| {
        match (mono.as_slice(), acf.arena.atom(*mono.first()?)) {
            ([_], Atom::Uniform(Uniform::LoopPhi(_, i))) if coeff.abs() == bytes => Some(*i),
            _ => None,
        }
    })?;
    let sectors = most_sectors(k, bytes, Some(bytes), Some(0))?;
    let counter = crate::checks::divergent_branch::source_name(
        &a.module.counter_label(a.module.func(site.func), phi),
    );
    (sectors < sec.full_max).then_some(Advice::LanesAlongLoop { counter, sectors })
}

/// Whether the loop around `site` stores to its address, which is defined
/// outside that loop.
fn read_modify_write(a: &ModuleAnalysis<'_>, site: &Site) -> bool {
    let Some((func, g, l)) = loop_around(a, site) else {
        return false;
    };
    let invariant = match site.value {
        Value::Inst(i) => !g.loops.contains(l, func.inst(i).block),
        Value::Arg(_) | Value::Global(_) | Value::Const(_) => true,
        _ => false,
    };
    // A store there repeats every iteration (clang often keeps the load
    // before the loop and the running value in a register already); a
    // load there is one half of the pair when the loop stores it too.
    let stored_in_loop = || {
        g.loops.get(l).blocks.iter().any(|&b| {
            func.blocks[b.index()].insts.iter().any(|&i| {
                let inst = func.inst(i);
                inst.op == Opcode::Store && inst.address() == Some(site.value)
            })
        })
    };
    invariant && matches!(site.kind, SiteKind::Load | SiteKind::Store) && stored_in_loop()
}

/// The most sectors a request of `site` takes with the roles of
/// `threadIdx.x` and `threadIdx.y` swapped in the kernel, where that makes
/// `threadIdx.x` step one element and no other global access of the
/// kernel takes more sectors than it does now; `None` otherwise.
fn swapped(k: &KernelAnalysis, site: &Site, sec: &Sectors) -> Option<u64> {
    let [x, y, _] = addresses::strides(&k.acf, site);
    let bytes = i128::from(site.bytes.max(1));
    if y != Some(Some(bytes)) && y != Some(Some(-bytes)) {
        return None;
    }
    if x == Some(Some(bytes)) || x == Some(Some(-bytes)) {
        return None;
    }
    let after = most_sectors(k, bytes, y?, x?)?;
    if after >= sec.full_max {
        return None;
    }
    let others_fine = k
        .sites
        .iter()
        .filter(|s| {
            s.space == Some(Space::Global)
                && s.thread_dependent
                && s.kind != SiteKind::Branch
                && !std::ptr::eq(*s, site)
        })
        .all(|s| {
            let [x, y, _] = addresses::strides(&k.acf, s);
            let b = i128::from(s.bytes.max(1));
            let stride = |d: Option<Option<i128>>| d.unwrap_or(Some(0));
            let before = most_sectors(k, b, stride(x), stride(y));
            let now = most_sectors(k, b, stride(y), stride(x));
            matches!((before, now), (Some(b), Some(n)) if n <= b)
        });
    others_fine.then_some(after)
}

/// The most sectors a request of `bytes` per lane takes over the block's
/// warps when `threadIdx.x` steps `sx` bytes and `threadIdx.y` steps `sy`
/// (`None`: a parameter's multiple, rows far apart), the base at its worst
/// element-aligned place in a sector, and each row of lanes at its own
/// where the step between rows is a parameter's.
fn most_sectors(
    k: &KernelAnalysis,
    bytes: i128,
    sx: Option<i128>,
    sy: Option<i128>,
) -> Option<u64> {
    let sector = i128::from(SECTOR_BYTES);
    let shifts: Vec<i128> = (0..sector)
        .step_by(bytes.clamp(1, sector) as usize)
        .collect();
    let touched = |offsets: &[i128], shift: i128| {
        let mut set = BTreeSet::new();
        for &at in offsets {
            let (lo, hi) = (at + shift, at + shift + bytes - 1);
            set.extend(lo.div_euclid(sector)..=hi.div_euclid(sector));
        }
        set.len() as u64
    };
    let worst = |offsets: &[i128]| {
        shifts
            .iter()
            .map(|&r| touched(offsets, r))
            .max()
            .unwrap_or(0)
    };
    let warp = |w: &crate::acf::warp::Warp| -> Option<u64> {
        let lanes: Vec<[i128; 3]> = crate::acf::lanes::lanes(w.exists)
            .map(|l| w.tid[l].map(i128::from))
            .collect();
        // The dimension whose step is a parameter's groups the lanes.
        let (step, group, within) = match (sx, sy) {
            (Some(a), Some(b)) => (a, None, b),
            (None, Some(b)) => (b, Some(0), 0),
            (Some(a), None) => (a, Some(1), 0),
            (None, None) => return None,
        };
        Some(match group {
            None => {
                let all: Vec<i128> = lanes.iter().map(|t| step * t[0] + within * t[1]).collect();
                worst(&all)
            }
            Some(g) => {
                let other = 1 - g;
                let mut keys: Vec<i128> = lanes.iter().map(|t| t[g]).collect();
                keys.sort_unstable();
                keys.dedup();
                keys.iter()
                    .map(|&key| {
                        let row: Vec<i128> = lanes
                            .iter()
                            .filter(|t| t[g] == key)
                            .map(|t| step * t[other])
                            .collect();
                        worst(&row)
                    })
                    .sum()
            }
        })
    };
    k.acf
        .warps
        .iter()
        .map(warp)
        .collect::<Option<Vec<u64>>>()?
        .into_iter()
        .max()
}
