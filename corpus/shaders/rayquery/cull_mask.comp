#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Cull masks from a push constant and per workgroup: each mask lets through the instances
// whose mask bits intersect it. Every candidate is confirmed (boxes at their exact entry).
//! dispatch 1 1 6
//! push u32 0x01 0x02 0x04 0x08 0x0F 0x05
//! scene 0 grid
//! buffer 1 storage 12288
//! check 1 f32 abs 1e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(push_constant) uniform P { uint masks[6]; } pc;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    uint set = gl_WorkGroupID.z;
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, pc.masks[set], gridOrigin(p.x, p.y), 0.0, vec3(0, 0, 1), 100.0);
    while (rayQueryProceedEXT(q)) {
        if (rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionTriangleEXT) {
            rayQueryConfirmIntersectionEXT(q);
        } else {
            vec3 lo, hi;
            boxOf(rayQueryGetIntersectionGeometryIndexEXT(q, false), rayQueryGetIntersectionPrimitiveIndexEXT(q, false), lo, hi);
            float t = slab(rayQueryGetIntersectionObjectRayOriginEXT(q, false), rayQueryGetIntersectionObjectRayDirectionEXT(q, false),
                           lo, hi, rayQueryGetRayTMinEXT(q), rayQueryGetIntersectionTEXT(q, true));
            if (t >= 0.0) rayQueryGenerateIntersectionEXT(q, t);
        }
    }
    uint b = ((set * 16u + p.y) * 16u + p.x) * 2u;
    bool hit = rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT;
    o.v[b] = hit ? rayQueryGetIntersectionTEXT(q, true) : -1.0;
    o.v[b + 1u] = hit ? float(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true)) : -1.0;
}
