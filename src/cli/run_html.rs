//! `warpcheck run --format html` and `warpcheck report --run`: a run's
//! report (its JSON form, with `check`'s claims) as one self-contained
//! page, in the order a developer acts on it. First what must not be:
//! contradictions of `check`'s claims (each a bug in warpcheck's
//! analysis), then the faults and sanitizer findings (bugs in the
//! program). Then what `check` left open and this run measured, and each
//! kernel at each block shape with its launches, counters and sites, the
//! kernels with a contradiction first, then those that took the most
//! simulated time. The skeleton, style, escaping and source excerpts are
//! `report`'s page's ([`crate::diag::html`]).

use crate::diag::html::{self, escape};
use crate::diag::text::SourceCache;
use crate::ir::Position;
use serde_json::Value;
use std::fmt::Write;

/// The page of run report `r`, titled `title` or after the command.
pub fn render(r: &Value, title: Option<&str>) -> String {
    let kernels = list(&r["kernels"]);
    let errors = list(&r["errors"]);
    let command = command(&r["program"]["command"]);
    let title = match (title, &command) {
        (Some(t), _) => t.to_string(),
        (None, Some(c)) => format!("warpcheck run {c}"),
        (None, None) => "warpcheck run".to_string(),
    };
    let mut s = String::new();
    html::open(&mut s, &title, &cells(r, kernels, errors));
    if let Some(c) = &command {
        let _ = write!(
            s,
            "<p><code>warpcheck run {}</code> {}</p>",
            escape(c),
            escape(&ended(&r["program"]))
        );
    }
    if let Some(f) = r["fatal"].as_str() {
        let _ = write!(
            s,
            "<p class=\"error\">warpcheck stopped the run: {}</p>",
            escape(f)
        );
    }
    let mut cache = SourceCache::default();
    let ran = sites_that_ran(kernels);
    contradictions(&mut s, &ran, &mut cache);
    faults(&mut s, errors, kernels, &mut cache);
    left_open(&mut s, &r["agreement"], &ran);
    let fold = kernels.len() > html::FOLD_QUIET_ABOVE;
    let total_us = r["simulated_us"].as_f64().unwrap_or(0.0);
    for card in cards_in_order(kernels, &ran) {
        kernel(
            &mut s,
            (card, &kernels[card]),
            &ran,
            total_us,
            fold,
            &mut cache,
        );
    }
    html::close(&mut s);
    s
}

/// `v`'s elements, none if it is not an array.
fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// `n` and the noun, plural unless one (`launch` takes `es`).
fn plural(n: u64, one: &str) -> String {
    let many = if one.ends_with("ch") { "es" } else { "s" };
    format!("{n} {one}{}", if n == 1 { "" } else { many })
}

/// The words after `warpcheck run`'s options, as a shell line.
fn command(words: &Value) -> Option<String> {
    let words: Vec<String> = list(words)
        .iter()
        .filter_map(Value::as_str)
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// How the program ended, from the report's `program`.
fn ended(p: &Value) -> String {
    match (p["signal"].as_u64(), p["exit_code"].as_i64()) {
        (Some(sig), _) => format!("was ended by signal {sig}"),
        (None, Some(code)) => format!("exited with {code}"),
        (None, None) => "(its exit was not recorded)".into(),
    }
}

/// The header's summary.
fn cells(r: &Value, kernels: &[Value], errors: &[Value]) -> Vec<String> {
    let mut names: Vec<&str> = kernels
        .iter()
        .filter_map(|k| k["kernel"].as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut cells = Vec::new();
    if r["program"].is_object() {
        cells.push(format!("program {}", ended(&r["program"])));
    }
    let mut launched = format!("{} launched", plural(names.len() as u64, "kernel"));
    if kernels.len() != names.len() {
        let _ = write!(
            launched,
            " at {}",
            plural(kernels.len() as u64, "block shape")
        );
    }
    cells.push(launched);
    cells.push(format!(
        "{:.3} ms simulated",
        r["simulated_us"].as_f64().unwrap_or(0.0) / 1000.0
    ));
    cells.push(plural(errors.len() as u64, "error"));
    let a = &r["agreement"];
    if a["sites"].is_u64() {
        cells.push(format!("{} confirmed", count(&a["confirmed"])));
        cells.push(format!("{} measured", count(&a["measured"])));
        cells.push(format!("{} contradicted", count(&a["contradicted"])));
    }
    cells
}

/// A site that ran, on the card of kernel entry `card`.
struct Ran<'a> {
    card: usize,
    kernel: &'a Value,
    site: &'a Value,
}

impl Ran<'_> {
    fn verdict(&self) -> &str {
        self.site["static"]["verdict"].as_str().unwrap_or("")
    }
}

