//! The ACF checks on fixtures whose figures are derived by hand in the
//! fixtures' comments: divergence classes (`acf_branches.cu`), sectors per
//! request (`acf_global.cu`, `acf_tile.cu`) and bank conflicts
//! (`acf_shared.cu`, `acf_tile.cu`). One row per site.

mod common;
use common::*;
use serde_json::Value;

/// The one site of `kind` on `line` of `kernel` (the first if clang made
/// several, e.g. a rotated loop's guard and latch: then `pick` chooses).
fn site<'a>(r: &'a Value, kernel_name: &str, kind: &str, line: u64, pick: usize) -> &'a Value {
    let found = sites(r, kernel_name, kind, line);
    assert!(
        found.len() > pick,
        "no {kind} #{pick} on line {line} of {kernel_name}: {found:#?}"
    );
    found[pick]
}

/// `(kernel, line, which, class, min, max)`: fractions of the 8 warps.
const BRANCHES: &[(&str, u64, usize, &str, f64, f64)] = &[
    ("odd", 7, 0, "total", 1.0, 1.0),
    ("first_warp", 14, 0, "none", 0.0, 0.0),
    ("half_warp", 21, 0, "partial", 0.125, 0.125),
    ("warp_test", 28, 0, "none", 0.0, 0.0),
    ("bounds", 36, 0, "bounded", 0.0, 0.125),
    ("data", 43, 0, "unknown", 0.0, 1.0),
    ("lane_zero", 50, 0, "total", 1.0, 1.0),
    ("block_stride", 57, 0, "none", 0.0, 0.0),
    // The uniform side (last block?) can send the whole warp past: warp 0
    // may split (1 of 8), never must; no other warp can: bounded.
    ("last_block_first_thread", 77, 0, "bounded", 0.0, 0.125),
];

#[test]
fn divergence_classes() {
    let r = check_json("cu/acf_branches.cu", &[]);
    for &(k, line, pick, class, min, max) in BRANCHES {
        let d = &site(&r, k, "branch", line, pick)["divergence"];
        assert_eq!(d["class"], class, "{k}:{line}: {d}");
        assert_eq!(
            (d["min"].as_f64(), d["max"].as_f64()),
            (Some(min), Some(max)),
            "{k}:{line}: {d}"
        );
        assert_eq!(d["warps"], 8);
    }
}

#[test]
fn per_lane_trip_counts_split_every_warp() {
    let r = check_json("cu/acf_branches.cu", &[]);
    // clang rotates the loop: a guard `t == 0` (lane 0 of warp 0 skips the
    // loop: partial, 1/8) and a latch `i + 1 == t`; every warp's lanes have
    // different trip counts, so the latch splits all 8: total.
    let branches = sites(&r, "tid_trips", "branch", 67);
    let classes: Vec<&str> = branches
        .iter()
        .map(|s| s["divergence"]["class"].as_str().unwrap())
        .collect();
    assert!(
        classes.contains(&"partial") && classes.contains(&"total"),
        "{classes:?}"
    );
}

/// `(kernel, kind, line, bytes, class, sectors, ideal)` with all 32 lanes
/// active; `sectors` is then both the minimum and the maximum.
const GLOBAL: &[(&str, &str, u64, u64, &str, u64, u64)] = &[
    ("unit", "load", 8, 4, "coalesced", 4, 4),
    ("stride2", "load", 14, 4, "uncoalesced", 8, 4),
    ("stride3", "load", 20, 4, "uncoalesced", 12, 4),
    ("stride32", "load", 26, 4, "uncoalesced", 32, 4),
    ("shifted", "load", 33, 4, "coalesced", 5, 4),
    ("halved", "load", 39, 4, "coalesced", 2, 2),
    ("aos", "load", 47, 4, "uncoalesced", 24, 4),
    ("doubles", "load", 53, 8, "coalesced", 8, 8),
    ("chars", "load", 59, 1, "coalesced", 1, 1),
    // `out[i] = in[i]` of float4s is a 16-byte struct copy: llc moves it
    // in two 8-byte pieces (ld.global.u64, checked against its PTX), each
    // with 16 bytes between lanes: 512 bytes spanned, 16 sectors for 8.
    ("vec4", "load", 66, 8, "uncoalesced", 16, 8),
];

