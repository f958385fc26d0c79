//! Pre-decoding: turns the functions a kernel reaches into [`Func`]s.
//!
//! Every operand becomes a register slot: instruction results and
//! parameters get their own, constants get slots filled once in the
//! function's template register file. Phis become copies on CFG edges, so a
//! branch performs its target's phis as one parallel copy. Anything we
//! cannot run decodes to [`Op::Unsupported`], which names the instruction if
//! it is ever executed and costs nothing otherwise.

mod asm;
mod call;
mod consts;
mod inst;
pub mod shape;

use crate::graph::FunctionGraphs;
use crate::ir::SiteKind;
use crate::ir::{BlockId, Callee, FuncId, Function, InstId, InstKind, Module, Opcode, Value};
use crate::memory::lower::{Lowering, Piece, Repeat};
use crate::memory::AccessKind;
use crate::sim::code::{Edge, Func, Op, Request, Requests, SiteInfo, Slot, EXIT};
use crate::sim::layout::Layout;
use consts::ConstEval;
use std::collections::HashMap;

/// The decoded functions of one kernel, kernel first.
pub struct Decoded {
    pub funcs: Vec<Func>,
    pub sites: Vec<SiteInfo>,
    pub requests: Vec<Requests>,
}

/// Decodes `kernel` and every function it calls.
pub fn decode(m: &Module, kernel: FuncId, layout: &Layout) -> Decoded {
    let mut d = Decoder {
        m,
        consts: ConstEval {
            m,
            global_addr: &layout.global_addr,
        },
        index: HashMap::new(),
        queue: Vec::new(),
        sites: Vec::new(),
        requests: Vec::new(),
        lowerings: HashMap::new(),
        taken: HashMap::new(),
    };
    d.func_index(kernel);
    let mut funcs = Vec::new();
    while funcs.len() < d.queue.len() {
        let f = d.queue[funcs.len()];
        funcs.push(FuncDecoder::new(&mut d, f).run());
    }
    Decoded {
        funcs,
        sites: d.sites,
        requests: d.requests,
    }
}

struct Decoder<'a> {
    m: &'a Module,
    consts: ConstEval<'a>,
    /// Decoded index of each function, in the order they were first called.
    index: HashMap<FuncId, u32>,
    queue: Vec<FuncId>,
    sites: Vec<SiteInfo>,
    requests: Vec<Requests>,
    /// Each function's accesses as the backend makes them, computed on its
    /// first memory op.
    lowerings: HashMap<FuncId, Lowering>,
    /// How many accesses of each instruction the ops took so far.
    taken: HashMap<(FuncId, InstId), Vec<bool>>,
}

impl Decoder<'_> {
    /// The decoded index of a definition, queueing it on first sight.
    fn func_index(&mut self, f: FuncId) -> u32 {
        if let Some(&i) = self.index.get(&f) {
            return i;
        }
        let i = self.queue.len() as u32;
        self.queue.push(f);
        self.index.insert(f, i);
        i
    }

    /// A branch site.
    fn site(&mut self, kind: SiteKind, func: FuncId, inst: InstId) -> u32 {
        self.sites.push(SiteInfo { kind, func, inst });
        (self.sites.len() - 1) as u32
    }

    /// The next access of `kind` of instruction `inst` (in `access_of`'s
    /// order): a site per request the backend makes of it; returns its
    /// index in `requests`.
    fn access(&mut self, kind: SiteKind, func: FuncId, inst: InstId) -> u32 {
        let m = self.m;
        let lowering = self
            .lowerings
            .entry(func)
            .or_insert_with(|| Lowering::of(m, m.func(func)));
        let all = lowering.accesses(inst);
        let taken = self
            .taken
            .entry((func, inst))
            .or_insert_with(|| vec![false; all.len()]);
        let same = |k: AccessKind| match k {
            AccessKind::Load => kind == SiteKind::Load,
            AccessKind::Store => kind == SiteKind::Store,
            AccessKind::Atomic => kind == SiteKind::Atomic,
        };
        let next = (0..all.len()).find(|&n| !taken[n] && same(all[n].access.kind));
        // An access the lowering does not list (an asm body read another
        // way) is one request of the op's own width.
        let pieces: Vec<Piece> = match next {
            Some(n) => {
                taken[n] = true;
                all[n].pieces.clone()
            }
            None => vec![Piece {
                offset: 0,
                bytes: 0,
                align: 1,
                repeat: Repeat::Once,
                of: None,
            }],
        };
        let mut requests = Requests {
            pieces: Vec::new(),
            inst: Some((func, inst)),
        };
        for p in pieces {
            let site = self.site(kind, func, inst);
            requests.pieces.push(Request {
                site,
                offset: i32::try_from(p.offset).unwrap_or(i32::MAX),
                bytes: u32::try_from(p.bytes).unwrap_or(u32::MAX),
                repeat: p.repeat,
                atomic: kind == SiteKind::Atomic,
            });
        }
        self.requests.push(requests);
        (self.requests.len() - 1) as u32
    }
}

