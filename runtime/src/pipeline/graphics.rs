//! Graphics pipelines: a vertex kernel, an optional fragment kernel, and the fixed-function
//! state of `VkGraphicsPipelineCreateInfo` as plain values. The state is validated here (what
//! the units cannot do is a Vulkan error with a log line) and kept as Vulkan gave it; each
//! draw resolves it with the command buffer's dynamic state into the draw state record
//! (`cmd::graphics::state`).

use super::{load_kernel, Kind, Pipeline, PipelineLayout, ShaderModule, Specialization};
use crate::device::Device;
use crate::memory::Memory;
use crate::{vk, VkResult};
use std::sync::Arc;
use vortex_model::abi::gfx::{self, state};
use vortex_transcode::shader::{self, Stage};

/// Whether the raster unit draws polygons as lines and points (`fillModeNonSolid`).
pub const FILL_MODE_NON_SOLID: bool = true;
/// Sample counts the raster unit and the output merger support (`VkSampleCountFlags`).
pub const SAMPLE_COUNTS: vk::SampleCountFlags = vk::SampleCountFlags::from_raw(gfx::samples::COUNTS);
/// Viewports and scissors a pipeline may use (`maxViewports`).
pub const MAX_VIEWPORTS: u32 = 1;
/// Vertex attributes and their locations (`maxVertexInputAttributes`).
pub const MAX_VERTEX_ATTRIBUTES: u32 = 16;
/// Largest attribute offset and binding stride (`maxVertexInputAttributeOffset`,
/// `maxVertexInputBindingStride`).
pub const MAX_VERTEX_OFFSET: u32 = 2047;
pub const MAX_VERTEX_STRIDE: u32 = 2048;

/// `VkVertexInputBindingDescription` (with its divisor; 1 without the divisor extension).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexBinding {
    pub binding: u32,
    pub stride: u32,
    pub input_rate: vk::VertexInputRate,
    pub divisor: u32,
}

/// `VkVertexInputAttributeDescription`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexAttribute {
    pub location: u32,
    pub binding: u32,
    pub format: vk::Format,
    pub offset: u32,
}

/// `VkStencilOpState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StencilFace {
    pub fail_op: vk::StencilOp,
    pub pass_op: vk::StencilOp,
    pub depth_fail_op: vk::StencilOp,
    pub compare: vk::CompareOp,
    pub compare_mask: u32,
    pub write_mask: u32,
    pub reference: u32,
}

impl Default for StencilFace {
    fn default() -> Self {
        StencilFace {
            fail_op: vk::StencilOp::KEEP,
            pass_op: vk::StencilOp::KEEP,
            depth_fail_op: vk::StencilOp::KEEP,
            compare: vk::CompareOp::NEVER,
            compare_mask: 0,
            write_mask: 0,
            reference: 0,
        }
    }
}

/// `VkPipelineColorBlendAttachmentState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlendAttachment {
    pub enable: bool,
    pub src_color: vk::BlendFactor,
    pub dst_color: vk::BlendFactor,
    pub color_op: vk::BlendOp,
    pub src_alpha: vk::BlendFactor,
    pub dst_alpha: vk::BlendFactor,
    pub alpha_op: vk::BlendOp,
    pub write_mask: vk::ColorComponentFlags,
}

impl Default for BlendAttachment {
    fn default() -> Self {
        BlendAttachment {
            enable: false,
            src_color: vk::BlendFactor::ONE,
            dst_color: vk::BlendFactor::ZERO,
            color_op: vk::BlendOp::ADD,
            src_alpha: vk::BlendFactor::ONE,
            dst_alpha: vk::BlendFactor::ZERO,
            alpha_op: vk::BlendOp::ADD,
            write_mask: vk::ColorComponentFlags::RGBA,
        }
    }
}

/// `VkViewport`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Viewport {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    pub min_depth: f32,
    pub max_depth: f32,
}

