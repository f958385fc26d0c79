//! Block shapes read from the host code's `<<<grid, block>>>` launches
//! (`tests/fixtures/cu/launch_shapes.cu`), their priority against the other
//! sources, the guessed-shape note, and a host side that does not compile.
//! Expected figures are derived in the comments.

mod common;
use common::*;
use serde_json::{json, Value};

const FIXTURE: &str = "cu/launch_shapes.cu";

/// Every analysis of a kernel (one per block shape it is analysed for).
fn analyses<'a>(r: &'a Value, name: &str) -> Vec<&'a Value> {
    r["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"].as_str().unwrap().starts_with(&format!("{name}(")))
        .collect()
}

/// The divergence figure of the branch on `line` in one analysis.
fn divergence(k: &Value, line: u64) -> &Value {
    let s = k["sites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "branch" && s["line"] == line)
        .unwrap_or_else(|| panic!("no branch on line {line}: {k:#}"));
    &s["divergence"]
}

fn findings<'a>(r: &'a Value, check: &str, line: u64) -> Vec<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == check && f["line"] == line)
        .collect()
}

fn launch_source(line: u64) -> impl Fn(&Value) {
    move |src: &Value| {
        assert_eq!(src["kind"], "launch", "{src}");
        assert_eq!(src["line"], line, "{src}");
        assert!(
            src["file"].as_str().unwrap().ends_with("launch_shapes.cu"),
            "{src}"
        );
    }
}

/// The fixture's shapes, whichever way clang lowered the launches (our
/// header: `cudaConfigureCall`; a toolkit: `__cudaPushCallConfiguration`).
fn assert_fixture_shapes(r: &Value) {
    // tile16<<<grid(4), block(16, 16)>>> at line 37.
    let tile = analyses(r, "tile16");
    assert_eq!(tile.len(), 1);
    assert_eq!(tile[0]["block_dim"], json!([16, 16, 1]));
    launch_source(37)(&tile[0]["block_dim_source"]);
    assert_eq!(tile[0]["launches"][0]["grid"], json!([4, 1, 1]));
    // `if (tx == 0)` (line 9): 256 threads are 8 warps; warp w holds
    // threads x + 16y for y = 2w and 2w + 1, so lanes 0 and 16 have tx == 0
    // and every one of the 8 warps splits (at 256x1x1 only warp 0 would).
    let d = divergence(tile[0], 9);
    assert_eq!(
        (d["split_min"].as_u64(), d["split_max"].as_u64()),
        (Some(8), Some(8))
    );
    assert_eq!(d["warps"], 8);

    // scale1d<<<(n + 127) / 128, 128>>> with n = 1000 (line 39): 1127 / 128
    // = 8 blocks; and with a run-time m (line 40): grid unknown, block 128.
    let scale = analyses(r, "scale1d");
    assert_eq!(scale.len(), 1, "one block shape, one analysis");
    assert_eq!(scale[0]["block_dim"], json!([128, 1, 1]));
    launch_source(39)(&scale[0]["block_dim_source"]);
    let l = &scale[0]["launches"];
    assert_eq!(l[0]["grid"], json!([8, 1, 1]));
    assert_eq!(l[0]["block"], json!([128, 1, 1]));
    assert_eq!(l[1]["line"], 40);
    assert_eq!(l[1]["grid"], Value::Null);
    assert_eq!(l[1]["block"], json!([128, 1, 1]));
    // 128 threads: 4 warps, at most the one holding i == n splits.
    let d = divergence(scale[0], 17);
    assert_eq!(
        (d["warps"].as_u64(), d["split_max"].as_u64()),
        (Some(4), Some(1))
    );

    // twice<<<1, 64>>> (line 41) and <<<2, dim3(32, 4), 256>>> (line 42):
    // analysed for each.
    let twice = analyses(r, "twice");
    assert_eq!(twice.len(), 2);
    assert_eq!(twice[0]["block_dim"], json!([64, 1, 1]));
    launch_source(41)(&twice[0]["block_dim_source"]);
    assert_eq!(twice[1]["block_dim"], json!([32, 4, 1]));
    launch_source(42)(&twice[1]["block_dim_source"]);
    assert_eq!(twice[1]["launches"][1]["shared_bytes"], 256);
    // `threadIdx.x < 16` (line 23): at 64x1, warp 0 (x 0..31) splits and
    // warp 1 (x 32..63) does not: 1 of 2. At 32x4 each warp is one row of
    // x 0..31 and splits: 4 of 4.
    let d = divergence(twice[0], 23);
    assert_eq!(
        (d["warps"].as_u64(), d["split_max"].as_u64()),
        (Some(2), Some(1))
    );
    let d = divergence(twice[1], 23);
    assert_eq!(
        (d["warps"].as_u64(), d["split_min"].as_u64()),
        (Some(4), Some(4))
    );
    // One finding at line 23, the worst (4 of 4), naming its shape.
    let f = findings(r, "divergent-branch", 23);
    assert_eq!(f.len(), 1, "{f:#?}");
    let msg = f[0]["message"].as_str().unwrap();
    assert!(msg.contains("4 of 4 warps"), "{msg}");
    assert!(
        msg.contains("with the 32×4×1 block of the launch at")
            && msg.contains("launch_shapes.cu:42 (also launched with 64×1×1)"),
        "{msg}"
    );

    // never: not launched, reads threadIdx.y (line 29): the default and
    // the note saying it is a guess.
    let never = analyses(r, "never");
    assert_eq!(never[0]["block_dim_source"], "default");
    assert!(never[0].get("launches").is_none());
    let note = findings(r, "guessed-shape", 29);
    assert_eq!(note.len(), 1, "{:#}", r["findings"]);
    let msg = note[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("analysed as 256×1×1") && msg.contains("threadIdx.y"),
        "{msg}"
    );
    assert!(note[0]["notes"][0]
        .as_str()
        .unwrap()
        .contains("--block-dim X,Y,Z"));
    // Kernels whose shape is known get no such note.
    let guessed: Vec<_> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "guessed-shape")
        .collect();
    assert_eq!(guessed.len(), 1, "{guessed:#?}");
}

