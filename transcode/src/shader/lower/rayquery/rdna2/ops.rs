//! Short forms of the VX the traversal loop is made of (each into a fresh register).

use crate::shader::emit::{Label, I};
use crate::shader::error::Result;
use crate::shader::lower::Lowerer;
use vortex_model::abi::isa::{FloatCond, IntCond, MemSize, Op as Vx};

pub type R = Result<u16>;

pub fn k(l: &mut Lowerer<'_>, v: u32) -> R {
    l.imm(v)
}

pub fn op(l: &mut Lowerer<'_>, o: Vx, a: u16, b: u16) -> R {
    l.e.op2(o, a, b)
}

/// `a <o> v` with an immediate `v`.
pub fn opk(l: &mut Lowerer<'_>, o: Vx, a: u16, v: u32) -> R {
    let b = l.imm(v)?;
    l.e.op2(o, a, b)
}

pub fn icmp(l: &mut Lowerer<'_>, c: IntCond, a: u16, b: u16) -> R {
    l.e.op2(I::new(Vx::Icmp).cond(c), a, b)
}

pub fn icmpk(l: &mut Lowerer<'_>, c: IntCond, a: u16, v: u32) -> R {
    let b = l.imm(v)?;
    icmp(l, c, a, b)
}

pub fn fcmp(l: &mut Lowerer<'_>, c: FloatCond, a: u16, b: u16) -> R {
    l.e.op2(I::new(Vx::Fcmp).cond(c), a, b)
}

pub fn sel(l: &mut Lowerer<'_>, p: u16, a: u16, b: u16) -> R {
    l.e.op3(Vx::Sel, p, a, b)
}

/// `(a & v) != 0`.
pub fn bit(l: &mut Lowerer<'_>, a: u16, v: u32) -> R {
    let m = opk(l, Vx::And, a, v)?;
    icmpk(l, IntCond::Ne, m, 0)
}

/// `a + off` for an address pair `a` and a 32-bit offset register.
pub fn add64(l: &mut Lowerer<'_>, a: u16, off: u16) -> R {
    let p = l.e.alloc(2)?;
    l.e.mov(p, off);
    l.e.movi(p + 1, 0);
    l.e.op64(Vx::Iadd64, a, p)
}

/// `n` words of global memory at `addr + imm` into fresh registers.
pub fn ldg(l: &mut Lowerer<'_>, addr: u16, imm: u32, n: u32) -> R {
    let d = l.e.alloc(n)?;
    ldg_into(l, d, addr, imm, n);
    Ok(d)
}

pub fn ldg_into(l: &mut Lowerer<'_>, d: u16, addr: u16, imm: u32, n: u32) {
    let mut w = 0;
    while w < n {
        let (size, step) = match n - w {
            4.. => (MemSize::B128, 4),
            2 | 3 => (MemSize::B64, 2),
            _ => (MemSize::B32, 1),
        };
        l.e.emit(I::new(Vx::Ldg).size(size).dst(d + w as u16).a(addr).imm(imm + 4 * w));
        w += step;
    }
}

/// `dst = v` into an existing register.
pub fn set(l: &mut Lowerer<'_>, dst: u16, v: u32) {
    l.e.movi(dst, v);
}

/// A new block named after the SPIR-V block being lowered.
pub fn block(l: &mut Lowerer<'_>, part: &str) -> Label {
    let name = format!("%{} rq.{part}", l.block);
    l.e.label(name)
}