/// `VkRect2D`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    /// The overlap of two rectangles (empty: zero width or height).
    pub fn intersect(&self, o: &Rect) -> Rect {
        let x0 = (self.x as i64).max(o.x as i64);
        let y0 = (self.y as i64).max(o.y as i64);
        let x1 = (self.x as i64 + self.width as i64).min(o.x as i64 + o.width as i64);
        let y1 = (self.y as i64 + self.height as i64).min(o.y as i64 + o.height as i64);
        Rect { x: x0 as i32, y: y0 as i32, width: (x1 - x0).max(0) as u32, height: (y1 - y0).max(0) as u32 }
    }
}

/// Depth bias constant factor, clamp and slope factor.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthBias {
    pub constant: f32,
    pub clamp: f32,
    pub slope: f32,
}

/// The dynamic states a pipeline may declare: Vulkan 1.0's and those of extended dynamic
/// state 1 and 2 that the draw state record holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dyn {
    Viewport,
    Scissor,
    LineWidth,
    DepthBias,
    BlendConstants,
    DepthBounds,
    StencilCompareMask,
    StencilWriteMask,
    StencilReference,
    CullMode,
    FrontFace,
    PrimitiveTopology,
    ViewportWithCount,
    ScissorWithCount,
    VertexInputBindingStride,
    DepthTestEnable,
    DepthWriteEnable,
    DepthCompareOp,
    DepthBoundsTestEnable,
    StencilTestEnable,
    StencilOp,
    RasterizerDiscardEnable,
    DepthBiasEnable,
    PrimitiveRestartEnable,
}

impl Dyn {
    pub const ALL: [Dyn; 24] = [
        Dyn::Viewport,
        Dyn::Scissor,
        Dyn::LineWidth,
        Dyn::DepthBias,
        Dyn::BlendConstants,
        Dyn::DepthBounds,
        Dyn::StencilCompareMask,
        Dyn::StencilWriteMask,
        Dyn::StencilReference,
        Dyn::CullMode,
        Dyn::FrontFace,
        Dyn::PrimitiveTopology,
        Dyn::ViewportWithCount,
        Dyn::ScissorWithCount,
        Dyn::VertexInputBindingStride,
        Dyn::DepthTestEnable,
        Dyn::DepthWriteEnable,
        Dyn::DepthCompareOp,
        Dyn::DepthBoundsTestEnable,
        Dyn::StencilTestEnable,
        Dyn::StencilOp,
        Dyn::RasterizerDiscardEnable,
        Dyn::DepthBiasEnable,
        Dyn::PrimitiveRestartEnable,
    ];

    pub fn vk(self) -> vk::DynamicState {
        use vk::DynamicState as D;
        match self {
            Dyn::Viewport => D::VIEWPORT,
            Dyn::Scissor => D::SCISSOR,
            Dyn::LineWidth => D::LINE_WIDTH,
            Dyn::DepthBias => D::DEPTH_BIAS,
            Dyn::BlendConstants => D::BLEND_CONSTANTS,
            Dyn::DepthBounds => D::DEPTH_BOUNDS,
            Dyn::StencilCompareMask => D::STENCIL_COMPARE_MASK,
            Dyn::StencilWriteMask => D::STENCIL_WRITE_MASK,
            Dyn::StencilReference => D::STENCIL_REFERENCE,
            Dyn::CullMode => D::CULL_MODE,
            Dyn::FrontFace => D::FRONT_FACE,
            Dyn::PrimitiveTopology => D::PRIMITIVE_TOPOLOGY,
            Dyn::ViewportWithCount => D::VIEWPORT_WITH_COUNT,
            Dyn::ScissorWithCount => D::SCISSOR_WITH_COUNT,
            Dyn::VertexInputBindingStride => D::VERTEX_INPUT_BINDING_STRIDE,
            Dyn::DepthTestEnable => D::DEPTH_TEST_ENABLE,
            Dyn::DepthWriteEnable => D::DEPTH_WRITE_ENABLE,
            Dyn::DepthCompareOp => D::DEPTH_COMPARE_OP,
            Dyn::DepthBoundsTestEnable => D::DEPTH_BOUNDS_TEST_ENABLE,
            Dyn::StencilTestEnable => D::STENCIL_TEST_ENABLE,
            Dyn::StencilOp => D::STENCIL_OP,
            Dyn::RasterizerDiscardEnable => D::RASTERIZER_DISCARD_ENABLE,
            Dyn::DepthBiasEnable => D::DEPTH_BIAS_ENABLE,
            Dyn::PrimitiveRestartEnable => D::PRIMITIVE_RESTART_ENABLE,
        }
    }

