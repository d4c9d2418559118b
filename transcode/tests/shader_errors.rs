//! Bad input is a `CompileError` that names the problem — never a panic, never a kernel.

mod shader_util;
use shader_util::*;
use vortex_transcode::shader::{
    compile, compile_bytes, reflect_layout, CompileError, CompileOptions, Stage, Target, VertexAttribute,
};

const SIMPLE: &str = r#"#version 450
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) buffer Out { uint v[]; } o;
void main() { o.v[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x; }"#;

fn simple_bindings() -> Vec<Binding> {
    vec![b(0, 0, Res::Storage(vec![0; 64]))]
}

fn compile_err(words: &[u32]) -> CompileError {
    match build(words, &simple_bindings(), 0, &[]) {
        Ok(_) => panic!("compiled"),
        Err(e) => e,
    }
}

fn expect(e: CompileError, kind: fn(&CompileError) -> bool, needle: &str) {
    assert!(kind(&e), "wrong error kind: {e:?}");
    assert!(e.to_string().contains(needle), "`{e}` does not mention `{needle}`");
}

#[test]
fn malformed_binaries() {
    let parse = |e: &CompileError| matches!(e, CompileError::Parse(_));
    expect(compile_err(&[]), parse, "shorter than the 5-word header");
    expect(compile_err(&[0xDEAD_BEEF; 32]), parse, "bad magic number 0xdeadbeef");
    expect(compile_err(&[0x0302_2307, 0x0001_0000, 0, 10, 0]), parse, "big-endian");
    expect(compile_err(&[0x0723_0203, 0x0001_0000, 0, 0, 0]), parse, "id bound 0");
    let unsupported = |e: &CompileError| matches!(e, CompileError::Unsupported(_));
    expect(compile_err(&[0x0723_0203, 0x0002_0000, 0, 10, 0]), unsupported, "SPIR-V version 2.0");
    assert!(matches!(
        compile_bytes(&[3, 2, 0x23, 7, 0], &CompileOptions::entry("main")),
        Err(CompileError::Parse(m)) if m.contains("whole number of words")
    ));

    let Some(words) = glsl(SIMPLE) else { return };
    assert!(build(&words, &simple_bindings(), 0, &[]).is_ok());
    // Truncated in the middle of an instruction.
    expect(compile_err(&words[..words.len() - 3]), parse, "truncated");
    // An instruction whose word count is zero.
    let mut w = words.clone();
    w[5] &= 0xFFFF;
    expect(compile_err(&w), parse, "word count 0");
    // An unknown opcode (first instruction after the header is OpCapability).
    let mut w = words.clone();
    w[5] = (w[5] & 0xFFFF_0000) | 0x7FF0;
    expect(compile_err(&w), parse, "unknown opcode (32752)");
}

#[test]
fn unsupported_features_are_named() {
    let unsupported = |e: &CompileError| matches!(e, CompileError::Unsupported(_));
    let cases = [
        (
            "#version 450\n#extension GL_EXT_shader_atomic_float : require\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 0) buffer B { double d; } b;\nvoid main() { atomicAdd(b.d, 2.0lf); }",
            "SPIR-V capability AtomicFloat64AddEXT",
        ),
        (
            "#version 450\n#extension GL_EXT_shader_image_int64 : require\nlayout(local_size_x = 1) in;\nlayout(r64ui, binding = 1) uniform u64image2D img;\nlayout(std430, binding = 0) buffer B { uint v; } b;\nvoid main() { b.v = uint(imageLoad(img, ivec2(0)).x); }",
            "SPIR-V capability Int64ImageEXT",
        ),
        (
            "#version 450\n#extension GL_NV_shader_subgroup_partitioned : require\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 0) buffer B { uint v; } b;\nvoid main() { b.v = subgroupPartitionNV(b.v).x; }",
            "SPIR-V capability GroupNonUniformPartitioned",
        ),
        (
            "#version 450\nlayout(local_size_x = 1) in;\nlayout(binding = 1) uniform sampler2DMS s;\nlayout(std430, binding = 0) buffer B { vec4 v; } b;\nvoid main() { b.v = texelFetch(s, ivec2(0), 0); }",
            "multisampled image",
        ),
    ];
    for (src, needle) in cases {
        let Some(words) = glsl(src) else { return };
        let e = build(&words, &simple_bindings(), 0, &[]).unwrap_err();
        expect(e, unsupported, needle);
    }
}

#[test]
fn interface_mismatches() {
    let Some(words) = glsl(SIMPLE) else { return };
    let interface = |e: &CompileError| matches!(e, CompileError::Interface(_));
    let e = compile(&words, &CompileOptions::entry("other")).unwrap_err();
    expect(e, interface, "entry point `other` not found (the module has: main (GLCompute))");
    let e = build(&words, &[], 0, &[]).unwrap_err();
    expect(e, interface, "set 0 binding 0");
    let e = build(&words, &[b(0, 0, Res::Uniform(vec![0; 16]))], 0, &[]).unwrap_err();
    expect(e, interface, "storage buffer in the shader but descriptor type 6");

    let spec = "#version 450\nlayout(local_size_x_id = 3) in;\nlayout(constant_id = 5) const int K = 2;\nlayout(std430, binding = 0) buffer B { int v[]; } b;\nvoid main() { b.v[gl_LocalInvocationID.x] = K; }";
    let Some(words) = glsl(spec) else { return };
    let e = build(&words, &simple_bindings(), 0, &[(5, vec![1, 2])]).unwrap_err();
    expect(e, interface, "specialization constant 5 has 2 bytes, expected 4");
}

#[test]
fn recursion_is_refused() {
    let src = r#"
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %main = OpFunction %void None %fn
         %l0 = OpLabel
          %c = OpFunctionCall %void %f
               OpReturn
               OpFunctionEnd
          %f = OpFunction %void None %fn
         %l1 = OpLabel
          %d = OpFunctionCall %void %f
               OpReturn
               OpFunctionEnd
"#;
    let Some(words) = spvasm(src, "vulkan1.2") else { return };
    let e = compile(&words, &CompileOptions::entry("main")).unwrap_err();
    expect(e, |e| matches!(e, CompileError::Invalid(_)), "recursive call");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, w: &mut Vec<u32>) {
    for _ in 0..1 + rng.below(4) {
        if w.len() <= 5 {
            return;
        }
        let i = 5 + rng.below(w.len() - 5);
        match rng.below(7) {
            0 => w[i] ^= 1 << rng.below(32),
            1 => w[i] = rng.next() as u32,
            2 => w[i] = rng.below(64) as u32,
            // Keep the word count, change the opcode.
            3 => w[i] = (w[i] & 0xFFFF_0000) | rng.below(400) as u32,
            4 => w.truncate(i),
            5 => {
                let j = 5 + rng.below(w.len() - 5);
                w.swap(i, j);
            }
            _ => {
                w.remove(i);
            }
        }
    }
}

/// Every compiled SPIR-V module of the differential corpus (`corpus/shaders`).
fn corpus_modules() -> Vec<(String, Vec<u32>)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "spv") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/shaders"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let b = std::fs::read(&p).ok()?;
            let w = b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            Some((p.display().to_string(), w))
        })
        .collect()
}

