//! Divergent branches under simulation: a branch execution diverges when
//! the active lanes of its warp take different targets; the warp runs both
//! sides and reconverges at the immediate post-dominator.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim::Init;

const FIXTURE: &str = "tests/fixtures/cu/sim_divergence.cu";

#[test]
fn odd_and_even_lanes_split_every_warp() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "odd_even",
        &launch([2, 1, 1], [64, 1, 1]),
        &[data("a", f32_bytes(&[1.0; 64]))],
    );
    // 2 blocks x 2 warps, each with 16 odd and 16 even lanes.
    let b = site(&m, &o, "branch", 3);
    assert_eq!((b.executions, b.divergent, b.nonuniform), (4, 4, 4));
    assert!(o.warps.iter().all(|w| w.counters.divwarps == 1));
    // Both blocks update a[threadIdx.x]: odd elements go 1 -> 3 -> 7 (block
    // 0 runs first), even ones keep 1.
    let a = floats(&o, "a");
    assert!(a
        .iter()
        .enumerate()
        .all(|(t, &v)| v == if t % 2 == 1 { 7.0 } else { 1.0 }));
}

#[test]
fn a_branch_on_the_block_index_never_diverges() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "by_block",
        &launch([2, 1, 1], [64, 1, 1]),
        &[buf("a", 512, Init::Zero)],
    );
    let b = site(&m, &o, "branch", 8);
    assert_eq!((b.executions, b.divergent), (4, 0));
    let a = floats(&o, "a");
    assert!(a[..64].iter().all(|&v| v == 0.0) && a[64..].iter().all(|&v| v == 1.0));
}

#[test]
fn loop_exits_diverge_until_the_last_lane_leaves() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "trip_count",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("in", 16, Init::Iota), buf("out", 128, Init::Zero)],
    );
    // clang rotates the loop: a guard `t % 4 != 0` and a latch `i + 1 !=
    // t % 4`, both on line 18. Eight lanes each have 0, 1, 2, 3 trips.
    // Guard: 8 lanes leave, 24 stay (divergent). Latch after trip 1: 8
    // leave, 16 stay (divergent); after trip 2: 8 leave, 8 stay
    // (divergent); after trip 3: the last 8 leave together.
    let b = site(&m, &o, "branch", 18);
    assert_eq!((b.executions, b.divergent), (1 + 3, 3));
    assert_eq!(o.totals.divwarps, 3);
    // in[i] has one address across the active lanes of each trip.
    let load = site(&m, &o, "load", 19);
    assert_eq!((load.executions, load.nonuniform), (3, 0));
    assert_eq!(load.sectors.unwrap().max, 1);
    // s = in[0] + ... + in[t % 4 - 1] with in[i] = i.
    let out = ints(&o, "out");
    let expect = [0, 0, 1, 3];
    assert!(out.iter().enumerate().all(|(t, &v)| v == expect[t % 4]));
}

#[test]
fn a_switch_splits_four_ways_once() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "four_ways",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("out", 16, Init::Zero)],
    );
    let b = site(&m, &o, "branch", 25);
    assert_eq!((b.executions, b.divergent, b.nonuniform), (1, 1, 1));
    // Eight lanes per case add 1, 2, 3 or 4 each.
    assert_eq!(ints(&o, "out"), vec![8, 16, 24, 32]);
    // Each atomic is executed by its eight lanes on one address.
    for line in 26..=29 {
        let a = site(&m, &o, "atomic", line);
        assert_eq!((a.executions, a.nonuniform), (1, 0), "line {line}");
    }
}

/// The kernel's meaning, for one thread; `None` when it returns early.
fn nested_reference(t: i32, limit: i32) -> Option<i32> {
    let mut acc = 0;
    for i in 0..8 {
        if i >= t % 8 {
            break;
        }
        if (t + i) % 2 == 1 {
            acc += i;
        } else {
            acc -= 1;
        }
        if acc > limit {
            return None;
        }
    }
    Some(acc)
}

#[test]
fn nested_divergence_with_early_exits_computes_each_lane() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "nested",
        &launch([1, 1, 1], [64, 1, 1]),
        &[data("out", i32_bytes(&[-99; 64])), int("limit", 5)],
    );
    let out = ints(&o, "out");
    for (t, &v) in out.iter().enumerate() {
        let expect = nested_reference(t as i32, 5).unwrap_or(-99);
        assert_eq!(v, expect, "thread {t}");
    }
    assert!(o.totals.divwarps >= 2, "both warps diverge");
}

/// A branch site's `(executed, diverged)` per warp of the block.
fn by_warp(s: &warpcheck::sim::report::SiteJson) -> Vec<(u64, u64)> {
    s.by_warp
        .as_ref()
        .unwrap()
        .iter()
        .map(|w| (w.executed, w.diverged))
        .collect()
}

#[test]
fn distinct_warps_per_branch() {
    let m = compile(FIXTURE);
    // odd_even over 2 blocks of 64: all 4 (block, warp) pairs split once.
    let o = run(
        &m,
        "odd_even",
        &launch([2, 1, 1], [64, 1, 1]),
        &[data("a", f32_bytes(&[1.0; 64]))],
    );
    let b = site(&m, &o, "branch", 3);
    assert_eq!((b.warps, b.divergent_warps), (Some(4), Some(4)));
    assert_eq!(by_warp(&b), vec![(2, 2), (2, 2)]);
    assert_eq!(b.lanes_max, 32);
    // a[t] is read by the 16 odd lanes of each warp.
    assert_eq!(site(&m, &o, "load", 4).lanes_max, 16);

    // by_block: the 4 warps run the branch, none splits.
    let o = run(
        &m,
        "by_block",
        &launch([2, 1, 1], [64, 1, 1]),
        &[buf("a", 512, Init::Zero)],
    );
    let b = site(&m, &o, "branch", 8);
    assert_eq!((b.warps, b.divergent_warps), (Some(4), Some(0)));
    assert_eq!(by_warp(&b), vec![(2, 0), (2, 0)]);
}

#[test]
fn a_warp_split_many_times_counts_once() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "trip_count",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("in", 16, Init::Iota), buf("out", 128, Init::Zero)],
    );
    // The guard and the latch (both line 18) split the one warp 3 times
    // in all: one warp ran the site, one was split by it.
    let b = site(&m, &o, "branch", 18);
    assert_eq!(
        (b.divergent, b.warps, b.divergent_warps),
        (3, Some(1), Some(1))
    );
    assert_eq!(by_warp(&b), vec![(1, 1)]);
    // in[i] runs with 24, 16 and 8 lanes: one sector each time.
    let load = site(&m, &o, "load", 19);
    let at_max = load.sectors_at_max.unwrap();
    assert_eq!((load.lanes_max, at_max.min, at_max.max), (24, 1, 1));

    // The switch splits its warp four ways, once.
    let o = run(
        &m,
        "four_ways",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("out", 16, Init::Zero)],
    );
    let b = site(&m, &o, "branch", 25);
    assert_eq!((b.warps, b.divergent_warps), (Some(2), Some(2)));
    assert_eq!(by_warp(&b), vec![(1, 1), (1, 1)]);
}
