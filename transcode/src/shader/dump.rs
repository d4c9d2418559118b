//! Kernel listings for `VORTEX_DUMP=kernels`.

use super::CompiledKernel;
use std::fmt::Write as _;
use vortex_model::abi::isa::{disasm, Op, REG_NONE};

pub(crate) fn render(k: &CompiledKernel) -> String {
    let mut s = String::new();
    let [x, y, z] = k.local_size;
    let _ = writeln!(
        s,
        "; kernel `{}`: local size {x}x{y}x{z}, {} instructions, {} registers, {} ray queries, \
         {} private bytes/lane, {} LMEM bytes/CTA",
        k.entry_name,
        k.code.len(),
        k.num_regs,
        k.num_queries,
        k.private_bytes,
        k.lmem_bytes
    );
    // Register (of lowering) -> the name of the range that contains it (first registered
    // wins).
    let nregs = k.debug.regs.iter().map(|n| n.first as usize + n.count as usize).max().unwrap_or(0);
    let mut names: Vec<Option<(u16, &str)>> = vec![None; nregs];
    for n in &k.debug.regs {
        for r in n.first as usize..(n.first as usize + n.count as usize).min(names.len()) {
            if names[r].is_none() {
                names[r] = Some((n.first, &n.name));
            }
        }
    }
    let mut blocks = k.debug.blocks.iter().peekable();
    for (pc, i) in k.code.iter().enumerate() {
        while let Some((start, name)) = blocks.peek() {
            if *start as usize > pc {
                break;
            }
            let _ = writeln!(s, "@{start}: ; {name}");
            blocks.next();
        }
        let text = disasm(i);
        let dst = match i.op {
            Op::Bra | Op::Stg | Op::Stl | Op::Stp | Op::Ist | Op::Cont | Op::Trace => REG_NONE,
            _ => i.dst,
        };
        // The value the destination holds, named in the registers of lowering.
        let virt = match k.debug.virt_dst.get(pc) {
            Some(&v) if dst != REG_NONE => v,
            _ => dst,
        };
        let note = names.get(virt as usize).copied().flatten().map(|(first, name)| {
            if first == virt {
                format!("r{dst} = {name}")
            } else {
                format!("r{dst} = {name}+{}", virt - first)
            }
        });
        match note {
            Some(n) => {
                let _ = writeln!(s, "  {pc:5}  {text:<44} ; {n}");
            }
            None => {
                let _ = writeln!(s, "  {pc:5}  {text}");
            }
        }
    }
    s
}
