#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// One pixel per invocation: a primary ray, a hard shadow towards a directional light, and
// `spp` ambient-occlusion rays. Shading reads the hit triangle's vertices (all meshes share
// one vertex and one index buffer; the instance custom index names the mesh) and transforms
// them to world space, so the normal is exact under any instance transform. Alpha-tested
// geometry (the card of `--cutout`) is not opaque: its candidates are confirmed by the
// alpha test, as the pipeline's any-hit shader does (rt_scene.rahit).
layout(local_size_x = 8, local_size_y = 8) in;
#include "scene_shading.glsl"

// Runs query q to the end, confirming the candidates the alpha test keeps (a macro: a
// ray query cannot be passed to a function).
#define WALK(q)                                                                              \
    while (rayQueryProceedEXT(q)) {                                                          \
        uint c_mesh = uint(rayQueryGetIntersectionInstanceCustomIndexEXT(q, false));         \
        uint c_prim = uint(rayQueryGetIntersectionPrimitiveIndexEXT(q, false));              \
        if (cutout_opaque(c_mesh, c_prim, rayQueryGetIntersectionBarycentricsEXT(q, false))) { \
            rayQueryConfirmIntersectionEXT(q);                                               \
        }                                                                                    \
    }

bool occluded(vec3 origin, vec3 dir, float tmax) {
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, origin, 0.0, dir, tmax);
    WALK(q);
    return rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT;
}

void main() {
    uint px = gl_GlobalInvocationID.x;
    uint py = gl_GlobalInvocationID.y + dims.w;
    if (px >= dims.x || py >= dims.y) {
        return;
    }
    vec3 dir = camera_dir(px, py);

    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, 0xFF, eye.xyz, 0.0, dir, 1.0e30);
    WALK(q);
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionNoneEXT) {
        write_pixel(px, py, sky(dir), 1u, 0u);
        return;
    }
    float t = rayQueryGetIntersectionTEXT(q, true);
    uint mesh = uint(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true));
    uint inst = uint(rayQueryGetIntersectionInstanceIdEXT(q, true));
    uint prim = uint(rayQueryGetIntersectionPrimitiveIndexEXT(q, true));
    vec3 n = hit_normal(mesh, prim, rayQueryGetIntersectionObjectToWorldEXT(q, true), dir);
    vec3 p = surface_point(eye.xyz, dir, t, n);
    uint mask;
    vec3 color = shade_hit(px, py, inst, n, p, mask);
    write_pixel(px, py, color, 2u + dims.z, mask);
}
