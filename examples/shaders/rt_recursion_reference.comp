#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
#include "rt_recursion_common.glsl"
#include "rt_recursion_params.glsl"
// The ray-query version of rt_recursion.rgen and its shaders: the reference.
layout(local_size_x = 32) in;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) {
        return;
    }
    Ray r = rays[i];
    Trail trail = Trail(HASH_START, 0u, -1.0, 0u);
    vec3 o = r.origin_tmin.xyz;
    vec3 d = r.dir_tmax.xyz;
    float tmin = r.origin_tmin.w;
    float tmax = r.dir_tmax.w;
    for (uint level = 1u;; level++) {
        rayQueryEXT q;
        rayQueryInitializeEXT(q, tlas, OPAQUE, 0xFF, o, tmin, d, tmax);
        while (rayQueryProceedEXT(q)) {
        }
        if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionNoneEXT) {
            trail.hash = mix_hash(trail.hash, MISS_TAG);
            break;
        }
        float t = rayQueryGetIntersectionTEXT(q, true);
        int primitive = rayQueryGetIntersectionPrimitiveIndexEXT(q, true);
        trail.hash = mix_hash(trail.hash, hit_tag(primitive, rayQueryGetIntersectionInstanceCustomIndexEXT(q, true)));
        trail.bounces += 1u;
        if (level == 1u) {
            trail.t = t;
        }
        precise vec3 at = o + d * t;
        if (mode == 0u) {
            rayQueryEXT s;
            rayQueryInitializeEXT(s, tlas, SHADOW, 0xFF, at, EPSILON, light.xyz, FAR);
            while (rayQueryProceedEXT(s)) {
            }
            trail.shadowed = rayQueryGetIntersectionTypeEXT(s, true) == gl_RayQueryCommittedIntersectionNoneEXT ? 0u : 1u;
            break;
        }
        if (level >= max_level) {
            break;
        }
        d = bounce(d, primitive);
        o = at;
        tmin = EPSILON;
        tmax = FAR;
    }
    trails[i] = trail;
}
