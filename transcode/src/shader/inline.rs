//! Inlining: the entry point and every function it calls become one flat CFG.
//!
//! Each call instance gets fresh ids for everything its callee defines; parameters are
//! replaced by the caller's argument ids, so a pointer argument *is* the caller's pointer
//! (ray-query slots, variables and descriptors need no runtime representation of their own).
//! A call splits the caller's block: the first part branches to the callee's entry, every
//! callee return branches to a continuation block, and a non-void call's result becomes an
//! `OpPhi` over the returned values there. All returns of the entry point branch to one
//! unified exit block (terminated by `OpReturn`, lowered to `EXIT`), so post-dominators
//! always exist; so do an any-hit shader's `OpIgnoreIntersectionKHR` and `OpTerminateRayKHR`,
//! which stay in their block, before the branch, for lowering to record. Blocks keep SPIR-V's dominance order: a callee's blocks sit between the
//! call's two halves.

use super::error::{invalid, limit, unsupported, Result};
use super::module::{InstExt, Module};
use super::types::Id;
use rspirv::dr::{Instruction, Operand};
use spirv::Op;
use std::collections::HashMap;

/// Largest flattened function (instructions), so a call tree that explodes under inlining
/// is refused instead of exhausting memory.
const MAX_FLAT_INSTS: usize = 1 << 21;

/// Deepest call chain inlined (inlining recurses once per level).
const MAX_CALL_DEPTH: usize = 256;

/// One block of the flattened entry point; the last instruction is its terminator.
#[derive(Clone, Debug)]
pub(crate) struct FlatBlock {
    pub label: Id,
    pub insts: Vec<Instruction>,
}

#[derive(Clone, Debug)]
pub(crate) struct Flat {
    pub blocks: Vec<FlatBlock>,
    /// Label of the unified exit block.
    pub exit: Id,
}

/// Where a function's returns go.
#[derive(Clone, Copy)]
enum Ret {
    /// The entry point: to the unified exit block.
    Exit(Id),
    /// A call: to its continuation block; returned values are collected for the result phi.
    Call(Id),
}

struct Flattener<'m> {
    m: &'m Module,
    next_id: u32,
    blocks: Vec<FlatBlock>,
    /// Calls being inlined (recursion check).
    stack: Vec<Id>,
    /// A split block's first label -> the label of its last piece (which holds the original
    /// terminator, so it is the predecessor successors' phis must name).
    last_piece: HashMap<Id, Id>,
    total: usize,
    /// The unified exit block's label.
    exit: Id,
}

pub(crate) fn flatten(m: &Module) -> Result<Flat> {
    let mut f = Flattener {
        m,
        next_id: m.bound.max(1),
        blocks: Vec::new(),
        stack: Vec::new(),
        last_piece: HashMap::new(),
        total: 0,
        exit: 0,
    };
    let entry = m.entry.func;
    let func = f.function(entry)?;
    if !func.parameters.is_empty() {
        return Err(invalid!("entry point function %{entry} takes parameters"));
    }
    let exit = f.fresh()?;
    f.exit = exit;
    let map = f.id_map(entry, &[])?;
    f.inline(entry, &map, Ret::Exit(exit), &mut Vec::new())?;
    f.blocks.push(FlatBlock { label: exit, insts: vec![Instruction::new(Op::Return, None, None, vec![])] });
    // Phis name predecessors by their original labels; a predecessor that was split by a call
    // now ends in its last piece.
    for b in &mut f.blocks {
        for inst in b.insts.iter_mut().filter(|i| i.class.opcode == Op::Phi) {
            for pair in inst.operands.chunks_mut(2) {
                if let Some(Operand::IdRef(pred)) = pair.get_mut(1) {
                    if let Some(&last) = f.last_piece.get(pred) {
                        *pred = last;
                    }
                }
            }
        }
    }
    Ok(Flat { blocks: f.blocks, exit })
}

impl<'m> Flattener<'m> {
    fn fresh(&mut self) -> Result<Id> {
        let id = self.next_id;
        self.next_id = id.checked_add(1).ok_or_else(|| limit!("ids exhausted while inlining"))?;
        Ok(id)
    }

