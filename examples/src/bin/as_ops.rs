//! Every way of building, updating, copying, compacting, serializing and querying an
//! acceleration structure on the device timeline, checked through the loader on any ICD
//! (lavapipe too): each structure is traced with ray queries and compared with the hits of
//! the original or with values solved by hand.
//!
//! Usage: as_ops [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::rawas::{
    device_tlas, device_tlas_with, sizes, soup, trace, Accel, Build, Geometries, Hit, InstanceRecord, Where,
};
use vortex_examples::{checks, Buffer, Context, VkResultExt};

type Check = Result<String, String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Lavapipe departs from the specification in two places these checks look at: its
/// serialized header does not start with its driverUUID, and acceleration-structure
/// property queries that were reset but never written read back as available (with 0).
/// Those two checks apply to every other driver.
fn lavapipe(ctx: &Context) -> bool {
    ctx.info().driver_name.contains("llvmpipe")
}

const BLAS: vk::AccelerationStructureTypeKHR = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
const TLAS: vk::AccelerationStructureTypeKHR = vk::AccelerationStructureTypeKHR::TOP_LEVEL;
const DOWN: [f32; 3] = [0.0, 0.0, -1.0];

/// A grid of downward rays over [-1.1, 1.1]^2 from z = 2.
fn grid_rays(n: usize) -> Vec<([f32; 3], [f32; 3])> {
    (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 / (n - 1) as f32, (i / n) as f32 / (n - 1) as f32);
            ([x * 2.2 - 1.1, y * 2.2 - 1.1, 2.0], DOWN)
        })
        .collect()
}

fn same_hits(what: &str, got: &[Hit], want: &[Hit]) -> Result<usize, String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let t_ok = (g.0 - w.0).abs() <= 1e-4 * w.0.abs().max(1.0);
        if !t_ok || g.1 != w.1 || g.2 != w.2 {
            return Err(format!("{what}: ray {i} hit {g:?}, want {w:?}"));
        }
    }
    Ok(want.iter().filter(|h| h.0 >= 0.0).count())
}

/// A BLAS over `tris` built on the device with `flags`.
fn blas(ctx: &Context, tris: &[[[f32; 3]; 3]], flags: vk::BuildAccelerationStructureFlagsKHR) -> Result<Accel, String> {
    let mut g = Geometries::new();
    g.triangles(ctx, Where::Device, tris, vk::GeometryFlagsKHR::OPAQUE).map_err(err)?;
    Build { at: Where::Device, ty: BLAS, flags, geometries: &g, src: None }.new_accel(ctx).map_err(err)
}

/// Traces the grid against one instance (custom index 5) of `blas`.
fn trace_blas(ctx: &Context, blas: &Accel, rays: &[([f32; 3], [f32; 3])]) -> Result<Vec<Hit>, String> {
    let (tlas, _g) = device_tlas(ctx, &[InstanceRecord::new(blas.address, 5, [0.0; 3])]).map_err(err)?;
    trace(ctx, tlas.handle, rays).map_err(err)
}

/// Writes one property of `structures` through a query pool on the device, read back with
/// 64-bit results and waiting.
fn query(ctx: &Context, structures: &[&Accel], ty: vk::QueryType) -> Result<Vec<u64>, String> {
    let d = ctx.device();
    let info = vk::QueryPoolCreateInfo::default().query_type(ty).query_count(structures.len() as u32);
    // SAFETY (this function): valid device and handles; the pool is destroyed at the end.
    let pool = unsafe { d.create_query_pool(&info, None) }.vk("vkCreateQueryPool").map_err(err)?;
    let handles: Vec<vk::AccelerationStructureKHR> = structures.iter().map(|a| a.handle).collect();
    let r = ctx.submit_once(|cmd| unsafe {
        d.cmd_reset_query_pool(cmd, pool, 0, handles.len() as u32);
        ctx.accel().cmd_write_acceleration_structures_properties(cmd, &handles, ty, pool, 0);
    });
    let mut out = vec![0u64; handles.len()];
    let got = r.map_err(err).and_then(|_| {
        unsafe {
            d.get_query_pool_results(pool, 0, &mut out, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT)
        }
        .vk("vkGetQueryPoolResults")
        .map_err(err)
    });
    unsafe { d.destroy_query_pool(pool, None) };
    got.map(|_| out)
}

