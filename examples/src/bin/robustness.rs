//! Bad input must give a clear log line and a Vulkan error, and the process must survive:
//!
//! 1. garbage SPIR-V (random words, a truncated module, a wrong magic number) is refused at
//!    pipeline creation with an error code;
//! 2. a shader writing far outside its buffer makes the submission report
//!    `VK_ERROR_DEVICE_LOST`;
//! 3. a shader that never ends is stopped by the watchdog, also `VK_ERROR_DEVICE_LOST`
//!    (after the 20 s idle limit by default; run with a short `VORTEX_WATCHDOG_IDLE_MS` or
//!    `VORTEX_WATCHDOG_MS`);
//! 4. a malformed serialized acceleration structure: refused by the host
//!    `vkCopyMemoryToAccelerationStructureKHR` (`VK_ERROR_UNKNOWN`, a log line; a garbage
//!    size in the header is not trusted), a device fault (`VK_ERROR_DEVICE_LOST`) from
//!    `vkCmdCopyMemoryToAccelerationStructureKHR`;
//! 5. an acceleration-structure build whose vertices lie outside any allocation: a device
//!    fault;
//! 6. a build into an acceleration structure too small for it: `VK_ERROR_OUT_OF_DEVICE_MEMORY`
//!    from a host build, a device fault from a device build.
//!
//! These are checks of the Vortex ICD's fault containment. lavapipe is not the oracle here:
//! it crashes on out-of-bounds device addresses and has no watchdog, so on any other
//! driver the program reports the checks as skipped.
//!
//! Usage: robustness [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::rawas::{Accel, Build, Geometries, Where};
use vortex_examples::{checks, Buffer, ComputePipeline, Context, Error};

const OOB: &[u8] = include_bytes!("../../shaders/oob_write.spv");
const RUNAWAY: &[u8] = include_bytes!("../../shaders/runaway.spv");

fn device_lost(r: &Result<(), Error>) -> bool {
    matches!(r, Err(Error::Vulkan { result: vk::Result::ERROR_DEVICE_LOST, .. }))
}

/// Garbage SPIR-V: each variant must fail pipeline creation, not crash.
fn garbage_spirv(ctx: &Context) -> Result<(), String> {
    let valid = OOB.to_vec();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = Vec::new();
    for _ in 0..256 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        random.extend_from_slice(&(rng as u32).to_le_bytes());
    }
    let mut magic_ok_rest_random = valid[..20].to_vec();
    magic_ok_rest_random.extend_from_slice(&random[..400]);
    let mut bad_magic = valid.clone();
    bad_magic[0] ^= 0xFF;
    let cases: [(&str, Vec<u8>); 4] = [
        ("random words", random),
        ("truncated module", valid[..(valid.len() / 2) & !3].to_vec()),
        ("valid header, random body", magic_ok_rest_random),
        ("wrong magic number", bad_magic),
    ];
    for (name, bytes) in cases {
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        match ComputePipeline::from_words(ctx, &words, &[vk::DescriptorType::STORAGE_BUFFER], 4) {
            Ok(_) => return Err(format!("{name}: pipeline creation succeeded on garbage SPIR-V")),
            Err(e) => println!("  garbage SPIR-V ({name}): refused: {e}"),
        }
    }
    Ok(())
}

