#version 450
// 32-bit float add, sub, mul, div, negate, fmod-style remainders and comparisons
// (ordered and unordered, with NaN operands). Add/sub/mul are correctly rounded in Vulkan
// (`precise` keeps the compiler from fusing them), division is within 2.5 ULP.
//! dispatch 1
//! buffer 0 storage 256 = rand f32 -1000 1000 3
//! buffer 1 storage 256 = f32 nan 0 -0 inf -inf 1 ; rand f32 -10 10 4
//! buffer 2 storage 4096
//! buffer 3 storage 256
//! check 2 f32 ulp 0 bytes 0 1536
//! check 2 f32 ulp 3 bytes 1536 2048
//! check 2 f32 ulp 3 abs 2e-3 bytes 2048 4096
//! check 3 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float v[]; } a;
layout(std430, binding = 1) readonly buffer B { float v[]; } b;
layout(std430, binding = 2) writeonly buffer O { float v[]; } o;
layout(std430, binding = 3) writeonly buffer C { uint v[]; } c;

void main() {
    uint i = gl_LocalInvocationID.x;
    float x = a.v[i];
    float y = b.v[i];
    precise float s = x + y;
    precise float d = x - y;
    precise float p = x * y;
    precise float q = x * 0.5 + y;
    o.v[i] = s;
    o.v[64u + i] = d;
    o.v[128u + i] = p;
    o.v[192u + i] = -x;
    o.v[256u + i] = q;
    o.v[320u + i] = abs(y);
    o.v[384u + i] = x / y;
    o.v[448u + i] = 1.0 / x;
    o.v[512u + i] = i >= 6u ? mod(x, y) : 0.0;
    o.v[576u + i] = i >= 6u ? x - y * trunc(x / y) : 0.0;
    o.v[640u + i] = floor(x / 7.0);
    o.v[704u + i] = fract(x);
    o.v[768u + i] = x * 3.0 - y;
    o.v[832u + i] = (x + 1.0) * (y - 1.0);
    o.v[896u + i] = x / 3.0;
    o.v[960u + i] = y * y * y;
    c.v[i] = uint(x < y) | uint(x <= y) << 1 | uint(x > y) << 2 | uint(x >= y) << 3 | uint(x == y) << 4
           | uint(x != y) << 5 | uint(isnan(y)) << 6 | uint(isinf(y)) << 7 | uint(!(x < y)) << 8
           | uint(!(x >= y)) << 9 | uint(y == y) << 10 | uint(y != y) << 11;
}
