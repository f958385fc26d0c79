//! The LLVM loader on a checked-in module whose every number is known.

use warpcheck::ir::intrinsics::{Dim, SReg};
use warpcheck::ir::{self, Callee, Const, InstKind, Intrinsic, Opcode, TypeKind, Value};

fn load() -> ir::Module {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ir/loader.ll");
    ir::llvm::load_file(&p).expect("loads")
}

#[test]
fn kernels_names_and_launch_bounds() {
    let m = load();
    assert!(m.is_nvptx());
    let by_cc = m.find_function("by_cc").unwrap();
    let by_meta = m.find_function("_Z7by_metaPK1Pi").unwrap();
    // One kernel by calling convention, one by nvvm.annotations.
    assert!(m.func(by_cc).is_kernel && m.func(by_meta).is_kernel);
    assert_eq!(m.func(by_cc).demangled, "by_cc(float*)");
    assert_eq!(m.func(by_meta).demangled, "by_meta(P const*, int)");
    assert_eq!(m.func(by_cc).launch.maxntid, Some([128, 1, 1]));
    assert_eq!(m.func(by_cc).launch.minctasm, Some(2));
    assert_eq!(m.func(by_meta).launch.reqntid, Some([32, 8, 1]));
    let tid = m.find_function("llvm.nvvm.read.ptx.sreg.tid.x").unwrap();
    assert_eq!(
        m.func(tid).intrinsic,
        Some(Intrinsic::SReg(SReg::Tid(Dim::X)))
    );
    assert!(m.func(tid).is_declaration);
}

#[test]
fn instructions_operands_and_constants() {
    let m = load();
    let f = m.func(m.find_function("by_cc").unwrap());
    // entry: call, zext, gep, load, switch; zero: store, br; five: br; done: ret.
    assert_eq!(f.blocks.len(), 4);
    assert_eq!(f.insts.len(), 9);
    let gep = &f.insts[2];
    assert_eq!(gep.op, Opcode::GetElementPtr);
    let InstKind::Gep { source, inbounds } = gep.kind else {
        panic!()
    };
    assert!(inbounds);
    assert_eq!(m.types.render(source), "[32 x [33 x float]]");
    assert_eq!(m.types.size(source), 32 * 33 * 4);
    // The base is a constant addrspacecast of the shared global.
    let Value::Const(c) = gep.operands[0] else {
        panic!()
    };
    let Const::Expr { op, operands, .. } = m.konst(c) else {
        panic!()
    };
    assert_eq!(*op, Opcode::AddrSpaceCast);
    let Value::Global(g) = operands[0] else {
        panic!()
    };
    assert_eq!(m.global(g).name, "tile");
    assert_eq!(m.global(g).addrspace, 3);
    assert_eq!(m.int_value(gep.operands[3]), Some(1));
    // Switch: default then two cases.
    let sw = &f.insts[4];
    let InstKind::Switch { default, cases } = &sw.kind else {
        panic!()
    };
    assert_eq!(default.0, 3);
    assert_eq!(cases.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 5]);
    assert!(matches!(
        f.insts[0].kind,
        InstKind::Call {
            callee: Callee::Direct(_),
            noreturn: false,
            ..
        }
    ));
    // Constant memory initializer.
    let coef = m.globals.iter().find(|g| g.name == "coef").unwrap();
    assert!(coef.is_constant);
    let Some(Value::Const(init)) = coef.init else {
        panic!()
    };
    let Const::Aggregate { elems, .. } = m.konst(init) else {
        panic!()
    };
    assert_eq!(elems.len(), 2);
}

#[test]
fn struct_layout_and_atomics() {
    let m = load();
    let f = m.func(m.find_function("by_meta").unwrap());
    let InstKind::Gep { source, .. } = f.insts[0].kind else {
        panic!()
    };
    // { i8, double, i32 }: offsets 0, 8, 16; size 24.
    assert!(matches!(m.types.kind(source), TypeKind::Struct { .. }));
    assert_eq!(m.types.get(source).offsets, vec![0, 8, 16]);
    assert_eq!(m.types.size(source), 24);
    assert_eq!(f.insts[2].op, Opcode::AtomicRmw);
    assert_eq!(f.params[1].name.as_deref(), Some("n"));
}

