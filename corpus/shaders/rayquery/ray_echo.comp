#version 460
#extension GL_EXT_ray_query : require
// RayTMin, RayFlags, WorldRayOrigin and WorldRayDirection echo the run-time values the
// query was initialized with (read from a buffer), before and after proceeding.
//! dispatch 1
//! scene 0 grid
//! buffer 1 storage 4096 = rand f32 -5 5 70
//! buffer 2 storage 256 = rand u32 0 0x3ff 71
//! buffer 3 storage 16384
//! check 3 exact
layout(local_size_x = 64) in;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer R { vec4 v[]; } r;
layout(std430, binding = 2) readonly buffer F { uint v[]; } f;
layout(std430, binding = 3) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    vec4 a = r.v[2u * i], d = r.v[2u * i + 1u];
    float tmin = abs(a.w);
    // Valid combinations only: skip-closest-hit and facing culls, or skip-triangles alone.
    uint flags = (f.v[i] & 0x100u) != 0u ? 0x108u & f.v[i] : f.v[i] & 0x38u;
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, flags, 0xFF, a.xyz, tmin, d.xyz, tmin + 50.0);
    uint b = i * 16u;
    o.v[b] = rayQueryGetRayTMinEXT(q);
    o.v[b + 1u] = uintBitsToFloat(rayQueryGetRayFlagsEXT(q));
    vec3 wo = rayQueryGetWorldRayOriginEXT(q), wd = rayQueryGetWorldRayDirectionEXT(q);
    o.v[b + 2u] = wo.x; o.v[b + 3u] = wo.y; o.v[b + 4u] = wo.z;
    o.v[b + 5u] = wd.x; o.v[b + 6u] = wd.y; o.v[b + 7u] = wd.z;
    // Whether candidates come back depends on the driver (AABB tests may be conservative),
    // so inside the loop the echo is only compared with what was given.
    bool same = true;
    while (rayQueryProceedEXT(q)) {
        same = same && rayQueryGetRayTMinEXT(q) == tmin && rayQueryGetWorldRayDirectionEXT(q) == d.xyz;
    }
    o.v[b + 8u] = same ? 1.0 : 0.0;
    o.v[b + 9u] = 0.0;
    o.v[b + 10u] = rayQueryGetRayTMinEXT(q);
    o.v[b + 11u] = uintBitsToFloat(rayQueryGetRayFlagsEXT(q));
    vec3 wo2 = rayQueryGetWorldRayOriginEXT(q);
    o.v[b + 12u] = wo2.x; o.v[b + 13u] = wo2.y; o.v[b + 14u] = wo2.z;
    o.v[b + 15u] = 0.0;
}
