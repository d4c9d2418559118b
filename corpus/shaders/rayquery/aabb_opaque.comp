#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Procedural candidates: CandidateAABBOpaque for the opaque and non-opaque box geometries,
// with and without the force-opaque / force-no-opaque ray flags; generated intersections
// commit at the recomputed entry distance; the committed type is "generated".
//! dispatch 1 1 3
//! push u32 0 1 2
//! scene 0 grid
//! buffer 1 storage 12288
//! check 1 f32 abs 1e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(push_constant) uniform P { uint flags[3]; } pc;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    uint set = gl_WorkGroupID.z;
    rayQueryEXT q;
    // Only the procedural instance (mask 4).
    rayQueryInitializeEXT(q, tlas, pc.flags[set], 0x04, gridOrigin(p.x, p.y), 0.0, vec3(0, 0, 1), 100.0);
    uint opaque = 0u, nonOpaque = 0u;
    while (rayQueryProceedEXT(q)) {
        if (rayQueryGetIntersectionTypeEXT(q, false) != gl_RayQueryCandidateIntersectionAABBEXT) continue;
        if (rayQueryGetIntersectionCandidateAABBOpaqueEXT(q)) opaque++; else nonOpaque++;
        vec3 lo, hi;
        int g = rayQueryGetIntersectionGeometryIndexEXT(q, false);
        boxOf(g, rayQueryGetIntersectionPrimitiveIndexEXT(q, false), lo, hi);
        float t = slab(rayQueryGetIntersectionObjectRayOriginEXT(q, false), rayQueryGetIntersectionObjectRayDirectionEXT(q, false),
                       lo, hi, rayQueryGetRayTMinEXT(q), rayQueryGetIntersectionTEXT(q, true));
        if (t >= 0.0) rayQueryGenerateIntersectionEXT(q, t);
    }
    uint b = ((set * 16u + p.y) * 16u + p.x) * 4u;
    o.v[b] = float(opaque);
    o.v[b + 1u] = float(nonOpaque);
    o.v[b + 2u] = float(rayQueryGetIntersectionTypeEXT(q, true));
    o.v[b + 3u] = rayQueryGetIntersectionTypeEXT(q, true) != 0u ? rayQueryGetIntersectionTEXT(q, true) : -1.0;
}
