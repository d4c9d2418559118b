//! Acceleration-structure builders side by side: our ICD's fast (`PREFER_FAST_BUILD`) and
//! SAH (`PREFER_FAST_TRACE`) builders against lavapipe's, on the same triangles, through the
//! Vulkan loader. Per driver and builder it prints
//!
//! - build time (the best of `--reps` device builds, each its own submission) and
//!   throughput in million triangles per second;
//! - the SAH cost of the structure it built, read back from its serialized form
//!   (`vkCmdCopyAccelerationStructureToMemoryKHR`) and relative to a full-sweep SAH build of
//!   the same triangles (ours, forced with `VORTEX_BVH_BUILDER=sweep`);
//! - bytes per triangle (the compacted size, from a query pool);
//! - trace throughput: the same random rays through a one-instance TLAS over it, closest
//!   hit by ray query (the best of up to three dispatches), with a hit checksum that must
//!   agree across drivers.
//!
//! The SAH cost is the expected number of box tests plus triangle tests of a ray that hits
//! the root box (the surface-area model: a node is reached with probability area / root
//! area, a reached internal node tests every child box, a reached leaf every triangle),
//! computed from the boxes the structure really stores (for ours the dequantised child
//! boxes). Both formats are parsed here from their documented layouts (ours:
//! `docs/BVH.md`; lavapipe's binary BVH: Mesa's `lvp_acceleration_structure.h`); a format
//! we cannot read prints `-`.
//!
//! ```text
//! as_bench [--icds vortex,lavapipe] [--scenes soup,terrain] [--tris N] [--reps R] [--rays N]
//! as_bench --builds [--icds vortex,lavapipe] [--tris 10000,100000,1000000] [--reps R]
//!          [--flags fast-trace,fast-build,update,compaction,low-memory] [--rounds K] [--rays N]
//! ```
//! `--builds` prints, per size and build flag, every driver's cold (first in the process)
//! and warm (best of `--reps`) fence-to-fence BLAS build of an indexed sphere side by side,
//! cross-checked by tracing (`vortex_examples::buildbench`).
//! Each driver and builder runs in its own child process (the loader picks one driver per
//! process; a forced builder is an environment variable of the child).

use ash::vk;
use std::process::{Command, ExitCode};
use std::time::Instant;
use vortex_examples::rawas::{device_tlas, InstanceRecord};
use vortex_examples::{Buffer, ComputePipeline, Context, Icd, VkResultExt};

const TRACE: &[u8] = include_bytes!("../../shaders/trace_rays.spv");

/// A variant: which driver, which flags, which forced builder.
struct Variant {
    icd: &'static str,
    label: &'static str,
    fast: bool,
    /// `VORTEX_BVH_BUILDER` for the child.
    force: Option<&'static str>,
}

const VARIANTS: [Variant; 5] = [
    Variant { icd: "vortex", label: "vortex fast (LBVH)", fast: true, force: None },
    Variant { icd: "vortex", label: "vortex SAH", fast: false, force: None },
    Variant { icd: "vortex", label: "vortex full sweep", fast: false, force: Some("sweep") },
    Variant { icd: "lavapipe", label: "lavapipe FAST_BUILD", fast: true, force: None },
    Variant { icd: "lavapipe", label: "lavapipe FAST_TRACE", fast: false, force: None },
];

/// Deterministic xorshift.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The scene's triangles (flat vertex list) and rays (origin, direction).
type Ray = ([f32; 3], [f32; 3]);

