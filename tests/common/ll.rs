//! Our IR written back as LLVM assembly, for `llc`: the random kernels
//! (built with `ir::builder`, no LLVM) compiled to PTX, so that their
//! requests can be held against the backend's (`ptx_crosscheck.rs`'s
//! comparison). Covers what the builders make: integer arithmetic,
//! comparisons, casts, selects, GEPs, loads and stores with their
//! alignment, atomics, phis, branches, calls, globals with initialisers
//! and constant expressions; each instruction's line as a `DILocation`.
#![allow(dead_code)]

use std::fmt::Write;
use warpcheck::ir::{
    Callee, Const, Function, InstKind, IntPred, Module, Opcode, RmwOp, TypeId, TypeKind, Value,
};

const HEADER: &str = "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n\
                      target triple = \"nvptx64-nvidia-cuda\"\n";

/// `m` as a `.ll` file `llc` reads.
pub fn write(m: &Module) -> String {
    let mut out = String::from(HEADER);
    for g in &m.globals {
        let ty = m.types.render(g.value_ty);
        let init = match g.init {
            Some(v) => konst(m, v),
            // Shared memory has no initialiser.
            None if g.addrspace == 3 => "undef".to_string(),
            None => "zeroinitializer".to_string(),
        };
        let kind = if g.is_constant { "constant" } else { "global" };
        let align = m.types.get(g.value_ty).align.max(1);
        writeln!(
            out,
            "@{} = addrspace({}) {kind} {ty} {init}, align {align}",
            g.name, g.addrspace
        )
        .unwrap();
    }
    let mut meta = Meta::default();
    for f in &m.funcs {
        if f.is_declaration {
            let params: Vec<String> = f.params.iter().map(|p| m.types.render(p.ty)).collect();
            writeln!(
                out,
                "declare {} @{}({})",
                m.types.render(f.ret),
                f.name,
                params.join(", ")
            )
            .unwrap();
        } else {
            function(m, f, &mut meta, &mut out);
        }
    }
    let kernels: Vec<String> = m
        .funcs
        .iter()
        .filter(|f| f.is_kernel)
        .map(|f| meta.node(format!("!{{ptr @{}, !\"kernel\", i32 1}}", f.name)))
        .collect();
    writeln!(out, "!nvvm.annotations = !{{{}}}", kernels.join(", ")).unwrap();
    writeln!(out, "!llvm.dbg.cu = !{{!0}}").unwrap();
    writeln!(
        out,
        "!llvm.module.flags = !{{!{}, !{}}}",
        meta.node("!{i32 2, !\"Debug Info Version\", i32 3}".into())
            .trim_start_matches('!'),
        meta.node("!{i32 2, !\"Dwarf Version\", i32 2}".into())
            .trim_start_matches('!')
    )
    .unwrap();
    writeln!(
        out,
        "!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, emissionKind: LineTablesOnly)"
    )
    .unwrap();
    let file = m.files.first().map_or("test.cu", |f| f.name.as_str());
    writeln!(out, "!1 = !DIFile(filename: \"{file}\", directory: \"/\")").unwrap();
    writeln!(out, "!2 = !DISubroutineType(types: !{{}})").unwrap();
    for (k, text) in meta.nodes.iter().enumerate() {
        writeln!(out, "!{} = {text}", k + Meta::FIRST).unwrap();
    }
    out
}

/// Metadata nodes past the three fixed ones.
#[derive(Default)]
struct Meta {
    nodes: Vec<String>,
}

impl Meta {
    const FIRST: usize = 3;

    fn node(&mut self, text: String) -> String {
        self.nodes.push(text);
        format!("!{}", self.nodes.len() - 1 + Self::FIRST)
    }
}

fn function(m: &Module, f: &Function, meta: &mut Meta, out: &mut String) {
    let sp = meta.node(format!(
        "distinct !DISubprogram(name: \"{}\", scope: !1, file: !1, line: 1, type: !2, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)",
        f.name
    ));
    let params: Vec<String> = f
        .params
        .iter()
        .enumerate()
        .map(|(k, p)| format!("{} %a{k}", m.types.render(p.ty)))
        .collect();
    writeln!(
        out,
        "define {} @{}({}) !dbg {sp} {{",
        m.types.render(f.ret),
        f.name,
        params.join(", ")
    )
    .unwrap();
    for b in f.block_ids() {
        writeln!(out, "bb{}:", b.0).unwrap();
        for &i in &f.blocks[b.index()].insts {
            let inst = f.inst(i);
            let text = instruction(m, f, inst);
            let dbg = inst
                .loc
                .map(|l| {
                    let pos = &m.loc(l).pos;
                    let loc = meta.node(format!(
                        "!DILocation(line: {}, column: {}, scope: {sp})",
                        pos.line, pos.col
                    ));
                    format!(", !dbg {loc}")
                })
                .unwrap_or_default();
            let void = matches!(m.types.kind(inst.ty), TypeKind::Void);
            if void {
                writeln!(out, "  {text}{dbg}").unwrap();
            } else {
                writeln!(out, "  %v{} = {text}{dbg}", i.0).unwrap();
            }
        }
    }
    writeln!(out, "}}").unwrap();
}

