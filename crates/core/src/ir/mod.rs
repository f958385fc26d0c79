//! warpcheck's own IR: a compact, owned, index-based copy of an LLVM module.
//!
//! Only `ir::llvm`, `ir::launch` and `ir::debug_names` touch LLVM (through
//! inkwell). Every later stage works on
//! these plain tables, so it can be tested with modules built by
//! [`builder::ModuleBuilder`] and never holds an LLVM object.

pub mod builder;
mod debug_names;
mod demangle;
mod display;
pub mod entity;
pub mod gep;
pub mod intrinsics;
pub mod launch;
pub mod llvm;
pub mod major;
mod opcode;
pub mod source_text;
mod types;
pub mod upgrade;

pub use demangle::{base_name, demangle, template_of};
pub use entity::{
    AsmId, BlockId, ConstId, EntityVec, FileId, FuncId, GlobalId, InstId, LocId, TypeId,
};
pub use intrinsics::Intrinsic;
pub use opcode::{FloatPred, IntPred, Opcode, RmwOp};
pub use types::{Type, TypeKind, Types};

/// Address spaces as NVPTX numbers them.
pub mod addrspace {
    pub const GENERIC: u32 = 0;
    pub const GLOBAL: u32 = 1;
    pub const SHARED: u32 = 3;
    pub const CONSTANT: u32 = 4;
    pub const LOCAL: u32 = 5;
}

/// An operand: anything an instruction can refer to.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Value {
    /// The result of an instruction of the same function.
    Inst(InstId),
    /// A parameter of the enclosing function, by position.
    Arg(u32),
    Const(ConstId),
    /// The address of a global variable.
    Global(GlobalId),
    /// The address of a function.
    Func(FuncId),
    /// A basic-block label (blockaddress) or inline asm or metadata: opaque.
    Opaque,
}

/// A constant of the module's constant pool.
#[derive(Clone, PartialEq, Debug)]
pub enum Const {
    /// An integer of `bits` width; `value` holds the bits zero-extended.
    Int {
        ty: TypeId,
        bits: u32,
        value: u128,
    },
    Float {
        ty: TypeId,
        value: f64,
    },
    Null(TypeId),
    Undef(TypeId),
    Poison(TypeId),
    /// `zeroinitializer` of an aggregate.
    Zero(TypeId),
    /// Constant array, struct or vector.
    Aggregate {
        ty: TypeId,
        elems: Vec<Value>,
    },
    /// A constant expression, such as `addrspacecast (ptr addrspace(3) @s to ptr)`.
    Expr {
        ty: TypeId,
        op: Opcode,
        operands: Vec<Value>,
        kind: InstKind,
    },
    /// Something we keep only as text (e.g. a target-specific constant).
    Other {
        ty: TypeId,
        text: String,
    },
}

impl Const {
    pub fn ty(&self) -> TypeId {
        match self {
            Const::Int { ty, .. }
            | Const::Float { ty, .. }
            | Const::Null(ty)
            | Const::Undef(ty)
            | Const::Poison(ty)
            | Const::Zero(ty)
            | Const::Aggregate { ty, .. }
            | Const::Expr { ty, .. }
            | Const::Other { ty, .. } => *ty,
        }
    }

    /// The value of an integer constant, sign-extended from its width.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Const::Int { bits, value, .. } => {
                let shift = 128 - bits.clamp(1, 128);
                Some((((value << shift) as i128) >> shift) as i64)
            }
            _ => None,
        }
    }
}

