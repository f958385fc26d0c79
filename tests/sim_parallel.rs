//! Blocks on several threads give the launch that running them in order
//! gives: the same memory, counters, sites, output, cycles and sanitizer
//! findings. Launches whose blocks must share memory (atomics on global
//! memory, a block waiting for another) give the threads up and run in
//! order.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::ir::Module;
use warpcheck::sim::{ArgValue, Init, LaunchConfig, Outcome};

/// The launch on one thread and on `threads`, with everything each
/// measured (the threads apart) as text.
fn both(
    m: &Module,
    kernel: &str,
    config: &LaunchConfig,
    args: &[(String, ArgValue)],
    threads: usize,
) -> (Outcome, Outcome) {
    let one = run(
        m,
        kernel,
        &LaunchConfig {
            threads: 1,
            ..config.clone()
        },
        args,
    );
    let many = run(
        m,
        kernel,
        &LaunchConfig {
            threads,
            ..config.clone()
        },
        args,
    );
    assert_eq!(one.threads, 1);
    let shown = |o: &Outcome| {
        let mut o = o.clone();
        o.config.threads = 0;
        o.threads = 0;
        format!("{o:?}")
    };
    assert!(shown(&one) == shown(&many), "{kernel}: the outcomes differ");
    (one, many)
}

fn module() -> Module {
    compile("tests/fixtures/cu/sim_parallel.cu")
}

const BLOCKS: u32 = 64;
const N: u64 = BLOCKS as u64 * 256;

#[test]
fn independent_blocks_run_on_threads_as_in_order() {
    let m = module();
    // in[i] = i: block b's values grow with b, so `v > t` splits the
    // blocks around i = t / 408 (v = 3i * (1 + ... + 16) = 408 i).
    let input: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let args = [
        data("in", f32_bytes(&input)),
        buf("out", 4 * N, Init::Zero),
        buf("above", 4 * N, Init::Zero),
        int("n", N as i128),
        float("t", 408.0 * 5000.5),
    ];
    for machine in [None, Some(warpcheck::machine::Machine::default())] {
        let config = LaunchConfig {
            machine,
            ..launch([BLOCKS, 1, 1], [256, 1, 1])
        };
        let (one, many) = both(&m, "smooth", &config, &args, 3);
        assert_eq!(
            many.threads, 3,
            "the blocks after the first ran on 3 threads"
        );
        let above = ints(&one, "above");
        assert_eq!(above.iter().filter(|&&a| a == 1).count(), N as usize - 5001);
        assert_eq!(one.output, vec!["block 3 thread 232: 408000.000000\n"]);
    }
}

#[test]
fn global_atomics_and_waiting_blocks_run_in_order() {
    let m = module();
    // Block 0 has no atomic: the threads start, and block 40's atomic
    // sends the launch back to running in order.
    let args = [
        buf("data", 4 * N, Init::Iota),
        buf("count", 4, Init::Zero),
        int("from", 40),
    ];
    let (one, many) = both(
        &m,
        "late_atomics",
        &launch([BLOCKS, 1, 1], [256, 1, 1]),
        &args,
        2,
    );
    assert_eq!(many.threads, 1);
    assert!(ints(&one, "count")[0] > 0);
    // Each block waits for the one before: on threads, the second run's
    // first block would wait for ever.
    let args = [
        buf("flags", 4 * u64::from(BLOCKS), Init::Zero),
        buf("out", 4 * N, Init::Zero),
    ];
    let (one, many) = both(&m, "chain", &launch([BLOCKS, 1, 1], [256, 1, 1]), &args, 2);
    assert_eq!(many.threads, 1);
    assert!(ints(&one, "flags").iter().all(|&f| f == 1));
}

#[test]
fn sanitizer_findings_are_those_of_the_order() {
    let m = module();
    let config = LaunchConfig {
        sanitize: true,
        ..launch([BLOCKS, 1, 1], [256, 1, 1])
    };
    let args = [buf("out", 4 * N, Init::Zero), int("bad", 50)];
    let (one, many) = both(&m, "racy", &config, &args, 2);
    assert_eq!(many.threads, 2);
    // Thread t writes s[t] and reads s[255 - t] with no barrier in block
    // 50 only: one pair of places.
    let races = &one.sanitizer.races;
    assert_eq!(races.len(), 1, "{races:#?}");
    assert_eq!(races[0].block, [50, 0, 0]);
}
