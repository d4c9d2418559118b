//! Hand-assembled SPIR-V for shapes glslang does not emit: phis on critical edges, queries
//! passed by pointer and as bare values, `LocalSizeId`, spec-constant arithmetic, traps.

mod shader_util;
use shader_util::*;
use vortex_model::abi::isa::{Op, TrapCode};

const HEADER: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %out
               OpExecutionMode %main LocalSize 8 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
               OpDecorate %Out Block
               OpMemberDecorate %Out 0 Offset 0
               OpDecorate %arr ArrayStride 4
       %void = OpTypeVoid
        %fnv = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
       %v3u = OpTypeVector %uint 3
        %arr = OpTypeRuntimeArray %uint
        %Out = OpTypeStruct %arr
    %ptr_out = OpTypePointer StorageBuffer %Out
      %ptr_u = OpTypePointer StorageBuffer %uint
    %ptr_gid = OpTypePointer Input %v3u
        %gid = OpVariable %ptr_gid Input
        %out = OpVariable %ptr_out StorageBuffer
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_7 = OpConstant %uint 7
    %uint_10 = OpConstant %uint 10
   %uint_100 = OpConstant %uint 100
"#;

/// Critical edges into phi blocks: a conditional edge straight into a merge, a conditional
/// back edge (do-while latch), a two-phi rotation on that back edge, and switch cases (with
/// fall-through and a case sharing the default's block) feeding a phi.
const PHIS: &str = r#"
       %main = OpFunction %void None %fnv
      %entry = OpLabel
         %gp = OpAccessChain %ptr_u %out %uint_0 %uint_0
          %g = OpLoad %v3u %gid
          %x = OpCompositeExtract %uint %g 0
         %m3 = OpUMod %uint %x %uint_3
          %c = OpIEqual %bool %m3 %uint_0
        %x10 = OpIMul %uint %x %uint_10
               OpSelectionMerge %merge None
               OpBranchConditional %c %merge %then
       %then = OpLabel
          %v = OpIMul %uint %x %uint_7
               OpBranch %merge
      %merge = OpLabel
          %p = OpPhi %uint %x10 %entry %v %then
               OpBranch %loop
       %loop = OpLabel
          %i = OpPhi %uint %uint_0 %merge %i1 %loop
          %a = OpPhi %uint %uint_1 %merge %b %loop
          %b = OpPhi %uint %uint_2 %merge %a %loop
         %i1 = OpIAdd %uint %i %uint_1
       %more = OpULessThan %bool %i1 %x
               OpLoopMerge %after %loop None
               OpBranchConditional %more %loop %after
      %after = OpLabel
         %ab = OpIMul %uint %a %uint_100
        %ab2 = OpIAdd %uint %ab %b
        %sel = OpUMod %uint %x %uint_7
               OpSelectionMerge %send None
               OpSwitch %sel %dflt 0 %case0 1 %case1 2 %case1 3 %dflt
      %case0 = OpLabel
               OpBranch %case1
      %case1 = OpLabel
         %sv = OpPhi %uint %uint_1 %case0 %uint_2 %after
               OpBranch %send
       %dflt = OpLabel
               OpBranch %send
       %send = OpLabel
         %sw = OpPhi %uint %sv %case1 %uint_3 %dflt
        %pp0 = OpIMul %uint %p %uint_100
        %pp1 = OpIAdd %uint %pp0 %ab2
        %pp2 = OpIMul %uint %pp1 %uint_10
        %res = OpIAdd %uint %pp2 %sw
         %op = OpAccessChain %ptr_u %out %uint_0 %x
               OpStore %op %res
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn phis_on_critical_edges() {
    let Some(words) = spvasm(&format!("{HEADER}{PHIS}"), "vulkan1.2") else { return };
    for threads in [8, 32] {
        let r = run_words(&words, &[b(0, 0, Res::Storage(vec![0; 16 * 4]))], [2, 1, 1], &[], &[], threads);
        let want: Vec<u32> = (0..16u32)
            .map(|x| {
                let p = if x % 3 == 0 { x * 10 } else { x * 7 };
                // The do-while body runs n = max(x, 1) times; the header's (a, b) swap on each
                // of the n - 1 back edges.
                let (a, b) = if (x.max(1) - 1) % 2 == 1 { (2, 1) } else { (1, 2) };
                let sw = match x % 7 {
                    0 => 1,
                    1 | 2 => 2,
                    _ => 3,
                };
                ((p * 100 + a * 100 + b) * 10) + sw
            })
            .collect();
        assert_eq!(r.u32s(0), want, "{threads} lanes");
    }
}

