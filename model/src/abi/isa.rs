//! The VX kernel ISA.
//!
//! A SIMT ISA in the spirit of PTX: virtual enough that the SPIR-V front end needs no
//! register allocator, concrete enough to time. Every instruction is 16 bytes, little
//! endian, in one of two formats:
//!
//! ```text
//! R (everything but BRA):  op:u8 | mod:u8 | dst:u16 | a:u16 | b:u16 | c:u16 | d:u16 | imm:u32
//! B (BRA):                 op:u8 | mod:u8 | pred:u16 | taken:u32 | not_taken:u32 | reconv:u32
//! ```
//!
//! Registers are per-lane, 32 bits wide; a kernel declares how many it uses. 64-bit values
//! (addresses, 64-bit integers) occupy an aligned-free *pair* `rN` (low word), `rN+1` (high
//! word). Vector operands (`LDG.b128`, image texels, the TRACE ray) occupy consecutive
//! registers starting at the named one.
//!
//! Control flow is explicit SIMT: `BRA` carries its reconvergence point (the immediate
//! post-dominator of the branch, which for structured SPIR-V is the construct's merge block),
//! and the core keeps a reconvergence stack (see `docs/ISA.md`). Branch targets and
//! reconvergence points are instruction indices within the kernel.
//!
//! **The opcode table below is the one statement of every op's static facts**: value,
//! mnemonic, timing class, executing unit, format, what `mod` holds, and which register
//! fields it reads or writes at which width ([`Signature`]). Decode's validation, the
//! zeroing analysis, timed mode's scoreboard and the shader optimiser all derive from it
//! ([`Instr::operands`], [`Instr::effect_free`]); adding an op is one table line plus its
//! semantics in the executing unit's module of `core::exec`.

use std::fmt::Write as _;

/// "No register" marker in an operand field.
pub const REG_NONE: u16 = 0xFFFF;
/// Bytes per encoded instruction.
pub const INSTR_BYTES: usize = 16;

/// What the timed model charges an instruction for (seed 000 reuses the FPU's FMA/DIV cores;
/// the classes mirror Vortex's functional units).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// Branches, barriers, exit.
    Ctrl,
    /// Integer and logic, moves, compares, FP min/max/abs/neg/compare/convert.
    Alu,
    /// FP add/mul/fma.
    Fma,
    /// Integer and FP divide, remainder, square root, reciprocals.
    Div,
    /// Transcendentals.
    Sfu,
    /// Loads, stores, atomics (global, LMEM, private).
    Lsu,
    /// Image load/store and sampling (texture-unit path).
    Tex,
    /// Ray-tracing unit ops.
    Rtu,
    /// CSR reads.
    Csr,
    /// Cross-lane ops (vote, ballot, shuffle, reductions and scans): the warp's lanes
    /// exchange values through the warp's own datapath, no memory involved.
    Warp,
}

/// The unit that executes an op: what the core's execute stage dispatches to (one module of
/// `core::exec` each). Timing is by [`OpClass`], which splits the divider out of the ALU
/// and FPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Integer and logic ops, moves, selects, 64-bit integer ops.
    Alu,
    /// f32 and f64 arithmetic, compares, min/max, rounding, conversions.
    Fpu,
    /// Transcendentals.
    Sfu,
    /// Global, LMEM and private loads, stores and atomics.
    Lsu,
    /// Image loads, stores and atomics; sampling.
    Tex,
    /// The output merger: a fragment's exports (`EXP`).
    Om,
    /// Ray-query ops (the core's RTU front end).
    Rtu,
    /// The rdna2 architecture's node-intersection unit (`crate::isect`), on the texture path.
    Isect,
    /// Cross-lane ops.
    Warp,
    /// Branches, barriers, exit, traps.
    Ctrl,
    /// CSR reads.
    Csr,
}

impl Op {
    /// The ops whose effects helper lanes (fragment quad pixels outside the primitive, or
    /// demoted) do not have: global stores and atomics, image stores and atomics, exports.
    /// Everything else, loads included, runs on them.
    pub const fn skips_helper_lanes(self) -> bool {
        matches!(self, Op::Stg | Op::Atomg | Op::Ist | Op::Iatom | Op::Exp)
    }
}

impl Unit {
    /// True for the units whose ops have no effect but their destination (no memory,
    /// control-flow or ray-tracing state).
    pub const fn effect_free(self) -> bool {
        matches!(self, Unit::Alu | Unit::Fpu | Unit::Sfu | Unit::Csr | Unit::Warp)
    }
}

/// Operand format of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    R,
    B,
}

/// What an op's `mod` byte holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Modifier {
    /// Nothing, or flags every value of which is accepted (`BAR`'s memory scopes).
    Any,
    /// 1 = signed, anything else unsigned.
    Signed,
    IntCond,
    FloatCond,
    Round,
    SfuFunc,
    MemSize,
    AtomicOp,
    VoteOp,
    ShflMode,
    RedOp,
    /// `EXT`'s source width in bits, 1..=31.
    ExtBits,
    /// `GETW`'s slot count (0 reads one); decode checks it against the slot range.
    Count,
    /// A texture-unit op (`super::gfx::tex::op`).
    TexOp,
    /// An output-merger export target (`super::gfx::export`).
    Export,
    /// A derivative kind (`super::gfx::deriv`).
    Deriv,
}

impl Modifier {
    /// Whether the device accepts `m` (an op with a value it does not accept faults).
    pub const fn accepts(self, m: u8) -> bool {
        match self {
            Modifier::Any | Modifier::Signed | Modifier::Count => true,
            Modifier::IntCond => IntCond::from_u8(m).is_some(),
            Modifier::FloatCond => FloatCond::from_u8(m).is_some(),
            Modifier::Round => Round::from_u8(m).is_some(),
            Modifier::SfuFunc => SfuFunc::from_u8(m).is_some(),
            Modifier::MemSize => MemSize::from_u8(m).is_some(),
            Modifier::AtomicOp => AtomicOp::from_u8(m).is_some(),
            Modifier::VoteOp => VoteOp::from_u8(m).is_some(),
            Modifier::ShflMode => ShflMode::from_u8(m).is_some(),
            Modifier::RedOp => RedOp::from_u8(m).is_some(),
            Modifier::ExtBits => m >= 1 && m < 32,
            Modifier::TexOp => super::gfx::tex::op::name(m).is_some(),
            Modifier::Export => super::gfx::export::regs(m).is_some(),
            Modifier::Deriv => super::gfx::deriv::name(m).is_some(),
        }
    }

