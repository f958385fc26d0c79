//! The cost model (RaCuda Table 1) on our IR, as the simulator counts it:
//! what one execution of an instruction, a CFG edge or a divergent branch
//! costs a warp under each metric.
//!
//! * `steps`: one per instruction the warp issues (markers such as
//!   `llvm.lifetime` issue none) plus one per phi copy on each edge a group
//!   of lanes takes; a divergent branch takes both edges.
//! * `sectors`: per global access, the most sectors the ACF checks allow
//!   for it ([`crate::checks::uncoalesced_access::Sectors`]`::max`); a
//!   uniform access touches the sectors of one lane.
//! * `conflicts`: per shared access, the extra wavefronts: at most the
//!   check's most wavefronts past the ideal one per phase
//!   ([`Conflict::excess`]); none for a uniform access (a broadcast), but
//!   an atomic's lanes on one address serialise.
//! * `divwarps`: one per execution of a branch that can split the warp
//!   (Q:If4, Q:While2); a branch proven uniform pays nothing.
//!
//! An access of a loop whose counter the launch fixes also has its figure
//! per iteration, summed into a [`PerEntry`] cost that an entry into the
//! loop may pay instead of one worst figure per execution
//! ([`super::sweeps`] says where).

use super::rat::Rat;
use crate::analysis::KernelAnalysis;
use crate::checks::bank_conflict::Conflict;
use crate::checks::divergent_branch::{DivClass, Divergence};
use crate::checks::uncoalesced_access::Sectors;
use crate::checks::SiteFigures;
use crate::dataflow::FastMap as HashMap;
use crate::graph::LoopId;
use crate::hw;
use crate::ir::SiteKind;
use crate::ir::{BlockId, Callee, InstId, Intrinsic, Module, Opcode};
use crate::memory::Space;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    Sectors,
    Conflicts,
    Divwarps,
    Steps,
}

impl Metric {
    pub const ALL: [Metric; 4] = [
        Metric::Sectors,
        Metric::Conflicts,
        Metric::Divwarps,
        Metric::Steps,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Sectors => "sectors",
            Metric::Conflicts => "conflicts",
            Metric::Divwarps => "divwarps",
            Metric::Steps => "steps",
        }
    }

    pub fn parse(s: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// User weights for `steps`: per instruction (by opcode mnemonic, or
/// `inst` for all), per phi copy and per divergent branch.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    pub inst: Rat,
    pub opcodes: BTreeMap<String, Rat>,
    pub phi: Rat,
    pub divergence: Rat,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            inst: Rat::ONE,
            opcodes: BTreeMap::new(),
            phi: Rat::ONE,
            divergence: Rat::ZERO,
        }
    }
}

impl Weights {
    /// Reads `key = value` lines (`#` starts a comment): `inst`, `phi`,
    /// `divergence` or an opcode such as `load` or `fdiv`; values are
    /// nonnegative integers or fractions `p/q`.
    pub fn parse(text: &str) -> Result<Weights, String> {
        let mut w = Weights::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let err = |what: &str| format!("line {}: {what}: '{line}'", n + 1);
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| err("expected KEY = VALUE"))?;
            let v = v.trim();
            let value = match v.split_once('/') {
                Some((p, q)) => {
                    let (p, q) = (p.trim().parse::<i128>(), q.trim().parse::<i128>());
                    match (p, q) {
                        (Ok(p), Ok(q)) if q > 0 => Rat::new(p, q),
                        _ => return Err(err("expected a number")),
                    }
                }
                None => Rat::int(v.parse::<i128>().map_err(|_| err("expected a number"))?),
            };
            if value < Rat::ZERO {
                return Err(err("weights must not be negative"));
            }
            match k.trim() {
                "inst" => w.inst = value,
                "phi" => w.phi = value,
                "divergence" => w.divergence = value,
                op => {
                    w.opcodes.insert(op.to_string(), value);
                }
            }
        }
        Ok(w)
    }
}

/// Per-instruction costs of one kernel under one metric, and what a
/// divergent branch and a phi copy cost.
pub struct Costs {
    pub inst: HashMap<InstId, Rat>,
    pub phi: Rat,
    pub divergence: Rat,
    /// Accesses of swept loops, costed per execution or per entry into
    /// the loop (not in `inst`).
    pub per_entry: Vec<PerEntry>,
}

