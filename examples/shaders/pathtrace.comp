#version 460
#extension GL_EXT_ray_query : require
// A path tracer shaped like the ones clients write: one invocation a pixel (8x8 workgroups),
// `spp` samples, up to `bounces` diffuse bounces with a shadow ray towards a sun at each hit
// and a sky on a miss, a PCG random number generator, the hit's triangle fetched from the
// scene's vertex and index buffers (custom index = mesh, primitive index = triangle), its
// normal carried to world space with the instance's transform, an albedo per instance.
// Many instructions per ray: the shading around the walk, not the walk, dominates.
// Writes the pixel's radiance and how many rays it traced.
layout(local_size_x = 8, local_size_y = 8) in;

layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer Positions { float positions[]; };
layout(std430, binding = 2) readonly buffer Indices { uint indices[]; };
// Per mesh: first vertex, first index.
layout(std430, binding = 3) readonly buffer Meshes { uvec2 meshes[]; };
// Per instance: albedo.
layout(std430, binding = 4) readonly buffer Albedo { vec4 albedo[]; };
layout(std430, binding = 5) writeonly buffer Radiance { vec4 radiance[]; };
layout(std430, binding = 6) writeonly buffer RayCounts { uint ray_counts[]; };

layout(push_constant) uniform Params {
    vec4 eye;      // xyz, w = tan(fov_y / 2)
    vec4 forward;  // xyz, w = aspect
    vec4 right;
    vec4 up;
    vec4 light;    // xyz towards the sun
    uvec4 dims;    // width, height, samples per pixel, bounces
};

uint pcg(inout uint state) {
    state = state * 747796405u + 2891336453u;
    uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

float rand01(inout uint state) {
    return float(pcg(state) >> 8) * (1.0 / 16777216.0);
}

vec3 vertex(uint first_vertex, uint i) {
    uint v = 3u * (first_vertex + i);
    return vec3(positions[v], positions[v + 1u], positions[v + 2u]);
}

// The committed hit's geometric normal in world space, facing the ray.
vec3 hit_normal(rayQueryEXT q, vec3 dir) {
    uint mesh = rayQueryGetIntersectionInstanceCustomIndexEXT(q, true);
    uint prim = uint(rayQueryGetIntersectionPrimitiveIndexEXT(q, true));
    uvec2 m = meshes[mesh];
    uint i0 = indices[m.y + 3u * prim];
    uint i1 = indices[m.y + 3u * prim + 1u];
    uint i2 = indices[m.y + 3u * prim + 2u];
    vec3 a = vertex(m.x, i0);
    vec3 n_obj = cross(vertex(m.x, i1) - a, vertex(m.x, i2) - a);
    // Normals go to world space by the inverse transpose of the object-to-world matrix.
    mat4x3 w2o = rayQueryGetIntersectionWorldToObjectEXT(q, true);
    vec3 n = normalize(transpose(mat3(w2o)) * n_obj);
    return dot(n, dir) > 0.0 ? -n : n;
}

vec3 sky(vec3 dir) {
    float k = 0.5 * (dir.y + 1.0);
    return mix(vec3(1.0), vec3(0.5, 0.7, 1.0), k);
}

// A cosine-weighted direction around n.
vec3 bounce(vec3 n, inout uint rng) {
    float r1 = rand01(rng);
    float r2 = rand01(rng);
    float phi = 6.2831853 * r1;
    float s = sqrt(r2);
    vec3 t = normalize(abs(n.x) > 0.5 ? cross(n, vec3(0.0, 1.0, 0.0)) : cross(n, vec3(1.0, 0.0, 0.0)));
    vec3 b = cross(n, t);
    return normalize(s * cos(phi) * t + s * sin(phi) * b + sqrt(max(0.0, 1.0 - r2)) * n);
}

bool in_shadow(vec3 p, vec3 n) {
    rayQueryEXT s;
    rayQueryInitializeEXT(s, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF,
                          p + 1e-3 * n, 0.0, light.xyz, 1.0e30);
    while (rayQueryProceedEXT(s)) {
    }
    return rayQueryGetIntersectionTypeEXT(s, true) != gl_RayQueryCommittedIntersectionNoneEXT;
}

void main() {
    uint px = gl_GlobalInvocationID.x;
    uint py = gl_GlobalInvocationID.y;
    if (px >= dims.x || py >= dims.y) {
        return;
    }
    uint pixel = py * dims.x + px;
    uint rng = pixel * 9781u + 1u;
    vec3 sum = vec3(0.0);
    uint rays = 0u;
    for (uint s = 0u; s < dims.z; s++) {
        vec2 jitter = vec2(rand01(rng), rand01(rng));
        vec2 ndc = (vec2(px, py) + jitter) / vec2(dims.xy) * 2.0 - 1.0;
        vec3 origin = eye.xyz;
        vec3 dir = normalize(forward.xyz + ndc.x * forward.w * eye.w * right.xyz - ndc.y * eye.w * up.xyz);
        vec3 throughput = vec3(1.0);
        for (uint depth = 0u; depth <= dims.w; depth++) {
            rayQueryEXT q;
            rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT, 0xFF, origin, 1e-4, dir, 1.0e30);
            while (rayQueryProceedEXT(q)) {
            }
            rays++;
            if (rayQueryGetIntersectionTypeEXT(q, true) == gl_RayQueryCommittedIntersectionNoneEXT) {
                sum += throughput * sky(dir);
                break;
            }
            vec3 p = origin + rayQueryGetIntersectionTEXT(q, true) * dir;
            vec3 n = hit_normal(q, dir);
            vec3 base = albedo[rayQueryGetIntersectionInstanceIdEXT(q, true)].rgb;
            float ndotl = dot(n, light.xyz);
            if (ndotl > 0.0) {
                rays++;
                if (!in_shadow(p, n)) {
                    sum += throughput * base * (ndotl * 2.0);
                }
            }
            throughput *= base;
            origin = p + 1e-3 * n;
            dir = bounce(n, rng);
        }
    }
    radiance[pixel] = vec4(sum / float(dims.z), 1.0);
    ray_counts[pixel] = rays;
}
