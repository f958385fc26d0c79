//! warpcheck in other people's builds: a compile database written for
//! nvcc (`check -p`), analysed with each entry's own flags.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Copies the nvcc project into a temp dir and writes its database, as
/// CMake's Makefile generator would for nvcc, plus a host entry, an entry
/// whose file is gone, and an option we do not know.
fn nvcc_project(dir: &Path) {
    let src = fixture("projects/nvcc_db");
    for sub in ["src", "include"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dir.join(sub).join(p.file_name().unwrap())).unwrap();
        }
    }
    let build = dir.join("build");
    std::fs::create_dir_all(&build).unwrap();
    let nvcc = "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -ccbin=/usr/bin/g++";
    let db = serde_json::json!([
        {"directory": build, "file": dir.join("src/strided.cu"),
         "command": format!("{nvcc} -I{} --expt-relaxed-constexpr -O3 \
             \"--generate-code=arch=compute_80,code=[compute_80,sm_80]\" \
             -Xcompiler=-fPIC -x cu -c {} -o strided.o",
             dir.join("include").display(), dir.join("src/strided.cu").display())},
        {"directory": build, "file": dir.join("src/odd.cu"),
         "command": format!("{nvcc} -DODD_ONLY -arch=sm_75 -lineinfo --frobnicate -c {} -o odd.o",
             dir.join("src/odd.cu").display())},
        {"directory": build, "file": dir.join("src/host.cpp"),
         "command": format!("/usr/bin/g++ -c {}", dir.join("src/host.cpp").display())},
        {"directory": build, "file": dir.join("src/gone.cu"),
         "command": format!("{nvcc} -c {}", dir.join("src/gone.cu").display())}
    ]);
    std::fs::write(build.join("compile_commands.json"), db.to_string()).unwrap();
}

