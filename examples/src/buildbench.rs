//! Bottom-level builds through the Vulkan API as a client sees them, shared by `as_bench
//! --builds` and `bench --workloads build`.
//!
//! A worker (one process per driver, build flag and size) uploads an indexed UV sphere
//! (`scene::sphere`, `u32` indices, as a client's mesh arrives), creates the structure and
//! its scratch in fresh memory (`Buffer::for_device_writes`: nothing has touched it), and
//! times `vkCmdBuildAccelerationStructuresKHR` from `vkQueueSubmit` to the fence: the first
//! build of the process (*cold*, what a client that builds once sees) and the best of
//! `reps` rebuilds into the same memory (*warm*). Then it traces random rays at the sphere
//! through a one-instance TLAS over the structure and prints the hit count and a checksum
//! of the hit primitives, which every driver must agree on.
//!
//! Beside each wall time it reports the CPU time all of the process's threads spent
//! meanwhile (`/proc/self/task/*/schedstat`), which a machine shared with other jobs
//! disturbs far less than the wall time (a build that waits for a core it shares still
//! counts only what it ran).
//!
//! Worker output: `device NAME`, `triangles N`, `sizes AS SCRATCH`, `cold SECONDS CPU`,
//! `warm SECONDS CPU`, `check HITS CHECKSUM`.

use crate::rawas::{device_tlas, InstanceRecord};
use crate::{scene, Buffer, ComputePipeline, Context, Icd, Mesh, VkResultExt};
use ash::vk;
use std::time::Instant;

const TRACE: &[u8] = include_bytes!("../shaders/trace_rays.spv");

type Flags = vk::BuildAccelerationStructureFlagsKHR;

/// Every `VkBuildAccelerationStructureFlagBitsKHR` a BLAS build can ask for, by the name
/// the command lines use.
pub const FLAGS: [(&str, Flags); 5] = [
    ("fast-trace", Flags::PREFER_FAST_TRACE),
    ("fast-build", Flags::PREFER_FAST_BUILD),
    ("update", Flags::ALLOW_UPDATE),
    ("compaction", Flags::ALLOW_COMPACTION),
    ("low-memory", Flags::LOW_MEMORY),
];

/// The flag bits of a name in [`FLAGS`].
pub fn flag_bits(name: &str) -> Option<Flags> {
    FLAGS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// The worker's arguments (after the binary's own worker switch and `--icd`).
pub fn worker_args(tris: usize, flag: &str, reps: u32, rays: usize) -> Vec<String> {
    ["--build-tris", &tris.to_string(), "--build-flag", flag, "--build-reps", &reps.to_string()]
        .into_iter()
        .chain(["--build-rays", &rays.to_string()])
        .map(String::from)
        .collect()
}

/// What one worker measured.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub device: String,
    pub triangles: u64,
    pub cold: f64,
    pub warm: f64,
    /// CPU seconds of the cold build and the least of the warm ones.
    pub cold_cpu: f64,
    pub warm_cpu: f64,
    pub hits: u64,
    pub checksum: u64,
}

/// Parses a worker's output.
pub fn parse(out: &str) -> Option<Measured> {
    let mut m = Measured::default();
    let mut seen = 0;
    for line in out.lines() {
        if let Some(d) = line.strip_prefix("device ") {
            m.device = d.to_string();
        }
        match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["triangles", t] => m.triangles = t.parse().ok()?,
            ["cold", s, c] => (m.cold, m.cold_cpu, seen) = (s.parse().ok()?, c.parse().ok()?, seen | 1),
            ["warm", s, c] => (m.warm, m.warm_cpu, seen) = (s.parse().ok()?, c.parse().ok()?, seen | 2),
            ["check", h, c] => (m.hits, m.checksum, seen) = (h.parse().ok()?, c.parse().ok()?, seen | 4),
            _ => {}
        }
    }
    (seen == 7).then_some(m)
}

/// Deterministic xorshift in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The worker: `args` are [`worker_args`]' (any order).
pub fn worker(icd: &Icd, args: &[String]) -> Result<(), String> {
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    let number = |name: &str| value(name).and_then(|v| v.parse::<usize>().ok()).ok_or(format!("{name} N is missing"));
    let (tris, reps, rays) = (number("--build-tris")?, number("--build-reps")? as u32, number("--build-rays")?);
    let flag = value("--build-flag").ok_or("--build-flag is missing")?;
    let flags = flag_bits(flag).ok_or(format!("unknown build flag {flag:?}"))?;
    let ctx = Context::new(icd).map_err(err)?;
    println!("device {}", ctx.info().name);
    let mesh = scene::sphere(tris);
    println!("triangles {}", mesh.triangle_count());
    let input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    let vb = Buffer::with_data(&ctx, &mesh.positions, input).map_err(err)?;
    let ib = Buffer::with_data(&ctx, &mesh.indices, input).map_err(err)?;
    let blas = Blas::new(&ctx, &vb, &ib, &mesh, flags)?;
    let mut times = Vec::with_capacity(reps as usize + 1);
    for _ in 0..=reps {
        times.push(blas.build(&ctx)?);
    }
    let least = |f: fn(&(f64, f64)) -> f64| times[1..].iter().map(f).fold(f64::INFINITY, f64::min);
    println!("cold {} {}", times[0].0, times[0].1);
    println!("warm {} {}", least(|t| t.0), least(|t| t.1));
    let (hits, checksum) = trace(&ctx, blas.address(&ctx), rays)?;
    println!("check {hits} {checksum}");
    Ok(())
}

