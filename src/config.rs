//! `.warpcheck.yaml`: per-project settings, found by walking up from each
//! source file as `.clang-tidy` is (the plugin starts from the module's
//! source directory). Keys follow clang-tidy's spelling:
//!
//! ```yaml
//! Checks: "-*,warpcheck-divergent-branch"   # globs, later ones win
//! WarningsAsErrors: "warpcheck-uncoalesced-*"
//! BareNolint: false                          # a bare NOLINT silences all
//! Kernels:                                   # launch shapes by name glob
//!   "reduce*": {block: [256, 1, 1], grid: [1024, 1, 1]}
//! CompileFlags: {Add: ["-DNDEBUG"], Remove: ["-DDEBUG*"]}
//! Machine: {preset: a100, issue_rate: 4, global_latency: 400}   # time model
//! Params: {n: 64}                            # integer kernel parameters' values
//! ```
//!
//! An unknown key, a wrong type or bad YAML is an input error that names
//! the file, the line and the key.

use crate::analysis::{BlockDim, BlockDimSource, Options};
use crate::finding::{bare_name as bare, Finding, Severity};
use crate::frontend::CompileOptions;
use crate::glob::glob;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name looked for.
pub const FILE_NAME: &str = ".warpcheck.yaml";

/// The largest configuration read: far above any real one (a few
/// hundred lines), far below what would cost memory to parse.
pub const MAX_BYTES: u64 = 1 << 20;

/// The deepest nesting of mappings and sequences a configuration may
/// have; the deepest real one (`Kernels: {k: {block: [..]}}`) has 3.
pub const MAX_DEPTH: usize = 16;

/// The longest piece of the file an error message quotes.
const MAX_QUOTED: usize = 64;

/// The parser's settings: the size, nesting and alias limits of a file a
/// person writes, so that a hostile file fails fast instead of taking
/// memory or time.
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_aliases = 1_000;
    budget.max_anchors = 1_000;
    budget.max_nodes = 100_000;
    budget.max_events = 200_000;
    budget.max_total_scalar_bytes = MAX_BYTES as usize;
    budget.max_reader_input_bytes = Some(MAX_BYTES as usize);
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// A parser error as `line:column: key: message`: the message without
/// the source excerpt or a second copy of the position, the key written
/// before the position on its line, and any long piece of the file in it
/// shortened.
fn yaml_error(e: &serde_saphyr::Error, text: &str) -> String {
    let (line, column) = e
        .location()
        .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
    let mut message = e.without_snippet().to_string();
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    let message = shorten(&message);
    match key_before(text, line, column) {
        Some(key) if !message.contains(key) => format!("{line}:{column}: {key}: {message}"),
        _ => format!("{line}:{column}: {message}"),
    }
}

/// The last `key:` written on line `line` (1-based) before `column`.
fn key_before(text: &str, line: u64, column: u64) -> Option<&str> {
    let l = text
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let end = l
        .char_indices()
        .nth(usize::try_from(column).ok()?.saturating_sub(1))
        .map_or(l.len(), |(i, _)| i);
    let before = &l[..end];
    let colon = before.rfind(':')?;
    let key = before[..colon]
        .rsplit(|c: char| c.is_whitespace() || matches!(c, '{' | ',' | '-'))
        .next()?
        .trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty() && key.len() <= MAX_QUOTED).then_some(key)
}

