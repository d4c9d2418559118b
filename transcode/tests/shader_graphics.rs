//! The vertex and fragment stages and sampling, checked on the generated code: what each
//! stage tells the fixed-function units (`GraphicsInfo`), the attribute fetch, the
//! vertex-output stores, interpolation, exports, derivatives, demotion and the `TEX`
//! operands of every sampling instruction; and what is refused, by name. (Running them
//! needs the device's draw path: `shader_draw.rs`.)

mod shader_util;
use shader_util::*;
use vortex_model::abi::gfx::{csr, deriv, export, state, tex, vout};
use vortex_model::abi::isa::{Instr, MemSize, Op};
use vortex_transcode::shader::{
    compile, descriptor_type as dt, BindingLayout, CompileError, CompileOptions, CompiledKernel, GraphicsInfo,
    ResourceLayout, Stage, Target, VertexAttribute,
};

/// A GLSL shader of `stage` compiled with `layout` and `vertex_input`; `None` when
/// glslangValidator is missing. Every kernel is checked for well-placed reconvergence points.
fn build(
    src: &str,
    stage: Stage,
    layout: ResourceLayout,
    vertex_input: Vec<VertexAttribute>,
) -> Option<Result<CompiledKernel, CompileError>> {
    let ext = match stage {
        Stage::Vertex => "vert",
        Stage::Fragment => "frag",
        _ => "comp",
    };
    let words = glsl_stage(src, ext, "vulkan1.2")?;
    let opts = CompileOptions { target: Target::stage(stage), layout, vertex_input, ..CompileOptions::entry("main") };
    let k = compile(&words, &opts);
    if let Ok(k) = &k {
        if let Err(e) = check_reconvergence(&k.code) {
            panic!("{e}\n{}", k.disassemble());
        }
    }
    Some(k)
}

fn vs(src: &str, attrs: &[(u32, u32, u32, u32)]) -> Option<CompiledKernel> {
    let vi = attrs
        .iter()
        .map(|&(location, binding, format, offset)| VertexAttribute { location, binding, format, offset })
        .collect();
    Some(build(src, Stage::Vertex, ResourceLayout::default(), vi)?.unwrap_or_else(|e| panic!("{e}\n{src}")))
}

fn fs(src: &str, layout: ResourceLayout) -> Option<CompiledKernel> {
    Some(build(src, Stage::Fragment, layout, vec![])?.unwrap_or_else(|e| panic!("{e}\n{src}")))
}

fn binding(set: u32, binding: u32, descriptor_type: u32, count: u32, offset: u32) -> BindingLayout {
    BindingLayout { set, binding, descriptor_type, count, offset, dynamic_index: None }
}

fn bindings(b: &[BindingLayout]) -> ResourceLayout {
    ResourceLayout { bindings: b.to_vec(), push_constant_bytes: 0 }
}

fn ops(k: &CompiledKernel, op: Op) -> Vec<Instr> {
    k.code.iter().filter(|i| i.op == op).copied().collect()
}

/// The constant register `r` holds at instruction `pc`: the last write before it, through
/// moves, if that is a `MOVI` (the code before `pc` taken as straight-line).
fn constant(code: &[Instr], pc: usize, r: u16) -> Option<u32> {
    let def = code[..pc].iter().rposition(|i| i.dst == r && i.op != Op::Stg)?;
    match code[def].op {
        Op::Movi => Some(code[def].imm),
        Op::Mov => constant(code, def, code[def].a),
        _ => None,
    }
}

fn info(k: &CompiledKernel) -> GraphicsInfo {
    k.graphics.clone().expect("graphics kernels carry GraphicsInfo")
}

const R32G32B32_SFLOAT: u32 = 106;
const R8G8B8A8_UNORM: u32 = 37;

