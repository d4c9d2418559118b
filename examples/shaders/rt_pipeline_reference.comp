#version 460
#extension GL_EXT_ray_query : require
#extension GL_GOOGLE_include_directive : require
#include "rt_pipeline_common.glsl"
// The ray-query version of rt_pipeline.rgen and its hit groups: the reference.
layout(local_size_x = 32) in;
struct Ray {
    vec4 origin_tmin;
    vec4 dir_tmax;
};
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer Rays { Ray rays[]; };
layout(std430, binding = 2) writeonly buffer Hits { Hit hits[]; };
layout(push_constant) uniform Params {
    uint count;
    uint flags;
    uint sbt_offset;
    // 1: odd primitives are holes; 2: AABBs hold spheres (rt_pipeline.rint); 3: odd
    // primitives are holes in instances of SBT record offset 1
    uint ignore_odd;
};

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) {
        return;
    }
    Ray r = rays[i];
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, flags, 0xFF, r.origin_tmin.xyz, r.origin_tmin.w, r.dir_tmax.xyz, r.dir_tmax.w);
    while (rayQueryProceedEXT(q)) {
        int p = rayQueryGetIntersectionPrimitiveIndexEXT(q, false);
        if (rayQueryGetIntersectionTypeEXT(q, false) == gl_RayQueryCandidateIntersectionAABBEXT) {
            vec3 o = rayQueryGetIntersectionObjectRayOriginEXT(q, false);
            vec3 d = rayQueryGetIntersectionObjectRayDirectionEXT(q, false);
            float t = enter_sphere(o, d, sphere(p));
            bool committed = rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT;
            float tmax = committed ? rayQueryGetIntersectionTEXT(q, true) : r.dir_tmax.w;
            if (t >= r.origin_tmin.w && t <= tmax) {
                rayQueryGenerateIntersectionEXT(q, t);
            }
        } else if (ignore_odd == 3u) {
            if (rayQueryGetIntersectionInstanceShaderBindingTableRecordOffsetEXT(q, false) != 1u || (p & 1) == 0) {
                rayQueryConfirmIntersectionEXT(q);
            }
        } else if (ignore_odd != 1u || (p & 1) == 0) {
            rayQueryConfirmIntersectionEXT(q);
        }
    }
    uint committed = rayQueryGetIntersectionTypeEXT(q, true);
    if (committed == gl_RayQueryCommittedIntersectionNoneEXT) {
        hits[i] = Hit(-1.0, -1, -1, 0u);
    } else if (committed == gl_RayQueryCommittedIntersectionGeneratedEXT) {
        int p = rayQueryGetIntersectionPrimitiveIndexEXT(q, true);
        hits[i] = Hit(rayQueryGetIntersectionTEXT(q, true), p,
                      rayQueryGetIntersectionInstanceCustomIndexEXT(q, true) + p * 100, SPHERE_KIND);
    } else {
        hits[i] = Hit(rayQueryGetIntersectionTEXT(q, true), rayQueryGetIntersectionPrimitiveIndexEXT(q, true),
                      rayQueryGetIntersectionInstanceCustomIndexEXT(q, true), 1u);
    }
}
