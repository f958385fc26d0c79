//! `.ll` and `.bc` files a user names are read first in a child process.
//!
//! LLVM's readers trust their input: one flipped bit in a bitcode file can
//! abort (an assertion's `report_fatal_error`) or segfault inside the
//! bitcode reader, and a text module nested deep enough overflows the
//! parser's stack. In our own process that would take every other file's
//! results with it. So the CLI reads each such file once in a child (this
//! same program, run as `warpcheck __read-ir FILE`): a child that dies of
//! a signal makes the file an input error naming it, and only a file the
//! child read whole is read again here. Clang's own output is trusted and
//! read directly, and so is everything in the plugin, whose module the
//! host compiler has already read.

use super::InputError;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The hidden subcommand the child runs.
pub const READ_IR: &str = "__read-ir";

/// The program whose [`READ_IR`] reads files in a child; unset (library
/// use, the plugin), files are read in this process.
static READER: OnceLock<PathBuf> = OnceLock::new();

/// Reads untrusted IR through `program`'s [`READ_IR`] from now on.
pub fn read_in_children_of(program: PathBuf) {
    let _ = READER.set(program);
}

/// Checks that `path` can be read without crashing, in a child process
/// when one is set up: `Err` names the file and what went wrong.
pub(super) fn probe(path: &Path) -> Result<(), InputError> {
    let Some(program) = READER.get() else {
        return Ok(());
    };
    let out = crate::temp::output(std::process::Command::new(program).arg(READ_IR).arg(path))
        .map_err(|e| InputError {
            message: format!(
                "{}: cannot start a reader ({}): {e}",
                path.display(),
                program.display()
            ),
        })?;
    if out.status.success() {
        return Ok(());
    }
    use std::os::unix::process::ExitStatusExt;
    let said = String::from_utf8_lossy(&out.stderr);
    let message = match out.status.signal() {
        Some(sig) => format!(
            "{}: LLVM's reader crashed on this file ({}): it is damaged, or not IR that LLVM {} reads",
            path.display(),
            signal_name(sig),
            crate::ir::major::LLVM_MAJOR
        ),
        // The child's own message, which names the file.
        None => said
            .lines()
            .filter_map(|l| l.strip_prefix("warpcheck: error: "))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    Err(InputError {
        message: if message.is_empty() {
            format!("{}: cannot be read ({})", path.display(), out.status)
        } else {
            message
        },
    })
}

/// What the child runs: reads `path` as the parent would, and exits 0, or
/// 2 with the message on stderr.
pub fn child_main(path: &Path) -> i32 {
    match crate::ir::llvm::load_file(path) {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("warpcheck: error: {}", InputError::from(e));
            2
        }
    }
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGKILL => "SIGKILL".into(),
        other => format!("signal {other}"),
    }
}
