//! Inline PTX through the simulator and the static checks, with every
//! expected value worked out by hand from the PTX ISA
//! (`tests/fixtures/cu/asm_ops.cu`).

#[path = "common/sim.rs"]
mod helpers;

use helpers::common;
use helpers::*;
use warpcheck::sim::{ErrorKind, Init};

const FIXTURE: &str = "tests/fixtures/cu/asm_ops.cu";

/// The fixture's line that contains `text`.
fn line_of(text: &str) -> u32 {
    let src = std::fs::read_to_string(fixture(FIXTURE)).unwrap();
    let i = src
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no `{text}` in the fixture"));
    i as u32 + 1
}

fn words(o: &warpcheck::sim::Outcome, name: &str) -> Vec<u32> {
    ints(o, name).into_iter().map(|v| v as u32).collect()
}

#[test]
fn lane_registers_per_lane() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "lane_masks",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("out", 64 * 24, Init::Zero)],
    );
    let out = words(&o, "out");
    for t in 0..64usize {
        let l = (t % 32) as u32;
        // Lane l: bit l alone (eq); the bits below it (lt = 2^l - 1); with
        // it (le); from it up (ge = ~lt); above it (gt = ~le).
        let lt = (1u32 << l) - 1;
        let le = lt | 1 << l;
        assert_eq!(
            out[6 * t..6 * t + 6],
            [l, lt, le, 1 << l, !lt, !le],
            "thread {t}"
        );
    }
}

#[test]
fn byte_permutes_and_bit_fields() {
    let m = compile(FIXTURE);
    let input: Vec<i32> = [0x4433_2211u32, 0x8877_6655, 0x0000_ab00, 0x7fff_ffff]
        .iter()
        .map(|&w| w as i32)
        .collect();
    let o = run(
        &m,
        "bit_fields",
        &launch([1, 1, 1], [2, 1, 1]),
        &[data("in", i32_bytes(&input)), buf("out", 32, Init::Zero)],
    );
    let out = words(&o, "out");
    // Thread 0, a = 0x44332211, b = 0x88776655: the bytes of {b, a} are,
    // from 0 up, 11 22 33 44 55 66 77 88. Selector 0x0123 takes bytes 3,
    // 2, 1, 0 into result bytes 0..3: 0x11223344. 0x7654 takes 4, 5, 6,
    // 7: 0x88776655 again. bfe.u32 a, 8, 12: bits 8..19 of a = 0x322.
    // bfe.s32 b, 28, 4: the top nibble 8 = 0b1000, sign-extended: -8.
    assert_eq!(out[..4], [0x1122_3344, 0x8877_6655, 0x322, (-8i32) as u32]);
    // Thread 1, a = 0x0000ab00, b = 0x7fffffff: bytes 00 ab 00 00 ff ff
    // ff 7f. 0x0123 gives 00 00 ab 00 from byte 0 up: 0x00ab0000; 0x7654
    // gives b; bits 8..19 of a are 0x0ab; b's top nibble 0111 is 7.
    assert_eq!(out[4..], [0x00ab_0000, 0x7fff_ffff, 0xab, 7]);
}

#[test]
fn cvta_shared_round_trips() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "shared_round_trip",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("out", 64 * 12, Init::Zero)],
    );
    let out = words(&o, "out");
    for t in 0..64u32 {
        let w = |k| out[3 * t as usize + k];
        // st.shared through the offset wrote 3t + 1, which the generic
        // pointer cvta.shared made of the offset reads back; that pointer
        // made an offset again is the same offset.
        assert_eq!((w(0), w(1)), (3 * t + 1, 1), "thread {t}");
        // ld.shared [offset + 4] reads the next word, 3(t + 1) + 1; the
        // last thread reads its own (its address is 4 lower).
        let next = if t < 63 { 3 * (t + 1) + 1 } else { 3 * t + 1 };
        assert_eq!(w(2), next, "thread {t}");
    }
    // The asm store and load are shared-memory sites of their own, each
    // lane on its own bank: one wavefront per warp access.
    for text in ["st.shared.u32", "ld.shared.u32"] {
        let s = site(
            &m,
            &o,
            if text.starts_with("st") {
                "store"
            } else {
                "load"
            },
            line_of(text),
        );
        assert_eq!(s.space, Some("shared"), "{text}");
        assert_eq!(s.conflict.as_ref().map(|c| (c.min, c.max)), Some((1, 1)));
    }
}

