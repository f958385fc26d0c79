//! The acceptance core of `warpcheck time`: every static time bound is at
//! least the cycles the simulator's cycle mode measures under the same
//! machine model. Zero violations.
//!
//! Over every kernel of `tests/fixtures/cu`, `tests/fixtures/time` and
//! `examples`, and over random kernels from the random-kernel generator
//! (`common/random_kernel/`, with device functions dropped so that the
//! cost stage, which does not bound calls, can bound them), each launched
//! with random integer parameters, grids, block shapes and machine models
//! (issue rates, latencies, SMs, blocks per SM: waves; DRAM, L2 and
//! shared-memory throughput, low enough to bind). For each launch
//! and each method that gives a bound, the launch bound must cover the
//! launch's cycles and the block bound the slowest block. The simulator
//! is checked against Brent's bound too: each wave takes at most its work
//! over the issue rate plus its longest span.
//!
//! `cargo test --test time_soundness -- --nocapture` prints the mean and
//! worst bound/simulated ratio per kernel and method.
//! `WARPCHECK_TIME_RANDOM` sets how many random kernels (default
//! [`RANDOM_KERNELS`]); a violating random kernel is minimised and
//! printed.

#[path = "common/sim.rs"]
mod helpers;
#[path = "common/random_kernel/mod.rs"]
mod random_kernel;

use helpers::*;
use proptest::prelude::Rng;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use random_kernel::ast::Program;
use random_kernel::lower::{lower, KERNEL};
use random_kernel::strategy::{program, Knobs};
use std::collections::BTreeMap;
use std::path::Path;
use warpcheck::analysis::ModuleAnalysis;
use warpcheck::cost::bound::Params;
use warpcheck::ir::{FuncId, Module, TypeKind};
use warpcheck::machine::Machine;
use warpcheck::sim::{self, LaunchConfig};
use warpcheck::timing::bounds::{time_kernel, Cycles, Request};

/// Random kernels checked by a plain `cargo test`.
const RANDOM_KERNELS: u32 = 80;
/// Launches per fixture kernel (each with its own shape, grid, parameter
/// and machine).
const FIXTURE_DRAWS: usize = 2;
const SEED: u64 = 0x71_3e_50_0d;

fn pick<T: Copy>(rng: &mut TestRng, from: &[T]) -> T {
    from[(rng.next_u64() % from.len() as u64) as usize]
}

/// A random machine: the A100 model or the paper's, with some constants
/// changed (fewer SMs and blocks per SM make waves).
fn machine(rng: &mut TestRng) -> Machine {
    let mut m = pick(rng, &[true, false])
        .then(Machine::a100)
        .unwrap_or_else(Machine::paper);
    // Throughput limits low enough to bind on these small launches: 1 GB/s
    // moves under a byte per cycle, 4 bytes per cycle of L2, one
    // shared wavefront per cycle on the paper machine's free banks.
    let settings: [(&str, &[u32]); 12] = [
        ("issue_rate", &[1, 2, 4]),
        ("sms", &[1, 2, 3, 108]),
        ("blocks_per_sm", &[0, 0, 1, 2, 3]),
        ("alu_latency", &[1, 4, 6]),
        ("global_latency", &[10, 60, 400]),
        ("sector_cycles", &[0, 1, 3]),
        ("shared_latency", &[5, 24]),
        ("wavefront_cycles", &[0, 2]),
        ("barrier_cycles", &[0, 20]),
        ("dram_gbps", &[0, 1, 1555]),
        ("l2_bytes_per_cycle", &[0, 4, 5120]),
        ("shared_wavefronts_per_cycle", &[0, 1]),
    ];
    for (key, values) in settings {
        if rng.next_u64().is_multiple_of(2) {
            m.set(key, &pick(rng, values).to_string()).unwrap();
        }
    }
    m
}

#[derive(Default)]
struct Ratios {
    sum: f64,
    count: usize,
    worst: f64,
}

