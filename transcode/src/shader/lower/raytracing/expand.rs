//! Recursion by expansion (`docs/RTPIPELINE.md`): every trace and callable site lowers, in
//! place, each shader it may run, and a shader that itself traces or calls is lowered
//! again inside, one level deeper, until the pipeline's depth; a site one level deeper is a
//! no-op. Each copy has its own registers, query slot and private memory: the per-lane
//! stack, laid out statically.
//!
//! This counts, before any code is emitted, what an expansion holds: the query slots (their
//! state region is reserved at the start of private memory), the shader copies and the
//! SPIR-V instructions lowered (the code budget a pipeline must fit).

use super::{Link, Shader};
use crate::shader::error::{invalid, Result};
use crate::shader::module::InstExt;
use crate::shader::types::Id;
use crate::shader::Stage;
use spirv::Op;
use std::collections::HashMap;
use vortex_model::abi::rtu::MAX_QUERIES;

/// The calls a shader runs inside.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Depth {
    /// Enclosing traces: 1 in the closest-hit and miss shaders of the ray generation
    /// shader's traces.
    pub traces: u32,
    /// Enclosing callable calls, whatever traces lie between them.
    pub calls: u32,
}

/// Callable calls nest up to this deep (fewer when the code budget runs out, never fewer
/// than [`MIN_CALLABLE_DEPTH`]): the API bounds them only by the pipeline stack size, set
/// when a command buffer is recorded, after the kernel is compiled.
pub(crate) const MAX_CALLABLE_DEPTH: u32 = 8;
/// The two callable frames the default pipeline stack size has room for.
pub(crate) const MIN_CALLABLE_DEPTH: u32 = 2;
/// The most SPIR-V instructions an expanded kernel may lower (every copy counted): about
/// what the compiler's virtual register space holds.
pub(crate) const MAX_EXPANDED_INSTRUCTIONS: u64 = 16 * 1024;

/// What an expansion holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Expansion {
    pub slots: u64,
    pub copies: u64,
    pub instructions: u64,
    /// Some shader run by a trace or callable call traces or calls itself.
    pub nested: bool,
}

impl Expansion {
    fn add(&mut self, o: Expansion, times: u64) {
        self.slots = self.slots.saturating_add(o.slots.saturating_mul(times));
        self.copies = self.copies.saturating_add(o.copies.saturating_mul(times));
        self.instructions = self.instructions.saturating_add(o.instructions.saturating_mul(times));
        self.nested |= o.nested;
    }

    /// Whether the kernel fits the query slots and, when calls nest, the code budget (a
    /// pipeline without nesting is as large as its shaders, bounded by the compiler's
    /// registers as any kernel).
    pub fn fits(&self) -> bool {
        self.slots <= MAX_QUERIES as u64 && (!self.nested || self.instructions <= MAX_EXPANDED_INSTRUCTIONS)
    }
}

/// A shader's own query slots, its call sites (the registers of the payload or callable
/// data each hands on) and its size.
#[derive(Clone, Debug, Default)]
struct Uses {
    queries: u32,
    traces: Vec<u32>,
    calls: Vec<u32>,
    reports: u32,
    instructions: u32,
}

fn uses(s: &Shader) -> Result<Uses> {
    let mut u = Uses::default();
    let mut vars: HashMap<Id, Id> = s.m.globals.iter().map(|(&id, g)| (id, g.ty)).collect();
    for g in s.m.globals.values() {
        u.queries += s.m.types.queries(g.ty)?;
    }
    let insts = s.flat.blocks.iter().flat_map(|b| &b.insts);
    for inst in insts.clone().filter(|i| i.class.opcode == Op::Variable) {
        vars.insert(inst.rid()?, s.m.types.pointee(inst.rty()?)?.1);
    }
    let regs = |id: Id| -> Result<u32> {
        let ty = vars.get(&id).ok_or_else(|| invalid!("payload %{id} of a call is not a variable"))?;
        s.m.types.regs(*ty)
    };
    for inst in insts {
        u.instructions += 1;
        match inst.class.opcode {
            Op::Variable => u.queries += s.m.types.queries(s.m.types.pointee(inst.rty()?)?.1)?,
            Op::TraceRayKHR => u.traces.push(regs(inst.id(10)?)?),
            Op::ExecuteCallableKHR => u.calls.push(regs(inst.id(1)?)?),
            Op::ReportIntersectionKHR => u.reports += 1,
            _ => {}
        }
    }
    let walk = matches!(s.stage, Stage::AnyHit | Stage::Intersection);
    if walk && u.traces.len() + u.calls.len() > 0 {
        return Err(invalid!("traceRayEXT or executeCallableEXT in a {} shader", s.stage));
    }
    Ok(u)
}

