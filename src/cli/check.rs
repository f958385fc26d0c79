//! `warpcheck check`: analyse files and print findings.

use super::exit;
use super::jobs::Job;
use crate::analysis::{self, BlockDim, BlockDimSource, Options};
use crate::compare::{self, FunctionComparison, Summary};
use crate::config::{Config, Selection};
use crate::diag::{json, text};
use crate::finding::{Finding, Severity};
use crate::frontend::{self, CompileOptions};
use crate::pipeline;
use crate::taint::ifds::IfdsTaint;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use tracing::info_span;

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `check`'s output formats.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
}

/// When text output is coloured (`--color`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set to something.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// The colour of text written to stderr (`to_stderr`) or stdout.
    fn colour(self, to_stderr: bool) -> text::Colour {
        use std::io::IsTerminal;
        let terminal = if to_stderr {
            std::io::stderr().is_terminal()
        } else {
            std::io::stdout().is_terminal()
        };
        // no-color.org: a NO_COLOR that is set and not empty.
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        match self {
            ColorChoice::Always => text::Colour::Ansi,
            ColorChoice::Auto if terminal && !no_color => text::Colour::Ansi,
            _ => text::Colour::Plain,
        }
    }
}

/// How `.cu` files are compiled.
#[derive(Args, Debug, Clone)]
pub struct CompileArgs {
    /// GPU architecture for the device compile.
    #[arg(long, default_value = "sm_80")]
    pub cuda_gpu_arch: String,
    /// CUDA toolkit root (default: $CUDA_PATH, /usr/local/cuda, else warpcheck's own header).
    #[arg(long)]
    pub cuda_path: Option<PathBuf>,
    /// Compile with warpcheck's own headers even where a toolkit is found.
    #[arg(long, conflicts_with = "cuda_path")]
    pub no_cuda: bool,
    /// Include directory, passed to clang.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Macro definition, passed to clang.
    #[arg(short = 'D', value_name = "MACRO")]
    pub define: Vec<String>,
    /// Any other clang flag (repeatable), e.g. --clang-arg=-std=c++17.
    #[arg(long = "clang-arg", value_name = "FLAG", allow_hyphen_values = true)]
    pub clang_args: Vec<String>,
    /// The clang for .cu files (default: $WARPCHECK_CLANG, else the clang of
    /// the LLVM this warpcheck is built for). An older major works too.
    #[arg(long, value_name = "PATH")]
    pub clang: Option<PathBuf>,
    /// Pass flags from `.warpcheck.yaml` and compile databases that load
    /// code, change the toolchain, read other configuration or write files
    /// (refused by default: configuration is data). Command line only.
    #[arg(long)]
    pub allow_unsafe_flags: bool,
}

impl CompileArgs {
    pub fn options(&self) -> CompileOptions {
        CompileOptions {
            gpu_arch: self.cuda_gpu_arch.clone(),
            includes: self.include.clone(),
            defines: self.define.clone(),
            cuda_path: self.cuda_path.clone(),
            no_toolkit: self.no_cuda,
            extra: self.clang_args.clone(),
            clang: self.clang.clone(),
            allow_unsafe_flags: self.allow_unsafe_flags,
            ..CompileOptions::default()
        }
    }
}

/// Which files to analyse: shared by `check` and `report`.
#[derive(Args, Debug)]
pub struct Inputs {
    /// Files to analyse: .cu, .ll or .bc. With -p: which of the database's
    /// files (default all).
    #[arg(required_unless_present = "build_path")]
    pub files: Vec<PathBuf>,
    /// A build directory with compile_commands.json (or the file): analyse
    /// its CUDA entries with their own flags, nvcc's translated.
    #[arg(short = 'p', long = "build-path", value_name = "BUILD_DIR")]
    pub build_path: Option<PathBuf>,
}

