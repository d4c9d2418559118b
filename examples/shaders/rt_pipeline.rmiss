#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
#include "rt_pipeline_common.glsl"
layout(location = 0) rayPayloadInEXT Hit payload;

void main() {
    payload = Hit(-1.0, -1, -1, 0u);
}
