//! Host acceleration-structure commands (`accelerationStructureHostCommands`): builds,
//! updates, copies, compaction, serialization and property queries that run on the host at
//! call time or as deferred operations joined by several threads; instances of host-built
//! TLASes name their BLASes by handle value. Every result is traced on the device and
//! compared with the same structure built on the device.
//!
//! Drivers without host commands (lavapipe) are reported as such and pass trivially.
//! Usage: host_ops [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk::{self, Handle};
use vortex_examples::rawas::{host_command, soup, trace, Accel, Build, Geometries, Hit, InstanceRecord, Where};
use vortex_examples::{checks, Context};

type Check = Result<String, String>;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

const BLAS: vk::AccelerationStructureTypeKHR = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
const TLAS: vk::AccelerationStructureTypeKHR = vk::AccelerationStructureTypeKHR::TOP_LEVEL;
const DOWN: [f32; 3] = [0.0, 0.0, -1.0];
/// Where host work runs: at call time, and deferred with 1, 2, 3, 4, 8 and "as many as the
/// driver says" (0) joining threads — the dEQP host_threading variants.
const HOSTS: [Where; 7] = [
    Where::Host,
    Where::Deferred(1),
    Where::Deferred(2),
    Where::Deferred(3),
    Where::Deferred(4),
    Where::Deferred(8),
    Where::Deferred(0),
];

fn grid_rays(n: usize) -> Vec<([f32; 3], [f32; 3])> {
    (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f32 / (n - 1) as f32, (i / n) as f32 / (n - 1) as f32);
            ([x * 2.2 - 1.1 + 2.0 * (i % 2) as f32, y * 2.2 - 1.1, 2.0], DOWN)
        })
        .collect()
}

fn same_hits(what: &str, got: &[Hit], want: &[Hit]) -> Result<usize, String> {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if (g.0 - w.0).abs() > 1e-4 * w.0.abs().max(1.0) || g.1 != w.1 || g.2 != w.2 {
            return Err(format!("{what}: ray {i} hit {g:?}, want {w:?}"));
        }
    }
    Ok(want.iter().filter(|h| h.0 >= 0.0).count())
}

fn blas(
    ctx: &Context,
    at: Where,
    tris: &[[[f32; 3]; 3]],
    flags: vk::BuildAccelerationStructureFlagsKHR,
) -> Result<Accel, String> {
    let mut g = Geometries::new();
    g.triangles(ctx, at, tris, vk::GeometryFlagsKHR::OPAQUE).map_err(err)?;
    Build { at, ty: BLAS, flags, geometries: &g, src: None }.new_accel(ctx).map_err(err)
}

/// Two instances of `blas` (custom 1 at the origin, custom 2 shifted by 2 in x), built `at`.
fn tlas(ctx: &Context, at: Where, blas: &Accel) -> Result<Accel, String> {
    let recs = [
        InstanceRecord::new(blas.reference(at), 1, [0.0; 3]),
        InstanceRecord::new(blas.reference(at), 2, [2.0, 0.0, -1.0]),
    ];
    let mut g = Geometries::new();
    g.instances(ctx, at, &recs, at == Where::Deferred(3)).map_err(err)?;
    Build { at, ty: TLAS, flags: Default::default(), geometries: &g, src: None }.new_accel(ctx).map_err(err)
}

/// The reference: everything built on the device.
fn reference(ctx: &Context, tris: &[[[f32; 3]; 3]], rays: &[([f32; 3], [f32; 3])]) -> Result<Vec<Hit>, String> {
    let b = blas(ctx, Where::Device, tris, Default::default())?;
    let t = tlas(ctx, Where::Device, &b)?;
    trace(ctx, t.handle, rays).map_err(err)
}

