//! A readable dump of our IR, for `warpcheck dump-ir` and test failures.

use super::*;
use std::fmt::{self, Write};

impl Module {
    /// Renders an operand the way LLVM would name it.
    pub fn render_value(&self, v: Value) -> String {
        match v {
            Value::Inst(i) => format!("%{}", i.0),
            Value::Arg(a) => format!("%arg{a}"),
            Value::Global(g) => format!("@{}", self.global(g).name),
            Value::Func(f) => format!("@{}", self.func(f).name),
            Value::Opaque => "<opaque>".into(),
            Value::Const(c) => match self.konst(c) {
                Const::Int { .. } => self.konst(c).as_i64().unwrap_or(0).to_string(),
                Const::Float { value, .. } => format!("{value:?}"),
                Const::Null(_) => "null".into(),
                Const::Undef(_) => "undef".into(),
                Const::Poison(_) => "poison".into(),
                Const::Zero(_) => "zeroinitializer".into(),
                Const::Aggregate { elems, .. } => format!("{{{} elems}}", elems.len()),
                Const::Expr { op, operands, .. } => {
                    let ops: Vec<_> = operands.iter().map(|&o| self.render_value(o)).collect();
                    format!("{}({})", op.mnemonic(), ops.join(", "))
                }
                Const::Other { text, .. } => text.clone(),
            },
        }
    }

    /// A short label for a value in explanations: `%cmp`, or `%12 (icmp)`
    /// when the IR dropped the name.
    pub fn value_label(&self, func: &Function, v: Value) -> String {
        match v {
            Value::Inst(i) => {
                let inst = func.inst(i);
                match &inst.name {
                    // Built by hand: `format!` costs several times more, and
                    // explanations label every step of every chain.
                    Some(n) => ["%", n].concat(),
                    None => ["%", &i.0.to_string(), " (", inst.op.mnemonic(), ")"].concat(),
                }
            }
            Value::Arg(a) => match &func.params[a as usize].name {
                Some(n) => n.clone(),
                None => format!("parameter {}", a + 1),
            },
            _ => self.render_value(v),
        }
    }

    /// An inline-asm callee as LLVM prints it: `asm sideeffect "text", "constraints"`.
    pub fn render_asm(&self, asm: &InlineAsm) -> String {
        let flags = [
            (asm.side_effects, " sideeffect"),
            (asm.align_stack, " alignstack"),
            (asm.can_unwind, " unwind"),
            (asm.convergent, " convergent"),
        ];
        let flags: String = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
        format!(
            "asm{flags} {:?}, {:?}",
            asm.text.as_str(),
            asm.constraints.as_str()
        )
    }

    pub fn render_function(&self, f: &Function) -> Result<String, fmt::Error> {
        let mut out = String::new();
        let kind = if f.is_kernel { "kernel " } else { "" };
        if f.is_declaration {
            writeln!(out, "declare {}", f.name)?;
            return Ok(out);
        }
        writeln!(out, "{kind}{} ; {}", f.name, f.demangled)?;
        for b in f.block_ids() {
            writeln!(out, "bb{}:", b.0)?;
            for &i in &f.blocks[b.index()].insts {
                let inst = f.inst(i);
                let ops: Vec<_> = inst
                    .operands
                    .iter()
                    .map(|&o| self.render_value(o))
                    .collect();
                let callee = match inst.callee() {
                    Some(Callee::Direct(c)) => format!(" @{}", self.func(c).name),
                    Some(Callee::InlineAsm(a)) => format!(" {}", self.render_asm(self.asm(a))),
                    _ => String::new(),
                };
                let succ: Vec<_> = inst
                    .successors()
                    .iter()
                    .map(|s| format!("bb{}", s.0))
                    .collect();
                let line = inst
                    .loc
                    .map(|l| format!("  ; line {}", self.loc(l).pos.line))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  %{} = {}{} {} {}{}",
                    i.0,
                    inst.op.mnemonic(),
                    callee,
                    ops.join(", "),
                    succ.join(", "),
                    line
                )?;
            }
        }
        Ok(out)
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for func in &self.funcs {
            f.write_str(&self.render_function(func)?)?;
        }
        Ok(())
    }
}
