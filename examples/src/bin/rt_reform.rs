//! rt_reform: a ray-tracing pipeline whose warps diverge across hit groups, the workload of
//! the reformation ablation (`docs/TIMING.md` §7 (f)).
//!
//! `layers` layers of a `grid` x `grid` grid of unit quads (two triangles each), one
//! instance per quad; instance (x, y, layer) takes SBT record offset (x + y + layer) mod 4,
//! so each hit group is every fourth quad along a row and the 32 rays of a warp (8x4 of
//! them, one per cell) offer candidates of all four groups at once. The four hit groups
//! share a closest-hit shader and differ in their any-hit shader's length (2, 8, 24 and 64
//! rounds of hashing); three candidates in four are holes (`ignoreIntersectionEXT`), so a
//! ray passes several layers and its loop goes around several times. The rays fall
//! straight down, one per cell, off the quads' diagonals: the closest hit is checked
//! against the layer arithmetic on the CPU, and a checksum of every payload (with the
//! any-hit shaders' hash sums and invocation counts) is printed so runs can be compared.
//!
//! `rt_reform [--icd vortex|lavapipe|PATH] [--grid N] [--layers L]`; on Vortex the
//! extension is offered on the RT-unit architecture (docs/RTPIPELINE.md).

use ash::vk;
use vortex_examples::accel::{Indices, TriangleGeometry};
use vortex_examples::checks;
use vortex_examples::icd::Icd;
use vortex_examples::rtpipe::{Group, RtPipeline, Table};
use vortex_examples::{AccelerationStructure, Buffer, Context, Instance, Mat3x4};

const RGEN: &[u8] = include_bytes!("../../shaders/rt_reform.rgen.spv");
const RMISS: &[u8] = include_bytes!("../../shaders/rt_reform.rmiss.spv");
const RCHIT: &[u8] = include_bytes!("../../shaders/rt_reform.rchit.spv");
/// The four any-hit shaders, shortest first.
const RAHIT: [&[u8]; 4] = [
    include_bytes!("../../shaders/rt_reform_2.rahit.spv"),
    include_bytes!("../../shaders/rt_reform_8.rahit.spv"),
    include_bytes!("../../shaders/rt_reform_24.rahit.spv"),
    include_bytes!("../../shaders/rt_reform_64.rahit.spv"),
];
/// Quad side (cells are 1 wide): a ray at (0.35, 0.65) of its cell is inside, above the
/// diagonal, so it hits primitive 1.
const QUAD: f32 = 0.9;
const PRIM: i32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Payload {
    acc: u32,
    anyhits: u32,
    t: f32,
    instance: i32,
}

struct Args {
    icd: Icd,
    grid: u32,
    layers: u32,
}

fn args() -> Args {
    let mut rest = Vec::new();
    let (mut grid, mut layers) = (64u32, 8u32);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut num = |what: &str| -> u32 {
            it.next().and_then(|v| v.parse().ok()).filter(|&v| v > 0).unwrap_or_else(|| {
                eprintln!("rt_reform: {what} needs a positive number");
                std::process::exit(2);
            })
        };
        match a.as_str() {
            "--grid" => grid = num("--grid"),
            "--layers" => layers = num("--layers"),
            _ => rest.push(a),
        }
    }
    let icd = match Icd::from_args(rest.into_iter()) {
        Ok(Some(icd)) => icd,
        Ok(None) => {
            println!("usage: rt_reform [--icd vortex|lavapipe|PATH] [--grid N] [--layers L]");
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("rt_reform: {e}");
            std::process::exit(2);
        }
    };
    Args { icd, grid, layers }
}

fn main() {
    let a = args();
    let ctx = vortex_examples::rtpipe::context_or_exit("rt_reform", &a.icd);
    let (grid, layers) = (a.grid, a.layers);
    let list: &[checks::Check<String>] =
        &[("divergent hit groups: closest hits as the layers say", &|c| run(c, grid, layers))];
    checks::run_checks_and_exit(&ctx, "rt-reform", list, || 0);
}

fn err(e: vortex_examples::Error) -> String {
    e.to_string()
}

/// Instance index of cell (x, y) of `layer` (the order the TLAS lists them).
fn instance(grid: u32, x: u32, y: u32, layer: u32) -> u32 {
    (layer * grid + y) * grid + x
}

