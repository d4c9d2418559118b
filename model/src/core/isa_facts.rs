//! Every op's register operands, written out by hand as a table of expectations, against
//! what decode, the zeroing analysis and timed mode's scoreboard derive from the ISA table.
//!
//! Notation per op: `field:KW?` for each register field (`dst`, `a`, `b`, `c`, `d`, in
//! encoding order): `K` is `W` (written by every active lane: the zeroing analysis may
//! trust the write), `w` (written, not trusted) or `r` (read); `W` the width: `1`..`4`, `m`
//! (the `mod` memory size), `x` (2 with `imm` bit 0, the 64-bit atomics), `e` (2 with
//! `RED_WIDE`), `n` (the GETW count in `mod`), `y` (the TRACE ray), `i` (the ISECT ray), `t` (TEX's operand
//! block), `o` (EXP's data: 4 for a colour target, else 1); `?` marks a field that may be
//! `REG_NONE`.

use super::decode::{full_write, operand_widths};
use super::timed::KernelTiming;
use crate::abi::isa::{Instr, MemSize, Op, RED_WIDE, REG_NONE};
use crate::abi::rtu;

const EXPECT: &[(Op, &str)] = &[
    (Op::Nop, ""),
    (Op::Exit, ""),
    (Op::Jmp, ""),
    (Op::Bra, "a:r1"),
    (Op::Bar, ""),
    (Op::Fence, ""),
    (Op::Trap, ""),
    (Op::Demote, ""),
    (Op::Mov, "dst:W1 a:r1"),
    (Op::Movi, "dst:W1"),
    (Op::Sel, "dst:W1 a:r1 b:r1 c:r1"),
    (Op::Csr, "dst:W1"),
    (Op::Iadd, "dst:W1 a:r1 b:r1"),
    (Op::Isub, "dst:W1 a:r1 b:r1"),
    (Op::Imul, "dst:W1 a:r1 b:r1"),
    (Op::Imulhi, "dst:W1 a:r1 b:r1"),
    (Op::Udiv, "dst:W1 a:r1 b:r1"),
    (Op::Sdiv, "dst:W1 a:r1 b:r1"),
    (Op::Urem, "dst:W1 a:r1 b:r1"),
    (Op::Srem, "dst:W1 a:r1 b:r1"),
    (Op::Smod, "dst:W1 a:r1 b:r1"),
    (Op::And, "dst:W1 a:r1 b:r1"),
    (Op::Or, "dst:W1 a:r1 b:r1"),
    (Op::Xor, "dst:W1 a:r1 b:r1"),
    (Op::Not, "dst:W1 a:r1"),
    (Op::Shl, "dst:W1 a:r1 b:r1"),
    (Op::Shr, "dst:W1 a:r1 b:r1"),
    (Op::Sar, "dst:W1 a:r1 b:r1"),
    (Op::Ineg, "dst:W1 a:r1"),
    (Op::Iabs, "dst:W1 a:r1"),
    (Op::Imin, "dst:W1 a:r1 b:r1"),
    (Op::Imax, "dst:W1 a:r1 b:r1"),
    (Op::Icmp, "dst:W1 a:r1 b:r1"),
    (Op::Bfe, "dst:W1 a:r1 b:r1 c:r1"),
    (Op::Bfi, "dst:W1 a:r1 b:r1 c:r1 d:r1"),
    (Op::Brev, "dst:W1 a:r1"),
    (Op::Popc, "dst:W1 a:r1"),
    (Op::Flsb, "dst:W1 a:r1"),
    (Op::Fmsb, "dst:W1 a:r1"),
    (Op::Ext, "dst:W1 a:r1"),
    (Op::Iaddc, "dst:W2 a:r1 b:r1"),
    (Op::Isubb, "dst:W2 a:r1 b:r1"),
    (Op::Imulx, "dst:W2 a:r1 b:r1"),
    (Op::Iadd64, "dst:W2 a:r2 b:r2"),
    (Op::Isub64, "dst:W2 a:r2 b:r2"),
    (Op::Imul64, "dst:W2 a:r2 b:r2"),
    (Op::Shl64, "dst:w2 a:r2 b:r1"),
    (Op::Shr64, "dst:w2 a:r2 b:r1"),
    (Op::Sar64, "dst:w2 a:r2 b:r1"),
    (Op::Icmp64, "dst:w1 a:r2 b:r2"),
    (Op::Udiv64, "dst:W2 a:r2 b:r2"),
    (Op::Sdiv64, "dst:W2 a:r2 b:r2"),
    (Op::Urem64, "dst:W2 a:r2 b:r2"),
    (Op::Srem64, "dst:W2 a:r2 b:r2"),
    (Op::Fadd, "dst:W1 a:r1 b:r1"),
    (Op::Fsub, "dst:W1 a:r1 b:r1"),
    (Op::Fmul, "dst:W1 a:r1 b:r1"),
    (Op::Ffma, "dst:W1 a:r1 b:r1 c:r1"),
    (Op::Fdiv, "dst:W1 a:r1 b:r1"),
    (Op::Fmin, "dst:W1 a:r1 b:r1"),
    (Op::Fmax, "dst:W1 a:r1 b:r1"),
    (Op::Fneg, "dst:W1 a:r1"),
    (Op::Fabs, "dst:W1 a:r1"),
    (Op::Fcmp, "dst:W1 a:r1 b:r1"),
    (Op::Fsqrt, "dst:W1 a:r1"),
    (Op::Frsq, "dst:W1 a:r1"),
    (Op::Frcp, "dst:W1 a:r1"),
    (Op::Fround, "dst:W1 a:r1"),
    (Op::Ffract, "dst:W1 a:r1"),
    (Op::Fsign, "dst:W1 a:r1"),
    (Op::Fsfu, "dst:W1 a:r1 b:r1?"),
    (Op::F2i, "dst:W1 a:r1"),
    (Op::F2u, "dst:W1 a:r1"),
    (Op::I2f, "dst:W1 a:r1"),
    (Op::U2f, "dst:W1 a:r1"),
    (Op::F2h, "dst:W1 a:r1"),
    (Op::H2f, "dst:W1 a:r1"),
    (Op::L2f, "dst:w1 a:r2"),
    (Op::Ul2f, "dst:w1 a:r2"),
    (Op::F2l, "dst:w2 a:r1"),
    (Op::F2ul, "dst:w2 a:r1"),
    (Op::Ldg, "dst:Wm a:r2"),
    (Op::Stg, "a:r2 b:rm"),
    (Op::Ldl, "dst:Wm a:r1"),
    (Op::Stl, "a:r1 b:rm"),
    (Op::Ldp, "dst:Wm a:r1"),
    (Op::Stp, "a:r1 b:rm"),
    (Op::Atomg, "dst:wx? a:r2 b:rx? c:rx?"),
    (Op::Atoml, "dst:wx? a:r1 b:rx? c:rx?"),
    (Op::Ild, "dst:w4 a:r2 b:r3"),
    (Op::Ist, "a:r2 b:r3 c:r4"),
    (Op::Iatom, "dst:w1? a:r2 b:r3 c:r1 d:r1?"),
    (Op::Tex, "dst:w4 a:r2 b:rt? c:r2?"),
    (Op::Exp, "a:ro"),
    (Op::Isect, "dst:W4 a:r4 b:ri"),
    (Op::Rqlog, "a:r1 b:r2?"),
    (Op::Vote, "dst:w1 a:r1"),
    (Op::Ballot, "dst:w1 a:r1"),
    (Op::Shfl, "dst:w1 a:r1 b:r1"),
    (Op::Red, "dst:we a:re"),
    (Op::Deriv, "dst:W1 a:r1"),
    (Op::Dadd, "dst:w2 a:r2 b:r2"),
    (Op::Dsub, "dst:w2 a:r2 b:r2"),
    (Op::Dmul, "dst:w2 a:r2 b:r2"),
    (Op::Dfma, "dst:w2 a:r2 b:r2 c:r2"),
    (Op::Ddiv, "dst:w2 a:r2 b:r2"),
    (Op::Dmin, "dst:w2 a:r2 b:r2"),
    (Op::Dmax, "dst:w2 a:r2 b:r2"),
    (Op::Dcmp, "dst:w1 a:r2 b:r2"),
    (Op::Dsqrt, "dst:w2 a:r2"),
    (Op::Drsq, "dst:w2 a:r2"),
    (Op::Drcp, "dst:w2 a:r2"),
    (Op::Dround, "dst:w2 a:r2"),
    (Op::Dfract, "dst:w2 a:r2"),
    (Op::F2d, "dst:w2 a:r1"),
    (Op::D2f, "dst:w1 a:r2"),
    (Op::D2i, "dst:w1 a:r2"),
    (Op::D2u, "dst:w1 a:r2"),
    (Op::I2d, "dst:w2 a:r1"),
    (Op::U2d, "dst:w2 a:r1"),
    (Op::D2l, "dst:w2 a:r2"),
    (Op::D2ul, "dst:w2 a:r2"),
    (Op::L2d, "dst:w2 a:r2"),
    (Op::Ul2d, "dst:w2 a:r2"),
    (Op::D2h, "dst:w1 a:r2"),
    (Op::Trace, "dst:w1? a:r1 b:ry"),
    (Op::Wait, "dst:W1 a:r1"),
    (Op::Cont, "a:r1 b:r1 c:r1"),
    (Op::Getw, "dst:Wn a:r1"),
    (Op::Getwf, "dst:Wn a:r1"),
];

