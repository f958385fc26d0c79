//! The build is the product: a clang build with warpcheck's plugin, set up
//! by the installed Make snippet or CMake package without a CUDA toolkit,
//! reports the same warnings as `check` on the same files — every example,
//! every `.cu` fixture and a multi-file application whose host code
//! launches its kernels (2-D blocks, 1-D 128 and 512 threads, dynamic
//! shared memory, a block computed at run time) and includes
//! `<cuda_runtime.h>`. Then `check -p` on the CMake build's compile
//! database (which holds the plugin flag) and `build --status-bugs`
//! around the plugin build.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// (file as the build names it, line, check, severity).
type Seen = BTreeSet<(String, u32, String, String)>;

/// Every warning and error warpcheck said in `text`: clang's lines end
/// `[warpcheck-CHECK] [-Wpass-failed]`, `check`'s `[warpcheck-CHECK]`.
fn findings(text: &str) -> Seen {
    let mut out = Seen::new();
    for line in text.lines() {
        let Some(tag) = line.find(" [warpcheck-") else {
            continue;
        };
        let check = &line[tag + 12..];
        let check = &check[..check.find(']').unwrap_or(0)];
        let mut parts = line.splitn(4, ':');
        let (Some(file), Some(l), Some(_col), Some(rest)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let severity = match rest.trim_start() {
            r if r.starts_with("warning:") => "warning",
            r if r.starts_with("error:") => "error",
            _ => continue,
        };
        if let Ok(l) = l.parse() {
            out.insert((file.into(), l, check.into(), severity.into()));
        }
    }
    out
}

/// A directory with the examples (`ex/`), the `.cu` fixtures (`fx/`) and
/// the application (`app/`).
fn sources() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (from, to) in [
        (root.join("examples"), "ex"),
        (fixture("cu"), "fx"),
        (fixture("projects/app"), "app"),
    ] {
        let dest = dir.path().join(to);
        std::fs::create_dir_all(&dest).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap();
            if p.extension().is_some_and(|x| x == "cu" || x == "h") {
                std::fs::copy(&p, dest.join(name)).unwrap();
            }
        }
    }
    dir
}

fn clangxx() -> String {
    clang().replace("clang", "clang++")
}

/// The user guide's Make recipe without a toolkit, for every source.
const MAKEFILE: &str = "\
include $(WARPCHECK_PREFIX)/share/warpcheck/warpcheck.mk
CUDAFLAGS = -x cuda --cuda-device-only -S --cuda-gpu-arch=sm_80 -O2 \\
            $(WARPCHECK_NO_TOOLKIT_FLAGS) $(WARPCHECK_CUDAFLAGS)
