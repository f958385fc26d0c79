//! Kernel launches read from a `.cu` file's host-side IR (clang
//! `--cuda-host-only`): the shape a `kernel<<<grid, block, shmem>>>(…)`
//! asks for, where the host code writes it down.
//!
//! Clang lowers each `<<<…>>>` to a call of `__cudaPushCallConfiguration`
//! (CUDA 9.2 and later; `cudaConfigureCall` when it knows no SDK version)
//! with the grid and the block as `dim3`s split the C ABI's way — `x` and
//! `y` packed in one `i64`, `z` an `i32` — then the shared bytes and the
//! stream, followed by a call of the kernel's host stub (or, once the stub
//! is inlined, `cudaLaunchKernel`/`cudaLaunch` of it). The stub is the
//! kernel's mangled name with `__device_stub__` before its identifier. An
//! operand that is a constant after clang's own folding (`-O1` folds
//! `(n + 127) / 128` for a constant `n` and a `dim3` of constants) is read;
//! anything else is unknown.
//!
//! The arguments are read where the launch shows them: the stub's
//! operands, the slots `cudaSetupArgument` hands on (the runtime of no
//! toolkit), or the argument array `cudaLaunchKernel` takes. A pointer
//! argument that is a constant byte offset from a pointer the host keeps
//! (`k<<<…>>>(p + 1)`, `p` from `cudaMalloc`) has that offset.

use inkwell::context::Context;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::debuginfo::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::target::{LLVMABISizeOfType, LLVMGetModuleDataLayout};
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::memory_buffer::MemoryBuffer;
use std::collections::HashSet;
use std::ffi::c_char;
use std::path::Path;

/// One `<<<…>>>` launch in host code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostLaunch {
    /// The kernel's mangled (device) name.
    pub kernel: String,
    /// The grid, when all three extents are constants.
    pub grid: Option<[u32; 3]>,
    /// The block, when all three extents are constants.
    pub block: Option<[u32; 3]>,
    /// The dynamic shared memory in bytes, when a constant.
    pub shared_bytes: Option<u64>,
    /// The file and line of the launch, as the debug info names them
    /// (empty and 0 without debug info).
    pub file: String,
    pub line: u32,
    /// Per kernel argument, in order, the constant byte offset the host
    /// adds to the pointer it passes (`p + 1` of floats: 4; `p`: 0), where
    /// the argument is such a pointer; `None` for any other argument or
    /// one computed otherwise. Empty when the arguments are not found.
    pub arg_offsets: Vec<Option<i64>>,
}

/// The calls that open a launch configuration.
const CONFIGURE: [&str; 2] = ["__cudaPushCallConfiguration", "cudaConfigureCall"];
/// The runtime calls that launch a kernel handed to them as operand 0.
const LAUNCH: [&str; 3] = [
    "cudaLaunchKernel",
    "cudaLaunch",
    "cudaLaunchCooperativeKernel",
];
/// Blocks searched after a configuration for its launch (the stub call sits
/// behind the configuration's error check, a few blocks on).
const SEARCH_BLOCKS: usize = 64;

/// Every launch in a host-side `.ll`/`.bc` file, in the file's order.
pub fn read_file(path: &Path) -> Result<Vec<HostLaunch>, super::llvm::LoadError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| super::llvm::LoadError {
        path: shown.clone(),
        line: None,
        message: format!("{shown}: cannot read: {e}"),
    })?;
    let context = Context::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(&bytes, &shown);
    let module = context
        .create_module_from_ir(buffer)
        .map_err(|e| super::llvm::LoadError {
            path: shown.clone(),
            line: None,
            message: format!("{shown}: {}", e.to_string_lossy().trim()),
        })?;
    // SAFETY: the module lives until the end of this function and is only
    // read.
    Ok(unsafe { launches(module.as_mut_ptr()) })
}

unsafe fn launches(m: LLVMModuleRef) -> Vec<HostLaunch> {
    let mut out = Vec::new();
    let mut f = LLVMGetFirstFunction(m);
    while !f.is_null() {
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                if callee_name(i).is_some_and(|n| CONFIGURE.contains(&n.as_str())) {
                    if let Some(l) = launch_at(i, m) {
                        out.push(l);
                    }
                }
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
        f = LLVMGetNextFunction(f);
    }
    out
}

