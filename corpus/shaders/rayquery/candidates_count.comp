#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Every candidate is counted and ignored (so nothing is committed and traversal visits
// them all): per ray, the number of triangle and procedural candidates, and order-free
// sums of their instance, geometry and primitive indices. Opaque triangles commit on
// their own, so they show up only in the committed result.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 8192
//! check 1 exact
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, 0xFF, gridOrigin(p.x, p.y), 0.0, vec3(0, 0, 1), 100.0);
    uint tris = 0u, boxes = 0u, sum = 0u;
    while (rayQueryProceedEXT(q)) {
        uint inst = uint(rayQueryGetIntersectionInstanceIdEXT(q, false));
        uint geom = uint(rayQueryGetIntersectionGeometryIndexEXT(q, false));
        uint prim = uint(rayQueryGetIntersectionPrimitiveIndexEXT(q, false));
        if (rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionTriangleEXT) tris++;
        else boxes++;
        sum += (inst + 1u) * 1000u + geom * 100u + prim;
    }
    uint b = (p.y * 16u + p.x) * 8u;
    o.v[b] = tris;
    o.v[b + 1u] = boxes;
    o.v[b + 2u] = sum;
    o.v[b + 3u] = rayQueryGetIntersectionTypeEXT(q, true);
    o.v[b + 4u] = rayQueryGetIntersectionTypeEXT(q, true) == 0u ? 0xffffffffu : uint(rayQueryGetIntersectionInstanceIdEXT(q, true));
}
