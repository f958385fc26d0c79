//! What each finding costs, estimated from the time model, so that the
//! findings can be ordered by it and the cheap ones said as notes.
//!
//! **The kernel's time.** An SM's cycles for one wave of the `r` blocks
//! resident on it are estimated as Brent's `W/P + S` of the time bounds
//! plus a throughput term `M`, with `W` and `M` the block's times `r`:
//!
//! * `W`: the warp instructions the block issues: every block of the CFG
//!   once per iteration of the loops around it (their trip bounds from
//!   `cost::trips` at the launch shape, [`NOMINAL_TRIPS`] where a bound
//!   needs a parameter), both sides of every branch, times the warps;
//! * `P`: the machine's issue rate;
//! * `S`: one warp's chain, each instruction its latency
//!   ([`super::costs::kernel_costs`], the classes the cycle mode uses);
//! * `M`: the cycles the block's global sectors take at its SM's share of
//!   DRAM bandwidth (siblings' sectors once: their union, with their extra
//!   requests at the L1's rate), and its shared-memory wavefronts at the
//!   SM's rate.
//!
//! **A finding's cost**, in the same cycles (times `r`, every resident
//! block pays it):
//!
//! * a divergent branch: the issue slots of both sides (loops included,
//!   up to where the lanes meet again) times the warps that split times
//!   the branch's executions, over `P`: what a splitting warp issues with
//!   part of its lanes masked off;
//! * an uncoalesced access: the sectors over the ideal, times the warps
//!   and the executions, at the DRAM cost of a sector; where sibling
//!   accesses of the same warp and iteration use the same sectors (the
//!   fields of a struct, `checks::siblings`), only the group's union past
//!   its ideal is DRAM traffic, an equal part for each, and each access's
//!   extra 128-byte L1 requests cost the L1's time for a line;
//! * a bank conflict: the wavefronts over the ideal, times the warps and
//!   the executions, at the shared-memory rate.
//!
//! The share is that cost over the kernel's cycles (between 0 and 1: the
//! kernel's `W` and `M` already hold every finding's issues and sectors).
//!
//! **Limits.** It is an estimate, not a bound: a side's blocks are all
//! counted, a loop runs its trip bound (the worst lane's), latency and
//! bandwidth are added rather than overlapped, and a site in a called
//! function (not inlined) has no estimate. It ranks findings; the time
//! bounds (`warpcheck time`) are the sound numbers.

use super::costs::{function_costs, KernelCosts};
use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::checks::bank_conflict::Conflict;
use crate::checks::divergent_branch::Divergence;
use crate::checks::uncoalesced_access::Sectors;
use crate::checks::SiteFigures;
use crate::cost::affine::Affine;
use crate::cost::bound::Params;
use crate::cost::metric::uniform_sectors;
use crate::cost::{conditions, Trip};
use crate::finding::{Finding, Impact, Severity};
use crate::graph::FunctionGraphs;
use crate::hw;
use crate::ir::{BlockId, Module, SiteKind};
use crate::machine::class::uniform_wavefronts;
use crate::machine::Machine;
use crate::memory::Space;
use std::collections::BTreeMap;

pub use super::NOMINAL_TRIPS;

/// The default `--min-impact`: a warning estimated below 5% of its
/// kernel's time is a note. Fixing it cannot win more than that, which is
/// within the estimate's own error (class latencies; latency and
/// bandwidth added, not overlapped). A leader lane's atomic after a
/// shuffle reduction is about 2% of a kernel that does nothing else, a
/// halo's or a single thread's store under 1%; a split loop body or an
/// array-of-structures access is 15% or more.
pub const DEFAULT_MIN_IMPACT: f64 = 0.05;

/// One function's part of a kernel's time model: the kernel itself, or a
/// device function it calls that was not inlined.
struct Part<'a> {
    g: &'a FunctionGraphs,
    /// Per CFG block: executions by one warp per call of the function,
    /// issue slots, latency cycles.
    exec: Vec<f64>,
    issues: Vec<f64>,
    latency: Vec<f64>,
    /// Calls of the function per warp of the kernel (1 for the kernel).
    calls: f64,
}

