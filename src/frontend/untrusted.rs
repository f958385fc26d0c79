//! `.ll` and `.bc` files a user names are read first in a child process.
//!
//! LLVM's readers trust their input: one flipped bit in a bitcode file can
//! abort (an assertion's `report_fatal_error`) or segfault inside the
//! bitcode reader, and a text module nested deep enough overflows the
//! parser's stack. In our own process that would take every other file's
//! results with it. So the CLI reads each such file once in a child (this
//! same program, run as `warpcheck __read-ir --serve`, which reads the
//! files it is sent one after another): a child that dies of a signal
//! makes the file an input error naming it (the next file starts a new
//! child), and only a file the child read whole is read again here. One
//! child serves a whole run, so its start (loading libLLVM) is paid once.
//! Clang's own output is trusted and read directly, and so is everything
//! in the plugin, whose module the host compiler has already read.

use super::InputError;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The hidden subcommand the child runs.
pub const READ_IR: &str = "__read-ir";
/// Its flag for serving a run: paths in on stdin, verdicts out on stdout.
const SERVE: &str = "--serve";

/// The program whose [`READ_IR`] reads files in a child; unset (library
/// use, the plugin), files are read in this process.
static READER: OnceLock<PathBuf> = OnceLock::new();
/// The running child, started on first use; `None` after one died.
static SERVER: Mutex<Option<Server>> = Mutex::new(None);

/// Reads untrusted IR through `program`'s [`READ_IR`] from now on.
pub fn read_in_children_of(program: PathBuf) {
    let _ = READER.set(program);
}

/// The child and our end of a socket pair, its stdin and stdout: a write
/// to a child that died is an error here, never a SIGPIPE (sockets are
/// written with `MSG_NOSIGNAL`).
struct Server {
    child: Child,
    line: UnixStream,
    _registered: crate::temp::ChildRegistration,
}

impl Server {
    fn start(program: &Path) -> std::io::Result<Server> {
        let (line, theirs) = UnixStream::pair()?;
        let theirs = std::os::fd::OwnedFd::from(theirs);
        let (child, _registered) = crate::temp::spawn(
            Command::new(program)
                .args([READ_IR, SERVE])
                .stdin(Stdio::from(theirs.try_clone()?))
                .stdout(Stdio::from(theirs))
                .stderr(Stdio::null()),
        )?;
        Ok(Server {
            child,
            line,
            _registered,
        })
    }

    /// Sends `path`; the child's message, empty when it read the file.
    fn ask(&mut self, path: &Path) -> std::io::Result<String> {
        use std::os::unix::ffi::OsStrExt;
        send(&mut self.line, path.as_os_str().as_bytes())?;
        let answer = receive(&mut self.line)?;
        Ok(String::from_utf8_lossy(&answer).into_owned())
    }
}

/// A message: its length as 8 bytes, then its bytes.
fn send(to: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    to.write_all(&(bytes.len() as u64).to_le_bytes())?;
    to.write_all(bytes)?;
    to.flush()
}

fn receive(from: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    from.read_exact(&mut len)?;
    let len = usize::try_from(u64::from_le_bytes(len))
        .map_err(|_| std::io::Error::other("a message too long"))?;
    let mut bytes = Vec::new();
    from.take(len as u64).read_to_end(&mut bytes)?;
    if bytes.len() != len {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    Ok(bytes)
}

/// Checks that `path` can be read without crashing, in the child when one
/// is set up: `Err` names the file and what went wrong.
pub(super) fn probe(path: &Path) -> Result<(), InputError> {
    let Some(program) = READER.get() else {
        return Ok(());
    };
    let mut server = SERVER.lock().unwrap_or_else(|p| p.into_inner());
    if server.is_none() {
        *server = Some(Server::start(program).map_err(|e| InputError {
            message: format!(
                "{}: cannot start a reader ({}): {e}",
                path.display(),
                program.display()
            ),
        })?);
    }
    let s = server.as_mut().expect("started above");
    match s.ask(path) {
        Ok(message) if message.is_empty() => Ok(()),
        Ok(message) => Err(InputError { message }),
        // The child died on this file: how, and a new child next time.
        Err(_) => {
            let mut dead = server.take().expect("asked above");
            let _ = dead.line.shutdown(std::net::Shutdown::Both);
            let status = dead.child.wait();
            Err(InputError {
                message: crashed(path, status.ok()),
            })
        }
    }
}

fn crashed(path: &Path, status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.and_then(|s| s.signal()) {
        Some(sig) => format!(
            "{}: LLVM's reader crashed on this file ({}): it is damaged, or not IR that LLVM {} reads",
            path.display(),
            signal_name(sig),
            crate::ir::major::LLVM_MAJOR
        ),
        None => format!(
            "{}: the reader stopped on this file ({}): it is damaged, or not IR that LLVM {} reads",
            path.display(),
            status.map_or_else(|| "no status".to_string(), |s| s.to_string()),
            crate::ir::major::LLVM_MAJOR
        ),
    }
}

/// What the child runs: with `serve`, reads each path sent on stdin as
/// the parent would and answers an empty message, or the error; with a
/// file, reads it and exits 0, or 2 with the message on stderr.
pub fn child_main(serve: bool, file: Option<&Path>) -> i32 {
    if !serve {
        let Some(file) = file else {
            eprintln!("warpcheck: error: {READ_IR}: a file or {SERVE}");
            return 2;
        };
        return match crate::ir::llvm::load_file(file) {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("warpcheck: error: {}", InputError::from(e));
                2
            }
        };
    }
    use std::os::unix::ffi::OsStrExt;
    let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
    while let Ok(bytes) = receive(&mut input) {
        let path = Path::new(std::ffi::OsStr::from_bytes(&bytes));
        let answer = match crate::ir::llvm::load_file(path) {
            Ok(_) => String::new(),
            Err(e) => InputError::from(e).message,
        };
        if send(&mut output, answer.as_bytes()).is_err() {
            break;
        }
    }
    0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_whole() {
        let mut wire = Vec::new();
        send(&mut wire, b"a/b.ll").unwrap();
        send(&mut wire, b"").unwrap();
        let mut from = wire.as_slice();
        assert_eq!(receive(&mut from).unwrap(), b"a/b.ll");
        assert_eq!(receive(&mut from).unwrap(), b"");
        assert!(receive(&mut from).is_err());
        // Cut short: an error, never a short message.
        let mut cut = &wire[..10];
        assert!(receive(&mut cut).is_err());
    }
}
