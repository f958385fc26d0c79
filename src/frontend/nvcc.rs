//! nvcc command lines as clang device-only options.
//!
//! Most CUDA projects build with nvcc, so a compile database or a launcher
//! hands us nvcc's flags. What decides the device code is kept: the target
//! architecture, include paths, macros, the language standard, relocatable
//! device code and debug info. Host-only and driver options are dropped;
//! an option we do not know is dropped with one warning (per run, by the
//! caller), never an error.

use super::CompileOptions;
use std::path::{Path, PathBuf};

/// A compile command split into what we use.
#[derive(Clone, Debug, Default)]
pub struct Translated {
    pub options: CompileOptions,
    /// The source files the command compiles (`.cu`, or anything after
    /// `-x cu`), made absolute.
    pub sources: Vec<PathBuf>,
    /// Options dropped because we do not know them.
    pub unknown: Vec<String>,
}

/// Options we translate that take a value (as the next argument or after
/// `=`).
const TRANSLATED_WITH_VALUE: &[&str] = &[
    "-Xcompiler",
    "--compiler-options",
    "-gencode",
    "--generate-code",
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
    "-I",
    "--include-path",
    "-D",
    "--define-macro",
    "-U",
    "--undefine-macro",
    "-isystem",
    "-include",
    "--pre-include",
    "-x",
    "--x",
    "-std",
    "--std",
    "-rdc",
    "--relocatable-device-code",
];

/// Options (nvcc's or the host compiler's) the device compile does not
/// need, each with whether it takes a value.
const DROPPED: &[(&str, bool)] = &[
    ("-c", false),
    ("--compile", false),
    ("-o", true),
    ("--output-file", true),
    ("-ccbin", true),
    ("--compiler-bindir", true),
    ("-Xptxas", true),
    ("--ptxas-options", true),
    ("-Xlinker", true),
    ("--linker-options", true),
    ("-Xnvlink", true),
    ("--nvlink-options", true),
    ("-Xcudafe", true),
    ("-Xarchive", true),
    ("-maxrregcount", true),
    ("--maxrregcount", true),
    ("-MD", false),
    ("-MMD", false),
    ("-M", false),
    ("-MM", false),
    ("-MP", false),
    ("-MF", true),
    ("-MT", true),
    ("-MQ", true),
    ("--default-stream", true),
    ("-t", true),
    ("--threads", true),
    ("--expt-relaxed-constexpr", false),
    ("--expt-extended-lambda", false),
    ("-expt-relaxed-constexpr", false),
    ("-expt-extended-lambda", false),
    ("--extended-lambda", false),
    ("-extended-lambda", false),
    ("-allow-unsupported-compiler", false),
    ("--allow-unsupported-compiler", false),
    ("-m64", false),
    ("-m32", false),
    ("--machine", true),
    ("-keep", false),
    ("--keep", false),
    ("--keep-dir", true),
    ("-keep-dir", true),
    ("-res-usage", false),
    ("--resource-usage", false),
    ("-lineinfo", false),
    ("--generate-line-info", false),
    ("--diag-suppress", true),
    ("-diag-suppress", true),
    ("--diag-warn", true),
    ("--diag-error", true),
    ("-L", true),
    ("--library-path", true),
    ("-l", true),
    ("--library", true),
    ("-odir", true),
    ("--output-directory", true),
    ("-Werror", true),
    ("--Werror", true),
    ("-w", false),
    ("--disable-warnings", false),
    ("-ftz", true),
    ("-prec-div", true),
    ("-prec-sqrt", true),
    ("-fmad", true),
    ("--ftz", true),
    ("--prec-div", true),
    ("--prec-sqrt", true),
    ("--fmad", true),
    ("-use_fast_math", false),
    ("--use_fast_math", false),
    ("-cudart", true),
    ("--cudart", true),
    ("-cudadevrt", true),
    ("--cudadevrt", true),
    ("-O0", false),
    ("-O1", false),
    ("-O2", false),
    ("-O3", false),
    ("-Os", false),
    ("-dlto", false),
    ("-split-compile", true),
    ("--split-compile", true),
    ("-forward-unknown-to-host-compiler", false),
    ("--forward-unknown-to-host-compiler", false),
    ("-Wno-deprecated-gpu-targets", false),
    ("--Wno-deprecated-gpu-targets", false),
    ("-Wreorder", false),
    ("-Wno-deprecated-declarations", false),
    ("--display-error-number", false),
    ("-err-no", false),
    ("-v", false),
    ("--verbose", false),
    ("-pg", false),
    ("--shared", false),
    ("-shared", false),
];