#[test]
fn sectors_per_request() {
    let r = check_json("cu/acf_global.cu", &[]);
    for &(k, kind, line, bytes, class, sectors, ideal) in GLOBAL {
        let s = site(&r, k, kind, line, 0);
        assert_eq!(s["bytes"], bytes, "{k}:{line}");
        let sec = &s["sectors"];
        assert_eq!(sec["class"], class, "{k}:{line}: {sec}");
        assert_eq!(sec["min"], sectors, "{k}:{line}: {sec}");
        assert_eq!(sec["max"], sectors, "{k}:{line}: {sec}");
        assert_eq!(sec["ideal"], ideal, "{k}:{line}: {sec}");
    }
    // The struct field is called out, with its stride along threadIdx.x.
    let aos = &site(&r, "aos", "load", 47, 0)["sectors"];
    assert_eq!(aos["type_inconsistent"], true);
    assert_eq!(
        (aos["stride"].as_i64(), aos["dim"].as_str()),
        (Some(24), Some("x"))
    );
    let stride2 = &site(&r, "stride2", "load", 14, 0)["sectors"];
    assert_eq!(stride2["stride"], 8);
    assert_eq!(stride2["type_inconsistent"], false);
}

#[test]
fn two_dimensional_blocks() {
    let r = check_json("cu/acf_tile.cu", &["--block-dim", "32,8"]);
    // Each warp is one row of 32 floats. `width` is unknown, so the row may
    // start anywhere 4-aligned: 4 or 5 sectors, coalesced either way.
    let rows = &site(&r, "rows", "load", 9, 0)["sectors"];
    assert_eq!(rows["class"], "coalesced", "{rows}");
    assert_eq!(
        (rows["min"].as_u64(), rows["max"].as_u64()),
        (Some(4), Some(5))
    );
    // The naive transpose stores `height` floats apart (4·height bytes)
    // from a 4-aligned base: 4 or 5 sectors for height = 1 (coalesced),
    // 8 or 9 for 2 (over the ideal 4 + 1), one sector per lane (32) once
    // lanes are 32 bytes apart, height >= 8: uncoalesced for height >= 2.
    let t = &site(&r, "transpose_naive", "store", 17, 0)["sectors"];
    assert_eq!(t["class"], "uncoalesced", "{t}");
    assert_eq!(t["condition"]["param"], "height");
    assert_eq!(
        (
            t["condition"]["from"].as_i64(),
            t["condition"]["steady_from"].as_i64()
        ),
        (Some(2), Some(8))
    );
    assert_eq!((t["min"].as_u64(), t["max"].as_u64()), (Some(8), Some(32)));

    let r = check_json("cu/acf_tile.cu", &["--block-dim", "32,32"]);
    let cols = &site(&r, "tile_columns", "load", 27, 0)["conflict"];
    assert_eq!(cols["class"], "conflict", "{cols}");
    assert_eq!(
        (cols["min"].as_u64(), cols["max"].as_u64()),
        (Some(32), Some(32))
    );
    assert_eq!(cols["wavefronts"]["max"], 32);
    let padded = &site(&r, "tile_padded", "load", 37, 0)["conflict"];
    assert_eq!(padded["class"], "none", "{padded}");
    assert_eq!(padded["max"], 1);
}

/// `(kernel, kind, line, class, degree)`.
const SHARED: &[(&str, &str, u64, &str, u64)] = &[
    ("unit", "store", 9, "none", 1),
    ("unit", "load", 11, "none", 1),
    ("stride2", "store", 18, "conflict", 2),
    ("stride4", "store", 27, "conflict", 4),
    ("stride32", "store", 36, "conflict", 32),
    ("stride33", "store", 45, "none", 1),
    ("halved", "load", 56, "none", 1),
    ("one_lane", "load", 68, "none", 1),
    ("bytes_as_words", "store", 80, "none", 1),
];