/// The type of an operand (a global's pointer in its own space, and a
/// GEP's the space of its base, which the builders leave generic).
fn type_of(m: &Module, f: &Function, v: Value) -> String {
    match v {
        Value::Global(g) => match m.global(g).addrspace {
            0 => "ptr".into(),
            a => format!("ptr addrspace({a})"),
        },
        Value::Func(_) => "ptr".into(),
        Value::Inst(i) if f.inst(i).op == Opcode::GetElementPtr => {
            type_of(m, f, f.inst(i).operands[0])
        }
        _ => m.types.render(m.value_type(f, v)),
    }
}

fn value(m: &Module, v: Value) -> String {
    match v {
        Value::Inst(i) => format!("%v{}", i.0),
        Value::Arg(a) => format!("%a{a}"),
        Value::Global(g) => format!("@{}", m.global(g).name),
        Value::Func(f) => format!("@{}", m.func(f).name),
        Value::Const(_) => konst(m, v),
        Value::Opaque => "poison".into(),
    }
}

fn typed(m: &Module, f: &Function, v: Value) -> String {
    format!("{} {}", type_of(m, f, v), value(m, v))
}

/// A constant operand as LLVM writes it.
fn konst(m: &Module, v: Value) -> String {
    let Value::Const(c) = v else {
        return value(m, v);
    };
    let typed_const = |v: Value| -> String {
        let ty = match v {
            Value::Global(g) => match m.global(g).addrspace {
                0 => "ptr".to_string(),
                a => format!("ptr addrspace({a})"),
            },
            Value::Const(c) => m.types.render(m.konst(c).ty()),
            _ => "ptr".into(),
        };
        format!("{ty} {}", konst(m, v))
    };
    match m.konst(c) {
        Const::Int { bits: 1, value, .. } => (*value != 0).to_string(),
        Const::Int { bits, value, .. } => {
            let shift = 128 - bits;
            (((*value << shift) as i128) >> shift).to_string()
        }
        Const::Float { value, .. } => format!("0x{:016X}", value.to_bits()),
        Const::Null(_) => "null".into(),
        Const::Undef(_) => "undef".into(),
        Const::Poison(_) => "poison".into(),
        Const::Zero(_) => "zeroinitializer".into(),
        Const::Aggregate { ty, elems } => {
            let inner: Vec<String> = elems.iter().map(|&e| typed_const(e)).collect();
            match m.types.kind(*ty) {
                TypeKind::Array(..) => format!("[{}]", inner.join(", ")),
                TypeKind::Vector(..) => format!("<{}>", inner.join(", ")),
                _ => format!("{{ {} }}", inner.join(", ")),
            }
        }
        Const::Expr {
            ty, op, operands, ..
        } if op.is_cast() => format!(
            "{} ({} to {})",
            op.mnemonic(),
            typed_const(operands[0]),
            m.types.render(*ty)
        ),
        Const::Expr {
            op: Opcode::GetElementPtr,
            operands,
            kind: InstKind::Gep { source, .. },
            ..
        } => {
            let ops: Vec<String> = operands.iter().map(|&o| typed_const(o)).collect();
            format!(
                "getelementptr ({}, {})",
                m.types.render(*source),
                ops.join(", ")
            )
        }
        Const::Expr { .. } | Const::Other { .. } => "poison".into(),
    }
}

fn pred(p: IntPred) -> &'static str {
    match p {
        IntPred::Eq => "eq",
        IntPred::Ne => "ne",
        IntPred::Ugt => "ugt",
        IntPred::Uge => "uge",
        IntPred::Ult => "ult",
        IntPred::Ule => "ule",
        IntPred::Sgt => "sgt",
        IntPred::Sge => "sge",
        IntPred::Slt => "slt",
        IntPred::Sle => "sle",
    }
}

fn rmw(op: RmwOp) -> &'static str {
    match op {
        RmwOp::Xchg => "xchg",
        RmwOp::Add => "add",
        RmwOp::Sub => "sub",
        RmwOp::And => "and",
        RmwOp::Nand => "nand",
        RmwOp::Or => "or",
        RmwOp::Xor => "xor",
        RmwOp::Max => "max",
        RmwOp::Min => "min",
        RmwOp::UMax => "umax",
        RmwOp::UMin => "umin",
        RmwOp::FAdd => "fadd",
        RmwOp::FSub => "fsub",
        RmwOp::FMax => "fmax",
        RmwOp::FMin => "fmin",
        RmwOp::UIncWrap => "uinc_wrap",
        RmwOp::UDecWrap => "udec_wrap",
        RmwOp::USubCond => "usub_cond",
        RmwOp::USubSat => "usub_sat",
        RmwOp::FMaximum => "fmaximum",
        RmwOp::FMinimum => "fminimum",
    }
}