    /// The dynamic state of a `VkDynamicState` (the EXT aliases have the same values);
    /// `None` for one this device does not offer.
    pub fn from_vk(d: vk::DynamicState) -> Option<Dyn> {
        Dyn::ALL.into_iter().find(|x| x.vk() == d)
    }
}

/// A set of [`Dyn`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DynamicSet(u32);

impl DynamicSet {
    pub fn with(self, d: Dyn) -> DynamicSet {
        DynamicSet(self.0 | 1 << d as u32)
    }

    pub fn has(self, d: Dyn) -> bool {
        self.0 & (1 << d as u32) != 0
    }
}

/// The fixed-function state of a graphics pipeline, in Vulkan's terms. Blocks the
/// application left out (as Vulkan allows when they do not apply) hold their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedState {
    pub bindings: Vec<VertexBinding>,
    pub attributes: Vec<VertexAttribute>,
    pub topology: vk::PrimitiveTopology,
    pub primitive_restart: bool,
    pub viewports: Vec<Viewport>,
    pub scissors: Vec<Rect>,
    pub depth_clamp: bool,
    pub rasterizer_discard: bool,
    pub polygon_mode: vk::PolygonMode,
    pub cull_mode: vk::CullModeFlags,
    pub front_face: vk::FrontFace,
    pub depth_bias_enable: bool,
    pub depth_bias: DepthBias,
    pub line_width: f32,
    /// `VK_PROVOKING_VERTEX_MODE_LAST_VERTEX_EXT`.
    pub provoking_last: bool,
    pub samples: vk::SampleCountFlags,
    pub sample_mask: u32,
    pub sample_shading: bool,
    pub alpha_to_coverage: bool,
    pub alpha_to_one: bool,
    pub depth_test: bool,
    pub depth_write: bool,
    pub depth_compare: vk::CompareOp,
    pub depth_bounds_test: bool,
    pub depth_bounds: [f32; 2],
    pub stencil_test: bool,
    /// Front, back.
    pub stencil: [StencilFace; 2],
    pub logic_op: Option<vk::LogicOp>,
    /// One per colour attachment of the subpass.
    pub blend: Vec<BlendAttachment>,
    pub blend_constants: [f32; 4],
    pub dynamic: DynamicSet,
}

impl Default for FixedState {
    fn default() -> Self {
        FixedState {
            bindings: vec![],
            attributes: vec![],
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            primitive_restart: false,
            viewports: vec![],
            scissors: vec![],
            depth_clamp: false,
            rasterizer_discard: false,
            polygon_mode: vk::PolygonMode::FILL,
            cull_mode: vk::CullModeFlags::NONE,
            front_face: vk::FrontFace::COUNTER_CLOCKWISE,
            depth_bias_enable: false,
            depth_bias: DepthBias::default(),
            line_width: 1.0,
            provoking_last: false,
            samples: vk::SampleCountFlags::TYPE_1,
            sample_mask: !0,
            sample_shading: false,
            alpha_to_coverage: false,
            alpha_to_one: false,
            depth_test: false,
            depth_write: false,
            depth_compare: vk::CompareOp::NEVER,
            depth_bounds_test: false,
            depth_bounds: [0.0, 1.0],
            stencil_test: false,
            stencil: [StencilFace::default(); 2],
            logic_op: None,
            blend: vec![],
            blend_constants: [0.0; 4],
            dynamic: DynamicSet::default(),
        }
    }
}

