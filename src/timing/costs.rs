//! What each instruction of a kernel costs a warp in the static bounds:
//! an issue slot (a libdevice body's, for a call of an unlinked libdevice
//! function: [`crate::machine::libdevice`]), and the cycles until the
//! warp may issue again. Memory
//! instructions take the most sectors or wavefronts the checks allow for
//! them, so every latency here is at least what the simulator's cycle
//! mode gives the same instruction (both classify it with
//! [`class_of`]).

use crate::analysis::KernelAnalysis;
use crate::checks::bank_conflict::Conflict;
use crate::checks::uncoalesced_access::Sectors;
use crate::checks::SiteFigures;
use crate::cost::metric::{uniform_sectors, Costs};
use crate::cost::rat::Rat;
use crate::dataflow::FastMap as HashMap;
use crate::graph::FunctionGraphs;
use crate::ir::intrinsics::Intrinsic;
use crate::ir::SiteKind;
use crate::ir::{BlockId, InstId, Module};
use crate::machine::class::{class_of, uniform_wavefronts, worst_wavefronts, Access, Class};
use crate::machine::libdevice;
use crate::machine::Machine;
use crate::memory::Space;

/// One instruction's cost to a warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstCost {
    pub class: Class,
    /// Cycles until the warp may issue again, at most.
    pub latency: u64,
    /// Issue slots it takes: one, none for a marker, a libdevice body's
    /// for a call to one that is not linked.
    pub issues: u64,
}

impl InstCost {
    /// Issue slots it takes.
    pub fn issues(&self) -> u64 {
        self.issues
    }
}

/// The costs of a kernel's instructions.
pub struct KernelCosts {
    pub insts: HashMap<InstId, InstCost>,
    /// The `__syncthreads()` calls.
    pub barriers: Vec<InstId>,
}

/// Each instruction's cost; `Err` for what the bounds do not model (a grid
/// barrier; device calls and inline asm are refused by the cost stage).
pub fn kernel_costs(
    m: &Module,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    machine: &Machine,
) -> Result<KernelCosts, String> {
    function_costs(m, k, k.kernel, figures, machine)
}

/// [`kernel_costs`] of one function the kernel reaches (`func`): its
/// instructions, its accesses at the kernel's figures for them.
pub fn function_costs(
    m: &Module,
    k: &KernelAnalysis,
    func: crate::ir::FuncId,
    figures: &[SiteFigures],
    machine: &Machine,
) -> Result<KernelCosts, String> {
    let f = m.func(func);
    let mut memory: HashMap<InstId, u64> = HashMap::default();
    for (s, fig) in k.sites.iter().zip(figures) {
        if s.func != func || s.kind == SiteKind::Branch {
            continue;
        }
        let inst = f.inst(s.inst);
        let space = s.space.unwrap_or(Space::Unknown);
        let align = s.align;
        let sectors = match s.thread_dependent {
            false => Some(uniform_sectors(s.bytes, align)),
            true => fig.get::<Sectors>().map(|x| x.max),
        };
        let wavefronts = match s.thread_dependent || s.kind == SiteKind::Atomic {
            false => Some(uniform_wavefronts(s.bytes)),
            true => fig.get::<Conflict>().map(|c| c.wavefronts.max),
        };
        let bound = |a| machine.site_bound(a, space, s.bytes, sectors, wavefronts);
        let block_copy = matches!(
            m.called_intrinsic(inst),
            Some(Intrinsic::MemCpy | Intrinsic::MemMove | Intrinsic::MemSet)
        );
        let l = match (s.kind, block_copy) {
            (_, true) => bound(Access::Load).max(bound(Access::Store)),
            (SiteKind::Store, false) => bound(Access::Store),
            _ => bound(Access::Load),
        };
        // A copy loop issues its request once per byte.
        let Some(requests) = s.requests() else {
            return Err("it runs a block copy of a length known only at run time".into());
        };
        *memory.entry(s.inst).or_insert(0) += l.saturating_mul(requests);
    }
    let mut out = KernelCosts {
        insts: HashMap::default(),
        barriers: Vec::new(),
    };
    for b in f.block_ids() {
        for &i in &f.blocks[b.index()].insts {
            let inst = f.inst(i);
            if inst.op == crate::ir::Opcode::Phi {
                continue;
            }
            if m.called_intrinsic(inst) == Some(Intrinsic::GridSync) {
                return Err(
                    "it waits at a grid-wide barrier (this_grid().sync()), which the bounds do not model"
                        .into(),
                );
            }
            let class = class_of(m, f, inst);
            // A call of an unlinked libdevice function: the body it stands
            // for, as the same kernel built with libdevice would inline it;
            // never less than the class's latency, which the simulator's
            // cycle mode gives the call.
            if let Some(body) = libdevice::called(m, inst) {
                let latency = machine
                    .body_latency(body)
                    .max(u64::from(machine.latency(class)));
                let issues = body.issues().max(1);
                out.insts.insert(
                    i,
                    InstCost {
                        class,
                        latency,
                        issues,
                    },
                );
                continue;
            }
            let latency = match class {
                Class::Memory => memory.get(&i).copied().unwrap_or_else(|| {
                    let worst = |a| machine.site_bound(a, Space::Unknown, 128, None, None);
                    worst(Access::Load).max(worst(Access::Store))
                }),
                Class::Barrier => {
                    out.barriers.push(i);
                    1 + u64::from(machine.barrier_cycles)
                }
                c => u64::from(machine.latency(c)),
            };
            let issues = u64::from(class != Class::Free);
            out.insts.insert(
                i,
                InstCost {
                    class,
                    latency,
                    issues,
                },
            );
        }
    }
    Ok(out)
}

