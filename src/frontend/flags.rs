//! Which compile flags a file may hand to clang.
//!
//! `.warpcheck.yaml` and compile databases come with the code under review,
//! so in CI anyone can write them. Their flags are data: they may change
//! what the source means (macros, include paths, the language, warnings,
//! the target) and nothing else. A flag that loads code into clang, picks
//! other tools, reads more flags from elsewhere or writes files is refused
//! unless the user says `--allow-unsafe-flags` on the command line.
//!
//! `--cuda-path` is allowed: the device-only `-S -emit-llvm` compile reads
//! the toolkit's headers and libdevice bitcode, and runs none of its
//! programs (no ptxas, no fatbinary).

use std::path::{Path, PathBuf};

/// Why a flag is not allowed from a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Danger {
    LoadsCode,
    Toolchain,
    ReadsConfig,
    WritesFiles,
    /// Not on the allow-list (which only holds flags known to be data).
    Unknown,
    /// `-include` of a file outside the project.
    OutsideProject,
}

impl Danger {
    pub fn reason(self) -> &'static str {
        match self {
            Danger::LoadsCode => "loads code into the compiler",
            Danger::Toolchain => "changes the toolchain",
            Danger::ReadsConfig => "reads flags from another file",
            Danger::WritesFiles => "writes files",
            Danger::Unknown => "is not one of the flags that only change the source's meaning",
            Danger::OutsideProject => "includes a file outside the project",
        }
    }

    /// The families refused even where a flag is dropped rather than
    /// passed on (a compile database's own build flags).
    pub fn always_refused(self) -> bool {
        matches!(
            self,
            Danger::LoadsCode | Danger::Toolchain | Danger::ReadsConfig
        )
    }
}

/// A flag refused, with the words it spans (`-Xclang -load`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub flag: String,
    /// The index of its first word in the list.
    pub at: usize,
    pub danger: Danger,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "'{}' {}; refused (configuration is data: pass --allow-unsafe-flags on the command line to allow it)",
            self.flag,
            self.danger.reason()
        )
    }
}

/// Flags that take their value as the next word when not joined.
const SEPARATE_VALUE: &[&str] = &[
    "-D",
    "-U",
    "-I",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-cxx-isystem",
    "-include",
    "-imacros",
    "-x",
    "-Xclang",
    "-o",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-B",
    "--config",
    "-load",
    "-mllvm",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
    "-Xarch_device",
    "-Xarch_host",
    "-include-pch",
    "-plugin",
    "-add-plugin",
    "-load-pass-plugin",
    "--gcc-toolchain",
    "--driver-mode",
];

/// `-f` options (with `-fno-`) that change only the meaning of the source
/// or the code made from it, and read or write nothing.
const F_OPTIONS: &[&str] = &[
    "gpu-rdc",
    "cuda-approx-transcendentals",
    "cuda-flush-denormals-to-zero",
    "cuda-short-ptr",
    "gpu-approx-transcendentals",
    "gpu-flush-denormals-to-zero",
    "gpu-allow-device-init",
    "gpu-defer-diag",
    "gpu-exclude-wrong-side-overloads",
    "gpu-inline-threshold",
    "gpu-default-stream",
    "fast-math",
    "finite-math-only",
    "unsafe-math-optimizations",
    "math-errno",
    "fp-contract",
    "denormal-fp-math",
    "denormal-fp-math-f32",
    "honor-nans",
    "honor-infinities",
    "associative-math",
    "reciprocal-math",
    "signed-zeros",
    "approx-func",
    "strict-aliasing",
    "exceptions",
    "cxx-exceptions",
    "rtti",
    "signed-char",
    "unsigned-char",
    "builtin",
    "inline",
    "inline-functions",
    "unroll-loops",
    "vectorize",
    "slp-vectorize",
    "ms-extensions",
    "declspec",
    "char8_t",
    "sized-deallocation",
    "aligned-allocation",
    "threadsafe-statics",
    "wrapv",
    "trapv",
    "strict-overflow",
    "delayed-template-parsing",
    "constexpr-depth",
    "constexpr-steps",
    "template-depth",
    "bracket-depth",
    "diagnostics-color",
    "color-diagnostics",
    "caret-diagnostics",
    "show-column",
    "error-limit",
    "macro-backtrace-limit",
    "template-backtrace-limit",
    "spell-checking",
    "standalone-debug",
    "debug-macro",
    "omit-frame-pointer",
    "common",
    "pic",
    "PIC",
    "pie",
    "PIE",
    "visibility",
    "openmp",
];

