//! Graphics commands on the runtime: render pass load-op clears (first use, render area,
//! layers), `vkCmdClearAttachments`, dynamic rendering, a draw's stream and state record, the
//! command processor's indirect counts, draws in secondary buffers, blits.

use std::sync::Arc;
use vortex_model::abi::csr;
use vortex_model::abi::gfx::{csr as gcsr, dcr, export, state as rec, vout};
use vortex_model::abi::isa::{Instr, MemSize, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, kargs, KernelHeader};
use vortex_model::abi::{rd_u32, rd_u64};
use vortex_model::device::Device as Model;
use vortex_runtime::blit::BlitRegion;
use vortex_runtime::buffer::Buffer;
use vortex_runtime::cmd::graphics::{
    ClearAttachment, ClearRect, ClearValue, DrawIndirect, RenderingAttachment, RenderingInfo, VertexBuffer,
};
use vortex_runtime::cmd::CommandBuffer;
use vortex_runtime::device::{Device, Gpu};
use vortex_runtime::image::{Image, ImageView, ViewRange};
use vortex_runtime::memory::Memory;
use vortex_runtime::pipeline::graphics::{
    BlendAttachment, FixedState, GraphicsPipeline, Rect, Targets, VertexBinding, Viewport,
};
use vortex_runtime::pipeline::{BindPoint, Kind, Pipeline, PipelineLayout};
use vortex_runtime::queue::Submission;
use vortex_runtime::renderpass::{AttachmentDesc, Framebuffer, RenderPass, SubpassDesc};
use vortex_runtime::stream::{DrawSource, Recording, Scratch, StreamOp};
use vortex_runtime::vk;

fn device() -> Arc<Device> {
    Device::new(&Gpu::from_env().unwrap()).unwrap()
}

/// A 2D image with memory bound (zeroed), and a view of all its layers.
fn image(d: &Device, format: vk::Format, [w, h]: [u32; 2], layers: u32) -> (Arc<Image>, Arc<ImageView>) {
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
    let img = Arc::new(Image::new(vk::ImageType::TYPE_2D, format, [w, h, 1], 1, layers, usage).unwrap());
    img.bind(Arc::new(Memory::allocate(&d.space, img.size).unwrap()), 0).unwrap();
    let range = ViewRange {
        aspect: vk::ImageAspectFlags::COLOR,
        base_level: 0,
        level_count: 1,
        base_layer: 0,
        layer_count: layers,
    };
    let ty = if layers > 1 { vk::ImageViewType::TYPE_2D_ARRAY } else { vk::ImageViewType::TYPE_2D };
    let view = Arc::new(ImageView::new(img.clone(), ty, format, range).unwrap());
    (img, view)
}

fn bytes(d: &Device, img: &Image) -> Vec<u8> {
    let mut out = vec![0; img.size as usize];
    d.space.snapshot().read(img.address().unwrap(), &mut out).unwrap();
    out
}

fn submit(d: &Device, rec: Arc<Recording>) {
    d.queue.submit(Submission { waits: vec![], recordings: vec![rec], signals: vec![], fence: None }).unwrap();
    d.wait_idle().unwrap();
}

fn finish(cb: &CommandBuffer) -> Arc<Recording> {
    cb.end().unwrap();
    cb.recording().unwrap()
}

fn attachment(format: vk::Format, load: vk::AttachmentLoadOp) -> AttachmentDesc {
    AttachmentDesc {
        format,
        samples: vk::SampleCountFlags::TYPE_1,
        load_op: load,
        store_op: vk::AttachmentStoreOp::STORE,
        stencil_load_op: vk::AttachmentLoadOp::DONT_CARE,
        stencil_store_op: vk::AttachmentStoreOp::DONT_CARE,
    }
}

fn patterns(rec: &Recording) -> usize {
    rec.ops.iter().filter(|o| matches!(o, StreamOp::Pattern { .. })).count()
}

/// Whether texel (x, y) of `layer` of a `w` x `h` image of `tb`-byte texels is `want`.
fn texel(data: &[u8], [w, h]: [u32; 2], tb: usize, layer: u32, x: u32, y: u32) -> &[u8] {
    let at = ((layer * h + y) * w + x) as usize * tb;
    &data[at..at + tb]
}