/// Whether the any-hit shaders ignore primitive `prim` of instance `inst`
/// (`rt_reform_common.glsl`).
fn hole(inst: i32, prim: i32) -> bool {
    (inst.wrapping_mul(7).wrapping_add(prim)) & 3 != 0
}

fn run(ctx: &Context, grid: u32, layers: u32) -> Result<String, String> {
    let e = err;
    let quad = TriangleGeometry {
        vertices: vec![[0.0, 0.0, 0.0], [QUAD, 0.0, 0.0], [QUAD, QUAD, 0.0], [0.0, QUAD, 0.0]],
        indices: Indices::U32(vec![0, 1, 2, 0, 2, 3]),
        transform: None,
        flags: vk::GeometryFlagsKHR::empty(),
    };
    let blas = AccelerationStructure::build_bottom(ctx, &[quad]).map_err(e)?;
    let mut instances = Vec::new();
    for layer in 0..layers {
        for y in 0..grid {
            for x in 0..grid {
                instances.push(Instance {
                    blas: 0,
                    transform: Mat3x4::translation(x as f32, y as f32, layer as f32),
                    custom_index: 0,
                    mask: 0xFF,
                    flags: vk::GeometryInstanceFlagsKHR::empty(),
                    sbt_offset: (x + y + layer) % 4,
                });
            }
        }
    }
    // The BLAS must outlive the TLAS that refers to it.
    let blases = [blas];
    let tlas = AccelerationStructure::build_top(ctx, &blases, &instances).map_err(e)?;
    let rays = (grid * grid) as usize;
    let out = Buffer::new(ctx, 16 * rays as u64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    let types = [vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, vk::DescriptorType::STORAGE_BUFFER];
    let bindings = vortex_examples::pipeline::set0(&types);
    let mut stages = vec![
        (vk::ShaderStageFlags::RAYGEN_KHR, RGEN),
        (vk::ShaderStageFlags::MISS_KHR, RMISS),
        (vk::ShaderStageFlags::CLOSEST_HIT_KHR, RCHIT),
    ];
    stages.extend(RAHIT.iter().map(|&s| (vk::ShaderStageFlags::ANY_HIT_KHR, s)));
    let mut groups = vec![Group::general(0), Group::general(1)];
    groups.extend((0..4).map(|k| Group::triangles(Some(2), Some(3 + k))));
    let table = Table { raygen: 0, miss: vec![1], hit: vec![2, 3, 4, 5] };
    let rt = RtPipeline::new(ctx, &stages, &groups, &table, &bindings, 8).map_err(e)?;
    rt.base.bind_acceleration_structure(0, &tlas);
    rt.base.bind_storage_buffer(1, &out);
    let push: Vec<u8> = [grid, layers].iter().flat_map(|v| v.to_le_bytes()).collect();
    ctx.submit_once(|cmd| rt.record_trace(ctx, cmd, &push, [grid, grid, 1])).map_err(e)?;

    let got: Vec<Payload> = out.read();
    let (mut bad, mut hits, mut anyhits, mut sum) = (Vec::new(), 0, 0u64, 0u64);
    let top = layers as f32 + 2.0;
    for (i, p) in got.iter().enumerate().take(rays) {
        let (x, y) = (i as u32 % grid, i as u32 / grid);
        // The topmost layer whose quad is not a hole, if any.
        let want = (0..layers).rev().map(|l| (l, instance(grid, x, y, l) as i32)).find(|&(_, k)| !hole(k, PRIM));
        let (t, inst) = want.map_or((-1.0, -1), |(l, k)| (top - l as f32, k));
        if p.instance != inst || (p.t - t).abs() > 1e-5 * t.abs().max(1.0) {
            bad.push(format!("ray {i}: got t {} instance {}, want t {t} instance {inst}", p.t, p.instance));
        }
        hits += (inst >= 0) as usize;
        anyhits += p.anyhits as u64;
        for w in [p.acc, p.anyhits, p.t.to_bits(), p.instance as u32] {
            sum = sum.wrapping_mul(0x100_0000_01b3).wrapping_add(w as u64);
        }
    }
    if !bad.is_empty() {
        return Err(format!("{} of {rays} rays differ; first: {}", bad.len(), bad[..bad.len().min(3)].join("; ")));
    }
    if hits == 0 || hits == rays {
        return Err(format!("{hits} of {rays} rays hit: the check needs both hits and misses"));
    }
    Ok(format!("{rays} rays, {hits} hits, {anyhits} any-hit calls, checksum {sum:016x}"))
}
