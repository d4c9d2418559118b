//! Step 6: ray queries compiled to TRACE / CONT / WAIT / GETW(F), run against the device's
//! RTU on CW-BVHs built by the AS transcoder, checked against the scene's known answers.

mod shader_util;
use shader_util::*;

/// A checkerboard: cells with (x + y) odd hold one triangle (lower-left half of the cell) at
/// z = 0, through an instance translated by +0.25 in x with custom index 7. Cells with
/// x % 4 == 1 are wound the other way; the rest have their normal at +z, pointing back at
/// the rays' origins, which the RTU reports as front-facing (`rtu::isect::geometric_front`).
fn checkerboard(flags: u32) -> (Scene, Vec<Option<u32>>) {
    let mut tris = Vec::new();
    let mut prim = vec![None; 64];
    for y in 0..8 {
        for x in 0..8 {
            if (x + y) % 2 == 1 {
                let (fx, fy) = (x as f32 - 0.25, y as f32);
                let (v0, v1, v2) = ([fx, fy, 0.0], [fx + 1.0, fy, 0.0], [fx, fy + 1.0, 0.0]);
                tris.push(if x % 4 == 1 { [v0, v2, v1] } else { [v0, v1, v2] });
                prim[y * 8 + x] = Some(tris.len() as u32 - 1);
            }
        }
    }
    let mut o2w = IDENTITY;
    o2w[3] = 0.25;
    let scene = Scene {
        blases: vec![Blas { tris, aabbs: vec![], flags }],
        instances: vec![Inst { blas: 0, o2w, custom: 7, flags: 0 }],
    };
    (scene, prim)
}

const GETTERS: &str = r#"#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, set = 0, binding = 1) buffer Out { float r[]; } o;
void main() {
    uvec3 p = gl_WorkGroupID;
    vec3 orig = vec3(float(p.x) + 0.3, float(p.y) + 0.3, 0.5);
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsNoneEXT, 0xFF, orig, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
    int cands = 0;
    float cand_t = -1.0;
    while (rayQueryProceedEXT(rq)) {
        if (rayQueryGetIntersectionTypeEXT(rq, false) == gl_RayQueryCandidateIntersectionTriangleEXT) {
            cands++;
            cand_t = rayQueryGetIntersectionTEXT(rq, false);
            rayQueryConfirmIntersectionEXT(rq);
        }
    }
    uint base = (p.y * 8u + p.x) * 20u;
    o.r[base + 0u] = float(rayQueryGetIntersectionTypeEXT(rq, true));
    o.r[base + 1u] = rayQueryGetIntersectionTEXT(rq, true);
    o.r[base + 2u] = float(rayQueryGetIntersectionPrimitiveIndexEXT(rq, true));
    o.r[base + 3u] = float(rayQueryGetIntersectionInstanceCustomIndexEXT(rq, true));
    o.r[base + 4u] = float(rayQueryGetIntersectionInstanceIdEXT(rq, true));
    vec2 bc = rayQueryGetIntersectionBarycentricsEXT(rq, true);
    o.r[base + 5u] = bc.x;
    o.r[base + 6u] = bc.y;
    o.r[base + 7u] = rayQueryGetIntersectionFrontFaceEXT(rq, true) ? 1.0 : 0.0;
    o.r[base + 8u] = float(cands);
    o.r[base + 9u] = rayQueryGetWorldRayOriginEXT(rq).x;
    o.r[base + 10u] = rayQueryGetRayTMinEXT(rq);
    o.r[base + 11u] = float(rayQueryGetRayFlagsEXT(rq));
    mat4x3 o2w = rayQueryGetIntersectionObjectToWorldEXT(rq, true);
    o.r[base + 12u] = o2w[3][0];
    o.r[base + 13u] = o2w[0][0] + o2w[1][1] * 10.0 + o2w[2][2] * 100.0 + o2w[1][0] * 1000.0;
    mat4x3 w2o = rayQueryGetIntersectionWorldToObjectEXT(rq, true);
    o.r[base + 14u] = w2o[3][0];
    o.r[base + 15u] = rayQueryGetIntersectionObjectRayOriginEXT(rq, true).x;
    o.r[base + 16u] = rayQueryGetWorldRayDirectionEXT(rq).z;
    o.r[base + 17u] = float(rayQueryGetIntersectionGeometryIndexEXT(rq, true));
    o.r[base + 18u] = cand_t;
    o.r[base + 19u] = rayQueryGetIntersectionObjectRayDirectionEXT(rq, true).z;
}"#;

