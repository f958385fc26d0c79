//! The NVPTX backend's load/store vectoriser, as a rule on our IR.
//!
//! Clang -O2 leaves a `float4` load as four `load float`s (at offsets 0,
//! 4, 8, 12, the first `align 16`) and a `uchar4` store as four `store
//! i8`s (the first `align 4`); `llc` merges them into one `ld.v4.f32` or
//! one `st.u32` before it emits PTX. A warp then makes one request of 16
//! (or 4) bytes per lane, not four of 4 (or 1). Sites, figures and the
//! simulator all read [`merges`], so the static counts and the oracle's
//! agree on what one access is.
//!
//! The rule (LLVM's `LoadStoreVectorizer` with NVPTX's legality test):
//! * plain loads (or plain stores) of scalars of one size, not volatile,
//!   in one basic block, whose addresses are one pointer plus constant
//!   byte offsets (`getelementptr` with constant indices);
//! * with nothing between them that may write memory (for loads) or
//!   touch memory at all (for stores, other than stores to the same
//!   pointer): the backend cannot prove another pointer does not alias;
//! * contiguous: each piece starts where the one before ends;
//! * a merged access is 2 or 4 pieces (8 or 16 for bytes), at most 16
//!   bytes, and the first piece's alignment is at least the merged size
//!   (NVPTX has no unaligned vector access), as its instruction states
//!   it (`llc` does not derive a larger one from an earlier piece's).
//!
//! Pieces are taken lowest offset first, the widest access that fits
//! each time; what is left stays a scalar access. The merged access is
//! placed where the vectoriser puts it (the [`Merge::Head`]): loads at
//! the first load of the chain in program order, stores at the last
//! store, each with that instruction's line; its address is the lowest
//! piece's. The other pieces ([`Merge::Part`]) are no accesses of their
//! own.

use crate::dataflow::FastMap as HashMap;
use crate::ir::gep::{offsets, Index};
use crate::ir::{Function, InstId, InstKind, Intrinsic, Module, Opcode, TypeKind, Value};

/// The widest vector access NVPTX has: 128 bits (`ld.v4.u32`, `ld.v2.f64`).
pub const MAX_VECTOR_BYTES: u64 = 16;

/// What merging makes of one load or store.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Merge {
    /// The piece a merged access is placed at: it is `bytes` wide, starts
    /// `offset` bytes from this instruction's address (at the lowest
    /// piece's, so 0 or below) and is aligned to `align`.
    Head { bytes: u64, offset: i64, align: u64 },
    /// A piece of the merged access placed at `head`.
    Part { head: InstId },
}

/// The loads and stores of one function that merging changes; an
/// instruction not in the map is an access of its own.
pub type Merges = HashMap<InstId, Merge>;

/// The merged accesses of `func` (see the module docs for the rule).
pub fn merges(m: &Module, func: &Function) -> Merges {
    let mut out = Merges::default();
    for block in &func.blocks {
        let mut loads = Run::default();
        let mut stores = Run {
            stores: true,
            ..Run::default()
        };
        for &i in &block.insts {
            let inst = func.inst(i);
            let piece = candidate(m, func, i);
            let touch = touches(m, func, i);
            match (inst.op, piece) {
                (Opcode::Load, Some(p)) => loads.push(p),
                (Opcode::Store, Some(p)) => {
                    // A store to another pointer may alias this run's.
                    if stores.root.is_some_and(|r| r != p.root) {
                        stores.finish(&mut out);
                    }
                    loads.finish(&mut out);
                    stores.push(p);
                }
                _ => {
                    if touch.writes {
                        loads.finish(&mut out);
                    }
                    if touch.reads || touch.writes {
                        stores.finish(&mut out);
                    }
                }
            }
            if inst.op == Opcode::Load && (touch.reads || piece.is_some()) {
                stores.finish(&mut out);
            }
        }
        loads.finish(&mut out);
        stores.finish(&mut out);
    }
    out
}

/// A load or store that may be merged.
#[derive(Copy, Clone, Debug)]
struct Piece {
    inst: InstId,
    /// Its place in the block.
    order: usize,
    root: Value,
    offset: i64,
    bytes: u64,
    align: u64,
}