struct FuncDecoder<'d, 'a> {
    d: &'d mut Decoder<'a>,
    fid: FuncId,
    func: &'a Function,
    inst_slot: Vec<Slot>,
    params: Vec<(Slot, u32)>,
    const_slot: HashMap<Value, Slot>,
    /// Slots of asm immediates, by value.
    imm_slot: HashMap<u64, Slot>,
    template: Vec<(Slot, u64)>,
    next: Slot,
    ret_slot: Slot,
    code: Vec<Op>,
    origin: Vec<InstId>,
    edges: Vec<Edge>,
    edge_index: HashMap<(BlockId, BlockId), u32>,
    ipdom: Vec<u32>,
}

impl<'d, 'a> FuncDecoder<'d, 'a> {
    fn new(d: &'d mut Decoder<'a>, fid: FuncId) -> Self {
        let m = d.m;
        let func = m.func(fid);
        let graphs = FunctionGraphs::new(func);
        let ipdom = func
            .block_ids()
            .map(|b| graphs.pdom.idom(b).map_or(EXIT, |p| p.0))
            .collect();
        let mut fd = FuncDecoder {
            d,
            fid,
            func,
            inst_slot: Vec::with_capacity(func.insts.len()),
            params: Vec::new(),
            const_slot: HashMap::new(),
            imm_slot: HashMap::new(),
            template: Vec::new(),
            next: 0,
            ret_slot: 0,
            code: Vec::new(),
            origin: Vec::new(),
            edges: Vec::new(),
            edge_index: HashMap::new(),
            ipdom,
        };
        fd.ret_slot = fd.alloc(shape::words(&m.types, func.ret));
        for p in &func.params {
            let n = shape::words(&m.types, p.ty);
            let s = fd.alloc(n);
            fd.params.push((s, n));
        }
        for inst in &func.insts {
            let s = fd.alloc(shape::words(&m.types, inst.ty));
            fd.inst_slot.push(s);
        }
        fd
    }

    fn alloc(&mut self, words: u32) -> Slot {
        let s = self.next;
        self.next += words;
        s
    }

    /// The slot holding an operand's value (constants get one on first use).
    fn slot(&mut self, v: Value) -> Result<Slot, String> {
        match v {
            Value::Inst(i) => Ok(self.inst_slot[i.index()]),
            Value::Arg(a) => Ok(self.params[a as usize].0),
            _ => {
                if let Some(&s) = self.const_slot.get(&v) {
                    return Ok(s);
                }
                let words = self.d.consts.value(v)?;
                let s = self.alloc(words.len().max(1) as u32);
                for (k, w) in words.into_iter().enumerate() {
                    self.template.push((s + k as u32, w));
                }
                self.const_slot.insert(v, s);
                Ok(s)
            }
        }
    }

