//! Thread dependence through memory shared between threads, on a .cu
//! fixture compiled by clang: constant memory, order, and broadcasts after
//! a barrier, each with the twins that must stay dependent (the reasons
//! are in the fixture's comments and in `taint::ifds::memory`).

mod common;
use common::*;

fn report() -> serde_json::Value {
    check_json("cu/taint_memory.cu", &[])
}

/// The first step of the explanation of the branch on `line`.
fn why_first(r: &serde_json::Value, kernel: &str, line: u64) -> String {
    let s = sites(r, kernel, "branch", line);
    s[0]["why"][0].as_str().unwrap_or_default().to_string()
}

#[test]
fn constant_memory_is_read_only() {
    let r = report();
    // `flag` is __constant__: the store through p.dst cannot change it.
    assert_dependent(&r, "constant_flag", "branch", 10, false);
    // So the inner test is the only dependent one: lane 0 of each block.
    assert_dependent(&r, "constant_flag", "branch", 12, true);
    assert_eq!(spaces(&r, "constant_flag", "load", 10), ["constant"]);
}

#[test]
fn a_broadcast_after_a_barrier_is_uniform() {
    let r = report();
    for (kernel, line) in [
        ("fill_then_broadcast", 23),
        ("total_after_atomics", 63),
        ("leader_flag", 73),
        ("loop_with_barriers", 97),
    ] {
        assert_dependent(&r, kernel, "branch", line, false);
    }
}

#[test]
fn twins_without_the_barrier_or_the_uniform_read_stay_dependent() {
    let r = report();
    for (kernel, line) in [
        ("fill_without_barrier", 31),
        ("read_at_thread_index", 40),
        ("write_after_barrier", 50),
        ("loop_carries_the_store", 84),
        ("global_after_barrier", 110),
    ] {
        assert_dependent(&r, kernel, "branch", line, true);
    }
    // Each explanation starts at the thread index the racing write stores.
    for (kernel, line) in [("fill_without_barrier", 31), ("write_after_barrier", 50)] {
        assert_eq!(why_first(&r, kernel, line), "threadIdx.x", "{kernel}");
    }
}
