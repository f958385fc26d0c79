//! Per-kernel analysis budgets: a kernel that runs out gets unknown sites
//! with the reason and one note; the others keep their full results, and
//! `check` still exits 0.

mod common;
use common::*;

/// `small` needs about 30 thread-dependence facts (one branch, two
/// accesses); `large` (64 unrolled rounds, each a load, a branch and two
/// arithmetic chains) needs thousands. A budget of 1,000 sits between.
const BETWEEN: &str = "ifds-facts=1000";

#[test]
fn a_kernel_over_budget_is_unknown_and_the_others_are_not() {
    let r = check_json("cu/budget.cu", &["--budget", BETWEEN]);
    // small: `t % 2` splits every one of the 8 warps of 256 threads.
    let branch = &sites(&r, "small", "branch", 7)[0];
    assert_eq!(branch["divergence"]["class"], "total", "{branch:#}");
    assert!(branch.get("reason").is_none(), "{branch:#}");
    // large: every site is taken as thread-dependent and unknown.
    let large = &kernel(&r, "large")["sites"];
    let large = large.as_array().unwrap();
    assert!(large.len() > 64, "{} sites", large.len());
    for s in large {
        assert_eq!(s["thread_dependent"], true, "{s:#}");
        assert_eq!(s["reason"], "budget", "{s:#}");
        let class = ["divergence", "sectors", "conflict"]
            .iter()
            .find_map(|k| s.get(*k))
            .map(|f| f["class"].clone());
        assert_eq!(class, Some("unknown".into()), "{s:#}");
    }
    // One note, naming the kernel and the budget, at the kernel's line.
    let notes: Vec<_> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "analysis-budget")
        .collect();
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_eq!(notes[0]["severity"], "note");
    assert!(notes[0]["kernel"].as_str().unwrap().starts_with("large("));
    assert_eq!(notes[0]["line"], 10);
    let msg = notes[0]["message"].as_str().unwrap();
    assert!(msg.contains("budget of 1000 facts"), "{msg}");
    // No per-site findings for the kernel over budget.
    assert!(r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["check"] == "analysis-budget"
            || f["kernel"].as_str().unwrap().starts_with("small(")));
}

#[test]
fn without_the_budget_the_large_kernel_is_analysed() {
    let r = check_json("cu/budget.cu", &["--budget", "ifds-facts=none"]);
    let large = &kernel(&r, "large")["sites"];
    assert!(large
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s.get("reason").is_none()));
    // The loop's first load, `in[t]` on line 12, is unit stride: 4 sectors.
    let load = &sites(&r, "large", "load", 12)[0];
    assert_eq!(load["sectors"]["class"], "coalesced", "{load:#}");
}

#[test]
fn a_time_budget_stops_every_kernel_with_exit_zero() {
    // One nanosecond: spent before the first check, in every kernel.
    let out = run(warpcheck()
        .args(["check", "--werror", "--budget", "time=0.000000001"])
        .arg(fixture("cu/budget.cu")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    // Shown without --notes: a kernel left unanalysed is always said.
    assert_eq!(
        text.matches("[warpcheck-analysis-budget]").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains(
            "budget.cu:5: note: analysis of this kernel stopped on its time budget of 0.0 s"
        ),
        "{text}"
    );
    assert!(!text.contains("warning:"), "{text}");
}

#[test]
fn bad_budgets_are_input_errors() {
    for bad in ["time=-1", "facts=3", "ifds-facts=many", "time"] {
        let out = run(warpcheck()
            .args(["check", "--budget", bad])
            .arg(fixture("cu/budget.cu")));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("--budget"), "{}", stderr(&out));
    }
}

#[test]
fn timing_reports_each_stage_and_its_size() {
    let out = run(warpcheck()
        .args(["check", "--timing"])
        .arg(fixture("cu/budget.cu")));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.starts_with("warpcheck: timing "))
        .unwrap_or_else(|| panic!("{err}"));
    for stage in ["load ", "graphs ", "kernel ", "taint ", "acf ", "checks "] {
        assert!(line.contains(stage), "{stage} missing: {line}");
    }
    assert!(line.contains("path_edges "), "{line}");
    assert!(line.contains("exprs "), "{line}");
}

#[test]
fn warpcheck_log_prints_spans_and_the_budget_warning() {
    let out = run(warpcheck()
        .env("WARPCHECK_LOG", "info")
        .args(["check", "--budget", BETWEEN])
        .arg(fixture("cu/budget.cu")));
    let err = stderr(&out);
    // Each stage's span closes with its time and its counters.
    let taint = err
        .lines()
        .find(|l| l.contains("kernel{name=small(") && l.contains(":taint{path_edges="))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(taint.contains("close time.busy="), "{taint}");
    // The budget's event is a warning inside the stage it stopped.
    let warn = err
        .lines()
        .find(|l| l.contains("analysis stopped"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(warn.contains(" WARN "), "{warn}");
    assert!(warn.contains("kernel{name=large("), "{warn}");
    assert!(warn.contains(":taint"), "{warn}");
    assert!(warn.contains("budget=\"ifds-facts\""), "{warn}");
}

#[test]
fn an_acf_budget_keeps_thread_dependence() {
    // small builds about ten expressions (t, t % 2, two addresses); large
    // hundreds (64 rounds of addresses and conditions).
    let r = check_json("cu/budget.cu", &["--budget", "acf-exprs=100"]);
    let branch = &sites(&r, "small", "branch", 7)[0];
    assert_eq!(branch["divergence"]["class"], "total", "{branch:#}");
    // Thread dependence finished: the final store `out[t]` (line 19) is
    // still known dependent, but its sectors are unknown for the budget.
    let store = &sites(&r, "large", "store", 19)[0];
    assert_eq!(store["thread_dependent"], true);
    assert_eq!(store["reason"], "budget", "{store:#}");
    assert_eq!(store["sectors"]["class"], "unknown", "{store:#}");
    let note = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "analysis-budget")
        .expect("a budget note");
    assert!(note["message"]
        .as_str()
        .unwrap()
        .contains("ACF budget of 100 expressions"));
}
