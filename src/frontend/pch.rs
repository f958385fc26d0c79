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
//!
//! Each distinct flag set (`-D` included) makes its own PCH of a few MB, so
//! the PCHs are capped in all (`WARPCHECK_CACHE_MAX`, bytes with an optional
//! K/M/G, default 256M): a hit marks its file used (its modification time),
//! and a new one evicts the least recently used until it fits beside the
//! rest. The cap holds at every moment, not only once runs finish: a PCH is
//! built in the run's own temporary directory, and evicting and adding one
//! happen under a lock on the cache, so concurrent runs cannot together
//! push it past. Each run uses its own hard link (else copy) of the PCH, so
//! an eviction never removes a file that a compile is reading.

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
    let _registered = crate::temp::Registration::new(tmp.path());
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
/// first use. The path returned is this run's own name for it in `scratch`
/// (a hard link, else a copy), so that another run evicting the cached
/// file cannot pull it from under the compile.
pub fn precompiled(
    clang: &Path,
    header: &Path,
    flags: &[String],
    scratch: &Path,
) -> Option<PathBuf> {
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
    let name = format!("{}.pch", key((stamp, header, flags)));
    let mine = scratch.join(&name);
    if mine.is_file() {
        // This run has it already (a second compile with the same flags).
        return Some(mine);
    }
    if std::fs::create_dir_all(&root).is_ok() {
        if let Some(_lock) = lock(&root) {
            let cached = root.join(&name);
            if !looks_whole(&cached) {
                let _ = std::fs::remove_file(&cached);
            } else if take(&cached, &mine) {
                touch(&cached);
                return Some(mine);
            }
        }
    }
    // Built in the run's own directory, outside the capped one: a build
    // in progress never counts against the cap, nor leaves a file there
    // when the run is killed.
    let built = crate::temp::output(
        Command::new(clang)
            .args(flags)
            .args([
                "-fsyntax-only",
                "-Xclang",
                "-emit-pch",
                "-Xclang",
                "-o",
                "-Xclang",
            ])
            .arg(&mine)
            .arg(header),
    )
    .ok()?;
    if !built.status.success() {
        let _ = std::fs::remove_file(&mine);
        return None;
    }
    publish_pch(&root, &name, &mine, cache_max());
    Some(mine)
}

/// A clang PCH starts with this (`CPCH`, the AST file signature).
const MAGIC: &[u8] = b"CPCH";

/// Whether `pch` is a file that starts as a PCH does and is not cut short
/// to a few bytes. A PCH cut short further on fails the compile that
/// reads it: [`blamed`] and [`discard`] then rebuild it.
fn looks_whole(pch: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(pch) else {
        return false;
    };
    if !f.metadata().is_ok_and(|m| m.is_file() && m.len() >= 1024) {
        return false;
    }
    let mut head = [0u8; 4];
    f.take(4).read_exact(&mut head).is_ok() && head == MAGIC
}

/// Whether a failed compile's `stderr` blames the PCH `pch` it read (clang
/// names the file: "malformed or corrupted AST file", "PCH file … not
/// found", a signature mismatch; clang 22 says "malformed or corrupted
/// precompiled file" without naming it).
pub fn blamed(stderr: &[u8], pch: &Path) -> bool {
    let text = String::from_utf8_lossy(stderr);
    let name = pch.file_name().map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| text.contains(&n))
        || text.contains("AST file")
        || text.contains("corrupted precompiled file")
}

/// Drops the PCH `mine` (this run's name for a cached one) and the cached
/// file it came from, so that the next [`precompiled`] builds it again.
pub fn discard(mine: &Path) {
    let _ = std::fs::remove_file(mine);
    let (Some(root), Some(name)) = (cache_dir().map(|c| c.join("pch")), mine.file_name()) else {
        return;
    };
    if let Some(_lock) = lock(&root) {
        let _ = std::fs::remove_file(root.join(name));
    }
}

/// Holds the cache's lock while alive: hits, evictions and publications
/// take it in turn, so that the PCHs never add up to more than the cap,
/// however many runs share the cache. `None` where the file system cannot
/// lock (the cache is then left alone).
fn lock(root: &Path) -> Option<std::fs::File> {
    let f = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(LOCK))
        .ok()?;
    f.lock().ok()?;
    Some(f)
}

const LOCK: &str = ".lock";

/// Makes `to` a name for `from`'s contents: a hard link, else a copy.
fn take(from: &Path, to: &Path) -> bool {
    std::fs::hard_link(from, to).is_ok() || std::fs::copy(from, to).is_ok()
}

