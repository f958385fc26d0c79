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
//!   (NVPTX has no unaligned vector access). The alignment of a piece is
//!   the one its instruction states, or what the chain's first piece's
//!   alignment implies at its offset.
//!
//! Pieces are taken lowest offset first, the widest access that fits
//! each time; what is left stays a scalar access. The merged access is
//! placed at its lowest piece (the [`Merge::Head`]), whose address is the
//! access's; the other pieces ([`Merge::Part`]) are no accesses of their
//! own.

use crate::dataflow::FastMap as HashMap;
use crate::ir::gep::{offsets, Index};
use crate::ir::{Function, InstId, InstKind, Intrinsic, Module, Opcode, TypeKind, Value};

/// The widest vector access NVPTX has: 128 bits (`ld.v4.u32`, `ld.v2.f64`).
pub const MAX_VECTOR_BYTES: u64 = 16;

/// What merging makes of one load or store.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Merge {
    /// The lowest piece of a merged access, which is `bytes` wide and
    /// starts at this instruction's address.
    Head { bytes: u64 },
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
        let mut stores = Run::default();
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
}

impl Run {
    fn push(&mut self, p: Piece) {
        self.root = Some(p.root);
        self.pieces.push(p);
    }

    /// Merges what the run allows, per pointer and piece size, and starts
    /// a new run.
    fn finish(&mut self, out: &mut Merges) {
        let mut pieces = std::mem::take(&mut self.pieces);
        self.root = None;
        pieces.sort_by_key(|p| (root_key(p.root), p.bytes, p.offset));
        for group in pieces.chunk_by(|a, b| a.root == b.root && a.bytes == b.bytes) {
            chain(group, out);
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
fn chain(group: &[Piece], out: &mut Merges) {
    let Some(first) = group.first() else { return };
    let mut at = 0;
    while at < group.len() {
        let head = group[at];
        let align = head
            .align
            .max(common_alignment(first.align, head.offset - first.offset));
        // The longest contiguous stretch from `head`, without repeats.
        let mut len = 1;
        while at + len < group.len()
            && group[at + len].offset == head.offset + (len as i64) * head.bytes as i64
        {
            len += 1;
        }
        let take = (2..=len)
            .rev()
            .find(|&n| {
                let total = n as u64 * head.bytes;
                n.is_power_of_two() && total <= MAX_VECTOR_BYTES && total <= align
            })
            .unwrap_or(1);
        if take > 1 {
            let bytes = take as u64 * head.bytes;
            out.insert(head.inst, Merge::Head { bytes });
            for p in &group[at + 1..at + take] {
                out.insert(p.inst, Merge::Part { head: head.inst });
            }
        }
        at += take;
    }
}

/// The largest power of two dividing both `align` and `offset`.
fn common_alignment(align: u64, offset: i64) -> u64 {
    if offset == 0 {
        return align;
    }
    align.min(1 << offset.unsigned_abs().trailing_zeros().min(62))
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
        root,
        offset,
        bytes,
        align: u64::from(align.max(1)),
    })
}

/// The pointer `address` is a constant byte offset from, through
/// `getelementptr`s with constant indices.
fn base_and_offset(m: &Module, func: &Function, mut address: Value) -> (Value, i64) {
    let mut offset = 0i64;
    while let Value::Inst(g) = address {
        let inst = func.inst(g);
        let InstKind::Gep { source, .. } = inst.kind else {
            break;
        };
        let indices: Option<Vec<Index<()>>> = inst.operands[1..]
            .iter()
            .map(|&v| m.int_value(v).map(Index::Const))
            .collect();
        let Some(Ok((off, _))) = indices.map(|ix| offsets(&m.types, source, &ix)) else {
            break;
        };
        offset = offset.wrapping_add(off);
        address = inst.operands[0];
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
