//! `warpcheck run app.cu [more.cu|.cpp|.c …] [flags] [-- program args]`:
//! builds a whole CUDA program for warpcheck's runtime and runs it on the
//! CPU. The device sides are compiled as `check` compiles them and linked
//! into one module, which every host object carries as its GPU binary;
//! the host objects are linked against the runtime (warpcheck's shared
//! library), and the program runs natively with every launch simulated.
//! What the launches measured is printed after the program, on stderr or
//! to `-o FILE`, so that the program's own output stays its own.

use super::exit;
use crate::frontend::{self, CompileOptions};
use crate::runtime;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The forms of a run's report.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    Text,
    /// The figures, claims and faults.
    Json,
    /// SARIF 2.1.0: the faults and contradictions, for code scanning.
    Sarif,
    /// One self-contained page (to `-o FILE`, else `warpcheck-run.html`).
    Html,
}

/// Where `--format html` writes its page without `-o`.
const DEFAULT_HTML: &str = "warpcheck-run.html";

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The report's format: text, JSON (the figures, claims and faults),
    /// SARIF 2.1.0 (the faults and contradictions, for code scanning) or
    /// HTML (one self-contained page of it all).
    #[arg(long, value_enum, default_value = "text")]
    pub format: RunFormat,
    /// Write the report to this file instead of stderr (HTML: instead of
    /// warpcheck-run.html).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// GPU architecture for the device compile.
    #[arg(long, default_value = "sm_80")]
    pub cuda_gpu_arch: String,
    /// The clang to compile and link with (default: this build's).
    #[arg(long, value_name = "PATH")]
    pub clang: Option<PathBuf>,
    /// A machine-model constant, KEY=VALUE (repeatable): the device the
    /// program sees and the simulated times of its launches.
    #[arg(long = "machine", value_name = "KEY=VALUE")]
    pub machine: Vec<String>,
    /// Exit with this code when the run found a memory error, a race or
    /// an uninitialized read (as compute-sanitizer's --error-exitcode);
    /// otherwise the program's own exit code is warpcheck's.
    #[arg(long, value_name = "N")]
    pub error_exitcode: Option<i32>,
    /// Threads each launch's blocks run on (default: one per core); the
    /// results are the same for any number.
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value_t = 0)]
    pub jobs: usize,
    /// Source files (.cu, .cpp, .cc, .c), then compile and link flags
    /// (-I, -D, -O, -std, -l, -L, -Wl,…), then `--` and the program's
    /// arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "FILES AND FLAGS"
    )]
    pub rest: Vec<String>,
}

/// What the command line asks to build and run.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    sources: Vec<PathBuf>,
    compile: Vec<String>,
    link: Vec<String>,
    program_args: Vec<String>,
}

/// `<omp.h>` for programs whose host code uses OpenMP, when the compiler
/// has none: the runtime calls as one thread answers them (the pragmas
/// are ignored without `-fopenmp`, so the loops run serially).
const OMP_SERIAL: &str = include_str!("run/omp.h");

/// Flags whose value may be the next word.
const WITH_VALUE: &[&str] = &["-I", "-D", "-U", "-include", "-isystem", "-L", "-l", "-x"];

