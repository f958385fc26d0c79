//! Parametric classes: a global access whose step between lanes is a
//! kernel parameter `n` (`a[r * n + k]`, `r` from threadIdx.x) gets the
//! class that holds for every `n` from some value on, with that value, and
//! `--param` / `Params:` pin `n`. Every figure below is counted by hand
//! (a sector is 32 bytes; 32 lanes per warp, all active, blocks of 256).

#[path = "common/sim.rs"]
mod helpers;

use helpers::common::{check_json, fixture, ok_json, run, sites, stderr, stdout, warpcheck};
use helpers::{compile, int, launch};
use serde_json::Value;
use warpcheck::sim::{ArgValue, BufferSpec, Init};

const FIXTURE: &str = "cu/acf_param.cu";
const ROWS_LOAD: u64 = 7;
const DOUBLE_LOAD: u64 = 13;

/// The `sectors` figure of the one load of `kernel` on `line`.
fn load(report: &Value, kernel: &str, line: u64) -> Value {
    let found = sites(report, kernel, "load", line);
    assert!(!found.is_empty(), "no load on line {line} of {kernel}");
    // Copies of one source access must agree.
    for s in &found {
        assert_eq!(s["sectors"], found[0]["sectors"], "{kernel}:{line}");
    }
    found[0]["sectors"].clone()
}

#[test]
fn a_float_stride_of_n_is_uncoalesced_from_n_2_and_32_sectors_from_n_8() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    let s = load(&r, "rows", ROWS_LOAD);
    // 32 lanes x 4 bytes, none overlapping for n >= 1: ideal 128 bytes = 4
    // sectors. The base is a (256-aligned) + 4k: 4-aligned, any residue
    // 0, 4, ..., 28 in a sector.
    // n = 1: 128 contiguous bytes, 4 or 5 sectors: coalesced.
    // n = 2: lanes 8 bytes apart span 31*8 + 4 = 252 bytes, 8 or 9 sectors,
    //        over 4 + 1: uncoalesced. So the class holds from n = 2.
    // n = 3: 376 bytes, 12 or 13 sectors; n = 7: 28 bytes apart, two
    //        lanes can share a sector, fewer than 32.
    // n >= 8: 32 or more bytes apart, a 4-aligned float never straddles a
    //        sector: each lane its own, 32.
    assert_eq!(s["class"], "uncoalesced", "{s:#}");
    let c = &s["condition"];
    assert_eq!(c["param"], "n");
    assert_eq!(c["from"], 2);
    assert_eq!(c["steady_from"], 8);
    assert_eq!(
        (c["steady_min"].as_u64(), c["steady_max"].as_u64()),
        (Some(32), Some(32))
    );
    assert_eq!(c["stride"], 4, "4 bytes per unit of n");
    assert_eq!(s["ideal"], 4);
    // Over every n >= 2: the fewest at n = 2 from a sector boundary (8),
    // the most 32.
    assert_eq!(
        (s["full_min"].as_u64(), s["full_max"].as_u64()),
        (Some(8), Some(32))
    );
    assert_eq!((s["min"].as_u64(), s["max"].as_u64()), (Some(8), Some(32)));
}

#[test]
fn a_double_stride_of_n_from_an_aligned_base() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    let s = load(&r, "rows_double", DOUBLE_LOAD);
    // 32 lanes x 8 bytes: ideal 256 bytes = 8 sectors; the base is a
    // cudaMalloc pointer, 0 mod 32.
    // n = 1: 256 aligned bytes, 8 sectors: coalesced.
    // n = 2: 16 bytes apart, [0, 504): 16 sectors: uncoalesced.
    // n = 3: 24 bytes apart, [0, 752): every sector of the span, 24.
    // n >= 4: 32 or more apart, 8-aligned doubles: 32.
    assert_eq!(s["class"], "uncoalesced", "{s:#}");
    let c = &s["condition"];
    assert_eq!(
        (c["from"].as_i64(), c["steady_from"].as_i64()),
        (Some(2), Some(4))
    );
    assert_eq!(
        (c["steady_min"].as_u64(), c["steady_max"].as_u64()),
        (Some(32), Some(32))
    );
    assert_eq!(c["stride"], 8);
    assert_eq!(s["ideal"], 8);
    assert_eq!(
        (s["full_min"].as_u64(), s["full_max"].as_u64()),
        (Some(16), Some(32))
    );
}

#[test]
fn the_warning_says_for_which_values() {
    let out = run(warpcheck()
        .args(["check", "--block-dim", "256"])
        .arg(fixture(FIXTURE)));
    let text = stdout(&out);
    assert!(
        text.contains(
            "uncoalesced load access for n ≥ 2: sectors per request up to 32 (ideal 4, 28 excess); \
             32 for n ≥ 8; neighbouring lanes are 4·n bytes apart along threadIdx.x"
        ),
        "{text}"
    );
    assert!(
        text.contains("32 for n ≥ 4; neighbouring lanes are 8·n bytes apart"),
        "{text}"
    );
}

