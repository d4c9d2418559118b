//! Rasterization end to end through the loader: draws whose every result is read back and
//! compared with a hand-solved expectation (so lavapipe passing them is what makes them a
//! test of ours).
//!
//! - a triangle fan over the whole target and a jittered grid of triangles with shared edges
//!   and sub-pixel vertices (some exactly on pixel centres) each write every pixel exactly
//!   once (counted with atomics in the fragment shader);
//! - clipping against the near and far planes (depth written where the plane keeps it),
//!   and of a triangle crossing w = 0 in perspective against a host solution;
//! - the depth test and writes, the stencil test and its operations;
//! - every blend factor and blend op of the core spec on an 8-bit unorm target;
//! - every vertex format the device offers, converted as the vertex shader sees it;
//! - texture filtering and mip selection (implicit and explicit LOD, bilinear weights,
//!   repeat), derivatives (fine, coarse, of varyings), helper invocations;
//! - indirect draws, indexed and not, with instances.
//!
//! Usage: raster_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

mod blend;
mod formats;
mod sampling;

use ash::vk;
use vortex_examples::raster::{GraphicsDesc, GraphicsPipeline, Target};
use vortex_examples::{checks, Binding, Buffer, Context};

pub type Check = Result<(), String>;

pub fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

pub const VS: &[u8] = include_bytes!("../../../shaders/raster.vert.spv");
pub const COUNT_FS: &[u8] = include_bytes!("../../../shaders/raster_count.frag.spv");
const DERIV_FS: &[u8] = include_bytes!("../../../shaders/raster_deriv.frag.spv");

/// The vertex input of [`VS`]: one vec4 clip-space position per vertex, binding 0.
pub const POS_BINDING: [vk::VertexInputBindingDescription; 1] =
    [vk::VertexInputBindingDescription { binding: 0, stride: 16, input_rate: vk::VertexInputRate::VERTEX }];
pub const POS_ATTRIBUTE: [vk::VertexInputAttributeDescription; 1] = [vk::VertexInputAttributeDescription {
    location: 0,
    binding: 0,
    format: vk::Format::R32G32B32A32_SFLOAT,
    offset: 0,
}];

pub const fn storage(binding: u32) -> Binding {
    Binding { set: 0, binding, ty: vk::DescriptorType::STORAGE_BUFFER, count: 1 }
}

/// The counting pipeline: positions through [`VS`], and [`COUNT_FS`] adding 1 to its
/// pixel's word of storage buffer 0 (a triangle list, no depth test, blending off).
pub const COUNTING: GraphicsDesc<'static> = GraphicsDesc {
    vertex: VS,
    fragment: Some(COUNT_FS),
    bindings: &[storage(0)],
    push_constant_bytes: 48,
    vertex_bindings: &POS_BINDING,
    vertex_attributes: &POS_ATTRIBUTE,
    topology: vk::PrimitiveTopology::TRIANGLE_LIST,
    cull_mode: vk::CullModeFlags::NONE,
    depth_compare: None,
    stencil: None,
    blend: None,
    rasterizer_discard: false,
};

