//! `warpcheck time`: static bounds on a kernel's cycles (work/span and
//! abstract CTA simulation, the smaller reported), with `--simulate` the
//! simulator's cycles beside them.

use super::check::{CompileArgs, Format};
use super::exit;
use super::kernel::{analyse, machine_for, simulate_launch, KernelArgs};
use crate::cost::bound::Params;
use crate::machine::Machine;
use crate::sim::LaunchConfig;
use crate::timing::bounds::Request;
use crate::timing::guard::time_kernel_caught;
use crate::timing::report::{self, Simulated};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TimeArgs {
    /// The .cu, .ll or .bc file.
    pub file: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// A machine-model constant, KEY=VALUE (repeatable; after the Machine:
    /// of .warpcheck.yaml), e.g. preset=paper or global_latency=600.
    #[arg(long = "machine", value_name = "KEY=VALUE")]
    pub machine: Vec<String>,
    /// Also run the launch in the simulator's cycle mode.
    #[arg(long)]
    pub simulate: bool,
    #[command(flatten)]
    pub kernel: KernelArgs,
    #[command(flatten)]
    pub compile: CompileArgs,
}

pub fn run(args: &TimeArgs) -> i32 {
    match super::kernel::caught(|| run_inner(args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("warpcheck: error: {e}");
            exit::INPUT
        }
    }
}

fn run_inner(args: &TimeArgs) -> Result<i32, String> {
    let machine = machine_for(&args.file, &args.machine)?;
    let (launch, m, kernel) = args.kernel.load(&args.file, &args.compile)?;
    let (values, grid, budget) = (launch.params, launch.grid, launch.budget);
    let (a, figures, ki) = analyse(&m, kernel, launch.block_dim, budget)?;
    let k = &a.kernels[ki];
    let at = Params {
        values: values.clone(),
        grid,
    };
    let req = Request {
        machine: &machine,
        at: &at,
        dynamic_shared: args.kernel.launch.shared_bytes()?,
    };
    let g = a.graphs.func(kernel);
    let tb = match time_kernel_caught(&m, g, k, &figures[ki], &req, &budget.start()) {
        Ok(tb) => tb,
        Err(why) => {
            eprintln!("warpcheck: {why}");
            return Ok(exit::INTERNAL);
        }
    };
    // `Some(None)`: the simulated kernel stopped (named on stderr).
    let simulated = match args.simulate {
        true => Some(simulate(args, &m, kernel, k.block_dim.dims, &at, &machine)?),
        false => None,
    };
    let faulted = matches!(simulated, Some(None));
    let simulated = simulated.flatten();
    let j = report::json(&m, k, &tb, (&machine, &values, grid), simulated.as_ref());
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&j).map_err(|e| e.to_string())?
        ),
        Format::Text => {
            let poly = tb
                .work_span
                .as_ref()
                .ok()
                .map(|ws| tb.names.render_bound(&ws.block_bound()));
            print!("{}", report::text(&j, poly));
            let note = report::note(&m, k, &tb, &machine);
            let mut cache = crate::diag::text::SourceCache::default();
            print!("{}", crate::diag::text::render(&note, true, &mut cache));
        }
    }
    Ok(if faulted { exit::WARNINGS } else { exit::OK })
}

/// The launch in the simulator's cycle mode: its cycles and its slowest
/// block's; `None` if the kernel stopped (see `simulate_launch`).
fn simulate(
    args: &TimeArgs,
    m: &crate::ir::Module,
    kernel: crate::ir::FuncId,
    block: [u32; 3],
    at: &Params,
    machine: &Machine,
) -> Result<Option<Simulated>, String> {
    let arguments = args.kernel.sim_arguments(m, kernel, at)?;
    let config = LaunchConfig {
        grid: at.grid,
        block,
        dynamic_shared: args.kernel.launch.shared_bytes()?,
        machine: Some(machine.clone()),
        budget: args.kernel.sim_budget.budget()?,
        ..LaunchConfig::default()
    };
    let Some(o) = simulate_launch(m, kernel, &config, &arguments)? else {
        return Ok(None);
    };
    let c = o.cycles.ok_or("the simulator gave no cycles")?;
    Ok(Some(Simulated {
        launch: c.launch_cycles,
        block: c.max_block_cycles(),
    }))
}
