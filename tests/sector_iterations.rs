//! Sectors per iteration (issue 23): a global access in a loop whose
//! counter the launch fixes gets a row per counter value in the JSON
//! (`sectors.iterations`), like branches and bank conflicts.
//! Fixture: the strided-index reduction done in global memory,
//! `i = 2·s·t; if (i < blockDim.x) row[i] += row[i + s]`, s = 1, 2, 4, ….

mod common;

use common::*;

/// `(s, min, max, ideal, class)`.
type Row = (i64, u64, u64, u64, String);

/// The rows of every global access on line 9.
fn rows(block: &str) -> Vec<Vec<Row>> {
    let r = check_json("cu/sector_ladder.cu", &["--block-dim", block]);
    sites(&r, "global_ladder", "load", 9)
        .into_iter()
        .chain(sites(&r, "global_ladder", "store", 9))
        .map(|s| {
            let it = &s["sectors"]["iterations"];
            assert_eq!(it["counter"], "s", "{it:#}");
            it["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    let n = |k: &str| x[k].as_u64().unwrap();
                    (
                        x["value"].as_i64().unwrap(),
                        n("min"),
                        n("max"),
                        n("ideal"),
                        x["class"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .collect()
}

fn row(s: i64, sectors: u64, ideal: u64, class: &str) -> Row {
    (s, sectors, sectors, ideal, class.to_string())
}

#[test]
fn strided_reduction_in_global_memory_per_iteration() {
    // 256 threads, rows 1024-byte aligned. Iteration s: lanes with
    // 2·s·t < 256 run, 8·s bytes apart (row[i] and row[i + s] alike: the
    // +4·s shift keeps each lane in its sector count). Warp 0:
    //   s = 1: 32 lanes over 256 B = 8 sectors, ideal 128 B = 4;
    //   s = 2: 32 lanes, 512 B = 16 sectors, ideal 4;
    //   s = 4: 32 lanes, 32 B apart = 32 sectors, ideal 4;
    //   s = 8: 16 lanes (t < 16), 64 B apart = 16, ideal 64 B = 2;
    //   s = 16: 8 lanes = 8 sectors, ideal 1; s = 32: 4 lanes = 4, ideal 1;
    //   s = 64: 2 lanes = 2, ideal 1 (coalesced: one over); s = 128: 1.
    let expected = vec![
        row(1, 8, 4, "uncoalesced"),
        row(2, 16, 4, "uncoalesced"),
        row(4, 32, 4, "uncoalesced"),
        row(8, 16, 2, "uncoalesced"),
        row(16, 8, 1, "uncoalesced"),
        row(32, 4, 1, "uncoalesced"),
        row(64, 2, 1, "coalesced"),
        row(128, 1, 1, "coalesced"),
    ];
    let got = rows("256");
    assert_eq!(got.len(), 3, "two loads and a store");
    assert!(got.iter().all(|r| *r == expected), "{got:?}");
}

#[test]
fn fewer_threads_fewer_iterations() {
    // 64 threads: s = 1..32. s = 1: 32 lanes, 8 sectors, ideal 4;
    // s = 2: t < 16, 16 B apart = 8 sectors, ideal 2; s = 4: t < 8,
    // 32 B apart = 8, ideal 1; s = 8: 4 lanes = 4, ideal 1; then 2 and 1.
    let expected = vec![
        row(1, 8, 4, "uncoalesced"),
        row(2, 8, 2, "uncoalesced"),
        row(4, 8, 1, "uncoalesced"),
        row(8, 4, 1, "uncoalesced"),
        row(16, 2, 1, "coalesced"),
        row(32, 1, 1, "coalesced"),
    ];
    let got = rows("64");
    assert!(got.iter().all(|r| *r == expected), "{got:?}");
}