/// The shaders' push constants: a colour, a per-instance offset, the target size.
pub fn push(color: [f32; 4], offset: [f32; 4], [w, h]: [u32; 2]) -> Vec<u8> {
    let mut out: Vec<u8> = color.iter().chain(&offset).flat_map(|f| f.to_le_bytes()).collect();
    for v in [w, h, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// A point in pixels to clip space (w = 1) on a `w`x`h` target.
pub fn clip([x, y]: [f32; 2], z: f32, [w, h]: [u32; 2]) -> [f32; 4] {
    [x / w as f32 * 2.0 - 1.0, y / h as f32 * 2.0 - 1.0, z, 1.0]
}

/// Two triangles over the pixel rectangle `x0..x1` x `y0..y1` at depth `z`.
pub fn rect_tris([x0, y0, x1, y1]: [f32; 4], z: f32, size: [u32; 2]) -> Vec<[f32; 4]> {
    let c = |x, y| clip([x, y], z, size);
    vec![c(x0, y0), c(x1, y0), c(x0, y1), c(x0, y1), c(x1, y0), c(x1, y1)]
}

/// A vertex buffer of clip-space positions.
pub fn vertices(ctx: &Context, v: &[[f32; 4]]) -> Result<Buffer, String> {
    Buffer::with_data(ctx, v, vk::BufferUsageFlags::VERTEX_BUFFER).map_err(err)
}

const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

/// Draws `tris` (a list, or a fan) with the counting fragment shader on a `size` target
/// and returns the per-pixel fragment counts.
fn count_fragments(
    ctx: &Context,
    size: [u32; 2],
    topology: vk::PrimitiveTopology,
    verts: &[[f32; 4]],
    indices: Option<&[u32]>,
) -> Result<Vec<u32>, String> {
    let target = Target::new(ctx, size, &[RGBA8], None).map_err(err)?;
    let desc = GraphicsDesc { topology, ..COUNTING };
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let counts =
        Buffer::new(ctx, size[0] as u64 * size[1] as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    pipe.bind_storage_buffer(0, &counts);
    let vb = vertices(ctx, verts)?;
    let ib = indices.map(|i| Buffer::with_data(ctx, i, vk::BufferUsageFlags::INDEX_BUFFER)).transpose().map_err(err)?;
    let d = ctx.device();
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        pipe.bind(ctx, cmd, &push([1.0; 4], [0.0; 4], size), &[&vb]);
        // SAFETY: recording inside the target's render pass; the buffers outlive the submission.
        unsafe {
            match (&ib, indices) {
                (Some(ib), Some(i)) => {
                    d.cmd_bind_index_buffer(cmd, ib.handle(), 0, vk::IndexType::UINT32);
                    d.cmd_draw_indexed(cmd, i.len() as u32, 1, 0, 0, 0);
                }
                _ => d.cmd_draw(cmd, verts.len() as u32, 1, 0, 0),
            }
        }
        target.end(cmd);
    })
    .map_err(err)?;
    Ok(counts.read::<u32>())
}

fn exactly_once(counts: &[u32], w: u32) -> Check {
    let bad: Vec<String> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 1)
        .take(8)
        .map(|(i, c)| format!("({}, {}): {c}", i as u32 % w, i as u32 / w))
        .collect();
    let total = counts.iter().filter(|&&c| c != 1).count();
    if total == 0 {
        Ok(())
    } else {
        Err(format!("{total} pixels not written exactly once, e.g. {}", bad.join(", ")))
    }
}

/// A fan around a sub-pixel centre whose rim runs along the target's border through
/// vertices at sub-pixel positions and on pixel centres.
fn fan_covers_once(ctx: &Context) -> Check {
    let size = [64, 32];
    let (w, h) = (size[0] as f32, size[1] as f32);
    let mut rim = Vec::new();
    // Corners and border points, counter-clockwise; positions in 1/16 pixel.
    for x in [0.0, 5.5, 11.0625, 17.5, 30.25, 41.5, 52.9375] {
        rim.push([x, 0.0]);
    }
    for y in [0.0, 7.5, 13.125, 20.5, 27.8125] {
        rim.push([w, y]);
    }
    for x in [w, 57.5, 43.1875, 32.5, 20.0, 9.5] {
        rim.push([x, h]);
    }
    for y in [h, 24.5, 16.0625, 9.5, 3.25] {
        rim.push([0.0, y]);
    }
    rim.push([0.0, 0.0]);
    let mut verts = vec![clip([29.3125, 14.6875], 0.5, size)];
    verts.extend(rim.iter().map(|&p| clip(p, 0.5, size)));
    exactly_once(&count_fragments(ctx, size, vk::PrimitiveTopology::TRIANGLE_FAN, &verts, None)?, size[0])
}

