//! Struct copies, fills and staging, lowered as the NVPTX backend does
//! (`memory::lower`): a copy is as many loads and stores as its pieces,
//! each piece as wide as both pointers' alignment allows (at most 8
//! bytes), each a request of its own with the struct's stride between
//! lanes. Every figure below is counted by hand from the fixture
//! (`cu/struct_copies.cu`, blocks of 256 threads, `cudaMalloc` bases
//! 256-byte aligned); `ptx_crosscheck.rs` holds the pieces against
//! `llc`'s PTX of the same file, and the simulator must count the same
//! requests.

#[path = "common/sim.rs"]
mod helpers;

use helpers::common::*;
use serde_json::Value;
use warpcheck::sim::{report, Init};

const FIXTURE: &str = "cu/struct_copies.cu";

/// `(kind, space, bytes, sectors or wavefronts max, ideal)` of the sites
/// of a line, sorted, with each piece's offset.
fn pieces(r: &Value, kernel_name: &str, line: u64) -> Vec<(String, String, u64, u64, u64)> {
    let mut v: Vec<_> = kernel(r, kernel_name)["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["line"] == line && s["kind"] != "branch")
        .map(|s| {
            let (most, ideal) = match s["space"].as_str().unwrap() {
                "global" => (&s["sectors"]["max"], &s["sectors"]["ideal"]),
                _ => (
                    &s["conflict"]["wavefronts"]["max"],
                    &s["conflict"]["ideal_wavefronts"],
                ),
            };
            (
                s["kind"].as_str().unwrap().to_string(),
                s["space"].as_str().unwrap().to_string(),
                s["bytes"].as_u64().unwrap(),
                most.as_u64().unwrap(),
                ideal.as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `n` pieces of each of a load and a store.
fn both(n: usize, bytes: u64, most: u64, ideal: u64) -> Vec<(String, String, u64, u64, u64)> {
    let one = |k: &str| (k.to_string(), "global".to_string(), bytes, most, ideal);
    let mut v = vec![one("load"); n];
    v.extend(vec![one("store"); n]);
    v
}

#[test]
fn each_piece_is_a_request_with_the_structs_stride() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    // 12 bytes at align 4: 3 × 4-byte pieces. Lane t's piece f is at
    // 12t + 4f: 32 lanes span 12·31 + 4 = 376 bytes from a sector start
    // = 12 sectors; the ideal for 32 × 4 bytes is 4.
    assert_eq!(pieces(&r, "copy12", 13), both(3, 4, 12, 4));
    // 16 bytes at align 4: 4 × 4 at 16t + 4f: 496 + 4 bytes = 16 sectors.
    assert_eq!(pieces(&r, "copy16", 18), both(4, 4, 16, 4));
    // Aligned to 16: 2 × 8 at 16t + 8f: 16 sectors, ideal 8 (256 bytes).
    assert_eq!(pieces(&r, "copy16_aligned", 23), both(2, 8, 16, 8));
    // Four doubles: 4 × 8 at 32t + 8f: every lane in its own sector, 32;
    // ideal 8.
    assert_eq!(pieces(&r, "copy32", 28), both(4, 8, 32, 8));
    // char[8] (clang copies it as one `i64` at align 1): 8 × 1 byte at
    // 8t + f: 32 lanes over 249 bytes = 8 sectors; ideal 1 (32 bytes).
    assert_eq!(pieces(&r, "copy_chars", 33), both(8, 1, 8, 1));
    // 64 bytes at align 4: 16 × 4 at 64t + 4f: 32 sectors, ideal 4.
    assert_eq!(pieces(&r, "copy64", 38), both(16, 4, 32, 4));
    // Zeroing 16 bytes at align 4 (a memset): 4 stores of 4, 16 sectors.
    let store = |bytes, most, ideal| {
        (
            "store".to_string(),
            "global".to_string(),
            bytes,
            most,
            ideal,
        )
    };
    assert_eq!(pieces(&r, "zero16", 43), vec![store(4, 16, 4); 4]);
    // memset of 32 bytes at align 1: 32 one-byte stores at 32t + k, every
    // lane in its own sector: 32; ideal 1.
    assert_eq!(pieces(&r, "fill_rows", 48), vec![store(1, 32, 1); 32]);
}

#[test]
fn a_struct_staged_through_shared_memory_conflicts_per_piece() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    // s[t] = in[...]: 4 global loads of 16 sectors (ideal 4) and 4 shared
    // stores at byte 16t + 4f, word 4t + f: lanes t, t + 8, t + 16 and
    // t + 24 share bank (4t + f) mod 32, each its own word: 4 wavefronts
    // per request, ideal 1.
    let mut want = vec![("load".to_string(), "global".to_string(), 4, 16, 4); 4];
    want.extend(vec![
        ("store".to_string(), "shared".to_string(), 4, 4, 1);
        4
    ]);
    assert_eq!(pieces(&r, "staged", 54), want);
    // out[...] = s[255 - t]: word 4(255 - t) + f, the same four lanes per
    // bank: 4 wavefronts; the global stores 16 sectors.
    let mut want = vec![("load".to_string(), "shared".to_string(), 4, 4, 1); 4];
    want.extend(vec![
        ("store".to_string(), "global".to_string(), 4, 16, 4);
        4
    ]);
    assert_eq!(pieces(&r, "staged", 56), want);
}

#[test]
fn a_struct_copy_is_one_finding_naming_its_pieces() {
    let r = check_json(FIXTURE, &["--block-dim", "256"]);
    let at = |line: u64| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["line"] == line && f["check"] == "uncoalesced-access")
            .map(|f| f["message"].as_str().unwrap().to_string())
            .collect()
    };
    let copy16 = at(18);
    assert_eq!(copy16.len(), 1, "{copy16:?}");
    assert!(
        copy16[0].starts_with(
            "struct copy of 16 bytes as 4 × 4-byte accesses: 16 sectors per request, ideal 4"
        ),
        "{}",
        copy16[0]
    );
    assert!(at(43)[0].starts_with("struct fill of 16 bytes as 4 × 4-byte accesses"));
    let hint = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["line"] == 18)
        .map(|f| f["notes"].to_string())
        .unwrap();
    assert!(
        hint.contains("copy as float4 or align the struct to 16"),
        "{hint}"
    );
    // The impact is every piece's: 4 loads and 4 stores of 12 excess
    // sectors each alone; but the four loads (and the four stores) of
    // one warp fetch their sectors together, a union of 16 sectors for
    // 512 bytes: no excess DRAM traffic. Each piece's request spans 4
    // lines of 128 bytes where its own 128 bytes need 1: 3 extra.
    assert!(
        copy16[0].contains(
            "with the other 3 pieces of the copy it uses every byte it fetches: 3 extra requests, no extra DRAM traffic"
        ),
        "{}",
        copy16[0]
    );
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["line"] == 18)
        .unwrap();
    assert_eq!(f["impact"]["inputs"]["pieces"], 8.0);
    assert_eq!(f["impact"]["inputs"]["excess_sectors"], 0.0);
    assert_eq!(f["impact"]["inputs"]["extra_requests"], 8.0 * 3.0);
}

