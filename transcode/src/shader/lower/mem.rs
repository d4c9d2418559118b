//! Variables, pointers, loads and stores, atomics, barriers, built-ins and descriptors.
//!
//! Where each storage class lives:
//! - `Function`/`Private`: in registers when every access chain into the variable uses
//!   constant indices (and it is small), else in per-lane private memory (`LDP`/`STP`);
//!   ray queries are query slots ([`PtrKind::Query`]).
//! - `Workgroup`: LMEM at `CTA_LMEM_ADDR + offset` (`LDL`/`STL`/`ATOML`).
//! - `StorageBuffer`/`Uniform`: the buffer address from the descriptor (plus the dynamic
//!   offset for dynamic buffers), explicit layout, `LDG`/`STG`/`ATOMG`.
//! - `PushConstant`: the kernel-argument block's push-constant area.
//! - `UniformConstant` images and acceleration structures: the descriptor's address.
//! - `Input`, `Output` and the other stage-specific classes: the stage's (`stage`).

use super::{Lowerer, Val};
use crate::shader::descriptor_type as vkdt;
use crate::shader::emit::I;
use crate::shader::error::{interface, invalid, limit, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Id, Scalar, Type};
use rspirv::dr::Instruction;
use spirv::{Op, StorageClass};
use std::collections::HashMap;
use vortex_model::abi::csr;
use vortex_model::abi::isa::{AtomicOp, IntCond, MemSize, Op as Vx, BAR_MEM_GLOBAL, BAR_MEM_LMEM, REG_NONE as N};
use vortex_model::abi::kernel::{desc, kargs};

/// Alignment the runtime guarantees for buffer base addresses and dynamic offsets (it
/// reports `min*BufferOffsetAlignment` >= this), and for the kernel-argument block.
pub(crate) const BUFFER_ALIGN: u32 = 16;

/// Largest Function/Private variable kept in registers.
const PROMOTE_REGS: u32 = 64;

/// Per-lane private memory and per-CTA LMEM the compiler will allocate.
const MAX_PRIVATE_BYTES: u32 = 64 * 1024;
const MAX_LMEM_BYTES: u32 = 64 * 1024;

/// Layout context of a global pointer: matrix decorations travel from the struct member
/// down through arrays to the matrix, and a row-major matrix's column is strided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lay {
    Plain,
    Matrix {
        stride: u32,
        row_major: bool,
    },
    /// A vector whose components are `stride` bytes apart (a row-major matrix's column).
    Column {
        stride: u32,
    },
}

/// Memory in the register image layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    /// A promoted variable: registers themselves.
    Regs,
    /// Registers never written after the prologue (built-in inputs): loads alias them.
    Fixed,
    Lmem,
    Private,
}

#[derive(Clone, Debug)]
pub(crate) enum PtrKind {
    /// Explicit-layout memory at register pair `base` + `off`; the dynamic part of the
    /// address is a multiple of `align`.
    Global { base: u16, off: u32, align: u32, lay: Lay, origin: Origin },
    /// `Regs`: `base` is the variable's first register and `off` counts registers.
    /// `Lmem`/`Private`: `base` holds a byte offset and `off` adds bytes.
    Flat { space: Space, base: u16, off: u32 },
    /// Ray query slot(s): `slot` holds the first slot number. A single query variable owns
    /// its register (`var`): storing a query value into the variable rebinds it to that
    /// query, as handles are copied by reference.
    Query { slot: u16, var: bool },
    /// Descriptor(s) at address pair `addr`, `stride` bytes apart (one record, or two for a
    /// combined image sampler). For dynamic buffers, `dynamic` is the dynamic offset index
    /// of the binding's first descriptor and `elem` the element index.
    Desc { addr: u16, stride: u32, dynamic: Option<u32>, elem: Option<u16> },
    /// A value read from a CSR at every load (`HelperInvocation`, which demotion changes).
    Csr { id: u32 },
    /// A storage-image texel: image descriptor address pair and 3 coordinate registers.
    Texel { image: u16, coords: u16 },
}

/// Where explicitly laid-out memory came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A storage or uniform buffer: the descriptor's address (for `OpArrayLength`) and,
    /// compiled for robust buffer access, the bounds every access is checked against.
    Desc(u16, Option<Bounds>),
    /// The kernel arguments' push-constant block.
    Push,
    /// A physical storage buffer address (`GL_EXT_buffer_reference`): the pointer is a
    /// 64-bit value too, and can be materialized (`base + off`) when the shader needs it.
    Physical,
}

/// Robust buffer access: a buffer's bytes are `[start, start + range)`, both register pairs
/// (`start` includes the dynamic offset; `range` is the descriptor's, shortened for a dynamic
/// buffer so it never passes the buffer's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    start: u16,
    range: u16,
}

/// Where an explicit-layout access goes: register pair `base` + `off`, the dynamic part a
/// multiple of `align`, checked against `bounds` under robust buffer access.
#[derive(Clone, Copy, Debug)]
struct At {
    base: u16,
    off: u32,
    align: u32,
    bounds: Option<Bounds>,
}

impl At {
    fn plus(self, more: u64) -> Result<At> {
        Ok(At { off: add_off(self.off, more)?, ..self })
    }
}

/// A compile-time pointer to a value of type `ty`.
#[derive(Clone, Debug)]
pub(crate) struct Ptr {
    pub ty: Id,
    pub kind: PtrKind,
}

/// Prologue values computed on first use.
#[derive(Default)]
pub(crate) struct Cache {
    kargs: Option<u16>,
    lmem_base: Option<u16>,
    sets: HashMap<u32, u16>,
}

fn eff_align(align: u32, off: u32) -> u32 {
    if off == 0 {
        align
    } else {
        align.min(1 << off.trailing_zeros())
    }
}

fn add_off(off: u32, more: u64) -> Result<u32> {
    let v = off as u64 + more;
    if v > i32::MAX as u64 {
        return Err(limit!("constant offset {v} does not fit an instruction immediate"));
    }
    Ok(v as u32)
}