/// Every site that ran, kernel by kernel, each kernel's in source order.
fn sites_that_ran(kernels: &[Value]) -> Vec<Ran<'_>> {
    let mut ran = Vec::new();
    for (card, k) in kernels.iter().enumerate() {
        for site in list(&k["sites"]) {
            if count(&site["executions"]) > 0 {
                ran.push(Ran {
                    card,
                    kernel: k,
                    site,
                });
            }
        }
    }
    ran
}

/// The share of a site's work this run lost: of a branch's warp
/// executions, those that split the warp; of a global access's sectors,
/// those beyond the ideal; of a shared access's wavefronts at its worst
/// conflict, those beyond the first. Zero where nothing was lost.
fn waste(site: &Value) -> f64 {
    let n = |v: &Value| v.as_u64().unwrap_or(0) as f64;
    let execs = n(&site["executions"]);
    if site["kind"] == "branch" {
        return if execs > 0.0 {
            n(&site["divergent"]) / execs
        } else {
            0.0
        };
    }
    let (total, ideal) = (n(&site["sectors"]["total"]), n(&site["ideal_sectors"]));
    if total > ideal {
        return (total - ideal) / total;
    }
    let conflict = n(&site["conflict"]["max"]);
    if conflict > 1.0 {
        return (conflict - 1.0) / conflict;
    }
    0.0
}

/// Whether a site is worth a developer's look: its claim contradicted,
/// left open by `check`, or work lost.
fn notable(r: &Ran) -> bool {
    matches!(r.verdict(), "contradicted" | "measured") || waste(r.site) > 0.0
}

/// A site's figures as the text report words them, with an atomic's
/// contention.
fn figures(site: &Value) -> String {
    let mut f = super::run_text::site_figures(site).unwrap_or_default();
    let lanes = count(&site["contention"]["max"]);
    if lanes > 1 {
        let _ = write!(f, ", up to {lanes} lanes on one address");
    }
    f
}

/// Where a site or a fault is (`file`, `line`, `column` keys), to read
/// its source: names are as the compiler was given them, so relative ones
/// are read from the current directory, where the program was built.
fn position(v: &Value) -> Option<Position> {
    let file = v["file"].as_str().filter(|f| !f.is_empty())?;
    let line = u32::try_from(v["line"].as_u64()?).ok().filter(|&l| l > 0)?;
    Some(Position {
        file: file.to_string(),
        path: file.into(),
        line,
        col: v["column"]
            .as_u64()
            .and_then(|c| u32::try_from(c).ok())
            .unwrap_or(0),
    })
}

fn shape(v: &Value) -> String {
    format!("({},{},{})", count(&v[0]), count(&v[1]), count(&v[2]))
}

/// The kernel's name linking to its card, with its block shape.
fn kernel_link((card, k): (usize, &Value)) -> String {
    format!(
        "<a href=\"#r{card}\"><code>{}</code></a> at block {}",
        escape(k["kernel"].as_str().unwrap_or("?")),
        shape(&k["block"])
    )
}

fn badge(verdict: &str) -> String {
    if verdict.is_empty() {
        return String::new();
    }
    format!("<span class=\"verdict {0}\">{0}</span>", escape(verdict))
}

