//! Hostile input: what a pull request can put in front of `warpcheck` in
//! CI (configuration, compile databases, sizes, paths). Each case must be
//! a usage error (exit 2) with a message naming the place, never code run
//! on the machine, a panic or a huge allocation.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;

const GOOD: &str = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n";

/// A shared library whose constructor writes `$EVIL_OUT`: if clang ever
/// loads it, the file appears. `None` (with a note) without a C compiler.
fn evil_library(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("evil.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\n#include <stdlib.h>\n\
         __attribute__((constructor)) static void evil(void) {\n\
           const char *p = getenv(\"EVIL_OUT\");\n\
           if (p) { FILE *f = fopen(p, \"w\"); if (f) { fputs(\"pwned\", f); fclose(f); } }\n\
         }\n",
    )
    .unwrap();
    let so = dir.join("evil.so");
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .status();
    match built {
        Ok(s) if s.success() => Some(so),
        _ => {
            skip("evil_library", "no C compiler (cc) to build the plugin");
            None
        }
    }
}

/// A project with `good.cu` and a `.warpcheck.yaml` of `config`.
fn project(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.cu"), GOOD).unwrap();
    std::fs::write(dir.path().join(".warpcheck.yaml"), config).unwrap();
    dir
}

fn check_in(dir: &Path, extra: &[&str], evil_out: &Path) -> Output {
    run(warpcheck()
        .current_dir(dir)
        .env("EVIL_OUT", evil_out)
        .arg("check")
        .args(no_toolkit_args())
        .args(extra)
        .arg("good.cu"))
}

/// warpcheck's own headers, so that the test needs no toolkit.
fn no_toolkit_args() -> Vec<String> {
    vec!["--no-cuda".into()]
}

#[test]
fn a_plugin_in_the_configuration_is_never_loaded() {
    let dir =
        project("Checks: '*'\nCompileFlags:\n  Add:\n    - -DN=4\n    - -fplugin=./evil.so\n");
    let Some(_) = evil_library(dir.path()) else {
        return;
    };
    let out_file = dir.path().join("written");
    let out = check_in(dir.path(), &[], &out_file);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // `-fplugin=` is on line 5 of the file (line 4 holds -DN=4).
    assert!(
        err.contains(".warpcheck.yaml:5:1: CompileFlags.Add: '-fplugin=./evil.so' loads code"),
        "{err}"
    );
    assert!(err.contains("--allow-unsafe-flags"), "{err}");
    assert!(!out_file.exists(), "the plugin's constructor ran");

    // The control: allowed on the command line, clang does load it (so the
    // test above can tell a loaded plugin from a refused one).
    let out = check_in(dir.path(), &["--allow-unsafe-flags"], &out_file);
    assert!(
        out_file.exists(),
        "clang did not load the plugin: {}",
        stderr(&out)
    );
}

#[test]
fn every_code_loading_family_is_refused_from_the_configuration() {
    for (add, flag, line) in [
        (
            "[-Xclang, -load, -Xclang, ./evil.so]",
            "'-Xclang -load' loads code",
            2,
        ),
        (
            "[-fpass-plugin=./evil.so]",
            "'-fpass-plugin=./evil.so' loads code",
            2,
        ),
        ("[-B, /tmp]", "'-B /tmp' changes the toolchain", 2),
        (
            "['--config=x.cfg']",
            "'--config=x.cfg' reads flags from another file",
            2,
        ),
        ("['@flags.rsp']", "'@flags.rsp' reads flags", 2),
        ("[-o, /tmp/x]", "'-o /tmp/x' writes files", 2),
        (
            "[-include, /etc/passwd]",
            "'-include /etc/passwd' includes a file outside",
            2,
        ),
    ] {
        let dir = project(&format!("CompileFlags:\n  Add: {add}\n"));
        let out_file = dir.path().join("written");
        let out = check_in(dir.path(), &[], &out_file);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{add}: {err}");
        let place = format!(".warpcheck.yaml:{line}:1: CompileFlags.Add: {flag}");
        assert!(err.contains(&place), "{add}: {err}");
    }
}

