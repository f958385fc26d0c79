//! Compiling `.cu` files to device IR with the clang of this build's LLVM
//! major (clang-19 by default, clang-22 in an `llvm22` build), or the one
//! `--clang`/`$WARPCHECK_CLANG` names.

use super::{pch, InputError, Toolkit};
use crate::ir::launch::HostLaunch;
use crate::ir::major::LLVM_MAJOR;
use crate::ir::{self, Module};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The header that gives a plain `.cu` file what nvcc makes implicit, for
/// machines without a CUDA toolkit.
pub const CUDA_HEADER: &str = include_str!("warpcheck_cuda.h");

/// The header a toolkit compile finds before clang's own declarations of
/// the libdevice functions, which it declares pure
/// (`src/frontend/toolkit/`): without libdevice linked, a call would
/// otherwise keep the loads and stores around it in their loop.
const TOOLKIT_HEADER: (&str, &str) = (
    "__clang_cuda_libdevice_declares.h",
    include_str!("toolkit/__clang_cuda_libdevice_declares.h"),
);

/// The headers user files include by name that warpcheck provides without
/// a toolkit (`src/frontend/include/`, installed as
/// `share/warpcheck/include/`), by their path under that directory: the
/// toolkit's own names (`cuda_runtime.h`, whose declarations the
/// force-included header already holds), `math_constants.h`, and
/// warpcheck's `cooperative_groups`.
pub const OWN_HEADERS: &[(&str, &str)] = &[
    ("builtin_types.h", include_str!("include/builtin_types.h")),
    (
        "cooperative_groups.h",
        include_str!("include/cooperative_groups.h"),
    ),
    (
        "cooperative_groups/reduce.h",
        include_str!("include/cooperative_groups/reduce.h"),
    ),
    ("cuda.h", include_str!("include/cuda.h")),
    (
        "cuda_device_runtime_api.h",
        include_str!("include/cuda_device_runtime_api.h"),
    ),
    (
        "cuda_profiler_api.h",
        include_str!("include/cuda_profiler_api.h"),
    ),
    ("cuda_runtime.h", include_str!("include/cuda_runtime.h")),
    (
        "cuda_runtime_api.h",
        include_str!("include/cuda_runtime_api.h"),
    ),
    (
        "device_atomic_functions.h",
        include_str!("include/device_atomic_functions.h"),
    ),
    (
        "device_functions.h",
        include_str!("include/device_functions.h"),
    ),
    (
        "device_launch_parameters.h",
        include_str!("include/device_launch_parameters.h"),
    ),
    ("driver_types.h", include_str!("include/driver_types.h")),
    ("host_defines.h", include_str!("include/host_defines.h")),
    ("math_constants.h", include_str!("include/math_constants.h")),
    (
        "sm_20_atomic_functions.h",
        include_str!("include/sm_20_atomic_functions.h"),
    ),
    (
        "sm_60_atomic_functions.h",
        include_str!("include/sm_60_atomic_functions.h"),
    ),
    (
        "vector_functions.h",
        include_str!("include/vector_functions.h"),
    ),
    ("vector_types.h", include_str!("include/vector_types.h")),
];

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    pub gpu_arch: String,
    pub includes: Vec<PathBuf>,
    pub defines: Vec<String>,
    /// `--cuda-path`: use this toolkit (and fail if it is not one).
    pub cuda_path: Option<PathBuf>,
    /// `--no-cuda`: warpcheck's own headers, whatever toolkit is installed.
    pub no_toolkit: bool,
    /// Full `-g` instead of line tables: parameter names for `simulate`.
    pub full_debug: bool,
    /// More flags for clang, as given.
    pub extra: Vec<String>,
    /// `--clang`: the clang to compile with, before `$WARPCHECK_CLANG`.
    pub clang: Option<PathBuf>,
    /// `--allow-unsafe-flags`: pass configuration and compile-database
    /// flags that load code or change the toolchain (never set by a file).
    pub allow_unsafe_flags: bool,
    /// warpcheck's own plugin for this clang: loaded into the device
    /// compile (`-fplugin`), its frontend action reads the file's kernel
    /// launches from the AST, so no host-side compile is needed.
    pub frontend_plugin: Option<PathBuf>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            gpu_arch: "sm_80".into(),
            includes: Vec::new(),
            defines: Vec::new(),
            cuda_path: None,
            no_toolkit: false,
            full_debug: false,
            extra: Vec::new(),
            clang: None,
            allow_unsafe_flags: false,
            frontend_plugin: None,
        }
    }
}