/// Loud, first: every site where a launch showed what a definite claim
/// rules out.
fn contradictions(s: &mut String, ran: &[Ran], cache: &mut SourceCache) {
    let bad: Vec<&Ran> = ran
        .iter()
        .filter(|r| r.verdict() == "contradicted")
        .collect();
    if bad.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<section class=\"alarm\"><h2>CONTRADICTION: {} of check's claims broken by this run</h2><p>Each is a bug in warpcheck's static analysis, not in the program: please report it, with the program.</p>",
        bad.len()
    );
    for r in bad {
        let claim = r.site["static"]["claim"].as_str().unwrap_or("no site");
        let _ = write!(
            s,
            "<div><code>{}</code> in {}: check claimed <b>{}</b>; measured {}</div>",
            escape(&super::run_text::site_place(r.site)),
            kernel_link((r.card, r.kernel)),
            escape(claim),
            escape(&figures(r.site))
        );
        for c in list(&r.site["static"]["contradictions"]) {
            let _ = write!(
                s,
                "<div class=\"error\">{}</div>",
                escape(c.as_str().unwrap_or("?"))
            );
        }
        if let Some(p) = position(r.site) {
            html::excerpt(s, cache, &p);
        }
    }
    s.push_str("</section>");
}

/// Faults that stopped a launch first, then races, then reads of memory
/// nothing wrote.
fn fault_rank(e: &Value) -> u8 {
    match e["kind"].as_str() {
        Some("race") => 1,
        Some("uninitialized-read") => 2,
        _ => 0,
    }
}

/// The faults and sanitizer findings, each with its thread and block and
/// the source at its line (a race's other access too).
fn faults(s: &mut String, errors: &[Value], kernels: &[Value], cache: &mut SourceCache) {
    let _ = write!(
        s,
        "<section class=\"overview\"><h2>Memory errors, races and uninitialized reads ({})</h2>",
        errors.len()
    );
    if errors.is_empty() {
        s.push_str("<p class=\"muted\">None: no launch touched memory outside its allocations or freed, raced on shared memory or read device memory nothing wrote.</p>");
    }
    let mut ordered: Vec<&Value> = errors.iter().collect();
    ordered.sort_by_key(|e| fault_rank(e));
    for e in ordered {
        let name = e["kernel"].as_str().unwrap_or("?");
        let kernel = match kernels.iter().position(|k| k["kernel"] == name) {
            Some(card) => format!("<a href=\"#r{card}\"><code>{}</code></a>", escape(name)),
            None => format!("<code>{}</code>", escape(name)),
        };
        let _ = write!(
            s,
            "<div><span class=\"error\">{}</span> <code>{}</code> in {kernel}: {}</div>",
            escape(e["kind"].as_str().unwrap_or("error")),
            escape(&super::run_text::site_place(e)),
            escape(e["message"].as_str().unwrap_or(""))
        );
        // A race's message names both threads and the block already.
        let other = &e["related"];
        if e["thread"].is_array() && !other.is_object() {
            let _ = write!(
                s,
                "<div class=\"muted\">by thread {} in block {}</div>",
                shape(&e["thread"]),
                shape(&e["block"])
            );
        }
        let at = position(e);
        if let Some(p) = &at {
            html::excerpt(s, cache, p);
        }
        if other.is_object() {
            let there = position(other);
            let same_line = match (&at, &there) {
                (Some(a), Some(b)) => a.file == b.file && a.line == b.line,
                _ => false,
            };
            let _ = write!(
                s,
                "<div class=\"muted\">the other access, the {} at <code>{}</code>{}</div>",
                escape(other["access"].as_str().unwrap_or("access")),
                escape(&super::run_text::site_place(other)),
                if same_line {
                    ", is on the same line"
                } else {
                    ":"
                }
            );
            if let Some(p) = there.filter(|_| !same_line) {
                html::excerpt(s, cache, &p);
            }
        }
    }
    s.push_str("</section>");
}