impl KernelCosts {
    /// Per-instruction costs for the cost stage: each instruction's
    /// latency plus `wait` cycles per issue, each phi copy the same.
    pub fn as_costs(&self, machine: &Machine, wait: u64) -> Costs {
        let inst = self
            .insts
            .iter()
            .filter(|(_, c)| c.class != Class::Free)
            .map(|(&i, c)| (i, Rat::int(i128::from(c.latency + wait))))
            .collect();
        Costs {
            inst,
            phi: Rat::int(i128::from(u64::from(machine.phi_latency()) + wait)),
            divergence: Rat::ZERO,
            per_entry: Vec::new(),
        }
    }
}

/// `Err` naming the first barrier a warp may reach under thread-dependent
/// control (warps of a block could then meet at different barriers, and a
/// warp's path no longer bounds each stretch between barriers).
pub fn barriers_uniform(
    m: &Module,
    k: &KernelAnalysis,
    g: &FunctionGraphs,
    barriers: &[InstId],
) -> Result<(), String> {
    let f = m.func(k.kernel);
    let dependent: std::collections::HashSet<BlockId> = k
        .sites
        .iter()
        .filter(|s| s.func == k.kernel && s.kind == SiteKind::Branch && s.thread_dependent)
        .map(|s| f.inst(s.inst).block)
        .collect();
    for &i in barriers {
        let start = f.inst(i).block;
        let mut seen = vec![start];
        let mut work = vec![start];
        while let Some(b) = work.pop() {
            for &d in g.cdg.deps_of(b) {
                if dependent.contains(&d) {
                    let line = m.inst_pos(f, i).map_or(0, |p| p.line);
                    let branch = f.blocks[d.index()]
                        .insts
                        .last()
                        .and_then(|&t| m.inst_pos(f, t))
                        .map_or(0, |p| p.line);
                    return Err(format!(
                        "the barrier at line {line} is reached under the thread-dependent branch at line {branch}, so warps may meet at different barriers"
                    ));
                }
                if !seen.contains(&d) {
                    seen.push(d);
                    work.push(d);
                }
            }
        }
    }
    Ok(())
}

/// Per instruction, the most shared-memory wavefronts one execution by a
/// warp takes (for the shared-memory throughput term): the bank-conflict
/// check's figure, one broadcast per phase for a uniform address, every
/// lane apart where the space or the figure is unknown. An access of a
/// swept loop may pay its rows' wavefronts once per entry instead, as the
/// cost stage's [`crate::cost::metric::PerEntry`] costs do.
pub fn wavefront_costs(
    m: &Module,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
) -> Result<Costs, String> {
    let f = m.func(k.kernel);
    let mut inst: HashMap<InstId, u64> = HashMap::default();
    let mut per_entry = Vec::new();
    for (s, fig) in k.sites.iter().zip(figures) {
        if s.func != k.kernel || s.kind == SiteKind::Branch {
            continue;
        }
        if !matches!(s.space, Some(Space::Shared) | Some(Space::Unknown) | None) {
            continue;
        }
        let Some(requests) = s.requests() else {
            return Err("a block copy of unknown length may touch shared memory".into());
        };
        let conflict = fig.get::<Conflict>();
        let w = match s.thread_dependent || s.kind == SiteKind::Atomic {
            false => uniform_wavefronts(s.bytes),
            true => conflict.map_or(worst_wavefronts(s.bytes), |c| c.wavefronts.max),
        }
        .saturating_mul(requests);
        let rows = conflict
            .and_then(|c| c.iterations.as_ref())
            .filter(|_| s.space == Some(Space::Shared))
            .map(|its| its.rows.iter().map(|r| r.wavefronts).collect());
        let each = Rat::int(i128::from(w));
        let block = f.inst(s.inst).block;
        match crate::cost::metric::per_entry(k, (s, block), fig, (rows, each)) {
            Some(p) => per_entry.push(p),
            None => *inst.entry(s.inst).or_insert(0) += w,
        }
    }
    Ok(Costs {
        inst: inst
            .into_iter()
            .map(|(i, w)| (i, Rat::int(i128::from(w))))
            .collect(),
        phi: Rat::ZERO,
        divergence: Rat::ZERO,
        per_entry,
    })
}
