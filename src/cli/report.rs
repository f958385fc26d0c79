//! `warpcheck report`: analyse files (or a compile database), bound each
//! kernel's cost, run each kernel in the simulator over a parameter sweep,
//! and write one self-contained HTML page ([`crate::diag::html`]).

use super::check::{self, CompileArgs, Limits, Settings};
use super::exit;
use super::jobs::Job;
use super::kernel;
use crate::analysis::{self, KernelAnalysis};
use crate::cost::bound::Params;
use crate::cost::KernelBounds;
use crate::diag::html::{self, FileResult, KernelSweep, MetricSweep};
use crate::diag::json;
use crate::ir::{FuncId, Module, TypeKind};
use crate::sim::{self, ArgValue, BufferSpec, Init, LaunchConfig};
use crate::taint::ifds::IfdsTaint;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(mut_arg("files", |a| a.required_unless_present_any(["build_path", "run"])))]
pub struct ReportArgs {
    #[command(flatten)]
    pub inputs: check::Inputs,
    /// Instead of analysing files, the page of a `warpcheck run --format
    /// json` report, read from this file (its sources are read from the
    /// current directory, as the run compiled them).
    #[arg(long, value_name = "RUN.json", conflicts_with_all = ["files", "build_path"])]
    pub run: Option<PathBuf>,
    /// Where to write the page.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        default_value = "warpcheck-report.html"
    )]
    pub output: PathBuf,
    /// The page's title (default: "warpcheck report"; with --run, the
    /// run's command).
    #[arg(long)]
    pub title: Option<String>,
    /// The values every integer parameter takes in the sweep, comma-separated.
    #[arg(
        long,
        value_name = "N,N,...",
        default_value = "32,64,128,256,512,1024,2048"
    )]
    pub sweep: String,
    /// Grid shape of the simulated launches (and gridDim in the bounds).
    #[arg(long, value_name = "X[,Y[,Z]]", default_value = "1")]
    pub grid: String,
    /// Bytes of the zeroed buffer each pointer parameter gets.
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub buffer_bytes: u64,
    /// The most `--buffer-bytes` may be (1 GiB by default).
    #[arg(long, value_name = "BYTES", default_value_t = kernel::DEFAULT_MAX_BUFFER_BYTES)]
    pub max_buffer_bytes: u64,
    /// Bytes of dynamic shared memory (`extern __shared__`) of each
    /// simulated launch, where the launch in the host code does not give
    /// them.
    #[arg(long, value_name = "BYTES")]
    pub shared_bytes: Option<u64>,
    /// Wall-clock limit of one simulated launch, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub sim_timeout: f64,
    /// Bounds only: no simulated launches and no charts.
    #[arg(long)]
    pub no_simulate: bool,
    /// Also list every branch and access of each kernel with its figures
    /// (a table per kernel card; many times the findings' size).
    #[arg(long)]
    pub sites: bool,
    /// Block shape X[,Y[,Z]] for every kernel (a kernel's reqntid still wins).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub block_dim: Option<String>,
    /// Switch a check off (repeatable).
    #[arg(long, value_name = "CHECK")]
    pub disable: Vec<String>,
    /// A per-kernel analysis limit, KEY=VALUE, as for `check`.
    #[arg(long, value_name = "KEY=VALUE")]
    pub budget: Vec<String>,
    /// Files analysed at once (default: the number of cores).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// How each kernel is swept.
struct SweepPlan {
    xs: Vec<f64>,
    grid: [u32; 3],
    buffer_bytes: u64,
    /// `--shared-bytes`.
    shared_bytes: Option<u64>,
    timeout: Duration,
    simulate: bool,
    /// `--sites`: each kernel's table of sites.
    sites: bool,
}

fn usage(message: String) -> i32 {
    eprintln!("warpcheck: error: {message}");
    exit::INPUT
}

