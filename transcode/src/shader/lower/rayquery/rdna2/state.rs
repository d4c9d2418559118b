//! A ray query's private state on rdna2: the ray as `Initialize` gave it, the walk's loop
//! registers between two proceeds, the candidate and committed records, and the short
//! stack of node pointers. Offsets are in words from the slot's state base; groups the
//! loop keeps in registers are contiguous so they move with wide `LDP`/`STP`.

use crate::shader::emit::I;
use crate::shader::error::Result;
use crate::shader::lower::Lowerer;
use vortex_model::abi::isa::{MemSize, Op as Vx};

/// Ray flags, cull mask, tmin (as `Initialize` gave them).
pub const FLAGS: u32 = 0;
pub const CULL: u32 = 1;
pub const TMIN: u32 = 2;
pub const WORLD_ORG: u32 = 3;
pub const WORLD_DIR: u32 = 6;
/// The top level's descriptor (4 words) and node base (a pair), `TOP_DESC .. +6`.
pub const TOP_DESC: u32 = 9;

// The loop registers: saved when proceed returns, loaded when it starts.
/// The current level's descriptor and node base (6 words).
pub const DESC: u32 = 15;
/// The `ISECT` ray operand of the current level (`abi::rdna2::ray`, 11 words): node,
/// extent (the committed t, or tmax), origin, direction, inverse direction.
pub const RAY: u32 = 21;
/// The instance being walked (zero outside one): node address (pair), index, custom
/// index, SBT offset and flags word (`inst::SBT_FLAGS`).
pub const INST: u32 = 32;
pub const INST_WORDS: u32 = 5;
/// Stack depth, stack depth where the instance's BLAS began (`NO_LEVEL` in the top
/// level), node visits so far, done (no more candidates).
pub const CTL: u32 = 37;
pub const CTL_WORDS: u32 = 4;
pub const SP: u32 = 0;
pub const LEVEL: u32 = 1;
pub const STEPS: u32 = 2;
pub const DONE: u32 = 3;
pub const NO_LEVEL: u32 = u32::MAX;

/// An intersection record (candidate or committed), word offsets within it.
pub mod rec {
    pub const T: u32 = 0;
    /// Barycentrics: U then V.
    pub const U: u32 = 1;
    pub const KIND: u32 = 3;
    pub const FRONT: u32 = 4;
    pub const PRIM: u32 = 5;
    pub const GEOM: u32 = 6;
    /// Instance index, custom index, SBT offset (the order of the loop's `INST` + 2).
    pub const INST_ID: u32 = 7;
    pub const CUSTOM: u32 = 8;
    pub const SBT: u32 = 9;
    pub const AABB_OPAQUE: u32 = 10;
    pub const OBJ_ORG: u32 = 11;
    pub const OBJ_DIR: u32 = 14;
    /// The instance node's address (pair; 0 outside an instance): the matrices.
    pub const INST_ADDR: u32 = 17;
    /// The triangle node's address (pair) and the triangle's index in it: position fetch.
    pub const TRI_ADDR: u32 = 19;
    pub const TRI_K: u32 = 21;
    pub const WORDS: u32 = 22;
}
pub const CAND: u32 = 41;
pub const COMM: u32 = CAND + rec::WORDS;
/// The short stack: node pointers, `STACK_DEPTH` of them.
pub const STACK: u32 = COMM + rec::WORDS;
/// Enough for the deepest walk the bench scenes need (17, `docs/RDNA2.md`) plus a BLAS
/// under a TLAS; a push past it is a fault (`TrapCode::RayQueryStack`), never a lost node.
pub const STACK_DEPTH: u32 = 64;
pub const BYTES: u32 = 4 * (STACK + STACK_DEPTH);

/// Node visits one query may make before it faults (`TrapCode::RayQuerySteps`): far more
/// than any finite structure needs (each node is visited at most once per proceed chain).
pub const STEP_LIMIT: u32 = 1 << 24;

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
