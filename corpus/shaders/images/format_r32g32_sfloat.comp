#version 450
// Storage image of format R32G32_SFLOAT (2D): imageLoad converts texels to
// vec4, imageStore converts back (normalized formats round to nearest, and the transform never
// lands halfway between two codes; integer results stay representable, since others are
// undefined), and a plain copy round-trips the texels.
//! dispatch 1
//! image 0 storage 2d r32g32_sfloat 8 6 1 = rand f32 -4 4 50
//! image 1 storage 2d r32g32_sfloat 8 6 1
//! image 2 storage 2d r32g32_sfloat 8 6 1
//! check 1 exact
//! check 2 exact
layout(local_size_x = 8, local_size_y = 6) in;
layout(rg32f, binding = 0) readonly uniform image2D src;
layout(rg32f, binding = 1) writeonly uniform image2D dst;
layout(rg32f, binding = 2) writeonly uniform image2D cpy;

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    vec4 v = imageLoad(src, p);
    imageStore(dst, p, v * 0.5 + vec4(0.25, -0.75, 1.0, 2.0));
    imageStore(cpy, ivec2(7, 5) - p, v);
}