/// A grid of quads split into triangles with alternating diagonals; inner vertices jittered
/// by multiples of 1/16 pixel, several onto pixel centres and pixel corners.
fn grid_shared_edges(ctx: &Context) -> Check {
    let size = [64, 32];
    let (nx, ny) = (9u32, 5u32);
    let mut verts = Vec::new();
    for j in 0..=ny {
        for i in 0..=nx {
            let (mut x, mut y) = (i as f32 * 64.0 / nx as f32, j as f32 * 32.0 / ny as f32);
            if i > 0 && i < nx && j > 0 && j < ny {
                // Snap to the 1/16 grid, then jitter; every third vertex lands on a pixel centre.
                let k = i * 7 + j * 13;
                x = (x * 16.0).round() / 16.0 + (k % 11) as f32 / 16.0 - 0.3125;
                y = (y * 16.0).round() / 16.0 + (k % 5) as f32 / 16.0 - 0.125;
                if k % 3 == 0 {
                    x = x.floor() + 0.5;
                    y = y.floor() + 0.5;
                }
            }
            verts.push(clip([x, y], 0.5, size));
        }
    }
    let mut indices = Vec::new();
    for j in 0..ny {
        for i in 0..nx {
            let v = |di, dj| (j + dj) * (nx + 1) + i + di;
            if (i + j) % 2 == 0 {
                indices.extend([v(0, 0), v(1, 0), v(1, 1), v(0, 0), v(1, 1), v(0, 1)]);
            } else {
                indices.extend([v(0, 0), v(1, 0), v(0, 1), v(1, 0), v(1, 1), v(0, 1)]);
            }
        }
    }
    let counts = count_fragments(ctx, size, vk::PrimitiveTopology::TRIANGLE_LIST, &verts, Some(&indices))?;
    exactly_once(&counts, size[0])
}

/// A full-target quad whose depth runs `z = 1.25 x_ndc + 0.3` (w = 1): fragments exist only
/// where 0 <= z <= 1 and write that depth (within one sub-pixel step of the plane).
fn near_far_clipping(ctx: &Context) -> Check {
    let size = [32u32, 8];
    let target = Target::new(ctx, size, &[RGBA8], Some(vk::Format::D32_SFLOAT)).map_err(err)?;
    let desc = GraphicsDesc { depth_compare: Some(vk::CompareOp::ALWAYS), ..COUNTING };
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let counts =
        Buffer::new(ctx, size[0] as u64 * size[1] as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    pipe.bind_storage_buffer(0, &counts);
    let z = |x: f32| 1.25 * x + 0.3;
    let corner = |x: f32, y: f32| [x, y, z(x), 1.0];
    let vb = vertices(
        ctx,
        &[
            corner(-1.0, -1.0),
            corner(1.0, -1.0),
            corner(-1.0, 1.0),
            corner(-1.0, 1.0),
            corner(1.0, -1.0),
            corner(1.0, 1.0),
        ],
    )?;
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 0.75, 0);
        pipe.draw(ctx, cmd, &push([1.0; 4], [0.0; 4], size), &[&vb], 6, 1);
        target.end(cmd);
    })
    .map_err(err)?;
    let counts = counts.read::<u32>();
    let depth: Vec<f32> =
        bytemuck::cast_slice(&target.depth.as_ref().unwrap().read(ctx, vk::ImageAspectFlags::DEPTH).map_err(err)?)
            .to_vec();
    // Vertices made by clipping land on the sub-pixel grid like any other, which may move
    // the depth plane by one grid step times its slope (dz per pixel).
    // SAFETY: valid handles.
    let limits = unsafe { ctx.instance().get_physical_device_properties(ctx.physical_device()) }.limits;
    let slope = 1.25 * 2.0 / size[0] as f32;
    let tolerance = slope / (1u32 << limits.sub_pixel_precision_bits) as f32 + 1e-6;
    for y in 0..size[1] {
        for x in 0..size[0] {
            let i = (x + y * size[0]) as usize;
            let zc = z((x as f32 + 0.5) / size[0] as f32 * 2.0 - 1.0);
            let inside = (0.0..=1.0).contains(&zc);
            let want_depth = if inside { zc } else { 0.75 };
            if counts[i] != inside as u32 || (depth[i] - want_depth).abs() > tolerance {
                return Err(format!(
                    "pixel ({x}, {y}): z {zc}: {} fragments, depth {} (want {}, {want_depth})",
                    counts[i], depth[i], inside as u32
                ));
            }
        }
    }
    Ok(())
}