/// Clone and compact copies trace like the original, which is destroyed first.
fn copies(ctx: &Context) -> Check {
    let tris = soup(1500, 11);
    let rays = grid_rays(40);
    let flags = vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
    let original = blas(ctx, &tris, flags)?;
    let want = trace_blas(ctx, &original, &rays)?;
    let compacted = query(ctx, &[&original], vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)?[0];
    if compacted == 0 || compacted > original.size {
        return Err(format!("compacted size {compacted} for a {}-byte structure", original.size));
    }
    let clone = Accel::new(ctx, BLAS, original.size).map_err(err)?;
    let compact = Accel::new(ctx, BLAS, compacted).map_err(err)?;
    ctx.submit_once(|cmd| {
        for (dst, mode) in [
            (&clone, vk::CopyAccelerationStructureModeKHR::CLONE),
            (&compact, vk::CopyAccelerationStructureModeKHR::COMPACT),
        ] {
            let info = vk::CopyAccelerationStructureInfoKHR::default().src(original.handle).dst(dst.handle).mode(mode);
            // SAFETY: cmd is recording; live structures.
            unsafe { ctx.accel().cmd_copy_acceleration_structure(cmd, &info) };
        }
    })
    .map_err(err)?;
    drop(original);
    let hits = same_hits("clone", &trace_blas(ctx, &clone, &rays)?, &want)?;
    same_hits("compacted copy", &trace_blas(ctx, &compact, &rays)?, &want)?;
    Ok(format!("{hits} hits; compacted {compacted} bytes"))
}

