//! Dense integer handles, in the style of an entity-indexed IR: every table in
//! the module is a `Vec`, and these newtypes keep the indices from mixing.

/// Defines a `u32` newtype index with `new`/`index` helpers.
#[macro_export]
macro_rules! entity {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
        pub struct $name(pub u32);

        impl $name {
            pub fn new(index: usize) -> Self {
                Self(u32::try_from(index).expect("entity index overflows u32"))
            }
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl $crate::ir::entity::Entity for $name {
            fn new(index: usize) -> Self {
                Self::new(index)
            }
            fn index(self) -> usize {
                self.index()
            }
        }
    };
}
pub use crate::entity;

/// What [`EntityVec`] needs of its keys.
pub trait Entity: Copy {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

/// A table keyed by an entity: `push` hands out the keys, so no table is
/// indexed by a bare `usize`.
#[derive(Clone, Debug, PartialEq)]
pub struct EntityVec<K, V> {
    items: Vec<V>,
    _key: std::marker::PhantomData<K>,
}

impl<K: Entity, V> Default for EntityVec<K, V> {
    fn default() -> Self {
        EntityVec {
            items: Vec::new(),
            _key: std::marker::PhantomData,
        }
    }
}

impl<K: Entity, V> EntityVec<K, V> {
    pub fn push(&mut self, v: V) -> K {
        self.items.push(v);
        K::new(self.items.len() - 1)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = K> {
        (0..self.items.len()).map(K::new)
    }
}

impl<K: Entity, V> std::ops::Index<K> for EntityVec<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: Entity, V> std::ops::IndexMut<K> for EntityVec<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

entity!(
    /// A function of the module (definitions and declarations alike).
    FuncId
);
entity!(
    /// A basic block, local to its function.
    BlockId
);
entity!(
    /// An instruction, local to its function.
    InstId
);
entity!(
    /// An interned type of the module.
    TypeId
);
entity!(
    /// A global variable of the module.
    GlobalId
);
entity!(
    /// An interned constant of the module.
    ConstId
);
entity!(
    /// A debug location of the module.
    LocId
);
entity!(
    /// A source file named by debug info.
    FileId
);
entity!(
    /// An interned inline-asm callee (text, constraints, flags) of the module.
    AsmId
);
