#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// Four ray queries live at once, with different masks and flags, proceeded in an
// interleaved loop until all are done; each confirms its triangles and generates its boxes.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 8192
//! check 1 f32 abs 1e-4
#include "grid.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void handle(rayQueryEXT q) {
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

void main() {
    uvec2 p = gl_LocalInvocationID.xy;
    vec3 org = gridOrigin(p.x, p.y);
    rayQueryEXT a, b, c, d;
    rayQueryInitializeEXT(a, tlas, gl_RayFlagsNoneEXT, 0x01, org, 0.0, vec3(0, 0, 1), 100.0);
    rayQueryInitializeEXT(b, tlas, gl_RayFlagsNoneEXT, 0x06, org, 0.0, vec3(0, 0, 1), 100.0);
    rayQueryInitializeEXT(c, tlas, gl_RayFlagsOpaqueEXT, 0xFF, org, 0.0, vec3(0, 0, 1), 100.0);
    rayQueryInitializeEXT(d, tlas, 0x200u, 0x0A, org + vec3(0, 0, 12.5), 0.0, vec3(0, 0, -1), 100.0);
    bool ra = true, rb = true, rc = true, rd = true;
    while (ra || rb || rc || rd) {
        if (ra) { ra = rayQueryProceedEXT(a); if (ra) handle(a); }
        if (rb) { rb = rayQueryProceedEXT(b); if (rb) handle(b); }
        if (rc) { rc = rayQueryProceedEXT(c); if (rc) handle(c); }
        if (rd) { rd = rayQueryProceedEXT(d); if (rd) handle(d); }
    }
    uint base = (p.y * 16u + p.x) * 8u;
    o.v[base] = rayQueryGetIntersectionTypeEXT(a, true) != 0u ? rayQueryGetIntersectionTEXT(a, true) : -1.0;
    o.v[base + 1u] = rayQueryGetIntersectionTypeEXT(b, true) != 0u ? rayQueryGetIntersectionTEXT(b, true) : -1.0;
    o.v[base + 2u] = rayQueryGetIntersectionTypeEXT(c, true) != 0u ? rayQueryGetIntersectionTEXT(c, true) : -1.0;
    o.v[base + 3u] = rayQueryGetIntersectionTypeEXT(d, true) != 0u ? rayQueryGetIntersectionTEXT(d, true) : -1.0;
    o.v[base + 4u] = float(rayQueryGetIntersectionTypeEXT(a, true) + 4u * rayQueryGetIntersectionTypeEXT(b, true));
    o.v[base + 5u] = float(rayQueryGetIntersectionTypeEXT(c, true) + 4u * rayQueryGetIntersectionTypeEXT(d, true));
    o.v[base + 6u] = rayQueryGetIntersectionTypeEXT(d, true) != 0u ? float(rayQueryGetIntersectionInstanceIdEXT(d, true)) : -1.0;
    o.v[base + 7u] = rayQueryGetIntersectionTypeEXT(b, true) != 0u ? float(rayQueryGetIntersectionInstanceCustomIndexEXT(b, true)) : -1.0;
}
