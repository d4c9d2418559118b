//! `vkCreateGraphicsPipelines`: every state block of `VkGraphicsPipelineCreateInfo` becomes
//! the runtime's plain values (`vortex_runtime::pipeline::graphics`), which validates them
//! and compiles the stages. Blocks Vulkan says to ignore (a viewport state when rasterization
//! is discarded, a blend state without colour attachments, ...) are not read, since they may
//! be dangling pointers.

use super::pipeline::specialization;
use crate::handle::nd;
use crate::util::{cstr, find_in, slice};
use ash::vk;
use std::sync::Arc;
use vortex_runtime::pipeline::graphics::{
    BlendAttachment, DepthBias, Dyn, DynamicSet, FixedState, Rect, StageSource, StencilFace, Targets, VertexAttribute,
    VertexBinding, Viewport,
};
use vortex_runtime::pipeline::{Pipeline, PipelineLayout, ShaderModule};
use vortex_runtime::renderpass::RenderPass;

pub unsafe extern "system" fn create_graphics_pipelines(
    d: vk::Device,
    _cache: vk::PipelineCache,
    count: u32,
    p_infos: *const vk::GraphicsPipelineCreateInfo<'_>,
    _a: *const vk::AllocationCallbacks<'_>,
    p_pipelines: *mut vk::Pipeline,
) -> vk::Result {
    // SAFETY: the caller's arrays per the API contract.
    unsafe {
        super::pipeline::create_pipelines("vkCreateGraphicsPipelines", d, count, p_infos, p_pipelines, create_one)
    }
}

/// # Safety
/// `info` must be a valid create info (its pointers as Vulkan defines them).
unsafe fn create_one(
    dev: &super::device::Device,
    info: &vk::GraphicsPipelineCreateInfo<'_>,
) -> Result<Pipeline, vk::Result> {
    // SAFETY (this function): the create info's pointers per the contract.
    let stages = unsafe { slice(info.p_stages, info.stage_count) }
        .iter()
        .map(|s| unsafe { stage(s) })
        .collect::<Result<Vec<_>, _>>()?;
    let layout = unsafe { nd::<_, PipelineLayout>(info.layout)? };
    let targets = unsafe { targets(info)? };
    let mut f = FixedState { dynamic: unsafe { dynamic_set(info.p_dynamic_state)? }, ..Default::default() };
    unsafe { vertex_input(&mut f, info.p_vertex_input_state) };
    if let Some(ia) = unsafe { info.p_input_assembly_state.as_ref() } {
        f.topology = ia.topology;
        f.primitive_restart = ia.primitive_restart_enable != 0;
    }
    let Some(rs) = (unsafe { info.p_rasterization_state.as_ref() }) else {
        tracing::error!("vkCreateGraphicsPipelines: no rasterization state");
        return Err(vk::Result::ERROR_UNKNOWN);
    };
    unsafe { rasterization(&mut f, rs) };
    // With rasterization discarded (and not dynamically re-enabled) the remaining blocks are
    // ignored.
    let rasterizes = !f.rasterizer_discard || f.dynamic.has(Dyn::RasterizerDiscardEnable);
    if rasterizes {
        unsafe { viewports(&mut f, info.p_viewport_state) };
        if let Some(ms) = unsafe { info.p_multisample_state.as_ref() } {
            unsafe { multisample(&mut f, ms) };
        }
        if targets.depth != vk::Format::UNDEFINED || targets.stencil != vk::Format::UNDEFINED {
            if let Some(ds) = unsafe { info.p_depth_stencil_state.as_ref() } {
                depth_stencil(&mut f, ds);
            }
        }
        if !targets.colors.is_empty() {
            if let Some(cb) = unsafe { info.p_color_blend_state.as_ref() } {
                unsafe { color_blend(&mut f, cb) };
            }
        }
    }
    Pipeline::graphics(&dev.rt, &stages, f, targets, layout)
}

