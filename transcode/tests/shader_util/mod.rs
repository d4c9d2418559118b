//! Shared helpers for the shader compiler tests: GLSL -> SPIR-V with glslangValidator,
//! SPIR-V assembly with spirv-as, and a harness that runs compiled kernels on the device
//! model (descriptor sets, kernel arguments, buffers, images) and reads results back.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use vortex_model::abi::dcr::*;
use vortex_model::abi::format;
use vortex_model::abi::isa::{Instr, Op};
use vortex_model::abi::kernel::{desc, kargs, ImageDesc};
use vortex_model::config::DeviceConfig;
use vortex_model::device::Device;
use vortex_transcode::shader::{
    compile, descriptor_type as dt, optimize_from_env, BindingLayout, CompileError, CompileOptions, CompiledKernel,
    ResourceLayout,
};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn tmp(ext: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("vx-shader-test-{}-{n}.{ext}", std::process::id()))
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok()
}

/// Compiles a GLSL compute shader; `None` (with a printed reason) if glslangValidator is
/// missing. Panics with glslang's log if the GLSL does not compile.
pub fn glsl(src: &str) -> Option<Vec<u32>> {
    glsl_for(src, "vulkan1.2")
}

/// Same for another target environment (`vulkan1.3` emits SPIR-V 1.6: `OpExecutionModeId
/// LocalSizeId`, `OpTerminateInvocation`, ...).
pub fn glsl_for(src: &str, env: &str) -> Option<Vec<u32>> {
    glsl_stage(src, "comp", env)
}

/// A GLSL shader of another stage (`vert`, `frag`: the file extension glslang reads the stage
/// from).
pub fn glsl_stage(src: &str, stage: &str, env: &str) -> Option<Vec<u32>> {
    if !have("glslangValidator") {
        eprintln!("skipped: glslangValidator not installed");
        return None;
    }
    let (input, output) = (tmp(stage), tmp("spv"));
    std::fs::write(&input, src).unwrap();
    let out = Command::new("glslangValidator")
        .args(["--target-env", env, "-V", "-o"])
        .arg(&output)
        .arg(&input)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&input);
    assert!(out.status.success(), "glslang failed:\n{}\n{src}", String::from_utf8_lossy(&out.stdout));
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_file(&output);
    Some(words(&bytes))
}