#[test]
fn read_only_loads_cost_sectors_like_any_load() {
    let m = compile(FIXTURE);
    let line = line_of("ld.global.nc.f32");
    let input: Vec<f32> = (0..128).map(|i| i as f32).collect();
    for (stride, sectors) in [(1, 4), (2, 8)] {
        let o = run(
            &m,
            "ldg_stride",
            &launch([1, 1, 1], [32, 1, 1]),
            &[
                data("in", f32_bytes(&input)),
                buf("out", 128, Init::Zero),
                int("stride", stride),
            ],
        );
        // 32 lanes x 4 bytes, `stride` floats apart: 128 or 256 bytes from
        // a 256-aligned buffer, 4 or 8 sectors of 32 bytes.
        let s = site(&m, &o, "load", line);
        let got = s.sectors.as_ref().map(|r| (r.min, r.max));
        assert_eq!(got, Some((sectors, sectors)), "stride {stride}");
        let expected: Vec<f32> = (0..32).map(|l| (l * stride) as f32).collect();
        assert_eq!(floats(&o, "out"), expected);
    }
}

#[test]
fn votes_guards_and_atomics_in_asm() {
    let m = compile(FIXTURE);
    let o = run(
        &m,
        "vote_guard_atomic",
        &launch([1, 1, 1], [64, 1, 1]),
        &[buf("out", 512, Init::Zero), buf("count", 8, Init::Zero)],
    );
    let out = words(&o, "out");
    for t in 0..64u32 {
        // The odd lanes vote yes: 0b1010... = 0xaaaaaaaa in every warp.
        // The guard moves t where t < 4, and leaves 7 elsewhere.
        let picked = if t < 4 { t } else { 7 };
        assert_eq!(
            out[2 * t as usize..2 * t as usize + 2],
            [0xaaaa_aaaa, picked]
        );
    }
    // 64 threads add 1 (atom) and 2 (red).
    assert_eq!(words(&o, "count"), [64, 128]);
    let atomics = sites(&m, &o, "atomic", line_of("atom.global.add.u32"));
    assert_eq!(atomics.len(), 1, "{atomics:#?}");
    // Two warps, one request each.
    assert_eq!(atomics[0].executions, 2);
}

#[test]
fn bar_sync_in_asm_is_the_block_barrier() {
    let m = compile(FIXTURE);
    let input: Vec<i32> = (0..128).collect();
    let o = run(
        &m,
        "asm_barrier",
        &launch([1, 1, 1], [128, 1, 1]),
        &[data("in", i32_bytes(&input)), buf("out", 4, Init::Zero)],
    );
    // 0 + 1 + ... + 127 = 127 * 128 / 2.
    assert_eq!(ints(&o, "out"), [8128]);
}