/// One rectangle of [`draw_rects`]: which pipeline, its colour, the rectangle in pixels
/// (x0, y0, x1, y1), its depth and the stencil reference.
type RectDraw = (usize, [f32; 4], [f32; 4], f32, u32);
/// Colour (RGBA8), depth and stencil of a target, read back.
type Planes = (Vec<u8>, Vec<f32>, Vec<u8>);
/// Fragment counts, the derivative shader's results and the colour of a target.
type DerivRun = (Vec<u32>, Vec<[f32; 4]>, Vec<u8>);

/// Where a triangle given in clip space covers NDC point (x, y), solved on the host: the
/// triangle's point that projects there (barycentrics b with sum b (pos - (x, y) w) = 0 in
/// x and y), kept if inside the triangle, in front of the eye (w > 0) and between the near
/// and far planes (0 <= z <= w). Returns its depth z / w.
fn clip_space_cover(tri: &[[f64; 4]; 3], x: f64, y: f64) -> Option<f64> {
    let row = |k: usize, s: f64| [0, 1, 2].map(|i| tri[i][k] - s * tri[i][3]);
    let m = [row(0, x), row(1, y), [1.0; 3]];
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(m);
    if d.abs() < 1e-12 {
        return None;
    }
    // Cramer's rule with the right-hand side (0, 0, 1).
    let b: [f64; 3] = std::array::from_fn(|c| {
        let mut mc = m;
        for (r, v) in [0.0, 0.0, 1.0].into_iter().enumerate() {
            mc[r][c] = v;
        }
        det(mc) / d
    });
    let w: f64 = (0..3).map(|i| b[i] * tri[i][3]).sum();
    let z: f64 = (0..3).map(|i| b[i] * tri[i][2]).sum();
    (b.iter().all(|&v| v >= 0.0) && w > 0.0 && z >= 0.0 && z <= w).then_some(z / w)
}

/// A triangle with a vertex behind the eye (w < 0), so it crosses w = 0 and the near plane:
/// clipping must keep exactly the part in front, never its projection wrapped through
/// infinity. Compared pixel by pixel with [`clip_space_cover`] wherever the answer is the
/// same 1/32 pixel around the centre (closer calls depend on the sub-pixel grid).
fn perspective_near_clipping(ctx: &Context) -> Result<String, String> {
    let size = [48u32, 32];
    let target = Target::new(ctx, size, &[RGBA8], Some(vk::Format::D32_SFLOAT)).map_err(err)?;
    let desc = GraphicsDesc { depth_compare: Some(vk::CompareOp::ALWAYS), ..COUNTING };
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let n = (size[0] * size[1]) as usize;
    let counts = Buffer::new(ctx, n as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    pipe.bind_storage_buffer(0, &counts);
    let tri: [[f32; 4]; 3] = [[0.5, -2.0, -1.2, -1.0], [-1.5, 1.5, 1.0, 2.0], [1.5, 1.2, 1.4, 1.6]];
    let vb = vertices(ctx, &tri)?;
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        pipe.draw(ctx, cmd, &push([1.0; 4], [0.0; 4], size), &[&vb], 3, 1);
        target.end(cmd);
    })
    .map_err(err)?;
    let counts = counts.read::<u32>();
    let depth = target.depth.as_ref().unwrap().read(ctx, vk::ImageAspectFlags::DEPTH).map_err(err)?;
    let depth: &[f32] = bytemuck::cast_slice(&depth);
    let tri64 = tri.map(|v| v.map(f64::from));
    let (mut checked, mut covered) = (0, 0);
    for i in 0..n {
        let (px, py) = ((i as u32 % size[0]) as f64 + 0.5, (i as u32 / size[0]) as f64 + 0.5);
        let at = |dx: f64, dy: f64| {
            clip_space_cover(&tri64, (px + dx) / size[0] as f64 * 2.0 - 1.0, (py + dy) / size[1] as f64 * 2.0 - 1.0)
        };
        let centre = at(0.0, 0.0);
        let e = 1.0 / 32.0;
        if [at(e, 0.0), at(-e, 0.0), at(0.0, e), at(0.0, -e)].iter().any(|a| a.is_some() != centre.is_some()) {
            continue;
        }
        checked += 1;
        covered += centre.is_some() as u32;
        let ok = match centre {
            Some(z) => counts[i] == 1 && (depth[i] as f64 - z).abs() < 1e-3,
            None => counts[i] == 0 && depth[i] == 1.0,
        };
        if !ok {
            return Err(format!("pixel ({px}, {py}): {} fragments, depth {} (want {:?})", counts[i], depth[i], centre));
        }
    }
    if checked < n * 9 / 10 || covered < 100 {
        return Err(format!("only {checked} of {n} pixels clear-cut, {covered} covered: a bad check"));
    }
    Ok(format!("{covered} of {checked} clear-cut pixels covered"))
}