/// An access of a loop whose counter the launch fixes (the ACF's ladder),
/// with its figure on each value of the counter: `each` per execution (the
/// worst value's), or `sum` (every value's) per entry into `lp`, where
/// [`super::sweeps::swept_blocks`] shows a warp runs it at most once per
/// iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct PerEntry {
    pub lp: LoopId,
    pub inst: InstId,
    pub block: BlockId,
    pub each: Rat,
    pub sum: Rat,
}

/// The blocks whose branch can split a warp: thread-dependent, and not
/// shown uniform in every warp by the divergence check.
pub fn divergent_branches(
    m: &Module,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
) -> std::collections::HashSet<BlockId> {
    let f = m.func(k.kernel);
    k.sites
        .iter()
        .zip(figures)
        .filter(|(s, _)| s.func == k.kernel && s.kind == SiteKind::Branch)
        .filter(|(s, fig)| {
            s.thread_dependent
                && !fig
                    .get::<Divergence>()
                    .is_some_and(|d| d.class == DivClass::None && fig.reason.is_none())
        })
        .map(|(s, _)| f.inst(s.inst).block)
        .collect()
}

/// Why no bound can be had for a metric (an instruction we cannot cost).
pub type Unboundable = String;

/// Sectors one lane's access of `bytes` at alignment `align` touches.
pub fn uniform_sectors(bytes: u64, align: u64) -> u64 {
    let fits = bytes <= hw::SECTOR_BYTES && bytes.is_power_of_two() && align >= bytes;
    if fits {
        1
    } else {
        bytes.div_ceil(hw::SECTOR_BYTES) + 1
    }
}

/// Builds the costs of every instruction of `k`'s kernel.
pub fn costs(
    m: &Module,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    metric: Metric,
    weights: &Weights,
) -> Result<Costs, Unboundable> {
    let f = m.func(k.kernel);
    let mut out = Costs {
        inst: HashMap::default(),
        phi: if metric == Metric::Steps {
            weights.phi
        } else {
            Rat::ZERO
        },
        divergence: match metric {
            Metric::Divwarps => Rat::ONE,
            Metric::Steps => weights.divergence,
            _ => Rat::ZERO,
        },
        per_entry: Vec::new(),
    };
    for (s, fig) in k.sites.iter().zip(figures) {
        if s.func != k.kernel {
            continue;
        }
        let inst = f.inst(s.inst);
        if s.kind == SiteKind::Branch {
            continue;
        }
        let c = access_cost(s, fig, metric)?;
        let rows = match (metric, s.space) {
            (Metric::Sectors, Some(Space::Global)) => fig
                .get::<Sectors>()
                .and_then(|x| x.iterations.as_ref())
                .map(|its| its.rows.iter().map(|r| r.max).collect()),
            (Metric::Conflicts, Some(Space::Shared)) => fig
                .get::<Conflict>()
                .and_then(|x| x.iterations.as_ref())
                .map(|its| its.rows.iter().map(|r| r.excess).collect()),
            _ => None,
        };
        match per_entry(k, (s, inst.block), fig, (rows, c)) {
            Some(p) => out.per_entry.push(p),
            None if !c.is_zero() => {
                let e = out.inst.entry(s.inst).or_insert(Rat::ZERO);
                *e = *e + c;
            }
            None => {}
        }
    }
    for b in f.block_ids() {
        for &i in &f.blocks[b.index()].insts {
            let inst = f.inst(i);
            if let Some(Callee::Direct(c)) = inst.callee() {
                if !m.func(c).is_declaration {
                    return Err(format!(
                        "it calls the device function {}",
                        m.func(c).demangled
                    ));
                }
            }
            if matches!(inst.callee(), Some(Callee::Indirect | Callee::InlineAsm(_))) {
                return Err("it calls through a pointer or inline asm".into());
            }
            if metric != Metric::Steps || inst.op == Opcode::Phi {
                continue;
            }
            let w = if matches!(
                m.called_intrinsic(inst),
                Some(Intrinsic::NoOp | Intrinsic::Assume)
            ) {
                Rat::ZERO
            } else {
                weights
                    .opcodes
                    .get(inst.op.mnemonic())
                    .copied()
                    .unwrap_or(weights.inst)
            };
            if !w.is_zero() {
                out.inst.insert(i, w);
            }
        }
    }
    Ok(out)
}

