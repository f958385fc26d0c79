//! Time bounds as the reports show them: the JSON of `warpcheck time` (a
//! contract: fields are added, never renamed), its text, and the note at
//! the kernel's line naming the term that dominates the bound.

use super::abstract_cta::{LineShare, Shares};
use super::bounds::{Cycles, TimeBound};
use crate::analysis::KernelAnalysis;
use crate::finding::Finding;
use crate::ir::Module;
use crate::machine::{Machine, Residency, Waves};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Serialize, Debug, Clone, Copy, PartialEq)]
pub struct BreakdownJson {
    pub issue: f64,
    pub memory: f64,
    pub barrier: f64,
    pub divergence: f64,
    /// The throughput term (the whole bound's only; 0 per line).
    pub bandwidth: f64,
}

impl From<&Shares> for BreakdownJson {
    fn from(s: &Shares) -> Self {
        let r = |x: f64| (x * 10.0).round() / 10.0;
        BreakdownJson {
            issue: r(s.issue),
            memory: r(s.memory),
            barrier: r(s.barrier),
            divergence: r(s.divergence),
            bandwidth: 0.0,
        }
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct LineJson {
    pub file: String,
    pub line: u32,
    #[serde(flatten)]
    pub cycles: BreakdownJson,
}

/// A per-warp bound and its value.
#[derive(Serialize, Debug, Clone)]
pub struct TermJson {
    /// The per-warp bound (`no bound` when there is none).
    pub per_warp: String,
    /// At the parameters.
    pub value: Option<f64>,
    /// What a block (in its wave) pays for it: `factor · value`.
    pub factor: Option<f64>,
}

#[derive(Serialize, Debug, Clone)]
pub struct MethodJson {
    pub block_cycles: Option<f64>,
    pub launch_cycles: Option<f64>,
    /// Why there is no bound.
    pub reason: Option<String>,
}

impl From<&Result<Cycles, String>> for MethodJson {
    fn from(c: &Result<Cycles, String>) -> Self {
        match c {
            Ok(c) => MethodJson {
                block_cycles: Some(c.block.ceil()),
                launch_cycles: Some(c.launch.ceil()),
                reason: None,
            },
            Err(e) => MethodJson {
                block_cycles: None,
                launch_cycles: None,
                reason: Some(e.clone()),
            },
        }
    }
}

/// The throughput term of the bound.
#[derive(Serialize, Debug, Clone)]
pub struct ThroughputJson {
    /// Global sectors per warp, at most.
    pub sectors_per_warp: String,
    /// Shared-memory wavefronts per warp, at most.
    pub wavefronts_per_warp: String,
    /// Over the launch, at most.
    pub sectors: f64,
    pub bytes: f64,
    /// The busiest SM's, at most.
    pub sm_wavefronts: f64,
    /// Cycles each limit needs.
    pub dram_cycles: f64,
    pub l2_cycles: f64,
    pub shared_cycles: f64,
    /// Their sum, which the bound includes.
    pub cycles: f64,
}

/// `warpcheck time --format json`.
#[derive(Serialize, Debug, Clone)]
pub struct TimeJson {
    pub kernel: String,
    pub params: BTreeMap<String, f64>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The launch's cycles, at most (the smaller of the two methods).
    pub bound_cycles: Option<f64>,
    /// A block's cycles in its wave, at most.
    pub block_bound_cycles: Option<f64>,
    /// `abstract-cta` or `work-span`.
    pub method: Option<&'static str>,
    pub microseconds: Option<f64>,
    pub work: TermJson,
    pub span: TermJson,
    /// The bound's latency and issue part (the method's).
    pub latency_cycles: Option<f64>,
    /// The bound's throughput part (`None`: no bound).
    pub throughput: Option<ThroughputJson>,
    /// What dominates the bound: `DRAM bandwidth`, `L2 bandwidth`,
    /// `shared-memory bandwidth` when the throughput part is the larger,
    /// else `latency and issue`.
    pub limited_by: Option<&'static str>,
    /// `--simulate`: the launch's cycles in the simulator.
    pub simulated_cycles: Option<u64>,
    pub simulated_block_cycles: Option<u64>,
    /// The bound split like the worst path: issue, memory stall, barrier
    /// wait, divergence.
    pub breakdown: Option<BreakdownJson>,
    pub lines: Vec<LineJson>,
    pub methods: BTreeMap<&'static str, MethodJson>,
    pub note: Option<String>,
    pub machine: Machine,
    pub residency: Option<Residency>,
    pub waves: Option<Waves>,
    /// Warps resident on an SM with a block (N_high).
    pub resident_warps: u64,
    /// The most cycles a ready warp waits for an issue slot.
    pub issue_wait: u64,
    /// Why there is no bound, when neither method gives one.
    pub reason: Option<String>,
    pub seconds: f64,
}

/// What the run measured, for the report.
pub struct Simulated {
    pub launch: u64,
    pub block: u64,
}

fn line_name(m: &Module, l: &LineShare) -> (String, u32) {
    match l.file {
        Some(f) => (m.file(f).name.clone(), l.line),
        None => (String::new(), 0),
    }
}

/// The JSON report of one kernel's time bound.
pub fn json(
    m: &Module,
    k: &KernelAnalysis,
    tb: &TimeBound,
    (machine, params, grid): (&Machine, &BTreeMap<String, f64>, [u32; 3]),
    simulated: Option<&Simulated>,
) -> TimeJson {
    let names = &tb.names;
    let term = |b: Option<&crate::cost::bound::Bound>, v: Option<f64>, f: Option<f64>| TermJson {
        per_warp: b.map_or_else(|| "no bound".into(), |b| names.render_bound(b)),
        value: v,
        factor: f,
    };
    let ws = tb.work_span.as_ref().ok();
    let breakdown = tb.breakdown();
    TimeJson {
        kernel: m.func(k.kernel).short_name(),
        params: params.clone(),
        grid,
        block: k.block_dim.dims,
        bound_cycles: tb.chosen.as_ref().map(|(_, c)| c.launch.ceil()),
        block_bound_cycles: tb.chosen.as_ref().map(|(_, c)| c.block.ceil()),
        method: tb.chosen.as_ref().map(|(m, _)| m.name()),
        microseconds: tb
            .chosen
            .as_ref()
            .map(|(_, c)| (machine.micros(c.launch.ceil()) * 1000.0).round() / 1000.0),
        work: term(
            ws.map(|w| &w.work),
            ws.and_then(|w| w.work_value),
            ws.map(|w| w.work_factor.to_f64()),
        ),
        span: term(
            ws.map(|w| &w.span),
            ws.and_then(|w| w.span_value),
            ws.map(|w| w.span_factor.to_f64()),
        ),
        latency_cycles: tb.chosen.as_ref().map(|(_, c)| c.latency().ceil()),
        throughput: tb.roofline.as_ref().ok().map(|r| ThroughputJson {
            sectors_per_warp: names.render_bound(&r.sectors),
            wavefronts_per_warp: names.render_bound(&r.wavefronts),
            sectors: r.traffic.sectors,
            bytes: r.traffic.sectors * crate::hw::SECTOR_BYTES as f64,
            sm_wavefronts: r.traffic.sm_wavefronts,
            dram_cycles: r.throughput.dram,
            l2_cycles: r.throughput.l2,
            shared_cycles: r.throughput.shared,
            cycles: r.throughput.delay(),
        }),
        limited_by: limited_by(tb),
        simulated_cycles: simulated.map(|s| s.launch),
        simulated_block_cycles: simulated.map(|s| s.block),
        breakdown: breakdown.as_ref().map(|(s, _)| BreakdownJson {
            bandwidth: tb.chosen.as_ref().map_or(0.0, |(_, c)| c.throughput),
            ..s.into()
        }),
        lines: breakdown
            .map(|(_, lines)| {
                lines
                    .iter()
                    .map(|l| {
                        let (file, line) = line_name(m, l);
                        LineJson {
                            file,
                            line,
                            cycles: (&l.cycles).into(),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default(),
        methods: [
            ("work-span", (&tb.work_span_cycles).into()),
            ("abstract-cta", (&tb.abstract_cta).into()),
        ]
        .into_iter()
        .collect(),
        note: dominant(m, tb, machine),
        machine: machine.clone(),
        residency: tb.residency.as_ref().ok().copied(),
        waves: tb.waves,
        resident_warps: tb.resident_warps,
        issue_wait: tb.wait,
        reason: match &tb.chosen {
            Some(_) => None,
            None => Some(reason(tb)),
        },
        seconds: tb.seconds,
    }
}

/// What dominates the chosen bound (see [`TimeJson::limited_by`]).
fn limited_by(tb: &TimeBound) -> Option<&'static str> {
    let (_, c) = tb.chosen.as_ref()?;
    let bandwidth = tb.roofline.as_ref().ok()?.dominant(c.latency());
    Some(bandwidth.map_or("latency and issue", |(r, _)| r))
}

/// The bandwidth sentence, when the throughput part dominates the bound.
fn bandwidth_note(tb: &TimeBound, machine: &Machine) -> Option<String> {
    let (_, c) = tb.chosen.as_ref()?;
    let r = tb.roofline.as_ref().ok()?;
    let (resource, cycles) = r.dominant(c.latency())?;
    let pct = (100.0 * r.throughput.delay() / c.launch.max(1e-9)).round();
    let bytes = r.traffic.sectors * crate::hw::SECTOR_BYTES as f64;
    let what = match resource {
        "DRAM bandwidth" => format!(
            "{bytes:.0} bytes at {} GB/s need {cycles} cycles",
            machine.dram_gbps
        ),
        "L2 bandwidth" => format!(
            "{bytes:.0} bytes at {} bytes per cycle need {cycles} cycles",
            machine.l2_bytes_per_cycle
        ),
        _ => format!(
            "{} wavefronts on the busiest SM at {} per cycle need {cycles} cycles",
            r.traffic.sm_wavefronts, machine.shared_wavefronts_per_cycle
        ),
    };
    Some(format!(
        "{resource} dominates: {what}; the throughput term is {pct}% of the bound, above its latency and issue part ({} cycles)",
        c.latency().ceil()
    ))
}

/// Why neither method has a bound.
fn reason(tb: &TimeBound) -> String {
    let mut parts = Vec::new();
    for (name, r) in [
        ("abstract CTA simulation", &tb.abstract_cta),
        ("work/span", &tb.work_span_cycles),
    ] {
        if let Err(e) = r {
            parts.push(format!("{name}: {e}"));
        }
    }
    parts.dedup_by(|a, b| a.split_once(": ").map(|x| x.1) == b.split_once(": ").map(|x| x.1));
    parts.join("; ")
}

/// The term that dominates the bound, as a sentence: the line and kind
/// of cycles with the largest share of the worst path.
pub fn dominant(m: &Module, tb: &TimeBound, machine: &Machine) -> Option<String> {
    if let Some(b) = bandwidth_note(tb, machine) {
        return Some(b);
    }
    let path = tb.path.as_ref()?;
    let total = path.shares.total();
    if total <= 0.0 {
        return None;
    }
    let mut best: Option<(f64, &'static str, &LineShare)> = None;
    for l in &path.lines {
        let c = &l.cycles;
        for (v, kind) in [
            (c.memory, "memory"),
            (c.issue, "issue"),
            (c.barrier, "barrier"),
            (c.divergence, "divergence"),
        ] {
            if best.as_ref().is_none_or(|b| v > b.0) {
                best = Some((v, kind, l));
            }
        }
    }
    let (v, kind, l) = best?;
    let pct = (100.0 * v / total).round();
    let throughput = tb.chosen.as_ref().is_some_and(|(_, c)| c.throughput > 0.0);
    let of = match (tb.nominal, throughput) {
        (true, _) => format!(
            "the worst path (loops whose trip count needs a parameter run {} times)",
            super::NOMINAL_TRIPS
        ),
        (false, false) => "the bound".to_string(),
        (false, true) => "the bound's latency and issue part".to_string(),
    };
    let (_, line) = line_name(m, l);
    let at = match line {
        0 => "with no line".to_string(),
        n => format!("at line {n}"),
    };
    let n = tb.resident_warps;
    let warps = if n == 1 { "warp" } else { "warps" };
    Some(match kind {
        "memory" => format!(
            "memory stalls {at} are {pct}% of {of}; {n} {warps} per SM cannot hide {} cycles of latency",
            l.memory_latency
        ),
        "issue" => format!(
            "issuing instructions {at} is {pct}% of {of}; {n} {warps} per SM share {} issue slots per cycle",
            machine.issue_rate
        ),
        "barrier" => format!(
            "barrier waits {at} are {pct}% of {of}; the block's warps wait there for the slowest"
        ),
        _ => format!(
            "divergent paths {at} are {pct}% of {of}; a split warp runs both sides one after the other"
        ),
    })
}

/// The note at the kernel's line: the bound (or the block's symbolic
/// work/span bound without parameters) and the dominant term.
pub fn note(m: &Module, k: &KernelAnalysis, tb: &TimeBound, machine: &Machine) -> Finding {
    let message = match (&tb.chosen, &tb.work_span) {
        (Some((method, c)), _) => format!(
            "time ≤ {} cycles per launch ({} per block, {}) on the {}",
            c.launch.ceil(),
            c.block.ceil(),
            method.name(),
            machine.name
        ),
        (None, Ok(ws)) => format!(
            "time per block ≤ {} cycles (work-span) on the {}",
            tb.names.render_bound(&ws.block_bound()),
            machine.name
        ),
        (None, Err(_)) => format!("no time bound: {}", reason(tb)),
    };
    let message = match dominant(m, tb, machine) {
        Some(d) => format!("{message}; {d}"),
        None => message,
    };
    crate::cost::report::kernel_note(m, k, message, Vec::new())
}

/// The time notes of every kernel of an analysed module, for one block
/// on the machine, without parameters (`check --bounds` and the plugin
/// when bounds are asked for).
pub fn module_notes(
    a: &crate::analysis::ModuleAnalysis<'_>,
    figures: &[Vec<crate::checks::SiteFigures>],
    machine: &Machine,
    budget: &crate::budget::Budget,
) -> Vec<Finding> {
    let at = crate::cost::bound::Params {
        values: BTreeMap::new(),
        grid: [1, 1, 1],
    };
    let req = super::bounds::Request {
        machine,
        at: &at,
        dynamic_shared: 0,
    };
    a.kernels
        .iter()
        .zip(figures)
        .map(|(k, figs)| {
            let g = a.graphs.func(k.kernel);
            let meter = budget.start();
            match super::guard::time_kernel_caught(a.module, g, k, figs, &req, &meter) {
                Ok(tb) => note(a.module, k, &tb, machine),
                Err(why) => crate::cost::report::kernel_note(
                    a.module,
                    k,
                    format!("no time bound: {why}"),
                    Vec::new(),
                ),
            }
        })
        .collect()
}

/// `warpcheck time`'s text.
pub fn text(j: &TimeJson, render_poly: Option<String>) -> String {
    let mut out = String::new();
    let _ = match (j.bound_cycles, j.method) {
        (Some(b), Some(method)) => writeln!(
            out,
            "{}: time ≤ {b} cycles ({:.2} µs) per launch, by {method}",
            j.kernel,
            j.microseconds.unwrap_or(0.0)
        ),
        _ => writeln!(
            out,
            "{}: no time bound: {}",
            j.kernel,
            j.reason.as_deref().unwrap_or("")
        ),
    };
    let _ = writeln!(out, "  machine: {}", j.machine.name);
    if let (Some(r), Some(w)) = (&j.residency, &j.waves) {
        let _ = writeln!(
            out,
            "  {} warp(s) per block, {} block(s) per SM ({}): {} wave(s) on {} SM(s); {} warp(s) share an SM, a ready warp waits at most {} cycle(s) for a slot",
            r.warps_per_block, r.blocks_per_sm, r.limited_by, w.waves, w.sms_used, j.resident_warps, j.issue_wait
        );
    }
    if let Some(p) = render_poly {
        let _ = writeln!(out, "  work/span: block ≤ {p} cycles");
    }
    let _ = writeln!(
        out,
        "    work per warp ≤ {}{}; span per warp ≤ {}{}",
        j.work.per_warp,
        j.work.value.map_or(String::new(), |v| format!(" = {v}")),
        j.span.per_warp,
        j.span.value.map_or(String::new(), |v| format!(" = {v}")),
    );
    if let (Some(t), Some(l)) = (&j.throughput, j.latency_cycles) {
        let _ = writeln!(
            out,
            "  roofline: latency and issue {l} + throughput {} cycles ({} sectors = {} bytes: DRAM {}, L2 {}; {} shared wavefronts on the busiest SM: {}); {} dominates",
            t.cycles,
            t.sectors,
            t.bytes,
            t.dram_cycles,
            t.l2_cycles,
            t.sm_wavefronts,
            t.shared_cycles,
            j.limited_by.unwrap_or("latency and issue")
        );
        let _ = writeln!(
            out,
            "    sectors per warp ≤ {}; shared wavefronts per warp ≤ {}",
            t.sectors_per_warp, t.wavefronts_per_warp
        );
    }
    for (name, m) in &j.methods {
        let _ = match (m.block_cycles, m.launch_cycles, &m.reason) {
            (Some(b), Some(l), _) => writeln!(out, "  {name}: block ≤ {b}, launch ≤ {l} cycles"),
            (_, _, Some(r)) => writeln!(out, "  {name}: no bound: {r}"),
            _ => Ok(()),
        };
    }
    if let Some(b) = &j.breakdown {
        let total = (b.issue + b.memory + b.barrier + b.divergence + b.bandwidth).max(1e-9);
        let pct = |x: f64| 100.0 * x / total;
        let _ = writeln!(
            out,
            "  breakdown: issue {:.0} ({:.0}%), memory stall {:.0} ({:.0}%), barrier wait {:.0} ({:.0}%), divergence {:.0} ({:.0}%), bandwidth {:.0} ({:.0}%)",
            b.issue,
            pct(b.issue),
            b.memory,
            pct(b.memory),
            b.barrier,
            pct(b.barrier),
            b.divergence,
            pct(b.divergence),
            b.bandwidth,
            pct(b.bandwidth)
        );
    }
    if let Some(n) = &j.note {
        let _ = writeln!(out, "  {n}");
    }
    if let Some(s) = j.simulated_cycles {
        let ratio = j.bound_cycles.map_or(String::new(), |b| {
            format!(", bound/simulated {:.2}", b / (s.max(1) as f64))
        });
        let _ = writeln!(
            out,
            "  simulated: {s} cycles per launch, {} for the slowest block{ratio}",
            j.simulated_block_cycles.unwrap_or(0)
        );
    }
    let _ = writeln!(out, "  ({:.3} s)", j.seconds);
    out
}
