//! Sampling: the texture unit's `TEX` (`gfx::tex`). A sampled image's value is its image
//! descriptor's address followed by its sampler record's (`OpSampledImage` pairs two
//! values, a combined image sampler descriptor is both records); an image's is its
//! descriptor's address, a sampler's its record's.
//!
//! Each instruction becomes one `TEX` whose operand block is built in consecutive registers
//! in the order the unit reads it: the coordinates (plus the array layer), the depth
//! reference, the bias or LOD, the gradients. The projective variants divide the
//! coordinates (and the reference) by `q` first. Constant texel offsets go into the
//! immediate; `ConstOffsets` gathers are four gathers, each giving its footprint's `i0j0`
//! texel. Input attachments are fetched at the fragment's pixel plus the shader's offset.

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, limit, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Id, Scalar, Type};
use rspirv::dr::{Instruction, Operand};
use spirv::{Dim, ImageOperands, Op};
use vortex_model::abi::gfx::{csr, tex};
use vortex_model::abi::isa::{Op as Vx, REG_NONE as N};

pub(super) fn handles(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        SampledImage
            | ImageSampleImplicitLod
            | ImageSampleExplicitLod
            | ImageSampleDrefImplicitLod
            | ImageSampleDrefExplicitLod
            | ImageSampleProjImplicitLod
            | ImageSampleProjExplicitLod
            | ImageSampleProjDrefImplicitLod
            | ImageSampleProjDrefExplicitLod
            | ImageGather
            | ImageDrefGather
            | ImageQuerySizeLod
            | ImageQueryLevels
            | ImageQueryLod
            | ImageQuerySamples
    )
}

/// The image operands of a sampling instruction (ids), those the unit takes.
#[derive(Default)]
struct Operands {
    bias: Option<Id>,
    lod: Option<Id>,
    grad: Option<(Id, Id)>,
    offset: Option<Id>,
    offsets: Option<Id>,
}

/// What an image type tells the unit: the `imm` dimension and array bits, and the
/// coordinate count (dimensions, then the layer).
#[derive(Clone, Copy)]
struct Shape {
    imm: u32,
    dims: u32,
    layer: u32,
}