/// The launch a configuration call opens, if its stub is found before
/// another configuration.
unsafe fn launch_at(config: LLVMValueRef, m: LLVMModuleRef) -> Option<HostLaunch> {
    if LLVMGetNumArgOperands(config) < 5 {
        return None;
    }
    let op = |n| LLVMGetOperand(config, n);
    let (kernel, args) = launched_kernel(config)?;
    let (file, line) = location(config);
    Some(HostLaunch {
        kernel,
        grid: dim3(op(0), op(1)),
        block: dim3(op(2), op(3)),
        shared_bytes: constant(op(4)),
        file,
        line,
        arg_offsets: args.into_iter().map(|a| pointer_offset(m, a, 0)).collect(),
    })
}

/// The constant byte offset of a pointer from the one it is computed from
/// by `getelementptr`s with constant indices, when that one is a pointer
/// the host keeps (loaded from a variable, a parameter, a call's result);
/// `None` for anything else (a phi, a select, a variable index).
unsafe fn pointer_offset(m: LLVMModuleRef, v: LLVMValueRef, depth: u32) -> Option<i64> {
    if v.is_null() || depth > 16 {
        return None;
    }
    if !LLVMIsAArgument(v).is_null() {
        return Some(0);
    }
    let gep = !LLVMIsAGetElementPtrInst(v).is_null()
        || (!LLVMIsAConstantExpr(v).is_null()
            && LLVMGetConstOpcode(v) == LLVMOpcode::LLVMGetElementPtr);
    if !LLVMIsAConstantExpr(v).is_null() && !gep {
        return None;
    }
    if gep {
        // Only `getelementptr T, ptr p, i64 C`: one constant index.
        if LLVMGetNumOperands(v) != 2 {
            return None;
        }
        let index = constant_signed(LLVMGetOperand(v, 1))?;
        let elem = LLVMGetGEPSourceElementType(v);
        let size = LLVMABISizeOfType(LLVMGetModuleDataLayout(m), elem) as i64;
        let base = pointer_offset(m, LLVMGetOperand(v, 0), depth + 1)?;
        return base.checked_add(index.checked_mul(size)?);
    }
    if LLVMIsAInstruction(v).is_null() {
        return None;
    }
    match LLVMGetInstructionOpcode(v) {
        LLVMOpcode::LLVMLoad | LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke => Some(0),
        LLVMOpcode::LLVMBitCast | LLVMOpcode::LLVMAddrSpaceCast => {
            pointer_offset(m, LLVMGetOperand(v, 0), depth + 1)
        }
        _ => None,
    }
}

unsafe fn constant_signed(v: LLVMValueRef) -> Option<i64> {
    (!LLVMIsAConstantInt(v).is_null()).then(|| LLVMConstIntGetSExtValue(v))
}

/// A `dim3` passed as `{x, y}` in an `i64` and `z` in an `i32`, when both
/// are constants and every extent is at least 1.
unsafe fn dim3(xy: LLVMValueRef, z: LLVMValueRef) -> Option<[u32; 3]> {
    let (xy, z) = (constant(xy)?, constant(z)?);
    let dims = [xy as u32, (xy >> 32) as u32, z as u32];
    (!dims.contains(&0)).then_some(dims)
}

unsafe fn constant(v: LLVMValueRef) -> Option<u64> {
    (!LLVMIsAConstantInt(v).is_null()).then(|| LLVMConstIntGetZExtValue(v))
}

/// The device name of the kernel the configuration at `config` launches,
/// and the arguments it is handed where they show: the first stub called,
/// or handed to the runtime, on the paths from the configuration.
unsafe fn launched_kernel(config: LLVMValueRef) -> Option<(String, Vec<LLVMValueRef>)> {
    let mut seen = HashSet::new();
    let mut todo = std::collections::VecDeque::new();
    // `cudaSetupArgument` slots met on the way (no toolkit's runtime).
    let mut setup = Vec::new();
    // From the configuration itself: with exceptions on it is an `invoke`,
    // which ends its block.
    let mut inst = config;
    let mut searched = 0;
    loop {
        while !inst.is_null() {
            if let Some(name) = callee_name(inst).filter(|_| inst != config) {
                if CONFIGURE.contains(&name.as_str()) {
                    // The next launch's configuration: not on this path.
                    break;
                }
                if name == SETUP_ARGUMENT && LLVMGetNumArgOperands(inst) > 0 {
                    setup.push(stored_into(LLVMGetOperand(inst, 0)));
                }
                if let Some(k) = kernel_of_stub(&name) {
                    let n = LLVMGetNumArgOperands(inst);
                    return Some((k, (0..n).map(|a| LLVMGetOperand(inst, a)).collect()));
                }
                if LAUNCH.contains(&name.as_str()) && LLVMGetNumArgOperands(inst) > 0 {
                    let f = LLVMGetOperand(inst, 0);
                    if !LLVMIsAFunction(f).is_null() {
                        if let Some(k) = kernel_of_stub(&value_name(f)) {
                            let args = match setup.is_empty() {
                                false => std::mem::take(&mut setup),
                                true => launch_array(inst),
                            };
                            return Some((k, args));
                        }
                    }
                }
            }
            if LLVMIsATerminatorInst(inst).is_null() {
                inst = LLVMGetNextInstruction(inst);
                continue;
            }
            for s in 0..LLVMGetNumSuccessors(inst) {
                let next = LLVMGetSuccessor(inst, s);
                if seen.insert(next) {
                    todo.push_back(next);
                }
            }
            break;
        }
        searched += 1;
        let bb = todo.pop_front().filter(|_| searched <= SEARCH_BLOCKS)?;
        inst = LLVMGetFirstInstruction(bb);
    }
}