/// GLSL compiled and then optimized by `spirv-opt -O` (which turns locals into OpPhi webs,
/// unrolls, and merges blocks): the same shader exercises very different SPIR-V.
pub fn glsl_opt(src: &str) -> Option<Vec<u32>> {
    let w = glsl(src)?;
    if !have("spirv-opt") {
        eprintln!("skipped: spirv-opt not installed");
        return None;
    }
    let (input, output) = (tmp("spv"), tmp("spv"));
    std::fs::write(&input, w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let out = Command::new("spirv-opt").arg("-O").arg(&input).arg("-o").arg(&output).output().unwrap();
    let _ = std::fs::remove_file(&input);
    assert!(out.status.success(), "spirv-opt failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_file(&output);
    Some(words(&bytes))
}

/// Assembles SPIR-V text; `None` if spirv-as is missing.
pub fn spvasm(src: &str, env: &str) -> Option<Vec<u32>> {
    if !have("spirv-as") {
        eprintln!("skipped: spirv-as not installed");
        return None;
    }
    let (input, output) = (tmp("spvasm"), tmp("spv"));
    std::fs::write(&input, src).unwrap();
    let out = Command::new("spirv-as").args(["--target-env", env, "-o"]).arg(&output).arg(&input).output().unwrap();
    let _ = std::fs::remove_file(&input);
    assert!(out.status.success(), "spirv-as failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&output).unwrap();
    let _ = std::fs::remove_file(&output);
    Some(words(&bytes))
}

/// A resource bound at (set, binding).
#[derive(Clone, Debug)]
pub enum Res {
    Storage(Vec<u8>),
    Uniform(Vec<u8>),
    /// A dynamic storage buffer: contents and the dynamic offset to apply.
    StorageDynamic(Vec<u8>, u32),
    /// An array of storage buffers.
    StorageArray(Vec<Vec<u8>>),
    /// A storage image: format, view type, extent (w, h, depth-or-layers), initial bytes.
    Image {
        format: u32,
        view: u32,
        extent: [u32; 3],
        data: Vec<u8>,
    },
    /// Acceleration structures by device address (0 = null).
    Accel(Vec<u64>),
    /// A TLAS built from the scene into device memory, bound as an acceleration structure.
    Tlas(Scene),
    /// An array of acceleration structures; `None` is a null descriptor.
    TlasArray(Vec<Option<Scene>>),
    /// An array of storage images of one format, view type and extent, with their contents.
    ImageArray {
        format: u32,
        view: u32,
        extent: [u32; 3],
        data: Vec<Vec<u8>>,
    },
    /// A storage buffer whose first 8 bytes are the device address of the TLAS built from the
    /// scene (as a `uvec2`), followed by `extra` zero bytes.
    TlasAddress(Scene, usize),
}

/// A bottom-level structure: triangles and/or AABBs with their geometry flags.
#[derive(Clone, Debug, Default)]
pub struct Blas {
    pub tris: Vec<[[f32; 3]; 3]>,
    pub aabbs: Vec<([f32; 3], [f32; 3])>,
    /// `VkGeometryFlagsKHR` (1 = opaque).
    pub flags: u32,
}

/// An instance of `blas` in the TLAS.
#[derive(Clone, Debug)]
pub struct Inst {
    pub blas: usize,
    pub o2w: [f32; 12],
    pub custom: u32,
    pub flags: u8,
}

#[derive(Clone, Debug, Default)]
pub struct Scene {
    pub blases: Vec<Blas>,
    pub instances: Vec<Inst>,
}

pub const IDENTITY: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];

/// The ray-tracing architecture the tests build for and compile against:
/// `VORTEX_RT_ARCH` (rtu by default), so the ray-query tests run on either.
pub fn rt_arch() -> vortex_model::config::RtArch {
    let v = std::env::var("VORTEX_RT_ARCH").unwrap_or_default();
    if v.is_empty() {
        return vortex_model::config::RtArch::default();
    }
    vortex_model::config::RtArch::parse(&v).expect("VORTEX_RT_ARCH")
}

/// Builds `scene` into `mem` with the AS transcoder; returns the TLAS address.
pub fn build_scene(mem: &vortex_model::mem::AddressSpace, scene: &Scene) -> u64 {
    use vortex_transcode::accel::testkit::{InstanceDesc, R32G32B32_SFLOAT};
    use vortex_transcode::accel::{
        build, build_sizes_for, index_type, BuildRange, BuildRequest, Geometry, GeometryInput, GeometryKind, Level,
        Mode,
    };
    let width = vortex_model::config::RtuConfig::default().bvh_width;
    let options = vortex_transcode::accel::Options::for_arch(rt_arch(), width, Default::default());
    let upload = |bytes: &[u8]| -> u64 {
        let r = mem.allocate(bytes.len().max(16) as u64).unwrap();
        mem.snapshot().write(r.base, bytes).unwrap();
        r.base
    };
    let make = |level: Level, geoms: Vec<(GeometryKind, GeometryInput)>| -> u64 {
        let kinds: Vec<(GeometryKind, u32)> = geoms.iter().map(|(k, g)| (*k, g.range.primitive_count)).collect();
        let sizes = build_sizes_for(level, &kinds, 0, &options);
        let dst = mem.allocate(sizes.as_size).unwrap().base;
        let req = BuildRequest {
            level,
            flags: 0,
            mode: Mode::Build,
            dst,
            dst_size: sizes.as_size,
            scratch: 0,
            geometries: geoms.into_iter().map(|(_, g)| g).collect(),
        };
        build(&mem.snapshot(), &req, &options).expect("AS build");
        dst
    };
    let range = |n: usize| BuildRange { primitive_count: n as u32, ..BuildRange::default() };
    let blases: Vec<u64> = scene
        .blases
        .iter()
        .map(|b| {
            let mut geoms = Vec::new();
            if !b.tris.is_empty() {
                let bytes: Vec<u8> = b.tris.iter().flatten().flatten().flat_map(|v| v.to_le_bytes()).collect();
                let geometry = Geometry::Triangles {
                    vertex_format: R32G32B32_SFLOAT,
                    vertex_data: upload(&bytes),
                    vertex_stride: 12,
                    max_vertex: (3 * b.tris.len() - 1) as u32,
                    index_type: index_type::NONE_KHR,
                    index_data: 0,
                    transform_data: 0,
                };
                geoms.push((
                    GeometryKind::Triangles,
                    GeometryInput { geometry, flags: b.flags, range: range(b.tris.len()) },
                ));
            }
            if !b.aabbs.is_empty() {
                let bytes: Vec<u8> =
                    b.aabbs.iter().flat_map(|(lo, hi)| lo.iter().chain(hi).flat_map(|v| v.to_le_bytes())).collect();
                let geometry = Geometry::Aabbs { data: upload(&bytes), stride: 24 };
                geoms.push((
                    GeometryKind::Aabbs,
                    GeometryInput { geometry, flags: b.flags, range: range(b.aabbs.len()) },
                ));
            }
            make(Level::Bottom, geoms)
        })
        .collect();
    let insts: Vec<u8> = scene
        .instances
        .iter()
        .flat_map(|i| {
            let mut d = InstanceDesc::new(blases[i.blas], i.o2w);
            d.custom = i.custom;
            d.flags = i.flags;
            d.bytes()
        })
        .collect();
    let geometry = Geometry::Instances { data: upload(&insts), array_of_pointers: false };
    make(
        Level::Top,
        vec![(GeometryKind::Instances, GeometryInput { geometry, flags: 0, range: range(scene.instances.len()) })],
    )
}

impl Res {
    fn descriptor_type(&self) -> u32 {
        match self {
            Res::Storage(_) | Res::StorageArray(_) => dt::STORAGE_BUFFER,
            Res::Uniform(_) => dt::UNIFORM_BUFFER,
            Res::TlasAddress(..) => dt::STORAGE_BUFFER,
            Res::Tlas(_) | Res::TlasArray(_) => dt::ACCELERATION_STRUCTURE,
            Res::ImageArray { .. } => dt::STORAGE_IMAGE,
            Res::StorageDynamic(..) => dt::STORAGE_BUFFER_DYNAMIC,
            Res::Image { .. } => dt::STORAGE_IMAGE,
            Res::Accel(_) => dt::ACCELERATION_STRUCTURE,
        }
    }
    fn count(&self) -> u32 {
        match self {
            Res::StorageArray(v) => v.len() as u32,
            Res::Accel(v) => v.len() as u32,
            Res::TlasArray(v) => v.len() as u32,
            Res::ImageArray { data, .. } => data.len() as u32,
            _ => 1,
        }
    }
}

pub struct Binding {
    pub set: u32,
    pub binding: u32,
    pub res: Res,
}

pub fn b(set: u32, binding: u32, res: Res) -> Binding {
    Binding { set, binding, res }
}

/// The pipeline layout the harness uses: per set, bindings in binding order, packed.
pub fn layout(bindings: &[Binding], push: u32) -> ResourceLayout {
    let mut sorted: Vec<&Binding> = bindings.iter().collect();
    sorted.sort_by_key(|b| (b.set, b.binding));
    let mut out = ResourceLayout { bindings: Vec::new(), push_constant_bytes: push };
    let (mut set, mut off, mut dynamic) = (u32::MAX, 0u32, 0u32);
    for b in sorted {
        if b.set != set {
            set = b.set;
            off = 0;
        }
        let is_dyn = matches!(b.res, Res::StorageDynamic(..));
        out.bindings.push(BindingLayout {
            set: b.set,
            binding: b.binding,
            descriptor_type: b.res.descriptor_type(),
            count: b.res.count(),
            offset: off,
            dynamic_index: is_dyn.then_some(dynamic),
        });
        if is_dyn {
            dynamic += 1;
        }
        off += b.res.count() * desc::BYTES as u32;
    }
    out
}

/// Outcome of one dispatch.
pub struct Run {
    pub kernel: CompiledKernel,
    /// Final contents of every buffer/image, in `bindings` order (buffer arrays flattened;
    /// acceleration structures leave an empty entry).
    pub data: Vec<Vec<u8>>,
}

impl Run {
    pub fn u32s(&self, i: usize) -> Vec<u32> {
        self.data[i].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
    pub fn i32s(&self, i: usize) -> Vec<i32> {
        self.u32s(i).into_iter().map(|v| v as i32).collect()
    }
    pub fn f32s(&self, i: usize) -> Vec<f32> {
        self.u32s(i).into_iter().map(f32::from_bits).collect()
    }
}

pub fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn bytes_i32(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn config(threads: u32) -> DeviceConfig {
    DeviceConfig {
        num_threads: threads,
        cores_per_cluster: 2,
        socket_size: 2,
        watchdog_ms: 20_000,
        ..Default::default()
    }
}

/// Compiles `words` for entry `main` against `bindings`; every kernel that compiles is
/// checked for well-placed reconvergence points.
pub fn build(
    words: &[u32],
    bindings: &[Binding],
    push: u32,
    spec: &[(u32, Vec<u8>)],
) -> Result<CompiledKernel, CompileError> {
    build_robust(words, bindings, push, spec, false)
}

/// [`build`], with robust buffer access on or off.
pub fn build_robust(
    words: &[u32],
    bindings: &[Binding],
    push: u32,
    spec: &[(u32, Vec<u8>)],
    robust: bool,
) -> Result<CompiledKernel, CompileError> {
    let mut opts = CompileOptions::entry("main");
    opts.robust_buffer_access = robust;
    opts.target.ray_query = vortex_transcode::shader::RayQueryLowering::for_arch(rt_arch());
    opts.optimize = optimize_from_env();
    opts.layout = layout(bindings, push);
    opts.specialization = spec.iter().cloned().collect();
    let k = compile(words, &opts)?;
    if let Err(e) = check_reconvergence(&k.code) {
        panic!("{e}\n{}", k.disassemble());
    }
    Ok(k)
}

/// Successor instruction indices of `pc` in a VX program.
pub fn successors(code: &[Instr], pc: usize) -> Vec<usize> {
    let i = &code[pc];
    match i.op {
        Op::Jmp => vec![i.imm as usize],
        Op::Bra => vec![i.imm as usize, i.imm2 as usize],
        Op::Exit | Op::Trap => vec![],
        _ => vec![pc + 1],
    }
}

/// Every `BRA`'s reconvergence point must post-dominate it: no path from the branch may reach
/// the kernel's exit (its last `EXIT`) without passing through the reconvergence point
/// (traps end the dispatch and a fragment kernel's other `EXIT`s end a discarded lane, so
/// paths into them are fine).
pub fn check_reconvergence(code: &[Instr]) -> Result<(), String> {
    let exit = code.iter().rposition(|i| i.op == Op::Exit);
    for (pc, i) in code.iter().enumerate() {
        if i.op != Op::Bra {
            continue;
        }
        let r = i.imm3 as usize;
        let mut seen = vec![false; code.len()];
        let mut stack: Vec<usize> = successors(code, pc);
        while let Some(n) = stack.pop() {
            if n == r || n >= code.len() || seen[n] {
                continue;
            }
            seen[n] = true;
            if Some(n) == exit {
                return Err(format!("branch @{pc} reaches exit @{n} without passing its reconvergence point @{r}"));
            }
            stack.extend(successors(code, n));
        }
    }
    Ok(())
}

/// Compiles and runs `words` on a device with `threads` lanes per warp, `grid` workgroups.
pub fn run_words(
    words: &[u32],
    bindings: &[Binding],
    grid: [u32; 3],
    push: &[u8],
    spec: &[(u32, Vec<u8>)],
    threads: u32,
) -> Run {
    run_words_robust(words, bindings, grid, push, spec, threads, false)
}

/// [`run_words`], with robust buffer access on or off (on: the device's null window too).
pub fn run_words_robust(
    words: &[u32],
    bindings: &[Binding],
    grid: [u32; 3],
    push: &[u8],
    spec: &[(u32, Vec<u8>)],
    threads: u32,
    robust: bool,
) -> Run {
    let kernel = match build_robust(words, bindings, push.len() as u32, spec, robust) {
        Ok(k) => k,
        Err(e) => panic!("compile failed: {e}"),
    };
    if std::env::var("VORTEX_DUMP").is_ok_and(|v| v.contains("kernels")) {
        eprintln!("{}", kernel.disassemble());
    }
    let mut dev = Device::new(config(threads)).unwrap();
    let mem = dev.memory().clone();
    mem.set_null_descriptor(robust);
    let alloc = |bytes: &[u8]| -> u64 {
        let r = mem.allocate(bytes.len().max(16) as u64).unwrap();
        mem.snapshot().write(r.base, bytes).unwrap();
        r.base
    };
    let mut k = vec![0u8; kargs::BYTES];
    let locations = bind(&mem, bindings, &layout(bindings, push.len() as u32), &mut k);
    for i in 0..3 {
        k[kargs::NUM_GROUPS + 4 * i..kargs::NUM_GROUPS + 4 * i + 4].copy_from_slice(&grid[i].to_le_bytes());
    }
    k[kargs::PUSH..kargs::PUSH + push.len()].copy_from_slice(push);
    let param = alloc(&k);
    let pc = alloc(&kernel.image(1));
    let launch =
        Launch { pc, param, grid, block: kernel.local_size, lmem_bytes: kernel.lmem_bytes, cluster: [1, 1, 1] };
    for (a, v) in launch.kmu_writes(threads) {
        dev.dcr_write(a, v).unwrap();
    }
    if let Err(f) = dev.start() {
        panic!("dispatch faulted: {f:?}\n{}", kernel.disassemble());
    }
    let snap = mem.snapshot();
    let mut data = Vec::new();
    for locs in locations {
        for (a, len) in locs {
            let mut v = vec![0u8; len];
            if len > 0 {
                snap.read(a, &mut v).unwrap();
            }
            data.push(v);
        }
    }
    Run { kernel, data }
}

/// Allocates every resource of `bindings` in `mem` and writes the descriptor sets (laid out by
/// `layout`) and their addresses, and any dynamic offsets, into the kernel arguments `k`.
/// Returns each binding's (address, bytes) per descriptor, for reading results back.
pub fn bind(
    mem: &vortex_model::mem::AddressSpace,
    bindings: &[Binding],
    layout: &ResourceLayout,
    k: &mut [u8],
) -> Vec<Vec<(u64, usize)>> {
    let alloc = |bytes: &[u8]| -> u64 {
        let r = mem.allocate(bytes.len().max(16) as u64).unwrap();
        mem.snapshot().write(r.base, bytes).unwrap();
        r.base
    };
    // Descriptor sets.
    let max_set = bindings.iter().map(|b| b.set).max().unwrap_or(0);
    let mut sets: Vec<Vec<u8>> = vec![vec![0u8; 64 * 64]; max_set as usize + 1];
    let mut locations: Vec<Vec<(u64, usize)>> = Vec::new();
    for bnd in bindings {
        let bl = layout.bindings.iter().find(|l| l.set == bnd.set && l.binding == bnd.binding).unwrap();
        let set = &mut sets[bnd.set as usize];
        let at = |i: u32| (bl.offset + i * desc::BYTES as u32) as usize;
        let mut locs = Vec::new();
        match &bnd.res {
            Res::Storage(data) | Res::Uniform(data) => {
                let a = alloc(data);
                set[at(0)..at(0) + 8].copy_from_slice(&a.to_le_bytes());
                set[at(0) + 8..at(0) + 16].copy_from_slice(&(data.len() as u64).to_le_bytes());
                set[at(0) + 16..at(0) + 24].copy_from_slice(&(data.len() as u64).to_le_bytes());
                locs.push((a, data.len()));
            }
            Res::StorageDynamic(data, dynoff) => {
                let a = alloc(data);
                let range = data.len() as u64 - *dynoff as u64;
                set[at(0)..at(0) + 8].copy_from_slice(&a.to_le_bytes());
                set[at(0) + 8..at(0) + 16].copy_from_slice(&range.to_le_bytes());
                set[at(0) + 16..at(0) + 24].copy_from_slice(&(data.len() as u64).to_le_bytes());
                let di = kargs::DYN_OFFSETS + 4 * bl.dynamic_index.unwrap() as usize;
                k[di..di + 4].copy_from_slice(&dynoff.to_le_bytes());
                locs.push((a, data.len()));
            }
            Res::StorageArray(v) => {
                for (i, data) in v.iter().enumerate() {
                    let a = alloc(data);
                    let o = at(i as u32);
                    set[o..o + 8].copy_from_slice(&a.to_le_bytes());
                    set[o + 8..o + 16].copy_from_slice(&(data.len() as u64).to_le_bytes());
                    locs.push((a, data.len()));
                }
            }
            Res::Image { format: f, view, extent, data } => {
                let a = alloc(data);
                image_desc(*f, *view, *extent, a).write(&mut set[at(0)..at(0) + desc::BYTES]);
                locs.push((a, data.len()));
            }
            Res::ImageArray { format: f, view, extent, data } => {
                for (i, d) in data.iter().enumerate() {
                    let a = alloc(d);
                    let o = at(i as u32);
                    image_desc(*f, *view, *extent, a).write(&mut set[o..o + desc::BYTES]);
                    locs.push((a, d.len()));
                }
            }
            Res::TlasArray(scenes) => {
                for (i, scene) in scenes.iter().enumerate() {
                    let addr = scene.as_ref().map(|s| build_scene(mem, s)).unwrap_or(0);
                    let o = at(i as u32);
                    set[o..o + 8].copy_from_slice(&addr.to_le_bytes());
                }
                locs.push((0, 0));
            }
            Res::Accel(v) => {
                for (i, addr) in v.iter().enumerate() {
                    let o = at(i as u32);
                    set[o..o + 8].copy_from_slice(&addr.to_le_bytes());
                }
                locs.push((0, 0));
            }
            Res::Tlas(scene) => {
                let addr = build_scene(mem, scene);
                set[at(0)..at(0) + 8].copy_from_slice(&addr.to_le_bytes());
                locs.push((0, 0));
            }
            Res::TlasAddress(scene, extra) => {
                let mut data = build_scene(mem, scene).to_le_bytes().to_vec();
                data.resize(8 + extra, 0);
                let a = alloc(&data);
                set[at(0)..at(0) + 8].copy_from_slice(&a.to_le_bytes());
                set[at(0) + 8..at(0) + 16].copy_from_slice(&(data.len() as u64).to_le_bytes());
                locs.push((a, data.len()));
            }
        }
        locations.push(locs);
    }
    for (s, bytes) in sets.iter().enumerate() {
        let a = alloc(bytes);
        k[kargs::SET_ADDR + 8 * s..kargs::SET_ADDR + 8 * s + 8].copy_from_slice(&a.to_le_bytes());
    }
    locations
}

/// A storage-image descriptor for an image of `extent` (w, h, depth-or-layers) at `addr`.
fn image_desc(f: u32, view: u32, extent: [u32; 3], addr: u64) -> ImageDesc {
    let tb = format::lookup(f).unwrap().texel_bytes();
    let (w, h, d) = (extent[0], extent[1].max(1), extent[2].max(1));
    let is_array = matches!(view, format::view_type::TYPE_1D_ARRAY | format::view_type::TYPE_2D_ARRAY);
    ImageDesc {
        addr,
        format: f,
        view_type: view,
        width: w,
        height: h,
        depth: if is_array { 1 } else { d },
        layers: if is_array { d } else { 1 },
        row_pitch: w * tb,
        slice_pitch: w * h * tb,
        layer_pitch: if view == format::view_type::TYPE_1D_ARRAY { w * tb } else { w * h * tb },
        texel_bytes: tb,
    }
}

/// GLSL convenience: `None` when glslang is unavailable.
pub fn run(src: &str, bindings: &[Binding], grid: [u32; 3], push: &[u8]) -> Option<Run> {
    let w = glsl(src)?;
    Some(run_words(&w, bindings, grid, push, &[], 8))
}

/// Runs `src` as glslang emits it (for Vulkan 1.2 and 1.3) and after `spirv-opt -O`, on 8-
/// and 32-lane warps; calls `check` on each run with a label.
pub fn run_variants(src: &str, bindings: &[Binding], grid: [u32; 3], push: &[u8], check: impl Fn(&str, &Run)) {
    let Some(plain) = glsl(src) else { return };
    for threads in [8, 32] {
        check(&format!("glslang, {threads} lanes"), &run_words(&plain, bindings, grid, push, &[], threads));
    }
    if let Some(v13) = glsl_for(src, "vulkan1.3") {
        check("glslang for Vulkan 1.3 (SPIR-V 1.6)", &run_words(&v13, bindings, grid, push, &[], 8));
    }
    if let Some(opt) = glsl_opt(src) {
        for threads in [8, 32] {
            check(&format!("spirv-opt -O, {threads} lanes"), &run_words(&opt, bindings, grid, push, &[], threads));
        }
    }
}

/// Asserts two float slices agree within `tol`.
pub fn close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * w.abs().max(1.0), "element {i}: got {g}, want {w}\n got {got:?}\nwant {want:?}");
    }
}