#[test]
fn shapes_from_the_host_code() {
    assert_fixture_shapes(&check_json(FIXTURE, &[]));
}

#[test]
fn shapes_from_the_host_code_with_a_toolkit() {
    let Some(root) = cuda_toolkit_or_skip("host launches with a toolkit") else {
        return;
    };
    assert_fixture_shapes(&check_json(
        FIXTURE,
        &["--cuda-path", root.to_str().unwrap()],
    ));
}

#[test]
fn the_simulator_agrees_on_the_16x16_launch() {
    // The branch at line 9 is tile16's only one: at 16x16 all 8 warps split
    // once there; at 256x1x1 only warp 0 (the one thread with tx == 0).
    let divwarps = |block: &str| {
        let r = ok_json(&run(warpcheck()
            .args(["simulate", "--format", "json", "--kernel", "tile16"])
            .args(["--block-dim", block])
            .args(["--arg", "out=buf:4096", "--arg", "in=buf:4096"])
            .arg(fixture(FIXTURE))));
        r["totals"]["divwarps"].as_u64().unwrap()
    };
    assert_eq!(divwarps("16,16"), 8);
    assert_eq!(divwarps("256"), 1);
}

#[test]
fn the_option_and_the_configuration_win_over_launches() {
    let r = check_json(FIXTURE, &["--block-dim", "64"]);
    for name in ["tile16", "scale1d", "twice", "never"] {
        let a = analyses(&r, name);
        assert_eq!(a.len(), 1, "{name}");
        assert_eq!(a[0]["block_dim"], json!([64, 1, 1]), "{name}");
        assert_eq!(a[0]["block_dim_source"], "option", "{name}");
    }
    // The option gives every kernel its shape: the host side is not
    // compiled, and no launches are listed.
    assert!(analyses(&r, "twice")[0].get("launches").is_none());

    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("launch_shapes.cu");
    std::fs::copy(fixture(FIXTURE), &src).unwrap();
    std::fs::write(
        dir.path().join(".warpcheck.yaml"),
        "Kernels:\n  'tile*': {block: [8, 8]}\n",
    )
    .unwrap();
    let r = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(&src)));
    let tile = analyses(&r, "tile16");
    assert_eq!(tile[0]["block_dim"], json!([8, 8, 1]));
    assert_eq!(tile[0]["block_dim_source"], "config");
    launch_source(39)(&analyses(&r, "scale1d")[0]["block_dim_source"]);
}

#[test]
fn without_host_launches_the_shape_is_a_guess() {
    let r = check_json(FIXTURE, &["--no-host-launches"]);
    let tile = analyses(&r, "tile16");
    assert_eq!(tile[0]["block_dim_source"], "default");
    assert!(tile[0].get("launches").is_none());
    // 256x1x1: only warp 0 holds tx == 0 (thread 0).
    assert_eq!(divergence(tile[0], 9)["split_max"], 1);
    // tile16 reads threadIdx.y, twice reads it too, scale1d blockDim.x.
    let guessed: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "guessed-shape")
        .map(|f| f["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(guessed.len(), 4, "{guessed:?}");
    let scale = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["check"] == "guessed-shape" && f["kernel"].as_str().unwrap().starts_with("scale1d")
        })
        .unwrap();
    assert!(scale["message"].as_str().unwrap().contains("blockDim.x"));
}

#[test]
fn a_host_side_that_does_not_compile_leaves_the_device_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("broken_host.cu");
    std::fs::write(
        &src,
        "__global__ void k(float *a) { a[threadIdx.y * 16 + threadIdx.x] = 0; }\n\
         #ifndef __CUDA_ARCH__\n\
         void run(float *a) { k<<<1, dim3(16, 16)>>>(a); not_declared(); }\n\
         #endif\n",
    )
    .unwrap();
    let r = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(&src)));
    let k = analyses(&r, "k");
    assert_eq!(k[0]["block_dim_source"], "default");
    assert_eq!(findings(&r, "guessed-shape", 1).len(), 1);
}

