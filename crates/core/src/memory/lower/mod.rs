//! The machine's loads and stores of each IR memory access, as the NVPTX
//! backend emits them: the one place that says what one request is. The
//! sites (and so the checks, the cost and time bounds and the reports)
//! and the simulator both read [`Lowering`], so every figure counts the
//! requests the GPU makes.
//!
//! Two stages, in the backend's order:
//! * [`vector`]: the load/store vectoriser merges adjacent scalar accesses
//!   of one pointer into one vector access (a `float4` read field by field
//!   is one `ld.v4.f32`);
//! * [`split`]: instruction selection breaks what PTX cannot do in one
//!   instruction into pieces: a struct copy (`llvm.memcpy`) into loads and
//!   stores of at most 8 bytes as wide as both pointers' alignment allows,
//!   a fill (`llvm.memset`) likewise, under-aligned and aggregate values
//!   into their legal parts, a long or run-time-length copy into a loop of
//!   1-byte accesses.
//!
//! Each access of an instruction ([`access_of`]'s order: a copy's load
//! from its source, then its store) is [`Lowered`] into [`Piece`]s, each a
//! request of its own at a constant offset from the access's address.
//! `tests/ptx_crosscheck.rs` holds this against the PTX `llc` makes of the
//! fixtures, the examples and the random kernels, source line by line.

pub mod split;
pub mod vector;

use super::access::{access_of, Access, AccessKind};
use crate::dataflow::FastMap as HashMap;
use crate::ir::{Function, InstId, InstKind, Intrinsic, Module, Opcode, TypeId, TypeKind, Value};
use split::{align_at, Shape, Span, COPY_LOOP_BYTES};
use vector::Merge;

/// How many times one execution of a piece issues it.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Repeat {
    Once,
    /// A copy loop over a constant length: one 1-byte request per byte,
    /// each at the next offset.
    Times(u64),
    /// A copy loop over a length known only at run time (each lane's own).
    PerLane,
}

/// What an access split into several pieces was, for the report's
/// wording.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Whole {
    /// A block copy: `llvm.memcpy`/`memmove`, or an aggregate loaded and
    /// stored again (a struct assignment).
    Copy,
    /// A block fill: `llvm.memset`, or a constant aggregate stored.
    Fill,
    /// One value wider or less aligned than PTX can move at once.
    Value,
}

/// Where a piece sits in an access lowered into several.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct PieceOf {
    pub index: u32,
    pub count: u32,
    /// The access's bytes in all.
    pub bytes: u64,
    pub whole: Whole,
}

/// One machine request of an access.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct Piece {
    /// Bytes from the access's address (below 0 for a merged vector access
    /// placed at a later piece than its lowest).
    pub offset: i64,
    pub bytes: u64,
    /// The alignment the IR promises for this piece's address.
    pub align: u64,
    pub repeat: Repeat,
    /// Set when the access is more than one piece.
    pub of: Option<PieceOf>,
}

/// One access of an instruction and the requests it makes; none for a
/// piece the vectoriser merged into an earlier access.
#[derive(Clone, PartialEq, Debug)]
pub struct Lowered {
    pub access: Access,
    pub pieces: Vec<Piece>,
}

/// The lowered accesses of one function's memory instructions.
#[derive(Default)]
pub struct Lowering {
    map: HashMap<InstId, Vec<Lowered>>,
}

impl Lowering {
    /// Lowers every memory instruction of `func`.
    pub fn of(m: &Module, func: &Function) -> Lowering {
        let merges = vector::merges(m, func);
        let live = live(m, func);
        let mut uses: Option<HashMap<InstId, Vec<InstId>>> = None;
        let mut map = HashMap::default();
        for (k, &live) in live.iter().enumerate() {
            let i = InstId::new(k);
            let accesses = access_of(m, func, i);
            if accesses.is_empty() {
                continue;
            }
            let lowered = accesses
                .into_iter()
                .map(|a| {
                    // A load nothing uses is no request: the backend drops it.
                    if !live {
                        return Lowered {
                            access: a,
                            pieces: Vec::new(),
                        };
                    }
                    let pieces = match merges.get(&i) {
                        Some(Merge::Part { .. }) => Vec::new(),
                        Some(&Merge::Head {
                            bytes,
                            offset,
                            align,
                        }) => vec![Piece {
                            offset,
                            ..single(bytes, align)
                        }],
                        None => pieces(m, func, i, &a, &mut uses, &merges),
                    };
                    Lowered { access: a, pieces }
                })
                .collect();
            map.insert(i, lowered);
        }
        Lowering { map }
    }

