//! The compatibility header, parsed once.
//!
//! Without a toolkit every `.cu` compile force-includes `warpcheck_cuda.h`,
//! and parsing it costs clang more than a typical kernel does. So the
//! headers are written once into the cache (`$XDG_CACHE_HOME/warpcheck`,
//! else `~/.cache/warpcheck`), in a directory named by their contents, and
//! the header is precompiled once per clang and per set of compile flags.
//! Both are created under a temporary name and renamed into place, so
//! concurrent runs never see half a file. Anything that fails falls back to
//! parsing the header as before; `WARPCHECK_NO_PCH=1` turns the PCH off.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// FNV-1a over the parts: stable across runs, unlike std's hasher.
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn key(parts: impl Hash) -> String {
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    parts.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// warpcheck's cache directory.
pub fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("warpcheck"))
}

/// Moves the finished `tmp` to `to` unless another run got there first.
fn publish(tmp: &Path, to: &Path) -> bool {
    std::fs::rename(tmp, to).is_ok() || to.exists()
}

/// A directory holding the files `write` creates, named by `contents`
/// (what decides them), made once; `None` if the cache is not writable.
pub fn shared_dir(
    name: &str,
    contents: impl Hash,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Option<PathBuf> {
    shared_dir_in(&cache_dir()?, name, contents, write)
}

fn shared_dir_in(
    root: &Path,
    name: &str,
    contents: impl Hash,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Option<PathBuf> {
    let dir = root.join(format!("{name}-{}", key(contents)));
    if dir.is_dir() {
        return Some(dir);
    }
    std::fs::create_dir_all(root).ok()?;
    let tmp = tempfile::tempdir_in(root).ok()?;
    write(tmp.path()).ok()?;
    let tmp = tmp.keep();
    if publish(&tmp, &dir) {
        // Lost a race: the other run's directory is the same.
        let _ = std::fs::remove_dir_all(&tmp);
        Some(dir)
    } else {
        None
    }
}

/// The precompiled `header` for a compile with `flags` (the compile's
/// arguments without the input, the output and the `-include`), built on
/// first use.
pub fn precompiled(clang: &Path, header: &Path, flags: &[String]) -> Option<PathBuf> {
    if std::env::var_os("WARPCHECK_NO_PCH").is_some_and(|v| v != "0") {
        return None;
    }
    // The clang binary's identity: path, size and modification time.
    let meta = std::fs::metadata(clang).ok()?;
    let stamp = (
        clang.to_path_buf(),
        meta.len(),
        meta.modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?,
    );
    let root = cache_dir()?.join("pch");
    let pch = root.join(format!("{}.pch", key((stamp, header, flags))));
    if pch.is_file() {
        return Some(pch);
    }
    std::fs::create_dir_all(&root).ok()?;
    let tmp = tempfile::Builder::new()
        .suffix(".pch.tmp")
        .tempfile_in(&root)
        .ok()?
        .into_temp_path();
    let built = Command::new(clang)
        .args(flags)
        .args([
            "-fsyntax-only",
            "-Xclang",
            "-emit-pch",
            "-Xclang",
            "-o",
            "-Xclang",
        ])
        .arg(&*tmp)
        .arg(header)
        .output()
        .ok()?;
    if !built.status.success() {
        return None;
    }
    let tmp = tmp.keep().ok()?;
    publish(&tmp, &pch).then_some(pch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_tell_flags_apart() {
        assert_eq!(key(("a", 1)), key(("a", 1)));
        assert_ne!(key(("a", vec!["-DX"])), key(("a", vec!["-DY"])));
        assert_eq!(key(("a", 1)).len(), 16);
    }

    #[test]
    fn a_shared_dir_is_made_once() {
        let cache = tempfile::tempdir().unwrap();
        let mut writes = 0;
        let a = shared_dir_in(cache.path(), "h", "v1", |d| {
            writes += 1;
            std::fs::write(d.join("f"), "x")
        })
        .unwrap();
        let b = shared_dir_in(cache.path(), "h", "v1", |_| panic!("written twice")).unwrap();
        assert_eq!(a, b);
        assert_eq!(writes, 1);
        assert_eq!(std::fs::read_to_string(a.join("f")).unwrap(), "x");
        let c = shared_dir_in(cache.path(), "h", "v2", |d| {
            std::fs::write(d.join("f"), "y")
        });
        assert_ne!(c.unwrap(), a);
    }
}
