//! `warpcheck print-plugin-path [--clang PATH]`: the pass plugin that a
//! given clang can load. A plugin loads only into the LLVM major it was
//! built for, so the answer depends on the clang, and each candidate file
//! is checked for the major it links rather than trusted by its name.

use super::exit;
use crate::ir::major::{LLVM_MAJOR, SUPPORTED_MAJORS};
use clap::Args;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct PluginPathArgs {
    /// The clang that will load the plugin (default: a plugin for this
    /// warpcheck's own LLVM major).
    #[arg(long, value_name = "PATH")]
    pub clang: Option<PathBuf>,
    /// The frontend action (`-fplugin=`) instead of the pass
    /// (`-fpass-plugin=`): it reads the launches' block shapes from the AST.
    #[arg(long)]
    pub frontend: bool,
}

/// Which of warpcheck's two libraries clang loads.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Library {
    /// The pass (`-fpass-plugin=`, `opt -load-pass-plugin=`).
    Pass,
    /// The frontend action (`-fplugin=`), linked with clang's libraries.
    Frontend,
}

impl Library {
    fn stem(self) -> &'static str {
        match self {
            Library::Pass => "libwarpcheck",
            Library::Frontend => "libwarpcheck-frontend",
        }
    }
}

pub fn run(args: &PluginPathArgs) -> i32 {
    let major = match &args.clang {
        None => LLVM_MAJOR,
        Some(c) => match crate::frontend::clang_major(&crate::frontend::on_path(c)) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("warpcheck: error: --clang: {e}");
                return exit::INPUT;
            }
        },
    };
    let for_clang = args
        .clang
        .as_ref()
        .map(|c| format!(" ({} is LLVM {major})", c.display()))
        .unwrap_or_default();
    if !SUPPORTED_MAJORS.contains(&major) {
        eprintln!(
            "warpcheck: error: no warpcheck plugin can load into LLVM {major}{for_clang}: \
             plugins exist for LLVM {}",
            majors_text()
        );
        return exit::INPUT;
    }
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("warpcheck: error: cannot tell where the warpcheck binary is");
        return exit::INPUT;
    };
    let library = if args.frontend {
        Library::Frontend
    } else {
        Library::Pass
    };
    let candidates = candidates(exe.parent().unwrap_or(Path::new(".")), major, library);
    match candidates.iter().find(|p| fits(p, major)) {
        Some(p) => {
            println!(
                "{}",
                p.canonicalize().unwrap_or_else(|_| p.clone()).display()
            );
            exit::OK
        }
        None => {
            eprintln!(
                "warpcheck: error: no warpcheck plugin for LLVM {major}{for_clang}; looked for \
                 {} (build one with `cargo build --release{}`, or install it with \
                 scripts/install.sh)",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if major == 19 {
                    String::new()
                } else {
                    format!(" --no-default-features --features llvm{major} --target-dir target/llvm{major}")
                }
            );
            exit::INPUT
        }
    }
}

/// warpcheck's frontend action for `clang` (default: the clang of this
/// build's LLVM major), if one is found where `print-plugin-path
/// --frontend` looks; asked once per clang and run. `WARPCHECK_NO_FRONTEND_PLUGIN=1` says none (the
/// launches then come from a host-side compile).
pub fn for_clang(clang: Option<&Path>) -> Option<PathBuf> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static FOUND: Mutex<Option<HashMap<Option<PathBuf>, Option<PathBuf>>>> = Mutex::new(None);
    if std::env::var_os("WARPCHECK_NO_FRONTEND_PLUGIN").is_some_and(|v| v == "1") {
        return None;
    }
    let key = clang.map(Path::to_path_buf);
    let mut found = FOUND.lock().unwrap_or_else(|p| p.into_inner());
    found
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert_with(|| {
            let major = match clang {
                None => LLVM_MAJOR,
                Some(c) => crate::frontend::clang_major(&crate::frontend::on_path(c)).ok()?,
            };
            let exe = std::env::current_exe().ok()?;
            candidates(exe.parent()?, major, Library::Frontend)
                .into_iter()
                .find(|p| fits(p, major))
        })
        .clone()
}

/// warpcheck's shared library for this build's LLVM major, which also
/// holds the CUDA runtime that `warpcheck run` links programs against.
pub fn runtime_library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    candidates(exe.parent()?, LLVM_MAJOR, Library::Pass)
        .into_iter()
        .find(|p| fits(p, LLVM_MAJOR))
}