#[test]
fn unmodelled_ptx_is_named_with_its_line() {
    let m = compile(FIXTURE);
    let e = try_run(
        &m,
        "unmodelled",
        &launch([1, 1, 1], [32, 1, 1]),
        &[buf("out", 128, Init::Zero)],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert!(
        e.message.contains("unsupported PTX instruction `brkpt`"),
        "{e}"
    );
    assert_eq!(e.pos.as_ref().map(|p| p.line), Some(line_of("brkpt")));
}

/// `check --format json` on the fixture with extra flags.
fn check(extra: &[&str]) -> serde_json::Value {
    let out = common::run(
        common::warpcheck()
            .args(["check", "--format", "json", "--sites", "--notes"])
            .args(extra)
            .arg(fixture(FIXTURE)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn check_classifies_a_branch_on_the_asm_lane_id() {
    let r = check(&["--block-dim", "128"]);
    let line = u64::from(line_of("if (sreg_lane() < 16)"));
    let branch = common::sites(&r, "lower_half", "branch", line);
    assert_eq!(branch.len(), 1);
    let b = branch[0];
    assert_eq!(b["thread_dependent"], true);
    // laneid < 16 holds in lanes 0..15 of every warp and fails in 16..31:
    // all 4 warps of 128 threads split.
    assert_eq!(b["divergence"]["class"], "total", "{b:#}");
    assert_eq!(b["divergence"]["split_min"], 4, "{b:#}");
    assert_eq!(b["acf"], "(laneid < 16)");
    let why = b["why"].as_array().unwrap();
    assert!(why[0].as_str().unwrap().contains("lane id"), "{b:#}");
}

#[test]
fn check_counts_asm_loads_and_spaces() {
    let r = check(&["--block-dim", "128"]);
    let k = common::kernel(&r, "ldg_stride");
    let loads: Vec<&serde_json::Value> = k["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "load")
        .collect();
    assert_eq!(loads.len(), 1);
    // An asm load of 4 bytes from global memory, per lane `in + 4·stride·t`:
    // thread-dependent, the stride unknown here.
    assert_eq!(loads[0]["space"], "global");
    assert_eq!(loads[0]["bytes"], 4);
    assert_eq!(loads[0]["thread_dependent"], true);
    let acf = loads[0]["acf"].as_str().unwrap();
    // The factors print in the order the IR multiplies them, which differs
    // between clang 19 and 22.
    assert!(
        (acf.contains("4·tid.x·[stride]") || acf.contains("4·[stride]·tid.x"))
            && acf.contains("[in]"),
        "{acf}"
    );
    // With the stride known: 32 lanes x 4 bytes 4 or 8 bytes apart from a
    // 256-aligned buffer touch 128 or 256 bytes: 4 sectors (coalesced) or
    // 8 (uncoalesced, 4 over the ideal 4).
    for (kernel, sectors, class) in [
        ("ldg_unit", 4, "coalesced"),
        ("ldg_pairs", 8, "uncoalesced"),
    ] {
        let load = common::kernel(&r, kernel)["sites"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["kind"] == "load")
            .unwrap()
            .clone();
        let fig = &load["sectors"];
        assert_eq!(
            (fig["min"].as_u64(), fig["max"].as_u64()),
            (Some(sectors), Some(sectors)),
            "{kernel}: {load:#}"
        );
        assert_eq!(fig["ideal"], 4, "{kernel}");
        assert_eq!(fig["class"], class, "{kernel}");
    }
    // The shared round trip: the asm st.shared and ld.shared are shared
    // sites; the C++ read through the pointer cvta.shared made is shared
    // too.
    for (kind, text) in [
        ("store", "st.shared.u32"),
        ("load", "ld.shared.u32"),
        ("load", "out[3 * t] = *(unsigned *)back"),
    ] {
        let line = u64::from(line_of(text));
        assert_eq!(
            common::spaces(&r, "shared_round_trip", kind, line),
            ["shared"],
            "{text}"
        );
    }
    // The asm atomic and reduction write global memory.
    let line = u64::from(line_of("red.global.add.u32"));
    assert_eq!(
        common::spaces(&r, "vote_guard_atomic", "atomic", line),
        ["global"]
    );
}

#[test]
fn one_note_names_unreadable_asm() {
    let r = check(&[]);
    let notes: Vec<&serde_json::Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "unread-asm")
        .collect();
    // Only `unmodelled` runs asm the reader does not model.
    assert_eq!(notes.len(), 1, "{notes:#?}");
    let n = notes[0];
    assert!(n["kernel"].as_str().unwrap().starts_with("unmodelled("));
    assert_eq!(n["line"], line_of("brkpt"));
    assert!(n["message"].as_str().unwrap().contains("`brkpt`"), "{n:#}");
}
