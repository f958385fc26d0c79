//! Sites: every conditional branch and memory access a kernel executes,
//! with whether it can differ between the lanes of a warp.

use crate::ir::{FuncId, InstId, Module, SiteKind, SourcePos, Value};
use crate::memory::lower::{Lowering, PieceOf, Repeat};
use crate::memory::{AccessKind, Space, Spaces};
use crate::taint::{explain_at, KernelDeps};

#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub kind: SiteKind,
    pub func: FuncId,
    pub inst: InstId,
    pub pos: Option<SourcePos>,
    /// For memory sites: the address space and bytes per thread of one
    /// request (a piece of the instruction's access, `memory::lower`).
    pub space: Option<Space>,
    pub bytes: u64,
    /// Bytes from the address `value` to this request's.
    pub offset: i64,
    /// The alignment the instruction promises for this request's address
    /// (LLVM's `align`: a lesser address is undefined behaviour); 1 when
    /// none.
    pub align: u64,
    /// How many times one execution issues the request (a copy loop).
    pub repeat: Repeat,
    /// Where the request sits in an access the backend splits (a struct
    /// copy's pieces).
    pub piece: Option<PieceOf>,
    /// The space is global only by the assumption that pointers loaded
    /// from kernel arguments' memory or `__constant__` memory point to
    /// global memory (`Spaces::assumed_global`).
    pub assumed_space: bool,
    /// The branch condition (or the address) differs between lanes, as
    /// this instruction reads it.
    pub thread_dependent: bool,
    /// The dependence chain, source first, when dependent.
    pub why: Vec<String>,
    /// The value whose dependence decides the site.
    pub value: Value,
}

impl Site {
    /// Requests one execution of the site issues: 1, or a copy loop's
    /// length; `None` when only the run knows it.
    pub fn requests(&self) -> Option<u64> {
        match self.repeat {
            Repeat::Once => Some(1),
            Repeat::Times(n) => Some(n),
            Repeat::PerLane => None,
        }
    }
}

/// What a memory site's request is (see [`Site`]).
struct Access {
    space: Option<Space>,
    bytes: u64,
    offset: i64,
    align: u64,
    repeat: Repeat,
    piece: Option<PieceOf>,
}

impl Access {
    /// A branch site: no request.
    const BRANCH: Access = Access {
        space: None,
        bytes: 0,
        offset: 0,
        align: 1,
        repeat: Repeat::Once,
        piece: None,
    };
}

/// Collects the sites of every function in `reached`, in program order.
/// `explain` fills each dependent site's `why`.
pub fn collect(
    m: &Module,
    reached: &[FuncId],
    spaces: &Spaces,
    deps: &KernelDeps,
    explain: bool,
) -> Vec<Site> {
    let mut sites = Vec::new();
    let system = m.system_files();
    for &f in reached {
        let func = m.func(f);
        let lowering = Lowering::of(m, func);
        for b in func.block_ids() {
            for &i in &func.blocks[b.index()].insts {
                let inst = func.inst(i);
                // Most instructions are no site: find the position only for one.
                let mut pos = None;
                let mut push = |kind, value: Value, access: Access, assumed_space, inside: bool| {
                    let thread_dependent = inside || deps.is_dependent_at(f, value, i);
                    sites.push(Site {
                        kind,
                        func: f,
                        inst: i,
                        pos: pos
                            .get_or_insert_with(|| m.inst_pos_among(func, i, &system))
                            .clone(),
                        space: access.space,
                        bytes: access.bytes,
                        offset: access.offset,
                        align: access.align,
                        repeat: access.repeat,
                        piece: access.piece,
                        assumed_space,
                        thread_dependent,
                        why: if inside && explain {
                            vec!["an address computed inside inline asm".to_string()]
                        } else if thread_dependent && explain {
                            explain_at(deps, m, f, value, i)
                        } else {
                            Vec::new()
                        },
                        value,
                    });
                };
                if inst.is_conditional_branch() {
                    push(
                        SiteKind::Branch,
                        inst.operands[0],
                        Access::BRANCH,
                        false,
                        false,
                    );
                }
                // Each request the backend makes is a site; a piece of a
                // vector access it merges makes none (the merged access is
                // placed at its lowest piece).
                for l in lowering.accesses(i) {
                    let a = &l.access;
                    let kind = match a.kind {
                        AccessKind::Load => SiteKind::Load,
                        AccessKind::Store => SiteKind::Store,
                        AccessKind::Atomic => SiteKind::Atomic,
                    };
                    let space = spaces.access_origin(m, f, a).space;
                    let assumed = a.space.is_none()
                        && space == Space::Global
                        && spaces.assumed_global(m, f, a.address);
                    for p in &l.pieces {
                        let access = Access {
                            space: Some(space),
                            bytes: p.bytes,
                            offset: p.offset,
                            align: p.align,
                            repeat: p.repeat,
                            piece: p.of,
                        };
                        push(kind, a.address, access, assumed, a.dependent_inside);
                    }
                }
            }
        }
    }
    sites
}