impl<'m> Lowerer<'m> {
    pub(super) fn mem_inst(&mut self, inst: &Instruction) -> Result<()> {
        match inst.class.opcode {
            Op::Variable => {
                let (sc, ty) = self.m.types.pointee(inst.rty()?)?;
                if sc != StorageClass::Function {
                    return Err(invalid!("{} in a function has storage class {sc:?}", inst.name()));
                }
                let init = if inst.operands.len() > 1 { Some(inst.id(1)?) } else { None };
                let id = inst.rid()?;
                let p = self.var_storage(id, ty, init, false)?;
                self.define_ptr(id, p);
                Ok(())
            }
            Op::Load => {
                let p = self.ptr(inst.id(0)?)?;
                let (rid, rty) = (inst.rid()?, inst.rty()?);
                let v = self.load_val(&p, rty)?;
                match v {
                    Val::Regs { r, ty } => self.define(rid, r, ty),
                    v => {
                        self.vals.insert(rid, v);
                    }
                }
                Ok(())
            }
            Op::Store => self.store_inst(inst),
            Op::CopyMemory => {
                let dst = self.ptr(inst.id(0)?)?;
                let src = self.ptr(inst.id(1)?)?;
                let ty = src.ty;
                let r = self.load(&src, ty)?;
                self.store(&dst, dst.ty, r)
            }
            Op::AccessChain | Op::InBoundsAccessChain => {
                let base = self.ptr(inst.id(0)?)?;
                let idx = (1..inst.operands.len()).map(|i| inst.id(i)).collect::<Result<Vec<_>>>()?;
                let p = self.chain(base, &idx)?;
                self.ptr_types.insert(inst.rid()?, inst.rty()?);
                self.define_ptr(inst.rid()?, p);
                Ok(())
            }
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => self.ptr_access_chain(inst),
            Op::ArrayLength => self.array_length(inst),
            Op::ControlBarrier => self.control_barrier(inst),
            Op::MemoryBarrier => {
                self.e.emit(I::new(Vx::Fence));
                Ok(())
            }
            _ => self.atomic(inst),
        }
    }

    /// `OpStore`; into a ray-query variable it rebinds the variable.
    fn store_inst(&mut self, inst: &Instruction) -> Result<()> {
        let p = self.ptr(inst.id(0)?)?;
        let v = inst.id(1)?;
        let (src, vty) = (self.regs(v)?, self.type_of(v)?);
        if let PtrKind::Query { slot, var } = p.kind {
            // Storing a query handle rebinds the variable to that query.
            if !var || !matches!(self.m.types.get(vty)?, Type::RayQuery) {
                return Err(unsupported!("storing a ray query into an array element"));
            }
            self.e.mov(slot, src);
            return Ok(());
        }
        if self.m.types.regs(vty)? != self.m.types.regs(p.ty)? {
            return Err(invalid!(
                "OpStore of {} through a pointer to {}",
                self.m.types.describe(vty),
                self.m.types.describe(p.ty)
            ));
        }
        self.store(&p, p.ty, src)
    }

    /// `Op[InBounds]PtrAccessChain`, on physical pointers only: the first index steps over
    /// whole pointees, by the ArrayStride decoration of the base's pointer type.
    fn ptr_access_chain(&mut self, inst: &Instruction) -> Result<()> {
        let base_id = inst.id(0)?;
        let bty = self.type_of(base_id)?;
        if !matches!(self.m.types.get(bty)?, Type::Pointer { sc: StorageClass::PhysicalStorageBuffer, .. }) {
            return Err(unsupported!("{} on a non-physical pointer (variable pointers)", inst.name()));
        }
        let stride = self
            .m
            .decos(bty)
            .array_stride
            .ok_or_else(|| invalid!("{}: the base's pointer type has no ArrayStride", inst.name()))?;
        let base = self.ptr(base_id)?;
        let el = inst.id(1)?;
        let PtrKind::Global { base: b, off, align, lay, origin } = base.kind else {
            return Err(invalid!("internal: physical pointer is not global"));
        };
        let kind = match self.m.const_u32(el) {
            Some(c) => PtrKind::Global { base: b, off: add_off(off, c as u64 * stride as u64)?, align, lay, origin },
            None => {
                // A signed element index: sign-extended to 64 bits, scaled.
                let (e, es) = self.operand(el)?;
                let e64 = if es.scalar == Scalar::I64 {
                    e
                } else {
                    let t = self.e.alloc(2)?;
                    let sh = self.imm(31)?;
                    self.e.mov(t, e);
                    self.e.emit(I::new(Vx::Sar).dst(t + 1).a(e).b(sh));
                    t
                };
                let k = self.imm64(stride as u64)?;
                let scaled = self.e.op64(Vx::Imul64, e64, k)?;
                let nb = self.e.op64(Vx::Iadd64, b, scaled)?;
                PtrKind::Global { base: nb, off, align: eff_align(align, stride), lay, origin }
            }
        };
        let idx = (2..inst.operands.len()).map(|i| inst.id(i)).collect::<Result<Vec<_>>>()?;
        let p = self.chain(Ptr { ty: base.ty, kind }, &idx)?;
        self.ptr_types.insert(inst.rid()?, inst.rty()?);
        self.define_ptr(inst.rid()?, p);
        Ok(())
    }

    /// `OpControlBarrier`: `BAR` with the memory its semantics order (workgroup scope), or a
    /// `FENCE` (subgroup scope).
    fn control_barrier(&mut self, inst: &Instruction) -> Result<()> {
        let scope = self.const_operand(inst, 0)?;
        let sem = self.const_operand(inst, 2)?;
        match scope {
            2 => {
                let mut m = 0;
                if sem & 0x100 != 0 {
                    m |= BAR_MEM_LMEM;
                }
                if sem & (0x40 | 0x200 | 0x800) != 0 {
                    m |= BAR_MEM_GLOBAL;
                }
                self.e.emit(I::new(Vx::Bar).mem(m));
            }
            // A subgroup is a warp, which executes in lockstep: ordering suffices.
            3 => self.e.emit(I::new(Vx::Fence)),
            s => return Err(unsupported!("OpControlBarrier with execution scope {s}")),
        }
        Ok(())
    }

    fn const_operand(&self, inst: &Instruction, i: usize) -> Result<u32> {
        let id = inst.id(i)?;
        self.m.const_u32(id).ok_or_else(|| unsupported!("{} with non-constant operand %{id}", inst.name()))
    }

    // ---- variables ----------------------------------------------------------------------