impl<'m> Lowerer<'m> {
    pub(super) fn tex_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        match inst.class.opcode {
            SampledImage => {
                let (image, sampler) = (self.regs(inst.id(0)?)?, self.regs(inst.id(1)?)?);
                let d = self.e.alloc(4)?;
                for k in 0..2 {
                    self.e.mov(d + k, image + k);
                    self.e.mov(d + 2 + k, sampler + k);
                }
                self.define(inst.rid()?, d, inst.rty()?);
                Ok(())
            }
            ImageGather | ImageDrefGather => self.gather(inst),
            ImageQuerySizeLod | ImageQueryLevels => self.query_size(inst),
            ImageQueryLod => {
                let (si, shape) = self.sampled(inst.id(0)?)?;
                let coords = self.components(inst.id(1)?, shape.dims)?;
                let imm = shape.imm & tex::DIM_MASK;
                let d = self.tex(tex::op::QUERY_LOD, imm, si, si + 2, &coords)?;
                self.result(inst, d)
            }
            ImageQuerySamples => Err(unsupported!("{} (multisampled images)", inst.name())),
            _ => self.sample(inst),
        }
    }

    /// `OpImageSample*`.
    fn sample(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        let proj = matches!(
            op,
            ImageSampleProjImplicitLod
                | ImageSampleProjExplicitLod
                | ImageSampleProjDrefImplicitLod
                | ImageSampleProjDrefExplicitLod
        );
        let dref = matches!(
            op,
            ImageSampleDrefImplicitLod
                | ImageSampleDrefExplicitLod
                | ImageSampleProjDrefImplicitLod
                | ImageSampleProjDrefExplicitLod
        );
        let (si, shape) = self.sampled(inst.id(0)?)?;
        let mut block = self.coords(inst.id(1)?, shape, proj)?;
        let ops = self.image_operand_ids(inst, if dref { 3 } else { 2 })?;
        let mut imm = shape.imm;
        if dref {
            imm |= tex::DREF;
            let r = self.regs(inst.id(2)?)?;
            let r = if proj { self.e.op2(Vx::Fdiv, r, block.q)? } else { r };
            block.regs.push(r);
        }
        let lod = match (ops.bias, ops.lod, ops.grad) {
            (Some(b), _, _) => {
                block.regs.push(self.regs(b)?);
                tex::LOD_BIAS
            }
            (_, Some(l), _) => {
                block.regs.push(self.regs(l)?);
                tex::LOD_EXPLICIT
            }
            (_, _, Some((dx, dy))) => {
                block.regs.extend(self.components(dx, shape.dims)?);
                block.regs.extend(self.components(dy, shape.dims)?);
                tex::LOD_GRAD
            }
            _ if matches!(
                op,
                ImageSampleExplicitLod
                    | ImageSampleDrefExplicitLod
                    | ImageSampleProjExplicitLod
                    | ImageSampleProjDrefExplicitLod
            ) =>
            {
                return Err(invalid!("{} without a Lod or Grad operand", inst.name()))
            }
            _ => tex::LOD_IMPLICIT,
        };
        imm |= lod << tex::LOD_SHIFT;
        if ops.offsets.is_some() {
            return Err(invalid!("{} with ConstOffsets (gathers only)", inst.name()));
        }
        imm |= self.offset_bits(ops.offset, shape)?;
        let d = self.tex(tex::op::SAMPLE, imm, si, si + 2, &block.regs)?;
        self.result(inst, d)
    }

    /// `OpImageGather` (component operand) and `OpImageDrefGather` (reference operand).
    fn gather(&mut self, inst: &Instruction) -> Result<()> {
        let (si, shape) = self.sampled(inst.id(0)?)?;
        let mut block = self.coords(inst.id(1)?, shape, false)?.regs;
        let mut imm = shape.imm;
        if inst.class.opcode == Op::ImageDrefGather {
            imm |= tex::DREF;
            block.push(self.regs(inst.id(2)?)?);
        } else {
            let c = inst.id(2)?;
            let c =
                self.m.const_u32(c).filter(|&c| c < 4).ok_or_else(|| invalid!("{}: component %{c}", inst.name()))?;
            imm |= c << tex::GATHER_SHIFT;
        }
        let ops = self.image_operand_ids(inst, 3)?;
        if ops.bias.is_some() || ops.lod.is_some() || ops.grad.is_some() {
            return Err(unsupported!("{} with a LOD operand", inst.name()));
        }
        let Some(offsets) = ops.offsets else {
            imm |= self.offset_bits(ops.offset, shape)?;
            let d = self.tex(tex::op::GATHER, imm, si, si + 2, &block)?;
            return self.result(inst, d);
        };
        // Four gathers, texel k the i0j0 texel (component 3) of the footprint at offset k.
        let c = self
            .m
            .consts
            .get(&offsets)
            .ok_or_else(|| invalid!("{}: ConstOffsets %{offsets} is not a constant", inst.name()))?;
        let words = c.words.clone();
        if words.len() != 8 {
            return Err(invalid!("{}: ConstOffsets %{offsets} is not four 2-component offsets", inst.name()));
        }
        let d = self.e.alloc(4)?;
        for k in 0..4 {
            let bits = offset_field(words[2 * k] as i32, 0)? | offset_field(words[2 * k + 1] as i32, 1)?;
            let g = self.tex(tex::op::GATHER, imm | bits, si, si + 2, &block)?;
            self.e.mov(d + k as u16, g + 3);
        }
        self.result(inst, d)
    }

    /// `OpImageQuerySizeLod` (the level's size) and `OpImageQueryLevels`.
    fn query_size(&mut self, inst: &Instruction) -> Result<()> {
        let img = inst.id(0)?;
        let (image, ty) = (self.regs(img)?, self.type_of(img)?);
        let shape = self.image_shape(ty)?;
        let d = if inst.class.opcode == Op::ImageQueryLevels {
            self.tex(tex::op::QUERY_LEVELS, shape.imm, image, N, &[])?
        } else {
            let lod = self.regs(inst.id(1)?)?;
            let imm = shape.imm | (tex::LOD_EXPLICIT << tex::LOD_SHIFT);
            self.tex(tex::op::QUERY_SIZE, imm, image, N, &[lod])?
        };
        self.result(inst, d)
    }

    /// `OpImageFetch` on a sampled image (not a texel buffer): integer coordinates, the
    /// level from the `Lod` operand.
    pub(super) fn tex_fetch(&mut self, inst: &Instruction) -> Result<()> {
        let img = inst.id(0)?;
        let (image, ty) = (self.regs(img)?, self.type_of(img)?);
        let shape = self.image_shape(ty)?;
        let mut block = self.components(inst.id(1)?, shape.dims + shape.layer)?;
        let ops = self.image_operand_ids(inst, 2)?;
        let mut imm = shape.imm | self.offset_bits(ops.offset, shape)?;
        if ops.bias.is_some() || ops.grad.is_some() || ops.offsets.is_some() {
            return Err(invalid!("{} with a Bias, Grad or ConstOffsets operand", inst.name()));
        }
        if let Some(lod) = ops.lod {
            block.push(self.regs(lod)?);
            imm |= tex::LOD_EXPLICIT << tex::LOD_SHIFT;
        }
        let d = self.tex(tex::op::FETCH, imm, image, N, &block)?;
        self.result(inst, d)
    }

    /// `OpImageRead` of a subpass input: the texel at the fragment's pixel plus the
    /// coordinate operand (an offset, 0 in Vulkan), level 0.
    pub(super) fn subpass_read(&mut self, inst: &Instruction) -> Result<()> {
        let image = self.regs(inst.id(0)?)?;
        let offset = self.components(inst.id(1)?, 2)?;
        let mut block = Vec::new();
        for (k, c) in [csr::FRAG_X, csr::FRAG_Y].into_iter().enumerate() {
            let p = self.csr(c)?;
            block.push(self.e.op2(Vx::Iadd, p, offset[k])?);
        }
        let d = self.tex(tex::op::FETCH, tex::DIM_2D, image, N, &block)?;
        self.result(inst, d)
    }

    /// Emits `TEX op` with its operand block copied into consecutive registers; returns the
    /// four result registers.
    fn tex(&mut self, op: u8, imm: u32, image: u16, sampler: u16, operands: &[u16]) -> Result<u16> {
        if tex::operand_regs(op, imm) != Some(operands.len() as u32) {
            return Err(invalid!("internal: TEX {op} with {} operands for flags {imm:#x}", operands.len()));
        }
        let b = if operands.is_empty() {
            N
        } else {
            let b = self.e.alloc(operands.len() as u32)?;
            for (k, &r) in operands.iter().enumerate() {
                self.e.mov(b + k as u16, r);
            }
            b
        };
        let d = self.e.alloc(4)?;
        self.e.emit(I::new(Vx::Tex).tex(op).dst(d).a(image).b(b).c(sampler).imm(imm));
        Ok(d)
    }

    /// Defines `inst`'s result as the first registers of `TEX` result `d`.
    fn result(&mut self, inst: &Instruction, d: u16) -> Result<()> {
        let rty = inst.rty()?;
        let shape = self.m.types.shape(rty)?;
        if shape.n > 4 || !matches!(shape.scalar, Scalar::F32 | Scalar::I32) {
            return Err(unsupported!("{} with result type {}", inst.name(), self.m.types.describe(rty)));
        }
        self.define(inst.rid()?, d, rty);
        Ok(())
    }

    /// A sampled image operand: its registers (image address, sampler address) and shape.
    fn sampled(&mut self, id: Id) -> Result<(u16, Shape)> {
        let (r, ty) = (self.regs(id)?, self.type_of(id)?);
        let Type::SampledImage { image } = *self.m.types.get(ty)? else {
            return Err(invalid!("%{id} is not a sampled image"));
        };
        Ok((r, self.image_shape(image)?))
    }

    /// The unit's view of image type `ty`.
    fn image_shape(&self, ty: Id) -> Result<Shape> {
        let Type::Image { dim, arrayed, ms, .. } = *self.m.types.get(ty)? else {
            return Err(invalid!("%{ty} is not an image type"));
        };
        if ms {
            return Err(unsupported!("sampling a multisampled image"));
        }
        let (d, dims) = match dim {
            Dim::Dim1D => (tex::DIM_1D, 1),
            Dim::Dim2D | Dim::DimSubpassData => (tex::DIM_2D, 2),
            Dim::Dim3D => (tex::DIM_3D, 3),
            Dim::DimCube => (tex::DIM_CUBE, 3),
            d => return Err(unsupported!("sampling a {d:?} image")),
        };
        let layer = arrayed as u32;
        Ok(Shape { imm: d | if arrayed { tex::ARRAYED } else { 0 }, dims, layer })
    }

    /// The coordinates (dimensions, then the layer), divided by `q` (the component after the
    /// dimensions) for a projective sample.
    fn coords(&mut self, id: Id, shape: Shape, proj: bool) -> Result<Coords> {
        if !proj {
            return Ok(Coords { regs: self.components(id, shape.dims + shape.layer)?, q: N });
        }
        if shape.layer != 0 || shape.imm & tex::DIM_MASK == tex::DIM_CUBE {
            return Err(invalid!("projective sampling of an arrayed or cube image"));
        }
        let c = self.components(id, shape.dims + 1)?;
        let q = c[shape.dims as usize];
        let regs = c[..shape.dims as usize].iter().map(|&r| self.e.op2(Vx::Fdiv, r, q)).collect::<Result<_>>()?;
        Ok(Coords { regs, q })
    }

    /// The registers of the first `n` components of scalar or vector `id`.
    fn components(&mut self, id: Id, n: u32) -> Result<Vec<u16>> {
        let (r, shape) = self.operand(id)?;
        if shape.n < n || shape.scalar.regs() != 1 {
            return Err(invalid!("%{id} has {} {:?} components, {n} 32-bit ones needed", shape.n, shape.scalar));
        }
        Ok((0..n as u16).map(|k| r + k).collect())
    }

    /// The image-operand ids of `inst` from operand `at`, refusing those the unit does not
    /// take (`MinLod`, `Sample`).
    fn image_operand_ids(&self, inst: &Instruction, at: usize) -> Result<Operands> {
        let mut o = Operands::default();
        let Some(flags) = inst.operands.get(at) else { return Ok(o) };
        let Operand::ImageOperands(flags) = *flags else {
            return Err(invalid!("{} operand {at} is not an image-operands mask", inst.name()));
        };
        let known = ImageOperands::BIAS
            | ImageOperands::LOD
            | ImageOperands::GRAD
            | ImageOperands::CONST_OFFSET
            | ImageOperands::OFFSET
            | ImageOperands::CONST_OFFSETS
            | ImageOperands::MAKE_TEXEL_AVAILABLE
            | ImageOperands::MAKE_TEXEL_VISIBLE
            | ImageOperands::NON_PRIVATE_TEXEL
            | ImageOperands::VOLATILE_TEXEL
            | ImageOperands::SIGN_EXTEND
            | ImageOperands::ZERO_EXTEND
            | ImageOperands::NONTEMPORAL;
        if !known.contains(flags) {
            return Err(unsupported!("image operands {:?} on {}", flags - known, inst.name()));
        }
        let mut next = at + 1;
        let mut take = |n: usize| -> Result<Vec<Id>> {
            let ids = (next..next + n).map(|i| inst.id(i)).collect::<Result<Vec<_>>>()?;
            next += n;
            Ok(ids)
        };
        // Operands follow in the order of their bits.
        if flags.contains(ImageOperands::BIAS) {
            o.bias = Some(take(1)?[0]);
        }
        if flags.contains(ImageOperands::LOD) {
            o.lod = Some(take(1)?[0]);
        }
        if flags.contains(ImageOperands::GRAD) {
            let g = take(2)?;
            o.grad = Some((g[0], g[1]));
        }
        if flags.contains(ImageOperands::CONST_OFFSET) {
            o.offset = Some(take(1)?[0]);
        }
        if flags.contains(ImageOperands::OFFSET) {
            o.offset = Some(take(1)?[0]);
        }
        if flags.contains(ImageOperands::CONST_OFFSETS) {
            o.offsets = Some(take(1)?[0]);
        }
        Ok(o)
    }

    /// The `imm` bits of a constant texel offset (`ConstOffset`, or `Offset` with a
    /// constant): one signed 4-bit field per dimension.
    fn offset_bits(&self, offset: Option<Id>, shape: Shape) -> Result<u32> {
        let Some(id) = offset else { return Ok(0) };
        let c = self.m.consts.get(&id).ok_or_else(|| unsupported!("texel offset %{id} that is not a constant"))?;
        if shape.imm & tex::DIM_MASK == tex::DIM_CUBE {
            return Err(invalid!("texel offset on a cube image"));
        }
        let mut bits = 0;
        for (k, &w) in c.words.iter().take(shape.dims as usize).enumerate() {
            bits |= offset_field(w as i32, k as u32)?;
        }
        Ok(bits)
    }
}

/// A projective sample's coordinates and its `q` register.
struct Coords {
    regs: Vec<u16>,
    q: u16,
}

/// Offset `v` in field `k` of `imm` (4 signed bits).
fn offset_field(v: i32, k: u32) -> Result<u32> {
    if !(tex::OFFSET_MIN..=tex::OFFSET_MAX).contains(&v) {
        return Err(limit!("texel offset {v} (the device takes {}..={})", tex::OFFSET_MIN, tex::OFFSET_MAX));
    }
    Ok(((v as u32) & 0xF) << (tex::OFFSET_SHIFT + 4 * k))
}
