#version 450
// Workgroup memory holding structs and 2D arrays, updated in several phases separated by
// barrier(): a stencil that reads neighbours written by other invocations (other warps),
// a reduction tree, and a broadcast of the result, with memoryBarrierShared and
// groupMemoryBarrier between phases.
//! dispatch 3
//! buffer 0 storage 1024 = rand u32 0 1000 43
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;
struct Cell { uint value; uint sum; };
shared Cell grid[8][8];
shared uint tree[64];

void main() {
    uvec2 l = gl_LocalInvocationID.xy;
    uint flat_ = gl_LocalInvocationIndex;
    grid[l.y][l.x].value = i_.v[(gl_WorkGroupID.x * 64u + flat_) % 256u];
    memoryBarrierShared();
    barrier();
    uint s = grid[l.y][l.x].value;
    s += grid[(l.y + 1u) % 8u][l.x].value + grid[l.y][(l.x + 7u) % 8u].value;
    grid[l.y][l.x].sum = s;
    tree[flat_] = s;
    groupMemoryBarrier();
    barrier();
    for (uint stride = 32u; stride > 0u; stride >>= 1) {
        if (flat_ < stride) tree[flat_] = max(tree[flat_], tree[flat_ + stride]) + 1u;
        barrier();
    }
    o.v[gl_WorkGroupID.x * 64u + flat_] = grid[7u - l.y][7u - l.x].sum * 1000u + tree[0];
}