#[test]
fn vertex_outputs_take_slots_by_location_and_component() {
    let src = r#"#version 450
        layout(location = 0) in vec3 pos;
        layout(location = 0) out vec4 a;
        layout(location = 1) out vec2 b;
        layout(location = 1, component = 2) out float c;
        layout(location = 2) out vec2 arr[2];
        layout(location = 4) flat out ivec3 d;
        layout(location = 6) out vec4 never_written;
        out float gl_ClipDistance[3];
        void main() {
            gl_Position = vec4(pos, 1.0);
            a = vec4(1.0); b = vec2(2.0); c = 3.0; arr[0] = vec2(4.0); arr[1] = vec2(5.0); d = ivec3(6);
            gl_ClipDistance[0] = 1.0; gl_ClipDistance[1] = 2.0; gl_ClipDistance[2] = 3.0;
        }"#;
    let Some(k) = vs(src, &[(0, 0, R32G32B32_SFLOAT, 0)]) else { return };
    let i = info(&k);
    // Locations 0..=6 declared (6 never written still needs its room in the slot).
    assert_eq!((i.vout_locations, i.clip_distances, i.writes_point_size), (7, 3, true), "{i:?}");
    let stores: Vec<(u32, MemSize)> =
        ops(&k, Op::Stg).iter().map(|s| (s.imm, MemSize::from_u8(s.modifier).unwrap())).collect();
    let at = |l: usize, c: usize| vout::varying(l, c) as u32;
    for want in [
        (vout::POSITION as u32, MemSize::B128),
        (vout::POINT_SIZE as u32, MemSize::B32),
        (vout::CLIP_DISTANCE as u32 + 8, MemSize::B32),
        (at(0, 0), MemSize::B128),
        (at(1, 0), MemSize::B32),
        (at(1, 1), MemSize::B32),
        (at(1, 2), MemSize::B32),
        (at(2, 1), MemSize::B32),
        (at(3, 0), MemSize::B32),
        (at(4, 2), MemSize::B32),
    ] {
        assert!(stores.contains(&want), "no store {want:?} in {stores:?}\n{}", k.disassemble());
    }
    assert!(!stores.iter().any(|s| s.0 >= at(6, 0)), "location 6 is never written: {stores:?}");
    assert!(!stores.iter().any(|s| s.0 == at(1, 3) || s.0 == at(4, 3)), "unused components stay unwritten");
    assert!(!i.side_effects, "the vertex outputs are not side effects");
    // The slot: vob + vtx_slot * the state record's stride.
    let csrs: Vec<u32> = ops(&k, Op::Csr).iter().map(|c| c.imm).collect();
    for c in [csr::VTX_SLOT, csr::VOB_LO, csr::VOB_HI, csr::STATE_LO] {
        assert!(csrs.contains(&c), "CSR {c:#x} not read");
    }
    assert!(ops(&k, Op::Ldg).iter().any(|l| l.imm == state::VOUT_STRIDE as u32));
}

#[test]
fn point_size_defaults_to_one_and_clip_distances_need_the_capability() {
    // glslang's implicit gl_PerVertex has PointSize and ClipDistance members either way.
    let src = "#version 450\nlayout(location = 0) in vec4 p;\nvoid main() { gl_Position = p; }";
    let Some(k) = vs(src, &[(0, 0, R32G32B32_SFLOAT, 0)]) else { return };
    assert_eq!(info(&k).clip_distances, 0);
    assert!(!ops(&k, Op::Stg).iter().any(|s| (vout::CLIP_DISTANCE..vout::VARYING).contains(&(s.imm as usize))));
    let ps =
        k.code.iter().position(|s| s.op == Op::Stg && s.imm == vout::POINT_SIZE as u32).expect("point size stored");
    assert_eq!(constant(&k.code, ps, k.code[ps].b), Some(1.0f32.to_bits()), "{}", k.disassemble());
    // No outputs at all: position zero, point size 1.
    let Some(k) = vs("#version 450\nvoid main() {}", &[]) else { return };
    assert_eq!(info(&k), GraphicsInfo::default());
    let stores = ops(&k, Op::Stg);
    assert_eq!(stores.len(), 2, "{}", k.disassemble());
}

#[test]
fn vertex_built_ins_are_csrs() {
    let src = r#"#version 460
        layout(location = 0) out flat ivec4 o;
        void main() { o = ivec4(gl_VertexIndex, gl_InstanceIndex, gl_BaseVertex + gl_BaseInstance, gl_DrawID); gl_Position = vec4(0); }"#;
    let Some(k) = vs(src, &[]) else { return };
    let csrs: Vec<u32> = ops(&k, Op::Csr).iter().map(|c| c.imm).collect();
    for c in [csr::VTX_INDEX, csr::VTX_INSTANCE, csr::VTX_BASE_VERTEX, csr::VTX_BASE_INSTANCE, csr::DRAW_INDEX] {
        assert!(csrs.contains(&c), "CSR {c:#x} not read:\n{}", k.disassemble());
    }
}