fn check_getters(r: &Run, prim: &[Option<u32>], opaque: bool, what: &str) {
    let got = r.f32s(1);
    for y in 0..8usize {
        for x in 0..8usize {
            let g = &got[(y * 8 + x) * 20..(y * 8 + x) * 20 + 20];
            let at = format!("{what}: cell ({x},{y})");
            assert_eq!(g[9], x as f32 + 0.3, "{at}: world origin");
            assert_eq!((g[10], g[11], g[16]), (0.0, 0.0, -1.0), "{at}: tmin, flags, world dir");
            match prim[y * 8 + x] {
                Some(p) => {
                    assert_eq!(g[0], 1.0, "{at}: committed triangle");
                    assert!((g[1] - 0.5).abs() < 1e-6, "{at}: t {}", g[1]);
                    assert_eq!((g[2], g[3], g[4], g[17]), (p as f32, 7.0, 0.0, 0.0), "{at}: ids");
                    let (u, v) = if x % 4 == 1 { (g[6], g[5]) } else { (g[5], g[6]) };
                    assert!((u - 0.3).abs() < 1e-5 && (v - 0.3).abs() < 1e-5, "{at}: barycentrics {g:?}");
                    assert_eq!(g[7], (x % 4 != 1) as i32 as f32, "{at}: front face");
                    assert_eq!(g[8], if opaque { 0.0 } else { 1.0 }, "{at}: candidates");
                    if !opaque {
                        assert!((g[18] - 0.5).abs() < 1e-6, "{at}: candidate t");
                    }
                    assert_eq!(g[12], 0.25, "{at}: object-to-world translation");
                    assert_eq!(g[13], 111.0, "{at}: object-to-world diagonal, no shear");
                    assert_eq!(g[14], -0.25, "{at}: world-to-object translation");
                    assert!((g[15] - (x as f32 + 0.05)).abs() < 1e-5, "{at}: object ray origin {}", g[15]);
                    assert_eq!(g[19], -1.0, "{at}: object ray direction");
                }
                None => {
                    assert_eq!(g[0], 0.0, "{at}: no committed hit");
                    assert_eq!(g[8], 0.0, "{at}: no candidates");
                }
            }
        }
    }
}

#[test]
fn triangle_queries_and_getters() {
    for (flags, opaque) in [(0, false), (1, true)] {
        let (scene, prim) = checkerboard(flags);
        let bindings = [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Storage(vec![0; 64 * 20 * 4]))];
        let Some(w) = glsl(GETTERS) else { return };
        for threads in [8, 32] {
            let r = run_words(&w, &bindings, [8, 8, 1], &[], &[], threads);
            check_getters(&r, &prim, opaque, &format!("flags {flags}, {threads} lanes"));
        }
        if let Some(w) = glsl_opt(GETTERS) {
            let r = run_words(&w, &bindings, [8, 8, 1], &[], &[], 8);
            check_getters(&r, &prim, opaque, &format!("flags {flags}, spirv-opt"));
        }
    }
}

