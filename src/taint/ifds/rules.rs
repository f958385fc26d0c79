//! What each instruction does to thread dependence, decided once per
//! instruction so the flow functions are table lookups.
//!
//! Sources (dependent in every lane, whatever the operands): `tid.x/y/z`,
//! the lane id and lane masks, clocks, the old value an atomic returns, and
//! anything opaque (indirect or external calls, unknown intrinsics, inline
//! asm the PTX reader cannot read). Inline asm it reads has rules of its
//! own (`asm`). Warp-uniform whatever the operands: `ctaid`, `ntid`,
//! `nctaid`, `warpid`, `nwarpid`, `smid` and the other special registers,
//! and the block-wide `__syncthreads_count/and/or`.
//!
//! Warp primitives are uniform unless an operand makes them differ:
//!
//! * `vote.all/any/uni/ballot` and `match.all` give every lane of the
//!   group named by their mask the same answer, so they depend on the mask
//!   only. This holds among the lanes that execute the vote together; a
//!   vote reached by part of the warp gives that part one answer, and where
//!   those lanes later meet the others the join rules apply as for any
//!   value. (CUDA requires every lane of the mask to reach the vote.)
//! * `shfl.sync.idx` with a whole-warp segment reads one lane's value for
//!   every lane: a broadcast, dependent only if the source lane is.
//!   Shuffles up/down/xor, and `idx` within sub-warp segments, read
//!   neighbours: dependent when the shuffled value is. Their in-range
//!   predicate (the `.p` forms) is per lane.
//! * `match.any` gives each lane the lanes holding its value: uniform when
//!   that value is.
//! * `redux.sync` reduces over the mask's lanes, and `activemask` names the
//!   lanes executing it: the same answer for the lanes running it together.

use super::memory::{Locations, Target};
use crate::ir::intrinsics::{SReg, ShflControl, ShflMode};
use crate::ir::{
    Callee, Const, FuncId, Function, InstId, InstKind, Intrinsic, Module, Opcode, TypeKind, Value,
};
use crate::memory::{Root, Spaces};
use crate::taint::Source;

/// When an instruction's result is thread-dependent.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultRule {
    /// No result, or one that is the same in every lane.
    Uniform,
    /// When any of these operands is.
    Operands(Vec<Value>),
    /// Always.
    Source(Source),
    /// A call node: the callee's return says.
    Call,
    /// A phi: decided on the edges into its block.
    Phi,
}

/// A memory operand: the address and what it may point to.
#[derive(Clone, Debug, PartialEq)]
pub struct MemRef {
    pub address: Value,
    pub target: Target,
}

/// What a write stores.
#[derive(Clone, Debug, PartialEq)]
pub enum WriteData {
    /// These values (the stored value, an atomic's operands).
    Values(Vec<Value>),
    /// Bytes copied from memory.
    Copy(MemRef),
    /// Whatever opaque code writes: assumed dependent.
    Opaque,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    pub to: MemRef,
    pub data: WriteData,
    /// A byte count, when it is an operand (memcpy, memset).
    pub size: Option<Value>,
    /// The per-thread location this write replaces entirely (a store of
    /// the whole of a scalar `alloca`), which lets it clear old dependence.
    pub overwrites: Option<u32>,
    /// The address is an `alloca` of this very call of the function (not
    /// one reached through a parameter or memory): a frame that lanes not
    /// running the call do not have, and that dies when it returns.
    pub frame_local: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstRule {
    pub result: ResultRule,
    /// Memory read into the result.
    pub read: Option<MemRef>,
    pub writes: Vec<Write>,
}

impl InstRule {
    fn result(result: ResultRule) -> Self {
        InstRule {
            result,
            read: None,
            writes: Vec::new(),
        }
    }
}

/// Builds rules for the functions of one kernel.
pub struct RuleBuilder<'a> {
    pub m: &'a Module,
    pub spaces: &'a Spaces,
    pub locs: &'a mut Locations,
}