#[test]
fn a_clear_load_happens_in_the_first_subpass_using_the_attachment_over_the_render_area() {
    let d = device();
    let (color, cv) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 6], 2);
    let (kept, kv) = image(&d, vk::Format::R32_UINT, [8, 6], 2);
    let pass = Arc::new(
        RenderPass::new(
            vec![
                attachment(vk::Format::R8G8B8A8_UNORM, vk::AttachmentLoadOp::CLEAR),
                attachment(vk::Format::R32_UINT, vk::AttachmentLoadOp::LOAD),
            ],
            vec![
                SubpassDesc { colors: vec![1], ..Default::default() },
                SubpassDesc { colors: vec![0], inputs: vec![1], ..Default::default() },
            ],
        )
        .unwrap(),
    );
    let fb = Arc::new(Framebuffer::new(&pass, 8, 6, 2, 2, Some(vec![cv, kv])).unwrap());
    let marker = buffer(&d, &[0; 16]);
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    let area = Rect { x: 2, y: 1, width: 4, height: 3 };
    let red = ClearValue([1.0f32.to_bits(), 0, 0.5f32.to_bits(), 1.0f32.to_bits()]);
    cb.begin_render_pass(pass, fb, None, area, vec![red, ClearValue([7; 4])]);
    // A marker between the subpasses: the clear comes after it.
    cb.update_buffer(&marker, 0, &[1, 2, 3, 4]);
    cb.next_subpass();
    cb.end_render_pass();
    let rec = finish(&cb);
    assert_eq!(patterns(&rec), 2 * 3, "one pattern per row of the area, per layer");
    let mark = rec.ops.iter().position(|o| matches!(o, StreamOp::Write { .. })).unwrap();
    assert!(rec.ops[..mark].iter().all(|o| !matches!(o, StreamOp::Pattern { .. })), "subpass 0 does not use it");
    submit(&d, rec);
    let c = bytes(&d, &color);
    for layer in 0..2 {
        for y in 0..6 {
            for x in 0..8 {
                let inside = (2..6).contains(&x) && (1..4).contains(&y);
                let want: &[u8] = if inside { &[255, 0, 128, 255] } else { &[0; 4] };
                assert_eq!(texel(&c, [8, 6], 4, layer, x, y), want, "layer {layer} ({x}, {y})");
            }
        }
    }
    assert!(bytes(&d, &kept).iter().all(|&b| b == 0), "a LOAD attachment is left alone");
}

#[test]
fn clear_attachments_and_dynamic_rendering_clear_rectangles_of_layers() {
    let d = device();
    let (img, view) = image(&d, vk::Format::R32_UINT, [4, 4], 3);
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    let full = Rect { x: 0, y: 0, width: 4, height: 4 };
    let color = |view: Option<Arc<ImageView>>, load, v: u32| RenderingAttachment {
        view,
        load_op: load,
        clear: ClearValue([v; 4]),
        resolve: None,
    };
    let info = |load, resuming| RenderingInfo {
        area: full,
        layers: 3,
        view_mask: 0,
        colors: vec![color(None, vk::AttachmentLoadOp::CLEAR, 9), color(Some(view.clone()), load, 5)],
        depth: None,
        stencil: None,
        resuming,
    };
    cb.begin_rendering(info(vk::AttachmentLoadOp::CLEAR, false));
    // Location 1, the last two layers, two rectangles; location 0 has no view: skipped.
    let value = ClearValue([0xAB; 4]);
    let attachments = [
        ClearAttachment { aspect: vk::ImageAspectFlags::COLOR, color_attachment: 1, value },
        ClearAttachment { aspect: vk::ImageAspectFlags::COLOR, color_attachment: 0, value },
    ];
    let rects = [
        ClearRect { rect: Rect { x: 1, y: 1, width: 2, height: 1 }, base_layer: 1, layer_count: 2 },
        ClearRect { rect: Rect { x: 0, y: 3, width: 4, height: 1 }, base_layer: 2, layer_count: 1 },
    ];
    cb.clear_attachments(&attachments, &rects);
    cb.end_rendering();
    // A resumed instance loads nothing.
    cb.begin_rendering(info(vk::AttachmentLoadOp::CLEAR, true));
    cb.end_rendering();
    submit(&d, finish(&cb));
    let data = bytes(&d, &img);
    let at = |layer, x, y| u32::from_le_bytes(texel(&data, [4, 4], 4, layer, x, y).try_into().unwrap());
    for layer in 0..3 {
        for y in 0..4 {
            for x in 0..4 {
                let first = layer >= 1 && y == 1 && (1..3).contains(&x);
                let second = layer == 2 && y == 3;
                let want = if first || second { 0xAB } else { 5 };
                assert_eq!(at(layer, x, y), want, "layer {layer} ({x}, {y})");
            }
        }
    }
    // Outside an instance it is an error.
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.clear_attachments(&attachments, &rects);
    assert!(cb.end().is_err());
}

/// A `w` x 1 image of `samples` with memory bound holding `data`, and its view.
fn samples_image(d: &Device, format: vk::Format, w: u32, samples: u32, data: &[u8]) -> Arc<ImageView> {
    let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    let img = Image::new(vk::ImageType::TYPE_2D, format, [w, 1, 1], 1, 1, usage).unwrap();
    let img = Arc::new(img.with_samples(samples).unwrap());
    img.bind(Arc::new(Memory::allocate(&d.space, img.size).unwrap()), 0).unwrap();
    d.space.snapshot().write(img.address().unwrap(), data).unwrap();
    let aspect = vortex_runtime::image::aspects(format);
    let range = ViewRange { aspect, base_level: 0, level_count: 1, base_layer: 0, layer_count: 1 };
    Arc::new(ImageView::new(img, vk::ImageViewType::TYPE_2D, format, range).unwrap())
}

