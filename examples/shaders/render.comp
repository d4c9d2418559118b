#version 460
#extension GL_EXT_ray_query : require
// One pixel per invocation: a primary ray, a hard shadow towards a directional light, and
// `spp` ambient-occlusion rays. Shading reads the hit triangle's vertices (all meshes share
// one vertex and one index buffer; the instance custom index names the mesh) and transforms
// them to world space, so the normal is exact under any instance transform.
layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer Positions { float positions[]; };
layout(std430, binding = 2) readonly buffer Indices { uint indices[]; };
struct MeshInfo { uint first_vertex; uint first_index; uint pad0; uint pad1; };
layout(std430, binding = 3) readonly buffer Meshes { MeshInfo meshes[]; };
layout(std430, binding = 4) readonly buffer Albedos { vec4 albedo[]; };
layout(std430, binding = 5) writeonly buffer Pixels { uint pixels[]; };
layout(std430, binding = 6) writeonly buffer RayCounts { uint ray_counts[]; };

layout(push_constant) uniform Params {
    vec4 eye;      // xyz, w = tan(fov_y / 2)
    vec4 forward;  // xyz, w = aspect
    vec4 right;
    vec4 up;
    vec4 light;    // xyz towards the light, w = AO ray length
    uvec4 dims;    // width, height, AO samples per pixel, first row of this band
};

uint hash(uint x) {
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

float rand01(inout uint state) {
    state = hash(state);
    return float(state >> 8) * (1.0 / 16777216.0);
}

vec3 vertex(uint first_vertex, uint i) {
    uint b = 3u * (first_vertex + i);
    return vec3(positions[b], positions[b + 1u], positions[b + 2u]);
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
    uint py = gl_GlobalInvocationID.y + dims.w;
    if (px >= dims.x || py >= dims.y) {
        return;
    }
    vec2 ndc = (vec2(px, py) + 0.5) / vec2(dims.xy) * 2.0 - 1.0;
    vec3 dir = normalize(forward.xyz + ndc.x * forward.w * eye.w * right.xyz - ndc.y * eye.w * up.xyz);

    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xFF, eye.xyz, 0.0, dir, 1.0e30);
    while (rayQueryProceedEXT(q)) {
    }
    vec3 color;
    uint rays = 1u;
    if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionNoneEXT) {
        color = mix(vec3(0.85, 0.9, 1.0), vec3(0.35, 0.5, 0.8), clamp(dir.y, 0.0, 1.0));
    } else {
        float t = rayQueryGetIntersectionTEXT(q, true);
        uint mesh = uint(rayQueryGetIntersectionInstanceCustomIndexEXT(q, true));
        uint inst = uint(rayQueryGetIntersectionInstanceIdEXT(q, true));
        uint prim = uint(rayQueryGetIntersectionPrimitiveIndexEXT(q, true));
        mat4x3 o2w = rayQueryGetIntersectionObjectToWorldEXT(q, true);
        MeshInfo m = meshes[mesh];
        uint ib = m.first_index + 3u * prim;
        vec3 a = o2w * vec4(vertex(m.first_vertex, indices[ib]), 1.0);
        vec3 b = o2w * vec4(vertex(m.first_vertex, indices[ib + 1u]), 1.0);
        vec3 c = o2w * vec4(vertex(m.first_vertex, indices[ib + 2u]), 1.0);
        vec3 n = normalize(cross(b - a, c - a));
        if (dot(n, dir) > 0.0) {
            n = -n;
        }
        vec3 p = eye.xyz + t * dir + n * 1.0e-4 * max(1.0, t);
        float lit = occluded(p, light.xyz, 1.0e30) ? 0.0 : max(dot(n, light.xyz), 0.0);

        // Cosine-weighted hemisphere samples around n.
        vec3 tx = normalize(abs(n.x) > 0.5 ? cross(n, vec3(0.0, 1.0, 0.0)) : cross(n, vec3(1.0, 0.0, 0.0)));
        vec3 ty = cross(n, tx);
        uint state = hash(px * 1973u + py * 9277u + 26699u);
        uint hits = 0u;
        for (uint s = 0u; s < dims.z; s++) {
            float r1 = rand01(state);
            float r2 = rand01(state);
            float rad = sqrt(r1);
            float phi = 6.28318530718 * r2;
            vec3 d = normalize(tx * (rad * cos(phi)) + ty * (rad * sin(phi)) + n * sqrt(max(0.0, 1.0 - r1)));
            if (occluded(p, d, light.w)) {
                hits++;
            }
        }
        rays += 1u + dims.z;
        float ao = dims.z == 0u ? 1.0 : 1.0 - float(hits) / float(dims.z);
        vec3 base = albedo[inst].rgb;
        color = base * (0.25 * ao + 0.75 * lit * (0.5 + 0.5 * ao));
    }
    // Gamma 2.2 for display.
    color = pow(clamp(color, 0.0, 1.0), vec3(1.0 / 2.2));
    pixels[py * dims.x + px] = packUnorm4x8(vec4(color, 1.0));
    ray_counts[py * dims.x + px] = rays;
}
