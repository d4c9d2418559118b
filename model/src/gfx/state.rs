//! The draw state record (`abi::gfx::state`) as the units read it: parsed and checked once per
//! draw, at `GFX_START`.

use crate::abi::format::{self, Format};
use crate::abi::gfx::{self, state as st, Assembly};
use crate::abi::{rd_f32, rd_u32, rd_u64};
use crate::fault::{Fault, FaultKind};
use crate::mem::MemoryMap;

/// One stencil face.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stencil {
    pub fail_op: u32,
    pub pass_op: u32,
    pub depth_fail_op: u32,
    pub compare: u32,
    pub compare_mask: u32,
    pub write_mask: u32,
    pub reference: u32,
}

/// A colour attachment's blend state (`VkBlendFactor`, `VkBlendOp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blend {
    pub enable: bool,
    pub src_color: u32,
    pub dst_color: u32,
    pub color_op: u32,
    pub src_alpha: u32,
    pub dst_alpha: u32,
    pub alpha_op: u32,
    /// `VkColorComponentFlags`: R 1, G 2, B 4, A 8.
    pub write_mask: u32,
}

/// An attachment of the draw.
#[derive(Clone, Copy, Debug)]
pub struct Attachment {
    pub addr: u64,
    pub format: &'static Format,
    pub row_pitch: u64,
    pub stencil_addr: u64,
    pub stencil_pitch: u64,
    pub blend: Blend,
}

/// The draw's fixed-function state.
#[derive(Clone, Debug)]
pub struct DrawState {
    pub topology: u32,
    pub assembly: (u32, Assembly),
    pub flags: u32,
    pub cull_mode: u32,
    pub polygon_mode: u32,
    pub bias_constant: f32,
    pub bias_clamp: f32,
    pub bias_slope: f32,
    pub line_width: f32,
    /// x, y, width, height, minDepth, maxDepth.
    pub viewport: [f32; 6],
    /// x0, y0, x1, y1 (exclusive), inside the render target.
    pub scissor: [i64; 4],
    pub sample_mask: u32,
    pub depth_compare: u32,
    pub depth_bounds: [f32; 2],
    pub vout_stride: u64,
    pub clip_distances: usize,
    /// Front, back.
    pub stencil: [Stencil; 2],
    pub blend_constants: [f32; 4],
    pub target: [u32; 2],
    pub depth: Option<Attachment>,
    /// By location; `None` where the location has no attachment.
    pub color: [Option<Attachment>; st::MAX_COLOR],
}

/// The largest render-target side the raster unit bins (well above `maxFramebufferWidth`).
pub const MAX_TARGET: u32 = 1 << 16;

fn bad(detail: String) -> Fault {
    Fault::new(FaultKind::BadLaunch, format!("draw state record: {detail}"))
}

impl DrawState {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Reads and checks the record at `addr`.
    pub fn read(mem: &MemoryMap, addr: u64) -> Result<DrawState, Fault> {
        let mut b = vec![0u8; st::BYTES];
        mem.read(addr, &mut b).map_err(Fault::memory)?;
        DrawState::parse(&b)
    }

