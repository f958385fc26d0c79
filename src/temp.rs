//! Temporary files and directories, and child processes, that a signal
//! does not leave behind.
//!
//! `timeout` and CI runners stop a run with SIGTERM, a terminal with
//! SIGINT; either kills the process before `Drop` removes its temporary
//! directories, and neither reaches the compilers it started (`timeout`
//! signals one process). Every temporary path and every child process is
//! registered here while it lives, and [`install`] (the CLI calls it; the
//! plugin, living in clang's process, never does) makes those signals end
//! the children and remove the paths before the process dies of the
//! signal as it would have. SIGKILL leaves the paths behind: each run's
//! directory is named for its process, and [`sweep`] removes those whose
//! process is gone.
//!
//! A signal handler may only do async-signal-safe things, so it writes the
//! signal's number to a pipe; a thread waiting on the pipe removes the
//! paths, then restores the default action and raises the signal again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// The live temporary paths, each with its registration's id.
static LIVE: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
/// The running child processes, by process id.
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// The start of every temporary directory's name; the process id follows.
const PREFIX: &str = "warpcheck-";
static NEXT: AtomicU64 = AtomicU64::new(0);
/// The pipe's write end, for the handler (an atomic load is
/// async-signal-safe).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

/// A path removed on SIGINT/SIGTERM while this lives.
#[derive(Debug)]
pub struct Registration(u64);

impl Registration {
    pub fn new(path: &Path) -> Registration {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        live().push((id, path.to_path_buf()));
        Registration(id)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        live().retain(|(id, _)| *id != self.0);
    }
}

fn live() -> std::sync::MutexGuard<'static, Vec<(u64, PathBuf)>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A temporary directory, removed when dropped or on a signal.
#[derive(Debug)]
pub struct TempDir {
    // Dropped in order: the registration outlives the removal.
    dir: tempfile::TempDir,
    _registered: Registration,
}

impl TempDir {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A new temporary directory under `$TMPDIR`, named for this process
/// (`warpcheck-PID@HOST-…`) so that [`sweep`] can tell when it is left
/// over.
pub fn tempdir() -> std::io::Result<TempDir> {
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{}@{}-", std::process::id(), host()))
        .tempdir()?;
    let _registered = Registration::new(dir.path());
    Ok(TempDir { dir, _registered })
}

/// This machine's name (a container's own), so that runs on machines
/// that share a `$TMPDIR` never judge each other's process ids.
fn host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname(2) writes at most `buf.len()` bytes into it.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name: String = String::from_utf8_lossy(&buf[..end])
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_')
        .collect();
    if ok && !name.is_empty() {
        name
    } else {
        "localhost".into()
    }
}