/// Opcode-specific data that does not fit the operand list.
#[derive(Clone, PartialEq, Debug, Default)]
pub enum InstKind {
    #[default]
    Plain,
    ICmp(IntPred),
    FCmp(FloatPred),
    /// `getelementptr`: operands are the base then the indices.
    Gep {
        source: TypeId,
        inbounds: bool,
    },
    /// `alloca`: operand 0 is the element count.
    Alloca {
        allocated: TypeId,
    },
    /// `phi`: operand `i` flows in from `blocks[i]`.
    Phi {
        blocks: Vec<BlockId>,
    },
    /// `call`: operands are the arguments.
    Call {
        callee: Callee,
        /// The call never returns (`noreturn` on the call or the callee:
        /// `__trap`, `__assertfail`): the thread or the kernel ends here.
        noreturn: bool,
        /// The `align` the call states for its first two arguments, 0
        /// where none: what `llvm.memcpy` promises of its destination and
        /// source, from which the backend picks the width of its pieces.
        ptr_align: [u32; 2],
    },
    /// `load`: operand 0 is the address.
    Load {
        align: u32,
        volatile: bool,
    },
    /// `store`: operand 0 is the value, operand 1 the address.
    Store {
        align: u32,
        volatile: bool,
    },
    /// `atomicrmw`: operands are address and value.
    AtomicRmw {
        op: RmwOp,
    },
    /// `cmpxchg`: operands are address, expected and new value.
    CmpXchg,
    /// `br`: one target, or two (true, false) with operand 0 the condition.
    Br {
        targets: Vec<BlockId>,
    },
    /// `switch`: operand 0 is the condition.
    Switch {
        default: BlockId,
        cases: Vec<(i128, BlockId)>,
    },
    /// `extractvalue` / `insertvalue` indices.
    Indices(Vec<u32>),
    /// `shufflevector` mask (-1 for poison lanes).
    Mask(Vec<i32>),
}

/// The target of a call.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Callee {
    Direct(FuncId),
    /// Through a function pointer: unknown target.
    Indirect,
    /// An inline-asm body of the module's table ([`Module::asm`]).
    InlineAsm(AsmId),
}

/// An inline-asm callee as LLVM holds it. The text keeps LLVM's spelling:
/// operands are `$0`, `$1`, ... and PTX registers a single `%`
/// (`mov.u32 $0, %laneid;`). [`crate::ptx`] reads it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct InlineAsm {
    pub text: String,
    /// The constraint string, e.g. `=r,l,r,~{memory}`: outputs, inputs and
    /// clobbers, in operand order.
    pub constraints: String,
    /// `asm volatile` (LLVM's `sideeffect`): must not be moved or removed.
    pub side_effects: bool,
    /// The call site is `convergent` (clang marks CUDA device calls so):
    /// the body may not be made control dependent on more values.
    pub convergent: bool,
    /// LLVM's `alignstack` flag.
    pub align_stack: bool,
    /// LLVM's `unwind` flag.
    pub can_unwind: bool,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Inst {
    pub op: Opcode,
    /// The result type (`void` for stores, branches and the like).
    pub ty: TypeId,
    pub operands: Vec<Value>,
    pub kind: InstKind,
    pub block: BlockId,
    pub loc: Option<LocId>,
    /// The IR value name (`%cmp`), kept when clang was told not to drop it.
    pub name: Option<String>,
    /// LLVM's `nsw`/`nuw`/`exact` on integer arithmetic: what the loop
    /// facts say about a counter's wrap.
    pub flags: IntFlags,
}

/// The promises LLVM attaches to integer arithmetic; a broken one makes
/// the result poison, so analyses may take them as facts.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct IntFlags {
    /// `nsw` on `add`/`sub`/`mul`/`shl`: no signed overflow.
    pub nsw: bool,
    /// `nuw` on `add`/`sub`/`mul`/`shl`: no unsigned overflow.
    pub nuw: bool,
    /// `exact` on `udiv`/`sdiv`/`lshr`/`ashr`: no remainder dropped.
    pub exact: bool,
}

impl Inst {
    /// The address operand of a memory access, if this is one.
    pub fn address(&self) -> Option<Value> {
        match self.op {
            Opcode::Load | Opcode::AtomicRmw | Opcode::CmpXchg => self.operands.first().copied(),
            Opcode::Store => self.operands.get(1).copied(),
            _ => None,
        }
    }

