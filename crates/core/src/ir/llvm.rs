//! The one place that reads LLVM: copies an LLVM module into our [`Module`].
//!
//! inkwell parses files; the walk itself uses the LLVM-C API through
//! `llvm-sys`, which exposes what inkwell does not (debug locations, GEP
//! source types, named metadata). Nothing here keeps an LLVM object alive
//! beyond the call.

use super::intrinsics::never_returns;
use super::upgrade;
use super::*;
use inkwell::context::Context;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::debuginfo::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{
    LLVMAtomicRMWBinOp, LLVMAttributeFunctionIndex, LLVMIntPredicate, LLVMOpcode,
    LLVMRealPredicate, LLVMTypeKind,
};
use inkwell::memory_buffer::MemoryBuffer;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::path::Path;

/// Why a file could not be read as LLVM IR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: String,
    /// The 1-based line LLVM complained about, when it said.
    pub line: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for LoadError {}

/// The LLVM handles behind each entity, for a host (opt, clang) that wants
/// to point its own diagnostics at the original instructions. The numbers are
/// addresses valid only while the host's module lives.
#[derive(Clone, Debug, Default)]
pub struct Origins {
    pub funcs: Vec<usize>,
    /// Per function, per instruction.
    pub insts: Vec<Vec<usize>>,
}

/// Reads a `.ll` or `.bc` file.
pub fn load_file(path: &Path) -> Result<Module, LoadError> {
    let shown = path.display().to_string();
    let err = |message: String| LoadError {
        path: shown.clone(),
        line: None,
        message,
    };
    // LLVM takes a path as text: a name that is not UTF-8 is read here.
    let buffer = match path.to_str() {
        Some(_) => MemoryBuffer::create_from_file(path)
            .map_err(|e| err(format!("{shown}: cannot read: {}", e.to_string_lossy())))?,
        None => {
            let bytes =
                std::fs::read(path).map_err(|e| err(format!("{shown}: cannot read: {e}")))?;
            MemoryBuffer::create_from_memory_range_copy(&bytes, &shown)
        }
    };
    parse_buffer(buffer, &shown)
}

/// Parses IR text (or bitcode bytes) held in memory; `name` labels errors.
pub fn load_bytes(bytes: &[u8], name: &str) -> Result<Module, LoadError> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(bytes, name);
    parse_buffer(buffer, name)
}

fn parse_buffer(buffer: MemoryBuffer, name: &str) -> Result<Module, LoadError> {
    let ours = copy_buffer(buffer, name);
    // LLVM's module is gone, but the C++ heap keeps the memory it freed
    // resident, where our allocator never reuses it: handed back, the
    // analysis that follows does not stack on top of the parse.
    // SAFETY: malloc_trim(3) only returns free heap memory to the system.
    unsafe {
        libc::malloc_trim(0);
    }
    ours
}

/// The module in `buffer`, parsed, verified and copied into ours; LLVM's
/// copy is dropped on return.
fn copy_buffer(buffer: MemoryBuffer, name: &str) -> Result<Module, LoadError> {
    let context = Context::create();
    let module = context.create_module_from_ir(buffer).map_err(|e| {
        let message = e.to_string_lossy().trim().to_string();
        LoadError {
            path: name.to_string(),
            line: parse_error_line(&message),
            message: if message.contains(name) {
                message
            } else {
                format!("{name}: {message}")
            },
        }
    })?;
    module.verify().map_err(|e| LoadError {
        path: name.to_string(),
        line: None,
        message: format!("{name}: invalid LLVM IR: {}", e.to_string_lossy().trim()),
    })?;
    // SAFETY: the module is alive for the whole call; `debug_param_names`
    // leaves it in the debug-info format it found it in, and from then on we
    // only read it.
    let names = unsafe { debug_param_names(module.as_mut_ptr()) };
    let (mut ours, origins) = unsafe { from_raw(module.as_mut_ptr()) };
    // SAFETY: as above; `origins` are this module's handles.
    let values = unsafe { super::debug_names::value_names(module.as_mut_ptr(), &origins.insts) };
    for ((f, i), name) in values {
        ours.funcs[f.index()].source_names.insert(i, name);
    }
    for (func, names) in ours.funcs.iter_mut().zip(names) {
        for (p, name) in func.params.iter_mut().zip(names) {
            if p.name.is_none() {
                p.name = name;
            }
        }
    }
    super::source_text::fill_names(&mut ours);
    Ok(ours)
}

/// Parameter names from each function's `llvm.dbg.declare`/`llvm.dbg.value`
/// records, by function position. Unoptimised builds describe parameters
/// only there: their subprograms retain no variables. LLVM 19's C API cannot
/// walk debug records, so there the module is switched to the intrinsic
/// format for the scan and back; LLVM 22 has no intrinsic format left, and
/// its C API walks the records. Only for modules we own; a borrowed module
/// (opt, clang) is never touched.
unsafe fn debug_param_names(m: LLVMModuleRef) -> Vec<Vec<Option<String>>> {
    let records = cfg!(feature = "llvm19") && LLVMIsNewDbgInfoFormat(m) != 0;
    if records {
        LLVMSetIsNewDbgInfoFormat(m, 0);
    }
    let ctx = LLVMGetModuleContext(m);
    let mut all = Vec::new();
    let mut f = LLVMGetFirstFunction(m);
    while !f.is_null() {
        let mut names = vec![None; LLVMCountParams(f) as usize];
        let sp = LLVMGetSubprogram(f);
        let mut bb = if sp.is_null() {
            std::ptr::null_mut()
        } else {
            LLVMGetFirstBasicBlock(f)
        };
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                for var in described_variables(i) {
                    if LLVMDIVariableGetScope(var) != sp {
                        continue;
                    }
                    let text = print_value(LLVMMetadataAsValue(ctx, var));
                    if let Some((index, name)) = parameter_variable(&text) {
                        if let Some(slot) = names.get_mut(index) {
                            slot.get_or_insert(name);
                        }
                    }
                }
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        all.push(names);
        f = LLVMGetNextFunction(f);
    }
    if records {
        LLVMSetIsNewDbgInfoFormat(m, 1);
    }
    all
}

