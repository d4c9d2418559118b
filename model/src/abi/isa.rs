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
    /// Image load/store (texture-unit path).
    Tex,
    /// Ray-tracing unit ops.
    Rtu,
    /// CSR reads.
    Csr,
    /// Cross-lane ops (vote, ballot, shuffle, reductions and scans): the warp's lanes
    /// exchange values through the warp's own datapath, no memory involved.
    Warp,
}

/// Operand format of an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    R,
    B,
}

macro_rules! opcodes {
    ($( $(#[$doc:meta])* $name:ident = $val:literal, $mn:literal, $class:ident, $fmt:ident; )*) => {
        /// VX opcodes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Op { $( $(#[$doc])* $name = $val, )* }

        impl Op {
            pub const ALL: &'static [Op] = &[ $( Op::$name, )* ];

            pub fn from_u8(v: u8) -> Option<Op> {
                match v { $( $val => Some(Op::$name), )* _ => None }
            }
            pub fn mnemonic(self) -> &'static str {
                match self { $( Op::$name => $mn, )* }
            }
            pub fn class(self) -> OpClass {
                match self { $( Op::$name => OpClass::$class, )* }
            }
            pub fn format(self) -> Format {
                match self { $( Op::$name => Format::$fmt, )* }
            }
        }
    };
}

opcodes! {
    /// No operation.
    Nop = 0x00, "nop", Ctrl, R;
    /// Active lanes finish; the warp retires when no lane is left.
    Exit = 0x01, "exit", Ctrl, R;
    /// Uniform jump to instruction `imm`.
    Jmp = 0x02, "jmp", Ctrl, R;
    /// Per-lane branch on `pred != 0` (format B).
    Bra = 0x03, "bra", Ctrl, B;
    /// CTA barrier: the warp waits until every live warp of its CTA arrives.
    Bar = 0x04, "bar", Ctrl, R;
    /// Memory fence (ordering only; the model is sequentially consistent per core).
    Fence = 0x05, "fence", Ctrl, R;
    /// Device trap: `imm` is a [`TrapCode`]; the dispatch faults.
    Trap = 0x06, "trap", Ctrl, R;

    /// dst = a
    Mov = 0x10, "mov", Alu, R;
    /// dst = imm
    Movi = 0x11, "movi", Alu, R;
    /// dst = a != 0 ? b : c
    Sel = 0x12, "sel", Alu, R;
    /// dst = csr[imm]
    Csr = 0x13, "csr", Csr, R;

    Iadd = 0x20, "iadd", Alu, R;
    Isub = 0x21, "isub", Alu, R;
    Imul = 0x22, "imul", Alu, R;
    /// High word of the 64-bit product; `mod` = 1 signed, 0 unsigned.
    Imulhi = 0x23, "imulhi", Alu, R;
    Udiv = 0x24, "udiv", Div, R;
    Sdiv = 0x25, "sdiv", Div, R;
    Urem = 0x26, "urem", Div, R;
    /// Remainder with the sign of `a` (OpSRem).
    Srem = 0x27, "srem", Div, R;
    /// Remainder with the sign of `b` (OpSMod).
    Smod = 0x28, "smod", Div, R;
    And = 0x29, "and", Alu, R;
    Or = 0x2A, "or", Alu, R;
    Xor = 0x2B, "xor", Alu, R;
    Not = 0x2C, "not", Alu, R;
    /// Shifts use the low 5 bits of `b`.
    Shl = 0x2D, "shl", Alu, R;
    Shr = 0x2E, "shr", Alu, R;
    Sar = 0x2F, "sar", Alu, R;
    Ineg = 0x30, "ineg", Alu, R;
    Iabs = 0x31, "iabs", Alu, R;
    /// `mod` = 1 signed.
    Imin = 0x32, "imin", Alu, R;
    Imax = 0x33, "imax", Alu, R;
    /// dst = cond(a, b) ? 1 : 0; `mod` is an [`IntCond`].
    Icmp = 0x34, "icmp", Alu, R;
    /// Bitfield extract of `a` at offset `b`, width `c`; `mod` = 1 sign-extends.
    Bfe = 0x35, "bfe", Alu, R;
    /// Bitfield insert: `a` with `b`'s low `d` bits placed at offset `c`.
    Bfi = 0x36, "bfi", Alu, R;
    Brev = 0x37, "brev", Alu, R;
    Popc = 0x38, "popc", Alu, R;
    /// Index of least significant set bit, or -1.
    Flsb = 0x39, "flsb", Alu, R;
    /// Index of most significant set bit (`mod` = 1: of the magnitude-style signed rule), or -1.
    Fmsb = 0x3A, "fmsb", Alu, R;
    /// Sign/zero-extend the low `mod` bits (8 or 16) of `a`; `imm` = 1 for sign.
    Ext = 0x3B, "ext", Alu, R;
    /// dst = a + b, dst+1 = carry out.
    Iaddc = 0x3C, "iaddc", Alu, R;
    /// dst = a - b, dst+1 = borrow out.
    Isubb = 0x3D, "isubb", Alu, R;
    /// dst/dst+1 = full 64-bit product of a and b; `mod` = 1 signed.
    Imulx = 0x3E, "imulx", Alu, R;

    /// 64-bit ops on register pairs.
    Iadd64 = 0x40, "iadd64", Alu, R;
    Isub64 = 0x41, "isub64", Alu, R;
    Imul64 = 0x42, "imul64", Alu, R;
    Shl64 = 0x43, "shl64", Alu, R;
    Shr64 = 0x44, "shr64", Alu, R;
    Sar64 = 0x45, "sar64", Alu, R;
    /// dst (one register) = cond(a64, b64); `mod` is an [`IntCond`].
    Icmp64 = 0x46, "icmp64", Alu, R;
    Udiv64 = 0x47, "udiv64", Div, R;
    Sdiv64 = 0x48, "sdiv64", Div, R;
    Urem64 = 0x49, "urem64", Div, R;
    Srem64 = 0x4A, "srem64", Div, R;

    Fadd = 0x50, "fadd", Fma, R;
    Fsub = 0x51, "fsub", Fma, R;
    Fmul = 0x52, "fmul", Fma, R;
    /// dst = a * b + c (fused).
    Ffma = 0x53, "ffma", Fma, R;
    Fdiv = 0x54, "fdiv", Div, R;
    /// IEEE minNum-style min/max (NaN operands lose).
    Fmin = 0x55, "fmin", Alu, R;
    Fmax = 0x56, "fmax", Alu, R;
    Fneg = 0x57, "fneg", Alu, R;
    Fabs = 0x58, "fabs", Alu, R;
    /// dst = cond(a, b) ? 1 : 0; `mod` is an [`FloatCond`].
    Fcmp = 0x59, "fcmp", Alu, R;
    Fsqrt = 0x5A, "fsqrt", Div, R;
    Frsq = 0x5B, "frsq", Div, R;
    Frcp = 0x5C, "frcp", Div, R;
    /// Rounding: `mod` is a [`Round`].
    Fround = 0x5D, "fround", Alu, R;
    Ffract = 0x5E, "ffract", Alu, R;
    Fsign = 0x5F, "fsign", Alu, R;
    /// Transcendental `mod` ([`SfuFunc`]) of `a` (and `b` for two-operand functions).
    Fsfu = 0x60, "fsfu", Sfu, R;
    /// Float to signed int (round toward zero, saturating).
    F2i = 0x61, "f2i", Alu, R;
    F2u = 0x62, "f2u", Alu, R;
    I2f = 0x63, "i2f", Alu, R;
    U2f = 0x64, "u2f", Alu, R;
    /// f32 -> f16 bits (round to nearest even) in the low half.
    F2h = 0x65, "f2h", Alu, R;
    /// f16 bits in the low half -> f32.
    H2f = 0x66, "h2f", Alu, R;
    /// i64 pair -> f32.
    L2f = 0x67, "l2f", Alu, R;
    /// u64 pair -> f32.
    Ul2f = 0x68, "ul2f", Alu, R;
    /// f32 -> i64 pair (toward zero).
    F2l = 0x69, "f2l", Alu, R;
    /// f32 -> u64 pair (toward zero).
    F2ul = 0x6A, "f2ul", Alu, R;

    /// dst.. = global[a64 + imm]; `mod` is a [`MemSize`].
    Ldg = 0x70, "ldg", Lsu, R;
    /// global[a64 + imm] = b..; `mod` is a [`MemSize`].
    Stg = 0x71, "stg", Lsu, R;
    /// LMEM (CTA-shared) at byte offset `a + imm`.
    Ldl = 0x72, "ldl", Lsu, R;
    Stl = 0x73, "stl", Lsu, R;
    /// Per-lane private memory at byte offset `a + imm`.
    Ldp = 0x74, "ldp", Lsu, R;
    Stp = 0x75, "stp", Lsu, R;
    /// dst = old; global[a64] op= b (c = comparator for CMPXCHG); `mod` is an [`AtomicOp`],
    /// `imm` bit 0 selects 64-bit operands (pairs).
    Atomg = 0x76, "atomg", Lsu, R;
    /// Same on LMEM at byte offset `a`.
    Atoml = 0x77, "atoml", Lsu, R;

    /// Image load: dst..dst+3 = texel of the image whose 64-byte descriptor is at global
    /// address a64, at integer coordinates b, b+1, b+2 (x, y, z-or-layer).
    Ild = 0x80, "ild", Tex, R;
    /// Image store: texel at coordinates b.. = c..c+3.
    Ist = 0x81, "ist", Tex, R;
    /// Image atomic: dst = old; texel op= c (d = comparator); `mod` is an [`AtomicOp`].
    Iatom = 0x82, "iatom", Tex, R;

    /// dst = 1 on every active lane when the vote `mod` ([`VoteOp`]) over the active
    /// lanes' `a` holds (all non-zero, any non-zero, all equal), else 0.
    Vote = 0x98, "vote", Warp, R;
    /// dst = bit mask of the active lanes whose `a` is non-zero (lane i -> bit i).
    Ballot = 0x99, "ballot", Warp, R;
    /// dst = `a` of another lane, chosen by `mod` ([`ShflMode`]) and `b`: lane `b`, lane - b,
    /// lane + b, or lane ^ b. A source lane outside the warp or inactive gives the lane's own
    /// `a`.
    Shfl = 0x9A, "shfl", Warp, R;
    /// Reduction or scan of `a` over the active lanes (or over clusters of them): `mod` is
    /// a [`RedOp`], `imm` holds the kind (bits 0-1: [`RED_REDUCE`], [`RED_INCLUSIVE`],
    /// [`RED_EXCLUSIVE`]), [`RED_WIDE`] for 64-bit operands (pairs), and the cluster size
    /// in bits 8-15 (0: the whole warp). Lanes combine in lane order.
    Red = 0x9B, "red", Warp, R;

    /// 64-bit floating point on register pairs (raw IEEE binary64 bits, low word first).
    Dadd = 0xA0, "dadd", Fma, R;
    Dsub = 0xA1, "dsub", Fma, R;
    Dmul = 0xA2, "dmul", Fma, R;
    /// dst = a * b + c (fused).
    Dfma = 0xA3, "dfma", Fma, R;
    Ddiv = 0xA4, "ddiv", Div, R;
    /// IEEE minNum-style min/max (NaN operands lose).
    Dmin = 0xA5, "dmin", Alu, R;
    Dmax = 0xA6, "dmax", Alu, R;
    /// dst (one register) = cond(a, b) ? 1 : 0; `mod` is a [`FloatCond`].
    Dcmp = 0xA7, "dcmp", Alu, R;
    Dsqrt = 0xA8, "dsqrt", Div, R;
    Drsq = 0xA9, "drsq", Div, R;
    Drcp = 0xAA, "drcp", Div, R;
    /// Rounding: `mod` is a [`Round`].
    Dround = 0xAB, "dround", Alu, R;
    Dfract = 0xAC, "dfract", Alu, R;
    /// f32 -> f64 pair (exact).
    F2d = 0xB0, "f2d", Alu, R;
    /// f64 pair -> f32 (round to nearest even).
    D2f = 0xB1, "d2f", Alu, R;
    /// f64 pair -> i32 / u32 (toward zero, saturating).
    D2i = 0xB2, "d2i", Alu, R;
    D2u = 0xB3, "d2u", Alu, R;
    /// i32 / u32 -> f64 pair (exact).
    I2d = 0xB4, "i2d", Alu, R;
    U2d = 0xB5, "u2d", Alu, R;
    /// f64 pair -> i64 / u64 pair (toward zero, saturating).
    D2l = 0xB6, "d2l", Alu, R;
    D2ul = 0xB7, "d2ul", Alu, R;
    /// i64 / u64 pair -> f64 pair (round to nearest even).
    L2d = 0xB8, "l2d", Alu, R;
    Ul2d = 0xB9, "ul2d", Alu, R;
    /// f64 pair -> f16 bits in the low half (round to nearest even, once).
    D2h = 0xBA, "d2h", Alu, R;

    /// Arm a trace: lanes' query slot in `a`, ray in b..b+11 (see [`super::rtu::ray`]).
    /// dst (if not `REG_NONE`) receives the handle (the query slot).
    Trace = 0x90, "trace", Rtu, R;
    /// Park until each active lane's record for query slot `a` has landed; dst = status.
    Wait = 0x91, "wait", Rtu, R;
    /// Resume query slot `a` with action `b` and hit distance `c` (posted; a WAIT follows).
    Cont = 0x92, "cont", Rtu, R;
    /// dst..dst+mod-1 = integer window slots `imm..imm+mod` of query slot `a`.
    Getw = 0x93, "getw", Rtu, R;
    /// Same for floating-point window slots.
    Getwf = 0x94, "getwf", Rtu, R;
}

/// Integer comparison conditions (`ICMP`, `ICMP64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum IntCond {
    Eq = 0,
    Ne = 1,
    Ult = 2,
    Ule = 3,
    Ugt = 4,
    Uge = 5,
    Slt = 6,
    Sle = 7,
    Sgt = 8,
    Sge = 9,
}

