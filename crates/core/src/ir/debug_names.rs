//! Source variable names of SSA values, from the `llvm.dbg.value` /
//! `#dbg_value` records a full `-g` build keeps at `-O2`.
//!
//! Explanations and the report name values the way the user wrote them
//! (`i`, `lane`), not by clang's IR names (`%add5`). A record names a value
//! only when its expression is empty: `i = %x - 1` is written
//! `#dbg_value(%x, !i, !DIExpression(DW_OP_constu, 1, DW_OP_minus, …))`,
//! and `%x` is not `i`. Names of reserved identifiers (`__p` in the CUDA
//! headers' `atomicAdd`) are the headers', not the user's, and are skipped.

use super::{FuncId, InstId};
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use std::collections::HashMap;
use std::ffi::CStr;

/// The source name of each instruction some `dbg.value` describes, keyed
/// by our ids through `origins` (the loader's LLVM handle of each
/// instruction, per function). The first
/// record wins: clang describes a value by the variable it initialises
/// before any later copy.
///
/// # Safety
/// `m` must be the live module `origins` was read from. On LLVM 19 the
/// module is switched to the intrinsic debug format for the scan and back,
/// as `llvm::debug_param_names` does; only for modules we own.
pub(super) unsafe fn value_names(
    m: LLVMModuleRef,
    origins: &[Vec<usize>],
) -> HashMap<(FuncId, InstId), String> {
    let ids: HashMap<usize, (FuncId, InstId)> = origins
        .iter()
        .enumerate()
        .flat_map(|(f, insts)| {
            insts
                .iter()
                .enumerate()
                .map(move |(i, &h)| (h, (FuncId::new(f), InstId::new(i))))
        })
        .collect();
    let records = cfg!(feature = "llvm19") && LLVMIsNewDbgInfoFormat(m) != 0;
    if records {
        LLVMSetIsNewDbgInfoFormat(m, 0);
    }
    let ctx = LLVMGetModuleContext(m);
    let mut names = HashMap::new();
    let mut var_names: HashMap<LLVMMetadataRef, Option<String>> = HashMap::new();
    let mut f = LLVMGetFirstFunction(m);
    while !f.is_null() {
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                for (value, var) in described_values(ctx, i) {
                    let Some(&id) = ids.get(&(value as usize)) else {
                        continue;
                    };
                    let name = var_names
                        .entry(var)
                        .or_insert_with(|| variable_name(ctx, var));
                    if let Some(name) = name {
                        names.entry(id).or_insert_with(|| name.clone());
                    }
                }
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        f = LLVMGetNextFunction(f);
    }
    if records {
        LLVMSetIsNewDbgInfoFormat(m, 1);
    }
    names
}

/// LLVM's text of a value (or of metadata wrapped as one).
unsafe fn print_value(v: LLVMValueRef) -> String {
    let p = LLVMPrintValueToString(v);
    let s = CStr::from_ptr(p).to_string_lossy().into_owned();
    LLVMDisposeMessage(p);
    s
}

/// A user's variable name from a printed `DILocalVariable`: none for the
/// reserved names of library headers.
unsafe fn variable_name(ctx: LLVMContextRef, var: LLVMMetadataRef) -> Option<String> {
    let text = print_value(LLVMMetadataAsValue(ctx, var));
    user_name(&text)
}

fn user_name(printed: &str) -> Option<String> {
    let at = printed.find("name: \"")? + "name: \"".len();
    let name = printed[at..].split('"').next()?;
    let ok = !name.is_empty()
        && !name.starts_with("__")
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    ok.then(|| name.to_string())
}

/// Whether a printed `DIExpression` is the empty one (the value itself).
fn is_empty_expression(printed: &str) -> bool {
    printed.trim_end().ends_with("!DIExpression()")
}

