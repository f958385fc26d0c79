//! Turns what the user names on the command line into our IR: `.ll` and
//! `.bc` are read directly, `.cu` files go through clang first (the one of
//! this build's LLVM major, unless told otherwise).

mod clang;
pub mod compdb;
pub mod flags;
mod host;
pub mod nvcc;
mod opt;
pub mod pch;
mod toolkit;
pub mod untrusted;

pub use clang::{clang_major, find_clang, find_llvm_tool, on_path, CompileOptions};
pub use host::{launches as host_launches, launches_unless_recorded, program_object};
pub use opt::{find_opt, print_uniformity};
pub use toolkit::Toolkit;

use crate::ir::{self, Module};
use std::path::{Path, PathBuf};

/// Why an input could not be turned into IR. Always a user-facing problem
/// (exit code 2), never a warpcheck bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<ir::llvm::LoadError> for InputError {
    fn from(e: ir::llvm::LoadError) -> Self {
        InputError { message: e.message }
    }
}

/// Loads one input file by its extension.
pub fn load(path: &Path, opts: &CompileOptions) -> Result<Module, InputError> {
    match input_kind(path)? {
        InputKind::Ir => {
            untrusted::probe(path)?;
            Ok(ir::llvm::load_file(path)?)
        }
        InputKind::Cuda => clang::compile(path, opts),
    }
}

/// Like [`load`], with the kernel launches the frontend action read from a
/// `.cu` file's AST when `opts.frontend_plugin` names warpcheck's plugin
/// (`None` for IR, without the plugin, or when it recorded nothing).
pub fn load_with_launches(
    path: &Path,
    opts: &CompileOptions,
) -> Result<(Module, Option<Vec<ir::launch::HostLaunch>>), InputError> {
    match input_kind(path)? {
        InputKind::Ir => Ok((ir::llvm::load_file(path)?, None)),
        InputKind::Cuda => clang::compile_with_launches(path, opts),
    }
}

/// The LLVM IR a module was read from.
#[derive(Clone, Debug)]
pub enum IrSource {
    /// A `.ll` or `.bc` file given as input.
    File(PathBuf),
    /// The bitcode clang produced for a `.cu` file.
    Bitcode(Vec<u8>),
}

/// Like [`load`], and keeps the IR the module came from.
pub fn load_with_ir(path: &Path, opts: &CompileOptions) -> Result<(Module, IrSource), InputError> {
    match input_kind(path)? {
        InputKind::Ir => {
            untrusted::probe(path)?;
            Ok((
                ir::llvm::load_file(path)?,
                IrSource::File(path.to_path_buf()),
            ))
        }
        InputKind::Cuda => {
            clang::compile_keeping_bitcode(path, opts).map(|(m, bc)| (m, IrSource::Bitcode(bc)))
        }
    }
}

enum InputKind {
    Ir,
    Cuda,
}

/// The largest `.ll`/`.bc` input: far above any real module (the memory
/// budget refuses most of this size first, from the file's size).
pub const MAX_IR_BYTES: u64 = 4 << 30;
/// The largest `.cu` input.
pub const MAX_SOURCE_BYTES: u64 = crate::files::MAX_SOURCE_BYTES;

/// What `path` is, after checking that it is a regular file within its
/// kind's size limit: a FIFO, a device or a directory is refused before
/// anything opens it.
fn input_kind(path: &Path) -> Result<InputKind, InputError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let limit = match ext {
        "ll" | "bc" => MAX_IR_BYTES,
        _ => MAX_SOURCE_BYTES,
    };
    crate::files::regular(path, "input", limit).map_err(|message| InputError { message })?;
    match ext {
        "ll" | "bc" => Ok(InputKind::Ir),
        "cu" | "cuh" => Ok(InputKind::Cuda),
        _ => Err(InputError {
            message: format!(
                "{}: unknown input kind '.{ext}' (expected .cu, .ll or .bc)",
                path.display()
            ),
        }),
    }
}