    /// The accesses of instruction `i`, in [`access_of`]'s order (none
    /// for an instruction that touches no memory).
    pub fn accesses(&self, i: InstId) -> &[Lowered] {
        self.map.get(&i).map_or(&[], Vec::as_slice)
    }
}

/// Which instructions the backend keeps: those with an effect (stores,
/// atomics, calls other than of pure intrinsics (warp shuffles and votes
/// stay, as convergent operations), volatile loads, control)
/// and those whose value one of them uses, however indirectly. A load of
/// a value nothing uses makes no request.
fn live(m: &Module, func: &Function) -> Vec<bool> {
    let effect = |inst: &crate::ir::Inst| match inst.op {
        Opcode::Load => matches!(inst.kind, InstKind::Load { volatile: true, .. }),
        Opcode::Call => !matches!(
            m.called_intrinsic(inst),
            Some(
                Intrinsic::SReg(_)
                    | Intrinsic::MinMax(_)
                    | Intrinsic::Pure { .. }
                    | Intrinsic::ActiveMask
                    | Intrinsic::PtrCast
                    | Intrinsic::GlobalLoad
            )
        ),
        op => {
            op.is_terminator()
                || matches!(
                    op,
                    Opcode::Store | Opcode::AtomicRmw | Opcode::CmpXchg | Opcode::Fence
                )
        }
    };
    let mut live = vec![false; func.insts.len()];
    let mut todo: Vec<usize> = (0..func.insts.len())
        .filter(|&k| effect(&func.insts[k]))
        .collect();
    for &k in &todo {
        live[k] = true;
    }
    while let Some(k) = todo.pop() {
        for &o in &func.insts[k].operands {
            if let Value::Inst(d) = o {
                if !live[d.index()] {
                    live[d.index()] = true;
                    todo.push(d.index());
                }
            }
        }
    }
    live
}

/// The alignment the backend knows for `address`: the stated `align`, or
/// more where the address is a global's plus a constant (llc reads the
/// global's own alignment: a byte vector stored at `@s + 1984` of an
/// `align 4` array is one 4-byte store).
fn known_align(m: &Module, func: &Function, address: Value, stated: u64) -> u64 {
    let (mut root, mut offset) = vector::base_and_offset(m, func, address);
    // Through casts (a shared array seen through a generic pointer).
    for _ in 0..4 {
        let inner = match root {
            Value::Const(c) => match m.konst(c) {
                crate::ir::Const::Expr { op, operands, .. } if op.is_cast() => operands[0],
                _ => break,
            },
            Value::Inst(i) if func.inst(i).op.is_cast() => func.inst(i).operands[0],
            _ => break,
        };
        let (r, o) = vector::base_and_offset(m, func, inner);
        (root, offset) = (r, offset.wrapping_add(o));
    }
    match root {
        Value::Global(g) => stated.max(align_at(m.global(g).align, offset.unsigned_abs())),
        _ => stated,
    }
}

/// The alignment a load or store states (1 for other instructions).
fn a_align(inst: &crate::ir::Inst) -> u64 {
    match inst.kind {
        InstKind::Load { align, .. } | InstKind::Store { align, .. } => u64::from(align).max(1),
        _ => 1,
    }
}

fn single(bytes: u64, align: u64) -> Piece {
    Piece {
        offset: 0,
        bytes,
        align,
        repeat: Repeat::Once,
        of: None,
    }
}

/// The pieces of access `a` of instruction `i`.
fn pieces(
    m: &Module,
    func: &Function,
    i: InstId,
    a: &Access,
    uses: &mut Option<HashMap<InstId, Vec<InstId>>>,
    merges: &vector::Merges,
) -> Vec<Piece> {
    let inst = func.inst(i);
    let align = a_align(inst);
    match inst.op {
        Opcode::Load | Opcode::Store => {
            let ty = match inst.op {
                Opcode::Load => inst.ty,
                _ => m.value_type(func, inst.operands[0]),
            };
            let align = known_align(m, func, a.address, align);
            let (spans, whole) = value_pieces(m, func, (i, ty, align), uses, merges);
            let spans = spans
                .into_iter()
                .map(|s| (s, align_at(align, s.offset), Repeat::Once))
                .collect();
            numbered(spans, a.bytes, whole)
        }
        Opcode::Call
            if m.called_asm(inst).is_none()
                && matches!(
                    m.called_intrinsic(inst),
                    Some(Intrinsic::MemCpy | Intrinsic::MemMove | Intrinsic::MemSet)
                ) =>
        {
            block_pieces(m, func, inst, a)
        }
        _ => vec![single(a.bytes, align)],
    }
}