/// Splits the words after the options: sources by their extension, link
/// flags from compile flags, and the program's arguments after `--`.
fn plan(words: &[String]) -> Result<Plan, String> {
    let mut p = Plan::default();
    let (ours, theirs) = match words.iter().position(|w| w == "--") {
        Some(i) => (&words[..i], &words[i + 1..]),
        None => (words, &[][..]),
    };
    p.program_args = theirs.to_vec();
    let mut it = ours.iter();
    while let Some(w) = it.next() {
        if !w.starts_with('-') {
            if source_kind(Path::new(w)).is_none() {
                return Err(format!(
                    "{w}: not a source file warpcheck run builds (.cu, .cpp, .cc, .cxx, .c)"
                ));
            }
            p.sources.push(PathBuf::from(w));
            continue;
        }
        let mut flag = vec![w.clone()];
        if WITH_VALUE.contains(&w.as_str()) {
            flag.extend(it.next().cloned());
        }
        let link = w.starts_with("-l") || w.starts_with("-L") || w.starts_with("-Wl,");
        if link || w == "-pthread" || w == "-fopenmp" {
            p.link.extend(flag.iter().cloned());
        }
        if !link {
            p.compile.extend(flag);
        }
    }
    if p.sources.is_empty() {
        return Err("no source file to build".into());
    }
    Ok(p)
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SourceKind {
    /// CUDA: a device side and a host side.
    Cuda,
    /// C++ compiled as CUDA host code (for the runtime's declarations).
    Cxx,
    C,
}

fn source_kind(p: &Path) -> Option<SourceKind> {
    match p.extension()?.to_str()? {
        "cu" => Some(SourceKind::Cuda),
        "cpp" | "cc" | "cxx" | "C" => Some(SourceKind::Cxx),
        "c" => Some(SourceKind::C),
        _ => None,
    }
}

fn fail(message: impl std::fmt::Display) -> i32 {
    eprintln!("warpcheck run: error: {message}");
    exit::INPUT
}

pub fn run(args: &RunArgs) -> i32 {
    let plan = match plan(&args.rest) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    if let Err(e) = crate::machine::Machine::a100().with_settings(&args.machine) {
        return fail(e);
    }
    let Some(library) = super::plugin_path::runtime_library() else {
        return fail(
            "warpcheck's runtime library (libwarpcheck.so) is not installed beside warpcheck",
        );
    };
    let dir = match crate::temp::tempdir() {
        Ok(d) => d,
        Err(e) => return fail(format!("cannot create a temporary directory: {e}")),
    };
    // Headers a program may include that this machine may lack (OpenMP's),
    // searched after every other include directory.
    let fallback = dir.path().join("fallback-include");
    let written = std::fs::create_dir_all(&fallback)
        .and_then(|()| std::fs::write(fallback.join("omp.h"), OMP_SERIAL));
    if let Err(e) = written {
        return fail(format!("{}: {e}", fallback.display()));
    }
    let mut plan = plan;
    plan.compile
        .extend(["-idirafter".to_string(), fallback.display().to_string()]);
    let opts = CompileOptions {
        gpu_arch: args.cuda_gpu_arch.clone(),
        no_toolkit: true,
        extra: plan.compile.clone(),
        clang: args.clang.clone(),
        ..CompileOptions::default()
    };
    let (program, device) = match build(&plan, &opts, &library, dir.path()) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let report_path = dir.path().join("report.json");
    let status = crate::temp::status(
        Command::new(&program)
            .args(&plan.program_args)
            .env(runtime::REPORT_ENV, &report_path)
            .env(runtime::MACHINE_ENV, args.machine.join("\n"))
            .env(runtime::ARCH_ENV, &args.cuda_gpu_arch)
            .env(runtime::THREADS_ENV, args.jobs.to_string()),
    );
    let status = match status {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot run the program: {e}")),
    };
    let code = exit_code(status);
    let report = std::fs::read_to_string(&report_path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let Some(mut report) = report else {
        eprintln!(
            "warpcheck run: the program ended ({status}) without the runtime's report \
             (it launched nothing, or was killed)"
        );
        return code;
    };
    if let Err(e) = super::run_claims::annotate(&mut report, &device) {
        report["agreement"] = serde_json::json!({ "error": e });
    }
    report["program"] = program_record(&args.rest, status);
    if let Err(e) = print_report(&report, args) {
        return fail(e);
    }
    if report["fatal"].is_string() {
        return exit::INPUT;
    }
    let found = report["errors"].as_array().is_some_and(|e| !e.is_empty());
    match args.error_exitcode {
        Some(n) if found => n,
        _ => code,
    }
}

/// How the program was built and run and how it ended, for the report:
/// the words after `warpcheck run`'s options, its exit code and the
/// signal that ended it, if one did.
fn program_record(words: &[String], status: std::process::ExitStatus) -> serde_json::Value {
    use std::os::unix::process::ExitStatusExt;
    serde_json::json!({
        "command": words,
        "exit_code": exit_code(status),
        "signal": status.signal(),
    })
}

/// The program's own exit code; 128 + the signal that ended it, as a
/// shell reports it.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(exit::INTERNAL)
}

/// Compiles and links the program; returns the executable and the device
/// module's bitcode file.
fn build(
    plan: &Plan,
    opts: &CompileOptions,
    library: &Path,
    dir: &Path,
) -> Result<(PathBuf, PathBuf), String> {
    let mut bitcodes = Vec::new();
    for (i, src) in plan.sources.iter().enumerate() {
        if source_kind(src) == Some(SourceKind::Cuda) {
            let bc = match frontend::load_with_ir(src, opts).map_err(|e| e.message)? {
                (_, frontend::IrSource::Bitcode(bc)) => bc,
                (_, frontend::IrSource::File(f)) => std::fs::read(&f).map_err(|e| e.to_string())?,
            };
            let path = dir.join(format!("device{i}.bc"));
            std::fs::write(&path, bc).map_err(|e| format!("{}: {e}", path.display()))?;
            bitcodes.push(path);
        }
    }
    let device = link_device(&bitcodes, dir)?;
    let linked = dir.join("device-linked.bc");
    std::fs::write(&linked, &device).map_err(|e| format!("{}: {e}", linked.display()))?;
    let wrapped = dir.join("device.wcmod");
    std::fs::write(&wrapped, runtime::container::wrap(&device))
        .map_err(|e| format!("{}: {e}", wrapped.display()))?;
    let clang = match &opts.clang {
        Some(c) => frontend::on_path(c),
        None => frontend::find_clang().ok_or("clang not found (pass --clang)")?,
    };
    let mut objects = Vec::new();
    for (i, src) in plan.sources.iter().enumerate() {
        let out = dir.join(format!("host{i}.o"));
        match source_kind(src) {
            Some(SourceKind::C) => compile_c(&clang, src, &plan.compile, &out)?,
            _ => frontend::program_object(src, opts, &wrapped, &out).map_err(|e| e.message)?,
        }
        objects.push(out);
    }
    let exe = dir.join("program");
    let libdir = library.parent().unwrap_or(Path::new("."));
    let libname = library
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("lib"))
        .unwrap_or("warpcheck");
    let output = crate::temp::output(
        Command::new(&clang)
            .arg("--driver-mode=g++")
            .args(&objects)
            .arg("-o")
            .arg(&exe)
            .args(&plan.link)
            .arg(format!("-L{}", libdir.display()))
            .arg(format!("-l{libname}"))
            .arg(format!("-Wl,-rpath,{}", libdir.display()))
            .arg("-lm"),
    )
    .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    if !output.status.success() {
        return Err(link_error(&String::from_utf8_lossy(&output.stderr)));
    }
    Ok((exe, linked))
}

