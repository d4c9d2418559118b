#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
#include "rt_recursion_common.glsl"
#include "rt_recursion_params.glsl"
#include "rt_recursion_payload.glsl"
// Records the hit, then traces from it: a shadow ray towards the light (depth 2), or the
// bounce, one level deeper, until max_level.
layout(location = 0) rayPayloadInEXT Payload p;
layout(location = 1) rayPayloadEXT Payload next;
layout(location = 2) rayPayloadEXT uint lit;

void main() {
    p.hash = mix_hash(p.hash, hit_tag(gl_PrimitiveID, gl_InstanceCustomIndexEXT));
    p.bounces += 1u;
    if (p.level == 1u) {
        p.t = gl_HitTEXT;
    }
    precise vec3 at = gl_WorldRayOriginEXT + gl_WorldRayDirectionEXT * gl_HitTEXT;
    if (mode == 0u) {
        lit = 0u;
        traceRayEXT(tlas, SHADOW | SKIP_CLOSEST_HIT, 0xFF, 0, 0, 1, at, EPSILON, light.xyz, FAR, 2);
        p.shadowed = 1u - lit;
    } else if (p.level < max_level) {
        next = Payload(p.hash, p.bounces, p.t, 0u, p.level + 1u);
        vec3 d = bounce(gl_WorldRayDirectionEXT, gl_PrimitiveID);
        traceRayEXT(tlas, OPAQUE, 0xFF, 0, 0, 0, at, EPSILON, d, FAR, 1);
        p.hash = next.hash;
        p.bounces = next.bounces;
    }
}
