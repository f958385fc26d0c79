//! How a value of an IR type sits in registers (one word per scalar leaf)
//! and in memory (each leaf at its offset in the NVPTX layout).

use crate::ir::{TypeId, TypeKind, Types};
use crate::sim::code::Leaf;
use crate::sim::scalar::Scalar;

/// The scalar of a non-aggregate type; pointers are 64-bit integers.
pub fn scalar(types: &Types, ty: TypeId) -> Result<Scalar, String> {
    match types.kind(ty) {
        TypeKind::Int(bits) if *bits <= 64 => Ok(Scalar::Int(*bits as u8)),
        TypeKind::Int(bits) => Err(format!("{bits}-bit integers")),
        TypeKind::Half => Ok(Scalar::F16),
        TypeKind::BFloat => Ok(Scalar::BF16),
        TypeKind::Float => Ok(Scalar::F32),
        TypeKind::Double => Ok(Scalar::F64),
        TypeKind::Ptr(_) => Ok(Scalar::Int(64)),
        _ => Err(format!("values of type {}", types.render(ty))),
    }
}

/// The scalar of a type or of its vector elements, with the element count.
pub fn element(types: &Types, ty: TypeId) -> Result<(Scalar, u32), String> {
    match types.kind(ty) {
        TypeKind::Vector(e, n) => Ok((scalar(types, *e)?, *n)),
        _ => Ok((scalar(types, ty)?, 1)),
    }
}

/// Register words a value of `ty` takes (0 for `void`).
pub fn words(types: &Types, ty: TypeId) -> u32 {
    match types.kind(ty) {
        TypeKind::Void | TypeKind::Label | TypeKind::Metadata | TypeKind::Token => 0,
        TypeKind::Array(e, n) => words(types, *e) * (*n as u32),
        TypeKind::Vector(e, n) => words(types, *e) * n,
        TypeKind::Struct { fields, .. } => fields.iter().map(|&f| words(types, f)).sum(),
        _ => 1,
    }
}

/// The scalar leaves of `ty` with their byte offsets, in register order.
pub fn leaves(types: &Types, ty: TypeId) -> Result<Vec<Leaf>, String> {
    let mut out = Vec::new();
    collect(types, ty, 0, &mut out)?;
    Ok(out)
}

fn collect(types: &Types, ty: TypeId, base: u64, out: &mut Vec<Leaf>) -> Result<(), String> {
    let offset = |o: u64| u32::try_from(o).map_err(|_| "values over 4 GiB".to_string());
    match types.kind(ty) {
        TypeKind::Array(e, n) => {
            let stride = types.size(*e);
            for i in 0..*n {
                collect(types, *e, base + i * stride, out)?;
            }
        }
        TypeKind::Vector(e, n) => {
            if matches!(types.kind(*e), TypeKind::Int(b) if *b % 8 != 0) {
                return Err(format!("{} in memory (bit-packed)", types.render(ty)));
            }
            let stride = types.size(*e);
            for i in 0..u64::from(*n) {
                collect(types, *e, base + i * stride, out)?;
            }
        }
        TypeKind::Struct { fields, .. } => {
            let offsets = types.get(ty).offsets.clone();
            for (&f, o) in fields.iter().zip(offsets) {
                collect(types, f, base + o, out)?;
            }
        }
        _ => out.push(Leaf {
            offset: offset(base)?,
            scalar: scalar(types, ty)?,
        }),
    }
    Ok(())
}

/// The first register word and word count of the member that
/// `extractvalue`/`insertvalue` indices select.
pub fn member(types: &Types, ty: TypeId, indices: &[u32]) -> Option<(u32, u32, TypeId)> {
    let mut start = 0;
    let mut ty = ty;
    for &i in indices {
        match types.kind(ty) {
            TypeKind::Array(e, _) | TypeKind::Vector(e, _) => {
                start += words(types, *e) * i;
                ty = *e;
            }
            TypeKind::Struct { fields, .. } => {
                start += fields[..i as usize]
                    .iter()
                    .map(|&f| words(types, f))
                    .sum::<u32>();
                ty = *fields.get(i as usize)?;
            }
            _ => return None,
        }
    }
    Some((start, words(types, ty), ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_leaves_follow_the_layout() {
        let mut t = Types::default();
        let f = t.intern(TypeKind::Float);
        let d = t.intern(TypeKind::Double);
        let i = t.int(32);
        let v4 = t.intern(TypeKind::Vector(f, 4));
        // { float, double, i32 }: offsets 0, 8, 16.
        let s = t.intern(TypeKind::Struct {
            fields: vec![f, d, i],
            packed: false,
        });
        let l = leaves(&t, s).unwrap();
        assert_eq!(
            l.iter().map(|l| l.offset).collect::<Vec<_>>(),
            vec![0, 8, 16]
        );
        assert_eq!(words(&t, v4), 4);
        let outer = t.intern(TypeKind::Struct {
            fields: vec![v4, s],
            packed: false,
        });
        // Member 1, field 2 is word 4 + 2.
        assert_eq!(member(&t, outer, &[1, 2]), Some((6, 1, i)));
        let i128_ = t.int(128);
        assert!(scalar(&t, i128_).is_err());
    }
}
