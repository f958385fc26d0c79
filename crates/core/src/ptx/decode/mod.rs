//! From a parsed statement to a typed [`Op`]: the opcode's base picks the
//! form, its modifiers are consumed one by one, and any modifier or
//! operand shape left over is an error naming the instruction, so a form
//! we do not model is never read as one we do.

mod alu;
mod mem;
mod sync;

use super::inst::{Address, Inst, Op, Operand, PredOperand, Space, Ty};
use super::parse::{RawOperand, Statement};
use super::PtxError;

/// State spaces by modifier (`.shared::cta` is `.shared`).
pub(super) const SPACES: &[(&str, Space)] = &[
    ("global", Space::Global),
    ("shared", Space::Shared),
    ("shared::cta", Space::Shared),
    ("shared::cluster", Space::SharedCluster),
    ("local", Space::Local),
    ("const", Space::Const),
    ("param", Space::Param),
    ("param::entry", Space::Param),
    ("param::func", Space::Param),
];

/// Decodes one statement.
pub fn decode(s: &Statement) -> Result<Inst, PtxError> {
    let mut m = Mods::new(s);
    let a = Args { s };
    let op = match m.base {
        "mov" => alu::mov(&mut m, &a)?,
        "cvta" => alu::cvta(&mut m, &a)?,
        "cvt" => alu::cvt(&mut m, &a)?,
        "add" | "sub" | "mul" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" => {
            alu::binary(&mut m, &a)?
        }
        "mad" | "fma" => alu::mad(&mut m, &a)?,
        "not" | "neg" | "abs" | "brev" | "popc" | "clz" => alu::unary(&mut m, &a)?,
        "selp" => alu::selp(&mut m, &a)?,
        "setp" => alu::setp(&mut m, &a)?,
        "prmt" => alu::prmt(&mut m, &a)?,
        "bfe" | "bfi" => alu::bitfield(&mut m, &a)?,
        "lop3" => alu::lop3(&mut m, &a)?,
        "shf" => alu::shf(&mut m, &a)?,
        "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" => alu::approx(&mut m, &a)?,
        "ld" => mem::ld(&mut m, &a)?,
        "st" => mem::st(&mut m, &a)?,
        "atom" | "red" => mem::atom(&mut m, &a)?,
        "fence" | "membar" => mem::fence(&mut m)?,
        "cp" => mem::cp_async(&mut m, &a)?,
        "shfl" => sync::shfl(&mut m, &a)?,
        "vote" => sync::vote(&mut m, &a)?,
        "match" => sync::match_sync(&mut m, &a)?,
        "redux" => sync::redux(&mut m, &a)?,
        "elect" => sync::elect(&mut m, &a)?,
        "bar" | "barrier" => sync::bar(&mut m, &a)?,
        "nanosleep" => sync::nanosleep(&mut m, &a)?,
        "trap" => {
            a.count(0)?;
            Op::Trap
        }
        _ => return Err(a.unsupported()),
    };
    m.finish()?;
    Ok(Inst {
        guard: s.guard,
        op,
        opcode: s.opcode.clone(),
        line: s.line,
    })
}

/// The modifiers after an opcode's base, consumed as the form reads them.
pub(super) struct Mods<'s> {
    s: &'s Statement,
    pub base: &'s str,
    rest: Vec<&'s str>,
}

impl<'s> Mods<'s> {
    fn new(s: &'s Statement) -> Self {
        let mut parts = s.opcode.split('.');
        let base = parts.next().unwrap_or_default();
        Mods {
            s,
            base,
            rest: parts.collect(),
        }
    }

    /// Removes `name` if present.
    pub fn take(&mut self, name: &str) -> bool {
        match self.rest.iter().position(|&m| m == name) {
            Some(i) => {
                self.rest.remove(i);
                true
            }
            None => false,
        }
    }

    /// Removes the first of `table`'s names present, giving its value.
    pub fn pick<T: Copy>(&mut self, table: &[(&str, T)]) -> Option<T> {
        table
            .iter()
            .find(|(name, _)| self.rest.contains(name))
            .map(|&(name, v)| {
                self.take(name);
                v
            })
    }

    /// Like [`Self::pick`], for a modifier the form cannot do without.
    pub fn require<T: Copy>(&mut self, table: &[(&str, T)]) -> Result<T, PtxError> {
        self.pick(table).ok_or_else(|| self.unsupported())
    }

