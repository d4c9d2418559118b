#version 450
#extension GL_EXT_shader_atomic_float : require
#extension GL_KHR_memory_scope_semantics : require
// Float atomics (VK_EXT_shader_atomic_float): atomicAdd on a storage buffer and on shared
// memory, and atomic exchange/load/store of floats. Values are small integers and halves,
// so every order of additions gives the same bits.
//! features shaderBufferFloat32AtomicAdd shaderSharedFloat32AtomicAdd shaderBufferFloat32Atomics
//! dispatch 4
//! buffer 0 storage 64 = f32 0 0.5 0 0
//! buffer 1 storage 64
//! check 0 exact
//! check 1 exact
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer A { float sum; float half_; float xchg; float last; } a;
layout(std430, binding = 1) buffer R { float shared_sums[4]; float seen; } r;
shared float s;

void main() {
    uint l = gl_LocalInvocationID.x;
    uint g = gl_GlobalInvocationID.x;
    if (l == 0u) s = 0.0;
    barrier();
    atomicAdd(a.sum, float(g % 7u));
    atomicAdd(a.half_, 0.5);
    atomicAdd(s, float(l) * 0.25);
    atomicExchange(a.xchg, 3.0);
    barrier();
    if (l == 0u) {
        r.shared_sums[gl_WorkGroupID.x] = atomicAdd(s, 0.0);
        atomicStore(a.last, 7.5, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    }
    if (g == 0u) r.seen = atomicLoad(a.half_, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed) >= 0.5 ? 1.0 : 0.0;
}
