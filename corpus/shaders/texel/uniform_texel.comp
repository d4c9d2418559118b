#version 450
#extension GL_EXT_samplerless_texture_functions : require
// Uniform texel buffers (samplerBuffer and the separate textureBuffer forms) of float,
// normalized, integer and half formats: texelFetch converts each texel to a vec4/ivec4/uvec4,
// textureSize gives the element count of the view. Normalized texels convert as c / 255
// within 1 ULP (lavapipe multiplies by the reciprocal).
//! dispatch 1
//! texel 0 uniform r32g32b32a32_sfloat 1024 = rand f32 -100 100 130
//! texel 1 uniform r8g8b8a8_unorm 256 = bytes 131
//! texel 2 uniform r16g16_sint 256 = rand i16 -30000 30000 132
//! texel 3 uniform r32_uint 256 = iota u32 7 3
//! texel 4 uniform r16g16b16a16_sfloat 512 = rand f16 -8 8 133
//! buffer 5 storage 8192
//! check 5 f32 ulp 1
layout(local_size_x = 64) in;
layout(binding = 0) uniform samplerBuffer a;
layout(binding = 1) uniform samplerBuffer b;
layout(binding = 2) uniform isamplerBuffer c;
layout(binding = 3) uniform utextureBuffer d;
layout(binding = 4) uniform samplerBuffer e;
layout(std430, binding = 5) writeonly buffer O { vec4 v[]; } o;

void main() {
    int i = int(gl_LocalInvocationID.x);
    o.v[8 * i] = texelFetch(a, i);
    o.v[8 * i + 1] = texelFetch(b, i);
    o.v[8 * i + 2] = vec4(texelFetch(c, i));
    o.v[8 * i + 3] = vec4(texelFetch(d, 63 - i));
    o.v[8 * i + 4] = texelFetch(e, i);
    o.v[8 * i + 5] = vec4(textureSize(a), textureSize(b), textureSize(c), textureSize(d));
    o.v[8 * i + 6] = vec4(float(textureSize(e)), texelFetch(a, (i * 7) % 64).zx, 0.0);
    o.v[8 * i + 7] = vec4(0.0);
}
