//! The `warpcheck` command line.

mod bound;
mod check;
mod fixes;
mod jobs;
mod kernel;
mod launch;
mod params;
mod plugin_path;
mod report;
mod run;
mod run_claims;
mod run_html;
mod run_sarif;
mod run_text;
mod shim;
mod simulate;
mod time;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Exit codes, as documented in the README.
pub mod exit {
    pub const OK: i32 = 0;
    pub const WARNINGS: i32 = 1;
    pub const INPUT: i32 = 2;
    pub const INTERNAL: i32 = 3;
}

#[derive(Parser, Debug)]
#[command(
    name = "warpcheck",
    version,
    about = "Static performance checks for CUDA kernels"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Analyse .cu, .ll or .bc files and report findings.
    Check(check::CheckArgs),
    /// List the checks.
    #[command(alias = "list-checks")]
    Checks,
    /// Print the configuration that applies to a file (the nearest
    /// .warpcheck.yaml above it, or the defaults), as YAML.
    DumpConfig {
        /// A source file (default: the current directory).
        file: Option<PathBuf>,
    },
    /// Explain what a check finds and what to do about it.
    Explain {
        /// The check name, e.g. divergent-branch.
        check: String,
    },
    /// Print the path of the pass plugin for -fpass-plugin / -load-pass-plugin:
    /// the one built for the LLVM major of --clang (default: this build's).
    PrintPluginPath(plugin_path::PluginPathArgs),
    /// Run one kernel launch on the CPU and report its exact cost.
    Simulate(simulate::SimulateArgs),
    /// Build a whole CUDA program for warpcheck's CPU runtime and run it:
    /// every launch is simulated, memory errors are reported, and what the
    /// launches measured is printed after the program.
    Run(run::RunArgs),
    /// Run a compiler command unchanged, then analyse what it compiled
    /// (for CMAKE_CUDA_COMPILER_LAUNCHER): `warpcheck launch -- nvcc …`.
    Launch(launch::LaunchArgs),
    /// Run a build with an nvcc shim that analyses every CUDA compile:
    /// `warpcheck build -- make`.
    Build(launch::BuildArgs),
    /// Print a kernel's per-warp cost bound for one metric (AARA, solved as an LP).
    Bound(bound::BoundArgs),
    /// Write a self-contained HTML report: findings with source excerpts,
    /// sites, cost bounds, and bound vs simulated cost over a sweep.
    Report(report::ReportArgs),
    /// Bound a kernel's time in cycles on the machine model (work/span and
    /// abstract CTA simulation); `--simulate` runs it in cycle mode beside.
    Time(time::TimeArgs),
    /// Print warpcheck's own IR for a file (for debugging).
    DumpIr {
        file: PathBuf,
        #[command(flatten)]
        compile: check::CompileArgs,
    },
    /// Read a `.ll` or `.bc` file and exit 0, or 2 with the reason: what
    /// the other commands run in a child before they read such a file, so
    /// that a file that crashes LLVM's reader costs only itself.
    #[command(name = crate::frontend::untrusted::READ_IR, hide = true)]
    ReadIr {
        /// Read the files sent on stdin, one after another, answering each.
        #[arg(long)]
        serve: bool,
        file: Option<PathBuf>,
    },
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> i32 {
    // Temporary directories go with the process on SIGINT/SIGTERM.
    crate::temp::install();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                exit::INPUT
            } else {
                exit::OK
            };
        }
    };
    if !matches!(cli.command, Command::ReadIr { .. }) {
        // What killed runs left behind goes; untrusted IR is read in a child.
        crate::temp::sweep();
        if let Ok(me) = std::env::current_exe() {
            crate::frontend::untrusted::read_in_children_of(me);
        }
    }
    match cli.command {
        Command::ReadIr { serve, file } => {
            crate::frontend::untrusted::child_main(serve, file.as_deref())
        }
        Command::Check(args) => check::run(&args),
        Command::Simulate(args) => simulate::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Launch(args) => launch::launch(&args),
        Command::Build(args) => launch::build(&args),
        Command::DumpConfig { file } => dump_config(file.as_deref()),
        Command::Bound(args) => bound::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Time(args) => time::run(&args),
        Command::Checks => {
            for c in crate::checks::all() {
                let k = c.kind();
                println!("{:28} {}", k.name, k.summary);
            }
            exit::OK
        }
        Command::Explain { check } => explain(&check),
        Command::PrintPluginPath(args) => plugin_path::run(&args),
        Command::DumpIr { file, compile } => match kernel::configured_options(&file, &compile)
            .and_then(|o| crate::frontend::load(&file, &o).map_err(|e| e.to_string()))
        {
            Ok(m) => {
                print!("{m}");
                exit::OK
            }
            Err(e) => {
                eprintln!("warpcheck: error: {e}");
                exit::INPUT
            }
        },
    }
}

fn dump_config(file: Option<&std::path::Path>) -> i32 {
    use crate::config::Config;
    if let Some(f) = file.filter(|f| !f.exists()) {
        eprintln!("warpcheck: error: {}: no such file", f.display());
        return exit::INPUT;
    }
    let at = file.map_or_else(|| PathBuf::from("./-"), PathBuf::from);
    let found = Config::find_for(&at);
    let config = match &found {
        Some(p) => match Config::read(p) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("warpcheck: error: {e}");
                return exit::INPUT;
            }
        },
        None => Config::default(),
    };
    match &found {
        Some(p) => println!("# from {}", p.display()),
        None => println!("# no {} found: the defaults", crate::config::FILE_NAME),
    }
    match serde_saphyr::to_string(&config) {
        Ok(s) => {
            print!("{s}");
            exit::OK
        }
        Err(e) => {
            eprintln!("warpcheck: internal error: {e}");
            exit::INTERNAL
        }
    }
}

/// `explain NAME`: a check (by either spelling, or a retired name) or a
/// note.
fn explain(name: &str) -> i32 {
    let kinds = crate::diag::kinds::all();
    let kind = crate::checks::find(name).map(|c| c.kind()).or_else(|| {
        let bare = crate::finding::bare_name(name);
        kinds.iter().copied().find(|k| k.name == bare)
    });
    match kind {
        Some(k) => {
            println!("{}: {}\n\n{}", k.tag(), k.summary, k.explanation);
            exit::OK
        }
        None => {
            eprintln!(
                "warpcheck: error: no check named '{name}'{} (see `warpcheck checks`)",
                crate::finding::did_you_mean(name, kinds.iter().map(|k| k.name))
            );
            exit::INPUT
        }
    }
}
