//! `warpcheck bound`: one kernel's per-warp cost bound for one metric, its
//! value at given parameters and, with `--simulate`, the simulated figure
//! beside it.

use super::check::{CompileArgs, Format};
use super::exit;
use crate::analysis::{self, BlockDim, BlockDimSource};
use crate::cost::bound::Params;
use crate::cost::{self, Metric, Weights};
use crate::frontend;
use crate::sim::{self, ArgValue, BufferSpec, Init, LaunchConfig};
use crate::taint::ifds::IfdsTaint;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct BoundArgs {
    /// The .cu, .ll or .bc file.
    pub file: PathBuf,
    /// The kernel, by source name or symbol; needed when the file has several.
    #[arg(long)]
    pub kernel: Option<String>,
    /// sectors, conflicts, divwarps or steps.
    #[arg(long, default_value = "steps")]
    pub metric: String,
    /// A parameter's value, NAME=VALUE (repeatable), to evaluate the bound at.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Block shape the bound is for (default: reqntid, launch bounds, else 256).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub block_dim: Option<String>,
    /// Grid shape, for gridDim in the bound and the launch-wide bound.
    #[arg(long, value_name = "X[,Y[,Z]]", default_value = "1")]
    pub grid: String,
    /// Weights for steps: lines `inst = 1`, `load = 4`, `phi = 1`, `divergence = 0`.
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Highest degree of the polynomial bounds.
    #[arg(long, default_value_t = 2)]
    pub degree: usize,
    /// Also run the launch in the simulator and print its largest per-warp figure.
    #[arg(long)]
    pub simulate: bool,
    /// Simulator arguments for pointers (as `simulate --arg`); other pointers
    /// get zeroed buffers of `--buffer-bytes`.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub buffer_bytes: u64,
    /// Bytes of dynamic shared memory per block, for `--simulate`.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub shared_bytes: u64,
    /// Show where the bound comes from: loops and lines.
    #[arg(long)]
    pub attribution: bool,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// A per-kernel analysis limit, KEY=VALUE, as for `check` (lp-rows too).
    #[arg(long, value_name = "KEY=VALUE")]
    pub budget: Vec<String>,
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
}

fn usage(message: String) -> i32 {
    eprintln!("warpcheck: error: {message}");
    exit::INPUT
}

pub fn run(args: &BoundArgs) -> i32 {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => usage(e),
    }
}

fn shape(text: &str, what: &str) -> Result<[u32; 3], String> {
    BlockDim::parse(text, BlockDimSource::Option)
        .map(|b| b.dims)
        .map_err(|e| format!("--{what}: {e}"))
}

fn run_inner(args: &BoundArgs) -> Result<i32, String> {
    let metric = Metric::parse(&args.metric).ok_or_else(|| {
        format!(
            "--metric: '{}' is not sectors, conflicts, divwarps or steps",
            args.metric
        )
    })?;
    let weights = match &args.weights {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("--weights {}: {e}", p.display()))?;
            Weights::parse(&text).map_err(|e| format!("{}: {e}", p.display()))?
        }
        None => Weights::default(),
    };
    let mut values = std::collections::BTreeMap::new();
    for p in &args.params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| format!("--param: expected NAME=VALUE, got '{p}'"))?;
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("--param {p}: '{}' is not a number", v.trim()))?;
        values.insert(k.trim().to_string(), v);
    }
    let grid = shape(&args.grid, "grid")?;
    let block_dim = args
        .block_dim
        .as_deref()
        .map(|s| BlockDim::parse(s, BlockDimSource::Option))
        .transpose()
        .map_err(|e| format!("--block-dim: {e}"))?;
    let mut budget = crate::budget::Budget::CLI;
    for b in &args.budget {
        let (k, v) = b
            .split_once('=')
            .ok_or_else(|| format!("--budget: expected KEY=VALUE, got '{b}'"))?;
        budget
            .set(k.trim(), v)
            .map_err(|e| format!("--budget: {e}"))?;
    }
    let mut compile = args.compile.options();
    compile.full_debug = true;
    let m = frontend::load(&args.file, &compile).map_err(|e| e.to_string())?;
    let kernel = super::simulate::pick_kernel(&m, args.kernel.as_deref())?;
    let opts = analysis::Options {
        block_dim,
        no_explanations: true,
        budget,
        ..analysis::Options::default()
    };
    let a = analysis::analyze(&m, &opts, &IfdsTaint);
    let figures = crate::checks::measure_all(&a);
    let Some(ki) = a.kernels.iter().position(|k| k.kernel == kernel) else {
        return Err("the kernel has no body".into());
    };
    let copts = cost::Options {
        degree: args.degree,
        weights,
        metrics: vec![metric],
        attribution: args.attribution,
    };
    let g = a.graphs.func(kernel);
    let kb = cost::bound_kernel(&m, g, &a.kernels[ki], &figures[ki], &copts, &budget.start());
    let mb = kb.get(metric).ok_or("no bound computed")?;
    let at = Params { values, grid };
    let (text, value, reason) = match &mb.bound {
        Ok(p) => (kb.names.render(p), kb.names.eval(p, &at), None),
        Err(e) => ("no bound".to_string(), None, Some(e.clone())),
    };
    let blocks: u64 = grid.iter().map(|&x| u64::from(x)).product();
    let launch = value.map(|v| v * f64::from(kb.warps_per_block) * blocks as f64);
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
    Ok(exit::OK)
}

/// The largest per-warp figure of one simulated launch.
fn simulate(
    args: &BoundArgs,
    m: &crate::ir::Module,
    kernel: crate::ir::FuncId,
    block: &[u32; 3],
    grid: [u32; 3],
    at: &Params,
    metric: Metric,
) -> Result<u64, String> {
    let mut given = Vec::new();
    for a in &args.args {
        given.push(sim::args::parse_named(a).map_err(|e| format!("--arg {e}"))?);
    }
    let mut arguments = Vec::new();
    for p in sim::params(m, kernel) {
        if let Some(v) = given.iter().find(|(n, _)| *n == p.name) {
            arguments.push(v.clone());
        } else if p.is_pointer {
            let spec = BufferSpec {
                bytes: args.buffer_bytes,
                init: Init::Zero,
                elem: None,
            };
            arguments.push((p.name.clone(), ArgValue::Buffer(spec)));
        } else if let Some(v) = at.values.get(&p.name) {
            arguments.push((p.name.clone(), ArgValue::Int(*v as i128)));
        } else {
            return Err(format!(
                "--simulate needs a value for '{}' (--param)",
                p.name
            ));
        }
    }
    let config = LaunchConfig {
        grid,
        block: *block,
        dynamic_shared: args.shared_bytes,
        ..LaunchConfig::default()
    };
    let o = sim::simulate(m, kernel, &config, &arguments).map_err(|e| e.to_string())?;
    Ok(o.warps
        .iter()
        .map(|w| metric_of(&w.counters, metric))
        .max()
        .unwrap_or(0))
}

/// One metric of the simulator's counters.
pub fn metric_of(c: &sim::Counters, metric: Metric) -> u64 {
    match metric {
        Metric::Sectors => c.sectors,
        Metric::Conflicts => c.conflicts,
        Metric::Divwarps => c.divwarps,
        Metric::Steps => c.steps,
    }
}