#[test]
fn a_pinned_parameter_decides_the_figure() {
    // n = 1: contiguous, 4..5 (floats from a 4-aligned base), exactly 8
    // (doubles from an aligned base): coalesced, no condition.
    let r = check_json(FIXTURE, &["--block-dim", "256", "--param", "n=1"]);
    let s = load(&r, "rows", ROWS_LOAD);
    assert_eq!(s["class"], "coalesced", "{s:#}");
    assert!(s.get("condition").is_none());
    assert_eq!(
        (s["full_min"].as_u64(), s["full_max"].as_u64()),
        (Some(4), Some(5))
    );
    let s = load(&r, "rows_double", DOUBLE_LOAD);
    assert_eq!(
        (s["class"].as_str(), s["full_max"].as_u64()),
        (Some("coalesced"), Some(8))
    );
    // n = 3: [r, r + 376) for r in 0, 4, ..., 28: 12 (r = 0) to 13 (r = 28);
    // doubles [0, 752): 24.
    let r = check_json(FIXTURE, &["--block-dim", "256", "--param", "n=3"]);
    let s = load(&r, "rows", ROWS_LOAD);
    assert_eq!(s["class"], "uncoalesced");
    assert!(s.get("condition").is_none());
    assert_eq!(
        (s["full_min"].as_u64(), s["full_max"].as_u64()),
        (Some(12), Some(13))
    );
    assert_eq!(s["stride"], 12, "a constant step once n is known");
    let s = load(&r, "rows_double", DOUBLE_LOAD);
    assert_eq!(
        (s["full_min"].as_u64(), s["full_max"].as_u64()),
        (Some(24), Some(24))
    );
}

#[test]
fn params_in_the_configuration_pin_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("w.yaml");
    std::fs::write(&cfg, "Params: {n: 3}\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let r = check_json(FIXTURE, &["--block-dim", "256", "--config-file", cfg]);
    let s = load(&r, "rows_double", DOUBLE_LOAD);
    assert_eq!(s["full_max"], 24, "n = 3 from Params");
    let r = check_json(
        FIXTURE,
        &["--block-dim", "256", "--config-file", cfg, "--param", "n=1"],
    );
    let s = load(&r, "rows_double", DOUBLE_LOAD);
    assert_eq!(s["full_max"], 8, "n = 1 from --param");
}

#[test]
fn a_bad_param_is_a_usage_error() {
    for bad in ["n=1.5", "n", "n=x", "=3"] {
        let out = run(warpcheck()
            .args(["check", "--param", bad])
            .arg(fixture(FIXTURE)));
        assert_eq!(out.status.code(), Some(2), "--param {bad}");
        assert!(stderr(&out).contains("--param"), "{}", stderr(&out));
    }
    // A name no kernel has pins nothing and is no error.
    let r = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites", "--param", "m=3"])
        .arg(fixture(FIXTURE))));
    assert_eq!(load(&r, "rows", ROWS_LOAD)["condition"]["from"], 2);
}

/// The simulated sectors of the doubles' load at `n` (one block of 256).
fn simulated(n: i128) -> (u64, u64) {
    let m = compile(&format!("tests/fixtures/{FIXTURE}"));
    let buf = |name: &str| {
        (
            name.to_string(),
            ArgValue::Buffer(BufferSpec {
                bytes: 8 * 256 * 64,
                init: Init::Iota,
                elem: None,
            }),
        )
    };
    let o = helpers::run(
        &m,
        "rows_double",
        &launch([1, 1, 1], [256, 1, 1]),
        &[buf("a"), buf("out"), int("n", n)],
    );
    let s = helpers::site(&m, &o, "load", DOUBLE_LOAD as u32);
    let sec = s.sectors.unwrap();
    (sec.min, sec.max)
}

#[test]
fn the_simulator_agrees_at_every_value() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    let s = load(&r, "rows_double", DOUBLE_LOAD);
    let (lo, hi) = (s["min"].as_u64().unwrap(), s["max"].as_u64().unwrap());
    // By hand: 8, 16, 24, then 32 from n = 4.
    let expected = [
        (1, 8),
        (2, 16),
        (3, 24),
        (4, 32),
        (5, 32),
        (8, 32),
        (33, 32),
        (63, 32),
    ];
    for (n, sectors) in expected {
        assert_eq!(simulated(n), (sectors, sectors), "n = {n}");
        let pinned = check_json(
            FIXTURE,
            &["--block-dim", "256", "--param", &format!("n={n}")],
        );
        let p = load(&pinned, "rows_double", DOUBLE_LOAD);
        assert_eq!(
            (p["min"].as_u64(), p["max"].as_u64()),
            (Some(sectors), Some(sectors)),
            "n = {n}"
        );
        if n >= 2 {
            assert!(
                lo <= sectors && sectors <= hi,
                "n = {n}: {sectors} outside {lo}..{hi}"
            );
        }
    }
}
