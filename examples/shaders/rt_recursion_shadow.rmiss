#version 460
#extension GL_EXT_ray_tracing : require
// The shadow ray's miss shader (miss index 1): nothing between the hit and the light.
layout(location = 2) rayPayloadInEXT uint lit;

void main() {
    lit = 1u;
}