/// The `DILocalVariable`s instruction `i` describes: as an
/// `llvm.dbg.declare`/`llvm.dbg.value` call (LLVM 19, intrinsic format).
#[cfg(feature = "llvm19")]
unsafe fn described_variables(i: LLVMValueRef) -> Vec<LLVMMetadataRef> {
    if LLVMIsACallInst(i).is_null() {
        return Vec::new();
    }
    let callee = value_name(LLVMGetCalledValue(i));
    if callee != super::intrinsics::DBG_DECLARE && callee != super::intrinsics::DBG_VALUE {
        return Vec::new();
    }
    let var = LLVMGetOperand(i, 1);
    if var.is_null() {
        return Vec::new();
    }
    vec![LLVMValueAsMetadata(var)]
}

/// The `DILocalVariable`s the `#dbg_declare`/`#dbg_value` records attached
/// to instruction `i` describe (LLVM 22).
#[cfg(feature = "llvm22")]
unsafe fn described_variables(i: LLVMValueRef) -> Vec<LLVMMetadataRef> {
    use inkwell::llvm_sys::LLVMDbgRecordKind as K;
    let mut vars = Vec::new();
    let mut rec = LLVMGetFirstDbgRecord(i);
    while !rec.is_null() {
        if matches!(
            LLVMDbgRecordGetKind(rec),
            K::LLVMDbgRecordDeclare | K::LLVMDbgRecordValue
        ) {
            let var = LLVMDbgVariableRecordGetVariable(rec);
            if !var.is_null() {
                vars.push(var);
            }
        }
        rec = LLVMGetNextDbgRecord(rec);
    }
    vars
}

/// `(index, name)` of a printed `DILocalVariable` with `arg: N` (1-based).
fn parameter_variable(text: &str) -> Option<(usize, String)> {
    let name = field(text, "name: \"")?.split('"').next()?.to_string();
    let arg: usize = field(text, "arg: ")?
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some((arg.checked_sub(1)?, name))
}

/// Finds `:LINE:` after the buffer name in an LLVM parser message.
fn parse_error_line(message: &str) -> Option<u32> {
    message
        .split(':')
        .skip(1)
        .find_map(|part| part.trim().parse::<u32>().ok())
}

/// Copies a module owned by someone else (opt or clang).
///
/// # Safety
/// `module` must be a valid LLVM module that outlives this call.
pub unsafe fn from_raw(module: LLVMModuleRef) -> (Module, Origins) {
    // Lets the tests prove that a bug here never takes a host compiler
    // down; debug builds (the tests') only, so a release never reads it.
    #[cfg(debug_assertions)]
    if std::env::var_os("WARPCHECK_FAULT").is_some_and(|v| v == "panic") {
        panic!("fault injected by WARPCHECK_FAULT=panic");
    }
    let mut loader = Loader::new(module);
    loader.run();
    (loader.m, loader.origins)
}

unsafe fn string_from(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() {
        return String::new();
    }
    let bytes = std::slice::from_raw_parts(ptr as *const u8, len);
    String::from_utf8_lossy(bytes).into_owned()
}

/// `nsw`/`nuw` of an overflowing operator, `exact` of a division or
/// right shift (the C API asserts on any other instruction).
unsafe fn int_flags(i: LLVMValueRef, op: Opcode) -> IntFlags {
    match op {
        Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Shl => IntFlags {
            nsw: LLVMGetNSW(i) != 0,
            nuw: LLVMGetNUW(i) != 0,
            exact: false,
        },
        Opcode::UDiv | Opcode::SDiv | Opcode::LShr | Opcode::AShr => IntFlags {
            exact: LLVMGetExact(i) != 0,
            ..IntFlags::default()
        },
        _ => IntFlags::default(),
    }
}

unsafe fn value_name(v: LLVMValueRef) -> String {
    let mut len = 0;
    let p = LLVMGetValueName2(v, &mut len);
    string_from(p, len)
}

/// LLVM handles are pointers: a multiply-and-fold hash is enough for
/// them, and std's SipHash was a third of reading a module in the plugin.
#[derive(Default, Clone, Copy)]
struct HandleHasher(u64);

impl std::hash::Hasher for HandleHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0 ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    /// The product's high bits are its well-mixed ones; the table indexes
    /// by the low bits, which for aligned pointers would all be zero.
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

type Handles<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<HandleHasher>>;

struct Loader {
    raw: LLVMModuleRef,
    ctx: LLVMContextRef,
    m: Module,
    origins: Origins,
    types: Handles<LLVMTypeRef, TypeId>,
    consts: Handles<LLVMValueRef, ConstId>,
    globals: Handles<LLVMValueRef, GlobalId>,
    funcs: Handles<LLVMValueRef, FuncId>,
    locs: Handles<LLVMMetadataRef, LocId>,
    files: HashMap<(String, String), FileId>,
    /// Inline-asm values by handle and call-site convergence.
    asms: Handles<(LLVMValueRef, bool), AsmId>,
    /// Per function being read: instruction and block handles.
    insts: Handles<LLVMValueRef, InstId>,
    blocks: Handles<LLVMBasicBlockRef, BlockId>,
    params: Handles<LLVMValueRef, u32>,
}

impl Loader {
    unsafe fn new(raw: LLVMModuleRef) -> Self {
        Loader {
            raw,
            ctx: LLVMGetModuleContext(raw),
            m: Module::default(),
            origins: Origins::default(),
            types: Handles::default(),
            consts: Handles::default(),
            globals: Handles::default(),
            funcs: Handles::default(),
            locs: Handles::default(),
            files: HashMap::new(),
            asms: Handles::default(),
            insts: Handles::default(),
            blocks: Handles::default(),
            params: Handles::default(),
        }
    }

