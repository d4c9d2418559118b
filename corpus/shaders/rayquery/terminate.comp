#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// rayQueryTerminateEXT: a query that confirms its first candidate and terminates (with a
// mask selecting the forced non-opaque instance, a ray meets one candidate at most), one
// that terminates before proceeding again without confirming, and one terminated right
// after initialization.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 8192
//! check 1 f32 abs 1e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    vec3 org = gridOrigin(p.x, p.y);
    rayQueryEXT a, b, c;
    rayQueryInitializeEXT(a, tlas, gl_RayFlagsNoneEXT, 0x08, org, 0.0, vec3(0, 0, 1), 100.0);
    uint na = 0u;
    while (rayQueryProceedEXT(a)) {
        na++;
        rayQueryConfirmIntersectionEXT(a);
        rayQueryTerminateEXT(a);
    }
    rayQueryInitializeEXT(b, tlas, gl_RayFlagsNoneEXT, 0x08, org, 0.0, vec3(0, 0, 1), 100.0);
    uint nb = 0u;
    while (rayQueryProceedEXT(b)) {
        nb++;
        rayQueryTerminateEXT(b);
    }
    rayQueryInitializeEXT(c, tlas, gl_RayFlagsNoneEXT, 0xFF, org, 0.0, vec3(0, 0, 1), 100.0);
    rayQueryTerminateEXT(c);
    uint nc = 0u;
    while (rayQueryProceedEXT(c)) nc++;
    uint base = (p.y * 16u + p.x) * 8u;
    o.v[base] = float(na);
    o.v[base + 1u] = float(rayQueryGetIntersectionTypeEXT(a, true));
    o.v[base + 2u] = rayQueryGetIntersectionTypeEXT(a, true) != 0u ? rayQueryGetIntersectionTEXT(a, true) : -1.0;
    o.v[base + 3u] = float(nb);
    o.v[base + 4u] = float(rayQueryGetIntersectionTypeEXT(b, true));
    o.v[base + 5u] = float(nc);
    o.v[base + 6u] = float(rayQueryGetIntersectionTypeEXT(c, true));
    o.v[base + 7u] = 0.0;
}
