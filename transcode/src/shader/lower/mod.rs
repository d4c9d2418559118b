//! Lowering of the flattened entry point to VX code.
//!
//! Values are SSA and get fresh registers (no allocator: the ISA is virtual); ids whose value
//! is a sub-range of another's registers (`OpCompositeExtract`, `OpCopyObject`, same-size
//! `OpBitcast`) simply alias it. Constants, descriptor addresses and built-ins are computed
//! once in a straight-line *prologue* block laid out before the entry block, so they
//! dominate every use. Pointers are compile-time [`Ptr`]s (an address register plus a
//! constant offset, an LMEM/private offset, a variable's registers, a query slot, a
//! descriptor address), never runtime values.
//!
//! Control flow: every SPIR-V block becomes a labelled block. `OpPhi` results live in
//! registers allocated up front; each CFG edge into a block with phis carries a parallel
//! copy, placed in a block of its own when the edge is conditional (so it runs only on the
//! lanes taking that edge, and critical edges need no further care). A divergent `BRA`
//! reconverges at the immediate post-dominator of its block ([`super::cfg`]).
//!
//! Instruction families live in the submodules: [`alu`] (arithmetic, conversions,
//! composites, matrices), [`glsl`] (`GLSL.std.450`), [`mem`] (variables, pointers, memory,
//! atomics, barriers, descriptors), [`image`] (storage images), [`tex`] (sampling), [`quad`]
//! (derivatives, demotion) and [`rayquery`].
//!
//! What depends on the compile target is behind two interfaces, picked from
//! `CompileOptions::target` by [`Lowering::select`]: [`stage::StageIo`] (execution modes,
//! built-ins and the other interface variables, prologue and epilogue) and the ray-query
//! lowering. The instruction families never ask which stage or lowering they serve.

mod alu;
mod dot;
mod glsl;
mod image;
mod mem;
mod num;
mod quad;
mod rayquery;
pub(crate) mod raytracing;
mod stage;
mod subgroup;
mod tex;
mod zero_init;

pub(crate) use mem::Ptr;

use super::cfg::Cfg;
use super::emit::{Assembled, Emitter, Label, RegName, I};
use super::error::{invalid, limit, unsupported, Result};
use super::inline::Flat;
use super::module::{InstExt, Module};
use super::types::{Id, Scalar, Type};
use super::{CompileOptions, Target};
use rayquery::RayQueryOps;
use rspirv::dr::{Instruction, Operand};
use spirv::Op;
use stage::StageIo;
use std::collections::{HashMap, HashSet};
use vortex_model::abi::isa::{IntCond, Op as Vx, TrapCode};

/// A lowered SSA value.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// Registers `r .. r + regs(ty)` hold the value's register image.
    Regs {
        r: u16,
        ty: Id,
    },
    Ptr(Ptr),
}

/// The phis of one block.
#[derive(Clone, Debug)]
struct Phi {
    dst: u16,
    regs: u32,
    /// (value, predecessor label)
    incoming: Vec<(Id, Id)>,
}

/// The target's implementations: how the stage's invocations begin, end and exchange data.
#[derive(Clone, Copy)]
pub(crate) struct Lowering {
    pub stage: &'static dyn StageIo,
    pub ray_query: &'static dyn RayQueryOps,
}

impl Lowering {
    /// The implementations of `target`; a stage or lowering without one is `Unsupported`.
    pub fn select(target: &Target) -> Result<Lowering> {
        Ok(Lowering {
            stage: stage::select(target.stage)?,
            ray_query: rayquery::select(target.ray_query, target.raylog)?,
        })
    }
}

/// Whether a ray-tracing pipeline can run a `stage` shader in place of a call (refused by
/// name otherwise, before its module is read).
pub(crate) fn stage_of_callee(stage: crate::shader::Stage) -> Result<()> {
    stage::callee(stage).map(|_| ())
}