/// Whether `path` names one of warpcheck's own plugins
/// (`libwarpcheck.so`, `libwarpcheck-llvm19.so`).
pub fn is_own_plugin(path: &str) -> bool {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("libwarpcheck") && n.contains(".so"))
}

/// The positions of the words that load warpcheck's own plugin:
/// `-fpass-plugin=…/libwarpcheck….so` (with an `-Xarch_device` or
/// `-Xarch_host` before it), `-fplugin=…`, and `-Xclang -load-pass-plugin
/// -Xclang …` (or `-load`). A build that uses warpcheck's CMake package or
/// Make snippet has them on every compile line.
pub fn own_plugin_words(args: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let joined = ["-fpass-plugin=", "-fplugin=", "-load-pass-plugin="]
            .iter()
            .find_map(|p| a.strip_prefix(p));
        if joined.is_some_and(is_own_plugin) {
            if i > 0 && args[i - 1].starts_with("-Xarch_") {
                out.push(i - 1);
            }
            out.push(i);
            continue;
        }
        if a == "-load-pass-plugin" || a == "-load" {
            // `-Xclang -load-pass-plugin -Xclang PATH`.
            let value = (i + 1..args.len()).find(|&j| args[j] != "-Xclang");
            if let Some(v) = value.filter(|&v| is_own_plugin(&args[v])) {
                let from = if i > 0 && args[i - 1] == "-Xclang" {
                    i - 1
                } else {
                    i
                };
                out.extend(from..=v);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Checks every flag of a list given by a file, `project` the directory an
/// `-include`d file must lie under. The first refused flag is the error.
pub fn vet(flags: &[String], project: &Path) -> Result<(), Refusal> {
    let mut i = 0;
    while i < flags.len() {
        let (words, verdict) = classify(flags, i, project);
        if let Err(danger) = verdict {
            let end = (i + words).min(flags.len());
            return Err(Refusal {
                flag: flags[i..end].join(" "),
                at: i,
                danger,
            });
        }
        i += words;
    }
    Ok(())
}

/// The first flag of `flags` in a family always refused (code, toolchain,
/// other configuration), whether or not it would reach clang: for a
/// compile database's whole command line, whose other flags are dropped.
pub fn first_always_refused(flags: &[String]) -> Option<Refusal> {
    let mut i = 0;
    while i < flags.len() {
        let (words, verdict) = classify(flags, i, Path::new("/"));
        match verdict {
            Err(d) if d.always_refused() => {
                let end = (i + words).min(flags.len());
                return Some(Refusal {
                    flag: flags[i..end].join(" "),
                    at: i,
                    danger: d,
                });
            }
            _ => {}
        }
        i += words;
    }
    None
}

/// The flag at `flags[i]`: how many words it spans and whether a file may
/// give it.
fn classify(flags: &[String], i: usize, project: &Path) -> (usize, Result<(), Danger>) {
    let flag = flags[i].as_str();
    let next = flags.get(i + 1).map(String::as_str);
    // A flag in SEPARATE_VALUE given without its value joined.
    let separate = SEPARATE_VALUE.contains(&flag);
    let words = if separate { 2 } else { 1 };
    if flag == "-Xclang" {
        // A cc1 flag: judged as the driver flag it spells (`-load` and
        // `-plugin` are cc1's own).
        let Some(v) = next else {
            return (1, Err(Danger::Unknown));
        };
        let inner = [v.to_string()];
        let verdict = match classify(&inner, 0, project).1 {
            Ok(()) if SEPARATE_VALUE.contains(&v) => Err(Danger::Unknown),
            other => other,
        };
        return (2, verdict);
    }
    (
        words,
        family(flag, if separate { next } else { None }, project),
    )
}

fn family(flag: &str, value: Option<&str>, project: &Path) -> Result<(), Danger> {
    use Danger::*;
    if flag.starts_with('@') {
        return Err(ReadsConfig);
    }
    let starts = |p: &str| flag.starts_with(p);
    // Code loaded into the compiler.
    if [
        "-fplugin",
        "-fpass-plugin",
        "-load",
        "-plugin",
        "-add-plugin",
    ]
    .iter()
    .any(|p| starts(p))
        || starts("-mllvm")
    {
        return Err(LoadsCode);
    }
    // Other programs, or another compiler's files.
    if starts("-B")
        || starts("--gcc-toolchain")
        || starts("--gcc-install-dir")
        || starts("-ccc-")
        || starts("--ptxas-path")
        || starts("-fuse-ld")
        || starts("--driver-mode")
        || starts("-fintegrated-cc1")
        || starts("-fno-integrated-cc1")
        || starts("--sysroot")
        || starts("-Xcuda-")
        || starts("-Xarch_")
        || starts("-Xlinker")
        || starts("-Xassembler")
        || starts("-Xpreprocessor")
    {
        return Err(Toolchain);
    }
    if starts("--config") || starts("-include-pch") || starts("--rsp-quoting") {
        return Err(ReadsConfig);
    }
    if flag == "-o"
        || starts("-M")
        || starts("-save-temps")
        || starts("-gsplit-dwarf")
        || starts("-ftime-trace")
        || starts("-fcrash-diagnostics")
        || starts("-fprofile")
        || starts("-fsave-optimization-record")
        || starts("-foptimization-record")
        || starts("--serialize-diagnostics")
        || starts("-fmodules")
        || starts("-Wp,")
        || starts("-Wa,")
        || starts("-Wl,")
    {
        return Err(WritesFiles);
    }
    // The allow-list.
    for p in [
        "-D",
        "-U",
        "-I",
        "-isystem",
        "-iquote",
        "-idirafter",
        "-cxx-isystem",
    ] {
        if starts(p) {
            return Ok(());
        }
    }
    for p in ["-include", "-imacros"] {
        if let Some(joined) = flag.strip_prefix(p) {
            let file = value.unwrap_or(joined.trim_start_matches('='));
            return if inside(Path::new(file), project) {
                Ok(())
            } else {
                Err(OutsideProject)
            };
        }
    }
    let plain = [
        "-w",
        "-pedantic",
        "-pedantic-errors",
        "-nocudainc",
        "-nocudalib",
        "-nogpulib",
        "-nogpuinc",
        "--no-cuda-version-check",
        "--cuda-device-only",
        "--cuda-host-only",
        "--cuda-noopt-device-debug",
        "-x",
        "-g",
    ];
    if plain.contains(&flag)
        || [
            "-std=",
            "--std=",
            "-O",
            "-g",
            "-W",
            "--cuda-gpu-arch=",
            "--offload-arch=",
        ]
        .iter()
        .any(|p| starts(p))
        || starts("--cuda-path=")
        || starts("-march=sm_")
        || starts("-mcpu=sm_")
        || starts("-ffp-model=")
    {
        return Ok(());
    }
    if let Some(f) = flag.strip_prefix("-f") {
        let f = f.strip_prefix("no-").unwrap_or(f);
        let name = f.split('=').next().unwrap_or(f);
        if F_OPTIONS.contains(&name) {
            return Ok(());
        }
    }
    Err(Unknown)
}

/// Whether `file` lies under `project` once both are made absolute and
/// their links resolved (a file that does not exist is outside).
fn inside(file: &Path, project: &Path) -> bool {
    let real = |p: &Path| -> Option<PathBuf> { std::fs::canonicalize(p).ok() };
    let file = if file.is_absolute() {
        file.to_path_buf()
    } else {
        project.join(file)
    };
    match (real(&file), real(project)) {
        (Some(f), Some(p)) => f.starts_with(p),
        _ => false,
    }
}

#[cfg(test)]
mod own_plugin_tests {
    use super::own_plugin_words;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn warpcheck_s_own_plugin_flags_are_found() {
        let w = words("clang++ -x cuda -fpass-plugin=/opt/wc/lib/libwarpcheck-llvm19.so -c k.cu");
        assert_eq!(own_plugin_words(&w), [3]);
        let w =
            words("clang++ -Xarch_device -fpass-plugin=libwarpcheck.so -gline-tables-only k.cu");
        assert_eq!(own_plugin_words(&w), [1, 2]);
        let w = words("clang++ -Xclang -load-pass-plugin -Xclang /x/libwarpcheck.so -c k.cu");
        assert_eq!(own_plugin_words(&w), [1, 2, 3, 4]);
        for other in [
            "clang++ -fpass-plugin=/x/libother.so -c k.cu",
            "nvcc -c libwarpcheck.cu",
            "clang++ -Xclang -load-pass-plugin",
        ] {
            assert!(own_plugin_words(&words(other)).is_empty(), "{other}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn verdict(s: &str) -> Result<(), Danger> {
        vet(&words(s), Path::new("/nonexistent")).map_err(|r| r.danger)
    }

    #[test]
    fn meaning_flags_pass() {
        for ok in [
            "-DX=1 -D Y -UZ -U W",
            "-I inc -Iinc -isystem /usr/include -iquote q",
            "-std=c++17 -O3 -g -gline-tables-only -Wall -Wno-unused -w",
            "--cuda-gpu-arch=sm_70 --offload-arch=sm_80 --cuda-path=/usr/local/cuda",
            "-fgpu-rdc -fno-fast-math -ffp-contract=fast -fno-exceptions",
            "-x cuda -nocudainc",
            "-Xclang -fno-inline",
        ] {
            assert_eq!(verdict(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn dangerous_families_are_named() {
        use Danger::*;
        for (bad, danger) in [
            ("-fplugin=./evil.so", LoadsCode),
            ("-fpass-plugin=p.so", LoadsCode),
            ("-Xclang -load -Xclang evil.so", LoadsCode),
            ("-Xclang -plugin -Xclang p", LoadsCode),
            ("-Xclang -add-plugin", LoadsCode),
            ("-mllvm -x", LoadsCode),
            ("-B /tmp/bin", Toolchain),
            ("-B/tmp/bin", Toolchain),
            ("--gcc-toolchain=/x", Toolchain),
            ("-ccc-install-dir /x", Toolchain),
            ("--ptxas-path=/x", Toolchain),
            ("--config x.cfg", ReadsConfig),
            ("--config=x.cfg", ReadsConfig),
            ("@flags.rsp", ReadsConfig),
            ("-o /etc/x", WritesFiles),
            ("-MF deps", WritesFiles),
            ("-MD", WritesFiles),
            ("-Wp,-MD,f", WritesFiles),
            ("-ftime-trace", WritesFiles),
            ("-gsplit-dwarf", WritesFiles),
            ("-fprofile-generate", WritesFiles),
            ("-include /etc/passwd", OutsideProject),
            ("-fsomething-new", Unknown),
            ("--whatever", Unknown),
            ("-Xclang", Unknown),
        ] {
            assert_eq!(verdict(bad), Err(danger), "{bad}");
        }
        // The refusal spans the flag's words, and comes after safe ones.
        let r = vet(&words("-DA -Xclang -load -Xclang e.so"), Path::new("/")).unwrap_err();
        assert_eq!(r.flag, "-Xclang -load");
    }

    #[test]
    fn include_must_stay_in_the_project() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pre.h"), "").unwrap();
        let p = dir.path();
        assert_eq!(vet(&words("-include pre.h"), p), Ok(()));
        assert_eq!(vet(&words("-includepre.h"), p), Ok(()));
        let up = vet(&words("-include ../pre.h"), p).unwrap_err();
        assert_eq!(up.danger, Danger::OutsideProject);
        let missing = vet(&words("-include nope.h"), p).unwrap_err();
        assert_eq!(missing.danger, Danger::OutsideProject);
    }

    #[test]
    fn a_compile_database_refuses_only_code_toolchain_and_config() {
        // -o and -MF are a build's own and dropped; -fplugin is refused.
        assert_eq!(
            first_always_refused(&words("clang -c a.cu -o a.o -MD -MF a.d")),
            None
        );
        let r = first_always_refused(&words("clang -c a.cu -fplugin=e.so")).unwrap();
        assert_eq!(r.flag, "-fplugin=e.so");
        assert_eq!(r.danger, Danger::LoadsCode);
    }
}
