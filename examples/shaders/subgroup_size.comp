#version 450
// Each invocation writes the subgroup size and count it runs with (vk13_check: the
// required subgroup size of VK_EXT_subgroup_size_control / Vulkan 1.3).
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    o.v[2 * i] = gl_SubgroupSize;
    o.v[2 * i + 1] = gl_NumSubgroups;
}