#[test]
fn attribute_fetch_reads_the_binding_record_and_converts() {
    let src = r#"#version 450
        layout(location = 0) in vec3 pos;
        layout(location = 1) in vec4 color;
        layout(location = 2) in uvec2 ids;
        layout(location = 3) in ivec4 packed;
        layout(location = 4) in vec4 missing;
        layout(location = 0) out vec4 o;
        void main() { gl_Position = vec4(pos, 1.0) + missing; o = color + vec4(ids, 0, 0) + vec4(packed); }"#;
    let attrs = [(0, 0, R32G32B32_SFLOAT, 0), (1, 0, R8G8B8A8_UNORM, 12), (2, 3, 101, 4), (3, 3, 69, 0)];
    let Some(k) = vs(src, &attrs) else { return };
    let rec = |b: usize, f: usize| (state::VB + b * state::vb::BYTES + f) as u32;
    let loads: Vec<(u32, MemSize)> =
        ops(&k, Op::Ldg).iter().map(|l| (l.imm, MemSize::from_u8(l.modifier).unwrap())).collect();
    for b in [0, 3] {
        for (f, size) in [
            (state::vb::ADDR, MemSize::B64),
            (state::vb::STRIDE, MemSize::B32),
            (state::vb::INPUT_RATE, MemSize::B32),
            (state::vb::DIVISOR, MemSize::B32),
            (state::vb::SIZE, MemSize::B64),
        ] {
            assert_eq!(loads.iter().filter(|l| **l == (rec(b, f), size)).count(), 1, "binding {b} field {f}, once");
        }
    }
    assert!(!loads.iter().any(|l| l.0 == rec(1, 0)), "binding 1 is not used");
    // Four unorm bytes, each divided by 255; the 2-bit signed alpha sign-extended by BFE.
    assert_eq!(loads.iter().filter(|l| l.1 == MemSize::U8).count(), 4);
    let f255 = 255.0f32.to_bits();
    assert!(k.code.iter().any(|i| i.op == Op::Movi && i.imm == f255));
    assert_eq!(ops(&k, Op::Fdiv).len(), 4);
    let bfe = ops(&k, Op::Bfe);
    assert_eq!(bfe.len(), 4);
    assert!(bfe.iter().all(|b| b.modifier == 1), "A2B10G10R10_SINT is signed");
    // Vertex and instance index CSRs, the 64-bit range check.
    assert!(!ops(&k, Op::Icmp64).is_empty());
    let csrs: Vec<u32> = ops(&k, Op::Csr).iter().map(|c| c.imm).collect();
    assert!(csrs.contains(&csr::VTX_INDEX) && csrs.contains(&csr::VTX_INSTANCE));
    // Location 4 has no attribute: (0, 0, 0, 1.0).
    assert!(k.code.iter().any(|i| i.op == Op::Movi && i.imm == 1.0f32.to_bits()));
}

#[test]
fn unknown_vertex_formats_and_bindings_are_interface_errors() {
    let src = "#version 450\nlayout(location = 0) in vec4 p;\nvoid main() { gl_Position = p; }";
    let attr = |format, binding| vec![VertexAttribute { location: 0, binding, format, offset: 0 }];
    let Some(r) = build(src, Stage::Vertex, ResourceLayout::default(), attr(15, 0)) else { return };
    match r {
        Err(CompileError::Interface(m)) => assert!(m.contains("has format 15"), "{m}"),
        other => panic!("{:?}", other.map(|k| k.code.len())),
    }
    let Some(r) = build(src, Stage::Vertex, ResourceLayout::default(), attr(109, 16)) else { return };
    assert!(matches!(r, Err(CompileError::Interface(m)) if m.contains("binding 16")));
}

