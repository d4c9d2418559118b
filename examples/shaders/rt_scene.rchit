#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
// The camera ray's hit: the normal from the triangle's vertices, a shadow ray towards the
// light and the AO rays traced from here (recursion depth 2), shaded as render.comp shades.
#include "rt_scene_common.glsl"
layout(location = 0) rayPayloadInEXT Shaded payload;
layout(location = 1) rayPayloadEXT uint shadowed;

// Any accepted hit ends the ray; no closest-hit shader runs, the shadow miss shader clears
// `shadowed`.
bool occluded(vec3 origin, vec3 dir, float tmax) {
    shadowed = 1u;
    uint flags = gl_RayFlagsTerminateOnFirstHitEXT | gl_RayFlagsSkipClosestHitShaderEXT;
    traceRayEXT(tlas, flags, 0xFF, 0, 1, SHADOW_MISS, origin, 0.0, dir, tmax, 1);
    return shadowed != 0u;
}

void main() {
    uint px = gl_LaunchIDEXT.x;
    uint py = gl_LaunchIDEXT.y + dims.w;
    vec3 dir = gl_WorldRayDirectionEXT;
    uint mesh = uint(gl_InstanceCustomIndexEXT);
    uint inst = uint(gl_InstanceID);
    vec3 n = hit_normal(mesh, uint(gl_PrimitiveID), gl_ObjectToWorldEXT, dir);
    vec3 p = surface_point(gl_WorldRayOriginEXT, dir, gl_HitTEXT, n);
    bool lit = !occluded(p, light.xyz, 1.0e30);

    vec3 tx, ty;
    uint state;
    ao_frame(n, px, py, tx, ty, state);
    uint hits = 0u;
    for (uint s = 0u; s < dims.z; s++) {
        if (occluded(p, ao_dir(n, tx, ty, state), light.w)) {
            hits++;
        }
    }
    uint mask = (inst + 1u) | (lit ? MASK_LIT : 0u) | (hits << MASK_AO_SHIFT);
    payload = Shaded(shade(inst, n, lit, hits), 2u + dims.z, mask);
}