fn scene(name: &str, n: usize, rays: usize) -> Result<(Vec<[f32; 3]>, Vec<Ray>), String> {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut v = Vec::with_capacity(3 * n);
    let mut out = Vec::with_capacity(rays);
    match name {
        // Triangles of size ~1 scattered uniformly in a 100^3 box, in random order.
        "soup" => {
            for _ in 0..n {
                let c = [r.next() * 100.0, r.next() * 100.0, r.next() * 100.0];
                for _ in 0..3 {
                    v.push([c[0] + r.next() - 0.5, c[1] + r.next() - 0.5, c[2] + r.next() - 0.5]);
                }
            }
            // From random points on a sphere around the box to random points inside it.
            for _ in 0..rays {
                let (u, w) = (r.next() * 2.0 - 1.0, r.next() * std::f32::consts::TAU);
                let s = (1.0 - u * u).sqrt();
                let o = [50.0 + 120.0 * s * w.cos(), 50.0 + 120.0 * s * w.sin(), 50.0 + 120.0 * u];
                let t = [r.next() * 100.0, r.next() * 100.0, r.next() * 100.0];
                out.push((o, [t[0] - o[0], t[1] - o[1], t[2] - o[2]]));
            }
        }
        // A heightfield (two triangles per grid cell) in scan order: sorted input.
        "terrain" => {
            let side = ((n / 2) as f64).sqrt().ceil() as usize;
            let h = |x: usize, z: usize| {
                let (x, z) = (x as f32 * 0.05, z as f32 * 0.05);
                3.0 * (x.sin() * z.cos()) + (2.3 * x + 0.7).sin() * (1.9 * z).cos()
            };
            'grid: for z in 0..side {
                for x in 0..side {
                    let p = |dx: usize, dz: usize| [(x + dx) as f32, h(x + dx, z + dz), (z + dz) as f32];
                    for t in [[p(0, 0), p(1, 0), p(1, 1)], [p(0, 0), p(1, 1), p(0, 1)]] {
                        if v.len() == 3 * n {
                            break 'grid;
                        }
                        v.extend_from_slice(&t);
                    }
                }
            }
            // Downward rays from random points above the terrain, tilted at random.
            for _ in 0..rays {
                let o = [r.next() * side as f32, 20.0, r.next() * side as f32];
                out.push((o, [r.next() - 0.5, -1.0, r.next() - 0.5]));
            }
        }
        _ => return Err(format!("unknown scene {name:?} (soup, terrain)")),
    }
    Ok((v, out))
}

/// What one variant measured.
#[derive(Default, Clone)]
struct Measured {
    build_s: f64,
    compacted: u64,
    cost: Option<f64>,
    trace_s: f64,
    hits: u64,
    checksum: u64,
}

