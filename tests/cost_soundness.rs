//! The acceptance core of the cost bounds: for every evaluation kernel
//! (our versions of RaCuda's §7 suite), every metric and many random
//! parameters and launch shapes (fixed seed), the simulated cost of every
//! warp is at most the bound evaluated at those parameters. Zero
//! violations. The bound/simulated ratios are printed per kernel and
//! metric (`cargo test --test cost_soundness -- --nocapture`). Each launch
//! also runs in cycle mode on the A100 model, and `warpcheck time`'s
//! bounds (abstract CTA and work/span) must cover its cycles.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use std::collections::BTreeMap;
use warpcheck::analysis::{self, BlockDim, BlockDimSource, Options};
use warpcheck::cost;
use warpcheck::cost::bound::Params;
use warpcheck::ir::Module;
use warpcheck::machine::Machine;
use warpcheck::sim::{ArgValue, Init, LaunchConfig};
use warpcheck::taint::ifds::IfdsTaint;
use warpcheck::timing::bounds::{time_kernel, Request};

/// SplitMix64: the same draws on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// One launch: grid, arguments, the integer parameters by name, and
/// dynamic shared memory.
struct Launch {
    grid: [u32; 3],
    args: Vec<(String, ArgValue)>,
    ints: Vec<(&'static str, i64)>,
    shared: u64,
}

impl Launch {
    /// Buffers `args`, then the integer parameters `ints` in order.
    fn new(
        grid: [u32; 3],
        mut args: Vec<(String, ArgValue)>,
        ints: &[(&'static str, i64)],
    ) -> Launch {
        args.extend(ints.iter().map(|&(n, v)| int(n, i128::from(v))));
        Launch {
            grid,
            args,
            ints: ints.to_vec(),
            shared: 0,
        }
    }
}

fn zeros(name: &str, bytes: u64) -> (String, ArgValue) {
    buf(name, bytes.max(4), Init::Zero)
}

/// A kernel of the suite: where it is, the block shapes to analyse it
/// at, and how to draw a launch for a block shape.
struct Case {
    file: &'static str,
    kernel: &'static str,
    blocks: &'static [[u32; 3]],
    draw: fn(&mut Rng, [u32; 3]) -> Launch,
    /// One of RaCuda's benchmarks (POPL 2021, Table 2), counted in the
    /// tightness table's mean.
    racuda: bool,
}

fn addsub(rng: &mut Rng, b: [u32; 3], rows_per_thread: u64) -> Launch {
    let g = rng.range(1, 3) as u32;
    let (w, h) = (rng.range(0, 150), 2 * rng.range(0, 40));
    let threads = u64::from(g * b[0]);
    let (w64, h64) = (w as u64, h as u64);
    // addSub0/1 index B by thread row, addSub2/3 by row j < h and column i.
    let b_bytes = 4 * (rows_per_thread * threads * w64 + (h64 + 1) * (w64 + threads) + threads);
    Launch::new(
        [g, 1, 1],
        vec![zeros("A", 4 * (w64 + threads)), zeros("B", b_bytes)],
        &[("w", w), ("h", h)],
    )
}

fn addsub_rows(rng: &mut Rng, b: [u32; 3]) -> Launch {
    addsub(rng, b, 2)
}

fn vector_add(rng: &mut Rng, b: [u32; 3]) -> Launch {
    let n = rng.range(0, 2000);
    let g = (n as u32).div_ceil(b[0]).max(1) + rng.range(0, 1) as u32;
    let bytes = 4 * u64::from(g * b[0]);
    Launch::new(
        [g, 1, 1],
        vec![zeros("A", bytes), zeros("B", bytes), zeros("C", bytes)],
        &[("N", n)],
    )
}

fn mat_mul(rng: &mut Rng, _b: [u32; 3]) -> Launch {
    let n = 32 * rng.range(1, 4);
    let g = (n / 32) as u32;
    let bytes = 4 * (n * n) as u64;
    Launch::new(
        [g, g, 1],
        vec![zeros("A", bytes), zeros("B", bytes), zeros("C", bytes)],
        &[("N", n)],
    )
}

fn reduce(rng: &mut Rng, b: [u32; 3]) -> Launch {
    let g = rng.range(1, 4) as u32;
    let n = rng.range(0, i64::from(2 * g * b[0]));
    Launch {
        shared: 4 * u64::from(b[0]),
        ..Launch::new(
            [g, 1, 1],
            vec![
                buf("g_idata", 8 * u64::from(g * b[0]), Init::Iota),
                zeros("g_odata", 4 * u64::from(g)),
            ],
            &[("n", n)],
        )
    }
}

fn histogram(rng: &mut Rng, _b: [u32; 3]) -> Launch {
    let g = rng.range(1, 4) as u32;
    let n = rng.range(0, 3000);
    Launch::new(
        [g, 1, 1],
        vec![
            // The worst input for the shared histogram (RaCuda measures
            // it so too): byte 32·(p mod 8) at p, so a warp's 32 bytes are
            // 8 distinct bins of one bank, 4 lanes on each: the atomic
            // serialises all 32 lanes on that bank, 32 wavefronts.
            data(
                "data",
                (0..n.max(4)).map(|p| (32 * (p % 8)) as u8).collect(),
            ),
            zeros("hist", 4 * 256),
        ],
        &[("n", n)],
    )
}

/// cost_unroll.cu: loops clang unrolls into a main loop and a remainder
/// of `n & (U-1)` trips; n from below 0 (no iteration) past several
/// unrolled rounds, so every remainder length and the guard that skips
/// the main loop are drawn.
fn unroll(rng: &mut Rng, b: [u32; 3]) -> Launch {
    unroll_from(rng, b, -3)
}

/// The same with an unsigned count (never below 0).
fn unroll_unsigned(rng: &mut Rng, b: [u32; 3]) -> Launch {
    unroll_from(rng, b, 0)
}

fn unroll_from(rng: &mut Rng, b: [u32; 3], least: i64) -> Launch {
    let g = rng.range(1, 2) as u32;
    let (n, m) = (rng.range(least, 40), rng.range(0, 4));
    let threads = u64::from(g * b[0]);
    let a_bytes = 4 * (threads + 32 * n.max(0) as u64);
    Launch::new(
        [g, 1, 1],
        vec![zeros("a", a_bytes), zeros("out", 4 * threads)],
        &[("n", n), ("m", m)],
    )
}

/// SYN-BRDIS: M steps of the shared loop, N rounds; `a[t + 1]` and
/// `b[t + 1]` are read.
fn syn_brdis(rng: &mut Rng, b: [u32; 3]) -> Launch {
    let g = rng.range(1, 2) as u32;
    let (m, n) = (rng.range(0, 6), rng.range(0, 8));
    let bytes = 4 * (u64::from(g * b[0]) + 1);
    Launch::new(
        [g, 1, 1],
        vec![zeros("a", bytes), zeros("b", bytes)],
        &[("M", m), ("N", n)],
    )
}

fn mandelbrot(rng: &mut Rng, b: [u32; 3]) -> Launch {
    // Worst inputs, as RaCuda measures: an even h puts row h/2 on the
    // real axis (cy = 0), where the pixels with cx in (−2, 0.25) never
    // escape, so its warps run all max_iter iterations.
    let (w, h) = (rng.range(2, 100), 2 * rng.range(1, 3));
    let max_iter = rng.range(0, 200);
    let gx = (w as u32).div_ceil(b[0]) + rng.range(0, 1) as u32;
    let gy = h as u32 + rng.range(0, 1) as u32;
    Launch::new(
        [gx, gy, 1],
        vec![zeros("out", 4 * u64::from(gx * b[0]) * u64::from(gy))],
        &[("w", w), ("h", h), ("max_iter", max_iter)],
    )
}

fn triangular(rng: &mut Rng, b: [u32; 3]) -> Launch {
    let n = rng.range(0, 40);
    let g = rng.range(1, 2) as u32;
    let m_bytes = 4 * 32 * (n * n + n + 1) as u64;
    Launch::new(
        [g, 1, 1],
        vec![zeros("M", m_bytes), zeros("out", 4 * u64::from(g * b[0]))],
        &[("n", n)],
    )
}

/// The samples' matrixMul: wA and wB multiples of 16, a grid of
/// wB/16 × hA/16 blocks of 16 × 16.
fn matrix_mul_sdk(rng: &mut Rng, _b: [u32; 3]) -> Launch {
    let (wa, wb, ha) = (
        16 * rng.range(1, 4),
        16 * rng.range(1, 3),
        16 * rng.range(1, 3),
    );
    let bytes = |r: i64, c: i64| 4 * (r * c) as u64;
    Launch::new(
        [(wb / 16) as u32, (ha / 16) as u32, 1],
        vec![
            zeros("C", bytes(ha, wb)),
            zeros("A", bytes(ha, wa)),
            zeros("B", bytes(wa, wb)),
        ],
        &[("wA", wa), ("wB", wb)],
    )
}

/// rowTiles: n elements per block row, any n (a tail the block's lanes
/// split), several block rows.
fn row_tiles(rng: &mut Rng, b: [u32; 3]) -> Launch {
    let n = rng.range(0, 300);
    let gy = rng.range(1, 4) as u32;
    Launch::new(
        [1, gy, 1],
        vec![
            zeros("out", 4 * u64::from(gy * b[0])),
            zeros("in", 4 * (n as u64) * u64::from(gy)),
        ],
        &[("n", n)],
    )
}

/// cost_sweep.cu's `ladderRounds`: `rounds` entries into reduce1's ladder.
fn sweep_rounds(rng: &mut Rng, b: [u32; 3]) -> Launch {
    Launch {
        shared: 4 * u64::from(b[0]),
        ..Launch::new(
            [1, 1, 1],
            vec![zeros("out", 16)],
            &[("rounds", rng.range(0, 3))],
        )
    }
}

/// `wideLadder`: the ladder on doubles.
fn sweep_wide(_rng: &mut Rng, b: [u32; 3]) -> Launch {
    Launch {
        shared: 8 * u64::from(b[0]),
        ..Launch::new([1, 1, 1], vec![zeros("out", 8)], &[])
    }
}

/// `twice`: each lane's `skip` drawn, so the odd lanes that reach the
/// access apart from the even ones vary.
fn sweep_twice(rng: &mut Rng, b: [u32; 3]) -> Launch {
    let threads = u64::from(b[0]);
    let skip = (0..threads)
        .flat_map(|_| (rng.range(0, 1) as i32).to_le_bytes())
        .collect();
    Launch {
        shared: 4 * threads * threads / 2,
        ..Launch::new(
            [1, 1, 1],
            vec![data("skip", skip), zeros("out", 4 * threads)],
            &[],
        )
    }
}

const ONE_D: &[[u32; 3]] = &[[64, 1, 1], [96, 1, 1], [48, 1, 1]];
const REDUCE: &[[u32; 3]] = &[[256, 1, 1], [64, 1, 1]];

fn cases() -> Vec<Case> {
    let addsub_file = "tests/fixtures/cu/cost_addsub.cu";
    let reduce_file = "tests/fixtures/cu/cost_reduce.cu";
    let mut v = Vec::new();
    for k in ["addSub0", "addSub1", "addSub2", "addSub3"] {
        v.push(Case {
            file: addsub_file,
            kernel: k,
            blocks: ONE_D,
            draw: addsub_rows,
            racuda: true,
        });
    }
    v.push(Case {
        file: "tests/fixtures/cu/cost_vector_add.cu",
        kernel: "vectorAdd",
        blocks: &[[256, 1, 1], [96, 1, 1]],
        draw: vector_add,
        racuda: true,
    });
    v.push(Case {
        file: "tests/fixtures/cu/cost_matmul.cu",
        kernel: "matMul",
        blocks: &[[32, 32, 1]],
        draw: mat_mul,
        racuda: true,
    });
    for k in ["reduce0", "reduce1", "reduce2", "reduce3"] {
        v.push(Case {
            file: reduce_file,
            kernel: k,
            blocks: REDUCE,
            draw: reduce,
            racuda: true,
        });
    }
    v.push(Case {
        file: "tests/fixtures/cu/cost_histogram.cu",
        kernel: "histogram256",
        blocks: &[[64, 1, 1], [256, 1, 1]],
        draw: histogram,
        racuda: true,
    });
    v.push(Case {
        file: "tests/fixtures/cu/cost_mandelbrot.cu",
        kernel: "mandelbrot",
        blocks: &[[32, 1, 1], [64, 1, 1]],
        draw: mandelbrot,
        racuda: true,
    });
    v.push(Case {
        file: "tests/fixtures/cu/cost_tiled.cu",
        kernel: "matrixMulSDK",
        blocks: &[[16, 16, 1]],
        draw: matrix_mul_sdk,
        racuda: true,
    });
    v.push(Case {
        file: "tests/fixtures/cu/cost_tiled.cu",
        kernel: "rowTiles",
        blocks: &[[32, 1, 1], [64, 1, 1], [48, 1, 1]],
        draw: row_tiles,
        racuda: false,
    });
    v.push(Case {
        file: "tests/fixtures/cu/cost_triangular.cu",
        kernel: "triangular",
        blocks: &[[32, 1, 1], [64, 1, 1]],
        draw: triangular,
        racuda: false,
    });
    let racuda_file = "tests/fixtures/cu/cost_racuda.cu";
    for k in ["matMulBad", "matMulTrans"] {
        v.push(Case {
            file: racuda_file,
            kernel: k,
            blocks: &[[32, 32, 1]],
            draw: mat_mul,
            racuda: true,
        });
    }
    for k in ["reduce2a", "reduce3a"] {
        v.push(Case {
            file: racuda_file,
            kernel: k,
            blocks: REDUCE,
            draw: reduce,
            racuda: true,
        });
    }
    for k in ["synBrdis", "synBrdisOpt"] {
        v.push(Case {
            file: racuda_file,
            kernel: k,
            blocks: &[[64, 1, 1], [32, 1, 1]],
            draw: syn_brdis,
            racuda: true,
        });
    }
    for k in [
        "unrollChain",
        "unrollRows",
        "unrollSum",
        "unrollUnsigned",
        "unrollTriangle",
    ] {
        v.push(Case {
            file: "tests/fixtures/cu/cost_unroll.cu",
            kernel: k,
            blocks: &[[32, 1, 1], [64, 1, 1]],
            draw: if k == "unrollUnsigned" {
                unroll_unsigned
            } else {
                unroll
            },
            racuda: false,
        });
    }
    let sweep_file = "tests/fixtures/cu/cost_sweep.cu";
    type Draw = fn(&mut Rng, [u32; 3]) -> Launch;
    let sweeps: [(&str, &'static [[u32; 3]], Draw); 3] = [
        ("ladderRounds", &[[64, 1, 1], [256, 1, 1]], sweep_rounds),
        ("wideLadder", &[[64, 1, 1], [256, 1, 1]], sweep_wide),
        ("twice", &[[32, 1, 1], [64, 1, 1]], sweep_twice),
    ];
    for (k, blocks, draw) in sweeps {
        v.push(Case {
            file: sweep_file,
            kernel: k,
            blocks,
            draw,
            racuda: false,
        });
    }
    for k in ["stepUpLe", "stepDownGt"] {
        v.push(Case {
            file: "tests/fixtures/cu/cost_steps.cu",
            kernel: k,
            blocks: &[[32, 1, 1], [64, 1, 1]],
            draw: unroll,
            racuda: false,
        });
    }
    v
}

/// Launches per kernel and block shape.
const DRAWS: usize = 6;

#[derive(Default)]
struct Ratios {
    sum: f64,
    count: usize,
    worst: f64,
    /// Launches whose simulated cost was 0: with a bound of 0 too, and
    /// with a positive bound.
    zero_exact: usize,
    zero_loose: usize,
}

fn bounds_for(
    m: &Module,
    block: [u32; 3],
) -> (
    warpcheck::analysis::ModuleAnalysis<'_>,
    Vec<cost::KernelBounds>,
) {
    let opts = Options {
        block_dim: Some(
            BlockDim::parse(
                &format!("{},{},{}", block[0], block[1], block[2]),
                BlockDimSource::Option,
            )
            .unwrap(),
        ),
        no_explanations: true,
        ..Options::default()
    };
    let a = analysis::analyze(m, &opts, &IfdsTaint);
    let figures = warpcheck::checks::measure_all(&a);
    let copts = cost::Options {
        attribution: false,
        ..cost::Options::default()
    };
    let b = cost::bound_module(&a, &figures, &copts, &warpcheck::budget::Budget::CLI);
    (a, b)
}

/// The tightness table: per kernel and metric the mean and worst
/// bound/simulated over the launches with a cost, then the mean over
/// RaCuda's benchmarks (`scripts/racuda-table.sh` reads the `tightness`
/// lines); returns that mean.
fn print_table(ratios: &BTreeMap<(String, &str), Ratios>) -> f64 {
    let racuda: Vec<&str> = cases()
        .iter()
        .filter(|c| c.racuda)
        .map(|c| c.kernel)
        .collect();
    eprintln!("kernel metric: mean and worst bound/simulated over launches with a cost");
    let (mut sum, mut count) = (0.0, 0);
    for ((k, metric), r) in ratios {
        let ours = racuda.contains(&k.as_str());
        let theirs = if ours { "" } else { " (not RaCuda's)" };
        if r.count == 0 {
            // Simulated 0 in every launch: exact when the bound is 0 too.
            let what = if r.zero_loose == 0 { "0=0" } else { "0<bound" };
            eprintln!(
                "tightness {k:14} {metric:10} zero {what} launches {}{theirs}",
                r.zero_exact + r.zero_loose
            );
            continue;
        }
        let mean = r.sum / r.count as f64;
        eprintln!(
            "tightness {k:14} {metric:10} mean {mean:.3} worst {:.3} launches {} (and {} at 0=0, {} at 0<bound){theirs}",
            r.worst, r.count, r.zero_exact, r.zero_loose
        );
        if ours {
            sum += mean;
            count += 1;
        }
    }
    let mean = sum / f64::from(count.max(1));
    eprintln!("tightness mean over RaCuda's kernels and metrics: {mean:.3} ({count} pairs)");
    mean
}

/// Issue 24's target for the mean bound/simulated over RaCuda's kernels
/// and metrics. Clang 22 makes reduce2a/3a's `blockDim.x / (2·d)` a second
/// halving counter, which the ACF's ladder (one counter a loop) does not
/// sweep: its divwarps bounds are looser there (1.155 at this seed), so that
/// build is held to 1.16, against a regression.
const TIGHTNESS_TARGET: f64 = if warpcheck::ir::major::LLVM_MAJOR >= 22 {
    1.16
} else {
    1.15
};

#[test]
fn simulated_warps_stay_within_their_bounds() {
    let mut rng = Rng(0x5eed_c057);
    let mut modules: BTreeMap<&str, Module> = BTreeMap::new();
    let mut violations = Vec::new();
    let mut missing = Vec::new();
    let mut ratios: BTreeMap<(String, &str), Ratios> = BTreeMap::new();
    for case in cases() {
        let m = modules
            .entry(case.file)
            .or_insert_with(|| compile(case.file));
        let k = kernel(m, case.kernel);
        for &block in case.blocks {
            let (a, bounds) = bounds_for(m, block);
            let figures = warpcheck::checks::measure_all(&a);
            let i = a.kernels.iter().position(|x| x.kernel == k).unwrap();
            let kb = &bounds[i];
            for mb in &kb.metrics {
                if let Err(e) = &mb.bound {
                    missing.push(format!(
                        "{} {:?} {}: {e}",
                        case.kernel,
                        block,
                        mb.metric.name()
                    ));
                }
            }
            for _ in 0..DRAWS {
                let l = (case.draw)(&mut rng, block);
                let config = LaunchConfig {
                    grid: l.grid,
                    block,
                    dynamic_shared: l.shared,
                    machine: Some(Machine::a100()),
                    ..LaunchConfig::default()
                };
                let o = run(m, case.kernel, &config, &l.args);
                let at = Params {
                    values: l
                        .ints
                        .iter()
                        .map(|&(n, v)| (n.to_string(), v as f64))
                        .collect(),
                    grid: l.grid,
                };
                // `warpcheck time` on the A100 model covers cycle mode's
                // launch and slowest block, by each method with a bound.
                let ki = a.kernels.iter().position(|x| x.kernel == k).unwrap();
                let req = Request {
                    machine: &Machine::a100(),
                    at: &at,
                    dynamic_shared: l.shared,
                };
                let meter = warpcheck::budget::Budget::CLI.start();
                let g = a.graphs.func(k);
                let tb = time_kernel(m, g, &a.kernels[ki], &figures[ki], &req, &meter);
                let cycles = o.cycles.as_ref().expect("cycle mode");
                let (launch, slowest) = (cycles.launch_cycles, cycles.max_block_cycles());
                let mut timed = false;
                for (method, c) in [
                    ("abstract-cta", &tb.abstract_cta),
                    ("work-span", &tb.work_span_cycles),
                ] {
                    let Ok(c) = c else { continue };
                    timed = true;
                    if c.launch + 1e-6 < launch as f64 || c.block + 1e-6 < slowest as f64 {
                        violations.push(format!(
                            "{} block {block:?} grid {:?} {:?}: time ({method}) launch {} / block {} below the simulated {launch} / {slowest} cycles",
                            case.kernel, l.grid, l.ints, c.launch, c.block
                        ));
                    }
                }
                if !timed {
                    missing.push(format!("{} {block:?}: no time bound", case.kernel));
                }
                for mb in &kb.metrics {
                    let Ok(b) = &mb.bound else { continue };
                    // The least of the bound's pieces (each bounds on its own).
                    let bound = kb
                        .names
                        .eval_bound(b, &at)
                        .expect("every parameter has a value");
                    let worst = worst_warp(&o, mb.metric);
                    if worst as f64 > bound + 1e-6 {
                        violations.push(format!(
                            "{} block {:?} grid {:?} {:?}: {} simulated {worst} > bound {bound} = {}",
                            case.kernel,
                            block,
                            l.grid,
                            l.ints,
                            mb.metric.name(),
                            kb.names.render_bound(b)
                        ));
                    }
                    let r = ratios
                        .entry((case.kernel.to_string(), mb.metric.name()))
                        .or_default();
                    if worst == 0 {
                        if bound <= 1e-6 {
                            r.zero_exact += 1;
                        } else {
                            r.zero_loose += 1;
                        }
                    } else {
                        let x = bound / worst as f64;
                        r.sum += x;
                        r.count += 1;
                        r.worst = r.worst.max(x);
                    }
                }
            }
        }
    }
    let mean = print_table(&ratios);
    assert!(
        violations.is_empty(),
        "bounds below the simulation:\n{}",
        violations.join("\n")
    );
    assert!(
        missing.is_empty(),
        "kernels without a bound:\n{}",
        missing.join("\n")
    );
    assert!(
        mean <= TIGHTNESS_TARGET,
        "mean bound/simulated over RaCuda's kernels {mean:.3} > {TIGHTNESS_TARGET}"
    );
}
