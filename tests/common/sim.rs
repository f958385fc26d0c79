//! Helpers shared by the `sim*` tests (included with `#[path = "common/sim.rs"]`; a file under tests/common is not a test target of its own): compile a
//! fixture, run a kernel, pick sites out of the outcome.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::{FuncId, Module};
use warpcheck::sim::report::{self, SiteJson};
use warpcheck::sim::{self, ArgValue, BufferSpec, Init, LaunchConfig, Outcome, SimError};

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Compiles a `.cu` (or reads a `.ll`) with full debug info, as `simulate` does.
pub fn compile(rel: &str) -> Module {
    compile_with(rel, &[])
}

/// Like [`compile`], with more clang flags (later flags win: `-O0`, `-g0`).
pub fn compile_with(rel: &str, flags: &[&str]) -> Module {
    let opts = CompileOptions {
        full_debug: true,
        extra: flags.iter().map(|f| f.to_string()).collect(),
        ..CompileOptions::default()
    };
    frontend::load(&fixture(rel), &opts).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

pub fn kernel(m: &Module, name: &str) -> FuncId {
    m.find_function(name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

pub fn launch(grid: [u32; 3], block: [u32; 3]) -> LaunchConfig {
    LaunchConfig {
        grid,
        block,
        ..LaunchConfig::default()
    }
}

pub fn int(name: &str, v: i128) -> (String, ArgValue) {
    (name.to_string(), ArgValue::Int(v))
}

pub fn float(name: &str, v: f64) -> (String, ArgValue) {
    (name.to_string(), ArgValue::Float(v))
}

pub fn buf(name: &str, bytes: u64, init: Init) -> (String, ArgValue) {
    (
        name.to_string(),
        ArgValue::Buffer(BufferSpec {
            bytes,
            init,
            elem: None,
        }),
    )
}

/// A buffer with exact contents.
pub fn data(name: &str, bytes: Vec<u8>) -> (String, ArgValue) {
    let n = bytes.len() as u64;
    buf(name, n, Init::Bytes(bytes))
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn try_run(
    m: &Module,
    name: &str,
    config: &LaunchConfig,
    args: &[(String, ArgValue)],
) -> Result<Outcome, SimError> {
    sim::simulate(m, kernel(m, name), config, args)
}

pub fn run(m: &Module, name: &str, config: &LaunchConfig, args: &[(String, ArgValue)]) -> Outcome {
    try_run(m, name, config, args).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn floats(o: &Outcome, name: &str) -> Vec<f32> {
    let b = o.buffer(name).unwrap_or_else(|| panic!("no buffer {name}"));
    b.data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

pub fn ints(o: &Outcome, name: &str) -> Vec<i32> {
    let b = o.buffer(name).unwrap_or_else(|| panic!("no buffer {name}"));
    b.data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The merged report sites of a kind on a line (one per column and space).
pub fn sites(m: &Module, o: &Outcome, kind: &str, line: u32) -> Vec<SiteJson> {
    report::sites(m, o)
        .into_iter()
        .filter(|s| s.kind == kind && s.line == line)
        .collect()
}

/// The single site of a kind on a line.
pub fn site(m: &Module, o: &Outcome, kind: &str, line: u32) -> SiteJson {
    let found = sites(m, o, kind, line);
    assert_eq!(found.len(), 1, "{kind} sites on line {line}: {found:#?}");
    found.into_iter().next().unwrap()
}

pub fn warpcheck() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_warpcheck"))
}
