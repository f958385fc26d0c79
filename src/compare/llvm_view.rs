//! LLVM's verdicts mapped onto our IR, and why LLVM calls a value
//! divergent.
//!
//! Instructions are matched by position: the k-th non-terminator of the
//! b-th block is LLVM's k-th definition of its b-th block. The mapping is
//! checked (same block and entry counts, same opcodes) and refused when the
//! two disagree, so a mismatch is reported instead of compared.

use super::parse::LlvmFunction;
use crate::graph::FunctionGraphs;
use crate::ir::{BlockId, Callee, Function, InstId, Intrinsic, Module, Opcode, Value};
use std::collections::{HashMap, HashSet};

/// Why LLVM calls something divergent that we prove uniform: the first
/// place its divergence starts, by kind.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum LlvmRoot {
    /// LLVM assumes every parameter of a non-kernel function divergent.
    DeviceParameter,
    /// `ctaid`, `ntid`, `nctaid`, `warpid`, `smid`...: LLVM's NVPTX hooks
    /// treat every call, these included, as divergent.
    SpecialRegister,
    /// Votes, ballots, shuffle broadcasts, match, barrier reductions.
    WarpPrimitive,
    /// `llvm.smin`, `llvm.fma` and other pure intrinsics.
    MathIntrinsic,
    /// The result of a call to a device function.
    CallResult,
    /// Another call (external, asm).
    OtherCall,
    /// LLVM treats every load from generic or local memory as divergent.
    Load,
    /// Atomics (should not happen: we agree they are sources).
    Atomic,
    /// A join or loop exit of a branch LLVM finds divergent, with no
    /// divergent root found above it.
    Control,
}

impl LlvmRoot {
    pub fn describe(self) -> &'static str {
        match self {
            LlvmRoot::DeviceParameter => "device-function parameter (LLVM assumes divergent)",
            LlvmRoot::SpecialRegister => {
                "special register: blockIdx, blockDim, gridDim, warpid, smid"
            }
            LlvmRoot::WarpPrimitive => {
                "warp primitive: vote, ballot, shuffle broadcast, match, redux, barrier reduction"
            }
            LlvmRoot::MathIntrinsic => "math intrinsic call (llvm.smin, llvm.fma, ...)",
            LlvmRoot::CallResult => "device-function return value",
            LlvmRoot::OtherCall => "other call (vprintf, external functions)",
            LlvmRoot::Load => "load (LLVM: every generic or local load is divergent)",
            LlvmRoot::Atomic => "atomic",
            LlvmRoot::Control => "join or loop exit of a branch LLVM finds divergent",
        }
    }
}

pub struct LlvmView<'a> {
    m: &'a Module,
    func: &'a Function,
    graphs: &'a FunctionGraphs,
    llvm: &'a LlvmFunction,
    /// Per instruction: its `(block, entry)` in LLVM's output.
    position: Vec<Option<(usize, usize)>>,
    block_by_name: HashMap<&'a str, BlockId>,
}

