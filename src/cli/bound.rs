//! `warpcheck bound`: one kernel's per-warp cost bound for one metric, its
//! value at given parameters and, with `--simulate`, the simulated figure
//! beside it.

use super::check::{CompileArgs, Format};
use super::exit;
use super::kernel::{analyse, largest, simulate_launch, KernelArgs};
use crate::cost::bound::Params;
use crate::cost::{self, Metric, Weights};
use crate::sim::LaunchConfig;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct BoundArgs {
    /// The .cu, .ll or .bc file.
    pub file: PathBuf,
    /// sectors, conflicts, divwarps or steps.
    #[arg(long, default_value = "steps")]
    pub metric: String,
    /// Weights for steps: lines `inst = 1`, `load = 4`, `phi = 1`, `divergence = 0`.
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Highest degree of the polynomial bounds.
    #[arg(long, default_value_t = 2)]
    pub degree: usize,
    /// Also run the launch in the simulator and print its largest per-warp figure.
    #[arg(long)]
    pub simulate: bool,
    /// Show where the bound comes from: loops and lines.
    #[arg(long)]
    pub attribution: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub kernel: KernelArgs,
    #[command(flatten)]
    pub compile: CompileArgs,
}

#[derive(Serialize)]
struct Json {
    kernel: String,
    metric: &'static str,
    bound: String,
    value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    simulated: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    launch: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// When the bound is the least of several polynomials: each, with
    /// its value at the parameters (`value` is the least of these).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pieces: Vec<PieceJson>,
}

#[derive(Serialize)]
struct PieceJson {
    bound: String,
    value: Option<f64>,
}

fn usage(message: String) -> i32 {
    eprintln!("warpcheck: error: {message}");
    exit::INPUT
}

pub fn run(args: &BoundArgs) -> i32 {
    match super::kernel::caught(|| run_inner(args)) {
        Ok(code) => code,
        Err(e) => usage(e),
    }
}

/// The largest `--weights` file: a line per instruction kind.
const MAX_WEIGHTS_BYTES: u64 = 1 << 20;

fn run_inner(args: &BoundArgs) -> Result<i32, String> {
    let metric = Metric::parse(&args.metric).ok_or_else(|| {
        format!(
            "--metric: '{}' is not sectors, conflicts, divwarps or steps",
            args.metric
        )
    })?;
    let weights = match &args.weights {
        Some(p) => {
            let text = crate::files::read_text(p, "weights file", MAX_WEIGHTS_BYTES)
                .map_err(|e| format!("--weights {e}"))?;
            Weights::parse(&text).map_err(|e| format!("{}: {e}", p.display()))?
        }
        None => Weights::default(),
    };
    let (launch, m, kernel) = args.kernel.load(&args.file, &args.compile)?;
    let (values, grid, budget) = (launch.params, launch.grid, launch.budget);
    let (a, figures, ki) = analyse(&m, kernel, launch.block_dim, budget)?;
    let copts = cost::Options {
        degree: args.degree,
        weights,
        metrics: vec![metric],
        attribution: args.attribution,
    };
    let g = a.graphs.func(kernel);
    let kb = cost::bound_kernel(&m, g, &a.kernels[ki], &figures[ki], &copts, &budget.start());
    if let Some(why) = &kb.internal {
        eprintln!("warpcheck: {why}");
        return Ok(exit::INTERNAL);
    }
    let mb = kb.get(metric).ok_or("no bound computed")?;
    let at = Params { values, grid };
    let (text, value, reason) = match &mb.bound {
        Ok(b) => (kb.names.render_bound(b), kb.names.eval_bound(b, &at), None),
        Err(e) => ("no bound".to_string(), None, Some(e.clone())),
    };
    let pieces: Vec<PieceJson> = match &mb.bound {
        Ok(b) if b.pieces().len() > 1 => b
            .pieces()
            .iter()
            .map(|p| PieceJson {
                bound: kb.names.render(p),
                value: kb.names.eval(p, &at),
            })
            .collect(),
        _ => Vec::new(),
    };
    let blocks: u64 = grid.iter().map(|&x| u64::from(x)).product();
    let launch = value.map(|v| v * f64::from(kb.warps_per_block) * blocks as f64);
    // `Some(None)`: the simulated kernel stopped (named on stderr).
    let simulated = if args.simulate {
        Some(simulate(
            args,
            &m,
            kernel,
            &a.kernels[ki].block_dim.dims,
            grid,
            &at,
            metric,
        )?)
    } else {
        None
    };
    let faulted = matches!(simulated, Some(None));
    let simulated = simulated.flatten();
    let name = m.func(kernel).short_name();
    match args.format {
        Format::Json => {
            let j = Json {
                kernel: name,
                metric: metric.name(),
                bound: text,
                value,
                simulated,
                launch,
                reason,
                pieces,
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&j).map_err(|e| e.to_string())?
            );
        }
        Format::Text => {
            println!("{name}: {} per warp ≤ {text}", metric.name());
            if let Some(r) = reason {
                println!("  no bound: {r}");
            }
            match value {
                Some(v) if pieces.len() > 1 => {
                    let each: Vec<String> = pieces
                        .iter()
                        .map(|p| p.value.map_or("unknown".into(), |v| v.to_string()))
                        .collect();
                    println!(
                        "  at these parameters: {v} (the least of {})",
                        each.join(", ")
                    )
                }
                Some(v) => println!("  at these parameters: {v}"),
                None if mb.bound.is_ok() && !at.values.is_empty() => {
                    println!(
                        "  at these parameters: unknown (give every parameter the bound names)"
                    )
                }
                None => {}
            }
            if let (Some(l), true) = (launch, mb.bound.is_ok()) {
                println!(
                    "  launch ({} warps x {blocks} blocks): {l}",
                    kb.warps_per_block
                );
            }
            if let Some(s) = simulated {
                println!("  simulated: {s} (largest over the warps)");
            }
            for (what, shares) in [("loop", &mb.loops), ("line", &mb.lines)] {
                for s in shares {
                    println!("  {what} {}: {}", s.line, kb.names.render(&s.bound));
                }
            }
            println!(
                "  ({} LP variables, {} rows, {:.3} s)",
                kb.lp_vars, kb.lp_rows, kb.seconds
            );
        }
    }
    Ok(if faulted { exit::WARNINGS } else { exit::OK })
}

/// The largest per-warp figure of one simulated launch; `None` if the
/// kernel stopped (see `simulate_launch`).
fn simulate(
    args: &BoundArgs,
    m: &crate::ir::Module,
    kernel: crate::ir::FuncId,
    block: &[u32; 3],
    grid: [u32; 3],
    at: &Params,
    metric: Metric,
) -> Result<Option<u64>, String> {
    let arguments = args.kernel.sim_arguments(m, kernel, at)?;
    let config = LaunchConfig {
        grid,
        block: *block,
        dynamic_shared: args.kernel.launch.shared_bytes()?,
        budget: args.kernel.sim_budget.budget()?,
        ..LaunchConfig::default()
    };
    Ok(simulate_launch(m, kernel, &config, &arguments)?.map(|o| largest(&o, metric)))
}
