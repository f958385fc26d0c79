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
//! ```
//!
//! An unknown key, a wrong type or bad YAML is an input error that names
//! the file, the line and the key.

use crate::analysis::{BlockDim, BlockDimSource, Options};
use crate::finding::{Finding, Severity};
use crate::frontend::CompileOptions;
use crate::glob::glob;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file name looked for.
pub const FILE_NAME: &str = ".warpcheck.yaml";

/// What a run reports, as `--disable`, the plugin's settings and the
/// configuration choose it; the analysis never sees it.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Checks switched off by name.
    pub disabled: Vec<String>,
    /// A bare `NOLINT` (no check list) silences every check, as in
    /// clang-tidy; by default it silences nothing.
    pub bare_nolint: bool,
    /// Checks whose warnings are errors (a clang-tidy glob list).
    pub warnings_as_errors: Option<String>,
}

impl Selection {
    /// The findings of the checks and notes this selection leaves on, with
    /// the warnings `WarningsAsErrors` names made errors.
    pub fn findings(
        &self,
        a: &crate::analysis::ModuleAnalysis<'_>,
        figures: &[Vec<crate::checks::SiteFigures>],
    ) -> Vec<Finding> {
        let mut findings = crate::checks::run_all(a, figures, &self.disabled);
        self.promote(&mut findings);
        findings
    }

    /// Makes the warnings `WarningsAsErrors` names errors: after the
    /// checks have kept the worst of duplicate findings by their own
    /// severities.
    fn promote(&self, findings: &mut [Finding]) {
        let Some(list) = &self.warnings_as_errors else {
            return;
        };
        for f in findings {
            if f.severity == Severity::Warning && enabled(list, &f.tag()) == Some(true) {
                f.severity = Severity::Error;
            }
        }
    }
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
    /// `preset` first whatever its place.
    #[serde(
        rename = "Machine",
        default,
        skip_serializing_if = "serde_yaml::Mapping::is_empty"
    )]
    pub machine: serde_yaml::Mapping,
}

/// A clang-tidy check list: comma-separated globs, `-` to remove; the
/// last glob that matches decides.
fn enabled(list: &str, name: &str) -> Option<bool> {
    list.rsplit(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .find_map(|g| match g.strip_prefix('-') {
            Some(neg) => glob(neg.trim(), name).then_some(false),
            None => glob(g, name).then_some(true),
        })
}

impl Config {
    /// Reads a config file; errors name the file, line and key.
    pub fn read(path: &Path) -> Result<Config, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let mut c = Config::parse(&text).map_err(|e| format!("{}:{e}", path.display()))?;
        c.compile_flags.project = path.parent().map(Path::to_path_buf);
        Ok(c)
    }

    /// Parses a config's text; an error starts with `line:column: `.
    pub fn parse(text: &str) -> Result<Config, String> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let mut c: Config = serde_yaml::from_str(text).map_err(|e| match e.location() {
            Some(l) => format!("{}:{}: {e}", l.line(), l.column()),
            None => format!("1:1: {e}"),
        })?;
        c.validate(text)?;
        c.compile_flags.add_lines = add_lines(text, &c.compile_flags.add);
        if let Err(e) = c.machine() {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("Machine"))
                .map_or(1, |i| i + 1);
            return Err(format!("{line}:1: Machine: {e}"));
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
        let text = |v: &serde_yaml::Value| match v {
            serde_yaml::Value::String(s) => Ok(s.clone()),
            serde_yaml::Value::Number(n) => Ok(n.to_string()),
            other => Err(format!("expected a number or a name, got {other:?}")),
        };
        let mut entries: Vec<(String, String)> = Vec::new();
        for (k, v) in &self.machine {
            let key = k
                .as_str()
                .ok_or_else(|| format!("expected a key name, got {k:?}"))?;
            entries.push((key.to_string(), text(v).map_err(|e| format!("{key}: {e}"))?));
        }
        entries.sort_by_key(|(k, _)| k != "preset");
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

    /// Applies the checks to report (`Checks`, `WarningsAsErrors`,
    /// `BareNolint`) to `sel` and the launch shapes (`Kernels`) to `opts`.
    pub fn apply(&self, opts: &mut Options, sel: &mut Selection) {
        if let Some(list) = &self.checks {
            for c in crate::checks::all() {
                let tag = format!("warpcheck-{}", c.name());
                if enabled(list, &tag) == Some(false) && !sel.disabled.iter().any(|d| d == c.name())
                {
                    sel.disabled.push(c.name().to_string());
                }
            }
        }
        if let Some(list) = &self.warnings_as_errors {
            sel.warnings_as_errors = Some(list.clone());
        }
        sel.bare_nolint |= self.bare_nolint;
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
        assert_eq!(sel.disabled, ["uncoalesced-access", "bank-conflict"]);
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
        assert!(e.starts_with("2:"), "{e}");
        assert!(
            e.contains("Kernels.k.block") || e.contains("invalid type"),
            "{e}"
        );
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
