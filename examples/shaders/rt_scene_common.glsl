// The ray-tracing pipeline's render of the scene (rt_scene.*): the shading of the
// ray-query render (scene_shading.glsl) and what the stages hand each other.
#include "scene_shading.glsl"

// The camera ray's payload (location 0): the shaded colour and what the pixel records.
// With SHADOWS_IN_RAYGEN (the variant for devices whose maxRayRecursionDepth is 1) the
// closest-hit shader only finds the surface: `color` is its normal, `point` where the
// shadow and AO rays start, and the ray generation shader traces them.
struct Shaded {
    vec3 color;
    uint rays;
    uint mask;
    vec3 point;
};

#ifdef TRACES_SHADOWS
// Shadow and AO rays: payload location 1, miss index 1 (rt_scene_shadow.rmiss clears
// `shadowed`), the hit group's any-hit alpha test but no closest-hit, and the first hit
// the any-hit shader accepts ends the ray.
layout(location = 1) rayPayloadEXT uint shadowed;

bool occluded(vec3 origin, vec3 dir, float tmax) {
    shadowed = 1u;
    uint flags = gl_RayFlagsTerminateOnFirstHitEXT | gl_RayFlagsSkipClosestHitShaderEXT;
    traceRayEXT(tlas, flags, 0xFF, 0, 1, 1, origin, 0.0, dir, tmax, 1);
    return shadowed != 0u;
}
#endif