/// `$WARPCHECK_CLANG`, else this build's clang: `clang-<major>` on the
/// PATH or in Debian's LLVM prefix.
pub fn find_clang() -> Option<PathBuf> {
    find_llvm_tool("WARPCHECK_CLANG", "clang")
}

/// An LLVM tool of this build's major: named by `env` (a path, or a name
/// looked up on the PATH), else `tool-<major>` on the PATH, else `tool` in
/// `/usr/lib/llvm-<major>/bin`.
pub fn find_llvm_tool(env: &str, tool: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(on_path(Path::new(&p)));
    }
    let versioned = PathBuf::from(format!("{tool}-{LLVM_MAJOR}"));
    let found = on_path(&versioned);
    if found != versioned {
        return Some(found);
    }
    let p = PathBuf::from(format!("/usr/lib/llvm-{LLVM_MAJOR}/bin")).join(tool);
    p.is_file().then_some(p)
}

/// A bare program name resolved on the PATH (as the shell would), so that
/// the precompiled header can be keyed by the file; anything else as given.
pub fn on_path(program: &Path) -> PathBuf {
    if program.components().count() != 1 {
        return program.to_path_buf();
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| program.to_path_buf())
}

/// The LLVM major of a clang, from the first line of `clang --version`
/// (`Debian clang version 22.1.8 (...)`, `clang version 19.1.7`).
pub fn clang_major(clang: &Path) -> Result<u32, String> {
    let out = crate::temp::output(Command::new(clang).arg("--version"))
        .map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_clang_major(&text).ok_or_else(|| {
        format!(
            "{}: not a clang (`--version` says: {})",
            clang.display(),
            text.lines().next().unwrap_or("").trim()
        )
    })
}

fn parse_clang_major(version_text: &str) -> Option<u32> {
    let line = version_text.lines().next()?;
    let rest = &line[line.find("clang version ")? + "clang version ".len()..];
    rest.split('.').next()?.trim().parse().ok()
}

/// Why a clang's IR may not load here: a newer major writes bitcode an
/// older LLVM cannot read. `None` when the majors do not explain it.
fn newer_clang(clang: &Path) -> Option<String> {
    let major = clang_major(clang).ok()?;
    (major > LLVM_MAJOR).then(|| {
        format!(
            "{} is LLVM {major}, whose IR this warpcheck (built for LLVM {LLVM_MAJOR}) cannot \
             read: use a warpcheck built for LLVM {major} (see README, \"Supported clang \
             versions\") or --clang clang-{LLVM_MAJOR}",
            clang.display()
        )
    })
}

fn toolkit(opts: &CompileOptions) -> Result<Option<Toolkit>, InputError> {
    match &opts.cuda_path {
        Some(root) => Toolkit::at(root).map(Some).ok_or_else(|| InputError {
            message: format!(
                "--cuda-path {}: not a CUDA toolkit (no include/cuda.h with CUDA_VERSION)",
                root.display()
            ),
        }),
        None if opts.no_toolkit => Ok(None),
        None => Ok(Toolkit::discover()),
    }
}

/// The clang arguments for a device-only compile of `src` to bitcode `out`.
pub fn arguments(
    src: &Path,
    out: &Path,
    header: &Path,
    tk: Option<&Toolkit>,
    opts: &CompileOptions,
) -> Vec<String> {
    let mut args = side_arguments(Side::Device, &debug_flags(opts), header, tk, opts);
    // Keep value names so explanations can name values, not `%12`.
    args.push("-fno-discard-value-names".into());
    args.extend(opts.extra.iter().cloned());
    args.push("-o".into());
    args.push(out.display().to_string());
    args.push(src.display().to_string());
    args
}