/// One instruction, without its result name.
fn instruction(m: &Module, f: &Function, inst: &warpcheck::ir::Inst) -> String {
    let ops = &inst.operands;
    let ty = m.types.render(inst.ty);
    let t = |v: Value| typed(m, f, v);
    let v = |x: Value| value(m, x);
    let flags = |inst: &warpcheck::ir::Inst| {
        let mut s = String::new();
        if inst.flags.nuw {
            s.push_str(" nuw");
        }
        if inst.flags.nsw {
            s.push_str(" nsw");
        }
        if inst.flags.exact {
            s.push_str(" exact");
        }
        s
    };
    match (inst.op, &inst.kind) {
        (op, _) if op.is_binary() => format!(
            "{}{} {}, {}",
            op.mnemonic(),
            flags(inst),
            t(ops[0]),
            v(ops[1])
        ),
        (op, _) if op.is_cast() => format!("{} {} to {ty}", op.mnemonic(), t(ops[0])),
        (Opcode::ICmp, InstKind::ICmp(p)) => {
            format!("icmp {} {}, {}", pred(*p), t(ops[0]), v(ops[1]))
        }
        (Opcode::Select, _) => format!("select {}, {}, {}", t(ops[0]), t(ops[1]), t(ops[2])),
        (Opcode::Load, InstKind::Load { align, volatile }) => format!(
            "load{} {ty}, {}, align {}",
            if *volatile { " volatile" } else { "" },
            t(ops[0]),
            align.max(&1)
        ),
        (Opcode::Store, InstKind::Store { align, volatile }) => format!(
            "store{} {}, {}, align {}",
            if *volatile { " volatile" } else { "" },
            t(ops[0]),
            t(ops[1]),
            align.max(&1)
        ),
        (Opcode::GetElementPtr, InstKind::Gep { source, inbounds }) => {
            let _ = ty;
            let rest: Vec<String> = ops.iter().map(|&o| t(o)).collect();
            format!(
                "getelementptr{} {}, {}",
                if *inbounds { " inbounds" } else { "" },
                m.types.render(*source),
                rest.join(", ")
            )
        }
        (Opcode::AtomicRmw, InstKind::AtomicRmw { op }) => {
            format!(
                "atomicrmw {} {}, {} monotonic",
                rmw(*op),
                t(ops[0]),
                t(ops[1])
            )
        }
        (Opcode::CmpXchg, _) => format!(
            "cmpxchg {}, {}, {} monotonic monotonic",
            t(ops[0]),
            t(ops[1]),
            t(ops[2])
        ),
        (Opcode::Phi, InstKind::Phi { blocks }) => {
            let inc: Vec<String> = ops
                .iter()
                .zip(blocks)
                .map(|(&o, b)| format!("[ {}, %bb{} ]", v(o), b.0))
                .collect();
            format!("phi {ty} {}", inc.join(", "))
        }
        (Opcode::Br, InstKind::Br { targets }) => match targets.as_slice() {
            [one] => format!("br label %bb{}", one.0),
            [a, b] => format!("br {}, label %bb{}, label %bb{}", t(ops[0]), a.0, b.0),
            _ => "unreachable".into(),
        },
        (Opcode::Switch, InstKind::Switch { default, cases }) => {
            let arms: Vec<String> = cases
                .iter()
                .map(|(k, b)| format!("{} {k}, label %bb{}", type_of(m, f, ops[0]), b.0))
                .collect();
            format!(
                "switch {}, label %bb{} [ {} ]",
                t(ops[0]),
                default.0,
                arms.join(" ")
            )
        }
        (Opcode::Ret, _) => match ops.first() {
            Some(&r) => format!("ret {}", t(r)),
            None => "ret void".into(),
        },
        (Opcode::Unreachable, _) => "unreachable".into(),
        (Opcode::Call, InstKind::Call { callee, .. }) => {
            let args: Vec<String> = ops.iter().map(|&o| t(o)).collect();
            let target = match callee {
                Callee::Direct(c) => format!("@{}", m.func(*c).name),
                _ => "poison".into(),
            };
            format!("call {ty} {target}({})", args.join(", "))
        }
        (Opcode::ExtractValue, InstKind::Indices(ix)) => {
            let ix: Vec<String> = ix.iter().map(u32::to_string).collect();
            format!("extractvalue {}, {}", t(ops[0]), ix.join(", "))
        }
        (Opcode::InsertValue, InstKind::Indices(ix)) => {
            let ix: Vec<String> = ix.iter().map(u32::to_string).collect();
            format!(
                "insertvalue {}, {}, {}",
                t(ops[0]),
                t(ops[1]),
                ix.join(", ")
            )
        }
        (Opcode::Freeze, _) => format!("freeze {}", t(ops[0])),
        (op, _) => panic!("ll::write: no LLVM form for {op:?} here"),
    }
}

/// The type of a value as LLVM names it (for callers outside this file).
pub fn render(m: &Module, ty: TypeId) -> String {
    m.types.render(ty)
}
