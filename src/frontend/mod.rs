//! Turns what the user names on the command line into our IR: `.ll` and
//! `.bc` are read directly, `.cu` files go through clang-19 first.

mod clang;
mod toolkit;

pub use clang::{find_clang, CompileOptions};
pub use toolkit::Toolkit;

use crate::ir::{self, Module};
use std::path::Path;

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
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    if !path.exists() {
        return Err(InputError {
            message: format!("{}: no such file", path.display()),
        });
    }
    match ext {
        "ll" | "bc" => Ok(ir::llvm::load_file(path)?),
        "cu" | "cuh" => clang::compile(path, opts),
        _ => Err(InputError {
            message: format!(
                "{}: unknown input kind '.{ext}' (expected .cu, .ll or .bc)",
                path.display()
            ),
        }),
    }
}
