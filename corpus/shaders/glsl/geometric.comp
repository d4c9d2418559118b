#version 450
// Length, Distance, Normalize (inherited from sqrt and dot), Dot, Cross, FaceForward,
// Reflect and Refract (including total internal reflection), on vec2/vec3/vec4.
//! dispatch 1
//! buffer 0 storage 2048 = rand f32 -2 2 24
//! buffer 1 storage 8192
//! check 1 f32 ulp 16 abs 2e-6
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { vec4 v[]; } a;
layout(std430, binding = 1) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    vec4 p = a.v[i], q = a.v[(i + 1u) & 63u];
    uint base = i * 32u;
    o.v[base] = length(p);
    o.v[base + 1u] = length(p.xy);
    o.v[base + 2u] = distance(p.xyz, q.xyz);
    o.v[base + 3u] = dot(p, q);
    o.v[base + 4u] = dot(p.xz, q.yw);
    vec3 c = cross(p.xyz, q.xyz);
    o.v[base + 5u] = c.x; o.v[base + 6u] = c.y; o.v[base + 7u] = c.z;
    vec4 n = normalize(p);
    o.v[base + 8u] = n.x; o.v[base + 9u] = n.y; o.v[base + 10u] = n.z; o.v[base + 11u] = n.w;
    vec3 f = faceforward(p.xyz, q.xyz, vec3(1.0, -0.5, 0.25));
    o.v[base + 12u] = f.x; o.v[base + 13u] = f.y; o.v[base + 14u] = f.z;
    vec3 nn = normalize(q.xyz);
    vec3 r = reflect(p.xyz, nn);
    o.v[base + 15u] = r.x; o.v[base + 16u] = r.y; o.v[base + 17u] = r.z;
    vec3 dir = normalize(p.xyz);
    vec3 t = refract(dir, nn, 0.66);
    o.v[base + 18u] = t.x; o.v[base + 19u] = t.y; o.v[base + 20u] = t.z;
    vec3 t2 = refract(dir, nn, 1.5);
    o.v[base + 21u] = t2.x; o.v[base + 22u] = t2.y; o.v[base + 23u] = t2.z;
    vec2 n2 = normalize(p.zw);
    o.v[base + 24u] = n2.x; o.v[base + 25u] = n2.y;
    o.v[base + 26u] = length(vec3(p.x));
    o.v[base + 27u] = distance(p.x, q.x);
    o.v[base + 28u] = dot(p.xyz, p.xyz);
    o.v[base + 29u] = 0.0;
    o.v[base + 30u] = 0.0;
    o.v[base + 31u] = 0.0;
}