/// The device compile's debug flags: line tables, or with `full_debug`
/// the full kind. The driver lowers `-g` to line directives for optimised
/// device code; the full kind keeps the `dbg.value` records that name
/// values after their source variables. Neither changes the code. An
/// explicit `-g0` among the extra flags turns debug info off.
fn debug_flags(opts: &CompileOptions) -> Vec<String> {
    let no_debug = opts
        .extra
        .iter()
        .rev()
        .find(|a| a.starts_with("-g"))
        .is_some_and(|a| a == "-g0");
    let flags: &[&str] = match (opts.full_debug, no_debug) {
        (true, false) => &["-g", "-Xclang", "-debug-info-kind=constructor"],
        (true, true) => &["-g"],
        (false, _) => &["-gline-tables-only"],
    };
    flags.iter().map(|f| f.to_string()).collect()
}

/// Which side of a `.cu` file a compile keeps.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Side {
    /// The kernels, optimised as a build would (`-O2`).
    Device,
    /// The host code, at `-O1`: enough to fold a launch's local arithmetic.
    Host,
}

/// The flags both sides share, before the user's extra flags: the
/// language, the side, the optimisation, `debug`, the headers.
pub(super) fn side_arguments(
    side: Side,
    debug: &[String],
    header: &Path,
    tk: Option<&Toolkit>,
    opts: &CompileOptions,
) -> Vec<String> {
    let (only, level) = match side {
        Side::Device => ("--cuda-device-only", "-O2"),
        Side::Host => ("--cuda-host-only", "-O1"),
    };
    let mut args: Vec<String> = vec![
        "-x".into(),
        "cuda".into(),
        only.into(),
        format!("--cuda-gpu-arch={}", opts.gpu_arch),
        level.into(),
    ];
    args.extend(debug.iter().cloned());
    args.extend(["-emit-llvm", "-c"].map(String::from));
    match tk {
        Some(tk) => {
            args.extend(tk.clang_flags());
            if let Some(dir) = header.parent() {
                args.push("-isystem".into());
                args.push(dir.join("toolkit").display().to_string());
            }
        }
        None => {
            args.extend(["-nocudainc", "-nocudalib"].map(String::from));
            // sm_70+ `*_sync` builtins need PTX 6.0+; the driver only
            // picks a PTX version itself when it finds a toolkit.
            args.extend(["-Xclang", "-target-feature", "-Xclang", "+ptx75"].map(String::from));
            args.push("-include".into());
            args.push(header.display().to_string());
            if let Some(dir) = header.parent() {
                args.push("-isystem".into());
                args.push(dir.join("stubs").display().to_string());
            }
        }
    }
    args.extend(opts.includes.iter().map(|i| format!("-I{}", i.display())));
    args.extend(opts.defines.iter().map(|d| format!("-D{d}")));
    args
}

/// Writes the force-included header beside `stubs/`, the include dir of
/// [`OWN_HEADERS`], and `toolkit/`, that of [`TOOLKIT_HEADER`].
fn write_headers(header: &Path) -> std::io::Result<()> {
    std::fs::write(header, CUDA_HEADER)?;
    let toolkit = header.with_file_name("toolkit");
    std::fs::create_dir_all(&toolkit)?;
    std::fs::write(toolkit.join(TOOLKIT_HEADER.0), TOOLKIT_HEADER.1)?;
    let stubs = header.with_file_name("stubs");
    std::fs::create_dir_all(&stubs)?;
    for (name, text) in OWN_HEADERS {
        let path = stubs.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, text)?;
    }
    Ok(())
}

/// Replaces `-include header` by the precompiled header for these flags
/// (built on first use); leaves `args` alone if that cannot be had.
/// Replaces the `-include` of our header by its PCH where one can be used,
/// and returns the PCH.
fn use_pch(clang: &Path, header: &Path, scratch: &Path, args: &mut [String]) -> Option<PathBuf> {
    let header_arg = header.display().to_string();
    let at = args
        .windows(2)
        .position(|w| w[0] == "-include" && w[1] == header_arg)?;
    // Another pre-included file would be parsed into the PCH, which then
    // depends on that file (and on the directory it was found from): no PCH.
    if args
        .iter()
        .enumerate()
        .any(|(i, a)| i != at && (a.starts_with("-include") || a.starts_with("-imacros")))
    {
        return None;
    }
    // The flags without the include, the action, the output and the input.
    let n = args.len();
    let flags: Vec<String> = args[..n - 3]
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            *i != at
                && *i != at + 1
                && *a != "-emit-llvm"
                && *a != "-c"
                && !a.starts_with("-fplugin=")
        })
        .map(|(_, a)| a.clone())
        .collect();
    let p = pch::precompiled(clang, header, &flags, scratch)?;
    args[at] = "-include-pch".into();
    args[at + 1] = p.display().to_string();
    Some(p)
}

