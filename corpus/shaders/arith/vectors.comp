#version 450
// Vector construction, swizzles (read and write), component-wise ops on vec2/3/4, ivec and
// uvec, dynamic component indexing (read and write), and dot/length-free reductions.
//! dispatch 1
//! buffer 0 storage 1024 = rand i32 -100 100 14
//! buffer 1 storage 4096
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { ivec4 v[]; } a;
layout(std430, binding = 1) writeonly buffer O { ivec4 v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    ivec4 v = a.v[i];
    ivec3 t = v.zyx + ivec3(1, 2, 3);
    ivec2 p = v.ww * v.xy;
    uvec4 u = uvec4(v) >> uvec4(1, 2, 3, 4);
    ivec4 w = v;
    w.yx = p;
    w.w = t.z;
    uint k = i & 3u;
    w[k] += 1000;
    int dyn = v[(i + 1u) & 3u];
    o.v[4u * i] = w;
    o.v[4u * i + 1u] = ivec4(t, dyn);
    o.v[4u * i + 2u] = ivec4(u.xyz, u.w) ^ ivec4(v.wzyx);
    o.v[4u * i + 3u] = min(v, t.xyzx) + ivec4(max(v.x, p.y), clamp(v.y, -5, 5), v.w, 0);
}
