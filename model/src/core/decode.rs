//! Kernel decode: a kernel image is read from device memory once, decoded, validated and
//! cached under its `kernel_id`. Validation proves every register operand and branch target
//! in range, so the execute loop never indexes out of bounds.

use crate::abi::isa::{self, Instr, Op, REG_NONE};
use crate::abi::kernel::{image, region, CodeRegion, KernelHeader};
use crate::abi::rtu;
use crate::fault::{Fault, FaultKind};
use crate::mem::MemoryMap;

/// A decoded, validated kernel.
#[derive(Debug)]
pub struct DecodedKernel {
    pub header: KernelHeader,
    pub name: String,
    pub code: Vec<Instr>,
    /// Registers some lane may read before writing them ([`read_before_write`]): the rows a
    /// warp launch zeroes. Every other register is written by each lane before it is read.
    pub zeroed_regs: Vec<u16>,
    /// The instruction ranges the compiler marked (`abi::kernel::region`), for timed mode's
    /// counters.
    pub regions: Vec<CodeRegion>,
    /// The kernel's JIT code, compiled when a core first runs it in functional mode.
    pub jit: crate::jit::Cache,
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
        let regions = if header.flags & image::FLAG_REGIONS != 0 {
            let at = pc + region::table_offset((header.name_offset + header.name_len) as usize) as u64;
            let count: [u8; 4] = mem.read_array(at).map_err(|m| bad(m.to_string()))?;
            let count = u32::from_le_bytes(count);
            if count > region::MAX {
                return Err(bad(format!("{count} code regions (at most {})", region::MAX)));
            }
            let mut table = vec![0u8; count as usize * region::ENTRY_BYTES];
            mem.read(at + 4, &mut table).map_err(|m| bad(m.to_string()))?;
            CodeRegion::parse_all(&table, count, header.num_instrs).map_err(bad)?
        } else {
            Vec::new()
        };
        let mut k = DecodedKernel {
            name: String::from_utf8_lossy(&name).into_owned(),
            header,
            code,
            zeroed_regs: Vec::new(),
            regions,
            jit: Default::default(),
        };
        k.validate().map_err(bad)?;
        k.zeroed_regs = read_before_write(&k.code, k.header.entry, k.header.num_regs);
        Ok(k)
    }

    /// Builds a decoded kernel straight from code (tests and tools).
    pub fn from_parts(header: KernelHeader, name: &str, code: Vec<Instr>) -> Result<DecodedKernel, Fault> {
        let mut k = DecodedKernel {
            header,
            name: name.to_string(),
            code,
            zeroed_regs: Vec::new(),
            regions: Vec::new(),
            jit: Default::default(),
        };
        k.validate().map_err(|d| Fault::new(FaultKind::BadKernel, d))?;
        k.zeroed_regs = read_before_write(&k.code, k.header.entry, k.header.num_regs);
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
            let m = i.op.modifier();
            if let Some(what) = m.checked_at_decode().filter(|_| !m.accepts(i.modifier)) {
                return fail(format!("bad {what} {}", i.modifier));
            }
            match i.op {
                Op::Jmp if i.imm >= n => return fail(format!("jump target {} out of range", i.imm)),
                Op::Bra if i.imm >= n || i.imm2 >= n || i.imm3 > n => {
                    return fail("branch target or reconvergence point out of range".into())
                }
                Op::Getw | Op::Getwf if i.imm + i.modifier.max(1) as u32 > rtu::SLOT_COUNT => {
                    return fail(format!("window slots {}..+{} out of range", i.imm, i.modifier))
                }
                Op::Csr if crate::abi::csr::name(i.imm).is_none() => return fail(format!("unknown CSR {:#x}", i.imm)),
                Op::Red
                    if i.imm & 3 == 3
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
/// operand spans ([`Instr::operands`], from the ISA table). `REG_NONE` marks an operand that
/// is required but missing.
pub fn operand_widths(i: &Instr) -> Vec<(u16, u32)> {
    i.operands().iter().map(|o| (o.reg, o.width)).collect()
}

/// The registers some lane may read before it has written them: those live on entry to the
/// kernel, by backward liveness over the instruction graph (fall-through, JMP, both BRA
/// targets; EXIT and TRAP end a path). Each lane executes a path of that graph (the
/// reconvergence stack only interleaves the lanes' paths, and a lane resumes at a
/// reconvergence point where its own path arrived), and an instruction reads only the
/// registers of its active lanes (a shuffle reads other lanes active at the same
/// instruction). So a register outside this set is written by every lane before that lane
/// reads it, and a warp launch need not zero it: the kernel cannot tell.
///
/// Reads are every register operand but the destination ([`Instr::operands`]); writes are
/// only the destinations [`full_write`] knows every active lane writes (fewer writes can
/// only add registers). A kernel too large to analyse cheaply gets every register.
pub fn read_before_write(code: &[Instr], entry: u32, num_regs: u32) -> Vec<u16> {
    let all = || (0..num_regs.min(REG_NONE as u32) as u16).collect::<Vec<u16>>();
    let words = (num_regs as usize).div_ceil(64);
    let n = code.len();
    if words == 0 || n * words > 1 << 22 || entry as usize >= n {
        return all();
    }
    let set = |bits: &mut [u64], r: u16, width: u32| {
        for k in r as usize..r as usize + width as usize {
            if k < num_regs as usize {
                bits[k / 64] |= 1 << (k % 64);
            }
        }
    };
    // Per instruction: registers read, registers written by every active lane.
    let mut uses = vec![0u64; n * words];
    let mut defs = vec![0u64; n * words];
    for (pc, i) in code.iter().enumerate() {
        for o in i.operands().iter().filter(|o| !o.write && o.reg != REG_NONE) {
            set(&mut uses[pc * words..][..words], o.reg, o.width);
        }
        if let Some(width) = full_write(i) {
            if i.dst != REG_NONE {
                set(&mut defs[pc * words..][..words], i.dst, width);
            }
        }
    }
    let successors = |pc: usize| -> [Option<usize>; 2] {
        let i = &code[pc];
        let next = (pc + 1 < n).then_some(pc + 1);
        match i.op {
            Op::Exit | Op::Trap => [None, None],
            Op::Jmp => [Some(i.imm as usize), None],
            Op::Bra => [Some(i.imm as usize), Some(i.imm2 as usize)],
            _ => [next, None],
        }
    };
    // live[pc]: registers some path from pc may read before writing.
    let mut live = vec![0u64; n * words];
    let mut out = vec![0u64; words];
    for _pass in 0..10_000 {
        let mut changed = false;
        for pc in (0..n).rev() {
            out.fill(0);
            for s in successors(pc).into_iter().flatten() {
                if s < n {
                    for (o, l) in out.iter_mut().zip(&live[s * words..][..words]) {
                        *o |= l;
                    }
                }
            }
            for k in 0..words {
                let v = uses[pc * words + k] | (out[k] & !defs[pc * words + k]);
                if v != live[pc * words + k] {
                    live[pc * words + k] = v;
                    changed = true;
                }
            }
        }
        if !changed {
            let at = &live[entry as usize * words..][..words];
            return (0..num_regs as usize).filter(|&r| at[r / 64] >> (r % 64) & 1 != 0).map(|r| r as u16).collect();
        }
    }
    all()
}

/// How many registers from `dst` the instruction writes in every lane active at it, when
/// it completes, for the ops the ISA table marks so ([`isa::OperandSpec::full`]; `None`:
/// assume no write).
pub(crate) fn full_write(i: &Instr) -> Option<u32> {
    i.operands().dst().filter(|o| o.full).map(|o| o.width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::isa::MemSize;
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

    fn r(op: Op, dst: u16, a: u16, b: u16) -> Instr {
        Instr::r(op, 0, dst, a, b, REG_NONE, REG_NONE, 0)
    }

    fn exit() -> Instr {
        r(Op::Exit, REG_NONE, REG_NONE, REG_NONE)
    }

    /// The registers a launch zeroes: read somewhere before every path from the entry wrote
    /// them, through branches, loops and partial writes.
    #[test]
    fn read_before_write_finds_registers_read_first() {
        let movi = |d: u16| Instr::r(Op::Movi, 0, d, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 7);
        // Straight line: r0 written first, r2 read first; r1 only written.
        let k = [movi(0), r(Op::Iadd, 1, 0, 2), exit()];
        assert_eq!(read_before_write(&k, 0, 4), [2]);
        // A register written on one side of a branch and read after it; the predicate.
        let k = [
            Instr::bra(0, 1, 3, 3),
            movi(1),
            Instr { imm: 3, ..r(Op::Jmp, REG_NONE, REG_NONE, REG_NONE) },
            r(Op::Mov, 2, 1, REG_NONE),
            exit(),
        ];
        assert_eq!(read_before_write(&k, 0, 3), [0, 1]);
        // Written on both sides: nothing but the predicate.
        let k = [
            Instr::bra(0, 1, 3, 4),
            movi(1),
            Instr { imm: 4, ..r(Op::Jmp, REG_NONE, REG_NONE, REG_NONE) },
            movi(1),
            r(Op::Mov, 2, 1, REG_NONE),
            exit(),
        ];
        assert_eq!(read_before_write(&k, 0, 3), [0]);
        // A loop accumulator read before its first write; the counter written before the loop.
        let k = [movi(0), r(Op::Iadd, 1, 1, 0), Instr::bra(1, 1, 3, 3), exit()];
        assert_eq!(read_before_write(&k, 0, 2), [1]);
        // The entry need not be instruction 0; code before it does not count.
        let k = [movi(1), exit(), r(Op::Mov, 0, 1, REG_NONE), exit()];
        assert_eq!(read_before_write(&k, 2, 2), [1]);
        // Multi-register writes cover their width (a 128-bit load, a 3-word GETW); a write
        // the analysis does not trust (an atomic's old value) is no write.
        let ldg = Instr::r(Op::Ldg, MemSize::B128 as u8, 2, 0, REG_NONE, REG_NONE, REG_NONE, 0);
        let getw = Instr::r(Op::Getw, 3, 6, 9, REG_NONE, REG_NONE, REG_NONE, 0);
        let atom = Instr::r(Op::Atomg, 0, 10, 0, 9, REG_NONE, REG_NONE, 0);
        let k = [movi(0), movi(1), movi(9), ldg, getw, atom, r(Op::Fadd, 11, 5, 8), r(Op::Fadd, 11, 10, 2), exit()];
        assert_eq!(read_before_write(&k, 0, 12), [10]);
        // Reading a register past an EXIT or TRAP on the only path does not count.
        let k = [exit(), r(Op::Mov, 0, 1, REG_NONE)];
        assert_eq!(read_before_write(&k, 0, 2), Vec::<u16>::new());
    }
}
