#version 460
// The sparse-binding checks' shader, over a buffer whose pages are bound to scattered
// memory: mode 0 writes data[first + i] = i * 3 + salt for i < count; mode 1 copies
// data[first + i] into out[i].
layout(local_size_x = 64) in;

layout(std430, binding = 0) buffer Data { uint data[]; };
layout(std430, binding = 1) buffer Out { uint result[]; };
layout(push_constant) uniform Params {
    uint mode;
    uint first;
    uint count;
    uint salt;
};

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) {
        return;
    }
    if (mode == 0u) {
        data[first + i] = i * 3u + salt;
    } else {
        result[i] = data[first + i];
    }
}
