//! What the uncoalesced-access hint advises, worked out from the access:
//!
//! * **a register accumulator** for a read-modify-write in a loop at an
//!   address the loop does not change (`out[i] += …` per iteration): kept
//!   in a register and stored once after the loop, the access runs once
//!   per entry instead of once per iteration;
//! * **a structure of arrays** only where the lanes step whole structs of
//!   the lane stride's size (`p[i].lat`), not wherever a stride happens to
//!   be an odd size (a transpose at `height = 7`);
//! * **swapping the thread dimensions** where `threadIdx.y` steps one
//!   element and `threadIdx.x` does not, with the sectors per request the
//!   swapped index gives, worked out on each warp's lanes.

use super::Sectors;
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::checks::addresses;
use crate::hw::SECTOR_BYTES;
use crate::ir::{Opcode, SiteKind, Value};
use crate::memory::fields::struct_strides;
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Advice {
    /// A store every iteration to an address the loop around it keeps.
    Accumulate,
    /// Lanes read one field of `struct_bytes`-byte structures.
    Fields { struct_bytes: u64 },
    /// `threadIdx.x` and `threadIdx.y` swapped in the index: the most
    /// sectors a request then takes.
    Swap { sectors: u64 },
}

impl Advice {
    pub fn hint(&self, sec: &Sectors, bytes: u64) -> String {
        match self {
            Advice::Accumulate => "the loop stores to this address on every iteration, and the address does not change in it: accumulate in a register and store once after the loop".to_string(),
            Advice::Fields { struct_bytes } => format!(
                "lanes read one field of an array of {struct_bytes}-byte structures: a structure of arrays (one array per field) makes them contiguous, {} sectors per request",
                sec.ideal
            ),
            Advice::Swap { sectors } => format!(
                "swap the roles of threadIdx.x and threadIdx.y in this index, if the data's other accesses allow it: threadIdx.x then steps {bytes} bytes, {sectors} sectors per request (ideal {})",
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
            return Some(Advice::Fields { struct_bytes: s });
        }
    }
    swapped(k, site, sec).map(|sectors| Advice::Swap { sectors })
}

/// Whether the loop around `site` stores to its address, which is defined
/// outside that loop.
fn read_modify_write(a: &ModuleAnalysis<'_>, site: &Site) -> bool {
    let m = a.module;
    let func = m.func(site.func);
    let g = a.graphs.func(site.func);
    let block = func.inst(site.inst).block;
    let Some(l) = g.loops.loop_of(block) else {
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

/// The most sectors a request of `site` takes with `threadIdx.x` and
/// `threadIdx.y` swapped in its index, where `threadIdx.y` steps one
/// element and `threadIdx.x` something else; `None` otherwise or when it
/// is no better. The base is taken at its worst element-aligned place in
/// a sector, and with a stride that is a parameter, each row of lanes at
/// its own worst place.
fn swapped(k: &KernelAnalysis, site: &Site, sec: &Sectors) -> Option<u64> {
    let [x, y, _] = addresses::strides(&k.acf, site);
    let bytes = i128::from(site.bytes.max(1));
    let Some(Some(sy)) = y else {
        return None;
    };
    if sy.abs() != bytes {
        return None;
    }
    let sx = match x? {
        Some(s) if s.abs() == bytes => return None,
        Some(s) => Some(s),
        None => None,
    };
    let sector = i128::from(SECTOR_BYTES);
    let shifts: Vec<i128> = (0..sector).step_by(bytes as usize).collect();
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
    let most = k
        .acf
        .warps
        .iter()
        .map(|w| {
            let lanes: Vec<[i128; 3]> = crate::acf::lanes::lanes(w.exists)
                .map(|l| w.tid[l].map(i128::from))
                .collect();
            match sx {
                Some(sx) => {
                    let all: Vec<i128> = lanes.iter().map(|t| sy * t[0] + sx * t[1]).collect();
                    worst(&all)
                }
                None => {
                    let mut rows: Vec<i128> = lanes.iter().map(|t| t[1]).collect();
                    rows.sort_unstable();
                    rows.dedup();
                    rows.iter()
                        .map(|&r| {
                            let row: Vec<i128> = lanes
                                .iter()
                                .filter(|t| t[1] == r)
                                .map(|t| sy * t[0])
                                .collect();
                            worst(&row)
                        })
                        .sum()
                }
            }
        })
        .max()?;
    (most < sec.full_max).then_some(most)
}
