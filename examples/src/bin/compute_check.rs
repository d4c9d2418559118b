//! The compute path, end to end through the loader, every result checked on the host:
//!
//! - buffers: fill, update, copy;
//! - storage images, 1D/2D/3D x r32i/r32ui/r32f/rgba8/rgba32f: clears, buffer<->image copies,
//!   imageStore and imageLoad in a shader;
//! - a kernel with a specialization-constant workgroup size, shared memory and barriers,
//!   atomics, push constants, structs, divergent loops and functions with out parameters,
//!   run with a direct and with an indirect dispatch.
//!
//! It runs unchanged on any ICD; lavapipe passing it is what makes it a test of ours.
//! Usage: compute_check [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::{checks, memory_barrier, Buffer, ComputePipeline, Context, StorageImage};

const IMAGES: [&[u8]; 3] = [
    include_bytes!("../../shaders/images1d.spv"),
    include_bytes!("../../shaders/images2d.spv"),
    include_bytes!("../../shaders/images3d.spv"),
];
const BASICS: &[u8] = include_bytes!("../../shaders/basics.spv");

type Check = Result<(), String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn buffer_ops(ctx: &Context) -> Check {
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let a = Buffer::new(ctx, 1024, usage).map_err(err)?;
    let b = Buffer::new(ctx, 1024, usage).map_err(err)?;
    let update: Vec<u8> = (0..64u8).collect();
    ctx.submit_once(|cmd| {
        let d = ctx.device();
        // SAFETY: cmd is recording; the buffers belong to this device.
        unsafe {
            d.cmd_fill_buffer(cmd, a.handle(), 0, 1024, 0x5A5A_0001);
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
            d.cmd_update_buffer(cmd, a.handle(), 128, &update);
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
            d.cmd_copy_buffer(
                cmd,
                a.handle(),
                b.handle(),
                &[vk::BufferCopy { src_offset: 64, dst_offset: 8, size: 512 }],
            );
            memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
        }
    })
    .map_err(err)?;
    for (i, &byte) in b.read::<u8>().iter().enumerate() {
        let want = if (8..520).contains(&i) {
            let src = i - 8 + 64;
            if (128..192).contains(&src) {
                (src - 128) as u8
            } else {
                0x5A5A_0001u32.to_le_bytes()[src % 4]
            }
        } else {
            0
        };
        if byte != want {
            return Err(format!("byte {i}: got {byte:#x}, want {want:#x}"));
        }
    }
    Ok(())
}

/// The five formats the image shader writes, in binding order.
const FORMATS: [(vk::Format, u32); 5] = [
    (vk::Format::R32_SINT, 4),
    (vk::Format::R32_UINT, 4),
    (vk::Format::R32_SFLOAT, 4),
    (vk::Format::R8G8B8A8_UNORM, 4),
    (vk::Format::R32G32B32A32_SFLOAT, 16),
];

