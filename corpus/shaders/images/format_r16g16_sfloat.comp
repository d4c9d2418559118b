#version 450
// Storage image of format R16G16_SFLOAT (2D): imageLoad converts texels to
// vec4, imageStore converts back (normalized formats round to nearest; float16 stores may round to
// nearest or toward zero, so one half-ULP of slack; the transform never
// lands halfway between two codes), and a plain copy round-trips the texels.
//! dispatch 1
//! image 0 storage 2d r16g16_sfloat 8 6 1 = rand f16 -4 4 51
//! image 1 storage 2d r16g16_sfloat 8 6 1
//! image 2 storage 2d r16g16_sfloat 8 6 1
//! check 1 f16 ulp 1
//! check 2 exact
layout(local_size_x = 8, local_size_y = 6) in;
layout(rg16f, binding = 0) readonly uniform image2D src;
layout(rg16f, binding = 1) writeonly uniform image2D dst;
layout(rg16f, binding = 2) writeonly uniform image2D cpy;

void main() {
    ivec2 p = ivec2(gl_LocalInvocationID.xy);
    vec4 v = imageLoad(src, p);
    imageStore(dst, p, v * 0.5 + vec4(0.25, -0.75, 1.0, 2.0));
    imageStore(cpy, ivec2(7, 5) - p, v);
}