impl IntCond {
    pub fn from_u8(v: u8) -> Option<Self> {
        use IntCond::*;
        Some(match v {
            0 => Eq,
            1 => Ne,
            2 => Ult,
            3 => Ule,
            4 => Ugt,
            5 => Uge,
            6 => Slt,
            7 => Sle,
            8 => Sgt,
            9 => Sge,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use IntCond::*;
        match self {
            Eq => "eq",
            Ne => "ne",
            Ult => "ult",
            Ule => "ule",
            Ugt => "ugt",
            Uge => "uge",
            Slt => "slt",
            Sle => "sle",
            Sgt => "sgt",
            Sge => "sge",
        }
    }
}

/// Floating-point comparison conditions (`FCMP`). `O*` are false when either operand is NaN,
/// `U*` are true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FloatCond {
    Oeq = 0,
    One = 1,
    Olt = 2,
    Ole = 3,
    Ogt = 4,
    Oge = 5,
    Ueq = 6,
    Une = 7,
    Ult = 8,
    Ule = 9,
    Ugt = 10,
    Uge = 11,
    /// Both ordered (neither NaN).
    Ord = 12,
    /// Either NaN.
    Uno = 13,
    /// `a` is NaN (b ignored).
    IsNan = 14,
    /// `a` is ±inf (b ignored).
    IsInf = 15,
}

impl FloatCond {
    pub fn from_u8(v: u8) -> Option<Self> {
        use FloatCond::*;
        Some(match v {
            0 => Oeq,
            1 => One,
            2 => Olt,
            3 => Ole,
            4 => Ogt,
            5 => Oge,
            6 => Ueq,
            7 => Une,
            8 => Ult,
            9 => Ule,
            10 => Ugt,
            11 => Uge,
            12 => Ord,
            13 => Uno,
            14 => IsNan,
            15 => IsInf,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use FloatCond::*;
        match self {
            Oeq => "oeq",
            One => "one",
            Olt => "olt",
            Ole => "ole",
            Ogt => "ogt",
            Oge => "oge",
            Ueq => "ueq",
            Une => "une",
            Ult => "ult",
            Ule => "ule",
            Ugt => "ugt",
            Uge => "uge",
            Ord => "ord",
            Uno => "uno",
            IsNan => "isnan",
            IsInf => "isinf",
        }
    }
}

/// `FROUND` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Round {
    /// Toward -inf.
    Floor = 0,
    /// Toward +inf.
    Ceil = 1,
    /// Toward zero.
    Trunc = 2,
    /// To nearest, ties to even.
    Even = 3,
    /// To nearest, ties away from zero.
    Away = 4,
}

impl Round {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => Round::Floor,
            1 => Round::Ceil,
            2 => Round::Trunc,
            3 => Round::Even,
            4 => Round::Away,
            _ => return None,
        })
    }
}