    /// Successor blocks, for terminators.
    pub fn successors(&self) -> Vec<BlockId> {
        match &self.kind {
            InstKind::Br { targets } => targets.clone(),
            InstKind::Switch { default, cases } => std::iter::once(*default)
                .chain(cases.iter().map(|c| c.1))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether this terminator chooses between successors on a value.
    pub fn is_conditional_branch(&self) -> bool {
        match &self.kind {
            InstKind::Br { targets } => targets.len() == 2,
            InstKind::Switch { .. } => true,
            _ => false,
        }
    }

    pub fn callee(&self) -> Option<Callee> {
        match self.kind {
            InstKind::Call { callee, .. } => Some(callee),
            _ => None,
        }
    }
}

#[derive(Clone, PartialEq, Debug, Default)]
pub struct Block {
    pub name: Option<String>,
    /// Instructions in order; the last one is the terminator.
    pub insts: Vec<InstId>,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Param {
    pub ty: TypeId,
    /// The source name, when debug info or the IR names it.
    pub name: Option<String>,
    /// The type a `byval` pointer parameter carries: a kernel's structure
    /// argument, whose bytes the launch copies in.
    pub byval: Option<TypeId>,
}

/// Block-shape limits a kernel declares (`__launch_bounds__`, `reqntid`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LaunchBounds {
    /// `maxntid{x,y,z}`: `__launch_bounds__(N)` gives `[N, 1, 1]`-shaped totals.
    pub maxntid: Option<[u32; 3]>,
    /// `reqntid{x,y,z}`: the exact block shape.
    pub reqntid: Option<[u32; 3]>,
    pub minctasm: Option<u32>,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Function {
    /// The symbol (mangled) name.
    pub name: String,
    /// The demangled name with its signature, e.g. `saxpy(int, float*)`.
    pub demangled: String,
    pub params: Vec<Param>,
    pub ret: TypeId,
    pub blocks: Vec<Block>,
    pub insts: Vec<Inst>,
    /// A declaration only (no body).
    pub is_declaration: bool,
    pub is_kernel: bool,
    pub launch: LaunchBounds,
    /// Never returns to its caller (LLVM's `noreturn`).
    pub noreturn: bool,
    /// Set for declarations that are LLVM or NVVM intrinsics we know.
    pub intrinsic: Option<Intrinsic>,
    /// Where the function is defined, from its `DISubprogram`.
    pub loc: Option<SourcePos>,
    /// Source variable names of instructions, from debug info (full `-g`).
    pub source_names: std::collections::HashMap<InstId, String>,
}

impl Function {
    /// A declaration (no body), classified as an intrinsic by its name.
    pub fn declaration(name: &str, params: Vec<Param>, ret: TypeId) -> Function {
        Function {
            name: name.into(),
            demangled: demangle(name),
            params,
            ret,
            blocks: Vec::new(),
            insts: Vec::new(),
            is_declaration: true,
            is_kernel: false,
            launch: LaunchBounds::default(),
            noreturn: intrinsics::never_returns(name),
            intrinsic: Intrinsic::from_name(name),
            loc: None,
            source_names: Default::default(),
        }
    }

    pub fn entry(&self) -> BlockId {
        BlockId(0)
    }

    pub fn inst(&self, id: InstId) -> &Inst {
        &self.insts[id.index()]
    }

    pub fn terminator(&self, b: BlockId) -> Option<&Inst> {
        self.blocks[b.index()].insts.last().map(|&i| self.inst(i))
    }

    pub fn successors(&self, b: BlockId) -> Vec<BlockId> {
        self.terminator(b)
            .map(|t| t.successors())
            .unwrap_or_default()
    }

    pub fn block_ids(&self) -> impl Iterator<Item = BlockId> {
        (0..self.blocks.len()).map(BlockId::new)
    }

    pub fn inst_ids(&self) -> impl Iterator<Item = InstId> {
        (0..self.insts.len()).map(InstId::new)
    }

    /// The short source name, e.g. `saxpy` for `_Z5saxpyifPfS_`.
    pub fn short_name(&self) -> String {
        base_name(&self.demangled)
    }
}

#[derive(Clone, PartialEq, Debug)]
pub struct Global {
    pub name: String,
    pub demangled: String,
    /// The type of the stored value (not the pointer).
    pub value_ty: TypeId,
    pub addrspace: u32,
    pub is_constant: bool,
    pub init: Option<Value>,
    /// The alignment the module gives it (`align 16`), at least its
    /// type's.
    pub align: u64,
}

/// A file, line and column. Line 0 means the compiler did not know.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SourcePos {
    pub file: FileId,
    pub line: u32,
    pub col: u32,
}

/// A resolved source position.
#[derive(Clone, PartialEq, Eq, Debug, PartialOrd, Ord, Hash)]
pub struct Position {
    /// The path as the compiler was given it (for display).
    pub file: String,
    /// Where to read the source line from.
    pub path: std::path::PathBuf,
    pub line: u32,
    pub col: u32,
}

impl Position {
    pub fn resolve(m: &Module, pos: &SourcePos) -> Position {
        let f = m.file(pos.file);
        Position {
            file: f.name.clone(),
            path: f.path(),
            line: pos.line,
            col: pos.col,
        }
    }
}

/// What a site is: the instructions whose lanes the checks compare.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum SiteKind {
    Branch,
    Load,
    Store,
    Atomic,
}

impl SiteKind {
    pub fn name(self) -> &'static str {
        match self {
            SiteKind::Branch => "branch",
            SiteKind::Load => "load",
            SiteKind::Store => "store",
            SiteKind::Atomic => "atomic",
        }
    }
}

