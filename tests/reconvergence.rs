//! Paths into `unreachable`, `__trap()` and failed `assert`s never come
//! back, so they do not move where lanes meet: neither for thread
//! dependence nor for the simulator (fixture `taint_abort.cu`).

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::analysis::{self, Options};
use warpcheck::ir::{Module, Value};
use warpcheck::sim::Init;
use warpcheck::taint::ifds::IfdsTaint;

const FIXTURE: &str = "tests/fixtures/cu/taint_abort.cu";

/// Whether the value named `prefix...` (clang's `%a.059` for the source
/// variable `a`) in `kernel` is thread-dependent; every value of that name
/// must agree.
fn dependent(m: &Module, kernel_name: &str, prefix: &str) -> bool {
    let a = analysis::analyze(m, &Options::default(), &IfdsTaint);
    let k = kernel(m, kernel_name);
    let ka = a.kernels.iter().find(|ka| ka.kernel == k).unwrap();
    let func = m.func(k);
    let named: Vec<bool> = func
        .inst_ids()
        .filter(|&i| {
            func.inst(i)
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|i| ka.deps.is_dependent(k, Value::Inst(i)))
        .collect();
    assert!(!named.is_empty(), "no value {prefix}* in {kernel_name}");
    assert!(
        named.iter().all(|&d| d == named[0]),
        "{prefix}* in {kernel_name}: {named:?}"
    );
    named[0]
}

/// The kernels with a loop counter `a` around a counted loop `j`.
const LOOP_KERNELS: [&str; 4] = [
    "_Z14switch_defaultPKfPfi",
    "_Z19builtin_unreachablePKfPfii",
    "_Z10trap_guardPKfPfi",
    "_Z12assert_guardPKfPfi",
];

#[test]
fn loop_counters_stay_uniform_past_aborting_paths() {
    let m = compile(FIXTURE);
    for k in LOOP_KERNELS {
        // `a` and the outer `k` are the same in every lane still in their
        // loops: the lanes that break meet the others at the `a` loop's
        // exit, before any lane starts the next `k` iteration.
        assert!(!dependent(&m, k, "a."), "a in {k}");
        assert!(!dependent(&m, k, "inc"), "a + 1 / j + 1 in {k}");
        assert!(!dependent(&m, k, "k."), "k in {k}");
    }
    // The counted loop j of the first kernel.
    assert!(!dependent(&m, LOOP_KERNELS[0], "j."));
    // s differs after the `a` loop: lanes left it on different iterations.
    assert!(dependent(&m, LOOP_KERNELS[0], "s.1"));
}

#[test]
fn the_break_and_the_assert_stay_dependent_and_the_rest_uniform() {
    let r = check_json_at(FIXTURE);
    // switch_default: k loop (11), j loop (14), switch on j (15) uniform;
    // the break, whose branch also tests a < 12 (19), dependent.
    for (line, dep) in [(11, false), (14, false), (15, false), (19, true)] {
        assert_branch(&r, "switch_default", line, dep);
    }
    // builtin_unreachable: k loop (28), switch on m & 3 (30), break (36).
    for (line, dep) in [(28, false), (30, false), (36, true)] {
        assert_branch(&r, "builtin_unreachable", line, dep);
    }
    // trap_guard: the uniform guard (47) and the break (49).
    for (line, dep) in [(45, false), (47, false), (49, true)] {
        assert_branch(&r, "trap_guard", line, dep);
    }
    // assert_guard: the assert reads in[t] (60); the break (62).
    for (line, dep) in [(58, false), (60, true), (62, true)] {
        assert_branch(&r, "assert_guard", line, dep);
    }
}

#[test]
fn a_return_inside_a_loop_still_ends_lanes_on_different_iterations() {
    let m = compile(FIXTURE);
    // find's `return i` leaves the loop on each lane's own iteration, so
    // the index returned, and the kernel's branch on it, are dependent.
    let r = check_json_at(FIXTURE);
    assert_branch(&r, "return_in_loop", 77, true);
    assert_branch(&r, "return_in_loop", 71, true);
    let a = analysis::analyze(&m, &Options::default(), &IfdsTaint);
    let k = kernel(&m, "_Z14return_in_loopPKiPii");
    let ka = a.kernels.iter().find(|ka| ka.kernel == k).unwrap();
    let func = m.func(k);
    let call = func
        .inst_ids()
        .find(|&i| func.inst(i).name.as_deref() == Some("call"))
        .expect("the call to find");
    assert!(ka.deps.is_dependent(k, Value::Inst(call)));
}

#[test]
fn simulated_lanes_meet_at_the_exit_of_the_loop_they_break() {
    let m = compile(FIXTURE);
    // One warp, n = 2. in[0] = 1 and every other element 0, so s goes
    // 0 -> +1 -> *1 -> -1 = 0 on each a iteration and stays 0; the break
    // `in[t + a] > s` holds for lane 0 at a = 0 only (t + a >= 1 elsewhere).
    let mut data = vec![0.0f32; 43]; // t + a <= 31 + 11
    data[0] = 1.0;
    let o = run(
        &m,
        "_Z14switch_defaultPKfPfi",
        &launch([1, 1, 1], [32, 1, 1]),
        &[
            helpers::data("in", f32_bytes(&data)),
            buf("out", 128, Init::Zero),
            int("n", 2),
        ],
    );
    // Per k iteration: 12 a iterations, the first with all 32 lanes (lane 0
    // breaks: divergent), the other 11 with lanes 1..31 (the last one
    // leaves together on a == 11: uniform). So 2 x 12 = 24 executions of
    // the break, 2 divergent.
    let brk = site(&m, &o, "branch", 19);
    assert_eq!((brk.executions, brk.divergent), (24, 2));
    // j runs 3 times per a iteration, always uniformly: 2 x 12 x 3 = 72.
    let sw = site(&m, &o, "branch", 15);
    assert_eq!((sw.executions, sw.divergent), (72, 0));
    let j = site(&m, &o, "branch", 14);
    assert_eq!((j.executions, j.divergent), (72, 0));
    // Lane 0 waits at the a loop's exit, so the warp runs the next k
    // iteration and the store once, together. Meeting at the kernel's end
    // instead would run them twice, once for lane 0 alone.
    let store = site(&m, &o, "store", 21);
    assert_eq!(store.executions, 1);
    assert!(o.warps.iter().all(|w| w.counters.divwarps == 2));
    assert!(floats(&o, "out").iter().all(|&v| v == 0.0));
}

fn check_json_at(rel: &str) -> serde_json::Value {
    let out = warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(fixture(rel))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every branch site of `kernel` on `line` has dependence `dep`.
fn assert_branch(r: &serde_json::Value, kernel: &str, line: u64, dep: bool) {
    let k = r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| {
            k["name"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{kernel}("))
        })
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    let found: Vec<bool> = k["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "branch" && s["line"] == line)
        .map(|s| s["thread_dependent"].as_bool().unwrap())
        .collect();
    assert!(!found.is_empty(), "no branch on line {line} of {kernel}");
    assert!(
        found.iter().all(|&d| d == dep),
        "{kernel} line {line}: {found:?}, expected {dep}"
    );
}
