#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
// 16-bit floats in registers and in storage buffers: arithmetic (each result rounded to
// half precision), comparisons, conversions to and from float and int, f16 vectors,
// bitcasts to and from uint16 and uint (packFloat2x16), and GLSL functions on halves.
// Add/sub/mul/div are correctly rounded; the functions get the precision Vulkan allows
// for 16-bit floats. (Transcendentals on halves are left out: lavapipe crashes compiling
// them.)
//! features shaderFloat16 shaderInt16 storageBuffer16BitAccess
//! dispatch 1
//! buffer 0 storage 128 = f16 0 -0 1 -1 0.5 65504 ; rand f16 -50 50 94
//! buffer 1 storage 128 = f16 1 2 -3 0.25 3 -2 ; rand f16 0.5 8 95
//! buffer 2 storage 2048
//! buffer 3 storage 2048
//! check 2 exact bytes 0 512
//! check 2 f16 ulp 2 abs 0.002 bytes 512 2048
//! check 3 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float16_t v[]; } a;
layout(std430, binding = 1) readonly buffer B { float16_t v[]; } b;
layout(std430, binding = 2) writeonly buffer O { float16_t v[]; } o;
layout(std430, binding = 3) writeonly buffer U { uint v[]; } u;

void main() {
    uint i = gl_LocalInvocationID.x;
    float16_t x = a.v[i], y = b.v[i];
    precise float16_t s = x + y;
    precise float16_t d = x - y;
    precise float16_t m = x * y;
    o.v[i] = s;
    o.v[64u + i] = d;
    o.v[128u + i] = m;
    o.v[192u + i] = -x;
    o.v[256u + i] = x / y;
    o.v[320u + i] = sqrt(abs(x));
    o.v[384u + i] = floor(x) + fract(y);
    o.v[448u + i] = min(x, y) * max(x, y);
    o.v[512u + i] = ceil(x * 0.05hf) + round(y);
    o.v[576u + i] = fma(x, y, -1.0hf);
    o.v[640u + i] = float16_t(float(x) * 1.001);
    o.v[704u + i] = mix(x, y, 0.25hf);
    o.v[768u + i] = inversesqrt(y);
    o.v[832u + i] = float16_t(int(x)) + float16_t(uint(y));
    o.v[896u + i] = dot(f16vec3(x, y, 1.0hf), f16vec3(0.5hf, -1.0hf, x));
    o.v[960u + i] = clamp(x, -4.0hf, y);
    f16vec2 v = f16vec2(x, y);
    u.v[8u * i] = uint(x < y) | uint(x == y) << 1 | uint(isnan(x / y)) << 2 | uint(x >= 0.0hf) << 3;
    u.v[8u * i + 1u] = packFloat2x16(v);
    u.v[8u * i + 2u] = uint(float16BitsToUint16(x));
    u.v[8u * i + 3u] = floatBitsToUint(float(x) + float(y));
    u.v[8u * i + 4u] = uint(int(y * 3.0hf));
    u.v[8u * i + 5u] = packFloat2x16(unpackFloat2x16(packFloat2x16(v) ^ 0x80008000u) * 2.0hf);
    u.v[8u * i + 6u] = uint(uint16BitsToFloat16(uint16_t(0x3c00u + i)) * 4.0hf);
    u.v[8u * i + 7u] = uint(float16_t(2049.0) == 2048.0hf);
}
