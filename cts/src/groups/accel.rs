//! `acceleration_structures.{flags,format}.traditional_structures.compute_shader.gpu_built.*`
//! (C2): ray-query visibility of an 8x8 checkerboard (cells with x + y odd hold geometry)
//! for every way of building it on the device: triangles or AABBs, geometries or arrays of
//! pointers to them, identical instances over per-cell BLASes or one BLAS instanced per
//! cell, padded vertex/AABB strides, every build-flag combination, GENERIC creation, AS
//! creation before the storage memory is bound, and every AS vertex format and index type.
//!
//! One ray per cell from (x + 0.5, y + 0.5, 0.5) towards -z (tmax 1); a candidate of the
//! geometry's kind on the first proceed writes 1 to both layers of an r32ui 8x8x2 image
//! cleared to 0xFF, a miss writes 0.

use super::common::image_dispatch;
use crate::case::{Case, TestResult, ROOT};
use crate::fw::accel::BuildOptions;
use crate::fw::{BlasBuilder, Env, Geometry, Instance, TlasBuilder, Transform, IDENTITY};
use ash::vk;

const N: u32 = 8;

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
}

fn cell_geometry(s: &Scene, x0: f32, y0: f32, scale: f32) -> Geometry {
    let (x1, y1) = (x0 + 1.0, y0 + 1.0);
    let mut g = if s.triangles {
        let v = |x: f32, y: f32| [x / scale, y / scale, 0.0];
        if s.index_type == vk::IndexType::NONE_KHR {
            Geometry::triangles(vec![v(x0, y0), v(x1, y0), v(x1, y1), v(x0, y0), v(x1, y1), v(x0, y1)])
        } else {
            let mut g = Geometry::triangles(vec![v(x0, y0), v(x1, y0), v(x1, y1), v(x0, y1)]);
            g.index_type = s.index_type;
            g.indices = vec![0, 1, 2, 0, 2, 3];
            g
        }
    } else {
        Geometry::aabbs(vec![[x0, y0, -0.1], [x1, y1, 0.1]])
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

pub fn run_checkerboard(env: &Env, s: &Scene) -> TestResult {
    env.require_ray_query()?;
    let (cand, label) = if s.triangles {
        ("gl_RayQueryCandidateIntersectionTriangleEXT", "triangle")
    } else {
        ("gl_RayQueryCandidateIntersectionAABBEXT", "AABB")
    };
    let src = format!(
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
  rayQueryInitializeEXT(rq, scene, 0u, 0xFFu, org, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
  if (rayQueryProceedEXT(rq) && rayQueryGetIntersectionTypeEXT(rq, false) == {cand})
    hit = 1u;
  imageStore(result, ivec3(cell, 0), uvec4(hit, 0u, 0u, 0u));
  imageStore(result, ivec3(cell, 1), uvec4(hit, 0u, 0u, 0u));
}}
"
    );
    let code = env.glsl(&src)?;
    let snorm = s.triangles && is_snorm(s.vertex_format);
    let got = image_dispatch(env, &code, vk::Format::R32_UINT, (N, N, 2), 0xFF, &[], |env, cmd| {
        let bottom_opts = BuildOptions {
            build_flags: s.flags,
            generic: s.bottom_generic,
            array_of_pointers: s.bottom_aop,
            create_before_bind: s.bottom_before_bind,
        };
        let cells: Vec<(u32, u32)> = (0..N * N).map(|i| (i % N, i / N)).filter(|(x, y)| (x + y) % 2 == 1).collect();
        let mut keep = Vec::new();
        let mut tlas = TlasBuilder {
            opts: BuildOptions {
                build_flags: s.flags,
                generic: s.top_generic,
                array_of_pointers: s.top_aop,
                create_before_bind: s.top_before_bind,
            },
            ..Default::default()
        };
        // SNORM vertices hold coordinates scaled into [-1, 1]; the instance scales back.
        let scale = if snorm { 8.0 } else { 1.0 };
        let mut base: Transform = IDENTITY;
        base[0][0] = scale;
        base[1][1] = scale;
        if s.identical_instances {
            for &(x, y) in &cells {
                let blas = BlasBuilder {
                    geometries: vec![cell_geometry(s, x as f32, y as f32, scale)],
                    opts: bottom_opts.clone(),
                    ..Default::default()
                }
                .record(env, cmd)?;
                tlas.add(Instance::new(&blas).transform(base));
                keep.push(blas);
            }
        } else {
            let blas = BlasBuilder {
                geometries: vec![cell_geometry(s, 0.0, 0.0, scale)],
                opts: bottom_opts,
                ..Default::default()
            }
            .record(env, cmd)?;
            for &(x, y) in &cells {
                let mut t = base;
                t[0][3] = x as f32;
                t[1][3] = y as f32;
                tlas.add(Instance::new(&blas).transform(t));
            }
            keep.push(blas);
        }
        let t = tlas.record(env, cmd)?;
        let h = t.handle;
        keep.push(t);
        Ok((h, keep))
    })?;
    let mut bad = Vec::new();
    for y in 0..N {
        for x in 0..N {
            let want = (x + y) % 2;
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

fn base_scene() -> Scene {
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
    }
}

pub fn register_flags(cases: &mut Vec<Case>) {
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
                                        ..base_scene()
                                    };
                                    counter += 1;
                                    cases.push(Case::new(
                                        format!("{ROOT}.{A}.flags.{PREFIX}.{bottom}.{top}.{pad}.{opt}_{upd}_{cmp}_{low}{generic}"),
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
    for (i, (format, name)) in FORMATS.into_iter().enumerate() {
        for (padded, pad) in [(false, "nopadding"), (true, "padded")] {
            for (index_type, idx) in [
                (vk::IndexType::NONE_KHR, "index_none"),
                (vk::IndexType::UINT16, "index_uint16"),
                (vk::IndexType::UINT32, "index_uint32"),
            ] {
                let s = Scene { padded, vertex_format: format, index_type, ..base_scene() };
                let mandatory = i < 6;
                cases.push(Case::new(format!("{ROOT}.{A}.format.{PREFIX}.{name}.{pad}.{idx}"), move |env| {
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