#[test]
fn flags_that_only_change_meaning_are_allowed() {
    // N is only defined by the configuration: without it the file does not
    // compile, so a pass proves the flags reached clang.
    let dir =
        project("CompileFlags: {Add: [-DN=4, -std=c++17, -Wall, -fgpu-rdc, -include, pre.h]}\n");
    std::fs::write(dir.path().join("pre.h"), "#define M N\n").unwrap();
    std::fs::write(
        dir.path().join("good.cu"),
        "__global__ void k(float *a) { a[threadIdx.x * M] = 1.0f; }\n",
    )
    .unwrap();
    let out = check_in(dir.path(), &[], &dir.path().join("w"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A compile database of one clang entry with `args` added.
fn database(dir: &Path, args: &[&str]) {
    let mut arguments = vec![
        "clang++",
        "-x",
        "cuda",
        "--cuda-gpu-arch=sm_80",
        "-c",
        "good.cu",
    ];
    arguments.extend(args);
    let db = serde_json::json!([{"directory": dir, "file": "good.cu", "arguments": arguments}]);
    let text = serde_json::to_string_pretty(&db).unwrap();
    std::fs::write(dir.join("compile_commands.json"), text).unwrap();
}

#[test]
fn a_compile_database_cannot_load_code_either() {
    for (args, flag) in [
        (
            &["-fplugin=./evil.so"][..],
            "'-fplugin=./evil.so' loads code",
        ),
        (
            &["-Xclang", "-load", "-Xclang", "./evil.so"][..],
            "'-Xclang -load' loads code",
        ),
        (&["-B", "/tmp"][..], "'-B /tmp' changes the toolchain"),
    ] {
        let dir = project("");
        database(dir.path(), args);
        let out = run(warpcheck()
            .current_dir(dir.path())
            .args(["check", "--no-cuda", "-p", "."]));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // Pretty JSON puts each argument on its own line, keys sorted: `[`,
        // `{`, `"arguments": [` on lines 1-3, the six words before the
        // flag on 4-9, the flag's first word on line 10.
        assert!(
            err.contains("compile_commands.json:10: entry 1: "),
            "{args:?}: {err}"
        );
        assert!(err.contains(flag), "{args:?}: {err}");
    }
    // nvcc's -Xcompiler hands host flags through: a plugin there too.
    let dir = project("");
    let db = serde_json::json!([{"directory": dir.path(), "file": "good.cu",
        "command": "nvcc -c good.cu -Xcompiler -fPIC,-fplugin=./evil.so"}]);
    std::fs::write(dir.path().join("compile_commands.json"), db.to_string()).unwrap();
    let out = run(warpcheck()
        .current_dir(dir.path())
        .args(["check", "--no-cuda", "-p", "."]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("'-fplugin=./evil.so' loads code"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_empty_compile_database_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("compile_commands.json"), "[]").unwrap();
    let out = run(warpcheck().args(["check", "-p"]).arg(dir.path()));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("compile_commands.json: the compile database has no entries"),
        "{err}"
    );
}

/// A project with `good.cu` and no configuration.
fn plain() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.cu"), GOOD).unwrap();
    dir
}

/// Runs `warpcheck SUB --no-cuda ARGS good.cu` in `dir`, and returns the
/// output with the process' peak resident memory in MiB (polled from
/// /proc while it runs; 0 where there is no /proc).
fn run_measured(dir: &Path, sub: &str, args: &[&str]) -> (Output, u64) {
    let mut cmd = warpcheck();
    cmd.current_dir(dir)
        .arg(sub)
        .arg("--no-cuda")
        .args(args)
        .arg("good.cu")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let status = format!("/proc/{}/status", child.id());
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let watch = {
        let peak = peak.clone();
        std::thread::spawn(move || {
            while let Ok(text) = std::fs::read_to_string(&status) {
                let kb = text
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
                match kb {
                    Some(kb) => peak.fetch_max(kb / 1024, std::sync::atomic::Ordering::Relaxed),
                    None => break, // a zombie: it has exited
                };
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    let out = child.wait_with_output().unwrap();
    watch.join().unwrap();
    (out, peak.load(std::sync::atomic::Ordering::Relaxed))
}

/// Every size at its limit plus one, at 2^32 and at 2^64-1, is a usage
/// error naming the option, in every subcommand that takes it; none
/// panics or allocates more than 100 MB.
#[test]
fn sizes_over_their_limits_are_usage_errors() {
    let dir = plain();
    const HUGE: [&str; 2] = ["4294967296", "18446744073709551615"];
    // Block limits: 1024 along x and y, 64 along z, 1024 threads in all.
    let blocks = [
        "1025",
        "1,1025",
        "1,1,65",
        "33,32",
        "2147483647,2147483647,2147483647",
    ];
    // Grid limits: 2^31-1 along x, 65535 along y and z.
    let grids = ["2147483648", "1,65536", "1,1,65536", "4294967295"];
    // The buffer cap: 1 GiB by default.
    let cap_plus_one = ((1u64 << 30) + 1).to_string();
    let mut cases: Vec<(&str, Vec<String>, &str)> = Vec::new();
    for sub in ["check", "bound", "time", "simulate", "report"] {
        for b in blocks.iter().chain(&HUGE) {
            cases.push((
                sub,
                vec!["--block-dim".into(), b.to_string()],
                "--block-dim",
            ));
        }
    }
    for sub in ["bound", "time", "simulate", "report"] {
        for g in grids.iter().chain(&HUGE) {
            cases.push((sub, vec!["--grid".into(), g.to_string()], "--grid"));
        }
    }
    for n in [cap_plus_one.as_str(), HUGE[0], HUGE[1]] {
        for sub in ["bound", "time", "simulate"] {
            cases.push((
                sub,
                vec!["--shared-bytes".into(), n.into()],
                "--shared-bytes",
            ));
            cases.push((
                sub,
                vec!["--arg".into(), format!("a=buf:{n}")],
                "--arg a=buf:",
            ));
        }
        for sub in ["bound", "time", "report"] {
            cases.push((
                sub,
                vec!["--buffer-bytes".into(), n.into()],
                "--buffer-bytes",
            ));
        }
    }
    for (sub, args, option) in &cases {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        if *sub == "report" {
            args.extend(["-o", "r.html"]);
        }
        let (out, peak) = run_measured(dir.path(), sub, &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{sub} {args:?}: {err}");
        assert!(err.contains(option), "{sub} {args:?}: {err}");
        assert!(!err.contains("panicked"), "{sub} {args:?}: {err}");
        assert!(peak < 100, "{sub} {args:?}: {peak} MiB");
    }
}

#[test]
fn the_limits_themselves_are_allowed() {
    let dir = plain();
    // 1024 threads (16 x 64) and the largest grid run; the whole grid is
    // 2^31-1 blocks, kept as a count: the step budget stops the launch
    // after a few blocks, and memory stays small.
    let (out, peak) = run_measured(
        dir.path(),
        "simulate",
        &[
            "--block-dim",
            "16,64",
            "--grid",
            "2147483647",
            "--max-steps",
            "20000",
            "--arg",
            "a=buf:4096",
        ],
    );
    let err = stderr(&out);
    assert!(err.contains("budget") || err.contains("steps"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(out.status.code(), Some(1 | 2)), "{err}");
    assert!(peak < 100, "{peak} MiB");
    let (out, _) = run_measured(dir.path(), "check", &["--block-dim", "1,16,64"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn configured_launch_shapes_are_checked_too() {
    for (kernels, what) in [
        (
            "  k: {block: [1025]}\n",
            "Kernels.k.block: x = 1025 is over CUDA's limit of 1024",
        ),
        ("  k: {block: [32, 33]}\n", "Kernels.k.block: 1056 threads"),
        (
            "  k: {grid: [1, 65536]}\n",
            "Kernels.k.grid: y = 65536 is over CUDA's limit of 65535",
        ),
        ("  k: {block: [4294967296]}\n", "block: invalid"),
        ("  k: {block: [18446744073709551615]}\n", "block: invalid"),
    ] {
        let dir = project(&format!("Checks: '*'\nKernels:\n{kernels}"));
        let out = check_in(dir.path(), &[], &dir.path().join("w"));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{kernels}: {err}");
        // The shape is on line 3 of the file.
        assert!(err.contains(".warpcheck.yaml:3:"), "{kernels}: {err}");
        assert!(err.contains(what), "{kernels}: {err}");
    }
}

/// The bytes of the `.pch` files under `cache`, and how many there are.
fn pch_bytes(cache: &Path) -> (u64, usize) {
    let Ok(entries) = std::fs::read_dir(cache.join("warpcheck/pch")) else {
        return (0, 0);
    };
    // A file evicted between the listing and its size is gone: not counted.
    let sizes: Vec<u64> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".pch"))
        .filter_map(|e| e.metadata().ok().map(|m| m.len()))
        .collect();
    (sizes.iter().sum(), sizes.len())
}

#[test]
fn the_pch_cache_stays_under_its_cap() {
    let dir = plain();
    let cache = dir.path().join("cache");
    let check = |define: &str, cap: Option<u64>| {
        let mut cmd = warpcheck();
        cmd.current_dir(dir.path())
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("WARPCHECK_NO_PCH")
            .args(["check", "--no-cuda", "-D", define, "good.cu"]);
        if let Some(c) = cap {
            cmd.env("WARPCHECK_CACHE_MAX", c.to_string());
        }
        let out = run(&mut cmd);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    };
    // One flag set, one PCH: its size sets the cap at one and a half.
    check("V=0", None);
    let (one, n) = pch_bytes(&cache);
    assert_eq!(n, 1, "no PCH was made");
    let cap = one + one / 2;
    // Each new -D is a new flag set and a new PCH; two never fit in the cap,
    // so each run leaves only its own.
    for v in 1..4 {
        check(&format!("V={v}"), Some(cap));
        let (bytes, n) = pch_bytes(&cache);
        assert!(bytes <= cap, "{bytes} bytes of PCH over the cap of {cap}");
        assert_eq!(n, 1);
    }
}

/// Six runs at once, each with its own flag set (so each builds and adds a
/// PCH), under a cap of two and a half PCHs: sampled all the while, the
/// cached PCHs never take more than the cap (a build in progress lives in
/// its run's own directory, and adding one first evicts under a lock), and
/// every run still succeeds.
#[test]
fn concurrent_runs_keep_the_pch_cache_under_its_cap() {
    let dir = plain();
    let cache = dir.path().join("cache");
    let start = |define: &str, cap: Option<u64>| {
        let mut cmd = warpcheck();
        cmd.current_dir(dir.path())
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("WARPCHECK_NO_PCH")
            .args(["check", "--no-cuda", "-D", define, "good.cu"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        if let Some(c) = cap {
            cmd.env("WARPCHECK_CACHE_MAX", c.to_string());
        }
        cmd.spawn().unwrap()
    };
    let out = start("V=0", None).wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (one, n) = pch_bytes(&cache);
    assert_eq!(n, 1, "no PCH was made");
    // PCHs of flag sets that differ in one -D differ in size by a few
    // bytes at most: two fit, three never do.
    let cap = one * 5 / 2;
    let mut runs: Vec<_> = (1..=6)
        .map(|v| start(&format!("V={v}"), Some(cap)))
        .collect();
    let (mut most, mut samples) = (0, 0);
    while runs.iter_mut().any(|r| r.try_wait().unwrap().is_none()) {
        most = most.max(pch_bytes(&cache).0);
        samples += 1;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    for r in runs {
        let out = r.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let (end, n) = pch_bytes(&cache);
    assert!(samples > 0);
    assert!(
        most <= cap,
        "{most} bytes of PCH while running, over the cap of {cap}"
    );
    assert!(
        end <= cap,
        "{end} bytes of PCH at the end, over the cap of {cap}"
    );
    // The last ones added stay: two of them.
    assert_eq!(n, 2);
    // Nothing but PCHs and the lock is left in the capped directory.
    let mut others: Vec<String> = std::fs::read_dir(cache.join("warpcheck/pch"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".pch"))
        .collect();
    others.sort();
    assert_eq!(others, [".lock"]);
}

#[test]
fn no_temporary_directory_survives_sigterm() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::ExitStatusExt;
    let dir = plain();
    let (tmp, cache) = (dir.path().join("tmp"), dir.path().join("cache"));
    std::fs::create_dir_all(&tmp).unwrap();
    // A clang that takes its time, so that the run is stopped mid-compile;
    // it says when the PCH build has started (the run asks for its version
    // first, before the cache is touched).
    let clang = dir.path().join("slow-clang");
    let started = dir.path().join("started");
    std::fs::write(
        &clang,
        format!(
            "#!/bin/sh\ncase \"$*\" in *-emit-pch*) : > '{}';; esac\nexec sleep 5\n",
            started.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&clang, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = warpcheck()
        .current_dir(dir.path())
        .env("TMPDIR", &tmp)
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("WARPCHECK_NO_PCH")
        .args(["check", "--no-cuda", "--clang"])
        .arg(&clang)
        .arg("good.cu")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let listing = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .map(|e| e.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let start = std::time::Instant::now();
    while listing(&tmp).is_empty() {
        assert!(
            start.elapsed().as_secs() < 30,
            "no temporary directory appeared"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The PCH is built first, in the run's temporary directory.
    while !started.exists() {
        assert!(start.elapsed().as_secs() < 30, "no PCH under construction");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: a signal to the child this test started, by its id.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert_eq!(listing(&tmp), Vec::<PathBuf>::new());
    // The cache holds its lock file and no PCH, whole or in part.
    let pch = cache.join("warpcheck/pch");
    assert_eq!(listing(&pch), [pch.join(".lock")]);
}

#[test]
fn file_names_need_not_be_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    // "café" in Latin-1: the byte 0xE9 alone is not UTF-8.
    let name = |ext: &str| {
        let mut n = b"caf\xe9.".to_vec();
        n.extend(ext.as_bytes());
        dir.path().join(std::ffi::OsStr::from_bytes(&n))
    };
    std::fs::write(name("cu"), GOOD).unwrap();
    std::fs::copy(fixture("ir/loader.ll"), name("ll")).unwrap();
    for file in [name("cu"), name("ll")] {
        let out = run(warpcheck().args(["check", "--no-cuda"]).arg(&file));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

#[test]
fn kernel_commands_on_a_host_module_name_the_file() {
    let host = fixture("ir/host.ll");
    for sub in ["bound", "time", "simulate"] {
        let out = run(warpcheck().arg(sub).arg(&host));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{sub}: {err}");
        assert!(
            err.contains("host.ll: no kernels in the file"),
            "{sub}: {err}"
        );
    }
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "WARPCHECK_FAULT is read by debug builds only"
)]
fn an_internal_error_in_report_exits_3() {
    let dir = plain();
    let out = run(warpcheck()
        .current_dir(dir.path())
        .env("WARPCHECK_FAULT", "panic")
        .args([
            "report",
            "--no-cuda",
            "--no-simulate",
            "-o",
            "r.html",
            "good.cu",
        ]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("internal error while analysing"), "{err}");
    // The page is still written, with the error on it.
    assert!(dir.path().join("r.html").is_file());
}

#[test]
fn time_and_bound_simulate_within_a_step_budget() {
    let dir = tempfile::tempdir().unwrap();
    // 2^40 iterations, each changing memory (so never a spin): only the
    // step budget stops it.
    std::fs::write(
        dir.path().join("good.cu"),
        "__global__ void k(unsigned *a) {\n\
           for (unsigned long long i = 0; i < (1ull << 40); i++) a[(i + threadIdx.x) & 255] += 1;\n\
         }\n",
    )
    .unwrap();
    for sub in ["time", "bound"] {
        let start = std::time::Instant::now();
        let out = run(warpcheck().current_dir(dir.path()).args([
            sub,
            "--no-cuda",
            "--simulate",
            "--block-dim",
            "32",
            "--max-steps",
            "10000",
            "good.cu",
        ]));
        let err = stderr(&out);
        assert!(err.contains("10000"), "{sub}: {err}");
        assert!(!err.contains("panicked"), "{sub}: {err}");
        assert!(
            start.elapsed().as_secs() < 120,
            "{sub}: the budget did not stop it"
        );
    }
}

#[test]
fn the_make_snippet_finds_the_plugin_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A stand-in for warpcheck that counts its print-plugin-path runs.
    let fake = d.join("fake-warpcheck");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$*\" >> {}\necho /x/libwarpcheck.so\n",
            d.join("runs").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mk = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/warpcheck.mk");
    // Eight recipes that each name the flags, and one that does not.
    let mut makefile = format!(
        "WARPCHECK := {}\ninclude {}\nall: {}\n",
        fake.display(),
        mk.display(),
        (0..8)
            .map(|i| format!("t{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for i in 0..8 {
        makefile.push_str(&format!(
            "t{i}:\n\t@echo $(WARPCHECK_CUDAFLAGS) > {i}.flags\n"
        ));
    }
    makefile.push_str("quiet:\n\t@true\n");
    std::fs::write(d.join("Makefile"), makefile).unwrap();
    let out = run(std::process::Command::new("make")
        .current_dir(d)
        .args(["-s", "-j4", "all"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // Once for the pass plugin and once for the frontend action.
    let runs = std::fs::read_to_string(d.join("runs")).unwrap();
    let frontend = runs.lines().filter(|l| l.contains("--frontend")).count();
    assert_eq!(
        (runs.lines().count() - frontend, frontend),
        (1, 1),
        "print-plugin-path ran: {runs}"
    );
    let flags = std::fs::read_to_string(d.join("7.flags")).unwrap();
    assert!(
        flags.contains("-fpass-plugin=/x/libwarpcheck.so"),
        "{flags}"
    );
    // A goal that never names the flags never looks for the plugin.
    std::fs::remove_file(d.join("runs")).unwrap();
    let out = run(std::process::Command::new("make")
        .current_dir(d)
        .args(["-s", "quiet"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!d.join("runs").exists());
}

/// The plugin reads the `.warpcheck.yaml` nearest the source too: a launch
/// shape over CUDA's limits there is said once, naming the file and line,
/// and the compile goes on with the module still analysed (its warning
/// kept), never an internal error that drops the module's findings.
#[test]
fn the_plugin_warns_once_on_an_oversized_configured_shape_and_keeps_compiling() {
    let dir = tempfile::tempdir().unwrap();
    // `threadIdx.x % 2` splits every warp of the default 256-thread block
    // (lanes 0, 2, .. one way, 1, 3, .. the other): one divergent-branch
    // warning, which the ignored shape must not cost.
    std::fs::write(
        dir.path().join("good.cu"),
        "__global__ void k(float *a) {\n  if (threadIdx.x % 2) a[threadIdx.x] = 1.0f;\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".warpcheck.yaml"),
        "Checks: '*'\nKernels:\n  k: {block: [2147483647, 2147483647, 2147483647]}\n",
    )
    .unwrap();
    let asm = dir.path().join("good.s");
    let out = run(std::process::Command::new(clang())
        .current_dir(dir.path())
        .env_remove("WARPCHECK_CONFIG")
        .args([
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_80",
            "--cuda-device-only",
            "-O2",
        ])
        .arg("-gline-tables-only")
        .args(no_toolkit_flags())
        .arg(format!("-fpass-plugin={}", plugin().display()))
        .args(["-S", "-o"])
        .arg(&asm)
        .arg("good.cu"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        std::fs::metadata(&asm).is_ok_and(|m| m.len() > 0),
        "no PTX written: {err}"
    );
    assert_eq!(
        err.matches("this configuration is ignored").count(),
        1,
        "{err}"
    );
    // The shape is on line 3; x alone is over the 1024-thread limit.
    assert!(err.contains(".warpcheck.yaml:3:"), "{err}");
    assert!(err.contains("Kernels.k.block"), "{err}");
    assert!(!err.contains("internal error"), "{err}");
    assert_eq!(
        err.matches("[warpcheck-divergent-branch]").count(),
        1,
        "{err}"
    );
}

/// The module-wide memory budget: a file that cannot be analysed within it
/// is refused before it is loaded, naming the file and the budget (exit 2,
/// never an abort); a budget that does not fit in bytes is a usage error.
#[test]
fn the_memory_budget_stops_a_module_with_a_message() {
    let dir = plain();
    // Every process holds more than 1 MB (the binary alone is larger).
    let out = check_in(dir.path(), &["--budget", "memory=1"], &dir.path().join("w"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("good.cu: not analysed"), "{err}");
    assert!(err.contains("module memory budget of 1 MB"), "{err}");
    assert!(err.contains("--budget memory="), "{err}");
    // 2^64 - 1 MB is more bytes than a usize holds.
    let out = check_in(
        dir.path(),
        &["--budget", "memory=18446744073709551615"],
        &dir.path().join("w"),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--budget: memory"), "{err}");
    // Lifted, the file is analysed as usual.
    let out = check_in(dir.path(), &["--budget", "memory=0"], &dir.path().join("w"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