/// The pieces seen since the last instruction that stops merging.
#[derive(Default)]
struct Run {
    pieces: Vec<Piece>,
    /// For stores: the one pointer of the run.
    root: Option<Value>,
    /// A run of stores (placed at their last piece, loads at their first).
    stores: bool,
}

impl Run {
    fn push(&mut self, mut p: Piece) {
        self.root = Some(p.root);
        p.order = self.pieces.len();
        self.pieces.push(p);
    }

    /// Merges what the run allows, per pointer and piece size, and starts
    /// a new run.
    fn finish(&mut self, out: &mut Merges) {
        let mut pieces = std::mem::take(&mut self.pieces);
        self.root = None;
        pieces.sort_by_key(|p| (root_key(p.root), p.bytes, p.offset));
        for group in pieces.chunk_by(|a, b| a.root == b.root && a.bytes == b.bytes) {
            chain(group, self.stores, out);
        }
    }
}

fn root_key(v: Value) -> (u8, usize) {
    match v {
        Value::Inst(i) => (0, i.index()),
        Value::Arg(a) => (1, a as usize),
        Value::Const(c) => (2, c.index()),
        Value::Global(g) => (3, g.index()),
        Value::Func(f) => (4, f.index()),
        Value::Opaque => (5, 0),
    }
}

/// Merges the pieces of one pointer and size, sorted by offset.
fn chain(group: &[Piece], stores: bool, out: &mut Merges) {
    let mut at = 0;
    while at < group.len() {
        let head = group[at];
        // The alignment the instruction states: llc does not derive a
        // larger one from an earlier piece's (checked against llc-19).
        let align = head.align;
        // The longest contiguous stretch from `head`, without repeats.
        let mut len = 1;
        while at + len < group.len()
            && group[at + len].offset == head.offset + (len as i64) * head.bytes as i64
        {
            len += 1;
        }
        let mut take = (2..=len)
            .rev()
            .find(|&n| {
                let total = n as u64 * head.bytes;
                n.is_power_of_two() && total <= MAX_VECTOR_BYTES && total <= align
            })
            .unwrap_or(1);
        let mut bytes = take as u64 * head.bytes;
        // llc-20 and later load a whole vector over a chain's gaps: the
        // most pieces from `head` whose span, rounded up to a power of two,
        // the alignment allows.
        if !stores && crate::ir::major::VECTORISER_FILLS_LOAD_GAPS {
            let fits = (at + take + 1..=group.len()).rev().find_map(|end| {
                let last = group[end - 1];
                let span = ((last.offset - head.offset) as u64 + last.bytes).next_power_of_two();
                let distinct = group[at + 1..end]
                    .windows(2)
                    .all(|w| w[0].offset < w[1].offset)
                    && group[at + 1].offset > head.offset;
                (span <= align.min(MAX_VECTOR_BYTES) && distinct).then_some((end - at, span))
            });
            if let Some((n, span)) = fits {
                (take, bytes) = (n, span);
            }
        }
        if take > 1 {
            let merged = &group[at..at + take];
            let by_order = |a: &&Piece, b: &&Piece| a.order.cmp(&b.order);
            let place = match stores {
                true => merged.iter().max_by(by_order),
                false => merged.iter().min_by(by_order),
            }
            .copied()
            .unwrap_or(head);
            for p in merged {
                let m = match p.inst == place.inst {
                    true => Merge::Head {
                        bytes,
                        offset: head.offset - place.offset,
                        align,
                    },
                    false => Merge::Part { head: place.inst },
                };
                out.insert(p.inst, m);
            }
        }
        at += take;
    }
}

/// `i` as a piece, if it is a plain load or store of a scalar.
fn candidate(m: &Module, func: &Function, i: InstId) -> Option<Piece> {
    let inst = func.inst(i);
    let (align, ty, address) = match inst.kind {
        InstKind::Load {
            align,
            volatile: false,
        } => (align, inst.ty, inst.operands[0]),
        InstKind::Store {
            align,
            volatile: false,
        } => (
            align,
            m.value_type(func, inst.operands[0]),
            inst.operands[1],
        ),
        _ => return None,
    };
    let scalar = matches!(
        m.types.kind(ty),
        TypeKind::Int(_)
            | TypeKind::Half
            | TypeKind::BFloat
            | TypeKind::Float
            | TypeKind::Double
            | TypeKind::Ptr(_)
    );
    let bytes = m.types.size(ty);
    if !scalar || bytes == 0 || !bytes.is_power_of_two() {
        return None;
    }
    let (root, offset) = base_and_offset(m, func, address);
    Some(Piece {
        inst: i,
        order: 0,
        root,
        offset,
        bytes,
        align: u64::from(align.max(1)),
    })
}

