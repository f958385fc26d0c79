//! Setting a launch up: the module's variables as memory objects, and the
//! kernel's arguments bound by name to scalars and fresh buffers.

use super::args::{self, ArgValue, Elem};
use super::code::Op;
use super::error::{ErrorKind, SimError};
use super::exec::asm::AsmEnv;
use super::exec::Program;
use super::layout::Layout;
use super::memory::Buffer;
use super::scalar::FTy;
use super::{addr, decode, params, scalar, LaunchConfig, ParamInfo};
use crate::ir::{addrspace, FuncId, Module, TypeKind};
use crate::memory::Space;
use crate::ptx::Special;

pub fn check_shape(config: &LaunchConfig) -> Result<(), SimError> {
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
pub fn module_objects(m: &Module, layout: &Layout) -> Result<Vec<Buffer>, SimError> {
    let mut objects = vec![Buffer {
        name: "<null>".into(),
        space: Space::Unknown,
        data: Vec::new(),
        writable: false,
        released: None,
        unwritten: None,
        lazy: None,
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
            None => {
                let bytes = m.types.size(g.value_ty);
                super::memory::zeroed(bytes).ok_or_else(|| {
                    SimError::usage(format!(
                        "cannot allocate {} bytes for the variable {}",
                        bytes, g.demangled
                    ))
                })?
            }
        };
        let constant = g.addrspace == addrspace::CONSTANT;
        objects.push(Buffer {
            name: g.demangled.clone(),
            space: if constant {
                Space::Constant
            } else {
                Space::Global
            },
            data,
            writable: !g.is_constant,
            released: None,
            unwritten: None,
            lazy: None,
        });
    }
    Ok(objects)
}

/// A pointer argument's buffer: object, name and element type.
pub type Bound = (u32, String, Option<Elem>);

/// The kernel's argument words, and its buffers (created in `objects`).
pub fn bind_arguments(
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
                    space: Space::Global,
                    data,
                    writable: true,
                    released: None,
                    unwritten: None,
                    lazy: None,
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
                    TypeKind::Half => FTy::F16,
                    TypeKind::BFloat => FTy::BF16,
                    TypeKind::Float => FTy::F32,
                    TypeKind::Double => FTy::F64,
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

/// What the launch's asm bodies read of it: the reserved shared memory
/// (placed after the block's own `user_shared` bytes, 128-byte aligned) when some body
/// reads `%reserved_smem_offset_*`, and a zeroed grid-barrier workspace
/// (a new object) when some body reads `%envreg1`/`%envreg2`, as a
/// cooperative launch gives CUDA's `this_grid()`.
pub fn asm_env(
    program: &Program,
    config: &LaunchConfig,
    user_shared: u64,
    objects: &mut Vec<Buffer>,
) -> AsmEnv {
    let reads = |want: &dyn Fn(Special) -> bool| {
        program
            .funcs
            .iter()
            .flat_map(|f| &f.code)
            .any(|op| matches!(op, Op::AsmSpecial { reg, .. } if want(*reg)))
    };
    let reserved = reads(&|r| matches!(r, Special::ReservedSmem(_)));
    let workspace = if reads(&|r| matches!(r, Special::EnvReg(1 | 2))) {
        let object = objects.len() as u32;
        objects.push(Buffer {
            name: "<grid workspace>".into(),
            space: Space::Global,
            data: vec![0; 8],
            writable: true,
            released: None,
            unwritten: None,
            lazy: None,
        });
        addr::encode(addr::GLOBAL, object, 0)
    } else {
        0
    };
    AsmEnv {
        dynamic_smem: config.dynamic_shared,
        reserved_smem: reserved.then_some(user_shared.next_multiple_of(128)),
        workspace,
    }
}
