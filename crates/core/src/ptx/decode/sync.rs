//! Forms that involve other threads: warp shuffles, votes, matches,
//! reductions and elections, block barriers, and the thread-local
//! `nanosleep`.

use super::super::inst::*;
use super::{Args, Mods};
use crate::ptx::PtxError;

/// Every warp form here is the `.sync` one, with a member mask.
fn synced(m: &mut Mods) -> Result<(), PtxError> {
    if m.take("sync") {
        Ok(())
    } else {
        Err(m.unsupported())
    }
}

pub fn shfl(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    synced(m)?;
    let mode = m.require(&[
        ("up", ShflMode::Up),
        ("down", ShflMode::Down),
        ("bfly", ShflMode::Bfly),
        ("idx", ShflMode::Idx),
    ])?;
    m.ty(&[Ty::B32])?;
    a.count(5)?;
    let (dst, pred_out) = a.with_pred(0)?;
    Ok(Op::Shfl {
        mode,
        dst,
        pred_out,
        a: a.one(1)?,
        b: a.one(2)?,
        c: a.one(3)?,
        mask: a.one(4)?,
    })
}

pub fn vote(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    synced(m)?;
    let mode = m.require(&[
        ("all", VoteMode::All),
        ("any", VoteMode::Any),
        ("uni", VoteMode::Uni),
        ("ballot", VoteMode::Ballot),
    ])?;
    let ty = if mode == VoteMode::Ballot {
        Ty::B32
    } else {
        Ty::Pred
    };
    m.ty(&[ty])?;
    a.count(3)?;
    Ok(Op::Vote {
        mode,
        dst: a.one(0)?,
        pred: a.pred(1)?,
        mask: a.one(2)?,
    })
}

/// `match.any.sync.b32 d, a, mask` and `match.all.sync.b32 d|p, a, mask`.
pub fn match_sync(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    let all = m.require(&[("any", false), ("all", true)])?;
    synced(m)?;
    let ty = m.ty(&[Ty::B32, Ty::B64])?;
    a.count(3)?;
    let (dst, pred_out) = a.with_pred(0)?;
    if pred_out.is_some() && !all {
        return Err(a.unsupported());
    }
    Ok(Op::Match {
        all,
        ty,
        dst,
        pred_out,
        a: a.one(1)?,
        mask: a.one(2)?,
    })
}

pub fn redux(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    synced(m)?;
    let op = m.require(&[
        ("add", ReduxOp::Add),
        ("min", ReduxOp::Min),
        ("max", ReduxOp::Max),
        ("and", ReduxOp::And),
        ("or", ReduxOp::Or),
        ("xor", ReduxOp::Xor),
    ])?;
    let arithmetic = matches!(op, ReduxOp::Add | ReduxOp::Min | ReduxOp::Max);
    let ty = m.ty(if arithmetic {
        &[Ty::U32, Ty::S32]
    } else {
        &[Ty::B32]
    })?;
    a.count(3)?;
    Ok(Op::Redux {
        op,
        ty,
        dst: a.one(0)?,
        a: a.one(1)?,
        mask: a.one(2)?,
    })
}

pub fn elect(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    synced(m)?;
    a.count(2)?;
    let (dst, pred_out) = a.with_pred(0)?;
    Ok(Op::Elect {
        dst,
        pred_out,
        mask: a.one(1)?,
    })
}

/// `bar{.cta}.sync|arrive|red` (always `.aligned`) and
/// `barrier{.cta}.sync|arrive|red{.aligned}`.
pub fn bar(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    m.take("cta");
    let aligned = m.take("aligned") || m.base == "bar";
    let kind = if m.take("sync") {
        BarKind::Sync
    } else if m.take("arrive") {
        BarKind::Arrive
    } else if m.take("red") {
        let op = m.require(&[
            ("popc", BarReduce::Popc),
            ("and", BarReduce::And),
            ("or", BarReduce::Or),
        ])?;
        m.ty(&[if op == BarReduce::Popc {
            Ty::U32
        } else {
            Ty::Pred
        }])?;
        BarKind::Red(op)
    } else {
        return Err(m.unsupported());
    };
    let (result, pred, ids) = match kind {
        BarKind::Red(_) => {
            a.count_in(3, 4)?;
            let last = a.len() - 1;
            (Some(a.one(0)?), Some(a.pred(last)?), 1..last)
        }
        BarKind::Arrive => {
            a.count(2)?;
            (None, None, 0..2)
        }
        BarKind::Sync => {
            a.count_in(1, 2)?;
            (None, None, 0..a.len())
        }
    };
    let id = a.one(ids.start)?;
    let count = if ids.len() == 2 {
        Some(a.one(ids.start + 1)?)
    } else {
        None
    };
    Ok(Op::Bar {
        kind,
        aligned,
        id,
        count,
        result,
        pred,
    })
}

pub fn nanosleep(m: &mut Mods, a: &Args) -> Result<Op, PtxError> {
    m.ty(&[Ty::U32])?;
    a.count(1)?;
    Ok(Op::Nanosleep { t: a.one(0)? })
}
