#version 460
// Robust buffer and image access: reads and writes past a descriptor's range (and past a
// dynamic offset's range, and past a VK_WHOLE_SIZE dynamic range that ends at the buffer's
// end), and image and texel-buffer accesses outside the view. Dispatched twice: mode 0
// writes (and adds atomically), mode 1 reads. `far` is an index far past every allocation.
layout(local_size_x = 1) in;

layout(std430, binding = 0) buffer Results { uint r[16]; };
layout(std430, binding = 1) buffer Small { uint v[]; } small;
layout(std430, binding = 2) buffer Dyn { uint v[]; } dyn;
layout(std140, binding = 3) uniform Whole { uvec4 u[32]; } whole;
layout(binding = 4, r32ui) uniform uimage2DArray image;
layout(binding = 5, r32ui) uniform uimageBuffer texels;
layout(push_constant) uniform Params { uint mode; uint far; };

void main() {
    if (mode == 0u) {
        small.v[3] = 5u;
        small.v[4] = 7u;
        small.v[far] = 7u;
        atomicAdd(small.v[5], 1u);
        atomicAdd(small.v[far], 1u);
        dyn.v[0] = 6u;
        dyn.v[4] = 7u;
        dyn.v[far] = 7u;
        imageStore(image, ivec3(4, 0, 0), uvec4(9u));
        imageStore(image, ivec3(0, -1, 0), uvec4(9u));
        imageStore(image, ivec3(1, 1, 2), uvec4(9u));
        imageStore(texels, 4, uvec4(9u));
        r[15] = 0xC0FFEEu;
    } else {
        r[0] = small.v[4];
        r[1] = small.v[far];
        r[2] = dyn.v[4];
        r[3] = dyn.v[far];
        r[4] = whole.u[16].x;
        r[5] = whole.u[0].x;
        r[6] = imageLoad(image, ivec3(4, 0, 0)).x;
        r[7] = imageLoad(image, ivec3(1, 1, 2)).x;
        r[8] = imageLoad(texels, 4).x;
        r[9] = uint(small.v.length());
        r[10] = small.v[3];
        r[11] = dyn.v[0];
        r[12] = imageLoad(image, ivec3(1, 1, 1)).x;
        r[13] = imageLoad(texels, 3).x;
        r[14] = 0xC0FFEEu;
    }
}