impl<'a> LlvmView<'a> {
    /// Matches LLVM's output for `func`, or says why it cannot.
    pub fn new(
        m: &'a Module,
        func: &'a Function,
        graphs: &'a FunctionGraphs,
        llvm: &'a LlvmFunction,
    ) -> Result<Self, String> {
        let everything_uniform = llvm.all_uniform && llvm.blocks.is_empty();
        if llvm.blocks.len() != func.blocks.len() && !everything_uniform {
            return Err(format!(
                "LLVM printed {} blocks, the function has {}",
                llvm.blocks.len(),
                func.blocks.len()
            ));
        }
        let mut position = vec![None; func.insts.len()];
        let matched = if everything_uniform {
            0
        } else {
            func.blocks.len()
        };
        for (b, (block, theirs)) in func.blocks[..matched].iter().zip(&llvm.blocks).enumerate() {
            let ours = &block.insts[..block.insts.len().saturating_sub(1)];
            if ours.len() != theirs.defs.len() {
                return Err(format!(
                    "block {}: LLVM printed {} definitions, the block has {}",
                    theirs.name,
                    theirs.defs.len(),
                    ours.len()
                ));
            }
            for (k, (&i, (_, text))) in ours.iter().zip(&theirs.defs).enumerate() {
                let op = func.inst(i).op;
                if !same_opcode(op, text) {
                    return Err(format!(
                        "block {}: entry {k} is `{text}`, expected {}",
                        theirs.name,
                        op.mnemonic()
                    ));
                }
                position[i.index()] = Some((b, k));
            }
        }
        let block_by_name = func
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(b, block)| block.name.as_deref().map(|n| (n, BlockId::new(b))))
            .collect();
        Ok(LlvmView {
            m,
            func,
            graphs,
            llvm,
            position,
            block_by_name,
        })
    }

    /// Whether LLVM calls `v` divergent where it is defined.
    pub fn divergent(&self, v: Value) -> bool {
        if self.llvm.all_uniform {
            return false;
        }
        match v {
            Value::Inst(i) => {
                self.position[i.index()].is_none_or(|(b, k)| self.llvm.blocks[b].defs[k].0)
            }
            Value::Arg(a) => {
                let named = self.func.params[a as usize].name.as_deref();
                !self.func.is_kernel
                    || named.is_some_and(|n| self.llvm.divergent_args.iter().any(|d| d == n))
            }
            _ => false,
        }
    }

    /// Whether LLVM calls the terminator of `b` divergent.
    pub fn terminator_divergent(&self, b: BlockId) -> bool {
        self.llvm
            .blocks
            .get(b.index())
            .is_some_and(|block| block.terminator_divergent)
    }

    /// Whether LLVM calls `v` divergent as `user` reads it: at its
    /// definition, or because `user` lies outside a cycle with a divergent
    /// exit that defines `v`.
    pub fn divergent_at(&self, v: Value, user: InstId) -> bool {
        self.divergent(v) || self.temporal(v, user)
    }

    fn temporal(&self, v: Value, user: InstId) -> bool {
        let Value::Inst(def) = v else { return false };
        let (from, to) = (self.func.inst(def).block, self.func.inst(user).block);
        let cycles = self
            .llvm
            .divergent_exit_cycles
            .iter()
            .chain(&self.llvm.divergent_cycles);
        cycles.into_iter().any(|names| {
            let blocks: Option<Vec<BlockId>> = names
                .iter()
                .map(|n| self.block_by_name.get(n.as_str()).copied())
                .collect();
            match blocks {
                Some(blocks) => blocks.contains(&from) && !blocks.contains(&to),
                // Unnamed blocks: we cannot tell, so do not claim LLVM uniform.
                None => true,
            }
        })
    }

    /// Where LLVM's divergence of `v` starts, among the values `uniform`
    /// (our verdict) says are not divergent: the first place the two
    /// analyses part, walking LLVM's reasons back from `v`.
    pub fn root(&self, v: Value, uniform: &dyn Fn(Value) -> bool) -> LlvmRoot {
        self.root_of(v, uniform, &mut HashSet::new())
    }

    fn root_of(
        &self,
        v: Value,
        uniform: &dyn Fn(Value) -> bool,
        seen: &mut HashSet<Value>,
    ) -> LlvmRoot {
        if !seen.insert(v) {
            return LlvmRoot::Control;
        }
        let i = match v {
            Value::Arg(_) => return LlvmRoot::DeviceParameter,
            Value::Inst(i) => i,
            _ => return LlvmRoot::Control,
        };
        let inst = self.func.inst(i);
        // Follow operands where the analyses part; around a cycle one path
        // may only lead back, so try each before blaming control.
        let parting: Vec<Value> = inst
            .operands
            .iter()
            .copied()
            .filter(|&o| {
                matches!(o, Value::Inst(_) | Value::Arg(_)) && self.divergent(o) && uniform(o)
            })
            .collect();
        if !parting.is_empty() {
            return parting
                .into_iter()
                .map(|o| self.root_of(o, uniform, seen))
                .find(|&r| r != LlvmRoot::Control)
                .unwrap_or(LlvmRoot::Control);
        }
        match inst.op {
            Opcode::Call => self.call_root(inst.callee()),
            Opcode::Load => LlvmRoot::Load,
            Opcode::AtomicRmw | Opcode::CmpXchg => LlvmRoot::Atomic,
            _ => self.control_root(inst.block, uniform, seen),
        }
    }

    fn call_root(&self, callee: Option<Callee>) -> LlvmRoot {
        let Some(Callee::Direct(g)) = callee else {
            return LlvmRoot::OtherCall;
        };
        let target = self.m.func(g);
        match target.intrinsic {
            Some(Intrinsic::SReg(_)) => LlvmRoot::SpecialRegister,
            Some(
                Intrinsic::Vote(_)
                | Intrinsic::Shfl { .. }
                | Intrinsic::MatchAll
                | Intrinsic::MatchAny
                | Intrinsic::ActiveMask
                | Intrinsic::Redux(_)
                | Intrinsic::Barrier(_),
            ) => LlvmRoot::WarpPrimitive,
            Some(Intrinsic::Pure { .. } | Intrinsic::MinMax(_)) => LlvmRoot::MathIntrinsic,
            Some(Intrinsic::Atomic(_)) => LlvmRoot::Atomic,
            Some(Intrinsic::GlobalLoad) => LlvmRoot::Load,
            Some(_) => LlvmRoot::OtherCall,
            None if !target.is_declaration => LlvmRoot::CallResult,
            None => LlvmRoot::OtherCall,
        }
    }

    /// A value made divergent by control: blame the nearest dominating
    /// branch LLVM finds divergent, and where its condition's divergence
    /// starts.
    fn control_root(
        &self,
        block: BlockId,
        uniform: &dyn Fn(Value) -> bool,
        seen: &mut HashSet<Value>,
    ) -> LlvmRoot {
        let mut at = self.graphs.dom.idom(block);
        while let Some(b) = at {
            if self.terminator_divergent(b) {
                let cond = self
                    .func
                    .terminator(b)
                    .and_then(|t| t.operands.first().copied());
                return match cond {
                    Some(c) if uniform(c) => self.root_of(c, uniform, seen),
                    _ => LlvmRoot::Control,
                };
            }
            at = self.graphs.dom.idom(b);
        }
        LlvmRoot::Control
    }
}

/// Whether LLVM's printed instruction has our opcode.
fn same_opcode(op: Opcode, text: &str) -> bool {
    let body = text.split_once(" = ").map_or(text, |(_, rhs)| rhs);
    let word = body
        .split_whitespace()
        .find(|w| !matches!(*w, "tail" | "musttail" | "notail"))
        .unwrap_or("");
    matches!(op, Opcode::Unknown | Opcode::OtherTerminator) || word == op.mnemonic()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_match_printed_instructions() {
        assert!(same_opcode(
            Opcode::ICmp,
            "%cmp = icmp sgt i32 %v, 3, !dbg !14"
        ));
        assert!(same_opcode(
            Opcode::Call,
            "%0 = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()"
        ));
        assert!(same_opcode(Opcode::Store, "store i32 1, ptr %out, align 4"));
        assert!(!same_opcode(Opcode::Load, "store i32 1, ptr %out, align 4"));
    }
}
