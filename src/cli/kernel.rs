//! What the commands about one kernel share (`simulate`, `bound`, `time`):
//! the kernel and its launch as the command line spells them, read once,
//! and what `bound` and `time` add to it (parameter values, budgets, the
//! buffers their `--simulate` gives pointers).

use super::check::CompileArgs;
use crate::analysis::{self, BlockDim, BlockDimSource};
use crate::config::Config;
use crate::cost::bound::Params;
use crate::cost::Metric;
use crate::frontend;
use crate::ir::{FuncId, Module};
use crate::machine::Machine;
use crate::sim::{self, ArgValue, BufferSpec, Init};
use crate::taint::ifds::IfdsTaint;
use clap::Args;
use std::collections::BTreeMap;
use std::path::Path;

/// One kernel launch: one spelling for every command that runs or bounds
/// a kernel (`--block` is kept as another name of `--block-dim`).
#[derive(Args, Debug)]
pub struct LaunchArgs {
    /// The kernel, by source name (vec_add) or symbol; needed when the file has several.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Block shape (default: the kernel's reqntid or launch bounds, else 256;
    /// the bounds keep a reqntid over it).
    #[arg(long, visible_alias = "block", value_name = "X[,Y[,Z]]")]
    pub block_dim: Option<String>,
    /// Grid shape in blocks (gridDim in the bounds).
    #[arg(long, value_name = "X[,Y[,Z]]", default_value = "1")]
    pub grid: String,
    /// A kernel argument: NAME=VALUE for scalars, NAME=buf:BYTES[:zero|iota|random[:TYPE]]
    /// for pointers (TYPE: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64). Repeatable.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Bytes of dynamic shared memory per block.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub shared_bytes: u64,
    /// The most bytes one buffer (`--arg NAME=buf:BYTES`, `--buffer-bytes`)
    /// or the dynamic shared memory may have (1 GiB by default).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BUFFER_BYTES)]
    pub max_buffer_bytes: u64,
}

/// A simulated launch's budget: `simulate`'s, and `--simulate`'s of `bound`
/// and `time`, so that a runaway kernel stops alike in each.
#[derive(Args, Debug)]
pub struct SimBudgetArgs {
    /// Stop the launch once it has issued this many warp instructions, summed
    /// over its blocks (0: no limit).
    #[arg(long, value_name = "N", default_value_t = sim::budget::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// Stop the launch after this many seconds of wall-clock time (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = sim::budget::DEFAULT_TIMEOUT.as_secs_f64())]
    pub timeout: f64,
    /// Stop the launch once its per-block and per-warp records take this
    /// many MiB (0: no limit).
    #[arg(long, value_name = "MB", default_value_t = sim::budget::DEFAULT_MAX_MEMORY >> 20)]
    pub max_memory: u64,
}

impl SimBudgetArgs {
    /// `--max-steps` and `--timeout`, where 0 is no limit.
    pub fn budget(&self) -> Result<sim::Budget, String> {
        let timeout = match std::time::Duration::try_from_secs_f64(self.timeout) {
            Ok(t) if t.is_zero() => None,
            Ok(t) => Some(t),
            Err(_) => {
                return Err(format!(
                    "--timeout: '{}' is not a number of seconds",
                    self.timeout
                ))
            }
        };
        let max_memory = match self.max_memory {
            0 => None,
            mb => Some(
                mb.checked_mul(1 << 20)
                    .ok_or_else(|| format!("--max-memory: {mb} MB is more than any machine has"))?,
            ),
        };
        Ok(sim::Budget {
            max_steps: (self.max_steps > 0).then_some(self.max_steps),
            timeout,
            max_memory,
        })
    }
}

/// `--max-buffer-bytes` unless raised: what one simulated buffer may take,
/// so that a size from the command line never asks for more memory than a
/// CI machine has.
pub const DEFAULT_MAX_BUFFER_BYTES: u64 = 1 << 30;

/// `bytes` given as `option`, within `cap`.
pub(super) fn within_cap(option: &str, bytes: u64, cap: u64) -> Result<u64, String> {
    if bytes > cap {
        return Err(format!(
            "{option}: {bytes} bytes is over the cap of {cap} bytes (raise it with --max-buffer-bytes)"
        ));
    }
    Ok(bytes)
}

impl LaunchArgs {
    /// `--grid`.
    pub(super) fn grid(&self) -> Result<[u32; 3], String> {
        grid_shape(&self.grid)
    }

