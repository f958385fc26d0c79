//! Statements of an asm body: `{ }` scopes, `.reg` declarations and
//! instructions with their guard and operands, names resolved to asm
//! operands, declared registers and special registers. [`super::decode`]
//! then reads each instruction's opcode.

use super::inst::{Address, Operand, PredOperand, Reg, Ty};
use super::lex::{Tok, Token};
use super::sreg::Special;
use super::{Local, PtxError};
use std::collections::HashMap;

/// An operand before the opcode says what it must be.
#[derive(Clone, PartialEq, Debug)]
pub enum RawOperand {
    One(Operand),
    /// `!p`.
    Not(Operand),
    /// `{a, b, ...}`.
    Vector(Vec<Operand>),
    /// `[base+offset]`.
    Addr(Address),
    /// `d|p`: a value and a predicate written together.
    Pair(Operand, Operand),
}

/// One instruction as written: `@!p opcode a, b;`.
#[derive(Clone, PartialEq, Debug)]
pub struct Statement {
    pub guard: Option<PredOperand>,
    pub opcode: String,
    pub operands: Vec<RawOperand>,
    pub line: u32,
}

/// The instructions of a body and the registers it declares.
pub fn statements(tokens: &[Token]) -> Result<(Vec<Statement>, Vec<Local>), PtxError> {
    let mut p = Parser {
        tokens,
        at: 0,
        scopes: vec![HashMap::new()],
        locals: Vec::new(),
    };
    let mut out = Vec::new();
    while let Some(tok) = p.peek() {
        match tok {
            Tok::Punct('{') => {
                p.at += 1;
                p.scopes.push(HashMap::new());
            }
            Tok::Punct('}') => {
                p.at += 1;
                if p.scopes.len() == 1 {
                    return Err(p.error("`}` without `{`".into()));
                }
                p.scopes.pop();
            }
            Tok::Punct(';') => p.at += 1,
            Tok::Word(w) if w == ".reg" => p.declaration()?,
            Tok::Word(w) if w.starts_with('.') => {
                return Err(p.error(format!("unsupported directive `{w}`")))
            }
            _ => out.push(p.statement()?),
        }
    }
    if p.scopes.len() > 1 {
        return Err(p.error("`{` without `}`".into()));
    }
    Ok((out, p.locals))
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    /// Names visible in each open `{ }`, innermost last.
    scopes: Vec<HashMap<String, u32>>,
    locals: Vec<Local>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|t| &t.tok)
    }

    fn line(&self) -> u32 {
        self.tokens
            .get(self.at)
            .or(self.tokens.last())
            .map_or(1, |t| t.line)
    }

    fn error(&self, message: String) -> PtxError {
        PtxError {
            line: self.line(),
            message,
        }
    }

    fn next(&mut self) -> Result<Tok, PtxError> {
        let t = self
            .tokens
            .get(self.at)
            .ok_or_else(|| self.error("unexpected end of asm".into()))?;
        self.at += 1;
        Ok(t.tok.clone())
    }

    fn eat(&mut self, c: char) -> bool {
        let here = self.peek() == Some(&Tok::Punct(c));
        if here {
            self.at += 1;
        }
        here
    }

    fn expect(&mut self, c: char) -> Result<(), PtxError> {
        if self.eat(c) {
            return Ok(());
        }
        let found = self.peek().map_or("the end".to_string(), describe);
        Err(self.error(format!("expected `{c}`, found {found}")))
    }

    fn word(&mut self) -> Result<String, PtxError> {
        match self.next()? {
            Tok::Word(w) => Ok(w),
            other => {
                self.at -= 1;
                Err(self.error(format!("expected a name, found {}", describe(&other))))
            }
        }
    }

    /// `.reg .TYPE name, name<N>, ...;`
    fn declaration(&mut self) -> Result<(), PtxError> {
        self.at += 1;
        let ty_word = self.word()?;
        let ty = ty_word
            .strip_prefix('.')
            .and_then(Ty::parse)
            .ok_or_else(|| self.error(format!("unsupported register type `{ty_word}`")))?;
        loop {
            let name = self.word()?;
            if self.eat('<') {
                let Tok::Int(n) = self.next()? else {
                    return Err(self.error("expected a register count after `<`".into()));
                };
                self.expect('>')?;
                for k in 0..n {
                    self.declare(format!("{name}{k}"), ty);
                }
            } else {
                self.declare(name, ty);
            }
            if !self.eat(',') {
                return self.expect(';');
            }
        }
    }

    fn declare(&mut self, name: String, ty: Ty) {
        let id = self.locals.len() as u32;
        self.locals.push(Local {
            name: name.clone(),
            ty,
        });
        self.scopes.last_mut().expect("a scope").insert(name, id);
    }

    fn statement(&mut self) -> Result<Statement, PtxError> {
        let line = self.line();
        let guard = if self.eat('@') {
            let negated = self.eat('!');
            Some(PredOperand {
                value: self.operand_value()?,
                negated,
            })
        } else {
            None
        };
        let opcode = self.word()?;
        let mut operands = Vec::new();
        if !self.eat(';') {
            loop {
                operands.push(self.operand()?);
                if self.eat(';') {
                    break;
                }
                self.expect(',')?;
            }
        }
        Ok(Statement {
            guard,
            opcode,
            operands,
            line,
        })
    }

    fn operand(&mut self) -> Result<RawOperand, PtxError> {
        if self.eat('!') {
            return Ok(RawOperand::Not(self.operand_value()?));
        }
        if self.eat('{') {
            let mut parts = vec![self.operand_value()?];
            while self.eat(',') {
                parts.push(self.operand_value()?);
            }
            self.expect('}')?;
            return Ok(RawOperand::Vector(parts));
        }
        if self.eat('[') {
            let base = self.operand_value()?;
            let offset = if self.eat('+') {
                self.signed_int()?
            } else if self.eat('-') {
                self.signed_int()?.wrapping_neg()
            } else {
                0
            };
            self.expect(']')?;
            return Ok(RawOperand::Addr(Address { base, offset }));
        }
        let first = self.operand_value()?;
        if self.eat('|') {
            return Ok(RawOperand::Pair(first, self.operand_value()?));
        }
        Ok(RawOperand::One(first))
    }

    fn signed_int(&mut self) -> Result<i64, PtxError> {
        let negative = self.eat('-');
        match self.next()? {
            Tok::Int(v) if negative => Ok((v as i64).wrapping_neg()),
            Tok::Int(v) => Ok(v as i64),
            other => {
                self.at -= 1;
                Err(self.error(format!("expected an offset, found {}", describe(&other))))
            }
        }
    }

    /// A register, asm operand, special register, immediate or `_`.
    fn operand_value(&mut self) -> Result<Operand, PtxError> {
        if self.eat('-') {
            return match self.next()? {
                Tok::Int(v) => Ok(Operand::Imm(v.wrapping_neg())),
                Tok::Float(bits) => Ok(Operand::Imm(negate_float(bits))),
                other => Err(self.error(format!("expected a number, found {}", describe(&other)))),
            };
        }
        match self.next()? {
            Tok::Arg(n) => Ok(Operand::Reg(Reg::Arg(n))),
            Tok::Int(v) | Tok::Float(v) => Ok(Operand::Imm(v)),
            Tok::Word(name) => self.resolve(&name),
            other => {
                self.at -= 1;
                Err(self.error(format!("expected an operand, found {}", describe(&other))))
            }
        }
    }

    fn resolve(&self, name: &str) -> Result<Operand, PtxError> {
        if let Some(&id) = self.scopes.iter().rev().find_map(|s| s.get(name)) {
            return Ok(Operand::Reg(Reg::Local(id)));
        }
        if name == "_" {
            return Ok(Operand::Sink);
        }
        if let Some(s) = name.strip_prefix('%').and_then(Special::parse) {
            return Ok(Operand::Special(s));
        }
        Err(self.error(format!("unknown register `{name}`")))
    }
}

