//! Block reductions: results equal the sum; divergence and conflicts
//! follow from which threads take part at each step.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim::{ArgValue, BufferSpec, Elem, Init};

const FIXTURE: &str = "tests/fixtures/cu/sim_reduction.cu";

#[test]
fn block_sums_equal_the_cpu_sums() {
    let m = compile(FIXTURE);
    let n = 1000;
    let input: Vec<i32> = (0..1024).map(|i| (i * 7919 % 1000) - 500).collect();
    let o = run_block_sum(&m, ["in", "out", "n"], 4, &input, n);
    let out = ints(&o, "out");
    for b in 0..4 {
        let expect: i32 = input[b * 256..((b + 1) * 256).min(n as usize)].iter().sum();
        assert_eq!(out[b], expect, "block {b}");
    }
    // Branches (clang unrolls the tree loop into three copies of line 11):
    // line 8: 32 warps; only the one holding i = 992..1023 splits (i < 1000).
    // line 11: t < 128, 64, 32 split at multiples of 32: never divergent.
    // line 15: t < 32 is whole warp 0: uniform.
    // line 19: t == 0 in warp 0 of each block: divergent 4 times.
    let divergent = |line| {
        let b = site(&m, &o, "branch", line);
        (b.executions, b.divergent)
    };
    assert_eq!(divergent(8), (32, 1));
    assert_eq!(divergent(11), (96, 0));
    assert_eq!(divergent(15), (32, 0));
    assert_eq!(divergent(19), (4, 4));
    assert_eq!(o.totals.divwarps, 5);
    // s[t] and s[t + k] are consecutive words: no bank conflicts.
    assert_eq!(o.totals.conflicts, 0);
}

#[test]
fn float_sum_with_shuffles_and_an_atomic() {
    let m = compile(FIXTURE);
    let n = 4000;
    let input = (
        "in".to_string(),
        ArgValue::Buffer(BufferSpec {
            bytes: 4 * n as u64,
            init: Init::Iota,
            elem: Some(Elem::F32),
        }),
    );
    let o = run(
        &m,
        "float_sum",
        &launch([2, 1, 1], [128, 1, 1]),
        &[input, buf("total", 4, Init::Zero), int("n", n)],
    );
    // 0 + 1 + ... + 3999 = 7998000; every partial sum is an integer below
    // 2^24, so float addition is exact in any order.
    assert_eq!(floats(&o, "total")[0], 7_998_000.0);
    // One atomic per warp (8 warps), each by lane 0 alone.
    let a = site(&m, &o, "atomic", 32);
    assert_eq!((a.executions, a.sectors.unwrap().max), (8, 1));
}
