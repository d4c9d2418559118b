#version 450
#extension GL_EXT_scalar_block_layout : require
// Scalar block layout (GL_EXT_scalar_block_layout): vec3 arrays packed at 12-byte strides,
// a float right after a vec3, vec2 at 4-byte alignment, structs without padding, and a
// scalar uniform block and push constants.
//! features scalarBlockLayout
//! dispatch 1
//! push f32 1 2 3 4
//! buffer 0 storage 1024 = rand f32 -10 10 140
//! buffer 1 uniform 256 = rand f32 -10 10 141
//! buffer 2 storage 1024
//! check 2 exact
layout(local_size_x = 16) in;
struct S { vec3 p; float w; vec2 uv; uint id; };
layout(scalar, binding = 0) buffer In { vec3 pts[16]; S s[8]; } i_;
layout(scalar, binding = 1) uniform U { float a; vec3 b; vec2 c; vec3 arr[4]; } u;
layout(scalar, push_constant) uniform P { float x; vec3 y; } pc;
layout(scalar, binding = 2) writeonly buffer O { vec3 o3[16]; S out_s[8]; float tail; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    vec3 p = i_.pts[i];
    o.o3[15u - i] = p * 2.0 + u.b + pc.y;
    if (i < 8u) {
        S s = i_.s[i];
        s.p += vec3(u.a, pc.x, float(i));
        s.w = s.w + u.c.x;
        s.uv = s.uv.yx + u.arr[i & 3u].xz;
        s.id = floatBitsToUint(s.uv.x) ^ i;
        o.out_s[i] = s;
    }
    if (i == 0u) o.tail = u.c.y + u.arr[3].z;
}