/// One BLAS over the mesh, its storage and scratch in memory nothing has touched yet.
struct Blas<'a> {
    handle: vk::AccelerationStructureKHR,
    geometry: [vk::AccelerationStructureGeometryKHR<'a>; 1],
    flags: Flags,
    count: u32,
    scratch: Buffer,
    _storage: Buffer,
}

impl<'a> Blas<'a> {
    fn new(ctx: &Context, vb: &Buffer, ib: &Buffer, mesh: &Mesh, flags: Flags) -> Result<Blas<'a>, String> {
        let tri = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
            .vertex_format(vk::Format::R32G32B32_SFLOAT)
            .vertex_data(vk::DeviceOrHostAddressConstKHR { device_address: vb.address() })
            .vertex_stride(12)
            .max_vertex(mesh.positions.len() as u32 - 1)
            .index_type(vk::IndexType::UINT32)
            .index_data(vk::DeviceOrHostAddressConstKHR { device_address: ib.address() });
        let geometry = [vk::AccelerationStructureGeometryKHR::default()
            .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
            .flags(vk::GeometryFlagsKHR::OPAQUE)
            .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: tri })];
        let count = mesh.triangle_count() as u32;
        let ty = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default().ty(ty).flags(flags).geometries(&geometry);
        let mut sz = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: a valid build description with one count per geometry.
        unsafe {
            ctx.accel().get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &[count],
                &mut sz,
            )
        };
        println!("sizes {} {}", sz.acceleration_structure_size, sz.build_scratch_size);
        let usage = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR;
        let storage = Buffer::for_device_writes(ctx, sz.acceleration_structure_size, usage).map_err(err)?;
        let scratch_usage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let scratch = Buffer::for_device_writes(ctx, sz.build_scratch_size + 256, scratch_usage).map_err(err)?;
        let create = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(storage.handle())
            .size(sz.acceleration_structure_size)
            .ty(ty);
        // SAFETY: the buffer is bound and large enough.
        let handle =
            unsafe { ctx.accel().create_acceleration_structure(&create, None) }.vk("vkCreateAS").map_err(err)?;
        Ok(Blas { handle, geometry, flags, count, scratch, _storage: storage })
    }

    /// One build, submitted alone: seconds from the submission to its fence, and the CPU
    /// seconds the process spent meanwhile.
    fn build(&self, ctx: &Context) -> Result<(f64, f64), String> {
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
            .flags(self.flags)
            .geometries(&self.geometry)
            .dst_acceleration_structure(self.handle)
            .scratch_data(vk::DeviceOrHostAddressKHR { device_address: self.scratch.address().next_multiple_of(256) });
        let ranges = [vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(self.count)];
        let cmd = ctx.begin_commands().map_err(err)?;
        // SAFETY: valid infos, ranges, scratch and destination.
        unsafe { ctx.accel().cmd_build_acceleration_structures(cmd, &[info], &[&ranges]) };
        let cpu = cpu_seconds();
        let t = Instant::now();
        ctx.submit_and_wait(cmd).map_err(err)?;
        let wall = t.elapsed().as_secs_f64();
        Ok((wall, cpu_seconds() - cpu))
    }

    fn address(&self, ctx: &Context) -> u64 {
        let info = vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(self.handle);
        // SAFETY: a valid structure.
        unsafe { ctx.accel().get_acceleration_structure_device_address(&info) }
    }
}

/// CPU seconds the process's live threads have run (the first field of each thread's
/// `schedstat`, in nanoseconds); 0 where /proc does not say.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 * 1e-9
}

