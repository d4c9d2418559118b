//! The compile target: the stage is chosen explicitly, entry points are found by name and
//! stage in modules that carry several, and stages the compiler does not implement (all but
//! compute, vertex, fragment and ray generation) are refused by name.

mod shader_util;
use shader_util::*;
use vortex_transcode::shader::{compile, CompileError, CompileOptions, Stage, Target};

/// One module, three entry points all named `main`: a vertex shader writing `gl_Position`, a
/// compute kernel storing `7 * gl_GlobalInvocationID.x` and a fragment shader writing a
/// colour. The compute entry is declared between the other two. `COMPUTE_NAME` is replaced
/// to rename the compute entry.
const THREE_STAGES: &str = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint Vertex %vs "main" %pos %vid
               OpEntryPoint GLCompute %cs "COMPUTE_NAME" %gid %out
               OpEntryPoint Fragment %fs "main" %color
               OpExecutionMode %cs LocalSize 4 1 1
               OpExecutionMode %fs OriginUpperLeft
               OpDecorate %pos BuiltIn Position
               OpDecorate %vid BuiltIn VertexIndex
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %color Location 0
               OpDecorate %rt ArrayStride 4
               OpMemberDecorate %buf 0 Offset 0
               OpDecorate %buf Block
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
        %int = OpTypeInt 32 1
      %float = OpTypeFloat 32
        %v4f = OpTypeVector %float 4
        %v3u = OpTypeVector %uint 3
         %rt = OpTypeRuntimeArray %uint
        %buf = OpTypeStruct %rt
       %pbuf = OpTypePointer StorageBuffer %buf
        %out = OpVariable %pbuf StorageBuffer
       %pin3 = OpTypePointer Input %v3u
        %gid = OpVariable %pin3 Input
       %pini = OpTypePointer Input %int
        %vid = OpVariable %pini Input
      %pout4 = OpTypePointer Output %v4f
        %pos = OpVariable %pout4 Output
      %color = OpVariable %pout4 Output
         %pu = OpTypePointer StorageBuffer %uint
         %c0 = OpConstant %int 0
         %c7 = OpConstant %uint 7
         %f1 = OpConstant %float 1
       %one4 = OpConstantComposite %v4f %f1 %f1 %f1 %f1
         %vs = OpFunction %void None %fn
         %vl = OpLabel
          %v = OpLoad %int %vid
         %vf = OpConvertSToF %float %v
          %p = OpCompositeConstruct %v4f %vf %vf %vf %f1
               OpStore %pos %p
               OpReturn
               OpFunctionEnd
         %cs = OpFunction %void None %fn
         %cl = OpLabel
          %g = OpLoad %v3u %gid
          %x = OpCompositeExtract %uint %g 0
          %y = OpIMul %uint %x %c7
        %ptr = OpAccessChain %pu %out %c0 %x
               OpStore %ptr %y
               OpReturn
               OpFunctionEnd
         %fs = OpFunction %void None %fn
         %fl = OpLabel
               OpStore %color %one4
               OpReturn
               OpFunctionEnd
"#;

fn three_stages(compute_name: &str) -> Option<Vec<u32>> {
    spvasm(&THREE_STAGES.replace("COMPUTE_NAME", compute_name), "vulkan1.2")
}

fn options(entry: &str, stage: Stage) -> CompileOptions {
    let bindings = [b(0, 0, Res::Storage(vec![0; 16]))];
    CompileOptions { target: Target::stage(stage), layout: layout(&bindings, 0), ..CompileOptions::entry(entry) }
}

