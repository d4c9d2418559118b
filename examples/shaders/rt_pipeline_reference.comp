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
        if (ignore_odd == 0u || (p & 1) == 0) {
            rayQueryConfirmIntersectionEXT(q);
        }
    }
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionNoneEXT) {
        hits[i] = Hit(-1.0, -1, -1, 0u);
    } else {
        hits[i] = Hit(rayQueryGetIntersectionTEXT(q, true), rayQueryGetIntersectionPrimitiveIndexEXT(q, true),
                      rayQueryGetIntersectionInstanceCustomIndexEXT(q, true), 1u);
    }
}
