#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// GLSL.std.450 on 16-bit floats: rounding, fract, modf, frexp/ldexp, min/max/clamp, mix,
// step/smoothstep, sqrt/inversesqrt, length/distance/normalize/dot/cross, reflect/refract,
// faceforward, determinant and inverse of f16 matrices. Precision per Vulkan's 16-bit
// rules: dot products of terms up to 8 in magnitude may differ by a few half-ULPs of 8,
// depending on whether each step is rounded to half (here) or not.
//! features shaderFloat16 storageBuffer16BitAccess
//! dispatch 1
//! buffer 0 storage 512 = rand f16 -8 8 106
//! buffer 1 storage 4096
//! check 1 f16 ulp 4 abs 0.02
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { f16vec4 v[]; } a;
layout(std430, binding = 1) writeonly buffer O { float16_t v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    f16vec4 p = a.v[i], q = a.v[(i + 1u) & 63u];
    uint b = i * 32u;
    o.v[b] = round(p.x + 0.25hf);
    o.v[b + 1u] = roundEven(p.y) + trunc(p.z) + ceil(p.w) + floor(q.x);
    o.v[b + 2u] = fract(p.x);
    float16_t w;
    o.v[b + 3u] = modf(p.y, w) + w * 0.5hf;
    int e;
    o.v[b + 4u] = frexp(p.z, e) + float16_t(e);
    o.v[b + 5u] = ldexp(p.w, int(i & 7u) - 3);
    o.v[b + 6u] = clamp(p.x, -1.0hf, 1.0hf) + min(p.y, q.y) - max(p.z, q.z);
    o.v[b + 7u] = mix(p.x, q.x, 0.75hf);
    o.v[b + 8u] = step(p.y, q.y) + smoothstep(-2.0hf, 2.0hf, p.w);
    o.v[b + 9u] = sqrt(abs(p.x)) + inversesqrt(abs(q.x) + 1.0hf);
    o.v[b + 10u] = length(p.xy) + distance(p.zw, q.zw);
    f16vec3 n = normalize(p.xyz + f16vec3(0.0hf, 0.0hf, 9.0hf));
    o.v[b + 11u] = n.x; o.v[b + 12u] = n.y; o.v[b + 13u] = n.z;
    o.v[b + 14u] = dot(p, q * 0.125hf);
    f16vec3 c = cross(p.xyz * 0.5hf, q.xyz * 0.5hf);
    o.v[b + 15u] = c.x; o.v[b + 16u] = c.y; o.v[b + 17u] = c.z;
    f16vec3 r = reflect(p.xyz * 0.25hf, n);
    o.v[b + 18u] = r.x; o.v[b + 19u] = r.y; o.v[b + 20u] = r.z;
    f16vec3 t = refract(n, f16vec3(0.0hf, 0.0hf, 1.0hf), 0.5hf);
    o.v[b + 21u] = t.x; o.v[b + 22u] = t.z;
    o.v[b + 23u] = faceforward(p.xy, q.xy, f16vec2(1.0hf, -1.0hf)).x;
    f16mat2 m = f16mat2(floor(p.x), floor(p.y), floor(p.z), floor(p.w) + 9.5hf);
    o.v[b + 24u] = determinant(m);
    f16mat2 im = inverse(m);
    o.v[b + 25u] = im[0][0] * 8.0hf; o.v[b + 26u] = im[1][1] * 8.0hf;
    o.v[b + 27u] = sign(p.x) + abs(q.y);
    o.v[b + 28u] = fma(p.x, p.y, p.z);
    o.v[b + 29u] = mod(p.w, 1.5hf);
    o.v[b + 30u] = float16_t(isnan(p.x / p.x) || isinf(q.x * 8192.0hf));
    o.v[b + 31u] = radians(p.y) + degrees(p.z * 0.01hf);
}