/// The device modules of all `.cu` files as one bitcode file's bytes.
fn link_device(bitcodes: &[PathBuf], dir: &Path) -> Result<Vec<u8>, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    match bitcodes {
        [] => Err("no .cu file: nothing to run on the device".into()),
        [one] => read(one),
        many => {
            let tool = frontend::find_llvm_tool("WARPCHECK_LLVM_LINK", "llvm-link")
                .ok_or("llvm-link not found: needed to link several .cu files' device code")?;
            let out = dir.join("device.bc");
            let output = crate::temp::output(Command::new(&tool).args(many).arg("-o").arg(&out))
                .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
            if !output.status.success() {
                return Err(format!(
                    "linking the device code failed:\n{}",
                    String::from_utf8_lossy(&output.stderr).trim_end()
                ));
            }
            read(&out)
        }
    }
}

/// Errors clang 16 and later make of old C that older compilers (and
/// many benchmark suites' Makefiles, with gcc) accept with a warning.
const OLD_C: &[&str] = &[
    "-Wno-error=implicit-int",
    "-Wno-error=implicit-function-declaration",
    "-Wno-error=int-conversion",
    "-Wno-error=incompatible-pointer-types",
];

fn compile_c(clang: &Path, src: &Path, flags: &[String], out: &Path) -> Result<(), String> {
    let output = crate::temp::output(
        Command::new(clang)
            .args(["-x", "c", "-c", "-gline-tables-only"])
            .args(OLD_C)
            .args(flags)
            .arg("-o")
            .arg(out)
            .arg(src),
    )
    .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{}: the compile failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    }
    Ok(())
}

