//! LLVM inline-asm constraint strings (`=r,=l,r,l,h,f,d,n,~{memory}`):
//! which `$n` are outputs and which inputs, their register classes, tied
//! operands and clobbers. `$n` is the n-th entry that is not a clobber.

use super::PtxError;

/// An NVPTX register class (or immediate) of one operand.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Class {
    /// `b`: a predicate.
    Pred,
    /// `c`: 8 bits.
    B8,
    /// `h`: 16 bits.
    B16,
    /// `r`: 32 bits.
    B32,
    /// `l`: 64 bits (pointers of a 64-bit target).
    B64,
    /// `f`: a `float`.
    F32,
    /// `d`: a `double`.
    F64,
    /// `n`, `i`: a constant the compiler substitutes.
    Imm,
    /// `m`: a memory operand.
    Mem,
    /// A digit: an input tied to (sharing the register of) that output.
    Tied(u32),
}

impl Class {
    /// The width in bits of a register of this class (0 for immediates
    /// and memory).
    pub fn bits(self) -> u32 {
        match self {
            Class::Pred => 1,
            Class::B8 => 8,
            Class::B16 => 16,
            Class::B32 | Class::F32 => 32,
            Class::B64 | Class::F64 => 64,
            Class::Imm | Class::Mem | Class::Tied(_) => 0,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Constraint {
    pub output: bool,
    /// `*`: passed by address (an indirect output or a memory input).
    pub indirect: bool,
    /// `&`: an output written before all inputs are read.
    pub early_clobber: bool,
    pub class: Class,
}

#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Constraints {
    /// By operand number: `operands[n]` describes `$n`.
    pub operands: Vec<Constraint>,
    /// `~{memory}` gives `memory`.
    pub clobbers: Vec<String>,
}

impl Constraints {
    pub fn parse(text: &str) -> Result<Constraints, PtxError> {
        let mut out = Constraints::default();
        let err = |message: String| PtxError { line: 0, message };
        for part in text.split(',').filter(|p| !p.is_empty()) {
            if let Some(c) = part.strip_prefix('~') {
                let name = c.trim_start_matches('{').trim_end_matches('}');
                out.clobbers.push(name.to_string());
                continue;
            }
            let mut rest = part;
            let mut take = |prefix: char| {
                let had = rest.starts_with(prefix);
                if had {
                    rest = &rest[1..];
                }
                had
            };
            let output = take('=');
            let early_clobber = take('&');
            let indirect = take('*');
            let class = match rest {
                "b" => Class::Pred,
                "c" => Class::B8,
                "h" => Class::B16,
                "r" => Class::B32,
                "l" | "N" => Class::B64,
                "f" => Class::F32,
                "d" => Class::F64,
                "n" | "i" => Class::Imm,
                "m" => Class::Mem,
                digits if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    Class::Tied(
                        digits
                            .parse()
                            .map_err(|_| err(format!("bad tie `{part}`")))?,
                    )
                }
                _ => return Err(err(format!("unsupported asm constraint `{part}`"))),
            };
            out.operands.push(Constraint {
                output,
                indirect,
                early_clobber,
                class,
            });
        }
        for (n, c) in out.operands.iter().enumerate() {
            if let Class::Tied(to) = c.class {
                let target = out.operands.get(to as usize);
                if c.output || !target.is_some_and(|t| t.output) {
                    return Err(err(format!(
                        "asm operand {n} is tied to {to}, which is not an output"
                    )));
                }
            }
        }
        Ok(out)
    }

    pub fn is_output(&self, n: u32) -> bool {
        self.operands.get(n as usize).is_some_and(|c| c.output)
    }

    /// The register class of `$n`, looking through ties.
    pub fn class(&self, n: u32) -> Option<Class> {
        match self.operands.get(n as usize)?.class {
            Class::Tied(to) => self.class(to),
            c => Some(c),
        }
    }

    /// The input tied to output `n`, whose value the output starts with.
    pub fn tied_input(&self, n: u32) -> Option<u32> {
        self.operands
            .iter()
            .position(|c| c.class == Class::Tied(n))
            .map(|i| i as u32)
    }

    /// Where the value of `$n` comes from at the call: `Result(k)` is the
    /// k-th field of the call's result (a struct when there are several
    /// outputs), `Arg(k)` the k-th argument (inputs and indirect outputs,
    /// in order).
    pub fn binding(&self, n: u32) -> Option<Binding> {
        let n = n as usize;
        let c = self.operands.get(n)?;
        let direct_output = |c: &Constraint| c.output && !c.indirect;
        let before = &self.operands[..n];
        Some(if direct_output(c) {
            Binding::Result(before.iter().filter(|c| direct_output(c)).count() as u32)
        } else {
            Binding::Arg(before.iter().filter(|c| !direct_output(c)).count() as u32)
        })
    }

    pub fn clobbers_memory(&self) -> bool {
        self.clobbers.iter().any(|c| c == "memory")
    }
}

/// See [`Constraints::binding`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Binding {
    Result(u32),
    Arg(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_inputs_ties_and_clobbers() {
        let c = Constraints::parse("=r,=l,r,l,h,f,d,n,~{memory}").unwrap();
        assert_eq!(c.operands.len(), 8);
        assert!(c.is_output(0) && c.is_output(1) && !c.is_output(2));
        let classes: Vec<_> = (0..8).map(|n| c.class(n).unwrap()).collect();
        use Class::*;
        assert_eq!(classes, [B32, B64, B32, B64, B16, F32, F64, Imm]);
        assert!(c.clobbers_memory());
        // Two outputs are result fields 0 and 1; $2 is the first argument.
        assert_eq!(c.binding(1), Some(Binding::Result(1)));
        assert_eq!(c.binding(2), Some(Binding::Arg(0)));
        assert_eq!(c.binding(7), Some(Binding::Arg(5)));
    }

    #[test]
    fn tied_inputs_take_their_outputs_class() {
        // `"+r"(leader), "+r"(is_leader) : "r"(mask)` as clang lowers it.
        let c = Constraints::parse("=r,=r,r,0,1").unwrap();
        assert_eq!(c.tied_input(0), Some(3));
        assert_eq!(c.tied_input(1), Some(4));
        assert_eq!(c.class(4), Some(Class::B32));
        assert_eq!(c.binding(3), Some(Binding::Arg(1)));
        assert!(Constraints::parse("=r,r,1").is_err());
        assert!(Constraints::parse("=q").is_err());
        assert_eq!(Constraints::parse("").unwrap(), Constraints::default());
    }
}