    /// Storage for a Function or Private variable (or a built-in input's copy).
    pub(super) fn var_storage(&mut self, id: Id, ty: Id, init: Option<Id>, prologue: bool) -> Result<Ptr> {
        if self.m.types.queries(ty)? > 0 {
            let base = *self.query_base.get(&id).ok_or_else(|| invalid!("ray query %{id} has no slot"))?;
            if init.is_some() {
                return Err(invalid!("ray query variable %{id} with an initializer"));
            }
            if matches!(self.m.types.get(ty)?, Type::RayQuery) {
                let slot = self.e.alloc(1)?;
                self.e.name_regs(slot, 1, self.m.label(id));
                let set = |l: &mut Self| -> Result<()> {
                    l.e.movi(slot, base);
                    Ok(())
                };
                if prologue {
                    self.in_prologue(set)?;
                } else {
                    set(self)?;
                }
                return Ok(Ptr { ty, kind: PtrKind::Query { slot, var: true } });
            }
            let slot = self.imm(base)?;
            return Ok(Ptr { ty, kind: PtrKind::Query { slot, var: false } });
        }
        // Image, sampler and acceleration-structure handles are plain 64-bit values here, so
        // variables holding them are ordinary.
        let n = self.m.types.regs(ty)?;
        let p = if !self.dynamic_vars.contains(&id) && n <= PROMOTE_REGS {
            let r = self.e.alloc(n)?;
            self.e.name_regs(r, n, self.m.label(id));
            Ptr { ty, kind: PtrKind::Flat { space: Space::Regs, base: r, off: 0 } }
        } else {
            let off = self.private_bytes;
            self.private_bytes = off
                .checked_add(4 * n)
                .filter(|&b| b <= MAX_PRIVATE_BYTES)
                .ok_or_else(|| limit!("private variables need more than {MAX_PRIVATE_BYTES} bytes per invocation"))?;
            let zero = self.imm(0)?;
            Ptr { ty, kind: PtrKind::Flat { space: Space::Private, base: zero, off } }
        };
        if let Some(init) = init {
            let emit = |l: &mut Self| -> Result<()> {
                let src = l.regs(init)?;
                l.store(&p, ty, src)
            };
            if prologue {
                self.in_prologue(emit)?;
            } else {
                emit(self)?;
            }
        }
        Ok(p)
    }

    /// A module-scope variable, on first reference.
    pub(super) fn global_var(&mut self, id: Id) -> Result<Ptr> {
        let g = self.m.globals.get(&id).cloned().ok_or_else(|| invalid!("%{id} is not a variable"))?;
        match g.sc {
            StorageClass::Private => self.var_storage(id, g.ty, g.init, true),
            StorageClass::Workgroup => {
                // Only a null initializer is valid on Workgroup storage.
                let zeroed = match g.init {
                    None => false,
                    Some(init) if self.m.consts.get(&init).is_some_and(|c| c.words.iter().all(|&w| w == 0)) => true,
                    Some(_) => return Err(invalid!("Workgroup variable %{id} with a non-null initializer")),
                };
                let n = self.m.types.regs(g.ty)?;
                let off = self.lmem_bytes.div_ceil(16) * 16;
                self.lmem_bytes = off
                    .checked_add(4 * n)
                    .filter(|&b| b <= MAX_LMEM_BYTES)
                    .ok_or_else(|| limit!("Workgroup variables need more than {MAX_LMEM_BYTES} bytes"))?;
                let base = self.lmem_base()?;
                if zeroed {
                    self.zero_workgroup_words(base, off, n)?;
                }
                Ok(Ptr { ty: g.ty, kind: PtrKind::Flat { space: Space::Lmem, base, off } })
            }
            StorageClass::PushConstant => {
                let base = self.kargs()?;
                let align = eff_align(BUFFER_ALIGN, kargs::PUSH as u32);
                let kind =
                    PtrKind::Global { base, off: kargs::PUSH as u32, align, lay: Lay::Plain, origin: Origin::Push };
                Ok(Ptr { ty: g.ty, kind })
            }
            StorageClass::Uniform | StorageClass::StorageBuffer | StorageClass::UniformConstant => {
                self.resource_var(id, g.sc, g.ty)
            }
            // Input, Output and the rest belong to the stage.
            _ => {
                let stage = self.stage;
                stage.interface_var(self, id, &g)
            }
        }
    }

    /// Buffers, images and acceleration structures: a pointer to the binding's descriptor(s);
    /// a single buffer is resolved to its memory right away (in the prologue).
    fn resource_var(&mut self, id: Id, sc: StorageClass, ty: Id) -> Result<Ptr> {
        let d = self.m.decos(id);
        let (set, binding) = match (d.set, d.binding) {
            (Some(s), Some(b)) => (s, b),
            _ => return Err(invalid!("resource variable {} without DescriptorSet/Binding", self.m.label(id))),
        };
        // What the shader needs first: an unsupported resource type is the better message.
        let (expected, what) = self.descriptor_kind(id, sc, ty)?;
        let b = self.opts.layout.bindings.iter().find(|b| b.set == set && b.binding == binding).cloned().ok_or_else(
            || {
                interface!(
                    "the shader uses set {set} binding {binding} ({}), which the pipeline layout does not declare",
                    self.m.label(id)
                )
            },
        )?;
        if !expected.contains(&b.descriptor_type) {
            return Err(interface!(
                "set {} binding {} is a {what} in the shader but descriptor type {} in the pipeline layout",
                b.set,
                b.binding,
                b.descriptor_type
            ));
        }
        let is_dynamic = matches!(b.descriptor_type, vkdt::UNIFORM_BUFFER_DYNAMIC | vkdt::STORAGE_BUFFER_DYNAMIC);
        if is_dynamic != b.dynamic_index.is_some() {
            return Err(interface!(
                "set {} binding {}: dynamic buffers (and only they) need a dynamic-offset index",
                b.set,
                b.binding
            ));
        }
        if b.set as usize >= kargs::MAX_SETS {
            return Err(interface!("descriptor set {} (at most {} sets)", b.set, kargs::MAX_SETS));
        }
        let is_array = matches!(self.m.types.get(ty)?, Type::Array { .. } | Type::RuntimeArray { .. });
        let dynamic = b.dynamic_index;
        let stride = vkdt::records(b.descriptor_type) * desc::BYTES as u32;
        // A sampler in a combined image sampler is its second record.
        let first = if self.is_sampler(ty)? && b.descriptor_type == vkdt::COMBINED_IMAGE_SAMPLER {
            b.offset.saturating_add(desc::BYTES as u32)
        } else {
            b.offset
        };
        self.in_prologue(|l| {
            let set_addr = l.set_addr(set)?;
            let addr = l.global_addr(set_addr, first)?;
            let elem = match (dynamic, is_array) {
                (Some(_), true) => Some(l.imm(0)?),
                _ => None,
            };
            let p = Ptr { ty, kind: PtrKind::Desc { addr, stride, dynamic, elem } };
            if !is_array && l.is_block(ty) {
                l.desc_to_global(&p)
            } else {
                Ok(p)
            }
        })
    }