#[test]
fn a_database_written_for_nvcc() {
    let dir = tempfile::tempdir().unwrap();
    nvcc_project(dir.path());
    let out = run(warpcheck()
        .args(["check", "--format", "json", "--sites", "-j", "2", "-p"])
        .arg(dir.path().join("build")));
    // The missing file is an input error; the two kernels still report.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("gone.cu: no such file"), "{err}");
    // Warned once, and dropped.
    assert_eq!(err.matches("'--frobnicate'").count(), 1, "{err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // -I found cfg.h: STRIDE 2 floats is 8 bytes between lanes, 256 bytes
    // per warp, 8 sectors for an ideal 4.
    let load = &sites(&r, "strided", "load", 7)[0];
    assert_eq!(load["sectors"]["full_max"], 8, "{load:#}");
    assert_eq!(load["sectors"]["ideal"], 4, "{load:#}");
    // -DODD_ONLY made the branch: odd lanes split all 4 warps of 128.
    let branch = &sites(&r, "odd", "branch", 6)[0];
    assert_eq!(branch["divergence"]["class"], "total", "{branch:#}");
    assert_eq!(branch["divergence"]["warps"], 4);
}

#[test]
fn naming_files_picks_entries() {
    let dir = tempfile::tempdir().unwrap();
    nvcc_project(dir.path());
    let out = run(warpcheck()
        .args(["check", "-p"])
        .arg(dir.path().join("build"))
        .arg(dir.path().join("src/odd.cu")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("odd.cu:6:7: warning: branch diverges in 4 of 4 warps"),
        "{text}"
    );
    assert!(!text.contains("strided.cu"), "{text}");
    // A file the database does not compile is an error.
    let out = run(warpcheck()
        .args(["check", "-p"])
        .arg(dir.path().join("build"))
        .arg(dir.path().join("src/host.cpp")));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a CUDA entry"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_or_malformed_database_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(warpcheck().args(["check", "-p"]).arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("compile_commands.json: cannot read"),
        "{}",
        stderr(&out)
    );
    std::fs::write(dir.path().join("compile_commands.json"), "{ nope").unwrap();
    let out = run(warpcheck().args(["check", "-p"]).arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("compile_commands.json:1:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn nolint_comments() {
    // `--min-impact=0`: each branch guards one store, cheap enough to be
    // a note by default; what is checked here is which NOLINT silences it.
    let out = run(warpcheck()
        .args(["check", "--min-impact=0"])
        .arg(fixture("cu/nolint.cu")));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let warned: Vec<u32> = text
        .lines()
        .filter(|l| l.contains(": warning: branch diverges"))
        .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    // 5: NOLINT on the line; 7: NOLINTNEXTLINE with a glob; 9 and 10:
    // inside BEGIN/END. Left: 12 (a different check named), 13 (a bare
    // NOLINT, off by default) and 14 (a misspelt name).
    assert_eq!(warned, [12, 13, 14], "{text}");
    let err = stderr(&out);
    assert!(
        err.contains(
            "nolint.cu:14: warning: NOLINT names an unknown check 'warpcheck-divergnt-branch'"
        ),
        "{err}"
    );
    // Clang's count takes in every warning printed, the misspelt NOLINT's
    // too, as clang-tidy's does.
    let printed = text
        .lines()
        .chain(err.lines())
        .filter(|l| l.contains(": warning: "))
        .count();
    assert!(
        err.contains(&format!("{printed} warnings generated.")),
        "{printed} warnings printed: {err}"
    );
}

/// A copy of the Makefile project in a temp dir (its `odd.cu` is the
/// database project's).
fn make_project(dir: &Path) {
    let src = fixture("projects/nvcc_make");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(p.file_name().unwrap())).unwrap();
    }
    std::fs::copy(fixture("projects/nvcc_db/src/odd.cu"), dir.join("odd.cu")).unwrap();
}

/// `odd.cu` line 6, `if (t % 2)`: odd and even lanes part in all 4 warps.
const ODD_WARNING: &str = "odd.cu:6:7: warning: branch diverges in 4 of 4 warps";

#[test]
fn build_analyze_only_on_a_makefile_without_nvcc() {
    let dir = tempfile::tempdir().unwrap();
    make_project(dir.path());
    let out =
        run(warpcheck()
            .current_dir(dir.path())
            .args(["build", "--analyze-only", "--", "make"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(ODD_WARNING), "{err}");
    // Two units compiled (the link compiles none); one warning, in odd.cu.
    assert!(
        err.contains("warpcheck: 2 translation units analysed, 1 warning in 1"),
        "{err}"
    );
    // The outputs exist (empty), so make went on to the link.
    assert!(dir.path().join("app").is_file());
    // --status-bugs fails a build with findings.
    run(Command::new("make").arg("clean").current_dir(dir.path()));
    let out = run(warpcheck().current_dir(dir.path()).args([
        "build",
        "--analyze-only",
        "--status-bugs",
        "--",
        "make",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn build_without_a_real_nvcc_analyses_only() {
    let dir = tempfile::tempdir().unwrap();
    make_project(dir.path());
    let out = run(warpcheck()
        .current_dir(dir.path())
        .env("PATH", "/usr/bin:/bin")
        .env_remove("NVCC")
        .env_remove("CUDACXX")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .args(["build", "--", "make"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("no nvcc on PATH"), "{err}");
    assert!(
        err.contains("nvcc compiles are analysed, not compiled"),
        "{err}"
    );
    assert!(err.contains("translation unit"), "{err}");
}

/// A stand-in for nvcc: writes its `-o` output, or fails with 3 when the
/// command has `-DFAIL`.
fn fake_nvcc(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("nvcc");
    std::fs::write(
        &p,
        "#!/bin/sh\nout=\nfor a; do case \"$prev\" in -o) out=$a;; esac; prev=$a; \
         [ \"$a\" = -DFAIL ] && { echo 'nvcc: error' >&2; exit 3; }; done\n\
         [ -n \"$out\" ] && echo compiled > \"$out\"\nexit 0\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn launch_runs_the_compiler_then_analyses() {
    let dir = tempfile::tempdir().unwrap();
    make_project(dir.path());
    let nvcc = fake_nvcc(dir.path());
    let nvcc = nvcc.to_str().unwrap();
    let out = run(warpcheck().current_dir(dir.path()).args([
        "launch",
        "--",
        nvcc,
        "-arch=sm_80",
        "-DODD_ONLY",
        "-c",
        "odd.cu",
        "-o",
        "odd.o",
    ]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains(ODD_WARNING), "{err}");
    // The real command ran and wrote its output.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("odd.o")).unwrap(),
        "compiled\n"
    );
    // --werror escalates the finding.
    let out = run(warpcheck().current_dir(dir.path()).args([
        "launch",
        "--werror",
        "--",
        nvcc,
        "-DODD_ONLY",
        "-c",
        "odd.cu",
        "-o",
        "odd.o",
    ]));
    assert_eq!(out.status.code(), Some(1));
    // A failing compile passes its status through, unanalysed.
    let out = run(warpcheck().current_dir(dir.path()).args([
        "launch",
        "--",
        nvcc,
        "-DFAIL",
        "-DODD_ONLY",
        "-c",
        "odd.cu",
        "-o",
        "odd.o",
    ]));
    assert_eq!(out.status.code(), Some(3));
    assert!(
        !stderr(&out).contains("warning: branch"),
        "{}",
        stderr(&out)
    );
    // So does a compiler that cannot be run.
    let out = run(warpcheck().current_dir(dir.path()).args([
        "launch",
        "--",
        "/no/such/nvcc",
        "-c",
        "odd.cu",
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot run /no/such/nvcc"),
        "{}",
        stderr(&out)
    );
}

/// A kernel with a branch that splits warps, and a strided load.
const CONFIGURED: &str = "__global__ void scale(float *out, const float *in) {\n\
    \x20 int t = threadIdx.x;\n\
    \x20 if (t % 2) out[t] = in[2 * t];\n\
    }\n";

#[test]
fn a_config_file_sets_launch_dims_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("k.cu"), CONFIGURED).unwrap();
    // Found walking up from src/deep; 64 threads are 2 warps.
    std::fs::write(
        dir.path().join(".warpcheck.yaml"),
        "Checks: '*,-warpcheck-uncoalesced-access'\n\
         WarningsAsErrors: 'warpcheck-divergent-*'\n\
         MinImpact: 0\n\
         Kernels:\n  'sca*': {block: [64]}\n",
    )
    .unwrap();
    let out = run(warpcheck()
        .args(["check", "--format", "json"])
        .arg(sub.join("k.cu")));
    // The divergence warning is an error by the configuration: exit 1.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = kernel(&r, "scale");
    assert_eq!(k["block_dim"], serde_json::json!([64, 1, 1]));
    assert_eq!(k["block_dim_source"], "config");
    let findings = r["findings"].as_array().unwrap();
    // t % 2 splits both warps; the strided load is not reported.
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert_eq!(findings[0]["check"], "divergent-branch");
    assert_eq!(findings[0]["severity"], "error");
    assert!(findings[0]["message"]
        .as_str()
        .unwrap()
        .contains("2 of 2 warps"));
    // dump-config shows what applies.
    let out = run(warpcheck().arg("dump-config").arg(sub.join("k.cu")));
    assert!(
        stdout(&out).contains("WarningsAsErrors: warpcheck-divergent-*"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_malformed_config_names_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), CONFIGURED).unwrap();
    std::fs::write(
        dir.path().join(".warpcheck.yaml"),
        "Checks: '*'\nKernel: {}\n",
    )
    .unwrap();
    let out = run(warpcheck().arg("check").arg(dir.path().join("k.cu")));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(".warpcheck.yaml:2:1: unknown field `Kernel`"),
        "{err}"
    );
}

#[test]
fn the_make_snippet_with_clang_and_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("projects/clang_make");
    for f in ["Makefile", "kernel.cu"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let vars = [
        format!(
            "WARPCHECK_MK={}",
            root.join("scripts/warpcheck.mk").display()
        ),
        format!("WARPCHECK={}", env!("CARGO_BIN_EXE_warpcheck")),
        format!(
            "CUDA_HEADER={}",
            root.join("src/frontend/warpcheck_cuda.h").display()
        ),
        format!("CLANG={}", clang().replace("clang", "clang++")),
    ];
    // The build itself warns, through the plugin: every warp of 256
    // threads splits on `t % 2` (line 4).
    let out = run(Command::new("make").current_dir(dir.path()).args(&vars));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("kernel.cu:4:7: warning: branch diverges in 8 of 8 warps"),
        "{all}"
    );
    assert!(all.contains("-Xarch_device -fpass-plugin="), "{all}");
    // `make warpcheck` runs the CLI over the sources (no database here).
    let out = run(Command::new("make")
        .current_dir(dir.path())
        .args(&vars)
        .args(["warpcheck", "WARPCHECK_ARGS=--werror"]));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !out.status.success(),
        "--werror with a warning fails: {all}"
    );
    assert!(
        all.contains("kernel.cu:4:7: warning: branch diverges"),
        "{all}"
    );
}
