//! Faults stop the simulation with the line, the thread and the address, as
//! compute-sanitizer reports them (exit code 1); bad usage and unsupported
//! code are errors of the run (exit code 2).

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;

const FIXTURE: &str = "tests/fixtures/cu/sim_errors.cu";

/// Runs `warpcheck simulate` on the fixture; returns exit code and stderr.
fn simulate(file: &str, kernel: &str, args: &[&str]) -> (i32, String) {
    let out = warpcheck()
        .args(["simulate", file, "--kernel", kernel])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_has(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "missing {p:?} in:\n{text}");
    }
}

#[test]
fn global_overrun_names_line_thread_and_buffer() {
    // Lane 16 writes a[16 + 16] = byte 128 of a 128-byte buffer.
    let (code, err) = simulate(
        FIXTURE,
        "past_the_end",
        &["--block", "32", "--arg", "a=buf:128", "--arg", "n=16"],
    );
    assert_eq!(code, 1);
    assert_has(
        &err,
        &[
            "sim_errors.cu:3:",
            "invalid __global__ write of size 4 bytes",
            "is 0 bytes after the end of 'a' (128 bytes)",
            "by thread (16,0,0) in block (0,0,0)",
        ],
    );
}

#[test]
fn shared_overrun_names_the_array() {
    // s has 32 floats; thread 32 writes s[32].
    let (code, err) = simulate(
        FIXTURE,
        "shared_overrun",
        &["--block", "64", "--arg", "out=buf:256"],
    );
    assert_eq!(code, 1);
    assert_has(
        &err,
        &[
            "sim_errors.cu:8:",
            "invalid __shared__ write of size 4 bytes",
            "outside shared 'shared_overrun(float*)::s' (128 bytes",
            "by thread (32,0,0)",
        ],
    );
}

#[test]
fn a_barrier_after_an_early_return_is_divergence() {
    // n = 40: warp 1 has threads 32..39 at the barrier, 40..63 returned.
    let (code, err) = simulate(
        FIXTURE,
        "early_exit",
        &["--block", "64", "--arg", "a=buf:256", "--arg", "n=40"],
    );
    assert_eq!(code, 1);
    assert_has(
        &err,
        &[
            "sim_errors.cu:16:",
            "barrier divergence",
            "reached by lanes 0-7 of warp 1 while lanes 8-31 return without reaching it",
        ],
    );
    // n = 16: warp 1 returns entirely, warp 0 waits with half its lanes.
    let (_, err) = simulate(
        FIXTURE,
        "early_exit",
        &["--block", "64", "--arg", "a=buf:256", "--arg", "n=16"],
    );
    assert_has(
        &err,
        &["reached by lanes 0-15 of warp 0 while lanes 16-31 return without reaching it"],
    );
    // Every thread in range: no error.
    let (code, _) = simulate(
        FIXTURE,
        "early_exit",
        &["--block", "64", "--arg", "a=buf:256", "--arg", "n=64"],
    );
    assert_eq!(code, 0);
}

#[test]
fn a_barrier_in_a_divergent_branch_is_divergence() {
    // Only odd lanes call __syncthreads(); even lanes go straight to the end.
    let (code, err) = simulate(
        FIXTURE,
        "odd_lanes_sync",
        &["--block", "32", "--arg", "a=buf:128"],
    );
    assert_eq!(code, 1);
    assert_has(
        &err,
        &[
            "sim_errors.cu:23:",
            "reached by lanes 1,3,5,",
            "of warp 0 while lanes 0,2,4,",
            "return without reaching it",
        ],
    );
    // Both sides call __syncthreads(), each its own: the even lanes (the
    // branch's first target) reach theirs while the odd ones are still to
    // run the other side.
    let (code, err) = simulate(
        FIXTURE,
        "both_sides_sync",
        &["--block", "32", "--arg", "a=buf:128"],
    );
    assert_eq!(code, 1);
    assert_has(
        &err,
        &["sim_errors.cu:45:", "lanes 1,3,5,", "are on another path"],
    );
}

#[test]
fn traps_asserts_and_null_pointers() {
    let m = compile(FIXTURE);
    let one = launch([1, 1, 1], [32, 1, 1]);
    let e = try_run(&m, "traps", &one, &[data("flag", i32_bytes(&[7]))]).unwrap_err();
    assert!(e.message.contains("__trap()"), "{e}");
    assert_eq!(e.pos.as_ref().map(|p| p.line), Some(28));
    assert!(try_run(&m, "traps", &one, &[data("flag", i32_bytes(&[6]))]).is_ok());

    let mut v = vec![1; 32];
    v[5] = -1;
    let e = try_run(&m, "asserts", &one, &[data("v", i32_bytes(&v))]).unwrap_err();
    assert!(
        e.message.contains("assertion `v[threadIdx.x] >= 0` failed"),
        "{e}"
    );
    assert!(e.message.contains("sim_errors.cu:32"), "{e}");
    assert_eq!(e.thread, Some([5, 0, 0]));

    // p holds 32 null pointers.
    let e = try_run(
        &m,
        "reads_null",
        &one,
        &[data("p", vec![0; 256]), data("out", vec![0; 128])],
    )
    .unwrap_err();
    assert!(
        e.message
            .contains("read of size 4 bytes: address 0x0 is a null pointer"),
        "{e}"
    );
    assert_eq!((e.thread, e.address), (Some([0, 0, 0]), Some(0)));
    assert_eq!(e.pos.as_ref().map(|p| p.line), Some(36));
}