    unsafe fn run(&mut self) {
        let raw = self.raw;
        let mut len = 0;
        self.m.name = string_from(LLVMGetModuleIdentifier(raw, &mut len), len);
        self.m.source_file = string_from(LLVMGetSourceFileName(raw, &mut len), len);
        self.m.triple = CStr::from_ptr(LLVMGetTarget(raw))
            .to_string_lossy()
            .into_owned();
        self.m.datalayout = CStr::from_ptr(LLVMGetDataLayoutStr(raw))
            .to_string_lossy()
            .into_owned();

        // Number every function and global first so bodies can refer ahead.
        let mut f = LLVMGetFirstFunction(raw);
        let mut raw_funcs = Vec::new();
        while !f.is_null() {
            self.funcs.insert(f, FuncId::new(raw_funcs.len()));
            raw_funcs.push(f);
            f = LLVMGetNextFunction(f);
        }
        let mut g = LLVMGetFirstGlobal(raw);
        let mut raw_globals = Vec::new();
        while !g.is_null() {
            self.globals.insert(g, GlobalId::new(raw_globals.len()));
            raw_globals.push(g);
            g = LLVMGetNextGlobal(g);
        }
        for &f in &raw_funcs {
            let func = self.function_header(f);
            self.m.funcs.push(func);
        }
        for &g in &raw_globals {
            let global = self.global(g);
            self.m.globals.push(global);
        }
        self.read_annotations();
        self.origins.funcs = raw_funcs.iter().map(|&f| f as usize).collect();
        for (i, &f) in raw_funcs.iter().enumerate() {
            let origins = self.function_body(FuncId::new(i), f);
            self.origins.insts.push(origins);
        }
        // Declarations the upgrade added have no LLVM handle.
        self.origins.funcs.resize(self.m.funcs.len(), 0);
        self.origins.insts.resize(self.m.funcs.len(), Vec::new());
    }

    /// The type of parameter `i`'s `byval` attribute, if it has one.
    unsafe fn byval_type(&mut self, f: LLVMValueRef, i: u32) -> Option<TypeId> {
        let kind = LLVMGetEnumAttributeKindForName(c"byval".as_ptr(), 5);
        let attr = LLVMGetEnumAttributeAtIndex(f, i + 1, kind);
        if attr.is_null() {
            return None;
        }
        let ty = LLVMGetTypeAttributeValue(attr);
        (!ty.is_null()).then(|| self.ty(ty))
    }