impl Part<'_> {
    /// How many times one warp of the kernel runs block `b`.
    fn runs(&self, b: BlockId) -> f64 {
        self.calls * self.exec[b.index()]
    }
}

/// One kernel's time model.
struct Model<'a> {
    m: &'a Module,
    /// The kernel's part and those of the functions it calls.
    parts: BTreeMap<crate::ir::FuncId, Part<'a>>,
    /// Warps in the block, issue rate.
    warps: f64,
    p: f64,
    /// Cycles of one global sector, one shared wavefront and one L1
    /// request (a 128-byte line) at the SM's share of the machine's
    /// throughput.
    sector: f64,
    wavefront: f64,
    request: f64,
    /// The block's estimated cycles and their parts.
    w: f64,
    s: f64,
    mem: f64,
    /// Some loop took [`NOMINAL_TRIPS`], or a recursive call was counted
    /// once.
    nominal: bool,
    /// Blocks resident on an SM at once: they share its issue slots and
    /// bandwidth, while one warp's chain `s` is not repeated.
    resident: f64,
}

impl Model<'_> {
    /// An SM's cycles for one wave of resident blocks.
    fn cycles(&self) -> f64 {
        self.resident * (self.w / self.p + self.mem) + self.s
    }
}

/// Sets every finding's impact (messages and severities are
/// [`settle`]'s, once findings of one cause are grouped).
pub fn annotate(
    a: &ModuleAnalysis<'_>,
    figures: &[Vec<SiteFigures>],
    machine: &Machine,
    findings: &mut [Finding],
) {
    let mut models: Vec<Option<Result<Model<'_>, String>>> =
        (0..a.kernels.len()).map(|_| None).collect();
    for f in findings.iter_mut() {
        let Some(inst) = f.inst else {
            f.impact = Some(Impact::unknown("a kernel's note: no site of its own"));
            continue;
        };
        // Every request of the instruction the check measures: the pieces
        // of a struct copy all cost.
        let check = crate::checks::find(f.check);
        let found = a.kernels.iter().enumerate().find_map(|(i, k)| {
            let kname = &a.module.func(k.kernel).demangled;
            let at: Vec<usize> = (0..k.sites.len())
                .filter(|&s| {
                    let s = &k.sites[s];
                    s.func == f.func && s.inst == inst && check.is_none_or(|c| c.applies_to(s))
                })
                .collect();
            (kname == &f.kernel && !at.is_empty()).then_some((i, at))
        });
        let Some((ki, sites)) = found else {
            f.impact = Some(Impact::unknown("no site of the kernel"));
            continue;
        };
        let k = &a.kernels[ki];
        let model = models[ki].get_or_insert_with(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                model(a, k, &figures[ki], machine)
            }))
            .unwrap_or_else(|_| Err("internal error in the time model".into()))
        });
        let impact = match model {
            Err(why) => Impact::unknown(format!("the time model cannot cost this kernel: {why}")),
            Ok(md) => pieces(
                sites
                    .iter()
                    .map(|&s| estimate(md, &k.sites[s], &figures[ki][s]))
                    .collect(),
            ),
        };
        f.impact = Some(impact);
    }
}

/// Says each finding's share in its message ("(~12% of the kernel's
/// time)"), and makes a warning whose share is below `min_share` a note
/// that says why it is cheap.
pub fn settle(findings: &mut [Finding], min_share: f64) {
    for f in findings {
        if let Some(i) = f.impact.take() {
            apply(f, i, min_share);
        }
    }
}

fn apply(f: &mut Finding, mut impact: Impact, min_share: f64) {
    if let Some(share) = impact.share {
        let text = percent(share);
        if f.severity == Severity::Warning && share < min_share {
            let why = format!(
                "cheap: {}, {text} of the kernel's time (under the {}% threshold, --min-impact)",
                cheap_reason(f, &impact),
                (min_share * 1e4).round() / 100.0
            );
            f.message = format!("{}; {why}", f.message);
            f.severity = Severity::Note;
            impact.reason = Some(why);
        } else {
            f.message = format!("{} ({text} of the kernel's time)", f.message);
        }
    }
    f.impact = Some(impact);
}

