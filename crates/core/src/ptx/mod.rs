//! A reader for the PTX inside inline-asm calls, shared by the analyses
//! and the simulator. Pure Rust: it reads the text and constraint string
//! our IR keeps ([`crate::ir::InlineAsm`]), never an LLVM object.
//!
//! [`Body::parse`] gives the typed instructions of an asm body (`{ }`
//! scopes and `.reg` declarations resolved, `$n` bound to the constraint
//! string's operands); [`eval`] computes the register-to-register forms on
//! 64-bit bit patterns; [`summary`] says what an asm body reads and
//! writes (thread-dependent special registers, loads, stores, atomics,
//! barriers, fences); [`space`] models `cvta`; [`run`] runs a body for one
//! thread when it needs no other thread and no memory. Any form outside
//! the modelled set is a [`PtxError`] naming the PTX instruction.

pub mod constraint;
mod decode;
pub mod eval;
pub mod flow;
pub mod inst;
mod lex;
mod parse;
pub mod run;
pub mod space;
pub mod sreg;
pub mod summary;
pub mod varies;

pub use constraint::{Binding, Class, Constraints};
pub use inst::{Inst, Op, Operand, Reg, Ty};
pub use sreg::{Dependence, Special};

/// Why an asm body could not be read. The caller adds the source position
/// of the call; `line` is the line within the asm text (0 for the
/// constraint string).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PtxError {
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for PtxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "inline asm: {}", self.message)
        } else {
            write!(f, "inline asm line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for PtxError {}

/// A register the body declares with `.reg`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Local {
    pub name: String,
    pub ty: Ty,
}

/// An asm body, read.
#[derive(Clone, PartialEq, Debug)]
pub struct Body {
    pub constraints: Constraints,
    pub locals: Vec<Local>,
    pub insts: Vec<Inst>,
}

impl Body {
    /// Reads an asm text in LLVM's spelling (`$0` operands) with its
    /// constraint string.
    pub fn parse(text: &str, constraints: &str) -> Result<Body, PtxError> {
        let constraints = Constraints::parse(constraints)?;
        let (statements, locals) = parse::statements(&lex::lex(text)?)?;
        let insts = statements
            .iter()
            .map(decode::decode)
            .collect::<Result<Vec<_>, _>>()?;
        let body = Body {
            constraints,
            locals,
            insts,
        };
        body.check_operands()?;
        Ok(body)
    }

    /// Reads the inline asm of our IR.
    pub fn of(asm: &crate::ir::InlineAsm) -> Result<Body, PtxError> {
        Body::parse(&asm.text, &asm.constraints)
    }

    /// Every `$n` names an operand of the constraint string, and only
    /// outputs are written.
    fn check_operands(&self) -> Result<(), PtxError> {
        for inst in &self.insts {
            let op = &inst.op;
            let reads = op.reads().into_iter().chain(inst.guard.map(|g| g.value));
            for (operand, written) in reads
                .map(|o| (o, false))
                .chain(op.writes().into_iter().map(|o| (o, true)))
            {
                let Operand::Reg(Reg::Arg(n)) = operand else {
                    continue;
                };
                let message = if n as usize >= self.constraints.operands.len() {
                    format!("`${n}` has no constraint")
                } else if written && !self.constraints.is_output(n) {
                    format!("`{}` writes `${n}`, which is an input", inst.opcode)
                } else {
                    continue;
                };
                return Err(PtxError {
                    line: inst.line,
                    message,
                });
            }
        }
        Ok(())
    }

    /// The IR value a call of this body passes as input `$n` (an argument
    /// of the call; `None` for outputs and operands the call lacks).
    pub fn input_value(&self, call: &crate::ir::Inst, n: u32) -> Option<crate::ir::Value> {
        match self.constraints.binding(n)? {
            Binding::Arg(k) if !self.constraints.is_output(n) => {
                call.operands.get(k as usize).copied()
            }
            _ => None,
        }
    }

    /// What output `$n` holds when the body only copies something into
    /// it: its last write is an unguarded `mov` of a special register, an
    /// immediate or an input, at the output's full width.
    pub fn copy_of(&self, n: u32) -> Option<Operand> {
        let out = Operand::Reg(Reg::Arg(n));
        let last = self
            .insts
            .iter()
            .rev()
            .find(|i| i.op.writes().contains(&out))?;
        match (&last.op, last.guard) {
            (Op::Mov { ty, src, .. }, None) if ty.bits() >= self.reg_bits(Reg::Arg(n)) => {
                match *src {
                    Operand::Reg(Reg::Arg(k)) if !self.constraints.is_output(k) => Some(*src),
                    Operand::Special(_) | Operand::Imm(_) => Some(*src),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The width in bits of a register of the body (0 for an immediate
    /// operand).
    pub fn reg_bits(&self, r: Reg) -> u32 {
        match r {
            Reg::Arg(n) => self.constraints.class(n).map_or(64, Class::bits),
            Reg::Local(l) => self.locals[l as usize].ty.bits(),
        }
    }
}

#[cfg(test)]
mod tests;