/// `message` with every quoted piece longer than [`MAX_QUOTED`] cut to
/// its start and its length: an unknown key of a megabyte is not echoed.
fn shorten(message: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.chars().count() > MAX_QUOTED {
            let head: String = word.chars().take(MAX_QUOTED).collect();
            out.push_str(&format!("{head}… ({} bytes)", word.len()));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in message.chars() {
        if c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ',') {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// What a run reports, as `--disable`, `--checks`, the plugin's settings
/// and the configuration choose it; the analysis never sees it.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Checks switched off by name (`--disable`): off whatever the lists say.
    pub disabled: Vec<String>,
    /// The check lists, the configuration's first and the command line's
    /// after it: comma-separated clang-tidy globs, the last match decides.
    pub checks: Option<String>,
    /// A bare `NOLINT` (no check list) silences every check, as in
    /// clang-tidy; by default it silences nothing.
    pub bare_nolint: bool,
    /// Checks whose warnings are errors (a clang-tidy glob list, the
    /// configuration's first).
    pub warnings_as_errors: Option<String>,
    /// `--min-impact` or `MinImpact:`: warnings estimated below this share
    /// of their kernel's time are notes (`None`: the default).
    pub min_impact: Option<f64>,
}

impl Selection {
    /// The findings of the checks and notes this selection leaves on, with
    /// the warnings `WarningsAsErrors` names made errors.
    pub fn findings(
        &self,
        a: &crate::analysis::ModuleAnalysis<'_>,
        figures: &[Vec<crate::checks::SiteFigures>],
    ) -> Vec<Finding> {
        self.findings_with(a, figures, |_| {}, |_| {})
    }

    /// [`Selection::findings`], with `estimate` run on every finding
    /// before copies at one position are reduced to one, and `settle` on
    /// those kept, before any warning is made an error (the impact stage,
    /// which may make a cheap warning a note, sits above this module).
    pub fn findings_with(
        &self,
        a: &crate::analysis::ModuleAnalysis<'_>,
        figures: &[Vec<crate::checks::SiteFigures>],
        estimate: impl FnMut(&mut [Finding]),
        settle: impl FnOnce(&mut Vec<Finding>),
    ) -> Vec<Finding> {
        let mut estimate = estimate;
        let mut findings = crate::checks::run_all_with(a, figures, &self.off(), &mut estimate);
        settle(&mut findings);
        self.promote(&mut findings);
        findings
    }

    /// The checks and notes switched off: by name, or by the lists.
    pub fn off(&self) -> Vec<String> {
        let mut off: Vec<String> = self.disabled.iter().map(|d| bare(d).to_string()).collect();
        let listed = |n: &&str| {
            self.checks
                .as_deref()
                .is_some_and(|l| enabled(l, n) == Some(false))
        };
        for n in crate::checks::names().filter(listed) {
            if !off.iter().any(|d| d == n) {
                off.push(n.to_string());
            }
        }
        off
    }

    /// Puts a check list under the lists already here (the configuration's
    /// under the command line's), after checking its names.
    pub fn add_checks_under(&mut self, list: &str) -> Result<(), String> {
        self.checks = Some(under(list, self.checks.take())?);
        Ok(())
    }

    /// [`Selection::add_checks_under`] for `WarningsAsErrors`.
    pub fn add_warnings_as_errors_under(&mut self, list: &str) -> Result<(), String> {
        self.warnings_as_errors = Some(under(list, self.warnings_as_errors.take())?);
        Ok(())
    }

    /// Makes the warnings `WarningsAsErrors` names errors: after the
    /// checks have kept the worst of duplicate findings by their own
    /// severities.
    fn promote(&self, findings: &mut [Finding]) {
        let Some(list) = &self.warnings_as_errors else {
            return;
        };
        for f in findings {
            if f.severity == Severity::Warning && enabled(list, f.check) == Some(true) {
                f.severity = Severity::Error;
            }
        }
    }
}

/// `list`, checked, followed by `above` if any.
fn under(list: &str, above: Option<String>) -> Result<String, String> {
    check_names(list)?;
    Ok(match above {
        Some(a) => format!("{list},{a}"),
        None => list.to_string(),
    })
}

/// An error for a name without `*` in a check list that names no check.
pub fn check_names(list: &str) -> Result<(), String> {
    for g in list
        .split(',')
        .map(|g| g.trim().trim_start_matches('-').trim())
    {
        if !g.is_empty() && !g.contains('*') && !crate::checks::is_known(g) {
            return Err(format!(
                "no check named '{g}'{} (see `warpcheck checks`)",
                crate::finding::did_you_mean(g, crate::checks::names())
            ));
        }
    }
    Ok(())
}

/// A launch shape for the kernels whose names match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Vec<u32>>,
    /// The grid, for launch-wide cost bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Vec<u32>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompileFlags {
    #[serde(rename = "Add", default, skip_serializing_if = "Vec::is_empty")]
    pub add: Vec<String>,
    /// Globs over the flags the build gives (`-D`, `-I`, others).
    #[serde(rename = "Remove", default, skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<String>,
    /// The line of the file each of `add` is on, for refusals.
    #[serde(skip)]
    pub add_lines: Vec<usize>,
    /// The directory of the file: an `-include` must lie under it.
    #[serde(skip)]
    pub project: Option<PathBuf>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(rename = "Checks", default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<String>,
    #[serde(
        rename = "WarningsAsErrors",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub warnings_as_errors: Option<String>,
    #[serde(rename = "BareNolint", default)]
    pub bare_nolint: bool,
    #[serde(
        rename = "Kernels",
        default,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub kernels: BTreeMap<String, Launch>,
    #[serde(rename = "CompileFlags", default)]
    pub compile_flags: CompileFlags,
    /// Overrides of the time model's constants (see [`crate::machine`]),
    /// `preset` first whatever its place. A number or a name each, read
    /// as text.
    #[serde(
        rename = "Machine",
        default,
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub machine: BTreeMap<String, String>,
    /// The share of a kernel's estimated time under which a warning is a
    /// note: a percentage, `2` or `"2%"` (as `--min-impact`).
    #[serde(rename = "MinImpact", default, skip_serializing_if = "Option::is_none")]
    pub min_impact: Option<String>,
    /// Integer kernel parameters' values by name, as `--param` gives
    /// them (the command line's win).
    #[serde(rename = "Params", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, i64>,
    /// `false`: kernel pointer parameters are not taken as `cudaMalloc`
    /// pointers, 256-byte aligned (as `--no-malloc-alignment`).
    #[serde(
        rename = "MallocAlignment",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub malloc_alignment: Option<bool>,
}

/// A `--min-impact` or `MinImpact:` value, a percentage from 0 to 100
/// with or without `%`, as a share from 0 to 1.
pub fn parse_min_impact(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    match n.parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v / 100.0),
        _ => Err(format!(
            "expected a percentage from 0 to 100 (e.g. 2 or 0.5%), got '{t}'"
        )),
    }
}

