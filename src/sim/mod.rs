//! Evaluation mode: runs a kernel's IR on the CPU under the lock-step cost
//! semantics of RaCuda (§3, Fig. 3), so a launch's exact cost is known
//! without a GPU and every static result can be checked on concrete runs.
//!
//! The kernel and the functions it calls are pre-decoded (`decode`) into a
//! compact form with operands resolved to register slots; warps of 32
//! consecutive threads run it in lock-step with an active mask (`exec`),
//! reconverging at immediate post-dominators; the warps of a block meet at
//! `__syncthreads()` (`block`). Every branch and memory access adds to the
//! counters of `cost`, per warp and per source site.

mod addr;
pub mod args;
mod block;
pub mod code;
pub mod cost;
mod decode;
pub mod error;
mod exec;
mod fp16;
mod layout;
mod math;
pub mod memory;
mod printf;
pub mod report;
mod scalar;

pub use args::{ArgValue, BufferSpec, Elem, Init};
pub use code::SiteInfo;
pub use cost::{Counters, SiteStats};
pub use error::{ErrorKind, SimError};

use crate::ir::{FuncId, Module, TypeKind};
use exec::{Machine, Program};
use layout::Layout;
use memory::Buffer;

/// The shape of a launch and which blocks to run.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Linear block ids (x fastest) to run; every block when `None`.
    pub blocks: Option<Vec<u64>>,
    /// Bytes of dynamic shared memory (`<<<g, b, bytes>>>`).
    pub dynamic_shared: u64,
    /// Seed for `random` buffer fills.
    pub seed: u64,
}

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: [1, 1, 1],
            block: [256, 1, 1],
            blocks: None,
            dynamic_shared: 0,
            seed: 0,
        }
    }
}

/// A kernel parameter as the user names it.
#[derive(Clone, Debug)]
pub struct ParamInfo {
    pub name: String,
    /// Whether `name` came from the IR or debug info (else `argN`).
    pub named: bool,
    pub is_pointer: bool,
    /// The C++ type from the demangled signature, when there is one.
    pub cpp_type: Option<String>,
}

/// The parameters of a kernel, in order.
pub fn params(m: &Module, kernel: FuncId) -> Vec<ParamInfo> {
    let f = m.func(kernel);
    let cpp = args::signature_params(&f.demangled);
    f.params
        .iter()
        .enumerate()
        .map(|(i, p)| ParamInfo {
            name: p.name.clone().unwrap_or_else(|| format!("arg{i}")),
            named: p.name.is_some(),
            is_pointer: matches!(m.types.kind(p.ty), TypeKind::Ptr(_)),
            cpp_type: (cpp.len() == f.params.len()).then(|| cpp[i].clone()),
        })
        .collect()
}

/// A buffer after the run.
#[derive(Clone, Debug)]
pub struct BufferResult {
    pub name: String,
    pub elem: Option<Elem>,
    pub data: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct WarpResult {
    pub block: [u32; 3],
    pub warp: u32,
    pub counters: Counters,
}

#[derive(Clone, Debug)]
pub struct BlockResult {
    pub block: [u32; 3],
    pub counters: Counters,
}

/// Everything a simulation measured.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub kernel: FuncId,
    pub config: LaunchConfig,
    pub totals: Counters,
    pub blocks: Vec<BlockResult>,
    pub warps: Vec<WarpResult>,
    /// Per instruction site (one IR instruction each), with its statistics.
    pub sites: Vec<(SiteInfo, SiteStats)>,
    /// Pointer arguments' buffers, in parameter order.
    pub buffers: Vec<BufferResult>,
    /// Device `printf` output.
    pub output: Vec<String>,
}