    /// What decode calls a value it refuses, for the kinds it checks: a bad memory size,
    /// vote, shuffle mode, reduction, texture op or export target makes the whole kernel
    /// invalid (the register widths of the memory, texture and export ops depend on it); the
    /// other kinds fault only when the op executes.
    pub const fn checked_at_decode(self) -> Option<&'static str> {
        match self {
            Modifier::MemSize => Some("memory size"),
            Modifier::TexOp => Some("texture op"),
            Modifier::Export => Some("export target"),
            Modifier::VoteOp => Some("vote"),
            Modifier::ShflMode => Some("shuffle mode"),
            Modifier::RedOp => Some("reduction"),
            _ => None,
        }
    }
}

/// How many consecutive registers an operand spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    Fixed(u8),
    /// The registers of the `mod` memory size ([`MemSize::regs`]).
    Mem,
    /// 2 when `imm` bit 0 selects 64-bit atomic operands, else 1.
    Atomic,
    /// 2 with [`RED_WIDE`] in `imm`, else 1.
    Red,
    /// The `GETW` count in `mod` (0 reads one slot).
    Window,
    /// The TRACE ray ([`super::rtu::ray::REGS`]).
    Ray,
    /// TEX's operand block, from its op (`mod`) and flags (`imm`)
    /// ([`super::gfx::tex::operand_regs`]).
    TexOperands,
    /// EXP's data: 4 registers for a colour target (`mod`), 1 for depth and sample mask
    /// ([`super::gfx::export::regs`]).
    Export,
}

impl Width {
    /// The registers the operand spans in `i`; `None` when `mod` is not a memory size (texture
    /// op, export target) the width depends on.
    pub fn of(self, i: &Instr) -> Option<u32> {
        Some(match self {
            Width::Fixed(n) => n as u32,
            Width::Mem => MemSize::from_u8(i.modifier)?.regs() as u32,
            Width::Atomic => 1 + (i.imm & 1),
            Width::Red => 1 + (i.imm & RED_WIDE != 0) as u32,
            Width::Window => i.modifier.max(1) as u32,
            Width::Ray => super::rtu::ray::REGS,
            Width::TexOperands => super::gfx::tex::operand_regs(i.modifier, i.imm)?,
            Width::Export => super::gfx::export::regs(i.modifier)?,
        })
    }
}

/// One register field of an op's [`Signature`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperandSpec {
    pub width: Width,
    /// Written (only ever the `dst` field); else read.
    pub write: bool,
    /// Written by every lane active at the op when it completes: the zeroing analysis
    /// (`core::decode::read_before_write`) may trust the write. Conservative: an op left
    /// out only makes a launch zero more registers.
    pub full: bool,
    /// `REG_NONE` is allowed: the operand is then absent.
    pub optional: bool,
}

/// The register fields of an R-format instruction (`a` is BRA's predicate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Dst,
    A,
    B,
    C,
    D,
}

impl Field {
    /// In encoding order.
    pub const ALL: [Field; 5] = [Field::Dst, Field::A, Field::B, Field::C, Field::D];
}

/// Which register fields an op reads or writes, and how wide each is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signature {
    pub dst: Option<OperandSpec>,
    pub a: Option<OperandSpec>,
    pub b: Option<OperandSpec>,
    pub c: Option<OperandSpec>,
    pub d: Option<OperandSpec>,
}

impl Signature {
    /// No register operand.
    pub const NONE: Signature = Signature { dst: None, a: None, b: None, c: None, d: None };

    pub const fn get(&self, f: Field) -> Option<OperandSpec> {
        match f {
            Field::Dst => self.dst,
            Field::A => self.a,
            Field::B => self.b,
            Field::C => self.c,
            Field::D => self.d,
        }
    }
}

/// The shorthand the opcode table writes signatures in.
mod sig {
    use super::{OperandSpec, Width};

    pub const W1: Width = Width::Fixed(1);
    pub const W2: Width = Width::Fixed(2);
    pub const W3: Width = Width::Fixed(3);
    pub const W4: Width = Width::Fixed(4);
    pub const MEM: Width = Width::Mem;
    pub const ATOM: Width = Width::Atomic;
    pub const RED: Width = Width::Red;
    pub const WINDOW: Width = Width::Window;
    pub const RAY: Width = Width::Ray;
    pub const TEXOPS: Width = Width::TexOperands;
    pub const EXPW: Width = Width::Export;
    /// ISECT's ray operand ([`super::super::rdna2::ray::REGS`]).
    pub const ISECT_RAY: Width = Width::Fixed(super::super::rdna2::ray::REGS as u8);

    const fn spec(width: Width, write: bool, full: bool, optional: bool) -> OperandSpec {
        OperandSpec { width, write, full, optional }
    }
    /// Read.
    pub const fn rd(w: Width) -> OperandSpec {
        spec(w, false, false, false)
    }
    /// Read, or `REG_NONE`.
    pub const fn rd_opt(w: Width) -> OperandSpec {
        spec(w, false, false, true)
    }
    /// Written by every active lane.
    pub const fn wr_all(w: Width) -> OperandSpec {
        spec(w, true, true, false)
    }
    /// Written (the zeroing analysis does not rely on it).
    pub const fn wr(w: Width) -> OperandSpec {
        spec(w, true, false, false)
    }
    /// Written, or `REG_NONE` for no result.
    pub const fn wr_opt(w: Width) -> OperandSpec {
        spec(w, true, false, true)
    }
}

macro_rules! opcodes {
    ($(
        $(#[$doc:meta])*
        $name:ident = $val:literal, $mn:literal, $class:ident, $unit:ident, $fmt:ident, $modk:ident,
            { $($field:ident: $spec:expr),* $(,)? };
    )*) => {
        /// VX opcodes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Op { $( $(#[$doc])* $name = $val, )* }

        impl Op {
            pub const ALL: &'static [Op] = &[ $( Op::$name, )* ];

            pub const fn from_u8(v: u8) -> Option<Op> {
                match v { $( $val => Some(Op::$name), )* _ => None }
            }
            pub const fn mnemonic(self) -> &'static str {
                match self { $( Op::$name => $mn, )* }
            }
            pub const fn class(self) -> OpClass {
                match self { $( Op::$name => OpClass::$class, )* }
            }
            // Inline: the execute stage dispatches on it (a table load).
            #[inline(always)]
            pub const fn unit(self) -> Unit {
                match self { $( Op::$name => Unit::$unit, )* }
            }
            pub const fn format(self) -> Format {
                match self { $( Op::$name => Format::$fmt, )* }
            }
            pub const fn modifier(self) -> Modifier {
                match self { $( Op::$name => Modifier::$modk, )* }
            }
            // (An op with all five fields leaves nothing for `..NONE` to fill.)
            #[allow(clippy::needless_update)]
            pub const fn signature(self) -> Signature {
                use sig::*;
                match self { $( Op::$name => Signature { $( $field: Some($spec), )* ..Signature::NONE }, )* }
            }
        }
    };
}