/// A clang-tidy check list: comma-separated globs, `-` to remove; the
/// last glob that matches decides. A glob may name a check with or
/// without the `warpcheck-` prefix (`name` is either).
fn enabled(list: &str, name: &str) -> Option<bool> {
    let name = bare(name);
    let tag = format!("warpcheck-{name}");
    let matches = |g: &str| glob(g, name) || glob(g, &tag);
    list.rsplit(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .find_map(|g| match g.strip_prefix('-') {
            Some(neg) => matches(neg.trim()).then_some(false),
            None => matches(g).then_some(true),
        })
}

impl Config {
    /// Reads a config file; errors name the file, line and key. Only a
    /// regular file of at most [`MAX_BYTES`] is read.
    pub fn read(path: &Path) -> Result<Config, String> {
        let text = crate::files::read_text(path, "configuration", MAX_BYTES)?;
        let mut c = Config::parse(&text).map_err(|e| format!("{}:{e}", path.display()))?;
        c.compile_flags.project = path.parent().map(Path::to_path_buf);
        Ok(c)
    }

    /// Parses a config's text; an error starts with `line:column: `.
    /// Text over [`MAX_BYTES`] is refused before it is parsed, and the
    /// parser stops at [`MAX_DEPTH`] levels of nesting and at alias bombs.
    pub fn parse(text: &str) -> Result<Config, String> {
        if text.len() as u64 > MAX_BYTES {
            return Err(format!(
                "1:1: a configuration larger than the limit of {}",
                crate::files::bytes(MAX_BYTES)
            ));
        }
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let mut c: Config = serde_saphyr::from_str_with_options(text, yaml_options())
            .map_err(|e| yaml_error(&e, text))?;
        c.validate(text)?;
        c.compile_flags.add_lines = add_lines(text, &c.compile_flags.add);
        // The line of a top-level key, for messages serde cannot place.
        let line = |key: &str| {
            text.lines()
                .position(|l| l.trim_start().starts_with(key))
                .map_or(1, |i| i + 1)
        };
        for (key, list) in [
            ("Checks", &c.checks),
            ("WarningsAsErrors", &c.warnings_as_errors),
        ] {
            if let Some(l) = list {
                check_names(l).map_err(|e| format!("{}:1: {key}: {e}", line(key)))?;
            }
        }
        if let Err(e) = c.machine() {
            return Err(format!("{}:1: Machine: {e}", line("Machine")));
        }
        if let Err(e) = c.min_impact() {
            return Err(format!("{}:1: MinImpact: {e}", line("MinImpact")));
        }
        Ok(c)
    }

    /// The launch shapes within CUDA's limits; an error names the line of
    /// the kernel's entry.
    fn validate(&self, text: &str) -> Result<(), String> {
        for (name, l) in &self.kernels {
            for (key, dims, check) in [
                (
                    "block",
                    &l.block,
                    crate::analysis::check_block as fn(&[u32]) -> _,
                ),
                ("grid", &l.grid, crate::analysis::check_grid),
            ] {
                if let Some(Err(e)) = dims.as_deref().map(check) {
                    let line = text
                        .lines()
                        .position(|t| t.contains(name.as_str()) && t.contains(key))
                        .or_else(|| text.lines().position(|t| t.contains(name.as_str())))
                        .map_or(1, |i| i + 1);
                    return Err(format!("{line}:1: Kernels.{name}.{key}: {e}"));
                }
            }
        }
        Ok(())
    }

    /// The time model: the defaults with `Machine:` applied.
    pub fn machine(&self) -> Result<crate::machine::Machine, String> {
        let mut m = crate::machine::Machine::default();
        let mut entries: Vec<(&String, &String)> = self.machine.iter().collect();
        entries.sort_by_key(|(k, _)| *k != "preset");
        for (k, v) in &entries {
            m.set(k, v)?;
        }
        Ok(m)
    }

    /// The time model for a source file: the nearest config's `Machine:`,
    /// else (also when that config is bad, which `check` reports) the
    /// defaults.
    pub fn machine_near(file: &Path) -> crate::machine::Machine {
        Config::find_for(file)
            .and_then(|p| Config::read(&p).ok())
            .and_then(|c| c.machine().ok())
            .unwrap_or_default()
    }

    /// The nearest config above `file` (its directory first), if any.
    pub fn find_for(file: &Path) -> Option<PathBuf> {
        let start = std::path::absolute(file).ok()?;
        start
            .ancestors()
            .skip(1)
            .map(|d| d.join(FILE_NAME))
            .find(|p| p.is_file())
    }

    /// `MinImpact` as a share, if set.
    pub fn min_impact(&self) -> Result<Option<f64>, String> {
        match &self.min_impact {
            None => Ok(None),
            Some(text) => parse_min_impact(text).map(Some),
        }
    }

    /// Applies the checks to report (`Checks`, `WarningsAsErrors`,
    /// `BareNolint`, `MinImpact`) to `sel` and the launch shapes
    /// (`Kernels`), parameter values (`Params`) and `MallocAlignment` to
    /// `opts`.
    /// The lists go under those already in `sel` (the command line's).
    pub fn apply(&self, opts: &mut Options, sel: &mut Selection) {
        // The command line's --min-impact wins; the value was checked on reading.
        if sel.min_impact.is_none() {
            sel.min_impact = self.min_impact().ok().flatten();
        }
        // The names were checked when the file was read.
        if let Some(list) = &self.checks {
            let _ = sel.add_checks_under(list);
        }
        if let Some(list) = &self.warnings_as_errors {
            let _ = sel.add_warnings_as_errors_under(list);
        }
        sel.bare_nolint |= self.bare_nolint;
        opts.no_malloc_alignment |= self.malloc_alignment == Some(false);
        for (name, &v) in &self.params {
            if !opts.params.iter().any(|(n, _)| n == name) {
                opts.params.insert(0, (name.clone(), i128::from(v)));
            }
        }
        for (name, l) in &self.kernels {
            if let Some(b) = &l.block {
                let mut dims = [1; 3];
                dims[..b.len()].copy_from_slice(b);
                opts.kernel_dims.push((
                    name.clone(),
                    BlockDim {
                        dims,
                        source: BlockDimSource::Config,
                    },
                ));
            }
        }
    }

    /// Applies `CompileFlags` to one file's compile options. `Add` passes
    /// only flags that change the source's meaning unless the command line
    /// allowed unsafe flags; an error starts with `line:column: `.
    pub fn apply_flags(&self, c: &mut CompileOptions) -> Result<(), String> {
        let cf = &self.compile_flags;
        if !c.allow_unsafe_flags {
            let project = cf.project.as_deref().unwrap_or(Path::new("."));
            if let Err(r) = crate::frontend::flags::vet(&cf.add, project) {
                let line = cf.add_lines.get(r.at).copied().unwrap_or(1);
                return Err(format!("{line}:1: CompileFlags.Add: {r}"));
            }
        }
        let gone = |flag: &str| cf.remove.iter().any(|g| glob(g, flag));
        c.defines.retain(|d| !gone(&format!("-D{d}")));
        c.includes.retain(|i| !gone(&format!("-I{}", i.display())));
        c.extra.retain(|x| !gone(x));
        c.extra.extend(cf.add.iter().cloned());
        Ok(())
    }
}

/// The line each of `flags` is written on: the first line at or after the
/// previous flag's (from `CompileFlags` on) that holds it.
fn add_lines(text: &str, flags: &[String]) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut at = lines
        .iter()
        .position(|l| l.contains("CompileFlags"))
        .unwrap_or(0);
    flags
        .iter()
        .map(|f| {
            if let Some(k) = lines[at..].iter().position(|l| l.contains(f.as_str())) {
                at += k;
            }
            at + 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_go_under_the_command_line() {
        let c = Config::parse("Params: {n: 64, m: -3}\n").unwrap();
        let mut o = Options {
            params: vec![("n".to_string(), 8)],
            ..Options::default()
        };
        c.apply(&mut o, &mut Selection::default());
        assert!(o.params.contains(&("m".to_string(), -3)));
        let n: Vec<_> = o.params.iter().filter(|(k, _)| k == "n").collect();
        assert_eq!(n, [&("n".to_string(), 8)], "--param n=8 wins");
        assert!(Config::parse("Params: {n: 1.5}\n").is_err());
    }

    #[test]
    fn a_full_config() {
        let c = Config::parse(
            "Checks: '-*,warpcheck-divergent-branch'\n\
             WarningsAsErrors: warpcheck-divergent-*\n\
             Kernels:\n  'reduce*': {block: [128, 2]}\n\
             CompileFlags: {Add: [-DX], Remove: ['-DDEBUG*']}\n",
        )
        .unwrap();
        let (mut o, mut sel) = (Options::default(), Selection::default());
        c.apply(&mut o, &mut sel);
        // `-*` also turns off the notes that `--disable` can name.
        assert_eq!(
            sel.off(),
            [
                "uncoalesced-access",
                "bank-conflict",
                "unread-asm",
                "guessed-shape"
            ]
        );
        assert_eq!(o.kernel_dims[0].0, "reduce*");
        assert_eq!(o.kernel_dims[0].1.dims, [128, 2, 1]);
        assert_eq!(
            sel.warnings_as_errors.as_deref(),
            Some("warpcheck-divergent-*")
        );
        let mut f = CompileOptions {
            defines: vec!["DEBUG_LEVEL=2".into(), "N=4".into()],
            ..CompileOptions::default()
        };
        c.apply_flags(&mut f).unwrap();
        assert_eq!(f.defines, ["N=4"]);
        assert_eq!(f.extra, ["-DX"]);
    }

    #[test]
    fn warnings_as_errors_promote_only_the_named_warnings() {
        let finding = |check, severity| Finding {
            check,
            severity,
            func: crate::ir::FuncId::new(0),
            inst: None,
            pos: None,
            kernel: "k".into(),
            function: "k".into(),
            message: String::new(),
            notes: Vec::new(),
            data: None,
            impact: None,
        };
        let sel = Selection {
            warnings_as_errors: Some("warpcheck-*,-warpcheck-bank-*".into()),
            ..Selection::default()
        };
        let mut f = [
            finding("divergent-branch", Severity::Warning),
            finding("divergent-branch", Severity::Note),
            finding("bank-conflict", Severity::Warning),
        ];
        sel.promote(&mut f);
        // The last glob that matches decides: bank conflicts stay warnings,
        // and a note is never an error.
        let severities: Vec<_> = f.iter().map(|f| f.severity).collect();
        assert_eq!(
            severities,
            [Severity::Error, Severity::Note, Severity::Warning]
        );
        let mut none = [finding("divergent-branch", Severity::Warning)];
        Selection::default().promote(&mut none);
        assert_eq!(none[0].severity, Severity::Warning);
    }

    #[test]
    fn machine_overrides_apply_the_preset_first() {
        let c = Config::parse("Machine: {global_latency: 20, preset: paper}\n").unwrap();
        let m = c.machine().unwrap();
        // The paper machine, then its memory latency changed to 20.
        assert_eq!((m.issue_rate, m.alu_latency, m.global_latency), (1, 1, 20));
        assert_eq!(
            Config::default().machine().unwrap(),
            crate::machine::Machine::a100()
        );
    }

    #[test]
    fn errors_name_line_and_key() {
        let e = Config::parse("Checks: '*'\nKernel:\n  k: {}\n").unwrap_err();
        assert!(e.starts_with("2:1: unknown field `Kernel`"), "{e}");
        let e = Config::parse("Kernels:\n  k: {block: x}\n").unwrap_err();
        // `x` starts at column 14, where a list was wanted.
        assert!(e.starts_with("2:14: block: "), "{e}");
        assert!(e.contains("sequence"), "{e}");
        let e = Config::parse("Checks: '*'\nMachine: {issue_rate: 0}\n").unwrap_err();
        assert!(
            e.starts_with("2:1: Machine: issue_rate: must be at least 1"),
            "{e}"
        );
        let e = Config::parse("Machine: {latency: 3}\n").unwrap_err();
        assert!(e.contains("unknown machine key 'latency'"), "{e}");
        let e = Config::parse("Kernels:\n  k: {block: [0, 1]}\n").unwrap_err();
        assert!(
            e.contains("Kernels.k.block: expected 1 to 3 positive"),
            "{e}"
        );
    }

    #[test]
    fn names_with_or_without_the_prefix() {
        // `Checks: "*,-divergent-branch"` switches the check off as the
        // prefixed name does.
        for list in ["*,-divergent-branch", "*,-warpcheck-divergent-branch"] {
            let c =
                Config::parse(&format!("Checks: '{list}'\nWarningsAsErrors: 'bank-*'\n")).unwrap();
            let (mut o, mut sel) = (Options::default(), Selection::default());
            c.apply(&mut o, &mut sel);
            assert_eq!(sel.off(), ["divergent-branch"], "{list}");
            assert_eq!(
                enabled(sel.warnings_as_errors.as_deref().unwrap(), "bank-conflict"),
                Some(true)
            );
        }
        let e = Config::parse("Checks: '*'\nWarningsAsErrors: '-*,divergnt-branch'\n").unwrap_err();
        assert_eq!(
            e,
            "2:1: WarningsAsErrors: no check named 'divergnt-branch' (did you mean \
             'warpcheck-divergent-branch'?) (see `warpcheck checks`)"
        );
    }

    #[test]
    fn command_line_lists_go_over_the_configuration() {
        // The command line said `--checks=-*,bank-conflict`; the file turns
        // every check on, under it.
        let mut sel = Selection::default();
        sel.add_checks_under("-*,bank-conflict").unwrap();
        let c = Config::parse("Checks: '*'\n").unwrap();
        c.apply(&mut Options::default(), &mut sel);
        let mut off = sel.off();
        off.sort();
        assert_eq!(
            off,
            [
                "divergent-branch",
                "guessed-shape",
                "uncoalesced-access",
                "unread-asm"
            ]
        );
        // `--disable` wins over any list.
        sel.disabled.push("warpcheck-bank-conflict".into());
        assert!(sel.off().contains(&"bank-conflict".to_string()));
    }

    #[test]
    fn hostile_files_fail_fast_with_short_messages() {
        let start = std::time::Instant::now();
        // Nested 100,000 deep, in both YAML syntaxes: refused at the
        // depth limit, in time linear in the text.
        let flow = format!("Kernels: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let e = Config::parse(&flow).unwrap_err();
        assert!(e.starts_with("1:"), "{e}");
        let block: String = (0..100_000)
            .map(|i| format!("{}- \n", " ".repeat(i % 2_000)))
            .collect();
        assert!(Config::parse(&format!("Kernels:\n{block}")).is_err());
        // A billion laughs: nine levels of ten aliases each.
        let mut laughs = String::from("a0: &a0 [lol]\n");
        for i in 1..10 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            laughs.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        assert!(Config::parse(&format!("Kernels:\n  {}", laughs.replace('\n', "\n  "))).is_err());
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
        // Over the size limit: refused before parsing.
        let huge = format!("Checks: '*'\n#{}\n", "x".repeat(MAX_BYTES as usize));
        let e = Config::parse(&huge).unwrap_err();
        assert_eq!(e, "1:1: a configuration larger than the limit of 1 MiB");
        // An unknown key of 1,000 bytes is named by its start and its
        // size; one of 100 KB is past what the parser takes for a key.
        let e = Config::parse(&format!("Checks: '*'\n{}: 1\n", "k".repeat(1_000))).unwrap_err();
        assert!(e.starts_with("2:1: unknown field `kkkk"), "{e}");
        assert!(e.contains("… (1000 bytes)"), "{e}");
        assert!(e.len() < 300, "{e}");
        let e = Config::parse(&format!("Checks: '*'\n{}: 1\n", "k".repeat(100_000))).unwrap_err();
        assert!(e.starts_with("2:"), "{e}");
        assert!(e.len() < 200, "{e}");
    }

    #[test]
    fn later_globs_win() {
        assert_eq!(
            enabled("-*,warpcheck-bank-*", "warpcheck-bank-conflict"),
            Some(true)
        );
        assert_eq!(
            enabled("warpcheck-*,-warpcheck-bank-*", "warpcheck-bank-conflict"),
            Some(false)
        );
        assert_eq!(enabled("foo-*", "warpcheck-bank-conflict"), None);
    }
}