/// The linker's complaint, with the CUDA functions the runtime lacks
/// named first.
fn link_error(stderr: &str) -> String {
    let mut missing: Vec<&str> = stderr
        .lines()
        .filter_map(|l| {
            let rest = &l[l.find("undefined reference to `")? + 24..];
            Some(&rest[..rest.find('\'')?])
        })
        .filter(|name| name.starts_with("cuda") || name.starts_with("__cuda"))
        .collect();
    missing.sort_unstable();
    missing.dedup();
    if missing.is_empty() {
        format!("linking the program failed:\n{}", stderr.trim_end())
    } else {
        format!(
            "the program calls {}, which warpcheck's runtime does not provide",
            missing.join(", ")
        )
    }
}

fn print_report(report: &serde_json::Value, args: &RunArgs) -> Result<(), String> {
    let text = match args.format {
        RunFormat::Json => serde_json::to_string_pretty(report).unwrap_or_default() + "\n",
        RunFormat::Sarif => {
            serde_json::to_string_pretty(&super::run_sarif::render(report)).unwrap_or_default()
                + "\n"
        }
        RunFormat::Text => super::run_text::text(report),
        RunFormat::Html => super::run_html::render(report, None),
    };
    let output = match (&args.output, args.format) {
        (Some(path), _) => Some(path.clone()),
        (None, RunFormat::Html) => Some(PathBuf::from(DEFAULT_HTML)),
        (None, _) => None,
    };
    match output {
        Some(path) => {
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write the report to {}: {e}", path.display()))?;
            if args.format == RunFormat::Html {
                eprintln!("warpcheck run: wrote {}", path.display());
            }
            Ok(())
        }
        None => {
            eprint!("{text}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn splits_sources_flags_and_program_arguments() {
        let p = plan(&words(
            "a.cu b.cpp -I inc -DX=1 -O3 -lm -L/opt/lib -pthread -- 10 -v",
        ))
        .unwrap();
        assert_eq!(
            p.sources,
            vec![PathBuf::from("a.cu"), PathBuf::from("b.cpp")]
        );
        assert_eq!(p.compile, words("-I inc -DX=1 -O3 -pthread"));
        assert_eq!(p.link, words("-lm -L/opt/lib -pthread"));
        assert_eq!(p.program_args, words("10 -v"));
        assert!(plan(&words("notes.txt")).is_err());
        assert!(plan(&words("-O2")).is_err());
    }

    #[test]
    fn names_the_missing_cuda_calls() {
        let err = "/usr/bin/ld: a.o: in function `main':\n\
                   a.cu:(.text+0x1): undefined reference to `cudaGraphLaunch'\n\
                   a.cu:(.text+0x9): undefined reference to `cudaGraphLaunch'\n";
        assert_eq!(
            link_error(err),
            "the program calls cudaGraphLaunch, which warpcheck's runtime does not provide"
        );
        assert!(
            link_error("undefined reference to `foo'").starts_with("linking the program failed")
        );
    }
}