impl Inputs {
    /// The jobs these name; problems with single entries go to `problems`.
    pub fn jobs(
        &self,
        compile: &CompileArgs,
        problems: &mut Vec<String>,
    ) -> Result<Vec<Job>, String> {
        let cli = compile.options();
        super::jobs::collect(&self.files, self.build_path.as_deref(), &cli, problems)
    }
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// Instead of findings, compare warpcheck's thread dependence with LLVM's
    /// UniformityAnalysis (opt -passes='print<uniformity>', of this build's LLVM) per function.
    #[arg(long)]
    pub compare_uniformity: bool,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// What to analyse for and how to report it: shared by `check`, `launch`
/// and `build`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Report only findings that are not in this earlier JSON or SARIF
    /// report (matched by fingerprint, so moved lines stay quiet).
    #[arg(long, value_name = "OLD_REPORT")]
    pub baseline: Option<PathBuf>,
    /// Threads (default: the number of cores): files analysed at once, and
    /// those no file takes analyse a file's kernels.
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Show why each finding holds (the chain from threadIdx to the site).
    #[arg(long)]
    pub explain: bool,
    /// Exit with 1 when there are warnings.
    #[arg(long)]
    pub werror: bool,
    /// The exit status when findings fail the run (errors, or warnings
    /// with --werror), instead of 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
    pub error_exitcode: Option<u8>,
    /// Write the mechanical fixes (padding a shared array against bank
    /// conflicts) as clang-tidy's YAML, for clang-apply-replacements.
    #[arg(long, value_name = "FILE")]
    pub export_fixes: Option<PathBuf>,
    /// Colour text warnings: on a terminal unless NO_COLOR is set (auto),
    /// always or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,
    /// Counts of branches and accesses by class, per kernel and per file
    /// (after the findings in text; a `summary` object in JSON).
    #[arg(long)]
    pub summary: bool,
    /// With --format json: also list every branch and memory access of each
    /// kernel with its figures and per-lane value (`kernels[].sites`; many
    /// times the findings' size).
    #[arg(long)]
    pub sites: bool,
    /// Also print notes: branches that are bounds checks, never split a
    /// warp or could not be decided; accesses whose cost is unknown.
    #[arg(long)]
    pub notes: bool,
    /// Block shape X[,Y[,Z]] for every kernel (a kernel's reqntid still wins).
    #[arg(long, value_name = "X[,Y[,Z]]")]
    pub block_dim: Option<String>,
    /// Switch a check off (repeatable; `warpcheck-` prefix optional).
    #[arg(long, value_name = "CHECK")]
    pub disable: Vec<String>,
    /// Checks to run, as clang-tidy's: comma-separated globs, `-` to
    /// remove, the last match decides; over the configuration's `Checks`.
    #[arg(long, value_name = "GLOBS", allow_hyphen_values = true)]
    pub checks: Option<String>,
    /// Checks whose warnings are errors (globs, as --checks); over the
    /// configuration's `WarningsAsErrors`.
    #[arg(long, value_name = "GLOBS", allow_hyphen_values = true)]
    pub warnings_as_errors: Option<String>,
    /// Read this configuration for every file instead of the
    /// `.warpcheck.yaml` nearest each.
    #[arg(long, value_name = "FILE")]
    pub config_file: Option<PathBuf>,
    /// Print findings only: no closing count, no per-file notes.
    #[arg(long)]
    pub quiet: bool,
    /// Print each stage's time and size per file, to stderr (for
    /// scripts/bench-*.sh). WARPCHECK_LOG=debug prints every span.
    #[arg(long)]
    pub timing: bool,
    /// A per-kernel analysis limit, KEY=VALUE (repeatable): time=SECONDS
    /// (default 20), ifds-facts=N (default 20000000), acf-exprs=N (default
    /// 1000000); 0 or none lifts one. A kernel over budget gets unknown
    /// sites and one note; the others keep their results.
    #[arg(long, value_name = "KEY=VALUE")]
    pub budget: Vec<String>,
    /// An integer kernel parameter's value, NAME=VALUE (repeatable): every
    /// kernel with an integer parameter of that name is analysed with it,
    /// which decides figures that depend on it (a stride `r * n`); over
    /// the configuration's `Params`.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Also bound each kernel's cost per warp (sectors, conflicts, divwarps,
    /// steps): a note at the kernel's line and `bounds` in JSON.
    #[arg(long)]
    pub bounds: bool,
    /// Do not compile a .cu file's host side for the block shapes of its
    /// `<<<grid, block>>>` launches.
    #[arg(long)]
    pub no_host_launches: bool,
    /// Do not take kernel pointer parameters as cudaMalloc pointers
    /// (256-byte aligned, plus the offsets the host launches add): an
    /// access is then only as aligned as its code states. Over the
    /// configuration's `MallocAlignment`.
    #[arg(long)]
    pub no_malloc_alignment: bool,
    /// Warnings estimated to cost less than this share of their kernel's
    /// time are notes (a percentage, e.g. 2 or 0.5%; default 5; 0 keeps
    /// every warning). Over the configuration's `MinImpact`.
    #[arg(long, value_name = "PERCENT")]
    pub min_impact: Option<String>,
    #[command(flatten)]
    pub compile: CompileArgs,
}

pub fn run(args: &CheckArgs) -> i32 {
    let settings = match options(&args.report) {
        Ok(o) => o,
        Err(code) => return code,
    };
    if args.compare_uniformity {
        return compare_files(args, &args.report.compile.options(), &settings.analysis);
    }
    let mut failed = Vec::new();
    let jobs = match args.inputs.jobs(&args.report.compile, &mut failed) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("warpcheck: error: {e}");
            return exit::INPUT;
        }
    };
    let code = report_jobs(&args.report, &settings, &jobs, false).code;
    if !failed.is_empty() {
        code.max(exit::INPUT)
    } else {
        code
    }
}

/// What a run analyses with and which of the findings it reports: the
/// command line's, then each file's `.warpcheck.yaml` on top.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    pub analysis: Options,
    pub report: Selection,
    /// `--config-file`: this configuration for every file.
    pub config_file: Option<PathBuf>,
    /// `--quiet`: findings only.
    pub quiet: bool,
    /// `--no-host-launches`: analyse at the shapes given, never the ones a
    /// `.cu` file's host code launches with.
    pub no_host_launches: bool,
}

impl Settings {
    /// The configuration that applies to `file`: `--config-file`, else the
    /// nearest `.warpcheck.yaml`.
    pub fn config_for(&self, file: &std::path::Path) -> Option<PathBuf> {
        self.config_file.clone().or_else(|| Config::find_for(file))
    }
}

