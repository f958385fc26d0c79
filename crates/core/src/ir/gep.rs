//! `getelementptr` as a constant byte offset plus scaled variable indices,
//! from the NVPTX layout of its source type.

use super::{TypeId, TypeKind, Types};

/// One GEP index: a known constant, or a variable identified by the caller.
#[derive(Copy, Clone, Debug)]
pub enum Index<V> {
    Const(i64),
    Var(V),
}

/// The constant offset and `(variable, scale)` pairs of a GEP whose first
/// index steps over whole `source` objects.
pub fn offsets<V: Copy>(
    types: &Types,
    source: TypeId,
    indices: &[Index<V>],
) -> Result<(i64, Vec<(V, i64)>), String> {
    let mut offset = 0i64;
    let mut vars = Vec::new();
    let mut ty = source;
    for (k, &index) in indices.iter().enumerate() {
        let scale = if k == 0 {
            types.size(source) as i64
        } else {
            match types.kind(ty).clone() {
                TypeKind::Array(e, _) | TypeKind::Vector(e, _) => {
                    ty = e;
                    types.size(e) as i64
                }
                TypeKind::Struct { fields, .. } => {
                    let Index::Const(field) = index else {
                        return Err("a struct field chosen at run time".into());
                    };
                    let f = usize::try_from(field).map_err(|_| "a negative struct field")?;
                    offset += types.get(ty).offsets[f] as i64;
                    ty = fields[f];
                    continue;
                }
                _ => return Err(format!("indexing into {}", types.render(ty))),
            }
        };
        match index {
            Index::Const(c) => offset = offset.wrapping_add(c.wrapping_mul(scale)),
            Index::Var(v) => vars.push((v, scale)),
        }
    }
    Ok((offset, vars))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_fields_and_arrays() {
        let mut t = Types::default();
        let f = t.intern(TypeKind::Float);
        let d = t.intern(TypeKind::Double);
        let i = t.int(32);
        // struct { float a; double b; int c; } = 24 bytes, b at 8.
        let s = t.intern(TypeKind::Struct {
            fields: vec![f, d, i],
            packed: false,
        });
        let (off, vars) = offsets(&t, s, &[Index::Var('i'), Index::Const(1)]).unwrap();
        assert_eq!((off, vars), (8, vec![('i', 24)]));
        let a = t.intern(TypeKind::Array(f, 33));
        // [32 x [33 x float]]: row stride 132, element 4.
        let m = t.intern(TypeKind::Array(a, 32));
        let (off, vars) =
            offsets(&t, m, &[Index::Const(0), Index::Var('y'), Index::Var('x')]).unwrap();
        assert_eq!((off, vars), (0, vec![('y', 132), ('x', 4)]));
    }
}
