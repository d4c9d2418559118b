//! Constant evaluation: `OpConstant*`, specialization constants (`OpSpecConstant*` with
//! `SpecId` overrides from the pipeline) and `OpSpecConstantOp` arithmetic. A constant is
//! kept as its register image, so materializing one is a run of `MOVI`s.

use super::error::{interface, invalid, unsupported, Result};
use super::module::{InstExt, Module};
use super::types::{Id, Scalar};
use rspirv::dr::{Instruction, Operand};
use spirv::Op;
use std::collections::BTreeMap;

/// A constant's type and register image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Const {
    pub ty: Id,
    pub words: Vec<u32>,
}

pub(crate) fn eval(m: &Module, inst: &Instruction, spec: &BTreeMap<u32, Vec<u8>>) -> Result<Const> {
    let ty = inst.rty()?;
    let id = inst.rid()?;
    let regs = m.types.regs(ty)?;
    let override_bytes = m.decos.get(&id).and_then(|d| d.spec_id).and_then(|sid| spec.get(&sid).map(|b| (sid, b)));
    let words = match inst.class.opcode {
        Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse => {
            let mut v = matches!(inst.class.opcode, Op::ConstantTrue | Op::SpecConstantTrue) as u32;
            if let (Op::SpecConstantTrue | Op::SpecConstantFalse, Some((sid, b))) = (inst.class.opcode, override_bytes)
            {
                v = (spec_value(sid, b, &[1, 4])? != 0) as u32;
            }
            vec![v]
        }
        Op::Constant | Op::SpecConstant => {
            let mut raw = match inst.operand(0)? {
                Operand::LiteralBit32(v) => *v as u64,
                Operand::LiteralBit64(v) => *v,
                o => return Err(invalid!("{} with literal {o:?}", inst.name())),
            };
            let s = m.types.scalar(ty)?;
            if let (Op::SpecConstant, Some((sid, b))) = (inst.class.opcode, override_bytes) {
                // VkSpecializationMapEntry sizes are the constant's own size.
                raw = spec_value(sid, b, &[s.bytes() as usize])?;
            }
            pack(s, &[from_raw(s, raw)])
        }
        Op::ConstantComposite | Op::SpecConstantComposite => {
            let mut words = Vec::new();
            for i in 0..inst.operands.len() {
                words.extend_from_slice(&get(m, inst.id(i)?)?.words);
            }
            words
        }
        Op::ConstantNull | Op::Undef => {
            // A null image or acceleration-structure handle is address 0 (a null AS misses);
            // a query constant would alias slot 0.
            if m.types.queries(ty)? > 0 {
                return Err(unsupported!("{} of a ray-query type", inst.name()));
            }
            vec![0; regs as usize]
        }
        Op::SpecConstantOp => spec_op(m, inst, ty)?,
        _ => return Err(invalid!("{} is not a constant", inst.name())),
    };
    if words.len() != regs as usize {
        return Err(invalid!("{}: {} constituent words for type {}", inst.name(), words.len(), m.types.describe(ty)));
    }
    Ok(Const { ty, words })
}

fn get(m: &Module, id: Id) -> Result<&Const> {
    m.consts.get(&id).ok_or_else(|| invalid!("%{id} is not a constant defined before its use"))
}

/// A specialization value of one of the `sizes` byte counts, little-endian.
fn spec_value(sid: u32, bytes: &[u8], sizes: &[usize]) -> Result<u64> {
    if !sizes.contains(&bytes.len()) {
        return Err(interface!(
            "specialization constant {sid} has {} bytes, expected {}",
            bytes.len(),
            sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" or ")
        ));
    }
    let mut w = [0u8; 8];
    w[..bytes.len()].copy_from_slice(bytes);
    Ok(u64::from_le_bytes(w))
}

/// A literal's bits (as SPIR-V encodes them) -> the component's value as `comps` returns
/// it: integers masked to their width, 16-bit floats widened to the f32 that holds them.
fn from_raw(s: Scalar, raw: u64) -> u64 {
    match s {
        Scalar::F16 => half::f16::from_bits(raw as u16).to_f32().to_bits() as u64,
        Scalar::F32 => raw & 0xFFFF_FFFF,
        _ => mask(raw, width(s)),
    }
}

/// Components of a scalar/vector constant as u64: integers zero-extended, f32 and f16 as the
/// f32 bits of their register, f64 as its bits.
fn comps(m: &Module, c: &Const) -> Result<(Scalar, Vec<u64>)> {
    let shape = m.types.shape(c.ty)?;
    let v = match shape.scalar.regs() {
        2 => c.words.chunks(2).map(|p| p[0] as u64 | (*p.get(1).unwrap_or(&0) as u64) << 32).collect(),
        _ => c.words.iter().map(|&w| w as u64).collect(),
    };
    Ok((shape.scalar, v))
}

