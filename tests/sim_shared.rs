//! Shared-memory bank conflicts under simulation: word w is in bank
//! w mod 32, and an access's degree is the largest number of distinct words
//! any one bank must serve (lanes on the same word share a broadcast). An
//! access of 4 bytes or less per lane is one phase of 32 lanes, an 8-byte
//! one two phases of 16 lanes, a 16-byte one four phases of 8 lanes; each
//! phase with an active lane takes as many wavefronts as its degree.

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

/// `(min, max)` wavefronts per access and the ideal in all, of a shared site.
fn wavefronts(
    m: &warpcheck::ir::Module,
    o: &warpcheck::sim::Outcome,
    kind: &str,
    line: u32,
) -> (u64, u64, u64) {
    let s = site(m, o, kind, line);
    let w = s.wavefronts.unwrap();
    (w.min, w.max, s.ideal_wavefronts.unwrap())
}

fn doubles_of(o: &warpcheck::sim::Outcome, name: &str) -> Vec<f64> {
    o.buffer(name)
        .unwrap()
        .data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn doubles_are_two_conflict_free_phases() {
    let (m, o) = one_warp("doubles", 256);
    // d[t]: lanes 0-15 write words 0..31, lanes 16-31 words 32..63, each
    // phase one word per bank. d[31 - t]: lanes 0-15 read words 62..32 and
    // lanes 16-31 words 30..0: again one word per bank in each phase.
    assert_eq!(degree(&m, &o, "store", 28), (1, 1));
    assert_eq!(degree(&m, &o, "load", 30), (1, 1));
    assert_eq!(wavefronts(&m, &o, "store", 28), (2, 2, 2));
    assert_eq!(wavefronts(&m, &o, "load", 30), (2, 2, 2));
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (4, 0));
    let out = doubles_of(&o, "out");
    assert!(out.iter().enumerate().all(|(t, &v)| v == (31 - t) as f64));
}

#[test]
fn doubles_at_stride_2_are_two_way_per_phase() {
    let (m, o) = one_warp("doubles_stride2", 256);
    // d[2t]: lane t at byte 16t, words 4t and 4t+1. Lanes 0-7 use banks
    // 0,1,4,5,...,28,29; lanes 8-15 (words 32..61) the same banks again:
    // 2-way in phase 0, and likewise in phase 1 (words 64..125). Each
    // access takes 4 wavefronts for an ideal 2: 2 extra.
    assert_eq!(degree(&m, &o, "store", 38), (2, 2));
    assert_eq!(degree(&m, &o, "load", 40), (2, 2));
    assert_eq!(wavefronts(&m, &o, "store", 38), (4, 4, 2));
    assert_eq!(wavefronts(&m, &o, "load", 40), (4, 4, 2));
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (8, 4));
    let out = doubles_of(&o, "out");
    assert!(out.iter().enumerate().all(|(t, &v)| v == t as f64));
}

#[test]
fn float4_accesses_take_four_phases() {
    let m = compile(FIXTURE);
    let input: Vec<f32> = (0..128).map(|x| x as f32).collect();
    let o = run(
        &m,
        "vec4",
        &launch([1, 1, 1], [32, 1, 1]),
        &[data("in", f32_bytes(&input)), buf("out", 512, Init::Zero)],
    );
    // A float4 copy is a 16-byte struct copy, which the backend makes two
    // 8-byte pieces (ld.u64/st.shared.u64 at offsets 0 and 8), each a
    // request of two phases of 16 lanes.
    // v[2t] = in[t]: piece f of lane t is words 8t + 2f, 8t + 2f + 1. In a
    // phase, lanes t, t + 4, t + 8, t + 12 hit the same two banks with
    // other words: 4-way, 8 wavefronts for an ideal 2, per piece.
    assert_eq!(degree(&m, &o, "store", 47), (4, 4));
    assert_eq!(wavefronts(&m, &o, "store", 47), (8, 8, 4));
    // v[t]: words 4t + 2f, 4t + 2f + 1: lanes t and t + 8 share banks,
    // 2-way, 4 wavefronts for an ideal 2, per piece.
    assert_eq!(degree(&m, &o, "load", 49), (2, 2));
    assert_eq!(wavefronts(&m, &o, "load", 49), (4, 4, 4));
    // Two pieces each: 2·8 + 2·4 wavefronts, 2·6 + 2·2 over the ideal.
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (24, 16));
    // The global sides: lane t's piece at 16t + 8f, 32 lanes over 512
    // bytes = 16 sectors per request.
    let g = site(&m, &o, "load", 47);
    assert_eq!((g.space, g.sectors.unwrap().max), (Some("global"), 16));
    // out[t] = v[t] holds in[t/2] for even t and zeros for odd t.
    let out = floats(&o, "out");
    for t in 0..32 {
        for k in 0..4 {
            let expect = if t % 2 == 0 {
                (4 * (t / 2) + k) as f32
            } else {
                0.0
            };
            assert_eq!(out[4 * t + k], expect, "out[{t}].{k}");
        }
    }
}