impl RuleBuilder<'_> {
    /// The rule of instruction `i` of `f`; `call_node` says whether it is a
    /// call the analysis follows into the callee.
    pub fn rule(&mut self, f: FuncId, i: InstId, call_node: bool) -> InstRule {
        let func = self.m.func(f);
        let inst = func.inst(i);
        let ops = &inst.operands;
        let mut rule = match inst.op {
            Opcode::Phi => InstRule::result(ResultRule::Phi),
            Opcode::Alloca | Opcode::Fence => InstRule::result(ResultRule::Uniform),
            Opcode::Load => InstRule {
                result: ResultRule::Operands(vec![ops[0]]),
                read: Some(self.mem(f, ops[0])),
                writes: Vec::new(),
            },
            Opcode::Store => {
                let to = self.mem(f, ops[1]);
                let overwrites = self.scalar_overwrite(f, func, ops[0], ops[1], &to);
                InstRule {
                    result: ResultRule::Uniform,
                    read: None,
                    writes: vec![Write {
                        to,
                        data: WriteData::Values(vec![ops[0]]),
                        size: None,
                        overwrites,
                        frame_local: frame_local(func, ops[1]),
                    }],
                }
            }
            Opcode::AtomicRmw | Opcode::CmpXchg => self.atomic(f, ops),
            Opcode::Call if call_node => InstRule::result(ResultRule::Call),
            Opcode::Call => self.call(f, func, i),
            Opcode::VAArg | Opcode::LandingPad | Opcode::Unknown => {
                InstRule::result(ResultRule::Source(Source::Opaque))
            }
            op if op.is_terminator() => InstRule::result(ResultRule::Uniform),
            Opcode::ExtractValue => self
                .asm_field(func, i)
                .unwrap_or_else(|| InstRule::result(ResultRule::Operands(ops.clone()))),
            _ => InstRule::result(ResultRule::Operands(ops.clone())),
        };
        if matches!(self.m.types.kind(inst.ty), TypeKind::Void) {
            rule.result = ResultRule::Uniform;
        }
        rule
    }

    fn mem(&mut self, f: FuncId, address: Value) -> MemRef {
        let target = self
            .locs
            .pointer_target(&self.spaces.pointer(self.m, f, address));
        MemRef { address, target }
    }

    /// `store v, %a` where `%a` is a whole scalar `alloca` of this function.
    fn scalar_overwrite(
        &self,
        f: FuncId,
        func: &Function,
        value: Value,
        address: Value,
        to: &MemRef,
    ) -> Option<u32> {
        let Value::Inst(a) = address else { return None };
        let alloca = func.inst(a);
        let InstKind::Alloca { allocated } = alloca.kind else {
            return None;
        };
        let single = alloca
            .operands
            .first()
            .is_none_or(|&n| self.m.int_value(n) == Some(1));
        let whole =
            self.m.types.size(allocated) == self.m.types.size(self.m.value_type(func, value));
        let ours = self.spaces.origin(self.m, f, address).root == Root::Alloca(f, a);
        (single && whole && ours)
            .then_some(to.target.per_thread)
            .flatten()
    }

    fn atomic(&mut self, f: FuncId, ops: &[Value]) -> InstRule {
        InstRule {
            result: ResultRule::Source(Source::Atomic),
            read: None,
            writes: vec![self.write_to(f, ops[0], WriteData::Values(ops[1..].to_vec()), None)],
        }
    }

    fn call(&mut self, f: FuncId, func: &Function, i: InstId) -> InstRule {
        let inst = func.inst(i);
        let ops = &inst.operands;
        let intrinsic = match inst.callee() {
            Some(Callee::Direct(g)) => self.m.func(g).intrinsic,
            _ => None,
        };
        if self.m.called_asm(inst).is_some() {
            return self
                .asm(f, func, i)
                .unwrap_or_else(|| self.opaque(f, func, i));
        }
        let Some(intr) = intrinsic else {
            // A call through a pointer, or an external function.
            return self.opaque(f, func, i);
        };
        let uniform = || InstRule::result(ResultRule::Uniform);
        let source = |s| InstRule::result(ResultRule::Source(s));
        let operands = |v: Vec<Value>| InstRule::result(ResultRule::Operands(v));
        match intr {
            Intrinsic::SReg(reg) => match reg {
                SReg::Tid(d) => source(Source::ThreadIdx(d)),
                SReg::LaneId => source(Source::LaneId),
                SReg::LaneMask(_) => source(Source::LaneMask),
                SReg::Clock => source(Source::Clock),
                _ => uniform(),
            },
            Intrinsic::Barrier(_)
            | Intrinsic::WarpSync
            | Intrinsic::Fence
            | Intrinsic::NoOp
            | Intrinsic::Assume => uniform(),
            Intrinsic::Vote(_) | Intrinsic::MatchAll => operands(vec![ops[0]]),
            Intrinsic::MatchAny => operands(ops.clone()),
            // See the module comment: like a vote, one answer for the lanes
            // running them together.
            Intrinsic::ActiveMask => operands(Vec::new()),
            Intrinsic::Redux(_) => operands(vec![ops[1]]),
            Intrinsic::Shfl { mode, pred } => self.shuffle(mode, pred, ops),
            Intrinsic::Atomic(_) => self.atomic(f, ops),
            Intrinsic::GlobalLoad => InstRule {
                result: ResultRule::Operands(vec![ops[0]]),
                read: Some(self.mem(f, ops[0])),
                writes: Vec::new(),
            },
            Intrinsic::MemCpy | Intrinsic::MemMove => {
                let from = self.mem(f, ops[1]);
                self.write(f, ops[0], WriteData::Copy(from), ops.get(2).copied())
            }
            Intrinsic::MemSet => self.write(
                f,
                ops[0],
                WriteData::Values(vec![ops[1]]),
                ops.get(2).copied(),
            ),
            Intrinsic::Pure { .. } | Intrinsic::MinMax(_) | Intrinsic::Printf => {
                operands(ops.clone())
            }
            // Opaque, as an external call is.
            Intrinsic::PtrCast
            | Intrinsic::Prefetch
            | Intrinsic::Sleep
            | Intrinsic::Trap
            | Intrinsic::AssertFail
            | Intrinsic::GridSync
            | Intrinsic::Unknown => self.opaque(f, func, i),
        }
    }

    fn write(&mut self, f: FuncId, to: Value, data: WriteData, size: Option<Value>) -> InstRule {
        InstRule {
            result: ResultRule::Uniform,
            read: None,
            writes: vec![self.write_to(f, to, data, size)],
        }
    }

    fn write_to(&mut self, f: FuncId, to: Value, data: WriteData, size: Option<Value>) -> Write {
        Write {
            to: self.mem(f, to),
            data,
            size,
            overwrites: None,
            frame_local: frame_local(self.m.func(f), to),
        }
    }

    /// `[mask, value, lane, c]`; see the module comment.
    fn shuffle(&self, mode: ShflMode, pred: bool, ops: &[Value]) -> InstRule {
        let (value, lane) = (ops[1], ops[2]);
        let whole_warp = ops
            .get(3)
            .and_then(|&c| self.m.int_value(c))
            .is_some_and(|c| ShflControl::from_bits(c as u32).whole_warp());
        let result = match (mode, pred) {
            (ShflMode::Idx, _) if whole_warp => ResultRule::Operands(vec![lane]),
            (ShflMode::Idx, false) | (_, false) => ResultRule::Operands(vec![value]),
            (ShflMode::Idx, true) => ResultRule::Operands(vec![value, lane]),
            (_, true) => ResultRule::Source(Source::Shuffle),
        };
        InstRule::result(result)
    }

    /// A source whose pointer arguments may be written with anything.
    fn opaque(&mut self, f: FuncId, func: &Function, i: InstId) -> InstRule {
        let pointers: Vec<Value> = func
            .inst(i)
            .operands
            .iter()
            .copied()
            .filter(|&a| self.is_pointer(func, a))
            .collect();
        let writes = pointers
            .into_iter()
            .map(|a| self.write_to(f, a, WriteData::Opaque, None))
            .collect();
        InstRule {
            result: ResultRule::Source(Source::Opaque),
            read: None,
            writes,
        }
    }

    fn is_pointer(&self, func: &Function, v: Value) -> bool {
        let constant_non_pointer = matches!(v, Value::Const(c) if !matches!(self.m.konst(c), Const::Null(_) | Const::Expr { .. }));
        !constant_non_pointer
            && !matches!(v, Value::Opaque | Value::Func(_))
            && self.m.types.is_ptr(self.m.value_type(func, v))
    }
}

/// Whether pointer `v` is derived, inside `func`, only from its `alloca`s.
fn frame_local(func: &Function, v: Value) -> bool {
    let mut seen = Vec::new();
    let mut work = vec![v];
    while let Some(v) = work.pop() {
        let Value::Inst(i) = v else { return false };
        if seen.contains(&i) {
            continue;
        }
        seen.push(i);
        let inst = func.inst(i);
        match inst.op {
            Opcode::Alloca => {}
            Opcode::GetElementPtr | Opcode::BitCast | Opcode::AddrSpaceCast => {
                work.push(inst.operands[0])
            }
            Opcode::Phi => work.extend(&inst.operands),
            Opcode::Select => work.extend(&inst.operands[1..]),
            _ => return false,
        }
    }
    true
}
