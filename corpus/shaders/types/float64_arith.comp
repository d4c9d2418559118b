#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// 64-bit floats: add, sub, mul (correctly rounded), division, sqrt, comparisons, rounding
// functions, min/max/clamp/mix/step, fma, conversions to and from float, int, uint and
// int64, packDouble2x32/unpackDouble2x32, and a dvec4 dot product.
//! features shaderFloat64 shaderInt64
//! dispatch 1
//! buffer 0 storage 512 = f64 0 -0 1 -1 0.5 1e300 -1e-300 3 ; rand f64 -1000000 1000000 96
//! buffer 1 storage 512 = f64 1 2 -3 0.25 7 -2 1e10 -4 ; rand f64 -100 100 97
//! buffer 2 storage 16384
//! buffer 3 storage 512 = rand f32 -1000 1000 103
//! check 3 exact
//! check 2 f64 ulp 0 bytes 0 4096
//! check 2 f64 ulp 8 bytes 4096 16384
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { double v[]; } a;
layout(std430, binding = 1) readonly buffer B { double v[]; } b;
layout(std430, binding = 2) writeonly buffer O { double v[]; } o;
// Conversions between float and double go through memory: lavapipe folds a round trip
// (double(float(x)) == x), which drops the rounding the conversion must do.
layout(std430, binding = 3) buffer F { float v[]; } fl;

void main() {
    uint i = gl_LocalInvocationID.x;
    double x = a.v[i], y = b.v[i];
    precise double s = x + y;
    precise double d = x - y;
    precise double m = x * y;
    o.v[i] = s;
    o.v[64u + i] = d;
    o.v[128u + i] = m;
    o.v[192u + i] = -x;
    o.v[256u + i] = floor(x) + ceil(y) * 2.0lf;
    o.v[320u + i] = trunc(x) - roundEven(y);
    o.v[384u + i] = abs(x) + sign(y);
    o.v[448u + i] = double(uint(x < y) | uint(x == y) << 1 | uint(x >= y) << 2 | uint(isinf(x)) << 3 | uint(isnan(x - x)) << 4);
    o.v[512u + i] = x / y;
    o.v[576u + i] = sqrt(abs(x));
    o.v[640u + i] = fma(x, y, 0.5lf);
    o.v[704u + i] = min(x, y) + max(x, -y);
    o.v[768u + i] = clamp(x, -10.0lf, 10.0lf) + mix(x, y, 0.75lf);
    o.v[832u + i] = step(y, x) + fract(x);
    o.v[896u + i] = double(int(clamp(y, -1e9lf, 1e9lf))) + double(uint(abs(y)));
    o.v[960u + i] = double(int64_t(clamp(x, -1e15lf, 1e15lf))) + double(uint64_t(abs(y) * 1e6lf));
    uvec2 bits = unpackDouble2x32(x);
    o.v[1024u + i] = packDouble2x32(uvec2(bits.x ^ 1u, bits.y));
    o.v[1088u + i] = dot(dvec4(x, y, 1.0lf, -2.0lf), dvec4(0.5lf, y, x, 3.0lf));
    o.v[1152u + i] = inversesqrt(abs(y) + 1.0lf);
    o.v[1216u + i] = mod(x, y);
    double xm = clamp(x, -1e6lf, 1e6lf); // no catastrophic cancellation below
    o.v[1280u + i] = length(dvec2(xm, y)) - distance(dvec3(xm), dvec3(y));
    dvec3 n = normalize(dvec3(x, y, 1.0lf));
    o.v[1344u + i] = n.x + n.y * 2.0lf + n.z * 4.0lf;
    dvec3 c = cross(dvec3(xm, y, 1.0lf), dvec3(1.0lf, 2.0lf, y));
    o.v[1408u + i] = c.x - c.y + c.z;
    o.v[1472u + i] = reflect(dvec2(x, y), normalize(dvec2(1.0lf, 2.0lf))).y;
    o.v[1536u + i] = refract(normalize(dvec3(x, y, -1.0lf)), dvec3(0.0lf, 0.0lf, 1.0lf), 0.75lf).z;
    o.v[1600u + i] = smoothstep(-5.0lf, 5.0lf, x * 0.001lf);
    int e;
    double f = frexp(x, e);
    o.v[1664u + i] = f + double(e) * 10.0lf;
    o.v[1728u + i] = ldexp(y, int(i) - 30);
    double w;
    o.v[1792u + i] = modf(x, w) + w * 3.0lf;
    o.v[1856u + i] = faceforward(dvec2(x, 1.0lf), dvec2(y, 1.0lf), dvec2(1.0lf, -1.0lf)).x;
    o.v[1920u + i] = double(fl.v[i]) * 3.0lf;
    fl.v[64u + i] = float(x);
    o.v[1984u + i] = double(i);
}