/// `FSFU` functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SfuFunc {
    Sin = 0,
    Cos = 1,
    Tan = 2,
    Asin = 3,
    Acos = 4,
    Atan = 5,
    Sinh = 6,
    Cosh = 7,
    Tanh = 8,
    Asinh = 9,
    Acosh = 10,
    Atanh = 11,
    Exp = 12,
    Log = 13,
    Exp2 = 14,
    Log2 = 15,
    /// Two operands: a^b.
    Pow = 16,
    /// Two operands: atan2(a, b).
    Atan2 = 17,
}

impl SfuFunc {
    pub fn from_u8(v: u8) -> Option<Self> {
        use SfuFunc::*;
        Some(match v {
            0 => Sin,
            1 => Cos,
            2 => Tan,
            3 => Asin,
            4 => Acos,
            5 => Atan,
            6 => Sinh,
            7 => Cosh,
            8 => Tanh,
            9 => Asinh,
            10 => Acosh,
            11 => Atanh,
            12 => Exp,
            13 => Log,
            14 => Exp2,
            15 => Log2,
            16 => Pow,
            17 => Atan2,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use SfuFunc::*;
        match self {
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Exp => "exp",
            Log => "log",
            Exp2 => "exp2",
            Log2 => "log2",
            Pow => "pow",
            Atan2 => "atan2",
        }
    }
}

/// Memory access sizes (`mod` of loads and stores). Sub-word loads extend into one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MemSize {
    U8 = 0,
    S8 = 1,
    U16 = 2,
    S16 = 3,
    B32 = 4,
    /// Two registers.
    B64 = 5,
    /// Four registers.
    B128 = 6,
}

impl MemSize {
    pub fn from_u8(v: u8) -> Option<Self> {
        use MemSize::*;
        Some(match v {
            0 => U8,
            1 => S8,
            2 => U16,
            3 => S16,
            4 => B32,
            5 => B64,
            6 => B128,
            _ => return None,
        })
    }
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
    pub fn name(self) -> &'static str {
        match self {
            MemSize::U8 => "u8",
            MemSize::S8 => "s8",
            MemSize::U16 => "u16",
            MemSize::S16 => "s16",
            MemSize::B32 => "b32",
            MemSize::B64 => "b64",
            MemSize::B128 => "b128",
        }
    }
}