/// A stage, its module either a handle or a `VkShaderModuleCreateInfo` chained to it.
///
/// # Safety
/// `s` must be valid, its module live (or null with a module create info chained).
unsafe fn stage(s: &vk::PipelineShaderStageCreateInfo<'_>) -> Result<StageSource, vk::Result> {
    let module = if s.module == vk::ShaderModule::null() {
        // SAFETY: the stage's chain.
        let Some(m) =
            (unsafe { find_in::<vk::ShaderModuleCreateInfo>(s.p_next, vk::StructureType::SHADER_MODULE_CREATE_INFO) })
        else {
            tracing::error!("vkCreateGraphicsPipelines: a stage with no shader module");
            return Err(vk::Result::ERROR_UNKNOWN);
        };
        // SAFETY: code_size bytes of code.
        Arc::new(ShaderModule { words: unsafe { slice(m.p_code, (m.code_size / 4) as u32) }.to_vec() })
    } else {
        // SAFETY: a live module handle.
        unsafe { nd::<_, ShaderModule>(s.module)? }
    };
    // SAFETY: the entry name and specialization info of the stage.
    Ok(StageSource { stage: s.stage, module, entry: unsafe { cstr(s.p_name) }, spec: unsafe { specialization(s)? } })
}

/// The formats rendered to: the render pass's subpass, or the chained
/// `VkPipelineRenderingCreateInfo` (none: no attachments) for dynamic rendering.
///
/// # Safety
/// As for [`create_one`].
unsafe fn targets(info: &vk::GraphicsPipelineCreateInfo<'_>) -> Result<Targets, vk::Result> {
    if info.render_pass != vk::RenderPass::null() {
        // SAFETY: a live render pass handle.
        return unsafe { nd::<_, RenderPass>(info.render_pass)? }.targets(info.subpass);
    }
    // SAFETY: the create info's chain.
    let r = unsafe {
        find_in::<vk::PipelineRenderingCreateInfo>(info.p_next, vk::StructureType::PIPELINE_RENDERING_CREATE_INFO)
    };
    Ok(r.map_or_else(Targets::default, |r| Targets {
        // SAFETY: the rendering info's format array.
        colors: unsafe { slice(r.p_color_attachment_formats, r.color_attachment_count) }.to_vec(),
        depth: r.depth_attachment_format,
        stencil: r.stencil_attachment_format,
        view_mask: r.view_mask,
    }))
}

/// # Safety
/// `p` must be null or a valid dynamic state info.
unsafe fn dynamic_set(p: *const vk::PipelineDynamicStateCreateInfo<'_>) -> Result<DynamicSet, vk::Result> {
    let mut set = DynamicSet::default();
    // SAFETY: per the contract.
    let Some(info) = (unsafe { p.as_ref() }) else { return Ok(set) };
    for &d in unsafe { slice(info.p_dynamic_states, info.dynamic_state_count) } {
        match Dyn::from_vk(d) {
            Some(x) => set = set.with(x),
            None => {
                tracing::error!("vkCreateGraphicsPipelines: dynamic state {d:?} is not supported");
                return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
            }
        }
    }
    Ok(set)
}

/// # Safety
/// `p` must be null or a valid vertex input state.
unsafe fn vertex_input(f: &mut FixedState, p: *const vk::PipelineVertexInputStateCreateInfo<'_>) {
    // SAFETY: per the contract.
    let Some(vi) = (unsafe { p.as_ref() }) else { return };
    f.bindings = unsafe { slice(vi.p_vertex_binding_descriptions, vi.vertex_binding_description_count) }
        .iter()
        .map(|b| VertexBinding { binding: b.binding, stride: b.stride, input_rate: b.input_rate, divisor: 1 })
        .collect();
    f.attributes = unsafe { slice(vi.p_vertex_attribute_descriptions, vi.vertex_attribute_description_count) }
        .iter()
        .map(|a| VertexAttribute { location: a.location, binding: a.binding, format: a.format, offset: a.offset })
        .collect();
}

/// # Safety
/// `rs` and its chain must be valid.
unsafe fn rasterization(f: &mut FixedState, rs: &vk::PipelineRasterizationStateCreateInfo<'_>) {
    f.depth_clamp = rs.depth_clamp_enable != 0;
    f.rasterizer_discard = rs.rasterizer_discard_enable != 0;
    f.polygon_mode = rs.polygon_mode;
    f.cull_mode = rs.cull_mode;
    f.front_face = rs.front_face;
    f.depth_bias_enable = rs.depth_bias_enable != 0;
    f.depth_bias = DepthBias {
        constant: rs.depth_bias_constant_factor,
        clamp: rs.depth_bias_clamp,
        slope: rs.depth_bias_slope_factor,
    };
    f.line_width = rs.line_width;
    // SAFETY: the rasterization state's chain.
    let provoking = unsafe {
        find_in::<vk::PipelineRasterizationProvokingVertexStateCreateInfoEXT>(
            rs.p_next,
            vk::StructureType::PIPELINE_RASTERIZATION_PROVOKING_VERTEX_STATE_CREATE_INFO_EXT,
        )
    };
    f.provoking_last = provoking.is_some_and(|p| p.provoking_vertex_mode == vk::ProvokingVertexModeEXT::LAST_VERTEX);
}

