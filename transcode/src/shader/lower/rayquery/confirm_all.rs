//! Which ray queries the kernel only ever steps through a *confirm-all* loop:
//!
//! ```glsl
//! rayQueryInitializeEXT(q, ...);
//! while (rayQueryProceedEXT(q)) {
//!     rayQueryConfirmIntersectionEXT(q);
//! }
//! ```
//!
//! Such a query commits every candidate the walk offers (the closest hit, or the first one
//! with `TerminateOnFirstHit`), so the RT unit may accept them itself instead of handing
//! each to the shader and waiting for its CONTINUE: the RTU lowering marks its TRACE
//! `TRACE_CONFIRM_ALL` (`docs/SHADER.md`). The proof is syntactic and conservative, over the
//! inlined blocks. A query `q` qualifies when:
//! - `q` is a variable of its own (a function or private `OpVariable`, not an element of an
//!   array), and nothing but ray-query instructions names it, so no other handle aliases it;
//! - every Initialize of `q` is the last instruction of its block, whose branch leads,
//!   through blocks that only branch, to a confirm-all proceed of `q`: nothing runs on `q`
//!   between arming it and that loop;
//! - every Proceed of `q` is a confirm-all proceed: its block holds only the proceed and a
//!   conditional branch on its result (used nowhere else); the true side holds only a
//!   Confirm of `q` and leads, through blocks that only branch, back to the proceed;
//! - every Confirm of `q` is such a loop body's, and `q` has no Terminate, Generate or
//!   candidate getter (committed and ray getters are fine: they run after the loop).
//!
//! Then each proceed of `q` a lane runs is the loop's, every candidate it returns is
//! confirmed at once, and the loop runs until the walk is over, whatever the lane does
//! before or after.

use super::super::super::inline::Flat;
use super::super::super::module::{InstExt, Module};
use super::super::super::types::{Id, Type};
use rspirv::dr::{Instruction, Operand};
use spirv::Op;
use std::collections::{HashMap, HashSet};

/// Blocks an unconditional chain may pass through before it must have arrived.
const MAX_CHAIN: usize = 16;

/// The queries (their variables' ids) of `flat` that qualify.
pub(crate) fn queries(m: &Module, flat: &Flat) -> HashSet<Id> {
    let index: HashMap<Id, usize> = flat.blocks.iter().enumerate().map(|(i, b)| (b.label, i)).collect();
    let body =
        |b: usize| -> Vec<&Instruction> { flat.blocks[b].insts.iter().filter(|i| !skipped(i.class.opcode)).collect() };
    // How often each id is an operand, and which ids are function variables.
    let mut uses: HashMap<Id, usize> = HashMap::new();
    let mut vars: HashMap<Id, Id> = HashMap::new();
    let mut ops: HashMap<Id, Vec<(usize, &Instruction)>> = HashMap::new();
    for (bi, b) in flat.blocks.iter().enumerate() {
        for inst in &b.insts {
            for o in &inst.operands {
                if let Operand::IdRef(r) = o {
                    *uses.entry(*r).or_default() += 1;
                }
            }
            if inst.class.opcode == Op::Variable {
                if let (Some(id), Some(ty)) = (inst.result_id, inst.result_type) {
                    vars.insert(id, ty);
                }
            }
            if is_query_op(inst.class.opcode) {
                if let Ok(q) = inst.id(0) {
                    ops.entry(q).or_default().push((bi, inst));
                }
            }
        }
    }
    // Follows blocks that only branch from `label`; true when it arrives at block `target`.
    let reaches = |mut label: Id, target: usize| -> bool {
        for _ in 0..MAX_CHAIN {
            let Some(&b) = index.get(&label) else { return false };
            if b == target {
                return true;
            }
            match body(b).as_slice() {
                [br] if br.class.opcode == Op::Branch => match br.id(0) {
                    Ok(next) => label = next,
                    Err(_) => return false,
                },
                _ => return false,
            }
        }
        false
    };
    let mut out = HashSet::new();
    'query: for (q, list) in &ops {
        // A variable's pointer type, or a module variable's own type.
        let ty = match vars.get(q) {
            Some(&ptr) => m.types.pointee(ptr).ok().map(|(_, ty)| ty),
            None => m.globals.get(q).map(|g| g.ty),
        };
        let single = ty.is_some_and(|ty| matches!(m.types.get(ty), Ok(Type::RayQuery)));
        if !single || uses.get(q).copied().unwrap_or(0) != list.len() {
            continue;
        }
        // The loops' proceed blocks and body blocks.
        let mut loops: Vec<usize> = Vec::new();
        let mut bodies: HashSet<usize> = HashSet::new();
        for &(b, inst) in list.iter().filter(|(_, i)| i.class.opcode == Op::RayQueryProceedKHR) {
            let Some(body_block) = confirm_loop(&body, &index, &uses, *q, b, inst) else { continue 'query };
            if !reaches_after(&body, body_block, |l| reaches(l, b)) {
                continue 'query;
            }
            loops.push(b);
            bodies.insert(body_block);
        }
        for &(b, inst) in list {
            let ok = match inst.class.opcode {
                Op::RayQueryProceedKHR => true,
                Op::RayQueryConfirmIntersectionKHR => bodies.contains(&b),
                Op::RayQueryInitializeKHR => {
                    let insts = body(b);
                    let at = insts.iter().position(|i| std::ptr::eq(*i, inst));
                    match (at, insts.last()) {
                        (Some(k), Some(br)) if k + 2 == insts.len() && br.class.opcode == Op::Branch => {
                            br.id(0).is_ok_and(|l| loops.iter().any(|&p| reaches(l, p)))
                        }
                        _ => false,
                    }
                }
                op => getter_allowed(m, op, inst),
            };
            if !ok {
                continue 'query;
            }
        }
        out.insert(*q);
    }
    out
}