#[test]
fn bank_conflict_degrees() {
    let r = check_json("cu/acf_shared.cu", &[]);
    for &(k, kind, line, class, degree) in SHARED {
        let s = site(&r, k, kind, line, 0);
        assert_eq!(s["space"], "shared", "{k}:{line}");
        let c = &s["conflict"];
        assert_eq!(c["class"], class, "{k}:{line}: {c}");
        assert_eq!(
            (c["min"].as_u64(), c["max"].as_u64()),
            (Some(degree), Some(degree)),
            "{k}:{line}: {c}"
        );
        assert_eq!(c["wavefronts"]["max"], degree, "{k}:{line}: {c}");
        assert_eq!(c["ideal_wavefronts"], 1);
    }
}

#[test]
fn whole_warps_decide_a_conflict_that_a_partial_warp_escapes() {
    // `partial_last_warp`: 2-way in warps 0-2, 1 in the four-lane warp 3.
    let r = check_json("cu/acf_shared.cu", &[]);
    let c = &site(&r, "partial_last_warp", "store", 103, 0)["conflict"];
    assert_eq!(c["class"], "conflict", "{c}");
    assert_eq!(
        (c["min"].as_u64(), c["max"].as_u64()),
        (Some(1), Some(2)),
        "{c}"
    );
}

#[test]
fn warnings_carry_the_numbers() {
    let out = run(warpcheck()
        .args(["check", "--block-dim", "32,32"])
        .arg(fixture("cu/acf_tile.cu")));
    let text = stdout(&out);
    assert!(text.contains("32-way bank conflict"), "{text}");
    assert!(text.contains("[32][33]"), "the padding hint: {text}");
    let out = run(warpcheck().arg("check").arg(fixture("cu/acf_global.cu")));
    let text = stdout(&out);
    assert!(
        text.contains("sectors per request 24 (ideal 4, 20 excess)"),
        "{text}"
    );
    assert!(text.contains("structure of arrays"), "{text}");
    // `--min-impact 0`: these kernels' splits are cheap next to their
    // loads (notes by default); the message is what is checked here.
    let out = run(warpcheck()
        .args(["check", "--min-impact", "0"])
        .arg(fixture("cu/acf_branches.cu")));
    let text = stdout(&out);
    assert!(text.contains("diverges in 1 of 8 warps"), "{text}");
    // Bounds checks and warp-uniform tests are not warnings.
    assert!(!text.contains("acf_branches.cu:36"), "{text}");
    assert!(!text.contains("acf_branches.cu:28"), "{text}");
}

#[test]
fn device_functions_in_the_context_of_each_call() {
    let r = check_json("cu/acf_calls.cu", &[]);
    // lane_of(threadIdx.x) returns threadIdx.x % 32: lane 0 of each warp.
    let d = &site(&r, "returned", "branch", 9, 0)["divergence"];
    assert_eq!(d["class"], "total", "{d}");
    // first_half(a, threadIdx.x): t < 16 splits warp 0 of 8; the store
    // runs in warp 0 only, 16 lanes x 4 bytes = 2 sectors.
    let d = &site(&r, "guarded", "branch", 15, 0)["divergence"];
    assert_eq!(
        (d["class"].as_str(), d["min"].as_f64()),
        (Some("partial"), Some(0.125))
    );
    let s = &site(&r, "guarded", "store", 16, 0)["sectors"];
    assert_eq!(
        (s["min"].as_u64(), s["max"].as_u64()),
        (Some(2), Some(2)),
        "{s}"
    );
    // put(a, t, 1) and put(a, t, 32): one site, two contexts, 4 and 32
    // sectors: the union, and no definite class.
    let s = site(&r, "two_contexts", "store", 22, 0);
    assert_eq!(
        (s["sectors"]["min"].as_u64(), s["sectors"]["max"].as_u64()),
        (Some(4), Some(32))
    );
    assert_eq!(s["sectors"]["class"], "unknown");
    assert_eq!(s["acf"], "[a] + 4·tid.x | [a] + 128·tid.x");
}

