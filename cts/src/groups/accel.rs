//! `acceleration_structures.*.traditional_structures.compute_shader.gpu_built.*` and the
//! compute-only `function_argument`, `instance_update` and `dynamic_indexing` cases (C2):
//! ray-query visibility of an 8x8 checkerboard (cells with x + y odd hold geometry) for
//! every way of building it on the device: triangles or AABBs, geometries or arrays of
//! pointers to them, identical instances over per-cell BLASes or one BLAS instanced per
//! cell, padded vertex/AABB strides, every build-flag combination, GENERIC creation, AS
//! creation before the storage memory is bound, every AS vertex format and index type,
//! counterclockwise triangles with the instance culling flags, empty structures (inactive
//! triangles or instances, no geometries, no primitives), copies, compactions and
//! serializations of the top or the bottom structures, the structure passed to a SPIR-V
//! function as a bare value, instance updates, and 500 TLAS descriptors indexed
//! non-uniformly.
//!
//! One ray per cell from (x + 0.5, y + 0.5, 0.5) towards -z (tmax 1); a candidate of the
//! geometry's kind on the first proceed writes 1 to both layers of an r32ui 8x8x2 image
//! cleared to 0xFF, a miss writes 0. Empty structures must miss everywhere.

use crate::case::{Case, TestResult, ROOT};
use crate::fw::accel::{
    record_copy, record_deserialize, record_serialize, BuildOptions, Built, QueryPool, Serialized, Updated,
};
use crate::fw::{
    Binding, BlasBuilder, Buffer, ComputePipeline, Env, Geometry, Image, Instance, TlasBuilder, Transform, IDENTITY,
};
use ash::vk;

const N: u32 = 8;

/// Instance culling flags and the triangle winding that goes with them (dEQP's
/// `InstanceCullFlags`): with any flag the triangles are wound the other way and the ray
/// culls back faces, so only the flags keep them visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cull {
    None,
    CounterClockwise,
    Disable,
    Both,
}

impl Cull {
    fn instance_flags(self) -> vk::GeometryInstanceFlagsKHR {
        use vk::GeometryInstanceFlagsKHR as F;
        match self {
            Cull::None => F::empty(),
            Cull::CounterClockwise => F::TRIANGLE_FRONT_COUNTERCLOCKWISE,
            Cull::Disable => F::TRIANGLE_FACING_CULL_DISABLE,
            Cull::Both => F::TRIANGLE_FRONT_COUNTERCLOCKWISE | F::TRIANGLE_FACING_CULL_DISABLE,
        }
    }
}

/// dEQP's `EmptyAccelerationStructureCase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    No,
    /// Every vertex has x = NaN.
    InactiveTriangles,
    /// Every instance refers to structure address 0.
    InactiveInstances,
    /// BLASes built with geometryCount = 0.
    NoGeometriesBottom,
    /// The TLAS built with primitiveCount = 0.
    NoPrimitivesTop,
    /// BLAS geometries built with primitiveCount = 0.
    NoPrimitivesBottom,
}

/// What `operations.*` do to the target structures before the TLAS (or the dispatch)
/// uses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    None,
    Copy,
    Compaction,
    Serialization,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shader {
    /// GLSL: the query initialized directly.
    Glsl,
    /// Hand-written SPIR-V: the query initialized inside a function that takes the
    /// structure as a bare `OpTypeAccelerationStructureKHR` value, called from one that
    /// takes it by pointer.
    FunctionArgument,
}

#[derive(Clone, Copy, Debug)]
pub struct Scene {
    pub triangles: bool,
    pub bottom_aop: bool,
    pub identical_instances: bool,
    pub top_aop: bool,
    pub padded: bool,
    pub flags: vk::BuildAccelerationStructureFlagsKHR,
    pub bottom_generic: bool,
    pub top_generic: bool,
    pub bottom_before_bind: bool,
    pub top_before_bind: bool,
    pub vertex_format: vk::Format,
    pub index_type: vk::IndexType,
    pub cull: Cull,
    pub empty: Empty,
    pub operation: Operation,
    /// The operation applies to the TLAS (else to every BLAS).
    pub operation_on_top: bool,
    pub shader: Shader,
    /// instance_update: the TLAS is built with ALLOW_UPDATE from instances out of the
    /// rays' reach, then updated (`Some(in_place)`) with the right ones.
    pub instance_update: Option<bool>,
    /// `cpu_built`: built on the host at recording time (instances by handle value).
    pub host: bool,
}

