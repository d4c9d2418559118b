#version 450
#extension GL_EXT_nonuniform_qualifier : require
// An array of storage images indexed uniformly and non-uniformly, and an image array read in a
// function.
//! features shaderStorageImageArrayNonUniformIndexing
//! dispatch 1
//! image 0[0] storage 2d r32_uint 4 4 1 = iota u32 100
//! image 0[1] storage 2d r32_uint 4 4 1 = iota u32 200
//! image 0[2] storage 2d r32_uint 4 4 1 = iota u32 300
//! image 1 storage 2d r32_uint 4 4 1
//! image 2 storage 2d r32_uint 4 4 1
//! check 1 exact
//! check 2 exact
layout(local_size_x = 4, local_size_y = 4) in;
layout(r32ui, binding = 0) uniform uimage2D imgs[3];
layout(r32ui, binding = 1) writeonly uniform uimage2D out1;
layout(r32ui, binding = 2) writeonly uniform uimage2D out2;

uint fetch(uint k, ivec2 p) { return imageLoad(imgs[k], p).x; }

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    uint k = gl_LocalInvocationIndex % 3u;
    uint a = imageLoad(imgs[nonuniformEXT(k)], p).x;
    uint b = fetch(2u, p.yx);
    imageStore(out1, p, uvec4(a * 1000u + b));
    imageStore(out2, p, uvec4(imageLoad(imgs[1], ivec2(3) - p).x));
}
