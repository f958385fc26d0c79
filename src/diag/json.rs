//! The JSON report. Field names are a contract with users' scripts: add
//! fields, never rename them.

use crate::analysis::{KernelAnalysis, ModuleAnalysis, Site};
use crate::checks::SiteFigures;
use crate::finding::{Finding, Impact};
use crate::ir::Position;
use serde::Serialize;

#[derive(Serialize, Debug, Default)]
pub struct Report {
    pub tool: &'static str,
    pub version: &'static str,
    pub kernels: Vec<KernelJson>,
    pub findings: Vec<FindingJson>,
}

#[derive(Serialize, Debug)]
pub struct KernelJson {
    pub name: String,
    pub mangled: String,
    pub file: String,
    pub line: u32,
    pub block_dim: [u32; 3],
    pub block_dim_source: ShapeSource,
    /// The kernel's `<<<…>>>` launches in the host code (`.cu` input):
    /// with several block shapes, the kernel appears once per shape.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub launches: Vec<LaunchJson>,
    pub sites: Vec<SiteJson>,
    /// Per-warp cost bounds (`check --bounds`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<crate::cost::report::BoundsJson>,
}

/// Where a kernel's block shape came from: a name (`"reqntid"`,
/// `"option"`, `"config"`, `"launch_bounds"`, `"default"`), or for a
/// launch in the host code `{"kind": "launch", "file", "line"}`.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
#[serde(untagged)]
pub enum ShapeSource {
    Named(&'static str),
    Launch {
        kind: &'static str,
        file: String,
        line: u32,
    },
}

impl std::fmt::Display for ShapeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShapeSource::Named(n) => f.write_str(n),
            ShapeSource::Launch { file, line, .. } => write!(f, "launch at {file}:{line}"),
        }
    }
}

/// One launch of a kernel: its block and grid where constant (`null`
/// where computed at run time) and where it is.
#[derive(Serialize, Debug)]
pub struct LaunchJson {
    pub file: String,
    pub line: u32,
    pub block: Option<[u32; 3]>,
    pub grid: Option<[u32; 3]>,
    pub shared_bytes: Option<u64>,
}

#[derive(Serialize, Debug)]
pub struct SiteJson {
    pub kind: &'static str,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub function: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `space` is global by the assumption that pointers loaded from
    /// kernel arguments' or `__constant__` memory point to global memory.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub space_assumed: bool,
    pub thread_dependent: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
    /// For thread-dependent sites: whether the value is nonetheless the
    /// same in every lane of each warp (`threadIdx.x / 32`), so no warp
    /// splits or scatters on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warp_uniform: Option<bool>,
    /// The branch condition's or address's ACF, for thread-dependent sites.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acf: Option<String>,
    /// The figures of the checks that measure the site, each under its
    /// key (`divergence`, `sectors`, `conflict`), and why they are unknown.
    #[serde(flatten)]
    pub figures: SiteFigures,
}

#[derive(Serialize, Debug)]
pub struct FindingJson {
    pub check: String,
    pub severity: &'static str,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub kernel: String,
    pub function: String,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
    /// What the finding is estimated to cost (`timing::impact`): cycles,
    /// share of the kernel's time, the estimate's inputs, or why unknown.
    pub impact: Impact,
    /// Stable across edits that move the line (see `diag::fingerprint`):
    /// what `--baseline` and SARIF's `partialFingerprints` match on.
    pub fingerprint: String,
}

impl Report {
    pub fn new() -> Self {
        Report {
            tool: "warpcheck",
            version: env!("CARGO_PKG_VERSION"),
            ..Report::default()
        }
    }

    /// Gives the kernels added last (one per bound, in order) their bounds.
    pub fn attach_bounds(&mut self, bounds: Vec<crate::cost::report::BoundsJson>) {
        let from = self.kernels.len().saturating_sub(bounds.len());
        for (k, b) in self.kernels[from..].iter_mut().zip(bounds) {
            k.bounds = Some(b);
        }
    }

    /// Adds a module's kernels and findings.
    pub fn add(
        &mut self,
        a: &ModuleAnalysis<'_>,
        figures: &[Vec<SiteFigures>],
        findings: &[Finding],
    ) {
        self.kernels.extend(
            a.kernels
                .iter()
                .zip(figures)
                .map(|(k, f)| kernel_json(a, k, f)),
        );
        let mut cache = super::text::SourceCache::default();
        let prints = super::fingerprint::of_all(a, findings, &mut cache);
        self.findings.extend(
            findings
                .iter()
                .zip(prints)
                .map(|(f, print)| finding_json(f, print)),
        );
    }
}

fn position(a: &ModuleAnalysis<'_>, pos: Option<&crate::ir::SourcePos>) -> (String, u32, u32) {
    pos.map(|p| Position::resolve(a.module, p))
        .map(|p| (p.file, p.line, p.col))
        .unwrap_or_default()
}

fn kernel_json(a: &ModuleAnalysis<'_>, k: &KernelAnalysis, figures: &[SiteFigures]) -> KernelJson {
    let func = a.module.func(k.kernel);
    let (file, line, _) = position(a, func.loc.as_ref());
    KernelJson {
        name: func.demangled.clone(),
        mangled: func.name.clone(),
        file,
        line,
        block_dim: k.block_dim.dims,
        block_dim_source: match k.shapes.site_of(&k.block_dim) {
            Some(l) => ShapeSource::Launch {
                kind: "launch",
                file: l.file.clone(),
                line: l.line,
            },
            None => ShapeSource::Named(k.block_dim.source.name()),
        },
        launches: k
            .shapes
            .sites
            .iter()
            .map(|l| LaunchJson {
                file: l.file.clone(),
                line: l.line,
                block: l.block,
                grid: l.grid,
                shared_bytes: l.shared_bytes,
            })
            .collect(),
        sites: k
            .sites
            .iter()
            .zip(figures)
            .map(|(s, f)| site_json(a, k, s, f))
            .collect(),
        bounds: None,
    }
}

fn site_json(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    s: &Site,
    figures: &SiteFigures,
) -> SiteJson {
    let (file, line, column) = position(a, s.pos.as_ref());
    SiteJson {
        kind: s.kind.name(),
        file,
        line,
        column,
        function: a.module.func(s.func).demangled.clone(),
        space: s.space.map(|sp| sp.name()),
        bytes: s.space.map(|_| s.bytes),
        space_assumed: s.assumed_space,
        thread_dependent: s.thread_dependent,
        why: s.why.clone(),
        warp_uniform: s.thread_dependent.then(|| {
            let block = a.module.func(s.func).inst(s.inst).block;
            k.acf.warp_uniform(s.func, block, s.value)
        }),
        acf: s
            .thread_dependent
            .then(|| k.acf.render(a.module, s.func, s.value))
            .flatten(),
        figures: figures.clone(),
    }
}

fn finding_json(f: &Finding, fingerprint: String) -> FindingJson {
    let (file, line, column) = f
        .pos
        .as_ref()
        .map(|p| (p.file.clone(), p.line, p.col))
        .unwrap_or_default();
    FindingJson {
        check: f.check.to_string(),
        severity: f.severity.name(),
        file,
        line,
        column,
        kernel: f.kernel.clone(),
        function: f.function.clone(),
        message: f.message.clone(),
        notes: f.notes.clone(),
        data: f.data.clone(),
        impact: f
            .impact
            .clone()
            .unwrap_or_else(|| Impact::unknown("a kernel's note: no site of its own")),
        fingerprint,
    }
}