/// `cudaSetupArgument(slot, size, offset)`: the runtime without a toolkit
/// copies each argument from a slot.
const SETUP_ARGUMENT: &str = "cudaSetupArgument";

/// The value last stored into `slot` (an `alloca`) before its use, in its
/// block or the one before; null when none is found.
unsafe fn stored_into(slot: LLVMValueRef) -> LLVMValueRef {
    let mut use_ = LLVMGetFirstUse(slot);
    let mut found = std::ptr::null_mut();
    while !use_.is_null() {
        let user = LLVMGetUser(use_);
        if LLVMGetInstructionOpcode(user) == LLVMOpcode::LLVMStore
            && LLVMGetOperand(user, 1) == slot
        {
            found = LLVMGetOperand(user, 0);
        }
        use_ = LLVMGetNextUse(use_);
    }
    found
}

/// The arguments of `cudaLaunchKernel(f, grid, block, args, …)`: `args` an
/// array of pointers to slots, each holding one argument.
unsafe fn launch_array(call: LLVMValueRef) -> Vec<LLVMValueRef> {
    // grid and block are passed split (x and y in an i64, z an i32): the
    // array is the sixth operand; with them passed whole, the fourth.
    let n = LLVMGetNumArgOperands(call);
    let array = (1..n)
        .map(|k| LLVMGetOperand(call, k))
        .find(|&a| !LLVMIsAAllocaInst(a).is_null());
    let Some(array) = array else {
        return Vec::new();
    };
    // Stores of slot pointers into the array, by element.
    let mut slots: Vec<(i64, LLVMValueRef)> = Vec::new();
    let mut visit = |elem: LLVMValueRef, at: i64| {
        let mut use_ = LLVMGetFirstUse(elem);
        while !use_.is_null() {
            let user = LLVMGetUser(use_);
            if LLVMGetInstructionOpcode(user) == LLVMOpcode::LLVMStore
                && LLVMGetOperand(user, 1) == elem
            {
                slots.push((at, stored_into(LLVMGetOperand(user, 0))));
            }
            use_ = LLVMGetNextUse(use_);
        }
    };
    visit(array, 0);
    let mut use_ = LLVMGetFirstUse(array);
    while !use_.is_null() {
        let user = LLVMGetUser(use_);
        if !LLVMIsAGetElementPtrInst(user).is_null() && LLVMGetNumOperands(user) == 2 {
            if let Some(k) = constant_signed(LLVMGetOperand(user, 1)) {
                visit(user, k);
            }
        }
        use_ = LLVMGetNextUse(use_);
    }
    slots.sort_by_key(|s| s.0);
    // Byte offsets (i8 GEPs of 8k) or element indices: the order is all.
    slots.into_iter().map(|s| s.1).collect()
}

/// The name of a call's callee, when it calls a function directly.
unsafe fn callee_name(i: LLVMValueRef) -> Option<String> {
    if LLVMIsACallInst(i).is_null() && LLVMGetInstructionOpcode(i) != LLVMOpcode::LLVMInvoke {
        return None;
    }
    let callee = LLVMGetCalledValue(i);
    (!callee.is_null() && !LLVMIsAFunction(callee).is_null()).then(|| value_name(callee))
}

unsafe fn value_name(v: LLVMValueRef) -> String {
    let mut len = 0;
    let p = LLVMGetValueName2(v, &mut len);
    text(p, len)
}

