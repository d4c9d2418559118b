//! Sparse binding through the loader, on any driver that offers `sparseBinding` and a queue
//! family with `SPARSE_BINDING`:
//!
//! 1. a buffer whose four pages are bound to two allocations at scattered offsets: what a
//!    shader writes, and what fills, updates and copies write across page boundaries, lands
//!    in the memory the binding names, and reads (a copy of the whole buffer, a shader)
//!    see it;
//! 2. rebinding between submissions, ordered by binary and timeline semaphores and a fence:
//!    work before the rebind writes the old memory, work after it the new;
//! 3. an acceleration structure (a 20,000-triangle BLAS, and its TLAS) built into sparse
//!    buffers whose pages alternate between two allocations in scrambled order traces the
//!    same hits as the same scene in ordinary memory;
//! 4. (our ICD only) a shader reading a page with no memory bound makes the submission
//!    report `VK_ERROR_DEVICE_LOST`, and the process goes on. The Vulkan specification leaves
//!    such a read undefined without `residencyNonResidentStrict`; our device faults on it
//!    and names the page, lavapipe has no fault model (it would read host memory), so the
//!    check does not run there.
//!
//! Usage: sparse [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed, 2:
//! could not run)

use ash::vk;
use vortex_examples::rawas::{device_tlas, sizes, soup, trace, Accel, Build, Geometries, InstanceRecord, Where};
use vortex_examples::sparse::{bind, new_fence, submit_waiting, wait_fence, Bind, Memory, Semaphore, SparseBuffer};
use vortex_examples::{checks, memory_barrier, Buffer, ComputePipeline, Context, Error, Icd};

const SHADER: &[u8] = include_bytes!("../../shaders/sparse.spv");

fn e(err: Error) -> String {
    err.to_string()
}

/// The shader's pipeline with the sparse buffer as binding 0 and `out` as binding 1.
fn pipeline(ctx: &Context, data: &SparseBuffer, out: &Buffer) -> Result<ComputePipeline, String> {
    let ty = vk::DescriptorType::STORAGE_BUFFER;
    let pipe = ComputePipeline::new(ctx, SHADER, &[ty, ty], 16).map_err(e)?;
    let whole = |buffer| vortex_examples::Descriptor::Buffer { buffer, offset: 0, range: vk::WHOLE_SIZE };
    pipe.write(0, 0, 0, &whole(data.handle())).map_err(e)?;
    pipe.write(0, 1, 0, &whole(out.handle())).map_err(e)?;
    Ok(pipe)
}