pub fn run(args: &ReportArgs) -> i32 {
    if let Some(run) = &args.run {
        return run_page(run, args);
    }
    let limits = Limits {
        block_dim: args.block_dim.as_deref(),
        disable: &args.disable,
        budget: &args.budget,
        params: &[],
    };
    let settings = match limits.options() {
        Ok(o) => o,
        Err(code) => return code,
    };
    let plan = match plan(args) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    let mut failed = Vec::new();
    let jobs = match args.inputs.jobs(&args.compile, &mut failed) {
        Ok(j) => j,
        Err(e) => return usage(e),
    };
    let threads = args.jobs.unwrap_or_else(super::jobs::default_threads);
    let outcomes = super::jobs::run_all(&jobs, threads, |job| {
        std::panic::catch_unwind(|| report_file(job, &settings, &plan)).ok()
    });
    let mut files = Vec::new();
    let mut errors = failed;
    let mut internal = false;
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome.flatten() {
            Some(Ok(f)) => files.push(f),
            Some(Err(e)) => {
                eprintln!("warpcheck: error: {e}");
                errors.push(e);
            }
            None => {
                let e = format!(
                    "internal error while analysing {}; other files are unaffected. Please report this.",
                    job.file.display()
                );
                eprintln!("warpcheck: {e}");
                errors.push(e);
                internal = true;
            }
        }
    }
    let page = html::render(&html::Page {
        title: args.title.as_deref().unwrap_or("warpcheck report"),
        files: &files,
        errors: &errors,
    });
    if let Err(e) = std::fs::write(&args.output, page) {
        return usage(format!("{}: {e}", args.output.display()));
    }
    let kernels: usize = files.iter().map(|f| f.kernels.len()).sum();
    let findings: usize = files.iter().map(|f| f.findings.len()).sum();
    eprintln!(
        "warpcheck: wrote {} ({} files, {kernels} kernels, {findings} findings)",
        args.output.display(),
        files.len()
    );
    if internal {
        exit::INTERNAL
    } else if !errors.is_empty() {
        exit::INPUT
    } else {
        exit::OK
    }
}

/// `--run FILE`: the page of a run's JSON report.
fn run_page(file: &std::path::Path, args: &ReportArgs) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => return usage(format!("{}: {e}", file.display())),
    };
    let report = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(r) if r["kernels"].is_array() && r["errors"].is_array() => r,
        Ok(_) => {
            return usage(format!(
                "{}: not a report of `warpcheck run --format json` (no kernels and errors)",
                file.display()
            ))
        }
        Err(e) => return usage(format!("{}: not JSON: {e}", file.display())),
    };
    let page = super::run_html::render(&report, args.title.as_deref());
    if let Err(e) = std::fs::write(&args.output, page) {
        return usage(format!("{}: {e}", args.output.display()));
    }
    eprintln!("warpcheck: wrote {}", args.output.display());
    exit::OK
}

