//! Why a simulation stopped, placed like compute-sanitizer places it: the
//! source line, the thread and block, and the offending address.

use crate::diag::Position;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad launch configuration or arguments.
    Usage,
    /// The kernel does something the simulator cannot run.
    Unsupported,
    /// An invalid or out-of-bounds memory access.
    Memory,
    /// `__syncthreads()` not reached by every thread of the block.
    BarrierDivergence,
    /// `__trap()`, a failed `assert`, `unreachable`, a runaway stack.
    Trap,
}

impl ErrorKind {
    /// Whether the kernel itself is at fault (as opposed to how it was run).
    pub fn is_kernel_fault(self) -> bool {
        matches!(
            self,
            ErrorKind::Memory | ErrorKind::BarrierDivergence | ErrorKind::Trap
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError {
    pub kind: ErrorKind,
    pub message: String,
    /// Boxed to keep `Result<_, SimError>` small.
    pub pos: Option<Box<Position>>,
    pub block: Option<[u32; 3]>,
    pub thread: Option<[u32; 3]>,
    pub address: Option<u64>,
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
