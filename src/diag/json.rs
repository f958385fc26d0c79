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
    /// Whether [`Report::add`] lists each kernel's sites (`check --sites`,
    /// and what `--summary` counts); without, a kernel is its header.
    #[serde(skip)]
    pub with_sites: bool,
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
    /// What the analysis takes of each pointer parameter's address: `offset`
    /// modulo `align`, a `cudaMalloc` allocation (256-byte aligned) plus
    /// the offset the host's launches add; `align` 1 where nothing is
    /// assumed (`--no-malloc-alignment`, or a launch adds an offset it does
    /// not show).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pointer_params: Vec<PointerJson>,
    /// Every branch and access with its figures (`check --sites`): many
    /// times the findings' size, so listed only when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sites: Option<Vec<SiteJson>>,
    /// How many sites the kernel has, listed or not (the HTML card's
    /// count).
    #[serde(skip)]
    pub site_count: usize,
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

/// A pointer parameter's assumed address, by its source name (`argN`
/// without one).
#[derive(Serialize, Debug)]
pub struct PointerJson {
    pub param: String,
    pub align: u64,
    pub offset: u64,
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
    /// A request of an access the backend splits (a struct copy's
    /// pieces, `memory::lower`): where it sits among them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub piece: Option<PieceJson>,
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

/// One request of a split access: `index` of `count` pieces, `offset`
/// bytes into the access of `of_bytes` (`null`: a length known at run
/// time), which is a `copy`, a `fill` or one `value`; `repeat` the
/// requests one execution makes (a copy loop's bytes, `null` when the run
/// decides).
#[derive(Serialize, Debug)]
pub struct PieceJson {
    pub index: u32,
    pub count: u32,
    pub offset: i64,
    pub of_bytes: Option<u64>,
    pub whole: &'static str,
    pub repeat: Option<u64>,
}

fn piece_json(s: &Site) -> Option<PieceJson> {
    use crate::analysis::{Repeat, Whole};
    let of = s.piece?;
    Some(PieceJson {
        index: of.index,
        count: of.count,
        offset: s.offset,
        of_bytes: (s.repeat != Repeat::PerLane).then_some(of.bytes),
        whole: match of.whole {
            Whole::Copy => "copy",
            Whole::Fill => "fill",
            Whole::Value => "value",
        },
        repeat: s.requests(),
    })
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
            with_sites: true,
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
                .map(|(k, f)| kernel_json(a, k, f, self.with_sites)),
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

/// The document `check --format json` prints: the report, then the
/// summary (`--summary`). Fields in this order, as [`Stream`] writes them.
#[derive(Serialize)]
struct Document<'a> {
    tool: &'static str,
    version: &'static str,
    kernels: &'a [KernelJson],
    findings: &'a [FindingJson],
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a serde_json::Value>,
}

/// The whole document at once (what [`Stream`] must equal, byte for byte).
pub fn render(report: &Report, summary: Option<&serde_json::Value>) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&Document {
        tool: report.tool,
        version: report.version,
        kernels: &report.kernels,
        findings: &report.findings,
        summary,
    })
    .map(|text| compact(&text))
}

/// The widest line [`compact`] makes of a row.
const LINE: usize = 120;

/// Pretty JSON with each innermost array or object (of scalars only) on
/// one line where it fits [`LINE`] columns, and any array of short scalars
/// (a warp's outcomes, a block shape): a table of rows then reads as rows,
/// at a third of the size. The document's own object stays open. Works on
/// lines: in pretty JSON a line that ends in `[` or `{` opens a container
/// and one that starts with `]` or `}` closes it (strings never hold a raw
/// newline), so a piece of a document compacts as it would in place.
pub fn compact(pretty: &str) -> String {
    let mut lines: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    // The open containers: where each starts in `lines`, and whether it
    // holds scalars only so far.
    let mut open: Vec<(usize, bool)> = Vec::new();
    for line in pretty.split('\n') {
        let t = line.trim_start();
        if t.starts_with(']') || t.starts_with('}') {
            if let Some((start, true)) = open.pop() {
                if let Some(one) = one_line(&lines[start..], t) {
                    lines.truncate(start);
                    lines.push(one.into());
                    continue;
                }
            }
        } else if t.ends_with('[') || t.ends_with('{') {
            if let Some(parent) = open.last_mut() {
                parent.1 = false;
            }
            open.push((lines.len(), true));
        }
        lines.push(line.into());
    }
    lines.join("\n")
}

