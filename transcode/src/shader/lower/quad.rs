//! The fragment quad's instructions: derivatives (`DERIV` across the 2x2 quad of lanes),
//! demotion to a helper lane (`DEMOTE`) and the helper test (`CSR frag_helper`).
//!
//! `OpDPdx`/`OpDPdy` are the fine derivatives (each row or column of the quad its own, as
//! exact as the quad allows); the `Coarse` variants take the quad's first row or column.
//! `Fwidth*` is `|d/dx| + |d/dy|` of the same kind. Derivatives work on f32 (halves in their
//! f32 registers, rounded back).

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::Scalar;
use rspirv::dr::Instruction;
use spirv::Op;
use vortex_model::abi::gfx::{csr, deriv};
use vortex_model::abi::isa::Op as Vx;

pub(super) fn handles(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        DPdx | DPdy
            | Fwidth
            | DPdxFine
            | DPdyFine
            | FwidthFine
            | DPdxCoarse
            | DPdyCoarse
            | FwidthCoarse
            | DemoteToHelperInvocation
            | IsHelperInvocationEXT
    )
}

impl<'m> Lowerer<'m> {
    pub(super) fn quad_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let (x, y) = match inst.class.opcode {
            DemoteToHelperInvocation => {
                self.io.discards = true;
                self.e.emit(I::new(Vx::Demote));
                return Ok(());
            }
            IsHelperInvocationEXT => {
                let r = self.csr(csr::FRAG_HELPER)?;
                self.define(inst.rid()?, r, inst.rty()?);
                return Ok(());
            }
            DPdx | DPdxFine => (Some(deriv::FINE_X), None),
            DPdy | DPdyFine => (None, Some(deriv::FINE_Y)),
            DPdxCoarse => (Some(deriv::COARSE_X), None),
            DPdyCoarse => (None, Some(deriv::COARSE_Y)),
            Fwidth | FwidthFine => (Some(deriv::FINE_X), Some(deriv::FINE_Y)),
            _ => (Some(deriv::COARSE_X), Some(deriv::COARSE_Y)),
        };
        let (a, shape) = self.operand(inst.id(0)?)?;
        if !matches!(shape.scalar, Scalar::F32 | Scalar::F16) {
            return Err(unsupported!("{} of {:?} values", inst.name(), shape.scalar));
        }
        let d = self.e.alloc(shape.n)?;
        for k in 0..shape.n as u16 {
            let dx = x.map(|m| self.e.op1(I::new(Vx::Deriv).deriv(m), a + k)).transpose()?;
            let dy = y.map(|m| self.e.op1(I::new(Vx::Deriv).deriv(m), a + k)).transpose()?;
            let v = match (dx, dy) {
                (Some(dx), Some(dy)) => {
                    let (ax, ay) = (self.e.op1(Vx::Fabs, dx)?, self.e.op1(Vx::Fabs, dy)?);
                    self.e.op2(Vx::Fadd, ax, ay)?
                }
                (Some(v), _) | (_, Some(v)) => v,
                (None, None) => return Err(invalid!("internal: a derivative without a direction")),
            };
            if shape.scalar == Scalar::F16 {
                let h = self.e.op1(Vx::F2h, v)?;
                self.e.emit(I::new(Vx::H2f).dst(d + k).a(h));
            } else {
                self.e.mov(d + k, v);
            }
        }
        self.define(inst.rid()?, d, inst.rty()?);
        Ok(())
    }
}
