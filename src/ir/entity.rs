//! Dense integer handles, in the style of an entity-indexed IR: every table in
//! the module is a `Vec`, and these newtypes keep the indices from mixing.

/// Defines a `u32` newtype index with `new`/`index` helpers.
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
    };
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
