#version 460
#extension GL_EXT_ray_tracing : require
// A shadow or AO ray that hits nothing: the light (or the sky) is visible.
layout(location = 1) rayPayloadInEXT uint shadowed;

void main() {
    shadowed = 0u;
}