/// A message without the share [`settle`] adds to a warning's end: the
/// words that are the same for every instantiation of one template.
pub fn without_share(message: &str) -> &str {
    match message.rfind(" (") {
        Some(at) if message.ends_with(" of the kernel's time)") => &message[..at],
        _ => message,
    }
}

/// "~12%", "~1.5%", "<0.1%".
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p >= 9.5 {
        format!("~{p:.0}%")
    } else if p >= 0.1 {
        format!("~{p:.1}%")
    } else {
        "<0.1%".to_string()
    }
}

/// Why a finding is cheap, in the words of what it is.
fn cheap_reason(f: &Finding, i: &Impact) -> String {
    let input = |k: &str| i.inputs.get(k).copied().unwrap_or(0.0);
    let issues = input("side_issues").round();
    let idiom = f
        .data
        .as_ref()
        .and_then(|d| d.get("idiom"))
        .and_then(|v| v.as_str());
    match idiom {
        Some("leader_lane") => format!("one lane per warp runs {issues} instructions"),
        Some("leader_thread") => format!("one thread runs {issues} instructions"),
        Some("halo") => format!("the edge lanes run {issues} instructions"),
        Some("bounds_check") => "only the last warp of the range splits".to_string(),
        _ if i.inputs.contains_key("side_issues") => format!(
            "the splitting warps run {issues} instructions serialised, {}",
            times(input("executions"))
        ),
        _ if i.inputs.contains_key("extra_requests") => format!(
            "{} extra L1 requests per request and {}, {}",
            input("extra_requests"),
            match input("excess_sectors") {
                x if x > 0.0 => format!("{x} excess DRAM sectors"),
                _ => "no extra DRAM traffic".to_string(),
            },
            times(input("executions"))
        ),
        _ if i.inputs.contains_key("excess_sectors") => format!(
            "{} excess sectors per request, {}",
            input("excess_sectors"),
            times(input("executions"))
        ),
        _ => format!(
            "{} excess wavefronts per request, {}",
            input("excess_wavefronts"),
            times(input("executions"))
        ),
    }
}

/// "once", "8 times" (per warp).
fn times(n: f64) -> String {
    if n <= 1.0 {
        "once".to_string()
    } else {
        format!("{n} times")
    }
}

/// The estimates of an instruction's requests (one, or the pieces of a
/// struct copy) added up.
fn pieces(mut all: Vec<Impact>) -> Impact {
    if all.len() == 1 {
        return all.pop().expect("one");
    }
    let add = |get: fn(&Impact) -> Option<f64>| all.iter().map(get).sum::<Option<f64>>();
    let (cycles, share) = (add(|i| i.cycles), add(|i| i.share));
    let mut inputs = all[0].inputs.clone();
    for key in Impact::SUMMED {
        if inputs.contains_key(key) {
            inputs.insert(key, all.iter().filter_map(|i| i.inputs.get(key)).sum());
        }
    }
    inputs.insert("pieces", all.len() as f64);
    Impact {
        cycles,
        share: share.map(|s| s.min(1.0)),
        inputs,
        reason: all[0].reason.clone(),
    }
}

