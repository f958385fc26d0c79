//! Tokens of an asm body in LLVM's spelling: `$n` (or `${n}`) names an
//! operand and `$$` is a literal `$`; everything else is PTX.

use super::PtxError;

#[derive(Clone, PartialEq, Debug)]
pub enum Tok {
    /// An opcode with its modifiers (`ld.global.u32`), a directive
    /// (`.reg`), a type (`.u32`), or a register name (`%laneid`, `p`).
    Word(String),
    /// `$n`: an asm operand.
    Arg(u32),
    /// An integer literal's bits.
    Int(u64),
    /// `0fXXXXXXXX` (single) or `0dXXXXXXXXXXXXXXXX` (double) bits.
    Float(u64),
    Punct(char),
}

#[derive(Clone, PartialEq, Debug)]
pub struct Token {
    pub tok: Tok,
    /// 1-based line within the asm text.
    pub line: u32,
}

const PUNCT: &str = "{}[](),;|@!+-<>:";

/// Splits an asm text into tokens, dropping whitespace and comments.
pub fn lex(text: &str) -> Result<Vec<Token>, PtxError> {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
    };
    let mut out = Vec::new();
    while let Some(tok) = lexer.next()? {
        out.push(Token {
            tok,
            line: lexer.line,
        });
    }
    Ok(out)
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: u32,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn error(&self, message: String) -> PtxError {
        PtxError {
            line: self.line,
            message,
        }
    }

    fn skip_blanks(&mut self) -> Result<(), PtxError> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some('\n'), _) => {
                    self.line += 1;
                    self.at += 1;
                }
                (Some(c), _) if c.is_whitespace() => self.at += 1,
                (Some('/'), Some('/')) => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                (Some('/'), Some('*')) => {
                    self.at += 2;
                    loop {
                        match (self.peek(0), self.peek(1)) {
                            (Some('*'), Some('/')) => break self.at += 2,
                            (Some(c), _) => {
                                self.line += u32::from(c == '\n');
                                self.at += 1;
                            }
                            (None, _) => return Err(self.error("unterminated comment".into())),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn next(&mut self) -> Result<Option<Tok>, PtxError> {
        self.skip_blanks()?;
        let Some(c) = self.peek(0) else {
            return Ok(None);
        };
        if c == '$' && self.peek(1) != Some('$') {
            return self.operand().map(Some);
        }
        if c.is_ascii_digit() {
            return self.number().map(Some);
        }
        if c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '%' | '$') {
            return Ok(Some(Tok::Word(self.word())));
        }
        if PUNCT.contains(c) {
            self.at += 1;
            return Ok(Some(Tok::Punct(c)));
        }
        Err(self.error(format!("unexpected character `{c}`")))
    }

    /// `$n` or `${n}` / `${n:modifier}` (the modifier changes only how
    /// LLVM prints the operand, not which one it is).
    fn operand(&mut self) -> Result<Tok, PtxError> {
        self.at += 1;
        let braced = self.peek(0) == Some('{');
        if braced {
            self.at += 1;
        }
        let start = self.at;
        while self.peek(0).is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let digits: String = self.chars[start..self.at].iter().collect();
        let n: u32 = digits
            .parse()
            .map_err(|_| self.error("`$` not followed by an operand number".into()))?;
        if braced {
            while self.peek(0).is_some_and(|c| c != '}') {
                self.at += 1;
            }
            if self.peek(0).is_none() {
                return Err(self.error("unterminated `${`".into()));
            }
            self.at += 1;
        }
        Ok(Tok::Arg(n))
    }

    /// Identifier characters, dots and `::` (`ld.global.L1::no_allocate`);
    /// `$$` is a literal `$` (`__$temp1`).
    fn word(&mut self) -> String {
        let mut s = String::new();
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some('$'), Some('$')) => {
                    s.push('$');
                    self.at += 2;
                }
                (Some(':'), Some(':')) => {
                    s.push_str("::");
                    self.at += 2;
                }
                (Some(c), _) if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%') => {
                    s.push(c);
                    self.at += 1;
                }
                _ => return s,
            }
        }
    }

    /// Decimal, `0x` hex, `0b` binary, leading-zero octal, with an optional
    /// `U` suffix; `0f`/`0d` hexadecimal floats.
    fn number(&mut self) -> Result<Tok, PtxError> {
        let start = self.at;
        while self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
        {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        let bad = || self.error(format!("bad number `{text}`"));
        let lower = text.to_ascii_lowercase();
        let hex = |digits: &str, n: usize| {
            (digits.len() == n)
                .then(|| u64::from_str_radix(digits, 16).ok())
                .flatten()
        };
        for (prefix, digits) in [("0f", 8), ("0d", 16)] {
            if let Some(bits) = lower.strip_prefix(prefix).and_then(|d| hex(d, digits)) {
                return Ok(Tok::Float(bits));
            }
        }
        if lower.contains('.') {
            let v: f64 = lower.parse().map_err(|_| bad())?;
            return Ok(Tok::Float(v.to_bits()));
        }
        let digits = lower.strip_suffix('u').unwrap_or(&lower);
        let value = if let Some(h) = digits.strip_prefix("0x") {
            u64::from_str_radix(h, 16)
        } else if let Some(b) = digits.strip_prefix("0b") {
            u64::from_str_radix(b, 2)
        } else if digits.len() > 1 && digits.starts_with('0') {
            u64::from_str_radix(&digits[1..], 8)
        } else {
            digits.parse()
        };
        value.map(Tok::Int).map_err(|_| bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        lex(text).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn llvm_operands_words_and_numbers() {
        let w = |s: &str| Tok::Word(s.into());
        assert_eq!(
            toks("ld.global.L1::no_allocate.v2.u32 {$0,${1:r}}, [$2+8];"),
            vec![
                w("ld.global.L1::no_allocate.v2.u32"),
                Tok::Punct('{'),
                Tok::Arg(0),
                Tok::Punct(','),
                Tok::Arg(1),
                Tok::Punct('}'),
                Tok::Punct(','),
                Tok::Punct('['),
                Tok::Arg(2),
                Tok::Punct('+'),
                Tok::Int(8),
                Tok::Punct(']'),
                Tok::Punct(';'),
            ]
        );
        // `$$` is a literal dollar inside a name.
        assert_eq!(toks(".reg .pred __$$temp1;")[2], w("__$temp1"));
        assert_eq!(toks("0x1F 017 0b101 7U"), [31, 15, 5, 7].map(Tok::Int));
        assert_eq!(
            toks("0f3F800000 0d3FF0000000000000"),
            vec![
                Tok::Float(u64::from(1f32.to_bits())),
                Tok::Float(1f64.to_bits())
            ]
        );
    }

    #[test]
    fn lines_and_comments() {
        let t = lex("{\n\t// note\n\t mov.u32 $0, 1; /* a\nb */ }").unwrap();
        assert_eq!(t[1].tok, Tok::Word("mov.u32".into()));
        assert_eq!(t[1].line, 3);
        assert_eq!(t.last().unwrap().line, 4);
        assert!(lex("mov.u32 $0, #1;").is_err());
        assert!(lex("/* open").is_err());
    }
}