    /// `--block-dim`, if given.
    pub(super) fn block_dim(&self) -> Result<Option<BlockDim>, String> {
        self.block_dim
            .as_deref()
            .map(|s| BlockDim::parse(s, BlockDimSource::Option))
            .transpose()
            .map_err(|e| format!("--block-dim: {e}"))
    }

    /// `--arg` values by name, each buffer within `--max-buffer-bytes`.
    pub(super) fn arguments(&self) -> Result<Vec<(String, ArgValue)>, String> {
        self.args
            .iter()
            .map(|a| {
                let (name, v) = sim::args::parse_named(a).map_err(|e| format!("--arg {e}"))?;
                if let ArgValue::Buffer(b) = &v {
                    within_cap(&format!("--arg {a}"), b.bytes, self.max_buffer_bytes)?;
                }
                Ok((name, v))
            })
            .collect()
    }

    /// `--shared-bytes`, within `--max-buffer-bytes`.
    pub(super) fn shared_bytes(&self) -> Result<u64, String> {
        within_cap("--shared-bytes", self.shared_bytes, self.max_buffer_bytes)
    }

    /// Every size of the launch, read before anything is compiled or run.
    pub(super) fn validate(&self) -> Result<(), String> {
        self.grid()?;
        self.block_dim()?;
        self.arguments()?;
        self.shared_bytes()?;
        Ok(())
    }

    /// The module of `file` (full debug info, for parameter names) and its
    /// kernel `--kernel` (or its only one).
    pub(super) fn load(
        &self,
        file: &Path,
        compile: &CompileArgs,
    ) -> Result<(Module, FuncId), String> {
        let mut compile = configured_options(file, compile)?;
        compile.full_debug = true;
        let m = frontend::load(file, &compile).map_err(|e| e.to_string())?;
        let kernel = pick_kernel(&m, self.kernel.as_deref())
            .map_err(|e| format!("{}: {e}", file.display()))?;
        Ok((m, kernel))
    }
}

/// `compile`'s options with the `CompileFlags:` of the `.warpcheck.yaml`
/// nearest `file` applied, as `check` applies them: every command
/// compiles a file alike. A bad configuration is an error naming it.
pub(super) fn configured_options(
    file: &Path,
    compile: &CompileArgs,
) -> Result<frontend::CompileOptions, String> {
    let mut options = compile.options();
    if let Some(path) = Config::find_for(file) {
        Config::read(&path)?
            .apply_flags(&mut options)
            .map_err(|e| format!("{}:{e}", path.display()))?;
    }
    Ok(options)
}

/// `--kernel`, or the only kernel of the module.
fn pick_kernel(m: &Module, name: Option<&str>) -> Result<FuncId, String> {
    let kernels: Vec<FuncId> = m.kernels().filter(|&k| !m.func(k).is_declaration).collect();
    let names = || {
        kernels
            .iter()
            .map(|&k| m.func(k).short_name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => match m.find_function(n) {
            Some(f) if kernels.contains(&f) => Ok(f),
            Some(_) => Err(format!("'{n}' is not a kernel (kernels: {})", names())),
            None => Err(format!("no kernel '{n}' (kernels: {})", names())),
        },
        None => match kernels.as_slice() {
            [k] => Ok(*k),
            [] => Err("no kernels in the file".into()),
            _ => Err(format!(
                "several kernels; pick one with --kernel ({})",
                names()
            )),
        },
    }
}

/// A grid `X[,Y[,Z]]` given as `--grid`, within CUDA's limits.
pub(super) fn grid_shape(text: &str) -> Result<[u32; 3], String> {
    analysis::parse_grid(text).map_err(|e| format!("--grid: {e}"))
}

/// The machine model for `file`: the defaults, the `Machine:` of the
/// nearest `.warpcheck.yaml`, then `--machine KEY=VALUE` settings.
pub(super) fn machine_for(file: &Path, settings: &[String]) -> Result<Machine, String> {
    let base = match Config::find_for(file) {
        Some(p) => Config::read(&p)?
            .machine()
            .map_err(|e| format!("{}: Machine: {e}", p.display()))?,
        None => Machine::default(),
    };
    base.with_settings(settings)
}

/// A kernel as `bound` and `time` take it: its launch, the parameter values
/// the bounds are evaluated at, the analysis budget, and, for `--simulate`, zeroed
/// buffers for the pointers `--arg` leaves out.
#[derive(Args, Debug)]
pub struct KernelArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// The budget of `--simulate`'s launch.
    #[command(flatten)]
    pub sim_budget: SimBudgetArgs,
    /// A parameter's value, NAME=VALUE (repeatable), to evaluate the bound at.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Bytes of the zeroed buffer `--simulate` gives each pointer without an `--arg`.
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub buffer_bytes: u64,
    /// A per-kernel analysis limit, KEY=VALUE, as for `check` (lp-rows too).
    #[arg(long, value_name = "KEY=VALUE")]
    pub budget: Vec<String>,
}