fn majors_text() -> String {
    SUPPORTED_MAJORS
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Where a plugin for `major` may be, best first: beside the binary and in
/// `../lib` (an install prefix, where plugins are named for their major),
/// then the other cargo build of this tree (`target/<profile>` is the
/// default LLVM 19 build, `target/llvm22/<profile>` the LLVM 22 one).
fn candidates(dir: &Path, major: u32, library: Library) -> Vec<PathBuf> {
    let named = format!("{}-llvm{major}.so", library.stem());
    let plain = format!("{}.so", library.stem());
    let plain = plain.as_str();
    let mut v = vec![
        dir.join(&named),
        dir.join(plain),
        dir.join("../lib").join(&named),
        dir.join("../lib").join(plain),
    ];
    // A cargo profile directory keeps its fingerprints beside the binary.
    let cargo_build = dir.join(".fingerprint").is_dir() || cfg!(test);
    if let (true, Some(profile), Some(target)) = (cargo_build, dir.file_name(), dir.parent()) {
        // `target` is either the target dir or `target/llvmM`.
        let root = match target.file_name().and_then(|n| n.to_str()) {
            Some(n) if n.starts_with("llvm") => target.parent().unwrap_or(target),
            _ => target,
        };
        let sibling = if major == 19 {
            root.join(profile)
        } else {
            root.join(format!("llvm{major}")).join(profile)
        };
        let sibling = sibling.join(plain);
        if !v.contains(&sibling) {
            v.push(sibling);
        }
    }
    v
}

/// Whether `path` is a plugin that loads into LLVM `major`: the LLVM it
/// links says so; a file that names none is taken on its name alone.
fn fits(path: &Path, major: u32) -> bool {
    if !path.is_file() {
        return false;
    }
    match linked_llvm_major(path) {
        Some(m) => m == major,
        None => path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(&format!("-llvm{major}.so"))),
    }
}

/// The major in the `libLLVM.so.N` (or `libLLVM-N.so`) the library needs.
/// The dynamic string table sits near the start of the file, so only the
/// first few MiB are read.
fn linked_llvm_major(path: &Path) -> Option<u32> {
    const HEAD: u64 = 8 << 20;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(HEAD)
        .read_to_end(&mut bytes)
        .ok()?;
    llvm_major_in(&bytes)
}

fn llvm_major_in(bytes: &[u8]) -> Option<u32> {
    ["libLLVM.so.", "libLLVM-"].iter().find_map(|stem| {
        let stem = stem.as_bytes();
        let at = bytes.windows(stem.len()).position(|w| w == stem)? + stem.len();
        let digits: String = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .map(|&b| char::from(b))
            .collect();
        digits.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_linked_major_from_the_dynamic_strings() {
        assert_eq!(llvm_major_in(b"\0libc.so.6\0libLLVM.so.22.1\0"), Some(22));
        assert_eq!(llvm_major_in(b"\0libLLVM-19.so\0"), Some(19));
        assert_eq!(llvm_major_in(b"\0libc.so.6\0"), None);
    }

    #[test]
    fn looks_beside_the_binary_then_the_prefix_then_the_other_build() {
        let c = candidates(Path::new("/w/target/debug"), 22, Library::Pass);
        assert_eq!(c[0], Path::new("/w/target/debug/libwarpcheck-llvm22.so"));
        assert_eq!(c[1], Path::new("/w/target/debug/libwarpcheck.so"));
        assert_eq!(
            c[2],
            Path::new("/w/target/debug/../lib/libwarpcheck-llvm22.so")
        );
        assert_eq!(
            c.last().unwrap(),
            Path::new("/w/target/llvm22/debug/libwarpcheck.so")
        );
        // From the LLVM 22 build, the LLVM 19 plugin is the default build's.
        let c = candidates(Path::new("/w/target/llvm22/release"), 19, Library::Pass);
        assert_eq!(
            c.last().unwrap(),
            Path::new("/w/target/release/libwarpcheck.so")
        );
        // The frontend action is looked for the same way, by its own name.
        let c = candidates(Path::new("/w/target/debug"), 19, Library::Frontend);
        assert_eq!(
            c[0],
            Path::new("/w/target/debug/libwarpcheck-frontend-llvm19.so")
        );
        assert_eq!(c[1], Path::new("/w/target/debug/libwarpcheck-frontend.so"));
    }
}
