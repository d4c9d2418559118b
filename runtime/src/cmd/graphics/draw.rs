//! Draws: `vkCmdDraw`, `DrawIndexed`, `DrawIndirect`, `DrawIndexedIndirect` and their
//! `Count` forms.
//!
//! A draw stashes its draw state record (`state`) and kernel-argument block in the
//! recording's device memory, then records the DCR writes of `DCR.md`: both stages' kernel
//! images, the kernel arguments, the state record, the RTU configuration (the stages may
//! trace), the index type, and for a direct draw its counts and index address; then the
//! pulse (`StreamOp::Draw`). The command processor gives the draw its vertex output buffer;
//! for an indirect draw it also reads the counts and writes the count DCRs, one draw per
//! command.

use super::state::{self, Targets, VertexPlace};
use super::PassInstance;
use crate::buffer::Buffer;
use crate::cmd::compute::{kargs_block, rtu_dcrs};
use crate::cmd::{CommandBuffer, Inner};
use crate::device::Device;
use crate::pipeline::BindPoint;
use crate::stream::{DrawJob, DrawSource, IndirectDraws, StreamOp};
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::gfx::{dcr, index_type};

/// The counts of a direct draw (`firstIndex` for indexed draws, else 0).
#[derive(Clone, Copy, Debug, Default)]
struct Direct {
    count: u32,
    instances: u32,
    first: u32,
    /// `firstVertex`, or `vertexOffset` (signed) for indexed draws.
    vertex_base: i32,
    first_instance: u32,
}

/// An indirect draw's commands: `count` of them `stride` bytes apart at `offset` in
/// `buffer`, or as many as the u32 at `count_offset` in `count_buffer` says, at most `count`.
#[derive(Clone)]
pub struct DrawIndirect {
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub count: u32,
    pub stride: u32,
    pub count_buffer: Option<(Arc<Buffer>, u64)>,
}

impl CommandBuffer {
    pub fn draw(&self, vertices: u32, instances: u32, first_vertex: u32, first_instance: u32) {
        self.record("vkCmdDraw", |i, d| {
            let direct =
                Direct { count: vertices, instances, first: 0, vertex_base: first_vertex as i32, first_instance };
            record_draw(i, d, false, Ok(direct))
        });
    }

    pub fn draw_indexed(
        &self,
        indices: u32,
        instances: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32,
    ) {
        self.record("vkCmdDrawIndexed", |i, d| {
            let direct =
                Direct { count: indices, instances, first: first_index, vertex_base: vertex_offset, first_instance };
            record_draw(i, d, true, Ok(direct))
        });
    }

    /// The `Indirect` and `IndirectCount` draws, indexed or not.
    pub fn draw_indirect(&self, indexed: bool, cmd: DrawIndirect) {
        self.record("vkCmdDraw*Indirect*", |i, d| record_draw(i, d, indexed, Err(cmd)));
    }
}

