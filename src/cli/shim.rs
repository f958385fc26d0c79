//! `build`'s nvcc shim tree, as scan-build exports `CC` for C builds:
//! `TREE/bin/nvcc` calls `launch`, and the build gets `PATH`, `NVCC`,
//! `CUDACXX`, `CUDA_HOME` and `CUDA_PATH` all leading to it, so a Makefile
//! that says `nvcc`, `$(NVCC)` or `$(CUDA_HOME)/bin/nvcc` (the CUDA
//! samples' shape) runs the shim. The rest of a real toolkit (`include`,
//! `lib64`, the other tools) is linked into the tree, so builds that read
//! them from the same root still find them; the shim gives the compiler
//! and the analysis the environment the build started with.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Variables that name nvcc itself.
const NVCC_VARS: [&str; 2] = ["NVCC", "CUDACXX"];
/// Variables that name the toolkit's root.
const ROOT_VARS: [&str; 2] = ["CUDA_HOME", "CUDA_PATH"];

/// A temporary toolkit-shaped tree whose `bin/nvcc` is the shim.
pub struct ShimTree {
    /// Removed when the tree is dropped, or on SIGINT/SIGTERM.
    dir: crate::temp::TempDir,
}

/// An executable file at `p`.
fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `name` as a path: itself if it has a `/`, else found on `PATH`.
fn resolve(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name)).filter(|p| executable(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// The real nvcc, as the build would have found it: named by `NVCC` or
/// `CUDACXX` (its first word), under `CUDA_HOME` or `CUDA_PATH`, on `PATH`,
/// else in `/usr/local/cuda`.
pub fn real_nvcc() -> Option<PathBuf> {
    let named = NVCC_VARS.iter().filter_map(|v| {
        let value = std::env::var(v).ok()?;
        resolve(value.split_whitespace().next()?)
    });
    let under_roots = ROOT_VARS
        .iter()
        .filter_map(std::env::var_os)
        .map(|r| PathBuf::from(r).join("bin/nvcc"));
    let on_path = resolve("nvcc").into_iter();
    let usual = std::iter::once(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    named
        .chain(under_roots.chain(on_path).chain(usual))
        .find(|p| executable(p))
}

/// Quotes a word for `sh`.
fn sh_quote(w: &str) -> String {
    format!("'{}'", w.replace('\'', r"'\''"))
}

/// Links every entry of `from` into `to`, except `but`.
fn link_all(from: &Path, to: &Path, but: &str) -> std::io::Result<()> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_name() != but {
            std::os::unix::fs::symlink(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

impl ShimTree {
    /// A tree whose `bin/nvcc` runs `command` (words) with the build's own
    /// arguments; `real` is the toolkit nvcc whose siblings are linked in.
    pub fn create(command: &[String], real: Option<&Path>) -> std::io::Result<ShimTree> {
        let dir = crate::temp::tempdir()?;
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin)?;
        if let Some(real_bin) = real.and_then(Path::parent) {
            link_all(real_bin, &bin, "nvcc")?;
            if let Some(root) = real_bin.parent() {
                link_all(root, dir.path(), "bin")?;
            }
        }
        // The compiler and the analysis see the build's own environment.
        let mut script = String::from("#!/bin/sh\n");
        for v in NVCC_VARS.iter().chain(&ROOT_VARS) {
            match std::env::var(v) {
                Ok(value) => script.push_str(&format!("export {v}={}\n", sh_quote(&value))),
                Err(_) => script.push_str(&format!("unset {v}\n")),
            }
        }
        let words: Vec<String> = command.iter().map(|w| sh_quote(w)).collect();
        script.push_str(&format!("exec {} \"$@\"\n", words.join(" ")));
        let shim = bin.join("nvcc");
        std::fs::write(&shim, script)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755))?;
        Ok(ShimTree { dir })
    }

    /// Where the shim is.
    pub fn bin(&self) -> PathBuf {
        self.dir.path().join("bin")
    }

    /// A file in the tree's own directory, beside `bin`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The environment the build runs with: the shims first on `PATH`,
    /// and every variable that names nvcc or its root leading here.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path =
            std::env::join_paths(std::iter::once(self.bin()).chain(std::env::split_paths(&path)))
                .unwrap_or_default();
        let nvcc = self.bin().join("nvcc").into_os_string();
        let root = self.dir.path().as_os_str().to_os_string();
        let mut env = vec![("PATH", path)];
        env.extend(NVCC_VARS.map(|v| (v, nvcc.clone())));
        env.extend(ROOT_VARS.map(|v| (v, root.clone())));
        env
    }
}
