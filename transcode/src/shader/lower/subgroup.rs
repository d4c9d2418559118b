//! Subgroup operations (`OpGroupNonUniform*`): a subgroup is a warp, and its active
//! invocations are the warp's active lanes, so every operation maps onto the cross-lane ops
//! (`VOTE`, `BALLOT`, `SHFL`, `RED`) plus ordinary arithmetic on lane masks. Ballots are
//! `uvec4`s whose first word holds the whole warp (at most 32 lanes); the other words are 0.
//!
//! Values of any type go through the cross-lane ops register by register (shuffles,
//! broadcasts) or component by component (arithmetic): 64-bit integers and doubles use the
//! wide reductions, 8/16-bit integers reduce on their zero-extended (or, for signed min/max,
//! sign-extended) registers and are masked back, halves reduce as f32 and round once.

use super::Lowerer;
use crate::shader::emit::I;
use crate::shader::error::{invalid, unsupported, Result};
use crate::shader::module::InstExt;
use crate::shader::types::{Scalar, Type};
use rspirv::dr::{Instruction, Operand};
use spirv::{GroupOperation, Op};
use vortex_model::abi::csr;
use vortex_model::abi::isa::{
    FloatCond, IntCond, Op as Vx, RedOp, ShflMode, VoteOp, RED_CLUSTER_SHIFT, RED_EXCLUSIVE, RED_INCLUSIVE, RED_REDUCE,
    RED_WIDE,
};

/// The execution scope every subgroup instruction must name.
const SCOPE_SUBGROUP: u32 = 3;

pub(super) fn handles(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        GroupNonUniformElect
            | GroupNonUniformAll
            | GroupNonUniformAny
            | GroupNonUniformAllEqual
            | GroupNonUniformBroadcast
            | GroupNonUniformBroadcastFirst
            | GroupNonUniformBallot
            | GroupNonUniformInverseBallot
            | GroupNonUniformBallotBitExtract
            | GroupNonUniformBallotBitCount
            | GroupNonUniformBallotFindLSB
            | GroupNonUniformBallotFindMSB
            | GroupNonUniformShuffle
            | GroupNonUniformShuffleXor
            | GroupNonUniformShuffleUp
            | GroupNonUniformShuffleDown
            | GroupNonUniformIAdd
            | GroupNonUniformFAdd
            | GroupNonUniformIMul
            | GroupNonUniformFMul
            | GroupNonUniformSMin
            | GroupNonUniformUMin
            | GroupNonUniformFMin
            | GroupNonUniformSMax
            | GroupNonUniformUMax
            | GroupNonUniformFMax
            | GroupNonUniformBitwiseAnd
            | GroupNonUniformBitwiseOr
            | GroupNonUniformBitwiseXor
            | GroupNonUniformLogicalAnd
            | GroupNonUniformLogicalOr
            | GroupNonUniformLogicalXor
            | GroupNonUniformQuadBroadcast
            | GroupNonUniformQuadSwap
    )
}

impl<'m> Lowerer<'m> {
    pub(super) fn subgroup_inst(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let scope = inst.id(0)?;
        if self.m.const_u32(scope) != Some(SCOPE_SUBGROUP) {
            return Err(unsupported!("{} with an execution scope other than Subgroup", inst.name()));
        }
        match inst.class.opcode {
            GroupNonUniformElect | GroupNonUniformAll | GroupNonUniformAny | GroupNonUniformAllEqual => {
                self.subgroup_vote(inst)
            }
            GroupNonUniformBroadcast
            | GroupNonUniformShuffle
            | GroupNonUniformBroadcastFirst
            | GroupNonUniformShuffleXor
            | GroupNonUniformShuffleUp
            | GroupNonUniformShuffleDown
            | GroupNonUniformQuadBroadcast
            | GroupNonUniformQuadSwap => self.subgroup_shuffle(inst),
            GroupNonUniformBallot
            | GroupNonUniformInverseBallot
            | GroupNonUniformBallotBitExtract
            | GroupNonUniformBallotBitCount
            | GroupNonUniformBallotFindLSB
            | GroupNonUniformBallotFindMSB => self.subgroup_ballot(inst),
            _ => self.subgroup_arith(inst),
        }
    }