#[derive(Default)]
struct Stats {
    runs: usize,
    /// Launches the simulator stopped (faults, unsupported code).
    skipped: usize,
    /// Reasons for kernels (per launch) without a bound.
    no_bound: BTreeMap<String, usize>,
    bounded: usize,
    ratios: BTreeMap<(String, &'static str), Ratios>,
    violations: Vec<String>,
    waves: usize,
}

impl Stats {
    fn ratio(&mut self, label: &str, method: &'static str, r: f64) {
        let e = self.ratios.entry((label.to_string(), method)).or_default();
        e.sum += r;
        e.count += 1;
        e.worst = e.worst.max(r);
    }
}

/// One launch: the static bounds, the simulation, and the comparisons.
/// `Err` describes a violation.
fn check_launch(
    m: &Module,
    a: &ModuleAnalysis<'_>,
    k: FuncId,
    (machine, grid, int): (&Machine, [u32; 3], i128),
    label: &str,
    s: &mut Stats,
) -> Result<(), String> {
    let ki = a.kernels.iter().position(|x| x.kernel == k).unwrap();
    let kernel = &a.kernels[ki];
    let figures = warpcheck::checks::measure_all(a);
    let f = m.func(k);
    let values = f
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| matches!(m.types.kind(p.ty), TypeKind::Int(_)))
        .map(|(i, p)| {
            let name = p.name.clone().unwrap_or_else(|| format!("arg{i}"));
            (name, int as f64)
        })
        .collect();
    let at = Params { values, grid };
    let req = Request {
        machine,
        at: &at,
        dynamic_shared: 0,
    };
    let g = a.graphs.func(k);
    let meter = warpcheck::budget::Budget::CLI.start();
    let tb = time_kernel(m, g, kernel, &figures[ki], &req, &meter);
    let methods: Vec<(&'static str, Cycles)> = [
        ("abstract-cta", &tb.abstract_cta),
        ("work-span", &tb.work_span_cycles),
    ]
    .into_iter()
    .filter_map(|(n, c)| c.as_ref().ok().map(|c| (n, c.clone())))
    .collect();
    if methods.is_empty() {
        let why = tb.work_span_cycles.clone().err().unwrap_or_default();
        let why: String = why.chars().filter(|c| !c.is_ascii_digit()).collect();
        *s.no_bound.entry(why).or_default() += 1;
        return Ok(());
    }
    let config = LaunchConfig {
        grid,
        block: kernel.block_dim.dims,
        machine: Some(machine.clone()),
        ..LaunchConfig::default()
    };
    let Ok(o) = sim::simulate(m, k, &config, &iota_arguments(m, k, int)) else {
        s.skipped += 1;
        return Ok(());
    };
    s.runs += 1;
    s.bounded += 1;
    let c = o.cycles.expect("cycle mode");
    let (launch, block) = (c.launch_cycles, c.max_block_cycles());
    let what = || {
        format!(
            "{label} block {:?} grid {grid:?} n={int} on {machine:?}",
            kernel.block_dim.dims
        )
    };
    let mut bad = Vec::new();
    for (name, b) in &methods {
        if b.launch + 1e-6 < launch as f64 || b.block + 1e-6 < block as f64 {
            bad.push(format!(
                "{}: {name} bounds launch {} / block {} below the simulated {launch} / {block}",
                what(),
                b.launch,
                b.block
            ));
        }
        if launch > 0 {
            s.ratio(label, name, b.launch / launch as f64);
        }
    }
    // Brent in the simulator: per SM and wave, cycles <= W/P + S.
    let mut waves: BTreeMap<(u64, u64), (u64, u64, u64)> = BTreeMap::new();
    for b in &c.blocks {
        let w = waves.entry((b.sm, b.wave)).or_default();
        w.0 = w.0.max(b.cycles);
        w.1 += b.work;
        w.2 = w.2.max(b.span);
    }
    let p = u64::from(machine.issue_rate);
    for ((sm, wave), (cycles, work, span)) in &waves {
        s.waves += 1;
        if *cycles > work / p + span {
            bad.push(format!(
                "{}: SM {sm} wave {wave} took {cycles} cycles, more than W/P + S = {work}/{p} + {span}",
                what()
            ));
        }
    }
    match bad.is_empty() {
        true => Ok(()),
        false => Err(bad.join("\n")),
    }
}

fn shapes(m: &Module, k: FuncId) -> Vec<[u32; 3]> {
    let b = m.func(k).launch;
    b.reqntid
        .or(b.maxntid)
        .map_or_else(|| vec![[256, 1, 1], [64, 1, 1], [32, 8, 1]], |b| vec![b])
}

