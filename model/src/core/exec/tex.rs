//! The texture unit: image loads, stores and atomics through the image's descriptor in global
//! memory (the storage-image path), and `TEX` (sampling, gathers, fetches, queries), which
//! the core's texture unit (`crate::tex`) executes.

use super::lsu::global_atomic32;
use super::{illegal, lane_fault, mem_fault, not_executed, pair};
use crate::abi::format;
use crate::abi::isa::{AtomicOp, Instr, Op, REG_NONE};
use crate::abi::kernel::{desc, ImageDesc};
use crate::fault::Fault;
use crate::mem::MemoryMap;
use crate::tex::{Error as TexError, TexUnit};

/// Reads the image descriptor at `addr`, checking its format.
fn image_desc(mem: &MemoryMap, addr: u64, i: &Instr) -> Result<(ImageDesc, &'static format::Format), Fault> {
    let raw: [u8; desc::BYTES] = mem.read_array(addr)?;
    let d = ImageDesc::parse(&raw);
    let fmt = match format::lookup(d.format) {
        Some(f) => f,
        // A null descriptor (robustness2): a view of no texels, so every access misses it
        // (loads read zero, stores and atomics are dropped); R32_UINT lets atomics through.
        None if d == ImageDesc::default() && mem.null_descriptor() => {
            format::lookup(format::R32_UINT).expect("R32_UINT is a storage format")
        }
        None => {
            return Err(illegal(
                i,
                &format!("image descriptor at {addr:#x} has format {} which is not a storage format", d.format),
            ))
        }
    };
    Ok((d, fmt))
}

/// Executes image op `i` for the lanes in `mask`, lane by lane in lane order.
pub(super) fn execute(
    i: &Instr,
    regs: &mut [u32],
    nt: usize,
    mask: u32,
    mem: &MemoryMap,
    unit: &mut TexUnit,
) -> Result<(), Fault> {
    if i.op == Op::Tex {
        return crate::tex::execute(i, regs, nt, mask, mem, unit).map_err(|e| match e {
            TexError::Memory { lane, fault } => mem_fault(fault, lane),
            TexError::Illegal { lane, what } => lane_fault(illegal(i, &what), lane),
        });
    }
    if !matches!(i.op, Op::Ild | Op::Ist | Op::Iatom) {
        return Err(not_executed(i));
    }
    let (d, a, b, c) = (i.dst, i.a, i.b, i.c);
    let mut cached: Option<(u64, ImageDesc, &'static format::Format)> = None;
    let mut todo = mask;
    while todo != 0 {
        let l = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let daddr = pair(regs, a as usize, nt, l);
        let (desc, fmt) = match cached {
            Some((addr, dsc, fm)) if addr == daddr => (dsc, fm),
            _ => {
                let (dsc, fm) = image_desc(mem, daddr, i).map_err(|e| lane_fault(e, l))?;
                cached = Some((daddr, dsc, fm));
                (dsc, fm)
            }
        };
        let coord = |k: usize| regs[(b as usize + k) * nt + l] as i32;
        let off = desc.texel_offset(coord(0), coord(1), coord(2));
        let tb = fmt.texel_bytes() as usize;
        match i.op {
            Op::Ild => {
                let v = match off {
                    Some(o) => {
                        let mut t = [0u8; 16];
                        mem.read(desc.addr + o, &mut t[..tb]).map_err(|m| mem_fault(m, l))?;
                        format::decode_texel(fmt, &t[..tb])
                    }
                    // Out-of-view reads return zero, like robust image access.
                    None => [0; 4],
                };
                for k in 0..4 {
                    regs[(d as usize + k) * nt + l] = v[k];
                }
            }
            Op::Ist => {
                if let Some(o) = off {
                    let v = [0, 1, 2, 3].map(|k| regs[(c as usize + k) * nt + l]);
                    let mut t = [0u8; 16];
                    format::encode_texel(fmt, v, &mut t[..tb]);
                    mem.write(desc.addr + o, &t[..tb]).map_err(|m| mem_fault(m, l))?;
                }
            }
            _ => {
                if tb != 4 || !fmt.is_integer() {
                    return Err(lane_fault(illegal(i, "image atomics need an R32 integer format"), l));
                }
                let op = AtomicOp::from_u8(i.modifier).ok_or_else(|| illegal(i, "bad atomic op"))?;
                let old = match off {
                    Some(o) => {
                        let cv = if i.d == REG_NONE { 0 } else { regs[i.d as usize * nt + l] };
                        global_atomic32(mem, desc.addr + o, op, regs[c as usize * nt + l], cv)
                            .map_err(|m| mem_fault(m, l))?
                    }
                    None => 0,
                };
                if d != REG_NONE {
                    regs[d as usize * nt + l] = old;
                }
            }
        }
    }
    Ok(())
}
