#version 460
#extension GL_EXT_ray_query : require
// Benchmark workloads, one per mode, one pixel per invocation:
//   0  coherent: a primary ray and, on a hit, a shadow ray towards the light
//   1  incoherent: a primary ray and, on a hit, `samples` ambient-occlusion rays in random
//      directions over the hemisphere
//   2  any-hit: a primary ray that treats every triangle as non-opaque; the shader confirms
//      every candidate, so the committed hit is the closest
// Each invocation writes how many rays it traced, and a depth that is negative for a miss and
// mixes in the occlusion results (so no compiler can drop the secondary rays).
layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) writeonly buffer RayCounts { uint ray_counts[]; };
layout(std430, binding = 2) writeonly buffer Depth { float depth[]; };

layout(push_constant) uniform Params {
    vec4 eye;      // xyz, w = tan(fov_y / 2)
    vec4 forward;  // xyz, w = aspect
    vec4 right;
    vec4 up;
    vec4 light;    // xyz towards the light, w = AO ray length
    uvec4 dims;    // width, height, samples, mode
};

uint hash(uint x) {
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

bool occluded(vec3 origin, vec3 dir, float tmax) {
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, origin, 0.0, dir, tmax);
    while (rayQueryProceedEXT(q)) {
    }
    return rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT;
}

void main() {
    uint px = gl_GlobalInvocationID.x;
    uint py = gl_GlobalInvocationID.y;
    if (px >= dims.x || py >= dims.y) {
        return;
    }
    vec2 ndc = (vec2(px, py) + 0.5) / vec2(dims.xy) * 2.0 - 1.0;
    vec3 dir = normalize(forward.xyz + ndc.x * forward.w * eye.w * right.xyz - ndc.y * eye.w * up.xyz);
    uint flags = dims.w == 2u ? gl_RayFlagsNoOpaqueEXT : gl_RayFlagsOpaqueEXT;
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, flags, 0xFF, eye.xyz, 0.0, dir, 1.0e30);
    while (rayQueryProceedEXT(q)) {
        rayQueryConfirmIntersectionEXT(q);
    }
    uint rays = 1u;
    float t = -1.0;
    uint occlusion = 0u;
    if (rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT) {
        t = rayQueryGetIntersectionTEXT(q, true);
        vec3 p = eye.xyz + t * dir * 0.9999;
        if (dims.w == 0u) {
            rays++;
            if (occluded(p, light.xyz, 1.0e30)) {
                occlusion++;
            }
        } else if (dims.w == 1u) {
            uint state = hash(px * 1973u + py * 9277u + 26699u);
            for (uint s = 0u; s < dims.z; s++) {
                state = hash(state);
                float u = float(state >> 8) * (1.0 / 16777216.0);
                state = hash(state);
                float v = float(state >> 8) * (1.0 / 16777216.0);
                float z = 2.0 * u - 1.0;
                float r = sqrt(max(0.0, 1.0 - z * z));
                float phi = 6.28318530718 * v;
                vec3 d = vec3(r * cos(phi), r * sin(phi), z);
                if (dot(d, dir) > 0.0) {
                    d = -d;
                }
                rays++;
                if (occluded(p, d, light.w)) {
                    occlusion++;
                }
            }
        }
    }
    ray_counts[py * dims.x + px] = rays;
    depth[py * dims.x + px] = t < 0.0 ? -1.0 : t * float(1u + occlusion);
}
