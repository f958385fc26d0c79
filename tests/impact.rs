//! Impact per finding (`timing::impact`), the idioms the divergence check
//! names, grouped accesses, `--min-impact`/`MinImpact:` and the order of
//! the output, on fixtures whose figures are derived in the comments; the
//! order of the estimates is checked against the simulator's cycle mode.

#[path = "common/sim.rs"]
mod helpers;

use helpers::common::{check_json, fixture, run, stderr, warpcheck};
use helpers::{buf, compile};
use serde_json::Value;
use warpcheck::machine::Machine;
use warpcheck::sim::{Init, LaunchConfig};

/// The findings of `kernel` in a report.
fn findings_of<'a>(report: &'a Value, kernel: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kernel"] == kernel)
        .collect()
}

/// The one divergent-branch finding of `kernel` at `line`.
fn branch<'a>(report: &'a Value, kernel: &str, line: u64) -> &'a Value {
    let fs: Vec<&Value> = findings_of(report, kernel)
        .into_iter()
        .filter(|f| f["check"] == "divergent-branch" && f["line"] == line)
        .collect();
    assert_eq!(fs.len(), 1, "{kernel}:{line}: {fs:#?}");
    fs[0]
}

fn cycles(f: &Value) -> f64 {
    f["impact"]["cycles"].as_f64().expect("an estimate")
}

/// The three idioms are notes that say why they are cheap; the branch
/// with a 64-iteration loop on each side is a warning at least ten times
/// costlier than any of them.
///
/// Issue slots per block (8 warps of 256 threads, issue rate P = 4):
/// * leader_atomic: each warp's lane 0 runs the atomic, a handful of
///   instructions (well under 10), in all 8 warps: under 10·8/4 = 20.
/// * single_store: one thread (warp 0 splits) runs two shared loads, an
///   add, the address and a store: under 10·1/4.
/// * halo: lanes 0..3 of warp 0 run two loads, two stores and their
///   addresses: under 20·1/4.
/// * long_sides: every warp runs both loops, 2·64 iterations of at least
///   a load, a multiply-add and the counter's step and test (4
///   instructions): at least 512·8/4 = 1024, over 50 times the first.
///
/// Each scaled by the same resident blocks (8 of 256 threads per SM).
#[test]
fn idioms_are_notes_and_long_sides_a_warning() {
    let r = check_json("impact/idioms.cu", &[]);
    let leader = branch(&r, "leader_atomic", 12);
    let single = branch(&r, "single_store", 21);
    let halo = branch(&r, "halo", 31);
    let long = branch(&r, "long_sides", 44);
    for (f, idiom, says) in [
        (leader, "leader_lane", "leader-lane guard"),
        (single, "leader_thread", "single-thread guard"),
        (halo, "halo", "halo load"),
    ] {
        assert_eq!(f["severity"], "note", "{f:#}");
        assert_eq!(f["data"]["idiom"], idiom);
        let msg = f["message"].as_str().unwrap();
        assert!(msg.contains(says) && msg.contains("cheap:"), "{msg}");
        assert!(
            f["impact"]["reason"]
                .as_str()
                .unwrap()
                .starts_with("cheap:"),
            "{f:#}"
        );
        // The hint names the idiom's cost, not "make it uniform".
        let hint = f["notes"][0].as_str().unwrap();
        assert!(!hint.contains("uniform per warp"), "{hint}");
    }
    assert!(leader["message"]
        .as_str()
        .unwrap()
        .contains("one lane per warp runs"));
    assert!(single["message"]
        .as_str()
        .unwrap()
        .contains("one thread runs"));
    assert_eq!(long["severity"], "warning");
    assert!(long["data"].get("idiom").is_none());
    let worst = [leader, single, halo]
        .iter()
        .map(|f| cycles(f))
        .fold(0.0, f64::max);
    assert!(
        cycles(long) >= 10.0 * worst,
        "long sides {} against {worst}",
        cycles(long)
    );
    // The inputs of the estimate are shown: 8 warps all split, 64
    // iterations of at least 4 instructions per side.
    let inputs = &long["impact"]["inputs"];
    assert_eq!(inputs["splitting_warps"], 8.0);
    assert_eq!(inputs["warps"], 8.0);
    assert!(inputs["side_issues"].as_f64().unwrap() >= 2.0 * 64.0 * 4.0);
}

