// The scene renderer's shading, shared by the ray-query render (render.comp) and the
// ray-tracing pipeline's stages (rt_scene.*): one source, so the two renders differ only in
// how rays are traced. The resources are set 0 of both layouts, the camera and light the
// push constants (vortex_examples::scene_render).

layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer Positions { float positions[]; };
layout(std430, binding = 2) readonly buffer Indices { uint indices[]; };
// flags bit 0: the mesh is alpha-tested (its geometry is not opaque; cutout_opaque).
struct MeshInfo { uint first_vertex; uint first_index; uint flags; uint pad; };
layout(std430, binding = 3) readonly buffer Meshes { MeshInfo meshes[]; };
layout(std430, binding = 4) readonly buffer Albedos { vec4 albedo[]; };
layout(std430, binding = 5) writeonly buffer Pixels { uint pixels[]; };
layout(std430, binding = 6) writeonly buffer RayCounts { uint ray_counts[]; };
// Per pixel: the instance hit + 1 (0: sky) in bits 0..19, bit 20 set when the shadow ray
// reached the light, the occluded AO rays from bit 21.
layout(std430, binding = 7) writeonly buffer Masks { uint masks[]; };

layout(push_constant) uniform Params {
    vec4 eye;      // xyz, w = tan(fov_y / 2)
    vec4 forward;  // xyz, w = aspect
    vec4 right;
    vec4 up;
    vec4 light;    // xyz towards the light, w = AO ray length
    uvec4 dims;    // width, height, AO samples per pixel, first row of this band
};

const uint MASK_LIT = 1u << 20;
const uint MASK_AO_SHIFT = 21u;

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

// The primary ray's direction through the centre of pixel (px, py).
vec3 camera_dir(uint px, uint py) {
    vec2 ndc = (vec2(px, py) + 0.5) / vec2(dims.xy) * 2.0 - 1.0;
    return normalize(forward.xyz + ndc.x * forward.w * eye.w * right.xyz - ndc.y * eye.w * up.xyz);
}

vec3 sky(vec3 dir) {
    return mix(vec3(0.85, 0.9, 1.0), vec3(0.35, 0.5, 0.8), clamp(dir.y, 0.0, 1.0));
}

// The geometric normal of triangle `prim` of `mesh` in world space, facing against `dir`.
vec3 hit_normal(uint mesh, uint prim, mat4x3 o2w, vec3 dir) {
    MeshInfo m = meshes[mesh];
    uint ib = m.first_index + 3u * prim;
    vec3 a = o2w * vec4(vertex(m.first_vertex, indices[ib]), 1.0);
    vec3 b = o2w * vec4(vertex(m.first_vertex, indices[ib + 1u]), 1.0);
    vec3 c = o2w * vec4(vertex(m.first_vertex, indices[ib + 2u]), 1.0);
    vec3 n = normalize(cross(b - a, c - a));
    return dot(n, dir) > 0.0 ? -n : n;
}

// Where secondary rays start: just off the surface, on the side the ray came from.
vec3 surface_point(vec3 origin, vec3 dir, float t, vec3 n) {
    return origin + t * dir + n * 1.0e-4 * max(1.0, t);
}

// The alpha test of an alpha-tested mesh: the card (a unit quad in the xy plane) has a
// 6x6 grid of round holes, found from the hit's object-space position (the barycentric
// blend of its triangle's vertices). Every other mesh is opaque everywhere.
bool cutout_opaque(uint mesh, uint prim, vec2 bary) {
    MeshInfo m = meshes[mesh];
    if ((m.flags & 1u) == 0u) {
        return true;
    }
    uint ib = m.first_index + 3u * prim;
    vec3 a = vertex(m.first_vertex, indices[ib]);
    vec3 b = vertex(m.first_vertex, indices[ib + 1u]);
    vec3 c = vertex(m.first_vertex, indices[ib + 2u]);
    vec3 p = a * (1.0 - bary.x - bary.y) + b * bary.x + c * bary.y;
    vec2 cell = fract((p.xy + 0.5) * 6.0) - 0.5;
    return dot(cell, cell) > 0.09;
}

// The AO ray `s` around n: a cosine-weighted hemisphere sample.
vec3 ao_dir(vec3 n, vec3 tx, vec3 ty, inout uint state) {
    float r1 = rand01(state);
    float r2 = rand01(state);
    float rad = sqrt(r1);
    float phi = 6.28318530718 * r2;
    return normalize(tx * (rad * cos(phi)) + ty * (rad * sin(phi)) + n * sqrt(max(0.0, 1.0 - r1)));
}

// The tangent frame the AO rays are drawn in, and the pixel's random stream.
void ao_frame(vec3 n, uint px, uint py, out vec3 tx, out vec3 ty, out uint state) {
    tx = normalize(abs(n.x) > 0.5 ? cross(n, vec3(0.0, 1.0, 0.0)) : cross(n, vec3(1.0, 0.0, 0.0)));
    ty = cross(n, tx);
    state = hash(px * 1973u + py * 9277u + 26699u);
}

// Diffuse light from the directional light (when the shadow ray reached it) and ambient
// light scaled by the AO rays that escaped.
vec3 shade(uint inst, vec3 n, bool lit, uint ao_hits) {
    float direct = lit ? max(dot(n, light.xyz), 0.0) : 0.0;
    float ao = dims.z == 0u ? 1.0 : 1.0 - float(ao_hits) / float(dims.z);
    vec3 base = albedo[inst].rgb;
    return base * (0.25 * ao + 0.75 * direct * (0.5 + 0.5 * ao));
}

// Traced by each kernel its own way (a ray query, or traceRayEXT with the shadow miss
// shader): true when something blocks the segment.
bool occluded(vec3 origin, vec3 dir, float tmax);

// A hit's colour and mask word: the shadow ray towards the light, then the AO rays, from p
// around n.
vec3 shade_hit(uint px, uint py, uint inst, vec3 n, vec3 p, out uint mask) {
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
    mask = (inst + 1u) | (lit ? MASK_LIT : 0u) | (hits << MASK_AO_SHIFT);
    return shade(inst, n, lit, hits);
}

void write_pixel(uint px, uint py, vec3 color, uint rays, uint mask) {
    // Gamma 2.2 for display.
    color = pow(clamp(color, 0.0, 1.0), vec3(1.0 / 2.2));
    uint i = py * dims.x + px;
    pixels[i] = packUnorm4x8(vec4(color, 1.0));
    ray_counts[i] = rays;
    masks[i] = mask;
}