impl Outcome {
    pub fn buffer(&self, name: &str) -> Option<&BufferResult> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

/// Runs `kernel` with arguments given by parameter name (or `argN`).
pub fn simulate(
    m: &Module,
    kernel: FuncId,
    config: &LaunchConfig,
    arguments: &[(String, ArgValue)],
) -> Result<Outcome, SimError> {
    let f = m.func(kernel);
    if f.is_declaration {
        return Err(SimError::usage(format!(
            "{} has no body in this module",
            f.demangled
        )));
    }
    check_shape(config)?;
    let layout = Layout::new(m);
    let decoded = decode::decode(m, kernel, &layout);
    let program = Program {
        funcs: decoded.funcs,
        sites: decoded.sites,
        layout,
    };
    let mut objects = module_objects(m, &program.layout)?;
    let (words, buffers) = bind_arguments(m, kernel, config, arguments, &mut objects)?;
    let shared = program.layout.shared_bytes(config.dynamic_shared);
    let mut machine = Machine::new(m, &program, config.grid, config.block, objects, shared);

    let [gx, gy, gz] = config.grid.map(u64::from);
    let all: Vec<u64> = match &config.blocks {
        Some(list) => list.clone(),
        None => (0..gx * gy * gz).collect(),
    };
    let mut outcome = Outcome {
        kernel,
        config: config.clone(),
        totals: Counters::default(),
        blocks: Vec::new(),
        warps: Vec::new(),
        sites: Vec::new(),
        buffers: Vec::new(),
        output: Vec::new(),
    };
    for linear in all {
        if linear >= gx * gy * gz {
            return Err(SimError::usage(format!(
                "block {linear} is outside the grid of {} blocks",
                gx * gy * gz
            )));
        }
        let b = [linear % gx, (linear / gx) % gy, linear / (gx * gy)].map(|v| v as u32);
        let warps = block::run(&mut machine, b, &words)?;
        let mut sum = Counters::default();
        for (i, c) in warps.into_iter().enumerate() {
            sum += c;
            outcome.warps.push(WarpResult {
                block: b,
                warp: i as u32,
                counters: c,
            });
        }
        outcome.totals += sum;
        outcome.blocks.push(BlockResult {
            block: b,
            counters: sum,
        });
    }
    outcome.sites = program.sites.iter().cloned().zip(machine.sites).collect();
    outcome.output = machine.output;
    outcome.buffers = buffers
        .into_iter()
        .map(|(object, name, elem)| BufferResult {
            name,
            elem,
            data: std::mem::take(&mut machine.objects[object as usize].data),
        })
        .collect();
    Ok(outcome)
}

fn check_shape(config: &LaunchConfig) -> Result<(), SimError> {
    let threads: u64 = config.block.iter().map(|&d| u64::from(d)).product();
    if config.grid.contains(&0) || config.block.contains(&0) {
        return Err(SimError::usage(
            "grid and block dimensions must be at least 1",
        ));
    }
    if threads > 1024 {
        return Err(SimError::usage(format!(
            "a block of {threads} threads exceeds CUDA's limit of 1024"
        )));
    }
    Ok(())
}

/// Object 0 (never valid) and the module's `__device__`/`__constant__`
/// variables with their initializers.
fn module_objects(m: &Module, layout: &Layout) -> Result<Vec<Buffer>, SimError> {
    let mut objects = vec![Buffer {
        name: "<null>".into(),
        space: crate::memory::Space::Unknown,
        data: Vec::new(),
        writable: false,
    }];
    for v in &layout.vars {
        let g = m.global(v.global);
        let data = match g.init {
            Some(init) => decode::initial_bytes(m, layout, init, g.value_ty).map_err(|why| {
                SimError::new(
                    ErrorKind::Unsupported,
                    format!("cannot initialise {}: unsupported {why}", g.demangled),
                )
            })?,
            None => vec![0; m.types.size(g.value_ty) as usize],
        };
        let constant = g.addrspace == crate::ir::addrspace::CONSTANT;
        objects.push(Buffer {
            name: g.demangled.clone(),
            space: if constant {
                crate::memory::Space::Constant
            } else {
                crate::memory::Space::Global
            },
            data,
            writable: !g.is_constant,
        });
    }
    Ok(objects)
}

/// A pointer argument's buffer: object, name and element type.
type Bound = (u32, String, Option<Elem>);

/// The kernel's argument words, and its buffers (created in `objects`).
fn bind_arguments(
    m: &Module,
    kernel: FuncId,
    config: &LaunchConfig,
    arguments: &[(String, ArgValue)],
    objects: &mut Vec<Buffer>,
) -> Result<(Vec<u64>, Vec<Bound>), SimError> {
    let f = m.func(kernel);
    let infos = params(m, kernel);
    let lookup = |i: usize, p: &ParamInfo| {
        arguments
            .iter()
            .find(|(n, _)| *n == p.name || *n == format!("arg{i}"))
            .map(|(_, v)| v)
    };
    for (name, _) in arguments {
        let known = infos
            .iter()
            .enumerate()
            .any(|(i, p)| *name == p.name || *name == format!("arg{i}"));
        if !known {
            let names: Vec<&str> = infos.iter().map(|p| p.name.as_str()).collect();
            return Err(SimError::usage(format!(
                "{} has no parameter '{name}' (parameters: {})",
                f.demangled,
                names.join(", ")
            )));
        }
    }
    let missing: Vec<String> = infos
        .iter()
        .enumerate()
        .filter(|(i, p)| lookup(*i, p).is_none())
        .map(|(_, p)| describe_param(p))
        .collect();
    if !missing.is_empty() {
        return Err(SimError::usage(format!(
            "missing --arg for {}",
            missing.join(", ")
        )));
    }
    let mut words = Vec::new();
    let mut buffers = Vec::new();
    for (i, (p, info)) in f.params.iter().zip(&infos).enumerate() {
        let value = lookup(i, info).expect("checked above");
        let bad = |why: String| SimError::usage(format!("--arg {}: {why}", info.name));
        match (value, m.types.kind(p.ty)) {
            (ArgValue::Buffer(spec), TypeKind::Ptr(_)) => {
                let elem = spec
                    .elem
                    .or_else(|| info.cpp_type.as_deref().and_then(args::pointee_elem));
                let seed = config.seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let data = args::fill(spec, elem, seed).map_err(bad)?;
                let object = objects.len() as u32;
                if object as usize >= addr::MAX_OBJECTS {
                    return Err(bad("too many buffers".into()));
                }
                objects.push(Buffer {
                    name: info.name.clone(),
                    space: crate::memory::Space::Global,
                    data,
                    writable: true,
                });
                words.push(addr::encode(addr::GLOBAL, object, 0));
                buffers.push((object, info.name.clone(), elem));
            }
            (_, TypeKind::Ptr(_)) => {
                return Err(bad("a pointer parameter needs buf:BYTES[:init]".into()))
            }
            (ArgValue::Buffer(_), _) => return Err(bad("not a pointer parameter".into())),
            (ArgValue::Int(v), TypeKind::Int(bits)) => {
                let bits = *bits;
                let fits = bits >= 64 || (*v >= -(1i128 << (bits - 1)) && *v < (1i128 << bits));
                if !fits {
                    return Err(bad(format!("{v} does not fit in {bits} bits")));
                }
                words.push((*v as u64) & scalar::mask(bits));
            }
            (ArgValue::Float(_), TypeKind::Int(_)) => {
                return Err(bad("an integer parameter needs an integer".into()))
            }
            (v, kind) => {
                let x = match v {
                    ArgValue::Int(i) => *i as f64,
                    ArgValue::Float(x) => *x,
                    ArgValue::Buffer(_) => unreachable!("handled above"),
                };
                let ty = match kind {
                    TypeKind::Half => code::FTy::F16,
                    TypeKind::BFloat => code::FTy::BF16,
                    TypeKind::Float => code::FTy::F32,
                    TypeKind::Double => code::FTy::F64,
                    _ => {
                        return Err(bad(format!(
                            "unsupported parameter type {}",
                            m.types.render(p.ty)
                        )))
                    }
                };
                words.push(scalar::from_f64(ty, x));
            }
        }
    }
    Ok((words, buffers))
}

fn describe_param(p: &ParamInfo) -> String {
    let ty = p
        .cpp_type
        .as_deref()
        .unwrap_or(if p.is_pointer { "pointer" } else { "scalar" });
    let hint = if p.is_pointer {
        "=buf:BYTES[:init]"
    } else {
        "=VALUE"
    };
    format!("{} ({ty}, {}{hint})", p.name, p.name)
}