/// Host-compiler options (from `-Xcompiler`) that have no meaning for the
/// device side or that clang rejects for nvptx.
const HOST_ONLY: &[&str] = &[
    "-fPIC",
    "-fpic",
    "-fPIE",
    "-fpie",
    "-fopenmp",
    "-pthread",
    "-rdynamic",
    "-fvisibility=hidden",
    "-fvisibility=default",
    "-fno-strict-aliasing",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-g",
    "-O0",
    "-O1",
    "-O2",
    "-O3",
];

fn takes_value(opt: &str) -> bool {
    TRANSLATED_WITH_VALUE.contains(&opt) || DROPPED.iter().any(|&(o, v)| o == opt && v)
}

/// Splits `--opt=value` (and `-opt=value`) into name and value.
fn split_eq(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((name, value)) if name.starts_with('-') => (name, Some(value)),
        _ => (arg, None),
    }
}

/// The `sm_NN` an architecture option names: `sm_70`, `compute_70`,
/// `arch=compute_70,code=sm_70` or `[sm_70,compute_70]`.
fn gpu_arch(value: &str) -> Option<String> {
    let wanted = |s: &str| {
        let s = s.trim_matches(|c| c == '[' || c == ']' || c == '"' || c == '\'');
        s.strip_prefix("sm_")
            .or_else(|| s.strip_prefix("compute_"))
            .or_else(|| s.strip_prefix("lto_"))
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric()))
            .map(|n| format!("sm_{n}"))
    };
    // Prefer what `code=` names (the machine code), then `arch=`.
    let parts: Vec<&str> = value.split([',', ' ']).collect();
    let code: Vec<&str> = parts
        .iter()
        .map(|p| p.strip_prefix("code=").unwrap_or(p))
        .collect();
    code.iter()
        .filter(|p| p.contains("sm_"))
        .chain(code.iter())
        .find_map(|p| wanted(p.strip_prefix("arch=").unwrap_or(p)))
}

/// Translates one nvcc command line (`args[0]` is the compiler) run in
/// `dir`.
pub fn translate(args: &[String], dir: &Path) -> Translated {
    let mut t = Translated::default();
    let abs = |p: &str| -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        }
    };
    let mut arch: Option<String> = None;
    let mut language_cuda = false;
    let mut i = 1;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        let (name, inline) = split_eq(arg);
        // `-I/x`, `-DFOO` (attached values of one-letter options).
        let attached = ["-I", "-D", "-U", "-L", "-l"]
            .into_iter()
            .find(|p| name.starts_with(p) && name.len() > p.len());
        let (name, value) = match attached {
            Some(p) => (p, Some(arg[p.len()..].to_string())),
            None if inline.is_some() => (name, inline.map(String::from)),
            None if takes_value(name) => {
                let v = args.get(i).cloned();
                i += 1;
                (name, v)
            }
            None => (name, None),
        };
        let value = value.unwrap_or_default();
        match name {
            "-I" | "--include-path" => t.options.includes.push(abs(&value)),
            "-D" | "--define-macro" => t.options.defines.push(value),
            "-U" | "--undefine-macro" => t.options.extra.push(format!("-U{value}")),
            "-isystem" => t
                .options
                .extra
                .extend(["-isystem".into(), abs(&value).display().to_string()]),
            "-include" | "--pre-include" => t
                .options
                .extra
                .extend(["-include".into(), abs(&value).display().to_string()]),
            "-std" | "--std" => t.options.extra.push(format!("-std={value}")),
            "-gencode" | "--generate-code" | "-arch" | "--gpu-architecture" | "-code"
            | "--gpu-code" => {
                if arch.is_none() {
                    arch = gpu_arch(&value);
                }
            }
            "-rdc" | "--relocatable-device-code" if value == "true" => {
                t.options.extra.push("-fgpu-rdc".into())
            }
            "-rdc" | "--relocatable-device-code" => {}
            "-dc" | "--device-c" => t.options.extra.push("-fgpu-rdc".into()),
            "-G" | "--device-debug" => t.options.full_debug = true,
            "-x" | "--x" => language_cuda = value == "cu" || value == "cuda",
            "-Xcompiler" | "--compiler-options" => {
                let device =
                    |x: &&str| !x.is_empty() && !HOST_ONLY.contains(x) && !x.starts_with("-O");
                t.options.extra.extend(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(device)
                        .map(String::from),
                );
            }
            _ if DROPPED.iter().any(|&(o, _)| o == name) => {}
            _ if name.starts_with('-') => t.unknown.push(arg.to_string()),
            _ => {
                let is_cuda = Path::new(name)
                    .extension()
                    .is_some_and(|e| e == "cu" || (language_cuda && e != "o"));
                if is_cuda {
                    t.sources.push(abs(name));
                }
            }
        }
    }
    if let Some(a) = arch {
        t.options.gpu_arch = a;
    }
    t
}