/// The attachments a pipeline renders to: its render pass's subpass, or
/// `VkPipelineRenderingCreateInfo` for dynamic rendering. `UNDEFINED`: no attachment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Targets {
    pub colors: Vec<vk::Format>,
    pub depth: vk::Format,
    pub stencil: vk::Format,
    pub view_mask: u32,
}

/// One shader stage of the create info.
pub struct StageSource {
    pub stage: vk::ShaderStageFlags,
    pub module: Arc<ShaderModule>,
    pub entry: String,
    pub spec: Specialization,
}

/// What the compiler reports about a vertex or fragment kernel that the draw needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageInfo {
    /// Vertex: locations written (the vertex-output slot holds `gfx::vout::stride` of them).
    pub vout_locations: u32,
    /// Vertex: `gl_ClipDistance` elements written.
    pub clip_distances: u32,
    /// Fragment: the `state::flags` bits the kernel sets (`EARLY_TESTS`, `FS_*`).
    pub fs_flags: u32,
    /// Fragment: bit L when location L is exported.
    pub color_outputs: u32,
}

pub struct GraphicsPipeline {
    pub fixed: FixedState,
    pub targets: Targets,
    pub vertex: Memory,
    pub fragment: Option<Memory>,
    /// Bytes per vertex-output slot (`state::VOUT_STRIDE`).
    pub vout_stride: u32,
    /// Clip distances the vertex kernel writes (`state::CLIP_DISTANCES`).
    pub clip_distances: u32,
    /// `state::flags` bits from the fragment kernel.
    pub fs_flags: u32,
}

impl GraphicsPipeline {
    pub fn vertex_address(&self) -> u64 {
        self.vertex.address(0)
    }

    /// 0 without a fragment shader (a depth/stencil-only draw).
    pub fn fragment_address(&self) -> u64 {
        self.fragment.as_ref().map_or(0, |m| m.address(0))
    }
}

impl Pipeline {
    /// Validates the fixed-function state against what the units do, then compiles the
    /// vertex and fragment stages.
    pub fn graphics(
        device: &Device,
        stages: &[StageSource],
        fixed: FixedState,
        targets: Targets,
        layout: Arc<PipelineLayout>,
    ) -> VkResult<Pipeline> {
        validate(&fixed, &targets)?;
        let find = |s: vk::ShaderStageFlags| stages.iter().find(|x| x.stage == s);
        if let Some(other) =
            stages.iter().find(|s| !matches!(s.stage, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT))
        {
            return refuse(&format!("stage {:?} is not supported (only vertex and fragment)", other.stage));
        }
        let Some(vs) = find(vk::ShaderStageFlags::VERTEX) else {
            return refuse("no vertex stage");
        };
        let (vk_vs, vs_info) = compile_stage(device, vs, Stage::Vertex, &fixed, &layout)?;
        let fs = match find(vk::ShaderStageFlags::FRAGMENT) {
            Some(fs) if !fixed.rasterizer_discard || fixed.dynamic.has(Dyn::RasterizerDiscardEnable) => {
                Some(compile_stage(device, fs, Stage::Fragment, &fixed, &layout)?)
            }
            _ => None,
        };
        let graphics = GraphicsPipeline {
            vout_stride: gfx::vout::stride(vs_info.vout_locations as usize) as u32,
            clip_distances: vs_info.clip_distances,
            fs_flags: fs.as_ref().map_or(0, |(_, i)| i.fs_flags),
            fixed,
            targets,
            vertex: vk_vs,
            fragment: fs.map(|(m, _)| m),
        };
        Ok(Pipeline { layout, name: vs.entry.clone(), kind: Kind::Graphics(Box::new(graphics)) })
    }
}