/// Serialization header as Vulkan defines it, deserialized structures that trace like the
/// originals, and a TLAS that still finds its BLAS.
fn serialization(ctx: &Context) -> Check {
    let tris = soup(1200, 21);
    let rays = grid_rays(32);
    let blas = blas(ctx, &tris, vk::BuildAccelerationStructureFlagsKHR::empty())?;
    let recs = [InstanceRecord::new(blas.address, 3, [0.0; 3]), InstanceRecord::new(blas.address, 4, [0.5, 0.5, -3.0])];
    let (tlas, _g) = device_tlas(ctx, &recs).map_err(err)?;
    let want = trace(ctx, tlas.handle, &rays).map_err(err)?;
    let sizes = query(ctx, &[&blas, &tlas], vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR)?;
    let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
    let blobs: Vec<Buffer> =
        sizes.iter().map(|&s| Buffer::new(ctx, s, usage)).collect::<Result<_, _>>().map_err(err)?;
    ctx.submit_once(|cmd| {
        for (a, b) in [&blas, &tlas].iter().zip(&blobs) {
            let info = vk::CopyAccelerationStructureToMemoryInfoKHR::default()
                .src(a.handle)
                .dst(vk::DeviceOrHostAddressKHR { device_address: b.address() })
                .mode(vk::CopyAccelerationStructureModeKHR::SERIALIZE);
            // SAFETY: cmd is recording; the buffer holds the serialization size.
            unsafe { ctx.accel().cmd_copy_acceleration_structure_to_memory(cmd, &info) };
        }
    })
    .map_err(err)?;
    let mut copies = Vec::new();
    for (k, (b, &size)) in blobs.iter().zip(&sizes).enumerate() {
        let head = b.read::<u8>();
        let u64_at = |o: usize| u64::from_le_bytes(head[o..o + 8].try_into().expect("8 bytes"));
        if head[..16] != ctx.info().driver_uuid && !lavapipe(ctx) {
            return Err(format!("blob {k}: driverUUID {:02x?} is not the device's", &head[..16]));
        }
        let mut compat = vk::AccelerationStructureCompatibilityKHR::INCOMPATIBLE;
        let version: &[u8; 32] = head[..32].try_into().expect("32 bytes");
        let vinfo = vk::AccelerationStructureVersionInfoKHR::default().version_data(version);
        // SAFETY: 2 * VK_UUID_SIZE bytes of version data.
        unsafe {
            (ctx.accel().fp().get_device_acceleration_structure_compatibility_khr)(
                ctx.device().handle(),
                &vinfo,
                &mut compat,
            )
        };
        if compat != vk::AccelerationStructureCompatibilityKHR::COMPATIBLE {
            return Err(format!("blob {k}: its own version data is {compat:?}"));
        }
        let (serialized, deserialized, handles) = (u64_at(32), u64_at(40), u64_at(48));
        if serialized != size || deserialized == 0 {
            return Err(format!("blob {k}: serialized {serialized} (query {size}), deserialized {deserialized}"));
        }
        if k == 0 && handles != 0 {
            return Err(format!("a BLAS serializes with {handles} handles"));
        }
        if k == 1 && (handles == 0 || (0..handles as usize).any(|i| u64_at(56 + 8 * i) != blas.address)) {
            return Err(format!("the TLAS's {handles} handles should all be the BLAS address {:#x}", blas.address));
        }
        let ty = if k == 0 { BLAS } else { TLAS };
        copies.push(Accel::new(ctx, ty, deserialized).map_err(err)?);
    }
    // Garbage version data is incompatible.
    let bad = [0x5au8; 32];
    let mut compat = vk::AccelerationStructureCompatibilityKHR::COMPATIBLE;
    let vinfo = vk::AccelerationStructureVersionInfoKHR::default().version_data(&bad);
    // SAFETY: 32 bytes of version data.
    unsafe {
        (ctx.accel().fp().get_device_acceleration_structure_compatibility_khr)(
            ctx.device().handle(),
            &vinfo,
            &mut compat,
        )
    };
    if compat != vk::AccelerationStructureCompatibilityKHR::INCOMPATIBLE {
        return Err("garbage version data reported compatible".into());
    }
    ctx.submit_once(|cmd| {
        for (b, a) in blobs.iter().zip(&copies) {
            let info = vk::CopyMemoryToAccelerationStructureInfoKHR::default()
                .src(vk::DeviceOrHostAddressConstKHR { device_address: b.address() })
                .dst(a.handle)
                .mode(vk::CopyAccelerationStructureModeKHR::DESERIALIZE);
            // SAFETY: cmd is recording; live structures and buffers.
            unsafe { ctx.accel().cmd_copy_memory_to_acceleration_structure(cmd, &info) };
        }
    })
    .map_err(err)?;
    let hits =
        same_hits("deserialized TLAS (original BLAS)", &trace(ctx, copies[1].handle, &rays).map_err(err)?, &want)?;
    let recs2 = [
        InstanceRecord::new(copies[0].address, 3, [0.0; 3]),
        InstanceRecord::new(copies[0].address, 4, [0.5, 0.5, -3.0]),
    ];
    let (tlas2, _g2) = device_tlas(ctx, &recs2).map_err(err)?;
    same_hits("TLAS over the deserialized BLAS", &trace(ctx, tlas2.handle, &rays).map_err(err)?, &want)?;
    Ok(format!("{hits} hits; serialized {} + {} bytes", sizes[0], sizes[1]))
}

