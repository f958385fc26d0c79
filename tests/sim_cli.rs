//! `warpcheck simulate` end to end: the JSON contract, text output, buffer
//! dumps, block selection, seeds, and joining with `check --format json`.

#[path = "common/sim.rs"]
mod helpers;

use helpers::*;
use serde_json::Value;
use std::process::Output;

const VECTOR_ADD: &[&str] = &[
    "examples/vector_add.cu",
    "--grid",
    "4",
    "--block",
    "256",
    "--arg",
    "a=buf:4K:iota",
    "--arg",
    "b=buf:4K:iota",
    "--arg",
    "c=buf:4K",
    "--arg",
    "n=1024",
];

fn simulate(args: &[&str]) -> Output {
    warpcheck()
        .arg("simulate")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = simulate(&[args, &["--format", "json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_report_follows_the_contract() {
    let r = json(&[VECTOR_ADD, &["--kernel", "vector_add", "--dump", "c"]].concat());
    assert_eq!(
        r["kernel"],
        "vector_add(float const*, float const*, float*, int)"
    );
    assert_eq!(r["grid"], serde_json::json!([4, 1, 1]));
    assert_eq!(r["block"], serde_json::json!([256, 1, 1]));
    // 32 warps x 3 requests x 4 sectors; 17 instructions per warp.
    let t = &r["totals"];
    assert_eq!(
        (
            &t["sectors"],
            &t["requests"],
            &t["conflicts"],
            &t["divwarps"]
        ),
        (&384.into(), &96.into(), &0.into(), &0.into())
    );
    assert!(t["steps"].as_u64().unwrap() > 0);
    let warps = r["warps"].as_array().unwrap();
    assert_eq!(warps.len(), 32);
    assert_eq!(warps[9]["block"], serde_json::json!([1, 0, 0]));
    assert_eq!(warps[9]["warp"], 1);
    for key in ["sectors", "conflicts", "divwarps", "steps"] {
        assert!(warps[9][key].is_u64(), "warp field {key}");
    }
    let sites = r["sites"].as_array().unwrap();
    let load = sites
        .iter()
        .find(|s| s["kind"] == "load")
        .expect("a load site");
    assert_eq!(load["file"], "examples/vector_add.cu");
    assert_eq!(
        (&load["line"], &load["space"]),
        (&11.into(), &"global".into())
    );
    assert_eq!(load["executions"], 32);
    assert_eq!(
        load["sectors"],
        serde_json::json!({"min": 4, "max": 4, "total": 128})
    );
    let branch = sites.iter().find(|s| s["kind"] == "branch").unwrap();
    assert_eq!(branch["divergent"], 0);
    let c = r["buffers"]["c"].as_array().unwrap();
    assert_eq!(c.len(), 1024);
    assert_eq!(c[7], 14.0);
}

#[test]
fn sites_join_the_static_report() {
    let sim = json(&[VECTOR_ADD, &["--kernel", "_Z10vector_addPKfS0_Pfi"]].concat());
    let out = warpcheck()
        .args([
            "check",
            "--format",
            "json",
            "--sites",
            "examples/vector_add.cu",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let check: Value = serde_json::from_slice(&out.stdout).unwrap();
    let statics = check["kernels"][0]["sites"].as_array().unwrap();
    for s in sim["sites"].as_array().unwrap() {
        let same = |x: &&Value| {
            ["kind", "file", "line", "column"]
                .iter()
                .all(|k| x[*k] == s[*k])
        };
        assert!(statics.iter().any(|x| same(&x)), "no static site for {s}");
    }
}

#[test]
fn text_report_and_block_selection() {
    let out = simulate(&[VECTOR_ADD, &["--blocks", "1,3"]].concat());
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("grid (4,1,1) block (256,1,1), 2 blocks, 16 warps run"),
        "{text}"
    );
    assert!(
        text.contains("global: 48 requests, 192 sectors (ideal 192)"),
        "{text}"
    );
    assert!(text.contains("(1,0,0)") && text.contains("(3,0,0)") && !text.contains("(2,0,0)"));
    assert!(text.contains("examples/vector_add.cu:11:"), "{text}");
}

#[test]
fn random_buffers_follow_the_seed() {
    let args = |seed: &str| {
        [
            "examples/vector_add.cu",
            "--block",
            "32",
            "--arg",
            "a=buf:128:random",
            "--arg",
            "b=buf:128",
            "--arg",
            "c=buf:128",
            "--arg",
            "n=32",
            "--dump",
            "c",
            "--seed",
            seed,
        ]
        .map(String::from)
    };
    let run = |seed| {
        let a = args(seed);
        let v: Vec<&str> = a.iter().map(String::as_str).collect();
        json(&v)["buffers"]["c"].clone()
    };
    let (one, again, other) = (run("1"), run("1"), run("2"));
    assert_eq!(one, again);
    assert_ne!(one, other);
    assert!(one
        .as_array()
        .unwrap()
        .iter()
        .all(|v| (0.0..1.0).contains(&v.as_f64().unwrap())));
}

#[test]
fn timing_goes_to_stderr() {
    let out = simulate(&[VECTOR_ADD, &["--timing"]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    // 32 full warps issue 17 instructions each.
    assert!(err.contains("simulated 17408 thread-instructions"), "{err}");
    assert!(err.contains("M thread-instructions/s"), "{err}");
}
