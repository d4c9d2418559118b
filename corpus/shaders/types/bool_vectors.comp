#version 450
// bool and bvecN: relational built-ins (lessThan, equal, notEqual, ...), any/all/not,
// mix with a bvec selector, bools stored to memory as uints, and bool arrays in private
// memory indexed dynamically.
//! dispatch 2
//! buffer 0 storage 512 = rand i32 -4 4 9
//! buffer 1 storage 1024
//! check 1 exact
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { ivec4 v[]; } i_;
layout(std430, binding = 1) writeonly buffer Out { uvec4 v[]; } o;

void main() {
    uint id = gl_GlobalInvocationID.x;
    ivec4 a = i_.v[id % 32u];
    ivec4 b = i_.v[(id * 7u + 3u) % 32u];
    bvec4 lt = lessThan(a, b), le = lessThanEqual(a, b), eq = equal(a, b), ne = notEqual(a, b);
    bvec4 gt = greaterThan(vec4(a), vec4(b)), ge = greaterThanEqual(uvec4(a + 4), uvec4(b + 4));
    bool flags[6] = bool[6](any(lt), all(le), any(eq), all(ne), any(not(gt)), all(ge));
    uint packed = 0u;
    for (uint i = 0u; i < 6u; ++i) packed |= uint(flags[(i + id) % 6u]) << i;
    ivec4 m = mix(a, b, lt);
    bvec2 x2 = bvec2(a.xy);
    bvec3 eqv = equal(bvec3(lt.xyz), bvec3(ge.yzw));
    o.v[id] = uvec4(packed, uvec4(m).x * 3u + uvec4(m).w, uint(x2.x) + 2u * uint(x2.y),
                    uint(eqv.x) + 2u * uint(eqv.y) + 4u * uint(not(eqv).z));
}