/// Component values (as `comps` returns them) -> the register image.
fn pack(s: Scalar, vals: &[u64]) -> Vec<u32> {
    let mut out = Vec::new();
    for &v in vals {
        match s {
            Scalar::I64 | Scalar::F64 => out.extend([v as u32, (v >> 32) as u32]),
            Scalar::Bool => out.push((v != 0) as u32),
            Scalar::F16 | Scalar::F32 => out.push(v as u32),
            _ => out.push(mask(v, width(s)) as u32),
        }
    }
    out
}

fn width(s: Scalar) -> u32 {
    s.bits()
}

/// FConvert of one component between float kinds (round to nearest even).
fn fconvert(from: Scalar, to: Scalar, v: u64) -> u64 {
    let x = if from == Scalar::F64 { f64::from_bits(v) } else { f32::from_bits(v as u32) as f64 };
    match to {
        Scalar::F64 => x.to_bits(),
        Scalar::F16 => half::f16::from_f64(x).to_f32().to_bits() as u64,
        _ => (x as f32).to_bits() as u64,
    }
}

fn sext(v: u64, w: u32) -> i64 {
    ((v << (64 - w)) as i64) >> (64 - w)
}

fn mask(v: u64, w: u32) -> u64 {
    if w == 64 {
        v
    } else {
        v & ((1u64 << w) - 1)
    }
}

fn spec_op(m: &Module, inst: &Instruction, ty: Id) -> Result<Vec<u32>> {
    let op = match inst.operand(0)? {
        Operand::LiteralSpecConstantOpInteger(op) => *op,
        o => return Err(invalid!("OpSpecConstantOp with opcode operand {o:?}")),
    };
    let arg = |i: usize| -> Result<&Const> { get(m, inst.id(1 + i)?) };
    let rshape = m.types.shape(ty);
    match op {
        Op::CompositeExtract => {
            let c = arg(0)?;
            let (mut off, mut t) = (0u32, c.ty);
            for i in 2..inst.operands.len() {
                let (o, mt) = m.types.member(t, inst.lit(i)?)?;
                off += o;
                t = mt;
            }
            let n = m.types.regs(t)?;
            Ok(c.words.get(off as usize..(off + n) as usize).ok_or_else(|| invalid!("bad extract"))?.to_vec())
        }
        Op::CompositeInsert => {
            let (obj, c) = (arg(0)?, arg(1)?);
            let (mut off, mut t) = (0u32, c.ty);
            for i in 3..inst.operands.len() {
                let (o, mt) = m.types.member(t, inst.lit(i)?)?;
                off += o;
                t = mt;
            }
            let mut w = c.words.clone();
            let dst = w.get_mut(off as usize..off as usize + obj.words.len()).ok_or_else(|| invalid!("bad insert"))?;
            dst.copy_from_slice(&obj.words);
            Ok(w)
        }
        Op::VectorShuffle => {
            let (a, b) = (arg(0)?, arg(1)?);
            let (s, mut all) = comps(m, a)?;
            all.extend(comps(m, b)?.1);
            let mut out = Vec::new();
            for i in 3..inst.operands.len() {
                let k = inst.lit(i)?;
                out.push(if k == u32::MAX {
                    0
                } else {
                    *all.get(k as usize).ok_or_else(|| invalid!("bad shuffle"))?
                });
            }
            Ok(pack(s, &out))
        }
        Op::Select => {
            let (c, a, b) = (arg(0)?, arg(1)?, arg(2)?);
            let (_, cv) = comps(m, c)?;
            let (s, av) = comps(m, a)?;
            let (_, bv) = comps(m, b)?;
            let out: Vec<u64> =
                (0..av.len()).map(|k| if cv[k.min(cv.len() - 1)] != 0 { av[k] } else { bv[k] }).collect();
            Ok(pack(s, &out))
        }
        Op::QuantizeToF16 => {
            let (s, v) = comps(m, arg(0)?)?;
            let out: Vec<u64> =
                v.iter().map(|&x| half::f16::from_f32(f32::from_bits(x as u32)).to_f32().to_bits() as u64).collect();
            Ok(pack(s, &out))
        }
        Op::SConvert | Op::UConvert | Op::FConvert | Op::SNegate | Op::Not | Op::LogicalNot => {
            let (s, v) = comps(m, arg(0)?)?;
            let rs = rshape?.scalar;
            let (wa, wr) = (width(s), width(rs));
            let out: Vec<u64> = v
                .iter()
                .map(|&x| match op {
                    Op::SConvert => mask(sext(x, wa) as u64, wr),
                    Op::UConvert => mask(x, wr),
                    Op::FConvert => fconvert(s, rs, x),
                    Op::SNegate => mask((sext(x, wa)).wrapping_neg() as u64, wr),
                    Op::Not => mask(!x, wr),
                    _ => (x == 0) as u64,
                })
                .collect();
            Ok(pack(rs, &out))
        }
        _ => binary(m, op, arg(0)?, arg(1)?, rshape?.scalar),
    }
}

