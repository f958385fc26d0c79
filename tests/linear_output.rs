//! Output that stays linear (issue 23, cause 6): an unrolled mirror-index
//! loop (`x = x >= n ? 2*n-2-x : x`, Rodinia dwt2d's clamping) reads the
//! last `x` three times per step, so its ACF as a tree has about 3^20
//! nodes at 20 steps. It used to take minutes and gigabytes in JSON,
//! SARIF and `--explain`; every rendering is now bounded by
//! `acf::display::BUDGET` (shared operands named once, the rest cut), so
//! these runs take well under a second (timed in scripts/bench-output.sh).

mod common;

use common::*;
use warpcheck::acf::display::{BUDGET, MORE};

const MIRROR: &str = "output/mirror.cu";

/// A rendering, or several joined per calling context, within the budget
/// (the joiner may add ` | … (k more)`).
fn within_budget(text: &str) -> bool {
    text.len() <= BUDGET + MORE.len() + " | … (1000 more)".len()
}

#[test]
fn json_acf_is_shared_and_bounded() {
    let r = check_json(MIRROR, &[]);
    let sites = kernel(&r, "mirror")["sites"].as_array().unwrap();
    let acf: Vec<&str> = sites.iter().filter_map(|s| s["acf"].as_str()).collect();
    assert!(!acf.is_empty());
    assert!(acf.iter().all(|a| within_budget(a)), "{acf:?}");
    // The load's index is the 20th step: too big as a tree, so the steps
    // are named, each written once in terms of the one before.
    let load = acf.iter().find(|a| a.starts_with("[in]")).unwrap();
    assert!(
        load.contains(" where $1 = (($2 < [n]) ? $2 : -2 + 2·[n] - $2); "),
        "{load}"
    );
    // The whole report is a few kilobytes (it was gigabytes).
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 4 * BUDGET + 8192, "{size} bytes");
}

#[test]
fn explain_sarif_and_html_are_bounded() {
    let explain = run(warpcheck()
        .args(["check", "--explain", "--notes"])
        .arg(fixture(MIRROR)));
    assert_eq!(explain.status.code(), Some(0), "{}", stderr(&explain));
    let text = stdout(&explain);
    let per_lane: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once("per lane: ").map(|x| x.1))
        .collect();
    assert!(!per_lane.is_empty(), "{text}");
    assert!(per_lane.iter().all(|a| within_budget(a)), "{per_lane:?}");

    let sarif = run(warpcheck()
        .args(["check", "--format", "sarif", "--explain"])
        .arg(fixture(MIRROR)));
    assert_eq!(sarif.status.code(), Some(0), "{}", stderr(&sarif));
    assert!(
        sarif.stdout.len() < 32 * 1024,
        "{} bytes",
        sarif.stdout.len()
    );

    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("mirror.html");
    let out = run(warpcheck()
        .args(["report", "--no-simulate", "-o"])
        .arg(&html)
        .arg(fixture(MIRROR)));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = std::fs::metadata(&html).unwrap().len();
    assert!(page < 256 * 1024, "{page} bytes");
}

#[test]
fn longer_loops_stay_bounded() {
    // 32 steps: 3^32 nodes as a tree; the JSON is as small as at 20.
    let r = check_json(MIRROR, &["-D", "STEPS=32"]);
    let sites = kernel(&r, "mirror")["sites"].as_array().unwrap();
    assert!(sites
        .iter()
        .filter_map(|s| s["acf"].as_str())
        .all(within_budget));
}