/// One field of the notation.
struct Spec {
    reg: fn(&Instr) -> u16,
    kind: char,
    width: char,
    optional: bool,
}

fn specs(s: &str) -> Vec<Spec> {
    s.split_whitespace()
        .map(|f| {
            let (name, rest) = f.split_once(':').expect("field:spec");
            let reg: fn(&Instr) -> u16 = match name {
                "dst" => |i| i.dst,
                "a" => |i| i.a,
                "b" => |i| i.b,
                "c" => |i| i.c,
                "d" => |i| i.d,
                _ => panic!("unknown field {name}"),
            };
            let mut ch = rest.chars();
            let (kind, width) = (ch.next().unwrap(), ch.next().unwrap());
            Spec { reg, kind, width, optional: ch.next() == Some('?') }
        })
        .collect()
}

/// The width a spec gives `i`; `None` for a memory size `mod` that is not one.
fn width(w: char, i: &Instr) -> Option<u32> {
    Some(match w {
        '1'..='4' => w.to_digit(10).unwrap(),
        'm' => MemSize::from_u8(i.modifier)?.regs() as u32,
        'x' => 1 + (i.imm & 1),
        'e' => 1 + (i.imm & RED_WIDE != 0) as u32,
        'n' => i.modifier.max(1) as u32,
        'y' => rtu::ray::REGS,
        // ISECT's ray: seed 003's eleven input words, counted by hand.
        'i' => 11,
        't' => tex_block(i.modifier, i.imm)?,
        'o' => match i.modifier {
            0..=7 => 4,
            8 | 9 => 1,
            _ => return None,
        },
        _ => panic!("unknown width {w}"),
    })
}