fn refuse<T>(why: &str) -> VkResult<T> {
    tracing::error!("vkCreateGraphicsPipelines: {why}");
    Err(vk::Result::ERROR_FEATURE_NOT_PRESENT)
}

/// Compiles one stage and loads its kernel. The vertex stage fetches its attributes itself,
/// so it is compiled against the pipeline's vertex input state.
fn compile_stage(
    device: &Device,
    src: &StageSource,
    stage: Stage,
    fixed: &FixedState,
    layout: &PipelineLayout,
) -> VkResult<(Memory, StageInfo)> {
    let target = shader::Target {
        ray_query: shader::RayQueryLowering::for_arch(device.config.rt_arch),
        raylog: vortex_model::rtu::raylog::enabled(),
        ..shader::Target::stage(stage)
    };
    let vertex_input = match stage {
        Stage::Vertex => fixed
            .attributes
            .iter()
            .map(|a| shader::VertexAttribute {
                location: a.location,
                binding: a.binding,
                format: a.format.as_raw() as u32,
                offset: a.offset,
            })
            .collect(),
        _ => Vec::new(),
    };
    let k =
        crate::stream::compile_kernel(device, &src.module.words, &src.entry, &src.spec, layout, target, vertex_input)?;
    let info = stage_info(&k, stage)?;
    Ok((load_kernel(device, &k)?, info))
}

