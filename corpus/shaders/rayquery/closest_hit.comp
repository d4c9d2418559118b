#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Closest hit over the whole grid scene: non-opaque triangles are confirmed, procedural
// boxes generate an intersection at their (exactly recomputed) entry distance. Every
// committed getter is written: type, t, instance id and custom index, SBT offset,
// geometry and primitive index, barycentrics, front face.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 16384
//! check 1 f32 abs 1e-4 ulp 64
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, 0xFF, gridOrigin(p.x, p.y), 0.0, vec3(0, 0, 1), 100.0);
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
    uint b = (p.y * 16u + p.x) * 16u;
    uint type = rayQueryGetIntersectionTypeEXT(q, true);
    o.v[b] = float(type);
    if (type != gl_RayQueryCommittedIntersectionNoneEXT) {
        o.v[b + 1u] = rayQueryGetIntersectionTEXT(q, true);
        o.v[b + 2u] = float(rayQueryGetIntersectionInstanceIdEXT(q, true));
        o.v[b + 3u] = float(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true));
        o.v[b + 4u] = float(rayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetEXT(q, true));
        o.v[b + 5u] = float(rayQueryGetIntersectionGeometryIndexEXT(q, true));
        o.v[b + 6u] = float(rayQueryGetIntersectionPrimitiveIndexEXT(q, true));
        if (type == gl_RayQueryCommittedIntersectionTriangleEXT) {
            vec2 bc = rayQueryGetIntersectionBarycentricsEXT(q, true);
            o.v[b + 7u] = bc.x;
            o.v[b + 8u] = bc.y;
            o.v[b + 9u] = rayQueryGetIntersectionFrontFaceEXT(q, true) ? 1.0 : 0.0;
        }
    }
}
