#version 450
// A tree reduction in workgroup shared memory with barrier() between levels, the classic
// pattern: every level halves the active invocations.
//! dispatch 4
//! buffer 0 storage 4096 = rand u32 0 1000000 31
//! buffer 1 storage 16
//! check 1 exact
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;
shared uint s[256];

void main() {
    uint l = gl_LocalInvocationID.x;
    s[l] = i_.v[gl_GlobalInvocationID.x];
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1) {
        if (l < stride) s[l] += s[l + stride];
        barrier();
    }
    if (l == 0u) o.v[gl_WorkGroupID.x] = s[0];
}
