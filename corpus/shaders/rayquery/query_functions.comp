#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Ray queries passed to functions (glslang passes them by pointer; a function that takes
// one "by value" and one that initializes through an out-style parameter), the
// acceleration structure passed as an argument, and a query initialized in one function
// and proceeded in another.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 4096
//! check 1 f32 abs 1e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void start(rayQueryEXT q, accelerationStructureEXT as_, vec3 org, uint mask) {
    rayQueryInitializeEXT(q, as_, gl_RayFlagsNoneEXT, mask, org, 0.0, vec3(0, 0, 1), 100.0);
}

bool step(rayQueryEXT q) {
    bool more = rayQueryProceedEXT(q);
    if (more && rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionTriangleEXT) {
        rayQueryConfirmIntersectionEXT(q);
    }
    return more;
}

float result(rayQueryEXT q) {
    return rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT
        ? rayQueryGetIntersectionTEXT(q, true) + float(rayQueryGetIntersectionInstanceIdEXT(q, true)) * 100.0
        : -1.0;
}

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    rayQueryEXT q1, q2;
    start(q1, tlas, gridOrigin(p.x, p.y), 0x0B);
    start(q2, tlas, gridOrigin(15u - p.x, p.y), 0x03);
    while (step(q1)) {}
    while (step(q2)) {}
    uint b = (p.y * 16u + p.x) * 2u;
    o.v[b] = result(q1);
    o.v[b + 1u] = result(q2);
}