const RQ_HEADER: &str = r#"
               OpCapability Shader
               OpCapability RayQueryKHR
               OpExtension "SPV_KHR_ray_query"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %wid %out %tlas %rqs
               OpExecutionMode %main LocalSizeId %one %one %one
               OpDecorate %wid BuiltIn WorkgroupId
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 1
               OpDecorate %tlas DescriptorSet 0
               OpDecorate %tlas Binding 0
               OpDecorate %Out Block
               OpMemberDecorate %Out 0 Offset 0
               OpDecorate %arr ArrayStride 4
               OpDecorate %one SpecId 9
       %void = OpTypeVoid
        %fnv = OpTypeFunction %void
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
        %v3u = OpTypeVector %uint 3
        %v3f = OpTypeVector %float 3
        %arr = OpTypeRuntimeArray %uint
        %Out = OpTypeStruct %arr
    %ptr_out = OpTypePointer StorageBuffer %Out
      %ptr_u = OpTypePointer StorageBuffer %uint
    %ptr_wid = OpTypePointer Input %v3u
        %wid = OpVariable %ptr_wid Input
        %out = OpVariable %ptr_out StorageBuffer
         %as = OpTypeAccelerationStructureKHR
     %ptr_as = OpTypePointer UniformConstant %as
       %tlas = OpVariable %ptr_as UniformConstant
         %rq = OpTypeRayQueryKHR
        %one = OpSpecConstant %uint 1
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_4 = OpConstant %uint 4
     %uint_8 = OpConstant %uint 8
   %uint_255 = OpConstant %uint 255
     %rq_arr = OpTypeArray %rq %uint_4
 %ptr_rq_arr = OpTypePointer Private %rq_arr
     %ptr_rq = OpTypePointer Private %rq
  %ptr_fn_rq = OpTypePointer Function %rq
        %rqs = OpVariable %ptr_rq_arr Private
    %float_0 = OpConstant %float 0
    %float_1 = OpConstant %float 1
   %float_m1 = OpConstant %float -1
   %float_03 = OpConstant %float 0.3
   %float_05 = OpConstant %float 0.5
        %dir = OpConstantComposite %v3f %float_0 %float_0 %float_m1
   %fn_step = OpTypeFunction %bool %ptr_rq %rq
"#;

/// dEQP `using_wrapper_function`: the helper proceeds through the pointer and confirms
/// through the bare value, which must alias the same query — here after storing it into a
/// local query variable, which must then name that query too. The query array lives in
/// Private storage and is indexed with OpInBoundsAccessChain by a run-time value.
const RQ_BODY: &str = r#"
       %step = OpFunction %bool None %fn_step
          %qp = OpFunctionParameter %ptr_rq
          %qv = OpFunctionParameter %rq
         %sl = OpLabel
      %local = OpVariable %ptr_fn_rq Function
         %pr = OpRayQueryProceedKHR %bool %qp
               OpSelectionMerge %sm None
               OpBranchConditional %pr %conf %sm
       %conf = OpLabel
               OpStore %local %qv
               OpRayQueryConfirmIntersectionKHR %local
               OpBranch %sm
         %sm = OpLabel
               OpReturnValue %pr
               OpFunctionEnd
       %main = OpFunction %void None %fnv
      %entry = OpLabel
          %w = OpLoad %v3u %wid
          %x = OpCompositeExtract %uint %w 0
          %y = OpCompositeExtract %uint %w 1
        %idx = OpUMod %uint %x %uint_4
          %q = OpInBoundsAccessChain %ptr_rq %rqs %idx
         %xf = OpConvertUToF %float %x
         %yf = OpConvertUToF %float %y
         %ox = OpFAdd %float %xf %float_03
         %oy = OpFAdd %float %yf %float_03
       %orig = OpCompositeConstruct %v3f %ox %oy %float_05
         %tl = OpLoad %as %tlas
               OpRayQueryInitializeKHR %q %tl %uint_0 %uint_255 %orig %float_0 %dir %float_1
         %qv = OpLoad %rq %q
               OpBranch %loop
       %loop = OpLabel
               OpLoopMerge %done %cont None
               OpBranch %body
       %body = OpLabel
         %go = OpFunctionCall %bool %step %q %qv
               OpBranchConditional %go %cont %done
       %cont = OpLabel
               OpBranch %loop
       %done = OpLabel
         %ty = OpRayQueryGetIntersectionTypeKHR %uint %qv %uint_1
        %row = OpIMul %uint %y %uint_8
         %at = OpIAdd %uint %row %x
         %op = OpAccessChain %ptr_u %out %uint_0 %at
               OpStore %op %ty
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn query_pointer_and_bare_value_alias_through_a_function() {
    let Some(words) = spvasm(&format!("{RQ_HEADER}{RQ_BODY}"), "spv1.4") else { return };
    // Non-opaque triangles: the helper must see each candidate and confirm it.
    let mut tris = Vec::new();
    let mut hit = vec![0u32; 64];
    for y in 0..8 {
        for x in 0..8 {
            if (x * 3 + y) % 4 == 1 {
                let (fx, fy) = (x as f32, y as f32);
                tris.push([[fx, fy, 0.0], [fx + 1.0, fy, 0.0], [fx, fy + 1.0, 0.0]]);
                hit[y * 8 + x] = 1;
            }
        }
    }
    let scene = Scene {
        blases: vec![Blas { tris, aabbs: vec![], flags: 0 }],
        instances: vec![Inst { blas: 0, o2w: IDENTITY, custom: 0, flags: 0 }],
    };
    let bindings = [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Storage(vec![0; 64 * 4]))];
    let k = build(&words, &bindings, 0, &[]).unwrap();
    assert_eq!((k.num_queries, k.local_size), (5, [1, 1, 1]), "4 in the array, 1 local");
    // LocalSizeId takes the specialized value.
    let k2 = build(&words, &bindings, 0, &[(9, 2u32.to_le_bytes().to_vec())]).unwrap();
    assert_eq!(k2.local_size, [2, 2, 2]);
    for threads in [8, 32] {
        let r = run_words(&words, &bindings, [8, 8, 1], &[], &[], threads);
        assert_eq!(r.u32s(1), hit, "{threads} lanes");
    }
}

