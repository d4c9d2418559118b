#version 450
// The workgroup size from specialization constants (local_size_x_id/y_id): a 3D size with
// gl_WorkGroupSize used in arithmetic and as a shared array length.
//! dispatch 2 2
//! spec 0 u32 8
//! spec 1 u32 4
//! buffer 0 storage 2048
//! check 0 exact
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z = 2) in;
layout(std430, binding = 0) writeonly buffer O { uint v[]; } o;
shared uint s[gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z];

void main() {
    uint l = gl_LocalInvocationIndex;
    uint n = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;
    s[l] = l * 3u;
    barrier();
    uvec3 g = gl_GlobalInvocationID;
    uint w = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint h = gl_NumWorkGroups.y * gl_WorkGroupSize.y;
    uint idx = (g.z * h + g.y) * w + g.x;
    o.v[idx] = s[n - 1u - l] + (gl_WorkGroupSize.x << 16) + (gl_WorkGroupSize.y << 24) + n * 1000u;
}