fn push(mode: u32, first: u32, count: u32, salt: u32) -> Vec<u8> {
    [mode, first, count, salt].iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn dispatch(pipe: &ComputePipeline, cmd: vk::CommandBuffer, mode: u32, first: u32, count: u32, salt: u32) {
    pipe.record_dispatch(cmd, &push(mode, first, count, salt), [count.div_ceil(64), 1, 1]);
}

fn barrier(ctx: &Context, cmd: vk::CommandBuffer) {
    let all = vk::PipelineStageFlags::ALL_COMMANDS;
    memory_barrier(ctx.device(), cmd, all, all);
}

/// Binds and waits for the bind's fence.
fn bind_now(ctx: &Context, buffer: &SparseBuffer, binds: &[Bind]) -> Result<(), String> {
    let fence = new_fence(ctx).map_err(e)?;
    let r = bind(ctx, buffer, binds, &[], &[], fence).and_then(|()| wait_fence(ctx, fence));
    // SAFETY: the fence was waited for (or the bind never queued).
    unsafe { ctx.device().destroy_fence(fence, None) };
    r.map_err(e)
}

/// Check 1: four pages bound to two allocations at scattered offsets.
fn scattered(ctx: &Context) -> Result<String, String> {
    let usage =
        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let probe = SparseBuffer::new(ctx, 1, usage).map_err(e)?;
    let p = probe.page;
    let buf = SparseBuffer::new(ctx, 4 * p, usage).map_err(e)?;
    let (a, b) = (
        Memory::new(ctx, 3 * p, buf.memory_type_bits).map_err(e)?,
        Memory::new(ctx, 2 * p, buf.memory_type_bits).map_err(e)?,
    );
    // Page k of the buffer is page `table[k].1` of memory `table[k].0`.
    let table: [(&Memory, u64); 4] = [(&a, 2), (&b, 1), (&a, 0), (&b, 0)];
    let binds: Vec<Bind> = table
        .iter()
        .enumerate()
        .map(|(k, &(m, at))| Bind { offset: k as u64 * p, size: p, memory: Some((m, at * p)) })
        .collect();
    bind_now(ctx, &buf, &binds)?;

    let words = (4 * p / 4) as usize;
    let mut expect: Vec<u32> = (0..words as u32).map(|i| i * 3 + 7).collect();
    let fill_at = p - 8;
    expect[(fill_at / 4) as usize..][..4].fill(0xAAAA_AAAA);
    let update_at = 2 * p - 12;
    let update: Vec<u32> = (100..106).collect();
    expect[(update_at / 4) as usize..][..6].copy_from_slice(&update);
    let copy_at = 3 * p - 16;
    let staged: Vec<u32> = (200..208).collect();
    expect[(copy_at / 4) as usize..][..8].copy_from_slice(&staged);

    let staging = Buffer::with_data(ctx, &staged, vk::BufferUsageFlags::TRANSFER_SRC).map_err(e)?;
    let readback = Buffer::new(ctx, 4 * p, vk::BufferUsageFlags::TRANSFER_DST).map_err(e)?;
    let out = Buffer::new(ctx, 4 * 32, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let pipe = pipeline(ctx, &buf, &out)?;
    let read_first = (p / 4 - 16) as u32;
    let d = ctx.device();
    ctx.submit_once(|cmd| {
        dispatch(&pipe, cmd, 0, 0, words as u32, 7);
        barrier(ctx, cmd);
        let update_bytes: Vec<u8> = update.iter().flat_map(|w| w.to_le_bytes()).collect();
        let to_sparse = vk::BufferCopy { src_offset: 0, dst_offset: copy_at, size: 32 };
        // SAFETY: cmd is recording; every range lies inside its buffer.
        unsafe {
            d.cmd_fill_buffer(cmd, buf.handle(), fill_at, 16, 0xAAAA_AAAA);
            d.cmd_update_buffer(cmd, buf.handle(), update_at, &update_bytes);
            d.cmd_copy_buffer(cmd, staging.handle(), buf.handle(), &[to_sparse]);
        }
        barrier(ctx, cmd);
        let whole = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 4 * p };
        // SAFETY: as above.
        unsafe { d.cmd_copy_buffer(cmd, buf.handle(), readback.handle(), &[whole]) };
        dispatch(&pipe, cmd, 1, read_first, 32, 0);
    })
    .map_err(e)?;

    if readback.read::<u32>() != expect {
        return Err("a copy of the whole sparse buffer differs from what was written".into());
    }
    for (i, &want) in expect.iter().enumerate() {
        let o = 4 * i as u64;
        let (m, at) = table[(o / p) as usize];
        let got = m.word(at * p + o % p);
        if got != want {
            return Err(format!("byte {o:#x} of the buffer: its memory holds {got:#x}, expected {want:#x}"));
        }
    }
    if out.read::<u32>() != expect[read_first as usize..][..32] {
        return Err("a shader reading across the page boundary saw other values".into());
    }
    Ok(format!("page {p} bytes, 4 pages from 2 allocations"))
}

/// Check 2: rebinding between submissions, ordered by semaphores.
fn rebinding(ctx: &Context) -> Result<(), String> {
    let probe = SparseBuffer::new(ctx, 1, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let p = probe.page;
    let buf = SparseBuffer::new(ctx, 2 * p, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let bits = buf.memory_type_bits;
    let (c, dm) = (Memory::new(ctx, 2 * p, bits).map_err(e)?, Memory::new(ctx, 2 * p, bits).map_err(e)?);
    let out = Buffer::new(ctx, 64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let pipe = pipeline(ctx, &buf, &out)?;
    let (bound, timeline) = (Semaphore::new(ctx, None).map_err(e)?, Semaphore::new(ctx, Some(0)).map_err(e)?);
    let words = (2 * p / 4) as u32;
    // Bind to c (signalling `bound`), write salt 1 after it (then timeline 1), rebind to d
    // in the other order after that (then timeline 2), write salt 1000 after it.
    let first =
        [Bind { offset: 0, size: p, memory: Some((&c, 0)) }, Bind { offset: p, size: p, memory: Some((&c, p)) }];
    bind(ctx, &buf, &first, &[], &[(&bound, 0)], vk::Fence::null()).map_err(e)?;
    submit_waiting(ctx, &[(&bound, 0)], &[(&timeline, 1)], |cmd| dispatch(&pipe, cmd, 0, 0, words, 1)).map_err(e)?;
    let second =
        [Bind { offset: 0, size: p, memory: Some((&dm, p)) }, Bind { offset: p, size: p, memory: Some((&dm, 0)) }];
    let fence = new_fence(ctx).map_err(e)?;
    let r = bind(ctx, &buf, &second, &[(&timeline, 1)], &[(&timeline, 2)], fence)
        .and_then(|()| submit_waiting(ctx, &[(&timeline, 2)], &[], |cmd| dispatch(&pipe, cmd, 0, 0, words, 1000)))
        .and_then(|()| wait_fence(ctx, fence));
    // SAFETY: waited for.
    unsafe { ctx.device().destroy_fence(fence, None) };
    r.map_err(e)?;
    let half = p / 4;
    for i in [0, 1, half - 1, half, words as u64 - 1] {
        let (page, within) = (4 * i / p, 4 * i % p);
        let (old, new) = (c.word(page * p + within), dm.word((1 - page) * p + within));
        if (old, new) != (i as u32 * 3 + 1, i as u32 * 3 + 1000) {
            return Err(format!("word {i}: first memory {old}, second {new}"));
        }
    }
    Ok(())
}

/// Check 3: structures in sparse memory trace like the same scene in ordinary memory.
fn sparse_structure(ctx: &Context) -> Result<String, String> {
    let tris = soup(20_000, 7);
    let mut g = Geometries::new();
    g.triangles(ctx, Where::Device, &tris, vk::GeometryFlagsKHR::OPAQUE).map_err(e)?;
    let build = |at_sparse: Option<&Accel>| -> Result<Option<Accel>, String> {
        let b = Build {
            at: Where::Device,
            ty: vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            flags: vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE,
            geometries: &g,
            src: None,
        };
        match at_sparse {
            Some(dst) => b.run(ctx, dst).map(|()| None).map_err(e),
            None => b.new_accel(ctx).map(Some).map_err(e),
        }
    };
    let ordinary = build(None)?.expect("a new structure");
    let s = sizes(ctx, Where::Device, vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL, Default::default(), &g);
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
    let blas_buf = SparseBuffer::new(ctx, s.acceleration_structure_size, usage).map_err(e)?;
    let p = blas_buf.page;
    let pages = s.acceleration_structure_size.div_ceil(p);
    let half = pages.div_ceil(2);
    let bits = blas_buf.memory_type_bits;
    let (m0, m1) = (Memory::new(ctx, half * p, bits).map_err(e)?, Memory::new(ctx, half * p, bits).map_err(e)?);
    // Even pages from m0 backwards, odd pages from m1 forwards.
    let binds: Vec<Bind> = (0..pages)
        .map(|k| {
            let memory = if k % 2 == 0 { (&m0, (half - 1 - k / 2) * p) } else { (&m1, (k / 2) * p) };
            Bind { offset: k * p, size: p, memory: Some(memory) }
        })
        .collect();
    bind_now(ctx, &blas_buf, &binds)?;
    let blas = Accel::on_buffer(
        ctx,
        vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
        blas_buf.handle(),
        0,
        s.acceleration_structure_size,
    )
    .map_err(e)?;
    build(Some(&blas))?;

    let (plain_tlas, _g1) = device_tlas(ctx, &[InstanceRecord::new(ordinary.address, 5, [0.0; 3])]).map_err(e)?;
    let mut tg = Geometries::new();
    tg.instances(ctx, Where::Device, &[InstanceRecord::new(blas.address, 5, [0.0; 3])], false).map_err(e)?;
    let top = vk::AccelerationStructureTypeKHR::TOP_LEVEL;
    let ts = sizes(ctx, Where::Device, top, Default::default(), &tg);
    let tlas_buf = SparseBuffer::new(ctx, ts.acceleration_structure_size, usage).map_err(e)?;
    let tlas_pages = ts.acceleration_structure_size.div_ceil(p);
    let m2 = Memory::new(ctx, (tlas_pages + 1) * p, tlas_buf.memory_type_bits).map_err(e)?;
    bind_now(ctx, &tlas_buf, &[Bind { offset: 0, size: tlas_pages * p, memory: Some((&m2, p)) }])?;
    let tlas = Accel::on_buffer(ctx, top, tlas_buf.handle(), 0, ts.acceleration_structure_size).map_err(e)?;
    let tb = Build { at: Where::Device, ty: top, flags: Default::default(), geometries: &tg, src: None };
    tb.run(ctx, &tlas).map_err(e)?;

    let n = 96;
    let rays: Vec<([f32; 3], [f32; 3])> = (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 / n as f32 * 2.0 - 1.0, (i / n) as f32 / n as f32 * 2.0 - 1.0);
            ([x, y, 1.0], [0.01 * x, 0.02 * y, -1.0])
        })
        .collect();
    let want = trace(ctx, plain_tlas.handle, &rays).map_err(e)?;
    let got = trace(ctx, tlas.handle, &rays).map_err(e)?;
    let hits = want.iter().filter(|h| h.1 >= 0).count();
    if hits < rays.len() / 4 {
        return Err(format!("only {hits} of {} rays hit the ordinary scene: not a test", rays.len()));
    }
    if let Some(i) = (0..rays.len()).find(|&i| got[i] != want[i]) {
        return Err(format!("ray {i}: {:?} from sparse memory, {:?} from ordinary memory", got[i], want[i]));
    }
    Ok(format!(
        "{} bytes over {pages} pages, {hits} of {} rays hit, all alike",
        s.acceleration_structure_size,
        rays.len()
    ))
}

/// Check 4 (our ICD): a read of an unbound page loses the device, and only that.
fn unbound_page(icd: &Icd) -> Result<(), String> {
    let ctx = Context::with_optional_features(icd).map_err(e)?;
    let probe = SparseBuffer::new(&ctx, 1, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let p = probe.page;
    let buf = SparseBuffer::new(&ctx, 2 * p, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let m = Memory::new(&ctx, p, buf.memory_type_bits).map_err(e)?;
    bind_now(&ctx, &buf, &[Bind { offset: 0, size: p, memory: Some((&m, 0)) }])?;
    let out = Buffer::new(&ctx, 64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let pipe = pipeline(&ctx, &buf, &out)?;
    // The last word of page 0 is bound; the first of page 1 is not.
    let r = ctx.submit_once(|cmd| dispatch(&pipe, cmd, 1, (p / 4 - 1) as u32, 2, 0));
    match r {
        Err(Error::Vulkan { result: vk::Result::ERROR_DEVICE_LOST, .. }) => {
            println!("  read of page 1 (unbound): VK_ERROR_DEVICE_LOST; the process goes on");
            Ok(())
        }
        other => Err(format!("expected VK_ERROR_DEVICE_LOST, got {other:?}")),
    }
}

fn main() {
    let icd = checks::icd_from_args("sparse");
    let ctx = Context::with_optional_features(&icd).unwrap_or_else(|err| {
        eprintln!("sparse: {err}");
        std::process::exit(2);
    });
    println!("device: {}", ctx.info().name);
    let (_, flags) = ctx.queue_family();
    if !ctx.info().enabled.contains(&"sparseBinding") || !flags.contains(vk::QueueFlags::SPARSE_BINDING) {
        eprintln!("sparse: the device offers no sparseBinding or its queue no SPARSE_BINDING");
        std::process::exit(2);
    }
    let ours = ctx.info().driver_name == "vortex-rt";
    let unbound = |_: &Context| {
        if ours {
            unbound_page(&icd).map(|()| "VK_ERROR_DEVICE_LOST".to_string())
        } else {
            Ok("not run: only our device has a fault model for unbound pages".to_string())
        }
    };
    let list: &[checks::Check<String>] = &[
        ("shader writes, fills, updates and copies land where the scattered binding says", &scattered),
        ("rebinding between submissions, ordered by semaphores", &|c| rebinding(c).map(|()| String::new())),
        ("acceleration structures in sparse memory trace like ordinary ones", &sparse_structure),
        ("a read of an unbound page loses the device", &unbound),
    ];
    checks::run_checks_and_exit(&ctx, "sparse-binding", list, || 0);
}