    unsafe fn function_header(&mut self, f: LLVMValueRef) -> Function {
        let name = value_name(f);
        let fn_ty = LLVMGlobalGetValueType(f);
        let ret = self.ty(LLVMGetReturnType(fn_ty));
        let n = LLVMCountParams(f);
        let mut params = Vec::with_capacity(n as usize);
        for i in 0..n {
            let p = LLVMGetParam(f, i);
            let pname = value_name(p);
            let byval = self.byval_type(f, i);
            params.push(Param {
                ty: self.ty(LLVMTypeOf(p)),
                name: (!pname.is_empty()).then_some(pname),
                byval,
            });
        }
        let is_declaration = LLVMIsDeclaration(f) != 0;
        const PTX_KERNEL_CC: u32 = 71;
        let sp = LLVMGetSubprogram(f);
        let loc = if sp.is_null() {
            None
        } else {
            self.subprogram_arg_names(sp, &mut params);
            Some(SourcePos {
                file: self.scope_file(sp),
                line: LLVMDISubprogramGetLine(sp),
                col: 0,
            })
        };
        let noreturn = never_returns(&name)
            || has_enum_attribute("noreturn", |kind| {
                LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, kind)
            });
        Function {
            launch: launch_attributes(f),
            demangled: demangle(&name),
            intrinsic: if is_declaration {
                Intrinsic::from_name(&name)
            } else {
                None
            },
            name,
            params,
            ret,
            blocks: Vec::new(),
            insts: Vec::new(),
            is_declaration,
            is_kernel: LLVMGetFunctionCallConv(f) == PTX_KERNEL_CC,
            noreturn,
            loc,
            source_names: Default::default(),
        }
    }

    /// The function a call to `f` stands for in LLVM 19's spelling (see
    /// [`upgrade::barrier_call`]), dropping `args`' barrier id if that
    /// spelling has none; `f` itself for every other callee.
    fn upgraded_callee(&mut self, f: FuncId, args: &mut Vec<Value>) -> FuncId {
        let declared = self.m.func(f);
        let id_is_zero = args
            .first()
            .is_some_and(|&a| self.m.int_value(a) == Some(0));
        let Some(rewrite) = upgrade::barrier_call(&declared.name, id_is_zero) else {
            return f;
        };
        let (mut params, ret) = (declared.params.clone(), declared.ret);
        if rewrite.drop_id && !args.is_empty() {
            args.remove(0);
            params.remove(0);
        }
        if let Some(at) = self.m.funcs.iter().position(|g| g.name == rewrite.callee) {
            return FuncId::new(at);
        }
        // A declaration of the LLVM 19 intrinsic, which this module lacks;
        // added after the module's own functions, with no LLVM behind it.
        self.m
            .funcs
            .push(Function::declaration(rewrite.callee, params, ret));
        FuncId::new(self.m.funcs.len() - 1)
    }

    /// Parameter names from the `DILocalVariable`s a full `-g` build keeps
    /// in the subprogram's retained nodes.
    unsafe fn subprogram_arg_names(&mut self, sp: LLVMMetadataRef, params: &mut [Param]) {
        let ops = self.md_operands(sp);
        let Some(&retained) = ops.get(7) else { return };
        if retained.is_null() || LLVMIsAMDNode(retained).is_null() {
            return;
        }
        for var in md_node_operands(retained) {
            if var.is_null() {
                continue;
            }
            let Some((index, name)) = parameter_variable(&print_value(var)) else {
                continue;
            };
            if let Some(p) = params.get_mut(index) {
                p.name.get_or_insert(name);
            }
        }
    }

    unsafe fn md_operands(&self, md: LLVMMetadataRef) -> Vec<LLVMValueRef> {
        md_node_operands(LLVMMetadataAsValue(self.ctx, md))
    }

    unsafe fn global(&mut self, g: LLVMValueRef) -> Global {
        let name = value_name(g);
        let init = LLVMGetInitializer(g);
        let value_ty = self.ty(LLVMGlobalGetValueType(g));
        let natural = self.m.types.get(value_ty).align;
        Global {
            demangled: demangle(&name),
            name,
            value_ty,
            addrspace: LLVMGetPointerAddressSpace(LLVMTypeOf(g)),
            is_constant: LLVMIsGlobalConstant(g) != 0,
            init: (!init.is_null()).then(|| self.value(init)),
            align: u64::from(LLVMGetAlignment(g)).max(natural),
        }
    }

    /// `nvvm.annotations`: `!{ptr @k, !"kernel", i32 1}`, `!"maxntidx"`, ...
    unsafe fn read_annotations(&mut self) {
        let name = c"nvvm.annotations";
        let n = LLVMGetNamedMetadataNumOperands(self.raw, name.as_ptr());
        let mut nodes = vec![std::ptr::null_mut(); n as usize];
        LLVMGetNamedMetadataOperands(self.raw, name.as_ptr(), nodes.as_mut_ptr());
        for node in nodes {
            let ops = md_node_operands(node);
            let Some(&target) = ops.first() else { continue };
            let Some(&fid) = self.funcs.get(&target) else {
                continue;
            };
            for pair in ops[1..].chunks(2) {
                let [key, val] = pair else { continue };
                let mut len = 0;
                let k = LLVMGetMDString(*key, &mut len);
                if k.is_null() || LLVMIsAConstantInt(*val).is_null() {
                    continue;
                }
                let key = string_from(k, len as usize);
                let v = LLVMConstIntGetZExtValue(*val) as u32;
                let f = &mut self.m.funcs[fid.index()];
                let dim = |s: &str| match s {
                    "x" => Some(0),
                    "y" => Some(1),
                    "z" => Some(2),
                    _ => None,
                };
                let set = |slot: &mut Option<[u32; 3]>, d: usize| {
                    slot.get_or_insert([1, 1, 1])[d] = v;
                };
                match key.as_str() {
                    "kernel" if v == 1 => f.is_kernel = true,
                    "minctasm" => f.launch.minctasm = Some(v),
                    k if k.starts_with("maxntid") => {
                        if let Some(d) = dim(&k[7..]) {
                            set(&mut f.launch.maxntid, d);
                        }
                    }
                    k if k.starts_with("reqntid") => {
                        if let Some(d) = dim(&k[7..]) {
                            set(&mut f.launch.reqntid, d);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    unsafe fn function_body(&mut self, fid: FuncId, f: LLVMValueRef) -> Vec<usize> {
        self.insts.clear();
        self.blocks.clear();
        self.params.clear();
        for i in 0..LLVMCountParams(f) {
            self.params.insert(LLVMGetParam(f, i), i);
        }
        // Number blocks and instructions before reading operands.
        let mut raw_insts = Vec::new();
        let mut blocks = Vec::new();
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let bid = BlockId::new(blocks.len());
            self.blocks.insert(bb, bid);
            let name = {
                let p = LLVMGetBasicBlockName(bb);
                let s = if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                };
                (!s.is_empty()).then_some(s)
            };
            let mut block = Block {
                name,
                insts: Vec::new(),
            };
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                let id = InstId::new(raw_insts.len());
                self.insts.insert(i, id);
                block.insts.push(id);
                raw_insts.push((i, bid));
                i = LLVMGetNextInstruction(i);
            }
            blocks.push(block);
            bb = LLVMGetNextBasicBlock(bb);
        }
        let insts: Vec<Inst> = raw_insts
            .iter()
            .map(|&(i, block)| self.instruction(i, block))
            .collect();
        let func = &mut self.m.funcs[fid.index()];
        func.blocks = blocks;
        func.insts = insts;
        raw_insts.iter().map(|&(i, _)| i as usize).collect()
    }

    unsafe fn instruction(&mut self, i: LLVMValueRef, block: BlockId) -> Inst {
        let op = opcode(LLVMGetInstructionOpcode(i));
        let ty = self.ty(LLVMTypeOf(i));
        let (operands, kind) = self.operands_and_kind(i, op);
        let dl = LLVMInstructionGetDebugLoc(i);
        let loc = (!dl.is_null()).then(|| self.loc(dl));
        let name = value_name(i);
        Inst {
            op,
            ty,
            operands,
            kind,
            block,
            loc,
            name: (!name.is_empty()).then_some(name),
            flags: int_flags(i, op),
        }
    }

    unsafe fn all_operands(&mut self, i: LLVMValueRef) -> Vec<Value> {
        let n = LLVMGetNumOperands(i).max(0) as u32;
        (0..n).map(|k| self.value(LLVMGetOperand(i, k))).collect()
    }

    unsafe fn block_id(&self, bb: LLVMBasicBlockRef) -> BlockId {
        self.blocks.get(&bb).copied().unwrap_or_default()
    }

    unsafe fn operands_and_kind(&mut self, i: LLVMValueRef, op: Opcode) -> (Vec<Value>, InstKind) {
        match op {
            Opcode::Br => {
                let targets = (0..LLVMGetNumSuccessors(i))
                    .map(|k| self.block_id(LLVMGetSuccessor(i, k)))
                    .collect();
                let cond = if LLVMIsConditional(i) != 0 {
                    vec![self.value(LLVMGetCondition(i))]
                } else {
                    vec![]
                };
                (cond, InstKind::Br { targets })
            }
            Opcode::Switch => {
                let cond = self.value(LLVMGetOperand(i, 0));
                let default = self.block_id(LLVMGetSwitchDefaultDest(i));
                let n = LLVMGetNumSuccessors(i);
                let mut cases = Vec::new();
                for k in 1..n {
                    let val = switch_case_value(i, k);
                    let v = if LLVMIsAConstantInt(val).is_null() {
                        0
                    } else {
                        LLVMConstIntGetSExtValue(val) as i128
                    };
                    cases.push((v, self.block_id(LLVMGetSuccessor(i, k))));
                }
                (vec![cond], InstKind::Switch { default, cases })
            }
            Opcode::Phi => {
                let n = LLVMCountIncoming(i);
                let mut vals = Vec::with_capacity(n as usize);
                let mut blocks = Vec::with_capacity(n as usize);
                for k in 0..n {
                    vals.push(self.value(LLVMGetIncomingValue(i, k)));
                    blocks.push(self.block_id(LLVMGetIncomingBlock(i, k)));
                }
                (vals, InstKind::Phi { blocks })
            }
            Opcode::Call => {
                let n = LLVMGetNumArgOperands(i);
                let mut args: Vec<Value> =
                    (0..n).map(|k| self.value(LLVMGetOperand(i, k))).collect();
                let target = LLVMGetCalledValue(i);
                let callee = if let Some(&f) = self.funcs.get(&target) {
                    Callee::Direct(self.upgraded_callee(f, &mut args))
                } else if !LLVMIsAInlineAsm(target).is_null() {
                    Callee::InlineAsm(self.inline_asm(i, target))
                } else {
                    Callee::Indirect
                };
                let noreturn = match callee {
                    Callee::Direct(f) => self.m.func(f).noreturn,
                    _ => false,
                } || has_enum_attribute("noreturn", |kind| {
                    LLVMGetCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, kind)
                });
                let ptr_align = [1, 2].map(|k| call_align(i, k));
                (
                    args,
                    InstKind::Call {
                        callee,
                        noreturn,
                        ptr_align,
                    },
                )
            }
            _ => {
                let operands = self.all_operands(i);
                (operands, self.kind(i, op))
            }
        }
    }

    /// The table entry for the inline asm `call` instruction `i` runs.
    unsafe fn inline_asm(&mut self, i: LLVMValueRef, target: LLVMValueRef) -> AsmId {
        let convergent = has_enum_attribute("convergent", |kind| {
            LLVMGetCallSiteEnumAttribute(i, LLVMAttributeFunctionIndex, kind)
        });
        if let Some(&id) = self.asms.get(&(target, convergent)) {
            return id;
        }
        let (mut n1, mut n2) = (0, 0);
        let text = LLVMGetInlineAsmAsmString(target, &mut n1);
        let constraints = LLVMGetInlineAsmConstraintString(target, &mut n2);
        let id = self.m.intern_asm(InlineAsm {
            text: string_from(text, n1),
            constraints: string_from(constraints, n2),
            side_effects: LLVMGetInlineAsmHasSideEffects(target) != 0,
            convergent,
            align_stack: LLVMGetInlineAsmNeedsAlignedStack(target) != 0,
            can_unwind: LLVMGetInlineAsmCanUnwind(target) != 0,
        });
        self.asms.insert((target, convergent), id);
        id
    }

    /// Extra data for instructions and constant expressions alike.
    unsafe fn kind(&mut self, i: LLVMValueRef, op: Opcode) -> InstKind {
        match op {
            Opcode::ICmp => InstKind::ICmp(int_pred(LLVMGetICmpPredicate(i))),
            Opcode::FCmp => InstKind::FCmp(float_pred(LLVMGetFCmpPredicate(i))),
            Opcode::GetElementPtr => InstKind::Gep {
                source: self.ty(LLVMGetGEPSourceElementType(i)),
                inbounds: LLVMIsInBounds(i) != 0,
            },
            Opcode::Alloca if LLVMIsAInstruction(i).is_null() => InstKind::Plain,
            Opcode::Alloca => InstKind::Alloca {
                allocated: self.ty(LLVMGetAllocatedType(i)),
            },
            Opcode::Load => InstKind::Load {
                align: LLVMGetAlignment(i),
                volatile: LLVMGetVolatile(i) != 0,
            },
            Opcode::Store => InstKind::Store {
                align: LLVMGetAlignment(i),
                volatile: LLVMGetVolatile(i) != 0,
            },
            Opcode::AtomicRmw => InstKind::AtomicRmw {
                op: rmw_op(LLVMGetAtomicRMWBinOp(i)),
            },
            Opcode::CmpXchg => InstKind::CmpXchg,
            Opcode::ExtractValue | Opcode::InsertValue if !LLVMIsAInstruction(i).is_null() => {
                let n = LLVMGetNumIndices(i) as usize;
                let p = LLVMGetIndices(i);
                InstKind::Indices(std::slice::from_raw_parts(p, n).to_vec())
            }
            Opcode::ShuffleVector if !LLVMIsAInstruction(i).is_null() => {
                let n = LLVMGetNumMaskElements(i);
                InstKind::Mask((0..n).map(|k| LLVMGetMaskValue(i, k)).collect())
            }
            Opcode::Ret | Opcode::Unreachable | Opcode::OtherTerminator => InstKind::Plain,
            _ => InstKind::Plain,
        }
    }

    unsafe fn value(&mut self, v: LLVMValueRef) -> Value {
        if v.is_null() {
            return Value::Opaque;
        }
        if let Some(&i) = self.insts.get(&v) {
            return Value::Inst(i);
        }
        if let Some(&a) = self.params.get(&v) {
            return Value::Arg(a);
        }
        if let Some(&f) = self.funcs.get(&v) {
            return Value::Func(f);
        }
        if let Some(&g) = self.globals.get(&v) {
            return Value::Global(g);
        }
        if LLVMIsAConstant(v).is_null() || !LLVMIsAGlobalValue(v).is_null() {
            // Metadata, inline asm, labels, aliases: nothing we model.
            return Value::Opaque;
        }
        if let Some(&c) = self.consts.get(&v) {
            return Value::Const(c);
        }
        let c = self.constant(v);
        let id = ConstId::new(self.m.consts.len());
        self.m.consts.push(c);
        self.consts.insert(v, id);
        Value::Const(id)
    }

    unsafe fn constant(&mut self, v: LLVMValueRef) -> Const {
        let ty = self.ty(LLVMTypeOf(v));
        if !LLVMIsAConstantInt(v).is_null() {
            let bits = LLVMGetIntTypeWidth(LLVMTypeOf(v));
            if bits <= 64 {
                return Const::Int {
                    ty,
                    bits,
                    value: u128::from(LLVMConstIntGetZExtValue(v)),
                };
            }
        }
        if !LLVMIsAConstantFP(v).is_null() {
            let mut loses = 0;
            return Const::Float {
                ty,
                value: LLVMConstRealGetDouble(v, &mut loses),
            };
        }
        if !LLVMIsAConstantPointerNull(v).is_null() {
            return Const::Null(ty);
        }
        if !LLVMIsAPoisonValue(v).is_null() {
            return Const::Poison(ty);
        }
        if !LLVMIsAUndefValue(v).is_null() {
            return Const::Undef(ty);
        }
        if !LLVMIsAConstantAggregateZero(v).is_null() {
            return Const::Zero(ty);
        }
        if !LLVMIsAConstantExpr(v).is_null() {
            let op = opcode(LLVMGetConstOpcode(v));
            let operands = self.all_operands(v);
            let kind = self.kind(v, op);
            return Const::Expr {
                ty,
                op,
                operands,
                kind,
            };
        }
        if !LLVMIsAConstantDataSequential(v).is_null()
            || !LLVMIsAConstantArray(v).is_null()
            || !LLVMIsAConstantStruct(v).is_null()
            || !LLVMIsAConstantVector(v).is_null()
        {
            let n = match self.m.types.kind(ty) {
                TypeKind::Array(_, n) => *n as u32,
                TypeKind::Vector(_, n) => *n,
                TypeKind::Struct { fields, .. } => fields.len() as u32,
                _ => 0,
            };
            let elems = (0..n)
                .map(|k| self.value(LLVMGetAggregateElement(v, k)))
                .collect();
            return Const::Aggregate { ty, elems };
        }
        Const::Other {
            ty,
            text: print_value(v),
        }
    }

    unsafe fn ty(&mut self, t: LLVMTypeRef) -> TypeId {
        if let Some(&id) = self.types.get(&t) {
            return id;
        }
        let kind = match LLVMGetTypeKind(t) {
            LLVMTypeKind::LLVMVoidTypeKind => TypeKind::Void,
            LLVMTypeKind::LLVMIntegerTypeKind => TypeKind::Int(LLVMGetIntTypeWidth(t)),
            LLVMTypeKind::LLVMHalfTypeKind => TypeKind::Half,
            LLVMTypeKind::LLVMBFloatTypeKind => TypeKind::BFloat,
            LLVMTypeKind::LLVMFloatTypeKind => TypeKind::Float,
            LLVMTypeKind::LLVMDoubleTypeKind => TypeKind::Double,
            LLVMTypeKind::LLVMPointerTypeKind => TypeKind::Ptr(LLVMGetPointerAddressSpace(t)),
            LLVMTypeKind::LLVMArrayTypeKind => {
                TypeKind::Array(self.ty(LLVMGetElementType(t)), LLVMGetArrayLength2(t))
            }
            LLVMTypeKind::LLVMVectorTypeKind => {
                TypeKind::Vector(self.ty(LLVMGetElementType(t)), LLVMGetVectorSize(t))
            }
            LLVMTypeKind::LLVMStructTypeKind => {
                let n = LLVMCountStructElementTypes(t);
                let fields = (0..n)
                    .map(|k| self.ty(LLVMStructGetTypeAtIndex(t, k)))
                    .collect();
                TypeKind::Struct {
                    fields,
                    packed: LLVMIsPackedStruct(t) != 0,
                }
            }
            LLVMTypeKind::LLVMFunctionTypeKind => TypeKind::Func,
            LLVMTypeKind::LLVMLabelTypeKind => TypeKind::Label,
            LLVMTypeKind::LLVMMetadataTypeKind => TypeKind::Metadata,
            LLVMTypeKind::LLVMTokenTypeKind => TypeKind::Token,
            _ => {
                let p = LLVMPrintTypeToString(t);
                let s = CStr::from_ptr(p).to_string_lossy().into_owned();
                LLVMDisposeMessage(p);
                TypeKind::Other(s)
            }
        };
        let id = self.m.types.intern(kind);
        self.types.insert(t, id);
        id
    }

    unsafe fn loc(&mut self, dl: LLVMMetadataRef) -> LocId {
        if let Some(&l) = self.locs.get(&dl) {
            return l;
        }
        let scope = LLVMDILocationGetScope(dl);
        let inlined = LLVMDILocationGetInlinedAt(dl);
        let inlined_at = (!inlined.is_null()).then(|| self.loc(inlined));
        let loc = Loc {
            pos: SourcePos {
                file: self.scope_file(scope),
                line: LLVMDILocationGetLine(dl),
                col: LLVMDILocationGetColumn(dl),
            },
            scope: self.scope_name(scope),
            inlined_at,
        };
        let id = LocId::new(self.m.locs.len());
        self.m.locs.push(loc);
        self.locs.insert(dl, id);
        id
    }

    unsafe fn scope_file(&mut self, scope: LLVMMetadataRef) -> FileId {
        let file = if scope.is_null() {
            std::ptr::null_mut()
        } else {
            LLVMDIScopeGetFile(scope)
        };
        let (mut n1, mut n2) = (0, 0);
        let (name, dir) = if file.is_null() {
            (String::new(), String::new())
        } else {
            (
                string_from(LLVMDIFileGetFilename(file, &mut n1), n1 as usize),
                string_from(LLVMDIFileGetDirectory(file, &mut n2), n2 as usize),
            )
        };
        let next = FileId::new(self.m.files.len());
        let id = *self
            .files
            .entry((name.clone(), dir.clone()))
            .or_insert(next);
        if id == next {
            self.m.files.push(SourceFile {
                name,
                directory: dir,
            });
        }
        id
    }

    /// The name of the `DISubprogram` enclosing a scope: lexical blocks keep
    /// their parent scope in operand 1, subprograms their name in operand 2.
    unsafe fn scope_name(&self, mut scope: LLVMMetadataRef) -> Option<String> {
        for _ in 0..64 {
            if scope.is_null() {
                return None;
            }
            let ops = self.md_operands(scope);
            match LLVMGetMetadataKind(scope) {
                LLVMMetadataKind::LLVMDISubprogramMetadataKind => {
                    let name = *ops.get(2)?;
                    let mut len = 0;
                    let p = if name.is_null() {
                        std::ptr::null()
                    } else {
                        LLVMGetMDString(name, &mut len)
                    };
                    return (!p.is_null()).then(|| string_from(p, len as usize));
                }
                LLVMMetadataKind::LLVMDILexicalBlockMetadataKind
                | LLVMMetadataKind::LLVMDILexicalBlockFileMetadataKind => {
                    let parent = *ops.get(1)?;
                    if parent.is_null() {
                        return None;
                    }
                    scope = LLVMValueAsMetadata(parent);
                }
                _ => return None,
            }
        }
        None
    }
}

/// The value of successor `k`'s case (`k >= 1`; 0 is the default). LLVM 19
/// keeps case values among the operands, `[cond, default, v1, dest1, ...]`;
/// LLVM 22 keeps them apart and has an accessor.
#[cfg(feature = "llvm19")]
unsafe fn switch_case_value(switch: LLVMValueRef, k: u32) -> LLVMValueRef {
    LLVMGetOperand(switch, 2 * k)
}

#[cfg(feature = "llvm22")]
unsafe fn switch_case_value(switch: LLVMValueRef, k: u32) -> LLVMValueRef {
    LLVMGetSwitchCaseValue(switch, k)
}

/// `__launch_bounds__` and `reqntid` as LLVM 20 and later carry them:
/// `"nvvm.maxntid"="128,2"`, `"nvvm.reqntid"`, `"nvvm.minctasm"="4"`. LLVM
/// 19's `nvvm.annotations`, read later, fill the same fields.
unsafe fn launch_attributes(f: LLVMValueRef) -> LaunchBounds {
    let text = |key: &str| -> Option<String> {
        let attr = LLVMGetStringAttributeAtIndex(
            f,
            LLVMAttributeFunctionIndex,
            key.as_ptr().cast(),
            key.len() as u32,
        );
        if attr.is_null() {
            return None;
        }
        let mut len = 0;
        let p = LLVMGetStringAttributeValue(attr, &mut len);
        Some(string_from(p, len as usize))
    };
    LaunchBounds {
        maxntid: text("nvvm.maxntid").and_then(|t| upgrade::launch_dims(&t)),
        reqntid: text("nvvm.reqntid").and_then(|t| upgrade::launch_dims(&t)),
        minctasm: text("nvvm.minctasm").and_then(|t| t.trim().parse().ok()),
    }
}

/// The `align` attribute of a call's argument `k` (1-based, as LLVM
/// numbers them), 0 when it has none.
unsafe fn call_align(call: LLVMValueRef, k: u32) -> u32 {
    let name = "align";
    let kind = LLVMGetEnumAttributeKindForName(name.as_ptr().cast(), name.len());
    if kind == 0 || LLVMGetNumArgOperands(call) < k {
        return 0;
    }
    let attr = LLVMGetCallSiteEnumAttribute(call, k, kind);
    if attr.is_null() {
        return 0;
    }
    u32::try_from(LLVMGetEnumAttributeValue(attr)).unwrap_or(0)
}

/// Whether the enum attribute `name` is set, as `lookup(kind)` finds it.
unsafe fn has_enum_attribute(name: &str, lookup: impl FnOnce(u32) -> LLVMAttributeRef) -> bool {
    let kind = LLVMGetEnumAttributeKindForName(name.as_ptr().cast(), name.len());
    kind != 0 && !lookup(kind).is_null()
}

unsafe fn md_node_operands(node: LLVMValueRef) -> Vec<LLVMValueRef> {
    if node.is_null() || LLVMIsAMDNode(node).is_null() {
        return Vec::new();
    }
    let n = LLVMGetMDNodeNumOperands(node);
    let mut ops = vec![std::ptr::null_mut(); n as usize];
    LLVMGetMDNodeOperands(node, ops.as_mut_ptr());
    ops
}

unsafe fn print_value(v: LLVMValueRef) -> String {
    let p = LLVMPrintValueToString(v);
    let s = CStr::from_ptr(p).to_string_lossy().into_owned();
    LLVMDisposeMessage(p);
    s
}

/// The text after `key` in a printed metadata node.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.find(key).map(|i| &text[i + key.len()..])
}

