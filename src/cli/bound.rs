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
    pub launch: KernelLaunch,
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// The kernel, its launch and the simulator's arguments, as `bound` and
/// `time` take them.
#[derive(Args, Debug)]
pub struct KernelLaunch {
    /// The kernel, by source name or symbol; needed when the file has several.
    #[arg(long)]
    pub kernel: Option<String>,
    /// A parameter's value, NAME=VALUE (repeatable), to evaluate the bound at.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Block shape the bound is for (default: reqntid, launch bounds, else 256).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub block_dim: Option<String>,
    /// Grid shape: gridDim in the bound, the launch-wide bound, waves of blocks.
    #[arg(long, value_name = "X[,Y[,Z]]", default_value = "1")]
    pub grid: String,
    /// Simulator arguments for pointers (as `simulate --arg`); other pointers
    /// get zeroed buffers of `--buffer-bytes`.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub buffer_bytes: u64,
    /// Bytes of dynamic shared memory per block (for `--simulate`, and the
    /// residency in `time`).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub shared_bytes: u64,
    /// A per-kernel analysis limit, KEY=VALUE, as for `check` (lp-rows too).
    #[arg(long, value_name = "KEY=VALUE")]
    pub budget: Vec<String>,
}

/// [`KernelLaunch`] read: the parameters, grid, block shape and budget.
pub(super) struct Launch {
    pub params: std::collections::BTreeMap<String, f64>,
    pub grid: [u32; 3],
    pub block_dim: Option<BlockDim>,
    pub budget: crate::budget::Budget,
}

impl KernelLaunch {
    /// The launch read, the module of `file` and the kernel.
    pub(super) fn load(
        &self,
        file: &std::path::Path,
        compile: &CompileArgs,
    ) -> Result<(Launch, crate::ir::Module, crate::ir::FuncId), String> {
        let launch = self.read()?;
        let (m, kernel) = load_kernel(file, compile, self.kernel.as_deref())?;
        Ok((launch, m, kernel))
    }

    fn read(&self) -> Result<Launch, String> {
        Ok(Launch {
            params: parse_params(&self.params)?,
            grid: shape(&self.grid, "grid")?,
            block_dim: parse_block_dim(self.block_dim.as_deref())?,
            budget: parse_budget(&self.budget)?,
        })
    }
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

/// `--param NAME=VALUE` values by name.
fn parse_params(params: &[String]) -> Result<std::collections::BTreeMap<String, f64>, String> {
    let mut values = std::collections::BTreeMap::new();
    for p in params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| format!("--param: expected NAME=VALUE, got '{p}'"))?;
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("--param {p}: '{}' is not a number", v.trim()))?;
        values.insert(k.trim().to_string(), v);
    }
    Ok(values)
}

/// The module of `file` (full debug info, for parameter names) and its
/// kernel `name` (or its only one).
fn load_kernel(
    file: &std::path::Path,
    compile: &CompileArgs,
    name: Option<&str>,
) -> Result<(crate::ir::Module, crate::ir::FuncId), String> {
    let mut compile = compile.options();
    compile.full_debug = true;
    let m = frontend::load(file, &compile).map_err(|e| e.to_string())?;
    let kernel = super::simulate::pick_kernel(&m, name)?;
    Ok((m, kernel))
}

/// The module's analysis at `block_dim`, every site's figures, and the
/// index of `kernel` among the analysed kernels.
pub(super) fn analyse(
    m: &crate::ir::Module,
    kernel: crate::ir::FuncId,
    block_dim: Option<BlockDim>,
    budget: crate::budget::Budget,
) -> Result<
    (
        analysis::ModuleAnalysis<'_>,
        Vec<Vec<crate::checks::SiteFigures>>,
        usize,
    ),
    String,
> {
    let opts = analysis::Options {
        block_dim,
        no_explanations: true,
        budget,
        ..analysis::Options::default()
    };
    let a = analysis::analyze(m, &opts, &IfdsTaint);
    let figures = crate::checks::measure_all(&a);
    let ki = a
        .kernels
        .iter()
        .position(|k| k.kernel == kernel)
        .ok_or("the kernel has no body")?;
    Ok((a, figures, ki))
}

/// `--block-dim`, if given.
fn parse_block_dim(text: Option<&str>) -> Result<Option<BlockDim>, String> {
    text.map(|s| BlockDim::parse(s, BlockDimSource::Option))
        .transpose()
        .map_err(|e| format!("--block-dim: {e}"))
}

/// The CLI budgets with `--budget KEY=VALUE` applied.
fn parse_budget(settings: &[String]) -> Result<crate::budget::Budget, String> {
    let mut budget = crate::budget::Budget::CLI;
    for b in settings {
        let (k, v) = b
            .split_once('=')
            .ok_or_else(|| format!("--budget: expected KEY=VALUE, got '{b}'"))?;
        budget
            .set(k.trim(), v)
            .map_err(|e| format!("--budget: {e}"))?;
    }
    Ok(budget)
}

pub(super) fn shape(text: &str, what: &str) -> Result<[u32; 3], String> {
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
    let (launch, m, kernel) = args.launch.load(&args.file, &args.compile)?;
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
    let arguments = sim_arguments(m, kernel, &args.launch, at)?;
    let config = LaunchConfig {
        grid,
        block: *block,
        dynamic_shared: args.launch.shared_bytes,
        ..LaunchConfig::default()
    };
    let o = sim::simulate(m, kernel, &config, &arguments).map_err(|e| e.to_string())?;
    Ok(o.warps
        .iter()
        .map(|w| metric_of(&w.counters, metric))
        .max()
        .unwrap_or(0))
}

/// A simulated launch's arguments: `--arg` values by name, zeroed buffers
/// of `buffer_bytes` for the other pointers, `--param` values for the
/// other scalars.
pub(super) fn sim_arguments(
    m: &crate::ir::Module,
    kernel: crate::ir::FuncId,
    launch: &KernelLaunch,
    at: &Params,
) -> Result<Vec<(String, ArgValue)>, String> {
    let buffer_bytes = launch.buffer_bytes;
    let mut named = Vec::new();
    for a in &launch.args {
        named.push(sim::args::parse_named(a).map_err(|e| format!("--arg {e}"))?);
    }
    let mut arguments = Vec::new();
    for p in sim::params(m, kernel) {
        if let Some(v) = named.iter().find(|(n, _)| *n == p.name) {
            arguments.push(v.clone());
        } else if p.is_pointer {
            let spec = BufferSpec {
                bytes: buffer_bytes,
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
    Ok(arguments)
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