fn out_of_bounds(ctx: &Context) -> Result<(), String> {
    let buf = Buffer::new(ctx, 256, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(|e| e.to_string())?;
    let pipe = ComputePipeline::new(ctx, OOB, &[vk::DescriptorType::STORAGE_BUFFER], 4).map_err(|e| e.to_string())?;
    pipe.bind_storage_buffer(0, &buf);
    let stride: u32 = 1 << 26;
    let r = ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &stride.to_le_bytes(), [1, 1, 1]));
    if !device_lost(&r) {
        return Err(format!("expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  out-of-bounds write: {}", r.unwrap_err());
    Ok(())
}

fn runaway(ctx: &Context) -> Result<(), String> {
    let buf = Buffer::new(ctx, 64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(|e| e.to_string())?;
    let pipe =
        ComputePipeline::new(ctx, RUNAWAY, &[vk::DescriptorType::STORAGE_BUFFER], 0).map_err(|e| e.to_string())?;
    pipe.bind_storage_buffer(0, &buf);
    let t = std::time::Instant::now();
    let r = ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &[], [1, 1, 1]));
    if !device_lost(&r) {
        return Err(format!("expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  runaway kernel: {} after {:.1} s", r.unwrap_err(), t.elapsed().as_secs_f64());
    Ok(())
}

const BLAS: vk::AccelerationStructureTypeKHR = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;

/// A few triangles, as build input on the device or the host.
fn triangles(ctx: &Context, at: Where, n: usize) -> Result<Geometries, String> {
    let tris: Vec<[[f32; 3]; 3]> = (0..n)
        .map(|i| {
            let x = i as f32 * 0.01;
            [[x, 0.0, 0.0], [x + 0.01, 0.0, 0.0], [x, 0.01, 0.0]]
        })
        .collect();
    let mut g = Geometries::new();
    g.triangles(ctx, at, &tris, vk::GeometryFlagsKHR::OPAQUE).map_err(|e| e.to_string())?;
    Ok(g)
}

fn build(ctx: &Context, at: Where, g: &Geometries, dst: &Accel) -> Result<(), Error> {
    Build { at, ty: BLAS, flags: Default::default(), geometries: g, src: None }.run(ctx, dst)
}

/// Host deserialization of broken blobs is refused; a device one faults.
fn bad_serialized(ctx: &Context) -> Result<(), String> {
    let err = |e: Error| e.to_string();
    let host = ctx.info().host_commands;
    let g = triangles(ctx, Where::Device, 100)?;
    let src = Build { at: Where::Device, ty: BLAS, flags: Default::default(), geometries: &g, src: None }
        .new_accel(ctx)
        .map_err(err)?;
    let dst = Accel::new(ctx, BLAS, src.size).map_err(err)?;
    let acc = ctx.accel();
    let dev = ctx.device().handle();
    if host {
        // A real blob, serialized on the host.
        let mut size = 0u64;
        // SAFETY: one structure, 8 bytes of output.
        unsafe {
            (acc.fp().write_acceleration_structures_properties_khr)(
                dev,
                1,
                &src.handle,
                vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR,
                8,
                (&mut size as *mut u64).cast(),
                8,
            )
        }
        .result()
        .map_err(|e| e.to_string())?;
        let mut blob = vec![0u64; (size as usize).div_ceil(8)];
        let info = vk::CopyAccelerationStructureToMemoryInfoKHR::default()
            .src(src.handle)
            .dst(vk::DeviceOrHostAddressKHR { host_address: blob.as_mut_ptr().cast() })
            .mode(vk::CopyAccelerationStructureModeKHR::SERIALIZE);
        // SAFETY: the blob holds the serialization size.
        let r = unsafe {
            (acc.fp().copy_acceleration_structure_to_memory_khr)(dev, vk::DeferredOperationKHR::null(), &info)
        };
        if r != vk::Result::SUCCESS {
            return Err(format!("serializing a valid structure: {r:?}"));
        }
        let mut huge = blob.clone();
        huge[4] = u64::MAX / 2; // serialized size
        let mut body = blob.clone();
        let n = body.len();
        for w in &mut body[8..n] {
            *w = 0xdead_beef_dead_beef;
        }
        let mut other = blob.clone();
        other[0] ^= 1; // driver UUID
        let garbage: Vec<u64> = (0..blob.len() as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        for (name, b) in [
            ("a garbage serialized size", &huge),
            ("a garbage body", &body),
            ("another driver's UUID", &other),
            ("random bytes", &garbage),
        ] {
            let info = vk::CopyMemoryToAccelerationStructureInfoKHR::default()
                .src(vk::DeviceOrHostAddressConstKHR { host_address: b.as_ptr().cast() })
                .dst(dst.handle)
                .mode(vk::CopyAccelerationStructureModeKHR::DESERIALIZE);
            // SAFETY: a readable blob of the real serialization size at the source.
            let r = unsafe {
                (acc.fp().copy_memory_to_acceleration_structure_khr)(dev, vk::DeferredOperationKHR::null(), &info)
            };
            if r == vk::Result::SUCCESS {
                return Err(format!("host deserialization of a blob with {name} succeeded"));
            }
            println!("  host deserialization, {name}: refused with {r:?}");
        }
    }
    // On the device: garbage in a buffer.
    let words: Vec<u64> = (0..64u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let buf = Buffer::with_data(ctx, &words, vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS).map_err(err)?;
    let info = vk::CopyMemoryToAccelerationStructureInfoKHR::default()
        .src(vk::DeviceOrHostAddressConstKHR { device_address: buf.address() })
        .dst(dst.handle)
        .mode(vk::CopyAccelerationStructureModeKHR::DESERIALIZE);
    // SAFETY: cmd is recording; the source buffer outlives the submission.
    let r = ctx.submit_once(|cmd| unsafe { acc.cmd_copy_memory_to_acceleration_structure(cmd, &info) });
    if !device_lost(&r) {
        return Err(format!("device deserialization of garbage: expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  device deserialization of garbage: {}", r.unwrap_err());
    Ok(())
}

/// A device build whose vertex address is far outside any allocation faults.
fn unmapped_geometry(ctx: &Context) -> Result<(), String> {
    let mut g = triangles(ctx, Where::Device, 100)?;
    let dst = Accel::new(ctx, BLAS, 1 << 16).map_err(|e| e.to_string())?;
    // SAFETY: a triangles geometry (set by `triangles`).
    unsafe { g.geometries[0].geometry.triangles.vertex_data.device_address += 1 << 44 };
    let r = build(ctx, Where::Device, &g, &dst);
    if !device_lost(&r) {
        return Err(format!("expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  build from unmapped vertices: {}", r.unwrap_err());
    Ok(())
}

/// Builds into a structure far smaller than the size query asked for: a host build reports
/// VK_ERROR_OUT_OF_DEVICE_MEMORY, a device build faults.
fn too_small(ctx: &Context) -> Result<(), String> {
    let small = Accel::new(ctx, BLAS, 256).map_err(|e| e.to_string())?;
    if ctx.info().host_commands {
        let g = triangles(ctx, Where::Host, 1000)?;
        match build(ctx, Where::Host, &g, &small) {
            Err(Error::Vulkan { result: vk::Result::ERROR_OUT_OF_DEVICE_MEMORY, .. }) => {
                println!("  host build into 256 bytes: VK_ERROR_OUT_OF_DEVICE_MEMORY")
            }
            r => return Err(format!("host build into 256 bytes: expected VK_ERROR_OUT_OF_DEVICE_MEMORY, got {r:?}")),
        }
    }
    let g = triangles(ctx, Where::Device, 1000)?;
    let r = build(ctx, Where::Device, &g, &small);
    if !device_lost(&r) {
        return Err(format!("device build into 256 bytes: expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  device build into 256 bytes: {}", r.unwrap_err());
    Ok(())
}

fn main() {
    let icd = checks::icd_from_args("robustness");
    type Check = fn(&Context) -> Result<(), String>;
    let checks: [(&str, Check); 6] = [
        ("garbage SPIR-V", garbage_spirv),
        ("out-of-bounds write", out_of_bounds),
        ("runaway kernel", runaway),
        ("malformed serialized acceleration structure", bad_serialized),
        ("acceleration-structure build from unmapped geometry", unmapped_geometry),
        ("acceleration structure too small for its build", too_small),
    ];
    let total = checks.len();
    let mut failed = 0;
    for (name, check) in checks {
        // A fresh device per check: most leave theirs lost on purpose.
        let ctx = checks::context_or_exit("robustness", &icd);
        if !ctx.info().name.contains("Vortex") {
            println!(
                "skipped: the robustness checks target the Vortex ICD ({} has no fault containment to test)",
                ctx.info().name
            );
            return;
        }
        match check(&ctx) {
            Ok(()) => println!("PASS {name}"),
            Err(e) => {
                println!("FAIL {name}: {e}");
                failed += 1;
            }
        }
    }
    println!("{}/{total} robustness checks passed", total - failed);
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