/// The pointer `address` is a constant byte offset from, through
/// `getelementptr`s with constant indices.
pub(super) fn base_and_offset(m: &Module, func: &Function, mut address: Value) -> (Value, i64) {
    let mut offset = 0i64;
    loop {
        // An instruction's GEP, or a constant one (`getelementptr (i8,
        // ptr addrspace(3) @s, i64 4)`).
        let (source, operands) = match address {
            Value::Inst(g) => match &func.inst(g).kind {
                InstKind::Gep { source, .. } => (*source, func.inst(g).operands.as_slice()),
                _ => break,
            },
            Value::Const(c) => match m.konst(c) {
                crate::ir::Const::Expr {
                    op: Opcode::GetElementPtr,
                    operands,
                    kind: InstKind::Gep { source, .. },
                    ..
                } => (*source, operands.as_slice()),
                _ => break,
            },
            _ => break,
        };
        let indices: Option<Vec<Index<()>>> = operands[1..]
            .iter()
            .map(|&v| m.int_value(v).map(Index::Const))
            .collect();
        let Some(Ok((off, _))) = indices.map(|ix| offsets(&m.types, source, &ix)) else {
            break;
        };
        offset = offset.wrapping_add(off);
        address = operands[0];
    }
    (address, offset)
}

/// Whether an instruction other than a candidate piece reads or writes
/// memory, as far as the backend can tell.
#[derive(Copy, Clone, Default)]
struct Touch {
    reads: bool,
    writes: bool,
}