unsafe fn text(p: *const c_char, len: usize) -> String {
    if p.is_null() {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
}

/// The file and line of an instruction's debug location.
unsafe fn location(i: LLVMValueRef) -> (String, u32) {
    let dl = LLVMInstructionGetDebugLoc(i);
    if dl.is_null() {
        return (String::new(), 0);
    }
    let scope = LLVMDILocationGetScope(dl);
    let file = if scope.is_null() {
        std::ptr::null_mut()
    } else {
        LLVMDIScopeGetFile(scope)
    };
    let name = if file.is_null() {
        String::new()
    } else {
        let mut n = 0;
        let p = LLVMDIFileGetFilename(file, &mut n);
        text(p, n as usize)
    };
    (name, LLVMDILocationGetLine(dl))
}

const STUB: &str = "__device_stub__";

/// The kernel a host stub stands for: `_Z19__device_stub__tilePf` is
/// `_Z4tilePf`, `_ZN2ns19__device_stub__kEv` is `_ZN2ns1kEv`, and an
/// `extern "C"` stub `__device_stub__k` is `k`. `None` for other names.
pub fn kernel_of_stub(name: &str) -> Option<String> {
    if let Some(k) = name.strip_prefix(STUB) {
        return (!k.is_empty()).then(|| k.to_string());
    }
    if !name.starts_with("_Z") {
        return None;
    }
    // The first `<len>__device_stub__` identifier: its length loses the
    // prefix's.
    let at = name.find(STUB)?;
    let digits = name[..at]
        .bytes()
        .rev()
        .take_while(u8::is_ascii_digit)
        .count();
    if digits == 0 {
        return None;
    }
    let len: usize = name[at - digits..at].parse().ok()?;
    let rest = len.checked_sub(STUB.len()).filter(|&n| n > 0)?;
    Some(format!(
        "{}{rest}{}",
        &name[..at - digits],
        &name[at + STUB.len()..]
    ))
}

/// The launches warpcheck's frontend action recorded from a file's AST
/// (`passes/frontend/launches.cpp`): a line each, `kernel`, grid and block
/// as `x,y,z` or `-`, shared bytes or `-`, file, line, and each argument's
/// pointer offset (`0,4,-`), separated by tabs. Lines that do not read so
/// are skipped.
pub fn parse_recorded(text: &str) -> Vec<HostLaunch> {
    let dims = |s: &str| -> Option<[u32; 3]> {
        let v: Vec<u32> = s
            .split(',')
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        <[u32; 3]>::try_from(v).ok()
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let (kernel, grid, block, shared, file, line, offsets) = match f[..] {
                [k, g, b, s, f, l] => (k, g, b, s, f, l, ""),
                [k, g, b, s, f, l, o] => (k, g, b, s, f, l, o),
                _ => return None,
            };
            let arg_offsets = match offsets {
                "" => Vec::new(),
                o => o.split(',').map(|x| x.parse().ok()).collect(),
            };
            (!kernel.is_empty()).then(|| HostLaunch {
                kernel: kernel.to_string(),
                grid: dims(grid),
                block: dims(block),
                shared_bytes: shared.parse().ok(),
                file: file.to_string(),
                line: line.parse().unwrap_or(0),
                arg_offsets,
            })
        })
        .collect()
}

#[cfg(test)]
mod recorded_tests {
    use super::{parse_recorded, HostLaunch};

    #[test]
    fn recorded_launches_read_back() {
        let text = "_Z4tilePf\t4,1,1\t16,16,1\t0\tk.cu\t37\t4,-\n\
                    k2\t-\t-\t-\tk.cu\t40\nbroken line\n";
        assert_eq!(
            parse_recorded(text),
            [
                HostLaunch {
                    kernel: "_Z4tilePf".into(),
                    grid: Some([4, 1, 1]),
                    block: Some([16, 16, 1]),
                    shared_bytes: Some(0),
                    file: "k.cu".into(),
                    line: 37,
                    arg_offsets: vec![Some(4), None],
                },
                HostLaunch {
                    kernel: "k2".into(),
                    grid: None,
                    block: None,
                    shared_bytes: None,
                    file: "k.cu".into(),
                    line: 40,
                    arg_offsets: Vec::new(),
                },
            ]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::kernel_of_stub;

    #[test]
    fn stub_names_map_to_kernels() {
        // 19 = len("__device_stub__tile"); "tile" is 4.
        assert_eq!(
            kernel_of_stub("_Z19__device_stub__tilePf").unwrap(),
            "_Z4tilePf"
        );
        assert_eq!(
            kernel_of_stub("_Z17__device_stub__tkILi8EEvPf").unwrap(),
            "_Z2tkILi8EEvPf"
        );
        assert_eq!(
            kernel_of_stub("_ZN2ns16__device_stub__kEv").unwrap(),
            "_ZN2ns1kEv"
        );
        assert_eq!(kernel_of_stub("__device_stub__plain").unwrap(), "plain");
        assert_eq!(kernel_of_stub("_Z4tilePf"), None);
        assert_eq!(kernel_of_stub("_Z15__device_stub__Pf"), None);
        assert_eq!(kernel_of_stub("cudaLaunch"), None);
    }
}