fn opcode(op: LLVMOpcode) -> Opcode {
    use LLVMOpcode as L;
    match op {
        L::LLVMRet => Opcode::Ret,
        L::LLVMBr => Opcode::Br,
        L::LLVMSwitch => Opcode::Switch,
        L::LLVMUnreachable => Opcode::Unreachable,
        L::LLVMIndirectBr | L::LLVMInvoke | L::LLVMCallBr | L::LLVMResume => {
            Opcode::OtherTerminator
        }
        L::LLVMFNeg => Opcode::FNeg,
        L::LLVMAdd => Opcode::Add,
        L::LLVMFAdd => Opcode::FAdd,
        L::LLVMSub => Opcode::Sub,
        L::LLVMFSub => Opcode::FSub,
        L::LLVMMul => Opcode::Mul,
        L::LLVMFMul => Opcode::FMul,
        L::LLVMUDiv => Opcode::UDiv,
        L::LLVMSDiv => Opcode::SDiv,
        L::LLVMFDiv => Opcode::FDiv,
        L::LLVMURem => Opcode::URem,
        L::LLVMSRem => Opcode::SRem,
        L::LLVMFRem => Opcode::FRem,
        L::LLVMShl => Opcode::Shl,
        L::LLVMLShr => Opcode::LShr,
        L::LLVMAShr => Opcode::AShr,
        L::LLVMAnd => Opcode::And,
        L::LLVMOr => Opcode::Or,
        L::LLVMXor => Opcode::Xor,
        L::LLVMAlloca => Opcode::Alloca,
        L::LLVMLoad => Opcode::Load,
        L::LLVMStore => Opcode::Store,
        L::LLVMGetElementPtr => Opcode::GetElementPtr,
        L::LLVMFence => Opcode::Fence,
        L::LLVMAtomicCmpXchg => Opcode::CmpXchg,
        L::LLVMAtomicRMW => Opcode::AtomicRmw,
        L::LLVMTrunc => Opcode::Trunc,
        L::LLVMZExt => Opcode::ZExt,
        L::LLVMSExt => Opcode::SExt,
        L::LLVMFPToUI => Opcode::FPToUI,
        L::LLVMFPToSI => Opcode::FPToSI,
        L::LLVMUIToFP => Opcode::UIToFP,
        L::LLVMSIToFP => Opcode::SIToFP,
        L::LLVMFPTrunc => Opcode::FPTrunc,
        L::LLVMFPExt => Opcode::FPExt,
        L::LLVMPtrToInt => Opcode::PtrToInt,
        L::LLVMIntToPtr => Opcode::IntToPtr,
        L::LLVMBitCast => Opcode::BitCast,
        L::LLVMAddrSpaceCast => Opcode::AddrSpaceCast,
        L::LLVMICmp => Opcode::ICmp,
        L::LLVMFCmp => Opcode::FCmp,
        L::LLVMPHI => Opcode::Phi,
        L::LLVMCall => Opcode::Call,
        L::LLVMSelect => Opcode::Select,
        L::LLVMExtractElement => Opcode::ExtractElement,
        L::LLVMInsertElement => Opcode::InsertElement,
        L::LLVMShuffleVector => Opcode::ShuffleVector,
        L::LLVMExtractValue => Opcode::ExtractValue,
        L::LLVMInsertValue => Opcode::InsertValue,
        L::LLVMFreeze => Opcode::Freeze,
        L::LLVMVAArg => Opcode::VAArg,
        L::LLVMLandingPad => Opcode::LandingPad,
        _ => Opcode::Unknown,
    }
}