/// Pieces with their place among the others when there are several.
fn numbered(spans: Vec<(Span, u64, Repeat)>, bytes: u64, whole: Whole) -> Vec<Piece> {
    let count = spans.len() as u32;
    spans
        .into_iter()
        .enumerate()
        .map(|(k, (s, align, repeat))| Piece {
            offset: s.offset as i64,
            bytes: s.bytes,
            align,
            repeat,
            of: (count > 1 || repeat != Repeat::Once).then_some(PieceOf {
                index: k as u32,
                count,
                bytes,
                whole,
            }),
        })
        .collect()
}

/// A `memcpy`, `memmove` or `memset`: pieces as wide as both pointers'
/// alignment allows, or a byte loop.
fn block_pieces(m: &Module, func: &Function, inst: &crate::ir::Inst, a: &Access) -> Vec<Piece> {
    let InstKind::Call { ptr_align, .. } = inst.kind else {
        return Vec::new();
    };
    let fill = m.called_intrinsic(inst) == Some(Intrinsic::MemSet);
    let [dst, src] = ptr_align.map(|x| u64::from(x).max(1));
    // The widths come from the lesser alignment, or, into a local
    // variable the backend may align as it likes, from 8 bytes: then each
    // load of the source is split as its own alignment needs.
    let into_frame = is_frame(func, inst.operands[0]);
    let widths = match (into_frame, fill) {
        (true, _) => split::MAX_SCALAR_BYTES,
        (false, true) => dst,
        (false, false) => dst.min(src),
    };
    let (own, dst) = match a.kind {
        AccessKind::Load => (src, false),
        _ => (
            if into_frame {
                split::MAX_SCALAR_BYTES
            } else {
                dst
            },
            true,
        ),
    };
    let whole = if fill { Whole::Fill } else { Whole::Copy };
    let len = inst.operands.get(2).and_then(|&l| m.int_value(l));
    let byte = Span {
        offset: 0,
        bytes: 1,
    };
    let spans: Vec<(Span, u64, Repeat)> = match len {
        Some(0) => Vec::new(),
        Some(len) if (len as u64) < COPY_LOOP_BYTES => {
            let mut out = Vec::new();
            for chunk in split::block(len as u64, widths) {
                let scalar = Shape {
                    bytes: chunk.bytes,
                    elem: None,
                };
                match dst {
                    true => out.push(chunk),
                    false => split::value(scalar, chunk.offset, own, &mut out),
                }
            }
            out.into_iter()
                .map(|s| (s, align_at(own, s.offset), Repeat::Once))
                .collect()
        }
        Some(len) => vec![(byte, own, Repeat::Times(len as u64))],
        None => vec![(byte, own, Repeat::PerLane)],
    };
    numbered(spans, a.bytes, whole)
}

/// Whether `v` is a local variable itself (an `alloca`, or a cast of
/// one): the backend may raise its alignment.
fn is_frame(func: &Function, v: Value) -> bool {
    let Value::Inst(i) = v else {
        return false;
    };
    let inst = func.inst(i);
    match inst.op {
        Opcode::Alloca => true,
        Opcode::AddrSpaceCast | Opcode::BitCast => is_frame(func, inst.operands[0]),
        _ => false,
    }
}

/// The store size of a scalar or vector type as the legaliser sees it;
/// `None` for aggregates.
fn shape(m: &Module, ty: TypeId) -> Option<Shape> {
    let types = &m.types;
    let scalar = |t: TypeId| match types.kind(t) {
        TypeKind::Int(b) => Some(u64::from(*b).div_ceil(8)),
        TypeKind::Half | TypeKind::BFloat => Some(2),
        TypeKind::Float => Some(4),
        TypeKind::Double => Some(8),
        TypeKind::Ptr(_) => Some(types.size(t)),
        _ => None,
    };
    match types.kind(ty) {
        TypeKind::Vector(e, n) => {
            let elem = scalar(*e)?;
            Some(Shape {
                bytes: elem * u64::from(*n),
                elem: Some(elem),
            })
        }
        _ => scalar(ty).map(|bytes| Shape { bytes, elem: None }),
    }
}

