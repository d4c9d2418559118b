#version 460
// Counts the fragments of every pixel with an atomic and writes the push-constant colour.
layout(location = 0) in vec4 v_attr;
layout(location = 0) out vec4 color;
layout(std430, binding = 0) buffer Counts { uint counts[]; };
layout(push_constant) uniform Params {
    vec4 color;
    vec4 offset;
    uvec4 misc;
} p;

void main() {
    uvec2 px = uvec2(gl_FragCoord.xy);
    atomicAdd(counts[px.x + px.y * p.misc.x], 1u);
    color = p.color;
}
