//! The memory accesses of inline asm, read with the PTX reader: each
//! `ld`, `st`, `atom`/`red` and `cp.async` of the body is an access, its
//! address stood for by the call's argument it is computed from, and its
//! space the one the instruction names (`ld.shared`) or the window a
//! `cvta` put the address in.

use super::{Access, AccessKind, Origin, Root, Space};
use crate::ir::{Inst, Module, Value};
use crate::ptx::inst::Space as PtxSpace;
use crate::ptx::summary::{EffectKind, Sources, Summary};
use crate::ptx::Body;

/// A call's asm body, read, with its summary; `None` when the call runs
/// no asm or the body cannot be read.
pub fn read(m: &Module, call: &Inst) -> Option<(Body, Summary)> {
    let body = Body::of(m.called_asm(call)?).ok()?;
    let summary = Summary::of(&body);
    Some((body, summary))
}

/// The space a PTX state space is, for warpcheck (`None`: generic).
pub fn space_of(s: PtxSpace) -> Option<Space> {
    match s {
        PtxSpace::Global => Some(Space::Global),
        PtxSpace::Shared | PtxSpace::SharedCluster => Some(Space::Shared),
        PtxSpace::Local => Some(Space::Local),
        PtxSpace::Const => Some(Space::Constant),
        PtxSpace::Generic | PtxSpace::Param => None,
    }
}

/// The IR value an address inside the body stands for: the call's
/// argument it is computed from, when exactly one is and nothing that
/// differs between lanes (a lane register, memory, other lanes) enters
/// it; `Value::Opaque` otherwise.
pub fn address_value(body: &Body, call: &Inst, address: &Sources) -> Value {
    let plain =
        !address.memory && !address.other_lanes && address.varying_specials().next().is_none();
    match address.inputs[..] {
        [n] if plain => body.input_value(call, n).unwrap_or(Value::Opaque),
        _ => Value::Opaque,
    }
}

/// The space an address is known to be in from the body alone: the one
/// the instruction names, else the one `cvta` made it a generic pointer of.
fn named(space: PtxSpace, address: &Sources) -> Option<Space> {
    space_of(space).or(match address.windows[..] {
        [w] => space_of(w),
        _ => None,
    })
}

/// The accesses of one effect of the body (a `cp.async` makes two: the
/// global load and the shared store), with the instruction's index.
pub fn effect_accesses(body: &Body, call: &Inst, kind: &EffectKind) -> Vec<Access> {
    let access = |kind, space, address: &Sources, bytes: u32| {
        let value = address_value(body, call, address);
        Access {
            kind,
            address: value,
            bytes: u64::from(bytes),
            space: named(space, address),
            dependent_inside: value == Value::Opaque && !address.is_uniform_alone(),
        }
    };
    match kind {
        EffectKind::Load {
            space,
            bytes,
            address,
            ..
        } => vec![access(AccessKind::Load, *space, address, *bytes)],
        EffectKind::Store {
            space,
            bytes,
            address,
            ..
        } => vec![access(AccessKind::Store, *space, address, *bytes)],
        EffectKind::Atomic {
            space,
            bytes,
            address,
            ..
        } => vec![access(AccessKind::Atomic, *space, address, *bytes)],
        // The size is an operand; 0 stands for "not known statically".
        EffectKind::AsyncCopy { dst, src } => vec![
            access(AccessKind::Load, PtxSpace::Global, src, 0),
            access(AccessKind::Store, PtxSpace::Shared, dst, 0),
        ],
        _ => Vec::new(),
    }
}

/// Every access of an asm call, in the body's order.
pub fn accesses(m: &Module, call: &Inst) -> Vec<Access> {
    let Some((body, summary)) = read(m, call) else {
        return Vec::new();
    };
    summary
        .effects
        .iter()
        .flat_map(|e| effect_accesses(&body, call, &e.kind))
        .collect()
}

/// Where an output of the body points, when it is a pointer: into the
/// window `cvta` made it in; where the one input it comes from points
/// (`trace`); or nowhere known.
pub fn output_origin(
    body: &Body,
    call: &Inst,
    out: &Sources,
    trace: &mut dyn FnMut(Value) -> Option<Origin>,
) -> Option<Origin> {
    if let [w] = out.windows[..] {
        return Some(Origin {
            space: space_of(w).unwrap_or(Space::Unknown),
            root: Root::Unknown,
        });
    }
    if !out.windows.is_empty() || out.memory || out.other_lanes {
        return Some(Origin::UNKNOWN);
    }
    match out.inputs[..] {
        [n] => body
            .input_value(call, n)
            .map_or(Some(Origin::UNKNOWN), trace),
        _ => Some(Origin::UNKNOWN),
    }
}
