//! The simulator as the oracle of the static analysis, shared by
//! `acf_oracle.rs` (fixtures and examples) and `random_kernels.rs`
//! (generated kernels). Included next to `common/sim.rs`, which the test
//! must include as `mod helpers`. The comparison itself is
//! `warpcheck::agreement`'s, which `warpcheck run` uses too.
#![allow(dead_code)]

use super::helpers::{iota_arguments, SiteKey};
use serde_json::Value;
use std::collections::BTreeMap;
use warpcheck::agreement::{compare, static_sites, MeasuredSite};
#[allow(unused_imports)]
pub use warpcheck::agreement::{Precision, Static, Tally};
use warpcheck::diag::json::Report;
use warpcheck::ir::{FuncId, Module};
use warpcheck::sim::report;
use warpcheck::sim::{self, ArgValue, LaunchConfig, SimError};

/// The static report of every kernel of `m`, analysed for `block`, as
/// `check --format json` prints it.
pub fn static_report(m: &Module, block: [u32; 3]) -> Value {
    let a = super::helpers::analyze_at(m, block);
    let figures = warpcheck::checks::measure_all(&a);
    let mut r = Report::new();
    r.add(&a, &figures, &[]);
    serde_json::to_value(&r).unwrap()
}

/// The static sites of kernel `k` in a report of [`static_report`].
pub fn kernel_sites(m: &Module, k: FuncId, report: &Value) -> BTreeMap<SiteKey, Static> {
    let name = &m.func(k).name;
    let kernel = report["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["mangled"] == name.as_str())
        .unwrap_or_else(|| panic!("no kernel {name} in the static report"));
    static_sites(kernel)
}

/// Simulates kernel `k` on `grid` blocks of `block` threads with
/// [`iota_arguments`] (`int` for integers) and compares every simulated
/// site with `statics`, which must come from the analysis at `block`.
pub fn simulate_and_compare(
    m: &Module,
    k: FuncId,
    statics: &BTreeMap<SiteKey, Static>,
    config: &LaunchConfig,
    int: i128,
    t: &mut Tally,
) -> Result<(), SimError> {
    let args = iota_arguments(m, k, int);
    simulate_args_and_compare(m, k, statics, config, &args, t)
}

/// [`simulate_and_compare`] with the arguments given.
pub fn simulate_args_and_compare(
    m: &Module,
    k: FuncId,
    statics: &BTreeMap<SiteKey, Static>,
    config: &LaunchConfig,
    args: &[(String, ArgValue)],
    t: &mut Tally,
) -> Result<(), SimError> {
    let o = sim::simulate(m, k, config, args)?;
    t.runs += 1;
    let ints: Vec<(&str, i128)> = args
        .iter()
        .filter_map(|(name, v)| match v {
            ArgValue::Int(i) => Some((name.as_str(), *i)),
            _ => None,
        })
        .collect();
    let shown: Vec<String> = ints.iter().map(|(n, i)| format!("{n}={i}")).collect();
    let label = format!("{} {:?} {}", m.func(k).name, config.block, shown.join(" "));
    // One site's claims over the runs of its kernel and shape.
    t.scope = format!("{} {:?}", m.func(k).name, config.block);
    // A parameter the report names but the arguments do not (a source
    // name): the lowest integer argument, the cautious reading.
    let lowest = ints.iter().map(|(_, i)| *i).min().unwrap_or(0);
    let int = |name: &str| {
        ints.iter()
            .find(|(n, _)| *n == name)
            .map_or(lowest, |(_, i)| *i)
    };
    for s in report::sites(m, &o) {
        let s = MeasuredSite::from(&s);
        let key = s.key();
        match statics.get(&key) {
            Some(st) => {
                compare(&label, st, &s, &int, t);
            }
            None => t.disagreements.push(format!(
                "{label}: simulated site {key:?} has no static site"
            )),
        }
    }
    Ok(())
}