/// The estimate for one site's finding.
fn estimate(md: &Model<'_>, site: &Site, fig: &SiteFigures) -> Impact {
    let Some(part) = md.parts.get(&site.func) else {
        return Impact::unknown("in a function the kernel's time model does not reach");
    };
    let f_block = md.m.func(site.func).inst(site.inst).block;
    let exec = part.runs(f_block);
    let mut inputs = BTreeMap::new();
    inputs.insert("executions", exec);
    inputs.insert("warps", md.warps);
    inputs.insert("kernel_cycles", md.cycles().round());
    inputs.insert("resident_blocks", md.resident);
    if !md.m.func(site.func).is_kernel {
        inputs.insert("calls", part.calls);
    }
    if md.nominal {
        inputs.insert("nominal_trips", NOMINAL_TRIPS);
    }
    let cycles = if let Some(d) = fig.get::<Divergence>() {
        let splits = f64::from(d.split_max);
        let side = side_issues(part, f_block);
        inputs.insert("splitting_warps", splits);
        inputs.insert("side_issues", side);
        inputs.insert("issue_rate", md.p);
        side * splits * exec / md.p * md.resident
    } else if let Some(sec) = fig.get::<Sectors>() {
        let (excess, requests) = charged(sec);
        inputs.insert("excess_sectors", excess);
        inputs.insert("sector_cycles", md.sector);
        if let Some(sib) = &sec.siblings {
            inputs.insert("extra_requests", requests);
            inputs.insert("request_cycles", md.request);
            inputs.insert("sibling_accesses", sib.accesses as f64);
        }
        (excess * md.sector + requests * md.request) * md.warps * exec * md.resident
    } else if let Some(c) = fig.get::<Conflict>() {
        let excess = c.wavefronts.max.saturating_sub(c.ideal_wavefronts) as f64;
        inputs.insert("excess_wavefronts", excess);
        inputs.insert("wavefront_cycles", md.wavefront);
        excess * md.warps * exec * md.wavefront * md.resident
    } else {
        return Impact::unknown("no figure to cost");
    };
    let total = md.cycles();
    Impact {
        cycles: Some(cycles.round()),
        share: Some(if total > 0.0 {
            (cycles / total).min(1.0)
        } else {
            0.0
        }),
        inputs,
        reason: None,
    }
}

/// What an uncoalesced access is charged per execution by a warp: its
/// DRAM sectors past the ideal, and its extra L1 requests. Alone, every
/// sector past its ideal; with siblings, its part of the group's union
/// past the group's ideal, and the lines its request touches past those
/// its bytes need.
fn charged(sec: &Sectors) -> (f64, f64) {
    match &sec.siblings {
        Some(sib) => (sib.dram_excess(), sib.extra_requests as f64),
        None => (sec.full_max.saturating_sub(sec.ideal) as f64, 0.0),
    }
}

/// Issue slots of every side of the branch at `b`, each block weighted by
/// its executions per execution of the branch (its inner loops' trips).
fn side_issues(part: &Part<'_>, b: BlockId) -> f64 {
    let succs = part.g.cfg.succs(b);
    let per = part.exec[b.index()].max(1.0);
    succs
        .iter()
        .flat_map(|&s| part.g.branch_side(b, s))
        .map(|x| part.issues[x.index()] * part.exec[x.index()] / per)
        .sum()
}