/// Counts the expansion of ray generation shader `top` with `link`'s shaders, groups and
/// depths (its `slots` are not read).
pub(crate) fn expand(top: &Shader, link: &Link) -> Result<Expansion> {
    let mut c = Counter { link, uses: Vec::new(), traces: HashMap::new(), calls: HashMap::new() };
    for s in &link.shaders {
        c.uses.push(uses(s)?);
    }
    let top = uses(top)?;
    Ok(c.shader(&top, Depth::default()))
}

struct Counter<'a> {
    link: &'a Link,
    uses: Vec<Uses>,
    /// What one trace site / callable site at a depth expands to (memoized: the tree is
    /// exponential in the worst case, its depths are few).
    traces: HashMap<(Depth, u32), Expansion>,
    calls: HashMap<(Depth, u32), Expansion>,
}

impl Counter<'_> {
    /// A copy of a shader with `u` at depth `d`, and everything its sites run.
    fn shader(&mut self, u: &Uses, d: Depth) -> Expansion {
        let nested = d != Depth::default() && u.traces.len() + u.calls.len() > 0;
        let mut x = Expansion { slots: u.queries as u64, copies: 1, instructions: u.instructions as u64, nested };
        for &regs in &u.traces {
            let t = self.trace_site(d, regs);
            x.add(t, 1);
        }
        for &regs in &u.calls {
            let c = self.call_site(d, regs);
            x.add(c, 1);
        }
        x
    }

    fn copy(&mut self, s: usize, d: Depth) -> Expansion {
        let u = self.uses.get(s).cloned().unwrap_or_default();
        self.shader(&u, d)
    }

    /// A trace from depth `d` (`lower/raytracing`'s `trace_ray`): its slot, then the
    /// candidate walk's any-hit and intersection shaders, the miss and closest-hit shaders.
    fn trace_site(&mut self, d: Depth, regs: u32) -> Expansion {
        if d.traces >= self.link.max.traces {
            return Expansion::default();
        }
        if let Some(x) = self.traces.get(&(d, regs)) {
            return *x;
        }
        let link = self.link;
        let inner = Depth { traces: d.traces + 1, ..d };
        let mut x = Expansion { slots: 1, ..Default::default() };
        if link.walks_candidates() {
            for (s, _) in link.any_hits(regs) {
                x.add(self.copy(s, inner), 1);
            }
            for (g, s) in link.members(Stage::Intersection, |g| g.intersection) {
                x.add(self.copy(s, inner), 1);
                if let Some(a) = link.report_any_hit(Some(g), regs) {
                    let reports = self.uses.get(s).map_or(0, |u| u.reports);
                    x.add(self.copy(a, inner), reports as u64);
                }
            }
        }
        for stage in [Stage::Miss, Stage::ClosestHit] {
            let pick = |g: &super::Group| if stage == Stage::Miss { g.general } else { g.closest_hit };
            for (s, _) in link.targets(stage, pick, regs) {
                x.add(self.copy(s, inner), 1);
            }
        }
        self.traces.insert((d, regs), x);
        x
    }

    /// A callable call from depth `d`: every callable shader, one call deeper.
    fn call_site(&mut self, d: Depth, regs: u32) -> Expansion {
        if d.calls >= self.link.max.calls {
            return Expansion::default();
        }
        if let Some(x) = self.calls.get(&(d, regs)) {
            return *x;
        }
        let inner = Depth { calls: d.calls + 1, ..d };
        let mut x = Expansion::default();
        for (s, _) in self.link.targets(Stage::Callable, |g| g.general, regs) {
            x.add(self.copy(s, inner), 1);
        }
        self.calls.insert((d, regs), x);
        x
    }
}
