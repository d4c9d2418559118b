#version 450
// GLSL.std.450 Round (inputs never exactly halfway: its direction there is the
// implementation's), RoundEven, Trunc, Floor, Ceil, Fract, FAbs, FSign, SAbs, SSign, Modf
// (out parameter and struct forms), FMin/FMax/FClamp, UMin/UMax/UClamp, SMin/SMax/SClamp,
// Step. All exact.
//! dispatch 1
//! buffer 0 storage 512 = f32 0.5 -0.5 1.5 -2.5 0 -0 3 -3 ; rand f32 -100 100 17
//! buffer 1 storage 512 = rand i32 -1000 1000 18
//! buffer 2 storage 12288
//! check 2 exact
layout(local_size_x = 128) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) readonly buffer B { int v[]; } b;
layout(std430, binding = 2) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float x = a.v[i];
    float y = a.v[(i + 17u) & 127u];
    int n = b.v[i];
    uint base = i * 24u;
    float r = x;
    if (fract(abs(x)) == 0.5) r = x + 0.25;
    o.v[base] = round(r);
    o.v[base + 1u] = roundEven(x);
    o.v[base + 2u] = trunc(x);
    o.v[base + 3u] = floor(x);
    o.v[base + 4u] = ceil(x);
    o.v[base + 5u] = fract(x);
    o.v[base + 6u] = abs(x);
    o.v[base + 7u] = sign(x);
    o.v[base + 8u] = intBitsToFloat(abs(n));
    o.v[base + 9u] = intBitsToFloat(sign(n));
    float whole;
    o.v[base + 10u] = modf(x, whole);
    o.v[base + 11u] = whole;
    o.v[base + 12u] = min(x, y);
    o.v[base + 13u] = max(x, y);
    o.v[base + 14u] = clamp(x, -10.0, y > -10.0 ? y : -10.0);
    o.v[base + 15u] = uintBitsToFloat(min(uint(n), uint(i * 1000u)));
    o.v[base + 16u] = uintBitsToFloat(max(uint(n), 500u));
    o.v[base + 17u] = uintBitsToFloat(clamp(uint(n), 100u, 900u));
    o.v[base + 18u] = intBitsToFloat(min(n, int(i) - 60));
    o.v[base + 19u] = intBitsToFloat(max(n, -int(i)));
    o.v[base + 20u] = intBitsToFloat(clamp(n, -300, 300));
    o.v[base + 21u] = step(y, x);
    vec2 v2 = step(vec2(0.0, 5.0), vec2(x));
    o.v[base + 22u] = v2.x + 2.0 * v2.y;
    o.v[base + 23u] = roundEven(x * 0.5);
}
