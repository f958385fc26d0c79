//! Hostile files and values, third round: what a damaged build directory,
//! a prankster or a fuzzer puts in front of every subcommand. Each case
//! must end in exit 0, 1 or 2 with a message naming the file, within a
//! few seconds, never a signal, a hang or memory out of proportion, and
//! the other files' results must still come out.

mod common;
use common::*;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with a deadline: a command still running after `secs` is
/// killed and the test fails (a FIFO read would block forever).
fn within(secs: u64, cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{cmd:?} still ran after {secs} s; stderr: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Exit 2, no signal, and a message that names `file`.
fn refused(out: &Output, file: &str) {
    let err = stderr(out);
    assert_eq!(out.status.signal(), None, "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(file), "no '{file}' in: {err}");
    assert!(!err.contains("error: error:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

fn corrupt(name: &str) -> PathBuf {
    fixture(&format!("ir/corrupt/{name}"))
}

const CORRUPT: [&str; 3] = ["bit_flip_abort.bc", "bit_flip_segv.bc", "overwrite_segv.bc"];

/// The arguments that make each single-kernel subcommand read `file`.
fn every_subcommand(file: &Path, dir: &Path) -> Vec<Vec<String>> {
    let f = file.display().to_string();
    let html = dir.join("r.html").display().to_string();
    vec![
        vec!["check".into(), f.clone()],
        vec!["check".into(), "--bounds".into(), f.clone()],
        vec!["check".into(), "--compare-uniformity".into(), f.clone()],
        vec!["bound".into(), f.clone()],
        vec!["time".into(), f.clone()],
        vec!["simulate".into(), f.clone()],
        vec!["report".into(), "-o".into(), html, f.clone()],
        vec!["dump-ir".into(), f],
    ]
}

#[test]
fn damaged_bitcode_costs_only_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in CORRUPT {
        let file = corrupt(name);
        for args in every_subcommand(&file, dir.path()) {
            let out = within(60, warpcheck().args(&args));
            refused(&out, name);
            assert!(
                stderr(&out).contains("LLVM's reader crashed on this file"),
                "{args:?}: {}",
                stderr(&out)
            );
        }
    }
    // Beside a good file, whose findings still come out.
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/divergence.cu");
    let out = within(
        120,
        warpcheck()
            .args(["check", "--no-cuda"])
            .arg(corrupt(CORRUPT[0]))
            .arg(&good)
            .arg(corrupt(CORRUPT[1])),
    );
    refused(&out, CORRUPT[0]);
    assert!(stderr(&out).contains(CORRUPT[1]), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("divergence.cu:") && stdout(&out).contains("warning:"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_plugin_adds_no_crash_to_its_hosts_reader() {
    // opt reads the module before any plugin runs: where its own reader
    // dies, it dies alike without the plugin. What the plugin must not do
    // is add a death of its own.
    let opt = llvm_tool("opt");
    for name in CORRUPT {
        let file = corrupt(name);
        let alone = Command::new(&opt)
            .args(["-passes=verify", "-disable-output"])
            .arg(&file)
            .output()
            .unwrap();
        let with = within(
            60,
            Command::new(&opt)
                .arg(format!("-load-pass-plugin={}", plugin().display()))
                .args(["-passes=warpcheck", "-disable-output"])
                .arg(&file),
        );
        assert_eq!(with.status.signal(), alone.status.signal(), "{name}");
        assert_eq!(with.status.code(), alone.status.code(), "{name}");
    }
}

fn fifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_devices_and_directories_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fifo(&d.join("pipe.ll"));
    fifo(&d.join("pipe.cu"));
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.ll")).unwrap();
    std::fs::create_dir(d.join("dir.cu")).unwrap();
    for (name, kind) in [
        ("pipe.ll", "(a FIFO)"),
        ("pipe.cu", "(a FIFO)"),
        ("zero.ll", "(a character device)"),
        ("dir.cu", "(a directory)"),
    ] {
        for args in every_subcommand(&d.join(name), d) {
            let out = within(
                30,
                warpcheck().arg(&args[0]).arg("--no-cuda").args(&args[1..]),
            );
            refused(&out, name);
            assert!(stderr(&out).contains(kind), "{args:?}: {}", stderr(&out));
        }
    }
}

#[test]
fn configurations_and_weights_are_read_only_from_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = d.join("good.cu");
    std::fs::write(
        &good,
        "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n",
    )
    .unwrap();
    fifo(&d.join("pipe.yaml"));
    let out = within(
        30,
        warpcheck()
            .args(["check", "--no-cuda", "--config-file"])
            .arg(d.join("pipe.yaml"))
            .arg(&good),
    );
    refused(&out, "pipe.yaml");
    let out = within(
        30,
        warpcheck()
            .args(["check", "--no-cuda", "--baseline"])
            .arg(d.join("pipe.yaml"))
            .arg(&good),
    );
    refused(&out, "pipe.yaml");
    for weights in [d.join("pipe.yaml"), PathBuf::from("/dev/zero")] {
        let out = within(
            30,
            warpcheck()
                .args(["bound", "--no-cuda", "--weights"])
                .arg(&weights)
                .arg(&good),
        );
        refused(&out, &weights.display().to_string());
    }
    // A `.warpcheck.yaml` of 100 MB (sparse: it costs no disk) is refused
    // by its size before a byte of it is read.
    let project = d.join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::copy(&good, project.join("good.cu")).unwrap();
    let config = std::fs::File::create(project.join(".warpcheck.yaml")).unwrap();
    config.set_len(100 << 20).unwrap();
    for sub in ["check", "bound", "time", "dump-ir"] {
        let out = within(
            30,
            warpcheck()
                .args([sub, "--no-cuda"])
                .arg(project.join("good.cu")),
        );
        refused(&out, ".warpcheck.yaml");
        assert!(
            stderr(&out).contains("larger than the limit of 1 MiB"),
            "{sub}: {}",
            stderr(&out)
        );
    }
    // Nested 100,000 deep: refused at the depth limit, quickly.
    std::fs::write(
        project.join(".warpcheck.yaml"),
        format!("Kernels: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    let start = Instant::now();
    let out = within(
        30,
        warpcheck().arg("dump-config").arg(project.join("good.cu")),
    );
    refused(&out, ".warpcheck.yaml:1:");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_plugin_never_waits_on_a_fifo_config() {
    let dir = tempfile::tempdir().unwrap();
    let module = fixture("ir/loader.ll");
    for name in ["pipe.yaml", "pipe.conf"] {
        let path = dir.path().join(name);
        fifo(&path);
        let out = within(
            60,
            Command::new(llvm_tool("opt"))
                .env("WARPCHECK_CONFIG", &path)
                .arg(format!("-load-pass-plugin={}", plugin().display()))
                .args(["-passes=warpcheck", "-disable-output"])
                .arg(&module),
        );
        // The compile goes on, with one warning that names the file.
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stderr(&out).contains("(a FIFO)"), "{}", stderr(&out));
    }
}

#[test]
fn one_parameter_reader_for_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.cu");
    std::fs::write(
        &good,
        "__global__ void k(float *a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 1.0f; }\n",
    )
    .unwrap();
    for bad in ["n=1.5", "n=1e400", "=5"] {
        // `report` sweeps the parameters instead (`--sweep`).
        for sub in ["check", "bound", "time"] {
            let out = within(
                60,
                warpcheck()
                    .args([sub, "--no-cuda", "--param", bad])
                    .arg(&good),
            );
            refused(&out, &format!("--param {bad}"));
        }
    }
}

#[test]
fn every_command_compiles_with_the_configurations_flags() {
    // The kernel exists only when the configuration's -DWITH_KERNEL is
    // applied, as `check` applies it.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.cu"),
        "#ifdef WITH_KERNEL\n__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        d.join(".warpcheck.yaml"),
        "CompileFlags: {Add: [-DWITH_KERNEL]}\n",
    )
    .unwrap();
    for args in [
        vec!["bound"],
        vec!["time"],
        vec!["simulate", "--arg", "a=buf:1024"],
        vec!["dump-ir"],
    ] {
        let out = within(
            120,
            warpcheck()
                .current_dir(d)
                .arg(args[0])
                .arg("--no-cuda")
                .args(&args[1..])
                .arg("k.cu"),
        );
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn dump_config_of_a_missing_file_is_an_error() {
    let out = within(30, warpcheck().args(["dump-config", "/nonexistent/x.cu"]));
    refused(&out, "/nonexistent/x.cu");
}

#[test]
fn a_damaged_cached_pch_is_rebuilt_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.cu"),
        "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n",
    )
    .unwrap();
    let cache = d.join("cache");
    let check = || {
        within(
            120,
            warpcheck()
                .current_dir(d)
                .env("XDG_CACHE_HOME", &cache)
                .env_remove("WARPCHECK_NO_PCH")
                .args(["check", "--no-cuda", "--no-host-launches", "k.cu"]),
        )
    };
    assert_eq!(check().status.code(), Some(0));
    let pchs: Vec<PathBuf> = std::fs::read_dir(cache.join("warpcheck/pch"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pch"))
        .collect();
    assert_eq!(pchs.len(), 1, "{pchs:?}");
    let whole = std::fs::read(&pchs[0]).unwrap();
    // Cut short as a crash or a full disk leaves it: in the middle, then
    // to nothing; each time the next run rebuilds it and succeeds.
    for len in [whole.len() / 2, 0] {
        std::fs::write(&pchs[0], &whole[..len]).unwrap();
        let out = check();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(std::fs::read(&pchs[0]).unwrap().len(), whole.len());
    }
}

#[test]
fn sigterm_ends_the_child_compiler_and_sigkill_leftovers_are_swept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(d.join("k.cu"), "__global__ void k() {}\n").unwrap();
    // A clang that records its process id and sleeps.
    let clang = d.join("slow-clang");
    let pid_file = d.join("pid");
    std::fs::write(
        &clang,
        format!(
            "#!/bin/sh\necho $$ > '{}.tmp' && mv '{0}.tmp' '{0}'\nexec sleep 60\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&clang, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start_run = || {
        let _ = std::fs::remove_file(&pid_file);
        let child = warpcheck()
            .current_dir(d)
            .env("TMPDIR", &tmp)
            .env("WARPCHECK_NO_PCH", "1")
            .args(["check", "--no-cuda", "--no-host-launches", "--clang"])
            .arg(&clang)
            .arg("k.cu")
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !pid_file.exists() {
            assert!(start.elapsed().as_secs() < 30, "the compile never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        (child, pid)
    };
    let gone = |pid: i32| {
        // SAFETY: signal 0 only asks whether the process exists.
        unsafe { libc::kill(pid, 0) != 0 }
    };
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let (mut child, clang_pid) = start_run();
        // SAFETY: a signal to the child this test started, by its id.
        unsafe { libc::kill(child.id() as i32, sig) };
        assert_eq!(child.wait().unwrap().signal(), Some(sig));
        assert!(gone(clang_pid), "clang outlived warpcheck ({sig})");
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    }
    // SIGKILL leaves the run's directory; the next run sweeps it.
    let (mut child, clang_pid) = start_run();
    child.kill().unwrap();
    child.wait().unwrap();
    // SAFETY: the orphaned clang this test's script started.
    unsafe { libc::kill(clang_pid, libc::SIGKILL) };
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 1);
    let out = within(30, warpcheck().env("TMPDIR", &tmp).arg("checks"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn identical_compile_jobs_are_compiled_and_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // One uncoalesced store: a stride of 32 floats between lanes.
    std::fs::write(
        d.join("k.cu"),
        "__global__ void k(float *a) { a[threadIdx.x * 32] = 1.0f; }\n",
    )
    .unwrap();
    let entry = serde_json::json!({
        "directory": d,
        "file": "k.cu",
        "arguments": ["clang++", "-x", "cuda", "--cuda-gpu-arch=sm_80", "-c", "k.cu"],
    });
    std::fs::write(
        d.join("compile_commands.json"),
        serde_json::to_string(&vec![entry; 40]).unwrap(),
    )
    .unwrap();
    let out = within(120, warpcheck().args(["check", "--no-cuda", "-p"]).arg(d));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).matches("warning:").count(),
        1,
        "{}",
        stdout(&out)
    );
    // The same file named 200 times, by two spellings.
    let mut cmd = warpcheck();
    cmd.current_dir(d).args(["check", "--no-cuda"]);
    for i in 0..200 {
        cmd.arg(if i % 2 == 0 { "k.cu" } else { "./k.cu" });
    }
    let out = within(120, &mut cmd);
    assert_eq!(
        stdout(&out).matches("warning:").count(),
        1,
        "{}",
        stdout(&out)
    );
}

#[test]
fn simulated_grids_and_block_lists_stay_within_their_budgets() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.cu");
    std::fs::write(
        &k,
        "__global__ void k(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] = 2.0f; }\n",
    )
    .unwrap();
    let sim = |extra: &[&str]| {
        let out = within(
            60,
            warpcheck()
                .args(["simulate", "--no-cuda", "--block-dim", "32"])
                .args(["--arg", "a=buf:4096", "--arg", "n=0"])
                .args(extra)
                .arg(&k),
        );
        assert_eq!(out.status.signal(), None, "{}", stderr(&out));
        out
    };
    // 2^47 blocks: the step budget stops the run after its first ones.
    let out = sim(&["--grid", "2147483647,65535,65535", "--max-steps", "100000"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("step limit"), "{}", stderr(&out));
    // 300 million listed blocks: the time budget holds.
    let start = Instant::now();
    let out = sim(&[
        "--grid",
        "2147483647",
        "--blocks",
        "0-300000000",
        "--timeout",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(30));
    // A list past any grid: a usage error, not an overflow.
    let out = sim(&["--grid", "2147483647", "--blocks", "0-18446744073709551615"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("outside the grid"),
        "{}",
        stderr(&out)
    );
    // The records of many small blocks stop at the memory budget.
    let out = sim(&["--grid", "2147483647", "--max-memory", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("memory limit"), "{}", stderr(&out));
}

#[test]
fn a_buffer_the_machine_cannot_hold_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.cu");
    std::fs::write(
        &k,
        "__global__ void k(float *a) { a[threadIdx.x] = 2.0f; }\n",
    )
    .unwrap();
    // Under a 1.5 GB address-space limit, a 1 GiB buffer (within
    // --max-buffer-bytes) cannot be had beside the program itself.
    let mut cmd = warpcheck();
    cmd.args(["simulate", "--no-cuda", "--block-dim", "32"])
        .args(["--arg", "a=buf:1073741824"])
        .arg(&k);
    // SAFETY: setrlimit in the child before exec; async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1_500_000_000,
                rlim_max: 1_500_000_000,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    let out = within(60, &mut cmd);
    refused(&out, "--arg a");
    assert!(
        stderr(&out).contains("cannot allocate a buffer of 1073741824 bytes"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_source_file_that_debug_information_names_is_read_only_if_regular() {
    // A module whose debug information places its finding in a FIFO, then
    // in /dev/zero: the finding is reported without an excerpt, NOLINT
    // comments and fixes are looked for in no such file, and nothing
    // blocks or grows.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cu = d.join("k.cu");
    std::fs::write(
        &cu,
        "__global__ void k(float *a) { a[threadIdx.x * 32] = 1.0f; }\n",
    )
    .unwrap();
    let ll = d.join("k.ll");
    let built = Command::new(clang())
        .args([
            "-x",
            "cuda",
            "--cuda-device-only",
            "--cuda-gpu-arch=sm_80",
            "-O2",
        ])
        .args(["-gline-tables-only", "-S", "-emit-llvm"])
        .args(no_toolkit_flags())
        .arg("-o")
        .arg(&ll)
        .arg(&cu)
        .status()
        .unwrap();
    assert!(built.success());
    let text = std::fs::read_to_string(&ll).unwrap();
    fifo(&d.join("pipe.cu"));
    std::os::unix::fs::symlink("/dev/zero", d.join("zero.cu")).unwrap();
    for name in ["pipe.cu", "zero.cu"] {
        let moved = d.join(format!("moved-{name}.ll"));
        let named = text.replace(
            &format!("filename: \"{}\"", cu.display()),
            &format!("filename: \"{}\"", d.join(name).display()),
        );
        assert_ne!(named, text);
        std::fs::write(&moved, named).unwrap();
        let out = within(
            60,
            warpcheck()
                .args(["check", "--export-fixes"])
                .arg(d.join("fixes.yaml"))
                .arg(&moved),
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            stdout(&out).contains(&format!("{name}:1:")) && stdout(&out).contains("uncoalesced"),
            "{}",
            stdout(&out)
        );
    }
}

/// Runs `cmd` to its end and returns its output with its peak resident
/// memory in MiB (its own high-water mark, read from /proc as it runs).
fn peak_of(cmd: &mut Command) -> (Output, u64) {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let watch = std::thread::spawn(move || {
        let mut peak = 0;
        while let Ok(text) = std::fs::read_to_string(&status) {
            match text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                Some(kb) => peak = peak.max(kb >> 10),
                None => break,
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        peak
    });
    let out = child.wait_with_output().unwrap();
    (out, watch.join().unwrap())
}

#[test]
fn the_memory_budget_binds_inside_a_kernel_and_the_file_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // `small` strides 32 floats between lanes: one uncoalesced store.
    let small = "__global__ void small(float *a) { a[threadIdx.x * 32] = 1.0f; }\n";
    std::fs::write(d.join("small.cu"), small).unwrap();
    // `unrolled` has 600 guarded loads for 32 warps: tens of MB of ACF.
    std::fs::write(
        d.join("both.cu"),
        format!(
            "__global__ void __launch_bounds__(1024) unrolled(const float *a, float *out, int n) {{\n\
             \x20 float s = 0.0f;\n\
             #pragma unroll\n\
             \x20 for (int i = 0; i < 600; i++)\n\
             \x20   if (threadIdx.x + i < n) s += a[threadIdx.x + i * 32];\n\
             \x20 out[threadIdx.x] = s;\n\
             }}\n{small}"
        ),
    )
    .unwrap();
    let check = |file: &str, budget: &str| {
        peak_of(
            warpcheck()
                .current_dir(d)
                .args(["check", "--no-cuda", "--no-host-launches", "-j", "1"])
                .args(["--budget", budget, file]),
        )
    };
    let (alone, small_peak) = check("small.cu", "memory=none");
    assert_eq!(alone.status.code(), Some(0), "{}", stderr(&alone));
    let (whole, whole_peak) = check("both.cu", "memory=none");
    assert!(
        !stdout(&whole).contains("analysis-budget"),
        "{}",
        stdout(&whole)
    );
    assert!(
        whole_peak > small_peak + 30,
        "the unrolled kernel should take tens of MB: {whole_peak} vs {small_peak} MiB"
    );
    // A budget the unrolled kernel passes midway: it stops with its note,
    // its memory goes back, and `small` is still analysed.
    let budget = (small_peak + whole_peak) / 2;
    let (out, peak) = check("both.cu", &format!("memory={budget}"));
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        text.contains(
            "both.cu:1: note: analysis of this kernel stopped on its module memory budget"
        ),
        "{text}"
    );
    assert!(
        text.contains("both.cu:8:") && text.contains("uncoalesced"),
        "{text}"
    );
    assert!(peak < whole_peak, "{peak} MiB, unbounded {whole_peak} MiB");
}