/// `vkCmdEndRendering` resolves each attachment with a resolve view by its mode: colour
/// averaged, depth by its minimum (samples laid out per pixel, `abi::gfx::samples`).
#[test]
fn dynamic_rendering_resolves_multisampled_attachments() {
    let d = device();
    // Pixel 0's samples: red 0, 100, 200, 100 (average 100); pixel 1's: all 40.
    let mut color = Vec::new();
    for r in [0u8, 100, 200, 100, 40, 40, 40, 40] {
        color.extend_from_slice(&[r, 7, 0, 255]);
    }
    let z: Vec<u8> = [0.5f32, 0.25, 0.75, 1.0, 0.125, 0.5, 0.5, 0.5].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (rgba, d32) = (vk::Format::R8G8B8A8_UNORM, vk::Format::D32_SFLOAT);
    let (ms, one) = (samples_image(&d, rgba, 2, 4, &color), samples_image(&d, rgba, 2, 1, &[0; 8]));
    let (zms, zone) = (samples_image(&d, d32, 2, 4, &z), samples_image(&d, d32, 2, 1, &[0; 8]));
    let load = |view: &Arc<ImageView>, resolve: &Arc<ImageView>, mode| RenderingAttachment {
        view: Some(view.clone()),
        load_op: vk::AttachmentLoadOp::LOAD,
        clear: ClearValue::default(),
        resolve: Some((resolve.clone(), mode)),
    };
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.begin_rendering(RenderingInfo {
        area: Rect { x: 0, y: 0, width: 2, height: 1 },
        layers: 1,
        view_mask: 0,
        colors: vec![load(&ms, &one, vk::ResolveModeFlags::AVERAGE)],
        depth: Some(load(&zms, &zone, vk::ResolveModeFlags::MIN)),
        stencil: None,
        resuming: false,
    });
    cb.end_rendering();
    let rec = finish(&cb);
    assert_eq!(rec.ops.iter().filter(|op| matches!(op, StreamOp::Resolve(_))).count(), 2);
    submit(&d, rec);
    assert_eq!(bytes(&d, &one.image), [100, 7, 0, 255, 40, 7, 0, 255]);
    let zs: Vec<f32> = bytes(&d, &zone.image).chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(zs, [0.25, 0.125]);
}

fn r(op: Op, m: u8, d: u16, a: u16, b: u16, imm: u32) -> Instr {
    Instr::r(op, m, d, a, b, N, N, imm)
}

/// The test's vertex kernel: the position of vertex `vtx_index` from vertex binding 0, found
/// through the draw state record's `VB` table (address and stride), written to the lane's
/// vertex-output slot (`vob + vtx_slot * VOUT_STRIDE`, the stride also from the record).
fn vertex_kernel() -> Vec<Instr> {
    let vb = (rec::VB + rec::vb::ADDR) as u32;
    vec![
        r(Op::Csr, 0, 0, N, N, gcsr::STATE_LO),
        r(Op::Csr, 0, 1, N, N, gcsr::STATE_HI),
        r(Op::Ldg, MemSize::B64 as u8, 2, 0, N, vb),
        r(Op::Ldg, MemSize::B32 as u8, 4, 0, N, (rec::VB + rec::vb::STRIDE) as u32),
        r(Op::Csr, 0, 5, N, N, gcsr::VTX_INDEX),
        r(Op::Imul, 0, 6, 5, 4, 0),
        r(Op::Movi, 0, 7, N, N, 0),
        r(Op::Iadd64, 0, 8, 2, 6, 0),
        r(Op::Ldg, MemSize::B128 as u8, 10, 8, N, 0),
        r(Op::Ldg, MemSize::B32 as u8, 15, 0, N, rec::VOUT_STRIDE as u32),
        r(Op::Csr, 0, 14, N, N, gcsr::VTX_SLOT),
        r(Op::Imul, 0, 16, 14, 15, 0),
        r(Op::Movi, 0, 17, N, N, 0),
        r(Op::Csr, 0, 18, N, N, gcsr::VOB_LO),
        r(Op::Csr, 0, 19, N, N, gcsr::VOB_HI),
        r(Op::Iadd64, 0, 18, 18, 16, 0),
        r(Op::Stg, MemSize::B128 as u8, N, 18, 10, vout::POSITION as u32),
        r(Op::Exit, 0, N, N, N, 0),
    ]
}

/// The test's fragment kernel: exports the push constants' first four words as colour 0.
fn fragment_kernel() -> Vec<Instr> {
    vec![
        r(Op::Csr, 0, 0, N, N, csr::PARAM_LO),
        r(Op::Csr, 0, 1, N, N, csr::PARAM_HI),
        r(Op::Ldg, MemSize::B128 as u8, 4, 0, N, kargs::PUSH as u32),
        r(Op::Exp, export::COLOR0, N, 4, N, export::DONE),
        r(Op::Exit, 0, N, N, N, 0),
    ]
}

fn kernel(d: &Device, code: &[Instr], name: &str) -> Memory {
    let image = build_image(KernelHeader { kernel_id: d.kernel_id(), ..KernelHeader::new(32, [1, 1, 1]) }, code, name);
    let m = Memory::allocate(&d.space, image.len() as u64).unwrap();
    d.space.snapshot().write(m.address(0), &image).unwrap();
    m
}

/// A graphics pipeline of the test's kernels (the compiler does not build vertex and
/// fragment stages yet): positions only, no varyings.
fn pipeline(d: &Device, fixed: FixedState) -> Arc<Pipeline> {
    let g = GraphicsPipeline {
        fixed,
        targets: Targets { colors: vec![vk::Format::R8G8B8A8_UNORM], ..Default::default() },
        vertex: kernel(d, &vertex_kernel(), "vs"),
        fragment: Some(kernel(d, &fragment_kernel(), "fs")),
        vout_stride: vout::stride(0) as u32,
        clip_distances: 0,
        fs_flags: 0,
    };
    Arc::new(Pipeline {
        layout: Arc::new(PipelineLayout::new(vec![], 16).unwrap()),
        name: "draw".into(),
        kind: Kind::Graphics(Box::new(g)),
    })
}