    fn run(mut self) -> Func {
        let mut block_pc = Vec::with_capacity(self.func.blocks.len());
        let mut syncs = Vec::with_capacity(self.func.blocks.len());
        for b in self.func.block_ids() {
            block_pc.push(self.code.len() as u32);
            let first = self.code.len();
            for &i in &self.func.blocks[b.index()].insts {
                let inst = self.func.inst(i);
                if inst.op == Opcode::Phi {
                    continue;
                }
                if let Some(Callee::InlineAsm(a)) = inst.callee() {
                    for op in self.asm(i, a) {
                        self.code.push(op);
                        self.origin.push(i);
                    }
                    continue;
                }
                let op = self
                    .inst(i)
                    .unwrap_or_else(|why| Some(Op::Unsupported(Box::new(self.describe(i, &why)))));
                if let Some(op) = op {
                    self.code.push(op);
                    self.origin.push(i);
                }
            }
            syncs.push(
                self.code[first..]
                    .iter()
                    .any(|op| matches!(op, Op::Barrier { .. } | Op::Call(_) | Op::GridSync)),
            );
        }
        for e in &mut self.edges {
            e.pc = block_pc[e.target as usize];
        }
        let mut template = vec![0u64; self.next as usize * 32];
        for &(s, w) in &self.template {
            template[s as usize * 32..][..32].fill(w);
        }
        let barrier_free = barrier_free(self.func, &syncs);
        Func {
            id: self.fid,
            code: self.code,
            origin: self.origin,
            block_pc,
            barrier_free,
            edges: self.edges,
            params: self.params,
            ret_slot: self.ret_slot,
            slots: self.next,
            template,
        }
    }

    fn describe(&self, i: InstId, why: &str) -> String {
        let inst = self.func.inst(i);
        let what = match inst.callee() {
            Some(Callee::Direct(f)) => format!("call to {}", self.d.m.func(f).name),
            Some(Callee::InlineAsm(_)) => "inline asm".to_string(),
            Some(Callee::Indirect) => "indirect call".to_string(),
            None => format!("`{}`", inst.op.mnemonic()),
        };
        format!("unsupported {what}: {why}")
    }

    /// The edge from `from` to `to`, with the phi copies `to` needs.
    fn edge(&mut self, from: BlockId, to: BlockId) -> Result<u32, String> {
        if let Some(&e) = self.edge_index.get(&(from, to)) {
            return Ok(e);
        }
        let mut copies = Vec::new();
        let mut phis = 0;
        for &i in &self.func.blocks[to.index()].insts {
            let inst = self.func.inst(i);
            if inst.op != Opcode::Phi {
                break;
            }
            let InstKind::Phi { blocks } = &inst.kind else {
                continue;
            };
            let Some(k) = blocks.iter().position(|&b| b == from) else {
                continue;
            };
            let src = self.slot(inst.operands[k])?;
            let dst = self.inst_slot[i.index()];
            for w in 0..shape::words(&self.d.m.types, inst.ty) {
                copies.push((dst + w, src + w));
            }
            phis += 1;
        }
        let parallel = copies
            .iter()
            .any(|&(_, src)| copies.iter().any(|&(dst, _)| dst == src));
        let id = self.edges.len() as u32;
        self.edges.push(Edge {
            target: to.0,
            pc: 0,
            copies,
            parallel,
            phis,
        });
        self.edge_index.insert((from, to), id);
        Ok(id)
    }
}

/// Blocks from which no block that may synchronise (`syncs`) is reachable.
fn barrier_free(func: &Function, syncs: &[bool]) -> Vec<bool> {
    let mut reaches = syncs.to_vec();
    let mut changed = true;
    while changed {
        changed = false;
        for b in func.block_ids() {
            if !reaches[b.index()] && func.successors(b).iter().any(|s| reaches[s.index()]) {
                reaches[b.index()] = true;
                changed = true;
            }
        }
    }
    reaches.into_iter().map(|r| !r).collect()
}

/// The bytes a module variable starts with, from its initializer.
pub fn initial_bytes(
    m: &Module,
    layout: &Layout,
    init: Value,
    ty: crate::ir::TypeId,
) -> Result<Vec<u8>, String> {
    ConstEval {
        m,
        global_addr: &layout.global_addr,
    }
    .bytes(init, ty)
}