/// A container's lines (`lines[0]` opens it) and its closing line as one
/// line, where [`compact`] puts it so.
fn one_line(lines: &[std::borrow::Cow<'_, str>], close: &str) -> Option<String> {
    let opener = &lines[0];
    if !opener.starts_with(' ') {
        return None;
    }
    let items: Vec<&str> = lines[1..].iter().map(|l| l.trim_start()).collect();
    let one = format!("{opener}{}{close}", items.join(" "));
    let short = opener.ends_with('[') && items.iter().all(|i| i.chars().count() <= 17);
    (short || one.chars().count() <= LINE).then_some(one)
}

/// The same document written piece by piece, so that a module's kernels
/// leave memory as they are reported: [`Stream::kernel`] for each kernel
/// in order, then [`Stream::finish`] with the findings and the summary.
/// Each piece is pretty-printed alone and indented to its depth (a JSON
/// string never holds a raw newline, so every line break is layout).
pub struct Stream<W: std::io::Write> {
    out: W,
    kernels: usize,
}

/// A kernel's piece of a [`Stream`], rendered in the thread that
/// analysed it.
pub fn rendered_kernel(k: &KernelJson) -> std::io::Result<String> {
    nested(k, 2)
}

/// `value` pretty-printed as an element at `depth` of the document.
fn nested(value: &impl Serialize, depth: usize) -> std::io::Result<String> {
    let indent = "  ".repeat(depth);
    let text = serde_json::to_string_pretty(value)?;
    // Compacted in place: from its first line's indentation on.
    let placed = format!("{indent}{}", text.replace('\n', &format!("\n{indent}")));
    Ok(compact(&placed)[indent.len()..].to_string())
}

impl<W: std::io::Write> Stream<W> {
    /// Writes the document's head, up to the kernels' list.
    pub fn start(mut out: W) -> std::io::Result<Self> {
        write!(
            out,
            "{{\n  \"tool\": {},\n  \"version\": {},\n  \"kernels\": [",
            serde_json::to_string("warpcheck")?,
            serde_json::to_string(env!("CARGO_PKG_VERSION"))?
        )?;
        Ok(Stream { out, kernels: 0 })
    }

    /// Writes one kernel.
    pub fn kernel(&mut self, k: &KernelJson) -> std::io::Result<()> {
        let text = rendered_kernel(k)?;
        self.write_rendered(&text)
    }

    /// Writes a kernel that [`rendered_kernel`] rendered.
    pub fn write_rendered(&mut self, text: &str) -> std::io::Result<()> {
        let sep = if self.kernels == 0 { "" } else { "," };
        self.kernels += 1;
        write!(self.out, "{sep}\n    {text}")
    }

    /// Closes the kernels' list, writes the findings and the summary, and
    /// ends the document (with a newline, as `println!` would).
    pub fn finish(
        mut self,
        findings: &[FindingJson],
        summary: Option<&serde_json::Value>,
    ) -> std::io::Result<W> {
        let close = |n: usize| if n == 0 { "]" } else { "\n  ]" };
        write!(self.out, "{},\n  \"findings\": [", close(self.kernels))?;
        for (i, f) in findings.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(self.out, "{sep}\n    {}", nested(f, 2)?)?;
        }
        write!(self.out, "{}", close(findings.len()))?;
        if let Some(s) = summary {
            write!(self.out, ",\n  \"summary\": {}", nested(s, 1)?)?;
        }
        writeln!(self.out, "\n}}")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn position(a: &ModuleAnalysis<'_>, pos: Option<&crate::ir::SourcePos>) -> (String, u32, u32) {
    pos.map(|p| Position::resolve(a.module, p))
        .map(|p| (p.file, p.line, p.col))
        .unwrap_or_default()
}

fn kernel_json(
    a: &ModuleAnalysis<'_>,
    k: &KernelAnalysis,
    figures: &[SiteFigures],
    with_sites: bool,
) -> KernelJson {
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
        pointer_params: k
            .pointers
            .iter()
            .map(|p| PointerJson {
                param: func.params[p.param as usize]
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("arg{}", p.param)),
                align: p.align,
                offset: p.offset,
            })
            .collect(),
        // Rendering a site's ACF is the costly part: skipped unless listed.
        sites: with_sites.then(|| {
            k.sites
                .iter()
                .zip(figures)
                .map(|(s, f)| site_json(a, k, s, f))
                .collect()
        }),
        site_count: k.sites.len(),
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
        piece: piece_json(s),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str, sites: Option<usize>) -> KernelJson {
        let site = |i: usize| SiteJson {
            kind: "branch",
            file: "k.cu".into(),
            line: 3 + i as u32,
            column: 7,
            function: name.into(),
            space: None,
            bytes: None,
            piece: None,
            space_assumed: false,
            thread_dependent: i.is_multiple_of(2),
            // Quotes, a backslash and a newline: escaped, never layout.
            why: vec!["threadIdx.x → \"%i\"\\\n".into()],
            warp_uniform: Some(false),
            acf: Some("4·tid.x".into()),
            figures: SiteFigures::default(),
        };
        KernelJson {
            name: format!("{name}(int*)"),
            mangled: format!("_Z{}{name}Pi", name.len()),
            file: "k.cu".into(),
            line: 1,
            block_dim: [256, 1, 1],
            block_dim_source: ShapeSource::Launch {
                kind: "launch",
                file: "k.cu".into(),
                line: 9,
            },
            launches: vec![LaunchJson {
                file: "k.cu".into(),
                line: 9,
                block: Some([256, 1, 1]),
                grid: None,
                shared_bytes: None,
            }],
            pointer_params: Vec::new(),
            sites: sites.map(|n| (0..n).map(site).collect()),
            site_count: sites.unwrap_or(3),
            bounds: None,
        }
    }

    fn finding(line: u32) -> FindingJson {
        FindingJson {
            check: "divergent-branch".into(),
            severity: "warning",
            file: "k.cu".into(),
            line,
            column: 7,
            kernel: "k(int*)".into(),
            function: "k(int*)".into(),
            message: "branch splits warps".into(),
            notes: vec!["note: a".into()],
            data: Some(serde_json::json!({"class": "total", "by_warp": ["split", "uniform"]})),
            impact: Impact::unknown("none"),
            fingerprint: format!("abc:{line}"),
        }
    }

    /// Writes `report` through [`Stream`] and through [`render`].
    fn both(report: &Report, summary: Option<&serde_json::Value>) -> (String, String) {
        let mut s = Stream::start(Vec::new()).unwrap();
        for k in &report.kernels {
            s.kernel(k).unwrap();
        }
        let streamed = s.finish(&report.findings, summary).unwrap();
        let whole = render(report, summary).unwrap() + "\n";
        (String::from_utf8(streamed).unwrap(), whole)
    }

    #[test]
    fn the_stream_writes_the_document_byte_for_byte() {
        let summary = serde_json::json!({"total": {"branches": {"none": 2}}, "costliest": []});
        let shapes: [(Vec<Option<usize>>, usize, bool); 5] = [
            (vec![], 0, false),
            (vec![None], 0, true),
            (vec![Some(0), Some(2)], 1, false),
            (vec![None, None, None], 3, true),
            (vec![Some(3), None], 2, true),
        ];
        for (kernels, findings, with_summary) in shapes {
            let mut r = Report::new();
            r.kernels = kernels
                .iter()
                .enumerate()
                .map(|(i, n)| kernel(&format!("k{i}"), *n))
                .collect();
            r.findings = (0..findings as u32).map(finding).collect();
            let (streamed, whole) = both(&r, with_summary.then_some(&summary));
            assert_eq!(streamed, whole);
            // And it is the JSON of the report.
            let v: serde_json::Value = serde_json::from_str(&streamed).unwrap();
            assert_eq!(v["kernels"].as_array().unwrap().len(), kernels.len());
            assert_eq!(v["findings"].as_array().unwrap().len(), findings);
            assert_eq!(v.get("summary").is_some(), with_summary);
        }
    }

    #[test]
    fn sites_are_listed_only_when_asked_for() {
        let v = serde_json::to_value(kernel("k", None)).unwrap();
        assert!(v.get("sites").is_none(), "{v}");
        let v = serde_json::to_value(kernel("k", Some(0))).unwrap();
        assert_eq!(v["sites"], serde_json::json!([]));
    }
}

#[cfg(test)]
mod compact_tests {
    use super::compact;

    #[test]
    fn innermost_containers_go_on_one_line_where_they_fit() {
        let v = serde_json::json!({
            "row": {"class": "none", "max": 1},
            "shape": [256, 1, 1],
            "nested": {"inner": [1, 2], "n": 3},
            "empty": [],
            "long": ["a string longer than seventeen characters", "and another one, long enough that the two pass the line's 120 columns"],
        });
        let text = compact(&serde_json::to_string_pretty(&v).unwrap());
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
        // serde_json orders a Value's keys.
        let want = r#"{
  "empty": [],
  "long": [
    "a string longer than seventeen characters",
    "and another one, long enough that the two pass the line's 120 columns"
  ],
  "nested": {
    "inner": [1, 2],
    "n": 3
  },
  "row": {"class": "none", "max": 1},
  "shape": [256, 1, 1]
}"#;
        assert_eq!(text, want);
    }

    #[test]
    fn the_document_itself_stays_open() {
        let v = serde_json::json!({"tool": "warpcheck", "kernels": []});
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        assert_eq!(compact(&pretty), pretty);
    }
}