    fn function(&self, id: Id) -> Result<&'m rspirv::dr::Function> {
        let idx = *self.m.funcs.get(&id).ok_or_else(|| invalid!("call to %{id}, which is not a function"))?;
        self.m.raw.functions.get(idx).ok_or_else(|| invalid!("function %{id} missing"))
    }

    /// Fresh ids for everything `func` defines, its parameters bound to `args`.
    fn id_map(&mut self, func: Id, args: &[Id]) -> Result<HashMap<Id, Id>> {
        let f = self.function(func)?;
        if f.parameters.len() != args.len() {
            return Err(invalid!("%{func} called with {} arguments, takes {}", args.len(), f.parameters.len()));
        }
        if f.blocks.is_empty() {
            return Err(unsupported!("call to function %{func} without a body (linkage)"));
        }
        let mut map = HashMap::new();
        for (p, &a) in f.parameters.iter().zip(args) {
            map.insert(p.rid()?, a);
        }
        for b in &f.blocks {
            let label = b.label.as_ref().ok_or_else(|| invalid!("block without OpLabel in %{func}"))?;
            let id = self.fresh()?;
            map.insert(label.rid()?, id);
            for inst in &b.instructions {
                if let Some(r) = inst.result_id {
                    let id = self.fresh()?;
                    map.insert(r, id);
                }
            }
        }
        Ok(map)
    }

    /// Appends `func`'s blocks under `map`. `values` collects `(returned value, predecessor)`
    /// for a call's result phi.
    fn inline(&mut self, func: Id, map: &HashMap<Id, Id>, ret: Ret, values: &mut Vec<(Id, Id)>) -> Result<()> {
        if self.stack.contains(&func) {
            return Err(invalid!("recursive call to %{func} (SPIR-V forbids recursion)"));
        }
        if self.stack.len() >= MAX_CALL_DEPTH {
            return Err(limit!("calls nested more than {MAX_CALL_DEPTH} deep"));
        }
        self.stack.push(func);
        let f = self.function(func)?;
        let remap = |id: Id| *map.get(&id).unwrap_or(&id);
        for b in &f.blocks {
            let first = remap(b.label.as_ref().ok_or_else(|| invalid!("block without OpLabel"))?.rid()?);
            let mut label = first;
            let mut insts = Vec::new();
            for inst in &b.instructions {
                self.total += 1;
                if self.total > MAX_FLAT_INSTS {
                    return Err(limit!("inlining produces more than {MAX_FLAT_INSTS} instructions"));
                }
                match inst.class.opcode {
                    Op::Line | Op::NoLine => {}
                    Op::FunctionCall => {
                        let callee = inst.id(0)?;
                        let args =
                            (1..inst.operands.len()).map(|i| inst.id(i).map(remap)).collect::<Result<Vec<_>>>()?;
                        let callee_map = self.id_map(callee, &args)?;
                        let callee_entry = self
                            .function(callee)?
                            .blocks
                            .first()
                            .and_then(|b| b.label.as_ref())
                            .and_then(|l| l.result_id)
                            .and_then(|l| callee_map.get(&l).copied())
                            .ok_or_else(|| invalid!("function %{callee} has no entry block"))?;
                        let cont = self.fresh()?;
                        insts.push(branch(callee_entry));
                        self.blocks.push(FlatBlock { label, insts: std::mem::take(&mut insts) });
                        let mut returned = Vec::new();
                        self.inline(callee, &callee_map, Ret::Call(cont), &mut returned)?;
                        label = cont;
                        let values = returned;
                        let rty = inst.rty()?;
                        if !matches!(self.m.types.get(rty)?, super::types::Type::Void) {
                            let rid = remap(inst.rid()?);
                            insts.push(if values.is_empty() {
                                // The callee never returns: the continuation is unreachable.
                                Instruction::new(Op::Undef, Some(rty), Some(rid), vec![])
                            } else {
                                let ops = values.iter().flat_map(|&(v, p)| [Operand::IdRef(v), Operand::IdRef(p)]);
                                Instruction::new(Op::Phi, Some(rty), Some(rid), ops.collect())
                            });
                        }
                    }
                    // An any-hit shader's way out, from any depth of call: the instruction
                    // stays (lowering records the decision), then the invocation ends.
                    Op::IgnoreIntersectionKHR | Op::TerminateRayKHR => {
                        insts.push(inst.clone());
                        insts.push(branch(self.exit));
                        break;
                    }
                    Op::Return | Op::ReturnValue => {
                        match ret {
                            Ret::Exit(exit) => {
                                if inst.class.opcode == Op::ReturnValue {
                                    return Err(invalid!("entry point returns a value"));
                                }
                                insts.push(branch(exit));
                            }
                            Ret::Call(cont) => {
                                if inst.class.opcode == Op::ReturnValue {
                                    values.push((remap(inst.id(0)?), label));
                                }
                                insts.push(branch(cont));
                            }
                        }
                        break;
                    }
                    _ => {
                        let mut c = inst.clone();
                        c.result_id = c.result_id.map(remap);
                        for o in &mut c.operands {
                            if let Operand::IdRef(r) = o {
                                *r = remap(*r);
                            }
                        }
                        insts.push(c);
                    }
                }
            }
            if label != first {
                self.last_piece.insert(first, label);
            }
            self.blocks.push(FlatBlock { label, insts });
        }
        self.stack.pop();
        Ok(())
    }
}

fn branch(target: Id) -> Instruction {
    Instruction::new(Op::Branch, None, None, vec![Operand::IdRef(target)])
}