/// The cell's geometry in dEQP's vertex order: v0 = (0, 1), v1 = (0, 0), v2 = (1, 1),
/// v3 = (1, 0), triangles (v0, v1, v2) and (v2, v1, v3) (front-facing for rays along -z),
/// or the reverse winding when culling flags are tested; AABBs span z = -0.1..0.1, split
/// into four quarters when padded.
fn cell_geometry(s: &Scene, x0: f32, y0: f32, scale: f32) -> Geometry {
    let mut g = if s.triangles {
        let xnan = |x: f32| if s.empty == Empty::InactiveTriangles { f32::NAN } else { x };
        let v = |x: f32, y: f32| [xnan((x0 + x) / scale), (y0 + y) / scale, 0.0];
        let (v0, v1, v2, v3) = (v(0.0, 1.0), v(0.0, 0.0), v(1.0, 1.0), v(1.0, 0.0));
        let reversed = s.cull != Cull::None;
        if s.index_type == vk::IndexType::NONE_KHR {
            Geometry::triangles(if reversed { vec![v2, v1, v0, v3, v1, v2] } else { vec![v0, v1, v2, v2, v1, v3] })
        } else {
            let mut g = Geometry::triangles(vec![v0, v1, v2, v3]);
            g.index_type = s.index_type;
            g.indices = if reversed { vec![2, 1, 0, 3, 1, 2] } else { vec![0, 1, 2, 2, 1, 3] };
            g
        }
    } else {
        let b = |xa: f32, ya: f32, xb: f32, yb: f32| {
            [[(x0 + xa) / scale, (y0 + ya) / scale, -0.1], [(x0 + xb) / scale, (y0 + yb) / scale, 0.1]]
        };
        let boxes = if s.padded {
            vec![b(0.0, 0.0, 0.5, 0.5), b(0.5, 0.5, 1.0, 1.0), b(0.0, 0.5, 0.5, 1.0), b(0.5, 0.0, 1.0, 0.5)]
        } else {
            vec![b(0.0, 0.0, 1.0, 1.0)]
        };
        Geometry::aabbs(boxes.into_iter().flatten().collect())
    };
    g.vertex_format = s.vertex_format;
    g.padding = u32::from(s.padded);
    g
}

fn is_snorm(f: vk::Format) -> bool {
    matches!(
        f,
        vk::Format::R8G8_SNORM
            | vk::Format::R8G8B8_SNORM
            | vk::Format::R8G8B8A8_SNORM
            | vk::Format::R16G16_SNORM
            | vk::Format::R16G16B16_SNORM
            | vk::Format::R16G16B16A16_SNORM
    )
}

fn cells() -> Vec<(u32, u32)> {
    (0..N * N).map(|i| (i % N, i / N)).filter(|(x, y)| (x + y) % 2 == 1).collect()
}

