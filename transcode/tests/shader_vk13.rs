//! Shader features Vulkan 1.3 requires: the Vulkan memory model (scopes and semantics on
//! barriers and atomics), zero-initialized Workgroup variables, integer dot products.

mod shader_util;
use shader_util::*;

#[test]
fn vulkan_memory_model_scopes_and_semantics() {
    let src = r#"#version 450
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) coherent buffer Out { uint sum; uint data[64]; uint seen[64]; } o;
shared uint sh[64];
void main() {
    uint l = gl_LocalInvocationID.x;
    sh[l] = l * 3u;
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    o.data[l] = sh[63u - l];
    atomicStore(o.seen[l], sh[l] + 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
    uint v = atomicLoad(o.seen[l], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
    memoryBarrier(gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
    atomicAdd(o.sum, v, gl_ScopeDevice, gl_StorageSemanticsBuffer,
              gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
}"#;
    run_variants(src, &[b(0, 0, Res::Storage(vec![0u8; 4 * 129]))], [1, 1, 1], &[], |what, r| {
        let u = r.u32s(0);
        assert_eq!(u[0], (0..64).map(|l| 3 * l + 1).sum::<u32>(), "{what}: atomic sum of acquired values");
        for l in 0..64u32 {
            assert_eq!(u[1 + l as usize], 3 * (63 - l), "{what}: workgroup value across the barrier");
            assert_eq!(u[65 + l as usize], 3 * l + 1, "{what}: release store");
        }
    });
}

#[test]
fn workgroup_variables_with_null_initializers_start_at_zero() {
    // Each workgroup leaves garbage behind in the whole array: a later workgroup on the same
    // LMEM (the array fills most of it) sees zeros only if its prologue cleared them.
    let src = r#"#version 450
#extension GL_EXT_null_initializer : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Out { uint v[]; } o;
shared uint sh[4096] = {};
shared uint total = {};
void main() {
    uint l = gl_LocalInvocationID.x;
    atomicAdd(sh[(l * 7u) % 64u], l + 1u);
    atomicAdd(total, 1u);
    barrier();
    o.v[gl_GlobalInvocationID.x] = sh[l] * 1000u + total + sh[64u + l * 63u];
    barrier();
    for (uint i = l; i < 4096u; i += 64u) sh[i] = 0xdeadu + i;
    total = 77u;
}"#;
    let groups = 32u32;
    let init = vec![0xabu8; 4 * 64 * groups as usize];
    run_variants(src, &[b(0, 0, Res::Storage(init))], [groups, 1, 1], &[], |what, r| {
        let u = r.u32s(0);
        for g in 0..groups as usize {
            for l in 0..64u32 {
                // sh[l] receives from the one invocation i with i*7 % 64 == l (7 is odd).
                let i = (0..64u32).find(|i| i * 7 % 64 == l).unwrap();
                assert_eq!(u[g * 64 + l as usize], (i + 1) * 1000 + 64, "{what}: group {g} lane {l}");
            }
        }
    });
}