// value, mnemonic, timing class, executing unit, format, `mod`, register fields.
opcodes! {
    /// No operation.
    Nop = 0x00, "nop", Ctrl, Ctrl, R, Any, {};
    /// Active lanes finish; the warp retires when no lane is left.
    Exit = 0x01, "exit", Ctrl, Ctrl, R, Any, {};
    /// Uniform jump to instruction `imm`.
    Jmp = 0x02, "jmp", Ctrl, Ctrl, R, Any, {};
    /// Per-lane branch on `pred != 0` (format B).
    Bra = 0x03, "bra", Ctrl, Ctrl, B, Any, { a: rd(W1) };
    /// CTA barrier: the warp waits until every live warp of its CTA arrives; `mod` holds
    /// [`BAR_MEM_LMEM`] / [`BAR_MEM_GLOBAL`].
    Bar = 0x04, "bar", Ctrl, Ctrl, R, Any, {};
    /// Memory fence (ordering only; the model is sequentially consistent per core).
    Fence = 0x05, "fence", Ctrl, Ctrl, R, Any, {};
    /// Device trap: `imm` is a [`TrapCode`]; the dispatch faults.
    Trap = 0x06, "trap", Ctrl, Ctrl, R, Any, {};
    /// The active lanes become helper lanes (`OpDemoteToHelperInvocation`): they go on
    /// executing, but their stores, atomics and exports do nothing.
    Demote = 0x07, "demote", Ctrl, Ctrl, R, Any, {};

    /// dst = a
    Mov = 0x10, "mov", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// dst = imm
    Movi = 0x11, "movi", Alu, Alu, R, Any, { dst: wr_all(W1) };
    /// dst = a != 0 ? b : c
    Sel = 0x12, "sel", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1), c: rd(W1) };
    /// dst = csr[imm]
    Csr = 0x13, "csr", Csr, Csr, R, Any, { dst: wr_all(W1) };

    Iadd = 0x20, "iadd", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Isub = 0x21, "isub", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Imul = 0x22, "imul", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// High word of the 64-bit product; `mod` = 1 signed, 0 unsigned.
    Imulhi = 0x23, "imulhi", Alu, Alu, R, Signed, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Udiv = 0x24, "udiv", Div, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Sdiv = 0x25, "sdiv", Div, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Urem = 0x26, "urem", Div, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// Remainder with the sign of `a` (OpSRem).
    Srem = 0x27, "srem", Div, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// Remainder with the sign of `b` (OpSMod).
    Smod = 0x28, "smod", Div, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    And = 0x29, "and", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Or = 0x2A, "or", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Xor = 0x2B, "xor", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Not = 0x2C, "not", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// Shifts use the low 5 bits of `b`.
    Shl = 0x2D, "shl", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Shr = 0x2E, "shr", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Sar = 0x2F, "sar", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Ineg = 0x30, "ineg", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    Iabs = 0x31, "iabs", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// `mod` = 1 signed.
    Imin = 0x32, "imin", Alu, Alu, R, Signed, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Imax = 0x33, "imax", Alu, Alu, R, Signed, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// dst = cond(a, b) ? 1 : 0; `mod` is an [`IntCond`].
    Icmp = 0x34, "icmp", Alu, Alu, R, IntCond, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// Bitfield extract of `a` at offset `b`, width `c`; `mod` = 1 sign-extends.
    Bfe = 0x35, "bfe", Alu, Alu, R, Signed, { dst: wr_all(W1), a: rd(W1), b: rd(W1), c: rd(W1) };
    /// Bitfield insert: `a` with `b`'s low `d` bits placed at offset `c`.
    Bfi = 0x36, "bfi", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1), c: rd(W1), d: rd(W1) };
    Brev = 0x37, "brev", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    Popc = 0x38, "popc", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// Index of least significant set bit, or -1.
    Flsb = 0x39, "flsb", Alu, Alu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// Index of most significant set bit (`mod` = 1: of the magnitude-style signed rule), or -1.
    Fmsb = 0x3A, "fmsb", Alu, Alu, R, Signed, { dst: wr_all(W1), a: rd(W1) };
    /// Sign/zero-extend the low `mod` bits (8 or 16) of `a`; `imm` = 1 for sign.
    Ext = 0x3B, "ext", Alu, Alu, R, ExtBits, { dst: wr_all(W1), a: rd(W1) };
    /// dst = a + b, dst+1 = carry out.
    Iaddc = 0x3C, "iaddc", Alu, Alu, R, Any, { dst: wr_all(W2), a: rd(W1), b: rd(W1) };
    /// dst = a - b, dst+1 = borrow out.
    Isubb = 0x3D, "isubb", Alu, Alu, R, Any, { dst: wr_all(W2), a: rd(W1), b: rd(W1) };
    /// dst/dst+1 = full 64-bit product of a and b; `mod` = 1 signed.
    Imulx = 0x3E, "imulx", Alu, Alu, R, Signed, { dst: wr_all(W2), a: rd(W1), b: rd(W1) };

    /// 64-bit ops on register pairs.
    Iadd64 = 0x40, "iadd64", Alu, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };
    Isub64 = 0x41, "isub64", Alu, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };
    Imul64 = 0x42, "imul64", Alu, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };
    Shl64 = 0x43, "shl64", Alu, Alu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W1) };
    Shr64 = 0x44, "shr64", Alu, Alu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W1) };
    Sar64 = 0x45, "sar64", Alu, Alu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W1) };
    /// dst (one register) = cond(a64, b64); `mod` is an [`IntCond`].
    Icmp64 = 0x46, "icmp64", Alu, Alu, R, IntCond, { dst: wr(W1), a: rd(W2), b: rd(W2) };
    Udiv64 = 0x47, "udiv64", Div, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };
    Sdiv64 = 0x48, "sdiv64", Div, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };
    Urem64 = 0x49, "urem64", Div, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };
    Srem64 = 0x4A, "srem64", Div, Alu, R, Any, { dst: wr_all(W2), a: rd(W2), b: rd(W2) };

    Fadd = 0x50, "fadd", Fma, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Fsub = 0x51, "fsub", Fma, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Fmul = 0x52, "fmul", Fma, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// dst = a * b + c (fused).
    Ffma = 0x53, "ffma", Fma, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1), c: rd(W1) };
    Fdiv = 0x54, "fdiv", Div, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    /// IEEE minNum-style min/max (NaN operands lose).
    Fmin = 0x55, "fmin", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Fmax = 0x56, "fmax", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Fneg = 0x57, "fneg", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    Fabs = 0x58, "fabs", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// dst = cond(a, b) ? 1 : 0; `mod` is an [`FloatCond`].
    Fcmp = 0x59, "fcmp", Alu, Fpu, R, FloatCond, { dst: wr_all(W1), a: rd(W1), b: rd(W1) };
    Fsqrt = 0x5A, "fsqrt", Div, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    Frsq = 0x5B, "frsq", Div, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    Frcp = 0x5C, "frcp", Div, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// Rounding: `mod` is a [`Round`].
    Fround = 0x5D, "fround", Alu, Fpu, R, Round, { dst: wr_all(W1), a: rd(W1) };
    Ffract = 0x5E, "ffract", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    Fsign = 0x5F, "fsign", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// Transcendental `mod` ([`SfuFunc`]) of `a` (and `b` for two-operand functions).
    Fsfu = 0x60, "fsfu", Sfu, Sfu, R, SfuFunc, { dst: wr_all(W1), a: rd(W1), b: rd_opt(W1) };
    /// Float to signed int (round toward zero, saturating).
    F2i = 0x61, "f2i", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    F2u = 0x62, "f2u", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    I2f = 0x63, "i2f", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    U2f = 0x64, "u2f", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// f32 -> f16 bits (round to nearest even) in the low half.
    F2h = 0x65, "f2h", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// f16 bits in the low half -> f32.
    H2f = 0x66, "h2f", Alu, Fpu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// i64 pair -> f32.
    L2f = 0x67, "l2f", Alu, Fpu, R, Any, { dst: wr(W1), a: rd(W2) };
    /// u64 pair -> f32.
    Ul2f = 0x68, "ul2f", Alu, Fpu, R, Any, { dst: wr(W1), a: rd(W2) };
    /// f32 -> i64 pair (toward zero).
    F2l = 0x69, "f2l", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W1) };
    /// f32 -> u64 pair (toward zero).
    F2ul = 0x6A, "f2ul", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W1) };

    /// dst.. = global[a64 + imm]; `mod` is a [`MemSize`].
    Ldg = 0x70, "ldg", Lsu, Lsu, R, MemSize, { dst: wr_all(MEM), a: rd(W2) };
    /// global[a64 + imm] = b..; `mod` is a [`MemSize`].
    Stg = 0x71, "stg", Lsu, Lsu, R, MemSize, { a: rd(W2), b: rd(MEM) };
    /// LMEM (CTA-shared) at byte offset `a + imm`.
    Ldl = 0x72, "ldl", Lsu, Lsu, R, MemSize, { dst: wr_all(MEM), a: rd(W1) };
    Stl = 0x73, "stl", Lsu, Lsu, R, MemSize, { a: rd(W1), b: rd(MEM) };
    /// Per-lane private memory at byte offset `a + imm`.
    Ldp = 0x74, "ldp", Lsu, Lsu, R, MemSize, { dst: wr_all(MEM), a: rd(W1) };
    Stp = 0x75, "stp", Lsu, Lsu, R, MemSize, { a: rd(W1), b: rd(MEM) };
    /// dst = old; global[a64] op= b (c = comparator for CMPXCHG); `mod` is an [`AtomicOp`],
    /// `imm` bit 0 selects 64-bit operands (pairs).
    Atomg = 0x76, "atomg", Lsu, Lsu, R, AtomicOp, { dst: wr_opt(ATOM), a: rd(W2), b: rd_opt(ATOM), c: rd_opt(ATOM) };
    /// Same on LMEM at byte offset `a`.
    Atoml = 0x77, "atoml", Lsu, Lsu, R, AtomicOp, { dst: wr_opt(ATOM), a: rd(W1), b: rd_opt(ATOM), c: rd_opt(ATOM) };

    /// Image load: dst..dst+3 = texel of the image whose 64-byte descriptor is at global
    /// address a64, at integer coordinates b, b+1, b+2 (x, y, z-or-layer).
    Ild = 0x80, "ild", Tex, Tex, R, Any, { dst: wr(W4), a: rd(W2), b: rd(W3) };
    /// Image store: texel at coordinates b.. = c..c+3.
    Ist = 0x81, "ist", Tex, Tex, R, Any, { a: rd(W2), b: rd(W3), c: rd(W4) };
    /// Image atomic: dst = old; texel op= c (d = comparator); `mod` is an [`AtomicOp`].
    Iatom = 0x82, "iatom", Tex, Tex, R, AtomicOp, { dst: wr_opt(W1), a: rd(W2), b: rd(W3), c: rd(W1), d: rd_opt(W1) };
    /// Texture-unit op `mod` ([`super::gfx::tex::op`]): dst..dst+3 = the result, through the
    /// image descriptor at a64 and the sampler record at c64, with the operand block at `b`
    /// and the flags in `imm` ([`super::gfx::tex`]).
    Tex = 0x83, "tex", Tex, Tex, R, TexOp, { dst: wr(W4), a: rd(W2), b: rd_opt(TEXOPS), c: rd_opt(W2) };
    /// Export to the output merger: target `mod` ([`super::gfx::export`]) from `a..`, `imm`
    /// [`super::gfx::export::DONE`] on the fragment's last export. Helper lanes export nothing.
    Exp = 0x84, "exp", Lsu, Om, R, Export, { a: rd(EXPW) };
    /// rdna2 node intersection (seed 003, [`super::rdna2`]): dst..dst+3 = the result words
    /// of the node the ray operand b..b+10 names, relative to the BVH descriptor a..a+3.
    Isect = 0x85, "isect", Tex, Isect, R, Any, { dst: wr_all(W4), a: rd(W4), b: rd(ISECT_RAY) };
    /// rdna2 ray log hook (`VORTEX_RAYLOG`, [`super::rdna2::query`]): the ray query whose
    /// state is at private byte offset `a` was armed (`imm` `LOG_ARM`, `b` = the structure's
    /// address) or a proceed of it returned (`LOG_PROCEED`). No architectural effect; the
    /// compiler emits it only for a device that records a ray log.
    Rqlog = 0x86, "rqlog", Alu, Isect, R, Any, { a: rd(W1), b: rd_opt(W2) };

    /// dst = 1 on every active lane when the vote `mod` ([`VoteOp`]) over the active
    /// lanes' `a` holds (all non-zero, any non-zero, all equal), else 0.
    Vote = 0x98, "vote", Warp, Warp, R, VoteOp, { dst: wr(W1), a: rd(W1) };
    /// dst = bit mask of the active lanes whose `a` is non-zero (lane i -> bit i).
    Ballot = 0x99, "ballot", Warp, Warp, R, Any, { dst: wr(W1), a: rd(W1) };
    /// dst = `a` of another lane, chosen by `mod` ([`ShflMode`]) and `b`: lane `b`, lane - b,
    /// lane + b, or lane ^ b. A source lane outside the warp or inactive gives the lane's own
    /// `a`.
    Shfl = 0x9A, "shfl", Warp, Warp, R, ShflMode, { dst: wr(W1), a: rd(W1), b: rd(W1) };
    /// Reduction or scan of `a` over the active lanes (or over clusters of them): `mod` is
    /// a [`RedOp`], `imm` holds the kind (bits 0-1: [`RED_REDUCE`], [`RED_INCLUSIVE`],
    /// [`RED_EXCLUSIVE`]), [`RED_WIDE`] for 64-bit operands (pairs), and the cluster size
    /// in bits 8-15 (0: the whole warp). Lanes combine in lane order.
    Red = 0x9B, "red", Warp, Warp, R, RedOp, { dst: wr(RED), a: rd(RED) };
    /// dst = d(a)/dx or d(a)/dy within each 2x2 quad of lanes (`4q..4q+4`), coarse or fine by
    /// `mod` ([`super::gfx::deriv`]).
    Deriv = 0x9C, "deriv", Warp, Warp, R, Deriv, { dst: wr_all(W1), a: rd(W1) };

    /// 64-bit floating point on register pairs (raw IEEE binary64 bits, low word first).
    Dadd = 0xA0, "dadd", Fma, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2) };
    Dsub = 0xA1, "dsub", Fma, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2) };
    Dmul = 0xA2, "dmul", Fma, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2) };
    /// dst = a * b + c (fused).
    Dfma = 0xA3, "dfma", Fma, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2), c: rd(W2) };
    Ddiv = 0xA4, "ddiv", Div, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2) };
    /// IEEE minNum-style min/max (NaN operands lose).
    Dmin = 0xA5, "dmin", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2) };
    Dmax = 0xA6, "dmax", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2), b: rd(W2) };
    /// dst (one register) = cond(a, b) ? 1 : 0; `mod` is a [`FloatCond`].
    Dcmp = 0xA7, "dcmp", Alu, Fpu, R, FloatCond, { dst: wr(W1), a: rd(W2), b: rd(W2) };
    Dsqrt = 0xA8, "dsqrt", Div, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    Drsq = 0xA9, "drsq", Div, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    Drcp = 0xAA, "drcp", Div, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    /// Rounding: `mod` is a [`Round`].
    Dround = 0xAB, "dround", Alu, Fpu, R, Round, { dst: wr(W2), a: rd(W2) };
    Dfract = 0xAC, "dfract", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    /// f32 -> f64 pair (exact).
    F2d = 0xB0, "f2d", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W1) };
    /// f64 pair -> f32 (round to nearest even).
    D2f = 0xB1, "d2f", Alu, Fpu, R, Any, { dst: wr(W1), a: rd(W2) };
    /// f64 pair -> i32 / u32 (toward zero, saturating).
    D2i = 0xB2, "d2i", Alu, Fpu, R, Any, { dst: wr(W1), a: rd(W2) };
    D2u = 0xB3, "d2u", Alu, Fpu, R, Any, { dst: wr(W1), a: rd(W2) };
    /// i32 / u32 -> f64 pair (exact).
    I2d = 0xB4, "i2d", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W1) };
    U2d = 0xB5, "u2d", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W1) };
    /// f64 pair -> i64 / u64 pair (toward zero, saturating).
    D2l = 0xB6, "d2l", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    D2ul = 0xB7, "d2ul", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    /// i64 / u64 pair -> f64 pair (round to nearest even).
    L2d = 0xB8, "l2d", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    Ul2d = 0xB9, "ul2d", Alu, Fpu, R, Any, { dst: wr(W2), a: rd(W2) };
    /// f64 pair -> f16 bits in the low half (round to nearest even, once).
    D2h = 0xBA, "d2h", Alu, Fpu, R, Any, { dst: wr(W1), a: rd(W2) };

    /// Arm a trace: lanes' query slot in `a`, ray in b..b+11 (see [`super::rtu::ray`]).
    /// dst (if not `REG_NONE`) receives the handle (the query slot).
    Trace = 0x90, "trace", Rtu, Rtu, R, Any, { dst: wr_opt(W1), a: rd(W1), b: rd(RAY) };
    /// Park until each active lane's record for query slot `a` has landed; dst = status.
    Wait = 0x91, "wait", Rtu, Rtu, R, Any, { dst: wr_all(W1), a: rd(W1) };
    /// Resume query slot `a` with action `b` and hit distance `c` (posted; a WAIT follows).
    Cont = 0x92, "cont", Rtu, Rtu, R, Any, { a: rd(W1), b: rd(W1), c: rd(W1) };
    /// dst..dst+mod-1 = integer window slots `imm..imm+mod` of query slot `a`.
    Getw = 0x93, "getw", Rtu, Rtu, R, Count, { dst: wr_all(WINDOW), a: rd(W1) };
    /// Same for floating-point window slots.
    Getwf = 0x94, "getwf", Rtu, Rtu, R, Count, { dst: wr_all(WINDOW), a: rd(W1) };
}

