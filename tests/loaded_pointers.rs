//! Accesses through pointers loaded from memory (issue 23): the host
//! fills kernel arguments and `__constant__` memory and has only global
//! addresses, so such pointers are counted as global, marked
//! `space_assumed`, unless the kernel may store a shared (or local)
//! address where it loads them from. `--summary` counts both kinds.

mod common;

use common::*;

const FIXTURE: &str = "space/loaded_pointers.cu";

/// `(line, kind, space, space_assumed)` of a kernel's thread-dependent
/// memory sites.
fn dependent(r: &serde_json::Value, name: &str) -> Vec<(u64, String, String, bool)> {
    kernel(r, name)["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] != "branch" && s["thread_dependent"] == true)
        .map(|s| {
            (
                s["line"].as_u64().unwrap(),
                s["kind"].as_str().unwrap().to_string(),
                s["space"].as_str().unwrap().to_string(),
                s["space_assumed"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

fn site(line: u64, kind: &str, space: &str, assumed: bool) -> (u64, String, String, bool) {
    (line, kind.to_string(), space.to_string(), assumed)
}

#[test]
fn pointers_from_arguments_and_constant_memory_are_global_by_assumption() {
    let r = check_json(FIXTURE, &["--block-dim", "64"]);
    // `a.out[t] = a.in[2 * t]`: both pointers come from the by-value
    // struct argument (the loads of the pointers themselves are uniform).
    assert_eq!(
        dependent(&r, "from_argument"),
        vec![
            site(14, "load", "global", true),
            site(14, "store", "global", true)
        ]
    );
    // The same from a __constant__ struct.
    assert_eq!(
        dependent(&r, "from_constant"),
        vec![
            site(20, "load", "global", true),
            site(20, "store", "global", true)
        ]
    );
    // `rows[blockIdx.x][t]`: the row pointer is read from global memory
    // that a kernel parameter points to; `out` is a parameter itself.
    assert_eq!(
        dependent(&r, "from_rows"),
        vec![
            site(26, "load", "global", true),
            site(26, "store", "global", false)
        ]
    );
    // `slots[b] = tile` stores a shared address, so the pointer read back
    // may be shared: no assumption, the space stays unknown.
    let shared = dependent(&r, "stores_shared");
    assert!(
        shared.contains(&site(37, "load", "unknown", false)),
        "{shared:?}"
    );
    assert!(shared.iter().all(|s| !s.3), "{shared:?}");
}

#[test]
fn summary_counts_assumed_and_unknown_spaces() {
    let out = run(warpcheck()
        .args(["check", "--summary", "--block-dim", "64"])
        .arg(fixture(FIXTURE)));
    let text = stdout(&out);
    // 2 + 2 + 1 assumed global (the tests above); 1 of unknown space.
    assert!(
        text.contains("address space: 5 thread-dependent accesses through pointers loaded"),
        "{text}"
    );
    assert!(text.contains(", 1 of unknown space"), "{text}");
    let r = check_json(FIXTURE, &["--summary", "--block-dim", "64"]);
    let total = &r["summary"]["total"];
    assert_eq!(
        (
            total["assumed_global"].as_u64(),
            total["unknown_space"].as_u64()
        ),
        (Some(5), Some(1)),
        "{total:#}"
    );
}

#[test]
fn undefined_sides_and_shared_constant_addresses_keep_the_assumption() {
    let r = check_json("ir/loaded_phi.ll", &["--block-dim", "64"]);
    // The store goes through `phi(p2, phi(undef, p1))`, both loaded from
    // `slots[blockIdx.x]` in `__constant__` memory: no access goes
    // through `undef`, and the second load's constant address is the
    // first's (met twice, which is no cycle), so the pointer is global
    // by the assumption.
    let sites = dependent(&r, "chosen");
    assert_eq!(sites, vec![site(0, "store", "global", true)], "{sites:?}");
}