/// `k`'s time model: the kernel and every function it reaches, each
/// block weighted by how often one warp runs it (a called function's
/// blocks by its calls).
fn model<'a>(
    a: &'a ModuleAnalysis<'_>,
    k: &'a KernelAnalysis,
    figures: &[SiteFigures],
    machine: &Machine,
) -> Result<Model<'a>, String> {
    let m = a.module;
    let mut parts = BTreeMap::new();
    let mut nominal = false;
    for &func in &k.reached {
        let Some(g) = a.graphs.get(func) else {
            continue;
        };
        let f = m.func(func);
        let costs: KernelCosts = function_costs(m, k, func, figures, machine)?;
        let (exec, guessed) = executions(a, k, func, g)?;
        nominal |= guessed;
        let n = f.blocks.len();
        let (mut issues, mut latency) = (vec![0.0; n], vec![0.0; n]);
        for (&i, c) in &costs.insts {
            let b = f.inst(i).block.index();
            issues[b] += c.issues() as f64;
            latency[b] += c.latency as f64;
        }
        let calls = if func == k.kernel { 1.0 } else { 0.0 };
        parts.insert(
            func,
            Part {
                g,
                exec,
                issues,
                latency,
                calls,
            },
        );
    }
    nominal |= count_calls(a, &mut parts);
    let warps = k.acf.warps.len().max(1) as f64;
    let p = f64::from(machine.issue_rate.max(1));
    // An SM's share of DRAM, in bytes per cycle.
    let dram = f64::from(machine.dram_gbps) * 1e3
        / f64::from(machine.clock_mhz.max(1))
        / f64::from(machine.sms.max(1));
    let sector = if dram > 0.0 {
        hw::SECTOR_BYTES as f64 / dram
    } else {
        f64::from(machine.sector_cycles)
    };
    let wavefront = match machine.shared_wavefronts_per_cycle {
        0 => f64::from(machine.wavefront_cycles),
        r => 1.0 / f64::from(r),
    };
    let request = match machine.l1_lines_per_cycle {
        0 => 0.0,
        r => 1.0 / f64::from(r),
    };
    let mut mem = 0.0;
    for (s, fig) in k.sites.iter().zip(figures) {
        let Some(part) = parts.get(&s.func) else {
            continue;
        };
        if s.kind == SiteKind::Branch {
            continue;
        }
        let e = part.runs(m.func(s.func).inst(s.inst).block) * warps;
        match s.space {
            Some(Space::Global) => {
                let cost = match fig.get::<Sectors>() {
                    Some(x) => match &x.siblings {
                        Some(sib) => {
                            let n = sib.union as f64 / sib.accesses.max(1) as f64;
                            n * sector + sib.extra_requests as f64 * request
                        }
                        None => x.full_max as f64 * sector,
                    },
                    None => uniform_sectors(s.bytes, s.bytes) as f64 * sector,
                };
                mem += e * cost;
            }
            Some(Space::Shared) => {
                let n = fig
                    .get::<Conflict>()
                    .map_or(uniform_wavefronts(s.bytes), |c| c.wavefronts.max);
                mem += e * n as f64 * wavefront;
            }
            _ => {}
        }
    }
    let threads = k.block_dim.dims.iter().product::<u32>();
    let resident = machine
        .residency(threads, crate::machine::static_shared_bytes(m))
        .map_or(1.0, |r| f64::from(r.blocks_per_sm.max(1)));
    let total = |latency: bool| -> f64 {
        parts
            .values()
            .map(|part| {
                let per_block = if latency { &part.latency } else { &part.issues };
                let per_call: f64 = per_block.iter().zip(&part.exec).map(|(x, e)| x * e).sum();
                part.calls * per_call
            })
            .sum()
    };
    let w = total(false) * warps;
    let chain = total(true);
    Ok(Model {
        m,
        w,
        s: chain,
        parts,
        warps,
        p,
        sector,
        wavefront,
        request,
        mem,
        nominal,
        resident,
    })
}

/// Fills each part's calls per warp from its callers', callers first: a
/// call site contributes its caller's calls times the executions of its
/// block. A call back into a recursive group counts once (said as a
/// nominal figure: `true`).
fn count_calls(a: &ModuleAnalysis<'_>, parts: &mut BTreeMap<crate::ir::FuncId, Part<'_>>) -> bool {
    let m = a.module;
    let cg = &a.graphs.calls;
    let mut recursive = false;
    let order: Vec<_> = cg.bottom_up().collect();
    for &caller in order.iter().rev() {
        let Some(from) = parts.get(&caller) else {
            continue;
        };
        let f = m.func(caller);
        let adds: Vec<(crate::ir::FuncId, f64)> = cg
            .call_sites(caller)
            .iter()
            .filter_map(|site| match site.callee {
                crate::ir::Callee::Direct(g) => Some((g, from.runs(f.inst(site.inst).block))),
                _ => None,
            })
            .collect();
        for (callee, n) in adds {
            if cg.is_recursive(callee) && cg.is_recursive(caller) {
                recursive = true;
                // Within a recursive group: the entry's calls stand for it.
                if let Some(p) = parts.get_mut(&callee) {
                    p.calls = p.calls.max(1.0);
                }
                continue;
            }
            if let Some(p) = parts.get_mut(&callee) {
                p.calls += n;
            }
        }
    }
    recursive
}

