//! Random structured kernels (`common/random_kernel/`, as in
//! `random_kernels.rs`) against their per-warp cost bounds: every
//! simulated warp's sectors, conflicts and divwarps must be at most the
//! bound evaluated at the launch. The generator's ladders (`c *= 2`,
//! `c >>= 1` from `blockDim`) put accesses and branches in loops whose
//! counter the launch fixes, which the cost stage charges per entry
//! (`cost/sweeps.rs`). Kernels that call device functions have no bound
//! and are skipped; the default campaign fails when it checks fewer than
//! [`MIN_CHECKED`] bounds (bounds that all fail to solve would pass it
//! otherwise). `WARPCHECK_RANDOM_CASES` and `WARPCHECK_RANDOM_SEED` as
//! there.

#[path = "common/sim.rs"]
mod helpers;
#[path = "common/random_kernel/mod.rs"]
mod random_kernel;

use helpers::{analyze_at, iota_arguments, worst_warp};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use random_kernel::lower::{lower, KERNEL};
use random_kernel::strategy::{program, Knobs};
use std::cell::RefCell;
use warpcheck::cost::{self, bound::Params, Metric};
use warpcheck::sim::{ArgValue, LaunchConfig};

/// Kernels and seed of the default campaign.
const CASES: u32 = 100;
const SEED: u64 = 0x5eed_0002;
/// The fewest bounds the default campaign may check: 206 were when the
/// floor was set.
const MIN_CHECKED: usize = 185;

const LAUNCHES: [([u32; 3], [u32; 3], i128); 2] =
    [([2, 1, 1], [64, 1, 1], 13), ([2, 2, 1], [16, 4, 2], 20)];
const INT_ARG: i128 = 100;
const SMALL_ARG: usize = 5;

/// `Err` naming each metric whose bound a simulated warp exceeds; the
/// number of bounds checked.
fn check(p: &random_kernel::ast::Program) -> Result<usize, String> {
    let m = lower(p);
    let k = m.find_function(KERNEL).expect("the generated kernel");
    let mut checked = 0;
    for (grid, block, small) in LAUNCHES {
        let a = analyze_at(&m, block);
        let figures = warpcheck::checks::measure_all(&a);
        let opts = cost::Options {
            attribution: false,
            metrics: vec![Metric::Sectors, Metric::Conflicts, Metric::Divwarps],
            ..cost::Options::default()
        };
        let bounds = cost::bound_module(&a, &figures, &opts, &warpcheck::budget::Budget::CLI);
        let i = a.kernels.iter().position(|x| x.kernel == k).unwrap();
        let kb = &bounds[i];
        if kb.metrics.iter().all(|b| b.bound.is_err()) {
            continue;
        }
        let mut args = iota_arguments(&m, k, INT_ARG);
        args[SMALL_ARG].1 = ArgValue::Int(small);
        let config = LaunchConfig {
            grid,
            block,
            ..LaunchConfig::default()
        };
        let o = warpcheck::sim::simulate(&m, k, &config, &args)
            .map_err(|e| format!("the simulator stopped at {block:?}: {e}"))?;
        let values = kb
            .names
            .params
            .iter()
            .zip(&args)
            .filter_map(|(name, (_, v))| match v {
                ArgValue::Int(i) => Some((name.clone(), *i as f64)),
                _ => None,
            })
            .collect();
        let at = Params { values, grid };
        for mb in &kb.metrics {
            let Ok(poly) = &mb.bound else { continue };
            let Some(bound) = kb.names.eval_bound(poly, &at) else {
                continue;
            };
            checked += 1;
            let worst = worst_warp(&o, mb.metric);
            if worst as f64 > bound + 1e-6 {
                return Err(format!(
                    "{block:?}: {} simulated {worst} > bound {bound} = {}",
                    mb.metric.name(),
                    kb.names.render_bound(poly)
                ));
            }
        }
    }
    Ok(checked)
}

#[test]
fn random_kernels_stay_within_their_cost_bounds() {
    let cases = std::env::var("WARPCHECK_RANDOM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let seed: u64 = std::env::var("WARPCHECK_RANDOM_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEED);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let knobs = Knobs {
        header_loops: true,
        unsigned_ops: true,
        wide_loops: true,
    };
    let checked = RefCell::new(0usize);
    let result = runner.run(&program(knobs), |p| {
        let n = check(&p).map_err(|e| TestCaseError::fail(format!("{e}\n{p}")))?;
        *checked.borrow_mut() += n;
        Ok(())
    });
    let checked = checked.into_inner();
    eprintln!("random cost bounds: {checked} bounds checked");
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(
        checked >= MIN_CHECKED || (cases, seed) != (CASES, SEED),
        "only {checked} bounds checked, fewer than {MIN_CHECKED}: bounds the cost stage no \
         longer finds pass unchecked"
    );
}
