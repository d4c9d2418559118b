#version 460
#extension GL_EXT_ray_query : require
// One ray per invocation against the TLAS; every candidate is confirmed, so the committed
// hit is the closest one. Writes what was committed.
layout(local_size_x = 32) in;

struct Ray {
    vec4 origin_tmin;
    vec4 dir_tmax;
};
struct Hit {
    float t;
    int primitive;
    int custom_index;
    uint kind;
};

layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer Rays { Ray rays[]; };
layout(std430, binding = 2) writeonly buffer Hits { Hit hits[]; };
layout(push_constant) uniform Params { uint count; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) {
        return;
    }
    Ray r = rays[i];
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsNoneEXT, 0xFF, r.origin_tmin.xyz, r.origin_tmin.w, r.dir_tmax.xyz, r.dir_tmax.w);
    while (rayQueryProceedEXT(q)) {
        rayQueryConfirmIntersectionEXT(q);
    }
    Hit h;
    h.kind = rayQueryGetIntersectionTypeEXT(q, true);
    if (h.kind == gl_RayQueryCommittedIntersectionNoneEXT) {
        h.t = -1.0;
        h.primitive = -1;
        h.custom_index = -1;
    } else {
        h.t = rayQueryGetIntersectionTEXT(q, true);
        h.primitive = rayQueryGetIntersectionPrimitiveIndexEXT(q, true);
        h.custom_index = rayQueryGetIntersectionInstanceCustomIndexEXT(q, true);
    }
    hits[i] = h;
}