/// # Safety
/// `p` must be null or a valid viewport state (its arrays read unless dynamic).
unsafe fn viewports(f: &mut FixedState, p: *const vk::PipelineViewportStateCreateInfo<'_>) {
    // SAFETY: per the contract.
    let Some(vp) = (unsafe { p.as_ref() }) else { return };
    if !f.dynamic.has(Dyn::Viewport) && !f.dynamic.has(Dyn::ViewportWithCount) {
        f.viewports = unsafe { slice(vp.p_viewports, vp.viewport_count) }
            .iter()
            .map(|v| Viewport {
                x: v.x,
                y: v.y,
                width: v.width,
                height: v.height,
                min_depth: v.min_depth,
                max_depth: v.max_depth,
            })
            .collect();
    }
    if !f.dynamic.has(Dyn::Scissor) && !f.dynamic.has(Dyn::ScissorWithCount) {
        f.scissors = unsafe { slice(vp.p_scissors, vp.scissor_count) }
            .iter()
            .map(|r| Rect { x: r.offset.x, y: r.offset.y, width: r.extent.width, height: r.extent.height })
            .collect();
    }
}

/// # Safety
/// `ms` must be valid (its sample mask, if any, `ceil(samples / 32)` words).
unsafe fn multisample(f: &mut FixedState, ms: &vk::PipelineMultisampleStateCreateInfo<'_>) {
    f.samples = ms.rasterization_samples;
    // SAFETY: at least one word when given.
    f.sample_mask = unsafe { ms.p_sample_mask.as_ref() }.copied().unwrap_or(!0);
    f.sample_shading = ms.sample_shading_enable != 0;
    f.alpha_to_coverage = ms.alpha_to_coverage_enable != 0;
    f.alpha_to_one = ms.alpha_to_one_enable != 0;
}

fn depth_stencil(f: &mut FixedState, ds: &vk::PipelineDepthStencilStateCreateInfo<'_>) {
    f.depth_test = ds.depth_test_enable != 0;
    f.depth_write = ds.depth_write_enable != 0;
    f.depth_compare = ds.depth_compare_op;
    f.depth_bounds_test = ds.depth_bounds_test_enable != 0;
    f.depth_bounds = [ds.min_depth_bounds, ds.max_depth_bounds];
    f.stencil_test = ds.stencil_test_enable != 0;
    let face = |s: &vk::StencilOpState| StencilFace {
        fail_op: s.fail_op,
        pass_op: s.pass_op,
        depth_fail_op: s.depth_fail_op,
        compare: s.compare_op,
        compare_mask: s.compare_mask,
        write_mask: s.write_mask,
        reference: s.reference,
    };
    f.stencil = [face(&ds.front), face(&ds.back)];
}

/// # Safety
/// `cb` must be valid with its attachment array.
unsafe fn color_blend(f: &mut FixedState, cb: &vk::PipelineColorBlendStateCreateInfo<'_>) {
    f.logic_op = (cb.logic_op_enable != 0).then_some(cb.logic_op);
    f.blend_constants = cb.blend_constants;
    // SAFETY: per the contract.
    f.blend = unsafe { slice(cb.p_attachments, cb.attachment_count) }
        .iter()
        .map(|a| BlendAttachment {
            enable: a.blend_enable != 0,
            src_color: a.src_color_blend_factor,
            dst_color: a.dst_color_blend_factor,
            color_op: a.color_blend_op,
            src_alpha: a.src_alpha_blend_factor,
            dst_alpha: a.dst_alpha_blend_factor,
            alpha_op: a.alpha_blend_op,
            write_mask: a.color_write_mask,
        })
        .collect();
}