/// Several rays per workgroup diverge inside the proceed loop: odd lanes generate hits on
/// procedural boxes, even lanes terminate at the first candidate, and a null TLAS misses.
#[test]
fn procedural_generate_terminate_and_divergence() {
    let src = r#"#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(set = 0, binding = 1) uniform accelerationStructureEXT nothing;
layout(std430, set = 0, binding = 2) buffer Out { float r[]; } o;
void main() {
    uint i = gl_LocalInvocationID.x;
    // Two boxes along the ray (z in [-2,-1] and [-4,-3]) for every lane.
    vec3 orig = vec3(float(i) + 0.5, 0.5, 0.0);
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, 0u, 0xFF, orig, 0.0, vec3(0.0, 0.0, -1.0), 100.0);
    int cands = 0;
    bool opaque = false;
    while (rayQueryProceedEXT(rq)) {
        cands++;
        if (rayQueryGetIntersectionTypeEXT(rq, false) == gl_RayQueryCandidateIntersectionAABBEXT) {
            opaque = rayQueryGetIntersectionCandidateAABBOpaqueEXT(rq);
            if (i % 2u == 1u) {
                rayQueryGenerateIntersectionEXT(rq, 1.5 + float(cands));
            } else {
                rayQueryTerminateEXT(rq);
            }
        }
    }
    rayQueryEXT none;
    rayQueryInitializeEXT(none, nothing, 0u, 0xFF, orig, 0.0, vec3(0.0, 0.0, -1.0), 100.0);
    bool any_none = rayQueryProceedEXT(none);
    o.r[i * 5u + 0u] = float(rayQueryGetIntersectionTypeEXT(rq, true));
    o.r[i * 5u + 1u] = rayQueryGetIntersectionTEXT(rq, true);
    o.r[i * 5u + 2u] = float(cands);
    o.r[i * 5u + 3u] = (any_none ? 10.0 : 0.0) + float(rayQueryGetIntersectionTypeEXT(none, true));
    o.r[i * 5u + 4u] = opaque ? 1.0 : 0.0;
}"#;
    let aabbs = vec![([0.0, 0.0, -2.0], [16.0, 1.0, -1.0]), ([0.0, 0.0, -4.0], [16.0, 1.0, -3.0])];
    let scene = Scene {
        blases: vec![Blas { tris: vec![], aabbs, flags: 0 }],
        instances: vec![Inst { blas: 0, o2w: IDENTITY, custom: 0, flags: 0 }],
    };
    let bindings =
        [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Accel(vec![0])), b(0, 2, Res::Storage(vec![0; 16 * 5 * 4]))];
    run_variants(src, &bindings, [1, 1, 1], &[], |what, r| {
        let got = r.f32s(2);
        for i in 0..16usize {
            let g = &got[i * 5..i * 5 + 5];
            if i % 2 == 1 {
                // Generated at 2.5 on the first box; the second box (entry t=3) is beyond it.
                assert_eq!(g[0], 2.0, "{what}: lane {i} committed generated");
                assert_eq!(g[1], 2.5, "{what}: lane {i} generated t");
                assert!(g[2] == 1.0 || g[2] == 2.0, "{what}: lane {i} candidates {}", g[2]);
            } else {
                assert_eq!((g[0], g[2]), (0.0, 1.0), "{what}: lane {i} terminated before committing");
            }
            assert_eq!(g[3], 0.0, "{what}: lane {i}: a null TLAS misses");
            assert_eq!(g[4], 0.0, "{what}: lane {i}: non-opaque AABB");
        }
    });
}

/// dEQP misc.dynamic_indexing: 48 queries in Private storage, each invocation using the one
/// its index selects, plus a query passed to helpers by pointer.
#[test]
fn query_arrays_dynamic_index_and_functions() {
    let src = r#"#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 48) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, set = 0, binding = 1) buffer Out { uint r[]; } o;
rayQueryEXT rq[48];
void start(rayQueryEXT q, vec3 orig) {
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xFF, orig, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
}
bool hit(rayQueryEXT q) {
    while (rayQueryProceedEXT(q)) {}
    return rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT;
}
void main() {
    uint i = gl_LocalInvocationID.x;
    uint x = i % 8u, y = i / 8u;
    start(rq[i], vec3(float(x) + 0.3, float(y) + 0.3, 0.5));
    start(rq[(i + 1u) % 48u], vec3(float(x) + 0.3, float(y) + 0.3, 0.5));
    o.r[i] = (hit(rq[i]) ? 1u : 0u) + (hit(rq[(i + 1u) % 48u]) ? 2u : 0u);
}"#;
    let (scene, prim) = checkerboard(0);
    let bindings = [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Storage(vec![0; 48 * 4]))];
    let Some(w) = glsl(src) else { return };
    let k = build(&w, &bindings, 0, &[]).unwrap();
    // The kernel declares 48 RT-unit slots; on rdna2 the queries are the shader's own.
    let rtu_slots = if rt_arch() == vortex_model::config::RtArch::Rtu { 48 } else { 0 };
    assert_eq!(k.num_queries, rtu_slots);
    // (spirv-opt's validator refuses glslang's access-chain arguments here, so no -O variant.)
    for threads in [8, 32] {
        let r = run_words(&w, &bindings, [1, 1, 1], &[], &[], threads);
        let want: Vec<u32> = (0..48).map(|i| if prim[i].is_some() { 3 } else { 0 }).collect();
        assert_eq!(r.u32s(1), want, "{threads} lanes");
    }
}