/// Adds the finished PCH `built` to the cache as `root/name`, first
/// evicting the least recently used until it fits in `cap`; a PCH bigger
/// than the cap alone is not kept.
fn publish_pch(root: &Path, name: &str, built: &Path, cap: u64) {
    let Some(len) = std::fs::metadata(built).ok().map(|m| m.len()) else {
        return;
    };
    if len > cap {
        return;
    }
    let Some(_lock) = lock(root) else {
        return;
    };
    let to = root.join(name);
    if to.exists() {
        // Another run made the same one meanwhile.
        return;
    }
    evict(root, cap - len);
    if std::fs::hard_link(built, &to).is_ok() {
        return;
    }
    // Another file system: a copy under a name that is not a `.pch` (the
    // room for it is already made, and the lock keeps others out), renamed
    // once whole.
    let part = root.join(format!("{name}.part"));
    if std::fs::copy(built, &part).is_err() || std::fs::rename(&part, &to).is_err() {
        let _ = std::fs::remove_file(&part);
    }
}

/// The PCHs' cap in bytes: `WARPCHECK_CACHE_MAX` (`1000000`, `64M`, `1G`),
/// else 256 MiB; a value that is not a size is the default.
fn cache_max() -> u64 {
    const DEFAULT: u64 = 256 << 20;
    std::env::var("WARPCHECK_CACHE_MAX")
        .ok()
        .and_then(|v| parse_size(v.trim()))
        .unwrap_or(DEFAULT)
}

fn parse_size(s: &str) -> Option<u64> {
    let (digits, scale) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// Marks a cached file used now, for [`evict`].
fn touch(file: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(file) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// Removes the least recently used `.pch` files of `root` until those left
/// take at most `cap` bytes; also what runs that died left: `.part` copies
/// (the caller holds the lock, so none is being written) and the
/// `.pch.tmp` files of older versions' runs over an hour old.
fn evict(root: &Path, cap: u64) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut pchs: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let (path, Ok(meta)) = (e.path(), e.metadata()) else {
            continue;
        };
        let used = meta.modified().unwrap_or(now);
        let name = e.file_name();
        let name = name.to_string_lossy();
        let stale = now
            .duration_since(used)
            .is_ok_and(|age| age.as_secs() > 3600);
        if name.ends_with(".part") || (name.ends_with(".pch.tmp") && stale) {
            let _ = std::fs::remove_file(&path);
        } else if name.ends_with(".pch") {
            pchs.push((used, meta.len(), path));
        }
    }
    let mut total = pchs.iter().map(|p| p.1).sum::<u64>();
    pchs.sort();
    for (_, len, path) in pchs {
        if total <= cap {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
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
    fn eviction_drops_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(10_000);
        // Five PCHs of 1000 bytes, a.pch used longest ago, e.pch last.
        for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            let p = root.join(format!("{name}.pch"));
            std::fs::write(&p, [0u8; 1000]).unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(i as u64 * 100))
                .unwrap();
        }
        // b.pch used again: now the most recent.
        touch(&root.join("b.pch"));
        // Room for a new one of 1000 bytes under a cap of 3000: at most 2000
        // bytes may stay, so of the five the three least recently used (a,
        // c, d) go. A `.part` left by a dead run goes whatever its age.
        std::fs::write(root.join("f.pch.part"), "x").unwrap();
        std::fs::write(root.join("old.pch.tmp"), "x").unwrap();
        let f = std::fs::File::options()
            .append(true)
            .open(root.join("old.pch.tmp"))
            .unwrap();
        f.set_modified(t0).unwrap();
        evict(root, 3000 - 1000);
        let mut left: Vec<String> = std::fs::read_dir(root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["b.pch", "e.pch"]);
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("18446744073709551615G"), None);
        assert_eq!(parse_size("lots"), None);
    }

    #[test]
    fn publishing_makes_room_first_and_keeps_nothing_over_the_cap() {
        let cache = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let root = cache.path();
        let t0 = std::time::SystemTime::now() - std::time::Duration::from_secs(10_000);
        for (i, name) in ["old", "new"].iter().enumerate() {
            let p = root.join(format!("{name}.pch"));
            std::fs::write(&p, [0u8; 1000]).unwrap();
            let f = std::fs::File::options().append(true).open(&p).unwrap();
            f.set_modified(t0 + std::time::Duration::from_secs(i as u64 * 100))
                .unwrap();
        }
        let built = scratch.path().join("x.pch");
        std::fs::write(&built, [1u8; 1000]).unwrap();
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(root)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".pch"))
                .collect();
            v.sort();
            v
        };
        // 1000 bytes more under a cap of 2500: 2000 may stay, so the least
        // recently used of the two goes before the new one is added.
        publish_pch(root, "x.pch", &built, 2500);
        assert_eq!(names(), ["new.pch", "x.pch"]);
        // The run keeps its own name for it.
        assert!(built.is_file());
        // A PCH bigger than the cap alone is not kept, and evicts nothing.
        let big = scratch.path().join("big.pch");
        std::fs::write(&big, [2u8; 3000]).unwrap();
        publish_pch(root, "big.pch", &big, 2500);
        assert_eq!(names(), ["new.pch", "x.pch"]);
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
