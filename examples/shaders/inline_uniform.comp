#version 450
// Sums the two vectors of a uniform block (vk13_check binds an inline uniform block there).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform Block { uvec4 a; uvec4 b; } u;
layout(set = 0, binding = 1) buffer Out { uvec4 sum; } o;
void main() {
    o.sum = u.a + u.b;
}
