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

    /// The IR's own label for a value: `%cmp`, or `%12 (icmp)` when the
    /// IR dropped the name. For output that talks about the IR itself
    /// (`--compare-uniformity` against LLVM's printout, and the checks
    /// that read a loop counter's variable from clang's phi names, where
    /// `.in` marks a rotated loop's value before the step); users read
    /// [`Module::value_label`].
    /// A loop counter's name: the source variable the debug info or the
    /// source text names it after, else its IR name ([`Self::ir_label`],
    /// whose `%s.in` and `%k.027` forms the checks read).
    pub fn counter_label(&self, func: &Function, phi: InstId) -> String {
        match func.source_names.get(&phi) {
            Some(n) if func.inst(phi).name.is_none() => n.clone(),
            _ => self.ir_label(func, Value::Inst(phi)),
        }
    }

    pub fn ir_label(&self, func: &Function, v: Value) -> String {
        match v {
            Value::Inst(i) => {
                let inst = func.inst(i);
                match &inst.name {
                    // Built by hand: `format!` costs several times more.
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

    /// A value as the user wrote it, for explanations, per-lane
    /// expressions and the report: the source variable debug info names
    /// it after (`i`), else what it is and where (`the comparison at 12:7`); never an IR name (`%add5`) or a mangled symbol.
    pub fn value_label(&self, func: &Function, v: Value) -> String {
        match v {
            Value::Inst(i) => match func.source_names.get(&i) {
                Some(n) => n.clone(),
                None => self.describe_inst(func, i),
            },
            Value::Arg(a) => match &func.params[a as usize].name {
                Some(n) => n.clone(),
                None => format!("parameter {}", a + 1),
            },
            Value::Global(g) => self.global_description(g),
            Value::Func(f) => format!("function {}", self.func(f).short_name()),
            Value::Const(c) => match self.konst(c) {
                // A constant expression over a global (`addrspacecast
                // (@_ZZ…E2As)`) is that global to the user.
                Const::Expr { operands, .. } => operands
                    .iter()
                    .map(|&o| self.value_label(func, o))
                    .find(|l| l.starts_with("the "))
                    .unwrap_or_else(|| "a constant".into()),
                _ => self.render_value(v),
            },
            Value::Opaque => "an unknown value".into(),
        }
    }

    /// An unnamed instruction by what it computes and its line. A cast
    /// is its operand to the user (`(long)i` is still `i`).
    fn describe_inst(&self, func: &Function, i: InstId) -> String {
        let inst = func.inst(i);
        if inst.op == Opcode::Phi {
            if let Some(v) = inst.name.as_deref().and_then(variable_of_phi) {
                return v.to_string();
            }
        }
        let what = match inst.op {
            Opcode::SExt
            | Opcode::ZExt
            | Opcode::Trunc
            | Opcode::BitCast
            | Opcode::AddrSpaceCast
            | Opcode::Freeze => {
                if let Some(&o) = inst.operands.first() {
                    return self.value_label(func, o);
                }
                "the conversion"
            }
            Opcode::ICmp | Opcode::FCmp => "the comparison",
            Opcode::Load => "the load",
            Opcode::GetElementPtr => "the address",
            Opcode::Phi => "the merged value",
            Opcode::Select => "the selected value",
            Opcode::Call => "the call",
            Opcode::AtomicRmw | Opcode::CmpXchg => "the atomic",
            // `a && b` and `a || b` on conditions are `and`/`or` of `i1`s.
            Opcode::And | Opcode::Or | Opcode::Xor
                if *self.types.kind(inst.ty) == TypeKind::Int(1) =>
            {
                "the condition"
            }
            // Not "the remainder": clang computes `x % 32` as `x & 31`
            // and `x / 32` as a shift, and the user wrote neither.
            op if op.is_binary() => "the arithmetic",
            _ => "the value",
        };
        if let Some(reg) = self.special_register(inst) {
            return reg;
        }
        let what = match self.called_intrinsic(inst) {
            Some(Intrinsic::Shfl { .. }) => "the shuffle",
            Some(Intrinsic::Vote(_)) => "the warp vote",
            Some(Intrinsic::MatchAny | Intrinsic::MatchAll) => "the warp match",
            Some(Intrinsic::Redux(_)) => "the warp reduction",
            _ => what,
        };
        // A user's function by its name, libdevice's by the math function
        // (`__nv_expf` is `expf`); LLVM's intrinsics by what they do.
        let callee = match inst.callee() {
            Some(Callee::Direct(c)) if what == "the call" => {
                let f = self.func(c);
                match intrinsics::Family::split(&f.name) {
                    Some((intrinsics::Family::Libdevice, math)) => format!(" to {math}"),
                    Some(_) => String::new(),
                    None => format!(" to {}", f.short_name()),
                }
            }
            _ => String::new(),
        };
        // A phi has no line of its own (its block's stands in), and code
        // inlined from a header is placed at its call in the user's file.
        // The column too, as warnings give it: one line often holds
        // several addresses or loads (`bins[data[i]]`).
        let pos = self
            .pos_anchor(func, i)
            .and_then(|a| func.inst(a).loc)
            .map(|l| self.user_pos(l).0);
        match pos {
            Some(p) if p.line > 0 && p.col > 0 => {
                format!("{what}{callee} at {}:{}", p.line, p.col)
            }
            Some(p) if p.line > 0 => format!("{what}{callee} at line {}", p.line),
            _ => format!("{what}{callee}"),
        }
    }

    /// The CUDA name of a special register a call reads: `threadIdx.x`.
    fn special_register(&self, inst: &Inst) -> Option<String> {
        use super::intrinsics::{Dim, SReg};
        let Some(Intrinsic::SReg(reg)) = self.called_intrinsic(inst) else {
            return None;
        };
        let (name, d) = match reg {
            SReg::Tid(d) => ("threadIdx", d),
            SReg::Ntid(d) => ("blockDim", d),
            SReg::Ctaid(d) => ("blockIdx", d),
            SReg::Nctaid(d) => ("gridDim", d),
            SReg::LaneId => return Some("the lane id".into()),
            SReg::WarpSize => return Some("warpSize".into()),
            _ => return None,
        };
        let d = match d {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        };
        Some(format!("{name}.{d}"))
    }

    /// A global by its source name and what it is: `the shared array As`
    /// for `@_ZZ12matmul_tiledPKfS0_PfiE2As`.
    pub fn global_description(&self, g: GlobalId) -> String {
        let global = self.global(g);
        let what = match global.addrspace {
            addrspace::SHARED => "the shared array",
            addrspace::CONSTANT => "the constant",
            _ => "the global",
        };
        format!("{what} {}", self.global_label(g))
    }

    /// A global's source name: `As` for `@_ZZ12matmul_tiledPKfS0_PfiE2As`
    /// (a static local of `matmul_tiled`), `table` for `@table`.
    pub fn global_label(&self, g: GlobalId) -> String {
        let demangled = &self.global(g).demangled;
        // A function's static local demangles as `f(int, float*)::As`.
        match demangled.rfind(")::") {
            Some(at) => demangled[at + 3..].to_string(),
            None => base_name(demangled),
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

/// The source variable a phi's IR name was made from: clang's mem2reg
/// names a variable's phis after it, with copy numbers (`%k.027`) and
/// `.lcssa` for the copy leaving a loop. Other suffixes (`%s.032.in`, a
/// rotated loop's value before the update) are not the variable itself.
fn variable_of_phi(name: &str) -> Option<&str> {
    let mut parts = name.split('.');
    let base = parts.next()?;
    let ident = base.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let copies =
        parts.all(|p| p == "lcssa" || (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())));
    (ident && copies).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::variable_of_phi;

    #[test]
    fn phis_named_after_their_variable() {
        assert_eq!(variable_of_phi("k.027"), Some("k"));
        assert_eq!(variable_of_phi("sum.0.lcssa"), Some("sum"));
        assert_eq!(variable_of_phi("i"), Some("i"));
        // A rotated loop's value before the update is not `s`.
        assert_eq!(variable_of_phi("s.032.in"), None);
        assert_eq!(variable_of_phi("184"), None);
    }
}
