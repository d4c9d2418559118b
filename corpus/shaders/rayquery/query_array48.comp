#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
// An array of 48 ray queries (Private, as conformance tests declare it), all live at once:
// query k starts at a different point of the grid with mask bit k % 4, they are proceeded
// round-robin through dynamic indices, and the committed distances are summed.
//! dispatch 2
//! scene 0 grid
//! buffer 1 storage 4096
//! check 1 f32 abs 1e-3
#include "grid.glsl"
layout(local_size_x = 32) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;
rayQueryEXT q[48];

void main() {
    uint id = gl_GlobalInvocationID.x;
    for (uint k = 0u; k < 48u; k++) {
        uint cell = (id * 7u + k * 5u) & 255u;
        rayQueryInitializeEXT(q[k], tlas, gl_RayFlagsOpaqueEXT | 0x200u, 1u << (k & 3u),
                              gridOrigin(cell & 15u, cell >> 4), 0.0, vec3(0, 0, 1), 100.0);
    }
    uint live = 48u;
    uint steps = 0u;
    bool running[48];
    for (uint k = 0u; k < 48u; k++) running[k] = true;
    while (live > 0u && steps < 1000u) {
        for (uint k = 0u; k < 48u; k++) {
            if (!running[k]) continue;
            if (!rayQueryProceedEXT(q[k])) { running[k] = false; live--; }
        }
        steps++;
    }
    float sum = 0.0;
    uint hits = 0u;
    for (uint k = 0u; k < 48u; k++) {
        if (rayQueryGetIntersectionTypeEXT(q[k], true) != gl_RayQueryCommittedIntersectionNoneEXT) {
            sum += rayQueryGetIntersectionTEXT(q[k], true) * float(k + 1u);
            hits++;
        }
    }
    o.v[2u * id] = sum;
    o.v[2u * id + 1u] = float(hits);
}