/// `rays` random rays from a shell around the unit sphere at random points inside it,
/// closest hit through a one-instance TLAS over `blas`: (hits, checksum of hit primitives).
fn trace(ctx: &Context, blas: u64, rays: usize) -> Result<(u64, u64), String> {
    let (tlas, _geoms) = device_tlas(ctx, &[InstanceRecord::new(blas, 0, [0.0; 3])]).map_err(err)?;
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let ray_data: Vec<[f32; 8]> = (0..rays)
        .map(|_| {
            let (u, w) = (r.next() * 2.0 - 1.0, r.next() * std::f32::consts::TAU);
            let s = (1.0 - u * u).sqrt();
            let o = [3.0 * s * w.cos(), 3.0 * s * w.sin(), 3.0 * u];
            let t = [r.next() * 1.6 - 0.8, r.next() * 1.6 - 0.8, r.next() * 1.6 - 0.8];
            [o[0], o[1], o[2], 0.0, t[0] - o[0], t[1] - o[1], t[2] - o[2], 1.0e4]
        })
        .collect();
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let ray_buf = Buffer::with_data(ctx, &ray_data, storage).map_err(err)?;
    let hits = Buffer::new(ctx, 16 * rays.max(1) as u64, storage).map_err(err)?;
    let bindings = [
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
    ];
    let pipe = ComputePipeline::new(ctx, TRACE, &bindings, 4).map_err(err)?;
    pipe.bind_acceleration_structure_handle(0, tlas.handle);
    pipe.bind_storage_buffer(1, &ray_buf);
    pipe.bind_storage_buffer(2, &hits);
    let count = rays as u32;
    ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &count.to_le_bytes(), [count.div_ceil(32), 1, 1])).map_err(err)?;
    let (mut n, mut sum) = (0u64, 0u64);
    for h in hits.read::<u32>().chunks_exact(4) {
        if h[1] as i32 >= 0 {
            n += 1;
            sum = sum.wrapping_mul(31).wrapping_add(h[1] as u64);
        }
    }
    Ok((n, sum))
}

/// The table: for each size and flag, every driver's cold and warm build, wall and CPU
/// (each the minimum over `rounds` workers, run driver after driver so that they share
/// the machine's load), then the ratios of the others' times to the first driver's (above
/// 1: the first is faster), and the cross-check. `run(icd, args)` runs a worker and
/// returns its output. True if something failed.
pub fn table(
    icds: &[&str],
    sizes: &[usize],
    flags: &[&str],
    reps: u32,
    rays: usize,
    rounds: u32,
    run: impl Fn(&str, &[String]) -> Result<String, String>,
) -> bool {
    println!(
        "\nBLAS builds through the API: an indexed sphere, fence to fence; cold = the first build of a \
         process into fresh memory, warm = the best of {reps} rebuilds; min of {rounds} round(s); CPU = all \
         threads of the process; {rays} rays cross-checked"
    );
    println!(
        "{:>9} {:<11} {:<28} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "tris", "flag", "driver", "cold ms", "warm ms", "cold CPU", "warm CPU", "hits"
    );
    let mut failed = false;
    for &n in sizes {
        for &flag in flags {
            let mut best: Vec<Option<Measured>> = vec![None; icds.len()];
            for _ in 0..rounds.max(1) {
                for (k, icd) in icds.iter().enumerate() {
                    match run(icd, &worker_args(n, flag, reps, rays)).and_then(|o| parse(&o).ok_or(o)) {
                        Ok(m) => {
                            let b = best[k].get_or_insert_with(|| m.clone());
                            (b.cold, b.warm) = (b.cold.min(m.cold), b.warm.min(m.warm));
                            (b.cold_cpu, b.warm_cpu) = (b.cold_cpu.min(m.cold_cpu), b.warm_cpu.min(m.warm_cpu));
                        }
                        Err(e) => {
                            println!("  ! {icd}, {n} triangles, {flag}: {}", e.trim());
                            failed = true;
                        }
                    }
                }
            }
            failed |= rows(icds, n, flag, &best);
        }
    }
    failed
}

/// A size and flag's rows; true if a driver is missing, ran on the wrong device or
/// disagrees with the first.
fn rows(icds: &[&str], n: usize, flag: &str, best: &[Option<Measured>]) -> bool {
    let tris = best.iter().flatten().map(|m| m.triangles).next().unwrap_or(n as u64);
    let mut failed = false;
    for (k, (icd, m)) in icds.iter().zip(best).enumerate() {
        let (size, flag) = if k == 0 { (tris.to_string(), flag) } else { (String::new(), "") };
        let Some(m) = m else {
            println!("{size:>9} {flag:<11} {icd:<28} {:>9}", "-");
            failed = true;
            continue;
        };
        println!(
            "{size:>9} {flag:<11} {icd:<28} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>7}",
            m.cold * 1e3,
            m.warm * 1e3,
            m.cold_cpu * 1e3,
            m.warm_cpu * 1e3,
            m.hits
        );
        let ours = m.device.starts_with("Vortex");
        if ours != icd.starts_with("vortex") && !icd.ends_with(".json") {
            println!("  ! the {icd} worker ran on {:?}", m.device);
            failed = true;
        }
        let Some(f) = &best[0] else { continue };
        if k > 0 {
            println!(
                "{:>9} {:<11} {:<28} {:>8.2}x {:>8.2}x {:>8.2}x {:>8.2}x",
                "",
                "",
                format!("{icd}/{}", icds[0]),
                m.cold / f.cold,
                m.warm / f.warm,
                m.cold_cpu / f.cold_cpu,
                m.warm_cpu / f.warm_cpu
            );
        }
        if (m.hits, m.checksum) != (f.hits, f.checksum) {
            println!("  ! {icd} hits {} (checksum {}), {} {} ({})", m.hits, m.checksum, icds[0], f.hits, f.checksum);
            failed = true;
        }
    }
    failed
}
