#version 460
// Bounded work per invocation, as much in one dispatch as the host asks for: workgroups keep
// retiring, so the watchdog must let the dispatch run to its end however long it takes.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint rounds; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = i;
    for (uint r = 0u; r < rounds; r++) {
        x = x * 1664525u + 1013904223u;
    }
    data[i] = x;
}