/// A debug location with the chain of call sites it was inlined through.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Loc {
    pub pos: SourcePos,
    /// The source function (`DISubprogram` name) the code came from.
    pub scope: Option<String>,
    pub inlined_at: Option<LocId>,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SourceFile {
    pub name: String,
    pub directory: String,
}

impl SourceFile {
    /// The path as the compiler saw it: absolute names kept, relative ones
    /// joined to the compile directory.
    pub fn path(&self) -> std::path::PathBuf {
        let name = std::path::Path::new(&self.name);
        if name.is_absolute() || self.directory.is_empty() {
            name.to_path_buf()
        } else {
            std::path::Path::new(&self.directory).join(name)
        }
    }
}

#[derive(Clone, PartialEq, Debug, Default)]
pub struct Module {
    pub name: String,
    pub source_file: String,
    pub triple: String,
    pub datalayout: String,
    pub types: Types,
    pub consts: Vec<Const>,
    pub globals: Vec<Global>,
    pub funcs: Vec<Function>,
    pub locs: Vec<Loc>,
    pub files: Vec<SourceFile>,
    /// Inline-asm callees, each distinct one once ([`Callee::InlineAsm`]).
    pub asms: Vec<InlineAsm>,
    /// Directories whose headers are not the user's (a CUDA toolkit's
    /// include directory), as the front end knows them.
    pub system_dirs: Vec<std::path::PathBuf>,
}

impl Module {
    pub fn func(&self, id: FuncId) -> &Function {
        &self.funcs[id.index()]
    }

    pub fn konst(&self, id: ConstId) -> &Const {
        &self.consts[id.index()]
    }

    pub fn global(&self, id: GlobalId) -> &Global {
        &self.globals[id.index()]
    }

