//! The grid barrier (`this_grid().sync()` of warpcheck's own cooperative
//! groups): blocks run one after another, each set aside at the barrier
//! until all have arrived (`tests/fixtures/cu/cg_grid.cu`).

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim::{ErrorKind, Init, LaunchConfig};

const FIXTURE: &str = "tests/fixtures/cu/cg_grid.cu";

#[test]
fn blocks_meet_at_the_grid_barrier() {
    let m = compile_no_cuda(FIXTURE);
    // 4 blocks of 64: 256 threads. Thread i writes 2i, then reads what
    // thread 255 - i wrote: 2 (255 - i). Block 0 reads block 3's words,
    // which it could not see if the blocks did not wait for each other.
    let o = run(
        &m,
        "mirror",
        &launch([4, 1, 1], [64, 1, 1]),
        &[buf("data", 1024, Init::Zero), buf("out", 1024, Init::Zero)],
    );
    let want: Vec<i32> = (0..256).map(|i| 2 * (255 - i)).collect();
    assert_eq!(ints(&o, "out"), want);
    // After the second barrier every thread writes -1.
    assert_eq!(ints(&o, "data"), vec![-1; 256]);
    // Every block and warp is counted once: 4 blocks of 2 warps.
    assert_eq!(o.blocks.len(), 4);
    assert_eq!(o.warps.len(), 8);
}

#[test]
fn a_subset_of_blocks_is_refused() {
    let m = compile_no_cuda(FIXTURE);
    let config = LaunchConfig {
        blocks: Some(vec![1, 2]),
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