#[test]
fn every_other_stage_is_refused_by_name() {
    let modules: Vec<Vec<u32>> = [Some(vec![]), three_stages("main")].into_iter().flatten().collect();
    let implemented = [Stage::Compute, Stage::Vertex, Stage::Fragment, Stage::RayGeneration];
    for stage in Stage::ALL.into_iter().filter(|s| !implemented.contains(s)) {
        for words in &modules {
            // Refused before the module is read: garbage and a module holding a vertex and a
            // fragment entry get the same answer.
            match compile(words, &options("main", stage)) {
                Err(CompileError::Unsupported(m)) => {
                    assert_eq!(m, format!("{} shaders are not supported yet", stage.name()), "{stage:?}")
                }
                other => panic!("{stage:?}: {other:?}"),
            }
        }
    }
    assert_eq!(
        compile(&[], &options("main", Stage::Geometry)).unwrap_err().to_string(),
        "unsupported SPIR-V: geometry shaders are not supported yet"
    );
}

#[test]
fn a_compute_entry_among_vertex_and_fragment_ones_compiles_and_runs() {
    let Some(words) = three_stages("main") else { return };
    let k = compile(&words, &options("main", Stage::Compute)).expect("the compute `main` compiles");
    assert_eq!(k.entry_name, "main");
    assert_eq!(k.local_size, [4, 1, 1], "the compute entry's own execution mode");
    let r = run_words(&words, &[b(0, 0, Res::Storage(vec![0; 16]))], [1, 1, 1], &[], &[], 8);
    assert_eq!(r.u32s(0), vec![0, 7, 14, 21]);
    // The same kernel whether the module carries other stages or not.
    let Some(alone) = spvasm(
        &THREE_STAGES
            .replace("COMPUTE_NAME", "main")
            .replace("               OpEntryPoint Vertex %vs \"main\" %pos %vid\n", "")
            .replace("               OpEntryPoint Fragment %fs \"main\" %color\n", "")
            .replace("               OpExecutionMode %fs OriginUpperLeft\n", ""),
        "vulkan1.2",
    ) else {
        return;
    };
    let k_alone = compile(&alone, &options("main", Stage::Compute)).unwrap();
    assert_eq!(k.code, k_alone.code);
}

#[test]
fn entry_points_are_found_by_name_and_stage() {
    let Some(words) = three_stages("main") else { return };
    let interface = |r: Result<_, CompileError>| match r {
        Err(CompileError::Interface(m)) => m,
        other => panic!(
            "expected an interface error, got {:?}",
            other.map(|k: vortex_transcode::shader::CompiledKernel| k.entry_name)
        ),
    };
    let m = interface(compile(&words, &options("nope", Stage::Compute)));
    assert_eq!(m, "entry point `nope` not found (the module has: main (Vertex), main (GLCompute), main (Fragment))");
    // A `main` of other stages is not the compute `main`.
    let Some(renamed) = three_stages("cs_main") else { return };
    let m = interface(compile(&renamed, &options("main", Stage::Compute)));
    assert!(m.starts_with("entry point `main` is a Vertex entry point, not a compute one (GLCompute)"), "{m}");
    assert!(m.ends_with("(the module has: main (Vertex), cs_main (GLCompute), main (Fragment))"), "{m}");
    let k = compile(&renamed, &options("cs_main", Stage::Compute)).expect("found by its own name");
    assert_eq!(k.entry_name, "cs_main");
}

#[test]
fn the_vertex_and_fragment_entries_of_one_module_compile_as_their_stages() {
    let Some(words) = three_stages("main") else { return };
    let v = compile(&words, &options("main", Stage::Vertex)).expect("the vertex `main`");
    let f = compile(&words, &options("main", Stage::Fragment)).expect("the fragment `main`");
    let (vi, fi) = (v.graphics.unwrap(), f.graphics.unwrap());
    assert_eq!((vi.vout_locations, fi.color_outputs), (0, 1));
    assert!(v.code.iter().any(|i| i.op == vortex_model::abi::isa::Op::Stg), "the vertex kernel stores its slot");
    assert!(f.code.iter().any(|i| i.op == vortex_model::abi::isa::Op::Exp), "the fragment kernel exports");
}
