#version 460
// Writes far past the end of its buffer: the device must fault (VK_ERROR_DEVICE_LOST),
// never corrupt or crash the host.
layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Params { uint stride; };

void main() {
    data[gl_GlobalInvocationID.x * stride] = 1u;
}