/// Host builds of BLAS and TLAS (instances by handle), and the two mixed ways. (6000
/// triangles: enough that deferred builds are really deferred.)
fn builds(ctx: &Context) -> Check {
    let tris = soup(6000, 5);
    let rays = grid_rays(40);
    let want = reference(ctx, &tris, &rays)?;
    let mut hits = 0;
    for at in HOSTS {
        let b = blas(ctx, at, &tris, Default::default())?;
        let t = tlas(ctx, at, &b)?;
        hits = same_hits(&format!("{at:?} BLAS + TLAS"), &trace(ctx, t.handle, &rays).map_err(err)?, &want)?;
    }
    // A host BLAS under a device TLAS (by address); a device BLAS under a host TLAS (by handle).
    let hb = blas(ctx, Where::Host, &tris, Default::default())?;
    same_hits(
        "host BLAS, device TLAS",
        &trace(ctx, tlas(ctx, Where::Device, &hb)?.handle, &rays).map_err(err)?,
        &want,
    )?;
    let db = blas(ctx, Where::Device, &tris, Default::default())?;
    same_hits("device BLAS, host TLAS", &trace(ctx, tlas(ctx, Where::Host, &db)?.handle, &rays).map_err(err)?, &want)?;
    // Both builders on the host.
    for flags in
        [vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_BUILD, vk::BuildAccelerationStructureFlagsKHR::LOW_MEMORY]
    {
        let b = blas(ctx, Where::Host, &tris, flags)?;
        same_hits(
            &format!("host {flags:?}"),
            &trace(ctx, tlas(ctx, Where::Host, &b)?.handle, &rays).map_err(err)?,
            &want,
        )?;
    }
    Ok(format!("{hits} hits, {} ways", HOSTS.len() + 4))
}

/// Several build infos in one deferred call (one unit each), joined by 4 threads.
fn many_infos(ctx: &Context) -> Check {
    let rays = grid_rays(24);
    let scenes: Vec<Vec<[[f32; 3]; 3]>> = (0..8).map(|k| soup(400 + 100 * k, 100 + k as u64)).collect();
    let at = Where::Deferred(4);
    let gs: Vec<Geometries> = scenes
        .iter()
        .map(|t| {
            let mut g = Geometries::new();
            g.triangles(ctx, at, t, vk::GeometryFlagsKHR::OPAQUE).map(|_| g)
        })
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let builds: Vec<Build> =
        gs.iter().map(|g| Build { at, ty: BLAS, flags: Default::default(), geometries: g, src: None }).collect();
    let accels: Vec<Accel> = builds
        .iter()
        .map(|b| {
            let s = vortex_examples::rawas::sizes(ctx, at, BLAS, Default::default(), b.geometries);
            Accel::new(ctx, BLAS, s.acceleration_structure_size)
        })
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let mut scratch: Vec<vortex_examples::rawas::Scratch> = builds
        .iter()
        .map(|b| {
            let s = vortex_examples::rawas::sizes(ctx, at, BLAS, Default::default(), b.geometries);
            vortex_examples::rawas::Scratch::new(ctx, at, s.build_scratch_size)
        })
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let infos: Vec<vk::AccelerationStructureBuildGeometryInfoKHR> = gs
        .iter()
        .zip(&accels)
        .zip(scratch.iter_mut())
        .map(|((g, a), s)| {
            vk::AccelerationStructureBuildGeometryInfoKHR::default()
                .ty(BLAS)
                .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
                .geometries(&g.geometries)
                .dst_acceleration_structure(a.handle)
                .scratch_data(s.address())
        })
        .collect();
    let ranges: Vec<*const vk::AccelerationStructureBuildRangeInfoKHR> = gs.iter().map(|g| g.ranges.as_ptr()).collect();
    host_command(ctx, at, |op| unsafe {
        // SAFETY: host addresses that outlive the joined operation.
        (ctx.accel().fp().build_acceleration_structures_khr)(
            ctx.device().handle(),
            op,
            infos.len() as u32,
            infos.as_ptr(),
            ranges.as_ptr(),
        )
    })
    .map_err(err)?;
    for (k, (a, t)) in accels.iter().zip(&scenes).enumerate() {
        let want = reference(ctx, t, &rays)?;
        same_hits(&format!("info {k}"), &trace(ctx, tlas(ctx, Where::Device, a)?.handle, &rays).map_err(err)?, &want)?;
    }
    Ok("8 infos, 4 threads".into())
}

