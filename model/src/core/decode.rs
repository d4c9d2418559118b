//! Kernel decode: a kernel image is read from device memory once, decoded, validated and
//! cached under its `kernel_id`. Validation proves every register operand and branch target
//! in range, so the execute loop never indexes out of bounds.

use crate::abi::isa::{self, Instr, MemSize, Op, REG_NONE};
use crate::abi::kernel::{image, KernelHeader};
use crate::abi::rtu;
use crate::fault::{Fault, FaultKind};
use crate::mem::MemoryMap;

/// A decoded, validated kernel.
#[derive(Debug)]
pub struct DecodedKernel {
    pub header: KernelHeader,
    pub name: String,
    pub code: Vec<Instr>,
}

/// Largest kernel image the decoder accepts.
const MAX_INSTRS: u32 = 1 << 22;

impl DecodedKernel {
    /// Reads and decodes the image at `pc`.
    pub fn load(mem: &MemoryMap, pc: u64) -> Result<DecodedKernel, Fault> {
        let bad = |detail: String| Fault::new(FaultKind::BadKernel, format!("kernel image at {pc:#x}: {detail}"));
        let head: [u8; image::HEADER_BYTES] = mem.read_array(pc).map_err(|m| bad(m.to_string()))?;
        let header = KernelHeader::parse(&head).map_err(bad)?;
        if header.num_instrs == 0 || header.num_instrs > MAX_INSTRS {
            return Err(bad(format!("{} instructions", header.num_instrs)));
        }
        let mut bytes = vec![0u8; header.num_instrs as usize * isa::INSTR_BYTES];
        mem.read(pc + header.code_offset as u64, &mut bytes).map_err(|m| bad(m.to_string()))?;
        let code = isa::decode_all(&bytes).map_err(|e| bad(e.to_string()))?;
        let mut name = vec![0u8; header.name_len.min(256) as usize];
        if !name.is_empty() {
            mem.read(pc + header.name_offset as u64, &mut name).map_err(|m| bad(m.to_string()))?;
        }
        let k = DecodedKernel { name: String::from_utf8_lossy(&name).into_owned(), header, code };
        k.validate().map_err(bad)?;
        Ok(k)
    }

    /// Builds a decoded kernel straight from code (tests and tools).
    pub fn from_parts(header: KernelHeader, name: &str, code: Vec<Instr>) -> Result<DecodedKernel, Fault> {
        let k = DecodedKernel { header, name: name.to_string(), code };
        k.validate().map_err(|d| Fault::new(FaultKind::BadKernel, d))?;
        Ok(k)
    }