/// Splits a shell command line into words as a POSIX shell does: blanks
/// separate, quotes group, a backslash escapes the next character (not
/// inside single quotes), `#` at a word's start comments out the line.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    // shlex says only that the line is bad, not where: name both causes.
    shlex::split(line).ok_or_else(|| "an unclosed quote or a trailing backslash".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    #[test]
    fn shell_words() {
        assert_eq!(
            words(r#"nvcc -DNAME="a b" 'x y' c\ d -I"inc dir""#),
            ["nvcc", "-DNAME=a b", "x y", "c d", "-Iinc dir"]
        );
        assert!(split_command("nvcc 'open").is_err());
        assert!(split_command("nvcc -c a.cu \\").is_err());
        // A line continued in a shell script, and a comment after it.
        assert_eq!(words("nvcc \\\n-c a.cu # built"), ["nvcc", "-c", "a.cu"]);
    }

    #[test]
    fn a_cmake_nvcc_line() {
        let t = translate(
            &words(
                "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -ccbin=/usr/bin/g++ \
                 -DUSE_X=1 -I/abs/inc -Irel --expt-relaxed-constexpr -O3 -std=c++17 \
                 \"--generate-code=arch=compute_75,code=[compute_75,sm_75]\" \
                 -Xcompiler=-fPIC,-Wall -rdc=true -lineinfo -x cu -c /src/k.cu -o k.o",
            ),
            Path::new("/build"),
        );
        assert_eq!(t.options.gpu_arch, "sm_75");
        assert_eq!(
            t.options.includes,
            [PathBuf::from("/abs/inc"), PathBuf::from("/build/rel")]
        );
        assert_eq!(t.options.defines, ["USE_X=1"]);
        assert_eq!(t.options.extra, ["-std=c++17", "-fgpu-rdc"]);
        assert_eq!(t.sources, [PathBuf::from("/src/k.cu")]);
        assert!(t.unknown.is_empty(), "{:?}", t.unknown);
    }

    #[test]
    fn architectures_and_debug() {
        let t = translate(&words("nvcc -arch sm_86 -G -c a.cu"), Path::new("/b"));
        assert_eq!(t.options.gpu_arch, "sm_86");
        assert!(t.options.full_debug);
        assert_eq!(t.sources, [PathBuf::from("/b/a.cu")]);
        let t = translate(
            &words(
                "nvcc -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 a.cu",
            ),
            Path::new("/b"),
        );
        // The first target is analysed.
        assert_eq!(t.options.gpu_arch, "sm_70");
        let t = translate(&words("nvcc -arch=compute_61 a.cu"), Path::new("/b"));
        assert_eq!(t.options.gpu_arch, "sm_61");
    }

    #[test]
    fn unknown_options_are_kept_aside() {
        let t = translate(
            &words("nvcc --frobnicate -Xptxas -v -Xcompiler -fopenmp,-DHOST=2 a.cu"),
            Path::new("/b"),
        );
        assert_eq!(t.unknown, ["--frobnicate"]);
        // -Xptxas takes `-v` with it; -fopenmp is host-only.
        assert_eq!(t.options.extra, ["-DHOST=2"]);
    }
}