#[test]
fn fragment_inputs_interpolate_by_qualifier() {
    let src = r#"#version 450
        layout(location = 0) in vec4 smooth_in;
        layout(location = 1) flat in ivec2 flat_in;
        layout(location = 1, component = 2) noperspective in vec2 linear_in;
        layout(location = 2) centroid in float centroid_in;
        layout(location = 0) out vec4 o;
        void main() { o = smooth_in + vec4(flat_in, linear_in) + vec4(centroid_in); }"#;
    let Some(k) = fs(src, ResourceLayout::default()) else { return };
    let csrs: Vec<u32> = ops(&k, Op::Csr).iter().map(|c| c.imm).collect();
    for c in [
        csr::FRAG_VTX0,
        csr::FRAG_VTX1,
        csr::FRAG_VTX2,
        csr::FRAG_BARY_I,
        csr::FRAG_BARY_J,
        csr::FRAG_BARY_LINEAR_I,
        csr::FRAG_BARY_CENTROID_I,
    ] {
        assert!(csrs.contains(&c), "CSR {c:#x} not read:\n{}", k.disassemble());
    }
    assert!(!csrs.contains(&csr::FRAG_BARY_LINEAR_CENTROID_I));
    // smooth: 4 components, linear: 2, centroid: 1, each two FFMAs; the flat ints none.
    assert_eq!(ops(&k, Op::Ffma).len(), 2 * (4 + 2 + 1), "{}", k.disassemble());
    let loads: Vec<(u32, MemSize)> =
        ops(&k, Op::Ldg).iter().map(|l| (l.imm, MemSize::from_u8(l.modifier).unwrap())).collect();
    let at = |l: usize| vout::varying(l, 0) as u32;
    assert_eq!(loads.iter().filter(|l| **l == (at(0), MemSize::B128)).count(), 3);
    // Location 1 holds two variables: the flat one reads vertex 0 only.
    assert_eq!(loads.iter().filter(|l| **l == (at(1), MemSize::B128)).count(), 1 + 3);
    assert_eq!(loads.iter().filter(|l| **l == (at(2), MemSize::B32)).count(), 3, "one component: a word per vertex");
}

#[test]
fn fragment_exports_colours_depth_and_mask_the_last_done() {
    let src = r#"#version 450
        layout(location = 0) out vec4 c0;
        layout(location = 2) out uvec2 c2;
        void main() { c0 = vec4(0.5); c2 = uvec2(7, 8); gl_FragDepth = 0.25; gl_SampleMask[0] = 1; }"#;
    let Some(k) = fs(src, ResourceLayout::default()) else { return };
    let i = info(&k);
    assert_eq!(
        (i.color_outputs, i.writes_depth, i.discards, i.side_effects, i.early_tests),
        (0b101, true, false, false, false)
    );
    let exps: Vec<(u8, u32)> = ops(&k, Op::Exp).iter().map(|e| (e.modifier, e.imm)).collect();
    assert_eq!(
        exps,
        vec![(export::COLOR0, 0), (export::COLOR0 + 2, 0), (export::DEPTH, 0), (export::SAMPLE_MASK, export::DONE)]
    );
    // uvec2 padded to (x, y, 0, 1).
    let c2 = ops(&k, Op::Exp)[1].a;
    let movs: Vec<&Instr> = k.code.iter().filter(|i| i.dst == c2 + 3 && matches!(i.op, Op::Mov | Op::Movi)).collect();
    assert!(!movs.is_empty(), "{}", k.disassemble());
    // No outputs: an all-ones sample mask, DONE.
    let Some(k) = fs("#version 450\nvoid main() {}", ResourceLayout::default()) else { return };
    let e = ops(&k, Op::Exp);
    assert_eq!(e.iter().map(|e| (e.modifier, e.imm)).collect::<Vec<_>>(), vec![(export::SAMPLE_MASK, export::DONE)]);
    assert!(k.code.iter().any(|i| i.op == Op::Movi && i.dst == e[0].a && i.imm == !0));
    assert_eq!(info(&k), GraphicsInfo::default());
}