SRCS := $(sort $(wildcard */*.cu))
all: $(SRCS:.cu=.ptx)
%.ptx: %.cu
\t$(CLANG) $(CUDAFLAGS) $< -o $@
clean:
\trm -f */*.ptx
";

/// What `check` (installed) says of every source in `dir`.
fn check_all(prefix: &Path, dir: &Path, extra: &[&str]) -> Seen {
    let files: Vec<String> = ["ex", "fx", "app"]
        .iter()
        .flat_map(|d| cu_files(&dir.join(d)))
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    let out = run(Command::new(prefix.join("bin/warpcheck"))
        .current_dir(dir)
        .arg("check")
        .args(extra)
        .args(&files));
    assert!(out.status.code().unwrap_or(9) <= 1, "{}", stderr(&out));
    findings(&stdout(&out))
}

/// Under clang 22 the module the plugin is handed differs from the bitcode
/// `check` reads (a struct copy's pieces in `sim_shared.cu`, lines 47 and
/// 49, are siblings in the bitcode and not in the plugin's module, so
/// their shares and severities differ): a known gap of the LLVM 22
/// plugin, said in the README, so parity is held for the default (LLVM
/// 19) build.
fn parity_holds_here(test: &str) -> bool {
    if warpcheck::ir::major::LLVM_MAJOR != 19 {
        skip(
            test,
            "the LLVM 22 plugin's module differs from check's bitcode",
        );
        return false;
    }
    true
}

#[test]
fn the_make_build_reports_what_check_reports() {
    if !parity_holds_here("the_make_build_reports_what_check_reports") {
        return;
    }
    let prefix = install();
    let dir = sources();
    std::fs::write(dir.path().join("Makefile"), MAKEFILE).unwrap();
    let vars = [
        format!("WARPCHECK_PREFIX={}", prefix.path().display()),
        format!("CLANG={}", clangxx()),
    ];
    let out = run(Command::new("make")
        .current_dir(dir.path())
        .args(["-j2", "-s", "--output-sync=target"])
        .args(&vars));
    let build = stderr(&out);
    assert!(out.status.success(), "{build}");
    let from_build = findings(&build);
    let from_check = check_all(prefix.path(), dir.path(), &[]);
    let only_build: Vec<_> = from_build.difference(&from_check).collect();
    let only_check: Vec<_> = from_check.difference(&from_build).collect();
    assert!(
        only_build.is_empty() && only_check.is_empty(),
        "build only: {only_build:#?}\ncheck only: {only_check:#?}"
    );
    assert!(from_build.len() > 40, "{from_build:#?}");

    // The application's launches, derived by hand. transpose.cu's tile
    // read `tile[threadIdx.x][threadIdx.y]` at 16×16 threads: a warp is
    // two rows (ty, ty+1), lane (tx, ty) reads word 16·tx + ty, bank
    // (16·tx + ty) mod 32: the 8 even tx share bank ty, the 8 odd ones
    // bank 16 + ty: 8-way (at the 256×1×1 guess it would be 16-way).
    let line = |file: &str, l: u32| -> String {
        build
            .lines()
            .find(|x| x.starts_with(&format!("{file}:{l}:")) && x.contains("warning:"))
            .unwrap_or_else(|| panic!("no warning at {file}:{l} in\n{build}"))
            .to_string()
    };
    assert!(line("app/transpose.cu", 21).contains("8-way bank conflict"));
    // reduce.cu launches 512 threads: `tid % (2 * s) == 0` splits all 16
    // warps for s = 1..16 and 8, 4, 2, 1 of them for s = 32..256; the
    // counter is named after the source's `s`.
    let reduce = line("app/reduce.cu", 12);
    assert!(
        reduce.contains("16 of 16 warps (every warp) for s = 1..16, then 8, 4, 2, 1 of 16"),
        "{reduce}"
    );
    // particles.cu's three lines read and write fields of one 32-byte
    // structure array: one cause, one warning, at the first line.
    let particles = line("app/particles.cu", 13);
    assert!(
        particles.contains("9 accesses of p on lines 13-15, one cause"),
        "{particles}"
    );
    assert!(!build.contains("app/particles.cu:14:"), "{build}");
    // gather.cu's `every_fourth` is launched with a block computed at run
    // time: its warning says the shape is assumed, in the build too.
    assert!(
        build.contains("note: block shape assumed: 256×1×1 (the launch at"),
        "{build}"
    );
    // The parameter the stride reads is named as the source names it.
    assert!(line("app/gather.cu", 8).contains("4·cols bytes apart"));
    // Every application warning has its share of its kernel's time.
    for l in build
        .lines()
        .filter(|l| l.starts_with("app/") && l.contains(" warning: "))
    {
        assert!(l.contains("of the kernel's time)"), "{l}");
    }

    // `build --status-bugs` around the same plugin build counts what the
    // plugin printed and fails.
    let out = run(Command::new("make")
        .current_dir(dir.path())
        .arg("clean")
        .args(&vars));
    assert!(out.status.success());
    let warnings = build
        .lines()
        .filter(|l| l.contains(": warning: ") && l.contains("[warpcheck-"))
        .count();
    let out = run(Command::new(prefix.path().join("bin/warpcheck"))
        .current_dir(dir.path())
        .env("PATH", "/usr/bin:/bin")
        .args(["build", "--status-bugs", "--", "make", "-s", "-j2"])
        .args(&vars));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let units = cu_files(&dir.path().join("ex")).len()
        + cu_files(&dir.path().join("fx")).len()
        + cu_files(&dir.path().join("app")).len();
    let summary = format!("warpcheck: {units} translation units analysed, {warnings} warnings in");
    assert!(err.contains(&summary), "want {summary} in:\n{err}");
}

/// The CMake package's plugin target over the application, then `check
/// -p` on the compile database that build wrote: the plugin flag in every
/// entry is warpcheck's own, so the database's findings are `check`'s.
#[test]
fn the_cmake_build_and_its_database_report_what_check_reports() {
    if !parity_holds_here("the_cmake_build_and_its_database_report_what_check_reports") {
        return;
    }
    let prefix = install();
    let dir = sources();
    let app = dir.path().join("app");
    std::fs::write(
        app.join("CMakeLists.txt"),
        "\
cmake_minimum_required(VERSION 3.20)
project(app CXX)
find_package(warpcheck 0.1 REQUIRED CONFIG)
file(GLOB SRCS *.cu)
add_library(kernels OBJECT ${SRCS})
set_source_files_properties(${SRCS} PROPERTIES LANGUAGE CXX)
target_compile_options(kernels PRIVATE -x cuda --cuda-device-only -emit-llvm --cuda-gpu-arch=sm_80 -O2
  ${WARPCHECK_NO_TOOLKIT_FLAGS})
target_link_libraries(kernels PRIVATE warpcheck::plugin)
",
    )
    .unwrap();
    let out = run(Command::new("cmake")
        .current_dir(&app)
        .args([
            "-S",
            ".",
            "-B",
            "build",
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
        ])
        .arg(format!("-DCMAKE_CXX_COMPILER={}", clangxx()))
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.path().display())));
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = run(Command::new("cmake").arg("--build").arg(app.join("build")));
    let build = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{build}");
    // CMake names the sources by absolute path: compare by file name.
    let by_name = |s: Seen| -> Seen {
        s.into_iter()
            .map(|(f, l, c, sev)| {
                let name = Path::new(&f)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (name, l, c, sev)
            })
            .collect()
    };
    let from_build = by_name(findings(&build));
    let warpcheck = prefix.path().join("bin/warpcheck");
    let plain = run(Command::new(&warpcheck)
        .current_dir(&app)
        .arg("check")
        .args(
            cu_files(&app)
                .iter()
                .map(|p| p.file_name().unwrap().to_owned()),
        ));
    let from_check = by_name(findings(&stdout(&plain)));
    assert_eq!(from_build, from_check, "{build}\n{}", stdout(&plain));
    assert!(!from_build.is_empty());
    // `check -p build`: every entry holds `-fpass-plugin=…libwarpcheck…`.
    let db = std::fs::read_to_string(app.join("build/compile_commands.json")).unwrap();
    assert!(db.contains("-fpass-plugin="), "{db}");
    let out = run(Command::new(&warpcheck)
        .current_dir(&app)
        .args(["check", "-p", "build"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        by_name(findings(&stdout(&out))),
        from_check,
        "{}",
        stderr(&out)
    );
}
