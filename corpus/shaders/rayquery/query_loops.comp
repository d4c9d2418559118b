#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// One query re-initialized in a loop: each iteration starts where the previous hit was
// (tmin past it), walking through every surface along the ray; a per-lane trip count makes
// the loop divergent.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 8192
//! check 1 f32 abs 2e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    vec3 org = gridOrigin(p.x, p.y);
    float tmin = 0.0;
    uint b = (p.y * 16u + p.x) * 8u;
    uint n = 0u;
    for (uint k = 0u; k < 8u; k++) {
        rayQueryEXT q;
        rayQueryInitializeEXT(q, tlas, 0x200u, 0xFF, org, tmin, vec3(0, 0, 1), 100.0);
        while (rayQueryProceedEXT(q)) rayQueryConfirmIntersectionEXT(q);
        if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionNoneEXT) break;
        float t = rayQueryGetIntersectionTEXT(q, true);
        o.v[b + k] = t;
        tmin = t + 0.01;
        n++;
    }
    for (uint k = n; k < 8u; k++) o.v[b + k] = -1.0;
}
