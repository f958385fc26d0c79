//! Cycle mode's report for people: the launch, the blocks, and where the
//! warps spent their cycles, line by line.

use super::{Breakdown, CycleReport};
use std::fmt::Write;

/// Blocks listed one by one, at most.
const MAX_BLOCKS: usize = 8;
/// Lines listed, the costliest first, at most.
const MAX_LINES: usize = 12;

/// `issue 40 (20%), memory 150 (75%), ...` over a total.
pub fn shares(b: &Breakdown) -> String {
    let total = b.total().max(1) as f64;
    let part = |name: &str, v: u64| format!("{name} {v} ({:.0}%)", 100.0 * v as f64 / total);
    [
        part("issue", b.issue),
        part("memory stall", b.memory),
        part("barrier wait", b.barrier),
        part("divergence", b.divergence),
    ]
    .join(", ")
}

pub fn render(c: &CycleReport) -> String {
    let mut out = String::new();
    let r = &c.residency;
    let _ = writeln!(
        out,
        "cycles on the {}: launch {} ({:.2} µs at {} MHz)",
        c.machine.name, c.launch_cycles, c.microseconds, c.machine.clock_mhz
    );
    let _ = writeln!(
        out,
        "  {} warp(s) per block, {} block(s) per SM ({}); {} wave(s) on {} SM(s), issue rate {}",
        r.warps_per_block,
        r.blocks_per_sm,
        r.limited_by,
        c.waves.waves,
        c.waves.sms_used,
        c.machine.issue_rate
    );
    let _ = writeln!(
        out,
        "  {} global sectors: DRAM needs {} cycles, L2 {}; the busiest SM's {} shared wavefronts need {}; the latency replay {}: {}",
        c.traffic.sectors,
        c.throughput.dram,
        c.throughput.l2,
        c.traffic.sm_wavefronts,
        c.throughput.shared,
        c.replay_cycles,
        match c.limited_by {
            "latency" => "latency and issue limit the launch".to_string(),
            r => format!("{r} limits the launch"),
        }
    );
    let dims = |d: [u32; 3]| format!("({},{},{})", d[0], d[1], d[2]);
    for b in c.blocks.iter().take(MAX_BLOCKS) {
        let _ = writeln!(
            out,
            "  block {}: {} cycles (SM {}, wave {}), work {} warp instructions, span {} cycles",
            dims(b.block),
            b.cycles,
            b.sm,
            b.wave,
            b.work,
            b.span
        );
    }
    if c.blocks.len() > MAX_BLOCKS {
        let _ = writeln!(
            out,
            "  ... {} more blocks, the slowest {} cycles",
            c.blocks.len() - MAX_BLOCKS,
            c.max_block_cycles()
        );
    }
    let _ = writeln!(out, "  warp-cycles: {}", shares(&c.breakdown));
    let mut lines: Vec<_> = c.lines.iter().collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.cycles.total()));
    if !lines.is_empty() {
        out.push_str("  by line (warp-cycles):\n");
    }
    for l in lines.iter().take(MAX_LINES) {
        let place = match l.line {
            0 => "(no line)".to_string(),
            n => format!("{}:{n}", l.file),
        };
        let _ = writeln!(
            out,
            "    {place:<24} {:>10}  {}",
            l.cycles.total(),
            shares(&l.cycles)
        );
    }
    out
}