    /// Descriptor types that can back a resource variable (its type with arrays stripped),
    /// and what to call it in messages.
    fn descriptor_kind(&self, id: Id, sc: StorageClass, ty: Id) -> Result<(&'static [u32], &'static str)> {
        let mut t = ty;
        while let Type::Array { elem, .. } | Type::RuntimeArray { elem } = self.m.types.get(t)? {
            t = *elem;
        }
        let buffer_block = self.m.decos(t).buffer_block;
        Ok(match (sc, self.m.types.get(t)?) {
            (StorageClass::StorageBuffer, _) => {
                (&[vkdt::STORAGE_BUFFER, vkdt::STORAGE_BUFFER_DYNAMIC], "storage buffer")
            }
            (StorageClass::Uniform, _) if buffer_block => {
                (&[vkdt::STORAGE_BUFFER, vkdt::STORAGE_BUFFER_DYNAMIC], "storage buffer")
            }
            (StorageClass::Uniform, _) => {
                (&[vkdt::UNIFORM_BUFFER, vkdt::UNIFORM_BUFFER_DYNAMIC, vkdt::INLINE_UNIFORM_BLOCK], "uniform buffer")
            }
            (StorageClass::UniformConstant, Type::AccelStruct) => {
                (&[vkdt::ACCELERATION_STRUCTURE], "acceleration structure")
            }
            (StorageClass::UniformConstant, Type::Image { dim, ms, .. }) => {
                // Sampled = 2 is a storage image (0, "known at run time", is taken as one too).
                let is_storage = self.image_sampled(t) != 1;
                match (*dim, is_storage) {
                    (spirv::Dim::DimBuffer, true) => (&[vkdt::STORAGE_TEXEL_BUFFER], "storage texel buffer"),
                    (spirv::Dim::DimBuffer, false) => (&[vkdt::UNIFORM_TEXEL_BUFFER], "uniform texel buffer"),
                    // Multisampled storage images are not offered (storageImageSampleCounts 1).
                    _ if *ms && is_storage && *dim != spirv::Dim::DimSubpassData => {
                        return Err(unsupported!("multisampled storage image {}", self.m.label(id)))
                    }
                    (spirv::Dim::DimSubpassData, _) => (&[vkdt::INPUT_ATTACHMENT], "input attachment"),
                    (spirv::Dim::DimRect, _) => {
                        return Err(unsupported!("image {} of dimension {dim:?}", self.m.label(id)))
                    }
                    (_, true) => (&[vkdt::STORAGE_IMAGE], "storage image"),
                    (_, false) => (&[vkdt::SAMPLED_IMAGE, vkdt::COMBINED_IMAGE_SAMPLER], "sampled image"),
                }
            }
            (StorageClass::UniformConstant, Type::Sampler) => {
                (&[vkdt::SAMPLER, vkdt::COMBINED_IMAGE_SAMPLER], "sampler")
            }
            (StorageClass::UniformConstant, Type::SampledImage { image }) => match self.m.types.get(*image)? {
                Type::Image { dim: spirv::Dim::DimBuffer, .. } => {
                    (&[vkdt::UNIFORM_TEXEL_BUFFER], "uniform texel buffer")
                }
                Type::Image { dim: spirv::Dim::DimRect, .. } => {
                    return Err(unsupported!("sampled image {} of dimension Rect", self.m.label(id)))
                }
                _ => (&[vkdt::COMBINED_IMAGE_SAMPLER], "combined image sampler"),
            },
            (_, t) => return Err(unsupported!("resource {} of type {t:?}", self.m.label(id))),
        })
    }