/// An acceleration structure from a `uvec2` device address in a buffer (dEQP's
/// OpConvertUToAccelerationStructureKHR), and several queries stepped in lock-step.
#[test]
fn address_as_uvec2_and_lockstep_queries() {
    let src = r#"#version 460
#extension GL_EXT_ray_query : require
#extension GL_EXT_ray_tracing : require
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) buffer Addr { uvec2 tlas; uint hits[64]; } a;
void main() {
    for (uint y = 0u; y < 8u; y++) {
        uint x = gl_LocalInvocationID.x;
        rayQueryEXT q[3];
        for (int k = 0; k < 3; k++)
            rayQueryInitializeEXT(q[k], accelerationStructureEXT(a.tlas), 0u, 0xFF, vec3(float(x) + 0.3, float(y) + 0.3, k == 2 ? 2.5 : 0.5), 0.0,
                                  vec3(0.0, 0.0, -1.0), 1.0);
        bool more = true;
        while (more) {
            more = false;
            for (int k = 0; k < 3; k++) {
                if (rayQueryProceedEXT(q[k])) {
                    more = true;
                    if (k != 1) rayQueryConfirmIntersectionEXT(q[k]);
                }
            }
        }
        uint bits = 0u;
        for (int k = 0; k < 3; k++)
            if (rayQueryGetIntersectionTypeEXT(q[k], true) != gl_RayQueryCommittedIntersectionNoneEXT) bits |= 1u << k;
        a.hits[y * 8u + x] = bits;
    }
}"#;
    let (scene, prim) = checkerboard(0);
    let bindings = [b(0, 0, Res::TlasAddress(scene, 64 * 4))];
    run_variants(src, &bindings, [1, 1, 1], &[], |what, r| {
        let got = r.u32s(0);
        // Queries 0 and 1 start 0.5 above the plane, but only 0 confirms its candidate;
        // query 2 starts 2.5 above and tmax 1 stops short.
        let want: Vec<u32> = (0..64).map(|i| if prim[i].is_some() { 1 } else { 0 }).collect();
        assert_eq!(&got[2..], &want[..], "{what}");
    });
}

/// dEQP dynamic_indexing (AS): an array of acceleration structures (one null) indexed with
/// non-uniform values, each passed to a helper that traces it.
#[test]
fn acceleration_structure_arrays_and_parameters() {
    let src = r#"#version 460
#extension GL_EXT_ray_query : require
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tl[3];
layout(std430, set = 0, binding = 1) buffer Out { uint r[]; } o;
uint trace_in(accelerationStructureEXT as_, vec3 orig) {
    rayQueryEXT q;
    rayQueryInitializeEXT(q, as_, gl_RayFlagsOpaqueEXT, 0xFF, orig, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
    while (rayQueryProceedEXT(q)) {}
    return rayQueryGetIntersectionTypeEXT(q, true);
}
void main() {
    uint i = gl_LocalInvocationID.x;
    vec3 orig = vec3(float(i % 8u) + 0.3, float(i / 8u) + 0.3, 0.5);
    o.r[i] = trace_in(tl[nonuniformEXT(i % 3u)], orig) + 10u * trace_in(tl[2], orig);
}"#;
    let (board, prim) = checkerboard(1);
    let full = Scene {
        blases: vec![Blas {
            tris: vec![[[0.0, 0.0, 0.0], [40.0, 0.0, 0.0], [0.0, 40.0, 0.0]]],
            aabbs: vec![],
            flags: 1,
        }],
        instances: vec![Inst { blas: 0, o2w: IDENTITY, custom: 0, flags: 0 }],
    };
    let bindings =
        [b(0, 0, Res::TlasArray(vec![Some(board), None, Some(full)])), b(0, 1, Res::Storage(vec![0; 16 * 4]))];
    let Some(w) = glsl(src) else { return };
    for threads in [8, 32] {
        let r = run_words(&w, &bindings, [1, 1, 1], &[], &[], threads);
        let want: Vec<u32> = (0..16usize)
            .map(|i| {
                let own = match i % 3 {
                    0 => prim[i].is_some() as u32,
                    1 => 0,
                    _ => 1,
                };
                own + 10
            })
            .collect();
        assert_eq!(r.u32s(1), want, "{threads} lanes");
    }
}

/// On rdna2 a ray query is the shader's own loop: `ISECT` and no RT-unit op, the two
/// traversal bounds as traps, the query's state in private memory, no RTU slot declared, and
/// reconvergence points that hold (whatever `VORTEX_RT_ARCH` says: compiled for rdna2 here).
#[test]
fn rdna2_lowering_is_a_loop_around_isect() {
    use vortex_model::abi::isa::{Op, TrapCode};
    use vortex_transcode::shader::{compile, CompileOptions, RayQueryLowering};
    let (scene, _) = checkerboard(0);
    let bindings = [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Storage(vec![0; 64 * 20 * 4]))];
    let Some(w) = glsl(GETTERS) else { return };
    let mut opts = CompileOptions::entry("main");
    opts.layout = layout(&bindings, 0);
    opts.target.ray_query = RayQueryLowering::Rdna2;
    let k = compile(&w, &opts).unwrap();
    let has = |op: Op| k.code.iter().any(|i| i.op == op);
    assert!(has(Op::Isect), "{}", k.disassemble());
    for op in [Op::Trace, Op::Wait, Op::Cont, Op::Getw, Op::Getwf] {
        assert!(!has(op), "{op:?} in an rdna2 kernel");
    }
    let traps: Vec<u32> = k.code.iter().filter(|i| i.op == Op::Trap).map(|i| i.imm).collect();
    assert!(traps.contains(&(TrapCode::RayQueryStack as u32)) && traps.contains(&(TrapCode::RayQuerySteps as u32)));
    assert_eq!(k.num_queries, 0);
    assert!(k.private_bytes >= 512, "{} private bytes", k.private_bytes);
    check_reconvergence(&k.code).unwrap();
    // The ray log's hooks only when the device records one: after Initialize (with the
    // structure) and after each proceed.
    assert!(!has(Op::Rqlog), "no log, no hook");
    opts.target.raylog = true;
    let logged = compile(&w, &opts).unwrap();
    let hooks: Vec<u32> = logged.code.iter().filter(|i| i.op == Op::Rqlog).map(|i| i.imm).collect();
    use vortex_model::abi::rdna2::query::{LOG_ARM, LOG_PROCEED, STACK_IMM};
    assert!(hooks.contains(&LOG_ARM) && hooks.contains(&LOG_PROCEED), "{hooks:?}");
    check_reconvergence(&logged.code).unwrap();
    // The stack's traffic is told by its immediate: stack accesses have it, no other
    // private access reaches it.
    let private = |i: &&vortex_model::abi::isa::Instr| matches!(i.op, Op::Ldp | Op::Stp);
    let stack = k.code.iter().filter(private).filter(|i| i.imm == STACK_IMM).count();
    assert!(stack >= 3, "root, pop and child pushes: {stack}");
    assert!(k.code.iter().filter(private).all(|i| i.imm <= STACK_IMM), "{}", k.disassemble());
}