/// What `check` left open and this run measured, most work lost first,
/// under the count of verdicts.
fn left_open(s: &mut String, a: &Value, ran: &[Ran]) {
    s.push_str("<section class=\"overview\"><h2>check's claims beside this run</h2>");
    if let Some(e) = a["error"].as_str() {
        let _ = write!(
            s,
            "<p class=\"muted\">check's claims were not compared: {}</p></section>",
            escape(e)
        );
        return;
    }
    if !a["sites"].is_u64() {
        s.push_str(
            "<p class=\"muted\">This report has no comparison with check's claims.</p></section>",
        );
        return;
    }
    // A verdict's count, in its colours when there are any.
    let tally = |verdict: &str| {
        let n = count(&a[verdict]);
        if n == 0 {
            format!("0 {verdict}")
        } else {
            format!("<span class=\"verdict {verdict}\">{n} {verdict}</span>")
        }
    };
    let _ = write!(
        s,
        "<p>{} sites ran at the launched block shapes: {} (a definite claim every launch agreed with), {} (left open by check: the figures are what this run's data did), {}.</p>",
        count(&a["sites"]),
        tally("confirmed"),
        tally("measured"),
        tally("contradicted")
    );
    let mut open: Vec<&Ran> = ran.iter().filter(|r| r.verdict() == "measured").collect();
    open.sort_by(|x, y| waste(y.site).total_cmp(&waste(x.site)));
    if !open.is_empty() {
        s.push_str("<h3>Left open by check, measured here</h3><table><tr><th>where</th><th>kernel</th><th>measured</th><th>check's claim</th></tr>");
        for r in open {
            let _ = write!(
                s,
                "<tr class=\"measured\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&super::run_text::site_place(r.site)),
                kernel_link((r.card, r.kernel)),
                escape(&figures(r.site)),
                escape(r.site["static"]["claim"].as_str().unwrap_or(""))
            );
        }
        s.push_str("</table>");
    }
    s.push_str("</section>");
}

/// The cards: kernels with a contradiction first, then by simulated time,
/// most first; otherwise in the order of their first launch.
fn cards_in_order(kernels: &[Value], ran: &[Ran]) -> Vec<usize> {
    let broken = |card: usize| {
        ran.iter()
            .filter(|r| r.card == card && r.verdict() == "contradicted")
            .count()
    };
    let time = |card: usize| kernels[card]["simulated_us"].as_f64().unwrap_or(0.0);
    let mut cards: Vec<usize> = (0..kernels.len()).collect();
    cards.sort_by(|&a, &b| broken(b).cmp(&broken(a)).then(time(b).total_cmp(&time(a))));
    cards
}

