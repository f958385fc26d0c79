//! The reduction family of the CUDA samples, written with cooperative
//! groups (`tests/fixtures/cu/cg_reduce.cu`), under both routes: warpcheck's
//! own `<cooperative_groups.h>` and CUDA 12.4's (whose groups read lane
//! registers and the reserved shared memory through inline asm). Each
//! kernel simulates to the sums of its input, and the static sites agree
//! between the routes. The toolkit half is skipped, saying why, where no
//! toolkit can be had.

#[path = "common/sim.rs"]
mod helpers;

use helpers::common;
use helpers::*;
use std::path::PathBuf;
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::Module;
use warpcheck::sim::Init;

const FIXTURE: &str = "tests/fixtures/cu/cg_reduce.cu";
const BLOCK: u32 = 256;

/// A kernel, the elements each block sums in one chunk (a block takes
/// chunks `b`, `b + grid`, ...), the grid and the element count.
struct Case {
    symbol: &'static str,
    chunk: usize,
    grid: u32,
    n: usize,
}

const CASES: &[Case] = &[
    // One element per thread: 1000 elements in 4 blocks of 256.
    Case {
        symbol: "_Z7reduce0PKiPij",
        chunk: 256,
        grid: 4,
        n: 1000,
    },
    Case {
        symbol: "_Z7reduce1PKiPij",
        chunk: 256,
        grid: 4,
        n: 1000,
    },
    Case {
        symbol: "_Z7reduce2PKiPij",
        chunk: 256,
        grid: 4,
        n: 1000,
    },
    // Two per thread: 512 per block, 1000 in 2 blocks.
    Case {
        symbol: "_Z7reduce3PKiPij",
        chunk: 512,
        grid: 2,
        n: 1000,
    },
    Case {
        symbol: "_Z7reduce4PKiPij",
        chunk: 512,
        grid: 2,
        n: 1000,
    },
    Case {
        symbol: "_Z7reduce5ILj256EEvPKiPij",
        chunk: 512,
        grid: 2,
        n: 1000,
    },
    // Many per thread: 512-element chunks dealt round the 2 blocks, the
    // last one partial (3000 = 5 * 512 + 440), or none (2048 = 4 * 512).
    Case {
        symbol: "_Z7reduce6ILj256ELb0EEvPKiPij",
        chunk: 512,
        grid: 2,
        n: 3000,
    },
    Case {
        symbol: "_Z7reduce6ILj256ELb1EEvPKiPij",
        chunk: 512,
        grid: 2,
        n: 2048,
    },
];

/// Values in -100..=100, spread by a multiplicative hash.
fn input(n: usize) -> Vec<i32> {
    (0..n as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 16) as i32 % 201 - 100)
        .collect()
}

/// What block `b` must write: the sum of its chunks.
fn expected(c: &Case, values: &[i32]) -> Vec<i32> {
    let mut sums = vec![0; c.grid as usize];
    for (i, v) in values.iter().enumerate() {
        sums[(i / c.chunk) % c.grid as usize] += v;
    }
    sums
}

fn compile(cuda: Option<PathBuf>) -> Module {
    let opts = CompileOptions {
        full_debug: true,
        no_toolkit: cuda.is_none(),
        cuda_path: cuda,
        ..CompileOptions::default()
    };
    frontend::load(&fixture(FIXTURE), &opts).unwrap_or_else(|e| panic!("{e}"))
}

fn toolkit() -> Option<PathBuf> {
    common::cuda_toolkit_or_skip("the toolkit half")
}

fn sums_match(m: &Module, route: &str) {
    for c in CASES {
        let values = input(c.n);
        let o = run(
            m,
            c.symbol,
            &launch([c.grid, 1, 1], [BLOCK, 1, 1]),
            &[
                data("in", i32_bytes(&values)),
                buf("out", 4 * u64::from(c.grid), Init::Zero),
                int("n", c.n as i128),
            ],
        );
        let want = expected(c, &values);
        assert_eq!(ints(&o, "out"), want, "{} ({route})", c.symbol);
        // And the blocks together: the whole input.
        let total: i32 = values.iter().sum();
        assert_eq!(want.iter().sum::<i32>(), total);
    }
}

#[test]
fn reductions_sum_without_a_toolkit() {
    let m = compile(None);
    // Our headers use intrinsics only.
    assert!(m.asms.is_empty());
    sums_match(&m, "own headers");
}