/// `(value, variable)` of each `llvm.dbg.value` call (LLVM 19's intrinsic
/// format) at `i` whose location is one SSA value with an empty expression.
#[cfg(feature = "llvm19")]
unsafe fn described_values(
    _ctx: LLVMContextRef,
    i: LLVMValueRef,
) -> Vec<(LLVMValueRef, LLVMMetadataRef)> {
    use inkwell::llvm_sys::debuginfo::{LLVMGetMetadataKind, LLVMMetadataKind};
    if LLVMIsACallInst(i).is_null() || LLVMGetNumOperands(i) < 4 {
        return Vec::new();
    }
    let callee = LLVMGetCalledValue(i);
    let mut len = 0;
    let p = LLVMGetValueName2(callee, &mut len);
    if p.is_null()
        || std::slice::from_raw_parts(p as *const u8, len)
            != super::intrinsics::DBG_VALUE.as_bytes()
    {
        return Vec::new();
    }
    let (loc, var, expr) = (
        LLVMGetOperand(i, 0),
        LLVMGetOperand(i, 1),
        LLVMGetOperand(i, 2),
    );
    if loc.is_null() || var.is_null() || expr.is_null() {
        return Vec::new();
    }
    // Only a single local value: a `DIArgList` (several locations) or a
    // constant says nothing about an instruction.
    if !matches!(
        LLVMGetMetadataKind(LLVMValueAsMetadata(loc)),
        LLVMMetadataKind::LLVMLocalAsMetadataMetadataKind
    ) {
        return Vec::new();
    }
    if !is_empty_expression(&print_value(expr)) {
        return Vec::new();
    }
    let mut value: LLVMValueRef = std::ptr::null_mut();
    LLVMGetMDNodeOperands(loc, &mut value);
    if value.is_null() {
        return Vec::new();
    }
    vec![(value, LLVMValueAsMetadata(var))]
}

/// `(value, variable)` of each `#dbg_value` record attached to `i` (LLVM
/// 22) whose expression is empty (so it has one location, the value).
#[cfg(feature = "llvm22")]
unsafe fn described_values(
    ctx: LLVMContextRef,
    i: LLVMValueRef,
) -> Vec<(LLVMValueRef, LLVMMetadataRef)> {
    use inkwell::llvm_sys::LLVMDbgRecordKind as K;
    let mut out = Vec::new();
    let mut rec = LLVMGetFirstDbgRecord(i);
    while !rec.is_null() {
        if matches!(LLVMDbgRecordGetKind(rec), K::LLVMDbgRecordValue) {
            let var = LLVMDbgVariableRecordGetVariable(rec);
            let expr = LLVMDbgVariableRecordGetExpression(rec);
            let value = LLVMDbgVariableRecordGetValue(rec, 0);
            if !var.is_null()
                && !expr.is_null()
                && !value.is_null()
                && is_empty_expression(&print_value(LLVMMetadataAsValue(ctx, expr)))
            {
                out.push((value, var));
            }
        }
        rec = LLVMGetNextDbgRecord(rec);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_only() {
        let var =
            |n: &str| format!("!DILocalVariable(name: \"{n}\", scope: !5, file: !3, line: 6)");
        assert_eq!(user_name(&var("i")).as_deref(), Some("i"));
        assert_eq!(user_name(&var("lane_id")).as_deref(), Some("lane_id"));
        // The CUDA headers' parameters (`atomicAdd(int *__p, int __v)`).
        assert_eq!(user_name(&var("__p")), None);
        assert_eq!(user_name(&var("")), None);
        assert_eq!(user_name("!DILocalVariable(scope: !5)"), None);
    }

    #[test]
    fn only_the_empty_expression_is_the_value() {
        assert!(is_empty_expression("metadata !DIExpression()"));
        assert!(is_empty_expression("!DIExpression()"));
        assert!(!is_empty_expression(
            "!DIExpression(DW_OP_constu, 1, DW_OP_minus, DW_OP_stack_value)"
        ));
        assert!(!is_empty_expression(
            "!DIExpression(DW_OP_LLVM_fragment, 0, 32)"
        ));
    }
}