/// The settings the report arguments give; on a bad one, the message is
/// printed and the exit code returned. Installs the tracing subscriber
/// `--timing` and `WARPCHECK_LOG` ask for.
pub fn options(r: &ReportArgs) -> Result<Settings, i32> {
    let limits = Limits {
        block_dim: r.block_dim.as_deref(),
        disable: &r.disable,
        budget: &r.budget,
        params: &r.params,
    };
    let mut o = limits.options()?;
    let lists = [
        (
            "--checks",
            &r.checks,
            Selection::add_checks_under as fn(&mut Selection, &str) -> _,
        ),
        (
            "--warnings-as-errors",
            &r.warnings_as_errors,
            Selection::add_warnings_as_errors_under,
        ),
    ];
    for (option, list, add) in lists {
        if let Some(l) = list {
            add(&mut o.report, l).map_err(|e| {
                eprintln!("warpcheck: error: {option}: {e}");
                exit::INPUT
            })?;
        }
    }
    if let Some(path) = &r.config_file {
        // Read once here so that a bad file is one usage error.
        Config::read(path).map_err(|e| {
            eprintln!("warpcheck: error: --config-file: {e}");
            exit::INPUT
        })?;
        o.config_file = Some(path.clone());
    }
    if let Some(t) = &r.min_impact {
        o.report.min_impact = Some(crate::config::parse_min_impact(t).map_err(|e| {
            eprintln!("warpcheck: error: --min-impact: {e}");
            exit::INPUT
        })?);
    }
    o.quiet = r.quiet;
    o.no_host_launches = r.no_host_launches;
    o.analysis.no_malloc_alignment = r.no_malloc_alignment;
    crate::trace::install(r.timing);
    o.analysis.no_explanations = r.format == ReportFormat::Text && !r.explain;
    Ok(o)
}

/// The analysis settings `check` and `report` share.
pub(super) struct Limits<'a> {
    pub block_dim: Option<&'a str>,
    pub disable: &'a [String],
    pub budget: &'a [String],
    /// `--param NAME=VALUE`.
    pub params: &'a [String],
}

impl Limits<'_> {
    /// The settings these give; on a bad one, the message is printed and
    /// the exit code returned.
    pub fn options(&self) -> Result<Settings, i32> {
        let block_dim = self
            .block_dim
            .map(|s| BlockDim::parse(s, BlockDimSource::Option))
            .transpose()
            .map_err(|e| {
                eprintln!("warpcheck: error: --block-dim: {e}");
                exit::INPUT
            })?;
        for d in self.disable {
            if !crate::checks::is_known(d) {
                eprintln!(
                    "warpcheck: error: --disable: no check named '{d}'{} (see `warpcheck checks`)",
                    crate::finding::did_you_mean(d, crate::checks::names())
                );
                return Err(exit::INPUT);
            }
        }
        let mut budget = crate::budget::Budget::cli();
        for b in self.budget {
            let set = b
                .split_once('=')
                .ok_or_else(|| format!("expected KEY=VALUE, got '{b}'"))
                .and_then(|(k, v)| budget.set(k.trim(), v));
            if let Err(e) = set {
                eprintln!("warpcheck: error: --budget: {e}");
                return Err(exit::INPUT);
            }
        }
        let params = super::params::integer_params(self.params).map_err(|e| {
            eprintln!("warpcheck: error: {e}");
            exit::INPUT
        })?;
        Ok(Settings {
            analysis: Options {
                block_dim,
                budget,
                params,
                ..Options::default()
            },
            report: Selection {
                disabled: self.disable.to_vec(),
                ..Selection::default()
            },
            config_file: None,
            quiet: false,
            no_host_launches: false,
        })
    }
}

/// `settings` and `job`'s compile options with the `.warpcheck.yaml`
/// nearest the job's file applied.
pub(super) fn configured(
    job: &Job,
    settings: &Settings,
) -> Result<(Settings, CompileOptions), String> {
    let mut settings = settings.clone();
    let mut compile = job.options.clone();
    if let Some(path) = settings.config_for(&job.file) {
        let c = Config::read(&path)?;
        c.apply(&mut settings.analysis, &mut settings.report);
        c.apply_flags(&mut compile)
            .map_err(|e| format!("{}:{e}", path.display()))?;
    }
    Ok((settings, compile))
}

/// The largest `--baseline` report read.
const MAX_BASELINE_BYTES: u64 = 1 << 30;

/// What a run reported.
#[derive(Copy, Clone, Debug, Default)]
pub struct Reported {
    pub code: i32,
    pub warnings: usize,
    /// The findings failed the run (errors, or warnings with `--werror`):
    /// `code` is then 1 or `--error-exitcode`'s.
    pub findings_fail: bool,
}

