//! Sites placed case by case (`src/acf/cases.rs`): a select on a uniform
//! condition and a clamp to a uniform bound. Each figure is derived in
//! `tests/fixtures/cu/acf_cases.cu`, next to its kernel; the simulator
//! checks the same kernels in `acf_oracle.rs`.

mod common;
use common::*;
use serde_json::Value;

/// The figure (`conflict` or `sectors`) of the load on `line` of `kernel`.
fn load<'a>(r: &'a Value, kernel_name: &str, line: u64) -> &'a Value {
    let found = sites(r, kernel_name, "load", line);
    let s = found
        .first()
        .unwrap_or_else(|| panic!("no load on line {line} of {kernel_name}"));
    if s["space"] == "shared" {
        &s["conflict"]
    } else {
        &s["sectors"]
    }
}

/// `(kernel, line, class, min, max)`: wavefronts of a shared load or
/// sectors of a global one, per warp.
const LOADS: &[(&str, u64, &str, u64, u64)] = &[
    ("pick_array", 16, "none", 1, 1),
    ("pick_stride", 27, "unknown", 1, 2),
    ("pick_global", 35, "coalesced", 4, 4),
    ("clamp_shared", 46, "none", 1, 1),
    ("clamp_global", 54, "coalesced", 1, 4),
    ("clamp_strided", 65, "unknown", 1, 2),
    ("clamp_rows", 77, "none", 1, 1),
    // The least is loose (see the fixture): 1 where 4 is right.
    ("boundary_west", 91, "coalesced", 1, 5),
    ("boundary_east", 101, "coalesced", 4, 5),
];

#[test]
fn uniform_choices_and_clamps_are_placed_case_by_case() {
    let r = check_json("cu/acf_cases.cu", &[]);
    for &(k, line, class, min, max) in LOADS {
        let x = load(&r, k, line);
        assert_eq!(x["class"], class, "{k}:{line}: {x}");
        assert_eq!(
            (x["min"].as_u64(), x["max"].as_u64()),
            (Some(min), Some(max)),
            "{k}:{line}: {x}"
        );
    }
}

#[test]
fn a_clamped_stencil_row_is_conflict_free_in_two_dimensions() {
    // 16 × 16 threads: a warp is two rows of 16, whose words are 16 apart.
    let r = check_json("cu/acf_cases.cu", &["--block-dim", "16,16"]);
    let x = load(&r, "clamp_rows", 77);
    assert_eq!(x["class"], "none", "{x}");
    assert_eq!(x["max"], 1, "{x}");
}