/// Host updates: in place and into another structure.
fn updates(ctx: &Context) -> Check {
    let tris = soup(900, 7);
    let moved: Vec<[[f32; 3]; 3]> = tris.iter().map(|t| t.map(|v| [v[0] * 0.7, v[1] + 0.2, v[2] - 0.5])).collect();
    let rays = grid_rays(32);
    let want = reference(ctx, &moved, &rays)?;
    let flags = vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE;
    for at in [Where::Host, Where::Deferred(2)] {
        let mut g = Geometries::new();
        g.triangles(ctx, at, &tris, vk::GeometryFlagsKHR::OPAQUE).map_err(err)?;
        let b = Build { at, ty: BLAS, flags, geometries: &g, src: None };
        let a = b.new_accel(ctx).map_err(err)?;
        let bytes: Vec<u8> = moved.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
        g.blobs[0].write(&bytes);
        let other = Accel::new(ctx, BLAS, a.size).map_err(err)?;
        Build { src: Some(&a), ..b }.run(ctx, &other).map_err(err)?;
        Build { src: Some(&a), ..b }.run(ctx, &a).map_err(err)?;
        for (what, x) in [("in place", &a), ("into another", &other)] {
            let t = tlas(ctx, Where::Device, x)?;
            same_hits(&format!("{at:?} update {what}"), &trace(ctx, t.handle, &rays).map_err(err)?, &want)?;
        }
    }
    Ok("in place and into another, now and deferred".into())
}

/// Host copies: clone, compact (sized by a host property query), serialize to host memory
/// and back; a deserialized TLAS still finds its BLAS.
fn copies(ctx: &Context) -> Check {
    let tris = soup(6000, 9);
    let rays = grid_rays(32);
    let want = reference(ctx, &tris, &rays)?;
    let acc = ctx.accel();
    let dev = ctx.device().handle();
    let flags = vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
    let b = blas(ctx, Where::Host, &tris, flags)?;
    let t = tlas(ctx, Where::Host, &b)?;
    let prop = |a: &Accel, ty: vk::QueryType| -> Result<u64, String> {
        let mut v = 0u64;
        // SAFETY: one structure, 8 bytes of output.
        unsafe {
            (acc.fp().write_acceleration_structures_properties_khr)(
                dev,
                1,
                &a.handle,
                ty,
                8,
                (&mut v as *mut u64).cast(),
                8,
            )
        }
        .result()
        .map_err(err)?;
        Ok(v)
    };
    let compacted = prop(&b, vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR)?;
    let serial_b = prop(&b, vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR)?;
    let serial_t = prop(&t, vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR)?;
    let pointers = prop(&t, vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_BOTTOM_LEVEL_POINTERS_KHR)?;
    if compacted == 0 || compacted > b.size || pointers != 1 || serial_t < 56 + 8 {
        return Err(format!("compacted {compacted}, serialized {serial_b}/{serial_t}, pointers {pointers}"));
    }
    for at in HOSTS {
        // Clone and compact the BLAS; serialize both and deserialize them.
        let clone = Accel::new(ctx, BLAS, b.size).map_err(err)?;
        let compact = Accel::new(ctx, BLAS, compacted).map_err(err)?;
        for (dst, mode) in [
            (&clone, vk::CopyAccelerationStructureModeKHR::CLONE),
            (&compact, vk::CopyAccelerationStructureModeKHR::COMPACT),
        ] {
            let info = vk::CopyAccelerationStructureInfoKHR::default().src(b.handle).dst(dst.handle).mode(mode);
            // SAFETY: live structures.
            host_command(ctx, at, |op| unsafe { (acc.fp().copy_acceleration_structure_khr)(dev, op, &info) })
                .map_err(err)?;
        }
        let mut blobs = [vec![0u64; (serial_b as usize).div_ceil(8)], vec![0u64; (serial_t as usize).div_ceil(8)]];
        for (a, blob) in [&compact, &t].iter().zip(blobs.iter_mut()) {
            let info = vk::CopyAccelerationStructureToMemoryInfoKHR::default()
                .src(a.handle)
                .dst(vk::DeviceOrHostAddressKHR { host_address: blob.as_mut_ptr().cast() })
                .mode(vk::CopyAccelerationStructureModeKHR::SERIALIZE);
            // SAFETY: the blob holds the serialization size.
            host_command(ctx, at, |op| unsafe { (acc.fp().copy_acceleration_structure_to_memory_khr)(dev, op, &info) })
                .map_err(err)?;
        }
        let head = |blob: &[u64], k: usize| blob[k];
        if bytemuck::cast_slice::<u64, u8>(&blobs[0])[..16] != ctx.info().driver_uuid || head(&blobs[1], 6) != 1 {
            return Err(format!("{at:?}: serialized headers {:x?} / {:x?}", &blobs[0][..7], &blobs[1][..8]));
        }
        // The TLAS blob's handle is the (original) BLAS's address: point it at the compacted
        // copy, as an application that relocated its BLASes would.
        if head(&blobs[1], 7) != b.address {
            return Err(format!("{at:?}: TLAS handle {:#x}, BLAS at {:#x}", head(&blobs[1], 7), b.address));
        }
        blobs[1][7] = compact.address;
        let copies = [
            Accel::new(ctx, BLAS, head(&blobs[0], 5)).map_err(err)?,
            Accel::new(ctx, TLAS, head(&blobs[1], 5)).map_err(err)?,
        ];
        for (a, blob) in copies.iter().zip(&blobs) {
            let info = vk::CopyMemoryToAccelerationStructureInfoKHR::default()
                .src(vk::DeviceOrHostAddressConstKHR { host_address: blob.as_ptr().cast() })
                .dst(a.handle)
                .mode(vk::CopyAccelerationStructureModeKHR::DESERIALIZE);
            // SAFETY: a serialized structure at the source.
            host_command(ctx, at, |op| unsafe { (acc.fp().copy_memory_to_acceleration_structure_khr)(dev, op, &info) })
                .map_err(err)?;
        }
        for (what, x) in [("clone", &clone), ("compacted copy", &compact), ("deserialized BLAS", &copies[0])] {
            let tt = tlas(ctx, Where::Device, x)?;
            same_hits(&format!("{at:?} {what}"), &trace(ctx, tt.handle, &rays).map_err(err)?, &want)?;
        }
        same_hits(&format!("{at:?} deserialized TLAS"), &trace(ctx, copies[1].handle, &rays).map_err(err)?, &want)?;
    }
    Ok(format!("compacted {compacted} of {} bytes; serialized {serial_b} + {serial_t}", b.size))
}