/// Runs `draws` into a `size` target with depth/stencil `ds` cleared to 1.0 / 0; returns
/// colour, depth, stencil.
fn draw_rects(
    ctx: &Context,
    size: [u32; 2],
    ds: vk::Format,
    pipes: &[&GraphicsPipeline],
    target: &Target,
    draws: &[RectDraw],
    counts: &Buffer,
) -> Result<Planes, String> {
    let vbs: Vec<Buffer> = draws.iter().map(|d| vertices(ctx, &rect_tris(d.2, d.3, size))).collect::<Result<_, _>>()?;
    for p in pipes {
        p.bind_storage_buffer(0, counts);
    }
    let dev = ctx.device();
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        for (d, vb) in draws.iter().zip(&vbs) {
            // SAFETY: recording inside the render pass.
            unsafe { dev.cmd_set_stencil_reference(cmd, vk::StencilFaceFlags::FRONT_AND_BACK, d.4) };
            pipes[d.0].draw(ctx, cmd, &push(d.1, [0.0; 4], size), &[vb], 6, 1);
        }
        target.end(cmd);
    })
    .map_err(err)?;
    let z = target.depth.as_ref().unwrap();
    let color = target.color[0].read(ctx, vk::ImageAspectFlags::COLOR).map_err(err)?;
    let depth = bytemuck::cast_slice::<u8, f32>(&z.read(ctx, vk::ImageAspectFlags::DEPTH).map_err(err)?).to_vec();
    let has_stencil = ds != vk::Format::D32_SFLOAT;
    let stencil = if has_stencil { z.read(ctx, vk::ImageAspectFlags::STENCIL).map_err(err)? } else { Vec::new() };
    Ok((color, depth, stencil))
}

fn rgba8(c: [f32; 4]) -> [u8; 4] {
    c.map(|v| (v * 255.0).round() as u8)
}

