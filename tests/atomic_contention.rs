//! Atomics to one address serialise: the lanes of a warp that update one
//! shared word take a wavefront each (no broadcast, unlike a load), in
//! the static figures and in the simulator; every atomic request records
//! its contention, the most lanes on one address. Counted by hand.

#[path = "common/sim.rs"]
mod helpers;

use helpers::common::*;
use warpcheck::sim::report;

/// The shared atomic of `kernel` on `line`: `(contention, degree,
/// wavefronts)` maxima and the class.
fn shared_atomic(r: &serde_json::Value, kernel_name: &str, line: u64) -> (u64, u64, u64, String) {
    let s = sites(r, kernel_name, "atomic", line)[0];
    let c = &s["conflict"];
    (
        c["contention"]["max"].as_u64().unwrap(),
        c["max"].as_u64().unwrap(),
        c["wavefronts"]["max"].as_u64().unwrap(),
        c["class"].as_str().unwrap().to_string(),
    )
}

#[test]
fn lanes_on_one_address_serialise_statically() {
    let r = check_json("cu/atomic_contention.cu", &["--block-dim", "256"]);
    // atomicAdd(&total, 1) from all 32 lanes: one word, 32 updates, 32
    // wavefronts (a load of it would be one broadcast).
    assert_eq!(
        shared_atomic(&r, "count", 6),
        (32, 32, 32, "conflict".into())
    );
    // bins[t % 8]: lanes t, t + 8, t + 16, t + 24 on each word, in 8 banks:
    // 4 per bank and per word, 4 wavefronts.
    assert_eq!(
        shared_atomic(&r, "eight_bins", 15),
        (4, 4, 4, "conflict".into())
    );
    let said: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "bank-conflict")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        said.iter()
            .any(|m| m.starts_with("shared atomic: contention: 32 lanes update one address")),
        "{said:?}"
    );
    // The histogram's bins, indexed by data: up to 32 lanes on one bin
    // (was 1 to 8 ways, the array's 256 words over 32 banks, as if the
    // lanes on one word were a broadcast).
    let h = run(warpcheck()
        .args(["check", "--format", "json", "--sites", "--notes"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/histogram.cu")));
    let h = ok_json(&h);
    let (contention, degree, _, class) = shared_atomic(&h, "histogram_shared", 19);
    assert_eq!((contention, degree, class.as_str()), (32, 32, "unknown"));
    let note = h["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["line"] == 19 && f["check"] == "bank-conflict")
        .unwrap();
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .contains("contention: up to 32 lanes update one address"),
        "{note}"
    );
}

#[test]
fn the_histograms_all_equal_input_simulates_32_way() {
    let m = helpers::compile("examples/histogram.cu");
    let run = |data: Vec<u8>| {
        let o = helpers::run(
            &m,
            "histogram_shared",
            &helpers::launch([1, 1, 1], [256, 1, 1]),
            &[
                helpers::data("data", data),
                helpers::buf("bins", 256 * 4, warpcheck::sim::Init::Zero),
                helpers::int("n", 256),
            ],
        );
        report::sites(&m, &o)
            .into_iter()
            .find(|s| s.kind == "atomic" && s.line == 19)
            .unwrap()
    };
    // Every byte 7: each warp's 32 lanes update bin 7 one after another.
    let same = run(vec![7; 256]);
    assert_eq!(same.conflict.map(|c| (c.min, c.max)), Some((32, 32)));
    assert_eq!(same.contention.map(|c| (c.min, c.max)), Some((32, 32)));
    assert_eq!(same.wavefronts.map(|w| w.max), Some(32));
    // Bytes 0..255: every lane its own bin, in its own bank: 1 way.
    let spread = run((0..=255).collect());
    assert_eq!(spread.conflict.map(|c| c.max), Some(1));
    assert_eq!(spread.contention.map(|c| c.max), Some(1));
}

#[test]
fn global_atomics_state_their_contention() {
    // histogram_global's atomicAdd(&bins[data[i]], 1): the bins come from
    // data, so up to all 32 lanes of a request may update one.
    let out = run(warpcheck()
        .args(["check", "--format", "json", "--sites", "--notes"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/histogram.cu")));
    let r = ok_json(&out);
    let s = sites(&r, "histogram_global", "atomic", 7)[0];
    assert_eq!(s["sectors"]["contention"]["max"], 32, "{s}");
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["line"] == 7)
        .unwrap();
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("contention: up to 32 lanes update one address"),
        "{f}"
    );
}

#[test]
fn global_atomics_record_their_contention() {
    let m = helpers::compile("examples/histogram.cu");
    let o = helpers::run(
        &m,
        "histogram_global",
        &helpers::launch([1, 1, 1], [64, 1, 1]),
        &[
            helpers::data("data", vec![3; 64]),
            helpers::buf("bins", 256 * 4, warpcheck::sim::Init::Zero),
            helpers::int("n", 64),
        ],
    );
    let s = report::sites(&m, &o)
        .into_iter()
        .find(|s| s.kind == "atomic" && s.line == 7)
        .unwrap();
    // Both warps: 32 lanes on bins[3], one sector.
    assert_eq!(s.contention.map(|c| (c.min, c.max)), Some((32, 32)));
    assert_eq!(s.sectors.map(|c| c.max), Some(1));
}
