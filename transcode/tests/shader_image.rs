//! Step 5: storage images — loads, stores, sizes and atomics, with the formats and view types
//! the ray-query conformance tests use (r32i / r32ui 3D written per workgroup).

mod shader_util;
use shader_util::*;
use vortex_model::abi::format::{self, view_type as vt};

#[test]
fn storage_images() {
    let src = r#"#version 450
layout(local_size_x = 1) in;
layout(r32i, set = 0, binding = 0) uniform iimage3D outI;
layout(r32ui, set = 0, binding = 1) uniform uimage3D outU;
layout(rgba32f, set = 0, binding = 2) uniform image2D rw;
layout(rgba8, set = 0, binding = 3) uniform writeonly image2DArray arr;
layout(r32ui, set = 0, binding = 4) uniform uimage2D counters;
void main() {
    ivec3 p = ivec3(gl_WorkGroupID);
    imageStore(outI, ivec3(p.xy, 0), ivec4(p.x * 10 - p.y, 0, 0, 0));
    imageStore(outI, ivec3(p.xy, 1), ivec4(-p.x - 1));
    imageStore(outU, ivec3(p.xy, 0), uvec4(uint(p.x + p.y * 8)));
    vec4 v = imageLoad(rw, p.xy);
    imageStore(rw, p.xy, v * 2.0 + vec4(1.0));
    imageStore(arr, ivec3(p.xy, p.x % 2), vec4(1.0, 0.5, 0.0, 1.0));
    imageAtomicAdd(counters, ivec2(p.x % 2, 0), 1u);
    if (p == ivec3(0)) {
        ivec3 s = imageSize(outI);
        ivec3 a = imageSize(arr);
        imageStore(outU, ivec3(0, 0, 1), uvec4(uint(s.x * 100 + s.y * 10 + s.z)));
        imageStore(outU, ivec3(1, 0, 1), uvec4(uint(a.x * 100 + a.y * 10 + a.z)));
    }
}"#;
    let rw_init: Vec<f32> = (0..64 * 4).map(|i| i as f32 * 0.25).collect();
    let img = |f: u32, view: u32, extent: [u32; 3], data: Vec<u8>| Res::Image { format: f, view, extent, data };
    let bindings = [
        b(0, 0, img(format::R32_SINT, vt::TYPE_3D, [8, 8, 2], vec![0xFF; 8 * 8 * 2 * 4])),
        b(0, 1, img(format::R32_UINT, vt::TYPE_3D, [8, 8, 2], vec![0; 8 * 8 * 2 * 4])),
        b(0, 2, img(format::R32G32B32A32_SFLOAT, vt::TYPE_2D, [8, 8, 1], bytes_f32(&rw_init))),
        b(0, 3, img(format::R8G8B8A8_UNORM, vt::TYPE_2D_ARRAY, [8, 8, 2], vec![0; 8 * 8 * 2 * 4])),
        b(0, 4, img(format::R32_UINT, vt::TYPE_2D, [2, 1, 1], vec![0; 8])),
    ];
    let Some(w) = glsl(src) else { return };
    for threads in [8, 32] {
        let r = run_words(&w, &bindings, [8, 8, 1], &[], &[], threads);
        let (i, u, f) = (r.i32s(0), r.u32s(1), r.f32s(2));
        for y in 0..8i32 {
            for x in 0..8i32 {
                let t = (y * 8 + x) as usize;
                assert_eq!(i[t], x * 10 - y, "outI layer 0 at ({x},{y})");
                assert_eq!(i[64 + t], -x - 1, "outI layer 1");
                assert_eq!(u[t], (x + y * 8) as u32, "outU");
                for c in 0..4 {
                    assert_eq!(f[4 * t + c], rw_init[4 * t + c] * 2.0 + 1.0, "rw texel ({x},{y}).{c}");
                }
                let layer = (x % 2) as usize;
                let a = &r.data[3][4 * (layer * 64 + t)..4 * (layer * 64 + t) + 4];
                assert_eq!(a, &[255, 128, 0, 255], "arr ({x},{y}) layer {layer}");
                let other = &r.data[3][4 * ((1 - layer) * 64 + t)..4 * ((1 - layer) * 64 + t) + 4];
                assert_eq!(other, &[0, 0, 0, 0]);
            }
        }
        assert_eq!(u[64], 882, "imageSize of the 3D image");
        assert_eq!(u[65], 882, "imageSize of the array image (layers in z)");
        assert_eq!(r.u32s(4), vec![32, 32], "image atomics");
    }
}

#[test]
fn image_arrays_nonuniform_and_texel_atomics() {
    let src = r#"#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 16) in;
layout(r32ui, set = 0, binding = 0) uniform uimage2D imgs[3];
void main() {
    uint i = gl_LocalInvocationID.x;
    uint k = i % 3u;
    imageStore(imgs[nonuniformEXT(k)], ivec2(i / 3u, 0), uvec4(i + 100u));
    imageAtomicAdd(imgs[nonuniformEXT(k)], ivec2(7, 0), i);
    imageAtomicMax(imgs[2], ivec2(6, 0), i * 3u);
}"#;
    let data = vec![vec![0u8; 8 * 4]; 3];
    let bindings = [b(0, 0, Res::ImageArray { format: format::R32_UINT, view: vt::TYPE_2D, extent: [8, 1, 1], data })];
    let Some(w) = glsl(src) else { return };
    for threads in [8, 32] {
        let r = run_words(&w, &bindings, [1, 1, 1], &[], &[], threads);
        for k in 0..3usize {
            let got = r.u32s(k);
            for (x, &v) in got.iter().take(6).enumerate() {
                let i = 3 * x + k;
                let want = if i < 16 { i as u32 + 100 } else { 0 };
                assert_eq!(v, want, "image {k} texel {x}, {threads} lanes");
            }
            let sum: u32 = (0..16u32).filter(|i| (*i as usize) % 3 == k).sum();
            assert_eq!(got[7], sum, "image {k} atomic sum");
        }
        assert_eq!(r.u32s(2)[6], 45, "atomic max");
    }
}
