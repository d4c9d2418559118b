#version 460
#extension GL_EXT_ray_query : require
// The raster demo's fragment shader: the face normal from the world position's
// derivatives, a hard shadow ray towards the light and `dims.z` cosine-weighted
// ambient-occlusion rays (as render.comp shades a primary hit), and the ground's albedo
// from a mipmapped texture.
layout(early_fragment_tests) in;
layout(location = 0) in vec3 world;
layout(location = 0) out vec4 out_color;
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(binding = 1) uniform sampler2D ground;
layout(std430, binding = 2) readonly buffer Frame {
    vec4 view_proj[4];
    vec4 eye;
    vec4 light;
    uvec4 dims;
} frame;
layout(push_constant) uniform Draw {
    vec4 model[3];
    vec4 albedo;
} draw;

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

bool occluded(vec3 origin, vec3 dir, float tmax) {
    rayQueryEXT q;
    rayQueryInitializeEXT(q, tlas, gl_RayFlagsOpaqueEXT | gl_RayFlagsTerminateOnFirstHitEXT, 0xFF, origin, 0.0, dir, tmax);
    while (rayQueryProceedEXT(q)) {
    }
    return rayQueryGetIntersectionTypeEXT(q, true) != gl_RayQueryCommittedIntersectionNoneEXT;
}

void main() {
    vec3 base = draw.albedo.rgb;
    if (draw.albedo.w > 0.5) {
        base *= texture(ground, world.xz * 0.25).rgb;
    }
    vec3 n = normalize(cross(dFdx(world), dFdy(world)));
    vec3 to_eye = frame.eye.xyz - world;
    if (dot(n, to_eye) < 0.0) {
        n = -n;
    }
    float t = length(to_eye);
    vec3 p = world + n * 1.0e-4 * max(1.0, t);
    float lit = occluded(p, frame.light.xyz, 1.0e30) ? 0.0 : max(dot(n, frame.light.xyz), 0.0);

    vec3 tx = normalize(abs(n.x) > 0.5 ? cross(n, vec3(0.0, 1.0, 0.0)) : cross(n, vec3(1.0, 0.0, 0.0)));
    vec3 ty = cross(n, tx);
    uvec2 px = uvec2(gl_FragCoord.xy);
    uint state = hash(px.x * 1973u + px.y * 9277u + 26699u);
    uint hits = 0u;
    for (uint s = 0u; s < frame.dims.z; s++) {
        float r1 = rand01(state);
        float r2 = rand01(state);
        float rad = sqrt(r1);
        float phi = 6.28318530718 * r2;
        vec3 d = normalize(tx * (rad * cos(phi)) + ty * (rad * sin(phi)) + n * sqrt(max(0.0, 1.0 - r1)));
        if (occluded(p, d, frame.light.w)) {
            hits++;
        }
    }
    float ao = frame.dims.z == 0u ? 1.0 : 1.0 - float(hits) / float(frame.dims.z);
    vec3 color = base * (0.25 * ao + 0.75 * lit * (0.5 + 0.5 * ao));
    out_color = vec4(pow(clamp(color, 0.0, 1.0), vec3(1.0 / 2.2)), 1.0);
}