/// The draw-relevant facts of a compiled vertex or fragment kernel.
fn stage_info(k: &shader::CompiledKernel, stage: Stage) -> VkResult<StageInfo> {
    let Some(g) = &k.graphics else {
        tracing::error!("'{}': the compiler reports no {stage} interface for this kernel", k.entry_name);
        return Err(vk::Result::ERROR_FEATURE_NOT_PRESENT);
    };
    use state::flags;
    let fs_flags = [
        (g.early_tests, flags::EARLY_TESTS),
        (g.writes_depth, flags::FS_WRITES_DEPTH),
        (g.discards, flags::FS_DISCARDS),
        (g.side_effects, flags::FS_SIDE_EFFECTS),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .fold(0, |acc, (_, b)| acc | b);
    Ok(StageInfo {
        vout_locations: g.vout_locations,
        clip_distances: g.clip_distances,
        fs_flags: if stage == Stage::Fragment { fs_flags } else { 0 },
        color_outputs: g.color_outputs,
    })
}

/// What the units cannot do is refused with the reason.
pub fn validate(f: &FixedState, t: &Targets) -> VkResult<()> {
    if gfx::topology(f.topology.as_raw() as u32).is_none() {
        return refuse(&format!("topology {:?} is not supported", f.topology));
    }
    if f.polygon_mode != vk::PolygonMode::FILL && !FILL_MODE_NON_SOLID {
        return refuse(&format!("polygon mode {:?} is not supported (fillModeNonSolid is false)", f.polygon_mode));
    }
    if !SAMPLE_COUNTS.contains(f.samples) || f.samples.as_raw().count_ones() != 1 {
        return refuse(&format!("{:?} rasterization samples are not supported", f.samples));
    }
    if f.sample_shading || f.alpha_to_one {
        return refuse("sample shading and alpha-to-one are not supported");
    }
    let dynamic_count = f.dynamic.has(Dyn::ViewportWithCount);
    if !dynamic_count && (f.viewports.len() as u32 > MAX_VIEWPORTS || f.scissors.len() as u32 > MAX_VIEWPORTS) {
        return refuse(&format!(
            "{} viewports and {} scissors (at most {MAX_VIEWPORTS})",
            f.viewports.len(),
            f.scissors.len()
        ));
    }
    if f.logic_op.is_some() {
        return refuse("logic operations are not supported (logicOp is false)");
    }
    let dual = |b: vk::BlendFactor| {
        matches!(
            b,
            vk::BlendFactor::SRC1_COLOR
                | vk::BlendFactor::ONE_MINUS_SRC1_COLOR
                | vk::BlendFactor::SRC1_ALPHA
                | vk::BlendFactor::ONE_MINUS_SRC1_ALPHA
        )
    };
    if f.blend.iter().any(|b| b.enable && [b.src_color, b.dst_color, b.src_alpha, b.dst_alpha].into_iter().any(dual)) {
        return refuse("dual-source blending is not supported (dualSrcBlend is false)");
    }
    if f.blend.iter().any(|b| b.enable && (b.color_op.as_raw() > 4 || b.alpha_op.as_raw() > 4)) {
        return refuse("advanced blend operations are not supported");
    }
    if t.colors.len() > state::MAX_COLOR {
        return refuse(&format!("{} colour attachments (at most {})", t.colors.len(), state::MAX_COLOR));
    }
    validate_vertex_input(f)
}

fn validate_vertex_input(f: &FixedState) -> VkResult<()> {
    for b in &f.bindings {
        if b.binding as usize >= state::MAX_VB || b.stride > MAX_VERTEX_STRIDE {
            return refuse(&format!("vertex binding {} with stride {}", b.binding, b.stride));
        }
        if b.divisor != 1 {
            return refuse("vertex attribute divisors are not supported");
        }
    }
    for a in &f.attributes {
        if a.location >= MAX_VERTEX_ATTRIBUTES || a.offset > MAX_VERTEX_OFFSET {
            return refuse(&format!("vertex attribute at location {} offset {}", a.location, a.offset));
        }
        if !f.bindings.iter().any(|b| b.binding == a.binding) {
            return refuse(&format!(
                "vertex attribute {} reads binding {}, which is not described",
                a.location, a.binding
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_states_map_both_ways() {
        let mut set = DynamicSet::default();
        for d in Dyn::ALL {
            assert_eq!(Dyn::from_vk(d.vk()), Some(d));
            assert!(!set.has(d));
            set = set.with(d);
            assert!(set.has(d));
        }
        assert_eq!(Dyn::from_vk(vk::DynamicState::LOGIC_OP_EXT), None);
    }

    #[test]
    fn validation_names_what_the_units_do_not_do() {
        let ok = FixedState::default();
        let t = Targets { colors: vec![vk::Format::R8G8B8A8_UNORM], ..Default::default() };
        assert!(validate(&ok, &t).is_ok());
        let bad = [
            FixedState { topology: vk::PrimitiveTopology::PATCH_LIST, ..ok.clone() },
            FixedState { topology: vk::PrimitiveTopology::TRIANGLE_LIST_WITH_ADJACENCY, ..ok.clone() },
            FixedState { samples: vk::SampleCountFlags::TYPE_8, ..ok.clone() },
            FixedState { logic_op: Some(vk::LogicOp::XOR), ..ok.clone() },
            FixedState { viewports: vec![Viewport::default(); 2], ..ok.clone() },
            FixedState {
                blend: vec![BlendAttachment {
                    enable: true,
                    src_color: vk::BlendFactor::SRC1_ALPHA,
                    ..Default::default()
                }],
                ..ok.clone()
            },
            FixedState {
                attributes: vec![VertexAttribute {
                    location: 0,
                    binding: 3,
                    format: vk::Format::R32_SFLOAT,
                    offset: 0,
                }],
                ..ok.clone()
            },
        ];
        for f in bad {
            assert!(validate(&f, &t).is_err(), "{f:?}");
        }
        let nine = Targets { colors: vec![vk::Format::R8_UNORM; 9], ..Default::default() };
        assert!(validate(&ok, &nine).is_err());
    }

    #[test]
    fn rect_intersection() {
        let a = Rect { x: 0, y: 0, width: 10, height: 10 };
        assert_eq!(a.intersect(&Rect { x: 5, y: -3, width: 10, height: 5 }), Rect { x: 5, y: 0, width: 5, height: 2 });
        assert_eq!(a.intersect(&Rect { x: 20, y: 0, width: 1, height: 1 }).width, 0);
    }
}
