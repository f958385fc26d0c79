//! Builds modules by hand, for unit tests of every stage after `ir`.

use super::*;

/// Builds a [`Module`] without LLVM.
pub struct ModuleBuilder {
    pub module: Module,
}

impl Default for ModuleBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ModuleBuilder {
    pub fn new() -> Self {
        let mut module = Module {
            name: "test".into(),
            source_file: "test.cu".into(),
            triple: "nvptx64-nvidia-cuda".into(),
            ..Module::default()
        };
        module.types.void();
        module.types.ptr(0);
        module.files.push(SourceFile {
            name: "test.cu".into(),
            directory: String::new(),
        });
        Self { module }
    }

    pub fn ty(&mut self, kind: TypeKind) -> TypeId {
        self.module.types.intern(kind)
    }

    pub fn int(&mut self, bits: u32) -> TypeId {
        self.module.types.int(bits)
    }

    pub fn ptr(&mut self, addrspace: u32) -> TypeId {
        self.module.types.ptr(addrspace)
    }

    pub fn void(&mut self) -> TypeId {
        self.module.types.void()
    }

    pub fn const_int(&mut self, bits: u32, value: i64) -> Value {
        self.module.const_int(bits, value)
    }

    pub fn const_float(&mut self, value: f64) -> Value {
        let ty = self.ty(TypeKind::Float);
        self.module.intern_const(Const::Float { ty, value })
    }

    /// A constant expression, e.g. the `addrspacecast` clang wraps shared arrays in.
    pub fn const_expr(&mut self, op: Opcode, ty: TypeId, operands: Vec<Value>) -> Value {
        self.module.intern_const(Const::Expr {
            ty,
            op,
            operands,
            kind: InstKind::Plain,
        })
    }

    pub fn global(&mut self, name: &str, value_ty: TypeId, addrspace: u32) -> Value {
        self.module.globals.push(Global {
            name: name.into(),
            demangled: demangle(name),
            value_ty,
            addrspace,
            is_constant: addrspace == addrspace::CONSTANT,
            init: None,
            align: self.module.types.get(value_ty).align,
        });
        Value::Global(GlobalId::new(self.module.globals.len() - 1))
    }

    /// Declares (once) a function with no body, such as an intrinsic.
    pub fn declare(&mut self, name: &str, params: &[TypeId], ret: TypeId) -> FuncId {
        self.module.declare_function(name, params, ret)
    }

    /// Starts a function definition with an entry block.
    pub fn define(&mut self, name: &str, params: &[TypeId], ret: TypeId) -> FunctionBuilder<'_> {
        let func = self.module.push_function(name, params, ret);
        let f = &mut self.module.funcs[func.index()];
        f.is_declaration = false;
        f.intrinsic = None;
        f.blocks.push(Block::default());
        FunctionBuilder {
            m: &mut self.module,
            func,
            cur: BlockId(0),
            line: 1,
            numbered: false,
        }
    }

    pub fn finish(self) -> Module {
        self.module
    }
}

impl Module {
    /// Adds a constant to the pool, reusing an equal one.
    pub fn intern_const(&mut self, c: Const) -> Value {
        if let Some(i) = self.consts.iter().position(|k| *k == c) {
            return Value::Const(ConstId::new(i));
        }
        self.consts.push(c);
        Value::Const(ConstId::new(self.consts.len() - 1))
    }

    pub fn const_int(&mut self, bits: u32, value: i64) -> Value {
        let ty = self.types.int(bits);
        let mask = if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        };
        self.intern_const(Const::Int {
            ty,
            bits,
            value: (value as i128 as u128) & mask,
        })
    }

    /// Declares (once) a function with no body, such as an intrinsic.
    pub fn declare_function(&mut self, name: &str, params: &[TypeId], ret: TypeId) -> FuncId {
        if let Some(f) = self.func_ids().find(|&f| self.func(f).name == name) {
            return f;
        }
        self.push_function(name, params, ret)
    }

    fn push_function(&mut self, name: &str, params: &[TypeId], ret: TypeId) -> FuncId {
        let params = params
            .iter()
            .map(|&ty| Param {
                ty,
                name: None,
                byval: None,
            })
            .collect();
        self.funcs.push(Function::declaration(name, params, ret));
        FuncId::new(self.funcs.len() - 1)
    }
}

/// Appends blocks and instructions to one function.
pub struct FunctionBuilder<'m> {
    pub m: &'m mut Module,
    pub func: FuncId,
    cur: BlockId,
    line: u32,
    /// Each instruction takes the next line (see [`Self::line_per_inst`]).
    numbered: bool,
}