#[test]
fn specialization_constants_and_workgroup_size() {
    let src = r#"#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const int SCALE = 3;
layout(constant_id = 3) const bool NEG = false;
const int DOUBLE = SCALE * 2;
layout(std430, set = 0, binding = 0) buffer O { int v[]; } o;
void main() {
    int tmp[SCALE + 1];
    for (int k = 0; k <= SCALE; k++) tmp[k] = k * 1000;
    uint i = gl_LocalInvocationIndex + gl_WorkGroupID.x * gl_WorkGroupSize.x * gl_WorkGroupSize.y;
    int v = int(i) * DOUBLE + int(gl_WorkGroupSize.x) + tmp[int(i) % (SCALE + 1)];
    o.v[i] = NEG ? -v : v;
}"#;
    let Some(words) = glsl(src) else { return };
    let bindings = [b(0, 0, Res::Storage(vec![0; 64 * 4]))];
    let k = build(&words, &bindings, 0, &[]).unwrap();
    assert_eq!(k.local_size, [1, 1, 1], "defaults");
    let spec: Vec<(u32, Vec<u8>)> = vec![
        (0, 16u32.to_le_bytes().to_vec()),
        (1, 2u32.to_le_bytes().to_vec()),
        (2, 5i32.to_le_bytes().to_vec()),
        (3, 1u32.to_le_bytes().to_vec()),
    ];
    let k = build(&words, &bindings, 0, &spec).unwrap();
    assert_eq!(k.local_size, [16, 2, 1]);
    for threads in [8, 32] {
        let r = run_words(&words, &bindings, [2, 1, 1], &[], &spec, threads);
        let want: Vec<i32> = (0..64).map(|i| -(i * 10 + 16 + (i % 6) * 1000)).collect();
        assert_eq!(r.i32s(0), want, "{threads} lanes");
    }
}

#[test]
fn unreachable_and_kill_trap() {
    let body = r#"
       %main = OpFunction %void None %fnv
      %entry = OpLabel
          %g = OpLoad %v3u %gid
          %x = OpCompositeExtract %uint %g 0
          %c = OpULessThan %bool %x %uint_100
               OpSelectionMerge %m None
               OpBranchConditional %c %m %bad
        %bad = OpLabel
               OpUnreachable
          %m = OpLabel
               OpKill
               OpFunctionEnd
"#;
    let Some(words) = spvasm(&format!("{HEADER}{body}"), "vulkan1.2") else { return };
    let k = build(&words, &[b(0, 0, Res::Storage(vec![0; 16]))], 0, &[]).unwrap();
    let traps: Vec<u32> = k.code.iter().filter(|i| i.op == Op::Trap).map(|i| i.imm).collect();
    assert_eq!(traps, vec![TrapCode::Unreachable as u32, TrapCode::Kill as u32]);
}

