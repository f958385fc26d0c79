//! The grid barrier (`__warpcheck_grid_sync()`, what warpcheck's
//! `this_grid().sync()` calls): every thread of the launch meets there.
//! Blocks run one after another, so a block whose threads all arrive is
//! set aside until the last block arrives; this needs every block of the
//! launch, and a block that returns while others wait means the barrier
//! can never complete.

use super::block::Block;
use super::error::{ErrorKind, SimError};
use super::exec::Machine;

/// Where `block` waits, for messages.
fn place(m: &Machine, block: &Block) -> Option<Box<crate::ir::Position>> {
    let (func, pc) = block.grid_wait()?;
    m.position(func, pc).map(Box::new)
}

/// The refusal when only some blocks are simulated (`--blocks`).
pub fn needs_every_block(m: &Machine, block: &Block, total: u64) -> SimError {
    SimError {
        pos: place(m, block),
        block: Some(block.index),
        ..SimError::new(
            ErrorKind::Unsupported,
            format!(
                "the grid barrier (this_grid().sync()) needs every block of the launch, and only some of the grid's {total} are selected; run without --blocks"
            ),
        )
    }
}

/// Blocks wait at the grid barrier that block `gone` returned without
/// reaching.
pub fn deadlock(m: &Machine, waiting: &Block, gone: [u32; 3]) -> SimError {
    let [x, y, z] = gone;
    let [bx, by, bz] = waiting.index;
    SimError {
        pos: place(m, waiting),
        block: Some(waiting.index),
        ..SimError::new(
            ErrorKind::Deadlock,
            format!(
                "grid barrier divergence: block ({bx},{by},{bz}) waits at the grid barrier (this_grid().sync()) but block ({x},{y},{z}) returns without reaching it; the barrier can never complete (deadlock)"
            ),
        )
    }
}