/// Query pools: availability, copies of results into a buffer, host reset, the
/// ray_tracing_maintenance1 size and pointer-count queries, timestamps.
fn queries(ctx: &Context) -> Check {
    let d = ctx.device();
    let tris = soup(300, 31);
    let compactable = vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
    let blas = blas(ctx, &tris, compactable)?;
    let record = InstanceRecord::new(blas.address, 0, [0.0; 3]);
    let (tlas, _g) = device_tlas_with(ctx, &[record], compactable).map_err(err)?;
    let ty = vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR;
    let info = vk::QueryPoolCreateInfo::default().query_type(ty).query_count(4);
    // SAFETY (this function): valid handles; pools destroyed before returning.
    let pool = unsafe { d.create_query_pool(&info, None) }.vk("vkCreateQueryPool").map_err(err)?;
    let out = Buffer::new(ctx, 4 * 16, vk::BufferUsageFlags::TRANSFER_DST).map_err(err)?;
    let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WITH_AVAILABILITY;
    let r = ctx.submit_once(|cmd| unsafe {
        d.cmd_reset_query_pool(cmd, pool, 0, 4);
        ctx.accel().cmd_write_acceleration_structures_properties(cmd, &[blas.handle, tlas.handle], ty, pool, 0);
        d.cmd_copy_query_pool_results(cmd, pool, 0, 4, out.handle(), 0, 16, flags);
    });
    let mut host = [[0u64; 2]; 4];
    let got = unsafe { d.get_query_pool_results(pool, 0, &mut host, flags) };
    let mut notes = Vec::new();
    let check = (|| -> Result<(), String> {
        r.map_err(err)?;
        let strict = !lavapipe(ctx);
        if got != Err(vk::Result::NOT_READY) && strict {
            return Err(format!("two of four queries unwritten: {got:?}, want NOT_READY; {host:?}"));
        }
        let dev: Vec<u64> = out.read::<u64>();
        for (q, (h, dv)) in host.iter().zip(dev.chunks(2)).enumerate().take(if strict { 4 } else { 2 }) {
            let avail = q < 2;
            if (h[1] == 1) != avail || (dv[1] == 1) != avail || (avail && (h[0] == 0 || h[0] != dv[0])) {
                return Err(format!("query {q}: host {h:?}, copied {dv:?}"));
            }
        }
        if ctx.info().host_query_reset {
            unsafe { d.reset_query_pool(pool, 0, 4) };
            let mut one = [[0u64; 2]; 1];
            let r = unsafe { d.get_query_pool_results(pool, 0, &mut one, flags) };
            if (r != Err(vk::Result::NOT_READY) || one[0][1] != 0) && strict {
                return Err(format!("after vkResetQueryPool: {r:?}, {one:?}"));
            }
            notes.push("host reset");
        }
        if ctx.info().maintenance1 {
            let size = query(ctx, &[&blas, &tlas], vk::QueryType::ACCELERATION_STRUCTURE_SIZE_KHR)?;
            let ptrs = query(
                ctx,
                &[&blas, &tlas],
                vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_BOTTOM_LEVEL_POINTERS_KHR,
            )?;
            if size.contains(&0) || ptrs[0] != 0 || ptrs[1] == 0 {
                return Err(format!("sizes {size:?}, bottom-level pointers {ptrs:?}"));
            }
            notes.push("maintenance1 queries");
        }
        if ctx.info().timestamp_bits > 0 {
            let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2);
            let ts = unsafe { d.create_query_pool(&info, None) }.vk("vkCreateQueryPool").map_err(err)?;
            let r = ctx.submit_once(|cmd| unsafe {
                d.cmd_reset_query_pool(cmd, ts, 0, 2);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, ts, 0);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, ts, 1);
            });
            let mut t = [0u64; 2];
            let got = unsafe {
                d.get_query_pool_results(ts, 0, &mut t, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT)
            };
            unsafe { d.destroy_query_pool(ts, None) };
            r.map_err(err)?;
            got.vk("vkGetQueryPoolResults").map_err(err)?;
            if t[1] < t[0] {
                return Err(format!("timestamps go backwards: {t:?}"));
            }
            notes.push("timestamps");
        }
        Ok(())
    })();
    unsafe { d.destroy_query_pool(pool, None) };
    check.map(|_| notes.join(", "))
}

