// The ray-tracing pipeline's render of the scene (rt_scene.*): the shading of the
// ray-query render (scene_shading.glsl) and what the stages hand each other.
#include "scene_shading.glsl"

// The primary ray's payload (location 0): the shaded colour and what the pixel records.
struct Shaded {
    vec3 color;
    uint rays;
    uint mask;
};

// Miss index 1 and payload location 1: the shadow and AO rays.
const uint SHADOW_MISS = 1u;