#[test]
fn unsupported_code_names_what_and_where() {
    // Inline asm runs; a PTX instruction outside the modelled set (line
    // 121 of asm_ops.cu, `brkpt`) is named, at the asm's line.
    let (code, err) = simulate(
        "tests/fixtures/cu/asm_ops.cu",
        "unmodelled",
        &["--block", "32", "--arg", "out=buf:128"],
    );
    assert_eq!(code, 2);
    assert_has(
        &err,
        &["asm_ops.cu:121:", "unsupported PTX instruction `brkpt`"],
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    let cases: &[(&[&str], &str)] = &[
        (&["--arg", "a=buf:64"], "missing --arg for n (int, n=VALUE)"),
        (
            &["--arg", "a=buf:64", "--arg", "n=1", "--arg", "m=2"],
            "has no parameter 'm' (parameters: a, n)",
        ),
        (
            &["--arg", "a=3", "--arg", "n=1"],
            "--arg a: a pointer parameter needs buf:BYTES[:init]",
        ),
        (
            &["--arg", "a=buf:64", "--arg", "n=1.5"],
            "an integer parameter needs an integer",
        ),
        (
            &["--arg", "a=buf:64:iota:f9", "--arg", "n=1"],
            "unknown element type 'f9'",
        ),
        (
            &["--arg", "a=buf:64", "--arg", "n=1", "--blocks", "3"],
            "block 3 is outside the grid of 1 blocks",
        ),
        (
            // Refused where it enters, naming the option.
            &["--arg", "a=buf:64", "--arg", "n=1", "--block", "2048"],
            "--block-dim: block shape '2048': x = 2048 is over CUDA's limit of 1024",
        ),
    ];
    for (args, message) in cases {
        let (code, err) = simulate(FIXTURE, "past_the_end", args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_has(&err, &[message]);
    }
    let (code, err) = simulate(FIXTURE, "nope", &[]);
    assert_eq!(code, 2);
    assert_has(
        &err,
        &["no kernel 'nope' (kernels: past_the_end, shared_overrun"],
    );
    let (code, err) = simulate(FIXTURE, "past_the_end", &["--arg", "a"]);
    assert_eq!(code, 2);
    assert_has(&err, &["expected NAME=VALUE"]);
}

/// `time --simulate` and `bound --simulate` treat a run the kernel stopped
/// as `simulate` does: a finding about the kernel, exit 1, the fault named
/// on stderr; their static figures are still printed.
#[test]
fn simulate_flags_of_time_and_bound_exit_like_simulate() {
    let run = |sub: &str, file: &str, kernel: &str, args: &[&str]| {
        let out = warpcheck()
            .args([sub, file, "--kernel", kernel, "--block", "32"])
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // n = 16: lane 16 writes a[32], byte 128 of a 128-byte buffer (as in
    // global_overrun_names_line_thread_and_buffer). `simulate` takes n as
    // an --arg, `time` and `bound` as a --param.
    let overrun = [
        "is 0 bytes after the end of 'a' (128 bytes)",
        "sim_errors.cu:3:",
    ];
    let args = ["--arg", "a=buf:128", "--arg", "n=16"];
    let (code, _, err) = run("simulate", FIXTURE, "past_the_end", &args);
    assert_eq!(code, 1, "{err}");
    assert_has(&err, &overrun);
    for sub in ["time", "bound"] {
        let args = ["--simulate", "--arg", "a=buf:128", "--param", "n=16"];
        let (code, out, err) = run(sub, FIXTURE, "past_the_end", &args);
        assert_eq!(code, 1, "{sub}: {err}");
        assert_has(&err, &["the simulated launch stopped (memory-error)"]);
        assert_has(&err, &overrun);
        // The static figures are still there, without a simulated one.
        assert_has(&out, &["past_the_end"]);
        assert!(!out.contains("simulated"), "{sub}: {out}");
        // n = 0: lanes 0..31 write a[0..31], inside the buffer: exit 0,
        // with the simulated figure.
        let args = ["--simulate", "--arg", "a=buf:128", "--param", "n=0"];
        let (code, out, err) = run(sub, FIXTURE, "past_the_end", &args);
        assert_eq!(code, 0, "{sub}: {err}");
        assert_has(&out, &["simulated"]);
    }
    // A loop that never ends spends the step budget: exit 1 in each.
    let hangs = "tests/fixtures/hangs/sim_hangs.cu";
    let budget = ["--arg", "out=buf:128", "--max-steps", "1000"];
    let (code, _, err) = run("simulate", hangs, "forever", &budget);
    assert_eq!(code, 1, "{err}");
    for sub in ["time", "bound"] {
        let args = [&["--simulate"][..], &budget].concat();
        let (code, _, err) = run(sub, hangs, "forever", &args);
        assert_eq!(code, 1, "{sub}: {err}");
        assert_has(
            &err,
            &[
                "the simulated launch stopped (step-limit)",
                "budget of 1000 warp instructions",
            ],
        );
    }
}