#[test]
fn a_launch_of_a_runtime_block_is_named_in_the_note() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("runtime_block.cu");
    std::fs::write(
        &src,
        "__global__ void k(float *a) { a[threadIdx.y * 16 + threadIdx.x] = 0; }\n\
         void run(float *a, int t) { k<<<1, dim3(t, t)>>>(a); }\n",
    )
    .unwrap();
    let r = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(&src)));
    let k = analyses(&r, "k");
    assert_eq!(k[0]["block_dim_source"], "default");
    assert_eq!(k[0]["launches"][0]["block"], Value::Null);
    assert_eq!(k[0]["launches"][0]["grid"], json!([1, 1, 1]));
    let note = findings(&r, "guessed-shape", 1);
    assert_eq!(note.len(), 1);
    let notes = note[0]["notes"].to_string();
    assert!(
        notes.contains("runtime_block.cu:2 with a block computed at run time"),
        "{notes}"
    );
}

#[test]
fn a_compile_database_entry_gives_its_flags_to_the_host_side() {
    // The block is TILE x TILE, and only the database defines TILE (as 8).
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("tiled.cu");
    std::fs::write(
        &src,
        "__global__ void k(float *a) { a[threadIdx.y * TILE + threadIdx.x] = 0; }\n\
         void run(float *a) { k<<<4, dim3(TILE, TILE)>>>(a); }\n",
    )
    .unwrap();
    let db = json!([{
        "directory": dir.path(),
        "file": src,
        "arguments": ["clang++", "-x", "cuda", "--cuda-gpu-arch=sm_80", "-DTILE=8", "-c", "tiled.cu"]
    }]);
    std::fs::write(dir.path().join("compile_commands.json"), db.to_string()).unwrap();
    let r = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites", "-p"])
        .arg(dir.path())));
    let k = analyses(&r, "k");
    assert_eq!(k[0]["block_dim"], json!([8, 8, 1]));
    assert_eq!(k[0]["block_dim_source"]["line"], 2);
}

#[test]
fn the_html_report_uses_the_launch_shapes_too() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("r.html");
    let out = run(warpcheck()
        .args(["report", "--no-simulate", "-o"])
        .arg(&page)
        .arg(fixture(FIXTURE)));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    // A section per shape: tile16's, both of twice's, scale1d's; never's
    // is the default.
    for (shape, line) in [
        ("16×16×1", 37),
        ("64×1×1", 41),
        ("32×4×1", 42),
        ("128×1×1", 39),
    ] {
        // The file as clang recorded it (relative to the directory it
        // ran in, when under it).
        let want = format!("block {shape} (launch at ");
        let at = html.find(&want).unwrap_or_else(|| panic!("no {want}")) + want.len();
        let end = at + html[at..].find(')').unwrap();
        assert!(
            html[at..end].ends_with(&format!("launch_shapes.cu:{line}")),
            "{shape}: {}",
            &html[at..end]
        );
    }
    assert!(html.contains("block 256×1×1 (default)"));
}

#[test]
fn a_launch_under_a_destructor_is_read() {
    // With a destructor to run on unwinding, clang calls the configuration
    // with `invoke`, which ends its block (Rodinia nn, with a std::vector).
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("unwind.cu");
    std::fs::write(
        &src,
        "struct Guard { ~Guard(); };\n\
         __global__ void k(float *a) { a[threadIdx.y * 16 + threadIdx.x] = 0; }\n\
         void run(float *a) { Guard g; k<<<1, dim3(16, 16)>>>(a); }\n",
    )
    .unwrap();
    let r = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites"])
        .arg(&src)));
    let k = analyses(&r, "k");
    assert_eq!(k[0]["block_dim"], json!([16, 16, 1]));
    assert_eq!(k[0]["block_dim_source"]["line"], 3);
}

/// `launch_ast.cu` launches `halves` with 64 threads from host code that
/// only the device compile sees (under `#ifdef __CUDA_ARCH__`): `check`
/// reads it from the device compile's AST with warpcheck's plugin
/// (`-fplugin`), so `threadIdx.x < 16` splits warp 0 of 2. Without the
/// plugin the host-side compile cannot see that launch: the default 256
/// threads, warp 0 of 8.
#[test]
fn launches_come_from_the_device_compile_s_ast() {
    let src = fixture("cu/launch_ast.cu");
    let with = ok_json(&run(warpcheck()
        .args(["check", "--format", "json", "--sites", "--min-impact=0"])
        .arg(&src)));
    let k = analyses(&with, "halves");
    assert_eq!(k[0]["block_dim"], json!([64, 1, 1]), "{with:#}");
    let d = divergence(k[0], 7);
    assert_eq!(
        (d["warps"].as_u64(), d["split_max"].as_u64()),
        (Some(2), Some(1))
    );
    let without = ok_json(&run(warpcheck()
        .env("WARPCHECK_NO_FRONTEND_PLUGIN", "1")
        .args(["check", "--format", "json", "--sites", "--min-impact=0"])
        .arg(&src)));
    let k = analyses(&without, "halves");
    assert_eq!(k[0]["block_dim_source"], "default");
    let d = divergence(k[0], 7);
    assert_eq!(
        (d["warps"].as_u64(), d["split_max"].as_u64()),
        (Some(8), Some(1))
    );
}
