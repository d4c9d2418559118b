//! rq_smoke: traces a 64x64 grid of camera rays through a small instanced scene (bunnies
//! and a ground quad) with `rayQueryEXT` in two compute passes, and checks every result
//! against a brute-force CPU reference.
//!
//! Exit status: 0 when every ray matches, 1 on any mismatch, 2 on an error.

mod check;
mod reference;
mod scene;

use ash::vk;
use check::{check, Pass};
use reference::{Hit, Reference};
use scene::{Camera, Ray, Scene};
use std::process::ExitCode;
use std::time::Instant;
use vortex_examples::{AccelerationStructure, Buffer, ComputePipeline, Context, Error, Icd, Result};

/// Rays per side; the shaders' workgroups are LOCAL_SIZE x LOCAL_SIZE.
const GRID: u32 = 64;
const LOCAL_SIZE: u32 = 8;
/// Mismatches printed in full per pass.
const SHOWN_MISMATCHES: usize = 5;

const CLOSEST_HIT_SPV: &[u8] = include_bytes!("../../../shaders/rq_smoke_closest.spv");
const ANY_HIT_SPV: &[u8] = include_bytes!("../../../shaders/rq_smoke_anyhit.spv");

const USAGE: &str = "usage: rq_smoke [--icd vortex|lavapipe|PATH_TO_ICD_JSON]
  --icd  the Vulkan driver to run on (default: vortex, i.e. json/vortex_icd.json)
";

/// One ray's result as the shaders write it (`HitRecord` in shaders/rq_smoke_common.glsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HitRecord {
    pub committed_type: u32,
    pub t: f32,
    pub primitive_index: i32,
    pub instance_id: i32,
    pub custom_index: i32,
    pub geometry_index: i32,
    pub barycentrics: [f32; 2],
    pub front_face: u32,
    pub candidates: u32,
}

const _: () = assert!(std::mem::size_of::<HitRecord>() == 40);

fn main() -> ExitCode {
    let icd = match Icd::from_args(std::env::args().skip(1)) {
        Ok(Some(icd)) => icd,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprint!("rq_smoke: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&icd) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("rq_smoke: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(icd: &Icd) -> Result<bool> {
    let ctx = Context::new(icd)?;
    let info = ctx.info();
    println!(
        "device: {} (driver {}, {}; Vulkan {}; manifest {})",
        info.name,
        info.driver_name,
        info.driver_info,
        info.api_version_string(),
        ctx.manifest().display()
    );

    let scene = Scene::new()?;
    let blases = scene
        .blases
        .iter()
        .map(|geometries| AccelerationStructure::build_bottom(&ctx, geometries))
        .collect::<Result<Vec<_>>>()?;
    let tlas = AccelerationStructure::build_top(&ctx, &blases, &scene.instances)?;
    let triangles: usize = scene.blases.iter().flatten().map(|g| g.triangle_count()).sum();
    println!("scene: {} BLASes with {triangles} triangles, {} instances", blases.len(), scene.instances.len());

    let rays: Vec<Ray> = (0..GRID * GRID).map(|i| scene.camera.ray(i % GRID, i / GRID, GRID, GRID)).collect();
    let start = Instant::now();
    let reference = Reference::new(&scene);
    let hits: Vec<Vec<Hit>> = rays.iter().map(|ray| reference.intersect_all(ray)).collect();
    println!("reference: {} rays brute-forced in {:.1} ms", rays.len(), start.elapsed().as_secs_f64() * 1e3);

    let mut all_match = true;
    for (pass, spirv) in [(Pass::ClosestHit, CLOSEST_HIT_SPV), (Pass::AnyHit, ANY_HIT_SPV)] {
        all_match &= run_pass(&ctx, &tlas, &scene.camera, pass, spirv, &rays, &hits)?;
    }
    Ok(all_match)
}

/// Runs one pass on the device, compares it with the reference and prints the summary.
/// Returns whether every ray matched.
fn run_pass(
    ctx: &Context,
    tlas: &AccelerationStructure,
    camera: &Camera,
    pass: Pass,
    spirv: &[u8],
    rays: &[Ray],
    hits: &[Vec<Hit>],
) -> Result<bool> {
    let bindings = [vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, vk::DescriptorType::STORAGE_BUFFER];
    let pipeline = ComputePipeline::new(ctx, spirv, &bindings, std::mem::size_of::<Camera>() as u32)?;
    let size = rays.len() * std::mem::size_of::<HitRecord>();
    let results = Buffer::new(ctx, size as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    pipeline.bind_acceleration_structure(0, tlas);
    pipeline.bind_storage_buffer(1, &results);

    let groups = GRID / LOCAL_SIZE;
    let start = Instant::now();
    ctx.submit_once(|cmd| pipeline.record_dispatch(cmd, bytemuck::bytes_of(camera), [groups, groups, 1]))?;
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;

    let records: Vec<HitRecord> = results.read();
    if records.len() != rays.len() {
        return Err(Error::msg(format!("read back {} records for {} rays", records.len(), rays.len())));
    }
    let (mut matched, mut hit, mut ambiguous, mut candidates) = (0, 0, 0, 0u64);
    let mut mismatches = Vec::new();
    for (i, (record, ray_hits)) in records.iter().zip(hits).enumerate() {
        candidates += u64::from(record.candidates);
        match check(pass, record, ray_hits) {
            Ok(outcome) => {
                matched += 1;
                hit += usize::from(outcome.hit);
                ambiguous += usize::from(outcome.ambiguous);
            }
            Err(why) => mismatches.push((i, why)),
        }
    }
    println!(
        "{} pass: {matched}/{} rays match ({wall_ms:.2} ms wall for the dispatch; {hit} hits, {} misses, \
         {ambiguous} ambiguous, {candidates} candidates offered)",
        pass.name(),
        rays.len(),
        matched - hit,
    );
    for (i, why) in mismatches.iter().take(SHOWN_MISMATCHES) {
        let ray = &rays[*i];
        println!("  mismatch at ray {i} (x {}, y {}): {why}", *i as u32 % GRID, *i as u32 / GRID);
        println!("    ray: origin {:?} direction {:?} t in [{}, {}]", ray.origin, ray.direction, ray.tmin, ray.tmax);
        println!("    GPU: {:?}", records[*i]);
    }
    if mismatches.len() > SHOWN_MISMATCHES {
        println!("  ... and {} more mismatches", mismatches.len() - SHOWN_MISMATCHES);
    }
    Ok(mismatches.is_empty())
}