#[test]
fn fragment_modes_discards_and_side_effects() {
    let early = "#version 450\nlayout(early_fragment_tests) in;\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(1); }";
    let Some(k) = fs(early, ResourceLayout::default()) else { return };
    assert!(info(&k).early_tests);
    let kill = "#version 450\nlayout(location = 0) in float v;\nlayout(location = 0) out vec4 o;\nvoid main() { if (v < 0.5) discard; o = vec4(v); }";
    let Some(k) = fs(kill, ResourceLayout::default()) else { return };
    assert!(info(&k).discards);
    // The killed lane exits before exporting.
    let exits: Vec<usize> = k.code.iter().enumerate().filter(|(_, i)| i.op == Op::Exit).map(|(p, _)| p).collect();
    let exp = k.code.iter().position(|i| i.op == Op::Exp).unwrap();
    assert!(exits.len() == 2 && exits[0] < exp, "{}", k.disassemble());
    let demote = r#"#version 450
        #extension GL_EXT_demote_to_helper_invocation : require
        layout(location = 0) in float v;
        layout(location = 0) out vec4 o;
        void main() { if (v < 0.5) demote; o = vec4(helperInvocationEXT() ? 1.0 : 0.0, gl_HelperInvocation ? 1.0 : 0.0, 0, 0); }"#;
    let Some(k) = fs(demote, ResourceLayout::default()) else { return };
    assert!(info(&k).discards);
    assert_eq!(ops(&k, Op::Demote).len(), 1);
    // Both helper tests read the CSR after the demotion, not in the prologue.
    let d = k.code.iter().position(|i| i.op == Op::Demote).unwrap();
    let reads: Vec<usize> = k
        .code
        .iter()
        .enumerate()
        .filter(|(_, i)| i.op == Op::Csr && i.imm == csr::FRAG_HELPER)
        .map(|(p, _)| p)
        .collect();
    assert_eq!(reads.len(), 2, "{}", k.disassemble());
    assert!(reads.iter().all(|&p| p > d));
    let store = r#"#version 450
        layout(set = 0, binding = 0, std430) buffer B { uint n; } b;
        void main() { atomicAdd(b.n, 1); }"#;
    let Some(k) = fs(store, bindings(&[binding(0, 0, dt::STORAGE_BUFFER, 1, 0)])) else { return };
    let i = info(&k);
    assert!(i.side_effects && !i.discards && i.color_outputs == 0);
    let depth = "#version 450\nlayout(depth_greater) out float gl_FragDepth;\nvoid main() { gl_FragDepth = 0.5; }";
    let Some(k) = fs(depth, ResourceLayout::default()) else { return };
    assert!(info(&k).writes_depth);
}

#[test]
fn fragment_built_ins_are_csrs() {
    let src = r#"#version 450
        layout(location = 0) out vec4 o;
        void main() {
            o = gl_FragCoord + vec4(gl_FrontFacing ? 1.0 : 0.0, gl_PointCoord, float(gl_SampleMaskIn[0]));
            o.x += float(gl_PrimitiveID);
        }"#;
    let Some(k) = fs(src, ResourceLayout::default()) else { return };
    let csrs: Vec<u32> = ops(&k, Op::Csr).iter().map(|c| c.imm).collect();
    for c in [
        csr::FRAG_X,
        csr::FRAG_Y,
        csr::FRAG_Z,
        csr::FRAG_W,
        csr::FRAG_FRONT,
        csr::FRAG_POINT_U,
        csr::FRAG_POINT_V,
        csr::FRAG_COVERAGE,
        csr::FRAG_PRIMITIVE,
    ] {
        assert!(csrs.contains(&c), "CSR {c:#x} not read:\n{}", k.disassemble());
    }
    // The pixel centre: + 0.5.
    assert!(k.code.iter().any(|i| i.op == Op::Movi && i.imm == 0.5f32.to_bits()));
}

#[test]
fn derivatives_are_quad_ops() {
    let src = r#"#version 450
        layout(location = 0) in vec2 v;
        layout(location = 0) out vec4 o;
        void main() { o = vec4(dFdx(v.x), dFdyCoarse(v.y), fwidth(v.x), dFdxFine(v.y) + dFdyFine(v.x)); }"#;
    let Some(k) = fs(src, ResourceLayout::default()) else { return };
    let mut kinds: Vec<u8> = ops(&k, Op::Deriv).iter().map(|d| d.modifier).collect();
    kinds.sort_unstable();
    // dFdx and fwidth are fine.
    let mut want = vec![deriv::FINE_X, deriv::COARSE_Y, deriv::FINE_X, deriv::FINE_Y, deriv::FINE_X, deriv::FINE_Y];
    want.sort_unstable();
    assert_eq!(kinds, want, "{}", k.disassemble());
    assert_eq!(ops(&k, Op::Fabs).len(), 2, "fwidth = |dx| + |dy|");
}

/// The `TEX` instructions of a fragment shader sampling through `decl` with `expr` (a vec4).
fn tex_of(decl: &str, expr: &str, layout: ResourceLayout) -> Option<(CompiledKernel, Vec<Instr>)> {
    let src = format!(
        "#version 450\n#extension GL_ARB_texture_query_lod : enable\n{decl}\nlayout(location = 0) in vec4 uv;\nlayout(location = 0) out vec4 o;\nvoid main() {{ o = {expr}; }}"
    );
    let k = fs(&src, layout)?;
    let t = ops(&k, Op::Tex);
    Some((k, t))
}

fn combined(n: u32) -> ResourceLayout {
    bindings(&[binding(0, 0, dt::COMBINED_IMAGE_SAMPLER, n, 0)])
}