    /// The `Sampled` operand of an image type (1: sampled, 2: storage, 0: unknown).
    fn image_sampled(&self, ty: Id) -> u32 {
        self.m
            .raw
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(ty) && i.class.opcode == Op::TypeImage)
            .and_then(|i| i.lit(5).ok())
            .unwrap_or(0)
    }

    /// True for a sampler, or an array of them.
    fn is_sampler(&self, mut ty: Id) -> Result<bool> {
        while let Type::Array { elem, .. } | Type::RuntimeArray { elem } = self.m.types.get(ty)? {
            ty = *elem;
        }
        Ok(matches!(self.m.types.get(ty)?, Type::Sampler))
    }

    fn is_block(&self, ty: Id) -> bool {
        matches!(self.m.types.get(ty), Ok(Type::Struct { .. })) && {
            let d = self.m.decos(ty);
            d.block || d.buffer_block
        }
    }

    /// A buffer descriptor pointer -> a pointer to the buffer's memory (loads the address,
    /// adds the dynamic offset). Emits at the current point.
    fn desc_to_global(&mut self, p: &Ptr) -> Result<Ptr> {
        let PtrKind::Desc { addr, dynamic, elem, .. } = p.kind else {
            return Err(invalid!("internal: not a descriptor pointer"));
        };
        let mut base = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(base).a(addr).imm(desc::BUF_ADDR as u32));
        let mut dyn_off = None;
        if let Some(first) = dynamic {
            let kargs = self.kargs()?;
            let at = kargs::DYN_OFFSETS as u32 + 4 * first;
            let off = self.e.alloc(1)?;
            match elem {
                None => self.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(off).a(kargs).imm(at)),
                Some(e) => {
                    let byte = self.scale(e, 4)?;
                    let a = self.add64(kargs, byte)?;
                    self.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(off).a(a).imm(at));
                }
            }
            base = self.add64(base, off)?;
            dyn_off = Some(off);
        }
        let bounds = if self.opts.robust_buffer_access { Some(self.bounds(addr, base, dyn_off)?) } else { None };
        let kind =
            PtrKind::Global { base, off: 0, align: BUFFER_ALIGN, lay: Lay::Plain, origin: Origin::Desc(addr, bounds) };
        Ok(Ptr { ty: p.ty, kind })
    }

    /// The bounds of the buffer whose descriptor is at `addr` and whose first byte is at
    /// `start`: the descriptor's range, and for a dynamic buffer (offset `dyn_off`) at most
    /// `BUF_LIMIT - dyn_off`, the bytes left before the buffer's end.
    fn bounds(&mut self, addr: u16, start: u16, dyn_off: Option<u16>) -> Result<Bounds> {
        let mut range = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(range).a(addr).imm(desc::BUF_RANGE as u32));
        if let Some(off) = dyn_off {
            let limit = self.e.alloc(2)?;
            self.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(limit).a(addr).imm(desc::BUF_LIMIT as u32));
            let off64 = self.e.alloc(2)?;
            let zero = self.imm(0)?;
            self.e.mov(off64, off);
            self.e.mov(off64 + 1, zero);
            let left = self.e.op64(Vx::Isub64, limit, off64)?;
            let shorter = self.e.alloc(1)?;
            self.e.emit(I::new(Vx::Icmp64).cond(IntCond::Ult).dst(shorter).a(left).b(range));
            let r = self.e.alloc(2)?;
            self.e.emit(I::new(Vx::Sel).dst(r).a(shorter).b(left).c(range));
            self.e.emit(I::new(Vx::Sel).dst(r + 1).a(shorter).b(left + 1).c(range + 1));
            range = r;
        }
        Ok(Bounds { start, range })
    }

    /// The address pair of an access of `bytes` at `base + off`: with `bounds` (robust
    /// buffer access), 0 unless the access lies inside them, so it lands in the null window
    /// (reads zero, stores and atomics dropped); else `base` itself, the offset left to the
    /// instruction. Returns the pair and the immediate the instruction adds.
    fn checked(&mut self, base: u16, off: u32, bytes: u32, bounds: Option<Bounds>) -> Result<(u16, u32)> {
        let Some(b) = bounds else { return Ok((base, off)) };
        let a = self.global_addr(base, off)?;
        let rel = self.e.op64(Vx::Isub64, a, b.start)?;
        let n = self.imm64(bytes as u64)?;
        let end = self.e.op64(Vx::Iadd64, rel, n)?;
        let inside = self.e.alloc(1)?;
        self.e.emit(I::new(Vx::Icmp64).cond(IntCond::Ule).dst(inside).a(end).b(b.range));
        let zero = self.imm(0)?;
        let r = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Sel).dst(r).a(inside).b(a).c(zero));
        self.e.emit(I::new(Vx::Sel).dst(r + 1).a(inside).b(a + 1).c(zero));
        Ok((r, 0))
    }

    /// One `LDG` (`dst`) or `STG` (`src`) of `size` at `base + off`, checked against `bounds`.
    #[allow(clippy::too_many_arguments)]
    fn global_op(
        &mut self,
        store: bool,
        size: MemSize,
        base: u16,
        off: u32,
        r: u16,
        bounds: Option<Bounds>,
    ) -> Result<()> {
        let (a, imm) = self.checked(base, off, size.bytes() as u32, bounds)?;
        if store {
            self.e.emit(I::new(Vx::Stg).size(size).a(a).b(r).imm(imm));
        } else {
            self.e.emit(I::new(Vx::Ldg).size(size).dst(r).a(a).imm(imm));
        }
        Ok(())
    }

    pub(super) fn kargs(&mut self) -> Result<u16> {
        if let Some(r) = self.cache.kargs {
            return Ok(r);
        }
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(2)?;
            l.e.emit(I::new(Vx::Csr).dst(r).imm(csr::PARAM_LO));
            l.e.emit(I::new(Vx::Csr).dst(r + 1).imm(csr::PARAM_HI));
            Ok(r)
        })?;
        self.e.name_regs(r, 2, "kargs".into());
        self.cache.kargs = Some(r);
        Ok(r)
    }

    fn lmem_base(&mut self) -> Result<u16> {
        if let Some(r) = self.cache.lmem_base {
            return Ok(r);
        }
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Csr).dst(r).imm(csr::CTA_LMEM_ADDR));
            Ok(r)
        })?;
        self.e.name_regs(r, 1, "lmem".into());
        self.cache.lmem_base = Some(r);
        Ok(r)
    }

    fn set_addr(&mut self, set: u32) -> Result<u16> {
        if let Some(&r) = self.cache.sets.get(&set) {
            return Ok(r);
        }
        let kargs = self.kargs()?;
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(2)?;
            l.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(r).a(kargs).imm(kargs::SET_ADDR as u32 + 8 * set));
            Ok(r)
        })?;
        self.e.name_regs(r, 2, format!("set{set}"));
        self.cache.sets.insert(set, r);
        Ok(r)
    }

    // ---- address arithmetic -------------------------------------------------------------

    /// Explicitly laid-out memory at the physical address in register pair `r`. Nothing is
    /// known of its alignment beyond the pointee's scalars, so accesses are per word.
    pub(super) fn physical_ptr(&mut self, r: u16, pointee: Id) -> Ptr {
        Ptr {
            ty: pointee,
            kind: PtrKind::Global { base: r, off: 0, align: 4, lay: Lay::Plain, origin: Origin::Physical },
        }
    }

    /// The address `base + off` of a physical pointer, in a register pair.
    pub(super) fn physical_addr(&mut self, base: u16, off: u32) -> Result<u16> {
        self.global_addr(base, off)
    }

    /// `pair + r` (r a 32-bit register, zero-extended) into a fresh pair.
    pub(super) fn add64(&mut self, pair: u16, r: u16) -> Result<u16> {
        let d = self.e.alloc(2)?;
        self.e.emit(I::new(Vx::Iaddc).dst(d).a(pair).b(r));
        self.e.emit(I::new(Vx::Iadd).dst(d + 1).a(pair + 1).b(d + 1));
        Ok(d)
    }

    /// `idx * k` (k a compile-time constant) into a register.
    pub(super) fn scale(&mut self, idx: u16, k: u32) -> Result<u16> {
        match k {
            0 => self.imm(0),
            1 => Ok(idx),
            k if k.is_power_of_two() => {
                let s = self.imm(k.trailing_zeros())?;
                self.e.op2(Vx::Shl, idx, s)
            }
            k => {
                let s = self.imm(k)?;
                self.e.op2(Vx::Imul, idx, s)
            }
        }
    }

    /// Address pair of a global pointer (`base + off`).
    pub(super) fn global_addr(&mut self, base: u16, off: u32) -> Result<u16> {
        if off == 0 {
            return Ok(base);
        }
        let o = self.imm64(off as u64)?;
        self.e.op64(Vx::Iadd64, base, o)
    }

    // ---- access chains ------------------------------------------------------------------

    fn chain(&mut self, mut p: Ptr, idx: &[Id]) -> Result<Ptr> {
        for &i in idx {
            if matches!(p.kind, PtrKind::Desc { .. }) && self.is_block(p.ty) {
                p = self.desc_to_global(&p)?;
            }
            let c = self.m.const_u32(i);
            let t = self.m.types.get(p.ty)?.clone();
            p = match t {
                Type::Struct { .. } => {
                    let k = c.ok_or_else(|| invalid!("struct index %{i} is not a constant"))?;
                    self.step_member(p, k)?
                }
                Type::Array { elem, .. } | Type::RuntimeArray { elem } => {
                    let stride = self.m.decos(p.ty).array_stride;
                    self.step_elem(p, elem, i, c, stride, false)?
                }
                Type::Vector { elem, .. } => self.step_elem(p, elem, i, c, None, false)?,
                Type::Matrix { col, .. } => self.step_elem(p, col, i, c, None, true)?,
                _ => return Err(invalid!("access chain into %{} ({})", p.ty, self.m.types.describe(p.ty))),
            };
        }
        if matches!(p.kind, PtrKind::Desc { .. }) && self.is_block(p.ty) {
            p = self.desc_to_global(&p)?;
        }
        Ok(p)
    }

    fn step_member(&mut self, p: Ptr, k: u32) -> Result<Ptr> {
        let (reg_off, mty) = self.m.types.member(p.ty, k)?;
        let kind = match p.kind {
            PtrKind::Global { base, off, align, origin, .. } => {
                let md = self.m.member_decos(p.ty, k);
                let mo = md.offset.ok_or_else(|| {
                    invalid!("member {k} of struct %{} in buffer memory has no Offset decoration", p.ty)
                })?;
                let lay = match md.matrix_stride {
                    Some(stride) => Lay::Matrix { stride, row_major: md.row_major },
                    None => Lay::Plain,
                };
                PtrKind::Global { base, off: add_off(off, mo as u64)?, align, lay, origin }
            }
            PtrKind::Flat { space: space @ (Space::Regs | Space::Fixed), base, off } => {
                PtrKind::Flat { space, base, off: add_off(off, reg_off as u64)? }
            }
            PtrKind::Flat { space, base, off } => PtrKind::Flat { space, base, off: add_off(off, 4 * reg_off as u64)? },
            _ => return Err(invalid!("member access through a {:?} pointer", p.kind)),
        };
        Ok(Ptr { ty: mty, kind })
    }

    /// Element `i` (constant `c` if known) of an array, vector or matrix (`column`).
    fn step_elem(&mut self, p: Ptr, elem: Id, i: Id, c: Option<u32>, stride: Option<u32>, column: bool) -> Result<Ptr> {
        let er = self.m.types.regs(elem).unwrap_or(0);
        let kind = match p.kind {
            PtrKind::Global { base, off, align, lay, origin } => {
                let comp_bytes = |l: &Self| -> Result<u32> {
                    Ok(match l.m.types.shape(elem).map(|s| s.scalar) {
                        Ok(Scalar::Bool) | Err(_) => 4,
                        Ok(s) => s.bytes(),
                    })
                };
                let (stride, lay) = if column {
                    match lay {
                        Lay::Matrix { stride, row_major: false } => (stride, Lay::Plain),
                        Lay::Matrix { stride, row_major: true } => {
                            // A row-major matrix's column: one component along each row.
                            let cb = self.m.types.shape(elem)?.scalar.bytes();
                            (cb, Lay::Column { stride })
                        }
                        _ => return Err(invalid!("matrix %{} in buffer memory without MatrixStride", p.ty)),
                    }
                } else if let Some(s) = stride {
                    (s, lay)
                } else if let Lay::Column { stride } = lay {
                    (stride, Lay::Plain)
                } else if matches!(self.m.types.get(p.ty)?, Type::Vector { .. }) {
                    (comp_bytes(self)?, Lay::Plain)
                } else {
                    return Err(invalid!("array %{} in buffer memory without ArrayStride", p.ty));
                };
                match c {
                    Some(c) => {
                        PtrKind::Global { base, off: add_off(off, c as u64 * stride as u64)?, align, lay, origin }
                    }
                    None => {
                        let idx = self.regs(i)?;
                        let t = self.scale(idx, stride)?;
                        let base = self.add64(base, t)?;
                        PtrKind::Global { base, off, align: eff_align(align, stride), lay, origin }
                    }
                }
            }
            PtrKind::Flat { space: space @ (Space::Regs | Space::Fixed), base, off } => {
                let c = c.ok_or_else(|| invalid!("internal: dynamic index into register variable"))?;
                PtrKind::Flat { space, base, off: add_off(off, c as u64 * er as u64)? }
            }
            PtrKind::Flat { space, base, off } => match c {
                Some(c) => PtrKind::Flat { space, base, off: add_off(off, 4 * c as u64 * er as u64)? },
                None => {
                    let idx = self.regs(i)?;
                    let t = self.scale(idx, 4 * er)?;
                    let base = self.e.op2(Vx::Iadd, base, t)?;
                    PtrKind::Flat { space, base, off }
                }
            },
            PtrKind::Query { slot, .. } => {
                let n = self.m.types.queries(elem)?;
                let t = match c {
                    Some(c) => self.imm(c.saturating_mul(n))?,
                    None => {
                        let idx = self.regs(i)?;
                        self.scale(idx, n)?
                    }
                };
                PtrKind::Query { slot: self.e.op2(Vx::Iadd, slot, t)?, var: false }
            }
            PtrKind::Desc { addr, stride, dynamic, elem: cur } => {
                let per = self.descriptors_in(elem)?;
                let idx = match c {
                    Some(c) => self.imm(c)?,
                    None => self.regs(i)?,
                };
                let bytes = self.scale(idx, per.saturating_mul(stride))?;
                let addr = self.add64(addr, bytes)?;
                let elem_idx = match cur {
                    Some(e) => {
                        let t = self.scale(idx, per)?;
                        Some(self.e.op2(Vx::Iadd, e, t)?)
                    }
                    None => None,
                };
                PtrKind::Desc { addr, stride, dynamic, elem: elem_idx }
            }
            PtrKind::Texel { .. } => return Err(invalid!("access chain through an image texel pointer")),
            PtrKind::Csr { .. } => return Err(invalid!("access chain into a scalar built-in")),
        };
        Ok(Ptr { ty: elem, kind })
    }

    /// Descriptors in one element of a (possibly nested) descriptor array.
    fn descriptors_in(&self, ty: Id) -> Result<u32> {
        Ok(match self.m.types.get(ty)? {
            Type::Array { elem, len } => len.saturating_mul(self.descriptors_in(*elem)?),
            _ => 1,
        })
    }

    // ---- loads and stores ---------------------------------------------------------------

    /// `OpLoad`: queries and descriptors load as handles, everything else as its register
    /// image.
    fn load_val(&mut self, p: &Ptr, rty: Id) -> Result<Val> {
        match p.kind {
            // A loaded ray query is the same query: its slot (copied if the variable can be
            // rebound later, so this value keeps naming the query it named when loaded).
            PtrKind::Query { slot, var: false } => Ok(Val::Regs { r: slot, ty: rty }),
            PtrKind::Query { slot, var: true } => {
                let r = self.e.alloc(1)?;
                self.e.mov(r, slot);
                Ok(Val::Regs { r, ty: rty })
            }
            PtrKind::Desc { addr, .. } => match self.m.types.get(p.ty)? {
                // A combined image sampler's value is its two records' addresses.
                Type::SampledImage { .. } if self.m.types.regs(p.ty)? == 4 => {
                    let r = self.e.alloc(4)?;
                    self.e.mov(r, addr);
                    self.e.mov(r + 1, addr + 1);
                    let s = self.global_addr(addr, desc::BYTES as u32)?;
                    self.e.mov(r + 2, s);
                    self.e.mov(r + 3, s + 1);
                    Ok(Val::Regs { r, ty: rty })
                }
                Type::Image { .. } | Type::SampledImage { .. } | Type::Sampler => Ok(Val::Regs { r: addr, ty: rty }),
                Type::AccelStruct => {
                    let r = self.e.alloc(2)?;
                    self.e.emit(I::new(Vx::Ldg).size(MemSize::B64).dst(r).a(addr).imm(desc::AS_ADDR as u32));
                    Ok(Val::Regs { r, ty: rty })
                }
                _ => Err(unsupported!("loading a whole descriptor array %{}", p.ty)),
            },
            PtrKind::Flat { space: Space::Fixed, base, off } => Ok(Val::Regs { r: base + off as u16, ty: p.ty }),
            PtrKind::Csr { id } => {
                let r = self.e.alloc(1)?;
                self.e.emit(I::new(Vx::Csr).dst(r).imm(id));
                Ok(Val::Regs { r, ty: rty })
            }
            _ => {
                if self.m.types.regs(rty)? != self.m.types.regs(p.ty)? {
                    return Err(invalid!(
                        "OpLoad of {} as {}",
                        self.m.types.describe(p.ty),
                        self.m.types.describe(rty)
                    ));
                }
                let r = self.load(p, p.ty)?;
                Ok(Val::Regs { r, ty: rty })
            }
        }
    }

    /// Loads a value of type `ty` through `p` into fresh registers.
    pub(super) fn load(&mut self, p: &Ptr, ty: Id) -> Result<u16> {
        let n = self.m.types.regs(ty)?;
        let r = self.e.alloc(n)?;
        self.access(p, ty, r, n, false)?;
        Ok(r)
    }

    /// Stores the register image at `src` (of type `ty`) through `p`.
    pub(super) fn store(&mut self, p: &Ptr, ty: Id, src: u16) -> Result<()> {
        let n = self.m.types.regs(ty)?;
        self.access(p, ty, src, n, true)
    }

    fn access(&mut self, p: &Ptr, ty: Id, r: u16, n: u32, store: bool) -> Result<()> {
        match p.kind {
            PtrKind::Global { base, off, align, lay, origin } => {
                let bounds = if let Origin::Desc(_, b) = origin { b } else { None };
                let at = At { base, off, align, bounds };
                self.global_access(store, at, lay, ty, r)
            }
            PtrKind::Flat { space: Space::Fixed, .. } if store => Err(invalid!("store to a built-in input variable")),
            PtrKind::Flat { space: Space::Regs | Space::Fixed, base, off } => {
                let v = base as u32 + off;
                if v + n > self.e.num_regs() {
                    return Err(invalid!("internal: register variable access out of range"));
                }
                for k in 0..n as u16 {
                    if store {
                        self.e.mov(v as u16 + k, r + k);
                    } else {
                        self.e.mov(r + k, v as u16 + k);
                    }
                }
                Ok(())
            }
            PtrKind::Flat { space, base, off } => {
                let op = match (space, store) {
                    (Space::Lmem, false) => Vx::Ldl,
                    (Space::Lmem, true) => Vx::Stl,
                    (_, false) => Vx::Ldp,
                    (_, true) => Vx::Stp,
                };
                for k in 0..n as u16 {
                    let imm = add_off(off, 4 * k as u64)?;
                    if store {
                        self.e.emit(I::new(op).size(MemSize::B32).a(base).b(r + k).imm(imm));
                    } else {
                        self.e.emit(I::new(op).size(MemSize::B32).dst(r + k).a(base).imm(imm));
                    }
                }
                Ok(())
            }
            _ => Err(unsupported!("{} through a {:?} pointer", if store { "store" } else { "load" }, p.kind)),
        }
    }

    /// Loads or stores a value of type `ty` at `at` in explicit layout.
    fn global_access(&mut self, store: bool, at: At, lay: Lay, ty: Id, r: u16) -> Result<()> {
        let t = self.m.types.get(ty)?.clone();
        let (base, off, bounds) = (at.base, at.off, at.bounds);
        match t {
            Type::Bool => {
                if store {
                    self.global_op(true, MemSize::B32, base, off, r, bounds)?;
                } else {
                    // Booleans are stored as 32-bit words; any non-zero word is true.
                    let w = self.e.alloc(1)?;
                    self.global_op(false, MemSize::B32, base, off, w, bounds)?;
                    let zero = self.imm(0)?;
                    self.e.emit(I::new(Vx::Icmp).cond(IntCond::Ne).dst(r).a(w).b(zero));
                }
                Ok(())
            }
            Type::Int { width: 64, .. } | Type::Float { width: 64 } => self.words(store, at, r, 2),
            Type::Pointer { sc: StorageClass::PhysicalStorageBuffer, .. } => self.words(store, at, r, 2),
            Type::Int { width: w @ (8 | 16), .. } => {
                // Canonical narrow registers are zero-extended: what u8/u16 loads give.
                let size = if w == 8 { MemSize::U8 } else { MemSize::U16 };
                self.global_op(store, size, base, off, r, bounds)
            }
            Type::Float { width: 16 } => {
                // Half bits in memory, the f32 of the same value in the register.
                if store {
                    let h = self.e.op1(Vx::F2h, r)?;
                    self.global_op(true, MemSize::U16, base, off, h, bounds)?;
                } else {
                    self.global_op(false, MemSize::U16, base, off, r, bounds)?;
                    self.e.emit(I::new(Vx::H2f).dst(r).a(r));
                }
                Ok(())
            }
            Type::Int { .. } | Type::Float { .. } => self.words(store, at, r, 1),
            Type::Vector { elem, n } => {
                let er = self.m.types.regs(elem)?;
                let es = self.m.types.scalar(elem)?;
                let eb = if es == Scalar::Bool { 4 } else { es.bytes() };
                let strided = if let Lay::Column { stride } = lay { Some(stride) } else { None };
                if strided.is_some() || es == Scalar::Bool || eb < 4 {
                    let stride = strided.unwrap_or(eb);
                    for k in 0..n {
                        let o = at.plus(k as u64 * stride as u64)?;
                        self.global_access(store, o, Lay::Plain, elem, r + (k * er) as u16)?;
                    }
                    Ok(())
                } else {
                    self.words(store, at, r, n * er)
                }
            }
            Type::Matrix { col, cols } => {
                let Lay::Matrix { stride, row_major } = lay else {
                    return Err(invalid!("matrix %{ty} in buffer memory without MatrixStride"));
                };
                let cr = self.m.types.regs(col)?;
                let cb = self.m.types.shape(col)?.scalar.bytes();
                for c in 0..cols {
                    let (o, l) = if row_major {
                        (at.plus(cb as u64 * c as u64)?, Lay::Column { stride })
                    } else {
                        (at.plus(c as u64 * stride as u64)?, Lay::Plain)
                    };
                    self.global_access(store, o, l, col, r + (c * cr) as u16)?;
                }
                Ok(())
            }
            Type::Array { elem, len } => {
                let stride = self
                    .m
                    .decos(ty)
                    .array_stride
                    .ok_or_else(|| invalid!("array %{ty} in buffer memory without ArrayStride"))?;
                let er = self.m.types.regs(elem)?;
                for i in 0..len {
                    let o = at.plus(i as u64 * stride as u64)?;
                    self.global_access(store, o, lay, elem, r + (i * er) as u16)?;
                }
                Ok(())
            }
            Type::Struct { members } => {
                let mut reg = 0u32;
                for (k, &m) in members.iter().enumerate() {
                    let md = self.m.member_decos(ty, k as u32);
                    let mo = md.offset.ok_or_else(|| {
                        invalid!("member {k} of struct %{ty} in buffer memory has no Offset decoration")
                    })?;
                    let l = match md.matrix_stride {
                        Some(stride) => Lay::Matrix { stride, row_major: md.row_major },
                        None => Lay::Plain,
                    };
                    self.global_access(store, at.plus(mo as u64)?, l, m, r + reg as u16)?;
                    reg += self.m.types.regs(m)?;
                }
                Ok(())
            }
            _ => Err(unsupported!("{} in buffer memory", self.m.types.describe(ty))),
        }
    }

    /// `n` consecutive 32-bit words at `at`, in the widest accesses the known alignment
    /// allows.
    fn words(&mut self, store: bool, at: At, r: u16, n: u32) -> Result<()> {
        let mut k = 0;
        while k < n {
            let o = add_off(at.off, 4 * k as u64)?;
            let a = eff_align(at.align, o);
            let (size, w) = if n - k >= 4 && a >= 16 {
                (MemSize::B128, 4)
            } else if n - k >= 2 && a >= 8 {
                (MemSize::B64, 2)
            } else {
                (MemSize::B32, 1)
            };
            self.global_op(store, size, at.base, o, r + k as u16, at.bounds)?;
            k += w;
        }
        Ok(())
    }

    /// Elements in a buffer's trailing runtime array: (range - offset) / stride.
    fn array_length(&mut self, inst: &Instruction) -> Result<()> {
        let p = self.ptr(inst.id(0)?)?;
        let member = inst.lit(1)?;
        let PtrKind::Global { off, origin: Origin::Desc(d, _), .. } = p.kind else {
            return Err(invalid!("OpArrayLength on something other than a storage buffer block"));
        };
        let (_, mty) = self.m.types.member(p.ty, member)?;
        let mo = self.m.member_decos(p.ty, member).offset.ok_or_else(|| invalid!("runtime array without Offset"))?;
        let stride = self.m.decos(mty).array_stride.ok_or_else(|| invalid!("runtime array without ArrayStride"))?;
        if stride == 0 {
            return Err(invalid!("runtime array with ArrayStride 0"));
        }
        let range = self.e.alloc(1)?;
        self.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(range).a(d).imm(desc::BUF_RANGE as u32));
        let start = self.imm(add_off(off, mo as u64)?)?;
        let t = self.e.op2(Vx::Imax, range, start)?;
        let t = self.e.op2(Vx::Isub, t, start)?;
        let s = self.imm(stride)?;
        let len = self.e.op2(Vx::Udiv, t, s)?;
        self.define(inst.rid()?, len, inst.rty()?);
        Ok(())
    }

    // ---- atomics ------------------------------------------------------------------------

    fn atomic(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        let p = self.ptr(inst.id(0)?)?;
        let wide = self.m.types.scalar(p.ty)? == Scalar::I64;
        let imm = |l: &mut Self, v: u64| if wide { l.imm64(v) } else { l.imm(v as u32) };
        let (aop, value) = match op {
            AtomicLoad => (AtomicOp::Load, None),
            AtomicStore => (AtomicOp::Store, Some(self.regs(inst.id(3)?)?)),
            AtomicExchange => (AtomicOp::Xchg, Some(self.regs(inst.id(3)?)?)),
            AtomicCompareExchange => (AtomicOp::CmpXchg, Some(self.regs(inst.id(4)?)?)),
            AtomicIIncrement => (AtomicOp::Add, Some(imm(self, 1)?)),
            AtomicIDecrement => (AtomicOp::Add, Some(imm(self, u64::MAX)?)),
            AtomicIAdd => (AtomicOp::Add, Some(self.regs(inst.id(3)?)?)),
            AtomicISub => {
                let v = self.regs(inst.id(3)?)?;
                let neg = if wide {
                    let z = self.imm64(0)?;
                    self.e.op64(Vx::Isub64, z, v)?
                } else {
                    self.e.op1(Vx::Ineg, v)?
                };
                (AtomicOp::Add, Some(neg))
            }
            AtomicSMin => (AtomicOp::Smin, Some(self.regs(inst.id(3)?)?)),
            AtomicUMin => (AtomicOp::Umin, Some(self.regs(inst.id(3)?)?)),
            AtomicSMax => (AtomicOp::Smax, Some(self.regs(inst.id(3)?)?)),
            AtomicUMax => (AtomicOp::Umax, Some(self.regs(inst.id(3)?)?)),
            AtomicAnd => (AtomicOp::And, Some(self.regs(inst.id(3)?)?)),
            AtomicOr => (AtomicOp::Or, Some(self.regs(inst.id(3)?)?)),
            AtomicXor => (AtomicOp::Xor, Some(self.regs(inst.id(3)?)?)),
            AtomicFAddEXT => (AtomicOp::Fadd, Some(self.regs(inst.id(3)?)?)),
            _ => return Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        };
        let cmp = if op == AtomicCompareExchange { Some(self.regs(inst.id(5)?)?) } else { None };
        let dst = if op == AtomicStore { N } else { self.e.alloc(if wide { 2 } else { 1 })? };
        let (b, c) = (value.unwrap_or(N), cmp.unwrap_or(N));
        match p.kind {
            PtrKind::Global { base, off, origin, .. } => {
                let bounds = if let Origin::Desc(_, b) = origin { b } else { None };
                let a = match bounds {
                    Some(_) => self.checked(base, off, if wide { 8 } else { 4 }, bounds)?.0,
                    None => self.global_addr(base, off)?,
                };
                self.e.emit(I::new(Vx::Atomg).atomic(aop).dst(dst).a(a).b(b).c(c).imm(wide as u32));
            }
            PtrKind::Flat { space: Space::Lmem, base, off } => {
                let a = if off == 0 {
                    base
                } else {
                    let o = self.imm(off)?;
                    self.e.op2(Vx::Iadd, base, o)?
                };
                self.e.emit(I::new(Vx::Atoml).atomic(aop).dst(dst).a(a).b(b).c(c).imm(wide as u32));
            }
            PtrKind::Texel { image, coords } => {
                if wide {
                    return Err(unsupported!("64-bit image atomics"));
                }
                let b = if b == N { self.imm(0)? } else { b };
                self.e.emit(I::new(Vx::Iatom).atomic(aop).dst(dst).a(image).b(coords).c(b).d(c));
            }
            ref k => return Err(unsupported!("atomics on {k:?} memory")),
        }
        if op != AtomicStore {
            self.define(inst.rid()?, dst, inst.rty()?);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_of_offsets() {
        assert_eq!(eff_align(16, 0), 16);
        assert_eq!(eff_align(16, 4), 4);
        assert_eq!(eff_align(16, 8), 8);
        assert_eq!(eff_align(16, 48), 16);
        assert_eq!(eff_align(4, 16), 4);
        assert!(add_off(0x7FFF_FFF0, 0x100).is_err());
    }
}