fn fixed() -> FixedState {
    FixedState {
        bindings: vec![VertexBinding { binding: 0, stride: 16, input_rate: vk::VertexInputRate::VERTEX, divisor: 1 }],
        viewports: vec![Viewport { x: 0.0, y: 0.0, width: 8.0, height: 8.0, min_depth: 0.0, max_depth: 1.0 }],
        scissors: vec![Rect { x: 0, y: 0, width: 8, height: 8 }],
        blend: vec![BlendAttachment::default()],
        ..Default::default()
    }
}

fn dcrs(ops: &[StreamOp]) -> impl Fn(u32) -> u32 + '_ {
    move |a| {
        ops.iter()
            .rev()
            .find_map(|o| match o {
                StreamOp::Dcr { addr, value } if *addr == a => Some(*value),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{} is not written", vortex_model::abi::dcr::name(a)))
    }
}

fn buffer(d: &Device, data: &[u8]) -> Arc<Buffer> {
    let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::INDEX_BUFFER;
    let b = Arc::new(Buffer::new(data.len().max(256) as u64, usage));
    b.bind(Arc::new(Memory::allocate(&d.space, b.size).unwrap()), 0).unwrap();
    d.space.snapshot().write(b.address(), data).unwrap();
    b
}

/// Positions (x, y, z, 1) of two triangles covering x in [x0, x1) of the 8x8 target, in NDC.
fn quad(x0: f32, x1: f32, z: f32) -> Vec<u8> {
    let n = |x: f32| x / 4.0 - 1.0;
    let v = [(n(x0), -1.0), (n(x1), -1.0), (n(x0), 1.0), (n(x1), -1.0), (n(x1), 1.0), (n(x0), 1.0)];
    v.iter().flat_map(|&(x, y)| [x, y, z, 1.0]).flat_map(f32::to_le_bytes).collect()
}

fn rendering(view: Arc<ImageView>, depth: Option<Arc<ImageView>>) -> RenderingInfo {
    let attach = |v, load| RenderingAttachment {
        view: Some(v),
        load_op: load,
        clear: ClearValue([0.5f32.to_bits(), 0, 0, 0]),
        resolve: None,
    };
    RenderingInfo {
        area: Rect { x: 0, y: 0, width: 8, height: 8 },
        layers: 1,
        view_mask: 0,
        colors: vec![attach(view, vk::AttachmentLoadOp::LOAD)],
        depth: depth.map(|v| attach(v, vk::AttachmentLoadOp::CLEAR)),
        stencil: None,
        resuming: false,
    }
}

/// The red channel of each pixel of an 8x8 RGBA8 image, row by row.
fn reds(d: &Device, img: &Image) -> Vec<u8> {
    bytes(d, img).chunks(4).map(|t| t[0]).collect()
}

#[test]
fn a_draw_is_its_dcr_writes_then_the_pulse_and_renders_its_state_record() {
    let d = device();
    let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 1);
    let p = pipeline(&d, fixed());
    // Binding 0 starts 32 bytes into the buffer: the draw's first vertex is 5 vertices in.
    let mut data = vec![0u8; 32 + 5 * 16];
    data.extend(quad(0.0, 4.0, 0.5));
    let vb = buffer(&d, &data);
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Graphics, p.clone());
    cb.push_constants(0, &[1.0f32, 0.0, 0.0, 1.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>());
    cb.begin_rendering(rendering(view, None));
    cb.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb.clone(), offset: 32, size: None, stride: None }]);
    cb.draw(6, 1, 5, 0);
    cb.draw(0, 2, 0, 0);
    cb.end_rendering();
    let rec = finish(&cb);
    let draws: Vec<_> = rec.ops.iter().filter(|o| matches!(o, StreamOp::Draw(_))).collect();
    assert_eq!(draws.len(), 1, "an empty draw records nothing");
    assert!(
        matches!(rec.ops.last(), Some(StreamOp::Draw(j)) if matches!(j.source, DrawSource::Direct { vertices: 6, instances: 1 }) && j.vout_stride == 64)
    );
    let get = dcrs(&rec.ops);
    let g = p.as_graphics().unwrap();
    assert_eq!(get(dcr::GFX_VS_PC_LO) as u64 | (get(dcr::GFX_VS_PC_HI) as u64) << 32, g.vertex_address());
    assert_eq!(get(dcr::GFX_FS_PC_LO) as u64 | (get(dcr::GFX_FS_PC_HI) as u64) << 32, g.fragment_address());
    let counts = [dcr::GFX_VERTEX_COUNT, dcr::GFX_INSTANCE_COUNT, dcr::GFX_VERTEX_BASE, dcr::GFX_FIRST_INSTANCE];
    assert_eq!(counts.map(&get), [6, 1, 5, 0]);
    assert_eq!([get(dcr::GFX_INDEX_TYPE), get(dcr::GFX_INDEX_LO), get(dcr::GFX_DRAW_INDEX)], [0, 0, 0]);
    // The state record in the recording's memory names the view and the vertex buffer.
    let state = get(dcr::GFX_STATE_LO) as u64 | (get(dcr::GFX_STATE_HI) as u64) << 32;
    let mut sr = vec![0; rec::BYTES];
    d.space.snapshot().read(state, &mut sr).unwrap();
    assert_eq!(rd_u64(&sr, rec::COLOR + rec::attachment::ADDR), img.address().unwrap());
    assert_eq!(rd_u32(&sr, rec::COLOR + rec::attachment::ROW_PITCH), 32);
    assert_eq!(rd_u64(&sr, rec::VB + rec::vb::ADDR), vb.address() + 32);
    assert_eq!(rd_u64(&sr, rec::VB + rec::vb::SIZE), vb.size - 32);
    assert_eq!([rd_u32(&sr, rec::TARGET_WIDTH), rd_u32(&sr, rec::VOUT_STRIDE)], [8, 64]);
    drop(get);
    // Played: the left half is red, the right half untouched.
    submit(&d, rec);
    let want: Vec<u8> = (0..64).map(|i| if i % 8 < 4 { 255 } else { 0 }).collect();
    assert_eq!(reds(&d, &img), want);
}

