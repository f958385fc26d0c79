//! Thread dependence of inline asm, read with the PTX reader
//! ([`crate::ptx::varies`]): an output read from `%laneid`, `%lanemask_*`,
//! `%tid` or a clock is a source; one read from a uniform special register
//! (`%reserved_smem_offset_*`, `%dynamic_smem_size`, `%nwarpid`) is
//! uniform; one computed from inputs depends on them; one loaded from
//! memory follows the memory rules, as a load does; the warp forms follow
//! the rules of the same intrinsics (a vote depends on its mask only).
//! Stores, atomics and `cp.async` write memory as the same IR would. A
//! body the reader cannot read stays an opaque source (see `rules`).
//!
//! Several outputs come back as one struct; each `extractvalue` of it
//! gets its own output's rule.

use super::rules::{InstRule, MemRef, ResultRule, RuleBuilder, Write, WriteData};
use crate::ir::intrinsics::SReg;
use crate::ir::{FuncId, Function, Inst, InstId, InstKind, Value};
use crate::memory::asm::{effect_accesses, read};
use crate::memory::Origin;
use crate::ptx::summary::EffectKind;
use crate::ptx::varies::{LaneSource, Variance, Varies};
use crate::ptx::{Binding, Body, Special};
use crate::taint::Source;

impl RuleBuilder<'_> {
    /// The rule of asm call `i`; `None` when its body cannot be read.
    pub(super) fn asm(&mut self, f: FuncId, func: &Function, i: InstId) -> Option<InstRule> {
        let inst = func.inst(i);
        let (body, summary) = read(self.m, inst)?;
        if body.constraints.operands.iter().any(|c| c.indirect) {
            return None;
        }
        let variance = Variance::of(&body);
        let mut all = Varies::default();
        for (_, v) in &variance.outputs {
            crate::ptx::flow::Join::join(&mut all, v);
        }
        let mut loads = Vec::new();
        let mut writes = Vec::new();
        for effect in &summary.effects {
            let accesses = effect_accesses(&body, inst, &effect.kind);
            let to = |b: &mut Self, k: usize| {
                let a = &accesses[k];
                let origin = b.spaces.access_origin(b.m, f, a);
                MemRef {
                    address: a.address,
                    target: b.locs.target(origin),
                }
            };
            match &effect.kind {
                EffectKind::Load { .. } => loads.push(to(self, 0)),
                EffectKind::Store { .. } | EffectKind::Atomic { .. } => {
                    // What the instruction stores, by the variance of its
                    // operands other than the address.
                    let stored = &variance.stored[effect.index];
                    let data = match stored.sources.is_empty() && stored.loads.is_empty() {
                        true => WriteData::Values(inputs(&body, inst, stored)),
                        false => WriteData::Opaque,
                    };
                    let to = to(self, 0);
                    writes.push(self.asm_write(to, data));
                }
                EffectKind::AsyncCopy { .. } => {
                    let (to, from) = (to(self, 1), to(self, 0));
                    writes.push(self.asm_write(to, WriteData::Copy(from)));
                }
                _ => {}
            }
        }
        // Several loads read through one location that may be any.
        let read = match loads.len() {
            _ if all.loads.is_empty() => None,
            1 => loads.pop(),
            _ => Some(MemRef {
                address: Value::Opaque,
                target: self.locs.target(Origin::UNKNOWN),
            }),
        };
        Some(InstRule {
            result: result(&body, inst, &all, None),
            read,
            writes,
        })
    }

    fn asm_write(&self, to: MemRef, data: WriteData) -> Write {
        Write {
            to,
            data,
            size: None,
            overwrites: None,
            frame_local: false,
        }
    }

    /// The rule of an `extractvalue` of one output of an asm call with
    /// several; `None` for any other `extractvalue`.
    pub(super) fn asm_field(&self, func: &Function, i: InstId) -> Option<InstRule> {
        let inst = func.inst(i);
        let (Value::Inst(c), InstKind::Indices(idx)) = (inst.operands[0], &inst.kind) else {
            return None;
        };
        let call = func.inst(c);
        let (body, _) = read(self.m, call)?;
        let [field] = idx[..] else { return None };
        let k = &body.constraints;
        let n =
            (0..k.operands.len() as u32).find(|&n| k.binding(n) == Some(Binding::Result(field)))?;
        let out = Variance::of(&body).output(n);
        // What memory the output was loaded from makes the struct
        // dependent: the field then follows it.
        let through = (!out.loads.is_empty()).then_some(inst.operands[0]);
        Some(InstRule {
            result: result(&body, call, &out, through),
            read: None,
            writes: Vec::new(),
        })
    }
}

/// The result rule of a value with variance `v`; `through` is a value
/// that carries its memory dependence.
fn result(body: &Body, call: &Inst, v: &Varies, through: Option<Value>) -> ResultRule {
    if let Some(&s) = v.sources.first() {
        return ResultRule::Source(source(s));
    }
    let mut ops = inputs(body, call, v);
    ops.extend(through);
    if ops.is_empty() && v.loads.is_empty() {
        ResultRule::Uniform
    } else {
        ResultRule::Operands(ops)
    }
}

/// The call's arguments that `v`'s inputs are.
fn inputs(body: &Body, call: &Inst, v: &Varies) -> Vec<Value> {
    v.inputs
        .iter()
        .filter_map(|&n| body.input_value(call, n))
        .collect()
}

/// The taint source of a lane source.
fn source(s: LaneSource) -> Source {
    match s {
        LaneSource::Special(Special::Sreg(r)) => match r {
            SReg::Tid(d) => Source::ThreadIdx(d),
            SReg::LaneId => Source::LaneId,
            SReg::LaneMask(_) => Source::LaneMask,
            _ => Source::Clock,
        },
        LaneSource::Special(_) => Source::Opaque,
        LaneSource::Atomic => Source::Atomic,
        LaneSource::ShuffleRange => Source::Shuffle,
        LaneSource::Elected => Source::LaneId,
    }
}
