#version 460
#extension GL_EXT_ray_query : require
// Rays that start inside a procedural box report it as a candidate, even with
// tmin = tmax = 0 (conformance tests rely on it); rays starting outside with a zero-length
// interval see nothing.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 64) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    // Inside the opaque box [0.1,0.6]^2 x [0,0.5] of the instance at (0, 2, 4), on a 8x8 grid
    // of points; odd lanes start outside every box (above the scene).
    vec3 inside = vec3(0.13 + 0.06 * float(i & 7u), 2.13 + 0.06 * float(i >> 3), 4.21);
    vec3 org = (i & 1u) == 0u ? inside : inside + vec3(0.0, 0.0, 20.0);
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, 0x04, org, 0.0, vec3(0.3, -0.2, 1.0), 0.0);
    uint n = 0u, opaque = 0u;
    while (rayQueryProceedEXT(q)) {
        n++;
        if (rayQueryGetIntersectionCandidateAABBOpaqueEXT(q)) opaque++;
    }
    o.v[4u * i] = n == 0u ? 0u : 1u;
    o.v[4u * i + 1u] = opaque == 0u ? 0u : 1u;
    o.v[4u * i + 2u] = rayQueryGetIntersectionTypeEXT(q, true);
    o.v[4u * i + 3u] = i;
}