    pub fn loc(&self, id: LocId) -> &Loc {
        &self.locs[id.index()]
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.index()]
    }

    pub fn asm(&self, id: AsmId) -> &InlineAsm {
        &self.asms[id.index()]
    }

    /// Adds an inline-asm callee to the table, reusing an equal one.
    pub fn intern_asm(&mut self, asm: InlineAsm) -> AsmId {
        if let Some(i) = self.asms.iter().position(|a| *a == asm) {
            return AsmId::new(i);
        }
        self.asms.push(asm);
        AsmId::new(self.asms.len() - 1)
    }

    /// The inline asm a call instruction runs, if it runs one.
    pub fn called_asm(&self, inst: &Inst) -> Option<&InlineAsm> {
        match inst.callee()? {
            Callee::InlineAsm(a) => Some(self.asm(a)),
            _ => None,
        }
    }

    pub fn func_ids(&self) -> impl Iterator<Item = FuncId> {
        (0..self.funcs.len()).map(FuncId::new)
    }

    pub fn kernels(&self) -> impl Iterator<Item = FuncId> + '_ {
        self.func_ids().filter(|&f| self.func(f).is_kernel)
    }

    pub fn is_nvptx(&self) -> bool {
        self.triple.starts_with("nvptx")
    }

    /// Looks a function up by symbol, full demangled name, or short name.
    pub fn find_function(&self, name: &str) -> Option<FuncId> {
        let by = |pred: &dyn Fn(&Function) -> bool| self.func_ids().find(|&f| pred(self.func(f)));
        by(&|f| f.name == name)
            .or_else(|| by(&|f| f.demangled == name))
            .or_else(|| by(&|f| !f.is_declaration && f.short_name() == name))
    }

    /// The type of any operand, given the function it appears in.
    pub fn value_type(&self, func: &Function, v: Value) -> TypeId {
        match v {
            Value::Inst(i) => func.inst(i).ty,
            Value::Arg(a) => func.params[a as usize].ty,
            Value::Const(c) => self.konst(c).ty(),
            Value::Global(_) | Value::Func(_) => self.types.ptr_generic_or_default(),
            Value::Opaque => self.types.void_or_default(),
        }
    }

    /// The integer value of an operand, if it is an integer constant.
    pub fn int_value(&self, v: Value) -> Option<i64> {
        match v {
            Value::Const(c) => self.konst(c).as_i64(),
            _ => None,
        }
    }

    /// The intrinsic a call instruction invokes, if any.
    pub fn called_intrinsic(&self, inst: &Inst) -> Option<Intrinsic> {
        match inst.callee()? {
            Callee::Direct(f) => self.func(f).intrinsic,
            _ => None,
        }
    }

    /// The instruction whose debug location best places `inst`: itself if
    /// it has a line, else the nearest earlier (then later) instruction of
    /// its block with one, else its nearest operand with one. Clang gives
    /// merged values and stores line 0.
    pub fn pos_anchor(&self, func: &Function, inst: InstId) -> Option<InstId> {
        self.pos_anchor_by(func, inst, &|f| self.is_system_file(f))
    }

    /// [`Self::pos_anchor`] with the system-file test given: a location
    /// counts where the user's view of it ([`Self::user_pos`]) has a line,
    /// so a header's `atomicExch` wrapper inlined at two call sites clang
    /// merged (line 0) is placed by its neighbours.
    fn pos_anchor_by(
        &self,
        func: &Function,
        inst: InstId,
        is_system: &dyn Fn(FileId) -> bool,
    ) -> Option<InstId> {
        let known = |i: &InstId| {
            func.inst(*i)
                .loc
                .is_some_and(|l| self.user_pos_by(l, is_system).0.line != 0)
        };
        if known(&inst) {
            return Some(inst);
        }
        let block = &func.blocks[func.inst(inst).block.index()].insts;
        let at = block.iter().position(|&i| i == inst).unwrap_or(0);
        block[..at]
            .iter()
            .rev()
            .chain(block[at..].iter())
            .find(|i| known(i))
            .copied()
            .or_else(|| {
                // A block clang merged whole (two halo branches' common
                // code) has no line of its own: the nearest operand
                // that has one, breadth first, is the source of the value.
                let mut queue = std::collections::VecDeque::from([inst]);
                let mut seen = vec![inst];
                while let Some(i) = queue.pop_front() {
                    for v in &func.inst(i).operands {
                        let Value::Inst(o) = *v else { continue };
                        if seen.contains(&o) {
                            continue;
                        }
                        if known(&o) {
                            return Some(o);
                        }
                        if seen.len() < 32 {
                            seen.push(o);
                            queue.push_back(o);
                        }
                    }
                }
                None
            })
            .or_else(|| {
                // Else, for code clang merged (a location whose line it
                // cleared; code with no location at all is the compiler's
                // own), the branch that leads into the block: the last
                // placed instruction of a predecessor.
                func.inst(inst).loc?;
                let here = func.inst(inst).block;
                (0..func.blocks.len())
                    .map(BlockId::new)
                    .filter(|&b| func.successors(b).contains(&here))
                    .find_map(|b| {
                        func.blocks[b.index()]
                            .insts
                            .iter()
                            .rev()
                            .find(|i| known(i))
                            .copied()
                    })
            })
    }

    /// Whether a file is a header the user did not write: warpcheck's own
    /// headers (`warpcheck_cuda.h`, `cooperative_groups.h`), clang's wrappers, a toolkit's or the system's headers.
    pub fn is_system_file(&self, id: FileId) -> bool {
        let path = self.file(id).path();
        if self.system_dirs.iter().any(|d| path.starts_with(d)) {
            return true;
        }
        let text = path.to_string_lossy();
        // Toolkits live in `.../cuda[-12.4]/include/` wherever installed.
        let in_toolkit = text
            .split("/include/")
            .next()
            .and_then(|before| before.rsplit('/').next())
            .is_some_and(|dir| dir.starts_with("cuda") && text.contains("/include/"));
        let own_header = text.ends_with("warpcheck_cuda.h")
            || text.ends_with("/cooperative_groups.h")
            || text.contains("/cooperative_groups/");
        own_header
            || ["/usr/", "/opt/"].iter().any(|p| text.starts_with(p))
            || in_toolkit
            || text.contains("/nvidia/")
    }

    /// The user's view of a debug location: code inlined from a system
    /// header (an `atomicAdd` wrapper, say) is placed at its call site in
    /// the user's file. Returns the position and how many inlined-at hops
    /// lead to it, so a host holding the LLVM location can follow the same.
    pub fn user_pos(&self, loc: LocId) -> (SourcePos, u32) {
        self.user_pos_by(loc, &|f| self.is_system_file(f))
    }

    /// Whether each file is a system file ([`Self::is_system_file`]), by
    /// index: for callers that place many instructions.
    pub fn system_files(&self) -> Vec<bool> {
        (0..self.files.len())
            .map(|i| self.is_system_file(FileId::new(i)))
            .collect()
    }

    /// [`Self::user_pos`] with the system-file test given.
    fn user_pos_by(&self, loc: LocId, is_system: &dyn Fn(FileId) -> bool) -> (SourcePos, u32) {
        let mut at = loc;
        let mut hops = 0;
        while is_system(self.loc(at).pos.file) {
            match self.loc(at).inlined_at {
                Some(next) => {
                    at = next;
                    hops += 1;
                }
                None => return (self.loc(loc).pos.clone(), 0),
            }
        }
        (self.loc(at).pos.clone(), hops)
    }

    /// The best source position for an instruction (see [`Self::pos_anchor`]
    /// and [`Self::user_pos`]), else the function's own line.
    pub fn inst_pos(&self, func: &Function, inst: InstId) -> Option<SourcePos> {
        self.inst_pos_by(func, inst, &|f| self.is_system_file(f))
    }

    /// [`Self::inst_pos`] with [`Self::system_files`] worked out once.
    pub fn inst_pos_among(
        &self,
        func: &Function,
        inst: InstId,
        system: &[bool],
    ) -> Option<SourcePos> {
        self.inst_pos_by(func, inst, &|f| system[f.index()])
    }

    fn inst_pos_by(
        &self,
        func: &Function,
        inst: InstId,
        is_system: &dyn Fn(FileId) -> bool,
    ) -> Option<SourcePos> {
        self.pos_anchor_by(func, inst, is_system)
            .and_then(|i| func.inst(i).loc)
            .map(|l| self.user_pos_by(l, is_system).0)
            .or_else(|| func.loc.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::builder::ModuleBuilder;
    use super::*;

    /// A block clang merged (every instruction at line 0) is placed by the
    /// nearest operand with a line, here two steps back in another block.
    #[test]
    fn a_merged_block_is_placed_at_its_operands_line() {
        let mut mb = ModuleBuilder::new();
        let void = mb.void();
        let c1 = mb.const_int(32, 1);
        let mut fb = mb.define("k", &[], void);
        fb.kernel();
        let merged = fb.block();
        fb.at_line(5);
        let t = fb.sreg("tid.x");
        fb.at_line(0);
        let a = fb.binary(Opcode::Add, t, c1);
        fb.br(merged);
        fb.switch_to(merged);
        let x = fb.binary(Opcode::Mul, a, c1);
        fb.ret(None);
        let m = mb.finish();
        let func = &m.funcs[0];
        let Value::Inst(x) = x else { panic!() };
        let Value::Inst(t) = t else { panic!() };
        assert_eq!(m.pos_anchor(func, x), Some(t));
    }

    /// A store clang merged from two branches (line 0) whose operands are
    /// a global and a constant is placed at the branch that leads to it.
    #[test]
    fn a_merged_store_of_constants_is_placed_at_its_branch() {
        let mut mb = ModuleBuilder::new();
        let void = mb.void();
        let i32t = mb.int(32);
        let flag = mb.global("flag", i32t, 3);
        let c0 = mb.const_int(32, 0);
        let mut fb = mb.define("k", &[], void);
        fb.kernel();
        let (merged, done) = (fb.block(), fb.block());
        fb.at_line(7);
        let t = fb.sreg("tid.x");
        let odd = fb.icmp(IntPred::Ne, t, c0);
        fb.cond_br(odd, merged, done);
        fb.switch_to(merged);
        fb.at_line(0);
        fb.store(c0, flag);
        fb.br(done);
        fb.switch_to(done);
        fb.ret(None);
        let m = mb.finish();
        let func = &m.funcs[0];
        let store = func.blocks[merged.index()].insts[0];
        let branch = *func.blocks[0].insts.last().unwrap();
        assert_eq!(m.pos_anchor(func, store), Some(branch));
    }
}