/// The body block of the confirm-all loop whose proceed `inst` (of query `q`) is in block
/// `b`, or None when the proceed is not one.
fn confirm_loop<'a>(
    body: &impl Fn(usize) -> Vec<&'a Instruction>,
    index: &HashMap<Id, usize>,
    uses: &HashMap<Id, usize>,
    q: Id,
    b: usize,
    inst: &Instruction,
) -> Option<usize> {
    let r = inst.result_id?;
    let insts = body(b);
    let [p, br] = insts.as_slice() else { return None };
    if !std::ptr::eq(*p, inst) || br.class.opcode != Op::BranchConditional || br.id(0).ok()? != r {
        return None;
    }
    if uses.get(&r).copied() != Some(1) {
        return None;
    }
    let then = *index.get(&br.id(1).ok()?)?;
    let then_insts = body(then);
    let [c, _] = then_insts.as_slice() else { return None };
    (c.class.opcode == Op::RayQueryConfirmIntersectionKHR && c.id(0).ok()? == q).then_some(then)
}

/// Whether the body block `b` (a Confirm, then an unconditional branch) branches to a label
/// for which `back` holds.
fn reaches_after<'a>(body: &impl Fn(usize) -> Vec<&'a Instruction>, b: usize, back: impl Fn(Id) -> bool) -> bool {
    match body(b).as_slice() {
        [_, br] if br.class.opcode == Op::Branch => br.id(0).is_ok_and(back),
        _ => false,
    }
}

/// Getters that may read a qualifying query: the ray's values and the committed
/// intersection's (operand 1 the constant 1).
fn getter_allowed(m: &Module, op: Op, inst: &Instruction) -> bool {
    match super::Getter::of(op) {
        Some(super::Getter::Ray(_)) => true,
        Some(super::Getter::Hit(_) | super::Getter::Matrix(_) | super::Getter::Vertices) => {
            inst.id(1).ok().and_then(|c| m.const_u32(c)) == Some(1)
        }
        Some(super::Getter::AabbOpaque) | None => false,
    }
}

/// Ray-query instructions (their operand 0 is the query).
fn is_query_op(op: Op) -> bool {
    op != Op::ConvertUToAccelerationStructureKHR && super::handles(op)
}

/// Instructions that do nothing a lane can see between two blocks' work.
fn skipped(op: Op) -> bool {
    matches!(op, Op::Label | Op::LoopMerge | Op::SelectionMerge | Op::Line | Op::NoLine | Op::Nop)
}