/// Updates refit: in place and into another structure, bottom and top level.
fn updates(ctx: &Context) -> Check {
    let flags = vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE;
    let tris = soup(800, 41);
    let moved: Vec<[[f32; 3]; 3]> =
        tris.iter().map(|t| t.map(|v| [v[0] * 0.8 + 0.1, v[1] * 0.9, v[2] - 1.5])).collect();
    let rays = grid_rays(32);
    let mut g = Geometries::new();
    g.triangles(ctx, Where::Device, &tris, vk::GeometryFlagsKHR::OPAQUE).map_err(err)?;
    let build = Build { at: Where::Device, ty: BLAS, flags, geometries: &g, src: None };
    let in_place = build.new_accel(ctx).map_err(err)?;
    let source = build.new_accel(ctx).map_err(err)?;
    let before = trace_blas(ctx, &source, &rays)?;
    let want = trace_blas(ctx, &blas(ctx, &moved, flags)?, &rays)?;
    let bytes: Vec<u8> = moved.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
    g.blobs[0].write(&bytes);
    let other = Accel::new(ctx, BLAS, source.size).map_err(err)?;
    Build { src: Some(&in_place), ..build }.run(ctx, &in_place).map_err(err)?;
    Build { src: Some(&source), ..build }.run(ctx, &other).map_err(err)?;
    let hits = same_hits("BLAS updated in place", &trace_blas(ctx, &in_place, &rays)?, &want)?;
    same_hits("BLAS updated into another", &trace_blas(ctx, &other, &rays)?, &want)?;
    same_hits("update source", &trace_blas(ctx, &source, &rays)?, &before)?;
    // Top level: instances move and change BLAS.
    let mut tg = Geometries::new();
    let recs =
        [InstanceRecord::new(source.address, 1, [0.0; 3]), InstanceRecord::new(source.address, 2, [5.0, 0.0, 0.0])];
    tg.instances(ctx, Where::Device, &recs, false).map_err(err)?;
    let tb = Build { at: Where::Device, ty: TLAS, flags, geometries: &tg, src: None };
    let tlas = tb.new_accel(ctx).map_err(err)?;
    let recs2 =
        [InstanceRecord::new(in_place.address, 1, [0.0; 3]), InstanceRecord::new(source.address, 2, [0.0, 0.0, -10.0])];
    tg.blobs[0].write(bytemuck::cast_slice(&recs2));
    Build { src: Some(&tlas), ..tb }.run(ctx, &tlas).map_err(err)?;
    let got = trace(ctx, tlas.handle, &rays).map_err(err)?;
    let mut want_top = want.clone();
    for (h, b) in want_top.iter_mut().zip(&before) {
        *h = if h.0 >= 0.0 {
            (h.0, h.1, 1)
        } else if b.0 >= 0.0 {
            (b.0 + 10.0, b.1, 2)
        } else {
            *h
        };
    }
    same_hits("TLAS updated in place", &got, &want_top)?;
    Ok(format!("{hits} hits after the move"))
}

/// Both builders (and the other flag combinations) give the same hits.
fn builders_agree(ctx: &Context) -> Check {
    use vk::BuildAccelerationStructureFlagsKHR as F;
    let tris = soup(3000, 51);
    let rays = grid_rays(40);
    let want = trace_blas(ctx, &blas(ctx, &tris, F::empty())?, &rays)?;
    for flags in [
        F::PREFER_FAST_TRACE,
        F::PREFER_FAST_BUILD,
        F::LOW_MEMORY,
        F::PREFER_FAST_BUILD | F::ALLOW_UPDATE | F::ALLOW_COMPACTION,
    ] {
        same_hits(&format!("{flags:?}"), &trace_blas(ctx, &blas(ctx, &tris, flags)?, &rays)?, &want)?;
    }
    Ok(format!("{} hits each", want.iter().filter(|h| h.0 >= 0.0).count()))
}

