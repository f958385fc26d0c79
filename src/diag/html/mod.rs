//! `warpcheck report`: one self-contained HTML page. Per kernel: its
//! findings with source excerpts, every site with its class and figures,
//! the cost bounds, and a chart of each bound against the simulator over a
//! parameter sweep. Inline CSS and SVG only: the page opens offline, from
//! a CI artifact or an email.

pub mod plot;

use super::json::{KernelJson, SiteJson};
use super::text::SourceCache;
use crate::finding::{Finding, Severity};
use crate::ir::Position;
use std::fmt::Write;

/// One metric over a sweep: the static per-warp bound and the largest
/// simulated per-warp figure at each x.
pub struct MetricSweep {
    pub metric: &'static str,
    pub bound: Vec<Option<f64>>,
    pub simulated: Vec<Option<f64>>,
}

/// A kernel's sweep: which parameters took the x values, and per metric
/// the two series.
pub struct KernelSweep {
    pub param: String,
    pub xs: Vec<f64>,
    pub metrics: Vec<MetricSweep>,
    /// What went wrong at single points (a fault, a budget), for the page.
    pub notes: Vec<String>,
}

/// One analysed file.
pub struct FileResult {
    pub name: String,
    pub kernels: Vec<KernelJson>,
    pub findings: Vec<Finding>,
    /// Parallel to `kernels`: why there is no chart, or the sweep.
    pub sweeps: Vec<Result<KernelSweep, String>>,
}

/// What the page shows.
pub struct Page<'a> {
    pub title: &'a str,
    pub files: &'a [FileResult],
    /// Files that could not be analysed, with why.
    pub errors: &'a [String],
}