fn int_pred(p: LLVMIntPredicate) -> IntPred {
    use LLVMIntPredicate as P;
    match p {
        P::LLVMIntEQ => IntPred::Eq,
        P::LLVMIntNE => IntPred::Ne,
        P::LLVMIntUGT => IntPred::Ugt,
        P::LLVMIntUGE => IntPred::Uge,
        P::LLVMIntULT => IntPred::Ult,
        P::LLVMIntULE => IntPred::Ule,
        P::LLVMIntSGT => IntPred::Sgt,
        P::LLVMIntSGE => IntPred::Sge,
        P::LLVMIntSLT => IntPred::Slt,
        P::LLVMIntSLE => IntPred::Sle,
    }
}

fn float_pred(p: LLVMRealPredicate) -> FloatPred {
    use LLVMRealPredicate as P;
    match p {
        P::LLVMRealPredicateFalse => FloatPred::False,
        P::LLVMRealOEQ => FloatPred::Oeq,
        P::LLVMRealOGT => FloatPred::Ogt,
        P::LLVMRealOGE => FloatPred::Oge,
        P::LLVMRealOLT => FloatPred::Olt,
        P::LLVMRealOLE => FloatPred::Ole,
        P::LLVMRealONE => FloatPred::One,
        P::LLVMRealORD => FloatPred::Ord,
        P::LLVMRealUNO => FloatPred::Uno,
        P::LLVMRealUEQ => FloatPred::Ueq,
        P::LLVMRealUGT => FloatPred::Ugt,
        P::LLVMRealUGE => FloatPred::Uge,
        P::LLVMRealULT => FloatPred::Ult,
        P::LLVMRealULE => FloatPred::Ule,
        P::LLVMRealUNE => FloatPred::Une,
        P::LLVMRealPredicateTrue => FloatPred::True,
    }
}