/// A host build whose instance names no structure fails with an error; nothing crashes.
fn bad_references(ctx: &Context) -> Check {
    let b = blas(ctx, Where::Host, &soup(10, 3), Default::default())?;
    for reference in [0xdead_beef_u64, b.handle.as_raw() ^ 0x40, 12345] {
        let mut g = Geometries::new();
        g.instances(ctx, Where::Host, &[InstanceRecord::new(reference, 0, [0.0; 3])], false).map_err(err)?;
        let r =
            Build { at: Where::Host, ty: TLAS, flags: Default::default(), geometries: &g, src: None }.new_accel(ctx);
        if r.is_ok() {
            return Err(format!("a TLAS over reference {reference:#x} was built"));
        }
    }
    // Destroyed handles are no longer valid references either.
    let stale = blas(ctx, Where::Host, &soup(10, 4), Default::default())?;
    let h = stale.handle.as_raw();
    drop(stale);
    let mut g = Geometries::new();
    g.instances(ctx, Where::Host, &[InstanceRecord::new(h, 0, [0.0; 3])], false).map_err(err)?;
    let built =
        Build { at: Where::Host, ty: TLAS, flags: Default::default(), geometries: &g, src: None }.new_accel(ctx);
    if built.is_ok() {
        return Err("a TLAS over a destroyed BLAS's handle was built".into());
    }
    Ok("garbage and stale handles refused".into())
}

fn main() {
    let icd = checks::icd_from_args("host_ops");
    let ctx = checks::context_or_exit("host_ops", &icd);
    println!("device: {}", ctx.info().name);
    if !ctx.info().host_commands {
        println!("accelerationStructureHostCommands is not supported: nothing to check");
        return;
    }
    let checks: &[checks::Check<_>] = &[
        ("host builds (now and deferred)", &builds),
        ("several infos in one deferred build", &many_infos),
        ("host updates", &updates),
        ("host copies, compaction, serialization", &copies),
        ("bad instance references", &bad_references),
    ];
    checks::run_checks_and_exit(&ctx, "host-command", checks, || {
        let deferred = vortex_examples::rawas::DEFERRED.load(std::sync::atomic::Ordering::Relaxed);
        if deferred == 0 {
            println!("FAIL no host command was really deferred");
            1
        } else {
            println!("{deferred} host commands were deferred and joined");
            0
        }
    });
}