/// A two-operand `OpSpecConstantOp` (integer arithmetic, shifts, bitwise and logical ops,
/// comparisons), component by component.
fn binary(m: &Module, op: Op, a: &Const, b: &Const, rs: Scalar) -> Result<Vec<u32>> {
    let (s, av) = comps(m, a)?;
    let (sb, bv) = comps(m, b)?;
    if av.len() != bv.len() {
        return Err(invalid!("OpSpecConstantOp {op:?} with mismatched component counts"));
    }
    let (w, wb) = (width(s), width(sb));
    let mut out = Vec::with_capacity(av.len());
    for (&x, &y) in av.iter().zip(&bv) {
        out.push(mask(binary_component(op, x, y, w, wb)?, width(rs)));
    }
    Ok(pack(rs, &out))
}

/// One component of [`binary`]: `x` of width `w`, `y` of width `wb`.
fn binary_component(op: Op, x: u64, y: u64, w: u32, wb: u32) -> Result<u64> {
    let (sx, sy) = (sext(x, w), sext(y, wb));
    Ok(match op {
        Op::IAdd => x.wrapping_add(y),
        Op::ISub => x.wrapping_sub(y),
        Op::IMul => x.wrapping_mul(y),
        Op::UDiv => mask(x, w).checked_div(mask(y, w)).unwrap_or(0),
        Op::SDiv => sx.checked_div(sy).unwrap_or(0) as u64,
        Op::UMod => mask(x, w).checked_rem(mask(y, w)).unwrap_or(0),
        Op::SRem => sx.checked_rem(sy).unwrap_or(0) as u64,
        Op::SMod => match sx.checked_rem(sy) {
            Some(r) if r != 0 && (r < 0) != (sy < 0) => (r + sy) as u64,
            Some(r) => r as u64,
            None => 0,
        },
        Op::ShiftLeftLogical => x.checked_shl(y as u32 % w).unwrap_or(0),
        Op::ShiftRightLogical => mask(x, w) >> (y as u32 % w),
        Op::ShiftRightArithmetic => (sx >> (y as u32 % w)) as u64,
        Op::BitwiseAnd | Op::LogicalAnd => x & y,
        Op::BitwiseOr | Op::LogicalOr => x | y,
        Op::BitwiseXor => x ^ y,
        Op::IEqual | Op::LogicalEqual => (mask(x, w) == mask(y, w)) as u64,
        Op::INotEqual | Op::LogicalNotEqual => (mask(x, w) != mask(y, w)) as u64,
        Op::ULessThan => (mask(x, w) < mask(y, w)) as u64,
        Op::ULessThanEqual => (mask(x, w) <= mask(y, w)) as u64,
        Op::UGreaterThan => (mask(x, w) > mask(y, w)) as u64,
        Op::UGreaterThanEqual => (mask(x, w) >= mask(y, w)) as u64,
        Op::SLessThan => (sx < sy) as u64,
        Op::SLessThanEqual => (sx <= sy) as u64,
        Op::SGreaterThan => (sx > sy) as u64,
        Op::SGreaterThanEqual => (sx >= sy) as u64,
        _ => return Err(unsupported!("OpSpecConstantOp {op:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_helpers() {
        assert_eq!(sext(0xFFFF_FFFF, 32), -1);
        assert_eq!(sext(0x7FFF_FFFF, 32), 0x7FFF_FFFF);
        assert_eq!(mask(u64::MAX, 32), 0xFFFF_FFFF);
        assert_eq!(pack(Scalar::I64, &[0x1_0000_0002]), vec![2, 1]);
        assert_eq!(pack(Scalar::Bool, &[7]), vec![1]);
    }

    #[test]
    fn spec_values_check_their_size() {
        assert_eq!(spec_value(3, &[1, 0, 0, 0], &[4]).unwrap(), 1);
        assert!(spec_value(3, &[1, 0], &[4]).unwrap_err().to_string().contains("specialization constant 3"));
        assert_eq!(spec_value(0, &[0xFF], &[1, 4]).unwrap(), 0xFF);
    }
}