/// The scalar and vector leaves of `ty` at their offsets from `base`.
fn leaves(m: &Module, ty: TypeId, base: u64, out: &mut Vec<(u64, Shape)>) {
    let types = &m.types;
    if let Some(s) = shape(m, ty) {
        out.push((base, s));
        return;
    }
    match types.kind(ty) {
        TypeKind::Array(e, n) => {
            let stride = types.size(*e);
            for k in 0..*n {
                leaves(m, *e, base + k * stride, out);
            }
        }
        TypeKind::Struct { fields, .. } => {
            let offsets = types.get(ty).offsets.clone();
            for (&f, o) in fields.iter().zip(offsets) {
                leaves(m, f, base + o, out);
            }
        }
        _ => {}
    }
}

/// The pieces a load or store of a value of type `ty` makes, and what
/// the whole is when it is several.
fn value_pieces(
    m: &Module,
    func: &Function,
    (i, ty, align): (InstId, TypeId, u64),
    uses: &mut Option<HashMap<InstId, Vec<InstId>>>,
    merges: &vector::Merges,
) -> (Vec<Span>, Whole) {
    let inst = func.inst(i);
    let uses = uses.get_or_insert_with(|| users(func));
    // A copy (a value loaded and stored whole in the same block: a struct
    // assignment) or a constant stored, with the alignments of both ends.
    let copied_to = |load: InstId| -> Option<u64> {
        let users = uses.get(&load)?;
        let &[store] = users.as_slice() else {
            return None;
        };
        let s = func.inst(store);
        (s.op == Opcode::Store
            && s.operands[0] == Value::Inst(load)
            && s.block == func.inst(load).block)
            .then(|| a_align(s))
    };
    let copy: Option<(Vec<u64>, Whole)> = match inst.op {
        Opcode::Load => copied_to(i).map(|b| (vec![align, b], Whole::Copy)),
        _ => match inst.operands[0] {
            Value::Inst(l) if func.inst(l).op == Opcode::Load => {
                copied_to(l).map(|b| (vec![a_align(func.inst(l)), b], Whole::Copy))
            }
            Value::Const(_) => Some((vec![align], Whole::Fill)),
            _ => None,
        },
    };
    if let Some(mut s) = shape(m, ty) {
        let mut offset = 0;
        let narrow = (inst.op == Opcode::Load)
            .then(|| narrowed(m, func, i, uses, merges))
            .flatten();
        if let Some((o, bytes)) = narrow {
            (offset, s.bytes) = (o, bytes);
        }
        let mut out = Vec::new();
        split::value(s, offset, align, &mut out);
        let whole = match &copy {
            Some((_, Whole::Copy)) => Whole::Copy,
            _ => Whole::Value,
        };
        return (out, whole);
    }
    let mut all = Vec::new();
    leaves(m, ty, 0, &mut all);
    let aligns = copy;
    let plain: Vec<Span> = all
        .iter()
        .map(|&(offset, s)| Span {
            offset,
            bytes: s.bytes,
        })
        .collect();
    if let Some((aligns, whole)) = &aligns {
        let scalars = all.iter().all(|(_, s)| s.elem.is_none());
        if let Some(merged) = scalars
            .then(|| split::merged_leaves(&plain, aligns))
            .flatten()
        {
            return (merged, *whole);
        }
    }
    // A load whose uses only extract fields reads those fields.
    let extracted = (inst.op == Opcode::Load)
        .then(|| extracted_range(m, func, i, ty, uses))
        .flatten();
    let mut out = Vec::new();
    for &(offset, s) in &all {
        let kept = extracted
            .as_ref()
            .is_none_or(|r| r.iter().any(|&(lo, hi)| offset >= lo && offset < hi));
        if kept {
            split::value(s, offset, align, &mut out);
        }
    }
    (out, aligns.map_or(Whole::Value, |(_, w)| w))
}

