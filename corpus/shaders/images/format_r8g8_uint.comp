#version 450
// Storage image of format R8G8_UINT (2D): imageLoad converts texels to
// uvec4, imageStore converts back (normalized formats round to nearest, and the transform never
// lands halfway between two codes; integer results stay representable, since others are
// undefined), and a plain copy round-trips the texels.
//! dispatch 1
//! image 0 storage 2d r8g8_uint 8 6 1 = bytes 52
//! image 1 storage 2d r8g8_uint 8 6 1
//! image 2 storage 2d r8g8_uint 8 6 1
//! check 1 exact
//! check 2 exact
layout(local_size_x = 8, local_size_y = 6) in;
layout(rg8ui, binding = 0) readonly uniform uimage2D src;
layout(rg8ui, binding = 1) writeonly uniform uimage2D dst;
layout(rg8ui, binding = 2) writeonly uniform uimage2D cpy;

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    uvec4 v = imageLoad(src, p);
    imageStore(dst, p, v / 3u + uvec4(1u, 2u, 3u, 4u));
    imageStore(cpy, ivec2(7, 5) - p, v);
}