/// Atomic operations (`mod` of `ATOMG`, `ATOML`, `IATOM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AtomicOp {
    Add = 0,
    Smin = 1,
    Umin = 2,
    Smax = 3,
    Umax = 4,
    And = 5,
    Or = 6,
    Xor = 7,
    Xchg = 8,
    /// Compare-exchange: store b if the old value equals c.
    CmpXchg = 9,
    /// f32 add.
    Fadd = 10,
    /// Plain atomic load (OpAtomicLoad): dst = old, memory unchanged.
    Load = 11,
    /// Plain atomic store (OpAtomicStore): memory = b.
    Store = 12,
}

impl AtomicOp {
    pub fn from_u8(v: u8) -> Option<Self> {
        use AtomicOp::*;
        Some(match v {
            0 => Add,
            1 => Smin,
            2 => Umin,
            3 => Smax,
            4 => Umax,
            5 => And,
            6 => Or,
            7 => Xor,
            8 => Xchg,
            9 => CmpXchg,
            10 => Fadd,
            11 => Load,
            12 => Store,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use AtomicOp::*;
        match self {
            Add => "add",
            Smin => "smin",
            Umin => "umin",
            Smax => "smax",
            Umax => "umax",
            And => "and",
            Or => "or",
            Xor => "xor",
            Xchg => "xchg",
            CmpXchg => "cmpxchg",
            Fadd => "fadd",
            Load => "load",
            Store => "store",
        }
    }
}

/// `VOTE` conditions (`mod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum VoteOp {
    All = 0,
    Any = 1,
    /// Every active lane holds the same value.
    Eq = 2,
}

impl VoteOp {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => VoteOp::All,
            1 => VoteOp::Any,
            2 => VoteOp::Eq,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            VoteOp::All => "all",
            VoteOp::Any => "any",
            VoteOp::Eq => "eq",
        }
    }
}