    fn validate(&self) -> Result<(), String> {
        let h = &self.header;
        let n = self.code.len() as u32;
        if h.entry >= n {
            return Err(format!("entry {} outside {} instructions", h.entry, n));
        }
        if h.num_queries > rtu::MAX_QUERIES {
            return Err(format!("{} ray queries (at most {})", h.num_queries, rtu::MAX_QUERIES));
        }
        if h.num_regs > REG_NONE as u32 {
            return Err(format!("{} registers", h.num_regs));
        }
        for (pc, i) in self.code.iter().enumerate() {
            let fail = |what: String| Err(format!("instruction {pc} ({}): {what}", isa::disasm(i)));
            for (r, width) in operand_widths(i) {
                if r == REG_NONE {
                    return fail("missing register operand".into());
                }
                if r as u32 + width > h.num_regs {
                    return fail(format!("register r{r} (+{width}) outside {} registers", h.num_regs));
                }
            }
            match i.op {
                Op::Jmp if i.imm >= n => return fail(format!("jump target {} out of range", i.imm)),
                Op::Bra if i.imm >= n || i.imm2 >= n || i.imm3 > n => {
                    return fail("branch target or reconvergence point out of range".into())
                }
                Op::Ldg | Op::Stg | Op::Ldl | Op::Stl | Op::Ldp | Op::Stp if MemSize::from_u8(i.modifier).is_none() => {
                    return fail(format!("bad memory size {}", i.modifier))
                }
                Op::Getw | Op::Getwf if i.imm + i.modifier.max(1) as u32 > rtu::SLOT_COUNT => {
                    return fail(format!("window slots {}..+{} out of range", i.imm, i.modifier))
                }
                Op::Csr if crate::abi::csr::name(i.imm).is_none() => return fail(format!("unknown CSR {:#x}", i.imm)),
                Op::Vote if isa::VoteOp::from_u8(i.modifier).is_none() => return fail("bad vote".into()),
                Op::Shfl if isa::ShflMode::from_u8(i.modifier).is_none() => return fail("bad shuffle mode".into()),
                Op::Red
                    if isa::RedOp::from_u8(i.modifier).is_none()
                        || i.imm & 3 == 3
                        || !((i.imm >> isa::RED_CLUSTER_SHIFT) & 0xFF).is_power_of_two()
                            && (i.imm >> isa::RED_CLUSTER_SHIFT) & 0xFF != 0 =>
                {
                    return fail("bad reduction".into())
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Registers an instruction reads or writes, with how many consecutive registers each
/// operand spans. `REG_NONE` marks an operand that is required but missing.
pub fn operand_widths(i: &Instr) -> Vec<(u16, u32)> {
    use Op::*;
    let opt = |r: u16, w: u32| if r == REG_NONE { None } else { Some((r, w)) };
    let mem = MemSize::from_u8(i.modifier).map(|m| m.regs() as u32).unwrap_or(1);
    let v: Vec<Option<(u16, u32)>> = match i.op {
        Nop | Exit | Jmp | Bar | Fence | Trap => vec![],
        Bra => vec![Some((i.a, 1))],
        Movi | Csr => vec![Some((i.dst, 1))],
        Mov | Not | Ineg | Iabs | Brev | Popc | Flsb | Fmsb | Ext | Fneg | Fabs | Fsqrt | Frsq | Frcp | Fround
        | Ffract | Fsign | F2i | F2u | I2f | U2f | F2h | H2f => vec![Some((i.dst, 1)), Some((i.a, 1))],
        Fsfu => vec![Some((i.dst, 1)), Some((i.a, 1)), opt(i.b, 1)],
        Sel | Ffma => vec![Some((i.dst, 1)), Some((i.a, 1)), Some((i.b, 1)), Some((i.c, 1))],
        Bfe => vec![Some((i.dst, 1)), Some((i.a, 1)), Some((i.b, 1)), Some((i.c, 1))],
        Bfi => vec![Some((i.dst, 1)), Some((i.a, 1)), Some((i.b, 1)), Some((i.c, 1)), Some((i.d, 1))],
        Iaddc | Isubb | Imulx => vec![Some((i.dst, 2)), Some((i.a, 1)), Some((i.b, 1))],
        Iadd64 | Isub64 | Imul64 | Udiv64 | Sdiv64 | Urem64 | Srem64 => {
            vec![Some((i.dst, 2)), Some((i.a, 2)), Some((i.b, 2))]
        }
        Shl64 | Shr64 | Sar64 => vec![Some((i.dst, 2)), Some((i.a, 2)), Some((i.b, 1))],
        Icmp64 => vec![Some((i.dst, 1)), Some((i.a, 2)), Some((i.b, 2))],
        L2f | Ul2f => vec![Some((i.dst, 1)), Some((i.a, 2))],
        F2l | F2ul => vec![Some((i.dst, 2)), Some((i.a, 1))],
        Iadd | Isub | Imul | Imulhi | Udiv | Sdiv | Urem | Srem | Smod | And | Or | Xor | Shl | Shr | Sar | Imin
        | Imax | Icmp | Fadd | Fsub | Fmul | Fdiv | Fmin | Fmax | Fcmp => {
            vec![Some((i.dst, 1)), Some((i.a, 1)), Some((i.b, 1))]
        }
        Ldg => vec![Some((i.dst, mem)), Some((i.a, 2))],
        Stg => vec![Some((i.a, 2)), Some((i.b, mem))],
        Ldl | Ldp => vec![Some((i.dst, mem)), Some((i.a, 1))],
        Stl | Stp => vec![Some((i.a, 1)), Some((i.b, mem))],
        Atomg | Atoml => {
            let w = if i.imm & 1 != 0 { 2 } else { 1 };
            let addr = if i.op == Atomg { 2 } else { 1 };
            vec![opt(i.dst, w), Some((i.a, addr)), opt(i.b, w), opt(i.c, w)]
        }
        Ild => vec![Some((i.dst, 4)), Some((i.a, 2)), Some((i.b, 3))],
        Ist => vec![Some((i.a, 2)), Some((i.b, 3)), Some((i.c, 4))],
        Iatom => vec![opt(i.dst, 1), Some((i.a, 2)), Some((i.b, 3)), Some((i.c, 1)), opt(i.d, 1)],
        Trace => vec![opt(i.dst, 1), Some((i.a, 1)), Some((i.b, rtu::ray::REGS))],
        Wait => vec![Some((i.dst, 1)), Some((i.a, 1))],
        Cont => vec![Some((i.a, 1)), Some((i.b, 1)), Some((i.c, 1))],
        Getw | Getwf => vec![Some((i.dst, i.modifier.max(1) as u32)), Some((i.a, 1))],
        Vote | Ballot => vec![Some((i.dst, 1)), Some((i.a, 1))],
        Shfl => vec![Some((i.dst, 1)), Some((i.a, 1)), Some((i.b, 1))],
        Red => {
            let w = if i.imm & isa::RED_WIDE != 0 { 2 } else { 1 };
            vec![Some((i.dst, w)), Some((i.a, w))]
        }
        Dadd | Dsub | Dmul | Ddiv | Dmin | Dmax => vec![Some((i.dst, 2)), Some((i.a, 2)), Some((i.b, 2))],
        Dfma => vec![Some((i.dst, 2)), Some((i.a, 2)), Some((i.b, 2)), Some((i.c, 2))],
        Dcmp => vec![Some((i.dst, 1)), Some((i.a, 2)), Some((i.b, 2))],
        Dsqrt | Drsq | Drcp | Dround | Dfract | D2l | D2ul | L2d | Ul2d => vec![Some((i.dst, 2)), Some((i.a, 2))],
        F2d | I2d | U2d => vec![Some((i.dst, 2)), Some((i.a, 1))],
        D2f | D2i | D2u | D2h => vec![Some((i.dst, 1)), Some((i.a, 2))],
    };
    v.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::kernel::build_image;
    use crate::mem::AddressSpace;

    fn header(num_regs: u32) -> KernelHeader {
        KernelHeader { kernel_id: 1, ..KernelHeader::new(num_regs, [1, 1, 1]) }
    }

    #[test]
    fn loads_from_memory_and_rejects_bad_operands() {
        let space = AddressSpace::new();
        let code = vec![
            Instr::r(Op::Movi, 0, 0, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 5),
            Instr::r(Op::Exit, 0, REG_NONE, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 0),
        ];
        let img = build_image(header(1), &code, "k");
        let r = space.allocate(img.len() as u64).unwrap();
        let m = space.snapshot();
        m.write(r.base, &img).unwrap();
        let k = DecodedKernel::load(&m, r.base).unwrap();
        assert_eq!(k.code.len(), 2);
        assert_eq!(k.name, "k");

        // A register past num_regs is refused at decode, not at execute.
        let bad = vec![Instr::r(Op::Mov, 0, 3, 0, REG_NONE, REG_NONE, REG_NONE, 0)];
        let err = DecodedKernel::from_parts(header(2), "bad", bad).unwrap_err();
        assert!(err.detail.contains("r3"), "{}", err.detail);

        // Garbage at the PC is a BadKernel fault.
        m.write(r.base, &[0xAB; 16]).unwrap();
        assert_eq!(DecodedKernel::load(&m, r.base).unwrap_err().kind, FaultKind::BadKernel);
        assert!(DecodedKernel::load(&m, 0x10).is_err());
    }

    #[test]
    fn branch_targets_are_checked() {
        let code = vec![Instr::bra(0, 5, 0, 1)];
        assert!(DecodedKernel::from_parts(header(1), "b", code).is_err());
    }
}