/// The part of a loaded integer the backend loads when its only use keeps
/// only a narrower part of it (the DAG combiner's load narrowing, as
/// llc-19 and llc-22 do it): `trunc (load)` unless the truncated value is
/// only stored (a truncating store of the whole register instead);
/// `and (load), 0xff` (or `0xffff`, `0xffffffff`), also through a tree of
/// `and`/`or`/`xor` of single-use loads and constants under the mask;
/// and `trunc (lshr (load), 8k)`, the part `k` bytes in; a mask after a
/// truncation narrows further. Each link is its value's only use, and no
/// load of a mask's tree is part of a merged vector access. The part as
/// `(offset, bytes)`, little-endian.
fn narrowed(
    m: &Module,
    func: &Function,
    load: InstId,
    uses: &HashMap<InstId, Vec<InstId>>,
    merges: &vector::Merges,
) -> Option<(u64, u64)> {
    let inst = func.inst(load);
    if !matches!(
        inst.kind,
        InstKind::Load {
            volatile: false,
            ..
        }
    ) {
        return None;
    }
    let size = u64::from(m.types.int_bits(inst.ty)?).div_ceil(8);
    let only_use = |i: InstId| match uses.get(&i).map(Vec::as_slice) {
        Some(&[u]) => Some(u),
        _ => None,
    };
    let part = |b: u32| matches!(b, 8 | 16 | 32).then_some(u64::from(b / 8));
    let low_mask = |i: &crate::ir::Inst| -> Option<u64> {
        let mask = m.int_value(i.operands[1])? as u64;
        let b = mask.checked_add(1)?.trailing_zeros();
        (mask == (1u64 << b) - 1).then(|| part(b))?
    };
    // A truncation narrows the load unless every use stores it; a mask
    // that is its only use narrows it further.
    let truncated = |t: InstId| -> Option<u64> {
        if let Some(u) = only_use(t).filter(|&u| func.inst(u).op == Opcode::And) {
            if let Some(b) = low_mask(func.inst(u)) {
                return Some(b);
            }
        }
        let only_stored = uses.get(&t).is_some_and(|us| {
            us.iter().all(|&u| {
                let s = func.inst(u);
                s.op == Opcode::Store && s.operands[0] == Value::Inst(t)
            })
        });
        let b = part(m.types.int_bits(func.inst(t).ty)?)?;
        (!only_stored).then_some(b)
    };
    let logic = |op: Opcode| matches!(op, Opcode::And | Opcode::Or | Opcode::Xor);
    let first = only_use(load)?;
    let user = func.inst(first);
    let (offset, bytes) = match user.op {
        Opcode::Trunc => (0, truncated(first)?),
        Opcode::LShr => {
            let k = u64::try_from(m.int_value(user.operands[1])?).ok()?;
            let t = only_use(first)?;
            (k % 8 == 0 && func.inst(t).op == Opcode::Trunc).then_some(())?;
            (k / 8, truncated(t)?)
        }
        op if logic(op) => {
            // Up the tree of logic operations to the mask.
            let mut at = first;
            let mask = loop {
                let i = func.inst(at);
                if i.op == Opcode::And {
                    if let Some(b) = low_mask(i) {
                        break b;
                    }
                }
                at = only_use(at).filter(|&u| logic(func.inst(u).op))?;
            };
            let tree = func.inst(at).operands[0];
            masked_tree(m, func, tree, &only_use, merges).then_some((0, mask))?
        }
        _ => return None,
    };
    (bytes < size && offset + bytes <= size).then_some((offset, bytes))
}

