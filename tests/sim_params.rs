//! Kernel arguments are named as in the source: from the IR's value names,
//! or from debug info when the IR has none; else positionally, `arg0`...

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim;

const FIXTURE: &str = "tests/fixtures/cu/sim_reduction.cu";

fn names(m: &warpcheck::ir::Module, kernel: &str) -> Vec<(String, bool)> {
    sim::params(m, helpers::kernel(m, kernel))
        .into_iter()
        .map(|p| (p.name, p.named))
        .collect()
}

fn named(list: &[&str]) -> Vec<(String, bool)> {
    list.iter().map(|n| (n.to_string(), true)).collect()
}

#[test]
fn value_names_give_source_names() {
    let m = compile(FIXTURE);
    assert_eq!(names(&m, "block_sum"), named(&["in", "out", "n"]));
}

#[test]
fn unoptimised_debug_info_gives_names_and_local_memory_works() {
    // At -O0 without value names, parameters are only named by their
    // #dbg_declare records; every variable lives in local memory.
    let m = compile_with(FIXTURE, &["-O0", "-fdiscard-value-names"]);
    assert_eq!(names(&m, "block_sum"), named(&["in", "out", "n"]));
    let input: Vec<i32> = (0..1000).collect();
    let o = run_block_sum(&m, ["in", "out", "n"], 4, &input, 1000);
    // Sums of 0..255, 256..511, 512..767 and 768..999.
    assert_eq!(ints(&o, "out"), vec![32640, 98176, 163712, 204972]);
    let locals = report_spaces(&m, &o);
    assert!(locals.contains(&"local"), "{locals:?}");
}

fn report_spaces(m: &warpcheck::ir::Module, o: &sim::Outcome) -> Vec<&'static str> {
    let mut v: Vec<_> = sim::report::sites(m, o)
        .iter()
        .filter_map(|s| s.space)
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn without_names_arguments_are_positional() {
    let m = compile_with(FIXTURE, &["-g0", "-fdiscard-value-names"]);
    let list = names(&m, "block_sum");
    assert_eq!(
        list,
        vec![
            ("arg0".into(), false),
            ("arg1".into(), false),
            ("arg2".into(), false)
        ]
    );
    let o = run_block_sum(&m, ["arg0", "arg1", "arg2"], 1, &[2; 256], 256);
    assert_eq!(ints(&o, "arg1"), vec![512]);
    // A source name the IR does not know is rejected with the real names.
    let e = try_run(
        &m,
        "block_sum",
        &launch([1, 1, 1], [256, 1, 1]),
        &[int("n", 1)],
    )
    .unwrap_err();
    assert!(e.message.contains("parameters: arg0, arg1, arg2"), "{e}");
}
