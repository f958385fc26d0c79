//! nvcc projects with no build-file edits.
//!
//! * `warpcheck launch -- <compiler command>` is a compiler launcher
//!   (`CMAKE_CUDA_COMPILER_LAUNCHER`): it runs the command unchanged, then
//!   analyses the translation unit it compiled and prints the findings to
//!   stderr, as a compiler would. Its exit status is the compiler's; only
//!   `--werror` with warnings turns a success into 1. A failed compile is
//!   passed through untouched and not analysed, and so is one that loads
//!   warpcheck's plugin (it reported already).
//! * `warpcheck build -- make …` (as scan-build) runs the build with an
//!   `nvcc` shim that calls `launch` with the real nvcc, first on `PATH`
//!   and named by `NVCC`, `CUDACXX`, `CUDA_HOME` and `CUDA_PATH`
//!   (`shim.rs`), and ends with a summary. With `--analyze-only` no nvcc is run (none
//!   need exist): the shim analyses and creates the outputs the build
//!   expects, empty.

use super::check::{self, ReportArgs};
use super::exit;
use super::jobs::Job;
use crate::frontend::compdb;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `launch` and the plugin append one line per translation unit for
/// `build`.
use crate::pipeline::BUILD_LOG;

#[derive(Args, Debug)]
pub struct LaunchArgs {
    /// Do not run the compiler: analyse, and create its `-o` output empty.
    #[arg(long)]
    pub analyze_only: bool,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The compiler command (nvcc or clang) and its arguments.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Run no nvcc: only the analysis (for machines without a toolkit).
    #[arg(long)]
    pub analyze_only: bool,
    /// Exit with 1 when the build had findings (warnings).
    #[arg(long)]
    pub status_bugs: bool,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The build command, e.g. `make -j8`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Options that only preprocess, list dependencies or print information:
/// nothing to analyse.
const NOT_A_COMPILE: &[&str] = &[
    "-E",
    "--preprocess",
    "-M",
    "-MM",
    "--version",
    "-V",
    "--help",
    "-h",
    "--dryrun",
    "-dryrun",
    "--list-gpu-arch",
    "--list-gpu-code",
];

/// The exit code of a finished process, signals as a shell reports them.
fn status_code(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

pub fn launch(args: &LaunchArgs) -> i32 {
    let cmd = &args.command;
    let compiled = if args.analyze_only {
        exit::OK
    } else {
        match crate::temp::status(Command::new(&cmd[0]).args(&cmd[1..])) {
            Ok(s) => status_code(s),
            Err(e) => {
                eprintln!("warpcheck: error: cannot run {}: {e}", cmd[0]);
                return exit::INPUT;
            }
        }
    };
    if compiled != exit::OK || cmd.iter().any(|a| NOT_A_COMPILE.contains(&a.as_str())) {
        return compiled;
    }
    // The compile already reported through our plugin: say nothing twice.
    if loads_our_plugin(cmd) {
        return compiled;
    }
    let dir = std::env::current_dir().unwrap_or_default();
    let Some(t) = compdb::translate_command(cmd, &dir) else {
        eprintln!(
            "warpcheck: warning: {}: not nvcc or clang; nothing analysed",
            cmd[0]
        );
        return compiled;
    };
    if args.analyze_only {
        touch_outputs(cmd, &dir);
    }
    for u in &t.unknown {
        eprintln!("warpcheck: warning: dropped the compiler option '{u}' (not known to warpcheck)");
    }
    if t.sources.is_empty() {
        return compiled;
    }
    let Ok(settings) = check::options(&args.report) else {
        return compiled.max(exit::INPUT);
    };
    let cli = args.report.compile.options();
    let jobs: Vec<Job> = t
        .sources
        .iter()
        .map(|f| {
            let mut options = t.options.clone();
            options.includes.extend(cli.includes.iter().cloned());
            options.defines.extend(cli.defines.iter().cloned());
            options.extra.extend(cli.extra.iter().cloned());
            Job {
                file: f.clone(),
                options,
            }
        })
        .collect();
    let reported = check::report_jobs(&args.report, &settings, &jobs, true);
    log_for_build(&jobs, reported.warnings);
    match reported.code {
        // Analysis problems are said, but never fail the compile.
        code if reported.findings_fail => code,
        code if args.analyze_only => code,
        _ => compiled,
    }
}

/// Whether a compile command loads warpcheck's pass plugin
/// (`-fpass-plugin=…/libwarpcheck….so`, also behind `-Xarch_device`, or
/// `-Xclang -load-pass-plugin …`).
fn loads_our_plugin(cmd: &[String]) -> bool {
    !crate::frontend::flags::own_plugin_words(cmd).is_empty()
}

/// With `--analyze-only`, the build still expects the outputs.
fn touch_outputs(cmd: &[String], dir: &Path) {
    let mut it = cmd.iter();
    while let Some(a) = it.next() {
        let out = match a.as_str() {
            "-o" | "--output-file" => it.next().cloned(),
            _ => a
                .strip_prefix("--output-file=")
                .or_else(|| a.strip_prefix("-o").filter(|v| !v.is_empty()))
                .map(String::from),
        };
        if let Some(o) = out {
            let p = dir.join(o);
            if !p.exists() {
                let _ = std::fs::write(&p, b"");
            }
        }
    }
}

/// The launch's warnings for `build`, on its first unit's line.
fn log_for_build(jobs: &[Job], warnings: usize) {
    let units: Vec<(usize, &Path)> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (if i == 0 { warnings } else { 0 }, j.file.as_path()))
        .collect();
    crate::pipeline::log_for_build(&units);
}

/// The options given to `build` before `--`, minus its own: passed on to
/// every `launch`.
fn passed_options() -> Vec<String> {
    let argv: Vec<String> = std::env::args().collect();
    let start = argv.iter().position(|a| a == "build").map_or(0, |i| i + 1);
    argv[start..]
        .iter()
        .take_while(|a| *a != "--")
        .filter(|a| *a != "--status-bugs" && *a != "--analyze-only")
        .cloned()
        .collect()
}

pub fn build(args: &BuildArgs) -> i32 {
    // The real nvcc, looked for where the build would look.
    let real = super::shim::real_nvcc();
    // Without an nvcc, nvcc compiles can only be analysed (a clang build
    // with the plugin needs none: it reports through the build log).
    let analyze_only = args.analyze_only || real.is_none();
    if real.is_none() && !args.analyze_only {
        eprintln!("warpcheck: note: no nvcc on PATH, in $NVCC, $CUDACXX, $CUDA_HOME/bin or $CUDA_PATH/bin: nvcc compiles are analysed, not compiled (as with --analyze-only)");
    }
    let target = match (&real, analyze_only) {
        (Some(p), false) => p.display().to_string(),
        _ => "nvcc".to_string(),
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("warpcheck"));
    let mut launch = vec![exe.display().to_string(), "launch".into()];
    if analyze_only {
        launch.push("--analyze-only".into());
    }
    launch.extend(passed_options());
    launch.extend(["--".into(), target]);
    let shims = match super::shim::ShimTree::create(&launch, real.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("warpcheck: error: cannot write the nvcc shim: {e}");
            return exit::INTERNAL;
        }
    };
    let log = shims.file("log");
    let cmd = &args.command;
    let status = match crate::temp::status(
        Command::new(&cmd[0])
            .args(&cmd[1..])
            .envs(shims.env())
            .env(BUILD_LOG, &log),
    ) {
        Ok(s) => status_code(s),
        Err(e) => {
            eprintln!("warpcheck: error: cannot run {}: {e}", cmd[0]);
            return exit::INPUT;
        }
    };
    let lines = std::fs::read_to_string(&log).unwrap_or_default();
    let units: Vec<(usize, &str)> = lines
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(n, f)| (n.parse().unwrap_or(0), f))
        .collect();
    let warnings: usize = units.iter().map(|u| u.0).sum();
    let with = units.iter().filter(|u| u.0 > 0).count();
    eprintln!(
        "warpcheck: {} translation unit{} analysed, {warnings} warning{} in {with}",
        units.len(),
        if units.len() == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" }
    );
    if args.status_bugs && warnings > 0 && status == exit::OK {
        exit::WARNINGS
    } else {
        status
    }
}
