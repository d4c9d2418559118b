#version 450
// A uniform buffer holding an array of std140 structs (each with a vec3, a scalar after it,
// and a float array with 16-byte stride), indexed dynamically per invocation, plus a uniform
// buffer descriptor array indexed with a constant and a dynamically uniform index.
//! features shaderUniformBufferArrayDynamicIndexing
//! dispatch 1
//! buffer 0 uniform 1024 = rand f32 -100 100 67
//! buffer 1[0] uniform 256 = iota f32 1 1
//! buffer 1[1] uniform 256 = iota f32 -1 -2
//! buffer 2 storage 2048
//! check 2 exact
//! push u32 1
layout(local_size_x = 16) in;
struct Light { vec3 pos; float radius; float weights[3]; };
layout(std140, binding = 0) uniform Lights { Light l[8]; } lights;
layout(std140, binding = 1) uniform Tables { vec4 t[16]; } tables[2];
layout(push_constant) uniform PC { uint which; } pc;
layout(std430, binding = 2) writeonly buffer O { vec4 v[]; } o;

void main() {
    uint id = gl_LocalInvocationID.x;
    Light l = lights.l[id % 8u];
    float w = l.weights[id % 3u] + lights.l[(id + 1u) % 8u].weights[2];
    o.v[id * 2u] = vec4(l.pos, l.radius + w);
    o.v[id * 2u + 1u] = tables[0].t[id] + tables[pc.which].t[15u - id];
}
