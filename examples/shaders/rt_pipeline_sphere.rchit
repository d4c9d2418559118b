#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_GOOGLE_include_directive : require
#include "rt_pipeline_common.glsl"
// A sphere's hit: its t, primitive, the instance index plus the intersection shader's
// attribute, and the kind it reported.
layout(location = 0) rayPayloadInEXT Hit payload;
hitAttributeEXT vec2 attr;

void main() {
    payload = Hit(gl_HitTEXT, gl_PrimitiveID, gl_InstanceCustomIndexEXT + int(attr.x), gl_HitKindEXT);
}
