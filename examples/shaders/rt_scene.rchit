#version 460
// variants: rt_scene.rchit=-DSHADOWS_IN_CLOSEST_HIT rt_scene_depth1.rchit=-DSHADOWS_IN_RAYGEN
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
// The camera ray's hit: the normal from the triangle's vertices, then the shadow ray
// towards the light and the AO rays traced from here (recursion depth 2), shaded as
// render.comp shades. The depth-1 variant hands the surface to the ray generation shader.
#ifdef SHADOWS_IN_CLOSEST_HIT
#define TRACES_SHADOWS
#endif
#include "rt_scene_common.glsl"
layout(location = 0) rayPayloadInEXT Shaded payload;

void main() {
    vec3 dir = gl_WorldRayDirectionEXT;
    uint inst = uint(gl_InstanceID);
    vec3 n = hit_normal(uint(gl_InstanceCustomIndexEXT), uint(gl_PrimitiveID), gl_ObjectToWorldEXT, dir);
    vec3 p = surface_point(gl_WorldRayOriginEXT, dir, gl_HitTEXT, n);
#ifdef SHADOWS_IN_CLOSEST_HIT
    uint mask;
    vec3 color = shade_hit(gl_LaunchIDEXT.x, gl_LaunchIDEXT.y + dims.w, inst, n, p, mask);
    payload = Shaded(color, 2u + dims.z, mask, p);
#else
    payload = Shaded(n, 0u, inst + 1u, p);
#endif
}
