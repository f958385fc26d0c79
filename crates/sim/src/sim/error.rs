//! Why a simulation stopped, placed like compute-sanitizer places it: the
//! source line, the thread and block, and the offending address. A stop
//! caused by the kernel also says where each warp of its block was and
//! carries the costs counted until then.

use super::Outcome;
use crate::ir::Position;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad launch configuration or arguments.
    Usage,
    /// The kernel does something the simulator cannot run.
    Unsupported,
    /// An invalid or out-of-bounds memory access.
    Memory,
    /// `__trap()`, a failed `assert`, `unreachable`, a runaway stack.
    Trap,
    /// Threads wait at a `__syncthreads()` that can never complete.
    Deadlock,
    /// Warps repeat a loop iteration exactly while nothing can change
    /// the memory they read.
    Livelock,
    /// The launch used up its instruction budget.
    StepLimit,
    /// The launch used up its time budget.
    Timeout,
    /// The launch's records reached its memory budget.
    MemoryLimit,
}

impl ErrorKind {
    /// Whether the kernel's run stopped (as opposed to never starting
    /// because of how it was asked to run): exit code 1, with a report.
    pub fn is_kernel_fault(self) -> bool {
        !matches!(self, ErrorKind::Usage | ErrorKind::Unsupported)
    }

    /// The report's `status`, for a kernel fault.
    pub fn status(self) -> &'static str {
        match self {
            ErrorKind::Usage => "usage",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Memory => "memory-error",
            ErrorKind::Trap => "trap",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Livelock => "livelock",
            ErrorKind::StepLimit => "step-limit",
            ErrorKind::Timeout => "timeout",
            ErrorKind::MemoryLimit => "memory-limit",
        }
    }
}

/// What some lanes of a warp were doing when the run stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LaneState {
    /// About to run the instruction at `pos` (the warp that was stopped,
    /// or one the scheduler had not run yet).
    Running,
    /// Waiting at the `__syncthreads()` at `pos`.
    AtBarrier,
    /// Repeating an iteration that changes nothing (livelock).
    Spinning,
    /// Left behind at a branch, to run from `pos` later.
    Pending,
    /// Left behind where no `__syncthreads()` can be reached: they will
    /// return without meeting one.
    Returning,
    Exited,
}

impl LaneState {
    pub fn name(self) -> &'static str {
        match self {
            LaneState::Running => "running",
            LaneState::AtBarrier => "barrier",
            LaneState::Spinning => "spinning",
            LaneState::Pending => "pending",
            LaneState::Returning => "returning",
            LaneState::Exited => "exited",
        }
    }
}

/// A group of lanes of one warp in the same state at the same place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneGroup {
    pub block: [u32; 3],
    pub warp: u32,
    pub lanes: u32,
    pub state: LaneState,
    /// The instruction the lanes run next (or wait at); none for exited lanes.
    pub pos: Option<Position>,
    /// The innermost loop around `pos`, placed at the branch that closes it.
    pub in_loop: Option<Position>,
}

#[derive(Clone, Debug)]
pub struct SimError {
    pub kind: ErrorKind,
    pub message: String,
    /// Boxed to keep `Result<_, SimError>` small.
    pub pos: Option<Box<Position>>,
    pub block: Option<[u32; 3]>,
    pub thread: Option<[u32; 3]>,
    pub address: Option<u64>,
    /// What a kernel fault leaves behind (boxed, as `pos`).
    pub details: Box<Details>,
}

/// Where a stopped kernel was and what it had done.
#[derive(Clone, Debug, Default)]
pub struct Details {
    /// Where the lanes of the stopped block were, warp by warp.
    pub warps: Vec<LaneGroup>,
    /// The loads and atomics a spinning warp repeats (livelock).
    pub reads: Vec<Position>,
    /// The launch up to the stop: costs, buffers, `printf` output.
    pub partial: Option<Outcome>,
}

impl SimError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        SimError {
            kind,
            message: message.into(),
            pos: None,
            block: None,
            thread: None,
            address: None,
            details: Box::default(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Usage, message)
    }
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = &self.pos {
            write!(f, "{}:{}:{}: ", p.file, p.line, p.col)?;
        }
        write!(f, "{}", self.message)?;
        match (self.thread, self.block) {
            (Some([tx, ty, tz]), Some([bx, by, bz])) => write!(
                f,
                "\n    by thread ({tx},{ty},{tz}) in block ({bx},{by},{bz})"
            )?,
            (None, Some([bx, by, bz])) => write!(f, "\n    in block ({bx},{by},{bz})")?,
            _ => {}
        }
        Ok(())
    }
}

impl std::error::Error for SimError {}
