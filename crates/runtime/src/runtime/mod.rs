//! The CUDA runtime API on the CPU, for `warpcheck run`: a program's host
//! code is linked against these C functions (exported from warpcheck's
//! shared library), and every kernel it launches runs in the simulator on
//! device memory that lives for the whole run (`sim::Device`).
//!
//! The device module travels inside the program: `warpcheck run` hands
//! each host compile the module's bitcode as its "GPU binary"
//! (`container`), which clang's registration code passes to
//! `__cudaRegisterFatBinary` before `main`, with each kernel's host stub
//! and each variable's host shadow and device name. Launches and copies
//! then find the kernel or variable by the host address the program uses.
//! At exit the runtime writes what it measured (`report`) to the file
//! `warpcheck run` names in [`REPORT_ENV`].
//!
//! **Invariant:** depends on `ir`, `sim` and the machine model only, never
//! on the analyses.

mod api;
pub mod container;
mod errors;
mod managed;
pub mod report;
mod sanitize;
mod state;

/// The file the runtime writes its report to at exit.
pub const REPORT_ENV: &str = "WARPCHECK_RUN_REPORT";
/// Machine-model settings (`KEY=VALUE`, one a line) for cycle mode and the
/// device properties.
pub const MACHINE_ENV: &str = "WARPCHECK_RUN_MACHINE";
/// The GPU architecture the device side was compiled for (`sm_80`).
pub const ARCH_ENV: &str = "WARPCHECK_RUN_ARCH";
/// Threads each launch's blocks run on (`run -j`; 0 or unset: every core).
pub const THREADS_ENV: &str = "WARPCHECK_RUN_THREADS";
