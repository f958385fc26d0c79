//! Opcodes and predicates, mirroring LLVM's so the loader maps one to one.

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Opcode {
    // Terminators.
    Ret,
    Br,
    Switch,
    Unreachable,
    /// `indirectbr`, `invoke`, `callbr`, `resume` and the like: kept so the
    /// CFG is right, never interpreted.
    OtherTerminator,
    // Arithmetic.
    FNeg,
    Add,
    FAdd,
    Sub,
    FSub,
    Mul,
    FMul,
    UDiv,
    SDiv,
    FDiv,
    URem,
    SRem,
    FRem,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    // Memory.
    Alloca,
    Load,
    Store,
    GetElementPtr,
    Fence,
    CmpXchg,
    AtomicRmw,
    // Casts.
    Trunc,
    ZExt,
    SExt,
    FPToUI,
    FPToSI,
    UIToFP,
    SIToFP,
    FPTrunc,
    FPExt,
    PtrToInt,
    IntToPtr,
    BitCast,
    AddrSpaceCast,
    // Other.
    ICmp,
    FCmp,
    Phi,
    Call,
    Select,
    ExtractElement,
    InsertElement,
    ShuffleVector,
    ExtractValue,
    InsertValue,
    Freeze,
    VAArg,
    LandingPad,
    /// Anything else LLVM may grow; named so errors can say what it was.
    Unknown,
}

impl Opcode {
    pub fn is_terminator(self) -> bool {
        matches!(
            self,
            Opcode::Ret
                | Opcode::Br
                | Opcode::Switch
                | Opcode::Unreachable
                | Opcode::OtherTerminator
        )
    }

    pub fn is_cast(self) -> bool {
        matches!(
            self,
            Opcode::Trunc
                | Opcode::ZExt
                | Opcode::SExt
                | Opcode::FPToUI
                | Opcode::FPToSI
                | Opcode::UIToFP
                | Opcode::SIToFP
                | Opcode::FPTrunc
                | Opcode::FPExt
                | Opcode::PtrToInt
                | Opcode::IntToPtr
                | Opcode::BitCast
                | Opcode::AddrSpaceCast
        )
    }

    pub fn is_binary(self) -> bool {
        matches!(
            self,
            Opcode::Add
                | Opcode::FAdd
                | Opcode::Sub
                | Opcode::FSub
                | Opcode::Mul
                | Opcode::FMul
                | Opcode::UDiv
                | Opcode::SDiv
                | Opcode::FDiv
                | Opcode::URem
                | Opcode::SRem
                | Opcode::FRem
                | Opcode::Shl
                | Opcode::LShr
                | Opcode::AShr
                | Opcode::And
                | Opcode::Or
                | Opcode::Xor
        )
    }

    /// The LLVM assembly mnemonic.
    pub fn mnemonic(self) -> &'static str {
        use Opcode::*;
        match self {
            Ret => "ret",
            Br => "br",
            Switch => "switch",
            Unreachable => "unreachable",
            OtherTerminator => "terminator",
            FNeg => "fneg",
            Add => "add",
            FAdd => "fadd",
            Sub => "sub",
            FSub => "fsub",
            Mul => "mul",
            FMul => "fmul",
            UDiv => "udiv",
            SDiv => "sdiv",
            FDiv => "fdiv",
            URem => "urem",
            SRem => "srem",
            FRem => "frem",
            Shl => "shl",
            LShr => "lshr",
            AShr => "ashr",
            And => "and",
            Or => "or",
            Xor => "xor",
            Alloca => "alloca",
            Load => "load",
            Store => "store",
            GetElementPtr => "getelementptr",
            Fence => "fence",
            CmpXchg => "cmpxchg",
            AtomicRmw => "atomicrmw",
            Trunc => "trunc",
            ZExt => "zext",
            SExt => "sext",
            FPToUI => "fptoui",
            FPToSI => "fptosi",
            UIToFP => "uitofp",
            SIToFP => "sitofp",
            FPTrunc => "fptrunc",
            FPExt => "fpext",
            PtrToInt => "ptrtoint",
            IntToPtr => "inttoptr",
            BitCast => "bitcast",
            AddrSpaceCast => "addrspacecast",
            ICmp => "icmp",
            FCmp => "fcmp",
            Phi => "phi",
            Call => "call",
            Select => "select",
            ExtractElement => "extractelement",
            InsertElement => "insertelement",
            ShuffleVector => "shufflevector",
            ExtractValue => "extractvalue",
            InsertValue => "insertvalue",
            Freeze => "freeze",
            VAArg => "va_arg",
            LandingPad => "landingpad",
            Unknown => "unknown",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum IntPred {
    Eq,
    Ne,
    Ugt,
    Uge,
    Ult,
    Ule,
    Sgt,
    Sge,
    Slt,
    Sle,
}

impl IntPred {
    /// The predicate that holds exactly when this one does not.
    pub fn negated(self) -> IntPred {
        use IntPred::*;
        match self {
            Eq => Ne,
            Ne => Eq,
            Ult => Uge,
            Uge => Ult,
            Ule => Ugt,
            Ugt => Ule,
            Slt => Sge,
            Sge => Slt,
            Sle => Sgt,
            Sgt => Sle,
        }
    }

    /// The same comparison with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> IntPred {
        use IntPred::*;
        match self {
            Ult => Ugt,
            Ugt => Ult,
            Ule => Uge,
            Uge => Ule,
            Slt => Sgt,
            Sgt => Slt,
            Sle => Sge,
            Sge => Sle,
            p => p,
        }
    }

    /// An ordering that reads its operands as signed.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            IntPred::Slt | IntPred::Sle | IntPred::Sgt | IntPred::Sge
        )
    }

    /// An ordering that reads its operands as unsigned.
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            IntPred::Ult | IntPred::Ule | IntPred::Ugt | IntPred::Uge
        )
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum FloatPred {
    False,
    Oeq,
    Ogt,
    Oge,
    Olt,
    Ole,
    One,
    Ord,
    Uno,
    Ueq,
    Ugt,
    Uge,
    Ult,
    Ule,
    Une,
    True,
}

/// `atomicrmw` operations.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum RmwOp {
    Xchg,
    Add,
    Sub,
    And,
    Nand,
    Or,
    Xor,
    Max,
    Min,
    UMax,
    UMin,
    FAdd,
    FSub,
    FMax,
    FMin,
    /// `atomicInc`: `old >= v ? 0 : old + 1`.
    UIncWrap,
    /// `atomicDec`: `old == 0 || old > v ? v : old - 1`.
    UDecWrap,
    /// `old >= v ? old - v : old` (unsigned; LLVM 20 and later).
    USubCond,
    /// `old >= v ? old - v : 0` (unsigned; LLVM 20 and later).
    USubSat,
    /// IEEE 754-2019 `maximum`: NaN wins, +0 > -0 (LLVM 20 and later).
    FMaximum,
    /// IEEE 754-2019 `minimum`: NaN wins, -0 < +0 (LLVM 20 and later).
    FMinimum,
}