/// One kernel at one block shape: its launches and counters, its sites
/// (contradicted first, then by work lost) and the source at the notable
/// ones.
fn kernel(
    s: &mut String,
    (card, k): (usize, &Value),
    ran: &[Ran],
    total_us: f64,
    fold: bool,
    cache: &mut SourceCache,
) {
    let mut mine: Vec<&Ran> = ran.iter().filter(|r| r.card == card).collect();
    // Stable: equal keys stay in source order.
    mine.sort_by(|x, y| {
        let key = |r: &Ran| (r.verdict() != "contradicted", r.verdict() != "measured");
        let (kx, ky) = (key(x), key(y));
        kx.0.cmp(&ky.0)
            .then(waste(y.site).total_cmp(&waste(x.site)))
            .then(kx.1.cmp(&ky.1))
    });
    let notes: Vec<&Ran> = mine.iter().copied().filter(|r| notable(r)).collect();
    let us = k["simulated_us"].as_f64().unwrap_or(0.0);
    let share = if total_us > 0.0 {
        format!(" ({:.0}% of the run)", 100.0 * us / total_us)
    } else {
        String::new()
    };
    let b = &k["block"];
    let _ = write!(
        s,
        "<section class=\"kernel\" id=\"r{card}\"><details{}><summary><h2><code>{}</code></h2> <span class=\"muted\">block {}×{}×{} · {} · {} · {:.3} ms simulated{share}</span></summary>",
        if notes.is_empty() && fold { "" } else { " open" },
        escape(k["kernel"].as_str().unwrap_or("?")),
        count(&b[0]),
        count(&b[1]),
        count(&b[2]),
        plural(count(&k["launches"]), "launch"),
        plural(count(&k["blocks"]), "block"),
        us / 1000.0
    );
    if let Some(e) = k["static"]["error"].as_str() {
        let _ = write!(
            s,
            "<p class=\"muted\">check could not analyse it at this shape: {}</p>",
            escape(e)
        );
    }
    for off in list(&k["static"]["pointers_off_alignment"]) {
        let _ = write!(
            s,
            "<p class=\"muted\">pointer {} inside its allocation: check's claims here assume only the alignment the accesses state</p>",
            escape(off.as_str().unwrap_or("?"))
        );
    }
    counters(s, &k["totals"]);
    let _ = write!(s, "<h3>Sites that ran ({})</h3>", mine.len());
    if !mine.is_empty() {
        s.push_str("<table><tr><th>where</th><th>measured over the run</th><th>check's claim</th><th>verdict</th></tr>");
        for r in &mine {
            let verdict = r.verdict();
            let class = match verdict {
                "contradicted" | "measured" => format!(" class=\"{verdict}\""),
                _ => String::new(),
            };
            let _ = write!(
                s,
                "<tr{class}><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&super::run_text::site_place(r.site)),
                escape(&figures(r.site)),
                escape(r.site["static"]["claim"].as_str().unwrap_or("")),
                badge(verdict)
            );
        }
        s.push_str("</table>");
    }
    where_to_look(s, &notes, cache);
    s.push_str("</details></section>");
}

/// A kernel entry's counters, summed over its launches.
fn counters(s: &mut String, t: &Value) {
    let steps = count(&t["steps"]);
    let lanes = if steps > 0 {
        format!(
            "{:.1}",
            count(&t["thread_instructions"]) as f64 / steps as f64
        )
    } else {
        "—".into()
    };
    let _ = write!(
        s,
        "<table><tr><th>warp instructions</th><th>active lanes per instruction</th><th>global requests</th><th>sectors (ideal)</th><th>shared wavefronts (extra from bank conflicts)</th><th>divergent branches</th></tr><tr><td>{steps}</td><td>{lanes}</td><td>{}</td><td>{} ({})</td><td>{} ({})</td><td>{}</td></tr></table>",
        count(&t["requests"]),
        count(&t["sectors"]),
        count(&t["ideal_sectors"]),
        count(&t["wavefronts"]),
        count(&t["conflicts"]),
        count(&t["divwarps"])
    );
}

