#version 460
#extension GL_EXT_ray_tracing : require
layout(shaderRecordEXT, std430) buffer MissRecord {
    uint miss_value;
};
layout(location = 0) rayPayloadInEXT uint hit;

void main() {
    hit = miss_value;
}
