//! Reading the files users name: only regular files, each within a size
//! limit.
//!
//! A FIFO given as an input blocks a reader forever, `/dev/zero` (or a
//! symlink to it) never ends, and a directory makes the compiler say
//! something confusing. Every file warpcheck reads because a user named it
//! (inputs, configurations, weights, compile databases) is opened here
//! without blocking, refused unless it is a regular file, and read no
//! further than its limit, so a file that grows while it is read is
//! refused too.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a path is, in words, when it is not a regular file.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

/// The largest source file read: as a `.cu` input, or as the file debug
/// information names (for excerpts, `NOLINT` comments and fixes).
pub const MAX_SOURCE_BYTES: u64 = 256 << 20;

/// The text of a source file that a module's debug information names:
/// `None` unless it is a regular UTF-8 file within [`MAX_SOURCE_BYTES`].
/// The IR names it, so a hostile module could name a FIFO or a device.
pub fn source_text(path: &Path) -> Option<String> {
    read_text(path, "source", MAX_SOURCE_BYTES).ok()
}

/// `path`'s size, after checking that it names (through any symlinks) a
/// regular file of at most `limit` bytes; `what` says what the file is
/// for, in messages ("configuration", "input").
pub fn regular(path: &Path, what: &str, limit: u64) -> Result<u64, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {}", path.display(), plain(&e)))?;
    check(path, what, limit, &meta)
}

fn check(path: &Path, what: &str, limit: u64, meta: &std::fs::Metadata) -> Result<u64, String> {
    if !meta.is_file() {
        return Err(format!(
            "{}: {} is not a regular file ({})",
            path.display(),
            what,
            kind(meta.file_type())
        ));
    }
    if meta.len() > limit {
        return Err(too_large(path, what, limit));
    }
    Ok(meta.len())
}

fn too_large(path: &Path, what: &str, limit: u64) -> String {
    format!(
        "{}: {} larger than the limit of {}",
        path.display(),
        what,
        bytes(limit)
    )
}

/// A byte count for people: `1 MiB`, `64 KiB`, `100 bytes`.
pub fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// An I/O error without Rust's `(os error N)`.
fn plain(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}

/// The bytes of `path`, a regular file of at most `limit` bytes. The file
/// is opened without blocking (a FIFO's open would wait for a writer), its
/// type checked on the open handle, and at most `limit + 1` bytes read.
pub fn read(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("{}: cannot read the {what}: {}", path.display(), plain(&e)))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: cannot read the {what}: {}", path.display(), plain(&e)))?;
    let len = check(path, what, limit, &meta)?;
    let mut out = Vec::new();
    out.try_reserve_exact(usize::try_from(len).unwrap_or(usize::MAX))
        .map_err(|_| format!("{}: no memory for {}", path.display(), bytes(len)))?;
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("{}: cannot read the {what}: {}", path.display(), plain(&e)))?;
    if out.len() as u64 > limit {
        return Err(too_large(path, what, limit));
    }
    Ok(out)
}

/// [`read`], as UTF-8 text.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String, String> {
    String::from_utf8(read(path, what, limit)?)
        .map_err(|e| format!("{}: the {what} is not UTF-8 text: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_their_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.yaml");
        std::fs::write(&f, "0123456789").unwrap();
        assert_eq!(read_text(&f, "configuration", 10).unwrap(), "0123456789");
        assert_eq!(regular(&f, "input", 10), Ok(10));
        let e = read(&f, "configuration", 9).unwrap_err();
        assert!(
            e.ends_with("configuration larger than the limit of 9 bytes"),
            "{e}"
        );
        let e = read(dir.path(), "input", 1 << 20).unwrap_err();
        assert!(
            e.ends_with("input is not a regular file (a directory)"),
            "{e}"
        );
        let e = regular(&dir.path().join("none"), "input", 1).unwrap_err();
        assert!(e.ends_with("none: no such file"), "{e}");
        // A FIFO is refused at once, never waited on.
        let fifo = dir.path().join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo, "configuration", 1 << 20).unwrap_err();
        assert!(e.ends_with("(a FIFO)"), "{e}");
        // A symlink to /dev/zero is the device it names.
        let zero = dir.path().join("z.ll");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read(&zero, "input", 1 << 20).unwrap_err();
        assert!(e.ends_with("(a character device)"), "{e}");
        assert_eq!(bytes(1 << 20), "1 MiB");
        assert_eq!(bytes(1000), "1000 bytes");
    }
}
