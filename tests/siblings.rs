//! Sibling accesses (`checks::siblings`): fields of one struct read by the
//! same warp in the same iteration are charged their union of DRAM sectors
//! and their extra L1 requests; accesses of different iterations or of
//! different sides of a split branch are not paired; the float2 hint's
//! promise holds on the kernel it rewrites (`tests/fixtures/cu/siblings.cu`,
//! block of 256 threads: 8 warps, every base a `cudaMalloc` pointer).

mod common;

use common::{check_json, sites};
use serde_json::Value;

/// The findings of `kernel` of `check` on `line`.
fn findings<'a>(r: &'a Value, kernel: &str, check: &str, line: u64) -> Vec<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["kernel"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{kernel}("))
                && f["check"] == check
                && f["line"] == line
        })
        .collect()
}

/// The one uncoalesced-access finding of `kernel` on `line`.
fn uncoalesced<'a>(r: &'a Value, kernel: &str, line: u64) -> &'a Value {
    let fs = findings(r, kernel, "uncoalesced-access", line);
    assert_eq!(fs.len(), 1, "{kernel}:{line}: {fs:#?}");
    fs[0]
}

fn report() -> Value {
    check_json(
        "cu/siblings.cu",
        &["--block-dim", "256", "--min-impact", "0"],
    )
}

/// Rodinia nn's pair, `p->lat` and `p->lng` with lanes 8 bytes apart.
/// Each load alone: 32 lanes span 256 bytes, 8 sectors, for 128 bytes
/// (ideal 4). Together they cover every byte of the 256: a union of 8
/// sectors, the ideal of their 256 bytes, so no DRAM traffic is wasted.
/// Each request spans 2 lines of 128 bytes where its own 128 bytes need
/// 1: one extra L1 request per load, and the estimate is those requests
/// only (2 for the pair, at the machine's cycles per request, by every
/// warp and resident block, once).
#[test]
fn the_pair_costs_one_request_per_load_and_no_dram_traffic() {
    let r = report();
    for load in sites(&r, "euclid", "load", 11) {
        let sec = &load["sectors"];
        assert_eq!((&sec["full_max"], &sec["ideal"]), (&8.into(), &4.into()));
        let sib = &sec["siblings"];
        assert_eq!(sib["accesses"], 2, "{sib:#}");
        assert_eq!((&sib["union"], &sib["ideal"]), (&8.into(), &8.into()));
        assert_eq!(sib["extra_requests"], 1);
    }
    let f = uncoalesced(&r, "euclid", 11);
    let message = f["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "uncoalesced load access: sectors per request 8 (ideal 4); with the load at column 57 of this line it uses every byte it fetches: one extra request, no extra DRAM traffic"
        ),
        "{message}"
    );
    let i = &f["impact"]["inputs"];
    assert_eq!(i["excess_sectors"], 0.0, "{i:#}");
    assert_eq!(i["extra_requests"], 2.0, "{i:#}");
    let n = |k: &str| i[k].as_f64().unwrap();
    let expected = 2.0 * n("request_cycles") * n("warps") * n("executions") * n("resident_blocks");
    assert_eq!(f["impact"]["cycles"].as_f64().unwrap(), expected.round());
}

/// The fix for the pair is one 8-byte load per lane: the hint says so, and
/// the vector load it promises is re-evaluated at the same lanes: 32 lanes
/// × 8 bytes, contiguous from an aligned base, 8 sectors, its ideal.
#[test]
fn the_pair_is_read_as_one_float2() {
    let r = report();
    let f = uncoalesced(&r, "euclid", 11);
    let notes = f["notes"].to_string();
    assert!(
        notes.contains("hint: read the pair as one float2 (the struct __align__(8), or through a const float2 *): one 8-byte request per lane"),
        "{notes}"
    );
    assert!(!notes.contains("structure of arrays"), "{notes}");
    let promise = &f["data"]["siblings"]["vector"];
    assert_eq!(promise["type"], "float2");
    assert_eq!(
        (&promise["bytes"], &promise["sectors"]),
        (&8.into(), &8.into())
    );
}

/// The hint applied to copies of the kernel: the struct `__align__(8)`
/// (its two loads become one 8-byte load, as the backend merges them) and
/// the array read through `const float2 *`. Each is one 8-byte load of
/// the promised 8 sectors per request, ideal 8: coalesced, no finding.
#[test]
fn the_float2_promise_holds_on_the_rewritten_kernels() {
    let r = report();
    for (kernel, line) in [("euclid_aligned", 19), ("euclid_float2", 24)] {
        let loads = sites(&r, kernel, "load", line);
        assert_eq!(loads.len(), 1, "{kernel}: {loads:#?}");
        let sec = &loads[0]["sectors"];
        assert_eq!(loads[0]["bytes"], 8, "{kernel}");
        assert_eq!((&sec["full_max"], &sec["ideal"]), (&8.into(), &8.into()));
        assert_eq!(sec["class"], "coalesced", "{kernel}");
        assert!(
            findings(&r, kernel, "uncoalesced-access", line).is_empty(),
            "{kernel}"
        );
    }
}