    /// Elect and the votes: all, any, all-equal.
    fn subgroup_vote(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let op = inst.class.opcode;
        match op {
            GroupNonUniformElect => {
                let first = self.first_lane()?;
                let lane = self.lane_id()?;
                let d = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), lane, first)?;
                self.define(rid, d, rty);
            }
            GroupNonUniformAll | GroupNonUniformAny => {
                let p = self.regs(inst.id(1)?)?;
                let v = if op == GroupNonUniformAll { VoteOp::All } else { VoteOp::Any };
                let d = self.e.op1(I::new(Vx::Vote).vote(v), p)?;
                self.define(rid, d, rty);
            }
            GroupNonUniformAllEqual => {
                let id = inst.id(1)?;
                let (v, ty) = (self.regs(id)?, self.type_of(id)?);
                let sh = self.m.types.shape(ty)?;
                let d = self.e.alloc(1)?;
                let one = self.imm(1)?;
                self.e.mov(d, one);
                if sh.scalar.is_float() {
                    // Float equality (+0 equals -0, NaN equals nothing): against the first
                    // active lane's value.
                    let first = self.first_lane()?;
                    let cr = sh.scalar.regs() as u16;
                    for k in 0..sh.n as u16 {
                        let f = self.e.alloc(cr as u32)?;
                        for w in 0..cr {
                            self.e.emit(I::new(Vx::Shfl).shfl(ShflMode::Idx).dst(f + w).a(v + k * cr + w).b(first));
                        }
                        let eq = self.fcmp_new(FloatCond::Oeq, sh.scalar, v + k * cr, f)?;
                        let all = self.e.op1(I::new(Vx::Vote).vote(VoteOp::All), eq)?;
                        self.e.emit(I::new(Vx::And).dst(d).a(d).b(all));
                    }
                } else {
                    for w in 0..self.m.types.regs(ty)? as u16 {
                        let eq = self.e.op1(I::new(Vx::Vote).vote(VoteOp::Eq), v + w)?;
                        self.e.emit(I::new(Vx::And).dst(d).a(d).b(eq));
                    }
                }
                self.define(rid, d, rty);
            }
            _ => return Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
        Ok(())
    }

    /// Broadcasts, shuffles and the quad operations: a value from another lane.
    fn subgroup_shuffle(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            GroupNonUniformBroadcast | GroupNonUniformShuffle => {
                let lane = self.regs(inst.id(2)?)?;
                self.shuffle_value(inst, ShflMode::Idx, lane)?;
            }
            GroupNonUniformBroadcastFirst => {
                let first = self.first_lane()?;
                self.shuffle_value(inst, ShflMode::Idx, first)?;
            }
            GroupNonUniformShuffleXor | GroupNonUniformShuffleUp | GroupNonUniformShuffleDown => {
                let mode = match op {
                    GroupNonUniformShuffleXor => ShflMode::Xor,
                    GroupNonUniformShuffleUp => ShflMode::Up,
                    _ => ShflMode::Down,
                };
                let k = self.regs(inst.id(2)?)?;
                self.shuffle_value(inst, mode, k)?;
            }
            GroupNonUniformQuadBroadcast => {
                // Lane (lane & ~3) | index.
                let idx = self.regs(inst.id(2)?)?;
                let (lane, quad) = (self.lane_id()?, self.imm(!3u32)?);
                let base = self.e.op2(Vx::And, lane, quad)?;
                let src = self.e.op2(Vx::Or, base, idx)?;
                self.shuffle_value(inst, ShflMode::Idx, src)?;
            }
            GroupNonUniformQuadSwap => {
                // Horizontal, vertical, diagonal: lane ^ 1, ^ 2, ^ 3.
                let dir = inst.id(2)?;
                let dir =
                    self.m.const_u32(dir).ok_or_else(|| invalid!("{}: direction is not a constant", inst.name()))?;
                if dir > 2 {
                    return Err(invalid!("{}: direction {dir}", inst.name()));
                }
                let k = self.imm(dir + 1)?;
                self.shuffle_value(inst, ShflMode::Xor, k)?;
            }
            _ => return Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
        Ok(())
    }

    /// Ballots and the queries on them.
    fn subgroup_ballot(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let op = inst.class.opcode;
        match op {
            GroupNonUniformBallot => {
                let p = self.regs(inst.id(1)?)?;
                let d = self.e.alloc(4)?;
                self.e.emit(I::new(Vx::Ballot).dst(d).a(p));
                let zero = self.imm(0)?;
                for k in 1..4 {
                    self.e.mov(d + k, zero);
                }
                self.define(rid, d, rty);
            }
            GroupNonUniformInverseBallot => {
                let v = self.regs(inst.id(1)?)?;
                let lane = self.lane_id()?;
                let one = self.imm(1)?;
                let t = self.e.op2(Vx::Shr, v, lane)?;
                let d = self.e.op2(Vx::And, t, one)?;
                self.define(rid, d, rty);
            }
            GroupNonUniformBallotBitExtract => {
                let v = self.regs(inst.id(1)?)?;
                let idx = self.regs(inst.id(2)?)?;
                // Word idx / 32 of the uvec4, bit idx % 32.
                let (five, three, one) = (self.imm(5)?, self.imm(3)?, self.imm(1)?);
                let w = self.e.op2(Vx::Shr, idx, five)?;
                let w = self.e.op2(Vx::And, w, three)?;
                let word = self.e.alloc(1)?;
                self.e.mov(word, v);
                for k in 1..4u32 {
                    let kk = self.imm(k)?;
                    let c = self.e.op2(I::new(Vx::Icmp).cond(IntCond::Eq), w, kk)?;
                    self.e.emit(I::new(Vx::Sel).dst(word).a(c).b(v + k as u16).c(word));
                }
                let t = self.e.op2(Vx::Shr, word, idx)?;
                let d = self.e.op2(Vx::And, t, one)?;
                self.define(rid, d, rty);
            }
            GroupNonUniformBallotBitCount => {
                let gop = group_operation(inst)?;
                let v = self.regs(inst.id(2)?)?;
                let m = self.warp_mask()?;
                let bits = self.e.op2(Vx::And, v, m)?;
                let bits = match gop {
                    GroupOperation::Reduce => bits,
                    GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan => {
                        let below = self.lanes_below(gop == GroupOperation::InclusiveScan)?;
                        self.e.op2(Vx::And, bits, below)?
                    }
                    g => return Err(unsupported!("{} with group operation {g:?}", inst.name())),
                };
                let d = self.e.op1(Vx::Popc, bits)?;
                self.define(rid, d, rty);
            }
            GroupNonUniformBallotFindLSB | GroupNonUniformBallotFindMSB => {
                let v = self.regs(inst.id(1)?)?;
                let m = self.warp_mask()?;
                let bits = self.e.op2(Vx::And, v, m)?;
                let vx = if op == GroupNonUniformBallotFindLSB { Vx::Flsb } else { Vx::Fmsb };
                let d = self.e.op1(vx, bits)?;
                self.define(rid, d, rty);
            }
            _ => return Err(unsupported!("SPIR-V instruction Op{}", inst.class.opname)),
        }
        Ok(())
    }

    /// Shuffles the value operand (operand 1) register by register.
    fn shuffle_value(&mut self, inst: &Instruction, mode: ShflMode, k: u16) -> Result<()> {
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let v = self.regs(inst.id(1)?)?;
        let n = self.m.types.regs(rty)?;
        let d = self.e.alloc(n)?;
        for w in 0..n as u16 {
            self.e.emit(I::new(Vx::Shfl).shfl(mode).dst(d + w).a(v + w).b(k));
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// The reductions and scans (`OpGroupNonUniform{IAdd,...,LogicalXor}`).
    fn subgroup_arith(&mut self, inst: &Instruction) -> Result<()> {
        use Op::*;
        let (rid, rty) = (inst.rid()?, inst.rty()?);
        let op = inst.class.opcode;
        let gop = group_operation(inst)?;
        let (kind, cluster) = match gop {
            GroupOperation::Reduce => (RED_REDUCE, 0),
            GroupOperation::InclusiveScan => (RED_INCLUSIVE, 0),
            GroupOperation::ExclusiveScan => (RED_EXCLUSIVE, 0),
            GroupOperation::ClusteredReduce => {
                let c = inst.id(3)?;
                let size = self
                    .m
                    .const_u32(c)
                    .filter(|s| s.is_power_of_two())
                    .ok_or_else(|| invalid!("{}: cluster size %{c} is not a constant power of two", inst.name()))?;
                // Clusters as large as the warp (or larger) are the whole warp.
                (RED_REDUCE, if size >= 32 { 0 } else { size })
            }
            g => return Err(unsupported!("{} with group operation {g:?}", inst.name())),
        };
        let red = match op {
            GroupNonUniformIAdd => RedOp::Iadd,
            GroupNonUniformFAdd => RedOp::Fadd,
            GroupNonUniformIMul => RedOp::Imul,
            GroupNonUniformFMul => RedOp::Fmul,
            GroupNonUniformSMin => RedOp::Smin,
            GroupNonUniformUMin => RedOp::Umin,
            GroupNonUniformFMin => RedOp::Fmin,
            GroupNonUniformSMax => RedOp::Smax,
            GroupNonUniformUMax => RedOp::Umax,
            GroupNonUniformFMax => RedOp::Fmax,
            GroupNonUniformBitwiseAnd | GroupNonUniformLogicalAnd => RedOp::And,
            GroupNonUniformBitwiseOr | GroupNonUniformLogicalOr => RedOp::Or,
            _ => RedOp::Xor,
        };
        let (v, sh) = self.operand(inst.id(2)?)?;
        let s = sh.scalar;
        let cr = s.regs() as u16;
        let imm = kind | if s.regs() == 2 { RED_WIDE } else { 0 } | cluster << RED_CLUSTER_SHIFT;
        let d = self.e.alloc(sh.n * s.regs())?;
        for k in 0..sh.n as u16 {
            let (vk, dk) = (v + k * cr, d + k * cr);
            // Signed narrow min/max compare sign-extended values.
            let src =
                if s.is_narrow_int() && matches!(red, RedOp::Smin | RedOp::Smax) { self.sext(s, vk)? } else { vk };
            self.e.emit(I::new(Vx::Red).red(red).dst(dk).a(src).imm(imm));
            self.canon(s, dk)?;
            if s == Scalar::F16 && matches!(red, RedOp::Fadd | RedOp::Fmul) {
                self.quantize(dk);
            }
        }
        if matches!(self.m.types.get(rty)?, Type::Pointer { .. }) {
            return Err(invalid!("{} returns a pointer", inst.name()));
        }
        self.define(rid, d, rty);
        Ok(())
    }

    /// The lane's index in the warp (prologue, shared).
    pub(super) fn lane_id(&mut self) -> Result<u16> {
        if let Some(r) = self.cache_lane {
            return Ok(r);
        }
        let r = self.in_prologue(|l| {
            let r = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Csr).dst(r).imm(csr::LANE_ID));
            Ok(r)
        })?;
        self.e.name_regs(r, 1, "lane".into());
        self.cache_lane = Some(r);
        Ok(r)
    }

    /// The mask of every lane of the warp, `!0 >> (32 - NUM_THREADS)` (prologue, shared).
    pub(super) fn warp_mask(&mut self) -> Result<u16> {
        if let Some(r) = self.cache_warp_mask {
            return Ok(r);
        }
        let r = self.in_prologue(|l| {
            let (all, c32) = (l.imm(u32::MAX)?, l.imm(32)?);
            let nt = l.e.alloc(1)?;
            l.e.emit(I::new(Vx::Csr).dst(nt).imm(csr::NUM_THREADS));
            let sh = l.e.op2(Vx::Isub, c32, nt)?;
            l.e.op2(Vx::Shr, all, sh)
        })?;
        self.e.name_regs(r, 1, "warp mask".into());
        self.cache_warp_mask = Some(r);
        Ok(r)
    }

    /// Lanes below this one (`(1 << lane) - 1`), or at or below it with `inclusive`.
    fn lanes_below(&mut self, inclusive: bool) -> Result<u16> {
        let lane = self.lane_id()?;
        let one = self.imm(1)?;
        let bit = self.e.op2(Vx::Shl, one, lane)?;
        let lt = self.e.op2(Vx::Isub, bit, one)?;
        if inclusive {
            self.e.op2(Vx::Or, lt, bit)
        } else {
            Ok(lt)
        }
    }

    /// The lowest active lane, on every active lane.
    fn first_lane(&mut self) -> Result<u16> {
        let one = self.imm(1)?;
        let active = self.e.op1(Vx::Ballot, one)?;
        self.e.op1(Vx::Flsb, active)
    }

    /// The subgroup built-ins every stage has, into `d` (`builtin_regs` registers); false for
    /// any other built-in.
    pub(super) fn subgroup_builtin(&mut self, b: spirv::BuiltIn, d: u16) -> Result<bool> {
        use spirv::BuiltIn::*;
        match b {
            SubgroupSize => self.e.emit(I::new(Vx::Csr).dst(d).imm(csr::NUM_THREADS)),
            SubgroupLocalInvocationId => self.e.emit(I::new(Vx::Csr).dst(d).imm(csr::LANE_ID)),
            SubgroupEqMask | SubgroupGeMask | SubgroupGtMask | SubgroupLeMask | SubgroupLtMask => {
                self.subgroup_mask_builtin(b, d)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The subgroup mask built-ins (`gl_SubgroupEqMask` ...): 4 registers, lane bits in the
    /// first, limited to the warp's lanes.
    fn subgroup_mask_builtin(&mut self, b: spirv::BuiltIn, d: u16) -> Result<()> {
        use spirv::BuiltIn::*;
        let lane = self.lane_id()?;
        let (one, zero) = (self.imm(1)?, self.imm(0)?);
        let m = self.warp_mask()?;
        let bit = self.e.op2(Vx::Shl, one, lane)?;
        let lt = self.e.op2(Vx::Isub, bit, one)?;
        match b {
            SubgroupEqMask => self.e.mov(d, bit),
            SubgroupLtMask => self.e.mov(d, lt),
            SubgroupLeMask => self.e.emit(I::new(Vx::Or).dst(d).a(lt).b(bit)),
            SubgroupGeMask | SubgroupGtMask => {
                let le = if b == SubgroupGtMask { self.e.op2(Vx::Or, lt, bit)? } else { lt };
                let above = self.e.op1(Vx::Not, le)?;
                self.e.emit(I::new(Vx::And).dst(d).a(above).b(m));
            }
            _ => return Err(invalid!("internal: {b:?} is not a subgroup mask")),
        }
        for k in 1..4 {
            self.e.mov(d + k, zero);
        }
        Ok(())
    }
}

/// Registers of a built-in that is not a vector: 4 for the subgroup masks (`uvec4`s), else 1.
pub(super) fn builtin_regs(b: spirv::BuiltIn) -> u32 {
    use spirv::BuiltIn::*;
    match b {
        SubgroupEqMask | SubgroupGeMask | SubgroupGtMask | SubgroupLeMask | SubgroupLtMask => 4,
        _ => 1,
    }
}

/// The group operation operand of a reduction or ballot count.
fn group_operation(inst: &Instruction) -> Result<GroupOperation> {
    match inst.operand(1)? {
        Operand::GroupOperation(g) => Ok(*g),
        o => Err(invalid!("{} with group operation operand {o:?}", inst.name())),
    }
}
