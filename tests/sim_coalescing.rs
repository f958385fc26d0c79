//! Global-memory sectors under simulation, against counts derived by hand
//! (a sector is 32 bytes; a warp's request touches the sectors its active
//! lanes' bytes fall in).

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::ir::Module;
use warpcheck::sim::{Init, Outcome};

const FIXTURE: &str = "tests/fixtures/cu/sim_coalescing.cu";

/// `vector_add` over 4 blocks of 256 threads, on buffers of 1024 floats.
fn vector_add(m: &Module, n: i128) -> Outcome {
    run(
        m,
        "vector_add",
        &launch([4, 1, 1], [256, 1, 1]),
        &[
            buf("a", 4096, Init::Iota),
            buf("b", 4096, Init::Iota),
            buf("c", 4096, Init::Zero),
            int("n", n),
        ],
    )
}

#[test]
fn vector_add_reads_four_sectors_per_warp_access() {
    let m = compile(FIXTURE);
    // n = 1024 threads in 4 blocks of 256: 32 full warps.
    let o = vector_add(&m, 1024);
    // Each access is 32 lanes x 4 consecutive bytes = 128 bytes starting at
    // a multiple of 128: exactly 4 sectors.
    for (kind, col_count) in [("load", 2), ("store", 1)] {
        let found = sites(&m, &o, kind, 4);
        assert_eq!(found.len(), col_count, "{kind}: {found:#?}");
        for s in found {
            assert_eq!(s.executions, 32);
            let sec = s.sectors.unwrap();
            assert_eq!((sec.min, sec.max, sec.total), (4, 4, 128));
            assert_eq!(s.ideal_sectors, Some(128));
            assert_eq!(s.space, Some("global"));
        }
    }
    // i < n holds for every lane: no warp splits.
    let branch = site(&m, &o, "branch", 4);
    assert_eq!(
        (branch.executions, branch.divergent, branch.nonuniform),
        (32, 0, 0)
    );
    assert_eq!(o.totals.divwarps, 0);
    // 3 requests per warp, 4 sectors each.
    assert_eq!((o.totals.requests, o.totals.sectors), (96, 384));
    assert_eq!(o.warps.len(), 32);
    assert!(o.warps.iter().all(|w| w.counters.sectors == 12));
    // c[i] = a[i] + b[i] = 2i.
    let c = floats(&o, "c");
    assert!(c.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32));
}

#[test]
fn a_partial_last_warp_diverges_once() {
    let m = compile(FIXTURE);
    // n = 1000: the last warp (i = 992..1023) has lanes 0-7 in range.
    let o = vector_add(&m, 1000);
    assert_eq!(o.totals.divwarps, 1);
    let split: Vec<_> = o
        .warps
        .iter()
        .filter(|w| w.counters.divwarps == 1)
        .collect();
    assert_eq!(split.len(), 1);
    assert_eq!((split[0].block, split[0].warp), ([3, 0, 0], 7));
    // 8 lanes x 4 bytes from byte 3968 (= 124 x 32): one sector.
    let store = site(&m, &o, "store", 4);
    let sec = store.sectors.unwrap();
    assert_eq!((sec.min, sec.max, sec.total), (1, 4, 31 * 4 + 1));
    // At the most active lanes (32, the 31 full warps) it is always 4.
    let at_max = store.sectors_at_max.unwrap();
    assert_eq!((store.lanes_max, at_max.min, at_max.max), (32, 4, 4));
    assert!(store.conflict_at_max.is_none() && store.wavefronts.is_none());
    // Each of the 8 warps of a block runs `i < n` in all 4 blocks; only
    // warp 7 of block 3 splits.
    let branch = site(&m, &o, "branch", 4);
    assert_eq!((branch.warps, branch.divergent_warps), (Some(32), Some(1)));
    let by_warp: Vec<(u64, u64)> = branch
        .by_warp
        .unwrap()
        .iter()
        .map(|w| (w.executed, w.diverged))
        .collect();
    assert_eq!(by_warp, [vec![(4, 0); 7], vec![(4, 1)]].concat());
    let c = floats(&o, "c");
    assert_eq!(c[999], 1998.0);
    assert_eq!(c[1000], 0.0);
}

#[test]
fn stride_two_doubles_the_sectors() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "stride2",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("in", 256, Init::Iota), buf("out", 128, Init::Zero)],
    );
    // in[2i]: lane t reads bytes 8t..8t+4, spanning 256 bytes = 8 sectors;
    // the 128 bytes actually used would fit in 4.
    let load = site(&m, &o, "load", 9);
    let sec = load.sectors.unwrap();
    assert_eq!((sec.min, sec.max, load.ideal_sectors), (8, 8, Some(4)));
    assert_eq!(site(&m, &o, "store", 9).sectors.unwrap().max, 4);
    assert_eq!(floats(&o, "out")[5], 10.0);
}

#[test]
fn array_of_structs_field_touches_24_sectors() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "aos_field",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("p", 32 * 24, Init::Zero), buf("out", 128, Init::Zero)],
    );
    // p[t].x is at byte 24t; floor(24t / 32) = floor(3t / 4) takes every
    // value 0..23 for t = 0..31: 24 sectors for 128 useful bytes (ideal 4).
    let load = site(&m, &o, "load", 21);
    let sec = load.sectors.unwrap();
    assert_eq!((sec.min, sec.max, load.ideal_sectors), (24, 24, Some(4)));
}

#[test]
fn a_broadcast_is_one_sector_and_uniform() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "broadcast",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("in", 16, Init::Iota), buf("out", 256, Init::Zero)],
    );
    let load = site(&m, &o, "load", 26);
    assert_eq!(load.sectors.unwrap().max, 1);
    assert_eq!((load.executions, load.nonuniform), (2, 0));
    assert!(floats(&o, "out").iter().all(|&v| v == 3.0));
}

#[test]
fn float4_copies_move_16_sectors_per_warp() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "vec4_copy",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("in", 512, Init::Iota), buf("out", 512, Init::Zero)],
    );
    // 32 lanes x 16 bytes = 512 contiguous bytes = 16 sectors, each way.
    for kind in ["load", "store"] {
        let s = site(&m, &o, kind, 32);
        assert_eq!(s.sectors.unwrap().max, 16, "{kind}");
    }
    assert_eq!(floats(&o, "out"), floats(&o, "in"));
}