/// `s` with HTML's special characters escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1c1c1c;background:#f4f5f7}
header{background:#1f2d3d;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px}
main{padding:16px 24px;max-width:1200px}
section.overview{background:#fff;border:1px solid #d8dce2;border-radius:6px;margin:16px 0;padding:12px 16px}
section.kernel{background:#fff;border:1px solid #d8dce2;border-radius:6px;margin:16px 0;padding:12px 16px}
h2{font-size:17px;margin:6px 0}
summary{cursor:pointer}
summary h2{display:inline}
details.file{margin:12px 0}
details.file>summary{font-size:15px;padding:6px 0}
h3{font-size:15px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #e1e4e8;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f2f5}
code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#f7f7f9;border:1px solid #e1e4e8;padding:6px;margin:4px 0;overflow-x:auto}
.hl{background:#fff3c4;display:block}
.warning{color:#b35900;font-weight:600}
.error{color:#c0392b;font-weight:600}
.note{color:#555;font-weight:600}
.bad{background:#fdecea}
.within{background:#eaf7ee}
.over{background:#f5b7b1;font-weight:600}
.plots{display:flex;flex-wrap:wrap;gap:10px}
.plot{border:1px solid #e1e4e8;background:#fff}
.plot .pt{font:600 13px system-ui,sans-serif;text-anchor:middle}
.plot .xt,.plot .yt{font:11px system-ui,sans-serif;fill:#555;text-anchor:middle}
.plot .yt{text-anchor:end}
.plot .grid{stroke:#e0e0e0;fill:none}
.plot .ax{stroke:#444;fill:none}
.plot .dot{stroke-width:9;stroke-linecap:round;fill:none}
.plot .axis{text-anchor:middle}
.axis,.legend{font:12px system-ui,sans-serif}
.summary td{border:none;padding:2px 12px 2px 0}
.muted{color:#666}
section.alarm{background:#fdecea;border:2px solid #c0392b;border-radius:6px;margin:16px 0;padding:12px 16px}
section.alarm h2{color:#c0392b}
.verdict{font-weight:600;padding:0 5px;border-radius:3px;white-space:nowrap}
.verdict.contradicted{background:#c0392b;color:#fff}
.verdict.measured{background:#d6eaf8;color:#1a4f72}
.verdict.confirmed{color:#1e7a44}
tr.contradicted{background:#f5b7b1}
tr.measured{background:#eef6fc}
";

/// The page.
pub fn render(p: &Page) -> String {
    let mut s = String::new();
    let kernels: usize = p.files.iter().map(|f| f.kernels.len()).sum();
    let count = |sev: Severity| -> usize {
        p.files
            .iter()
            .flat_map(|f| &f.findings)
            .filter(|f| f.severity == sev)
            .count()
    };
    let cells = [
        format!("{} files", p.files.len()),
        format!("{kernels} kernels"),
        format!("{} warnings", count(Severity::Warning)),
        format!("{} errors", count(Severity::Error)),
        format!("{} notes", count(Severity::Note)),
    ];
    open(&mut s, p.title, &cells);
    for e in p.errors {
        let _ = write!(s, "<p class=\"error\">{}</p>", escape(e));
    }
    let mut cache = SourceCache::default();
    overview(&mut s, p);
    for f in p.files.iter().filter(|f| f.kernels.is_empty()) {
        let _ = write!(s, "<p class=\"muted\">{}: no kernels</p>", escape(&f.name));
    }
    // Files, worst first, each collapsible; on a large page a file or
    // kernel with only notes starts closed, so it opens on what needs work.
    let fold = kernels > FOLD_QUIET_ABOVE;
    for (fi, cards) in files_in_order(p) {
        let f = &p.files[fi];
        let count = |sev: Severity| f.findings.iter().filter(|x| x.severity == sev).count();
        let (e, w, n) = (
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Note),
        );
        let _ = write!(
            s,
            "<details class=\"file\"{}><summary><code>{}</code> · {} kernel{} · {e} errors · {w} warnings · {n} notes</summary>",
            if e + w > 0 || !fold { " open" } else { "" },
            escape(&f.name),
            cards.len(),
            if cards.len() == 1 { "" } else { "s" },
        );
        for ki in cards {
            kernel(&mut s, f, (fi, ki), &f.sweeps[ki], (&mut cache, fold));
        }
        s.push_str("</details>");
    }
    close(&mut s);
    s
}

/// Starts a page: the document's head with the style, and a header with
/// the title and a row of summary cells (plain text, escaped here) ending
/// with warpcheck's version; opens `<main>` for [`close`].
pub fn open(s: &mut String, title: &str, cells: &[String]) {
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0}</title><style>{STYLE}</style></head><body><header><h1>{0}</h1><table class=\"summary\"><tr>",
        escape(title)
    );
    for c in cells {
        let _ = write!(s, "<td>{}</td>", escape(c));
    }
    let _ = write!(
        s,
        "<td>warpcheck {}</td></tr></table></header><main>",
        env!("CARGO_PKG_VERSION")
    );
}

/// Ends a page [`open`] started.
pub fn close(s: &mut String) {
    s.push_str("</main></body></html>\n");
}

/// `pos`'s line with two lines either side, numbered, the line itself
/// highlighted; nothing when the source cannot be read.
pub fn excerpt(s: &mut String, cache: &mut SourceCache, pos: &Position) {
    let lines = cache.excerpt(pos, 2);
    if lines.is_empty() {
        return;
    }
    s.push_str("<pre>");
    for (n, text) in lines {
        let row = format!("{n:>5} | {}", escape(&text));
        if n == pos.line {
            let _ = write!(s, "<span class=\"hl\">{row}</span>");
        } else {
            let _ = writeln!(s, "{row}");
        }
    }
    s.push_str("</pre>");
}

/// Pages with more kernels than this start with their notes-only files and
/// kernels folded; smaller ones show everything.
pub const FOLD_QUIET_ABOVE: usize = 20;

/// Worst first: errors, then warnings, then notes.
fn badness(sev: Severity) -> u8 {
    match sev {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Note => 2,
    }
}

/// The anchor of a kernel's card.
fn card_id((file, kernel): (usize, usize)) -> String {
    format!("k{file}-{kernel}")
}

/// The card a finding belongs on: its file's kernel of that name.
fn card_of(f: &FileResult, fi: usize, finding: &Finding) -> Option<(usize, usize)> {
    let ki = f.kernels.iter().position(|k| k.name == finding.kernel)?;
    Some((fi, ki))
}

/// The share of its kernel's time a finding is estimated to cost, -1
/// when there is no estimate: the order findings are worth fixing in.
fn share(x: &Finding) -> f64 {
    x.impact.as_ref().and_then(|i| i.share).unwrap_or(-1.0)
}

/// The kernel cards in the order of their worst finding: by severity, then
/// by the share of the kernel's time it costs, then by how many warnings
/// the kernel has, otherwise in file order: a kernel with only notes never
/// opens the page.
fn cards_in_order(p: &Page) -> Vec<(usize, usize)> {
    /// Worst severity, its largest share, warnings; the card.
    type Ranked = ((u8, f64, usize), (usize, usize));
    let mut cards: Vec<Ranked> = Vec::new();
    for (fi, f) in p.files.iter().enumerate() {
        for (ki, k) in f.kernels.iter().enumerate() {
            let mine = f.findings.iter().filter(|x| x.kernel == k.name);
            let worst = mine.clone().map(|x| badness(x.severity)).min().unwrap_or(3);
            let top = mine
                .clone()
                .filter(|x| badness(x.severity) == worst)
                .map(share)
                .fold(-1.0, f64::max);
            let serious = mine.filter(|x| x.severity != Severity::Note).count();
            cards.push(((worst, top, serious), (fi, ki)));
        }
    }
    // Stable: equal keys keep the file order.
    cards.sort_by(|a, b| {
        let ((wa, sa, na), (wb, sb, nb)) = (a.0, b.0);
        wa.cmp(&wb).then(sb.total_cmp(&sa)).then(nb.cmp(&na))
    });
    cards.into_iter().map(|c| c.1).collect()
}

/// The files with kernels, each with its cards, in the order of their
/// first card in [`cards_in_order`]: the file of the worst kernel first.
fn files_in_order(p: &Page) -> Vec<(usize, Vec<usize>)> {
    let mut files: Vec<(usize, Vec<usize>)> = Vec::new();
    for (fi, ki) in cards_in_order(p) {
        match files.iter_mut().find(|(f, _)| *f == fi) {
            Some((_, cards)) => cards.push(ki),
            None => files.push((fi, vec![ki])),
        }
    }
    files
}

/// The first section: every error and warning of the project, worst
/// first (by severity, then by the share of its kernel's time, then in
/// file and line order), each linking to its kernel's card; the notes are
/// counted and left to the cards.
fn overview(s: &mut String, p: &Page) {
    let mut list: Vec<(usize, &Finding)> = p
        .files
        .iter()
        .enumerate()
        .flat_map(|(fi, f)| f.findings.iter().map(move |x| (fi, x)))
        .filter(|(_, x)| x.severity != Severity::Note)
        .collect();
    let place = |(fi, x): &(usize, &Finding)| (*fi, x.pos.as_ref().map(|p| (p.line, p.col)));
    list.sort_by(|a, b| {
        badness(a.1.severity)
            .cmp(&badness(b.1.severity))
            .then(share(b.1).total_cmp(&share(a.1)))
            .then(place(a).cmp(&place(b)))
    });
    let notes = p
        .files
        .iter()
        .flat_map(|f| &f.findings)
        .filter(|x| x.severity == Severity::Note)
        .count();
    let _ = write!(
        s,
        "<section class=\"overview\"><h2>Findings, worst first</h2>"
    );
    if list.is_empty() {
        s.push_str("<p class=\"muted\">No errors or warnings.</p>");
    } else {
        s.push_str("<table class=\"ranked\"><tr><th>#</th><th>severity</th><th>where</th><th>kernel</th><th>what</th><th>check</th></tr>");
        for (n, (fi, x)) in list.iter().enumerate() {
            let at = x
                .pos
                .as_ref()
                .map(|p| format!("{}:{}:{}", p.file, p.line, p.col))
                .unwrap_or_else(|| x.function.clone());
            let kernel = match card_of(&p.files[*fi], *fi, x) {
                Some(id) => format!(
                    "<a href=\"#{}\"><code>{}</code></a>",
                    card_id(id),
                    escape(&x.kernel)
                ),
                None => format!("<code>{}</code>", escape(&x.kernel)),
            };
            let _ = write!(
                s,
                "<tr><td>{}</td><td><span class=\"{sev}\">{sev}</span></td><td><code>{}</code></td><td>{kernel}</td><td>{}</td><td><code class=\"muted\">{}</code></td></tr>",
                n + 1,
                escape(&at),
                escape(&x.message),
                escape(&x.tag()),
                sev = x.severity.name()
            );
        }
        s.push_str("</table>");
    }
    if notes > 0 {
        let _ = write!(
            s,
            "<p class=\"muted\">and {notes} note{}, shown with their kernels below.</p>",
            if notes == 1 { "" } else { "s" }
        );
    }
    s.push_str("</section>");
}

fn kernel(
    s: &mut String,
    f: &FileResult,
    card: (usize, usize),
    sweep: &Result<KernelSweep, String>,
    (cache, fold): (&mut SourceCache, bool),
) {
    let k = &f.kernels[card.1];
    let [x, y, z] = k.block_dim;
    let mine: Vec<&Finding> = f.findings.iter().filter(|x| x.kernel == k.name).collect();
    // A card with warnings or errors starts open; with notes only, closed
    // when the page folds them.
    let open = !fold || mine.iter().any(|x| x.severity != Severity::Note);
    let _ = write!(
        s,
        "<section class=\"kernel\" id=\"{}\"><details{}><summary><h2><code>{}</code></h2> <span class=\"muted\">{}:{} · block {x}×{y}×{z} ({}) · {} sites</span></summary>",
        card_id(card),
        if open { " open" } else { "" },
        escape(&k.name),
        escape(&k.file),
        k.line,
        k.block_dim_source,
        k.site_count
    );
    findings(s, &mine, cache);
    // The table of every site only with `report --sites`: it is many times
    // the findings' size.
    if let Some(list) = &k.sites {
        sites(s, list);
    }
    bounds(s, k);
    match sweep {
        Ok(sw) => charts(s, sw),
        Err(why) => {
            let _ = write!(
                s,
                "<h3>Bound vs simulated</h3><p class=\"muted\">{}</p>",
                escape(why)
            );
        }
    }
    s.push_str("</details></section>");
}

fn findings(s: &mut String, list: &[&Finding], cache: &mut SourceCache) {
    let _ = write!(s, "<h3>Findings ({})</h3>", list.len());
    if list.is_empty() {
        s.push_str("<p class=\"muted\">none</p>");
    }
    for f in list {
        let at = f
            .pos
            .as_ref()
            .map(|p| format!("{}:{}:{}", p.file, p.line, p.col))
            .unwrap_or_else(|| f.function.clone());
        let _ = write!(
            s,
            "<div><span class=\"{sev}\">{sev}</span> <code>{}</code> {} <code class=\"muted\">[{}]</code></div>",
            escape(&at),
            escape(&f.message),
            escape(&f.tag()),
            sev = f.severity.name()
        );
        if let Some(p) = &f.pos {
            excerpt(s, cache, p);
        }
        for n in &f.notes {
            let _ = write!(s, "<div class=\"muted\">note: {}</div>", escape(n));
        }
    }
}

/// A site's class and figures in a few words, from its JSON figures.
fn figures(site: &SiteJson) -> (String, String) {
    let v = serde_json::to_value(&site.figures).unwrap_or_default();
    let range = |o: &serde_json::Value, lo: &str, hi: &str| match (o.get(lo), o.get(hi)) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "?".into(),
    };
    for (key, what) in [
        ("divergence", "diverging warps"),
        ("sectors", "sectors per request"),
        ("conflict", "wavefronts"),
    ] {
        let Some(o) = v.get(key) else { continue };
        let class = o.get("class").and_then(|c| c.as_str()).unwrap_or("?");
        let fig = match key {
            "divergence" => format!(
                "{} of {} {what}",
                range(o, "split_min", "split_max"),
                o.get("warps").map(|w| w.to_string()).unwrap_or_default()
            ),
            "conflict" => format!(
                "{} {what} (ideal {})",
                range(o, "min", "max"),
                o.get("ideal_wavefronts")
                    .map(|w| w.to_string())
                    .unwrap_or_default()
            ),
            _ => format!(
                "{} {what} (ideal {})",
                range(o, "min", "max"),
                o.get("ideal").map(|w| w.to_string()).unwrap_or_default()
            ),
        };
        return (class.to_string(), fig);
    }
    let reason = v.get("reason").and_then(|r| r.as_str()).unwrap_or("");
    (String::from("—"), reason.to_string())
}

fn sites(s: &mut String, list: &[SiteJson]) {
    let _ = write!(s, "<h3>Sites ({})</h3>", list.len());
    if list.is_empty() {
        return;
    }
    s.push_str("<table><tr><th>line</th><th>kind</th><th>space</th><th>thread-dependent</th><th>class</th><th>figures</th><th>per lane</th></tr>");
    for site in list {
        let (class, fig) = figures(site);
        let bad = matches!(
            class.as_str(),
            "total" | "partial" | "uncoalesced" | "conflict"
        );
        let _ = write!(
            s,
            "<tr{}><td>{}:{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
            if bad { " class=\"bad\"" } else { "" },
            site.line,
            site.column,
            site.kind,
            site.space.unwrap_or(""),
            if site.thread_dependent { "yes" } else { "no" },
            escape(&class),
            escape(&fig),
            escape(site.acf.as_deref().unwrap_or(""))
        );
    }
    s.push_str("</table>");
}

fn bounds(s: &mut String, k: &KernelJson) {
    s.push_str("<h3>Cost bounds per warp</h3>");
    let Some(b) = &k.bounds else {
        s.push_str("<p class=\"muted\">not computed</p>");
        return;
    };
    s.push_str("<table><tr><th>metric</th><th>bound</th><th>largest loop shares</th></tr>");
    for (metric, mb) in &b.per_warp {
        let loops: Vec<String> = mb
            .loops
            .iter()
            .map(|l| format!("line {}: {}", l.line, l.bound))
            .collect();
        let bound = match &mb.reason {
            Some(r) => format!("no bound ({r})"),
            None => mb.bound.clone(),
        };
        let _ = write!(
            s,
            "<tr><td>{metric}</td><td><code>{}</code></td><td>{}</td></tr>",
            escape(&bound),
            escape(&loops.join("; "))
        );
    }
    let _ = write!(
        s,
        "</table><div class=\"muted\">{} warps per block; LP {} variables, {} rows, {:.3} s</div>",
        b.warps_per_block, b.lp_variables, b.lp_rows, b.seconds
    );
}

/// What a cost metric's number counts, in its chart's title.
fn metric_unit(metric: &str) -> &'static str {
    match metric {
        "sectors" => "32-byte sectors",
        "conflicts" => "extra shared-memory wavefronts",
        "divwarps" => "divergent branches",
        "steps" => "warp instructions",
        _ => "count",
    }
}

/// One line under the charts saying what a metric means.
fn metric_meaning(metric: &str) -> &'static str {
    match metric {
        "sectors" => "32-byte global-memory sectors one warp's loads and stores touch over the whole kernel; fewer is better, the ideal is one sector per 32 bytes used.",
        "conflicts" => "shared-memory wavefronts beyond the first, summed over one warp's accesses: the serialisation bank conflicts cost.",
        "divwarps" => "conditional branches one warp executes with its active lanes split between both sides.",
        "steps" => "instructions one warp issues, counting each divergent path separately.",
        _ => "a per-warp cost.",
    }
}

fn charts(s: &mut String, sw: &KernelSweep) {
    let _ = write!(
        s,
        "<h3>Bound vs simulated, sweeping {}</h3><div class=\"plots\">",
        escape(&sw.param)
    );
    // A metric whose bound is zero everywhere has nothing to draw: the
    // table below still shows it.
    let drawn = sw
        .metrics
        .iter()
        .filter(|m| m.bound.iter().any(|b| b.is_none_or(|b| b > 0.0)));
    let mut legends = Vec::new();
    for m in drawn {
        legends.push(format!(
            "<div class=\"muted\"><b>{}</b>: {}</div>",
            escape(m.metric),
            escape(metric_meaning(m.metric))
        ));
        let title = format!("{} per warp ({})", m.metric, metric_unit(m.metric));
        let mut series = vec![plot::Series {
            label: "static bound",
            color: "#c0392b",
            line: true,
            values: m.bound.clone(),
        }];
        // A series with no point would be an empty legend entry: the
        // reason is said once, under the charts.
        if m.simulated.iter().any(Option::is_some) {
            series.push(plot::Series {
                label: "simulated (largest warp)",
                color: "#2471a3",
                line: false,
                values: m.simulated.clone(),
            });
        }
        let chart = plot::Chart {
            title: &title,
            x_label: &sw.param,
            xs: &sw.xs,
            series,
        };
        s.push_str(&plot::svg(&chart));
    }
    s.push_str("</div>");
    // One line per metric drawn: what it counts.
    for l in legends {
        s.push_str(&l);
    }
    // The numbers behind the charts, and any point the bound misses.
    s.push_str("<table><tr><th>");
    s.push_str(&escape(&sw.param));
    s.push_str("</th>");
    for m in &sw.metrics {
        let _ = write!(s, "<th>{0} bound</th><th>{0} simulated</th>", m.metric);
    }
    s.push_str("</tr>");
    let num = |v: Option<f64>| v.map_or("—".to_string(), plot_label);
    for (i, x) in sw.xs.iter().enumerate() {
        let _ = write!(s, "<tr><td>{x}</td>");
        for m in &sw.metrics {
            let (b, v) = (m.bound[i], m.simulated[i]);
            let class = match (b, v) {
                (Some(b), Some(v)) if v > b + 1e-9 => " class=\"over\"",
                (Some(_), Some(_)) => " class=\"within\"",
                _ => "",
            };
            let _ = write!(s, "<td>{}</td><td{class}>{}</td>", num(b), num(v));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    for n in &sw.notes {
        let _ = write!(s, "<div class=\"muted\">{}</div>", escape(n));
    }
}

fn plot_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("a<b && c>\"d\""),
            "a&lt;b &amp;&amp; c&gt;&quot;d&quot;"
        );
    }

    #[test]
    fn empty_page_is_a_whole_document() {
        let p = Page {
            title: "t <1>",
            files: &[],
            errors: &["x.cu: missing".to_string()],
        };
        let h = render(&p);
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.trim_end().ends_with("</html>"));
        assert!(h.contains("t &lt;1&gt;"));
        assert!(h.contains("x.cu: missing"));
        // Self-contained: nothing fetched from anywhere.
        assert!(!h.contains("src=") && !h.contains("href="));
    }

    fn kernel(name: &str) -> KernelJson {
        KernelJson {
            name: name.into(),
            mangled: name.into(),
            file: "k.cu".into(),
            line: 1,
            block_dim: [256, 1, 1],
            block_dim_source: crate::diag::json::ShapeSource::Named("default"),
            launches: Vec::new(),
            pointer_params: Vec::new(),
            sites: None,
            site_count: 0,
            bounds: None,
        }
    }

    fn finding(kernel: &str, severity: Severity, line: u32) -> Finding {
        Finding {
            check: "divergent-branch",
            severity,
            func: crate::ir::FuncId::new(0),
            inst: None,
            pos: Some(crate::ir::Position {
                file: "k.cu".into(),
                path: "/nonexistent/k.cu".into(),
                line,
                col: 7,
            }),
            kernel: kernel.into(),
            function: kernel.into(),
            message: format!("m{line}"),
            notes: Vec::new(),
            data: None,
            impact: None,
        }
    }

    #[test]
    fn the_page_opens_with_the_ranked_list_and_the_worst_kernel() {
        // `quiet` has only a note; `loud` a warning (line 9) and an error
        // (line 20); `mid` one warning (line 3).
        let files = [FileResult {
            name: "k.cu".into(),
            kernels: vec![kernel("quiet"), kernel("loud"), kernel("mid")],
            findings: vec![
                finding("quiet", Severity::Note, 2),
                finding("mid", Severity::Warning, 3),
                finding("loud", Severity::Warning, 9),
                finding("loud", Severity::Error, 20),
            ],
            sweeps: (0..3).map(|_| Err("no sweep".to_string())).collect(),
        }];
        let h = render(&Page {
            title: "t",
            files: &files,
            errors: &[],
        });
        let at = |needle: &str| h.find(needle).unwrap_or_else(|| panic!("{needle}"));
        // The ranked list comes before any card: the error, then the
        // warnings by line; the note is only counted.
        let list = at("Findings, worst first");
        assert!(list < at("<section class=\"kernel\""));
        assert!(at("k.cu:20:7") < at("k.cu:3:7") && at("k.cu:3:7") < at("k.cu:9:7"));
        assert!(h.contains("and 1 note, shown with their kernels below."));
        // Each row links to its kernel's card, and the cards go loud
        // (an error), mid (a warning), quiet (a note only).
        assert!(h.contains("<a href=\"#k0-1\"><code>loud</code></a>"));
        assert!(at("id=\"k0-1\"") < at("id=\"k0-2\"") && at("id=\"k0-2\"") < at("id=\"k0-0\""));
    }

    #[test]
    fn a_large_page_folds_what_has_only_notes() {
        // `k0` has a warning; the others only a note each.
        let page = |n: usize| {
            let files = [FileResult {
                name: "k.cu".into(),
                kernels: (0..n).map(|i| kernel(&format!("k{i}"))).collect(),
                findings: (0..n)
                    .map(|i| {
                        let sev = if i == 0 {
                            Severity::Warning
                        } else {
                            Severity::Note
                        };
                        finding(&format!("k{i}"), sev, i as u32 + 1)
                    })
                    .collect(),
                sweeps: (0..n).map(|_| Err("no sweep".to_string())).collect(),
            }];
            render(&Page {
                title: "t",
                files: &files,
                errors: &[],
            })
        };
        // 20 kernels: every card open.
        let small = page(FOLD_QUIET_ABOVE);
        assert_eq!(small.matches("<details open>").count(), FOLD_QUIET_ABOVE);
        // 21: only the one with a warning (and its file) open.
        let large = page(FOLD_QUIET_ABOVE + 1);
        assert_eq!(large.matches("<details open>").count(), 1);
        assert_eq!(large.matches("<details>").count(), FOLD_QUIET_ABOVE);
        assert!(large.contains("<details class=\"file\" open>"));
        assert!(large.find("<details open>") < large.find("<details>"));
    }

    #[test]
    fn a_sweep_never_simulated_has_no_empty_series() {
        let sw = KernelSweep {
            param: "n".into(),
            xs: vec![32.0, 64.0, 128.0],
            metrics: vec![MetricSweep {
                metric: "steps",
                bound: vec![Some(10.0), Some(20.0), Some(40.0)],
                simulated: vec![None, None, None],
            }],
            notes: vec!["not simulated at every point: fault".into()],
        };
        let mut s = String::new();
        charts(&mut s, &sw);
        assert!(!s.contains("simulated (largest warp)"), "{s}");
        assert_eq!(s.matches("not simulated").count(), 1, "{s}");
        // The title has the unit, the axis its scale, and a line says
        // what the metric counts.
        assert!(s.contains("steps per warp (warp instructions)"), "{s}");
        assert!(s.contains("n (log₂ scale)"), "{s}");
        assert!(
            s.contains("<b>steps</b>: instructions one warp issues"),
            "{s}"
        );
    }
}