fn lod(m: u32) -> u32 {
    m << tex::LOD_SHIFT
}

#[test]
fn sampling_instructions_become_tex() {
    let s2 = "layout(set = 0, binding = 0) uniform sampler2D s;";
    let cases: &[(&str, &str, u8, u32, u32)] = &[
        (s2, "texture(s, uv.xy)", tex::op::SAMPLE, tex::DIM_2D, 2),
        (s2, "texture(s, uv.xy, 1.5)", tex::op::SAMPLE, tex::DIM_2D | lod(tex::LOD_BIAS), 3),
        (s2, "textureLod(s, uv.xy, 2.0)", tex::op::SAMPLE, tex::DIM_2D | lod(tex::LOD_EXPLICIT), 3),
        (s2, "textureGrad(s, uv.xy, uv.zw, uv.wz)", tex::op::SAMPLE, tex::DIM_2D | lod(tex::LOD_GRAD), 6),
        (s2, "textureOffset(s, uv.xy, ivec2(-1, 3))", tex::op::SAMPLE, tex::DIM_2D | 0xF00 | 0x3000, 2),
        (s2, "texelFetch(s, ivec2(uv.xy), 1)", tex::op::FETCH, tex::DIM_2D | lod(tex::LOD_EXPLICIT), 3),
        (s2, "textureGather(s, uv.xy, 2)", tex::op::GATHER, tex::DIM_2D | (2 << tex::GATHER_SHIFT), 2),
        (s2, "vec4(textureSize(s, 1), 0, 0)", tex::op::QUERY_SIZE, tex::DIM_2D | lod(tex::LOD_EXPLICIT), 1),
        (s2, "vec4(textureQueryLevels(s))", tex::op::QUERY_LEVELS, tex::DIM_2D, 0),
        (s2, "vec4(textureQueryLod(s, uv.xy), 0, 0)", tex::op::QUERY_LOD, tex::DIM_2D, 2),
        (
            "layout(set = 0, binding = 0) uniform sampler2DShadow s;",
            "vec4(texture(s, uv.xyz))",
            tex::op::SAMPLE,
            tex::DIM_2D | tex::DREF,
            3,
        ),
        (
            "layout(set = 0, binding = 0) uniform samplerCubeArrayShadow s;",
            "vec4(texture(s, uv, 0.5))",
            tex::op::SAMPLE,
            tex::DIM_CUBE | tex::ARRAYED | tex::DREF,
            5,
        ),
        (
            "layout(set = 0, binding = 0) uniform sampler2DArray s;",
            "texture(s, uv.xyz)",
            tex::op::SAMPLE,
            tex::DIM_2D | tex::ARRAYED,
            3,
        ),
        (
            "layout(set = 0, binding = 0) uniform sampler3D s;",
            "textureLod(s, uv.xyz, 0.0)",
            tex::op::SAMPLE,
            tex::DIM_3D | lod(tex::LOD_EXPLICIT),
            4,
        ),
        ("layout(set = 0, binding = 0) uniform sampler1D s;", "texture(s, uv.x)", tex::op::SAMPLE, tex::DIM_1D, 1),
        (
            "layout(set = 0, binding = 0) uniform isampler2D s;",
            "vec4(texture(s, uv.xy))",
            tex::op::SAMPLE,
            tex::DIM_2D,
            2,
        ),
        (
            "layout(set = 0, binding = 0) uniform sampler2DShadow s;",
            "textureGather(s, uv.xy, 0.5)",
            tex::op::GATHER,
            tex::DIM_2D | tex::DREF,
            3,
        ),
    ];
    for &(decl, expr, op, imm, regs) in cases {
        let Some((k, t)) = tex_of(decl, expr, combined(1)) else { return };
        assert_eq!(t.len(), 1, "{expr}:\n{}", k.disassemble());
        let t = t[0];
        assert_eq!((t.modifier, t.imm), (op, imm), "{expr}: mod {} imm {:#x}", t.modifier, t.imm);
        assert_eq!(tex::operand_regs(op, imm), Some(regs), "{expr}");
        assert_eq!(t.b == vortex_model::abi::isa::REG_NONE, regs == 0, "{expr}");
        let sampler = !matches!(op, tex::op::FETCH | tex::op::QUERY_SIZE | tex::op::QUERY_LEVELS);
        assert_eq!(t.c != vortex_model::abi::isa::REG_NONE, sampler, "{expr}: the sampler record");
    }
}

