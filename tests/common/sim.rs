//! Helpers shared by the `sim*` tests (included with `#[path = "common/sim.rs"]`; a file under tests/common is not a test target of its own): compile a
//! fixture, run a kernel, pick sites out of the outcome.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use warpcheck::frontend::{self, CompileOptions};
use warpcheck::ir::{FuncId, Module, TypeKind};
use warpcheck::sim::report::{self, SiteJson};
use warpcheck::sim::{self, ArgValue, BufferSpec, Init, LaunchConfig, Outcome, SimError};

#[path = "mod.rs"]
pub mod common;
#[allow(unused_imports)] // not every test uses them
pub use common::{cu_files, warpcheck};

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

/// Like [`compile`], with warpcheck's own headers whatever toolkit the
/// machine has (`--no-cuda`).
pub fn compile_no_cuda(rel: &str) -> Module {
    let opts = CompileOptions {
        full_debug: true,
        no_toolkit: true,
        ..CompileOptions::default()
    };
    frontend::load(&fixture(rel), &opts).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The module's analysis for blocks of `block` threads, as `--block-dim`
/// gives it.
pub fn analyze_at(m: &Module, block: [u32; 3]) -> warpcheck::analysis::ModuleAnalysis<'_> {
    use warpcheck::analysis::{self, BlockDim, BlockDimSource, Options};
    let opts = Options {
        block_dim: Some(BlockDim {
            dims: block,
            source: BlockDimSource::Option,
        }),
        no_explanations: true,
        ..Options::default()
    };
    analysis::analyze(m, &opts, &warpcheck::taint::ifds::IfdsTaint)
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

/// `block_sum` of `sim_reduction.cu` over `blocks` blocks of 256 threads,
/// its parameters (input, one sum per block, count) named `names`.
pub fn run_block_sum(m: &Module, names: [&str; 3], blocks: u32, input: &[i32], n: i128) -> Outcome {
    run(
        m,
        "block_sum",
        &launch([blocks, 1, 1], [256, 1, 1]),
        &[
            data(names[0], i32_bytes(input)),
            buf(names[1], 4 * u64::from(blocks), Init::Zero),
            int(names[2], n),
        ],
    )
}

/// A buffer read as 4-byte little-endian words.
fn words<T>(o: &Outcome, name: &str, from_le: fn([u8; 4]) -> T) -> Vec<T> {
    let b = o.buffer(name).unwrap_or_else(|| panic!("no buffer {name}"));
    b.data
        .chunks_exact(4)
        .map(|c| from_le(c.try_into().unwrap()))
        .collect()
}

pub fn floats(o: &Outcome, name: &str) -> Vec<f32> {
    words(o, name, f32::from_le_bytes)
}

pub fn ints(o: &Outcome, name: &str) -> Vec<i32> {
    words(o, name, i32::from_le_bytes)
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

/// Arguments any kernel can run with: 1 MiB buffers filled 0, 1, 2, ... in
/// their element type (the signature's pointee, else 32-bit integers),
/// `int` for integers and 1.5 for floats.
pub fn iota_arguments(m: &Module, k: FuncId, int: i128) -> Vec<(String, ArgValue)> {
    let f = m.func(k);
    f.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let value = match m.types.kind(p.ty) {
                TypeKind::Ptr(_) => ArgValue::Buffer(BufferSpec {
                    bytes: 1 << 20,
                    init: Init::Iota,
                    elem: sim::params(m, k)[i]
                        .cpp_type
                        .as_deref()
                        .and_then(sim::args::pointee_elem)
                        .or(Some(sim::Elem::I32)),
                }),
                TypeKind::Int(_) => ArgValue::Int(int),
                _ => ArgValue::Float(1.5),
            };
            (format!("arg{i}"), value)
        })
        .collect()
}

#[allow(unused_imports)]
pub use warpcheck::agreement::{static_key, SiteKey};

/// The key of a simulated site.
pub fn sim_key(s: &SiteJson) -> SiteKey {
    (
        s.kind.to_string(),
        s.file.clone(),
        u64::from(s.line),
        u64::from(s.column),
    )
}

/// A simulated warp's count of one cost metric.
pub fn counter(c: &sim::Counters, m: warpcheck::cost::Metric) -> u64 {
    use warpcheck::cost::Metric;
    match m {
        Metric::Sectors => c.sectors,
        Metric::Conflicts => c.conflicts,
        Metric::Divwarps => c.divwarps,
        Metric::Steps => c.steps,
    }
}

/// The most any simulated warp counted of one cost metric.
pub fn worst_warp(o: &sim::Outcome, m: warpcheck::cost::Metric) -> u64 {
    o.warps
        .iter()
        .map(|w| counter(&w.counters, m))
        .max()
        .unwrap_or(0)
}