/// The small enums an op's `mod` selects from: each variant's value and name, `from_u8`,
/// `name` and `ALL`.
macro_rules! modifier_enum {
    ($(#[$doc:meta])* pub enum $name:ident { $( $(#[$vdoc:meta])* $v:ident = $val:literal, $n:literal; )* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum $name { $( $(#[$vdoc])* $v = $val, )* }

        impl $name {
            pub const ALL: &'static [$name] = &[ $( $name::$v, )* ];

            pub const fn from_u8(v: u8) -> Option<Self> {
                match v { $( $val => Some($name::$v), )* _ => None }
            }
            pub const fn name(self) -> &'static str {
                match self { $( $name::$v => $n, )* }
            }
        }
    };
}

modifier_enum! {
    /// Integer comparison conditions (`ICMP`, `ICMP64`).
    pub enum IntCond {
        Eq = 0, "eq";
        Ne = 1, "ne";
        Ult = 2, "ult";
        Ule = 3, "ule";
        Ugt = 4, "ugt";
        Uge = 5, "uge";
        Slt = 6, "slt";
        Sle = 7, "sle";
        Sgt = 8, "sgt";
        Sge = 9, "sge";
    }
}

modifier_enum! {
    /// Floating-point comparison conditions (`FCMP`). `O*` are false when either operand is
    /// NaN, `U*` are true.
    pub enum FloatCond {
        Oeq = 0, "oeq";
        One = 1, "one";
        Olt = 2, "olt";
        Ole = 3, "ole";
        Ogt = 4, "ogt";
        Oge = 5, "oge";
        Ueq = 6, "ueq";
        Une = 7, "une";
        Ult = 8, "ult";
        Ule = 9, "ule";
        Ugt = 10, "ugt";
        Uge = 11, "uge";
        /// Both ordered (neither NaN).
        Ord = 12, "ord";
        /// Either NaN.
        Uno = 13, "uno";
        /// `a` is NaN (b ignored).
        IsNan = 14, "isnan";
        /// `a` is ±inf (b ignored).
        IsInf = 15, "isinf";
    }
}

