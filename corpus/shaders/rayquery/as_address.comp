#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Acceleration structures reached by address: a uvec2 read from a buffer becomes an
// acceleration structure (OpConvertUToAccelerationStructureKHR), as conformance tests do.
// The buffer holds the TLAS's device address and a zero (a null acceleration structure,
// which every ray misses). Skip-AABBs is passed as a run-time value (0x200).
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 16 = addr 0 ; u32 0 0
//! buffer 2 storage 4096
//! check 2 f32 abs 1e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer A { uvec2 addr; uvec2 zero; } a;
layout(std430, binding = 2) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    vec3 org = gridOrigin(p.x, p.y);
    rayQueryEXT q, r, n;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT | 0x200u, 0xFF, org, 0.0, vec3(0, 0, 1), 100.0);
    while (rayQueryProceedEXT(q)) {}
    rayQueryInitializeEXT(r, accelerationStructureEXT(a.addr), gl_RayFlagsOpaqueEXT | 0x200u, 0xFF, org, 0.0, vec3(0, 0, 1), 100.0);
    while (rayQueryProceedEXT(r)) {}
    rayQueryInitializeEXT(n, accelerationStructureEXT(a.zero), gl_RayFlagsOpaqueEXT, 0xFF, org, 0.0, vec3(0, 0, 1), 100.0);
    uint cn = 0u;
    while (rayQueryProceedEXT(n)) cn++;
    uint b = (p.y * 16u + p.x) * 4u;
    o.v[b] = rayQueryGetIntersectionTypeEXT(q, true) != 0u ? rayQueryGetIntersectionTEXT(q, true) : -1.0;
    o.v[b + 1u] = rayQueryGetIntersectionTypeEXT(r, true) != 0u ? rayQueryGetIntersectionTEXT(r, true) : -1.0;
    o.v[b + 2u] = float(rayQueryGetIntersectionTypeEXT(n, true) + cn);
    o.v[b + 3u] = rayQueryGetIntersectionTypeEXT(r, true) != 0u ? float(rayQueryGetIntersectionInstanceIdEXT(r, true)) : -1.0;
}