/// Compiles a `.cu` file and loads the device module.
pub fn compile(src: &Path, opts: &CompileOptions) -> Result<Module, InputError> {
    compile_in(src, opts, false).map(|(m, _)| m)
}

/// Like [`compile`], and also returns the bitcode clang produced (for tools
/// that want LLVM's own view of the same module).
pub fn compile_keeping_bitcode(
    src: &Path,
    opts: &CompileOptions,
) -> Result<(Module, Vec<u8>), InputError> {
    compile_in(src, opts, true).map(|(m, bc)| (m, bc.unwrap_or_default()))
}

/// What a compile of `src` needs before clang runs: the clang, the
/// toolkit (or our headers, written to the cache), a temporary directory.
pub(super) struct Setup {
    pub clang: PathBuf,
    pub tk: Option<Toolkit>,
    pub dir: crate::temp::TempDir,
    /// The force-included header, when there is no toolkit.
    pub header: PathBuf,
}

impl Setup {
    pub fn new(src: &Path, opts: &CompileOptions) -> Result<Setup, InputError> {
        let clang = match &opts.clang {
            Some(c) => on_path(c),
            None => find_clang().ok_or_else(|| InputError {
                message: format!(
                    "{}: cannot compile CUDA: clang-{LLVM_MAJOR} not found (run scripts/setup.sh, \
                     or pass --clang or set WARPCHECK_CLANG)",
                    src.display()
                ),
            })?,
        };
        let tk = toolkit(opts)?;
        let dir = crate::temp::tempdir().map_err(|e| InputError {
            message: format!("cannot create a temporary directory: {e}"),
        })?;
        // Our headers live in the cache, named by their contents, so that
        // the precompiled header made from them stays valid; in the temp
        // dir if the cache cannot be written.
        let shared = pch::shared_dir("headers", (CUDA_HEADER, OWN_HEADERS, TOOLKIT_HEADER), |d| {
            write_headers(&d.join("warpcheck_cuda.h"))
        });
        let headers = match shared {
            Some(d) => d,
            None => {
                write_headers(&dir.path().join("warpcheck_cuda.h")).map_err(|e| InputError {
                    message: format!("cannot write our headers in {}: {e}", dir.path().display()),
                })?;
                dir.path().to_path_buf()
            }
        };
        Ok(Setup {
            clang,
            tk,
            dir,
            header: headers.join("warpcheck_cuda.h"),
        })
    }

    /// Runs clang on `args` (which end `-o OUT SRC`, OUT and SRC given as
    /// paths: a file name need not be UTF-8), with the precompiled header
    /// where our header is included.
    pub fn run(
        &self,
        args: Vec<String>,
        out: &Path,
        src: &Path,
    ) -> Result<std::process::Output, InputError> {
        self.run_with(args, out, src, &[])
    }

    /// [`Setup::run`] with these environment variables set for clang.
    pub fn run_with(
        &self,
        args: Vec<String>,
        out: &Path,
        src: &Path,
        env: &[(&str, &Path)],
    ) -> Result<std::process::Output, InputError> {
        let mut with_pch = args.clone();
        let pch = match self.tk {
            None => use_pch(&self.clang, &self.header, self.dir.path(), &mut with_pch),
            Some(_) => None,
        };
        let output = self.clang_on(&with_pch, out, src, env)?;
        match pch {
            // A cached PCH that a crash or a full disk cut short fails
            // every compile that reads it: dropped and built again, once.
            Some(p) if !output.status.success() && pch::blamed(&output.stderr, &p) => {
                pch::discard(&p);
                let mut again = args;
                use_pch(&self.clang, &self.header, self.dir.path(), &mut again);
                self.clang_on(&again, out, src, env)
            }
            _ => Ok(output),
        }
    }

