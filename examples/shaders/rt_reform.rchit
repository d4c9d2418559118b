#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
#include "rt_reform_common.glsl"
layout(location = 0) rayPayloadInEXT Payload pl;

void main() {
    pl.t = gl_HitTEXT;
    pl.instance = gl_InstanceID;
}