modifier_enum! {
    /// `FROUND` modes.
    pub enum Round {
        /// Toward -inf.
        Floor = 0, "floor";
        /// Toward +inf.
        Ceil = 1, "ceil";
        /// Toward zero.
        Trunc = 2, "trunc";
        /// To nearest, ties to even.
        Even = 3, "even";
        /// To nearest, ties away from zero.
        Away = 4, "away";
    }
}

modifier_enum! {
    /// `FSFU` functions.
    pub enum SfuFunc {
        Sin = 0, "sin";
        Cos = 1, "cos";
        Tan = 2, "tan";
        Asin = 3, "asin";
        Acos = 4, "acos";
        Atan = 5, "atan";
        Sinh = 6, "sinh";
        Cosh = 7, "cosh";
        Tanh = 8, "tanh";
        Asinh = 9, "asinh";
        Acosh = 10, "acosh";
        Atanh = 11, "atanh";
        Exp = 12, "exp";
        Log = 13, "log";
        Exp2 = 14, "exp2";
        Log2 = 15, "log2";
        /// Two operands: a^b.
        Pow = 16, "pow";
        /// Two operands: atan2(a, b).
        Atan2 = 17, "atan2";
    }
}

modifier_enum! {
    /// Memory access sizes (`mod` of loads and stores). Sub-word loads extend into one
    /// register.
    pub enum MemSize {
        U8 = 0, "u8";
        S8 = 1, "s8";
        U16 = 2, "u16";
        S16 = 3, "s16";
        B32 = 4, "b32";
        /// Two registers.
        B64 = 5, "b64";
        /// Four registers.
        B128 = 6, "b128";
    }
}