#[test]
fn projective_sampling_divides_by_q() {
    let Some((k, t)) =
        tex_of("layout(set = 0, binding = 0) uniform sampler2D s;", "textureProj(s, uv.xyz)", combined(1))
    else {
        return;
    };
    assert_eq!((t[0].modifier, t[0].imm), (tex::op::SAMPLE, tex::DIM_2D));
    assert_eq!(ops(&k, Op::Fdiv).len(), 2, "{}", k.disassemble());
    let Some((k, t)) =
        tex_of("layout(set = 0, binding = 0) uniform sampler2DShadow s;", "vec4(textureProj(s, uv))", combined(1))
    else {
        return;
    };
    assert_eq!(t[0].imm, tex::DIM_2D | tex::DREF);
    assert_eq!(ops(&k, Op::Fdiv).len(), 3, "the reference too:\n{}", k.disassemble());
}

#[test]
fn gather_offsets_are_four_gathers() {
    let decl = "#extension GL_ARB_gpu_shader5 : enable\nlayout(set = 0, binding = 0) uniform sampler2D s;";
    let expr = "textureGatherOffsets(s, uv.xy, ivec2[4](ivec2(0, 0), ivec2(1, 0), ivec2(0, 1), ivec2(-1, -1)), 1)";
    let Some((_, t)) = tex_of(decl, expr, combined(1)) else { return };
    let offs: Vec<[i32; 3]> = t.iter().map(|i| tex::offset(i.imm)).collect();
    assert_eq!(offs, vec![[0, 0, 0], [1, 0, 0], [0, 1, 0], [-1, -1, 0]]);
    assert!(t.iter().all(|i| i.modifier == tex::op::GATHER && (i.imm >> tex::GATHER_SHIFT) & 3 == 1));
}

#[test]
fn descriptors_of_every_sampling_kind() {
    // Separate image and sampler: SAMPLED_IMAGE and SAMPLER records, paired.
    let decl = "layout(set = 0, binding = 0) uniform texture2D t;\nlayout(set = 0, binding = 1) uniform sampler sm;";
    let layout = bindings(&[binding(0, 0, dt::SAMPLED_IMAGE, 1, 0), binding(0, 1, dt::SAMPLER, 1, 64)]);
    let Some((_, t)) = tex_of(decl, "texture(sampler2D(t, sm), uv.xy)", layout) else { return };
    assert_eq!(t.len(), 1);
    // A sampler in a combined image sampler descriptor is its second record.
    let layout =
        bindings(&[binding(0, 0, dt::COMBINED_IMAGE_SAMPLER, 1, 0), binding(0, 1, dt::COMBINED_IMAGE_SAMPLER, 1, 128)]);
    let Some((k, _)) = tex_of(decl, "texture(sampler2D(t, sm), uv.xy)", layout) else { return };
    assert!(k.code.iter().any(|i| i.op == Op::Movi && i.imm == 128 + 64), "{}", k.disassemble());
    // Arrays of combined image samplers with a non-uniform index: 128 bytes an element.
    let decl = "#extension GL_EXT_nonuniform_qualifier : require\nlayout(set = 0, binding = 0) uniform sampler2D s[4];";
    let Some((k, t)) = tex_of(decl, "texture(s[nonuniformEXT(int(uv.z))], uv.xy)", combined(4)) else { return };
    assert_eq!(t.len(), 1);
    assert!(k.code.iter().any(|i| i.op == Op::Movi && i.imm == 7), "shift by 7 (x128):\n{}", k.disassemble());
    // An input attachment: a fetch at the pixel.
    let decl = "layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput ia;";
    let layout = bindings(&[binding(0, 0, dt::INPUT_ATTACHMENT, 1, 0)]);
    let Some((k, t)) = tex_of(decl, "subpassLoad(ia)", layout) else { return };
    assert_eq!((t[0].modifier, t[0].imm), (tex::op::FETCH, tex::DIM_2D));
    let csrs: Vec<u32> = ops(&k, Op::Csr).iter().map(|c| c.imm).collect();
    assert!(csrs.contains(&csr::FRAG_X) && csrs.contains(&csr::FRAG_Y));
    // The wrong descriptor type names both.
    let src = "#version 450\nlayout(set = 0, binding = 0) uniform sampler2D s;\nlayout(location = 0) out vec4 o;\nvoid main() { o = texture(s, vec2(0)); }";
    let Some(r) = build(src, Stage::Fragment, bindings(&[binding(0, 0, dt::SAMPLED_IMAGE, 1, 0)]), vec![]) else {
        return;
    };
    assert!(
        matches!(&r, Err(CompileError::Interface(m)) if m.contains("combined image sampler in the shader but descriptor type 2")),
        "{:?}",
        r.map(|k| k.code.len())
    );
}