/// [`KernelArgs`] read: the parameters, grid, block shape and budget.
pub(super) struct Launch {
    pub params: BTreeMap<String, f64>,
    pub grid: [u32; 3],
    pub block_dim: Option<BlockDim>,
    pub budget: crate::budget::Budget,
}

impl KernelArgs {
    /// The launch read, the module of `file` and the kernel.
    pub(super) fn load(
        &self,
        file: &Path,
        compile: &CompileArgs,
    ) -> Result<(Launch, Module, FuncId), String> {
        self.launch.validate()?;
        within_cap(
            "--buffer-bytes",
            self.buffer_bytes,
            self.launch.max_buffer_bytes,
        )?;
        let launch = Launch {
            params: super::params::param_values(&self.params)?,
            grid: self.launch.grid()?,
            block_dim: self.launch.block_dim()?,
            budget: parse_budget(&self.budget)?,
        };
        let (m, kernel) = self.launch.load(file, compile)?;
        Ok((launch, m, kernel))
    }

    /// A simulated launch's arguments: `--arg` values by name, zeroed
    /// buffers of `--buffer-bytes` for the other pointers, `--param` values
    /// for the other scalars.
    pub(super) fn sim_arguments(
        &self,
        m: &Module,
        kernel: FuncId,
        at: &Params,
    ) -> Result<Vec<(String, ArgValue)>, String> {
        let named = self.launch.arguments()?;
        let mut arguments = Vec::new();
        for p in sim::params(m, kernel) {
            if let Some(v) = named.iter().find(|(n, _)| *n == p.name) {
                arguments.push(v.clone());
            } else if p.is_pointer {
                let spec = BufferSpec {
                    bytes: self.buffer_bytes,
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
}

/// The CLI budgets with `--budget KEY=VALUE` applied.
fn parse_budget(settings: &[String]) -> Result<crate::budget::Budget, String> {
    let mut budget = crate::budget::Budget::cli();
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

/// The module's analysis at `block_dim`, every site's figures, and the
/// index of `kernel` among the analysed kernels.
pub(super) fn analyse(
    m: &Module,
    kernel: FuncId,
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

/// The largest per-warp figure of `metric` in a simulated launch.
pub(super) fn largest(o: &sim::Outcome, metric: Metric) -> u64 {
    o.warps
        .iter()
        .map(|w| {
            let c = &w.counters;
            match metric {
                Metric::Sectors => c.sectors,
                Metric::Conflicts => c.conflicts,
                Metric::Divwarps => c.divwarps,
                Metric::Steps => c.steps,
            }
        })
        .max()
        .unwrap_or(0)
}

/// The simulated launch of `bound --simulate` and `time --simulate`. A run
/// the kernel itself stopped (a bad access, a trap, a deadlock, a spent
/// step budget) is a finding about the kernel, as in `simulate`: it is
/// named on stderr and gives `Ok(None)`, and the command, once it has
/// printed its static figures, exits 1. A launch that could not start
/// (bad arguments, unsupported code) is `Err`: exit 2.
pub fn simulate_launch(
    m: &Module,
    kernel: FuncId,
    config: &sim::LaunchConfig,
    arguments: &[(String, ArgValue)],
) -> Result<Option<sim::Outcome>, String> {
    match sim::simulate(m, kernel, config, arguments) {
        Ok(o) => Ok(Some(o)),
        Err(e) if e.kind.is_kernel_fault() => {
            eprintln!(
                "warpcheck: error: the simulated launch stopped ({}): {e}",
                e.kind.status()
            );
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Runs one of `bound`, `time` with a panic caught: the message and exit
/// code 3 (internal error), never Rust's 101.
pub fn caught(run: impl FnOnce() -> Result<i32, String>) -> Result<i32, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|p| {
        let text = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        eprintln!("warpcheck: internal error: {text}; please report it");
        Ok(super::exit::INTERNAL)
    })
}
