//! Memory forms: loads, stores, atomics and reductions, fences and
//! asynchronous copies.

use super::super::inst::*;
use super::{Args, Mods, SPACES};
use crate::ptx::PtxError;

const SCOPES: &[(&str, Scope)] = &[
    ("cta", Scope::Cta),
    ("cluster", Scope::Cluster),
    ("gpu", Scope::Gpu),
    ("sys", Scope::Sys),
];

const SEMS: &[(&str, Sem)] = &[
    ("weak", Sem::Weak),
    ("relaxed", Sem::Relaxed),
    ("acquire", Sem::Acquire),
    ("release", Sem::Release),
    ("acq_rel", Sem::AcqRel),
    ("volatile", Sem::Volatile),
];

const VALUE_TYPES: &[Ty] = &[
    Ty::B8,
    Ty::B16,
    Ty::B32,
    Ty::B64,
    Ty::B128,
    Ty::U8,
    Ty::U16,
    Ty::U32,
    Ty::U64,
    Ty::S8,
    Ty::S16,
    Ty::S32,
    Ty::S64,
    Ty::F16,
    Ty::F16x2,
    Ty::Bf16,
    Ty::Bf16x2,
    Ty::F32,
    Ty::F64,
];

/// Space, ordering, cache operator and hints of `ld`/`st`. `.relaxed`
/// and `.acquire`/`.release` need a scope; the others take none.
fn qualifiers(m: &mut Mods, cache_ops: &[&str]) -> Result<MemQual, PtxError> {
    let space = m.pick(SPACES).unwrap_or(Space::Generic);
    let sem = m.pick(SEMS).unwrap_or(Sem::Weak);
    let scope = m.pick(SCOPES);
    let scoped = matches!(sem, Sem::Relaxed | Sem::Acquire | Sem::Release);
    if scoped != scope.is_some() {
        return Err(m.unsupported());
    }
    let cache = cache_ops.iter().find(|c| m.take(c)).map(|c| c.to_string());
    let nc = m.take("nc");
    let hints: Vec<String> = m
        .take_where(|h| h.starts_with("L1::") || h.starts_with("L2::"))
        .into_iter()
        .map(String::from)
        .collect();
    // A cache-policy operand would follow the others; we do not read it.
    if hints.iter().any(|h| h == "L2::cache_hint") || (nc && space != Space::Global) {
        return Err(m.unsupported());
    }
    Ok(MemQual {
        space,
        sem,
        scope,
        cache,
        nc,
        hints,
    })
}

pub fn ld(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let mem = qualifiers(m, &["ca", "cg", "cs", "lu", "cv"])?;
    let vec = m.vec();
    let ty = m.ty(VALUE_TYPES)?;
    a.count(2)?;
    Ok(Op::Ld {
        mem,
        vec,
        ty,
        dsts: a.vector(0, vec)?,
        addr: a.addr(1)?,
    })
}

pub fn st(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let mem = qualifiers(m, &["wb", "cg", "cs", "wt"])?;
    let vec = m.vec();
    let ty = m.ty(VALUE_TYPES)?;
    a.count(2)?;
    Ok(Op::St {
        mem,
        vec,
        ty,
        addr: a.addr(0)?,
        srcs: a.vector(1, vec)?,
    })
}

/// `atom` (returns the old value) and `red` (does not). The qualifiers
/// come in any order (`atom.add.release.gpu.u32`, `atom.cta.add.v2.f32`).
pub fn atom(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let returns = m.base == "atom";
    let space = m.pick(SPACES).unwrap_or(Space::Generic);
    let sem = m.pick(SEMS).unwrap_or(Sem::Relaxed);
    let scope = m.pick(SCOPES).unwrap_or(Scope::Gpu);
    let op = m.require(&[
        ("add", AtomOp::Add),
        ("min", AtomOp::Min),
        ("max", AtomOp::Max),
        ("and", AtomOp::And),
        ("or", AtomOp::Or),
        ("xor", AtomOp::Xor),
        ("exch", AtomOp::Exch),
        ("cas", AtomOp::Cas),
        ("inc", AtomOp::Inc),
        ("dec", AtomOp::Dec),
    ])?;
    let vec = m.vec();
    let ty = m.ty(VALUE_TYPES)?;
    let values = if op == AtomOp::Cas { 2 } else { 1 };
    if matches!(sem, Sem::Weak | Sem::Volatile) || (op == AtomOp::Cas && vec > 1) {
        return Err(m.unsupported());
    }
    let first = usize::from(returns);
    a.count(first + 1 + values)?;
    let dsts = if returns {
        a.vector(0, vec)?
    } else {
        Vec::new()
    };
    let addr = a.addr(first)?;
    let srcs = if vec > 1 {
        a.vector(first + 1, vec)?
    } else {
        (0..values)
            .map(|k| a.one(first + 1 + k))
            .collect::<Result<_, _>>()?
    };
    Ok(Op::Atom {
        op,
        space,
        sem,
        scope,
        ty,
        vec,
        dsts,
        addr,
        srcs,
    })
}

/// `fence.sc|acq_rel.SCOPE` and `membar.cta|gl|sys`.
pub fn fence(m: &mut Mods) -> Result<Op, PtxError> {
    if m.base == "membar" {
        let scope = m.require(&[("cta", Scope::Cta), ("gl", Scope::Gpu), ("sys", Scope::Sys)])?;
        return Ok(Op::Fence {
            kind: FenceKind::Membar,
            scope,
        });
    }
    let kind = m
        .pick(&[("sc", FenceKind::Sc), ("acq_rel", FenceKind::AcqRel)])
        .unwrap_or(FenceKind::AcqRel);
    let scope = m.require(SCOPES)?;
    Ok(Op::Fence { kind, scope })
}

/// `cp.async.ca|cg.shared.global`, `cp.async.commit_group`,
/// `cp.async.wait_group N`, `cp.async.wait_all`.
pub fn cp_async(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    if !m.take("async") {
        return Err(m.unsupported());
    }
    if m.take("commit_group") {
        a.count(0)?;
        return Ok(Op::CpAsyncCommit);
    }
    if m.take("wait_group") {
        a.count(1)?;
        return Ok(Op::CpAsyncWait {
            groups: Some(a.one(0)?),
        });
    }
    if m.take("wait_all") {
        a.count(0)?;
        return Ok(Op::CpAsyncWait { groups: None });
    }
    let cached = m.pick(&[("ca", true), ("cg", false)]);
    let to_shared = m.take("shared") || m.take("shared::cta");
    let hints = m.take_where(|h| h.starts_with("L2::"));
    if cached.is_none() || !to_shared || !m.take("global") || hints.contains(&"L2::cache_hint") {
        return Err(m.unsupported());
    }
    a.count_in(3, 4)?;
    Ok(Op::CpAsync {
        dst: a.addr(0)?,
        src: a.addr(1)?,
        size: a.one(2)?,
        src_size: if a.len() == 4 { Some(a.one(3)?) } else { None },
    })
}