#[test]
fn a_half_warp_of_doubles_is_one_phase() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "doubles_half",
        &launch([1, 1, 1], [256, 1, 1]),
        &[buf("out", 2048, Init::Zero)],
    );
    // Only warp 0's lanes 0-15 store d[t]: phase 1 has no active lane, so
    // one wavefront, no conflict.
    let store = site(&m, &o, "store", 56);
    assert_eq!((store.executions, store.lanes_max), (1, 16));
    assert_eq!(wavefronts(&m, &o, "store", 56), (1, 1, 1));
    // d[t % 16] by all 8 warps: each phase reads words 0..31 once.
    let load = site(&m, &o, "load", 58);
    assert_eq!((load.executions, load.lanes_max), (8, 32));
    assert_eq!(wavefronts(&m, &o, "load", 58), (2, 2, 16));
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (17, 0));
    // `t < 16` splits warp 0 only; warps 1-7 all go around the store.
    let b = site(&m, &o, "branch", 55);
    assert_eq!((b.executions, b.divergent), (8, 1));
    assert_eq!((b.warps, b.divergent_warps), (Some(8), Some(1)));
    let by_warp: Vec<(u64, u64)> = b
        .by_warp
        .unwrap()
        .iter()
        .map(|w| (w.executed, w.diverged))
        .collect();
    assert_eq!(by_warp, [vec![(1, 1)], vec![(1, 0); 7]].concat());
    let out = doubles_of(&o, "out");
    assert!(out.iter().enumerate().all(|(t, &v)| v == (t % 16) as f64));
}

#[test]
fn values_at_the_most_lanes_leave_out_smaller_warps() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "uneven_warps",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("out", 256, Init::Zero)],
    );
    // Warp 0 stores s[t] with 32 lanes, conflict-free; warp 1 stores
    // s[32 l] with its 8 lanes t = 32..39: words 0, 32, ..., 224, all in
    // bank 0, 8-way.
    let store = site(&m, &o, "store", 68);
    assert_eq!((store.executions, store.lanes_max), (2, 32));
    assert_eq!(degree(&m, &o, "store", 68), (1, 8));
    let at_max = store.conflict_at_max.unwrap();
    assert_eq!((at_max.min, at_max.max), (1, 1));
    assert_eq!(wavefronts(&m, &o, "store", 68), (1, 8, 2));
    assert!(store.sectors_at_max.is_none() && store.warps.is_none());
    // s[t] by both full warps.
    assert_eq!(wavefronts(&m, &o, "load", 70), (1, 1, 2));
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (1 + 8 + 2, 7));
    assert_eq!(o.warps[1].counters.conflicts, 7);
    // `t < 40`: warp 0 all in, warp 1 split.
    let b = site(&m, &o, "branch", 67);
    assert_eq!(
        (b.warps, b.divergent_warps, b.lanes_max),
        (Some(2), Some(1), 32)
    );
    let by_warp: Vec<(u64, u64)> = b
        .by_warp
        .unwrap()
        .iter()
        .map(|w| (w.executed, w.diverged))
        .collect();
    assert_eq!(by_warp, vec![(1, 0), (1, 1)]);
}
