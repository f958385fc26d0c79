//! The simulator as an oracle for the static analysis: a site that
//! `warpcheck check` calls not thread-dependent must, in every simulated
//! warp, have one address (memory) or one condition value (branches) across
//! the warp's active lanes.
//!
//! Runs over every kernel of `tests/fixtures/cu/*.cu` and `examples/*.cu`
//! that can be launched with simple arguments: 2 blocks of 64 threads (or
//! the kernel's launch bounds), 1 MiB buffers filled 0, 1, 2, ... in their
//! element type, 128 for integers and 1.5 for floats. Kernels that fault
//! or use what the simulator does not run are listed and skipped.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use warpcheck::ir::{FuncId, Module};
use warpcheck::sim::{self, report, LaunchConfig, SimError};

fn static_report(path: &Path) -> Value {
    let out = warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "check {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether any static site with the key is thread-dependent.
fn static_dependence(kernel: &Value) -> BTreeMap<SiteKey, bool> {
    let mut deps = BTreeMap::new();
    for s in kernel["sites"].as_array().unwrap() {
        let key = static_key(s);
        let dep = s["thread_dependent"].as_bool().unwrap();
        *deps.entry(key).or_insert(false) |= dep;
    }
    deps
}

/// Launch shapes to try, in order: the kernel's launch bounds, then two
/// warps, one warp, and the 2-D tiles of the transposes.
fn simple_launches(m: &Module, k: FuncId) -> Vec<LaunchConfig> {
    let bounds = m.func(k).launch;
    let shapes = bounds.reqntid.or(bounds.maxntid).map_or_else(
        || vec![[64, 1, 1], [32, 1, 1], [32, 8, 1], [32, 32, 1]],
        |b| vec![b],
    );
    shapes
        .into_iter()
        .map(|block| LaunchConfig {
            grid: [2, 1, 1],
            block,
            ..LaunchConfig::default()
        })
        .collect()
}

/// Checks one kernel; `Err` when it cannot be simulated with simple args.
fn check_kernel(m: &Module, k: FuncId, kernel: &Value) -> Result<usize, SimError> {
    let args = iota_arguments(m, k, 128);
    let mut runs = simple_launches(m, k)
        .into_iter()
        .map(|config| sim::simulate(m, k, &config, &args));
    let first = runs.next().expect("a launch shape");
    let o = match first {
        Ok(o) => o,
        Err(e) => runs.find_map(Result::ok).ok_or(e)?,
    };
    let deps = static_dependence(kernel);
    let mut checked = 0;
    for s in report::sites(m, &o) {
        let key = sim_key(&s);
        let Some(&dependent) = deps.get(&key) else {
            panic!(
                "{}: simulated site {key:?} is not among the static sites",
                kernel["name"]
            );
        };
        if !dependent && s.executions > 0 {
            assert_eq!(
                s.nonuniform, 0,
                "{}: {} at {}:{}:{} is uniform statically, but its lanes disagreed in {} of {} warp executions",
                kernel["name"], s.kind, s.file, s.line, s.column, s.nonuniform, s.executions
            );
            checked += 1;
        }
    }
    Ok(checked)
}

#[test]
fn uniform_sites_are_uniform_in_every_simulated_warp() {
    let mut files = cu_files(&fixture("tests/fixtures/cu"));
    files.extend(cu_files(&fixture("examples")));
    let (mut kernels, mut sites) = (0, 0);
    let mut skipped = Vec::new();
    for path in files {
        let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
        let m = compile(rel.to_str().unwrap());
        let report = static_report(&path);
        for kernel in report["kernels"].as_array().unwrap() {
            let mangled = kernel["mangled"].as_str().unwrap();
            let k = m.find_function(mangled).expect("the same kernels");
            match check_kernel(&m, k, kernel) {
                Ok(n) => {
                    kernels += 1;
                    sites += n;
                }
                Err(e) => skipped.push(format!("{} {}: {e}", rel.display(), kernel["name"])),
            }
        }
    }
    eprintln!("checked {sites} uniform sites in {kernels} kernels");
    for s in &skipped {
        eprintln!("skipped {s}");
    }
    // Most fixture and example kernels run with simple arguments; a drop
    // would mean the simulator lost ground, not that the check passed.
    assert!(kernels >= 40, "only {kernels} kernels simulated");
    assert!(sites >= 80, "only {sites} uniform sites checked");
}