/// Analyses the jobs and prints their findings (text to stderr when
/// `to_stderr`, as a compiler would), or the JSON or SARIF document.
pub fn report_jobs(r: &ReportArgs, settings: &Settings, jobs: &[Job], to_stderr: bool) -> Reported {
    let failed = |code| Reported {
        code,
        ..Reported::default()
    };
    let Ok(baseline) = read_baseline(r) else {
        return failed(exit::INPUT);
    };
    let sink = match r.format {
        ReportFormat::Json => match KernelSink::start() {
            Ok(sink) => Some(sink),
            Err(e) => {
                eprintln!("warpcheck: internal error: writing the report: {e}");
                return failed(exit::INTERNAL);
            }
        },
        _ => None,
    };
    let emit = |text: &str| {
        if to_stderr {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    };
    let outcomes = analyse_jobs(r, settings, jobs, sink.as_ref());
    let mut tally = Tally::new(r, r.color.colour(to_stderr), baseline);
    for (job, outcome) in jobs.iter().zip(outcomes) {
        tally.add(&job.file, outcome.flatten(), &emit);
    }
    let summary = r.summary.then(|| {
        tally.summary.rank(&tally.report.findings);
        std::mem::take(&mut tally.summary)
    });
    // Every format says the same findings: notes with `--notes` (or in the
    // full dump `--sites` asks for).
    if !(r.notes || r.sites) {
        tally
            .report
            .findings
            .retain(|f| always_said(f.severity != Severity::Note.name(), &f.check));
    }
    if let Err(e) = write_document(r, sink, &tally.report, summary.as_ref(), &emit) {
        eprintln!("warpcheck: internal error: writing the report: {e}");
        tally.code = exit::INTERNAL;
    }
    if r.format == ReportFormat::Text && !r.quiet {
        tally.closing_lines();
    }
    if let Some(path) = &r.export_fixes {
        if let Err(e) = export_fixes(path, jobs, std::mem::take(&mut tally.fixes)) {
            eprintln!("warpcheck: error: --export-fixes {}: {e}", path.display());
            tally.code = tally.code.max(exit::INPUT);
        }
    }
    tally.reported(r)
}

/// `--baseline`'s fingerprints (none without it); `Err` once said.
fn read_baseline(r: &ReportArgs) -> Result<Option<std::collections::HashSet<String>>, ()> {
    let Some(p) = r.baseline.as_deref() else {
        return Ok(None);
    };
    // A regular file of a report's size, never a FIFO or a device.
    crate::files::regular(p, "baseline", MAX_BASELINE_BYTES)
        .map_err(|e| format!("--baseline {e}"))
        .and_then(|_| crate::diag::baseline::read(p))
        .map(Some)
        .map_err(|e| eprintln!("warpcheck: error: {e}"))
}

/// A file's outcome: `None` for a panic while analysing it.
type Outcome = Option<Result<FileOutcome, frontend::InputError>>;

/// Checks every job, `-j` at a time; the JSON kernels go to `sink` in the
/// files' order as they come.
fn analyse_jobs(
    r: &ReportArgs,
    settings: &Settings,
    jobs: &[Job],
    sink: Option<&KernelSink>,
) -> Vec<Option<Outcome>> {
    let threads = r.jobs.unwrap_or_else(super::jobs::default_threads);
    // Threads that no file takes analyse a file's kernels.
    let per_file = (threads / jobs.len().max(1)).max(1);
    super::jobs::run_all(jobs, threads, |job| {
        let place = jobs.iter().position(|j| std::ptr::eq(j, job)).unwrap_or(0);
        let want = Wanted {
            report: r.format != ReportFormat::Text || r.summary,
            sites: r.sites && r.format == ReportFormat::Json,
            summary: r.summary,
            bounds: r.bounds,
            kernels: sink.map(|s| (s, place)),
        };
        let outcome = match configured(job, settings) {
            Ok((mut settings, compile)) => {
                settings.analysis.jobs = per_file;
                std::panic::catch_unwind(|| check_file(&job.file, &compile, &settings, want)).ok()
            }
            Err(message) => Some(Err(frontend::InputError { message })),
        };
        // Later files' kernels wait for this one's.
        if let Some(s) = sink {
            s.done(place);
        }
        outcome
    })
}

/// What the files' outcomes add up to, the text printed as each comes.
struct Tally<'r> {
    r: &'r ReportArgs,
    colour: text::Colour,
    baseline: Option<std::collections::HashSet<String>>,
    cache: text::SourceCache,
    report: json::Report,
    summary: crate::diag::summary::Summary,
    fixes: Vec<crate::checks::Fix>,
    warnings: usize,
    errors: usize,
    suppressed: usize,
    code: i32,
}

impl<'r> Tally<'r> {
    fn new(
        r: &'r ReportArgs,
        colour: text::Colour,
        baseline: Option<std::collections::HashSet<String>>,
    ) -> Self {
        Tally {
            r,
            colour,
            baseline,
            cache: text::SourceCache::default(),
            report: json::Report::new(),
            summary: Default::default(),
            fixes: Vec::new(),
            warnings: 0,
            errors: 0,
            suppressed: 0,
            code: exit::OK,
        }
    }

    /// Adds `file`'s outcome: its findings that the baseline does not
    /// know, printed as text when that is the format.
    fn add(&mut self, file: &std::path::Path, outcome: Outcome, emit: &dyn Fn(&str)) {
        let outcome = match outcome {
            Some(Ok(o)) => o,
            Some(Err(e)) => {
                eprintln!("warpcheck: error: {e}");
                self.code = self.code.max(exit::INPUT);
                return;
            }
            None => {
                eprintln!(
                    "warpcheck: internal error while analysing {}; other files are unaffected. Please report this.",
                    file.display()
                );
                self.code = exit::INTERNAL;
                return;
            }
        };
        let FileOutcome {
            report,
            counts,
            findings,
            prints,
            suppressed,
            fixes,
            problems,
        } = outcome;
        for (file, name, c) in counts {
            self.summary.add_kernel(&file, &name, c);
        }
        self.suppressed += suppressed;
        // NOLINT's own warnings are warnings clang would count.
        self.warnings += problems;
        let baseline = &self.baseline;
        let old = |fp: &str| baseline.as_ref().is_some_and(|b| b.contains(fp));
        self.fixes.extend(
            fixes
                .into_iter()
                .filter(|(i, _)| !prints.get(*i).is_some_and(|fp| old(fp)))
                .map(|(_, fix)| fix),
        );
        let findings: Vec<_> = findings
            .into_iter()
            .zip(prints)
            .filter(|(_, fp)| !old(fp))
            .map(|(f, _)| f)
            .collect();
        // Errors are warnings the configuration promoted: shown whenever
        // warnings are.
        self.errors += findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        self.warnings += findings
            .iter()
            .filter(|f| f.severity != Severity::Note)
            .count();
        if self.r.format == ReportFormat::Text {
            for f in findings.iter().filter(|f| self.r.notes || shown(f)) {
                emit(&text::render_styled(
                    f,
                    self.r.explain,
                    &mut self.cache,
                    self.colour,
                ));
            }
        }
        self.report
            .findings
            .extend(report.findings.into_iter().filter(|f| !old(&f.fingerprint)));
    }

