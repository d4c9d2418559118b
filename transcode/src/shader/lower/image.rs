//! Storage images and texel buffers. An image value is its descriptor's address (a register
//! pair; a texel buffer's descriptor describes a 1D view of the buffer's texels); `ILD`,
//! `IST` and `IATOM` read the descriptor themselves and convert texels per its format, so
//! `SignExtend`/`ZeroExtend` need no code: the format already says how to extend.

use super::mem::{Ptr, PtrKind};
use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::Type;
use rspirv::dr::{Instruction, Operand};
use spirv::{Dim, ImageOperands, Op};
use vortex_model::abi::isa::{MemSize, Op as Vx};
use vortex_model::abi::kernel::desc;

impl<'m> Lowerer<'m> {
    pub(super) fn image_inst(&mut self, inst: &Instruction) -> Result<()> {
        match inst.class.opcode {
            Op::ImageRead if self.image_dim(inst.id(0)?)? == Some(Dim::DimSubpassData) => {
                self.image_operands(inst, 2)?;
                self.subpass_read(inst)
            }
            Op::ImageRead => {
                self.image_operands(inst, 2)?;
                let image = self.regs(inst.id(0)?)?;
                let coords = self.coords3(inst.id(1)?)?;
                let t = self.e.alloc(4)?;
                self.e.emit(I::new(Vx::Ild).dst(t).a(image).b(coords));
                let rty = inst.rty()?;
                if self.m.types.regs(rty)? > 4 {
                    return Err(invalid!("{} reads more than 4 components", inst.name()));
                }
                self.define(inst.rid()?, t, rty);
                Ok(())
            }
            Op::ImageWrite => {
                self.image_operands(inst, 3)?;
                let image = self.regs(inst.id(0)?)?;
                let coords = self.coords3(inst.id(1)?)?;
                let texel = self.pad(inst.id(2)?, 4)?;
                self.e.emit(I::new(Vx::Ist).a(image).b(coords).c(texel));
                Ok(())
            }
            // A sampled image's image: the same descriptor address, its first two registers.
            Op::Image => {
                let r = self.regs(inst.id(0)?)?;
                self.vals.insert(inst.rid()?, super::Val::Regs { r, ty: inst.rty()? });
                Ok(())
            }
            Op::ImageFetch => {
                let img = inst.id(0)?;
                let ty = self.type_of(img)?;
                if !matches!(self.m.types.get(ty)?, Type::Image { dim: Dim::DimBuffer, .. }) {
                    return self.tex_fetch(inst);
                }
                self.image_operands(inst, 2)?;
                let image = self.regs(img)?;
                let coords = self.coords3(inst.id(1)?)?;
                let t = self.e.alloc(4)?;
                self.e.emit(I::new(Vx::Ild).dst(t).a(image).b(coords));
                let rty = inst.rty()?;
                if self.m.types.regs(rty)? > 4 {
                    return Err(invalid!("{} reads more than 4 components", inst.name()));
                }
                self.define(inst.rid()?, t, rty);
                Ok(())
            }
            Op::ImageQuerySize => {
                let img = inst.id(0)?;
                let (image, ty) = (self.regs(img)?, self.type_of(img)?);
                let Type::Image { dim, arrayed, .. } = *self.m.types.get(ty)? else {
                    return Err(invalid!("{} on a non-image", inst.name()));
                };
                let mut fields = match dim {
                    Dim::Dim1D | Dim::DimBuffer => vec![desc::IMG_WIDTH],
                    Dim::Dim2D | Dim::DimCube => vec![desc::IMG_WIDTH, desc::IMG_HEIGHT],
                    Dim::Dim3D => vec![desc::IMG_WIDTH, desc::IMG_HEIGHT, desc::IMG_DEPTH],
                    d => return Err(unsupported!("OpImageQuerySize on a {d:?} image")),
                };
                if arrayed {
                    fields.push(desc::IMG_LAYERS);
                }
                let rty = inst.rty()?;
                if self.m.types.regs(rty)? as usize != fields.len() {
                    return Err(invalid!("{}: result has the wrong component count", inst.name()));
                }
                let d = self.e.alloc(fields.len() as u32)?;
                for (k, f) in fields.iter().enumerate() {
                    self.e.emit(I::new(Vx::Ldg).size(MemSize::B32).dst(d + k as u16).a(image).imm(*f as u32));
                }
                if dim == Dim::DimCube && arrayed {
                    // A cube array's size counts cubes, not faces.
                    let six = self.imm(6)?;
                    self.e.emit(I::new(Vx::Udiv).dst(d + 2).a(d + 2).b(six));
                }
                self.define(inst.rid()?, d, rty);
                Ok(())
            }
            Op::ImageTexelPointer => {
                let p = self.ptr(inst.id(0)?)?;
                let PtrKind::Desc { addr, .. } = p.kind else {
                    return Err(invalid!("{} on something other than an image variable", inst.name()));
                };
                if !matches!(self.m.types.get(p.ty)?, Type::Image { .. }) {
                    return Err(invalid!("{} on a non-image", inst.name()));
                }
                let coords = self.coords3(inst.id(1)?)?;
                let (_, ty) = self.m.types.pointee(inst.rty()?)?;
                self.define_ptr(inst.rid()?, Ptr { ty, kind: PtrKind::Texel { image: addr, coords } });
                Ok(())
            }
            _ => Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
    }

    /// The dimension of image value `id` (`None` if it is not an image).
    fn image_dim(&mut self, id: u32) -> Result<Option<Dim>> {
        let ty = self.type_of(id)?;
        Ok(match self.m.types.get(ty)? {
            Type::Image { dim, .. } => Some(*dim),
            _ => None,
        })
    }

    /// Accepts the image operands a storage-image access may carry, refusing the rest.
    fn image_operands(&self, inst: &Instruction, at: usize) -> Result<()> {
        let Some(o) = inst.operands.get(at) else { return Ok(()) };
        let Operand::ImageOperands(flags) = o else {
            return Err(invalid!("{} operand {at} is not an image-operands mask", inst.name()));
        };
        let ok = ImageOperands::SIGN_EXTEND
            | ImageOperands::ZERO_EXTEND
            | ImageOperands::NONTEMPORAL
            | ImageOperands::MAKE_TEXEL_AVAILABLE
            | ImageOperands::MAKE_TEXEL_VISIBLE
            | ImageOperands::NON_PRIVATE_TEXEL
            | ImageOperands::VOLATILE_TEXEL;
        if !ok.contains(*flags) {
            return Err(unsupported!("image operands {:?} on {}", *flags - ok, inst.name()));
        }
        Ok(())
    }

    /// Coordinates as the 3 registers `ILD`/`IST` take (x, y, z-or-layer), zero-filled.
    fn coords3(&mut self, id: u32) -> Result<u16> {
        self.pad(id, 3)
    }

    /// `id`'s components in `n` consecutive registers, missing ones zero.
    fn pad(&mut self, id: u32, n: u32) -> Result<u16> {
        let (r, sh) = self.operand(id)?;
        if sh.n == n {
            return Ok(r);
        }
        if sh.n > n {
            return Err(invalid!("%{id} has {} components, at most {n} expected", sh.n));
        }
        let zero = self.imm(0)?;
        let d = self.e.alloc(n)?;
        for k in 0..n as u16 {
            self.e.mov(d + k, if (k as u32) < sh.n { r + k } else { zero });
        }
        Ok(d)
    }
}
