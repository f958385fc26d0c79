//! Temporary files and directories that a signal does not leave behind.
//!
//! `timeout` and CI runners stop a run with SIGTERM, a terminal with
//! SIGINT; either kills the process before `Drop` removes its temporary
//! directories. Every temporary path is registered here while it lives,
//! and [`install`] (the CLI calls it; the plugin, living in clang's
//! process, never does) makes those signals remove them all before the
//! process dies of the signal as it would have.
//!
//! A signal handler may only do async-signal-safe things, so it writes the
//! signal's number to a pipe; a thread waiting on the pipe removes the
//! paths, then restores the default action and raises the signal again.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// The live temporary paths, each with its registration's id.
static LIVE: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
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

/// A new temporary directory under `$TMPDIR`.
pub fn tempdir() -> std::io::Result<TempDir> {
    let dir = tempfile::tempdir()?;
    let _registered = Registration::new(dir.path());
    Ok(TempDir { dir, _registered })
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
                remove_all();
                let sig = libc::c_int::from(byte);
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
    fn registrations_come_and_go() {
        let d = tempdir().unwrap();
        let p = d.path().to_path_buf();
        assert!(live().iter().any(|(_, q)| *q == p));
        drop(d);
        assert!(!p.exists());
        assert!(!live().iter().any(|(_, q)| *q == p));
    }
}