/// The notable sites' source, a line's sites above its excerpt.
fn where_to_look(s: &mut String, notes: &[&Ran], cache: &mut SourceCache) {
    if notes.is_empty() {
        return;
    }
    s.push_str("<h3>Where to look</h3>");
    let line = |r: &Ran| (r.site["file"].clone(), r.site["line"].clone());
    let mut done: Vec<(Value, Value)> = Vec::new();
    for r in notes {
        if done.contains(&line(r)) {
            continue;
        }
        done.push(line(r));
        for same in notes.iter().filter(|o| line(o) == line(r)) {
            let _ = write!(
                s,
                "<div><code>{}</code> {} {}</div>",
                escape(&super::run_text::site_place(same.site)),
                escape(&figures(same.site)),
                badge(same.verdict())
            );
        }
        if let Some(p) = position(r.site) {
            html::excerpt(s, cache, &p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn site(line: u64, verdict: &str, divergent: u64) -> Value {
        json!({"kind": "branch", "file": "k.cu", "line": line, "column": 3,
               "executions": 10, "divergent": divergent, "divergent_warps": divergent,
               "warps": 10, "static": {"claim": "may split", "verdict": verdict,
               "contradictions": if verdict == "contradicted" { json!(["k: seen split"]) } else { json!([]) }}})
    }

    fn entry(name: &str, us: f64, sites: Vec<Value>) -> Value {
        json!({"kernel": name, "block": [64, 1, 1], "launches": 1, "blocks": 2,
               "simulated_us": us, "totals": {"steps": 10}, "sites": sites})
    }

    /// A run with a contradiction in its cheapest kernel and faults of
    /// each kind listed last kind first.
    fn report() -> Value {
        let fault = |kind: &str, line: u64| {
            json!({"kernel": "fast<int>(int*)", "kind": kind, "message": format!("{kind} here"),
                   "file": "k.cu", "line": line, "column": 1, "thread": [1, 0, 0], "block": [0, 0, 0]})
        };
        json!({
            "simulated_us": 30.0, "fatal": null,
            "program": {"command": ["k.cu", "--", "a b"], "exit_code": 0, "signal": null},
            "kernels": [
                entry("slow(int*)", 20.0, vec![site(5, "measured", 1), site(6, "measured", 5)]),
                entry("fast<int>(int*)", 10.0, vec![site(9, "contradicted", 2)]),
            ],
            "errors": [fault("uninitialized-read", 1), fault("race", 2), fault("memory-error", 3)],
            "agreement": {"sites": 3, "confirmed": 0, "measured": 2, "contradicted": 1},
        })
    }

    #[test]
    fn the_contradiction_opens_the_page_and_faults_come_worst_first() {
        let h = render(&report(), None);
        let at = |needle: &str| h.find(needle).unwrap_or_else(|| panic!("{needle}: {h}"));
        assert!(h.contains("<title>warpcheck run k.cu -- &#39;a b&#39;</title>"));
        // The alarm first, then the faults (stopping ones, races, reads),
        // then the claims, then the cards: the contradicted kernel's
        // before the slower one's.
        assert!(at("CONTRADICTION: 1 of check") < at("memory-error here"));
        assert!(
            at("memory-error here") < at("race here")
                && at("race here") < at("uninitialized-read here")
        );
        assert!(at("uninitialized-read here") < at("check's claims beside this run"));
        assert!(at("id=\"r1\"") < at("id=\"r0\""));
        assert!(h.contains("<code>fast&lt;int&gt;(int*)</code>"));
        assert!(h.contains("<div class=\"error\">k: seen split</div>"));
        // Within a card and in the list of what check left open, the
        // branch that split more often first.
        assert!(at("k.cu:6:3") < at("k.cu:5:3"));
        assert!(h.contains("<td>program exited with 0</td>"));
    }

    /// Past the fold, only cards with something to look at start open.
    #[test]
    fn a_large_page_folds_the_quiet_kernels() {
        let mut r = report();
        let quiet = || entry("quiet(int*)", 1.0, vec![site(3, "confirmed", 0)]);
        let mut kernels = vec![entry("loud(int*)", 1.0, vec![site(4, "measured", 0)])];
        kernels.extend((0..html::FOLD_QUIET_ABOVE).map(|_| quiet()));
        r["kernels"] = json!(kernels);
        let h = render(&r, Some("t"));
        assert_eq!(h.matches("<details open>").count(), 1);
        assert_eq!(h.matches("<details>").count(), html::FOLD_QUIET_ABOVE);
        r["kernels"] = json!(kernels[..html::FOLD_QUIET_ABOVE]);
        let h = render(&r, Some("t"));
        assert_eq!(h.matches("<details open>").count(), html::FOLD_QUIET_ABOVE);
    }

    #[test]
    fn waste_is_the_share_of_work_lost() {
        assert_eq!(waste(&site(1, "measured", 5)), 0.5);
        let load =
            json!({"kind": "load", "executions": 4, "sectors": {"total": 32}, "ideal_sectors": 8});
        assert_eq!(waste(&load), 0.75);
        let shared = json!({"kind": "load", "executions": 4, "conflict": {"max": 4}});
        assert_eq!(waste(&shared), 0.75);
        assert_eq!(waste(&json!({"kind": "store", "executions": 4})), 0.0);
    }
}