/// Vertex and fragment seeds of the fuzz target: attributes and varyings, interpolation
/// qualifiers, built-ins, sampling of every kind, derivatives, discard and demotion.
const GRAPHICS_SEEDS: [(Stage, &str, &str); 3] = [
    (
        Stage::Vertex,
        "vert",
        "#version 460\nlayout(location = 0) in vec3 p;\nlayout(location = 1) in uvec2 u;\nlayout(location = 2) in vec4 c[1];\nlayout(location = 0) out vec4 o;\nlayout(location = 1) flat out uvec2 f;\nout float gl_ClipDistance[2];\nvoid main() { gl_Position = vec4(p, 1.0); o = c[0] * float(gl_VertexIndex + gl_InstanceIndex); f = u; gl_PointSize = 2.0; gl_ClipDistance[1] = p.x; }",
    ),
    (
        Stage::Fragment,
        "frag",
        "#version 450\nlayout(set = 0, binding = 0) uniform sampler2D s[2];\nlayout(set = 0, binding = 1) uniform sampler2DShadow sh;\nlayout(location = 0) in vec4 v;\nlayout(location = 1) flat in ivec2 i;\nlayout(location = 2) noperspective centroid in vec2 w;\nlayout(location = 0) out vec4 o;\nlayout(location = 1) out uvec4 u;\nvoid main() { if (v.w < 0.0) discard; o = texture(s[i.x], v.xy) + textureLod(s[1], w, 1.0) + textureGather(s[0], w, 1) + texelFetch(s[0], i, 0) + vec4(textureProj(sh, v), dFdx(v.x), fwidth(w.y), gl_FragCoord.z); u = uvec4(textureSize(s[1], 0), gl_FrontFacing ? 1 : 0, gl_SampleMaskIn[0]); gl_FragDepth = v.z; }",
    ),
    (
        Stage::Fragment,
        "frag",
        "#version 450\n#extension GL_EXT_demote_to_helper_invocation : require\nlayout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput ia;\nlayout(set = 0, binding = 1) uniform texture2D t;\nlayout(set = 0, binding = 2) uniform sampler sm;\nlayout(location = 0) in vec2 uv;\nlayout(location = 0) out vec4 o;\nvoid main() { if (uv.x > 0.5) demote; o = subpassLoad(ia) + textureGrad(sampler2D(t, sm), uv, dFdxCoarse(uv), dFdyFine(uv)) * (helperInvocationEXT() ? 0.0 : 1.0); }",
    ),
];