/// Per CFG block of `func`, how many times one warp runs it per call: the
/// product of `iterations` over the loops around it (trip bound plus one).
fn executions(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    func: crate::ir::FuncId,
    g: &FunctionGraphs,
) -> Result<(Vec<f64>, bool), String> {
    let m = a.module;
    let f = m.func(func);
    let mut names = crate::cost::names_of(f);
    let env = conditions::Env {
        m,
        f,
        g,
        block: k.block_dim.dims,
        unsigned: names.unsigned.clone(),
    };
    let trips = crate::cost::trips::trip_bounds(&env, &mut names.factors);
    let mut nominal = false;
    let trips: Vec<Trip> = trips
        .into_iter()
        .map(|t| match t {
            Trip::Unknown(_) => {
                nominal = true;
                Trip::Bounded(Affine::int(NOMINAL_TRIPS as i128))
            }
            b => b,
        })
        .collect();
    let at = Params::default();
    let values = super::abstract_cta::trip_values(&trips, &names, (g, &[]), &at, None);
    // A bound that needs a parameter: every such loop nominal.
    let values = match values {
        Ok(v) => v,
        Err(_) => {
            nominal = true;
            super::abstract_cta::trip_values(&trips, &names, (g, &[]), &at, Some(NOMINAL_TRIPS))?
        }
    };
    let exec = (0..f.blocks.len())
        .map(|b| {
            let mut e = 1.0;
            let mut l = g.loops.loop_of(BlockId::new(b));
            while let Some(id) = l {
                e *= values[id.index()] + 1.0;
                l = g.loops.get(id).parent;
            }
            e
        })
        .collect();
    Ok((exec, nominal))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::FuncId;

    fn branch(idiom: Option<&str>, share: f64) -> (Finding, Impact) {
        let f = Finding {
            check: "divergent-branch",
            severity: Severity::Warning,
            func: FuncId(0),
            inst: None,
            pos: None,
            kernel: "k".into(),
            function: "k".into(),
            message: "m".into(),
            notes: Vec::new(),
            data: idiom.map(|i| serde_json::json!({ "idiom": i })),
            impact: None,
        };
        let inputs = [("side_issues", 3.0), ("executions", 1.0)].into();
        let i = Impact {
            cycles: Some(6.0),
            share: Some(share),
            inputs,
            reason: None,
        };
        (f, i)
    }

    #[test]
    fn the_share_comes_off_a_message() {
        assert_eq!(without_share("m (~20% of the kernel's time)"), "m");
        assert_eq!(
            without_share("m (3 accesses) (<0.1% of the kernel's time)"),
            "m (3 accesses)"
        );
        assert_eq!(without_share("m (3 accesses)"), "m (3 accesses)");
    }

    #[test]
    fn shares_as_text() {
        assert_eq!(percent(0.1234), "~12%");
        assert_eq!(percent(0.015), "~1.5%");
        assert_eq!(percent(0.0004), "<0.1%");
    }

    #[test]
    fn cheap_warnings_become_notes_with_the_reason() {
        // 0.3% under a 5% threshold: a note saying what the lane runs.
        let (mut f, i) = branch(Some("leader_lane"), 0.003);
        apply(&mut f, i, 0.05);
        assert_eq!(f.severity, Severity::Note);
        assert_eq!(
            f.message,
            "m; cheap: one lane per warp runs 3 instructions, ~0.3% of the kernel's time (under the 5% threshold, --min-impact)"
        );
        assert!(f.impact.unwrap().reason.unwrap().starts_with("cheap:"));
        // At or over the threshold: a warning with its share.
        let (mut f, i) = branch(None, 0.2);
        apply(&mut f, i, 0.05);
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.message, "m (~20% of the kernel's time)");
        // No idiom: the serialised instructions and how often.
        let (mut f, i) = branch(None, 0.01);
        apply(&mut f, i, 0.05);
        assert!(
            f.message
                .contains("the splitting warps run 3 instructions serialised, once"),
            "{}",
            f.message
        );
    }
}
