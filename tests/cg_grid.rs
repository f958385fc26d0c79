//! The grid barrier (`this_grid().sync()`; `tests/fixtures/cu/cg_grid.cu`):
//! blocks run one after another, each set aside at the barrier until all
//! have arrived. Warpcheck's own groups call `__warpcheck_grid_sync()`;
//! CUDA 12.4's spin on a counter in the launch's workspace, which works
//! because a block whose warps spin is set aside until another changes
//! memory (the toolkit half is skipped, saying why, without a toolkit).

#[path = "common/sim.rs"]
mod helpers;

use helpers::common;
use helpers::*;
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::Module;
use warpcheck::sim::{ErrorKind, Init, LaunchConfig};

const FIXTURE: &str = "tests/fixtures/cu/cg_grid.cu";

/// Each route's module: ours, and CUDA 12.4's where it can be had.
fn routes() -> Vec<(&'static str, Module)> {
    let mut all = vec![("own headers", compile_no_cuda(FIXTURE))];
    if let Some(root) = common::cuda_toolkit_or_skip("the toolkit route") {
        let opts = CompileOptions {
            full_debug: true,
            cuda_path: Some(root),
            ..CompileOptions::default()
        };
        let m = frontend::load(&fixture(FIXTURE), &opts).unwrap();
        all.push(("CUDA 12.4", m));
    }
    all
}

#[test]
fn blocks_meet_at_the_grid_barrier() {
    for (route, m) in routes() {
        mirror(route, &m);
    }
}

fn mirror(route: &str, m: &Module) {
    // 4 blocks of 64: 256 threads. Thread i writes 2i, then reads what
    // thread 255 - i wrote: 2 (255 - i). Block 0 reads block 3's words,
    // which it could not see if the blocks did not wait for each other.
    let o = run(
        m,
        "mirror",
        &launch([4, 1, 1], [64, 1, 1]),
        &[buf("data", 1024, Init::Zero), buf("out", 1024, Init::Zero)],
    );
    let want: Vec<i32> = (0..256).map(|i| 2 * (255 - i)).collect();
    assert_eq!(ints(&o, "out"), want, "{route}");
    // After the second barrier every thread writes -1.
    assert_eq!(ints(&o, "data"), vec![-1; 256], "{route}");
    // Every block and warp is counted once: 4 blocks of 2 warps.
    assert_eq!(o.blocks.len(), 4, "{route}");
    assert_eq!(o.warps.len(), 8, "{route}");
}

#[test]
fn a_block_waiting_for_a_later_one_is_set_aside() {
    let m = compile(FIXTURE);
    // Block 0's thread 0 spins until block 2 sets the flag to 5.
    let o = run(
        &m,
        "wait_for_last",
        &launch([3, 1, 1], [32, 1, 1]),
        &[buf("flag", 4, Init::Zero), buf("out", 4, Init::Zero)],
    );
    assert_eq!(ints(&o, "out"), [5]);
    // Block 0 completes last.
    let order: Vec<u32> = o.blocks.iter().map(|b| b.block[0]).collect();
    assert_eq!(order, [1, 2, 0]);
    // With one block, block 0 is also the last, and its thread 0 would set
    // the flag only after leaving the loop: a livelock, as before.
    let e = try_run(
        &m,
        "wait_for_last",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("flag", 4, Init::Zero), buf("out", 4, Init::Zero)],
    );
    assert_eq!(e.unwrap_err().kind, ErrorKind::Livelock);
}

#[test]
fn a_subset_of_blocks_is_refused() {
    let m = compile_no_cuda(FIXTURE);
    let config = LaunchConfig {
        blocks: Some(vec![1..=2]),
        ..launch([4, 1, 1], [64, 1, 1])
    };
    let e = try_run(
        &m,
        "mirror",
        &config,
        &[buf("data", 1024, Init::Zero), buf("out", 1024, Init::Zero)],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(e.message.contains("needs every block"), "{e}");
    // Placed at the first grid.sync(), line 12.
    assert_eq!(e.pos.as_ref().map(|p| p.line), Some(12));
}

#[test]
fn a_block_that_returns_before_the_barrier_deadlocks_it() {
    let m = compile_no_cuda(FIXTURE);
    let e = try_run(
        &m,
        "early_exit",
        &launch([3, 1, 1], [32, 1, 1]),
        &[buf("data", 128, Init::Zero)],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Deadlock);
    // Block 0 waits at line 24; block 1 returned at line 22.
    assert!(
        e.message
            .contains("block (1,0,0) returns without reaching it"),
        "{e}"
    );
    assert_eq!(e.pos.as_ref().map(|p| p.line), Some(24));
    // The launch so far: all three blocks' counters.
    assert_eq!(e.details.partial.as_ref().map(|o| o.blocks.len()), Some(3));
}