    /// Runs clang on `args` as [`Setup::run`] describes, as they are.
    fn clang_on(
        &self,
        args: &[String],
        out: &Path,
        src: &Path,
        env: &[(&str, &Path)],
    ) -> Result<std::process::Output, InputError> {
        let n = args.len();
        crate::temp::output(
            Command::new(&self.clang)
                .envs(env.iter().copied())
                .args(&args[..n - 2])
                .arg(out)
                .arg(src),
        )
        .map_err(|e| InputError {
            message: format!(
                "{}: cannot run {}: {e}",
                src.display(),
                self.clang.display()
            ),
        })
    }
}

/// Compiles a `.cu` file and loads the device module, with the kernel
/// launches of its host code when `opts.frontend_plugin` reads them from
/// the AST (`None` without the plugin, or when it recorded nothing).
pub fn compile_with_launches(
    src: &Path,
    opts: &CompileOptions,
) -> Result<(Module, Option<Vec<HostLaunch>>), InputError> {
    let (m, _, launches) = compile_full(src, opts, false)?;
    Ok((m, launches))
}

fn compile_in(
    src: &Path,
    opts: &CompileOptions,
    keep_bitcode: bool,
) -> Result<(Module, Option<Vec<u8>>), InputError> {
    compile_full(src, opts, keep_bitcode).map(|(m, bc, _)| (m, bc))
}

/// The variable the frontend action writes a file's launches to.
const LAUNCHES_OUT: &str = "WARPCHECK_LAUNCHES_OUT";

#[allow(clippy::type_complexity)]
fn compile_full(
    src: &Path,
    opts: &CompileOptions,
    keep_bitcode: bool,
) -> Result<(Module, Option<Vec<u8>>, Option<Vec<HostLaunch>>), InputError> {
    let setup = Setup::new(src, opts)?;
    let out = setup.dir.path().join("device.bc");
    let mut args = arguments(src, &out, &setup.header, setup.tk.as_ref(), opts);
    let recorded = setup.dir.path().join("launches.txt");
    let mut env: Vec<(&str, &Path)> = Vec::new();
    if let Some(p) = &opts.frontend_plugin {
        args.insert(0, format!("-fplugin={}", p.display()));
        env.push((LAUNCHES_OUT, recorded.as_path()));
    }
    let output = setup.run_with(args, &out, src, &env)?;
    let (clang, tk) = (&setup.clang, &setup.tk);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(InputError {
            message: format!(
                "{}: clang failed ({}); no analysis for this file\n{}",
                src.display(),
                output.status,
                stderr.trim_end()
            ),
        });
    }
    let mut m = ir::llvm::load_file(&out).map_err(|e| match newer_clang(clang) {
        Some(why) => InputError {
            message: format!("{}: {why}", src.display()),
        },
        None => InputError::from(e),
    })?;
    m.system_dirs.push(match tk {
        Some(tk) => tk.root.join("include"),
        // Our own headers: the force-included one and those of `stubs/`.
        None => setup
            .header
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf),
    });
    let bitcode = if keep_bitcode {
        Some(std::fs::read(&out).map_err(|e| InputError {
            message: format!("cannot read {}: {e}", out.display()),
        })?)
    } else {
        None
    };
    let launches = opts
        .frontend_plugin
        .as_ref()
        .and_then(|_| std::fs::read_to_string(&recorded).ok())
        .map(|text| crate::ir::launch::parse_recorded(&text));
    Ok((m, bitcode, launches))
}

#[cfg(test)]
mod tests {
    use super::parse_clang_major;

    #[test]
    fn reads_the_major_from_clang_version() {
        // The first line of Debian's and upstream's `clang --version`.
        assert_eq!(
            parse_clang_major("Debian clang version 22.1.8 (++20250101)\nTarget: x86_64"),
            Some(22)
        );
        assert_eq!(parse_clang_major("clang version 19.1.7\n"), Some(19));
        assert_eq!(parse_clang_major("gcc (Debian 12.2.0-14) 12.2.0\n"), None);
        assert_eq!(parse_clang_major(""), None);
    }
}