#[test]
fn depth_tests_use_the_render_pass_depth_attachment() {
    let d = device();
    let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 1);
    let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    let zimg = Arc::new(Image::new(vk::ImageType::TYPE_2D, vk::Format::D32_SFLOAT, [8, 8, 1], 1, 1, usage).unwrap());
    zimg.bind(Arc::new(Memory::allocate(&d.space, zimg.size).unwrap()), 0).unwrap();
    let range =
        ViewRange { aspect: vk::ImageAspectFlags::DEPTH, base_level: 0, level_count: 1, base_layer: 0, layer_count: 1 };
    let zview =
        Arc::new(ImageView::new(zimg.clone(), vk::ImageViewType::TYPE_2D, vk::Format::D32_SFLOAT, range).unwrap());
    let f = FixedState { depth_test: true, depth_write: true, depth_compare: vk::CompareOp::LESS, ..fixed() };
    let p = pipeline(&d, f);
    // x in [0, 6) at z 0.25 (nearer than the cleared 0.5: drawn, depth written); x in [2, 8)
    // at z 0.75 (farther: rejected everywhere).
    let mut data = quad(0.0, 6.0, 0.25);
    data.extend(quad(2.0, 8.0, 0.75));
    let vb = buffer(&d, &data);
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Graphics, p);
    cb.begin_rendering(rendering(view, Some(zview)));
    cb.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb, offset: 0, size: None, stride: None }]);
    let color = |c: [f32; 4]| c.iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>();
    cb.push_constants(0, &color([1.0, 0.0, 0.0, 1.0]));
    cb.draw(6, 1, 0, 0);
    cb.push_constants(0, &color([0.5, 0.0, 0.0, 1.0]));
    cb.draw(6, 1, 6, 0);
    cb.end_rendering();
    submit(&d, finish(&cb));
    let want: Vec<u8> = (0..64).map(|i| if i % 8 < 6 { 255 } else { 0 }).collect();
    assert_eq!(reds(&d, &img), want);
    let z: Vec<f32> = bytes(&d, &zimg).chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    let want: Vec<f32> = (0..64).map(|i| if i % 8 < 6 { 0.25 } else { 0.5 }).collect();
    assert_eq!(z, want);
}

#[test]
fn indirect_draws_read_their_counts_when_played() {
    let d = device();
    let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 1);
    let p = pipeline(&d, fixed());
    let vb = buffer(&d, &quad(2.0, 5.0, 0.5));
    // Count 2 in word 0; two indexed commands of 5 words at 8 and 28: the first has no
    // instances (skipped), the second draws 6 indices from index 3, vertex offset -2, first
    // instance 4. Indices (from 16 bytes in) 9 9 9 then 2..8: vertices 0..6 after the
    // offset.
    let words: [u32; 12] = [2, 0, 9, 0, 0, 0, 0, 6, 1, 3, (-2i32) as u32, 4];
    let args = buffer(&d, &words.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<_>>());
    let mut idx = vec![0u8; 16];
    idx.extend([9u16, 9, 9, 2, 3, 4, 5, 6, 7].iter().flat_map(|i| i.to_le_bytes()));
    let index = buffer(&d, &idx);
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.bind_pipeline(BindPoint::Graphics, p);
    cb.push_constants(0, &[1.0f32, 0.0, 0.0, 1.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>());
    cb.begin_rendering(rendering(view, None));
    cb.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb, offset: 0, size: None, stride: None }]);
    cb.bind_index_buffer(vortex_runtime::cmd::graphics::IndexBuffer {
        buffer: index.clone(),
        offset: 16,
        index_type: 1,
    });
    let indirect =
        DrawIndirect { buffer: args.clone(), offset: 8, count: 5, stride: 20, count_buffer: Some((args.clone(), 0)) };
    cb.draw_indirect(true, indirect);
    cb.end_rendering();
    let rec = finish(&cb);
    assert!(
        rec.ops.iter().all(|o| !matches!(o, StreamOp::Dcr { addr: dcr::GFX_VERTEX_COUNT, .. })),
        "counts are the command processor's"
    );
    assert_eq!(dcrs(&rec.ops)(dcr::GFX_INDEX_TYPE), 1);
    // Played on a model: the first command is skipped, the second draws with its counts.
    let mut model = Model::with_memory(d.config.clone(), d.space.clone()).unwrap();
    let mut reports = Vec::new();
    let mut scratch = Scratch::default();
    vortex_runtime::stream::play(&mut model, &rec.ops, &mut reports, &mut scratch).unwrap();
    assert_eq!(reports.len(), 1, "one draw pulsed");
    let r = |a| model.dcrs().read(a);
    assert_eq!(
        [r(dcr::GFX_VERTEX_COUNT), r(dcr::GFX_INSTANCE_COUNT), r(dcr::GFX_VERTEX_BASE), r(dcr::GFX_FIRST_INSTANCE)],
        [6, 1, (-2i32) as u32, 4]
    );
    assert_eq!(r(dcr::GFX_DRAW_INDEX), 1);
    assert_eq!(r(dcr::GFX_INDEX_LO) as u64 | (r(dcr::GFX_INDEX_HI) as u64) << 32, index.address() + 16 + 3 * 2);
    let want: Vec<u8> = (0..64).map(|i| if (2..5).contains(&(i % 8)) { 255 } else { 0 }).collect();
    assert_eq!(reds(&d, &img), want);
    // A count of zero draws nothing.
    d.space.snapshot().write_u32(args.address(), 0).unwrap();
    vortex_runtime::stream::play(&mut model, &rec.ops, &mut reports, &mut scratch).unwrap();
    assert_eq!(reports.len(), 1);
}