/// TEX's operand block by hand: coordinates (+ layer), reference, bias/LOD, gradients (a
/// fetch: level, sample index).
fn tex_block(op: u8, imm: u32) -> Option<u32> {
    let dims = match imm & 3 {
        0 => 1,
        1 => 2,
        _ => 3,
    };
    let (layer, dref, lod) = ((imm >> 2) & 1, (imm >> 3) & 1, (imm >> 4) & 3);
    Some(match op {
        0 | 1 => dims + layer + dref + [0, 1, 1, 2 * dims][lod as usize],
        2 => dims + layer + (lod == 2) as u32 + (imm >> 22 & 1),
        3 => (lod == 2) as u32,
        4 | 6 => 0,
        5 => dims,
        _ => return None,
    })
}

/// Instructions of `op` with a spread of modifiers (every memory size and a bad one, window
/// counts), immediates (wide atomics and reductions) and optional fields present or absent.
fn samples(op: Op) -> Vec<Instr> {
    if op == Op::Bra {
        return vec![Instr::bra(7, 1, 2, 3)];
    }
    let mut v = Vec::new();
    for m in [0u8, 1, 3, 4, 5, 6, 7, 8, 9, 200] {
        for imm in [0u32, 1, RED_WIDE, 5, 0x2E, 0x36, 0x40_0021] {
            for (dst, b, d) in [(1, 30, 50), (REG_NONE, 30, 50), (1, REG_NONE, REG_NONE), (REG_NONE, REG_NONE, 50)] {
                v.push(Instr::r(op, m, dst, 20, b, 45, d, imm));
            }
        }
    }
    v
}

