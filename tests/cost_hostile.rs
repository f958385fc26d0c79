//! Bounds that must never lie (issue 24): a tile loop whose start is a
//! parameter times `blockIdx.x`, trip counts past 2^40, products of 64-bit
//! parameters. Each gives a bound at least the simulated worst warp, or
//! "no bound" with a reason, and never a panic or a lost file.

mod common;

use common::*;
use serde_json::Value;

const FILE: &str = "hangs/cost_hostile.cu";

fn bound_json(kernel: &str, metric: &str, extra: &[&str]) -> Value {
    let out = run(warpcheck()
        .args([
            "bound", "--format", "json", "--kernel", kernel, "--metric", metric,
        ])
        .args(extra)
        .arg(fixture(FILE)));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn a_tile_loop_from_a_parameter_times_blockidx_is_bounded() {
    // a runs from wA·b to wA·b + wA by 32: ⌈wA/32⌉ iterations whatever the
    // block b. At wA = 64, 32 threads, 2 blocks: 2 iterations, each one
    // load of 32 consecutive floats at a multiple of 32 floats (128 bytes)
    // = 4 sectors, plus the final store of C[threadIdx.x], 4 sectors:
    // 12 per warp. The bound must cover it and may not be 0.
    for (wa, grid) in [("64", "2"), ("1000", "5"), ("32", "7")] {
        for metric in ["steps", "sectors"] {
            let j = bound_json(
                "k5",
                metric,
                &[
                    "--block-dim",
                    "32",
                    "--param",
                    &format!("wA={wa}"),
                    "--grid",
                    grid,
                    "--simulate",
                    "--arg",
                    "C=buf:65536",
                ],
            );
            let value = j["value"].as_f64().expect("a bound at these parameters");
            let sim = j["simulated"].as_f64().expect("simulated");
            assert!(value >= sim, "{metric} at wA={wa}: {value} < {sim}");
            assert!(value > 0.0, "{metric}: a zero bound");
        }
    }
    // Sectors exactly as counted above at wA = 64 (two iterations of 4
    // plus 4 for the store): the simulator agrees with the hand count.
    let j = bound_json(
        "k5",
        "sectors",
        &[
            "--block-dim",
            "32",
            "--param",
            "wA=64",
            "--grid",
            "2",
            "--simulate",
            "--arg",
            "C=buf:65536",
        ],
    );
    assert_eq!(j["simulated"], 12.0);
}

#[test]
fn huge_and_overflowing_bounds_are_no_bound_with_a_reason() {
    for kernel in ["huge_trip", "three_params", "two_params"] {
        let j = bound_json(kernel, "steps", &[]);
        // A correct polynomial would mention the loop; a constant or a
        // zero here would be the silent zero of issue 24.
        if j["bound"] == "no bound" {
            let why = j["reason"].as_str().expect("a reason");
            assert!(!why.is_empty(), "{kernel}");
        } else {
            assert_ne!(j["bound"], "0", "{kernel}");
        }
    }
    // 2^42 − threadIdx.x over a step of 256: at most 2^34 iterations, each
    // at least one step (the compare and branch alone are two): a number,
    // and at least 2·2^34, kept exact as a symbol rather than refused.
    let j = bound_json("huge_trip", "steps", &[]);
    let v = j["value"].as_f64().expect("a bound with no parameter");
    assert!(v >= 2.0 * 17_179_869_184.0, "{j}");
    // No loop: a·a > 5 costs its branch and maybe a store, a number.
    let j = bound_json("square_branch", "sectors", &[]);
    // The store out[2·threadIdx.x]: 32 lanes 8 bytes apart over 256
    // aligned bytes = 8 sectors.
    assert_eq!(j["bound"], "8");
}

#[test]
fn check_keeps_every_finding_and_exits_0() {
    let out = run(warpcheck().args(["check", "--bounds"]).arg(fixture(FILE)));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    // The uncoalesced store of square_branch is still reported.
    assert!(text.contains("warpcheck-uncoalesced-access"), "{text}");
    // One cost note and one time note per kernel (5 kernels).
    assert_eq!(text.matches("note: cost per warp").count(), 5, "{text}");
    assert_eq!(
        text.matches("note: time").count() + text.matches("note: no time bound").count(),
        5,
        "{text}"
    );
    // Never a time bound of 0 for a kernel that does work.
    assert!(!text.contains("time ≤ 0 cycles"), "{text}");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[test]
fn time_is_a_bound_or_no_bound_never_zero() {
    for kernel in ["huge_trip", "three_params", "two_params", "square_branch"] {
        let out = run(warpcheck()
            .args(["time", "--kernel", kernel])
            .arg(fixture(FILE)));
        assert_eq!(out.status.code(), Some(0), "{kernel}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.contains("time ≤ 0 cycles"), "{kernel}: {text}");
    }
}

#[test]
fn the_plugin_with_bounds_keeps_every_warning() {
    // The uncoalesced store of square_branch (32 lanes 8 bytes apart) is
    // the module's one warning; with bounds on, a kernel whose bound
    // overflows must not turn it into "this module was not analysed".
    let out = run(std::process::Command::new(clang())
        .env("WARPCHECK_BOUNDS", "1")
        .args([
            "--cuda-device-only",
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_80",
            "-O2",
            "-g",
        ])
        .args(no_toolkit_flags())
        .arg(format!("-fpass-plugin={}", plugin().display()))
        .args(["-S", "-o", "/dev/null"])
        .arg(fixture(FILE)));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("uncoalesced store access"), "{err}");
    assert!(!err.contains("not analysed"), "{err}");
    assert!(!err.contains("internal error"), "{err}");
}
