#version 460
// Derivatives and helper invocations: per pixel, fine and coarse derivatives of functions
// of the fragment's position and of an interpolated varying, whether it is a helper; the
// stores and the fragment count skip helper invocations.
layout(location = 0) in vec4 v_attr;
layout(location = 0) out vec4 color;
layout(std430, binding = 0) buffer Counts { uint counts[]; };
layout(std430, binding = 1) buffer Out { vec4 results[]; };
layout(push_constant) uniform Params {
    vec4 color;
    vec4 offset;
    uvec4 misc;
} p;

void main() {
    vec2 f = gl_FragCoord.xy;
    uint i = uint(f.x) + uint(f.y) * p.misc.x;
    float v = 0.75 * v_attr.z + 0.25 * v_attr.w;
    vec4 a = vec4(dFdxFine(f.x * f.x), dFdyFine(f.y * f.y), dFdxCoarse(f.x * f.y), gl_HelperInvocation ? 1.0 : 0.0);
    vec4 b = vec4(dFdx(v), dFdy(v), dFdyCoarse(f.x * f.y), 1.0);
    results[2u * i] = a;
    results[2u * i + 1u] = b;
    atomicAdd(counts[i], 1u);
    color = p.color;
}