/// Every vertex format the device accepts for AS builds, padded strides, every index type.
fn vertex_formats(ctx: &Context) -> Check {
    use vk::Format as Fm;
    // (format, bytes per component, components stored, encoder)
    type Enc = fn(f32) -> Vec<u8>;
    let f32e: Enc = |v| v.to_le_bytes().to_vec();
    let f16e: Enc = |v| half_bits(v).to_le_bytes().to_vec();
    let f64e: Enc = |v| (v as f64).to_le_bytes().to_vec();
    let s16e: Enc = |v| ((v * 32767.0).round() as i16).to_le_bytes().to_vec();
    let s8e: Enc = |v| vec![(v * 127.0).round() as i8 as u8];
    let formats: [(Fm, usize, Enc); 15] = [
        (Fm::R32G32_SFLOAT, 2, f32e),
        (Fm::R32G32B32_SFLOAT, 3, f32e),
        (Fm::R16G16_SFLOAT, 2, f16e),
        (Fm::R16G16B16A16_SFLOAT, 4, f16e),
        (Fm::R16G16_SNORM, 2, s16e),
        (Fm::R16G16B16A16_SNORM, 4, s16e),
        (Fm::R8G8_SNORM, 2, s8e),
        (Fm::R8G8B8_SNORM, 3, s8e),
        (Fm::R8G8B8A8_SNORM, 4, s8e),
        (Fm::R16G16B16_SNORM, 3, s16e),
        (Fm::R16G16B16_SFLOAT, 3, f16e),
        (Fm::R32G32B32A32_SFLOAT, 4, f32e),
        (Fm::R64G64_SFLOAT, 2, f64e),
        (Fm::R64G64B64_SFLOAT, 3, f64e),
        (Fm::R64G64B64A64_SFLOAT, 4, f64e),
    ];
    // The triangle (0.1, 0.1)-(0.6, 0.1)-(0.1, 0.6) at z = 0 (z = -0.5 where stored), seen
    // from (0.2, 0.2, 1) straight down.
    let corners = [[0.1f32, 0.1], [0.6, 0.1], [0.1, 0.6]];
    let mut tested = Vec::new();
    let mut skipped = 0;
    for (fmt, comps, enc) in formats {
        // SAFETY: plain format query.
        let props = unsafe { ctx.instance().get_physical_device_format_properties(ctx.physical_device(), fmt) };
        if !props.buffer_features.contains(vk::FormatFeatureFlags::ACCELERATION_STRUCTURE_VERTEX_BUFFER_KHR) {
            skipped += 1;
            continue;
        }
        // The stored z, decoded as the format does (snorm rounding).
        let z = match (comps >= 3, enc(0.0).len(), fmt.as_raw()) {
            (false, ..) => 0.0,
            (true, 1, _) => (-0.5f32 * 127.0).round() / 127.0,
            (true, 2, f) if [Fm::R16G16B16A16_SNORM.as_raw(), Fm::R16G16B16_SNORM.as_raw()].contains(&f) => {
                (-0.5f32 * 32767.0).round() / 32767.0
            }
            _ => -0.5,
        };
        let stored_z = if comps >= 3 { -0.5 } else { 0.0 };
        let vsize = enc(0.0).len() * comps;
        let stride = (vsize + 8).next_multiple_of(8);
        let mut verts = Vec::new();
        for c in corners {
            let mut rec: Vec<u8> = [c[0], c[1], stored_z, 1.0][..comps].iter().flat_map(|&v| enc(v)).collect();
            rec.resize(stride, 0xAB);
            verts.extend(rec);
        }
        for index in [vk::IndexType::NONE_KHR, vk::IndexType::UINT16, vk::IndexType::UINT32] {
            let ib: Vec<u8> = match index {
                vk::IndexType::UINT16 => [0u16, 1, 2].iter().flat_map(|v| v.to_le_bytes()).collect(),
                vk::IndexType::UINT32 => [0u32, 1, 2].iter().flat_map(|v| v.to_le_bytes()).collect(),
                _ => Vec::new(),
            };
            let mut g = Geometries::new();
            let idx = (index != vk::IndexType::NONE_KHR).then_some((index, ib.as_slice()));
            g.triangles_raw(ctx, Where::Device, &verts, fmt, stride as u64, 2, idx, 1, vk::GeometryFlagsKHR::OPAQUE)
                .map_err(err)?;
            let b = Build { at: Where::Device, ty: BLAS, flags: Default::default(), geometries: &g, src: None }
                .new_accel(ctx)
                .map_err(err)?;
            let h = trace_blas(ctx, &b, &[([0.2, 0.2, 1.0], DOWN)])?[0];
            if (h.0 - (1.0 - z)).abs() > 1e-4 {
                return Err(format!("{fmt:?} {index:?}: hit {h:?}, want t = {}", 1.0 - z));
            }
        }
        tested.push(format!("{fmt:?}"));
    }
    Ok(format!("{} formats x 3 index types ({} not offered)", tested.len(), skipped))
}