impl MemSize {
    pub fn bytes(self) -> usize {
        match self {
            MemSize::U8 | MemSize::S8 => 1,
            MemSize::U16 | MemSize::S16 => 2,
            MemSize::B32 => 4,
            MemSize::B64 => 8,
            MemSize::B128 => 16,
        }
    }
    /// Registers the access reads or writes.
    pub fn regs(self) -> usize {
        match self {
            MemSize::B64 => 2,
            MemSize::B128 => 4,
            _ => 1,
        }
    }
}

modifier_enum! {
    /// Atomic operations (`mod` of `ATOMG`, `ATOML`, `IATOM`).
    pub enum AtomicOp {
        Add = 0, "add";
        Smin = 1, "smin";
        Umin = 2, "umin";
        Smax = 3, "smax";
        Umax = 4, "umax";
        And = 5, "and";
        Or = 6, "or";
        Xor = 7, "xor";
        Xchg = 8, "xchg";
        /// Compare-exchange: store b if the old value equals c.
        CmpXchg = 9, "cmpxchg";
        /// f32 add.
        Fadd = 10, "fadd";
        /// Plain atomic load (OpAtomicLoad): dst = old, memory unchanged.
        Load = 11, "load";
        /// Plain atomic store (OpAtomicStore): memory = b.
        Store = 12, "store";
    }
}

modifier_enum! {
    /// `VOTE` conditions (`mod`).
    pub enum VoteOp {
        All = 0, "all";
        Any = 1, "any";
        /// Every active lane holds the same value.
        Eq = 2, "eq";
    }
}

modifier_enum! {
    /// `SHFL` source-lane modes (`mod`).
    pub enum ShflMode {
        /// Lane `b`.
        Idx = 0, "idx";
        /// Lane - `b`.
        Up = 1, "up";
        /// Lane + `b`.
        Down = 2, "down";
        /// Lane ^ `b`.
        Xor = 3, "xor";
    }
}

modifier_enum! {
    /// `RED` operations (`mod`); with [`RED_WIDE`] the integer ops are 64-bit and the float
    /// ops f64.
    pub enum RedOp {
        Iadd = 0, "iadd";
        Imul = 1, "imul";
        Smin = 2, "smin";
        Umin = 3, "umin";
        Smax = 4, "smax";
        Umax = 5, "umax";
        And = 6, "and";
        Or = 7, "or";
        Xor = 8, "xor";
        Fadd = 9, "fadd";
        Fmul = 10, "fmul";
        Fmin = 11, "fmin";
        Fmax = 12, "fmax";
    }
}

/// `RED` kinds (`imm` bits 0-1): the reduction on every lane, or an inclusive / exclusive
/// prefix in lane order (the first lane of an exclusive scan gets the op's identity).
pub const RED_REDUCE: u32 = 0;
pub const RED_INCLUSIVE: u32 = 1;
pub const RED_EXCLUSIVE: u32 = 2;
/// `RED` `imm` flag: operands are 64-bit register pairs.
pub const RED_WIDE: u32 = 4;
/// `RED` `imm` bits 8-15: cluster size (a power of two; 0 = the whole warp).
pub const RED_CLUSTER_SHIFT: u32 = 8;

/// `BAR` flags (`mod`).
pub const BAR_MEM_LMEM: u8 = 1;
pub const BAR_MEM_GLOBAL: u8 = 2;

/// `TRAP` codes (`imm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum TrapCode {
    /// OpUnreachable was reached.
    Unreachable = 1,
    /// A ray-query op named a slot outside the kernel's declared query count.
    BadQuery = 2,
    /// OpTerminateInvocation/OpKill in a compute kernel.
    Kill = 3,
    /// An rdna2 ray query's traversal stack would overflow (`docs/RDNA2.md`).
    RayQueryStack = 4,
    /// An rdna2 ray query visited more nodes than its bound (seed 004: fail, never loop).
    RayQuerySteps = 5,
}

/// One decoded instruction. R-format fields are `dst, a, b, c, d, imm`; for `BRA`,
/// `a` is the predicate and the targets live in `imm` (taken), `imm2` (not taken) and
/// `imm3` (reconvergence point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instr {
    pub op: Op,
    pub modifier: u8,
    pub dst: u16,
    pub a: u16,
    pub b: u16,
    pub c: u16,
    pub d: u16,
    pub imm: u32,
    pub imm2: u32,
    pub imm3: u32,
}

/// Why an instruction word could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    BadOpcode { index: usize, byte: u8 },
    Truncated { len: usize },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::BadOpcode { index, byte } => {
                write!(f, "instruction {index}: unknown opcode {byte:#04x}")
            }
            DecodeError::Truncated { len } => {
                write!(f, "code length {len} is not a multiple of {INSTR_BYTES}")
            }
        }
    }
}

/// One register operand of an instruction: `width` consecutive registers from `reg`, in
/// field `field`, as the op's [`Signature`] gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub field: Field,
    pub reg: u16,
    /// Registers spanned (1 where `mod` is not the memory size the width depends on:
    /// decode refuses that instruction anyway).
    pub width: u32,
    pub write: bool,
    /// Every active lane writes it ([`OperandSpec::full`], and the width is known).
    pub full: bool,
}

