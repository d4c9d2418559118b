#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
// A camera ray that hits nothing sees the sky.
#include "rt_scene_common.glsl"
layout(location = 0) rayPayloadInEXT Shaded payload;

void main() {
    payload = Shaded(sky(gl_WorldRayDirectionEXT), 1u, 0u, vec3(0.0));
}