#[test]
fn compute_samples_with_explicit_lod_and_fetches() {
    let src = r#"#version 450
        layout(local_size_x = 4) in;
        layout(set = 0, binding = 0) uniform sampler2D s;
        layout(set = 0, binding = 1, std430) buffer B { vec4 v[]; } b;
        void main() { b.v[gl_LocalInvocationID.x] = textureLod(s, vec2(0.5), 0.0) + texelFetch(s, ivec2(0), 0); }"#;
    let layout =
        bindings(&[binding(0, 0, dt::COMBINED_IMAGE_SAMPLER, 1, 0), binding(0, 1, dt::STORAGE_BUFFER, 1, 128)]);
    let Some(k) = build(src, Stage::Compute, layout, vec![]) else { return };
    let k = k.unwrap();
    let t: Vec<u8> = ops(&k, Op::Tex).iter().map(|t| t.modifier).collect();
    assert_eq!(t, vec![tex::op::SAMPLE, tex::op::FETCH]);
    assert!(k.graphics.is_none());
}

#[test]
fn stage_interface_refusals_name_what_they_refuse() {
    let cases: &[(Stage, &str, &str)] = &[
        (Stage::Fragment, "#version 450\nlayout(location = 0) out vec4 o;\nvoid main() { o = vec4(gl_SampleID); }", "capability SampleRateShading"),
        (Stage::Vertex, "#version 450\nout float gl_CullDistance[1];\nvoid main() { gl_CullDistance[0] = 1.0; }", "capability CullDistance"),
        (
            Stage::Fragment,
            "#version 450\nlayout(location = 0) in vec4 v;\nlayout(location = 0) out vec4 o;\nvoid main() { o = interpolateAtCentroid(v); }",
            "capability InterpolationFunction",
        ),
        (Stage::Fragment, "#version 450\nlayout(location = 0, index = 1) out vec4 o;\nvoid main() { o = vec4(1); }", "dual-source colour output"),
        (Stage::Fragment, "#version 450\nlayout(location = 8) out vec4 o;\nvoid main() { o = vec4(1); }", "colour output location 8"),
        (
            Stage::Vertex,
            "#version 450\n#extension GL_ARB_shader_viewport_layer_array : require\nvoid main() { gl_Layer = 1; }",
            "capability ShaderLayer",
        ),
        (
            Stage::Fragment,
            "#version 450\nlayout(set = 0, binding = 0) uniform sampler2DMS s;\nlayout(location = 0) out vec4 o;\nvoid main() { o = texelFetch(s, ivec2(0), 1); }",
            "multisampled image",
        ),
        (
            Stage::Fragment,
            "#version 450\n#extension GL_ARB_sparse_texture_clamp : require\nlayout(set = 0, binding = 0) uniform sampler2D s;\nlayout(location = 0) out vec4 o;\nvoid main() { o = textureClampARB(s, vec2(0), 1.0); }",
            "capability MinLod",
        ),
        (
            Stage::Fragment,
            "#version 450\n#extension GL_ARB_gpu_shader5 : enable\nlayout(set = 0, binding = 0) uniform sampler2D s;\nlayout(location = 0) flat in ivec2 off;\nlayout(location = 0) out vec4 o;\nvoid main() { o = textureGatherOffset(s, vec2(0), off); }",
            "not a constant",
        ),
    ];
    for &(stage, src, needle) in cases {
        let Some(r) = build(src, stage, combined(1), vec![]) else { return };
        match r {
            Err(e) => assert!(e.to_string().contains(needle), "{src}: `{e}` lacks `{needle}`"),
            Ok(k) => panic!("{src}: compiled\n{}", k.disassemble()),
        }
    }
    // A fragment shader is not a vertex shader.
    let Some(words) = glsl_stage("#version 450\nvoid main() {}", "frag", "vulkan1.2") else { return };
    let opts = CompileOptions { target: Target::stage(Stage::Vertex), ..CompileOptions::entry("main") };
    let e = compile(&words, &opts).unwrap_err().to_string();
    assert!(e.contains("is a Fragment entry point, not a vertex one"), "{e}");
}
