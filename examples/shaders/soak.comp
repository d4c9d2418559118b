#version 460
// The soak benchmark's dispatch: one small workgroup; every invocation counts itself.
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Counter { uint count; };

void main() {
    atomicAdd(count, 1u);
}