fn rmw_op(op: LLVMAtomicRMWBinOp) -> RmwOp {
    use LLVMAtomicRMWBinOp as A;
    match op {
        A::LLVMAtomicRMWBinOpXchg => RmwOp::Xchg,
        A::LLVMAtomicRMWBinOpAdd => RmwOp::Add,
        A::LLVMAtomicRMWBinOpSub => RmwOp::Sub,
        A::LLVMAtomicRMWBinOpAnd => RmwOp::And,
        A::LLVMAtomicRMWBinOpNand => RmwOp::Nand,
        A::LLVMAtomicRMWBinOpOr => RmwOp::Or,
        A::LLVMAtomicRMWBinOpXor => RmwOp::Xor,
        A::LLVMAtomicRMWBinOpMax => RmwOp::Max,
        A::LLVMAtomicRMWBinOpMin => RmwOp::Min,
        A::LLVMAtomicRMWBinOpUMax => RmwOp::UMax,
        A::LLVMAtomicRMWBinOpUMin => RmwOp::UMin,
        A::LLVMAtomicRMWBinOpFAdd => RmwOp::FAdd,
        A::LLVMAtomicRMWBinOpFSub => RmwOp::FSub,
        A::LLVMAtomicRMWBinOpFMax => RmwOp::FMax,
        A::LLVMAtomicRMWBinOpFMin => RmwOp::FMin,
        A::LLVMAtomicRMWBinOpUIncWrap => RmwOp::UIncWrap,
        A::LLVMAtomicRMWBinOpUDecWrap => RmwOp::UDecWrap,
        #[cfg(feature = "llvm22")]
        A::LLVMAtomicRMWBinOpUSubCond => RmwOp::USubCond,
        #[cfg(feature = "llvm22")]
        A::LLVMAtomicRMWBinOpUSubSat => RmwOp::USubSat,
        #[cfg(feature = "llvm22")]
        A::LLVMAtomicRMWBinOpFMaximum => RmwOp::FMaximum,
        #[cfg(feature = "llvm22")]
        A::LLVMAtomicRMWBinOpFMinimum => RmwOp::FMinimum,
    }
}
