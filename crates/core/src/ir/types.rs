//! Interned types with their NVPTX memory layout.
//!
//! Layout follows the nvptx64 data layout (`e-i64:64-i128:128-v16:16-v32:32-n16:32:64`):
//! every scalar is naturally aligned and pointers are 8 bytes. We compute it
//! ourselves so that hand-built test modules get the same sizes as loaded ones.

use super::TypeId;
use std::collections::HashMap;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeKind {
    Void,
    Int(u32),
    Half,
    BFloat,
    Float,
    Double,
    /// An opaque pointer in the given address space.
    Ptr(u32),
    Array(TypeId, u64),
    Vector(TypeId, u32),
    Struct {
        fields: Vec<TypeId>,
        packed: bool,
    },
    Func,
    Label,
    Metadata,
    Token,
    Other(String),
}

#[derive(Clone, PartialEq, Debug)]
pub struct Type {
    pub kind: TypeKind,
    /// Allocation size in bytes (the stride between array elements).
    pub size: u64,
    pub align: u64,
    /// Byte offset of each field, for structs.
    pub offsets: Vec<u64>,
}

/// The type table; equal kinds share one [`TypeId`].
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Types {
    table: Vec<Type>,
    index: HashMap<TypeKind, TypeId>,
}

fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align.max(1)) * align.max(1)
}

impl Types {
    pub fn get(&self, id: TypeId) -> &Type {
        &self.table[id.index()]
    }

    pub fn kind(&self, id: TypeId) -> &TypeKind {
        &self.get(id).kind
    }

    /// Size in bytes as stored in memory.
    pub fn size(&self, id: TypeId) -> u64 {
        self.get(id).size
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Interns a type, computing its layout.
    pub fn intern(&mut self, kind: TypeKind) -> TypeId {
        if let Some(&id) = self.index.get(&kind) {
            return id;
        }
        let (size, align, offsets) = self.layout(&kind);
        let id = TypeId::new(self.table.len());
        self.table.push(Type {
            kind: kind.clone(),
            size,
            align,
            offsets,
        });
        self.index.insert(kind, id);
        id
    }

    fn layout(&self, kind: &TypeKind) -> (u64, u64, Vec<u64>) {
        let scalar = |bytes: u64| (bytes, bytes.next_power_of_two().clamp(1, 16), Vec::new());
        match kind {
            TypeKind::Int(bits) => scalar(u64::from(*bits).div_ceil(8)),
            TypeKind::Half | TypeKind::BFloat => scalar(2),
            TypeKind::Float => scalar(4),
            TypeKind::Double | TypeKind::Ptr(_) => scalar(8),
            TypeKind::Array(elem, n) => {
                let e = self.get(*elem);
                (e.size * n, e.align, Vec::new())
            }
            TypeKind::Vector(elem, n) => {
                let bytes = self.get(*elem).size * u64::from(*n);
                let align = bytes.next_power_of_two().max(1);
                (round_up(bytes, align), align, Vec::new())
            }
            TypeKind::Struct { fields, packed } => {
                let mut offset = 0;
                let mut align = 1;
                let mut offsets = Vec::with_capacity(fields.len());
                for &f in fields {
                    let t = self.get(f);
                    let a = if *packed { 1 } else { t.align };
                    offset = round_up(offset, a);
                    offsets.push(offset);
                    offset += t.size;
                    align = align.max(a);
                }
                (round_up(offset, align), align, offsets)
            }
            _ => (0, 1, Vec::new()),
        }
    }

    pub fn void(&mut self) -> TypeId {
        self.intern(TypeKind::Void)
    }

    pub fn int(&mut self, bits: u32) -> TypeId {
        self.intern(TypeKind::Int(bits))
    }

    pub fn ptr(&mut self, addrspace: u32) -> TypeId {
        self.intern(TypeKind::Ptr(addrspace))
    }

    /// The generic pointer type if interned (for addresses of globals).
    pub fn ptr_generic_or_default(&self) -> TypeId {
        self.index
            .get(&TypeKind::Ptr(0))
            .copied()
            .unwrap_or_default()
    }

    pub fn void_or_default(&self) -> TypeId {
        self.index.get(&TypeKind::Void).copied().unwrap_or_default()
    }

    pub fn is_ptr(&self, id: TypeId) -> bool {
        matches!(self.kind(id), TypeKind::Ptr(_))
    }

    pub fn int_bits(&self, id: TypeId) -> Option<u32> {
        match self.kind(id) {
            TypeKind::Int(b) => Some(*b),
            _ => None,
        }
    }

    pub fn is_float(&self, id: TypeId) -> bool {
        matches!(
            self.kind(id),
            TypeKind::Half | TypeKind::BFloat | TypeKind::Float | TypeKind::Double
        )
    }

    /// The element type reached by indexing into an aggregate with a constant
    /// or variable index (struct fields need the constant).
    pub fn element(&self, id: TypeId, field: Option<u64>) -> Option<(TypeId, u64)> {
        let t = self.get(id);
        match &t.kind {
            TypeKind::Array(e, _) | TypeKind::Vector(e, _) => Some((*e, 0)),
            TypeKind::Struct { fields, .. } => {
                let i = field? as usize;
                Some((*fields.get(i)?, t.offsets[i]))
            }
            _ => None,
        }
    }

    /// Renders a type in LLVM syntax, for messages and the IR printer.
    pub fn render(&self, id: TypeId) -> String {
        match self.kind(id) {
            TypeKind::Void => "void".into(),
            TypeKind::Int(b) => format!("i{b}"),
            TypeKind::Half => "half".into(),
            TypeKind::BFloat => "bfloat".into(),
            TypeKind::Float => "float".into(),
            TypeKind::Double => "double".into(),
            TypeKind::Ptr(0) => "ptr".into(),
            TypeKind::Ptr(a) => format!("ptr addrspace({a})"),
            TypeKind::Array(e, n) => format!("[{n} x {}]", self.render(*e)),
            TypeKind::Vector(e, n) => format!("<{n} x {}>", self.render(*e)),
            TypeKind::Struct { fields, packed } => {
                let inner: Vec<_> = fields.iter().map(|&f| self.render(f)).collect();
                if *packed {
                    format!("<{{ {} }}>", inner.join(", "))
                } else {
                    format!("{{ {} }}", inner.join(", "))
                }
            }
            TypeKind::Func => "fn".into(),
            TypeKind::Label => "label".into(),
            TypeKind::Metadata => "metadata".into(),
            TypeKind::Token => "token".into(),
            TypeKind::Other(s) => s.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layout_pads_to_natural_alignment() {
        let mut t = Types::default();
        let i8_ = t.int(8);
        let f64_ = t.intern(TypeKind::Double);
        let i32_ = t.int(32);
        // { i8, double, i32 }: 0, 8, 16; size rounds to 24.
        let s = t.intern(TypeKind::Struct {
            fields: vec![i8_, f64_, i32_],
            packed: false,
        });
        assert_eq!(t.get(s).offsets, vec![0, 8, 16]);
        assert_eq!(t.size(s), 24);
        let p = t.intern(TypeKind::Struct {
            fields: vec![i8_, f64_],
            packed: true,
        });
        assert_eq!(t.size(p), 9);
    }

    #[test]
    fn arrays_and_vectors() {
        let mut t = Types::default();
        let f = t.intern(TypeKind::Float);
        let a = t.intern(TypeKind::Array(f, 33));
        assert_eq!(t.size(a), 132);
        let v3 = t.intern(TypeKind::Vector(f, 3));
        assert_eq!(t.size(v3), 16);
        assert_eq!(t.render(a), "[33 x float]");
    }
}
