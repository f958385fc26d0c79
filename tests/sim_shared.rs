//! Shared-memory bank conflicts under simulation: word w is in bank
//! w mod 32, and an access's degree is the largest number of distinct words
//! any one bank must serve (lanes on the same word share a broadcast).

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim::Init;

const FIXTURE: &str = "tests/fixtures/cu/sim_shared.cu";

fn one_warp(kernel: &str, out_bytes: u64) -> (warpcheck::ir::Module, warpcheck::sim::Outcome) {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        kernel,
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("out", out_bytes, Init::Zero)],
    );
    (m, o)
}

fn degree(
    m: &warpcheck::ir::Module,
    o: &warpcheck::sim::Outcome,
    kind: &str,
    line: u32,
) -> (u64, u64) {
    let s = site(m, o, kind, line);
    assert_eq!(s.space, Some("shared"), "{kind} on line {line}");
    let c = s.conflict.unwrap();
    (c.min, c.max)
}

#[test]
fn stride_32_is_a_32_way_conflict() {
    let (m, o) = one_warp("stride32", 128);
    // s[32 t] is word 32 t, in bank 0 for every t: 32 distinct words in one bank.
    assert_eq!(degree(&m, &o, "store", 6), (32, 32));
    assert_eq!(degree(&m, &o, "load", 8), (32, 32));
    // Two 32-way accesses: 32 wavefronts each, 31 of them extra.
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (64, 62));
    assert_eq!(o.warps[0].counters.conflicts, 62);
    let out = floats(&o, "out");
    assert!(out.iter().enumerate().all(|(t, &v)| v == t as f32));
}

#[test]
fn stride_33_has_no_conflict() {
    let (m, o) = one_warp("stride33", 128);
    // Word 33 t is in bank (33 t) mod 32 = t: one word per bank.
    assert_eq!(degree(&m, &o, "store", 14), (1, 1));
    assert_eq!(degree(&m, &o, "load", 16), (1, 1));
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (2, 0));
}

#[test]
fn one_word_read_by_all_lanes_is_a_broadcast() {
    let (m, o) = one_warp("broadcast", 128);
    assert_eq!(degree(&m, &o, "store", 21), (1, 1));
    assert_eq!(degree(&m, &o, "load", 23), (1, 1));
    assert_eq!(site(&m, &o, "load", 23).nonuniform, 0);
    assert!(floats(&o, "out").iter().all(|&v| v == 7.0));
}

#[test]
fn doubles_need_two_words_per_bank() {
    let (m, o) = one_warp("doubles", 256);
    // 32 doubles are words 0..63; bank b holds words b and b + 32.
    assert_eq!(degree(&m, &o, "store", 28), (2, 2));
    assert_eq!(degree(&m, &o, "load", 30), (2, 2));
    let out: Vec<f64> = o
        .buffer("out")
        .unwrap()
        .data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert!(out.iter().enumerate().all(|(t, &v)| v == (31 - t) as f64));
}