/// `SHFL` source-lane modes (`mod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ShflMode {
    /// Lane `b`.
    Idx = 0,
    /// Lane - `b`.
    Up = 1,
    /// Lane + `b`.
    Down = 2,
    /// Lane ^ `b`.
    Xor = 3,
}

impl ShflMode {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => ShflMode::Idx,
            1 => ShflMode::Up,
            2 => ShflMode::Down,
            3 => ShflMode::Xor,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            ShflMode::Idx => "idx",
            ShflMode::Up => "up",
            ShflMode::Down => "down",
            ShflMode::Xor => "xor",
        }
    }
}

/// `RED` operations (`mod`); with [`RED_WIDE`] the integer ops are 64-bit and the float ops
/// f64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RedOp {
    Iadd = 0,
    Imul = 1,
    Smin = 2,
    Umin = 3,
    Smax = 4,
    Umax = 5,
    And = 6,
    Or = 7,
    Xor = 8,
    Fadd = 9,
    Fmul = 10,
    Fmin = 11,
    Fmax = 12,
}

impl RedOp {
    pub fn from_u8(v: u8) -> Option<Self> {
        use RedOp::*;
        Some(match v {
            0 => Iadd,
            1 => Imul,
            2 => Smin,
            3 => Umin,
            4 => Smax,
            5 => Umax,
            6 => And,
            7 => Or,
            8 => Xor,
            9 => Fadd,
            10 => Fmul,
            11 => Fmin,
            12 => Fmax,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use RedOp::*;
        match self {
            Iadd => "iadd",
            Imul => "imul",
            Smin => "smin",
            Umin => "umin",
            Smax => "smax",
            Umax => "umax",
            And => "and",
            Or => "or",
            Xor => "xor",
            Fadd => "fadd",
            Fmul => "fmul",
            Fmin => "fmin",
            Fmax => "fmax",
        }
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
        Nop | Exit | Fence => write!(s, "{m}"),
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

    #[test]
    fn bad_opcode_and_truncation_are_errors() {
        let mut w = [0u8; INSTR_BYTES];
        w[0] = 0xFE;
        assert!(matches!(Instr::decode(&w, 3), Err(DecodeError::BadOpcode { index: 3, byte: 0xFE })));
        assert!(matches!(decode_all(&[0u8; 17]), Err(DecodeError::Truncated { len: 17 })));
    }
}