/// Records one draw command (`Err`: indirect).
fn record_draw(i: &mut Inner, dev: &Device, indexed: bool, what: Result<Direct, DrawIndirect>) -> VkResult<()> {
    let state = i.bound.at(BindPoint::Graphics);
    let Some(p) = state.pipeline.clone() else {
        tracing::error!("draw with no graphics pipeline bound");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let Some(g) = p.as_graphics() else {
        tracing::error!("draw with pipeline '{}' bound, which is not a graphics pipeline", p.name);
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    if let Ok(d) = &what {
        if d.count == 0 || d.instances == 0 {
            return Ok(());
        }
    }
    let targets = match (&i.gfx.pass, i.gfx.inherited) {
        (Some(pass), _) => Some(view_targets(pass)?),
        // Made when a primary executes this secondary buffer.
        (None, true) => None,
        (None, false) => {
            tracing::error!("draw outside a render pass instance");
            return Err(vk::Result::ERROR_UNKNOWN);
        }
    };
    let mut vbs = [None; vortex_model::abi::gfx::state::MAX_VB];
    for (k, b) in i.gfx.vertex.iter().enumerate() {
        vbs[k] = b.as_ref().map(VertexPlace::of).transpose()?;
    }
    let records: Vec<_> = match &targets {
        Some(ts) => ts.iter().map(|t| state::encode(g, &i.gfx.dynamic, t, &vbs)).collect(),
        None => vec![state::encode(g, &i.gfx.dynamic, &Targets::default(), &vbs)],
    };
    let kargs = kargs_block(state, &i.push, &p, [0; 3], [0; 3]);
    let sets: Vec<_> = state.sets.iter().flatten().cloned().collect();
    let mut views = Vec::with_capacity(records.len());
    for r in &records {
        views.push(i.stash(dev, r)?);
    }
    let state_addr = views[0];
    if views.len() == 1 {
        // One view (or none): the record `GFX_STATE` points at is the draw's.
        views.clear();
    }
    let kargs_addr = i.stash(dev, &kargs)?;
    let index = if indexed { Some(index_buffer(i)?) } else { None };
    let mut ops = Vec::new();
    let mut dcr64 = |lo: u32, v: u64| {
        ops.push(StreamOp::Dcr { addr: lo, value: v as u32 });
        ops.push(StreamOp::Dcr { addr: lo + 1, value: (v >> 32) as u32 });
    };
    dcr64(dcr::GFX_VS_PC_LO, g.vertex_address());
    dcr64(dcr::GFX_FS_PC_LO, g.fragment_address());
    dcr64(dcr::GFX_PARAM_LO, kargs_addr);
    dcr64(dcr::GFX_STATE_LO, state_addr);
    ops.extend(rtu_dcrs(dev, false));
    let itype = index.map_or(index_type::NONE, |(_, t)| t);
    ops.push(StreamOp::Dcr { addr: dcr::GFX_INDEX_TYPE, value: itype });
    let source = match what {
        Ok(d) => {
            let bytes = index_type::info(itype).map_or(0, |(b, _)| b as u64);
            let index_addr = index.map_or(0, |(a, _)| a + d.first as u64 * bytes);
            let counts = [
                (dcr::GFX_VERTEX_COUNT, d.count),
                (dcr::GFX_INSTANCE_COUNT, d.instances),
                (dcr::GFX_VERTEX_BASE, d.vertex_base as u32),
                (dcr::GFX_FIRST_INSTANCE, d.first_instance),
                (dcr::GFX_INDEX_LO, index_addr as u32),
                (dcr::GFX_INDEX_HI, (index_addr >> 32) as u32),
                (dcr::GFX_DRAW_INDEX, 0),
            ];
            ops.extend(counts.map(|(addr, value)| StreamOp::Dcr { addr, value }));
            DrawSource::Direct { vertices: d.count, instances: d.instances }
        }
        Err(c) => indirect_source(i, c, index.and_then(|(a, t)| Some((a, index_type::info(t)?.0))))?,
    };
    if targets.is_none() {
        let at = i.rec.ops.len()
            + ops
                .iter()
                .position(|o| matches!(o, StreamOp::Dcr { addr: dcr::GFX_STATE_LO, .. }))
                .expect("written above");
        let draw = i.rec.ops.len() + ops.len();
        i.rec.deferred.push(DeferredState { at, draw, pipeline: p.clone(), dynamic: i.gfx.dynamic.clone(), vbs });
    }
    i.rec.ops.extend(ops);
    let job = DrawJob { pipeline: p.name.as_str().into(), vout_stride: g.vout_stride, source, views };
    i.emit(StreamOp::Draw(Box::new(job)));
    keep_draw_objects(i, p, sets);
    Ok(())
}

/// A draw recorded in a secondary buffer without its attachments: the stream position of
/// its `GFX_STATE_LO` write and what its state record is made of.
#[derive(Clone)]
pub struct DeferredState {
    at: usize,
    /// The stream position of its `Draw`.
    draw: usize,
    pipeline: Arc<crate::pipeline::Pipeline>,
    dynamic: super::DynamicValues,
    vbs: [Option<VertexPlace>; vortex_model::abi::gfx::state::MAX_VB],
}

/// `vkCmdExecuteCommands`: the deferred draws of a secondary buffer, copied to the stream at
/// `base`, get state records with the executing render pass instance's attachments.
pub(in crate::cmd) fn resolve_deferred(
    i: &mut Inner,
    dev: &Device,
    base: usize,
    deferred: &[DeferredState],
) -> VkResult<()> {
    if deferred.is_empty() {
        return Ok(());
    }
    let Some(pass) = i.gfx.pass.as_ref() else {
        tracing::error!("vkCmdExecuteCommands: draws of a render-pass-continue buffer outside a render pass instance");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    let targets = view_targets(pass)?;
    for d in deferred {
        let g = d.pipeline.as_graphics().expect("deferred draws are graphics draws");
        let mut views = Vec::with_capacity(targets.len());
        for t in &targets {
            views.push(i.stash(dev, &state::encode(g, &d.dynamic, t, &d.vbs))?);
        }
        let addr = views[0];
        match &mut i.rec.ops[base + d.draw] {
            StreamOp::Draw(job) if views.len() > 1 => job.views = views,
            StreamOp::Draw(_) => {}
            _ => unreachable!("a deferred draw's pulse is where it was recorded"),
        }
        for (k, value) in [addr as u32, (addr >> 32) as u32].into_iter().enumerate() {
            match &mut i.rec.ops[base + d.at + k] {
                StreamOp::Dcr { addr: a, value: v } if *a == dcr::GFX_STATE_LO + k as u32 => *v = value,
                _ => unreachable!("a deferred draw's GFX_STATE write is where it was recorded"),
            }
        }
    }
    Ok(())
}

/// The attachments of each view the instance renders (one `Targets` without multiview).
fn view_targets(pass: &PassInstance) -> VkResult<Vec<Targets>> {
    if pass.view_mask == 0 {
        return Ok(vec![Targets::of(pass, 0)?]);
    }
    super::views(pass.view_mask).map(|v| Targets::of(pass, v)).collect()
}

/// The bound index buffer's address and `abi::gfx::index_type`.
fn index_buffer(i: &Inner) -> VkResult<(u64, u32)> {
    let Some(b) = &i.gfx.index else {
        tracing::error!("indexed draw with no index buffer bound");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    Ok((b.buffer.address_at(b.offset)?, b.index_type))
}

/// `index`: the index buffer's address and bytes per index, for indexed draws.
fn indirect_source(i: &mut Inner, c: DrawIndirect, index: Option<(u64, u32)>) -> VkResult<DrawSource> {
    let addr = c.buffer.address_at(c.offset)?;
    let count_addr = c.count_buffer.as_ref().map(|(b, o)| b.address_at(*o)).transpose()?;
    i.keep(c.buffer.clone());
    if let Some((b, _)) = &c.count_buffer {
        i.keep(b.clone());
    }
    Ok(DrawSource::Indirect(IndirectDraws { addr, stride: c.stride as u64, max: c.count, count_addr, index }))
}

/// Everything the draw reads stays alive until the recording is dropped.
fn keep_draw_objects(
    i: &mut Inner,
    p: Arc<crate::pipeline::Pipeline>,
    sets: Vec<Arc<crate::descriptor::DescriptorSet>>,
) {
    i.keep(p);
    for s in sets {
        i.keep(s);
    }
    let vbs: Vec<_> = i.gfx.vertex.iter().flatten().map(|b| b.buffer.clone()).collect();
    for b in vbs {
        i.keep(b);
    }
    if let Some(b) = i.gfx.index.as_ref().map(|b| b.buffer.clone()) {
        i.keep(b);
    }
}
