#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
// Buffer references converted to and from uvec2 (GL_EXT_buffer_reference_uvec2, no 64-bit
// integers needed), a reference passed to a function, and stores of 16-byte vectors
// through it.
//! dispatch 1
//! buffer 0 storage 16 = addr -data
//! buffer -data storage 1024 = rand f32 -5 5 121
//! buffer 1 storage 512
//! check 1 exact
//! check -data exact
layout(local_size_x = 16) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vecs { vec4 v[]; };
layout(std430, binding = 0) buffer Roots { uvec2 addr; } r;
layout(std430, binding = 1) writeonly buffer O { vec4 v[]; } o;

vec4 scaled(Vecs p, uint k, float f) { return p.v[k] * f; }

void main() {
    uint i = gl_LocalInvocationID.x;
    Vecs p = Vecs(r.addr);
    uvec2 back = uvec2(p);
    o.v[2u * i] = scaled(p, 15u - i, 2.0);
    o.v[2u * i + 1u] = vec4(uintBitsToFloat(back.x ^ r.addr.x), uintBitsToFloat(back.y ^ r.addr.y), 0.0, 0.0);
    barrier();
    p.v[i + 16u] = p.v[i] + vec4(1.0);
}