fn touches(m: &Module, func: &Function, i: InstId) -> Touch {
    let inst = func.inst(i);
    let both = Touch {
        reads: true,
        writes: true,
    };
    match inst.op {
        Opcode::Load => Touch {
            reads: true,
            writes: false,
        },
        Opcode::Store | Opcode::AtomicRmw | Opcode::CmpXchg | Opcode::Fence => both,
        Opcode::Call => match m.called_intrinsic(inst) {
            Some(
                Intrinsic::SReg(_)
                | Intrinsic::Shfl { .. }
                | Intrinsic::Vote(_)
                | Intrinsic::MatchAny
                | Intrinsic::MatchAll
                | Intrinsic::ActiveMask
                | Intrinsic::PtrCast
                | Intrinsic::NoOp
                | Intrinsic::Assume
                | Intrinsic::MinMax(_)
                | Intrinsic::Pure { .. },
            ) => Touch::default(),
            Some(Intrinsic::GlobalLoad | Intrinsic::Prefetch) => Touch {
                reads: true,
                writes: false,
            },
            _ => both,
        },
        _ => Touch::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ModuleBuilder;
    use crate::ir::{addrspace, TypeId};

    /// A function loading `n` scalars of type `ty` (`size` bytes) from
    /// `p + k·size`, the first with alignment `first` and the others with
    /// `rest`, then storing each to `q` at the same offsets, aligned alike;
    /// a store to `p` after the first load when `clobber`. Returns the
    /// merges and the loads and stores in order.
    fn pieces(
        n: usize,
        bits: u32,
        (first, rest): (u32, u32),
        clobber: bool,
    ) -> (Merges, Vec<InstId>, Vec<InstId>) {
        let mut mb = ModuleBuilder::new();
        let ptr = mb.ptr(addrspace::GLOBAL);
        let ty: TypeId = mb.int(bits);
        let i8t = mb.int(8);
        let void = mb.void();
        let mut fb = mb.define("k", &[ptr, ptr], void);
        let size = i64::from(bits / 8);
        let at = |fb: &mut crate::ir::builder::FunctionBuilder<'_>, base: u32, k: usize| {
            let off = fb.const_int(64, k as i64 * size);
            fb.gep(i8t, Value::Arg(base), &[off])
        };
        let (mut loads, mut values) = (Vec::new(), Vec::new());
        for k in 0..n {
            let a = at(&mut fb, 0, k);
            let align = if k == 0 { first } else { rest };
            let kind = InstKind::Load {
                align,
                volatile: false,
            };
            let v = fb.inst(Opcode::Load, ty, vec![a], kind);
            let Value::Inst(i) = v else { unreachable!() };
            loads.push(i);
            values.push(v);
            if clobber && k == 0 {
                fb.store(v, Value::Arg(0));
            }
        }
        let mut stores = Vec::new();
        for (k, &v) in values.iter().enumerate() {
            let a = at(&mut fb, 1, k);
            let align = if k == 0 { first } else { rest };
            let kind = InstKind::Store {
                align,
                volatile: false,
            };
            let Value::Inst(i) = fb.inst(Opcode::Store, void, vec![v, a], kind) else {
                unreachable!()
            };
            stores.push(i);
        }
        fb.ret(None);
        let f = fb.func;
        let m = mb.finish();
        (merges(&m, m.func(f)), loads, stores)
    }

    /// The merged widths, one per access, in offset order.
    fn widths(mg: &Merges, insts: &[InstId], size: u64) -> Vec<u64> {
        insts
            .iter()
            .filter_map(|i| match mg.get(i) {
                Some(Merge::Head { bytes, .. }) => Some(*bytes),
                Some(Merge::Part { .. }) => None,
                None => Some(size),
            })
            .collect()
    }

    // Each expectation is what llc-19 -mcpu=sm_80 emits for the same IR.

    #[test]
    fn a_float4_is_one_16_byte_access() {
        // 4 × 4 bytes from align 16: ld.global.v4.
        let (mg, loads, stores) = pieces(4, 32, (16, 4), false);
        assert_eq!(widths(&mg, &loads, 4), vec![16]);
        assert_eq!(widths(&mg, &stores, 4), vec![16]);
        assert_eq!(mg[&loads[3]], Merge::Part { head: loads[0] });
    }

    #[test]
    fn bytes_merge_up_to_16() {
        // 16 × i8 from align 16: ld.global.v4.u32; 8 × i8 from align 8:
        // ld.global.u64.
        let (mg, loads, _) = pieces(16, 8, (16, 1), false);
        assert_eq!(widths(&mg, &loads, 1), vec![16]);
        let (mg, loads, _) = pieces(8, 8, (8, 1), false);
        assert_eq!(widths(&mg, &loads, 1), vec![8]);
    }

    #[test]
    fn alignment_limits_the_width() {
        // 4 floats from align 8: ld.global.v2.f32, then two scalars (the
        // third piece states align 4; llc does not derive 8 for it).
        let (mg, loads, _) = pieces(4, 32, (8, 4), false);
        assert_eq!(widths(&mg, &loads, 4), vec![8, 4, 4]);
        // 4 bytes from align 2: ld.global.v2.u8, then two bytes.
        let (mg, loads, _) = pieces(4, 8, (2, 1), false);
        assert_eq!(widths(&mg, &loads, 1), vec![2, 1, 1]);
        // 3 floats from align 16: no 12-byte access; v2 and a scalar
        // (llc-19), or one v4 whose last element goes unused (llc-22).
        let (mg, loads, _) = pieces(3, 32, (16, 4), false);
        let want = match crate::ir::major::VECTORISER_FILLS_LOAD_GAPS {
            true => vec![16],
            false => vec![8, 4],
        };
        assert_eq!(widths(&mg, &loads, 4), want);
        // align 4: nothing merges.
        let (mg, loads, _) = pieces(4, 32, (4, 4), false);
        assert_eq!(widths(&mg, &loads, 4), vec![4, 4, 4, 4]);
    }

    #[test]
    fn a_store_between_loads_keeps_them_apart() {
        // The store to p may write what the later loads read: the first
        // load stays alone; the other three (12 bytes) cannot be one
        // access and are not aligned for a v2.
        let (mg, loads, stores) = pieces(4, 32, (16, 4), true);
        assert_eq!(widths(&mg, &loads, 4), vec![4, 4, 4, 4]);
        // The stores to q come after every load: still one v4.
        assert_eq!(widths(&mg, &stores, 4), vec![16]);
    }
}
