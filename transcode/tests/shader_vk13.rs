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

/// The integer dot products of SPIR-V 1.6 / SPV_KHR_integer_dot_product, in every operand
/// form the device offers, against a host reference: packed 4x8 (signed, unsigned, mixed; with
/// and without the saturating accumulator), 32-bit vectors into a 64-bit result, unsigned
/// saturation at 32 bits, 16-bit vectors with a 16-bit saturating result and zero-extended
/// into a 32-bit one.
#[test]
fn integer_dot_products() {
    let src = r#"
OpCapability Shader
OpCapability Int64
OpCapability Int16
OpCapability DotProduct
OpCapability DotProductInputAll
OpCapability DotProductInput4x8BitPacked
OpExtension "SPV_KHR_integer_dot_product"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %in %out
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %arr ArrayStride 4
OpMemberDecorate %Buf 0 Offset 0
OpDecorate %Buf Block
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%short = OpTypeInt 16 1
%ushort = OpTypeInt 16 0
%int = OpTypeInt 32 1
%v2uint = OpTypeVector %uint 2
%v2short = OpTypeVector %short 2
%v2ushort = OpTypeVector %ushort 2
%c32 = OpConstant %uint 32
%c32l = OpConstant %ulong 32
%arr = OpTypeArray %uint %c32
%Buf = OpTypeStruct %arr
%pbuf = OpTypePointer StorageBuffer %Buf
%pu = OpTypePointer StorageBuffer %uint
%in = OpVariable %pbuf StorageBuffer
%out = OpVariable %pbuf StorageBuffer
%i0 = OpConstant %int 0
%i1 = OpConstant %int 1
%i2 = OpConstant %int 2
%i3 = OpConstant %int 3
%i4 = OpConstant %int 4
%i5 = OpConstant %int 5
%i6 = OpConstant %int 6
%i7 = OpConstant %int 7
%i8 = OpConstant %int 8
%i9 = OpConstant %int 9
%i10 = OpConstant %int 10
%i11 = OpConstant %int 11
%i12 = OpConstant %int 12
%i13 = OpConstant %int 13
%i14 = OpConstant %int 14
%i15 = OpConstant %int 15
%i16 = OpConstant %int 16
%i17 = OpConstant %int 17
%main = OpFunction %void None %fn
%entry = OpLabel
%p0 = OpAccessChain %pu %in %i0 %i0
%w0 = OpLoad %uint %p0
%p1 = OpAccessChain %pu %in %i0 %i1
%w1 = OpLoad %uint %p1
%p2 = OpAccessChain %pu %in %i0 %i2
%w2 = OpLoad %uint %p2
%p3 = OpAccessChain %pu %in %i0 %i3
%w3 = OpLoad %uint %p3
%p4 = OpAccessChain %pu %in %i0 %i4
%w4 = OpLoad %uint %p4
%p5 = OpAccessChain %pu %in %i0 %i5
%w5 = OpLoad %uint %p5
%p6 = OpAccessChain %pu %in %i0 %i6
%w6 = OpLoad %uint %p6
%p7 = OpAccessChain %pu %in %i0 %i7
%w7 = OpLoad %uint %p7
%p8 = OpAccessChain %pu %in %i0 %i8
%w8 = OpLoad %uint %p8
%p9 = OpAccessChain %pu %in %i0 %i9
%w9 = OpLoad %uint %p9
%p10 = OpAccessChain %pu %in %i0 %i10
%w10 = OpLoad %uint %p10
%p11 = OpAccessChain %pu %in %i0 %i11
%w11 = OpLoad %uint %p11
%p12 = OpAccessChain %pu %in %i0 %i12
%w12 = OpLoad %uint %p12
%p13 = OpAccessChain %pu %in %i0 %i13
%w13 = OpLoad %uint %p13
%p14 = OpAccessChain %pu %in %i0 %i14
%w14 = OpLoad %uint %p14
%p15 = OpAccessChain %pu %in %i0 %i15
%w15 = OpLoad %uint %p15
%p16 = OpAccessChain %pu %in %i0 %i16
%w16 = OpLoad %uint %p16
%p17 = OpAccessChain %pu %in %i0 %i17
%w17 = OpLoad %uint %p17
%r0 = OpSDot %uint %w0 %w1 PackedVectorFormat4x8Bit
%r1 = OpUDot %uint %w0 %w1 PackedVectorFormat4x8Bit
%r2 = OpSUDot %uint %w0 %w1 PackedVectorFormat4x8Bit
%r3 = OpSDotAccSat %uint %w0 %w1 %w2 PackedVectorFormat4x8Bit
%r4 = OpUDotAccSat %uint %w0 %w1 %w3 PackedVectorFormat4x8Bit
%r5 = OpSUDotAccSat %uint %w0 %w1 %w2 PackedVectorFormat4x8Bit
%a6 = OpCompositeConstruct %v2uint %w4 %w5
%b6 = OpCompositeConstruct %v2uint %w6 %w7
%r6 = OpSDot %ulong %a6 %b6
%r6lo = OpUConvert %uint %r6
%r6s = OpShiftRightLogical %ulong %r6 %c32l
%r6hi = OpUConvert %uint %r6s
%a8 = OpCompositeConstruct %v2uint %w9 %w10
%b8 = OpCompositeConstruct %v2uint %w11 %w12
%r8 = OpUDotAccSat %uint %a8 %b8 %w8
%s13 = OpUConvert %ushort %w13
%s14 = OpUConvert %ushort %w14
%s15 = OpUConvert %ushort %w15
%s16 = OpUConvert %ushort %w16
%s17 = OpUConvert %ushort %w17
%ss13 = OpBitcast %short %s13
%ss14 = OpBitcast %short %s14
%ss15 = OpBitcast %short %s15
%ss16 = OpBitcast %short %s16
%ss17 = OpBitcast %short %s17
%a9 = OpCompositeConstruct %v2short %ss13 %ss14
%b9 = OpCompositeConstruct %v2short %ss15 %ss16
%r9s = OpSDotAccSat %short %a9 %b9 %ss17
%r9i = OpSConvert %int %r9s
%r9 = OpBitcast %uint %r9i
%a10 = OpCompositeConstruct %v2ushort %s13 %s14
%b10 = OpCompositeConstruct %v2ushort %s15 %s16
%r10 = OpUDot %uint %a10 %b10
%q0 = OpAccessChain %pu %out %i0 %i0
OpStore %q0 %r0
%q1 = OpAccessChain %pu %out %i0 %i1
OpStore %q1 %r1
%q2 = OpAccessChain %pu %out %i0 %i2
OpStore %q2 %r2
%q3 = OpAccessChain %pu %out %i0 %i3
OpStore %q3 %r3
%q4 = OpAccessChain %pu %out %i0 %i4
OpStore %q4 %r4
%q5 = OpAccessChain %pu %out %i0 %i5
OpStore %q5 %r5
%q6 = OpAccessChain %pu %out %i0 %i6
OpStore %q6 %r6lo
%q7 = OpAccessChain %pu %out %i0 %i7
OpStore %q7 %r6hi
%q8 = OpAccessChain %pu %out %i0 %i8
OpStore %q8 %r8
%q9 = OpAccessChain %pu %out %i0 %i9
OpStore %q9 %r9
%q10 = OpAccessChain %pu %out %i0 %i10
OpStore %q10 %r10
OpReturn
OpFunctionEnd
"#;
    let Some(words) = spvasm(src, "vulkan1.2") else { return };
    let mut w = [0u32; 32];
    w[0] = 0x80ff_7f01; // bytes 01 7f ff 80
    w[1] = 0x807f_02ff; // bytes ff 02 7f 80
    w[2] = 0x7fff_ff00; // a signed accumulator near the top
    w[3] = 0xffff_fff0; // an unsigned accumulator near the top
    [w[4], w[5], w[6], w[7]] = [-3i32 as u32, 100_000, 7, -200_000i32 as u32];
    [w[8], w[9], w[10], w[11], w[12]] = [0xffff_0000, 60_000, 70_000, 1000, 900];
    [w[13], w[14], w[15], w[16], w[17]] = [-300i32 as u32, 200, 100, 50, -20_000i32 as u32];
    let bytes = |x: u32| x.to_le_bytes();
    let dot = |sa: bool, sb: bool| -> i64 {
        let (a, b) = (bytes(w[0]), bytes(w[1]));
        (0..4)
            .map(|k| {
                let x = if sa { a[k] as i8 as i64 } else { a[k] as i64 };
                let y = if sb { b[k] as i8 as i64 } else { b[k] as i64 };
                x * y
            })
            .sum()
    };
    let sat_i32 = |v: i64| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32;
    let want_64 = (-3i64) * 7 + 100_000i64 * -200_000;
    let want = [
        dot(true, true) as u32,
        dot(false, false) as u32,
        dot(true, false) as u32,
        sat_i32(dot(true, true) + w[2] as i32 as i64),
        (dot(false, false) as u64 + w[3] as u64).min(u32::MAX as u64) as u32,
        sat_i32(dot(true, false) + w[2] as i32 as i64),
        want_64 as u32,
        (want_64 as u64 >> 32) as u32,
        (60_000u64 * 1000 + 70_000 * 900 + 0xffff_0000).min(u32::MAX as u64) as u32,
        (-300i64 * 100 + 200 * 50 - 20_000).clamp(i16::MIN as i64, i16::MAX as i64) as i32 as u32,
        ((-300i32 as u16) as u32) * 100 + 200 * 50,
    ];
    // The inputs reach the saturating and sign/zero-extension cases the test is about.
    assert_eq!(want[4], u32::MAX);
    assert_eq!(want[8], u32::MAX);
    assert_eq!(want[9] as i32, i16::MIN as i32);
    for threads in [8, 32] {
        let r = run_words(
            &words,
            &[b(0, 0, Res::Storage(bytes_u32(&w))), b(0, 1, Res::Storage(vec![0; 128]))],
            [1, 1, 1],
            &[],
            &[],
            threads,
        );
        let got = r.u32s(1);
        assert_eq!(&got[..want.len()], &want, "{threads} lanes");
    }
}