/// Seed 004's fixtures through the compiled query (the RT unit's walk, or on rdna2 the
/// shader's loop, whatever `VORTEX_RT_ARCH` says): t is preserved across a scaling instance
/// transform without renormalising the ray (world t 12 for a direction of length 0.5, where
/// the object-space direction has length 0.25), and the procedural slab test ignores the
/// NaN of a zero direction component whose origin lies on the box's plane (the box is
/// entered) while an origin a hair outside misses.
#[test]
fn instance_scaling_keeps_t_and_zero_direction_slabs() {
    let tri =
        Blas { tris: vec![[[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]]], flags: 1, ..Default::default() };
    let cube = Blas { aabbs: vec![([0.0; 3], [1.0; 3])], flags: 1, ..Default::default() };
    // Scale by 2, lift by 4: the triangle lies at world z = 4. The cube sits at x = 10.
    let scaled = [2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 4.0];
    let moved = [1.0, 0.0, 0.0, 10.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
    let scene = Scene {
        blases: vec![tri, cube],
        instances: vec![
            Inst { blas: 0, o2w: scaled, custom: 3, flags: 0 },
            Inst { blas: 1, o2w: moved, custom: 5, flags: 0 },
        ],
    };
    let src = r#"#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(set = 0, binding = 1) buffer Out { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec3 org[4] = vec3[4](vec3(0.1, 0.2, 10.0), vec3(10.0, 0.5, 5.0), vec3(9.999, 0.5, 5.0), vec3(10.5, 0.0, 5.0));
    vec3 dir[4] = vec3[4](vec3(0.0, 0.0, -0.5), vec3(0.0, 0.0, -1.0), vec3(0.0, 0.0, -1.0), vec3(0.0, 0.0, -1.0));
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, 0u, 0xFFu, org[i], 0.0, dir[i], 100.0);
    while (rayQueryProceedEXT(q)) {
        if (rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionAABBEXT) {
            rayQueryGenerateIntersectionEXT(q, 4.0);
        }
    }
    o[3 * i] = uint(rayQueryGetIntersectionTypeEXT(q, true));
    o[3 * i + 1] = floatBitsToUint(rayQueryGetIntersectionTEXT(q, true));
    o[3 * i + 2] = uint(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true));
}
"#;
    let Some(w) = glsl(src) else { return };
    let bindings = [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Storage(vec![0; 4 * 3 * 4]))];
    let r = run_words(&w, &bindings, [1, 1, 1], &[], &[], 4);
    let o = r.u32s(1);
    let (triangle, generated) = (1, 2);
    assert_eq!(o[0..3], [triangle, 12.0f32.to_bits(), 3], "t through the scaled instance: {o:?}");
    assert_eq!((o[3], f32::from_bits(o[4]), o[5]), (generated, 4.0, 5), "origin on the box's x plane: {o:?}");
    assert_eq!(o[6], 0, "a hair outside the box misses: {o:?}");
    // y = 0 is the cube's lower y plane: entered as well.
    assert_eq!((o[9], o[11]), (generated, 5), "origin on the box's y plane: {o:?}");
}

