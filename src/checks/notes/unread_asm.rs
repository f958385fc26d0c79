//! `unread-asm`: one note per kernel that runs inline asm the PTX reader
//! cannot read, at the first such call, naming what it could not read:
//! the analysis takes those calls' results as thread-dependent and their
//! memory effects as unknown.

use super::KernelNote;
use crate::analysis::{KernelAnalysis, ModuleAnalysis};
use crate::finding::{Finding, Kind, Severity};
use crate::ir::Position;

pub const UNREAD_ASM: KernelNote = KernelNote {
    kind: Kind {
        name: "unread-asm",
        summary: "a kernel runs inline asm the PTX reader cannot read",
        explanation: "Results of such asm are taken as thread-dependent and its memory effects \
             as unknown; the note names the first instruction that could not be read.",
    },
    always: false,
    make: note,
};

fn note(a: &ModuleAnalysis<'_>, k: &KernelAnalysis) -> Option<Finding> {
    let m = a.module;
    let mut unread = k.reached.iter().flat_map(|&f| {
        let func = m.func(f);
        func.inst_ids().filter_map(move |i| {
            let e = crate::ptx::Body::of(m.called_asm(func.inst(i))?).err()?;
            Some((f, i, e))
        })
    });
    let (f, i, e) = unread.next()?;
    let more = unread.count();
    let func = m.func(f);
    let others = match more {
        0 => String::new(),
        n => format!(" ({n} more asm calls of this kernel cannot be read either)"),
    };
    let at = match e.line {
        0 => String::new(),
        line => format!("asm line {line}: "),
    };
    Some(Finding {
        check: UNREAD_ASM.kind.name,
        severity: Severity::Note,
        func: f,
        inst: Some(i),
        pos: m.inst_pos(func, i).map(|p| Position::resolve(m, &p)),
        kernel: m.func(k.kernel).demangled.clone(),
        function: func.demangled.clone(),
        message: format!(
            "cannot read this inline asm ({at}{}): its results are taken as thread-dependent and its memory effects as unknown{others}",
            e.message
        ),
        notes: Vec::new(),
        data: None,
        impact: None,
    })
}