/// `--min-impact 0` keeps every warning; a larger one than the long
/// sides' share makes it a note too; a bad value is a usage error.
#[test]
fn min_impact_sets_the_threshold() {
    let all = check_json("impact/idioms.cu", &["--min-impact", "0"]);
    for (k, line) in [("leader_atomic", 12), ("single_store", 21), ("halo", 31)] {
        assert_eq!(branch(&all, k, line)["severity"], "warning", "{k}");
    }
    let none = check_json("impact/idioms.cu", &["--min-impact", "100%"]);
    assert_eq!(branch(&none, "long_sides", 44)["severity"], "note");
    for bad in ["-1", "101", "lots"] {
        let out = run(warpcheck()
            .arg("check")
            .arg(format!("--min-impact={bad}"))
            .arg(fixture("impact/idioms.cu")));
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains("--min-impact"), "{}", stderr(&out));
    }
}

/// `MinImpact:` in `.warpcheck.yaml`, under the command line's.
#[test]
fn min_impact_in_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    std::fs::copy(fixture("impact/idioms.cu"), &src).unwrap();
    std::fs::write(dir.path().join(".warpcheck.yaml"), "MinImpact: 0\n").unwrap();
    // Notes too: whether the halo branch is one is the point.
    let json = |extra: &[&str]| -> Value {
        let out = run(warpcheck()
            .args(["check", "--format", "json", "--notes"])
            .args(extra)
            .arg(&src));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(branch(&json(&[]), "halo", 31)["severity"], "warning");
    assert_eq!(
        branch(&json(&["--min-impact", "5"]), "halo", 31)["severity"],
        "note"
    );
    std::fs::write(dir.path().join(".warpcheck.yaml"), "MinImpact: much\n").unwrap();
    let out = run(warpcheck().arg("check").arg(&src));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("MinImpact"), "{}", stderr(&out));
}

/// Every finding has an `impact` in JSON and SARIF; text is worst first
/// within the file.
#[test]
fn every_finding_has_an_impact_and_text_is_ordered_by_it() {
    let r = check_json("impact/idioms.cu", &["--notes", "--bounds"]);
    for f in r["findings"].as_array().unwrap() {
        let i = &f["impact"];
        assert!(i.is_object(), "{f:#}");
        // An estimate, or the reason there is none (the kernels' bound notes).
        assert!(i["share"].is_f64() || i["reason"].is_string(), "{f:#}");
    }
    let out = run(warpcheck()
        .args(["check", "--format", "sarif"])
        .arg(fixture("impact/idioms.cu")));
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for res in results {
        assert!(res["properties"]["impact"].is_object(), "{res:#}");
    }
    // Text: the long sides (the largest share) before the leader lane.
    let out = run(warpcheck()
        .args(["check", "--min-impact", "0"])
        .arg(fixture("impact/idioms.cu")));
    let text = stderr(&out) + &helpers::common::stdout(&out);
    let shares: Vec<f64> = text
        .lines()
        .filter(|l| l.contains(": warning: "))
        .filter_map(|l| {
            let at = l.find("(~")?;
            let pct = &l[at + 2..];
            pct[..pct.find('%')?].parse().ok()
        })
        .collect();
    assert_eq!(shares.len(), 4, "{text}");
    assert!(shares.windows(2).all(|w| w[0] >= w[1]), "{shares:?}");
}