/// The confirm-all proof (`rayquery::confirm_all`): a query stepped only through `while
/// (proceed) confirm` gets `TRACE_CONFIRM_ALL` on its TRACE; every loop that could see a
/// candidate, skip one, stop early or leave a candidate unconfirmed does not.
#[test]
fn only_confirm_all_loops_mark_their_trace() {
    use vortex_model::abi::isa::Op;
    use vortex_model::abi::rtu::TRACE_CONFIRM_ALL;
    use vortex_transcode::shader::{compile, CompileOptions};
    let shader = |decl: &str, body: &str| {
        format!(
            r#"#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, set = 0, binding = 1) buffer Out {{ float r[]; }} o;
{decl}
void main() {{
    vec3 orig = vec3(float(gl_WorkGroupID.x) + 0.3, 0.3, 0.5);
    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsNoOpaqueEXT, 0xFF, orig, 0.0, vec3(0.0, 0.0, -1.0), 1.0);
{body}
    o.r[gl_WorkGroupID.x] = rayQueryGetIntersectionTEXT(rq, true);
}}"#
        )
    };
    let confirm_all = "    while (rayQueryProceedEXT(rq)) {\n        rayQueryConfirmIntersectionEXT(rq);\n    }";
    let cases: [(&str, &str, &str, bool); 7] = [
        ("while (proceed) confirm", "", confirm_all, true),
        ("an empty body ignores every candidate", "", "    while (rayQueryProceedEXT(rq)) {}", false),
        ("one proceed, not a loop", "", "    if (rayQueryProceedEXT(rq)) rayQueryConfirmIntersectionEXT(rq);", false),
        (
            "a candidate getter in the body",
            "",
            "    while (rayQueryProceedEXT(rq)) {\n        if (rayQueryGetIntersectionTEXT(rq, false) > 0.5) rayQueryConfirmIntersectionEXT(rq);\n    }",
            false,
        ),
        (
            "a terminate in the body",
            "",
            "    while (rayQueryProceedEXT(rq)) {\n        rayQueryConfirmIntersectionEXT(rq);\n        rayQueryTerminateEXT(rq);\n    }",
            false,
        ),
        (
            "a proceed before the loop",
            "",
            &format!("    rayQueryProceedEXT(rq);\n{confirm_all}"),
            false,
        ),
        (
            "a store to the body's buffer",
            "",
            "    while (rayQueryProceedEXT(rq)) {\n        rayQueryConfirmIntersectionEXT(rq);\n        o.r[100] += 1.0;\n    }",
            false,
        ),
    ];
    let bindings = [b(0, 0, Res::Tlas(checkerboard(0).0)), b(0, 1, Res::Storage(vec![0; 512]))];
    for (what, decl, body, marked) in cases {
        let Some(w) = glsl(&shader(decl, body)) else { return };
        let mut opts = CompileOptions::entry("main");
        opts.layout = layout(&bindings, 0);
        opts.target.ray_query = vortex_transcode::shader::RayQueryLowering::Rtu;
        let k = compile(&w, &opts).unwrap();
        let traces: Vec<u32> = k.code.iter().filter(|i| i.op == Op::Trace).map(|i| i.imm).collect();
        assert_eq!(traces.len(), 1, "{what}");
        assert_eq!(traces[0] & TRACE_CONFIRM_ALL != 0, marked, "{what}:\n{}", k.disassemble());
    }
}