#[test]
fn debug_locations_and_inlining() {
    let m = load();
    let f = m.func(m.find_function("by_cc").unwrap());
    let load = &f.insts[3];
    let loc = m.loc(load.loc.unwrap());
    // The load was inlined from tile.cuh:3:9 at loader.cu:22:5.
    assert_eq!((loc.pos.line, loc.pos.col), (3, 9));
    assert_eq!(m.file(loc.pos.file).name, "tile.cuh");
    assert_eq!(loc.scope.as_deref(), Some("read_tile"));
    let outer = m.loc(loc.inlined_at.unwrap());
    assert_eq!((outer.pos.line, outer.pos.col), (22, 5));
    assert_eq!(
        m.file(outer.pos.file).path(),
        std::path::PathBuf::from("/src/loader.cu")
    );
    assert_eq!(f.loc.as_ref().unwrap().line, 20);
    // The zero-block store has its own line; `done: ret` has none and falls back.
    assert_eq!(m.inst_pos(f, ir::InstId(5)).unwrap().line, 23);
    assert_eq!(m.inst_pos(f, ir::InstId(8)).unwrap().line, 20);
}

#[test]
fn bitcode_loads_like_text() {
    let dir = tempfile::tempdir().unwrap();
    let ll = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ir/loader.ll");
    let bc = dir.path().join("loader.bc");
    let status = std::process::Command::new(format!("llvm-as-{}", ir::major::LLVM_MAJOR))
        .arg(&ll)
        .arg("-o")
        .arg(&bc)
        .status()
        .expect("run llvm-as");
    assert!(status.success());
    let from_bc = ir::llvm::load_file(&bc).unwrap();
    let from_ll = load();
    assert_eq!(from_bc.funcs, from_ll.funcs);
    assert_eq!(from_bc.globals, from_ll.globals);
}

#[test]
fn inline_asm_keeps_text_constraints_and_flags() {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ir/inline_asm.ll");
    let m = ir::llvm::load_file(&p).expect("loads");
    let f = m.func(m.find_function("asm_kernel").unwrap());
    let asm_of = |i: usize| match f.insts[i].callee() {
        Some(Callee::InlineAsm(a)) => a,
        other => panic!("instruction {i} calls {other:?}"),
    };
    // Calls 0 and 1 run the same callee with the same flags: one entry.
    // Five calls, four distinct bodies.
    assert_eq!(asm_of(0), asm_of(1));
    assert_eq!(m.asms.len(), 4);
    let lane = m.asm(asm_of(0));
    assert_eq!(lane.text, "mov.u32 $0, %laneid;");
    assert_eq!(lane.constraints, "=r");
    assert!(!lane.side_effects && lane.convergent);
    let atom = m.asm(asm_of(2));
    assert_eq!(atom.constraints, "=r,l,r,~{memory}");
    assert!(atom.side_effects);
    // The arguments are the inputs only: the pointer and the lane.
    assert_eq!(f.insts[2].operands.len(), 2);
    let body = m.asm(asm_of(3));
    assert!(
        body.text.starts_with("{\n\t .reg .u32 start;"),
        "{:?}",
        body.text
    );
    let elect = m.asm(asm_of(4));
    assert_eq!(elect.constraints, "=r,=r,r,0,1");
    // No attribute group on that call: not convergent.
    assert!(!elect.convergent);
    assert_eq!(m.called_asm(&f.insts[4]), Some(elect));
    // The dump shows the body.
    let dump = m.render_function(f).unwrap();
    assert!(
        dump.contains(r#"asm sideeffect convergent "atom.add.release.gpu.u32 $0,[$1],$2;", "=r,l,r,~{memory}""#),
        "{dump}"
    );
}

#[test]
fn integer_flags_say_what_cannot_wrap() {
    let text = r#"
define i32 @f(i32 %a, i32 %b) {
  %1 = add nsw i32 %a, 1
  %2 = add nuw i32 %1, %b
  %3 = shl nuw nsw i32 %2, 2
  %4 = sub i32 %3, %a
  %5 = lshr exact i32 %4, 1
  %6 = udiv i32 %5, 3
  %7 = mul nuw i32 %6, %6
  ret i32 %7
}
"#;
    let m = ir::llvm::load_bytes(text.as_bytes(), "flags.ll").expect("loads");
    let f = m.func(m.find_function("f").unwrap());
    let flags: Vec<(bool, bool, bool)> = f.insts[..7]
        .iter()
        .map(|i| (i.flags.nsw, i.flags.nuw, i.flags.exact))
        .collect();
    let expected = [
        (true, false, false),
        (false, true, false),
        (true, true, false),
        (false, false, false),
        (false, false, true),
        (false, false, false),
        (false, true, false),
    ];
    assert_eq!(flags, expected);
    // The return carries none.
    assert_eq!(f.insts[7].flags, ir::IntFlags::default());
}