    /// Clang's closing count and clang-tidy's line on suppressions.
    fn closing_lines(&self) {
        if let Some(line) = generated(self.warnings - self.errors, self.errors) {
            eprintln!("{line}");
        }
        let n = self.suppressed;
        if n > 0 {
            eprintln!(
                "Suppressed {n} warning{} ({n} NOLINT).",
                if n == 1 { "" } else { "s" }
            );
        }
    }

    /// The run's exit code: errors (the configuration's
    /// `WarningsAsErrors`) fail it without `--werror`.
    fn reported(&self, r: &ReportArgs) -> Reported {
        let mut code = self.code;
        let findings_fail =
            code == exit::OK && (self.errors > 0 || (r.werror && self.warnings > 0));
        if findings_fail {
            code = r.error_exitcode.map_or(exit::WARNINGS, i32::from);
        }
        Reported {
            code,
            warnings: self.warnings,
            findings_fail,
        }
    }
}

/// The document the format asks for after the findings: the summary in
/// text, the SARIF log, or the end of the JSON report.
fn write_document(
    r: &ReportArgs,
    sink: Option<KernelSink>,
    report: &json::Report,
    summary: Option<&crate::diag::summary::Summary>,
    emit: &dyn Fn(&str),
) -> Result<(), String> {
    match (r.format, sink) {
        (ReportFormat::Text, _) => {
            if let Some(s) = summary {
                emit(&s.render());
            }
            Ok(())
        }
        (ReportFormat::Sarif, _) => {
            serde_json::to_string_pretty(&crate::diag::sarif::render(report))
                .map(|s| println!("{}", json::compact(&s)))
                .map_err(|e| e.to_string())
        }
        (ReportFormat::Json, Some(sink)) => sink.finish(&report.findings, summary),
        (ReportFormat::Json, None) => Err(String::from("no report was started")),
    }
}

/// Writes `--export-fixes`: clang-tidy's main file is the one analysed,
/// absolute as the paths of the replacements are.
fn export_fixes(
    path: &std::path::Path,
    jobs: &[Job],
    fixes: Vec<crate::checks::Fix>,
) -> Result<(), String> {
    let main = match jobs {
        [one] => Some(std::fs::canonicalize(&one.file).unwrap_or_else(|_| one.file.clone())),
        _ => None,
    };
    let text = super::fixes::yaml(main.as_deref(), &super::fixes::dedup(fixes))?;
    std::fs::write(path, text).map_err(|e| e.to_string())
}

/// Whether a finding is shown without `--notes`: warnings and errors, and
/// the notes that are always said (a kernel left unanalysed, a cost bound
/// asked for).
fn shown(f: &&Finding) -> bool {
    always_said(f.severity != Severity::Note, f.check)
}

fn always_said(warning: bool, check: &str) -> bool {
    warning
        || check == crate::checks::notes::ANALYSIS_BUDGET.kind.name
        || check == crate::cost::report::COST_BOUND.name
}

/// Clang's closing count: "2 warnings and 1 error generated.", or none.
fn generated(warnings: usize, errors: usize) -> Option<String> {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let parts = match (warnings, errors) {
        (0, 0) => return None,
        (w, 0) => count(w, "warning"),
        (0, e) => count(e, "error"),
        (w, e) => format!("{} and {}", count(w, "warning"), count(e, "error")),
    };
    Some(format!("{parts} generated."))
}

/// What one file gave.
struct FileOutcome {
    /// The findings' JSON, when a report is wanted (its kernels went to
    /// the [`KernelSink`] batch by batch).
    report: json::Report,
    /// `--summary`'s counts of each kernel: file, name, counts.
    counts: Vec<(String, String, crate::diag::summary::Counts)>,
    findings: Vec<Finding>,
    /// The findings' fingerprints, in order.
    prints: Vec<String>,
    /// Warnings and errors a NOLINT comment silenced.
    suppressed: usize,
    /// The mechanical fixes, by the index of their finding.
    fixes: Vec<(usize, crate::checks::Fix)>,
    /// The warnings about the file's NOLINT comments it printed.
    problems: usize,
}

/// What [`check_file`] reports besides the findings.
#[derive(Clone, Copy)]
struct Wanted<'a> {
    /// The findings' JSON (JSON, SARIF or `--summary`).
    report: bool,
    /// Each kernel's sites in the JSON (`--sites`).
    sites: bool,
    /// `--summary`'s counts of the sites.
    summary: bool,
    /// `--bounds`.
    bounds: bool,
    /// Where each batch's kernels go, with the file's place among the
    /// jobs (`--format json`).
    kernels: Option<(&'a KernelSink, usize)>,
}

/// The JSON document's kernels, written as each batch is reported and in
/// the files' order, so that a module's kernels never wait in memory for
/// its last batch. A file's rendered kernels wait only while an earlier
/// file is still being analysed.
struct KernelSink {
    state: std::sync::Mutex<SinkState>,
}

struct SinkState {
    stream: json::Stream<std::io::BufWriter<std::io::Stdout>>,
    /// The file whose kernels are written as they come.
    next: usize,
    /// Later files' kernels, rendered, and whether each file is done.
    waiting: std::collections::BTreeMap<usize, (Vec<String>, bool)>,
    /// The first failure to render or write.
    error: Option<String>,
}

impl SinkState {
    fn write(&mut self, rendered: &[String]) {
        for k in rendered {
            if self.error.is_none() {
                if let Err(e) = self.stream.write_rendered(k) {
                    self.error = Some(e.to_string());
                }
            }
        }
    }
}

