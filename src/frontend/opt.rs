//! LLVM's own UniformityAnalysis, run by the `opt` of this build's LLVM
//! major on the IR a module came from, for `warpcheck check
//! --compare-uniformity`.

use super::{clang::find_llvm_tool, InputError, IrSource};
use std::path::PathBuf;
use std::process::Command;

/// `$WARPCHECK_OPT`, `opt-<major>` on the PATH, or Debian's LLVM prefix.
pub fn find_opt() -> Option<PathBuf> {
    find_llvm_tool("WARPCHECK_OPT", "opt")
}

/// What `opt -passes='print<uniformity>' -disable-output` prints.
pub fn print_uniformity(ir: &IrSource) -> Result<String, InputError> {
    let opt = find_opt().ok_or_else(|| InputError {
        message: format!(
            "--compare-uniformity needs opt-{} (run scripts/setup.sh, or set WARPCHECK_OPT)",
            crate::ir::major::LLVM_MAJOR
        ),
    })?;
    let err = |message: String| InputError { message };
    // Bitcode from clang goes through a temporary file, kept until opt ran.
    let (path, _temp) = match ir {
        IrSource::File(p) => (p.clone(), None),
        IrSource::Bitcode(bytes) => {
            let file = tempfile::Builder::new()
                .suffix(".bc")
                .tempfile()
                .map_err(|e| err(format!("cannot create a temporary file: {e}")))?;
            let registered = crate::temp::Registration::new(file.path());
            std::fs::write(file.path(), bytes)
                .map_err(|e| err(format!("cannot write {}: {e}", file.path().display())))?;
            (file.path().to_path_buf(), Some((file, registered)))
        }
    };
    let output = crate::temp::output(
        Command::new(&opt)
            .args(["-passes=print<uniformity>", "-disable-output"])
            .arg(&path),
    )
    .map_err(|e| err(format!("cannot run {}: {e}", opt.display())))?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(err(format!(
            "{}\n{}: opt failed ({})",
            stderr.trim_end(),
            path.display(),
            output.status
        )));
    }
    // The printer writes to stderr; take stdout too in case that changes.
    Ok(String::from_utf8_lossy(&output.stdout).into_owned() + &stderr)
}
