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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `launch` appends one line per translation unit for `build`.
const BUILD_LOG: &str = "WARPCHECK_BUILD_LOG";

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
    let ours = |path: &str| {
        Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("libwarpcheck") && n.contains(".so"))
    };
    cmd.iter().enumerate().any(|(i, a)| {
        let value = a
            .strip_prefix("-fpass-plugin=")
            .or_else(|| a.strip_prefix("-load-pass-plugin="))
            .or_else(|| a.strip_prefix("-fplugin="));
        let next = (a == "-load-pass-plugin" || a == "-load")
            .then(|| cmd[i + 1..].iter().find(|n| *n != "-Xclang"))
            .flatten();
        value.is_some_and(ours) || next.is_some_and(|n| ours(n))
    })
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

fn log_for_build(jobs: &[Job], warnings: usize) {
    let Some(log) = std::env::var_os(BUILD_LOG) else {
        return;
    };
    let Ok(mut f) = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(log)
    else {
        return;
    };
    for (i, j) in jobs.iter().enumerate() {
        // The launch's warnings go on its first unit's line. One write per
        // line: appends from parallel compiles do not mix.
        let n = if i == 0 { warnings } else { 0 };
        let _ = f.write_all(format!("{n}\t{}\n", j.file.display()).as_bytes());
    }
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
    let target = match (&real, args.analyze_only) {
        (_, true) => "nvcc".to_string(),
        (Some(p), false) => p.display().to_string(),
        (None, false) => {
            eprintln!("warpcheck: error: no nvcc on PATH, in $NVCC, $CUDACXX, $CUDA_HOME/bin or $CUDA_PATH/bin to run; use `build --analyze-only` to analyse without compiling");
            return exit::INPUT;
        }
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("warpcheck"));
    let mut launch = vec![exe.display().to_string(), "launch".into()];
    if args.analyze_only {
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

#[cfg(test)]
mod tests {
    use super::loads_our_plugin;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_plugin_in_a_compile_command() {
        for yes in [
            "clang++ -x cuda -fpass-plugin=/opt/wc/lib/libwarpcheck-llvm19.so -c k.cu",
            "clang++ -Xarch_device -fpass-plugin=libwarpcheck.so -c k.cu",
            "clang++ -Xclang -load-pass-plugin -Xclang /x/libwarpcheck.so -c k.cu",
        ] {
            assert!(loads_our_plugin(&words(yes)), "{yes}");
        }
        for no in [
            "clang++ -fpass-plugin=/x/libother.so -c k.cu",
            "nvcc -c libwarpcheck.cu",
            "clang++ -Xclang -load-pass-plugin",
        ] {
            assert!(!loads_our_plugin(&words(no)), "{no}");
        }
    }
}