/// Every field of a 12-byte struct: each load alone spans 384 bytes, 12
/// sectors (a field starts every 12 bytes, so every sector of the 384
/// bytes holds one) for 128 bytes (ideal 4); the three together are 384
/// bytes in 12 sectors, their ideal: no DRAM traffic wasted. Each request
/// spans 3 lines where its bytes need 1: 2 extra requests per load.
#[test]
fn three_fields_read_together_waste_requests_not_dram_traffic() {
    let r = report();
    let loads = sites(&r, "norm3", "load", 31);
    assert_eq!(loads.len(), 3, "{loads:#?}");
    for load in loads {
        let sec = &load["sectors"];
        assert_eq!((&sec["full_max"], &sec["ideal"]), (&12.into(), &4.into()));
        let sib = &sec["siblings"];
        assert_eq!(sib["accesses"], 3);
        assert_eq!((&sib["union"], &sib["ideal"]), (&12.into(), &12.into()));
        assert_eq!(sib["extra_requests"], 2);
        // No vector type reads 12 bytes: no vector hint.
        assert!(sib.get("vector").is_none(), "{sib:#}");
    }
    let f = uncoalesced(&r, "norm3", 31);
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("with the loads at columns 35 and 53 of this line it uses every byte it fetches: 2 extra requests, no extra DRAM traffic"));
    let i = &f["impact"]["inputs"];
    assert_eq!(
        (&i["excess_sectors"], &i["extra_requests"]),
        (&0.0.into(), &6.0.into())
    );
}

/// `lat` is read before the loop and `lng` in it (the store may alias it,
/// so the load stays there, in every unrolled copy): different
/// iterations, no pair. Each is charged alone: 8 sectors, ideal 4, 4
/// excess.
#[test]
fn fields_of_different_iterations_are_not_paired() {
    let r = report();
    for line in [38, 40] {
        let loads = sites(&r, "across_iterations", "load", line);
        assert!(!loads.is_empty(), "line {line}");
        for load in loads {
            let sec = &load["sectors"];
            assert!(sec.get("siblings").is_none(), "line {line}: {sec:#}");
            assert_eq!((&sec["full_max"], &sec["ideal"]), (&8.into(), &4.into()));
        }
    }
}

/// `lat` on one side of a branch that splits every warp (odd lanes),
/// `lng` on the other: never in one request's time, no pair.
#[test]
fn fields_on_two_sides_of_a_branch_are_not_paired() {
    let r = report();
    for line in [49, 51] {
        let loads = sites(&r, "on_two_sides", "load", line);
        assert_eq!(loads.len(), 1, "line {line}");
        let sec = &loads[0]["sectors"];
        assert!(sec.get("siblings").is_none(), "line {line}: {sec:#}");
    }
}

/// lavaMD's accumulation: `f[i].v`, `.x`, `.y`, `.z` (doubles, lanes 32
/// bytes apart) kept in registers over the loop, loaded before it (all
/// four at one place) and stored after it. Each alone: 32 lanes span 1024
/// bytes, every lane's 8 bytes in a sector of its own, 32 sectors for 256
/// bytes (ideal 8). Together: the 1024 bytes, 32 sectors, their ideal.
/// Each request spans 8 lines where its 256 bytes need 2: 6 extra.
#[test]
fn fields_kept_in_registers_over_a_loop_are_siblings() {
    let r = report();
    let kernel = &common::kernel(&r, "accumulate")["sites"];
    let global: Vec<&Value> = kernel
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["space"] == "global" && s["bytes"] == 8 && s["sectors"]["ideal"] == 8)
        .collect();
    // Four loads and four stores of the struct.
    assert_eq!(global.len(), 8, "{global:#?}");
    for s in global {
        let sec = &s["sectors"];
        assert_eq!((&sec["full_max"], &sec["ideal"]), (&32.into(), &8.into()));
        let sib = &sec["siblings"];
        assert_eq!(sib["accesses"], 4, "{s:#}");
        assert_eq!((&sib["union"], &sib["ideal"]), (&32.into(), &32.into()));
        assert_eq!(sib["extra_requests"], 6);
    }
}