fn access_cost(
    s: &crate::analysis::Site,
    fig: &SiteFigures,
    metric: Metric,
) -> Result<Rat, Unboundable> {
    let bytes = s.bytes;
    let Some(requests) = s.requests() else {
        if matches!(metric, Metric::Sectors | Metric::Conflicts) {
            return Err("a block copy of unknown length".into());
        }
        return Ok(Rat::ZERO);
    };
    let align = s.align;
    let lanes = u64::from(hw::WARP_SIZE);
    let worst_sectors = lanes * (bytes.div_ceil(hw::SECTOR_BYTES) + 1);
    let phases = lanes / u64::from(hw::shared_phase_lanes(bytes.min(u64::from(u32::MAX)) as u32));
    let worst_conflicts = (hw::SHARED_BANKS - 1) * phases;
    let space = s.space.unwrap_or(Space::Unknown);
    let v = match (metric, space) {
        (Metric::Sectors, Space::Global) if !s.thread_dependent => uniform_sectors(bytes, align),
        (Metric::Sectors, Space::Global) => fig.get::<Sectors>().map_or(worst_sectors, |x| x.max),
        (Metric::Sectors, Space::Unknown) => worst_sectors,
        // A uniform load is a broadcast; a uniform atomic serialises.
        (Metric::Conflicts, Space::Shared) if !s.thread_dependent && s.kind != SiteKind::Atomic => {
            0
        }
        (Metric::Conflicts, Space::Shared) => {
            fig.get::<Conflict>().map_or(worst_conflicts, |c| c.excess)
        }
        (Metric::Conflicts, Space::Unknown) => worst_conflicts,
        _ => 0,
    };
    Ok(Rat::int(i128::from(v)) * Rat::int(i128::from(requests)))
}

/// Access `s` of a swept loop as a [`PerEntry`] cost: `each` per
/// execution, or its figures per value of the counter (`rows`, one per
/// value, as the check keeps them) summed per entry. A row above `each`,
/// the cost of any one execution (the whole figure may know more than the
/// rows: a guard `t <= m` whose `m` no row fixes), counts as `each`, so
/// the sum is never above `each` times the rows.
pub fn per_entry(
    k: &KernelAnalysis,
    (s, block): (&crate::analysis::Site, BlockId),
    fig: &SiteFigures,
    (rows, each): (Option<Vec<u64>>, Rat),
) -> Option<PerEntry> {
    if !s.thread_dependent || fig.reason.is_some() || s.requests() != Some(1) {
        return None;
    }
    let acf = &k.acf;
    let &[c] = acf.contexts(s.func) else {
        return None;
    };
    let ladder = acf.ladder(c, block)?;
    let rows = rows?;
    if rows.len() != ladder.values.len() {
        return None;
    }
    let sum = rows
        .iter()
        .fold(Rat::ZERO, |a, &x| a + Rat::int(i128::from(x)).min(each));
    Some(PerEntry {
        lp: ladder.lp,
        inst: s.inst,
        block,
        each,
        sum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse() {
        let w = Weights::parse("# costs\ninst = 2\nfdiv = 20\nphi = 1/2\ndivergence=8\n").unwrap();
        assert_eq!(w.inst, Rat::int(2));
        assert_eq!(w.opcodes["fdiv"], Rat::int(20));
        assert_eq!(w.phi, Rat::new(1, 2));
        assert_eq!(w.divergence, Rat::int(8));
        assert!(Weights::parse("inst 2").is_err());
        assert!(Weights::parse("inst = -1").is_err());
    }

    #[test]
    fn uniform_accesses_touch_one_lanes_sectors() {
        assert_eq!(uniform_sectors(4, 4), 1);
        assert_eq!(uniform_sectors(16, 16), 1);
        // Unaligned 8 bytes may straddle two sectors.
        assert_eq!(uniform_sectors(8, 4), 2);
        assert_eq!(uniform_sectors(64, 16), 3);
    }
}