#[test]
fn every_op_is_in_the_table_once() {
    assert_eq!(EXPECT.len(), Op::ALL.len());
    for op in Op::ALL {
        assert_eq!(EXPECT.iter().filter(|(o, _)| o == op).count(), 1, "{op:?}");
    }
}

#[test]
fn derived_operand_facts_match_the_expectations() {
    for &(op, s) in EXPECT {
        let spec = specs(s);
        for i in samples(op) {
            // Decode: every operand in field order, a required one even when missing.
            let want: Vec<(u16, u32)> = spec
                .iter()
                .filter(|f| !(f.optional && (f.reg)(&i) == REG_NONE))
                .map(|f| ((f.reg)(&i), width(f.width, &i).unwrap_or(1)))
                .collect();
            assert_eq!(operand_widths(&i), want, "{op:?} operands of {i:?}");
            // Zeroing analysis: only the trusted writes.
            let dst = spec.iter().find(|f| f.kind != 'r');
            let full = dst.filter(|f| f.kind == 'W').and_then(|f| width(f.width, &i));
            assert_eq!(full_write(&i), full, "{op:?} full write of {i:?}");
            // Scoreboard: the destination rows an issue makes pending, and the source rows.
            let timed_dst = match dst {
                Some(f) if i.dst != REG_NONE => (i.dst, width(f.width, &i).unwrap_or(1) as u16),
                _ => (REG_NONE, 0),
            };
            let srcs: Vec<u16> = spec
                .iter()
                .filter(|f| f.kind == 'r' && (f.reg)(&i) != REG_NONE)
                .flat_map(|f| {
                    let r = (f.reg)(&i);
                    r..r + width(f.width, &i).unwrap_or(1) as u16
                })
                .collect();
            let kt = KernelTiming::new(&[i]);
            assert_eq!(kt.regs_of(0), (timed_dst, &srcs[..]), "{op:?} timing of {i:?}");
        }
    }
}

/// Decode refuses a kernel with a bad memory size, vote, shuffle mode or reduction `mod`
/// (and a window read past the last slot); every other bad `mod` faults only if executed.
#[test]
fn decode_refuses_exactly_these_modifiers() {
    use super::decode::DecodedKernel;
    use crate::abi::csr;
    use crate::abi::kernel::KernelHeader;
    use Op::*;
    let refused = |op: Op, m: u8| match op {
        Ldg | Stg | Ldl | Stl | Ldp | Stp => m > 6,
        Vote => m > 2,
        Shfl => m > 3,
        Red => m > 12,
        Tex => m > 6,
        Exp => m > 9,
        Getw | Getwf => m as u32 > rtu::SLOT_COUNT,
        _ => false,
    };
    let header = KernelHeader { kernel_id: 1, ..KernelHeader::new(400, [1, 1, 1]) };
    let exit = Instr::r(Exit, 0, REG_NONE, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 0);
    for &op in Op::ALL {
        for m in 0..=255u8 {
            let i = match op {
                Bra => Instr { modifier: m, ..Instr::bra(7, 0, 1, 1) },
                Csr => Instr::r(op, m, 1, 20, 30, 45, 50, csr::LANE_ID),
                _ => Instr::r(op, m, 1, 20, 30, 45, 50, 0),
            };
            let k = DecodedKernel::from_parts(header.clone(), "k", vec![i, exit]);
            assert_eq!(k.is_err(), refused(op, m), "{op:?} mod {m}: {:?}", k.err().map(|f| f.detail));
        }
    }
}
