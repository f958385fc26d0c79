//! A tiled transpose through shared memory, with barriers: the output must
//! be the transpose, and the costs follow from the tile layout.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use warpcheck::sim::{ArgValue, BufferSpec, Elem, Init, Outcome};

const FIXTURE: &str = "tests/fixtures/cu/sim_transpose.cu";
const W: usize = 96;
const H: usize = 64;

fn transpose(kernel: &str) -> (warpcheck::ir::Module, Outcome) {
    let m = compile(FIXTURE);
    // 96 x 64 floats: a 3 x 2 grid of 32 x 32 tiles, 32 x 8 threads each.
    let input = (
        "in".to_string(),
        ArgValue::Buffer(BufferSpec {
            bytes: (W * H * 4) as u64,
            init: Init::Random,
            elem: Some(Elem::F32),
        }),
    );
    let o = run(
        &m,
        kernel,
        &launch([3, 2, 1], [32, 8, 1]),
        &[
            buf("out", (W * H * 4) as u64, Init::Zero),
            input,
            int("width", W as i128),
            int("height", H as i128),
        ],
    );
    (m, o)
}

fn assert_transposed(o: &Outcome) {
    let (input, out) = (floats(o, "in"), floats(o, "out"));
    for r in 0..H {
        for c in 0..W {
            assert_eq!(out[c * H + r], input[r * W + c], "element ({r}, {c})");
        }
    }
}

#[test]
fn padded_tile_transposes_without_conflicts() {
    let (m, o) = transpose("transpose_padded");
    assert_transposed(&o);
    // 6 blocks x 8 warps, each moving 4 rows of 32 floats each way.
    let warps = 6 * 8;
    for (kind, line, space) in [("load", 12, "global"), ("store", 12, "shared")] {
        let s = site(&m, &o, kind, line);
        assert_eq!(
            (s.executions, s.space),
            (warps * 4, Some(space)),
            "{kind} {line}"
        );
    }
    // Reading a tile column: word 33 x + y is in bank (x + y) mod 32,
    // different for each of the 32 lanes.
    let read = site(&m, &o, "load", 18);
    assert_eq!(read.conflict.unwrap().max, 1);
    assert_eq!(o.totals.conflicts, 0);
    // Rows of 96 (in) and 64 (out) floats start at multiples of 128 bytes:
    // every global access is 4 sectors.
    for (kind, line) in [("load", 12), ("store", 18)] {
        let s = site(&m, &o, kind, line).sectors.unwrap();
        assert_eq!((s.min, s.max), (4, 4), "{kind} {line}");
    }
    assert_eq!(o.totals.divwarps, 0);
}

#[test]
fn unpadded_tile_reads_are_32_way_conflicts() {
    let (m, o) = transpose("transpose_unpadded");
    assert_transposed(&o);
    // Word 32 x + y: every lane of a warp in bank y.
    let read = site(&m, &o, "load", 34).conflict.unwrap();
    assert_eq!((read.min, read.max), (32, 32));
    // 192 such reads, 31 extra wavefronts each; the row-wise writes are free.
    assert_eq!(o.totals.conflicts, 192 * 31);
    assert_eq!(site(&m, &o, "store", 28).conflict.unwrap().max, 1);
}
