#version 450
// Every compute built-in: gl_GlobalInvocationID, gl_LocalInvocationID, gl_WorkGroupID,
// gl_NumWorkGroups, gl_LocalInvocationIndex, gl_WorkGroupSize, on a 3D dispatch of a 3D
// workgroup with a dispatch base.
//! dispatch 3 2 2
//! base 1 0 2
//! buffer 0 storage 32768
//! check 0 exact
layout(local_size_x = 4, local_size_y = 3, local_size_z = 2) in;
layout(std430, binding = 0) writeonly buffer O { uint v[]; } o;

void main() {
    uvec3 g = gl_GlobalInvocationID;
    uvec3 size = gl_WorkGroupSize * (gl_NumWorkGroups + uvec3(1, 0, 2));
    uint idx = (g.z * size.y + g.y) * size.x + g.x;
    uint b = idx * 8u;
    o.v[b] = g.x | g.y << 8 | g.z << 16;
    o.v[b + 1u] = gl_LocalInvocationID.x | gl_LocalInvocationID.y << 8 | gl_LocalInvocationID.z << 16;
    o.v[b + 2u] = gl_WorkGroupID.x | gl_WorkGroupID.y << 8 | gl_WorkGroupID.z << 16;
    o.v[b + 3u] = gl_NumWorkGroups.x | gl_NumWorkGroups.y << 8 | gl_NumWorkGroups.z << 16;
    o.v[b + 4u] = gl_LocalInvocationIndex;
    o.v[b + 5u] = gl_WorkGroupSize.x | gl_WorkGroupSize.y << 8 | gl_WorkGroupSize.z << 16;
    o.v[b + 6u] = 0xabcdu;
    o.v[b + 7u] = idx;
}