/// What lowering produced.
pub(crate) struct Lowered {
    pub asm: Assembled,
    pub num_regs: u32,
    pub num_queries: u32,
    pub private_bytes: u32,
    pub lmem_bytes: u32,
    pub reg_names: Vec<RegName>,
    pub graphics: Option<super::GraphicsInfo>,
}

pub(crate) struct Lowerer<'m> {
    pub m: &'m Module,
    pub opts: &'m CompileOptions,
    pub e: Emitter,
    stage: &'static dyn StageIo,
    ray_query: &'static dyn RayQueryOps,
    /// Invocations per workgroup (the stage's execution modes).
    pub local_size: [u32; 3],
    vals: HashMap<Id, Val>,
    prologue: Label,
    labels: HashMap<Id, Label>,
    /// Block label -> label of its immediate post-dominator.
    reconv: HashMap<Id, Id>,
    phis: HashMap<Id, Vec<Phi>>,
    /// The SPIR-V block being lowered.
    block: Id,
    /// Prologue caches.
    imm32: HashMap<u32, u16>,
    imm64: HashMap<u64, u16>,
    const_regs: HashMap<Id, u16>,
    pub private_bytes: u32,
    pub lmem_bytes: u32,
    /// Variables accessed with a non-constant index (they live in memory, not registers).
    dynamic_vars: HashSet<Id>,
    /// Ray-query variables -> first slot.
    query_base: HashMap<Id, u32>,
    /// Ray-query variables stepped only through confirm-all loops (`rayquery::confirm_all`).
    confirm_all: HashSet<Id>,
    num_queries: u32,
    /// Memoized prologue values: kargs address, LMEM base, descriptor-set addresses.
    cache: mem::Cache,
    /// The declared pointer type of every access-chain result (physical pointers may be used
    /// as values).
    ptr_types: HashMap<Id, Id>,
    /// Memoized prologue values of the subgroup lowering: lane id, warp mask.
    cache_lane: Option<u16>,
    cache_warp_mask: Option<u16>,
    /// What the stage records while lowering (its outputs, prologue values).
    pub(crate) io: stage::IoState,
    /// A ray-tracing pipeline's other shaders (`raytracing`), when lowering one.
    rt: Option<&'m raytracing::Link>,
    /// A shader called from another (`raytracing`): where its returns go instead of `EXIT`,
    /// and what the call hands it.
    exit_to: Option<Label>,
    call: Option<raytracing::Call>,
}

pub(crate) fn lower(
    m: &Module,
    flat: &Flat,
    cfg: &Cfg,
    opts: &CompileOptions,
    lowering: Lowering,
    local_size: [u32; 3],
) -> Result<Lowered> {
    lower_linked(m, flat, cfg, opts, lowering, local_size, None)
}

/// [`lower`], with a ray-tracing pipeline's other shaders (`raytracing`) when `m` is its ray
/// generation shader.
pub(crate) fn lower_linked<'m>(
    m: &'m Module,
    flat: &Flat,
    cfg: &Cfg,
    opts: &'m CompileOptions,
    lowering: Lowering,
    local_size: [u32; 3],
    rt: Option<&'m raytracing::Link>,
) -> Result<Lowered> {
    let mut l = Lowerer::new(m, opts, Emitter::new(), lowering, local_size, rt);
    l.analyze(flat)?;
    l.run(flat, cfg)?;
    let reg_names = std::mem::take(&mut l.e.reg_names);
    let num_queries = l.ray_query.rtu_slots(l.num_queries);
    let (private_bytes, lmem_bytes) = (l.private_bytes, l.lmem_bytes);
    let asm = l.e.assemble(opts.optimize, private_bytes)?;
    let num_regs = asm.num_regs;
    let graphics = l.stage.graphics(m, &l.io, &asm.code)?;
    Ok(Lowered { asm, num_regs, num_queries, private_bytes, lmem_bytes, reg_names, graphics })
}

