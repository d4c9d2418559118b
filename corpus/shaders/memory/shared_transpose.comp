#version 450
// A 2D workgroup (16x16) transposes a tile through shared memory: writes at (x, y), a
// barrier with memoryBarrierShared, reads at (y, x). Also a shared struct array and a
// shared matrix.
//! dispatch 2 2
//! buffer 0 storage 4096 = iota u32 0 1
//! buffer 1 storage 4096
//! buffer 2 storage 64
//! check 1 exact
//! check 2 exact
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer In { uint v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uint v[]; } o;
layout(std430, binding = 2) writeonly buffer Extra { uint v[]; } e;
shared uint tile[16][17];
struct Cell { uint a; uvec2 b; };
shared Cell cells[16];
shared mat4 sm;

void main() {
    uvec2 l = gl_LocalInvocationID.xy;
    uvec2 g = gl_GlobalInvocationID.xy;
    uint w = gl_NumWorkGroups.x * 16u;
    tile[l.y][l.x] = i_.v[g.y * w + g.x];
    if (l.y == 0u) cells[l.x] = Cell(l.x, uvec2(l.x * 2u, l.x * 3u));
    if (l.x < 4u && l.y < 4u) sm[l.x][l.y] = float(l.x * 4u + l.y);
    memoryBarrierShared();
    barrier();
    uvec2 t = gl_WorkGroupID.yx * 16u + l;
    o.v[t.y * w + t.x] = tile[l.x][l.y];
    if (gl_LocalInvocationIndex < 16u && gl_WorkGroupID == uvec3(1, 1, 0)) {
        Cell c = cells[15u - gl_LocalInvocationIndex];
        e.v[gl_LocalInvocationIndex] = c.a + c.b.x * 100u + c.b.y * 10000u + uint(sm[gl_LocalInvocationIndex & 3u][gl_LocalInvocationIndex >> 2]) * 1000000u;
    }
}
