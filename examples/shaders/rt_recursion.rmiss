#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
#include "rt_recursion_common.glsl"
#include "rt_recursion_payload.glsl"
layout(location = 0) rayPayloadInEXT Payload p;

void main() {
    p.hash = mix_hash(p.hash, MISS_TAG);
}