impl<'m> Lowerer<'m> {
    fn new(
        m: &'m Module,
        opts: &'m CompileOptions,
        mut e: Emitter,
        lowering: Lowering,
        local_size: [u32; 3],
        rt: Option<&'m raytracing::Link>,
    ) -> Lowerer<'m> {
        let prologue = e.label("prologue");
        Lowerer {
            m,
            opts,
            e,
            stage: lowering.stage,
            ray_query: lowering.ray_query,
            local_size,
            vals: HashMap::new(),
            prologue,
            labels: HashMap::new(),
            reconv: HashMap::new(),
            phis: HashMap::new(),
            block: 0,
            imm32: HashMap::new(),
            imm64: HashMap::new(),
            const_regs: HashMap::new(),
            private_bytes: 0,
            lmem_bytes: 0,
            dynamic_vars: HashSet::new(),
            query_base: HashMap::new(),
            confirm_all: HashSet::new(),
            num_queries: 0,
            cache: mem::Cache::default(),
            cache_lane: None,
            cache_warp_mask: None,
            ptr_types: HashMap::new(),
            io: stage::IoState::default(),
            rt,
            exit_to: None,
            call: None,
        }
    }

    /// Pre-pass: which variables are dynamically indexed, and the ray-query slot map. The
    /// ray-query lowering's per-slot state takes the first `state_bytes()` per slot of
    /// private memory.
    fn analyze(&mut self, flat: &Flat) -> Result<()> {
        let mut root: HashMap<Id, Id> = HashMap::new();
        let mut query_vars: Vec<(Id, Id)> = Vec::new();
        let mut globals: Vec<(&Id, &super::module::GlobalVar)> = self.m.globals.iter().collect();
        globals.sort_by_key(|(id, _)| **id);
        for (id, g) in globals {
            if self.m.types.queries(g.ty)? > 0 {
                query_vars.push((*id, g.ty));
            }
        }
        for b in &flat.blocks {
            for inst in &b.insts {
                match inst.class.opcode {
                    Op::Variable => {
                        let id = inst.rid()?;
                        root.insert(id, id);
                        let (_, ty) = self.m.types.pointee(inst.rty()?)?;
                        if self.m.types.queries(ty)? > 0 {
                            query_vars.push((id, ty));
                        }
                    }
                    Op::AccessChain | Op::InBoundsAccessChain => {
                        let base = inst.id(0)?;
                        let r = *root.get(&base).unwrap_or(&base);
                        for i in 1..inst.operands.len() {
                            if !self.m.consts.contains_key(&inst.id(i)?) {
                                self.dynamic_vars.insert(r);
                            }
                        }
                        root.insert(inst.rid()?, r);
                    }
                    Op::CopyObject => {
                        let base = inst.id(0)?;
                        root.insert(inst.rid()?, *root.get(&base).unwrap_or(&base));
                    }
                    _ => {}
                }
            }
        }
        // Slots continue from where the calling shader's end (`raytracing`: one kernel holds
        // a pipeline's shaders), inside the state region the pipeline reserved.
        for (id, ty) in query_vars {
            let n = self.m.types.queries(ty)?;
            self.query_base.insert(id, self.num_queries);
            self.num_queries = self.num_queries.saturating_add(n);
        }
        let max = self.ray_query.max_queries();
        if self.num_queries > max {
            return Err(limit!("the shader holds {} ray queries (the device supports {max})", self.num_queries));
        }
        self.confirm_all = rayquery::confirm_all::queries(self.m, flat);
        let reserved = self.rt.map_or(0, |rt| rt.slots).max(self.num_queries);
        self.private_bytes = self.private_bytes.max(reserved * self.ray_query.state_bytes());
        Ok(())
    }

    fn run(&mut self, flat: &Flat, cfg: &Cfg) -> Result<()> {
        for b in &flat.blocks {
            let name = if b.label == flat.exit { "exit".to_string() } else { self.m.label(b.label) };
            let l = self.e.label(name);
            self.labels.insert(b.label, l);
        }
        for (i, b) in flat.blocks.iter().enumerate() {
            let p = cfg.ipdom.get(i).and_then(|&p| flat.blocks.get(p)).map(|pb| pb.label);
            self.reconv.insert(b.label, p.unwrap_or(flat.exit));
        }
        // Phi registers exist before any edge copies into them are emitted.
        for b in &flat.blocks {
            for inst in b.insts.iter().filter(|i| i.class.opcode == Op::Phi) {
                let (rid, ty) = (inst.rid()?, inst.rty()?);
                let t = self.m.types.get(ty)?;
                if matches!(t, Type::Pointer { .. }) && !super::types::is_physical(t) {
                    return Err(unsupported!("OpPhi %{rid} of pointer type (variable pointers)"));
                }
                let regs = self.m.types.regs(ty)?;
                let dst = self.e.alloc(regs)?;
                let mut incoming = Vec::new();
                for pair in inst.operands.chunks(2) {
                    match pair {
                        [Operand::IdRef(v), Operand::IdRef(p)] => incoming.push((*v, *p)),
                        _ => return Err(invalid!("OpPhi %{rid} with malformed operands")),
                    }
                }
                self.define(rid, dst, ty);
                self.phis.entry(b.label).or_default().push(Phi { dst, regs, incoming });
            }
        }
        self.e.place(self.prologue)?;
        let stage = self.stage;
        stage.prologue(self)?;
        for b in &flat.blocks {
            self.e.place(self.labels[&b.label])?;
            self.block = b.label;
            for inst in &b.insts {
                self.inst(inst)?;
            }
        }
        let first = flat.blocks.first().ok_or_else(|| invalid!("entry point without blocks"))?.label;
        let first = self.labels[&first];
        let prev = self.e.switch_to(self.prologue);
        stage.enter(self, first)?;
        self.e.switch_to(prev);
        Ok(())
    }

    fn inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        match inst.class.opcode {
            Phi | LoopMerge | SelectionMerge | Line | NoLine | Nop | ModuleProcessed => Ok(()),
            Branch | BranchConditional | Switch | Return | Unreachable | Kill | TerminateInvocation => {
                self.terminator(inst)
            }
            Undef => {
                let ty = inst.rty()?;
                let r = self.fresh(ty)?;
                self.define(inst.rid()?, r, ty);
                Ok(())
            }
            CopyObject | CopyLogical => {
                let v = self.val(inst.id(0)?)?;
                let v = match (v, inst.class.opcode) {
                    (Val::Regs { r, ty }, CopyLogical) => {
                        let rty = inst.rty()?;
                        if self.m.types.regs(rty)? != self.m.types.regs(ty)? {
                            return Err(invalid!("{} between types of different shapes", inst.name()));
                        }
                        Val::Regs { r, ty: rty }
                    }
                    (v, _) => v,
                };
                self.vals.insert(inst.rid()?, v);
                Ok(())
            }
            ExtInst => {
                let set = inst.id(0)?;
                if Some(set) == self.m.glsl {
                    self.glsl_inst(inst)
                } else if self.m.nonsemantic.contains(&set) {
                    Ok(())
                } else {
                    Err(invalid!("{} uses %{set}, which is not an imported instruction set", inst.name()))
                }
            }
            Variable
            | Load
            | Store
            | AccessChain
            | InBoundsAccessChain
            | PtrAccessChain
            | InBoundsPtrAccessChain
            | CopyMemory
            | ArrayLength
            | ControlBarrier
            | MemoryBarrier
            | AtomicLoad
            | AtomicStore
            | AtomicExchange
            | AtomicCompareExchange
            | AtomicIIncrement
            | AtomicIDecrement
            | AtomicIAdd
            | AtomicISub
            | AtomicSMin
            | AtomicUMin
            | AtomicSMax
            | AtomicUMax
            | AtomicAnd
            | AtomicOr
            | AtomicXor
            | AtomicFAddEXT => self.mem_inst(inst),
            ImageRead | ImageWrite | ImageQuerySize | ImageTexelPointer | Image | ImageFetch => self.image_inst(inst),
            op if tex::handles(op) => self.tex_inst(inst),
            op if quad::handles(op) => self.quad_inst(inst),
            op if rayquery::handles(op) => self.ray_query_inst(inst),
            op if raytracing::handles(op) => self.ray_tracing_inst(inst),
            op if subgroup::handles(op) => self.subgroup_inst(inst),
            op if dot::handles(op) => self.int_dot(inst),
            _ => self.alu_inst(inst),
        }
    }

    // ---- values -------------------------------------------------------------------------

    pub(crate) fn define(&mut self, id: Id, r: u16, ty: Id) {
        if let Ok(n) = self.m.types.regs(ty) {
            self.e.name_regs(r, n, self.m.label(id));
        }
        self.vals.insert(id, Val::Regs { r, ty });
    }

    pub(crate) fn define_ptr(&mut self, id: Id, p: Ptr) {
        self.vals.insert(id, Val::Ptr(p));
    }

    pub(crate) fn val(&mut self, id: Id) -> Result<Val> {
        if let Some(v) = self.vals.get(&id) {
            return Ok(v.clone());
        }
        if let Some(c) = self.m.consts.get(&id) {
            let ty = c.ty;
            let r = self.const_reg(id)?;
            return Ok(Val::Regs { r, ty });
        }
        if self.m.globals.contains_key(&id) {
            let p = self.global_var(id)?;
            self.vals.insert(id, Val::Ptr(p.clone()));
            return Ok(Val::Ptr(p));
        }
        Err(invalid!("%{id} is used before it is defined"))
    }

    /// The registers of a value. A physical-storage-buffer pointer made by an access chain
    /// is materialized as its 64-bit address; other pointers have no run-time value.
    pub(crate) fn regs(&mut self, id: Id) -> Result<u16> {
        match self.val(id)? {
            Val::Regs { r, .. } => Ok(r),
            Val::Ptr(Ptr { kind: mem::PtrKind::Global { base, off, origin: mem::Origin::Physical, .. }, .. }) => {
                self.physical_addr(base, off)
            }
            Val::Ptr(_) => Err(unsupported!("pointer %{id} used as a value (variable pointers)")),
        }
    }

    /// A pointer: compile-time ones as they are, physical-storage-buffer pointer values as
    /// explicitly laid-out memory at their address.
    pub(crate) fn ptr(&mut self, id: Id) -> Result<Ptr> {
        match self.val(id)? {
            Val::Ptr(p) => Ok(p),
            Val::Regs { r, ty } => match self.m.types.get(ty)? {
                Type::Pointer { sc: spirv::StorageClass::PhysicalStorageBuffer, .. } => {
                    let (_, pointee) = self.m.types.pointee(ty)?;
                    Ok(self.physical_ptr(r, pointee))
                }
                _ => Err(invalid!("%{id} is not a pointer")),
            },
        }
    }

    /// Type of a value (for a physical pointer made by an access chain, its pointer type).
    pub(crate) fn type_of(&mut self, id: Id) -> Result<Id> {
        match self.val(id)? {
            Val::Regs { ty, .. } => Ok(ty),
            Val::Ptr(Ptr { kind: mem::PtrKind::Global { origin: mem::Origin::Physical, .. }, .. }) => {
                self.ptr_types.get(&id).copied().ok_or_else(|| invalid!("internal: no type for pointer %{id}"))
            }
            Val::Ptr(_) => Err(unsupported!("pointer %{id} used as a value (variable pointers)")),
        }
    }

    /// Registers and scalar kind of a scalar/vector operand.
    pub(crate) fn operand(&mut self, id: Id) -> Result<(u16, super::types::Shape)> {
        let r = self.regs(id)?;
        let ty = self.type_of(id)?;
        Ok((r, self.m.types.shape(ty)?))
    }

    /// Fresh registers for a value of type `ty`.
    pub(crate) fn fresh(&mut self, ty: Id) -> Result<u16> {
        let n = self.m.types.regs(ty)?;
        self.e.alloc(n)
    }

    /// A constant id's registers, materialized once in the prologue (single-word constants
    /// share the immediate cache, so equal values share a register).
    fn const_reg(&mut self, id: Id) -> Result<u16> {
        if let Some(&r) = self.const_regs.get(&id) {
            return Ok(r);
        }
        let words = self.m.consts.get(&id).map(|c| c.words.clone()).unwrap_or_default();
        let r = match words.as_slice() {
            [w] => self.imm(*w)?,
            _ => self.in_prologue(|l| {
                let r = l.e.alloc(words.len().max(1) as u32)?;
                for (k, &w) in words.iter().enumerate() {
                    l.e.movi(r + k as u16, w);
                }
                Ok(r)
            })?,
        };
        self.e.name_regs(r, words.len() as u32, self.m.label(id));
        self.const_regs.insert(id, r);
        Ok(r)
    }

    /// A register holding `v` (prologue, shared).
    pub(crate) fn imm(&mut self, v: u32) -> Result<u16> {
        if let Some(&r) = self.imm32.get(&v) {
            return Ok(r);
        }
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(1)?;
            l.e.movi(r, v);
            Ok(r)
        })?;
        self.imm32.insert(v, r);
        Ok(r)
    }

    /// A register pair holding `v` (prologue, shared).
    pub(crate) fn imm64(&mut self, v: u64) -> Result<u16> {
        if let Some(&r) = self.imm64.get(&v) {
            return Ok(r);
        }
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(2)?;
            l.e.movi(r, v as u32);
            l.e.movi(r + 1, (v >> 32) as u32);
            Ok(r)
        })?;
        self.imm64.insert(v, r);
        Ok(r)
    }

    /// Runs `f` with the prologue as the current block.
    pub(crate) fn in_prologue<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let prev = self.e.switch_to(self.prologue);
        let r = f(self);
        self.e.switch_to(prev);
        r
    }

    // ---- control flow -------------------------------------------------------------------

    fn label_of(&self, block: Id) -> Result<Label> {
        self.labels.get(&block).copied().ok_or_else(|| invalid!("branch to %{block}, which is not a block"))
    }

    fn reconv_label(&self, block: Id) -> Result<Label> {
        let p = self.reconv.get(&block).copied().ok_or_else(|| invalid!("no post-dominator for %{block}"))?;
        self.label_of(p)
    }

    fn terminator(&mut self, inst: &Instruction) -> Result<()> {
        let from = self.block;
        match inst.class.opcode {
            Op::Branch => self.jump(from, inst.id(0)?),
            Op::BranchConditional => {
                let (c, t, f) = (inst.id(0)?, inst.id(1)?, inst.id(2)?);
                if t == f {
                    return self.jump(from, t);
                }
                let pred = self.regs(c)?;
                let reconv = self.reconv_label(from)?;
                let (tl, te) = self.edge(from, t)?;
                let (fl, fe) = self.edge(from, f)?;
                self.e.bra(pred, tl, fl, reconv);
                self.edge_block(te)?;
                self.edge_block(fe)
            }
            Op::Switch => self.switch(inst),
            Op::Return => {
                let stage = self.stage;
                stage.epilogue(self)?;
                match self.exit_to {
                    Some(back) => self.e.jmp(back),
                    None => self.e.emit(I::new(Vx::Exit)),
                }
                Ok(())
            }
            Op::Unreachable => {
                self.e.emit(I::new(Vx::Trap).imm(TrapCode::Unreachable as u32));
                Ok(())
            }
            _ => {
                let stage = self.stage;
                stage.kill(self)
            }
        }
    }

    /// Unconditional edge: its copies run on exactly the lanes that take it.
    fn jump(&mut self, from: Id, to: Id) -> Result<()> {
        self.copies(from, to)?;
        let l = self.label_of(to)?;
        self.e.jmp(l);
        Ok(())
    }

    /// Where a conditional edge lands: the target itself, or a new edge block (returned
    /// second, to be emitted after the branch) when the target has phis.
    fn edge(&mut self, from: Id, to: Id) -> Result<(Label, Option<(Label, Id)>)> {
        if self.phis.get(&to).is_some_and(|p| !p.is_empty()) {
            let l = self.e.label(format!("edge %{from} -> %{to}"));
            Ok((l, Some((l, to))))
        } else {
            Ok((self.label_of(to)?, None))
        }
    }

    fn edge_block(&mut self, edge: Option<(Label, Id)>) -> Result<()> {
        if let Some((l, to)) = edge {
            self.e.place(l)?;
            self.jump(self.block, to)?;
        }
        Ok(())
    }

    /// The phi copies of edge `from -> to`, as one parallel copy.
    fn copies(&mut self, from: Id, to: Id) -> Result<()> {
        let Some(phis) = self.phis.get(&to).cloned() else { return Ok(()) };
        let mut moves = Vec::new();
        for p in &phis {
            let (v, _) = *p
                .incoming
                .iter()
                .find(|(_, pred)| *pred == from)
                .ok_or_else(|| invalid!("an OpPhi in %{to} has no value for predecessor %{from}"))?;
            let src = self.regs(v)?;
            for k in 0..p.regs as u16 {
                moves.push((p.dst + k, src + k));
            }
        }
        self.e.parallel_copy(&moves)
    }

    /// `OpSwitch` becomes a chain of compare-and-branch blocks, one per distinct case target,
    /// all reconverging at the switch block's post-dominator; the chain's tail jumps to the
    /// default. Fall-through between cases is an ordinary branch and needs nothing special.
    fn switch(&mut self, inst: &Instruction) -> Result<()> {
        let from = self.block;
        let (sel_id, default) = (inst.id(0)?, inst.id(1)?);
        let (sel, shape) = self.operand(sel_id)?;
        let mut groups: Vec<(Id, Vec<u64>)> = Vec::new();
        let mut group_of: HashMap<Id, usize> = HashMap::new();
        let mut i = 2;
        while i + 1 < inst.operands.len() {
            let lit = match &inst.operands[i] {
                Operand::LiteralBit32(v) => *v as u64,
                Operand::LiteralBit64(v) => *v,
                o => return Err(invalid!("OpSwitch case literal {o:?}")),
            };
            let target = inst.id(i + 1)?;
            if target != default {
                let g = *group_of.entry(target).or_insert_with(|| {
                    groups.push((target, Vec::new()));
                    groups.len() - 1
                });
                groups[g].1.push(lit);
            }
            i += 2;
        }
        if groups.is_empty() {
            return self.jump(from, default);
        }
        let reconv = self.reconv_label(from)?;
        for (k, (target, lits)) in groups.iter().enumerate() {
            let mut pred = None;
            for &lit in lits {
                let c = if shape.scalar == Scalar::I64 {
                    let v = self.imm64(lit)?;
                    self.e.op2(I::new(Vx::Icmp64).cond(IntCond::Eq), sel, v)?
                } else {
                    // Narrow selectors are zero-extended; their literals may be sign-extended.
                    let bits = shape.scalar.bits();
                    let lit = if bits < 32 { lit & ((1 << bits) - 1) } else { lit };
                    let v = self.imm(lit as u32)?;
                    self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), sel, v)?
                };
                pred = Some(match pred {
                    None => c,
                    Some(p) => self.e.op2(Vx::Or, p, c)?,
                });
            }
            let pred = pred.ok_or_else(|| invalid!("internal: empty case group"))?;
            let (tl, te) = self.edge(from, *target)?;
            let next = self.e.label(format!("switch %{from} case {}", k + 1));
            self.e.bra(pred, tl, next, reconv);
            self.edge_block(te)?;
            self.e.place(next)?;
        }
        self.jump(from, default)
    }
}