#[test]
fn draws_in_a_secondary_buffer_take_the_executing_instance_s_attachments() {
    let d = device();
    let p = pipeline(&d, fixed());
    let sec = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::SECONDARY);
    sec.begin_secondary(Some(0));
    sec.bind_pipeline(BindPoint::Graphics, p);
    sec.draw(3, 1, 0, 0);
    let sec = finish(&sec);
    let mut states = Vec::new();
    for _ in 0..2 {
        let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 1);
        let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
        cb.begin();
        let attach = RenderingAttachment {
            view: Some(view),
            load_op: vk::AttachmentLoadOp::LOAD,
            clear: ClearValue::default(),
            resolve: None,
        };
        let area = Rect { x: 0, y: 0, width: 8, height: 8 };
        cb.begin_rendering(RenderingInfo {
            area,
            layers: 1,
            view_mask: 0,
            colors: vec![attach],
            depth: None,
            stencil: None,
            resuming: false,
        });
        cb.execute(sec.clone());
        cb.end_rendering();
        let rec = finish(&cb);
        let get = dcrs(&rec.ops);
        let state = get(dcr::GFX_STATE_LO) as u64 | (get(dcr::GFX_STATE_HI) as u64) << 32;
        let mut r = vec![0; rec::BYTES];
        d.space.snapshot().read(state, &mut r).unwrap();
        assert_eq!(rd_u64(&r, rec::COLOR + rec::attachment::ADDR), img.address().unwrap());
        states.push(state);
    }
    assert_ne!(states[0], states[1], "each executing primary has its own record");
    // Outside a render pass instance the secondary's draws cannot execute.
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.execute(sec);
    assert!(cb.end().is_err());
}

#[test]
fn blits_scale_filter_and_convert_when_played() {
    let d = device();
    let usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    let mk = |f, w, h| {
        let img = Arc::new(Image::new(vk::ImageType::TYPE_2D, f, [w, h, 1], 1, 1, usage).unwrap());
        img.bind(Arc::new(Memory::allocate(&d.space, img.size).unwrap()), 0).unwrap();
        img
    };
    let src = mk(vk::Format::R8G8B8A8_UNORM, 2, 1);
    let dst = mk(vk::Format::R32G32B32A32_SFLOAT, 4, 2);
    d.space.snapshot().write(src.address().unwrap(), &[0, 0, 0, 255, 255, 255, 255, 255]).unwrap();
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    let region = BlitRegion {
        src_level: 0,
        src_layer: 0,
        dst_level: 0,
        dst_layer: 0,
        layers: 1,
        src: [[0, 0, 0], [2, 1, 1]],
        dst: [[0, 0, 0], [4, 2, 1]],
    };
    cb.blit_image(&src, &dst, vec![region], true);
    submit(&d, finish(&cb));
    let out = bytes(&d, &dst);
    let red = |x: usize, y: usize| f32::from_le_bytes(out[(y * 4 + x) * 16..][..4].try_into().unwrap());
    for y in 0..2 {
        assert_eq!([red(0, y), red(1, y), red(2, y), red(3, y)], [0.0, 0.25, 0.75, 1.0]);
    }
    // Integer to float is refused at record time.
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    cb.blit_image(&mk(vk::Format::R32_UINT, 2, 2), &dst, vec![region], false);
    assert!(cb.end().is_err());
}