#[test]
fn reductions_sum_with_cuda_12_4() {
    let Some(root) = toolkit() else { return };
    let m = compile(Some(root));
    // CUDA's thread_block keeps the reserved shared-memory window, read
    // by inline asm.
    let texts: Vec<&str> = m.asms.iter().map(|a| a.text.as_str()).collect();
    assert!(
        texts.iter().any(|t| t.contains("%reserved_smem_offset_1")),
        "{texts:?}"
    );
    let o = run(
        &m,
        CASES[4].symbol,
        &launch([2, 1, 1], [BLOCK, 1, 1]),
        &[
            data("in", i32_bytes(&input(1000))),
            buf("out", 8, Init::Zero),
            int("n", 1000),
        ],
    );
    // The asm ran: every warp of both blocks read the window once.
    let window = texts
        .iter()
        .position(|t| t.contains("%reserved_smem_offset_1"))
        .unwrap();
    assert_eq!(o.asm_runs[window], 2 * 8);
    sums_match(&m, "CUDA 12.4");
}

/// Per kernel, `(kind, line, thread_dependent, divergence, sectors,
/// conflict)` of every site, in order.
fn static_sites(route: &[&str]) -> Vec<(String, Vec<String>)> {
    let out = common::run(
        common::warpcheck()
            .args(["check", "--format", "json", "--sites", "--block-dim", "256"])
            .args(route)
            .arg(fixture(FIXTURE)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let class = |s: &serde_json::Value, k: &str| s[k]["class"].as_str().unwrap_or("-").to_string();
    r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            let sites = k["sites"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    format!(
                        "{} line {} dependent {} divergence {} sectors {} conflict {}",
                        s["kind"].as_str().unwrap(),
                        s["line"],
                        s["thread_dependent"],
                        class(s, "divergence"),
                        class(s, "sectors"),
                        class(s, "conflict")
                    )
                })
                .collect();
            (k["mangled"].as_str().unwrap().to_string(), sites)
        })
        .collect()
}

/// The site descriptions of `symbol` on `line`.
fn on_line<'a>(sites: &'a [(String, Vec<String>)], symbol: &str, line: u32) -> Vec<&'a str> {
    let (_, list) = sites.iter().find(|(k, _)| k == symbol).unwrap();
    let at = format!(" line {line} ");
    list.iter()
        .filter(|s| s.contains(&at))
        .map(String::as_str)
        .collect()
}

/// The fixture's first line at or after `after` that contains `text`.
fn line_of(text: &str, after: u32) -> u32 {
    let src = std::fs::read_to_string(fixture(FIXTURE)).unwrap();
    let i = src
        .lines()
        .enumerate()
        .skip(after as usize)
        .find(|(_, l)| l.contains(text))
        .unwrap_or_else(|| panic!("no `{text}`"))
        .0;
    i as u32 + 1
}

#[test]
fn both_routes_give_the_same_sites() {
    let own = static_sites(&["--no-cuda"]);
    assert_eq!(own.len(), CASES.len());
    // Some figures by hand, so the comparison is of something. reduce0:
    // `sdata[tid] = i < n ? in[i] : 0` loads 4-byte ints at consecutive
    // lanes (coalesced) behind a bounds check; the final `tid == 0` splits
    // warp 0 alone of the 8 (partial).
    let r0 = line_of("__global__ void reduce0", 0);
    let at = line_of("sdata[tid] = i < n", 0);
    let load = on_line(&own, CASES[0].symbol, at);
    let coalesced =
        format!("load line {at} dependent true divergence - sectors coalesced conflict -");
    assert!(load.contains(&coalesced.as_str()), "{load:?}");
    assert!(
        load.iter()
            .any(|s| s.starts_with("branch") && s.contains("divergence bounded")),
        "{load:?}"
    );
    let at = line_of("if (tid == 0)", r0);
    let last = on_line(&own, CASES[0].symbol, at);
    let partial =
        format!("branch line {at} dependent true divergence partial sectors - conflict -");
    assert_eq!(last, [partial.as_str()]);
    // reduce2: sdata[tid] = sum + sdata[tid + s] reads and writes
    // consecutive words: no bank conflict.
    let add = on_line(&own, CASES[2].symbol, line_of("sum + sdata[tid + s]", 0));
    assert!(
        add.iter()
            .filter(|s| s.starts_with("load"))
            .all(|s| s.ends_with("conflict none")),
        "{add:?}"
    );
    let Some(root) = toolkit() else { return };
    let root = root.display().to_string();
    let cuda = static_sites(&["--cuda-path", &root]);
    assert_eq!(own, cuda);
}