impl FunctionBuilder<'_> {
    fn f(&mut self) -> &mut Function {
        &mut self.m.funcs[self.func.index()]
    }

    pub fn kernel(&mut self) -> &mut Self {
        self.f().is_kernel = true;
        self
    }

    pub fn block(&mut self) -> BlockId {
        self.f().blocks.push(Block::default());
        BlockId::new(self.f().blocks.len() - 1)
    }

    pub fn switch_to(&mut self, b: BlockId) {
        self.cur = b;
    }

    pub fn current(&self) -> BlockId {
        self.cur
    }

    /// Gives following instructions a debug location on `line` of test.cu.
    pub fn at_line(&mut self, line: u32) {
        self.line = line;
    }

    /// Gives every following instruction a line of its own, from `first`
    /// on, so that each is a site of its own in the static and simulated
    /// reports (generated kernels, where no source lines exist).
    pub fn line_per_inst(&mut self, first: u32) {
        self.line = first;
        self.numbered = true;
    }

    /// The line the next instruction gets.
    pub fn next_line(&self) -> u32 {
        self.line
    }

    pub fn inst(&mut self, op: Opcode, ty: TypeId, operands: Vec<Value>, kind: InstKind) -> Value {
        let loc = LocId::new(self.m.locs.len());
        self.m.locs.push(Loc {
            pos: SourcePos {
                file: FileId(0),
                line: self.line,
                col: 1,
            },
            scope: None,
            inlined_at: None,
        });
        if self.numbered {
            self.line += 1;
        }
        let block = self.cur;
        let f = self.f();
        let id = InstId::new(f.insts.len());
        f.insts.push(Inst {
            op,
            ty,
            operands,
            kind,
            block,
            loc: Some(loc),
            name: None,
            flags: IntFlags::default(),
        });
        f.blocks[block.index()].insts.push(id);
        Value::Inst(id)
    }

    pub fn binary(&mut self, op: Opcode, a: Value, b: Value) -> Value {
        let ty = self.m.value_type(self.m.func(self.func), a);
        self.inst(op, ty, vec![a, b], InstKind::Plain)
    }

    /// Sets LLVM's `nsw`/`nuw`/`exact` on the instruction `v`.
    pub fn flags(&mut self, v: Value, flags: IntFlags) {
        if let Value::Inst(id) = v {
            self.f().insts[id.index()].flags = flags;
        }
    }

    pub fn icmp(&mut self, pred: IntPred, a: Value, b: Value) -> Value {
        let ty = self.m.types.int(1);
        self.inst(Opcode::ICmp, ty, vec![a, b], InstKind::ICmp(pred))
    }

    pub fn cast(&mut self, op: Opcode, v: Value, ty: TypeId) -> Value {
        self.inst(op, ty, vec![v], InstKind::Plain)
    }

    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.m.value_type(self.m.func(self.func), a);
        self.inst(Opcode::Select, ty, vec![c, a, b], InstKind::Plain)
    }

    pub fn br(&mut self, target: BlockId) {
        let void = self.m.types.void();
        self.inst(
            Opcode::Br,
            void,
            vec![],
            InstKind::Br {
                targets: vec![target],
            },
        );
    }

    pub fn cond_br(&mut self, cond: Value, then: BlockId, els: BlockId) {
        let void = self.m.types.void();
        self.inst(
            Opcode::Br,
            void,
            vec![cond],
            InstKind::Br {
                targets: vec![then, els],
            },
        );
    }

    pub fn switch(&mut self, cond: Value, default: BlockId, cases: Vec<(i128, BlockId)>) {
        let void = self.m.types.void();
        self.inst(
            Opcode::Switch,
            void,
            vec![cond],
            InstKind::Switch { default, cases },
        );
    }

    pub fn ret(&mut self, v: Option<Value>) {
        let void = self.m.types.void();
        self.inst(Opcode::Ret, void, v.into_iter().collect(), InstKind::Plain);
    }

    pub fn phi(&mut self, ty: TypeId, incoming: &[(Value, BlockId)]) -> Value {
        self.inst(
            Opcode::Phi,
            ty,
            incoming.iter().map(|i| i.0).collect(),
            InstKind::Phi {
                blocks: incoming.iter().map(|i| i.1).collect(),
            },
        )
    }

    /// Adds an incoming edge to a phi created before its loop latch existed.
    pub fn add_incoming(&mut self, phi: Value, v: Value, from: BlockId) {
        let Value::Inst(id) = phi else { return };
        let inst = &mut self.f().insts[id.index()];
        inst.operands.push(v);
        if let InstKind::Phi { blocks } = &mut inst.kind {
            blocks.push(from);
        }
    }

    pub fn alloca(&mut self, allocated: TypeId) -> Value {
        let one = self.m.const_int(32, 1);
        let ptr = self.m.types.ptr(addrspace::LOCAL);
        self.inst(
            Opcode::Alloca,
            ptr,
            vec![one],
            InstKind::Alloca { allocated },
        )
    }

    pub fn load(&mut self, ty: TypeId, addr: Value) -> Value {
        let align = self.m.types.get(ty).align as u32;
        self.inst(
            Opcode::Load,
            ty,
            vec![addr],
            InstKind::Load {
                align,
                volatile: false,
            },
        )
    }

    pub fn store(&mut self, v: Value, addr: Value) {
        let void = self.m.types.void();
        self.inst(
            Opcode::Store,
            void,
            vec![v, addr],
            InstKind::Store {
                align: 4,
                volatile: false,
            },
        );
    }

    pub fn gep(&mut self, source: TypeId, base: Value, indices: &[Value]) -> Value {
        let ty = self.m.value_type(self.m.func(self.func), base);
        let mut operands = vec![base];
        operands.extend_from_slice(indices);
        self.inst(
            Opcode::GetElementPtr,
            ty,
            operands,
            InstKind::Gep {
                source,
                inbounds: true,
            },
        )
    }

    pub fn atomic_rmw(&mut self, op: RmwOp, addr: Value, v: Value) -> Value {
        let ty = self.m.value_type(self.m.func(self.func), v);
        self.inst(
            Opcode::AtomicRmw,
            ty,
            vec![addr, v],
            InstKind::AtomicRmw { op },
        )
    }

    pub fn call(&mut self, callee: FuncId, args: Vec<Value>) -> Value {
        let ty = self.m.func(callee).ret;
        let noreturn = self.m.func(callee).noreturn;
        self.inst(
            Opcode::Call,
            ty,
            args,
            InstKind::Call {
                callee: Callee::Direct(callee),
                noreturn,
                ptr_align: [0; 2],
            },
        )
    }

    /// Calls an inline-asm body (`asm volatile` when `side_effects`),
    /// adding it to the module's table.
    pub fn asm(
        &mut self,
        text: &str,
        constraints: &str,
        side_effects: bool,
        ret: TypeId,
        args: Vec<Value>,
    ) -> Value {
        let asm = self.m.intern_asm(InlineAsm {
            text: text.into(),
            constraints: constraints.into(),
            side_effects,
            convergent: true,
            align_stack: false,
            can_unwind: false,
        });
        self.inst(
            Opcode::Call,
            ret,
            args,
            InstKind::Call {
                callee: Callee::InlineAsm(asm),
                noreturn: false,
                ptr_align: [0; 2],
            },
        )
    }

    /// Calls an intrinsic by name, declaring it on first use.
    pub fn intrinsic(&mut self, name: &str, ret: TypeId, args: Vec<Value>) -> Value {
        let params: Vec<TypeId> = args
            .iter()
            .map(|&a| self.m.value_type(self.m.func(self.func), a))
            .collect();
        let callee = self.m.declare_function(name, &params, ret);
        self.call(callee, args)
    }

    /// `llvm.memcpy`/`memmove`/`memset` (`name`) of `args` (destination,
    /// source or byte, length, volatile) with the `align` the call states
    /// for its destination and source.
    pub fn mem_intrinsic(&mut self, name: &str, args: Vec<Value>, align: [u32; 2]) -> Value {
        let void = self.m.types.void();
        let v = self.intrinsic(name, void, args);
        if let Value::Inst(i) = v {
            if let InstKind::Call { ptr_align, .. } = &mut self.f().insts[i.index()].kind {
                *ptr_align = align;
            }
        }
        v
    }

    /// `threadIdx.x` and friends: reads `llvm.nvvm.read.ptx.sreg.<reg>`.
    pub fn sreg(&mut self, reg: &str) -> Value {
        let i32t = self.m.types.int(32);
        self.intrinsic(&super::intrinsics::sreg_intrinsic(reg), i32t, vec![])
    }

    pub fn const_int(&mut self, bits: u32, v: i64) -> Value {
        self.m.const_int(bits, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asm_calls_share_one_table_entry_per_body() {
        let mut mb = ModuleBuilder::new();
        let (void, i32t) = (mb.void(), mb.int(32));
        let mut f = mb.define("k", &[], void);
        let lane = "mov.u32 $0, %laneid;";
        let a = f.asm(lane, "=r", false, i32t, vec![]);
        f.asm(lane, "=r", false, i32t, vec![]);
        f.asm("nanosleep.u32 $0;", "r", true, void, vec![a]);
        f.ret(None);
        let m = mb.finish();
        // Three calls, two distinct bodies.
        assert_eq!(m.asms.len(), 2);
        let k = m.func(m.find_function("k").unwrap());
        assert_eq!(m.called_asm(&k.insts[0]), m.called_asm(&k.insts[1]));
        let dump = m.render_function(k).unwrap();
        assert!(
            dump.contains(r#"call asm sideeffect convergent "nanosleep.u32 $0;", "r" %0"#),
            "{dump}"
        );
    }
}