/// The front end's fuzz target: random and mutated modules (the corpus's 130-odd shaders,
/// a few hand-picked ones and vertex and fragment shaders as seeds, each compiled against the
/// layout read off its seed),
/// for a bounded time. Every outcome must be Ok or a CompileError, never a panic.
/// `VX_FUZZ_SECS` sets the time (default 20 s; CI runs it in both modes), `VX_FUZZ_ITERS`
/// caps the iterations instead, `VX_FUZZ_SEED` varies the campaign.
#[test]
fn fuzz_never_panics() {
    let seeds = [
        SIMPLE,
        "#version 450\nlayout(local_size_x = 8) in;\nlayout(std430, binding = 0) buffer B { float v[]; } b;\nshared float s[8];\nvoid main() { uint i = gl_LocalInvocationID.x; s[i] = b.v[i]; barrier(); float a = 0.0; for (int k = 0; k < 8; k++) { if (k == int(i)) continue; a += s[k] * sin(float(k)); } switch (i) { case 0u: a = -a; break; case 3u: a += 1.0; default: a *= 2.0; } b.v[i] = a; }",
        "#version 460\n#extension GL_EXT_ray_query : require\nlayout(local_size_x = 4) in;\nlayout(binding = 1) uniform accelerationStructureEXT t;\nlayout(std430, binding = 0) buffer B { float v[]; } b;\nrayQueryEXT q[4];\nvoid main() { uint i = gl_LocalInvocationID.x; rayQueryInitializeEXT(q[i], t, 0u, 255u, vec3(0.0), 0.0, vec3(0.0, 0.0, 1.0), 9.0); while (rayQueryProceedEXT(q[i])) { rayQueryConfirmIntersectionEXT(q[i]); } b.v[i] = rayQueryGetIntersectionTEXT(q[i], true); mat4x3 m = rayQueryGetIntersectionObjectToWorldEXT(q[i], true); b.v[i + 4u] = m[3].x; }",
    ];
    let bindings = vec![b(0, 0, Res::Storage(vec![0; 64])), b(0, 1, Res::Accel(vec![0]))];
    let fixed = layout(&bindings, 0);
    let compute = CompileOptions { layout: fixed.clone(), ..CompileOptions::entry("main") };
    // (module, the options it compiles with: stage, layout, vertex input)
    let mut corpus: Vec<(Vec<u32>, CompileOptions)> = Vec::new();
    for s in seeds {
        let Some(w) = glsl(s) else { return };
        assert!(build(&w, &bindings, 0, &[]).is_ok(), "seed compiles: {s}");
        corpus.push((w.clone(), compute.clone()));
        if let Some(o) = glsl_opt(s) {
            corpus.push((o, compute.clone()));
        }
    }
    for (stage, ext, src) in GRAPHICS_SEEDS {
        let Some(w) = glsl_stage(src, ext, "vulkan1.2") else { return };
        let opts = CompileOptions {
            target: Target::stage(stage),
            layout: reflect_layout(&w).unwrap(),
            vertex_input: (0..3)
                .map(|l| VertexAttribute { location: l, binding: l, format: 37 + 27 * l, offset: 4 * l })
                .collect(),
            ..CompileOptions::entry("main")
        };
        assert!(compile(&w, &opts).is_ok(), "seed compiles: {src}");
        corpus.push((w, opts));
    }
    let mut from_corpus = 0;
    for (name, w) in corpus_modules() {
        let l = reflect_layout(&w).unwrap_or_else(|e| panic!("{name}: {e}"));
        let opts = CompileOptions { layout: l.clone(), ..CompileOptions::entry("main") };
        assert!(compile(&w, &opts).is_ok(), "corpus seed {name} compiles");
        corpus.push((w, opts));
        from_corpus += 1;
    }
    let secs: f64 = std::env::var("VX_FUZZ_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(20.0);
    let max_iters: usize = std::env::var("VX_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    let seed = std::env::var("VX_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x9E37_79B9_7F4A_7C15u64);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs);
    let mut rng = Rng(seed | 1);
    let mut outcomes = [0usize; 2];
    let mut it = 0;
    while it < max_iters && std::time::Instant::now() < deadline {
        let (mut w, opts) = if it % 10 == 0 {
            // Garbage after a valid header.
            let n = 5 + rng.below(200);
            let mut w: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
            w[..5].copy_from_slice(&[0x0723_0203, 0x0001_0500, 0, 64 + rng.below(1000) as u32, 0]);
            (w, compute.clone())
        } else {
            let (w, o) = &corpus[rng.below(corpus.len())];
            (w.clone(), o.clone())
        };
        mutate(&mut rng, &mut w);
        if std::env::var("VX_FUZZ_SAVE").is_ok() {
            // Stack overflows abort the process: keep the module under test on disk.
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(std::env::temp_dir().join("vx-fuzz-current.spv"), bytes).unwrap();
        }
        let r = std::panic::catch_unwind(|| compile(&w, &opts).is_ok());
        match r {
            Ok(ok) => outcomes[ok as usize] += 1,
            Err(_) => {
                let path = std::env::temp_dir().join(format!("vx-fuzz-crash-{it}.spv"));
                let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
                std::fs::write(&path, bytes).unwrap();
                panic!("compile panicked on mutation {it}; module saved to {}", path.display());
            }
        }
        it += 1;
    }
    eprintln!(
        "fuzz: {it} modules in {secs} s from {} seeds ({from_corpus} from the corpus): {} compiled, {} refused",
        corpus.len(),
        outcomes[1],
        outcomes[0]
    );
    assert!(outcomes[0] > 0 && outcomes[1] > 0);
}