fn plan(args: &ReportArgs) -> Result<SweepPlan, String> {
    let xs = args
        .sweep
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<u32>()
                .map(f64::from)
                .map_err(|_| format!("--sweep: '{}' is not a whole number", v.trim()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let grid = kernel::grid_shape(&args.grid)?;
    if !(args.sim_timeout > 0.0 && args.sim_timeout.is_finite()) {
        return Err("--sim-timeout: expected a positive number of seconds".into());
    }
    Ok(SweepPlan {
        xs,
        grid,
        buffer_bytes: kernel::within_cap(
            "--buffer-bytes",
            args.buffer_bytes,
            args.max_buffer_bytes,
        )?,
        shared_bytes: args
            .shared_bytes
            .map(|b| kernel::within_cap("--shared-bytes", b, args.max_buffer_bytes))
            .transpose()?,
        timeout: Duration::from_secs_f64(args.sim_timeout),
        simulate: !args.no_simulate,
        sites: args.sites,
    })
}

/// One file's page section: its kernels, findings, bounds and sweeps. The
/// kernels go in batches as in `check` ([`analysis::in_batches`]): each
/// batch is checked, bounded and swept, and only its part of the page is
/// kept; a file whose loading alone would pass the memory budget is
/// refused before it is read.
fn report_file(job: &Job, settings: &Settings, plan: &SweepPlan) -> Result<FileResult, String> {
    let (settings, mut compile) = check::configured(job, settings)?;
    check::fits_in_memory(&job.file, &settings).map_err(|e| e.to_string())?;
    // Full debug info names the parameters the bounds are written in.
    compile.full_debug = true;
    let (m, launches) = check::load_with_launches(&job.file, &compile, &compile, &settings);
    let m = m.map_err(|e| e.to_string())?;
    check::require_nvptx(&job.file, &m).map_err(|e| e.to_string())?;
    let mut opts = settings.analysis.clone();
    opts.launches = launches;
    let opts = &opts;
    let machine = check::machine_for(&job.file, &settings);
    let mut report = json::Report::new();
    report.with_sites = plan.sites;
    let (mut findings, mut sweeps, mut problems) = (Vec::new(), Vec::new(), Vec::new());
    analysis::in_batches(&m, opts, &IfdsTaint, |a| {
        let figures = crate::checks::measure_all(a);
        let batch = check::findings_with_impact(a, &figures, &settings, &machine);
        let (batch, found) = crate::diag::suppress::filter(batch, settings.report.bare_nolint);
        for p in found {
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
        let bounds = crate::cost::bound_module(a, &figures, &Default::default(), &opts.budget);
        report.add(a, &figures, &batch);
        report.attach_bounds(
            bounds
                .iter()
                .map(|kb| crate::cost::report::json(&m, kb))
                .collect(),
        );
        sweeps.extend(
            a.kernels
                .iter()
                .zip(&bounds)
                .map(|(k, kb)| sweep(&m, k, kb, plan)),
        );
        findings.extend(batch);
    });
    for p in problems {
        eprintln!("{p}");
    }
    Ok(FileResult {
        name: job.file.display().to_string(),
        kernels: report.kernels,
        findings,
        sweeps,
    })
}

/// The kernel's integer parameters by name: they take the sweep's values.
fn integer_params(m: &Module, kernel: FuncId) -> Vec<String> {
    let f = m.func(kernel);
    sim::params(m, kernel)
        .into_iter()
        .zip(&f.params)
        .filter(|(_, p)| matches!(m.types.kind(p.ty), TypeKind::Int(_)))
        .map(|(info, _)| info.name)
        .collect()
}

/// The bound and the simulated figure of every metric at each x.
fn sweep(
    m: &Module,
    k: &KernelAnalysis,
    kb: &KernelBounds,
    plan: &SweepPlan,
) -> Result<KernelSweep, String> {
    if !plan.simulate {
        return Err("not simulated (--no-simulate)".into());
    }
    let ints = integer_params(m, k.kernel);
    if ints.is_empty() {
        return Err("no integer parameter to sweep".into());
    }
    let mut metrics: Vec<MetricSweep> = kb
        .metrics
        .iter()
        .filter(|mb| mb.bound.is_ok())
        .map(|mb| MetricSweep {
            metric: mb.metric.name(),
            bound: Vec::new(),
            simulated: Vec::new(),
        })
        .collect();
    if metrics.is_empty() {
        return Err("no metric has a bound".into());
    }
    // Each reason a point was not simulated, with its points.
    let mut failed: Vec<(String, Vec<f64>)> = Vec::new();
    for &x in &plan.xs {
        let at = Params {
            values: ints.iter().map(|n| (n.clone(), x)).collect(),
            grid: plan.grid,
        };
        let simulated = simulate(m, k, plan, &ints, x);
        if let Err(e) = &simulated {
            match failed.iter_mut().find(|(why, _)| why == e) {
                Some((_, xs)) => xs.push(x),
                None => failed.push((e.clone(), vec![x])),
            }
        }
        for ms in &mut metrics {
            let Some(mb) = kb.metrics.iter().find(|b| b.metric.name() == ms.metric) else {
                continue;
            };
            let bound = mb
                .bound
                .as_ref()
                .ok()
                .and_then(|b| kb.names.eval_bound(b, &at));
            ms.bound.push(bound);
            let value = simulated
                .as_ref()
                .ok()
                .map(|o| kernel::largest(o, mb.metric) as f64);
            ms.simulated.push(value);
        }
    }
    // A reason is said once, with the points it stopped.
    let notes = failed
        .into_iter()
        .map(|(why, xs)| {
            let xs: Vec<String> = xs.iter().map(f64::to_string).collect();
            let at = if xs.len() == plan.xs.len() {
                "at every point".to_string()
            } else {
                format!("at {} = {}", ints.join(" = "), xs.join(", "))
            };
            format!("not simulated {at}: {why}")
        })
        .collect();
    Ok(KernelSweep {
        param: ints.join(", "),
        xs: plan.xs.clone(),
        metrics,
        notes,
    })
}

/// The dynamic shared memory of a simulated launch: what the host code's
/// launch of this block shape gives (the most, if several of that shape
/// give different amounts), else `--shared-bytes`, else none.
fn dynamic_shared(k: &KernelAnalysis, plan: &SweepPlan) -> u64 {
    k.shapes
        .sites
        .iter()
        .filter(|l| l.block == Some(k.block_dim.dims))
        .filter_map(|l| l.shared_bytes)
        .max()
        .or(plan.shared_bytes)
        .unwrap_or(0)
}

/// One launch with every integer parameter at `x`, zeroed buffers for
/// pointers and 1.0 for floating-point parameters.
fn simulate(
    m: &Module,
    k: &KernelAnalysis,
    plan: &SweepPlan,
    ints: &[String],
    x: f64,
) -> Result<sim::Outcome, String> {
    let arguments: Vec<(String, ArgValue)> = sim::params(m, k.kernel)
        .into_iter()
        .map(|p| {
            let v = if p.is_pointer {
                ArgValue::Buffer(BufferSpec {
                    bytes: plan.buffer_bytes,
                    init: Init::Zero,
                    elem: None,
                })
            } else if ints.contains(&p.name) {
                ArgValue::Int(x as i128)
            } else {
                ArgValue::Float(1.0)
            };
            (p.name, v)
        })
        .collect();
    let config = LaunchConfig {
        grid: plan.grid,
        block: k.block_dim.dims,
        dynamic_shared: dynamic_shared(k, plan),
        budget: sim::budget::Budget {
            timeout: Some(plan.timeout),
            ..Default::default()
        },
        ..LaunchConfig::default()
    };
    sim::simulate(m, k.kernel, &config, &arguments).map_err(|e| e.to_string())
}