#[test]
fn depth_and_stencil_planes_clear_by_aspect() {
    let d = device();
    let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    let fmt = vk::Format::D32_SFLOAT_S8_UINT;
    let img = Arc::new(Image::new(vk::ImageType::TYPE_2D, fmt, [4, 4, 1], 1, 1, usage).unwrap());
    img.bind(Arc::new(Memory::allocate(&d.space, img.size).unwrap()), 0).unwrap();
    let range = ViewRange {
        aspect: vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL,
        base_level: 0,
        level_count: 1,
        base_layer: 0,
        layer_count: 1,
    };
    let view = Arc::new(ImageView::new(img.clone(), vk::ImageViewType::TYPE_2D, fmt, range).unwrap());
    let mut att = attachment(fmt, vk::AttachmentLoadOp::CLEAR);
    att.stencil_load_op = vk::AttachmentLoadOp::LOAD;
    let pass = Arc::new(
        RenderPass::new(vec![att], vec![SubpassDesc { depth_stencil: Some(0), ..Default::default() }]).unwrap(),
    );
    let fb = Arc::new(Framebuffer::new(&pass, 4, 4, 1, 1, Some(vec![view])).unwrap());
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    // The stencil plane first gets 0x33 everywhere (a transfer clear), then the pass clears
    // depth only (its stencil is loaded), then a clear of the stencil aspect in one corner.
    let all = vortex_runtime::cmd::SubresourceRange {
        aspect: vk::ImageAspectFlags::STENCIL,
        base_level: 0,
        level_count: 1,
        base_layer: 0,
        layer_count: 1,
    };
    cb.clear_depth_stencil_image(&img, [0, 0x33, 0, 0], &[all]);
    let value = ClearValue([0.25f32.to_bits(), 0x99, 0, 0]);
    cb.begin_render_pass(pass, fb, None, Rect { x: 0, y: 0, width: 4, height: 4 }, vec![value]);
    let corner = ClearAttachment {
        aspect: vk::ImageAspectFlags::STENCIL,
        color_attachment: 0,
        value: ClearValue([0, 0x44, 0, 0]),
    };
    cb.clear_attachments(
        &[corner],
        &[ClearRect { rect: Rect { x: 0, y: 0, width: 2, height: 2 }, base_layer: 0, layer_count: 1 }],
    );
    cb.end_render_pass();
    submit(&d, finish(&cb));
    let data = bytes(&d, &img);
    let depth: Vec<f32> = data[..64].chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(depth.iter().all(|&z| z == 0.25), "{depth:?}");
    let stencil = &data[64..80];
    for (i, &s) in stencil.iter().enumerate() {
        let (x, y) = (i % 4, i / 4);
        assert_eq!(s, if x < 2 && y < 2 { 0x44 } else { 0x33 }, "stencil ({x}, {y})");
    }
}

/// A render pass whose subpass has one RGBA8 colour attachment and one depth/stencil one.
fn color_depth_pass(ds: vk::Format) -> Arc<RenderPass> {
    let mut z = attachment(ds, vk::AttachmentLoadOp::CLEAR);
    z.stencil_load_op = vk::AttachmentLoadOp::CLEAR;
    let atts = vec![attachment(vk::Format::R8G8B8A8_UNORM, vk::AttachmentLoadOp::LOAD), z];
    Arc::new(
        RenderPass::new(atts, vec![SubpassDesc { colors: vec![0], depth_stencil: Some(1), ..Default::default() }])
            .unwrap(),
    )
}

#[test]
fn stencil_writes_blending_and_dynamic_state_reach_the_output_merger() {
    let d = device();
    let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 1);
    let fmt = vk::Format::D24_UNORM_S8_UINT;
    let usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT;
    let zimg = Arc::new(Image::new(vk::ImageType::TYPE_2D, fmt, [8, 8, 1], 1, 1, usage).unwrap());
    zimg.bind(Arc::new(Memory::allocate(&d.space, zimg.size).unwrap()), 0).unwrap();
    let all = vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL;
    let range = ViewRange { aspect: all, base_level: 0, level_count: 1, base_layer: 0, layer_count: 1 };
    let zview = Arc::new(ImageView::new(zimg.clone(), vk::ImageViewType::TYPE_2D, fmt, range).unwrap());
    let pass = color_depth_pass(fmt);
    let fb = Arc::new(Framebuffer::new(&pass, 8, 8, 1, 2, Some(vec![view, zview])).unwrap());
    // Stencil: always pass, replace with the (dynamic) reference, on both faces (the quad's
    // winding makes it back-facing with the default counter-clockwise front).
    let face = vortex_runtime::pipeline::graphics::StencilFace {
        fail_op: vk::StencilOp::KEEP,
        pass_op: vk::StencilOp::REPLACE,
        depth_fail_op: vk::StencilOp::KEEP,
        compare: vk::CompareOp::ALWAYS,
        compare_mask: 0xFF,
        write_mask: 0xFF,
        reference: 1,
    };
    // Blend: src * constant + dst * 1, constants dynamic.
    let blend = BlendAttachment {
        enable: true,
        src_color: vk::BlendFactor::CONSTANT_COLOR,
        dst_color: vk::BlendFactor::ONE,
        src_alpha: vk::BlendFactor::ONE,
        dst_alpha: vk::BlendFactor::ZERO,
        ..Default::default()
    };
    use vortex_runtime::pipeline::graphics::{Dyn, DynamicSet};
    let dynamic = DynamicSet::default().with(Dyn::StencilReference).with(Dyn::BlendConstants).with(Dyn::Scissor);
    let f = FixedState { stencil_test: true, stencil: [face; 2], blend: vec![blend], dynamic, ..fixed() };
    let p = pipeline(&d, f);
    let vb = buffer(&d, &quad(0.0, 8.0, 0.5));
    let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
    cb.begin();
    // The colour starts at (64, 0, 0, 255) everywhere; the draw adds red * 0.5.
    let start = ClearValue([(64.0f32 / 255.0).to_bits(), 0, 0, 1.0f32.to_bits()]);
    cb.clear_color_image(
        &img,
        start.0,
        &[vortex_runtime::cmd::SubresourceRange {
            aspect: vk::ImageAspectFlags::COLOR,
            base_level: 0,
            level_count: 1,
            base_layer: 0,
            layer_count: 1,
        }],
    );
    cb.bind_pipeline(BindPoint::Graphics, p);
    cb.push_constants(0, &[1.0f32, 0.0, 0.0, 1.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>());
    cb.begin_render_pass(
        pass,
        fb,
        None,
        Rect { x: 0, y: 0, width: 8, height: 8 },
        vec![ClearValue::default(), ClearValue([1.0f32.to_bits(), 0, 0, 0])],
    );
    cb.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb, offset: 0, size: None, stride: None }]);
    cb.set_dynamic("test", |v| {
        v.stencil_reference = [0x5A, 0xA5];
        v.blend_constants = [0.5, 0.0, 0.0, 0.0];
        v.scissors = vec![Rect { x: 0, y: 0, width: 8, height: 4 }];
    });
    cb.draw(6, 1, 0, 0);
    cb.end_render_pass();
    submit(&d, finish(&cb));
    let reds = reds(&d, &img);
    let stencil = &bytes(&d, &zimg)[256..320];
    let front = stencil[0];
    assert!(front == 0x5A || front == 0xA5, "stencil {front:#x}: the dynamic reference of a face");
    for i in 0..64 {
        let drawn = i / 8 < 4;
        assert_eq!(reds[i], if drawn { 64 + 128 } else { 64 }, "red at pixel {i}");
        assert_eq!(stencil[i], if drawn { front } else { 0 }, "stencil at pixel {i}");
    }
}