fn check_fixtures(rng: &mut TestRng, s: &mut Stats) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = cu_files(&root.join("tests/fixtures/cu"));
    files.extend(cu_files(&root.join("tests/fixtures/time")));
    files.extend(cu_files(&root.join("examples")));
    for path in &files {
        let m = compile(path.to_str().unwrap());
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let kernels: Vec<FuncId> = m.kernels().filter(|&k| !m.func(k).is_declaration).collect();
        let mut by_shape: BTreeMap<[u32; 3], Vec<FuncId>> = BTreeMap::new();
        for _ in 0..FIXTURE_DRAWS {
            for &k in &kernels {
                let all = shapes(&m, k);
                by_shape.entry(pick(rng, &all)).or_default().push(k);
            }
        }
        for (block, ks) in by_shape {
            let a = analyze_at(&m, block);
            for k in ks {
                let label = format!("{name}:{}", m.func(k).short_name());
                let grid = [1 + (rng.next_u64() % 5) as u32, pick(rng, &[1, 1, 2]), 1];
                let int = pick(rng, &[1, 7, 32, 128, 1000]);
                let machine = machine(rng);
                if let Err(e) = check_launch(&m, &a, k, (&machine, grid, int), &label, s) {
                    s.violations.push(e);
                }
            }
        }
    }
}

fn check_random(rng: &mut TestRng, count: u32, s: &mut Stats) {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(SEED)),
    );
    let knobs = Knobs {
        header_loops: true,
        unsigned_ops: true,
        wide_loops: false,
    };
    let strategy = program(knobs);
    let launches = [[64u32, 1, 1], [16, 4, 2], [96, 1, 1]];
    for i in 0..count {
        let mut p: Program = strategy.new_tree(&mut runner).unwrap().current();
        p.funcs.clear();
        let block = pick(rng, &launches);
        let grid = [1 + (rng.next_u64() % 4) as u32, 1, 1];
        let int = pick(rng, &[0, 3, 100]);
        let machine = machine(rng);
        let run = |q: &Program, s: &mut Stats| {
            let m = lower(q);
            let k = m.find_function(KERNEL).unwrap();
            let a = analyze_at(&m, block);
            check_launch(&m, &a, k, (&machine, grid, int), &format!("random#{i}"), s)
        };
        if let Err(e) = run(&p, s) {
            let small = random_kernel::minimize::minimize(&p, 2000, |q| {
                run(q, &mut Stats::default()).is_err()
            });
            s.violations
                .push(format!("{e}\nminimised kernel:\n{small}"));
        }
    }
}

fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&seed.to_le_bytes());
    b
}

#[test]
fn static_time_bounds_cover_the_simulated_cycles() {
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(SEED + 1));
    let mut fixtures = Stats::default();
    check_fixtures(&mut rng, &mut fixtures);
    let count = std::env::var("WARPCHECK_TIME_RANDOM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RANDOM_KERNELS);
    let mut random = Stats::default();
    check_random(&mut rng, count, &mut random);
    for (what, s) in [
        ("fixtures and examples", &fixtures),
        ("random kernels", &random),
    ] {
        eprintln!(
            "{what}: {} launches compared ({} skipped by the simulator), {} waves checked against W/P + S",
            s.runs, s.skipped, s.waves
        );
        for (why, n) in &s.no_bound {
            eprintln!("  no bound x{n}: {why}");
        }
    }
    eprintln!("kernel method: mean and worst bound/simulated (launch cycles)");
    for ((k, method), r) in fixtures.ratios.iter() {
        eprintln!(
            "{k:40} {method:13} mean {:.2} worst {:.2} ({} launches)",
            r.sum / r.count as f64,
            r.worst,
            r.count
        );
    }
    for (what, s) in [("fixtures", &fixtures), ("random", &random)] {
        let mut all: BTreeMap<&'static str, Ratios> = BTreeMap::new();
        for ((_, method), r) in &s.ratios {
            let a = all.entry(method).or_default();
            a.sum += r.sum;
            a.count += r.count;
            a.worst = a.worst.max(r.worst);
        }
        for (method, r) in &all {
            eprintln!(
                "{what} {method}: mean {:.2} worst {:.2} over {} launches",
                r.sum / r.count as f64,
                r.worst,
                r.count
            );
        }
    }
    let violations: Vec<&String> = fixtures
        .violations
        .iter()
        .chain(&random.violations)
        .collect();
    assert!(
        violations.is_empty(),
        "{} bounds below the simulation:\n{}",
        violations.len(),
        violations
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        fixtures.bounded > 40,
        "only {} fixture launches bounded",
        fixtures.bounded
    );
    assert!(
        random.bounded * 2 > count as usize,
        "only {} of {count} random kernels bounded",
        random.bounded
    );
}