/// Three overlapping rectangles with LESS: the nearest fragment's colour and depth stay.
fn depth_test(ctx: &Context) -> Check {
    let size = [24u32, 8];
    let ds = vk::Format::D32_SFLOAT;
    let target = Target::new(ctx, size, &[RGBA8], Some(ds)).map_err(err)?;
    let desc = GraphicsDesc { depth_compare: Some(vk::CompareOp::LESS), ..COUNTING };
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let counts = Buffer::new(ctx, 24 * 8 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let (red, green, blue) = ([1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]);
    let draws = [
        (0, red, [0.0, 0.0, 16.0, 8.0], 0.625, 0),
        (0, green, [8.0, 0.0, 24.0, 8.0], 0.25, 0),
        (0, blue, [0.0, 0.0, 24.0, 8.0], 0.5, 0),
    ];
    let (color, depth, _) = draw_rects(ctx, size, ds, &[&pipe], &target, &draws, &counts)?;
    for i in 0..(24 * 8) {
        let x = i % 24;
        let (want, wz) = if x < 8 { (rgba8(blue), 0.5) } else { (rgba8(green), 0.25) };
        if color[4 * i..4 * i + 4] != want || depth[i] != wz {
            return Err(format!(
                "pixel ({x}, {}): colour {:?} depth {} (want {want:?} {wz})",
                i / 24,
                &color[4 * i..4 * i + 4],
                depth[i]
            ));
        }
    }
    Ok(())
}

/// The first depth/stencil format with a stencil aspect the device can attach.
fn stencil_format(ctx: &Context) -> Option<vk::Format> {
    [vk::Format::D32_SFLOAT_S8_UINT, vk::Format::D24_UNORM_S8_UINT].into_iter().find(|&f| {
        // SAFETY: valid handles.
        let p = unsafe { ctx.instance().get_physical_device_format_properties(ctx.physical_device(), f) };
        p.optimal_tiling_features.contains(vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT)
    })
}

/// REPLACE on the left half (ref 5), then EQUAL 5 with INCREMENT_AND_CLAMP over the whole
/// target, then NOT_EQUAL 6 with INVERT (a depth-failing draw's KEEP/ZERO ops on the way).
fn stencil_test(ctx: &Context) -> Check {
    let size = [16u32, 4];
    let ds = stencil_format(ctx).ok_or("no depth/stencil format with stencil")?;
    let target = Target::new(ctx, size, &[RGBA8], Some(ds)).map_err(err)?;
    let op = |compare, pass, depth_fail| vk::StencilOpState {
        fail_op: vk::StencilOp::KEEP,
        pass_op: pass,
        depth_fail_op: depth_fail,
        compare_op: compare,
        compare_mask: 0xff,
        write_mask: 0xff,
        reference: 0,
    };
    let mk = |s: vk::StencilOpState| {
        let desc = GraphicsDesc { depth_compare: Some(vk::CompareOp::LESS), stencil: Some(s), ..COUNTING };
        GraphicsPipeline::new(ctx, &target, &desc).map_err(err)
    };
    let replace = mk(op(vk::CompareOp::ALWAYS, vk::StencilOp::REPLACE, vk::StencilOp::KEEP))?;
    let incr = mk(op(vk::CompareOp::EQUAL, vk::StencilOp::INCREMENT_AND_CLAMP, vk::StencilOp::KEEP))?;
    let invert = mk(op(vk::CompareOp::NOT_EQUAL, vk::StencilOp::INVERT, vk::StencilOp::ZERO))?;
    let counts = Buffer::new(ctx, 16 * 4 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let (red, green, blue) = ([1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]);
    let draws = [
        (0, red, [0.0, 0.0, 8.0, 4.0], 0.5, 5),
        (1, green, [0.0, 0.0, 16.0, 4.0], 0.25, 5),
        // Depth 0.75 fails where the first two drew (depth-fail op ZERO), passes on the right.
        (2, blue, [0.0, 0.0, 16.0, 4.0], 0.75, 6),
    ];
    let (color, _, stencil) = draw_rects(ctx, size, ds, &[&replace, &incr, &invert], &target, &draws, &counts)?;
    for i in 0..(16 * 4) {
        let x = i % 16;
        // Left: 5 -> 6 (green), then NOT_EQUAL 6 fails: kept 6. Right: 0, EQUAL 5 fails,
        // NOT_EQUAL 6 passes, depth 0.75 < 1 passes: INVERT -> 255, blue.
        let (want, ws) = if x < 8 { (rgba8(green), 6) } else { (rgba8(blue), 255) };
        if color[4 * i..4 * i + 4] != want || stencil[i] != ws {
            return Err(format!(
                "pixel ({x}, {}): colour {:?} stencil {} (want {want:?} {ws})",
                i / 16,
                &color[4 * i..4 * i + 4],
                stencil[i]
            ));
        }
    }
    Ok(())
}

/// One pixel covered by a small triangle: its quad's other three pixels are helper
/// invocations, so fine derivatives still see the whole quad while stores, atomics and
/// colour writes happen only for the covered pixel. Over a full target, derivatives of
/// screen-linear varyings are their slopes and fine/coarse derivatives follow the quads.
fn derivatives_and_helpers(ctx: &Context) -> Check {
    let size = [16u32, 8];
    let target = Target::new(ctx, size, &[RGBA8], None).map_err(err)?;
    let bindings = [storage(0), storage(1)];
    let desc = GraphicsDesc {
        vertex: VS,
        fragment: Some(DERIV_FS),
        bindings: &bindings,
        push_constant_bytes: 48,
        vertex_bindings: &POS_BINDING,
        vertex_attributes: &POS_ATTRIBUTE,
        ..Default::default()
    };
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let n = (size[0] * size[1]) as usize;
    let run = |verts: &[[f32; 4]]| -> Result<DerivRun, String> {
        let counts = Buffer::new(ctx, n as u64 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
        let out = Buffer::new(ctx, n as u64 * 32, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
        pipe.bind_storage_buffer(0, &counts);
        pipe.bind_storage_buffer(1, &out);
        let vb = vertices(ctx, verts)?;
        ctx.submit_once(|cmd| {
            target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
            pipe.draw(ctx, cmd, &push([1.0; 4], [0.0; 4], size), &[&vb], verts.len() as u32, 1);
            target.end(cmd);
        })
        .map_err(err)?;
        let color = target.color[0].read(ctx, vk::ImageAspectFlags::COLOR).map_err(err)?;
        Ok((counts.read::<u32>(), out.read::<[f32; 4]>(), color))
    };
    // Pixel (5, 3) alone: its centre (5.5, 3.5) is inside, no other centre is.
    let tri = [clip([5.2, 3.2], 0.5, size), clip([5.9, 3.3], 0.5, size), clip([5.3, 3.9], 0.5, size)];
    let (counts, out, color) = run(&tri)?;
    let covered = 5 + 3 * size[0] as usize;
    for i in 0..n {
        let want = (i == covered) as u32;
        if counts[i] != want || (color[4 * i] == 255) != (want == 1) {
            return Err(format!("pixel {i}: {} fragments counted, colour {:?}", counts[i], &color[4 * i..4 * i + 4]));
        }
        if i != covered && (out[2 * i] != [0.0; 4] || out[2 * i + 1] != [0.0; 4]) {
            return Err(format!("a helper invocation stored at pixel {i}: {:?}", &out[2 * i..2 * i + 2]));
        }
    }
    // Quad (4..5, 2..3): d(x^2)/dx = 5.5^2 - 4.5^2 = 10, d(y^2)/dy = 3.5^2 - 2.5^2 = 6.
    let a = out[2 * covered];
    if a[0] != 10.0 || a[1] != 6.0 || a[3] != 0.0 {
        return Err(format!("covered pixel: fine derivatives {:?} (want 10, 6; not a helper)", a));
    }

    let full = rect_tris([0.0, 0.0, 16.0, 8.0], 0.5, size);
    let (_, out, _) = run(&full)?;
    for i in 0..n {
        let (x, y) = ((i % 16) as f32, (i / 16) as f32);
        let (x0, y0) = (x - x % 2.0, y - y % 2.0);
        let [fx, fy, cx, _] = out[2 * i];
        let [vx, vy, cy, _] = out[2 * i + 1];
        let coarse_x_ok = cx == y0 + 0.5 || cx == y0 + 1.5;
        let coarse_y_ok = cy == x0 + 0.5 || cy == x0 + 1.5;
        if fx != 2.0 * x0 + 2.0 || fy != 2.0 * y0 + 2.0 || !coarse_x_ok || !coarse_y_ok {
            return Err(format!("pixel ({x}, {y}): fine {fx} {fy}, coarse {cx} {cy}"));
        }
        if (vx - 0.75).abs() > 1e-3 || (vy - 0.25).abs() > 1e-3 {
            return Err(format!("pixel ({x}, {y}): derivatives of 0.75 x + 0.25 y are {vx}, {vy}"));
        }
    }
    Ok(())
}

/// `vkCmdDrawIndirect` and `vkCmdDrawIndexedIndirect` (two instances, offset by the vertex
/// shader): each covers its rectangles exactly once.
fn indirect_draws(ctx: &Context) -> Check {
    let size = [16u32, 8];
    let target = Target::new(ctx, size, &[RGBA8], None).map_err(err)?;
    let desc = COUNTING;
    let pipe = GraphicsPipeline::new(ctx, &target, &desc).map_err(err)?;
    let counts = Buffer::new(ctx, 16 * 8 * 4, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    pipe.bind_storage_buffer(0, &counts);
    // Vertices 0..6: rectangle (0,0)-(4,4); 6..12: (4,0)-(8,2); then a quad (corners
    // 12..16) at (0,4)-(4,8) drawn indexed, twice, the second instance 8 pixels right.
    let mut v = rect_tris([0.0, 0.0, 4.0, 4.0], 0.5, size);
    v.extend(rect_tris([4.0, 0.0, 8.0, 2.0], 0.5, size));
    v.extend([[0.0, 4.0], [4.0, 4.0], [0.0, 8.0], [4.0, 8.0]].map(|p| clip(p, 0.5, size)));
    let vb = vertices(ctx, &v)?;
    let ib = Buffer::with_data(ctx, &[0u32, 1, 2, 2, 1, 3], vk::BufferUsageFlags::INDEX_BUFFER).map_err(err)?;
    let usage = vk::BufferUsageFlags::INDIRECT_BUFFER;
    // VkDrawIndirectCommand x2 (the second at offset 16), VkDrawIndexedIndirectCommand.
    let args = Buffer::with_data(ctx, &[6u32, 1, 0, 0, 6, 1, 6, 0], usage).map_err(err)?;
    let indexed = Buffer::with_data(ctx, &[6u32, 2, 0, 12, 0], usage).map_err(err)?;
    let d = ctx.device();
    let offset = [16.0 / size[0] as f32, 0.0, 0.0, 0.0];
    ctx.submit_once(|cmd| {
        target.begin(cmd, vk::ClearColorValue::default(), 1.0, 0);
        pipe.bind(ctx, cmd, &push([1.0; 4], offset, size), &[&vb]);
        // SAFETY: recording inside the render pass; the buffers outlive the submission.
        unsafe {
            d.cmd_draw_indirect(cmd, args.handle(), 0, 1, 16);
            d.cmd_draw_indirect(cmd, args.handle(), 16, 1, 16);
            d.cmd_bind_index_buffer(cmd, ib.handle(), 0, vk::IndexType::UINT32);
            d.cmd_draw_indexed_indirect(cmd, indexed.handle(), 0, 1, 20);
        }
        target.end(cmd);
    })
    .map_err(err)?;
    let counts = counts.read::<u32>();
    for (i, &c) in counts.iter().enumerate() {
        let (x, y) = (i % 16, i / 16);
        let want = (x < 4 && y < 4) || ((4..8).contains(&x) && y < 2) || (x % 8 < 4 && x < 12 && y >= 4);
        if c != want as u32 {
            return Err(format!("pixel ({x}, {y}): {c} fragments (want {})", want as u32));
        }
    }
    Ok(())
}

fn main() {
    let icd = checks::icd_from_args("raster_check");
    let ctx = Context::with_optional_features(&icd).unwrap_or_else(|e| {
        eprintln!("raster_check: {e}");
        std::process::exit(2);
    });
    let (_, flags) = ctx.queue_family();
    if !flags.contains(vk::QueueFlags::GRAPHICS) {
        eprintln!("raster_check: {} has no graphics queue", ctx.info().name);
        std::process::exit(2);
    }
    for f in ["fragmentStoresAndAtomics", "vertexPipelineStoresAndAtomics"] {
        if !ctx.info().enabled.contains(&f) {
            eprintln!("raster_check: {} lacks {f}", ctx.info().name);
            std::process::exit(2);
        }
    }
    println!("device: {}", ctx.info().name);
    let list: &[checks::Check<'_, Option<String>>] = &[
        ("fan_covers_every_pixel_once", &|c| fan_covers_once(c).map(|_| None)),
        ("grid_shared_edges_subpixel", &|c| grid_shared_edges(c).map(|_| None)),
        ("near_far_clipping", &|c| near_far_clipping(c).map(|_| None)),
        ("perspective_near_clipping", &|c| perspective_near_clipping(c).map(Some)),
        ("depth_test", &|c| depth_test(c).map(|_| None)),
        ("stencil_test", &|c| stencil_test(c).map(|_| None)),
        ("blend_factors_and_ops", &|c| blend::every_factor_and_op(c).map(Some)),
        ("vertex_formats", &|c| formats::every_vertex_format(c).map(Some)),
        ("texture_filtering_and_mips", &|c| sampling::filtering_and_mips(c).map(|_| None)),
        ("derivatives_and_helpers", &|c| derivatives_and_helpers(c).map(|_| None)),
        ("indirect_draws", &|c| indirect_draws(c).map(|_| None)),
    ];
    checks::run_checks_and_exit(&ctx, "raster", list, || 0);
}