    pub fn parse(b: &[u8]) -> Result<DrawState, Fault> {
        let u = |o: usize| rd_u32(b, o);
        let f = |o: usize| rd_f32(b, o);
        let topology = u(st::TOPOLOGY);
        let assembly = gfx::topology(topology).ok_or_else(|| bad(format!("topology {topology} is not offered")))?;
        let target = [u(st::TARGET_WIDTH), u(st::TARGET_HEIGHT)];
        if target.iter().any(|&t| t > MAX_TARGET) {
            return Err(bad(format!("render target {}x{} is larger than {MAX_TARGET}", target[0], target[1])));
        }
        let (sx, sy) = (u(st::SCISSOR) as i32 as i64, u(st::SCISSOR + 4) as i32 as i64);
        let (sw, sh) = (u(st::SCISSOR + 8) as i64, u(st::SCISSOR + 12) as i64);
        let scissor = [sx.max(0), sy.max(0), (sx + sw).min(target[0] as i64), (sy + sh).min(target[1] as i64)];
        let clip_distances = u(st::CLIP_DISTANCES) as usize;
        if clip_distances > gfx::vout::MAX_CLIP_DISTANCES {
            return Err(bad(format!("{clip_distances} clip distances")));
        }
        let vout_stride = u(st::VOUT_STRIDE) as u64;
        let min_stride = (gfx::vout::CLIP_DISTANCE + 4 * clip_distances) as u64;
        if vout_stride < min_stride.max(gfx::vout::POINT_SIZE as u64 + 4) {
            return Err(bad(format!("vertex-output stride {vout_stride} is too small")));
        }
        let stencil_face = |o: usize| Stencil {
            fail_op: u(o + st::stencil::FAIL_OP),
            pass_op: u(o + st::stencil::PASS_OP),
            depth_fail_op: u(o + st::stencil::DEPTH_FAIL_OP),
            compare: u(o + st::stencil::COMPARE),
            compare_mask: u(o + st::stencil::COMPARE_MASK),
            write_mask: u(o + st::stencil::WRITE_MASK),
            reference: u(o + st::stencil::REFERENCE),
        };
        let color_count = (u(st::COLOR_COUNT) as usize).min(st::MAX_COLOR);
        let mut color = [None; st::MAX_COLOR];
        for (k, c) in color.iter_mut().enumerate().take(color_count) {
            *c = attachment(b, st::COLOR + k * st::attachment::BYTES, format::cap::COLOR)?;
        }
        let depth = attachment(b, st::DEPTH, 0)?;
        if let Some(d) = &depth {
            if !d.format.has(format::cap::DEPTH) && !d.format.has(format::cap::STENCIL) {
                return Err(bad(format!("depth attachment format {} is not a depth/stencil format", d.format.name)));
            }
        }
        Ok(DrawState {
            topology,
            assembly,
            flags: u(st::FLAGS),
            cull_mode: u(st::CULL_MODE),
            polygon_mode: u(st::POLYGON_MODE),
            bias_constant: f(st::DEPTH_BIAS_CONSTANT),
            bias_clamp: f(st::DEPTH_BIAS_CLAMP),
            bias_slope: f(st::DEPTH_BIAS_SLOPE),
            line_width: f(st::LINE_WIDTH),
            viewport: std::array::from_fn(|i| f(st::VIEWPORT + 4 * i)),
            scissor,
            sample_mask: u(st::SAMPLE_MASK),
            depth_compare: u(st::DEPTH_COMPARE),
            depth_bounds: [f(st::DEPTH_BOUNDS_MIN), f(st::DEPTH_BOUNDS_MAX)],
            vout_stride,
            clip_distances,
            stencil: [stencil_face(st::STENCIL_FRONT), stencil_face(st::STENCIL_BACK)],
            blend_constants: std::array::from_fn(|i| f(st::BLEND_CONSTANTS + 4 * i)),
            target,
            depth,
            color,
        })
    }
}

/// The attachment record at `o`, `None` for format 0; its format must have `cap`.
fn attachment(b: &[u8], o: usize, cap: u32) -> Result<Option<Attachment>, Fault> {
    use st::attachment as a;
    let vk = rd_u32(b, o + a::FORMAT);
    if vk == 0 {
        return Ok(None);
    }
    let format = format::find(vk)
        .filter(|f| f.has(cap))
        .ok_or_else(|| bad(format!("attachment format {vk} cannot be written by the output merger")))?;
    let u = |k: usize| rd_u32(b, o + k);
    Ok(Some(Attachment {
        addr: rd_u64(b, o + a::ADDR),
        format,
        row_pitch: u(a::ROW_PITCH) as u64,
        stencil_addr: rd_u64(b, o + a::STENCIL_ADDR),
        stencil_pitch: u(a::STENCIL_PITCH) as u64,
        blend: Blend {
            enable: u(a::BLEND_ENABLE) != 0,
            src_color: u(a::SRC_COLOR),
            dst_color: u(a::DST_COLOR),
            color_op: u(a::COLOR_OP),
            src_alpha: u(a::SRC_ALPHA),
            dst_alpha: u(a::DST_ALPHA),
            alpha_op: u(a::ALPHA_OP),
            write_mask: u(a::WRITE_MASK),
        },
    }))
}
