#version 460
#extension GL_EXT_ray_tracing : require
// The hit record's value plus the primitive, through callable 2.
layout(shaderRecordEXT, std430) buffer HitRecord {
    uvec2 pad;
    uint hit_value;
};
layout(location = 0) rayPayloadInEXT uint hit;
layout(location = 1) callableDataEXT uint value;

void main() {
    value = hit_value + uint(gl_PrimitiveID);
    executeCallableEXT(2, 1);
    hit = value;
}