/// An instruction's register operands in encoding order, without allocating.
#[derive(Clone, Copy, Debug)]
pub struct Operands {
    n: usize,
    v: [Operand; 5],
}

impl Operands {
    pub fn iter(&self) -> impl Iterator<Item = &Operand> {
        self.v[..self.n].iter()
    }

    /// The written operand, if the instruction has one.
    pub fn dst(&self) -> Option<&Operand> {
        self.iter().find(|o| o.write)
    }
}

impl Instr {
    /// The register in field `f`.
    pub const fn reg(&self, f: Field) -> u16 {
        match f {
            Field::Dst => self.dst,
            Field::A => self.a,
            Field::B => self.b,
            Field::C => self.c,
            Field::D => self.d,
        }
    }

    pub fn set_reg(&mut self, f: Field, r: u16) {
        match f {
            Field::Dst => self.dst = r,
            Field::A => self.a = r,
            Field::B => self.b = r,
            Field::C => self.c = r,
            Field::D => self.d = r,
        }
    }

    /// The register operands the op's [`Signature`] gives this instruction, in field order.
    /// An optional field holding `REG_NONE` is absent; a required one is listed with
    /// `REG_NONE` (decode refuses it).
    pub fn operands(&self) -> Operands {
        let sig = self.op.signature();
        let none = Operand { field: Field::Dst, reg: REG_NONE, width: 0, write: false, full: false };
        let mut o = Operands { n: 0, v: [none; 5] };
        for f in Field::ALL {
            let Some(s) = sig.get(f) else { continue };
            let reg = self.reg(f);
            if s.optional && reg == REG_NONE {
                continue;
            }
            let width = s.width.of(self);
            o.v[o.n] =
                Operand { field: f, reg, width: width.unwrap_or(1), write: s.write, full: s.full && width.is_some() };
            o.n += 1;
        }
        o
    }

    /// Whether the instruction does nothing but write its destination: an op of an
    /// effect-free unit ([`Unit::effect_free`]) with a `mod` the device accepts (a bad one
    /// faults, which is an effect).
    pub fn effect_free(&self) -> bool {
        self.op.unit().effect_free() && self.op.modifier().accepts(self.modifier)
    }
}

impl Instr {
    /// An R-format instruction.
    #[allow(clippy::too_many_arguments)]
    pub const fn r(op: Op, modifier: u8, dst: u16, a: u16, b: u16, c: u16, d: u16, imm: u32) -> Instr {
        Instr { op, modifier, dst, a, b, c, d, imm, imm2: 0, imm3: 0 }
    }

    /// A `BRA`: lanes with `pred != 0` go to `taken`, the rest to `not_taken`; the split
    /// paths reconverge at `reconv`.
    pub const fn bra(pred: u16, taken: u32, not_taken: u32, reconv: u32) -> Instr {
        Instr {
            op: Op::Bra,
            modifier: 0,
            dst: REG_NONE,
            a: pred,
            b: REG_NONE,
            c: REG_NONE,
            d: REG_NONE,
            imm: taken,
            imm2: not_taken,
            imm3: reconv,
        }
    }

    pub fn encode(&self) -> [u8; INSTR_BYTES] {
        let mut w = [0u8; INSTR_BYTES];
        w[0] = self.op as u8;
        w[1] = self.modifier;
        match self.op.format() {
            Format::R => {
                w[2..4].copy_from_slice(&self.dst.to_le_bytes());
                w[4..6].copy_from_slice(&self.a.to_le_bytes());
                w[6..8].copy_from_slice(&self.b.to_le_bytes());
                w[8..10].copy_from_slice(&self.c.to_le_bytes());
                w[10..12].copy_from_slice(&self.d.to_le_bytes());
                w[12..16].copy_from_slice(&self.imm.to_le_bytes());
            }
            Format::B => {
                w[2..4].copy_from_slice(&self.a.to_le_bytes());
                w[4..8].copy_from_slice(&self.imm.to_le_bytes());
                w[8..12].copy_from_slice(&self.imm2.to_le_bytes());
                w[12..16].copy_from_slice(&self.imm3.to_le_bytes());
            }
        }
        w
    }

    pub fn decode(w: &[u8; INSTR_BYTES], index: usize) -> Result<Instr, DecodeError> {
        let op = Op::from_u8(w[0]).ok_or(DecodeError::BadOpcode { index, byte: w[0] })?;
        let h = |o: usize| u16::from_le_bytes([w[o], w[o + 1]]);
        let word = |o: usize| u32::from_le_bytes([w[o], w[o + 1], w[o + 2], w[o + 3]]);
        Ok(match op.format() {
            Format::R => Instr {
                op,
                modifier: w[1],
                dst: h(2),
                a: h(4),
                b: h(6),
                c: h(8),
                d: h(10),
                imm: word(12),
                imm2: 0,
                imm3: 0,
            },
            Format::B => Instr {
                op,
                modifier: w[1],
                dst: REG_NONE,
                a: h(2),
                b: REG_NONE,
                c: REG_NONE,
                d: REG_NONE,
                imm: word(4),
                imm2: word(8),
                imm3: word(12),
            },
        })
    }
}

/// Encodes a whole instruction stream.
pub fn encode_all(code: &[Instr]) -> Vec<u8> {
    let mut out = Vec::with_capacity(code.len() * INSTR_BYTES);
    for i in code {
        out.extend_from_slice(&i.encode());
    }
    out
}

/// Decodes a whole instruction stream.
pub fn decode_all(bytes: &[u8]) -> Result<Vec<Instr>, DecodeError> {
    if !bytes.len().is_multiple_of(INSTR_BYTES) {
        return Err(DecodeError::Truncated { len: bytes.len() });
    }
    bytes
        .chunks_exact(INSTR_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let mut w = [0u8; INSTR_BYTES];
            w.copy_from_slice(c);
            Instr::decode(&w, i)
        })
        .collect()
}

fn reg(r: u16) -> String {
    if r == REG_NONE {
        "_".to_string()
    } else {
        format!("r{r}")
    }
}