/// `p[i].x += p[i].vx * dt` on an array of 24-byte structures: the load
/// of `x`, the load of `vx` and the store of `x` have one cause (lanes 24
/// bytes apart) and are one warning listing the three accesses.
///
/// Sectors: 32 lanes 24 bytes apart span 768 bytes, 24 sectors for 4
/// bytes a lane (ideal 128 bytes, 4 sectors): 20 excess each. The two
/// loads run together (one block) 12 bytes apart, so they fetch their
/// sectors together: field starts every 12 bytes leave no sector of the
/// 768 bytes untouched, a union of 24 sectors for 256 bytes (8 sectors):
/// 16 excess from DRAM, 8 charged to each load. Each load's request spans
/// 6 lines of 128 bytes where its 128 bytes need one: 5 extra requests.
/// The store has no sibling store: its 20 excess sectors stay.
#[test]
fn accesses_of_one_line_with_one_cause_are_one_warning() {
    let r = check_json("cu/impact_aos.cu", &[]);
    let fs: Vec<&Value> = findings_of(&r, "step")
        .into_iter()
        .filter(|f| f["check"] == "uncoalesced-access" && f["line"] == 9)
        .collect();
    assert_eq!(fs.len(), 1, "{fs:#?}");
    let f = fs[0];
    assert_eq!(f["severity"], "warning");
    let accesses = f["data"]["accesses"].as_array().unwrap();
    let kinds: Vec<&str> = accesses
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "load").count(), 2);
    assert_eq!(kinds.iter().filter(|k| **k == "store").count(), 1);
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("3 accesses of p on this line, one cause"));
    assert_eq!(f["impact"]["inputs"]["grouped_accesses"], 3.0);
    assert_eq!(f["impact"]["inputs"]["excess_sectors"], 8.0 + 8.0 + 20.0);
    assert_eq!(f["impact"]["inputs"]["extra_requests"], 5.0 + 5.0);
    let loads = accesses.iter().filter(|a| a["kind"] == "load");
    for a in loads {
        let sib = &a["data"]["siblings"];
        assert_eq!(
            (&sib["union"], &sib["ideal"]),
            (&24.into(), &8.into()),
            "{a:#}"
        );
    }
    // The other line (a plain copy, coalesced) has no finding.
    assert!(findings_of(&r, "step")
        .iter()
        .all(|f| f["check"] != "uncoalesced-access" || f["line"] == 9));
}

/// The order of the estimates agrees with the simulator's cycle mode.
///
/// Each kernel of `impact/order.cu` has one divergent branch and a twin
/// whose condition is uniform per warp with the same work: what the
/// split costs in simulation is the kernel's cycles minus its twin's. By
/// hand: `split_N`'s warps run both N-iteration loops where the twin's
/// run one, about N·(the loop body's cycles) more per warp, so the losses
/// grow with N = 4, 16, 64; `leader`'s one-lane store costs at most what
/// the twin's whole-warp store does (the twin moves more sectors). The
/// estimates must come out in the same order: leader < 4 < 16 < 64.
#[test]
fn impact_order_agrees_with_simulated_cycles() {
    let r = check_json("impact/order.cu", &["--min-impact", "0"]);
    let m = compile("tests/fixtures/impact/order.cu");
    let blocks = 8u32;
    let n = u64::from(blocks) * 256;
    let config = LaunchConfig {
        grid: [blocks, 1, 1],
        block: [256, 1, 1],
        machine: Some(Machine::default()),
        ..LaunchConfig::default()
    };
    let args = [buf("in", 4 * n, Init::Zero), buf("out", 4 * n, Init::Zero)];
    let simulated = |k: &str| -> i64 {
        let o = helpers::run(&m, k, &config, &args);
        o.cycles.expect("cycle mode").launch_cycles as i64
    };
    let kernels = [
        ("leader", "uniform_leader", 33),
        ("split_4", "uniform_4", 22),
        ("split_16", "uniform_16", 24),
        ("split_64", "uniform_64", 26),
    ];
    let mut rows = Vec::new();
    for (k, twin, line) in kernels {
        let estimate = cycles(branch(&r, k, line));
        let lost = simulated(k) - simulated(twin);
        eprintln!("{k}: estimated {estimate} cycles, simulated loss {lost}");
        rows.push((k, estimate, lost));
    }
    let mut by_estimate = rows.clone();
    by_estimate.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut by_loss = rows.clone();
    by_loss.sort_by_key(|r| r.2);
    let names =
        |v: &[(&'static str, f64, i64)]| -> Vec<&'static str> { v.iter().map(|r| r.0).collect() };
    assert_eq!(names(&by_estimate), names(&by_loss), "{rows:?}");
    assert_eq!(
        names(&by_estimate),
        ["leader", "split_4", "split_16", "split_64"]
    );
    // The twins' branches never split: no cost.
    for twin in ["uniform_4", "uniform_16", "uniform_64", "uniform_leader"] {
        // Kernel notes (the twins read blockDim with no launch in the
        // file: `guessed-shape`) have no site and so no cycles.
        for f in findings_of(&r, twin)
            .into_iter()
            .filter(|f| f["check"] != "guessed-shape")
        {
            assert_eq!(f["impact"]["cycles"], 0.0, "{f:#}");
        }
    }
}