fn worker(icd: &str, scene_name: &str, n: usize, reps: u32, rays: usize, fast: bool) -> Result<(), String> {
    let build_only = std::env::var_os("AS_BENCH_BUILD_ONLY").is_some();
    let e = |e: vortex_examples::Error| e.to_string();
    let ctx = Context::new(&Icd::parse(icd)).map_err(e)?;
    let (verts, ray_list) = scene(scene_name, n, rays)?;
    let n = verts.len() / 3;
    let input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    let vb = Buffer::with_data(&ctx, &verts, input).map_err(e)?;
    let flags = if fast {
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_BUILD
    } else {
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE
    } | vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
    let tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
        .vertex_format(vk::Format::R32G32B32_SFLOAT)
        .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: vb.address() })
        .vertex_stride(12)
        .max_vertex(3 * n as u32 - 1)
        .index_type(vk::IndexType::NONE_KHR);
    let g = [vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
        .flags(vk::GeometryFlagsKHR::OPAQUE)
        .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri })];
    let ty = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
    let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).flags(flags).geometries(&g);
    let mut sz = vk::AccelerationStructureBuildSizesInfoKHR::default();
    // SAFETY: a valid build description with one count per geometry.
    unsafe {
        ctx.accel().get_acceleration_structure_build_sizes(
            vk::AccelerationStructureBuildTypeKHR::DEVICE,
            &info,
            &[n as u32],
            &mut sz,
        )
    };
    let storage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
    let store = Buffer::new(&ctx, sz.acceleration_structure_size, storage).map_err(e)?;
    let scratch = Buffer::new(&ctx, sz.build_scratch_size + 256, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let create = vk::AccelerationStructureCreateInfoKHR::default()
        .buffer(store.handle())
        .size(sz.acceleration_structure_size)
        .ty(ty);
    // SAFETY: the buffer is bound and large enough.
    let blas = unsafe { ctx.accel().create_acceleration_structure(&create, None) }.vk("vkCreateAS").map_err(e)?;
    let ranges = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(n as u32)];
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let info = info
            .dst_acceleration_structure(blas)
            .scratch_data(vk::DeviceOrHostAddressKHR { device_address: scratch.address().next_multiple_of(256) });
        let cmd = ctx.begin_commands().map_err(e)?;
        // SAFETY: valid infos, ranges, scratch and destination.
        unsafe { ctx.accel().cmd_build_acceleration_structures(cmd, &[info], &[&ranges]) };
        let t = Instant::now();
        ctx.submit_and_wait(cmd).map_err(e)?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    if build_only {
        println!("build {best}");
        return Ok(());
    }
    // Compacted and serialization sizes through a query pool.
    let dev = ctx.device();
    let kinds = [
        vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR,
        vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR,
    ];
    let mut sizes = [0u64; 2];
    for (k, q) in kinds.iter().enumerate() {
        let pool_info = vk::QueryPoolCreateInfo::default().query_type(*q).query_count(1);
        // SAFETY: a valid device; the pool is destroyed below.
        let pool = unsafe { dev.create_query_pool(&pool_info, None) }.vk("vkCreateQueryPool").map_err(e)?;
        let barrier = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR)
            .dst_access_mask(vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR);
        ctx.submit_once(|cmd| unsafe {
            dev.cmd_reset_query_pool(cmd, pool, 0, 1);
            dev.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
                vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
            ctx.accel().cmd_write_acceleration_structures_properties(cmd, &[blas], *q, pool, 0);
        })
        .map_err(e)?;
        let mut out = [0u64; 1];
        // SAFETY: one 64-bit result, waited for.
        unsafe {
            dev.get_query_pool_results(pool, 0, &mut out, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT)
        }
        .vk("vkGetQueryPoolResults")
        .map_err(e)?;
        sizes[k] = out[0];
        unsafe { dev.destroy_query_pool(pool, None) };
    }
    // The serialized structure, for its SAH cost.
    let ser = Buffer::new(&ctx, sizes[1].max(64), vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let copy = vk::CopyAccelerationStructureToMemoryInfoKHR::default()
        .src(blas)
        .dst(vk::DeviceOrHostAddressKHR { device_address: ser.address() })
        .mode(vk::CopyAccelerationStructureModeKHR::SERIALIZE);
    // SAFETY: a built source and a destination of the serialization size.
    ctx.submit_once(|cmd| unsafe { ctx.accel().cmd_copy_acceleration_structure_to_memory(cmd, &copy) }).map_err(e)?;
    let blob = ser.read::<u8>();
    let cost = sah_cost(&blob);
    // Trace: one instance of the BLAS.
    let addr_info = vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(blas);
    // SAFETY: a valid structure.
    let blas_addr = unsafe { ctx.accel().get_acceleration_structure_device_address(&addr_info) };
    let (tlas, _geoms) = device_tlas(&ctx, &[InstanceRecord::new(blas_addr, 0, [0.0; 3])]).map_err(e)?;
    let ray_data: Vec<[f32; 8]> =
        ray_list.iter().map(|(o, d)| [o[0], o[1], o[2], 0.0, d[0], d[1], d[2], 1.0e4]).collect();
    let ray_buf = Buffer::with_data(&ctx, &ray_data, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let hits = Buffer::new(&ctx, 16 * ray_data.len() as u64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let bindings = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let pipe = ComputePipeline::new(&ctx, TRACE, &bindings, 4).map_err(e)?;
    pipe.bind_acceleration_structure_handle(0, tlas.handle);
    pipe.bind_storage_buffer(1, &ray_buf);
    pipe.bind_storage_buffer(2, &hits);
    let count = ray_data.len() as u32;
    // The best of up to three dispatches, fewer when one takes long (lavapipe on the soup).
    let (mut trace_s, mut total) = (f64::INFINITY, 0.0);
    for _ in 0..3 {
        let cmd = ctx.begin_commands().map_err(e)?;
        pipe.record_dispatch(cmd, &count.to_le_bytes(), [count.div_ceil(32), 1, 1]);
        let t = Instant::now();
        ctx.submit_and_wait(cmd).map_err(e)?;
        let s = t.elapsed().as_secs_f64();
        trace_s = trace_s.min(s);
        total += s;
        if total > 5.0 {
            break;
        }
    }
    let raw = hits.read::<u32>();
    let (mut nhit, mut sum) = (0u64, 0u64);
    for h in raw.chunks_exact(4) {
        if h[1] as i32 >= 0 {
            nhit += 1;
            sum = sum.wrapping_mul(31).wrapping_add(h[1] as u64);
        }
    }
    // SAFETY: nothing uses the structure any more.
    unsafe { ctx.accel().destroy_acceleration_structure(blas, None) };
    println!("result {best} {} {} {trace_s} {nhit} {sum}", sizes[0], cost.map_or("-".to_string(), |c| c.to_string()));
    Ok(())
}

fn rd_u32(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

fn rd_f32(b: &[u8], o: usize) -> Option<f32> {
    rd_u32(b, o).map(f32::from_bits)
}

fn half_area(lo: [f32; 3], hi: [f32; 3]) -> f64 {
    let d: [f64; 3] = std::array::from_fn(|a| (hi[a] as f64 - lo[a] as f64).max(0.0));
    d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
}

/// The SAH cost of a serialized BLAS (see the module comment), if its format is one we read.
fn sah_cost(blob: &[u8]) -> Option<f64> {
    // Vulkan's serialization header: 2 UUIDs, sizes, handle count, handles; then the
    // structure.
    let handles = u64::from_le_bytes(blob.get(48..56)?.try_into().ok()?) as usize;
    let body = blob.get(56 + 8 * handles..)?;
    if rd_u32(body, 0)? == u32::from_le_bytes(*b"VXAS") {
        vortex_cost(body)
    } else {
        lavapipe_cost(body)
    }
}

/// Our CW-BVH (`docs/BVH.md` §1).
fn vortex_cost(s: &[u8]) -> Option<f64> {
    let width = *s.get(7)? as usize;
    let root = rd_u32(s, 8)?;
    let (lo, hi) = ([rd_f32(s, 16)?, rd_f32(s, 20)?, rd_f32(s, 24)?], [rd_f32(s, 28)?, rd_f32(s, 32)?, rd_f32(s, 36)?]);
    let root_area = half_area(lo, hi);
    if root == 0 || root_area <= 0.0 {
        return Some(0.0);
    }
    let mut cost = 0.0;
    // (record offset, probability of reaching it)
    let mut stack = vec![((root & 0x7fff_ffff) as usize * 16, 1.0f64)];
    while let Some((off, p)) = stack.pop() {
        let rec = s.get(off..)?;
        match rec[0] {
            1 => {
                let count = rec[1] as usize;
                cost += p * count as f64;
                let origin = [rd_f32(rec, 4)?, rd_f32(rec, 8)?, rd_f32(rec, 12)?];
                let exp = [rec[16] as i8, rec[17] as i8, rec[18] as i8];
                for c in 0..count {
                    let word = rd_u32(rec, 20 + 4 * c)?;
                    let q = |base: usize, a: usize| {
                        let scale = f32::from_bits(((exp[a] as i32 + 127) as u32) << 23);
                        origin[a] + rec[base + 3 * c + a] as f32 * scale
                    };
                    let clo = [q(20 + 4 * width, 0), q(20 + 4 * width, 1), q(20 + 4 * width, 2)];
                    let chi = [q(20 + 7 * width, 0), q(20 + 7 * width, 1), q(20 + 7 * width, 2)];
                    stack.push(((word & 0x7fff_ffff) as usize * 16, half_area(clo, chi) / root_area));
                }
            }
            2 => cost += p * rec[1] as f64,
            _ => return None,
        }
    }
    Some(cost)
}

/// lavapipe's binary BVH: a 40-byte header (bounds, sizes, instance count, leaf offset),
/// the root box node right after it; box nodes hold both children's boxes and ids (byte
/// offset | type in the low 2 bits: 0 triangle, 1 box node; 0xffffffff none).
fn lavapipe_cost(s: &[u8]) -> Option<f64> {
    let (lo, hi) = ([rd_f32(s, 0)?, rd_f32(s, 4)?, rd_f32(s, 8)?], [rd_f32(s, 12)?, rd_f32(s, 16)?, rd_f32(s, 20)?]);
    let root_area = half_area(lo, hi);
    if root_area <= 0.0 {
        return Some(0.0);
    }
    let mut cost = 0.0;
    let mut stack = vec![(40usize | 1, 1.0f64)];
    let mut visited = 0usize;
    while let Some((id, p)) = stack.pop() {
        visited += 1;
        if visited > s.len() / 8 {
            return None; // not a tree: not the layout we think
        }
        match id & 3 {
            0 => cost += p,
            1 => {
                let off = id & !3;
                let mut kids = 0;
                for c in 0..2 {
                    let child = rd_u32(s, off + 48 + 4 * c)?;
                    if child == u32::MAX {
                        continue;
                    }
                    kids += 1;
                    let b = off + 24 * c;
                    let clo = [rd_f32(s, b)?, rd_f32(s, b + 4)?, rd_f32(s, b + 8)?];
                    let chi = [rd_f32(s, b + 12)?, rd_f32(s, b + 16)?, rd_f32(s, b + 20)?];
                    stack.push((child as usize, half_area(clo, chi) / root_area));
                }
                cost += p * kids as f64;
            }
            _ => return None,
        }
    }
    Some(cost)
}

fn measure(v: &Variant, scene: &str, n: usize, reps: u32, rays: usize) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(["--worker", v.icd, "--scenes", scene, "--tris", &n.to_string(), "--reps", &reps.to_string()]);
    cmd.args(["--rays", &rays.to_string()]);
    if v.fast {
        cmd.arg("--fast");
    }
    match v.force {
        Some(b) => cmd.env("VORTEX_BVH_BUILDER", b),
        None => cmd.env_remove("VORTEX_BVH_BUILDER"),
    };
    let out = cmd.output().map_err(|e| format!("cannot start the {} worker: {e}", v.icd))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!(
            "{} on {scene} failed ({}): {}",
            v.label,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    for line in stdout.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let ["result", b, c, cost, t, h, s] = f.as_slice() {
            return Ok(Measured {
                build_s: b.parse().unwrap_or(f64::NAN),
                compacted: c.parse().unwrap_or(0),
                cost: cost.parse().ok(),
                trace_s: t.parse().unwrap_or(f64::NAN),
                hits: h.parse().unwrap_or(0),
                checksum: s.parse().unwrap_or(0),
            });
        }
    }
    Err(format!("{} printed no result:\n{stdout}", v.label))
}

fn main() -> ExitCode {
    let (mut icds, mut scenes) = ("vortex,lavapipe".to_string(), "soup,terrain".to_string());
    let (mut tris, mut reps, mut rays) = (None, 5u32, None);
    let (mut worker_icd, mut fast) = (None, false);
    let (mut builds, mut flags, mut rounds) = (false, None, 1u32);
    let mut build_worker = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().unwrap_or_default();
        match a.as_str() {
            "--icds" => icds = value(),
            "--scenes" => scenes = value(),
            "--tris" => tris = Some(value()),
            "--reps" => reps = value().parse().unwrap_or(reps),
            "--rays" => rays = value().parse().ok(),
            "--builds" => builds = true,
            "--flags" => flags = Some(value()),
            "--rounds" => rounds = value().parse().unwrap_or(rounds),
            "--build-worker" => build_worker.push(String::new()),
            w @ ("--build-tris" | "--build-flag" | "--build-reps" | "--build-rays") => {
                build_worker.extend([w.to_string(), value()])
            }
            "--worker" => worker_icd = Some(value()),
            "--fast" => fast = true,
            other => {
                eprintln!("as_bench: unexpected argument {other:?}\nusage: as_bench [--icds vortex,lavapipe] [--scenes soup,terrain] [--tris N] [--reps R] [--rays N]");
                eprintln!("       as_bench --builds [--icds vortex,lavapipe] [--tris 10000,100000,1000000] [--reps R] [--flags fast-trace,...] [--rounds K] [--rays N]");
                return ExitCode::from(2);
            }
        }
    }
    if let (Some(icd), false) = (&worker_icd, build_worker.is_empty()) {
        return match vortex_examples::buildbench::worker(&Icd::parse(icd), &build_worker) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let list = tris.as_deref().unwrap_or(if builds { "10000,100000,1000000" } else { "1000000" });
    let sizes: Vec<usize> = match list.split(',').map(|t| t.parse()).collect() {
        Ok(v) => v,
        Err(_) => {
            eprintln!("as_bench: --tris wants triangle counts separated by commas, got {list:?}");
            return ExitCode::from(2);
        }
    };
    if builds {
        return builds_table(&icds, &sizes, flags.as_deref(), reps, rays.unwrap_or(4096), rounds);
    }
    let (n, rays) = (sizes[0], rays.unwrap_or(65_536));
    if let Some(icd) = worker_icd {
        return match worker(&icd, &scenes, n, reps, rays, fast) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let wanted: Vec<&str> = icds.split(',').collect();
    // Each driver name selects its rows of VARIANTS; one that selects none is a mistake, not
    // an empty table.
    if let Some(bad) = wanted.iter().find(|w| !VARIANTS.iter().any(|v| v.icd == **w)) {
        eprintln!("as_bench: unknown driver {bad:?} in --icds (known: vortex, lavapipe)");
        return ExitCode::from(2);
    }
    let mut ok = true;
    for s in scenes.split(',') {
        println!("\nscene {s}: {n} triangles, {rays} rays, best of {reps} builds");
        println!(
            "{:<22} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}",
            "driver / builder", "build ms", "M tris/s", "SAH cost", "vs sweep", "B/tri", "trace ms", "M rays/s", "hits"
        );
        let mut results: Vec<(&Variant, Measured)> = Vec::new();
        for v in VARIANTS.iter().filter(|v| wanted.contains(&v.icd)) {
            match measure(v, s, n, reps, rays) {
                Ok(m) => results.push((v, m)),
                Err(e) => {
                    eprintln!("{e}");
                    ok = false;
                }
            }
        }
        let sweep = results.iter().find(|(v, _)| v.force == Some("sweep")).and_then(|(_, m)| m.cost);
        for (v, m) in &results {
            let cost = m.cost.map_or("-".into(), |c| format!("{c:.2}"));
            let rel = match (m.cost, sweep) {
                (Some(c), Some(s)) if s > 0.0 => format!("{:.3}", c / s),
                _ => "-".into(),
            };
            println!(
                "{:<22} {:>9.1} {:>9.2} {:>9} {:>9} {:>7.1} {:>9.1} {:>9.3} {:>7}",
                v.label,
                m.build_s * 1e3,
                n as f64 / m.build_s / 1e6,
                cost,
                rel,
                m.compacted as f64 / n as f64,
                m.trace_s * 1e3,
                rays as f64 / m.trace_s / 1e6,
                m.hits
            );
        }
        // Every driver must find the same hits.
        if let Some((_, first)) = results.first() {
            if results.iter().any(|(_, m)| (m.hits, m.checksum) != (first.hits, first.checksum)) {
                eprintln!("as_bench: the drivers disagree on the hits of scene {s}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `--builds`: the build table of `vortex_examples::buildbench` on the drivers of `--icds`.
fn builds_table(icds: &str, sizes: &[usize], flags: Option<&str>, reps: u32, rays: usize, rounds: u32) -> ExitCode {
    let all: Vec<&str> = vortex_examples::buildbench::FLAGS.iter().map(|f| f.0).collect();
    let flags: Vec<&str> = flags.map_or(all, |f| f.split(',').collect());
    if let Some(bad) = flags.iter().find(|f| vortex_examples::buildbench::flag_bits(f).is_none()) {
        eprintln!("as_bench: unknown build flag {bad:?} (fast-trace, fast-build, update, compaction, low-memory)");
        return ExitCode::from(2);
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("as_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let run = |icd: &str, args: &[String]| -> Result<String, String> {
        let out = Command::new(&exe)
            .args(["--worker", icd, "--build-worker"])
            .args(args)
            .env_remove("VORTEX_BVH_BUILDER")
            .output()
            .map_err(|e| format!("cannot start the {icd} worker: {e}"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let icds: Vec<&str> = icds.split(',').collect();
    if vortex_examples::buildbench::table(&icds, sizes, &flags, reps, rays, rounds, run) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
