//! `warpcheck run`'s report as text, for people: per kernel and block
//! shape its launches and time, then each site's figures beside `check`'s
//! claim, the count of verdicts and every contradiction loudly, then the
//! faults. The phrases for a site are shared with the HTML page.

/// The report for people: per kernel, its launches and time, then the
/// sites where warps split or memory was accessed less than ideally.
pub(super) fn text(r: &serde_json::Value) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let kernels = r["kernels"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        s,
        "warpcheck run: {} kernel(s) launched, {:.3} ms simulated",
        kernels.len(),
        r["simulated_us"].as_f64().unwrap_or(0.0) / 1000.0
    );
    for k in &kernels {
        let t = &k["totals"];
        let b = |i: usize| n(&k["block"][i]);
        let _ = writeln!(
            s,
            "{} at block ({},{},{}): {} launch(es), {} blocks, {} warp instructions, {:.3} ms",
            k["kernel"].as_str().unwrap_or("?"),
            b(0),
            b(1),
            b(2),
            n(&k["launches"]),
            n(&k["blocks"]),
            n(&t["steps"]),
            k["simulated_us"].as_f64().unwrap_or(0.0) / 1000.0
        );
        if let Some(e) = k["static"]["error"].as_str() {
            let _ = writeln!(s, "  (check could not analyse it at this shape: {e})");
        }
        for off in k["static"]["pointers_off_alignment"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let _ = writeln!(
                s,
                "  (pointer {} inside its allocation: check's claims here assume only the alignment the accesses state)",
                off.as_str().unwrap_or("?")
            );
        }
        for site in k["sites"].as_array().into_iter().flatten() {
            if let Some(line) = site_line(site) {
                let _ = writeln!(s, "  {line}");
            }
        }
    }
    agreement_text(&mut s, &r["agreement"]);
    for e in r["errors"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "error: {}:{}:{}: {} in {}",
            e["file"].as_str().unwrap_or("?"),
            n(&e["line"]),
            n(&e["column"]),
            e["message"].as_str().unwrap_or(""),
            e["kernel"].as_str().unwrap_or("?")
        );
    }
    s
}

/// One site's figures, when it ran.
fn site_line(site: &serde_json::Value) -> Option<String> {
    let what = site_figures(site)?;
    let claim = match (
        site["static"]["verdict"].as_str(),
        site["static"]["claim"].as_str(),
    ) {
        (Some(verdict), Some(claim)) => format!(" [check: {claim}: {verdict}]"),
        (Some(verdict), None) => format!(" [check: no site: {verdict}]"),
        _ => String::new(),
    };
    Some(format!("{}: {what}{claim}", site_place(site)))
}

/// A site's or a fault's `file:line:column`.
pub(super) fn site_place(site: &serde_json::Value) -> String {
    let n = |k: &str| site[k].as_u64().unwrap_or(0);
    format!(
        "{}:{}:{}",
        site["file"].as_str().unwrap_or("?"),
        n("line"),
        n("column")
    )
}

/// What a site's launches measured, summed over the run, in a phrase
/// (`branch: diverged in 1 of 8 warp executions (1 of 8 warps)`); none
/// for a site that never ran.
pub(super) fn site_figures(site: &serde_json::Value) -> Option<String> {
    let n = |k: &str| site[k].as_u64().unwrap_or(0);
    let execs = n("executions");
    if execs == 0 {
        return None;
    }
    let kind = site["kind"].as_str().unwrap_or("?");
    let what = match (kind, site["space"].as_str()) {
        ("branch", _) => format!(
            "branch: diverged in {} of {execs} warp executions ({} of {} warps)",
            n("divergent"),
            n("divergent_warps"),
            n("warps")
        ),
        (_, Some("global")) => {
            let total = site["sectors"]["total"].as_u64().unwrap_or(0);
            format!(
                "global {kind}: {execs} requests, {total} sectors (ideal {}), {:.2} per request",
                n("ideal_sectors"),
                total as f64 / execs as f64
            )
        }
        (_, Some("shared")) => format!(
            "shared {kind}: {execs} accesses, conflict degree up to {}, {} ideal wavefronts",
            site["conflict"]["max"].as_u64().unwrap_or(0),
            n("ideal_wavefronts")
        ),
        (_, space) => format!("{} {kind}: {execs} executions", space.unwrap_or("")),
    };
    Some(what)
}

/// The comparison with `check`'s claims: a line of counts, then every
/// contradiction, each a bug in the static analysis.
fn agreement_text(s: &mut String, a: &serde_json::Value) {
    use std::fmt::Write;
    if let Some(e) = a["error"].as_str() {
        let _ = writeln!(s, "check's claims were not compared: {e}");
        return;
    }
    let n = |k: &str| a[k].as_u64().unwrap_or(0);
    if a.is_null() || n("sites") == 0 {
        return;
    }
    let _ = writeln!(
        s,
        "check's claims at the launched shapes: {} site(s) ran; {} confirmed, {} left open by check and measured here, {} contradicted",
        n("sites"),
        n("confirmed"),
        n("measured"),
        n("contradicted")
    );
    for c in a["contradictions"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "warpcheck run: CONTRADICTION (a bug in warpcheck's static analysis; please report it): {}",
            c.as_str().unwrap_or("?")
        );
    }
}
