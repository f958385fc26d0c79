//! Every `--explain` chain starts at a source of thread dependence: a
//! special register, an atomic, a shuffle's lane range, an opaque call. A
//! chain that starts anywhere else was cut short or went round in a circle,
//! which the reasons the analysis records must never allow.

mod common;
use common::*;
use std::path::Path;
use warpcheck::taint::Source;

#[test]
fn every_chain_on_every_fixture_starts_at_a_source() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = cu_files(&fixture("cu"));
    files.extend(cu_files(&root.join("examples")));
    let sources: Vec<&str> = Source::ALL.iter().map(|s| s.describe()).collect();
    let mut chains = 0;
    for file in &files {
        let out = run(warpcheck()
            .args(["check", "--format", "json", "--sites"])
            .arg(file));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            file.display(),
            stderr(&out)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for k in report["kernels"].as_array().unwrap() {
            for s in k["sites"].as_array().unwrap() {
                if s["thread_dependent"] != true {
                    continue;
                }
                let why: Vec<&str> = s["why"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|w| w.as_str().unwrap())
                    .collect();
                assert!(
                    why.first().is_some_and(|w| sources.contains(w)),
                    "{}:{} {}: chain {why:?} does not start at a source",
                    file.display(),
                    s["line"],
                    s["kind"]
                );
                // Steps are named as the user wrote them, never by IR
                // names. (A name may come back: `node = next[node]` is
                // `node → the address at 5:64 → node`, two values of one
                // variable; the walk itself never revisits a value.)
                assert!(
                    why.iter().all(|w| !w.contains('%') && !w.contains("_Z")),
                    "IR names in {why:?}"
                );
                // Neighbours differ: a widening (`(long)i`) is `i` once.
                assert!(why.windows(2).all(|p| p[0] != p[1]), "{why:?}");
                chains += 1;
            }
        }
    }
    assert!(chains > 100, "only {chains} dependent sites checked");
}