/// Shader debug info (`NonSemantic.Shader.DebugInfo.100`, module-scope OpExtInst) is ignored.
#[test]
fn nonsemantic_debug_info_is_ignored() {
    let src = "#version 450\nlayout(local_size_x = 4) in;\nlayout(std430, binding = 0) buffer O { uint v[]; } o;\nuint sq(uint x) { return x * x; }\nvoid main() { uint i = gl_GlobalInvocationID.x; if (i > 1u) o.v[i] = sq(i); }";
    if glsl(src).is_none() {
        return;
    }
    let path = std::env::temp_dir().join(format!("vx-dbg-{}.comp", std::process::id()));
    let out = path.with_extension("spv");
    std::fs::write(&path, src).unwrap();
    let ok = std::process::Command::new("glslangValidator")
        .args(["--target-env", "vulkan1.2", "-V", "-gV", "-o"])
        .arg(&out)
        .arg(&path)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: glslangValidator -gV unavailable");
        return;
    }
    let bytes = std::fs::read(&out).unwrap();
    let _ = (std::fs::remove_file(&path), std::fs::remove_file(&out));
    let r = run_words(
        &bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<_>>(),
        &[b(0, 0, Res::Storage(vec![0; 16]))],
        [1, 1, 1],
        &[],
        &[],
        8,
    );
    assert_eq!(r.u32s(0), vec![0, 0, 4, 9]);
}