#[test]
fn a_secondary_buffer_draws_into_the_executing_primary_s_attachments() {
    let d = device();
    let p = pipeline(&d, fixed());
    let vb = buffer(&d, &quad(4.0, 8.0, 0.5));
    let sec = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::SECONDARY);
    sec.begin_secondary(Some(0));
    sec.bind_pipeline(BindPoint::Graphics, p);
    sec.push_constants(0, &[1.0f32, 0.0, 0.0, 1.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>());
    sec.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb, offset: 0, size: None, stride: None }]);
    sec.draw(6, 1, 0, 0);
    let sec = finish(&sec);
    for _ in 0..2 {
        let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 1);
        let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
        cb.begin();
        cb.begin_rendering(rendering(view, None));
        cb.execute(sec.clone());
        cb.end_rendering();
        submit(&d, finish(&cb));
        let want: Vec<u8> = (0..64).map(|i| if i % 8 >= 4 { 255 } else { 0 }).collect();
        assert_eq!(reds(&d, &img), want);
    }
}

/// A multiview draw (view mask 0b101 on a 3-layer attachment), recorded in the primary and
/// in a render-pass-continue secondary: the draw carries one state record per view, each
/// with its `VIEW_INDEX` and its layer of the attachment, the command processor replays it
/// per view, and the layer outside the mask is not touched.
#[test]
fn a_multiview_draw_is_replayed_per_view_into_the_view_s_layer() {
    let d = device();
    let p = pipeline(&d, fixed());
    let vb = buffer(&d, &quad(0.0, 4.0, 0.5));
    let red = [1.0f32, 0.0, 0.0, 1.0].iter().flat_map(|f| f.to_le_bytes()).collect::<Vec<_>>();
    let sec = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::SECONDARY);
    sec.begin_secondary(Some(0));
    sec.bind_pipeline(BindPoint::Graphics, p.clone());
    sec.push_constants(0, &red);
    sec.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb.clone(), offset: 0, size: None, stride: None }]);
    sec.draw(6, 1, 0, 0);
    let sec = finish(&sec);
    for secondary in [false, true] {
        let (img, view) = image(&d, vk::Format::R8G8B8A8_UNORM, [8, 8], 3);
        let cb = CommandBuffer::new(d.clone(), vk::CommandBufferLevel::PRIMARY);
        cb.begin();
        cb.begin_rendering(RenderingInfo { view_mask: 0b101, ..rendering(view, None) });
        if secondary {
            cb.execute(sec.clone());
        } else {
            cb.bind_pipeline(BindPoint::Graphics, p.clone());
            cb.push_constants(0, &red);
            cb.bind_vertex_buffers(0, vec![VertexBuffer { buffer: vb.clone(), offset: 0, size: None, stride: None }]);
            cb.draw(6, 1, 0, 0);
        }
        cb.end_rendering();
        let rec = finish(&cb);
        let Some(StreamOp::Draw(job)) = rec.ops.iter().find(|o| matches!(o, StreamOp::Draw(_))) else {
            panic!("no draw recorded")
        };
        assert_eq!(job.views.len(), 2, "one record per view of 0b101");
        let layer_bytes = img.size / 3;
        for (&state, view) in job.views.iter().zip([0u32, 2]) {
            let mut r = vec![0; rec::BYTES];
            d.space.snapshot().read(state, &mut r).unwrap();
            assert_eq!(rd_u32(&r, rec::VIEW_INDEX), view);
            let addr = img.address().unwrap() + view as u64 * layer_bytes;
            assert_eq!(rd_u64(&r, rec::COLOR + rec::attachment::ADDR), addr, "view {view}'s layer");
        }
        let mut reports = Vec::new();
        let mut model = Model::with_memory(d.config.clone(), d.space.clone()).unwrap();
        vortex_runtime::stream::play(&mut model, &rec.ops, &mut reports, &mut Scratch::default()).unwrap();
        assert_eq!(reports.iter().filter(|r| r.draw.is_some()).count(), 2, "a draw pulse per view");
        let data = bytes(&d, &img);
        for layer in 0..3 {
            for y in 0..8 {
                for x in 0..8 {
                    let want = if layer != 1 && x < 4 { 255 } else { 0 };
                    assert_eq!(texel(&data, [8, 8], 4, layer, x, y)[0], want, "layer {layer} ({x}, {y})");
                }
            }
        }
    }
}