/// Expected texel bytes of format `f` at (x, y, z), linear index `i`.
fn expected_texel(f: usize, [x, y, z]: [u32; 3], i: u32) -> Vec<u8> {
    match f {
        0 => ((i as i32) * 3 - 7).to_le_bytes().to_vec(),
        1 => (i * 5 + 1).to_le_bytes().to_vec(),
        2 => (i as f32 * 0.25).to_le_bytes().to_vec(),
        3 => vec![((x % 4) * 85) as u8, ((y % 2) * 255) as u8, 128, 255],
        _ => [x as f32, y as f32, z as f32, -1.5].iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn near(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol
}

fn images(ctx: &Context, dim: usize) -> Check {
    let (ty, extent) = match dim {
        1 => (vk::ImageType::TYPE_1D, [13, 1, 1]),
        2 => (vk::ImageType::TYPE_2D, [9, 7, 1]),
        _ => (vk::ImageType::TYPE_3D, [5, 4, 3]),
    };
    let ext = vk::Extent3D { width: extent[0], height: extent[1], depth: extent[2] };
    let texels = extent.iter().product::<u32>();
    let mut imgs = Vec::new();
    let mut outs = Vec::new();
    for (f, bytes) in FORMATS {
        imgs.push(StorageImage::new(ctx, ty, f, ext).map_err(err)?);
        outs.push(Buffer::new(ctx, (texels * bytes) as u64, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?);
    }
    let readback = Buffer::new(ctx, texels as u64 * 5 * 16, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let mut bindings = vec![vk::DescriptorType::STORAGE_IMAGE; 5];
    bindings.push(vk::DescriptorType::STORAGE_BUFFER);
    let pipe = ComputePipeline::new(ctx, IMAGES[dim - 1], &bindings, 16).map_err(err)?;
    for (i, img) in imgs.iter().enumerate() {
        pipe.bind_storage_image(i as u32, img.view);
    }
    pipe.bind_storage_buffer(5, &readback);
    let push: Vec<u8> = [extent[0], extent[1], extent[2], 0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let groups = [extent[0].div_ceil(4), extent[1].div_ceil(4), extent[2]];
    ctx.submit_once(|cmd| {
        let d = ctx.device();
        for img in &imgs {
            img.record_clear(cmd, [0xFFFF_FFFF; 4]);
        }
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::COMPUTE_SHADER);
        pipe.record_dispatch(cmd, &push, groups);
        memory_barrier(d, cmd, vk::PipelineStageFlags::COMPUTE_SHADER, vk::PipelineStageFlags::TRANSFER);
        for (img, out) in imgs.iter().zip(&outs) {
            img.record_copy_to_buffer(cmd, out);
        }
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    })
    .map_err(err)?;
    let rb = readback.read::<f32>();
    for z in 0..extent[2] {
        for y in 0..extent[1] {
            for x in 0..extent[0] {
                let i = x + extent[0] * (y + extent[1] * z);
                for (f, (fmt, bytes)) in FORMATS.iter().enumerate() {
                    let got = &outs[f].read::<u8>()[(i * bytes) as usize..][..*bytes as usize];
                    let want = expected_texel(f, [x, y, z], i);
                    // Normalised formats may round half-way values either way.
                    let ok = if f == 3 { got.iter().zip(&want).all(|(g, w)| g.abs_diff(*w) <= 1) } else { got == want };
                    if !ok {
                        return Err(format!("{dim}D {fmt:?} texel ({x},{y},{z}): copied out {got:?}, want {want:?}"));
                    }
                    let loaded = &rb[(i as usize * 5 + f) * 4..][..4];
                    let expect: [f32; 4] = match f {
                        0 => [((i as i32) * 3 - 7) as f32, 0.0, 0.0, 1.0],
                        1 => [(i * 5 + 1) as f32, 0.0, 0.0, 1.0],
                        2 => [i as f32 * 0.25, 0.0, 0.0, 1.0],
                        3 => [want[0] as f32 / 255.0, want[1] as f32 / 255.0, 0.5, 1.0],
                        _ => [x as f32, y as f32, z as f32, -1.5],
                    };
                    let tol = if f == 3 { 1.0 / 255.0 } else { 0.0 };
                    if !loaded.iter().zip(expect).all(|(g, w)| near(*g, w, tol)) {
                        return Err(format!("{dim}D {fmt:?} imageLoad at ({x},{y},{z}): {loaded:?}, want {expect:?}"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A clear and a buffer -> image -> buffer round trip, no shader involved.
fn image_transfers(ctx: &Context) -> Check {
    let ext = vk::Extent3D { width: 6, height: 5, depth: 1 };
    let img = StorageImage::new(ctx, vk::ImageType::TYPE_2D, vk::Format::R8G8B8A8_UNORM, ext).map_err(err)?;
    let cleared = Buffer::new(ctx, 6 * 5 * 4, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let pattern: Vec<u8> = (0..120u8).map(|v| v.wrapping_mul(7)).collect();
    let src = Buffer::with_data(ctx, &pattern, vk::BufferUsageFlags::TRANSFER_SRC).map_err(err)?;
    let back = Buffer::new(ctx, 120, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let color = [0.25f32, 0.5, 0.75, 1.0].map(f32::to_bits);
    ctx.submit_once(|cmd| {
        let d = ctx.device();
        img.record_clear(cmd, color);
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
        img.record_copy_to_buffer(cmd, &cleared);
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
        img.record_copy_from_buffer(cmd, &src);
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::TRANSFER);
        img.record_copy_to_buffer(cmd, &back);
        memory_barrier(d, cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST);
    })
    .map_err(err)?;
    for (i, px) in cleared.read::<u8>().chunks_exact(4).enumerate() {
        let want = [64u8, 128, 191, 255];
        if !px.iter().zip(want).all(|(g, w)| g.abs_diff(w) <= 1) {
            return Err(format!("cleared texel {i}: {px:?}, want {want:?}"));
        }
    }
    if back.read::<u8>() != pattern {
        return Err("buffer -> image -> buffer round trip changed the data".into());
    }
    Ok(())
}

/// Three submissions ordered only by semaphores: a binary one between the first two, a
/// timeline the host signals to release the third, and a timeline the host waits on.
fn semaphores(ctx: &Context) -> Check {
    let d = ctx.device();
    let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let (a, b, c) = (
        Buffer::new(ctx, 256, usage).map_err(err)?,
        Buffer::new(ctx, 256, usage).map_err(err)?,
        Buffer::new(ctx, 256, usage).map_err(err)?,
    );
    let mut tl = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
    // SAFETY (this function): valid device; every object is destroyed after the final wait.
    unsafe {
        let binary = d.create_semaphore(&vk::SemaphoreCreateInfo::default(), None).map_err(err)?;
        let done = d.create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut tl), None).map_err(err)?;
        let mut tl2 = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
        let gate = d.create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut tl2), None).map_err(err)?;
        let pool =
            d.create_command_pool(&vk::CommandPoolCreateInfo::default().queue_family_index(0), None).map_err(err)?;
        let alloc = vk::CommandBufferAllocateInfo::default().command_pool(pool).command_buffer_count(3);
        let cmds = d.allocate_command_buffers(&alloc).map_err(err)?;
        let begin = vk::CommandBufferBeginInfo::default();
        for (i, &cmd) in cmds.iter().enumerate() {
            d.begin_command_buffer(cmd, &begin).map_err(err)?;
            match i {
                0 => d.cmd_fill_buffer(cmd, a.handle(), 0, 256, 0x1234_5678),
                1 => d.cmd_copy_buffer(
                    cmd,
                    a.handle(),
                    b.handle(),
                    &[vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 256 }],
                ),
                _ => d.cmd_copy_buffer(
                    cmd,
                    b.handle(),
                    c.handle(),
                    &[vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 256 }],
                ),
            }
            memory_barrier(
                d,
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::HOST,
            );
            d.end_command_buffer(cmd).map_err(err)?;
        }
        let stage = [vk::PipelineStageFlags::TRANSFER];
        let first = [cmds[0]];
        let second = [cmds[1]];
        let third = [cmds[2]];
        let sig_binary = [binary];
        let s0 = vk::SubmitInfo::default().command_buffers(&first).signal_semaphores(&sig_binary);
        let s1 =
            vk::SubmitInfo::default().command_buffers(&second).wait_semaphores(&sig_binary).wait_dst_stage_mask(&stage);
        d.queue_submit(ctx.queue(), &[s0, s1], vk::Fence::null()).map_err(err)?;
        // The third waits for the host to open the gate, then signals `done` = 5.
        let gate_sems = [gate];
        let gate_vals = [1u64];
        let done_sems = [done];
        let done_vals = [5u64];
        let mut values = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&gate_vals)
            .signal_semaphore_values(&done_vals);
        let s2 = vk::SubmitInfo::default()
            .command_buffers(&third)
            .wait_semaphores(&gate_sems)
            .wait_dst_stage_mask(&stage)
            .signal_semaphores(&done_sems)
            .push_next(&mut values);
        d.queue_submit(ctx.queue(), &[s2], vk::Fence::null()).map_err(err)?;
        std::thread::sleep(std::time::Duration::from_millis(20));
        let early = d.get_semaphore_counter_value(done).map_err(err)?;
        d.signal_semaphore(&vk::SemaphoreSignalInfo::default().semaphore(gate).value(1)).map_err(err)?;
        let wait = vk::SemaphoreWaitInfo::default().semaphores(&done_sems).values(&done_vals);
        d.wait_semaphores(&wait, 10_000_000_000).map_err(err)?;
        d.queue_wait_idle(ctx.queue()).map_err(err)?;
        d.destroy_command_pool(pool, None);
        for sem in [binary, done, gate] {
            d.destroy_semaphore(sem, None);
        }
        if early != 0 {
            return Err(format!("the timeline reached {early} before the host opened the gate"));
        }
    }
    if c.read::<u32>().iter().any(|&v| v != 0x1234_5678) {
        return Err("the chained copies did not carry the fill through".into());
    }
    Ok(())
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct BasicsResult {
    ids: [u32; 4],
    reversed: u32,
    collatz: u32,
    bits: u32,
    f: f32,
    ubo: u32,
    _pad: [u32; 3],
}

fn collatz(mut x: u32) -> u32 {
    let mut steps = 0;
    while x > 1 {
        x = if x.is_multiple_of(2) { x / 2 } else { 3 * x + 1 };
        steps += 1;
        if steps > 500 {
            break;
        }
    }
    steps
}

fn basics(ctx: &Context, indirect: bool) -> Check {
    const WG: u32 = 64;
    const SCALE: u32 = 3;
    let n = 1000u32;
    let bias = 0.125f32;
    let groups = n.div_ceil(WG);
    let results =
        Buffer::new(ctx, groups as u64 * WG as u64 * 48, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    // std140: uvec4 factors[4] (16-byte stride), then float offsets[4] (16-byte stride too).
    let mut table = [0u32; 32];
    for k in 0..4 {
        table[4 * k..4 * k + 4].copy_from_slice(&[k as u32, 10 + k as u32, 20, 30]);
        table[16 + 4 * k] = (7.5 * k as f32).to_bits();
    }
    let ubo = Buffer::with_data(ctx, &table, vk::BufferUsageFlags::UNIFORM_BUFFER).map_err(err)?;
    let counters = Buffer::new(ctx, 16, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(err)?;
    let args = Buffer::with_data(ctx, &[groups, 1, 1], vk::BufferUsageFlags::INDIRECT_BUFFER).map_err(err)?;
    let bindings =
        [vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::UNIFORM_BUFFER];
    let pipe = ComputePipeline::with_specialization(ctx, BASICS, &bindings, 8, &[(0, WG), (1, SCALE)]).map_err(err)?;
    pipe.bind_storage_buffer(0, &results);
    pipe.bind_storage_buffer(1, &counters);
    pipe.bind_uniform_buffer(2, &ubo);
    let push: Vec<u8> = n.to_le_bytes().into_iter().chain(bias.to_le_bytes()).collect();
    ctx.submit_once(|cmd| {
        if indirect {
            pipe.record_dispatch_indirect(cmd, &push, &args)
        } else {
            pipe.record_dispatch(cmd, &push, [groups, 1, 1])
        }
    })
    .map_err(err)?;
    let got = results.read::<BasicsResult>();
    for gid in 0..n {
        let (wg, lid) = (gid / WG, gid % WG);
        let x = gid as f32 * 0.75 + bias;
        let whole = x.floor();
        let want = BasicsResult {
            ids: [gid, lid, wg, lid],
            reversed: (wg * WG + WG - 1 - lid) * SCALE,
            collatz: collatz(gid + 1),
            bits: gid.count_ones() | ((31 - (gid + 1).leading_zeros()) << 8) | (((gid >> 2) & 7) << 16),
            f: whole * 10.0 + (x - whole) + (gid as f32).sqrt(),
            ubo: (10 + lid % 4) * 1000 + (7.5 * (lid % 4) as f32) as u32,
            _pad: [0; 3],
        };
        let g = got[gid as usize];
        let same =
            BasicsResult { f: want.f, _pad: [0; 3], ..g } == want && near(g.f, want.f, 1e-4 * want.f.abs().max(1.0));
        if !same {
            return Err(format!("invocation {gid}: got {g:?}, want {want:?}"));
        }
    }
    let c = counters.read::<u32>();
    let want = [(0..n).sum::<u32>(), n - 1, groups];
    if c[..3] != want {
        return Err(format!("atomics: total/max/groups = {:?}, want {want:?}", &c[..3]));
    }
    Ok(())
}

fn main() {
    let icd = checks::icd_from_args("compute_check");
    let ctx = checks::context_or_exit("compute_check", &icd);
    println!("device: {}", ctx.info().name);
    let checks: &[checks::Check<_>] = &[
        ("buffer fill/update/copy", &buffer_ops),
        ("image clear and copies", &image_transfers),
        ("1D storage images", &|c| images(c, 1)),
        ("2D storage images", &|c| images(c, 2)),
        ("3D storage images", &|c| images(c, 3)),
        ("shared memory, atomics, spec constants", &|c| basics(c, false)),
        ("indirect dispatch", &|c| basics(c, true)),
        ("binary and timeline semaphores", &semaphores),
    ];
    checks::run_checks_and_exit(&ctx, "compute", checks, || 0);
}