/// Removes the temporary directories of earlier runs that were killed
/// (SIGKILL, a power cut) before they could: those under `$TMPDIR` named
/// for a process of this machine that no longer runs. A directory of a
/// live process, or of one whose id was reused, is left alone; it goes
/// the next time.
pub fn sweep() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    let here = host();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|owner| owner.split_once('@'))
            .filter(|(_, h)| *h == here)
            .and_then(|(p, _)| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid > 0 && !alive(pid) && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Whether process `pid` exists (ours or another user's).
fn alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Runs `cmd` to its end as [`std::process::Command::output`] does, with
/// the child registered so that SIGINT/SIGTERM end it too.
pub fn output(cmd: &mut std::process::Command) -> std::io::Result<std::process::Output> {
    use std::process::Stdio;
    let (child, _registered) = spawn(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )?;
    child.wait_with_output()
}

/// Runs `cmd` to its end as [`std::process::Command::status`] does (its
/// output and input are ours), with the child registered.
pub fn status(cmd: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    let (mut child, _registered) = spawn(cmd)?;
    child.wait()
}

/// A running child, ended on SIGINT/SIGTERM while this lives (drop it
/// only once the child has been waited for).
#[derive(Debug)]
pub struct ChildRegistration(u32);

/// Starts `cmd` and registers it with the list locked throughout, so a
/// signal that arrives between the start and the registration waits for
/// the registration and ends the child too.
pub fn spawn(
    cmd: &mut std::process::Command,
) -> std::io::Result<(std::process::Child, ChildRegistration)> {
    let mut list = children();
    let child = cmd.spawn()?;
    let pid = child.id();
    list.push(pid);
    Ok((child, ChildRegistration(pid)))
}

impl Drop for ChildRegistration {
    fn drop(&mut self) {
        children().retain(|&p| p != self.0);
    }
}

fn children() -> std::sync::MutexGuard<'static, Vec<u32>> {
    CHILDREN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends every registered child with `sig` and waits for each (a signal is
/// ending the process; the paths they write go next).
fn end_children(sig: libc::c_int) {
    for &pid in children().iter() {
        let Ok(pid) = i32::try_from(pid) else {
            continue;
        };
        // SAFETY: signals and reaps our own child; the registration is
        // dropped only after its wait, so the id is not yet reused.
        unsafe {
            libc::kill(pid, sig);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
}

/// Removes every registered path (a signal is ending the process).
fn remove_all() {
    for (_, p) in live().iter() {
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(p);
        } else {
            let _ = std::fs::remove_file(p);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let byte = sig as u8;
    // SAFETY: write(2) is async-signal-safe; PIPE_WRITE is set before the
    // handler is installed and never changes afterwards.
    unsafe {
        libc::write(
            PIPE_WRITE.load(Ordering::Relaxed),
            std::ptr::addr_of!(byte).cast::<libc::c_void>(),
            1,
        );
    }
}

/// Set once a signal is ending the process: the main thread must not
/// exit on its own then (a child the signal ended looks like a failed
/// compile to it), or the process would end with a status, not the signal.
static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Exits with `code`, unless a signal is ending the process: then waits
/// for the signal's thread to finish it.
pub fn exit(code: i32) -> ! {
    if ENDING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    std::process::exit(code)
}

/// Makes SIGINT and SIGTERM remove the registered paths first. Once per
/// process; nothing is installed if the pipe or thread cannot be made.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: a plain pipe(2) into a local array.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return;
        }
        let read_end = fds[0];
        let waiter = std::thread::Builder::new()
            .name("warpcheck-signals".into())
            .spawn(move || {
                let mut byte = 0u8;
                // SAFETY: reads one byte into a local.
                let n = unsafe {
                    libc::read(
                        read_end,
                        std::ptr::addr_of_mut!(byte).cast::<libc::c_void>(),
                        1,
                    )
                };
                if n != 1 {
                    return;
                }
                let sig = libc::c_int::from(byte);
                ENDING.store(true, Ordering::SeqCst);
                end_children(sig);
                remove_all();
                // SAFETY: back to the default action, then die of it.
                unsafe {
                    libc::signal(sig, libc::SIG_DFL);
                    libc::raise(sig);
                }
            });
        if waiter.is_err() {
            return;
        }
        PIPE_WRITE.store(fds[1], Ordering::Relaxed);
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: installs an async-signal-safe handler.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_of_dead_processes_are_swept() {
        // A directory named for a process that cannot exist (ids stop
        // below 2^22), and one for this process.
        let tmp = std::env::temp_dir();
        let dead = tmp.join(format!("{PREFIX}999999999@{}-test", host()));
        // Another machine's run, which this one cannot judge.
        let elsewhere = tmp.join(format!("{PREFIX}999999999@elsewhere.example-test"));
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::create_dir_all(dead.join("inner")).unwrap();
        let mine = tempdir().unwrap();
        sweep();
        assert!(!dead.exists());
        assert!(elsewhere.is_dir());
        std::fs::remove_dir(&elsewhere).unwrap();
        assert!(mine.path().is_dir());
        assert!(!alive(999_999_999));
        assert!(alive(std::process::id() as i32));
    }

    #[test]
    fn children_are_registered_while_they_run() {
        let out = output(std::process::Command::new("sh").args(["-c", "echo hi"])).unwrap();
        assert_eq!(out.stdout, b"hi\n");
        assert!(children().is_empty());
    }

    #[test]
    fn registrations_come_and_go() {
        let d = tempdir().unwrap();
        let p = d.path().to_path_buf();
        assert!(live().iter().any(|(_, q)| *q == p));
        drop(d);
        assert!(!p.exists());
        assert!(!live().iter().any(|(_, q)| *q == p));
    }
}
