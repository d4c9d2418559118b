#version 450
// FMix (float and bool selector), SmoothStep and Fma: their precision is inherited from
// the formulas (and Fma may be evaluated unfused), so a few ULP are allowed, plus an
// absolute slack where the result is near zero.
//! dispatch 1
//! buffer 0 storage 512 = rand f32 -4 4 19
//! buffer 1 storage 4096
//! check 1 f32 ulp 4 abs 1e-6
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float x = a.v[i], y = a.v[(i + 1u) & 127u], t = fract(a.v[(i + 2u) & 127u]);
    uint base = i * 8u;
    o.v[base] = mix(x, y, t);
    o.v[base + 1u] = mix(x, y, x < y);
    vec3 m = mix(vec3(x, y, t), vec3(y, t, x), vec3(0.25, 0.5, t));
    o.v[base + 2u] = m.x + m.y + m.z;
    o.v[base + 3u] = smoothstep(-2.0, 3.0, x);
    o.v[base + 4u] = smoothstep(y - 1.0, y + 1.5, x);
    o.v[base + 5u] = fma(x, y, t);
    o.v[base + 6u] = fma(x, x, -y * y);
    o.v[base + 7u] = mix(-x, x, 0.75);
}
