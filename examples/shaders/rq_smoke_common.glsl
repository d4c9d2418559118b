// Shared body of the rq_smoke passes. The including .comp file defines
//     bool accept_candidate(int primitive_index);
// which decides whether a non-opaque triangle candidate is confirmed.
//
// One invocation traces one ray of a camera grid as wide and high as the dispatch, and
// writes one HitRecord describing the committed intersection.

#extension GL_EXT_ray_query : require

layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;

// Must match HitRecord in examples/src/bin/rq_smoke/main.rs (std430, 40 bytes).
struct HitRecord {
    uint committed_type; // gl_RayQueryCommittedIntersection*EXT
    float t;
    int primitive_index; // -1 on a miss, like the other indices
    int instance_id;
    int custom_index;
    int geometry_index;
    vec2 barycentrics;
    uint front_face;
    uint candidates; // triangle candidates offered by rayQueryProceedEXT
};

layout(std430, set = 0, binding = 1) writeonly buffer Results {
    HitRecord records[];
};

// Ray for pixel p: origin, direction forward + ndc.x * right - ndc.y * up (not normalised).
layout(push_constant) uniform Camera {
    vec4 origin_tmin;
    vec4 forward_tmax;
    vec4 right;
    vec4 up;
} camera;

void main() {
    uvec2 size = gl_NumWorkGroups.xy * gl_WorkGroupSize.xy;
    uvec2 pixel = gl_GlobalInvocationID.xy;
    vec2 ndc = (vec2(pixel) + 0.5) / vec2(size) * 2.0 - 1.0;
    vec3 direction = camera.forward_tmax.xyz + ndc.x * camera.right.xyz - ndc.y * camera.up.xyz;

    rayQueryEXT rq;
    rayQueryInitializeEXT(rq, tlas, gl_RayFlagsNoneEXT, 0xFF, camera.origin_tmin.xyz, camera.origin_tmin.w,
                          direction, camera.forward_tmax.w);
    uint candidates = 0;
    while (rayQueryProceedEXT(rq)) {
        if (rayQueryGetIntersectionTypeEXT(rq, false) == gl_RayQueryCandidateIntersectionTriangleEXT) {
            candidates++;
            if (accept_candidate(rayQueryGetIntersectionPrimitiveIndexEXT(rq, false))) {
                rayQueryConfirmIntersectionEXT(rq);
            }
        }
    }

    HitRecord r;
    r.committed_type = rayQueryGetIntersectionTypeEXT(rq, true);
    r.candidates = candidates;
    if (r.committed_type == gl_RayQueryCommittedIntersectionNoneEXT) {
        r.t = 0.0;
        r.primitive_index = -1;
        r.instance_id = -1;
        r.custom_index = -1;
        r.geometry_index = -1;
        r.barycentrics = vec2(0.0);
        r.front_face = 0;
    } else {
        r.t = rayQueryGetIntersectionTEXT(rq, true);
        r.primitive_index = rayQueryGetIntersectionPrimitiveIndexEXT(rq, true);
        r.instance_id = rayQueryGetIntersectionInstanceIdEXT(rq, true);
        r.custom_index = rayQueryGetIntersectionInstanceCustomIndexEXT(rq, true);
        r.geometry_index = rayQueryGetIntersectionGeometryIndexEXT(rq, true);
        r.barycentrics = rayQueryGetIntersectionBarycentricsEXT(rq, true);
        r.front_face = rayQueryGetIntersectionFrontFaceEXT(rq, true) ? 1u : 0u;
    }
    records[pixel.y * size.x + pixel.x] = r;
}
