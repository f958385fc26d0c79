//! The pass plugin inside the opt and clang of this build's LLVM major: the same findings, at exact
//! file:line:col, during the device compilation only, without changing IR.

mod common;
use common::*;
use std::process::Command;

fn device_ir(src: &std::path::Path, dir: &std::path::Path) -> std::path::PathBuf {
    let out = dir.join("k.ll");
    let status = Command::new(clang())
        .args([
            "-x",
            "cuda",
            "--cuda-gpu-arch=sm_80",
            "--cuda-device-only",
            "-O2",
            "-gline-tables-only",
        ])
        .args(no_toolkit_flags())
        .args(["-emit-llvm", "-S", "-o"])
        .arg(&out)
        .arg(src)
        .status()
        .expect("run clang");
    assert!(status.success());
    out
}

/// Compiles a fixture's device side with clang and the plugin loaded.
fn clang_with_plugin(
    src: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut flags = vec!["-gline-tables-only"];
    flags.extend_from_slice(extra);
    clang_with_plugin_no_lines(src, &flags, env)
}

/// [`clang_with_plugin`] without debug info, as many builds are.
fn clang_with_plugin_no_lines(
    src: &std::path::Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    run(Command::new(clang())
        .envs(env.iter().copied())
        .args(["-x", "cuda", "--cuda-gpu-arch=sm_80", "-O2"])
        .args(no_toolkit_flags())
        .arg(format!("-fpass-plugin={}", plugin().display()))
        .args(extra)
        .args(["-S", "-o", "/dev/null"])
        .arg(src))
}

#[test]
fn opt_reports_the_same_findings() {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("cu/branches.cu");
    let ll = device_ir(&src, dir.path());
    let opt = |env: &[(&str, &str)]| {
        run(Command::new(llvm_tool("opt"))
            .envs(env.iter().copied())
            .arg(format!("-load-pass-plugin={}", plugin().display()))
            .args(["-passes=warpcheck", "-disable-output"])
            .arg(&ll))
    };
    // Line 3 (threadIdx.x % 2) splits every warp, and so does line 20
    // (lane == 0, the lane id read by inline asm: lane 0 against the other
    // 31 of every warp), named as the leader-lane guard it is. Line 3's
    // side is a load and a store of the lanes' own elements, so little of
    // the kernel's time: under the default `MinImpact` of 5% it is a note,
    // in the plugin as in `check`.
    let cli = stdout(&run(warpcheck().arg("check").arg(&ll)));
    let out = opt(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    // `lane == 0` is at column 7, or at its `==` (12) for clang 22.
    let leader =
        "leader-lane guard: one lane per warp runs this side for its warp (8 of 8 warps split)";
    let divides = "branch diverges in 8 of 8 warps";
    let at20 = format!("branches.cu:20:{}: {leader}", branch_col(7, 12));
    assert!(err.contains(&at20), "missing {at20} in:\n{err}");
    assert!(
        cli.contains(&at20.replace(": leader", ": warning: leader")),
        "{cli}"
    );
    assert!(
        !err.contains(divides) && !cli.contains(divides),
        "{err}\n{cli}"
    );
    // With the threshold lifted both report both.
    let cli = stdout(&run(warpcheck().args(["check", "--min-impact=0"]).arg(&ll)));
    let err = stderr(&opt(&[("WARPCHECK_MIN_IMPACT", "0")]));
    for (line, col, says) in [(3, 7, divides), (20, branch_col(7, 12), leader)] {
        let at = format!("branches.cu:{line}:{col}: {says}");
        assert!(err.contains(&at), "missing {at} in:\n{err}");
        let warning = format!("branches.cu:{line}:{col}: warning: {says}");
        assert!(cli.contains(&warning), "{cli}");
    }
    assert_eq!(
        err.matches("[warpcheck-divergent-branch]").count(),
        2,
        "{err}"
    );
}

#[test]
fn opt_leaves_the_module_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let ll = device_ir(&fixture("cu/spaces.cu"), dir.path());
    let plain = run(Command::new(llvm_tool("opt"))
        .args(["-passes=verify", "-S"])
        .arg(&ll));
    let with = run(Command::new(llvm_tool("opt"))
        .arg(format!("-load-pass-plugin={}", plugin().display()))
        .args(["-passes=warpcheck", "-S"])
        .arg(&ll));
    assert!(with.status.success());
    assert_eq!(stdout(&plain), stdout(&with));
}