fn glsl_shader(s: &Scene) -> String {
    let (cand, label) = if s.triangles {
        ("gl_RayQueryCandidateIntersectionTriangleEXT", "triangle")
    } else {
        ("gl_RayQueryCandidateIntersectionAABBEXT", "AABB")
    };
    let flags = if s.cull == Cull::None { "gl_RayFlagsNoneEXT" } else { "gl_RayFlagsCullBackFacingTrianglesEXT" };
    format!(
        "#version 460 core
#extension GL_EXT_ray_query : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(r32ui, set = 0, binding = 0) uniform uimage3D result;
layout(set = 0, binding = 1) uniform accelerationStructureEXT scene;
// a {label} candidate on the first proceed counts as a hit
void main()
{{
  uvec2 cell = gl_GlobalInvocationID.xy;
  vec3 org = vec3(float(cell.x) + 0.5, float(cell.y) + 0.5, 0.5);
  uint hit = 0u;
  rayQueryEXT rq;
  rayQueryInitializeEXT(rq, scene, {flags}, 0xFFu, org, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
  if (rayQueryProceedEXT(rq) && rayQueryGetIntersectionTypeEXT(rq, false) == {cand})
    hit = 1u;
  imageStore(result, ivec3(cell, 0), uvec4(hit, 0u, 0u, 0u));
  imageStore(result, ivec3(cell, 1), uvec4(hit, 0u, 0u, 0u));
}}
"
    )
}

/// The checkerboard shader of `function_argument` / `instance_update`: `main` passes the
/// descriptor by pointer to `init_outer`, which loads it and passes the bare structure to
/// `init_inner`, which initializes the query (flags 0, mask 0xFF, tmin 0, tmax 1, -z).
const FUNCTION_ARGUMENT_SPIRV: &str = r#"
               OpCapability Shader
               OpCapability RayQueryKHR
               OpExtension "SPV_KHR_ray_query"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %tlas %image
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %image DescriptorSet 0
               OpDecorate %image Binding 0
               OpDecorate %tlas DescriptorSet 0
               OpDecorate %tlas Binding 1
       %void = OpTypeVoid
    %fn_void = OpTypeFunction %void
       %bool = OpTypeBool
        %int = OpTypeInt 32 1
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
     %v2uint = OpTypeVector %uint 2
     %v3uint = OpTypeVector %uint 3
     %v4uint = OpTypeVector %uint 4
      %v2int = OpTypeVector %int 2
      %v3int = OpTypeVector %int 3
    %v3float = OpTypeVector %float 3
         %rq = OpTypeRayQueryKHR
      %rq_fp = OpTypePointer Function %rq
         %as = OpTypeAccelerationStructureKHR
      %as_uc = OpTypePointer UniformConstant %as
        %img = OpTypeImage %uint 3D 0 0 0 2 R32ui
     %img_uc = OpTypePointer UniformConstant %img
  %v3uint_in = OpTypePointer Input %v3uint
   %fn_inner = OpTypeFunction %void %rq_fp %as %uint %uint %v3float %float %v3float %float
   %fn_outer = OpTypeFunction %void %rq_fp %as_uc %uint %uint %v3float %float %v3float %float
        %gid = OpVariable %v3uint_in Input
       %tlas = OpVariable %as_uc UniformConstant
      %image = OpVariable %img_uc UniformConstant
      %int_0 = OpConstant %int 0
      %int_1 = OpConstant %int 1
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
   %uint_255 = OpConstant %uint 255
    %float_0 = OpConstant %float 0
    %float_1 = OpConstant %float 1
   %float_m1 = OpConstant %float -1
 %float_half = OpConstant %float 0.5
       %down = OpConstantComposite %v3float %float_0 %float_0 %float_m1

       %main = OpFunction %void None %fn_void
      %entry = OpLabel
      %query = OpVariable %rq_fp Function
         %id = OpLoad %v3uint %gid
         %ix = OpCompositeExtract %uint %id 0
         %iy = OpCompositeExtract %uint %id 1
         %fx = OpConvertUToF %float %ix
         %fy = OpConvertUToF %float %iy
         %ox = OpFAdd %float %fx %float_half
         %oy = OpFAdd %float %fy %float_half
        %org = OpCompositeConstruct %v3float %ox %oy %float_half
         %r0 = OpFunctionCall %void %init_outer %query %tlas %uint_0 %uint_255 %org %float_0 %down %float_1
        %got = OpRayQueryProceedKHR %bool %query
               OpSelectionMerge %merge None
               OpBranchConditional %got %check %merge
      %check = OpLabel
       %kind = OpRayQueryGetIntersectionTypeKHR %uint %query %int_0
     %is_tri = OpIEqual %bool %kind %uint_0
       %mark = OpSelect %uint %is_tri %uint_1 %uint_0
               OpBranch %merge
      %merge = OpLabel
        %hit = OpPhi %uint %uint_0 %entry %mark %check
       %ixy = OpVectorShuffle %v2uint %id %id 0 1
      %sxy = OpBitcast %v2int %ixy
        %sx = OpCompositeExtract %int %sxy 0
        %sy = OpCompositeExtract %int %sxy 1
        %p0 = OpCompositeConstruct %v3int %sx %sy %int_0
        %p1 = OpCompositeConstruct %v3int %sx %sy %int_1
      %texel = OpCompositeConstruct %v4uint %hit %uint_0 %uint_0 %uint_0
       %dst0 = OpLoad %img %image
               OpImageWrite %dst0 %p0 %texel ZeroExtend
       %dst1 = OpLoad %img %image
               OpImageWrite %dst1 %p1 %texel ZeroExtend
               OpReturn
               OpFunctionEnd

 %init_outer = OpFunction %void None %fn_outer
     %o_q = OpFunctionParameter %rq_fp
    %o_as = OpFunctionParameter %as_uc
 %o_flags = OpFunctionParameter %uint
  %o_mask = OpFunctionParameter %uint
   %o_org = OpFunctionParameter %v3float
  %o_tmin = OpFunctionParameter %float
   %o_dir = OpFunctionParameter %v3float
  %o_tmax = OpFunctionParameter %float
    %o_lbl = OpLabel
   %o_bare = OpLoad %as %o_as
      %o_r = OpFunctionCall %void %init_inner %o_q %o_bare %o_flags %o_mask %o_org %o_tmin %o_dir %o_tmax
               OpReturn
               OpFunctionEnd

 %init_inner = OpFunction %void None %fn_inner
     %i_q = OpFunctionParameter %rq_fp
    %i_as = OpFunctionParameter %as
 %i_flags = OpFunctionParameter %uint
  %i_mask = OpFunctionParameter %uint
   %i_org = OpFunctionParameter %v3float
  %i_tmin = OpFunctionParameter %float
   %i_dir = OpFunctionParameter %v3float
  %i_tmax = OpFunctionParameter %float
    %i_lbl = OpLabel
               OpRayQueryInitializeKHR %i_q %i_as %i_flags %i_mask %i_org %i_tmin %i_dir %i_tmax
               OpReturn
               OpFunctionEnd
"#;

/// Everything a checkerboard run creates, kept until its last submission finished.
#[derive(Default)]
struct Alive {
    structures: Vec<Built>,
    serialized: Vec<Serialized>,
    pools: Vec<QueryPool>,
    updates: Vec<Updated>,
}

/// Applies `op` to `srcs` (all of type `ty`): copies, compactions (sizes queried, the
/// command buffer submitted to read them) or serializations (sized, serialized, submitted
/// and deserialized into structures sized from the header). Returns the results; the
/// sources stay alive in `alive`. `cmd` may be replaced by a fresh command buffer.
fn apply_operation(
    env: &Env,
    cmd: &mut vk::CommandBuffer,
    op: Operation,
    ty: vk::AccelerationStructureTypeKHR,
    srcs: Vec<Built>,
    alive: &mut Alive,
) -> TestResult<Vec<Built>> {
    let plain = BuildOptions::default();
    let mut out = Vec::with_capacity(srcs.len());
    match op {
        Operation::None => return Ok(srcs),
        Operation::Copy => {
            for src in &srcs {
                let dst = Built::allocate(env, ty, src.size, &plain)?;
                record_copy(env, *cmd, src, &dst, vk::CopyAccelerationStructureModeKHR::CLONE);
                out.push(dst);
            }
        }
        Operation::Compaction | Operation::Serialization => {
            let qty = if op == Operation::Compaction {
                vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR
            } else {
                vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR
            };
            let pool = QueryPool::new(env, qty, srcs.len() as u32)?;
            pool.record_write(env, *cmd, &srcs.iter().collect::<Vec<_>>());
            env.submit_wait(*cmd)?;
            *cmd = env.begin()?;
            let sizes = pool.results(srcs.len() as u32)?;
            alive.pools.push(pool);
            for (src, &size) in srcs.iter().zip(&sizes) {
                if size == 0 {
                    crate::fail!("{qty:?} query returned 0");
                }
                if op == Operation::Compaction {
                    if size > src.size {
                        crate::fail!("compacted size {size} exceeds the structure's size {}", src.size);
                    }
                    let dst = Built::allocate(env, ty, size, &plain)?;
                    record_copy(env, *cmd, src, &dst, vk::CopyAccelerationStructureModeKHR::COMPACT);
                    out.push(dst);
                } else {
                    let ser = Serialized::new(env, size)?;
                    record_serialize(env, *cmd, src, &ser);
                    env.submit_wait(*cmd)?;
                    *cmd = env.begin()?;
                    let deserialized = ser.deserialized_size();
                    if deserialized == 0 || deserialized > (1 << 32) {
                        crate::fail!("the serialization header's deserializedSize (byte 40) is {deserialized}");
                    }
                    let dst = Built::allocate(env, ty, deserialized, &plain)?;
                    record_deserialize(env, *cmd, &ser, &dst);
                    alive.serialized.push(ser);
                    out.push(dst);
                }
            }
        }
    }
    alive.structures.extend(srcs);
    Ok(out)
}

pub fn run_checkerboard(env: &Env, s: &Scene) -> TestResult {
    env.require_ray_query()?;
    if s.host && !env.caps.acceleration_structure_host_commands {
        crate::not_supported!(
            "Requires VkPhysicalDeviceAccelerationStructureFeaturesKHR.accelerationStructureHostCommands"
        );
    }
    let code = match s.shader {
        Shader::Glsl => env.glsl(&glsl_shader(s))?,
        Shader::FunctionArgument => env.spirv_asm(FUNCTION_ARGUMENT_SPIRV)?,
    };
    let image = Image::new_3d(env, vk::Format::R32_UINT, N, N, 2)?;
    let readback = Buffer::new(env, image.texels() * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
    let pipeline = ComputePipeline::new(env, &code, &[Binding::STORAGE_IMAGE, Binding::AS], 0, &[])?;
    let mut alive = Alive::default();
    let mut cmd = env.begin()?;
    let result = (|| -> TestResult {
        image.record_clear(cmd, 0xFF);
        let compaction = vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION;
        let wants_compaction = |top: bool| s.operation == Operation::Compaction && s.operation_on_top == top;
        let bottom_opts = BuildOptions {
            build_flags: s.flags
                | if wants_compaction(false) { compaction } else { vk::BuildAccelerationStructureFlagsKHR::empty() },
            generic: s.bottom_generic,
            array_of_pointers: s.bottom_aop,
            create_before_bind: s.bottom_before_bind,
        };
        // SNORM vertices hold coordinates scaled into [-1, 1]; the instance scales back.
        let scale = if s.triangles && is_snorm(s.vertex_format) && s.identical_instances { N as f32 } else { 1.0 };
        let blas = |geometry: Geometry| BlasBuilder {
            geometries: vec![geometry],
            opts: bottom_opts.clone(),
            without_geometries: s.empty == Empty::NoGeometriesBottom,
            without_primitives: s.empty == Empty::NoPrimitivesBottom,
        };
        let build = |b: BlasBuilder| if s.host { b.build_host(env) } else { b.record(env, cmd) };
        let mut blases = Vec::new();
        if s.identical_instances {
            for (x, y) in cells() {
                blases.push(build(blas(cell_geometry(s, x as f32, y as f32, scale)))?);
            }
        } else {
            blases.push(build(blas(cell_geometry(s, 0.0, 0.0, 1.0)))?);
        }
        let op_bottom = if s.operation_on_top { Operation::None } else { s.operation };
        let blases = apply_operation(
            env,
            &mut cmd,
            op_bottom,
            vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
            blases,
            &mut alive,
        )?;

        let update = vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE;
        let mut top_flags = s.flags;
        if wants_compaction(true) {
            top_flags |= compaction;
        }
        if s.instance_update.is_some() {
            top_flags |= update;
        }
        let mut tlas = TlasBuilder {
            opts: BuildOptions {
                build_flags: top_flags,
                generic: s.top_generic,
                array_of_pointers: s.top_aop,
                create_before_bind: s.top_before_bind,
            },
            without_primitives: s.empty == Empty::NoPrimitivesTop,
            ..Default::default()
        };
        let mut base: Transform = IDENTITY;
        base[0][0] = scale;
        base[1][1] = scale;
        let flags = s.cull.instance_flags();
        let instance = |b: &Built, t: Transform| {
            let address = if s.empty == Empty::InactiveInstances { 0 } else { b.address };
            Instance::new_address(address).transform(t).flags(flags)
        };
        for (i, (x, y)) in cells().into_iter().enumerate() {
            if s.identical_instances {
                tlas.add(instance(&blases[i], base));
            } else {
                let mut t = base;
                t[0][3] = x as f32;
                t[1][3] = y as f32;
                tlas.add(instance(&blases[0], t));
            }
        }
        let final_instances = tlas.instances.clone();
        if s.instance_update.is_some() {
            // First built with every instance far above the rays' segment.
            for i in &mut tlas.instances {
                i.transform[2][3] += 10.0;
            }
        }
        let built =
            if s.host { tlas.build_host(env, &blases.iter().collect::<Vec<_>>())? } else { tlas.record(env, cmd)? };
        let mut top = match s.instance_update {
            Some(in_place) => {
                tlas.instances = final_instances;
                let mut updated = if s.host {
                    tlas.update_host(env, &built, in_place, &blases.iter().collect::<Vec<_>>())?
                } else {
                    tlas.record_update(env, cmd, &built, in_place)?
                };
                let dst = updated.dst.take();
                alive.updates.push(updated);
                match dst {
                    Some(d) => {
                        alive.structures.push(built);
                        vec![d]
                    }
                    None => vec![built],
                }
            }
            None => vec![built],
        };
        let op_top = if s.operation_on_top { s.operation } else { Operation::None };
        top = apply_operation(env, &mut cmd, op_top, vk::AccelerationStructureTypeKHR::TOP_LEVEL, top, &mut alive)?;
        alive.structures.extend(blases);
        let handle = top[0].handle;
        alive.structures.extend(top);

        pipeline.write_image(0, image.view);
        pipeline.write_as(1, &[handle]);
        pipeline.record_dispatch(cmd, N, N, 1);
        image.record_readback(cmd, &readback);
        Ok(())
    })();
    if let Err(e) = result {
        // SAFETY: nothing of the failed recording was submitted.
        unsafe {
            let _ = env.device.end_command_buffer(cmd);
        }
        return Err(e);
    }
    env.submit_wait(cmd)?;
    drop(alive);
    let got = readback.read::<u32>();
    let mut bad = Vec::new();
    for y in 0..N {
        for x in 0..N {
            let want = if s.empty == Empty::No { (x + y) % 2 } else { 0 };
            let i = (y * N + x) as usize;
            let have = (got[i], got[(N * N) as usize + i]);
            if have != (want, want) {
                bad.push(format!("({x},{y}): got {have:?}, expected ({want}, {want})"));
            }
        }
    }
    if !bad.is_empty() {
        crate::fail!("{} cells wrong: {}", bad.len(), bad.iter().take(6).cloned().collect::<Vec<_>>().join("; "));
    }
    Ok(())
}

const A: &str = "acceleration_structures";
const PREFIX: &str = "traditional_structures.compute_shader.gpu_built";

pub fn base_scene() -> Scene {
    Scene {
        triangles: true,
        bottom_aop: false,
        identical_instances: true,
        top_aop: false,
        padded: false,
        flags: vk::BuildAccelerationStructureFlagsKHR::empty(),
        bottom_generic: false,
        top_generic: false,
        bottom_before_bind: false,
        top_before_bind: false,
        vertex_format: vk::Format::R32G32B32_SFLOAT,
        index_type: vk::IndexType::NONE_KHR,
        cull: Cull::None,
        empty: Empty::No,
        operation: Operation::None,
        operation_on_top: false,
        shader: Shader::Glsl,
        instance_update: None,
        host: false,
    }
}

pub fn register_flags(cases: &mut Vec<Case>) {
    register_flags_matrix(cases, PREFIX, false);
}

/// The `flags.*` checkerboard matrix under `{ROOT}.{A}.flags.{prefix}`, built on the device
/// or (`host`) on the host: every geometry kind, instance layout, padding and build-flag
/// combination dEQP generates.
pub fn register_flags_matrix(cases: &mut Vec<Case>, prefix: &'static str, host: bool) {
    use vk::BuildAccelerationStructureFlagsKHR as F;
    let mut counter = 0u32;
    for (triangles, bottom_aop, bottom) in
        [(true, false, "triangles"), (true, true, "triangles_aop"), (false, false, "aabbs"), (false, true, "aabbs_aop")]
    {
        for (identical, top_aop, top) in [
            (true, false, "identical_instances"),
            (true, true, "identical_instances_aop"),
            (false, false, "different_instances"),
            (false, true, "different_instances_aop"),
        ] {
            for (padded, pad) in [(false, "nopadding"), (true, "padded")] {
                for (opt_flag, opt) in
                    [(F::empty(), "0"), (F::PREFER_FAST_TRACE, "fasttrace"), (F::PREFER_FAST_BUILD, "fastbuild")]
                {
                    for (upd_flag, upd) in [(F::empty(), "0"), (F::ALLOW_UPDATE, "update")] {
                        for (cmp_flag, cmp) in [(F::empty(), "0"), (F::ALLOW_COMPACTION, "compaction")] {
                            for (low_flag, low) in [(F::empty(), "0"), (F::LOW_MEMORY, "lowmemory")] {
                                for (bg, tg, generic) in [
                                    (false, false, ""),
                                    (true, false, "_bottomgeneric"),
                                    (false, true, "_topgeneric"),
                                    (true, true, "_bothgeneric"),
                                ] {
                                    let s = Scene {
                                        triangles,
                                        bottom_aop,
                                        identical_instances: identical,
                                        top_aop,
                                        padded,
                                        flags: opt_flag | upd_flag | cmp_flag | low_flag,
                                        bottom_generic: bg,
                                        top_generic: tg,
                                        bottom_before_bind: counter.is_multiple_of(3),
                                        top_before_bind: counter.is_multiple_of(7),
                                        host,
                                        ..base_scene()
                                    };
                                    counter += 1;
                                    cases.push(Case::new(
                                        format!("{ROOT}.{A}.flags.{prefix}.{bottom}.{top}.{pad}.{opt}_{upd}_{cmp}_{low}{generic}"),
                                        move |env| run_checkerboard(env, &s),
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The 15 AS vertex formats in dEQP's order; the first six are mandatory.
pub const FORMATS: [(vk::Format, &str); 15] = [
    (vk::Format::R32G32_SFLOAT, "r32g32_sfloat"),
    (vk::Format::R32G32B32_SFLOAT, "r32g32b32_sfloat"),
    (vk::Format::R16G16_SFLOAT, "r16g16_sfloat"),
    (vk::Format::R16G16B16A16_SFLOAT, "r16g16b16a16_sfloat"),
    (vk::Format::R16G16_SNORM, "r16g16_snorm"),
    (vk::Format::R16G16B16A16_SNORM, "r16g16b16a16_snorm"),
    (vk::Format::R8G8_SNORM, "r8g8_snorm"),
    (vk::Format::R8G8B8_SNORM, "r8g8b8_snorm"),
    (vk::Format::R8G8B8A8_SNORM, "r8g8b8a8_snorm"),
    (vk::Format::R16G16B16_SNORM, "r16g16b16_snorm"),
    (vk::Format::R16G16B16_SFLOAT, "r16g16b16_sfloat"),
    (vk::Format::R32G32B32A32_SFLOAT, "r32g32b32a32_sfloat"),
    (vk::Format::R64G64_SFLOAT, "r64g64_sfloat"),
    (vk::Format::R64G64B64_SFLOAT, "r64g64b64_sfloat"),
    (vk::Format::R64G64B64A64_SFLOAT, "r64g64b64a64_sfloat"),
];

pub fn register_format(cases: &mut Vec<Case>) {
    register_format_matrix(cases, PREFIX, false);
}

/// The `format.*` cases under `{ROOT}.{A}.format.{prefix}`: every AS vertex format, padding
/// and index type, built on the device or (`host`, which first needs ray queries and host
/// commands) on the host. A mandatory format without the vertex-buffer feature fails.
pub fn register_format_matrix(cases: &mut Vec<Case>, prefix: &'static str, host: bool) {
    for (i, (format, name)) in FORMATS.into_iter().enumerate() {
        for (padded, pad) in [(false, "nopadding"), (true, "padded")] {
            for (index_type, idx) in [
                (vk::IndexType::NONE_KHR, "index_none"),
                (vk::IndexType::UINT16, "index_uint16"),
                (vk::IndexType::UINT32, "index_uint32"),
            ] {
                let s = Scene { padded, vertex_format: format, index_type, host, ..base_scene() };
                let mandatory = i < 6;
                cases.push(Case::new(format!("{ROOT}.{A}.format.{prefix}.{name}.{pad}.{idx}"), move |env| {
                    if host {
                        env.require_ray_query()?;
                        require_host_commands(env)?;
                    }
                    // SAFETY: plain query on a valid physical device.
                    let props =
                        unsafe { env.instance.get_physical_device_format_properties(env.physical, s.vertex_format) };
                    if !props.buffer_features.contains(vk::FormatFeatureFlags::ACCELERATION_STRUCTURE_VERTEX_BUFFER_KHR)
                    {
                        if mandatory {
                            crate::fail!(
                                "{:?} is a mandatory AS vertex format but lacks ACCELERATION_STRUCTURE_VERTEX_BUFFER",
                                s.vertex_format
                            );
                        }
                        crate::not_supported!(
                            "{:?} lacks VK_FORMAT_FEATURE_ACCELERATION_STRUCTURE_VERTEX_BUFFER_BIT_KHR",
                            s.vertex_format
                        );
                    }
                    run_checkerboard(env, &s)
                }));
            }
        }
    }
}

/// NotSupported unless the device can build acceleration structures on the host.
pub fn require_host_commands(env: &Env) -> TestResult {
    if !env.caps.acceleration_structure_host_commands {
        crate::not_supported!(
            "Requires VkPhysicalDeviceAccelerationStructureFeaturesKHR.accelerationStructureHostCommands"
        );
    }
    Ok(())
}

const RES: &str = "traditional_structures";
const STAGE: &str = "compute_shader";
const BUILT: &str = "gpu_built";

/// operations, function_argument, instance_triangle_culling, instance_update,
/// dynamic_indexing and empty, in dEQP's order.
pub fn register_rest(cases: &mut Vec<Case>) {
    let a = format!("{ROOT}.{A}");
    for (operation, op) in
        [(Operation::Copy, "copy"), (Operation::Compaction, "compaction"), (Operation::Serialization, "serialization")]
    {
        for (on_top, target) in [(true, "top_acceleration_structure"), (false, "bottom_acceleration_structure")] {
            for (triangles, g) in [(true, "triangles"), (false, "aabbs")] {
                // Top operations: one BLAS instanced per cell; bottom: a BLAS per cell.
                let s = Scene {
                    triangles,
                    identical_instances: !on_top,
                    operation,
                    operation_on_top: on_top,
                    ..base_scene()
                };
                cases.push(Case::new(format!("{a}.operations.{RES}.{STAGE}.{op}.{BUILT}.{target}.{g}"), move |env| {
                    run_checkerboard(env, &s)
                }));
            }
        }
    }
    let s = Scene { shader: Shader::FunctionArgument, ..base_scene() };
    cases.push(Case::new(format!("{a}.function_argument.{RES}.{BUILT}"), move |env| run_checkerboard(env, &s)));
    for (index_type, idx) in [
        (vk::IndexType::NONE_KHR, "index_none"),
        (vk::IndexType::UINT16, "index_uint16"),
        (vk::IndexType::UINT32, "index_uint32"),
    ] {
        for (identical, tr) in [(false, "transformed"), (true, "notransform")] {
            for (cull, f) in [
                (Cull::None, "noflags"),
                (Cull::CounterClockwise, "ccw"),
                (Cull::Disable, "nocull"),
                (Cull::Both, "ccw_nocull"),
            ] {
                let s = Scene { index_type, identical_instances: identical, cull, ..base_scene() };
                cases.push(Case::new(
                    format!("{a}.instance_triangle_culling.{RES}.{STAGE}.{BUILT}.{idx}.{tr}_{f}"),
                    move |env| run_checkerboard(env, &s),
                ));
            }
        }
    }
    for (in_place, u) in [(false, "update"), (true, "update_in_place")] {
        let s = Scene { shader: Shader::FunctionArgument, instance_update: Some(in_place), ..base_scene() };
        cases.push(Case::new(format!("{a}.instance_update.{RES}.{BUILT}.{u}"), move |env| run_checkerboard(env, &s)));
    }
    cases.push(Case::new(format!("{a}.dynamic_indexing.{RES}.dynamic_indexing"), dynamic_indexing));
    for (index_type, idx) in [
        (vk::IndexType::NONE_KHR, "index_none"),
        (vk::IndexType::UINT16, "index_uint16"),
        (vk::IndexType::UINT32, "index_uint32"),
    ] {
        for (empty, e) in [
            (Empty::InactiveTriangles, "inactive_triangles"),
            (Empty::InactiveInstances, "inactive_instances"),
            (Empty::NoGeometriesBottom, "no_geometries_bottom"),
            (Empty::NoPrimitivesTop, "no_primitives_top"),
            (Empty::NoPrimitivesBottom, "no_primitives_bottom"),
        ] {
            let s = Scene { index_type, empty, ..base_scene() };
            cases.push(Case::new(format!("{a}.empty.{RES}.{STAGE}.{BUILT}.{idx}.{e}"), move |env| {
                run_checkerboard(env, &s)
            }));
        }
    }
}

const TLAS_COUNT: u32 = 500;
const ACTIVE_TLAS: u32 = 32;

const DYNAMIC_INDEXING_SHADER: &str = "#version 460 core
#extension GL_EXT_ray_query : require
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlases[500];
layout(set = 0, binding = 1, std430) readonly buffer Addresses { uvec2 address[]; } addresses;
layout(set = 0, binding = 2, std430) readonly buffer Selection { uint index[]; } selection;
layout(set = 0, binding = 3, std430) buffer Result { uint value[]; } result;

const vec3 origin = vec3(0.25, 0.5, 1.0);
const vec3 direction = vec3(0.0, 0.0, -1.0);

void main()
{
  uint lane = gl_GlobalInvocationID.x;
  uint lanes = gl_NumWorkGroups.x;
  uint which = selection.index[nonuniformEXT(lane)];
  rayQueryEXT q;
  // through the descriptor array
  rayQueryInitializeEXT(q, tlases[nonuniformEXT(which)], gl_RayFlagsCullBackFacingTrianglesEXT, 0xFFu, origin, 0.0, direction, 2.0);
  atomicAdd(result.value[nonuniformEXT(lane)], 2u);
  if (rayQueryProceedEXT(q) && rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionTriangleEXT)
    atomicAdd(result.value[nonuniformEXT(lane + lanes)], 3u);
  // through the structure's device address read from a buffer
  rayQueryInitializeEXT(q, accelerationStructureEXT(addresses.address[nonuniformEXT(which)]), gl_RayFlagsCullBackFacingTrianglesEXT, 0xFFu, origin, 0.0, direction, 2.0);
  atomicAdd(result.value[nonuniformEXT(lane + 2u * lanes)], 5u);
  if (rayQueryProceedEXT(q) && rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionTriangleEXT)
    atomicAdd(result.value[nonuniformEXT(lane + 3u * lanes)], 7u);
}
";

/// 500 TLASes over one triangle; 32 chosen at random have an active instance, the rest an
/// instance referring to address 0. Each of 32 invocations traces the triangle through
/// one chosen TLAS, once through the descriptor array (non-uniform index) and once through
/// its device address read from a buffer filled by vkCmdUpdateBuffer: 2, 3, 5, 7.
fn dynamic_indexing(env: &Env) -> TestResult {
    env.require_ray_query()?;
    let code = env.glsl(DYNAMIC_INDEXING_SHADER)?;
    let mut rng = super::traversal::Random::new(123);
    let mut chosen = std::collections::BTreeSet::new();
    while chosen.len() < ACTIVE_TLAS as usize {
        chosen.insert(rng.next_u32() % TLAS_COUNT);
    }
    let indices: Vec<u32> = chosen.iter().copied().collect();
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let pointers = Buffer::new(env, 8 * u64::from(TLAS_COUNT), storage | vk::BufferUsageFlags::TRANSFER_DST)?;
    let selection = Buffer::with_data(env, &indices, storage)?;
    let result = Buffer::new(env, 4 * 4 * u64::from(ACTIVE_TLAS), storage)?;
    let bindings = [
        Binding { ty: vk::DescriptorType::ACCELERATION_STRUCTURE_KHR, count: TLAS_COUNT },
        Binding::SSBO,
        Binding::SSBO,
        Binding::SSBO,
    ];
    super::common::compute_dispatch(env, &code, &bindings, &[], (ACTIVE_TLAS, 1, 1), &[], |env, cmd, pipe| {
        let triangle = Geometry::triangles(vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
        let blas = BlasBuilder { geometries: vec![triangle], ..Default::default() }.record(env, cmd)?;
        let mut keep = Vec::new();
        let mut handles = Vec::new();
        let mut addresses = Vec::new();
        for i in 0..TLAS_COUNT {
            let instance = Instance::new_address(if chosen.contains(&i) { blas.address } else { 0 });
            let tlas = TlasBuilder { instances: vec![instance], ..Default::default() }.record(env, cmd)?;
            handles.push(tlas.handle);
            addresses.push(tlas.address);
            keep.push(tlas);
        }
        // SAFETY: cmd is recording; the data is 4,000 bytes (vkCmdUpdateBuffer's limit is 65,536).
        unsafe { env.device.cmd_update_buffer(cmd, pointers.handle, 0, bytemuck::cast_slice(&addresses)) };
        env.barrier(
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_READ,
        );
        env.barrier(
            cmd,
            vk::PipelineStageFlags::ACCELERATION_STRUCTURE_BUILD_KHR,
            vk::AccessFlags::ACCELERATION_STRUCTURE_WRITE_KHR,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::ACCELERATION_STRUCTURE_READ_KHR,
        );
        pipe.write_as(0, &handles);
        pipe.write_buffer(1, vk::DescriptorType::STORAGE_BUFFER, &pointers);
        pipe.write_buffer(2, vk::DescriptorType::STORAGE_BUFFER, &selection);
        pipe.write_buffer(3, vk::DescriptorType::STORAGE_BUFFER, &result);
        keep.push(blas);
        Ok(keep)
    })?;
    let got = result.read::<u32>();
    let n = ACTIVE_TLAS as usize;
    let mut bad = Vec::new();
    for lane in 0..n {
        for (k, want) in [2u32, 3, 5, 7].into_iter().enumerate() {
            if got[k * n + lane] != want {
                bad.push(format!(
                    "invocation {lane} (TLAS {}) value {k}: got {}, expected {want}",
                    indices[lane],
                    got[k * n + lane]
                ));
            }
        }
    }
    if !bad.is_empty() {
        crate::fail!(
            "{} of {} values wrong: {}",
            bad.len(),
            4 * n,
            bad.iter().take(6).cloned().collect::<Vec<_>>().join("; ")
        );
    }
    Ok(())
}