/// `LocalSizeId` as the spec writes it: `OpExecutionModeId`, with a specialization constant.
#[test]
fn execution_mode_id_local_size() {
    let src = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionModeId %main LocalSizeId %one %two %one
               OpDecorate %two SpecId 4
       %void = OpTypeVoid
        %fnv = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %one = OpConstant %uint 1
        %two = OpSpecConstant %uint 2
       %main = OpFunction %void None %fnv
          %l = OpLabel
               OpReturn
               OpFunctionEnd
"#;
    let Some(words) = spvasm(src, "spv1.4") else { return };
    assert_eq!(build(&words, &[], 0, &[]).unwrap().local_size, [1, 2, 1]);
    let spec = [(4, 64u32.to_le_bytes().to_vec())];
    assert_eq!(build(&words, &[], 0, &spec).unwrap().local_size, [1, 64, 1]);
}

/// Acceleration-structure handles in Function variables and as bare parameters.
#[test]
fn acceleration_structure_handles_in_variables() {
    let src = r#"
               OpCapability Shader
               OpCapability RayQueryKHR
               OpExtension "SPV_KHR_ray_query"
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %out %tlas
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 1
               OpDecorate %tlas DescriptorSet 0
               OpDecorate %tlas Binding 0
               OpDecorate %Out Block
               OpMemberDecorate %Out 0 Offset 0
               OpDecorate %arr ArrayStride 4
       %void = OpTypeVoid
       %bool = OpTypeBool
        %fnv = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
        %v3f = OpTypeVector %float 3
        %arr = OpTypeRuntimeArray %uint
        %Out = OpTypeStruct %arr
    %ptr_out = OpTypePointer StorageBuffer %Out
      %ptr_u = OpTypePointer StorageBuffer %uint
        %out = OpVariable %ptr_out StorageBuffer
         %as = OpTypeAccelerationStructureKHR
     %ptr_as = OpTypePointer UniformConstant %as
  %ptr_fn_as = OpTypePointer Function %as
       %tlas = OpVariable %ptr_as UniformConstant
         %rq = OpTypeRayQueryKHR
  %ptr_fn_rq = OpTypePointer Function %rq
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
     %uint_4 = OpConstant %uint 4
   %uint_255 = OpConstant %uint 255
    %float_0 = OpConstant %float 0
    %float_1 = OpConstant %float 1
   %float_m1 = OpConstant %float -1
   %float_03 = OpConstant %float 0.3
  %float_1_3 = OpConstant %float 1.3
   %float_05 = OpConstant %float 0.5
        %dir = OpConstantComposite %v3f %float_0 %float_0 %float_m1
       %orig = OpConstantComposite %v3f %float_1_3 %float_03 %float_05
    %fn_type = OpTypeFunction %uint %as
      %trace = OpFunction %uint None %fn_type
          %a = OpFunctionParameter %as
         %tl = OpLabel
          %q = OpVariable %ptr_fn_rq Function
               OpRayQueryInitializeKHR %q %a %uint_4 %uint_255 %orig %float_0 %dir %float_1
         %pr = OpRayQueryProceedKHR %bool %q
         %ty = OpRayQueryGetIntersectionTypeKHR %uint %q %uint_1
               OpReturnValue %ty
               OpFunctionEnd
       %main = OpFunction %void None %fnv
      %entry = OpLabel
          %v = OpVariable %ptr_fn_as Function
          %h = OpLoad %as %tlas
               OpStore %v %h
         %h2 = OpLoad %as %v
          %r = OpFunctionCall %uint %trace %h2
         %op = OpAccessChain %ptr_u %out %uint_0 %uint_0
               OpStore %op %r
               OpReturn
               OpFunctionEnd
"#;
    let Some(words) = spvasm(src, "spv1.4") else { return };
    // One opaque triangle under the ray at (1.3, 0.3).
    let tris = vec![[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, 0.0]]];
    let scene = Scene {
        blases: vec![Blas { tris, aabbs: vec![], flags: 1 }],
        instances: vec![Inst { blas: 0, o2w: IDENTITY, custom: 0, flags: 0 }],
    };
    let bindings = [b(0, 0, Res::Tlas(scene)), b(0, 1, Res::Storage(vec![0; 4]))];
    let r = run_words(&words, &bindings, [1, 1, 1], &[], &[], 8);
    assert_eq!(r.u32s(1), vec![1], "a committed triangle through the stored handle");
}