#[test]
fn clang_shows_warnings_at_source_lines() {
    let src = fixture("cu/branches.cu");
    let out = clang_with_plugin(
        &src,
        &["--cuda-device-only"],
        &[("WARPCHECK_MIN_IMPACT", "0")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let want = format!(
        "{}:3:7: warning: branch diverges in 8 of 8 warps (every warp); lanes of a warp take different paths (~",
        src.display()
    );
    assert!(err.contains(&want), "missing\n{want}\nin:\n{err}");
    assert!(err.contains("when compiling for sm_80"), "{err}");
}

#[test]
fn clang_host_compile_is_skipped() {
    let src = fixture("cu/atomics.cu");
    let out = clang_with_plugin(&src, &["--cuda-host-only"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warpcheck"), "{}", stderr(&out));
}

#[test]
fn remarks_reach_rpass_analysis() {
    let src = fixture("cu/atomics.cu");
    let out = clang_with_plugin(
        &src,
        &["-Rpass-analysis=warpcheck", "--cuda-device-only"],
        &[],
    );
    let err = stderr(&out);
    // The branch on an atomic's result cannot be decided: a note, shown as
    // a remark.
    assert!(
        err.contains("remark: branch may diverge in up to 8 of 8 warps"),
        "{err}"
    );
    assert!(err.contains("[-Rpass-analysis=warpcheck]"), "{err}");
}

#[test]
fn plugin_configuration_errors_become_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let ll = device_ir(&fixture("cu/branches.cu"), dir.path());
    let out = run(Command::new(llvm_tool("opt"))
        .env("WARPCHECK_BLOCK_DIM", "zero")
        .arg(format!("-load-pass-plugin={}", plugin().display()))
        .args(["-passes=warpcheck", "-disable-output"])
        .arg(&ll));
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("warpcheck: WARPCHECK_BLOCK_DIM"), "{err}");
}

#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "WARPCHECK_FAULT is read by debug builds only"
)]
fn a_panic_becomes_one_warning_and_the_compile_goes_on() {
    let src = fixture("cu/atomics.cu");
    let out = clang_with_plugin(
        &src,
        &["--cuda-device-only"],
        &[("WARPCHECK_FAULT", "panic")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("warpcheck: internal error").count(), 1, "{err}");
    assert!(err.contains("1 warning generated"), "{err}");
}

#[test]
fn a_kernel_over_budget_is_one_warning_and_the_compile_goes_on() {
    // `large` needs thousands of thread-dependence facts, `small` about 30.
    let out = clang_with_plugin(
        &fixture("cu/budget.cu"),
        &["--cuda-device-only"],
        &[
            ("WARPCHECK_BUDGET", "ifds-facts=1000"),
            ("WARPCHECK_MIN_IMPACT", "0"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("[warpcheck-analysis-budget]").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("budget.cu:10:") && err.contains("warning: analysis of this kernel stopped"),
        "{err}"
    );
    // small keeps its finding: `t % 2` splits every warp.
    assert!(
        err.contains("budget.cu:7:7: warning: branch diverges in 8 of 8 warps"),
        "{err}"
    );
}

#[test]
fn a_bad_budget_is_one_warning_and_the_compile_goes_on() {
    let out = clang_with_plugin(
        &fixture("cu/budget.cu"),
        &["--cuda-device-only"],
        &[("WARPCHECK_BUDGET", "ifds-facts=lots")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("WARPCHECK_BUDGET: ifds-facts: expected a count"),
        "{err}"
    );
}

/// Whether some line of `text` holds `head` and ends with `tail` (what
/// lies between is the estimated share, the time model's figure).
fn has_line(text: &str, head: &str, tail: &str) -> bool {
    text.lines().any(|l| l.contains(head) && l.ends_with(tail))
}

#[test]
fn instantiations_of_a_template_share_their_warnings() {
    // halve<8>, halve<16>, halve<64> at the default 256 threads (8 warps):
    // line 6, `t < S`, splits warp 0 for S = 8 and 16 (1 of 8 warps) and
    // no warp for S = 64; line 7, `t % 2`, splits every warp in all three.
    // So 5 findings: 2 alike at line 6 and 3 alike at line 7. Their sides
    // are a few instructions: under the 5% threshold, so it is lifted.
    let src = fixture("cu/templated_steps.cu");
    let env = [("WARPCHECK_MIN_IMPACT", "0")];
    let out = clang_with_plugin(&src, &["--cuda-device-only"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    // `t < S` is at column 7, or at its `<` (9) for clang 22.
    let at6 = format!(
        "templated_steps.cu:6:{}: warning: branch diverges in 1 of 8 warps; lanes of a warp \
         take different paths (~",
        branch_col(7, 9)
    );
    let tail6 = "of the kernel's time) (and 1 more like it in 2 kernels: halve<8>, halve<16>) \
                 [warpcheck-divergent-branch] [-Wpass-failed]";
    let at7 = "templated_steps.cu:7:7: warning: branch diverges in 8 of 8 warps (every warp); \
               lanes of a warp take different paths (~";
    let tail7 = "of the kernel's time) (and 2 more like it in 3 kernels: halve<8>, halve<16>, \
                 halve<64>) [warpcheck-divergent-branch] [-Wpass-failed]";
    assert!(
        has_line(&err, &at6, tail6),
        "missing\n{at6}…{tail6}\nin:\n{err}"
    );
    assert!(
        has_line(&err, at7, tail7),
        "missing\n{at7}…{tail7}\nin:\n{err}"
    );
    assert!(err.contains("2 warnings generated"), "{err}");
    // `check` says the same.
    let cli = run(warpcheck().args(["check", "--min-impact=0"]).arg(&src));
    let cli = stdout(&cli) + &stderr(&cli);
    let cut = |t: &str| t.replace(" [-Wpass-failed]", "");
    assert!(has_line(&cli, &at6, &cut(tail6)), "{cli}");
    assert!(has_line(&cli, at7, &cut(tail7)), "{cli}");
    assert!(cli.contains("2 warnings generated"), "{cli}");

    // Without debug info clang places both at the template's declaration
    // (line 4): still one warning per message, with the way to their lines.
    let out = clang_with_plugin_no_lines(&src, &["--cuda-device-only"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let hint = "compile with -gline-tables-only to see their lines";
    for (message, more, kernels) in [
        ("1 of 8 warps;", 1, "2 kernels: halve<8>, halve<16>"),
        (
            "8 of 8 warps (every warp);",
            2,
            "3 kernels: halve<8>, halve<16>, halve<64>",
        ),
    ] {
        let head = format!(
            "{}:4:17: warning: branch diverges in {message} lanes of a warp take different \
             paths (~",
            src.display()
        );
        let tail = format!(
            "of the kernel's time) (and {more} more like it in {kernels}; {hint}) \
             [warpcheck-divergent-branch] [-Wpass-failed]"
        );
        assert!(
            has_line(&err, &head, &tail),
            "missing\n{head}…{tail}\nin:\n{err}"
        );
    }
    assert!(err.contains("2 warnings generated"), "{err}");

    // Remarks still list every finding.
    let out = clang_with_plugin(
        &src,
        &["--cuda-device-only", "-Rpass-analysis=warpcheck"],
        &env,
    );
    let err = stderr(&out);
    assert_eq!(
        err.matches("remark: branch diverges in 1 of 8 warps")
            .count(),
        2,
        "{err}"
    );
    assert_eq!(
        err.matches("remark: branch diverges in 8 of 8 warps")
            .count(),
        3,
        "{err}"
    );
}

#[test]
fn kernels_on_several_threads_give_the_same_warnings() {
    let src = fixture("cu/templated_steps.cu");
    let min = ("WARPCHECK_MIN_IMPACT", "0");
    let one = clang_with_plugin(
        &src,
        &["--cuda-device-only"],
        &[("WARPCHECK_JOBS", "1"), min],
    );
    let four = clang_with_plugin(
        &src,
        &["--cuda-device-only"],
        &[("WARPCHECK_JOBS", "4"), min],
    );
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert!(
        stderr(&one).contains("2 warnings generated"),
        "{}",
        stderr(&one)
    );
    assert_eq!(stderr(&one), stderr(&four));
    let bad = clang_with_plugin(&src, &["--cuda-device-only"], &[("WARPCHECK_JOBS", "many")]);
    assert_eq!(bad.status.code(), Some(0), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("WARPCHECK_JOBS: jobs: expected a thread count, got 'many'"),
        "{}",
        stderr(&bad)
    );
}

/// Forty kernels, one a line, each storing `a[threadIdx.x * 32]`: lanes
/// 128 bytes apart, so one warp of 32 touches 32 sectors where 4 would do,
/// an uncoalesced-store warning per kernel. The plugin analyses them in
/// batches of 32 (`analysis::in_batches`, one thread): both batches are
/// reported, every kernel once, in line order.
#[test]
fn a_module_of_more_kernels_than_a_batch_is_reported_whole() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("many.cu");
    let text: String = (0..40)
        .map(|i| format!("__global__ void k{i}(float *a) {{ a[threadIdx.x * 32] = {i}.0f; }}\n"))
        .collect();
    std::fs::write(&src, text).unwrap();
    let ll = device_ir(&src, dir.path());
    let out = run(Command::new(llvm_tool("opt"))
        .env("WARPCHECK_BLOCK_DIM", "32")
        .arg(format!("-load-pass-plugin={}", plugin().display()))
        .args(["-passes=warpcheck", "-disable-output"])
        .arg(&ll));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<usize> = err
        .lines()
        .filter(|l| l.contains("[warpcheck-uncoalesced-access]"))
        .map(|l| {
            let at = l.split("many.cu:").nth(1).unwrap_or_else(|| panic!("{l}"));
            at.split(':').next().unwrap().parse().unwrap()
        })
        .collect();
    assert_eq!(lines, (1..=40).collect::<Vec<_>>(), "{err}");
    assert!(err.contains("sectors per request 32 (ideal 4"), "{err}");
}

/// `launch_ast.cu` launches `halves` with 64 threads from host code only
/// the device compile parses (`#ifdef __CUDA_ARCH__`). With `-fplugin` the
/// library's frontend action reads that launch from the AST: 64 threads,
/// `threadIdx.x < 16` splits warp 0 of 2. With the pass alone, its own
/// host-side compile cannot see the launch: 256 threads, warp 0 of 8, and
/// the warning says the shape is assumed.
#[test]
fn the_frontend_action_gives_the_launches_from_the_ast() {
    let src = fixture("cu/launch_ast.cu");
    let p = format!("-fplugin={}", frontend_plugin().display());
    let env = [("WARPCHECK_MIN_IMPACT", "0")];
    let with = clang_with_plugin(&src, &["--cuda-device-only", &p], &env);
    let err = stderr(&with);
    assert_eq!(with.status.code(), Some(0), "{err}");
    assert!(err.contains("launch_ast.cu:7:"), "{err}");
    assert!(err.contains("branch diverges in 1 of 2 warps"), "{err}");
    assert!(!err.contains("block shape assumed"), "{err}");
    let without = clang_with_plugin(&src, &["--cuda-device-only"], &env);
    let err = stderr(&without);
    assert!(err.contains("branch diverges in 1 of 8 warps"), "{err}");
    assert!(err.contains("note: block shape assumed: 256×1×1"), "{err}");
}