/// One line of disassembly, e.g. `fadd r12, r3, r4`.
pub fn disasm(i: &Instr) -> String {
    use Op::*;
    let mut s = String::new();
    let m = i.op.mnemonic();
    let _ = match i.op {
        Nop | Exit | Fence | Demote => write!(s, "{m}"),
        Jmp => write!(s, "{m} @{}", i.imm),
        Bra => write!(s, "{m} {}, @{}, @{}, reconv @{}", reg(i.a), i.imm, i.imm2, i.imm3),
        Bar => write!(s, "{m} mem={:#x}", i.modifier),
        Trap => write!(s, "{m} {}", i.imm),
        Movi => write!(s, "{m} {}, {:#x}", reg(i.dst), i.imm),
        Csr => write!(
            s,
            "{m} {}, {}",
            reg(i.dst),
            super::csr::name(i.imm).map(str::to_string).unwrap_or_else(|| format!("{:#x}", i.imm))
        ),
        Icmp | Icmp64 => write!(
            s,
            "{m}.{} {}, {}, {}",
            IntCond::from_u8(i.modifier).map(IntCond::name).unwrap_or("?"),
            reg(i.dst),
            reg(i.a),
            reg(i.b)
        ),
        Fcmp | Dcmp => write!(
            s,
            "{m}.{} {}, {}, {}",
            FloatCond::from_u8(i.modifier).map(FloatCond::name).unwrap_or("?"),
            reg(i.dst),
            reg(i.a),
            reg(i.b)
        ),
        Fsfu => write!(
            s,
            "{m}.{} {}, {}, {}",
            SfuFunc::from_u8(i.modifier).map(SfuFunc::name).unwrap_or("?"),
            reg(i.dst),
            reg(i.a),
            reg(i.b)
        ),
        Ldg | Ldl | Ldp => write!(
            s,
            "{m}.{} {}, [{} + {}]",
            MemSize::from_u8(i.modifier).map(MemSize::name).unwrap_or("?"),
            reg(i.dst),
            reg(i.a),
            i.imm as i32
        ),
        Stg | Stl | Stp => write!(
            s,
            "{m}.{} [{} + {}], {}",
            MemSize::from_u8(i.modifier).map(MemSize::name).unwrap_or("?"),
            reg(i.a),
            i.imm as i32,
            reg(i.b)
        ),
        Atomg | Atoml | Iatom => write!(
            s,
            "{m}.{}{} {}, [{}], {}, {}, {}",
            AtomicOp::from_u8(i.modifier).map(AtomicOp::name).unwrap_or("?"),
            if i.imm & 1 != 0 { ".64" } else { "" },
            reg(i.dst),
            reg(i.a),
            reg(i.b),
            reg(i.c),
            reg(i.d)
        ),
        Vote => write!(
            s,
            "{m}.{} {}, {}",
            VoteOp::from_u8(i.modifier).map(VoteOp::name).unwrap_or("?"),
            reg(i.dst),
            reg(i.a)
        ),
        Shfl => write!(
            s,
            "{m}.{} {}, {}, {}",
            ShflMode::from_u8(i.modifier).map(ShflMode::name).unwrap_or("?"),
            reg(i.dst),
            reg(i.a),
            reg(i.b)
        ),
        Red => write!(
            s,
            "{m}.{}{}{}{} {}, {}",
            RedOp::from_u8(i.modifier).map(RedOp::name).unwrap_or("?"),
            match i.imm & 3 {
                RED_INCLUSIVE => ".incl",
                RED_EXCLUSIVE => ".excl",
                _ => "",
            },
            if i.imm & RED_WIDE != 0 { ".64" } else { "" },
            match (i.imm >> RED_CLUSTER_SHIFT) & 0xFF {
                0 => String::new(),
                c => format!(".c{c}"),
            },
            reg(i.dst),
            reg(i.a)
        ),
        Tex => write!(
            s,
            "{m}.{} {}, [{}], {}, [{}], #{:#x}",
            super::gfx::tex::op::name(i.modifier).unwrap_or("?"),
            reg(i.dst),
            reg(i.a),
            reg(i.b),
            reg(i.c),
            i.imm
        ),
        Exp => write!(
            s,
            "{m}.{} {}{}",
            super::gfx::export::name(i.modifier).unwrap_or_else(|| "?".into()),
            reg(i.a),
            if i.imm & super::gfx::export::DONE != 0 { ", done" } else { "" }
        ),
        Deriv => write!(s, "{m}.{} {}, {}", super::gfx::deriv::name(i.modifier).unwrap_or("?"), reg(i.dst), reg(i.a)),
        Getw | Getwf => write!(
            s,
            "{m} {}, q{}, slot {}{}",
            reg(i.dst),
            reg(i.a),
            super::rtu::slot_name(i.imm),
            if i.modifier > 1 { format!(" x{}", i.modifier) } else { String::new() }
        ),
        _ => {
            let mut ops = vec![reg(i.dst)];
            for r in [i.a, i.b, i.c, i.d] {
                if r != REG_NONE {
                    ops.push(reg(r));
                }
            }
            let suffix = if i.modifier != 0 { format!(".{}", i.modifier) } else { String::new() };
            let imm = if i.imm != 0 { format!(", #{:#x}", i.imm) } else { String::new() };
            write!(s, "{m}{suffix} {}{imm}", ops.join(", "))
        }
    };
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_round_trips() {
        for &op in Op::ALL {
            let i =
                if op == Op::Bra { Instr::bra(7, 100, 101, 200) } else { Instr::r(op, 3, 1, 2, 3, 4, 5, 0xDEAD_BEEF) };
            let w = i.encode();
            assert_eq!(Instr::decode(&w, 0).unwrap(), i, "{}", op.mnemonic());
            assert!(!disasm(&i).is_empty());
        }
    }

    #[test]
    fn opcodes_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &op in Op::ALL {
            assert!(seen.insert(op as u8), "duplicate opcode value {:#x}", op as u8);
            assert_eq!(Op::from_u8(op as u8), Some(op));
        }
    }

    /// Each `mod` enum: `ALL` lists values 0..n in order, `from_u8` inverts them and
    /// refuses the rest, names are distinct; [`Modifier::accepts`] agrees.
    #[test]
    fn modifier_enums_round_trip() {
        macro_rules! check {
            ($($e:ident),*) => {$(
                let names: std::collections::HashSet<&str> = $e::ALL.iter().map(|v| v.name()).collect();
                assert_eq!(names.len(), $e::ALL.len(), stringify!($e));
                for m in 0..=255u8 {
                    let v = $e::from_u8(m);
                    assert_eq!(v.is_some(), (m as usize) < $e::ALL.len(), stringify!($e));
                    assert_eq!(Modifier::$e.accepts(m), v.is_some(), stringify!($e));
                    if let Some(v) = v {
                        assert_eq!((v as u8, v), (m, $e::ALL[m as usize]));
                    }
                }
            )*};
        }
        check!(IntCond, FloatCond, Round, SfuFunc, MemSize, AtomicOp, VoteOp, ShflMode, RedOp);
    }

    #[test]
    fn bad_opcode_and_truncation_are_errors() {
        let mut w = [0u8; INSTR_BYTES];
        w[0] = 0xFE;
        assert!(matches!(Instr::decode(&w, 3), Err(DecodeError::BadOpcode { index: 3, byte: 0xFE })));
        assert!(matches!(decode_all(&[0u8; 17]), Err(DecodeError::Truncated { len: 17 })));
    }
}