/// Simulates `kernel` on one block of `threads` with zeroed buffers of
/// `bytes` for its pointer parameters `names`; the report's global sites
/// (a line's pieces are one site of it).
fn simulate(
    kernel: &str,
    threads: u32,
    names: &[&str],
    bytes: u64,
) -> (warpcheck::sim::Outcome, Vec<report::SiteJson>) {
    let m = helpers::compile("tests/fixtures/cu/struct_copies.cu");
    let mut args: Vec<_> = names
        .iter()
        .map(|n| helpers::buf(n, bytes, Init::Zero))
        .collect();
    if kernel == "fill_rows" {
        args.push(helpers::int("v", 7));
    }
    let o = helpers::run(
        &m,
        kernel,
        &helpers::launch([1, 1, 1], [threads, 1, 1]),
        &args,
    );
    let sites = report::sites(&m, &o)
        .into_iter()
        .filter(|s| s.space == Some("global"))
        .collect();
    (o, sites)
}

#[test]
fn the_simulator_counts_the_same_requests() {
    // Two warps (64 threads) each run every piece once.
    let cases: [(&str, &[&str], u64, u64, u64); 8] = [
        // (kernel, pointers, requests, sectors per request, bytes)
        ("copy12", &["out", "in"], 2 * 6, 12, 64 * 12),
        ("copy16", &["out", "in"], 2 * 8, 16, 64 * 16),
        ("copy16_aligned", &["out", "in"], 2 * 4, 16, 64 * 16),
        ("copy32", &["out", "in"], 2 * 8, 32, 64 * 32),
        ("copy_chars", &["out", "in"], 2 * 16, 8, 64 * 8),
        ("copy64", &["out", "in"], 2 * 32, 32, 64 * 64),
        ("zero16", &["out"], 2 * 4, 16, 64 * 16),
        ("fill_rows", &["out"], 2 * 32, 32, 64 * 32),
    ];
    for (kernel, names, requests, per, bytes) in cases {
        let (o, sites) = simulate(kernel, 64, names, bytes);
        assert_eq!(
            (o.totals.requests, o.totals.sectors),
            (requests, requests * per),
            "{kernel}"
        );
        // Every piece's request took the static figure.
        for s in sites {
            let sec = s.sectors.unwrap();
            assert_eq!((sec.min, sec.max), (per, per), "{kernel} {s:?}");
        }
    }
    // staged, 256 threads (8 warps): 8 global requests of 16 sectors per
    // warp; 8 shared requests of 4 wavefronts (3 over the ideal) each.
    let (o, _) = simulate("staged", 256, &["out", "in"], 256 * 16);
    assert_eq!((o.totals.requests, o.totals.sectors), (64, 64 * 16));
    assert_eq!((o.totals.wavefronts, o.totals.conflicts), (64 * 4, 64 * 3));
}