    /// Removes and returns the modifiers `keep` accepts, in order.
    pub fn take_where(&mut self, keep: impl Fn(&str) -> bool) -> Vec<&'s str> {
        let (taken, left) = self.rest.iter().partition(|m| keep(m));
        self.rest = left;
        taken
    }

    /// Removes every type suffix, in order (`cvt.f32.s32` gives both).
    pub fn types(&mut self) -> Vec<Ty> {
        self.take_where(|m| Ty::parse(m).is_some())
            .into_iter()
            .filter_map(Ty::parse)
            .collect()
    }

    /// The one type suffix the form takes, which must be one of `allowed`.
    pub fn ty(&mut self, allowed: &[Ty]) -> Result<Ty, PtxError> {
        match self.types()[..] {
            [t] if allowed.contains(&t) => Ok(t),
            _ => Err(self.unsupported()),
        }
    }

    /// `.v2`/`.v4`/`.v8`: the vector length, 1 without.
    pub fn vec(&mut self) -> u8 {
        self.pick(&[("v2", 2), ("v4", 4), ("v8", 8)]).unwrap_or(1)
    }

    pub fn unsupported(&self) -> PtxError {
        unsupported(self.s)
    }

    fn finish(self) -> Result<(), PtxError> {
        match self.rest.first() {
            None => Ok(()),
            Some(m) => Err(PtxError {
                line: self.s.line,
                message: format!(
                    "unsupported modifier `.{m}` in PTX instruction `{}`",
                    self.s.opcode
                ),
            }),
        }
    }
}

fn unsupported(s: &Statement) -> PtxError {
    PtxError {
        line: s.line,
        message: format!("unsupported PTX instruction `{}`", s.opcode),
    }
}

/// The operands of a statement, read in the shapes the form expects.
pub(super) struct Args<'s> {
    s: &'s Statement,
}

impl Args<'_> {
    pub fn len(&self) -> usize {
        self.s.operands.len()
    }

    pub fn unsupported(&self) -> PtxError {
        unsupported(self.s)
    }

    fn shape_error(&self, what: &str, i: usize) -> PtxError {
        PtxError {
            line: self.s.line,
            message: format!(
                "operand {} of PTX instruction `{}` should be {what}",
                i + 1,
                self.s.opcode
            ),
        }
    }

    /// Exactly `n` operands.
    pub fn count(&self, n: usize) -> Result<(), PtxError> {
        self.count_in(n, n)
    }

    pub fn count_in(&self, min: usize, max: usize) -> Result<(), PtxError> {
        if (min..=max).contains(&self.len()) {
            return Ok(());
        }
        let wanted = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        Err(PtxError {
            line: self.s.line,
            message: format!(
                "PTX instruction `{}` takes {wanted} operands, not {}",
                self.s.opcode,
                self.len()
            ),
        })
    }

    fn raw(&self, i: usize) -> Result<&RawOperand, PtxError> {
        self.s
            .operands
            .get(i)
            .ok_or_else(|| self.shape_error("present", i))
    }

    /// A plain operand: a register, immediate, special register or `_`.
    pub fn one(&self, i: usize) -> Result<Operand, PtxError> {
        match self.raw(i)? {
            RawOperand::One(o) => Ok(*o),
            _ => Err(self.shape_error("a register or an immediate", i)),
        }
    }

    /// `p` or `!p`.
    pub fn pred(&self, i: usize) -> Result<PredOperand, PtxError> {
        match self.raw(i)? {
            RawOperand::One(o) => Ok(PredOperand {
                value: *o,
                negated: false,
            }),
            RawOperand::Not(o) => Ok(PredOperand {
                value: *o,
                negated: true,
            }),
            _ => Err(self.shape_error("a predicate", i)),
        }
    }

    pub fn addr(&self, i: usize) -> Result<Address, PtxError> {
        match self.raw(i)? {
            RawOperand::Addr(a) => Ok(*a),
            _ => Err(self.shape_error("an address `[...]`", i)),
        }
    }

    /// `{a, b, ...}` of exactly `n`, or a plain operand when `n` is 1.
    pub fn vector(&self, i: usize, n: u8) -> Result<Vec<Operand>, PtxError> {
        match self.raw(i)? {
            RawOperand::Vector(v) if v.len() == usize::from(n) => Ok(v.clone()),
            RawOperand::One(o) if n == 1 => Ok(vec![*o]),
            _ => Err(self.shape_error(&format!("a vector of {n}"), i)),
        }
    }

    /// `d` or `d|p`.
    pub fn with_pred(&self, i: usize) -> Result<(Operand, Option<Operand>), PtxError> {
        match self.raw(i)? {
            RawOperand::One(o) => Ok((*o, None)),
            RawOperand::Pair(d, p) => Ok((*d, Some(*p))),
            _ => Err(self.shape_error("a register or `d|p`", i)),
        }
    }

    /// An operand that must be an immediate (`lop3`'s table).
    pub fn imm(&self, i: usize) -> Result<u64, PtxError> {
        match self.one(i)? {
            Operand::Imm(v) => Ok(v),
            _ => Err(self.shape_error("an immediate", i)),
        }
    }

    /// The raw shape, for forms that accept several (`mov` packing).
    pub fn shape(&self, i: usize) -> Result<&RawOperand, PtxError> {
        self.raw(i)
    }
}