/// Whether every leaf of the `and`/`or`/`xor` tree at `v` is a constant
/// or a load used only there, each inner node used only once: what lets
/// the combiner push a mask down to the loads.
fn masked_tree(
    m: &Module,
    func: &Function,
    v: Value,
    only_use: &dyn Fn(InstId) -> Option<InstId>,
    merges: &vector::Merges,
) -> bool {
    match v {
        Value::Const(_) => m.int_value(v).is_some(),
        Value::Inst(i) => {
            let inst = func.inst(i);
            let single = only_use(i).is_some();
            match inst.op {
                Opcode::Load => {
                    single
                        && !merges.contains_key(&i)
                        && matches!(
                            inst.kind,
                            InstKind::Load {
                                volatile: false,
                                ..
                            }
                        )
                }
                Opcode::And | Opcode::Or | Opcode::Xor => {
                    single
                        && inst
                            .operands
                            .iter()
                            .all(|&o| masked_tree(m, func, o, only_use, merges))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The byte ranges of `ty` that the uses of load `i` extract, when every
/// use is an `extractvalue`.
fn extracted_range(
    m: &Module,
    func: &Function,
    i: InstId,
    ty: TypeId,
    uses: &HashMap<InstId, Vec<InstId>>,
) -> Option<Vec<(u64, u64)>> {
    let users = uses.get(&i)?;
    users
        .iter()
        .map(|&u| {
            let inst = func.inst(u);
            let InstKind::Indices(ix) = &inst.kind else {
                return None;
            };
            if inst.op != Opcode::ExtractValue {
                return None;
            }
            let (mut t, mut offset) = (ty, 0u64);
            for &k in ix {
                match m.types.kind(t) {
                    TypeKind::Struct { fields, .. } => {
                        offset += *m.types.get(t).offsets.get(k as usize)?;
                        t = *fields.get(k as usize)?;
                    }
                    TypeKind::Array(e, _) => {
                        offset += u64::from(k) * m.types.size(*e);
                        t = *e;
                    }
                    _ => return None,
                }
            }
            Some((offset, offset + m.types.size(t)))
        })
        .collect()
}

/// The instructions that use each instruction's value.
fn users(func: &Function) -> HashMap<InstId, Vec<InstId>> {
    let mut out: HashMap<InstId, Vec<InstId>> = HashMap::default();
    for (k, inst) in func.insts.iter().enumerate() {
        for &o in &inst.operands {
            if let Value::Inst(d) = o {
                out.entry(d).or_default().push(InstId::new(k));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::{FunctionBuilder, ModuleBuilder};
    use crate::ir::{addrspace, Module};

    /// The `(offset, bytes)` of each access of `inst` in `func` of `m`.
    fn requests(m: &Module, func: crate::ir::FuncId, inst: Value) -> Vec<Vec<(i64, u64)>> {
        let Value::Inst(i) = inst else {
            panic!("an instruction")
        };
        let f = m.func(func);
        Lowering::of(m, f)
            .accesses(i)
            .iter()
            .map(|l| l.pieces.iter().map(|p| (p.offset, p.bytes)).collect())
            .collect()
    }

    /// A kernel `k(ptr dst, ptr src, i64 n)` built by `body`, which
    /// returns the instruction to look at.
    fn kernel(body: impl FnOnce(&mut FunctionBuilder<'_>) -> Value) -> (Module, Value) {
        let mut mb = ModuleBuilder::new();
        let (ptr, i64t, void) = (mb.ptr(addrspace::GLOBAL), mb.int(64), mb.void());
        let mut fb = mb.define("k", &[ptr, ptr, i64t], void);
        fb.kernel();
        let v = body(&mut fb);
        fb.ret(None);
        (mb.finish(), v)
    }

    fn copy(len: Option<i64>, align: [u32; 2]) -> Vec<Vec<(i64, u64)>> {
        let (m, v) = kernel(|fb| {
            let n = match len {
                Some(n) => fb.const_int(64, n),
                None => Value::Arg(2),
            };
            let no = fb.const_int(1, 0);
            let args = vec![Value::Arg(0), Value::Arg(1), n, no];
            fb.mem_intrinsic("llvm.memcpy.p1.p1.i64", args, align)
        });
        requests(&m, m.find_function("k").unwrap(), v)
    }

    #[test]
    fn struct_copies_are_pieces_both_alignments_allow() {
        // A load piece and a store piece at each offset; llc-19 and llc-22.
        let four: Vec<(i64, u64)> = (0..4).map(|k| (4 * k, 4)).collect();
        assert_eq!(copy(Some(16), [4, 4]), vec![four.clone(), four.clone()]);
        // The lesser alignment decides: 16 and 4 is four pieces.
        assert_eq!(copy(Some(16), [16, 4]), vec![four.clone(), four]);
        assert_eq!(copy(Some(16), [16, 16]), vec![vec![(0, 8), (8, 8)]; 2]);
        // 12 bytes at align 8: 8 + 4.
        assert_eq!(copy(Some(12), [8, 8]), vec![vec![(0, 8), (8, 4)]; 2]);
    }

    #[test]
    fn long_and_run_time_copies_are_byte_loops() {
        let (m, v) = kernel(|fb| {
            let n = fb.const_int(64, 256);
            let no = fb.const_int(1, 0);
            let args = vec![Value::Arg(0), Value::Arg(1), n, no];
            fb.mem_intrinsic("llvm.memcpy.p1.p1.i64", args, [4, 4])
        });
        let Value::Inst(i) = v else { unreachable!() };
        let f = m.func(m.find_function("k").unwrap());
        let l = Lowering::of(&m, f);
        let repeats: Vec<Repeat> = l.accesses(i).iter().map(|a| a.pieces[0].repeat).collect();
        assert_eq!(repeats, vec![Repeat::Times(256); 2]);
        assert_eq!(copy(None, [4, 4]), vec![vec![(0, 1)]; 2]);
        let (m, v) = kernel(|fb| {
            let no = fb.const_int(1, 0);
            let args = vec![Value::Arg(0), Value::Arg(1), Value::Arg(2), no];
            fb.mem_intrinsic("llvm.memcpy.p1.p1.i64", args, [4, 4])
        });
        let Value::Inst(i) = v else { unreachable!() };
        let f = m.func(m.find_function("k").unwrap());
        assert_eq!(
            Lowering::of(&m, f).accesses(i)[0].pieces[0].repeat,
            Repeat::PerLane
        );
    }

    #[test]
    fn loads_nothing_uses_make_no_request() {
        let (m, v) = kernel(|fb| {
            let i32t = fb.m.types.int(32);
            fb.load(i32t, Value::Arg(1))
        });
        assert_eq!(requests(&m, m.find_function("k").unwrap(), v), vec![vec![]]);
    }

    #[test]
    fn loads_are_narrowed_to_the_part_their_use_keeps() {
        // `(int)p[0] + 1` of a long: a 4-byte load (llc: ld.u32).
        let (m, v) = kernel(|fb| {
            let (i64t, i32t) = (fb.m.types.int(64), fb.m.types.int(32));
            let x = fb.load(i64t, Value::Arg(1));
            let t = fb.cast(Opcode::Trunc, x, i32t);
            let one = fb.const_int(32, 1);
            let s = fb.binary(Opcode::Add, t, one);
            fb.store(s, Value::Arg(0));
            x
        });
        assert_eq!(
            requests(&m, m.find_function("k").unwrap(), v),
            vec![vec![(0, 4)]]
        );
        // Truncated only to be stored: a truncating store of the whole
        // register, the load stays 8 bytes (llc: ld.u64, st.u32).
        let (m, v) = kernel(|fb| {
            let (i64t, i32t) = (fb.m.types.int(64), fb.m.types.int(32));
            let x = fb.load(i64t, Value::Arg(1));
            let t = fb.cast(Opcode::Trunc, x, i32t);
            fb.store(t, Value::Arg(0));
            x
        });
        assert_eq!(
            requests(&m, m.find_function("k").unwrap(), v),
            vec![vec![(0, 8)]]
        );
        // `x & 0xff`: a byte.
        let (m, v) = kernel(|fb| {
            let i32t = fb.m.types.int(32);
            let x = fb.load(i32t, Value::Arg(1));
            let mask = fb.const_int(32, 0xff);
            let b = fb.binary(Opcode::And, x, mask);
            fb.store(b, Value::Arg(0));
            x
        });
        assert_eq!(
            requests(&m, m.find_function("k").unwrap(), v),
            vec![vec![(0, 1)]]
        );
    }

    #[test]
    fn a_globals_own_alignment_counts() {
        // A <4 x i8> stored at align 1 to a 4-aligned shared array plus
        // 1984: llc knows the address is 4-aligned, one st.shared.u32.
        let mut mb = ModuleBuilder::new();
        let (i32t, i8t, void) = (mb.int(32), mb.int(8), mb.void());
        let arr = mb.ty(TypeKind::Array(i32t, 1024));
        let s = mb.global("s", arr, addrspace::SHARED);
        let v4 = mb.ty(TypeKind::Vector(i8t, 4));
        let mut fb = mb.define("k", &[], void);
        fb.kernel();
        let off = fb.const_int(64, 1984);
        let at = fb.gep(i8t, s, &[off]);
        let zero = fb.m.intern_const(crate::ir::Const::Zero(v4));
        let st = fb.inst(
            Opcode::Store,
            void,
            vec![zero, at],
            InstKind::Store {
                align: 1,
                volatile: false,
            },
        );
        fb.ret(None);
        let m = mb.finish();
        assert_eq!(
            requests(&m, m.find_function("k").unwrap(), st),
            vec![vec![(0, 4)]]
        );
    }
}
