#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Object-to-world and world-to-object matrices, the object-space ray origin and direction,
// of the candidate (while proceeding) and of the committed intersection; the rotated and
// scaled instance makes them non-trivial.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 65536
//! check 1 f32 abs 1e-5 ulp 64
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    uint b = (p.y * 16u + p.x) * 64u;
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, 0x0B, gridOrigin(p.x, p.y), 0.0, vec3(0, 0, 1), 100.0);
    float candSum = 0.0;
    while (rayQueryProceedEXT(q)) {
        mat4x3 m = rayQueryGetIntersectionObjectToWorldEXT(q, false);
        mat4x3 w = rayQueryGetIntersectionWorldToObjectEXT(q, false);
        vec3 oo = rayQueryGetIntersectionObjectRayOriginEXT(q, false);
        vec3 od = rayQueryGetIntersectionObjectRayDirectionEXT(q, false);
        candSum += m[3].x + m[0].x * 10.0 + w[3].z + w[2].z * 100.0 + oo.x + oo.z * 0.01 + od.z;
        rayQueryConfirmIntersectionEXT(q);
    }
    o.v[b] = candSum;
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionTriangleEXT) {
        mat4x3 m = rayQueryGetIntersectionObjectToWorldEXT(q, true);
        mat4x3 w = rayQueryGetIntersectionWorldToObjectEXT(q, true);
        for (int c = 0; c < 4; c++) for (int r = 0; r < 3; r++) {
            o.v[b + 1u + uint(c * 3 + r)] = m[c][r];
            o.v[b + 13u + uint(c * 3 + r)] = w[c][r];
        }
        vec3 oo = rayQueryGetIntersectionObjectRayOriginEXT(q, true);
        vec3 od = rayQueryGetIntersectionObjectRayDirectionEXT(q, true);
        o.v[b + 25u] = oo.x; o.v[b + 26u] = oo.y; o.v[b + 27u] = oo.z;
        o.v[b + 28u] = od.x; o.v[b + 29u] = od.y; o.v[b + 30u] = od.z;
    }
}