#[test]
fn warp_uniform_values_are_marked() {
    let r = check_json("cu/acf_branches.cu", &[]);
    // t / 32 == k: thread-dependent, but one value per warp.
    let s = site(&r, "warp_test", "branch", 28, 0);
    assert_eq!(
        (s["thread_dependent"].as_bool(), s["warp_uniform"].as_bool()),
        (Some(true), Some(true))
    );
    // t % 2 differs within every warp.
    let s = site(&r, "odd", "branch", 7, 0);
    assert_eq!(s["warp_uniform"], false);
}

#[test]
fn phis_are_selects_on_the_deciding_branches() {
    let r = check_json("ir/gated_phis.ll", &["--block-dim", "256"]);
    // `either`: lanes 0..4 and 21..31 of warp 0 reach `T` (x = 1), lanes
    // 5..20 do not (x = 32). The store to `c` writes bytes 4·tid (tid
    // 0..4: sector 0; tid 21..31: bytes 84..127, sectors 2 and 3) and
    // 128·tid (tid 5..20: 16 sectors of their own): 19 sectors. `T` is
    // entered from both tests, so `x` is no select on `tid < 5`: that
    // reading gave 28 (x = 32 for every lane from 5 on), which no warp
    // makes.
    let c: Vec<&Value> = sites(&r, "either", "store", 0)
        .into_iter()
        .filter(|s| s["acf"].as_str().unwrap().contains("[c]"))
        .map(|s| &s["sectors"])
        .collect();
    assert_eq!(c.len(), 1, "{c:?}");
    let (lo, hi) = (c[0]["min"].as_u64().unwrap(), c[0]["max"].as_u64().unwrap());
    assert!(lo <= 19 && 19 <= hi, "{}", c[0]);
    // `computed_flag`: in pass `i` the flag is `tid > i && !(tid > 254 − i)`,
    // a phi of three edges (true from the store, false from either test).
    // Each threshold moves with `i`, alike in every warp, so in one pass
    // `tid > i` splits at most the warp holding lane i + 1 and the other
    // test the warp holding 255 − i: the flag's branch splits at most 2 of
    // the 8 warps, each test at most 1.
    let flag: Vec<&Value> = sites(&r, "computed_flag", "branch", 0)
        .into_iter()
        .filter(|s| s["thread_dependent"] == true)
        .collect();
    let by_acf = |f: &dyn Fn(&str) -> bool| -> Vec<&Value> {
        flag.iter()
            .filter(|s| f(s["acf"].as_str().unwrap()))
            .map(|s| &s["divergence"])
            .collect()
    };
    let merged = by_acf(&|a| a.contains('?'));
    assert_eq!(merged.len(), 1, "{flag:?}");
    assert_eq!(merged[0]["class"], "bounded", "{}", merged[0]);
    assert_eq!(merged[0]["split_max"], 2, "{}", merged[0]);
    let tests = by_acf(&|a| !a.contains('?'));
    assert_eq!(tests.len(), 2, "{flag:?}");
    for d in tests {
        assert_eq!(d["class"], "bounded", "{d}");
        assert_eq!(d["split_max"], 1, "{d}");
    }
}

#[test]
fn an_access_no_lane_runs_makes_no_request() {
    // `never_run`: `if (t >= blockDim.x) s[2 * t] = 1` at 32 threads: no
    // lane passes, so the store makes no request (0 wavefronts) and has no
    // conflict, though its stride would be 2-way if it ran.
    let r = check_json("cu/acf_shared.cu", &[]);
    let c = &site(&r, "never_run", "store", 91, 0)["conflict"];
    assert_eq!(c["class"], "none", "{c}");
    assert_eq!(c["wavefronts"]["max"], 0, "{c}");
}
