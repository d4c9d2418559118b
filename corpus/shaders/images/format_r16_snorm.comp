#version 450
// Storage image of format R16_SNORM (2D): imageLoad converts texels to
// vec4, imageStore converts back (normalized formats round to nearest, and the transform never
// lands halfway between two codes; integer results stay representable, since others are
// undefined), and a plain copy round-trips the texels.
//! dispatch 1
//! image 0 storage 2d r16_snorm 8 6 1 = bytes 52
//! image 1 storage 2d r16_snorm 8 6 1
//! image 2 storage 2d r16_snorm 8 6 1
//! check 1 exact
//! check 2 exact
layout(local_size_x = 8, local_size_y = 6) in;
layout(r16_snorm, binding = 0) readonly uniform image2D src;
layout(r16_snorm, binding = 1) writeonly uniform image2D dst;
layout(r16_snorm, binding = 2) writeonly uniform image2D cpy;

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    vec4 v = imageLoad(src, p);
    imageStore(dst, p, v * 0.5 + vec4(0.25));
    imageStore(cpy, ivec2(7, 5) - p, v);
}