/// Flips the sign bit of a float literal (single if it fits 32 bits).
fn negate_float(bits: u64) -> u64 {
    if bits <= u64::from(u32::MAX) {
        bits ^ 0x8000_0000
    } else {
        bits ^ (1 << 63)
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Arg(n) => format!("`${n}`"),
        Tok::Int(v) => format!("`{v}`"),
        Tok::Float(b) => format!("the float `{b:#x}`"),
        Tok::Punct(c) => format!("`{c}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::lex::lex;
    use super::*;

    fn parse(text: &str) -> Result<(Vec<Statement>, Vec<Local>), PtxError> {
        statements(&lex(text)?)
    }

    #[test]
    fn scopes_declarations_and_operands() {
        let (s, locals) =
            parse("{ .reg .pred p; .reg .b32 r<2>;\n @!p mov.b32 r1, -1; ld.u32 {$0, _}, [$1-8]; elect.sync $2|p, 0xffffffff; }")
                .unwrap();
        assert_eq!(
            locals.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            ["p", "r0", "r1"]
        );
        assert_eq!(locals[0].ty, Ty::Pred);
        let p = Operand::Reg(Reg::Local(0));
        assert_eq!(
            s[0].guard,
            Some(PredOperand {
                value: p,
                negated: true
            })
        );
        assert_eq!(s[0].line, 2);
        assert_eq!(
            s[0].operands,
            [
                RawOperand::One(Operand::Reg(Reg::Local(2))),
                RawOperand::One(Operand::Imm(u64::MAX))
            ]
        );
        assert_eq!(
            s[1].operands[1],
            RawOperand::Addr(Address {
                base: Operand::Reg(Reg::Arg(1)),
                offset: -8
            })
        );
        assert_eq!(
            s[1].operands[0],
            RawOperand::Vector(vec![Operand::Reg(Reg::Arg(0)), Operand::Sink])
        );
        assert_eq!(
            s[2].operands[0],
            RawOperand::Pair(Operand::Reg(Reg::Arg(2)), p)
        );
    }

    #[test]
    fn inner_scopes_shadow_and_end() {
        let (s, _) =
            parse("{ .reg .b32 t; { .reg .b32 t; mov.b32 t, 1; } mov.b32 t, 2; }").unwrap();
        let dst = |i: usize| s[i].operands[0].clone();
        assert_eq!(dst(0), RawOperand::One(Operand::Reg(Reg::Local(1))));
        assert_eq!(dst(1), RawOperand::One(Operand::Reg(Reg::Local(0))));
        let err = parse("{ { .reg .b32 t; } mov.b32 t, 1; }").unwrap_err();
        assert!(err.message.contains("unknown register `t`"), "{err}");
        assert!(parse("{ mov.b32 $0, 1;").is_err());
        assert!(parse("mov.b32 $0, 1; }").is_err());
        assert!(parse(".pragma \"nounroll\";").is_err());
    }
}
