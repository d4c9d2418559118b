//! Zero-initialized Workgroup variables (`shaderZeroInitializeWorkgroupMemory`: an
//! `OpConstantNull` initializer). LMEM is not cleared between workgroups, so the kernel
//! clears it: in the prologue the workgroup's invocations share the words — invocation `i`
//! stores zero to words `i`, `i + W`, `i + 2W`, ... (clamped to the last word, which a few
//! then store twice: harmless) — and a workgroup barrier orders the stores before any use.
//! Straight-line code with a fixed handful of registers, whatever the variable's size.

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::Result;
use vortex_model::abi::isa::{MemSize, Op as Vx, BAR_MEM_LMEM};

impl Lowerer<'_> {
    /// Clears `words` 32-bit words of LMEM at `base + off` (in the prologue).
    pub(super) fn zero_workgroup_words(&mut self, base: u16, off: u32, words: u32) -> Result<()> {
        if words == 0 {
            return Ok(());
        }
        let group = self.local_size.iter().product::<u32>().max(1);
        let (last, zero, two, step) = (self.imm(words - 1)?, self.imm(0)?, self.imm(2)?, self.imm(group)?);
        self.in_prologue(|l| {
            let cur = l.e.alloc(1)?;
            super::stage::local_index(l, cur)?;
            let t = l.e.alloc(1)?;
            for round in 0..words.div_ceil(group) {
                if round > 0 {
                    l.e.emit(I::new(Vx::Iadd).dst(cur).a(cur).b(step));
                }
                l.e.emit(I::new(Vx::Imin).dst(t).a(cur).b(last));
                l.e.emit(I::new(Vx::Shl).dst(t).a(t).b(two));
                l.e.emit(I::new(Vx::Iadd).dst(t).a(t).b(base));
                l.e.emit(I::new(Vx::Stl).size(MemSize::B32).a(t).b(zero).imm(off));
            }
            l.e.emit(I::new(Vx::Bar).mem(BAR_MEM_LMEM));
            Ok(())
        })
    }
}