impl KernelSink {
    /// Writes the document's head to stdout.
    fn start() -> std::io::Result<Self> {
        let stream = json::Stream::start(std::io::BufWriter::new(std::io::stdout()))?;
        Ok(KernelSink {
            state: std::sync::Mutex::new(SinkState {
                stream,
                next: 0,
                waiting: Default::default(),
                error: None,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// File `place`'s next kernels, rendered by [`json::rendered_kernel`].
    fn kernels(&self, place: usize, rendered: Vec<std::io::Result<String>>) {
        let mut st = self.lock();
        let rendered: Vec<String> = match rendered.into_iter().collect() {
            Ok(r) => r,
            Err(e) => {
                st.error.get_or_insert(e.to_string());
                return;
            }
        };
        if place == st.next {
            st.write(&rendered);
        } else {
            st.waiting.entry(place).or_default().0.extend(rendered);
        }
    }

    /// File `place` has no more kernels: the next files' waiting kernels
    /// are written.
    fn done(&self, place: usize) {
        let mut st = self.lock();
        st.waiting.entry(place).or_default().1 = true;
        loop {
            let next = st.next;
            let Some((rendered, done)) = st.waiting.remove(&next) else {
                break;
            };
            st.write(&rendered);
            if !done {
                break;
            }
            st.next += 1;
        }
    }

    /// Ends the document with the findings and the summary.
    fn finish(
        self,
        findings: &[json::FindingJson],
        summary: Option<&crate::diag::summary::Summary>,
    ) -> Result<(), String> {
        let st = self.state.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = st.error {
            return Err(e);
        }
        let summary = summary
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| e.to_string())?;
        st.stream
            .finish(findings, summary.as_ref())
            .map(drop)
            .map_err(|e| e.to_string())
    }
}

/// The resident memory loading `file` may add, from its size: LLVM's
/// module and our copy of it hold about 8 bytes per byte of `.ll` text
/// (`scripts/bench-memory.sh`), and bitcode is about a quarter of the text.
fn load_estimate(file: &std::path::Path) -> usize {
    let bytes = std::fs::metadata(file).map_or(0, |m| m.len());
    let per_byte = match file.extension().and_then(|e| e.to_str()) {
        Some("bc") => 32,
        Some("ll") => 8,
        // A `.cu` file's IR is not its size; clang's own memory is its own.
        _ => 0,
    };
    usize::try_from(bytes.saturating_mul(per_byte)).unwrap_or(usize::MAX)
}

/// Refuses `file` before it is read when loading it would pass the
/// module's memory budget (`check` and `report` alike).
pub(super) fn fits_in_memory(
    file: &std::path::Path,
    settings: &Settings,
) -> Result<(), frontend::InputError> {
    let estimate = load_estimate(file);
    settings
        .analysis
        .budget
        .memory_for(estimate)
        .map_err(|e| frontend::InputError {
            message: format!(
                "{}: not analysed: this process holds {} MB and loading the file needs about \
                 {} MB, over the {e}; raise it with --budget memory=MB (0 lifts it)",
                file.display(),
                crate::budget::resident_bytes().unwrap_or(0) >> 20,
                estimate >> 20
            ),
        })
}

/// Analyses one file into its findings with their fingerprints and, when
/// asked for, its report and (`bounds`) each kernel's cost bounds. The
/// kernels go in batches ([`analysis::in_batches`]): each batch is
/// analysed, measured, checked, bounded and reported, then dropped before
/// the next.
fn check_file(
    file: &std::path::Path,
    compile: &CompileOptions,
    settings: &Settings,
    want: Wanted<'_>,
) -> Result<FileOutcome, frontend::InputError> {
    let _file = info_span!("file", path = %file.display()).entered();
    fits_in_memory(file, settings)?;
    // Explanations name values by their source variables, which only full
    // debug info keeps (it does not change the code).
    let full = CompileOptions {
        full_debug: compile.full_debug || !settings.analysis.no_explanations,
        ..compile.clone()
    };
    let (m, launches) = load_with_launches(file, compile, &full, settings);
    let m = m?;
    require_nvptx(file, &m)?;
    let mut opts = settings.analysis.clone();
    opts.launches = launches;
    let opts = &opts;
    let machine = machine_for(file, settings);
    let mut report = json::Report::new();
    // Sites are what `--summary` counts, listed or not.
    report.with_sites = want.sites || want.summary;
    let mut out = FileOutcome {
        report,
        counts: Vec::new(),
        findings: Vec::new(),
        prints: Vec::new(),
        suppressed: 0,
        fixes: Vec::new(),
        problems: 0,
    };
    let mut problems = Vec::new();
    let kernels = analysis::in_batches(&m, opts, &IfdsTaint, |a| {
        check_batch(a, settings, (want, &machine), &mut out, &mut problems);
    });
    out.problems = problems.len();
    for p in problems {
        eprintln!("{p}");
    }
    if kernels == 0 && !settings.quiet {
        eprintln!("warpcheck: note: {}: no kernels found", file.display());
    }
    // Worst first within a file, after the fingerprints (which count
    // repeats in file order, so ordering never changes them); the fixes
    // name their findings by index in that order.
    let order = pipeline::report_order(&out.findings);
    out.findings = crate::diag::order::permute(std::mem::take(&mut out.findings), &order);
    out.prints = crate::diag::order::permute(std::mem::take(&mut out.prints), &order);
    if want.report {
        let file_findings = std::mem::take(&mut out.report.findings);
        out.report.findings = crate::diag::order::permute(file_findings, &order);
    }
    fold_repeats(&mut out, want.report);
    out.fixes = super::fixes::of(&m, &out.findings);
    Ok(out)
}

/// One warning for the findings that say the same at one place (each
/// instantiation of a template), as the plugin shows them: the first, in
/// report order, with how many it stands for and in which kernels; the
/// others are left out of the report.
fn fold_repeats(out: &mut FileOutcome, report: bool) {
    use crate::diag::fold::{Fold, Place};
    let places: Vec<Place> = out
        .findings
        .iter()
        .map(|f| Place::of(f, f.pos.clone()))
        .collect();
    let folds = pipeline::folds(&out.findings, &places);
    if folds.iter().all(|f| *f == Fold::Show(String::new())) {
        return;
    }
    let keep: Vec<bool> = folds.iter().map(|f| *f != Fold::Folded).collect();
    for (i, fold) in folds.into_iter().enumerate() {
        if let Fold::Show(suffix) = fold {
            if !suffix.is_empty() {
                out.findings[i].message.push_str(&suffix);
                if let Some(j) = report.then(|| out.report.findings.get_mut(i)).flatten() {
                    j.message.push_str(&suffix);
                }
            }
        }
    }
    retain_kept(&mut out.findings, &keep);
    retain_kept(&mut out.prints, &keep);
    if report {
        retain_kept(&mut out.report.findings, &keep);
    }
}

/// The items whose `keep` is true, in order.
fn retain_kept<T>(items: &mut Vec<T>, keep: &[bool]) {
    let mut at = 0;
    items.retain(|_| {
        at += 1;
        keep.get(at - 1).copied().unwrap_or(true)
    });
}

/// One batch of a file's kernels, checked as every front door checks it
/// ([`pipeline::batch`]): their findings, bounds, JSON, summary counts
/// and fingerprints added to `out`, their kernels' JSON handed to the
/// sink; the NOLINT problems not yet seen added to `problems`.
fn check_batch(
    a: &analysis::ModuleAnalysis<'_>,
    settings: &Settings,
    (want, machine): (Wanted<'_>, &crate::machine::Machine),
    out: &mut FileOutcome,
    problems: &mut Vec<String>,
) {
    let copts = crate::cost::Options::default();
    let run = pipeline::Run {
        selection: &settings.report,
        machine,
        bounds: want.bounds.then_some(&copts),
        budget: &settings.analysis.budget,
    };
    let pipeline::Batch {
        figures,
        findings,
        kernel_bounds,
        suppressed,
        problems: found,
    } = info_span!("checks").in_scope(|| pipeline::batch(a, &run));
    out.suppressed += suppressed;
    for p in found {
        if !problems.contains(&p) {
            problems.push(p);
        }
    }
    if want.report {
        out.report.add(a, &figures, &findings);
        out.report.attach_bounds(
            kernel_bounds
                .iter()
                .map(|kb| crate::cost::report::json(a.module, kb))
                .collect(),
        );
        let mut rendered = Vec::new();
        for mut k in out.report.kernels.drain(..) {
            if want.summary {
                let c = crate::diag::summary::Counts::of(&k);
                out.counts.push((k.file.clone(), k.name.clone(), c));
            }
            if !want.sites {
                k.sites = None;
            }
            if want.kernels.is_some() {
                rendered.push(json::rendered_kernel(&k));
            }
        }
        if let Some((sink, place)) = want.kernels {
            sink.kernels(place, rendered);
        }
    }
    out.prints.extend(crate::diag::fingerprint::of_all(
        a,
        &findings,
        &mut text::SourceCache::default(),
    ));
    out.findings.extend(findings);
}

/// Loads `file` with the options `full` and reads the launches of its
/// host code ([`host_launches`]). With warpcheck's plugin for the clang,
/// the device compile reads them from the AST (`-fplugin`); without it,
/// the host side compiles beside the device side, which only adds the
/// longer of the two to the file's time.
pub(super) fn load_with_launches(
    file: &std::path::Path,
    compile: &CompileOptions,
    full: &CompileOptions,
    settings: &Settings,
) -> (
    Result<crate::ir::Module, frontend::InputError>,
    Vec<crate::ir::launch::HostLaunch>,
) {
    if !wants_launches(file, settings) {
        return (
            info_span!("load").in_scope(|| frontend::load(file, full)),
            Vec::new(),
        );
    }
    let clang = compile
        .clang
        .clone()
        .or_else(|| std::env::var_os("WARPCHECK_CLANG").map(Into::into));
    if let Some(plugin) = super::plugin_path::for_clang(clang.as_deref()) {
        let with = CompileOptions {
            frontend_plugin: Some(plugin),
            ..full.clone()
        };
        match info_span!("load").in_scope(|| frontend::load_with_launches(file, &with)) {
            Ok((m, recorded)) => {
                let launches = host_launches_of(file, compile, recorded);
                return (Ok(m), launches);
            }
            // A plugin this clang cannot load: the way without it.
            Err(e) if e.message.contains("unable to load plugin") => {
                tracing::debug!("no launches from the AST: {e}");
            }
            Err(e) => return (Err(e), Vec::new()),
        }
    }
    std::thread::scope(|s| {
        let host = s.spawn(in_span(|| host_launches(file, compile, settings)));
        let m = info_span!("load").in_scope(|| frontend::load(file, full));
        (m, host.join().unwrap_or_default())
    })
}

/// Whether the launches in `file`'s host code are worth reading: a `.cu`
/// file, without `--no-host-launches`, and no `--block-dim` for every
/// kernel.
fn wants_launches(file: &std::path::Path, settings: &Settings) -> bool {
    let is_cuda = matches!(
        file.extension().and_then(|e| e.to_str()),
        Some("cu" | "cuh")
    );
    is_cuda && !settings.no_host_launches && settings.analysis.block_dim.is_none()
}

/// The launches in a `.cu` file's host code; none for IR input, with
/// `--no-host-launches`, or where `--block-dim` gives every kernel its
/// shape; none (said at debug level) when the host side does not compile:
/// the device analysis goes on with the next source of a shape.
pub(super) fn host_launches(
    file: &std::path::Path,
    compile: &CompileOptions,
    settings: &Settings,
) -> Vec<crate::ir::launch::HostLaunch> {
    if !wants_launches(file, settings) {
        return Vec::new();
    }
    host_launches_of(file, compile, None)
}

/// The launches the frontend action `recorded`, else those of a host-side
/// compile.
fn host_launches_of(
    file: &std::path::Path,
    compile: &CompileOptions,
    recorded: Option<Vec<crate::ir::launch::HostLaunch>>,
) -> Vec<crate::ir::launch::HostLaunch> {
    let _span = info_span!("host").entered();
    frontend::launches_unless_recorded(file, compile, recorded).unwrap_or_else(|e| {
        tracing::debug!("no launch shapes from the host side: {e}");
        Vec::new()
    })
}

/// `work` for another thread, reporting to this thread's subscriber and
/// inside its current span.
fn in_span<T>(work: impl FnOnce() -> T) -> impl FnOnce() -> T {
    let dispatch = tracing::dispatcher::get_default(|d| d.clone());
    let parent = tracing::Span::current();
    move || tracing::dispatcher::with_default(&dispatch, || parent.in_scope(work))
}

/// The time model `file`'s configuration gives (`Machine:`), else the
/// default machine.
pub(super) fn machine_for(file: &std::path::Path, settings: &Settings) -> crate::machine::Machine {
    settings
        .config_for(file)
        .and_then(|p| Config::read(&p).ok())
        .and_then(|c| c.machine().ok())
        .unwrap_or_default()
}

/// [`pipeline::findings_with_impact`] with `settings`' selection.
pub(super) fn findings_with_impact(
    a: &analysis::ModuleAnalysis<'_>,
    figures: &[Vec<crate::checks::SiteFigures>],
    settings: &Settings,
    machine: &crate::machine::Machine,
) -> Vec<Finding> {
    pipeline::findings_with_impact(a, figures, &settings.report, machine)
}

/// `--compare-uniformity`: per file, the functions where LLVM and warpcheck
/// disagree; then totals and the reasons, over every file.
fn compare_files(args: &CheckArgs, compile: &CompileOptions, opts: &Options) -> i32 {
    let mut code = exit::OK;
    let mut files = Vec::new();
    for file in &args.inputs.files {
        let outcome = std::panic::catch_unwind(|| compare_file(file, compile, opts));
        match outcome {
            Ok(Ok(functions)) => {
                if args.report.format == ReportFormat::Text {
                    print!(
                        "{}",
                        compare::render_text(&file.display().to_string(), &functions)
                    );
                }
                files.push((file.display().to_string(), functions));
            }
            Ok(Err(e)) => {
                eprintln!("warpcheck: error: {e}");
                code = code.max(exit::INPUT);
            }
            Err(_) => {
                eprintln!(
                    "warpcheck: internal error while comparing {}; other files are unaffected. Please report this.",
                    file.display()
                );
                code = exit::INTERNAL;
            }
        }
    }
    let all: Vec<FunctionComparison> = files.iter().flat_map(|(_, f)| f.clone()).collect();
    let summary = Summary::of(&all);
    match args.report.format {
        ReportFormat::Text => println!("\n{}", summary.render()),
        ReportFormat::Json | ReportFormat::Sarif => {
            let files: Vec<_> = files
                .iter()
                .map(
                    |(file, functions)| serde_json::json!({ "file": file, "functions": functions }),
                )
                .collect();
            let doc = serde_json::json!({ "files": files, "summary": summary });
            match serde_json::to_string_pretty(&doc) {
                Ok(s) => println!("{s}"),
                Err(e) => {
                    eprintln!("warpcheck: internal error: {e}");
                    return exit::INTERNAL;
                }
            }
        }
    }
    code
}

fn compare_file(
    file: &std::path::Path,
    compile: &CompileOptions,
    opts: &Options,
) -> Result<Vec<FunctionComparison>, frontend::InputError> {
    let (m, ir) = frontend::load_with_ir(file, compile)?;
    require_nvptx(file, &m)?;
    let llvm = compare::parse(&frontend::print_uniformity(&ir)?);
    let a = analysis::analyze(&m, opts, &IfdsTaint);
    Ok(compare::compare(&a, &llvm))
}

pub(super) fn require_nvptx(
    file: &std::path::Path,
    m: &crate::ir::Module,
) -> Result<(), frontend::InputError> {
    if m.is_nvptx() {
        return Ok(());
    }
    Err(frontend::InputError {
        message: format!(
            "{}: not a CUDA device module (target '{}'); compile with --cuda-device-only for nvptx",
            file.display(),
            m.triple
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::generated;

    #[test]
    fn the_closing_count_reads_as_clangs() {
        assert_eq!(generated(0, 0), None);
        assert_eq!(generated(1, 0).unwrap(), "1 warning generated.");
        assert_eq!(generated(0, 2).unwrap(), "2 errors generated.");
        assert_eq!(
            generated(2, 1).unwrap(),
            "2 warnings and 1 error generated."
        );
    }
}
