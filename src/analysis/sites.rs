//! Sites: every conditional branch and memory access a kernel executes,
//! with whether it can differ between the lanes of a warp.

use crate::ir::{FuncId, InstId, InstKind, Module, SiteKind, SourcePos, Value};
use crate::memory::vector::{self, Merge};
use crate::memory::{access_of, AccessKind, Space, Spaces};
use crate::taint::{explain_at, KernelDeps};

#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub kind: SiteKind,
    pub func: FuncId,
    pub inst: InstId,
    pub pos: Option<SourcePos>,
    /// For memory sites: the address space and bytes per thread.
    pub space: Option<Space>,
    pub bytes: u64,
    /// The alignment the instruction promises for its address (LLVM's
    /// `align`: a lesser address is undefined behaviour); 1 when none.
    pub align: u64,
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
        let merges = vector::merges(m, func);
        for b in func.block_ids() {
            for &i in &func.blocks[b.index()].insts {
                let inst = func.inst(i);
                // Most instructions are no site: find the position only for one.
                let mut pos = None;
                let align = match inst.kind {
                    InstKind::Load { align, .. } | InstKind::Store { align, .. } => {
                        u64::from(align).max(1)
                    }
                    _ => 1,
                };
                let mut push = |kind, value: Value, space, bytes, assumed_space, inside: bool| {
                    let thread_dependent = inside || deps.is_dependent_at(f, value, i);
                    sites.push(Site {
                        kind,
                        func: f,
                        inst: i,
                        pos: pos
                            .get_or_insert_with(|| m.inst_pos_among(func, i, &system))
                            .clone(),
                        space,
                        bytes,
                        align,
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
                    push(SiteKind::Branch, inst.operands[0], None, 0, false, false);
                }
                // A piece of a vector access the backend merges is no site;
                // the merged access is placed at its lowest piece.
                let merged = match merges.get(&i) {
                    Some(Merge::Part { .. }) => continue,
                    Some(Merge::Head { bytes }) => Some(*bytes),
                    None => None,
                };
                for a in access_of(m, func, i) {
                    let kind = match a.kind {
                        AccessKind::Load => SiteKind::Load,
                        AccessKind::Store => SiteKind::Store,
                        AccessKind::Atomic => SiteKind::Atomic,
                    };
                    let space = spaces.access_origin(m, f, &a).space;
                    let assumed = a.space.is_none()
                        && space == Space::Global
                        && spaces.assumed_global(m, f, a.address);
                    let bytes = merged.unwrap_or(a.bytes);
                    let inside = a.dependent_inside;
                    push(kind, a.address, Some(space), bytes, assumed, inside);
                }
            }
        }
    }
    sites
}
