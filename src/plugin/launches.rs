//! The launch shapes of the file a clang device compile is compiling.
//!
//! A device compile sees only the kernels; the `<<<grid, block>>>`
//! launches that give their block shapes are host code, which this compile
//! parses but does not emit. When the build loads warpcheck's frontend
//! action with `-fplugin=…/libwarpcheck-frontend.so` (the CMake package
//! and the Make snippet do), the action (`passes/frontend/launches.cpp`)
//! reads the launches from the AST before code generation and keeps them
//! for this pass: they cost nothing more. Otherwise the
//! plugin compiles the host side of its main file itself, as `check` does
//! without the action: with the data flags of the command line that runs
//! it (clang's driver, which runs its compile jobs in its own process, or
//! a `clang -cc1` of its own), read from `/proc/self/cmdline`, by the clang
//! that is running. A file whose text launches nothing is not compiled;
//! neither is anything under `opt`, which, like `check` on an IR file, has
//! no source to compile.

use crate::analysis::Options;
use crate::frontend::{self, compdb};
use crate::ir::launch::{self, HostLaunch};
use crate::ir::Module;
use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What warpcheck's frontend action (`libwarpcheck-frontend.so`, loaded
/// by `-fplugin`) read from the AST of `file`'s device compile, if it ran
/// on it in this process. It keeps the launches of the last file it saw;
/// clang loads plugins globally, so its getter is found by name.
fn recorded(file: &str) -> Option<Vec<HostLaunch>> {
    type Getter = unsafe extern "C" fn(*const c_char) -> *const c_char;
    let name = c"warpcheck_frontend_launches";
    // SAFETY: dlsym with RTLD_DEFAULT only looks a name up.
    let sym = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if sym.is_null() {
        return None;
    }
    // SAFETY: the symbol is the frontend action's getter, of this type
    // (passes/frontend/launches.cpp).
    let get: Getter = unsafe { std::mem::transmute::<*mut std::ffi::c_void, Getter>(sym) };
    let key = std::ffi::CString::new(file).ok()?;
    // SAFETY: the getter takes a NUL-terminated string and returns null or
    // a NUL-terminated string valid until the next device compile.
    let text = unsafe {
        let p = get(key.as_ptr());
        (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
    }?;
    Some(launch::parse_recorded(&text))
}

/// The arguments of this process, when it is a clang.
fn clang_command_line() -> Option<Vec<String>> {
    let raw = std::fs::read("/proc/self/cmdline").ok()?;
    let args: Vec<String> = raw
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let program = Path::new(args.first()?).file_name()?.to_str()?;
    program.contains("clang").then_some(args)
}

/// Source files whose device side this process has analysed: clang runs one
/// device compile per GPU architecture, all of one source, and the kernels
/// and their launches are the same in each, so only the first reports.
static ANALYSED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The module's main source file, absolute.
fn main_file(m: &Module) -> Option<PathBuf> {
    if m.source_file.is_empty() {
        return None;
    }
    std::path::absolute(Path::new(&m.source_file)).ok()
}

/// Whether this is the first device module of its source in this process
/// (always, outside clang).
pub fn first_of_its_source(m: &Module) -> bool {
    if clang_command_line().is_none() {
        return true;
    }
    let Some(file) = main_file(m) else {
        return true;
    };
    let mut seen = ANALYSED.lock().unwrap_or_else(|p| p.into_inner());
    if seen.contains(&file) {
        return false;
    }
    seen.push(file);
    true
}

/// The launches in the host code of the file `m` was compiled from, when
/// this process is a clang compiling it and nothing else gives every
/// kernel its shape (`opts.block_dim`). Failures are said at debug level
/// and give no launches: the shapes then come from the next source, as in
/// `check`.
pub fn host_launches(m: &Module, opts: &Options) -> Vec<HostLaunch> {
    if opts.block_dim.is_some() {
        return Vec::new();
    }
    let Some(file) = main_file(m) else {
        return Vec::new();
    };
    // The action's launches; none seen (host code the device compile
    // skips), or no action: a host-side compile, as `check` does.
    if let Some(launches) = recorded(&m.source_file).filter(|l| !l.is_empty()) {
        return launches;
    }
    let Some(args) = clang_command_line() else {
        return Vec::new();
    };
    let is_cuda = matches!(
        file.extension().and_then(|e| e.to_str()),
        Some("cu" | "cuh")
    ) || args.windows(2).any(|w| w[0] == "-x" && w[1] == "cuda");
    if !is_cuda {
        return Vec::new();
    }
    let Some(compile) = host_options(&args) else {
        return Vec::new();
    };
    let _span = tracing::info_span!("host").entered();
    frontend::host_launches(&file, &compile).unwrap_or_else(|e| {
        tracing::debug!("no launch shapes from the host side: {e}");
        Vec::new()
    })
}

/// The compile options of a clang command line for its host side: its data
/// flags (include paths, macros, the language standard, the toolkit or
/// warpcheck's header), compiled by the clang running now.
fn host_options(args: &[String]) -> Option<frontend::CompileOptions> {
    let dir = std::env::current_dir().ok()?;
    let mut t = compdb::translate_command(args, &dir)?;
    t.options.clang = std::env::current_exe().ok();
    Some(t.options)
}

#[cfg(test)]
mod tests {
    use super::host_options;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_driver_command_keeps_its_data_flags() {
        let o = host_options(&words(
            "clang++-19 -x cuda --cuda-device-only -S --cuda-gpu-arch=sm_70 -O2 -Iinc -DN=4 \
             -std=c++17 -nocudainc -nocudalib -include /opt/w/warpcheck_cuda.h \
             -include pre.h -fpass-plugin=/opt/w/libwarpcheck.so -o k.ptx k.cu",
        ))
        .unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(o.includes, [cwd.join("inc")]);
        assert_eq!(o.defines, ["N=4"]);
        assert_eq!(o.gpu_arch, "sm_70");
        // warpcheck's header stands for a missing toolkit; the other
        // force-included file is the build's own.
        assert!(o.no_toolkit);
        let pre = cwd.join("pre.h").display().to_string();
        assert_eq!(o.extra, ["-std=c++17", "-include", pre.as_str()]);
        // Nothing that loads code or writes files reaches the host compile.
        assert!(!o.extra.iter().any(|f| f.contains("plugin") || f == "-o"));
    }

    #[test]
    fn a_cc1_command_gives_its_paths_too() {
        let o = host_options(&words(
            "/usr/lib/llvm-19/bin/clang -cc1 -triple nvptx64-nvidia-cuda -fcuda-is-device \
             -I /src/inc -D N=8 -std=c++14 -x cuda k.cu",
        ))
        .unwrap();
        assert_eq!(o.includes, [std::path::PathBuf::from("/src/inc")]);
        assert_eq!(o.defines, ["N=8"]);
        assert_eq!(o.extra, ["-std=c++14"]);
    }
}
