#version 460
// variants: images1d=-DDIM=1 images2d=-DDIM=2 images3d=-DDIM=3
// Stores a coordinate-derived value into five storage images of one dimensionality (chosen
// by the DIM macro), reads each texel back with imageLoad, and writes what it read to an
// SSBO, so both the store and the load path are checked.
layout(local_size_x = 4, local_size_y = 4, local_size_z = 1) in;

#if DIM == 1
#define COORD int(gl_GlobalInvocationID.x)
#define IMG(fmt, ty) layout(fmt) uniform ty##1D
#elif DIM == 2
#define COORD ivec2(gl_GlobalInvocationID.xy)
#define IMG(fmt, ty) layout(fmt) uniform ty##2D
#else
#define COORD ivec3(gl_GlobalInvocationID.xyz)
#define IMG(fmt, ty) layout(fmt) uniform ty##3D
#endif

layout(binding = 0) IMG(r32i, iimage) img_i;
layout(binding = 1) IMG(r32ui, uimage) img_u;
layout(binding = 2) IMG(r32f, image) img_f;
layout(binding = 3) IMG(rgba8, image) img_rgba8;
layout(binding = 4) IMG(rgba32f, image) img_rgba32f;
layout(std430, binding = 5) buffer Readback { vec4 texels[]; };
layout(push_constant) uniform Size { uvec4 extent; };

void main() {
    uvec3 g = gl_GlobalInvocationID;
    if (any(greaterThanEqual(g, extent.xyz))) {
        return;
    }
    uint linear = g.x + extent.x * (g.y + extent.y * g.z);
    int v = int(linear) * 3 - 7;
    imageStore(img_i, COORD, ivec4(v));
    imageStore(img_u, COORD, uvec4(linear * 5u + 1u));
    imageStore(img_f, COORD, vec4(float(linear) * 0.25));
    vec4 c = vec4(float(g.x % 4u) / 3.0, float(g.y % 2u), 0.5, 1.0);
    imageStore(img_rgba8, COORD, c);
    imageStore(img_rgba32f, COORD, vec4(float(g.x), float(g.y), float(g.z), -1.5));

    uint base = linear * 5u;
    texels[base + 0u] = vec4(imageLoad(img_i, COORD));
    texels[base + 1u] = vec4(imageLoad(img_u, COORD));
    texels[base + 2u] = imageLoad(img_f, COORD);
    texels[base + 3u] = imageLoad(img_rgba8, COORD);
    texels[base + 4u] = imageLoad(img_rgba32f, COORD);
}