fn half_bits(v: f32) -> u16 {
    // Exact for the values used here (multiples of 1/10 need rounding; f16 has 10 bits).
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    if v == 0.0 {
        return sign;
    }
    let m = (b & 0x7f_ffff) + (1 << 12); // round to nearest
    let (e, m) = if m & (1 << 23) != 0 { (e + 1, 0) } else { (e, m) };
    sign | ((e as u16) << 10) | ((m >> 13) as u16 & 0x3ff)
}

/// AABBs with a padded stride, instances through an array of pointers, GENERIC structures,
/// several geometries with their own flags.
fn geometry_kinds(ctx: &Context) -> Check {
    let generic = vk::AccelerationStructureTypeKHR::GENERIC;
    // Two geometries: a triangle at z = -1 (geometry 0) and one at z = -2 shifted in x.
    let mut g = Geometries::new();
    g.triangles(
        ctx,
        Where::Device,
        &[[[0.0, 0.0, -1.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]]],
        vk::GeometryFlagsKHR::OPAQUE,
    )
    .map_err(err)?;
    g.triangles(
        ctx,
        Where::Device,
        &[[[2.0, 0.0, -2.0], [3.0, 0.0, -2.0], [2.0, 1.0, -2.0]]; 2],
        vk::GeometryFlagsKHR::OPAQUE | vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION,
    )
    .map_err(err)?;
    let s = sizes(ctx, Where::Device, BLAS, Default::default(), &g);
    let tri_blas = Accel::new(ctx, generic, s.acceleration_structure_size).map_err(err)?;
    Build { at: Where::Device, ty: BLAS, flags: Default::default(), geometries: &g, src: None }
        .run(ctx, &tri_blas)
        .map_err(err)?;
    // AABBs, 32-byte stride (procedural: the tracer confirms every candidate at its entry).
    let mut ag = Geometries::new();
    ag.aabbs(ctx, Where::Device, &[[4.0, 0.0, -3.0, 5.0, 1.0, -2.5]], 32).map_err(err)?;
    let aabb_blas = Build { at: Where::Device, ty: BLAS, flags: Default::default(), geometries: &ag, src: None }
        .new_accel(ctx)
        .map_err(err)?;
    // GENERIC TLAS over an array of pointers.
    let recs =
        [InstanceRecord::new(tri_blas.address, 7, [0.0; 3]), InstanceRecord::new(aabb_blas.address, 8, [0.0; 3])];
    let mut tg = Geometries::new();
    tg.instances(ctx, Where::Device, &recs, true).map_err(err)?;
    let s = sizes(ctx, Where::Device, TLAS, Default::default(), &tg);
    let tlas = Accel::new(ctx, generic, s.acceleration_structure_size).map_err(err)?;
    Build { at: Where::Device, ty: TLAS, flags: Default::default(), geometries: &tg, src: None }
        .run(ctx, &tlas)
        .map_err(err)?;
    let hits = trace(ctx, tlas.handle, &[([0.2, 0.2, 1.0], DOWN), ([2.2, 0.2, 1.0], DOWN), ([4.5, 0.5, 1.0], DOWN)])
        .map_err(err)?;
    let ok = (hits[0].0 - 2.0).abs() < 1e-4
        && hits[0].2 == 7
        && (hits[1].0 - 3.0).abs() < 1e-4
        && hits[1].2 == 7
        && hits[2].2 == 8
        && hits[2].0 >= 0.0;
    if !ok {
        return Err(format!("hits {hits:?}"));
    }
    Ok("triangles x 2 geometries, AABBs, pointer array, GENERIC".into())
}

fn main() {
    let icd = checks::icd_from_args("as_ops");
    let ctx = checks::context_or_exit("as_ops", &icd);
    println!("device: {}", ctx.info().name);
    let checks: &[checks::Check<_>] = &[
        ("clone and compact copies", &copies),
        ("serialize and deserialize", &serialization),
        ("query pools", &queries),
        ("updates (refit)", &updates),
        ("build flags agree", &builders_agree),
        ("vertex formats and index types", &vertex_formats),
        ("geometry kinds", &geometry_kinds),
    ];
    checks::run_checks_and_exit(&ctx, "acceleration-structure operation", checks, || 0);
}
