#version 460
// Accesses through null descriptors (robustness2's nullDescriptor): a storage buffer and a
// storage image bound to nothing. Dispatched twice: mode 0 stores (and adds atomically),
// mode 1 loads, which must read zero; the buffer's length is zero. (In one dispatch a
// compiler may forward a store to a later load of the same location.)
layout(local_size_x = 1) in;

layout(std430, binding = 0) buffer Results { uint r[8]; };
layout(std430, binding = 1) buffer Null { uint v[]; } nothing;
layout(binding = 2, r32ui) uniform uimage2D image;
layout(push_constant) uniform Params { uint mode; };

void main() {
    if (mode == 0u) {
        nothing.v[5] = 77u;
        atomicAdd(nothing.v[3], 5u);
        imageStore(image, ivec2(1, 1), uvec4(9u));
        r[6] = 0xC0FFEEu;
    } else {
        r[0] = nothing.v[5];
        r[1] = nothing.v[100000];
        r[2] = uint(nothing.v.length());
        r[3] = nothing.v[3];
        r[4] = imageLoad(image, ivec2(1, 1)).x;
        r[5] = 0xC0FFEEu;
    }
}
