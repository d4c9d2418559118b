//! A ray query's private state on rdna2 (its layout is `abi::rdna2::query`: the model reads
//! it for the ray log): the ray as `Initialize` gave it, the walk's loop registers between
//! two proceeds, the candidate and committed records, and the short stack of node pointers.
//! Groups the loop keeps in registers are contiguous so they move with wide `LDP`/`STP`.

use crate::shader::emit::I;
use crate::shader::error::Result;
use crate::shader::lower::Lowerer;
use vortex_model::abi::isa::{MemSize, Op as Vx};

pub use vortex_model::abi::rdna2::query::*;

/// Loads `n` words from state word `at` into registers `dst ..`, widest accesses first.
pub fn load(l: &mut Lowerer<'_>, st: u16, at: u32, dst: u16, n: u32) {
    move_words(l, st, at, dst, n, true)
}

/// Stores registers `src .. src + n` at state word `at`.
pub fn store(l: &mut Lowerer<'_>, st: u16, at: u32, src: u16, n: u32) {
    move_words(l, st, at, src, n, false)
}

fn move_words(l: &mut Lowerer<'_>, st: u16, at: u32, r: u16, n: u32, load: bool) {
    let mut k = 0;
    while k < n {
        let (size, w) = match n - k {
            4.. => (MemSize::B128, 4),
            2 | 3 => (MemSize::B64, 2),
            _ => (MemSize::B32, 1),
        };
        let imm = 4 * (at + k);
        let i = if load {
            I::new(Vx::Ldp).size(size).dst(r + k as u16).a(st).imm(imm)
        } else {
            I::new(Vx::Stp).size(size).a(st).b(r + k as u16).imm(imm)
        };
        l.e.emit(i);
        k += w;
    }
}

/// `n` fresh registers loaded from state word `at`.
pub fn fetch(l: &mut Lowerer<'_>, st: u16, at: u32, n: u32) -> Result<u16> {
    let r = l.e.alloc(n)?;
    load(l, st, at, r, n);
    Ok(r)
}

/// Byte offset of query slot `q`'s state in private memory.
pub fn base(l: &mut Lowerer<'_>, q: u16) -> Result<u16> {
    l.scale(q, BYTES)
}
