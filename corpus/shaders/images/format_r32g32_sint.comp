#version 450
// Storage image of format R32G32_SINT (2D): imageLoad converts texels to
// ivec4, imageStore converts back (normalized formats round to nearest, and the transform never
// lands halfway between two codes; integer results stay representable, since others are
// undefined), and a plain copy round-trips the texels.
//! dispatch 1
//! image 0 storage 2d r32g32_sint 8 6 1 = bytes 52
//! image 1 storage 2d r32g32_sint 8 6 1
//! image 2 storage 2d r32g32_sint 8 6 1
//! check 1 exact
//! check 2 exact
layout(local_size_x = 8, local_size_y = 6) in;
layout(rg32i, binding = 0) readonly uniform iimage2D src;
layout(rg32i, binding = 1) writeonly uniform iimage2D dst;
layout(rg32i, binding = 2) writeonly uniform iimage2D cpy;

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    ivec4 v = imageLoad(src, p);
    imageStore(dst, p, v / -3 + ivec4(1, -2, 3, -4));
    imageStore(cpy, ivec2(7, 5) - p, v);
}
