#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
// Specialization constants of 8, 16 and 64-bit integer types and of 16- and 64-bit float
// types, overridden at pipeline creation (map entries of the type's own size) and used in
// spec-constant expressions.
//! features shaderInt16 shaderInt8 shaderFloat16 shaderInt64 shaderFloat64
//! dispatch 1
//! spec 0 i8 -5
//! spec 1 u16 60000
//! spec 2 i64 -123456789012345
//! spec 3 f16 1.5
//! spec 4 f64 2.25
//! buffer 0 storage 256
//! check 0 exact
layout(local_size_x = 4) in;
layout(constant_id = 0) const int8_t A = int8_t(1);
layout(constant_id = 1) const uint16_t B = uint16_t(2);
layout(constant_id = 2) const int64_t C = 3l;
layout(constant_id = 3) const float16_t D = 4.0hf;
layout(constant_id = 4) const double E = 5.0lf;
layout(constant_id = 5) const int16_t F = int16_t(-77);
const int16_t AB = int16_t(A) * int16_t(B);
const uint16_t BSH = B >> 3us;
const int64_t C2 = C * 2l + int64_t(A);
layout(std430, binding = 0) writeonly buffer O { uint v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    uint base = i * 16u;
    o.v[base] = uint(int(A));
    o.v[base + 1u] = uint(B);
    o.v[base + 2u] = uint(C);
    o.v[base + 3u] = uint(C >> 32);
    o.v[base + 4u] = floatBitsToUint(float(D));
    o.v[base + 5u] = uint(E * 4.0lf);
    o.v[base + 6u] = uint(int(F));
    o.v[base + 7u] = uint(int(AB));
    o.v[base + 8u] = uint(BSH);
    o.v[base + 9u] = uint(C2);
    o.v[base + 10u] = floatBitsToUint(float(D * float16_t(i)));
    o.v[base + 11u] = uint(int(A) * int(i));
    for (uint k = 12u; k < 16u; k++) o.v[base + k] = 0u;
}
