#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Ray flags chosen at run time (a storage buffer, so they are not constants): opaque and
// no-opaque forcing, culling of opaque/non-opaque/back-facing/front-facing geometry,
// skipping triangles or AABBs, and terminate-on-first-hit (forced opaque) where every hit
// is in one instance. Per ray and flag set: how many candidates came back and what was
// committed (type, instance).
//! dispatch 1 1 10
//! scene 0 grid
//! buffer 1 storage 64 = u32 0 1 2 0x10 0x20 0x40 0x80 0x100 0x200 0x5
//! buffer 2 storage 40960
//! check 2 exact
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer F { uint flags[]; } f;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    uint set = gl_WorkGroupID.z;
    uint flags = f.flags[set];
    rayQueryEXT q;
    // With terminate-on-first-hit (set 9) only instance 0 (mask 1) is traced: one hit.
    uint mask = set == 9u ? 0x01u : 0xFFu;
    rayQueryInitializeEXT(q, tlas, flags, mask, gridOrigin(p.x, p.y), 0.0, vec3(0, 0, 1), 100.0);
    uint n = 0u;
    while (rayQueryProceedEXT(q)) n++;
    uint b = ((set * 16u + p.y) * 16u + p.x) * 4u;
    uint type = rayQueryGetIntersectionTypeEXT(q, true);
    o.v[b] = n;
    o.v[b + 1u] = type;
    o.v[b + 2u] = type == 0u ? 0xffffffffu : uint(rayQueryGetIntersectionInstanceIdEXT(q, true));
    o.v[b + 3u] = rayQueryGetRayFlagsEXT(q);
}
