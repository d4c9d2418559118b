//! The texture unit through the device model: hand-assembled kernels running one `TEX` per
//! lane against hand-solved fixtures (filters, mip levels from known derivatives, address
//! modes, borders, compare ops, cube faces and edges, gathers, fetches, queries) and
//! against an independent CPU reference written from the spec's formulas (`reference`
//! below) on random cases. Every test runs in the mode `VORTEX_MODE` asks for; one runs
//! both and compares bits.

#[path = "common/tex.rs"]
mod harness;

use harness::{f, fv, imm, ImageSpec, SamplerSpec, Tex};
use vortex_model::abi::format as fmt;
use vortex_model::abi::gfx::tex::{self, op};
use vortex_model::config::{DeviceConfig, Mode};
use vortex_model::fault::FaultKind;

const NEAREST: u32 = 0;
const LINEAR: u32 = 1;
const REPEAT: u32 = 0;
const MIRRORED_REPEAT: u32 = 1;
const CLAMP_TO_EDGE: u32 = 2;
const CLAMP_TO_BORDER: u32 = 3;
const MIRROR_CLAMP_TO_EDGE: u32 = 4;
const LOD0: u32 = tex::LOD_EXPLICIT;

fn dev() -> Tex {
    Tex::new(DeviceConfig::default())
}

fn spec(format: u32, view: u32, extent: [u32; 3], layers: u32, levels: u32) -> ImageSpec {
    ImageSpec { format, view, extent, layers, levels }
}

fn close(got: [f32; 4], want: [f32; 4], tol: f32) -> bool {
    got.iter().zip(want).all(|(g, w)| (g - w).abs() <= tol * w.abs().max(1.0))
}

#[track_caller]
fn assert_close(got: [f32; 4], want: [f32; 4], what: &str) {
    assert!(close(got, want, 1e-5), "{what}: got {got:?}, want {want:?}");
}

/// A 2x2 R32_SFLOAT texture holding 1, 2 (top row) and 3, 4.
fn two_by_two(t: &Tex) -> u64 {
    t.image(&spec(fmt::R32_SFLOAT, harness::TYPE_2D, [2, 2, 1], 1, 1), |_, _, x, y, _| {
        [f((1 + x + 2 * y) as f32), 0, 0, 0]
    })
}

#[test]
fn nearest_and_bilinear_on_a_two_by_two_texture() {
    let mut t = dev();
    let img = two_by_two(&t);
    let near = t.sampler(&SamplerSpec::default());
    let lin = t.sampler(&SamplerSpec { mag: LINEAR, min: LINEAR, ..Default::default() });
    let at = |s: f32, tt: f32| vec![f(s), f(tt), f(0.0)];
    let cases = [
        (at(0.25, 0.25), 1.0, 1.0),
        (at(0.75, 0.25), 2.0, 2.0),
        (at(0.25, 0.75), 3.0, 3.0),
        (at(0.75, 0.75), 4.0, 4.0),
        // The centre: all four texels at 1/4.
        (at(0.5, 0.5), 4.0, 2.5),
        // u = 0.75, v = 1.0: alpha 1/4, beta 1/2.
        (at(0.375, 0.5), 3.0, 2.25),
        // Outside, clamped to the edge: the corner texel for both filters.
        (at(-1.0, 2.0), 3.0, 3.0),
    ];
    let lanes: Vec<Vec<u32>> = cases.iter().map(|c| c.0.clone()).collect();
    let im = imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0);
    let n = t.run(op::SAMPLE, im, img, near, &lanes);
    let l = t.run(op::SAMPLE, im, img, lin, &lanes);
    for (k, c) in cases.iter().enumerate() {
        // One-component format: (R, 0, 0, 1).
        assert_eq!(fv(n[k]), [c.1, 0.0, 0.0, 1.0], "nearest case {k}");
        assert_close(fv(l[k]), [c.2, 0.0, 0.0, 1.0], &format!("bilinear case {k}"));
    }
}

#[test]
fn srgb_texels_are_linear_before_filtering() {
    let mut t = dev();
    // 2x1 sRGB: black and white; halfway between is linear 0.5, not sRGB's 0.5.
    let img = t.image(&spec(fmt::R8G8B8A8_SRGB, harness::TYPE_2D, [2, 1, 1], 1, 1), |_, _, x, _, _| {
        let v = x as f32;
        [f(v), f(v), f(v), f(1.0)]
    });
    let lin = t.sampler(&SamplerSpec { mag: LINEAR, min: LINEAR, ..Default::default() });
    let out = t.run(op::SAMPLE, imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0), img, lin, &[vec![f(0.5), f(0.5), 0]]);
    assert_close(fv(out[0]), [0.5, 0.5, 0.5, 1.0], "sRGB midpoint");
}

/// An 8x8 RGBA32F texture of 4 levels, each one colour.
const LEVEL_COLOURS: [[f32; 4]; 4] =
    [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]];

fn mip_chain(t: &Tex) -> u64 {
    t.image(&spec(fmt::R32G32B32A32_SFLOAT, harness::TYPE_2D, [8, 8, 1], 1, 4), |level, _, _, _, _| {
        LEVEL_COLOURS[level as usize].map(f)
    })
}

/// Quads whose coordinates step by `step` texels of the 8x8 base level per pixel in x and
/// `step_y` in y: `ρ = max(step, step_y)`.
fn quad_lanes(steps: &[(f32, f32)], extra: &[u32]) -> Vec<Vec<u32>> {
    let mut lanes = Vec::new();
    for &(sx, sy) in steps {
        for p in 0..4 {
            let s = 0.3 + (p % 2) as f32 * sx / 8.0;
            let tt = 0.3 + (p / 2) as f32 * sy / 8.0;
            let mut v = vec![f(s), f(tt)];
            v.extend_from_slice(extra);
            lanes.push(v);
        }
    }
    lanes
}

fn mix(a: [f32; 4], b: [f32; 4], d: f32) -> [f32; 4] {
    [0, 1, 2, 3].map(|k| (1.0 - d) * a[k] + d * b[k])
}

#[test]
fn implicit_lod_from_quad_derivatives_picks_the_level() {
    let mut t = dev();
    let img = mip_chain(&t);
    let c = LEVEL_COLOURS;
    let implicit = imm(tex::DIM_2D, false, false, tex::LOD_IMPLICIT, [0; 3], 0);
    // Nearest mipmapping: a step of 2^k texels per pixel reads level k (k = 3 and beyond: the
    // last level); 2^1.4 rounds to level 1, 2^1.6 to level 2.
    let near = t.sampler(&SamplerSpec::default());
    let steps =
        [(1.0, 1.0), (2.0, 0.5), (0.25, 4.0), (8.0, 8.0), (64.0, 1.0), (2f32.powf(1.4), 1.0), (2f32.powf(1.6), 1.0)];
    let out = t.run(op::SAMPLE, implicit, img, near, &quad_lanes(&steps, &[]));
    let want = [0, 1, 2, 3, 3, 1, 2];
    for (q, &lvl) in want.iter().enumerate() {
        for p in 0..4 {
            assert_eq!(fv(out[4 * q + p]), c[lvl], "quad {q} pixel {p}");
        }
    }
    // Linear mipmapping between levels 1 and 2 at λ = 1.25 and 1.5.
    let lin = t.sampler(&SamplerSpec { mip: LINEAR, ..Default::default() });
    let out = t.run(op::SAMPLE, implicit, img, lin, &quad_lanes(&[(2f32.powf(1.25), 0.0), (0.0, 2f32.powf(1.5))], &[]));
    assert_close(fv(out[0]), mix(c[1], c[2], 0.25), "λ 1.25");
    assert_close(fv(out[7]), mix(c[1], c[2], 0.5), "λ 1.5");
}

#[test]
fn bias_explicit_lod_gradients_and_lod_clamps() {
    let mut t = dev();
    let img = mip_chain(&t);
    let c = LEVEL_COLOURS;
    let near = t.sampler(&SamplerSpec::default());
    // λ 1 from the quad plus a shader bias of 1: level 2; plus 20: clamped to 15, then to
    // the last level.
    let bias = imm(tex::DIM_2D, false, false, tex::LOD_BIAS, [0; 3], 0);
    let mut lanes = quad_lanes(&[(2.0, 2.0)], &[f(1.0)]);
    lanes.extend(quad_lanes(&[(2.0, 2.0)], &[f(20.0)]));
    lanes.extend(quad_lanes(&[(2.0, 2.0)], &[f(-3.0)]));
    let out = t.run(op::SAMPLE, bias, img, near, &lanes);
    assert_eq!((fv(out[0]), fv(out[4]), fv(out[8])), (c[2], c[3], c[0]));
    // The sampler's bias adds to the shader's.
    let biased = t.sampler(&SamplerSpec { bias: 0.5, ..Default::default() });
    let out = t.run(op::SAMPLE, bias, img, biased, &quad_lanes(&[(2.0, 2.0)], &[f(0.5)]));
    assert_eq!(fv(out[0]), c[2]);
    // Explicit LOD, per lane (no quads needed), with the sampler's bias too.
    let explicit = imm(tex::DIM_2D, false, false, tex::LOD_EXPLICIT, [0; 3], 0);
    let lanes: Vec<Vec<u32>> = [0.0, 1.0, 2.4, 2.6, 9.0].iter().map(|&l| vec![f(0.5), f(0.5), f(l)]).collect();
    let out = t.run(op::SAMPLE, explicit, img, near, &lanes);
    assert_eq!(out.iter().map(|&o| fv(o)).collect::<Vec<_>>(), vec![c[0], c[1], c[2], c[3], c[3]]);
    // λ = 1.25 + 0.5 = 1.75 reads level 2 under either rounding the spec allows; the tie
    // at 1 + 0.5 takes the preferred ⌈d + 0.5⌉ - 1, level 1.
    let out = t.run(op::SAMPLE, explicit, img, biased, &[vec![f(0.5), f(0.5), f(1.25)], vec![f(0.5), f(0.5), f(1.0)]]);
    assert_eq!(fv(out[0]), c[2], "1.25 + 0.5 rounds to level 2");
    assert_eq!(fv(out[1]), c[1], "1 + 0.5 rounds half down to level 1");
    // Gradients: dx = 2 texels in s, dy = 4 texels in t: ρ = 4, level 2.
    let grad = imm(tex::DIM_2D, false, false, tex::LOD_GRAD, [0; 3], 0);
    let g = |dx: [f32; 2], dy: [f32; 2]| {
        vec![f(0.5), f(0.5), f(dx[0] / 8.0), f(dx[1] / 8.0), f(dy[0] / 8.0), f(dy[1] / 8.0)]
    };
    let out = t.run(
        op::SAMPLE,
        grad,
        img,
        near,
        &[g([2.0, 0.0], [0.0, 4.0]), g([3.0, 4.0], [0.0, 0.0]), g([0.0; 2], [0.0; 2])],
    );
    // |(3, 4)| = 5: λ = 2.32, level 2; zero gradients: magnified, level 0.
    assert_eq!((fv(out[0]), fv(out[1]), fv(out[2])), (c[2], c[2], c[0]));
    // minLod and maxLod clamp λ.
    let clamp = t.sampler(&SamplerSpec { min_lod: 2.0, max_lod: 2.0, ..Default::default() });
    let out = t.run(op::SAMPLE, explicit, img, clamp, &[vec![f(0.5), f(0.5), f(0.0)], vec![f(0.5), f(0.5), f(3.0)]]);
    assert_eq!((fv(out[0]), fv(out[1])), (c[2], c[2]));
}

#[test]
fn magnification_and_minification_filters_follow_lambda() {
    let mut t = dev();
    // 4x4 level 0 with a texel pattern, level 1 (2x2) likewise.
    let img = t.image(&spec(fmt::R32_SFLOAT, harness::TYPE_2D, [4, 4, 1], 1, 2), |level, _, x, y, _| {
        [f((10 * level + x + 4 * y) as f32), 0, 0, 0]
    });
    let smp = t.sampler(&SamplerSpec { mag: NEAREST, min: LINEAR, ..Default::default() });
    let explicit = imm(tex::DIM_2D, false, false, tex::LOD_EXPLICIT, [0; 3], 0);
    // At (0.5, 0.5): magnified (λ 0) nearest is texel (2, 2) = 2 + 4 * 2 = 10; minified at
    // λ 1 linear on level 1 (u = v = 1: α = β = 1/2) is the average of its four texels
    // 10, 11, 14, 15 = 12.5 (nearest there would be texel (1, 1) = 15).
    let out = t.run(op::SAMPLE, explicit, img, smp, &[vec![f(0.5), f(0.5), f(0.0)], vec![f(0.5), f(0.5), f(1.0)]]);
    assert_eq!(fv(out[0])[0], 10.0);
    assert_eq!(fv(out[1])[0], 12.5);
}

#[test]
fn address_modes_outside_zero_one() {
    let mut t = dev();
    // 4x4, texel (x, y) holds x + 10 y.
    let img = t.image(&spec(fmt::R32_SFLOAT, harness::TYPE_2D, [4, 4, 1], 1, 1), |_, _, x, y, _| {
        [f((x + 10 * y) as f32), 0, 0, 0]
    });
    // s = (i + 0.5) / 4 for i = -5, -4, -1, 4, 5, 8; t = 0.375 (row 1).
    let is = [-5, -4, -1, 4, 5, 8];
    let lanes: Vec<Vec<u32>> = is.iter().map(|&i| vec![f((i as f32 + 0.5) / 4.0), f(0.375), f(0.0)]).collect();
    let table: [(u32, [i32; 6]); 5] = [
        (REPEAT, [3, 0, 3, 0, 1, 0]),
        (MIRRORED_REPEAT, [3, 3, 0, 3, 2, 0]),
        (CLAMP_TO_EDGE, [0, 0, 0, 3, 3, 3]),
        (MIRROR_CLAMP_TO_EDGE, [3, 3, 0, 3, 3, 3]),
        (CLAMP_TO_BORDER, [-1; 6]),
    ];
    for (mode, want) in table {
        let smp =
            t.sampler(&SamplerSpec { address: [mode, CLAMP_TO_EDGE, CLAMP_TO_EDGE], border: 4, ..Default::default() });
        let out = t.run(op::SAMPLE, imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0), img, smp, &lanes);
        for (k, &w) in want.iter().enumerate() {
            // Border: opaque white's R, then (R, 0, 0, 1).
            let v = if w < 0 { 1.0 } else { (w + 10) as f32 };
            assert_eq!(fv(out[k])[0], v, "mode {mode}, i = {}", is[k]);
        }
    }
    // Mirrored repeat in v too, with a constant offset of -1 texel in x.
    let smp = t.sampler(&SamplerSpec { address: [REPEAT, MIRRORED_REPEAT, REPEAT], ..Default::default() });
    let out = t.run(
        op::SAMPLE,
        imm(tex::DIM_2D, false, false, LOD0, [-1, 0, 0], 0),
        img,
        smp,
        &[vec![f(0.125), f(1.125), f(0.0)]],
    );
    // u = 0.5 - 1 -> i = -1 -> 3; v = 4.5 -> j = 4 -> mirrored 3.
    assert_eq!(fv(out[0])[0], 33.0);
}

#[test]
fn border_colours_by_format() {
    let mut t = dev();
    let outside = vec![f(-2.0), f(0.5), f(0.0)];
    let im = imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0);
    let one = 1.0;
    let cases: [(u32, u32, [u32; 4]); 9] = [
        (fmt::R32G32B32A32_SFLOAT, 0, [0; 4]),
        (fmt::R32G32B32A32_SFLOAT, 2, [0, 0, 0, f(one)]),
        (fmt::R32G32B32A32_SFLOAT, 4, [f(one); 4]),
        (fmt::R32G32B32A32_UINT, 1, [0; 4]),
        (fmt::R32G32B32A32_UINT, 3, [0, 0, 0, 1]),
        (fmt::R32G32B32A32_UINT, 5, [1; 4]),
        // A one-component format keeps only R of the colour: (R, 0, 0, 1).
        (fmt::R32_SFLOAT, 4, [f(one), 0, 0, f(one)]),
        (fmt::R8G8_UINT, 5, [1, 1, 0, 1]),
        // Custom colours as given.
        (fmt::R32G32B32A32_SFLOAT, 1_000_287_003, [f(0.25), f(0.5), f(0.75), f(2.0)]),
    ];
    for (format, border, want) in cases {
        let img = t.image(&spec(format, harness::TYPE_2D, [2, 2, 1], 1, 1), |_, _, _, _, _| [7, 7, 7, 7]);
        let custom = [f(0.25), f(0.5), f(0.75), f(2.0)];
        let smp = t.sampler(&SamplerSpec { address: [CLAMP_TO_BORDER; 3], border, custom, ..Default::default() });
        let out = t.run(op::SAMPLE, im, img, smp, std::slice::from_ref(&outside));
        assert_eq!(out[0], want, "format {format} border {border}");
    }
}

#[test]
fn depth_compare_ops_and_filtered_results() {
    let mut t = dev();
    // D32_SFLOAT and D16_UNORM 2x2: 0.25, 0.5 / 0.75, 1.0.
    let depths = [0.25f32, 0.5, 0.75, 1.0];
    let dref = imm(tex::DIM_2D, false, true, LOD0, [0; 3], 0);
    for format in [fmt::D32_SFLOAT, fmt::D16_UNORM] {
        let img = t.image(&spec(format, harness::TYPE_2D, [2, 2, 1], 1, 1), |_, _, x, y, _| {
            [f(depths[(x + 2 * y) as usize]), 0, 0, 0]
        });
        // Texel (1, 0) against references below, at and above it. D_tex is the value the
        // format holds: D16 stores 0.5 as round(0.5 * 65535) / 65535 = 32768 / 65535, and a
        // reference of 0.5 is below that.
        let at = if format == fmt::D16_UNORM { (0.5f32 * 65535.0).round() / 65535.0 } else { 0.5 };
        let lanes: Vec<Vec<u32>> = [0.25f32, at, 0.75].iter().map(|&r| vec![f(0.75), f(0.25), f(r), f(0.0)]).collect();
        let table = [
            (0, [0.0, 0.0, 0.0]),
            (1, [1.0, 0.0, 0.0]),
            (2, [0.0, 1.0, 0.0]),
            (3, [1.0, 1.0, 0.0]),
            (4, [0.0, 0.0, 1.0]),
            (5, [1.0, 0.0, 1.0]),
            (6, [0.0, 1.0, 1.0]),
            (7, [1.0, 1.0, 1.0]),
        ];
        for (cmp, want) in table {
            let smp = t.sampler(&SamplerSpec { compare: Some(cmp), ..Default::default() });
            let out = t.run(op::SAMPLE, dref, img, smp, &lanes);
            for k in 0..3 {
                assert_eq!(fv(out[k]), [want[k], 0.0, 0.0, 1.0], "format {format} op {cmp} ref {k}");
            }
        }
        // Linear: each texel compared, then filtered: LESS with 0.6 passes 0.75 and 1.0.
        let smp = t.sampler(&SamplerSpec { compare: Some(1), mag: LINEAR, min: LINEAR, ..Default::default() });
        let out = t.run(op::SAMPLE, dref, img, smp, &[vec![f(0.5), f(0.5), f(0.6), f(0.0)]]);
        assert_close(fv(out[0]), [0.5, 0.0, 0.0, 1.0], "filtered comparison");
        // A reference above 1 is clamped to 1 for unorm depth only: LEQUAL against 1.0.
        let smp = t.sampler(&SamplerSpec { compare: Some(3), ..Default::default() });
        let out = t.run(op::SAMPLE, dref, img, smp, &[vec![f(0.75), f(0.75), f(1.5), f(0.0)]]);
        assert_eq!(fv(out[0])[0], if format == fmt::D16_UNORM { 1.0 } else { 0.0 }, "format {format}");
        // Depth sampled without a comparison reads as (D, 0, 0, 1).
        let out = t.run(
            op::SAMPLE,
            imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0),
            img,
            smp,
            &[vec![f(0.75), f(0.75), f(0.0)]],
        );
        assert_eq!(fv(out[0]), [1.0, 0.0, 0.0, 1.0]);
    }
}

/// A cube of 2x2 R32_SFLOAT faces: face f texel (x, y) holds 10 f + x + 2 y.
fn cube(t: &Tex, cubes: u32) -> u64 {
    let view = if cubes > 1 { harness::TYPE_CUBE_ARRAY } else { harness::TYPE_CUBE };
    t.image(&spec(fmt::R32_SFLOAT, view, [2, 2, 1], 6 * cubes, 1), |_, layer, x, y, _| {
        [f((10 * layer + x + 2 * y) as f32), 0, 0, 0]
    })
}

#[test]
fn cube_faces_for_the_axis_directions_and_face_orientation() {
    let mut t = dev();
    let img = cube(&t, 1);
    let smp = t.sampler(&SamplerSpec::default());
    let im = imm(tex::DIM_CUBE, false, false, LOD0, [0; 3], 0);
    let axes: [[f32; 3]; 6] =
        [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]];
    // Each axis hits its face's centre: u = v = 1, texel (1, 1).
    let lanes: Vec<Vec<u32>> = axes.iter().map(|d| vec![f(d[0]), f(d[1]), f(d[2]), f(0.0)]).collect();
    let out = t.run(op::SAMPLE, im, img, smp, &lanes);
    for (face, o) in out.iter().enumerate() {
        assert_eq!(fv(*o)[0], (10 * face + 3) as f32, "axis of face {face}");
    }
    // Directions to (s_face, t_face) = (0.75, 0.25) on each face, from the spec's table:
    // texel (1, 0).
    let tilted: [[f32; 3]; 6] =
        [[1.0, 0.5, -0.5], [-1.0, 0.5, 0.5], [0.5, 1.0, -0.5], [0.5, -1.0, 0.5], [0.5, 0.5, 1.0], [-0.5, 0.5, -1.0]];
    let lanes: Vec<Vec<u32>> = tilted.iter().map(|d| vec![f(d[0]), f(d[1]), f(d[2]), f(0.0)]).collect();
    let out = t.run(op::SAMPLE, im, img, smp, &lanes);
    for (face, o) in out.iter().enumerate() {
        assert_eq!(fv(*o)[0], (10 * face + 1) as f32, "tilted direction of face {face}");
    }
    // Ties: |x| = |y| = |z| picks z, |x| = |y| picks y.
    let out = t.run(op::SAMPLE, im, img, smp, &[vec![f(1.0), f(1.0), f(-1.0), 0], vec![f(-1.0), f(-1.0), f(0.5), 0]]);
    assert_eq!((fv(out[0])[0] as u32 / 10, fv(out[1])[0] as u32 / 10), (5, 3));
    // A cube array: layer 1 is the second cube (faces 6..12).
    let arr = cube(&t, 2);
    let out = t.run(
        op::SAMPLE,
        imm(tex::DIM_CUBE, true, false, LOD0, [0; 3], 0),
        arr,
        smp,
        &[vec![f(0.0), f(0.0), f(-1.0), f(1.0), f(0.0)]],
    );
    assert_eq!(fv(out[0])[0], (10 * 11 + 3) as f32);
}

#[test]
fn cube_linear_filtering_crosses_edges_and_averages_corners() {
    let mut t = dev();
    let img = cube(&t, 1);
    let lin = t.sampler(&SamplerSpec { mag: LINEAR, min: LINEAR, ..Default::default() });
    let im = imm(tex::DIM_CUBE, false, false, LOD0, [0; 3], 0);
    // +X at s_face = 0.875, t_face = 0.5: u = 1.75, v = 1: texels (1, 0) = 1 and (1, 1) = 3
    // at 3/8 each, and across the right edge -Z's column 0, rows 0 and 1 (50, 52) at 1/8.
    // At s = t = 0.875: (1, 1) = 3 at 9/16, -Z (0, 1) = 52 and across the bottom edge -Y's
    // (1, 1) = 33 at 3/16 each, and the corner, the average of those three, at 1/16.
    let out =
        t.run(op::SAMPLE, im, img, lin, &[vec![f(1.0), f(0.0), f(-0.75), 0], vec![f(1.0), f(-0.75), f(-0.75), 0]]);
    assert_close(fv(out[0]), [0.375 * 4.0 + 0.125 * 102.0, 0.0, 0.0, 1.0], "edge");
    let corner = (3.0 + 52.0 + 33.0) / 3.0;
    assert_close(fv(out[1]), [0.5625 * 3.0 + 0.1875 * (52.0 + 33.0) + 0.0625 * corner, 0.0, 0.0, 1.0], "corner");
}

#[test]
fn gathers_components_offsets_and_comparisons() {
    let mut t = dev();
    // 2x2 RGBA32F: texel (x, y) = (x + 2y) + 10 c in component c.
    let img = t.image(&spec(fmt::R32G32B32A32_SFLOAT, harness::TYPE_2D, [2, 2, 1], 1, 1), |_, _, x, y, _| {
        [0, 1, 2, 3].map(|c| f((x + 2 * y + 10 * c) as f32))
    });
    let smp = t.sampler(&SamplerSpec { address: [REPEAT; 3], ..Default::default() });
    let centre = vec![f(0.5), f(0.5)];
    for comp in 0..4u32 {
        let out =
            t.run(op::GATHER, imm(tex::DIM_2D, false, false, 0, [0; 3], comp), img, smp, std::slice::from_ref(&centre));
        // (i0, j1), (i1, j1), (i1, j0), (i0, j0) = texels 2, 3, 1, 0.
        let c = 10.0 * comp as f32;
        assert_eq!(fv(out[0]), [2.0 + c, 3.0 + c, 1.0 + c, c], "component {comp}");
    }
    // An offset of +1 in x wraps: i0 = 1, i1 = 0.
    let out =
        t.run(op::GATHER, imm(tex::DIM_2D, false, false, 0, [1, 0, 0], 0), img, smp, std::slice::from_ref(&centre));
    assert_eq!(fv(out[0]), [3.0, 2.0, 0.0, 1.0]);
    // Gathers read the base level whatever the sampler's LOD range.
    let depth = t.image(&spec(fmt::D32_SFLOAT, harness::TYPE_2D, [2, 2, 1], 1, 2), |level, _, x, y, _| {
        [f(if level == 0 { 0.25 * (1 + x + 2 * y) as f32 } else { 9.0 }), 0, 0, 0]
    });
    let cmp = t.sampler(&SamplerSpec { compare: Some(6), min_lod: 1.0, ..Default::default() });
    // GREATER_OR_EQUAL with 0.5: texels 0.25, 0.5 (top), 0.75, 1.0 (bottom).
    let out =
        t.run(op::GATHER, imm(tex::DIM_2D, false, true, 0, [0; 3], 3), depth, cmp, &[vec![f(0.5), f(0.5), f(0.5)]]);
    assert_eq!(fv(out[0]), [0.0, 0.0, 1.0, 1.0]);
}

#[test]
fn fetches_and_size_level_queries() {
    let mut t = dev();
    // A 2D array, 4x4, 3 layers, 3 levels; texel = 100 level + 10 layer + x + 4 y (u32).
    let s = spec(fmt::R32_UINT, harness::TYPE_2D_ARRAY, [4, 4, 1], 3, 3);
    let texel = |level: u32, layer: u32, x: u32, y: u32, _z: u32| [100 * level + 10 * layer + x + 4 * y, 0, 0, 0];
    let img = t.image(&s, texel);
    let fetch = imm(tex::DIM_2D, true, false, tex::LOD_EXPLICIT, [0; 3], 0);
    let lanes = vec![
        vec![1, 1, 2, 1],
        vec![0, 0, 0, 2],
        vec![3, 3, 1, 0],
        // Outside the level, the layers, the levels: zero.
        vec![2, 0, 0, 1],
        vec![0, 0, 3, 0],
        vec![0, 0, 0, 3],
        vec![u32::MAX, 0, 0, 0],
    ];
    let out = t.run(op::FETCH, fetch, img, 0, &lanes);
    let got: Vec<u32> = out.iter().map(|o| o[0]).collect();
    assert_eq!(got, vec![100 + 20 + 1 + 4, 200, 10 + 15, 0, 0, 0, 0]);
    assert_eq!(out[0], [125, 0, 0, 1], "(R, 0, 0, 1) of an integer format");
    // A view of layers 1..3: its layer 0 is the image's layer 1, on every level.
    let view = t.alloc(&t.image_view(&s, 1, 2, texel));
    let out = t.run(op::FETCH, fetch, view, 0, &[vec![1, 0, 0, 1], vec![0, 0, 1, 2]]);
    assert_eq!((out[0][0], out[1][0]), (100 + 10 + 1, 200 + 20));
    // A constant offset moves the fetch.
    let out =
        t.run(op::FETCH, imm(tex::DIM_2D, true, false, tex::LOD_EXPLICIT, [1, 2, 0], 0), img, 0, &[vec![0, 0, 0, 0]]);
    assert_eq!(out[0][0], 1 + 8);
    // Sizes per level, with layers; levels.
    let size = imm(tex::DIM_2D, true, false, tex::LOD_EXPLICIT, [0; 3], 0);
    let out = t.run(op::QUERY_SIZE, size, view, 0, &[vec![0], vec![1], vec![2], vec![3]]);
    assert_eq!(out, vec![[4, 4, 2, 0], [2, 2, 2, 0], [1, 1, 2, 0], [0; 4]]);
    let out = t.run(op::QUERY_LEVELS, 0, img, 0, &[vec![]]);
    assert_eq!(out[0][0], 3);
    // A 3D image halves its depth per level; a cube array counts cubes.
    let vol = t.image(&spec(fmt::R8_UNORM, harness::TYPE_3D, [8, 4, 2], 1, 3), |_, _, _, _, _| [0; 4]);
    let out = t.run(
        op::QUERY_SIZE,
        imm(tex::DIM_3D, false, false, tex::LOD_EXPLICIT, [0; 3], 0),
        vol,
        0,
        &[vec![1], vec![2]],
    );
    assert_eq!(out, vec![[4, 2, 1, 0], [2, 1, 1, 0]]);
    let arr = cube(&t, 2);
    let out = t.run(op::QUERY_SIZE, imm(tex::DIM_CUBE, true, false, 0, [0; 3], 0), arr, 0, &[vec![]]);
    assert_eq!(out[0], [2, 2, 2, 0]);
    // A 3D fetch from level 1.
    let vol = t.image(&spec(fmt::R32_UINT, harness::TYPE_3D, [4, 4, 4], 1, 2), |l, _, x, y, z| {
        [100 * l + x + 4 * y + 16 * z, 0, 0, 0]
    });
    let out =
        t.run(op::FETCH, imm(tex::DIM_3D, false, false, tex::LOD_EXPLICIT, [0; 3], 0), vol, 0, &[vec![1, 1, 1, 1]]);
    assert_eq!(out[0][0], 100 + 1 + 4 + 16);
}

#[test]
fn lod_queries_report_the_level_and_lambda() {
    let mut t = dev();
    let img = mip_chain(&t);
    let q = imm(tex::DIM_2D, false, false, 0, [0; 3], 0);
    let near = t.sampler(&SamplerSpec::default());
    let lin = t.sampler(&SamplerSpec { mip: LINEAR, ..Default::default() });
    let clamp = t.sampler(&SamplerSpec { mip: LINEAR, max_lod: 1.0, ..Default::default() });
    let lanes = quad_lanes(&[(2.0, 1.0), (2f32.powf(1.25), 1.0), (64.0, 1.0)], &[]);
    let xy = |o: [u32; 4]| (f32::from_bits(o[0]), f32::from_bits(o[1]));
    let near_out = t.run(op::QUERY_LOD, q, img, near, &lanes);
    let lin_out = t.run(op::QUERY_LOD, q, img, lin, &lanes);
    let clamp_out = t.run(op::QUERY_LOD, q, img, clamp, &lanes);
    assert_eq!(xy(near_out[0]), (1.0, 1.0));
    let (d, l) = xy(near_out[4]);
    assert!((d, (l - 1.25).abs() < 1e-5) == (1.0, true), "nearest mipmapping reports the rounded level: {d} {l}");
    let (d, l) = xy(lin_out[4]);
    assert!((d - 1.25).abs() < 1e-5 && (l - 1.25).abs() < 1e-5, "linear: {d} {l}");
    // λ' = 6 is past the last level (3) and, with maxLod 1, clamped to level 1.
    assert_eq!(xy(lin_out[8]), (3.0, 6.0));
    assert_eq!(xy(clamp_out[8]), (1.0, 6.0));
}

#[test]
fn unnormalized_coordinates_address_texels_directly() {
    let mut t = dev();
    let img = t.image(&spec(fmt::R32_SFLOAT, harness::TYPE_2D, [4, 4, 1], 1, 1), |_, _, x, y, _| {
        [f((x + 10 * y) as f32), 0, 0, 0]
    });
    let near = t.sampler(&SamplerSpec { unnormalized: true, max_lod: 0.0, ..Default::default() });
    let lin =
        t.sampler(&SamplerSpec { unnormalized: true, mag: LINEAR, min: LINEAR, max_lod: 0.0, ..Default::default() });
    let im = imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0);
    let out = t.run(op::SAMPLE, im, img, near, &[vec![f(2.5), f(1.5), f(0.0)], vec![f(7.0), f(-3.0), f(0.0)]]);
    assert_eq!((fv(out[0])[0], fv(out[1])[0]), (12.0, 3.0));
    let out = t.run(op::SAMPLE, im, img, lin, &[vec![f(2.0), f(1.0), f(0.0)]]);
    assert_close(fv(out[0]), [(1.0 + 2.0 + 11.0 + 12.0) / 4.0, 0.0, 0.0, 1.0], "unnormalized bilinear");
}

#[test]
fn bad_operands_fault() {
    let mut t = dev();
    let img = two_by_two(&t);
    let im = imm(tex::DIM_2D, false, false, LOD0, [0; 3], 0);
    let e = t.try_run(op::SAMPLE, im, img, 0, &[vec![0, 0, 0]]).expect_err("a sample without a sampler");
    assert_eq!(e.kind, FaultKind::IllegalInstruction);
    assert!(e.detail.contains("sampler"), "{}", e.detail);
    let mut bad = [0u8; 64];
    bad[8..12].copy_from_slice(&5u32.to_le_bytes());
    let bad = t.alloc(&bad);
    let e = t
        .try_run(op::FETCH, imm(tex::DIM_2D, false, false, 0, [0; 3], 0), bad, 0, &[vec![0, 0]])
        .expect_err("an unknown format");
    assert_eq!(e.kind, FaultKind::IllegalInstruction);
    let e = t
        .try_run(op::FETCH, imm(tex::DIM_2D, false, false, 0, [0; 3], 0), 0x10, 0, &[vec![0, 0]])
        .expect_err("an unmapped descriptor");
    assert!(matches!(e.kind, FaultKind::Memory(_)), "{e:?}");
}

/// A CPU reference for 1D, 2D and 3D samples (with arrays) of RGBA32F images, written from
/// the spec's formulas in f64 without the unit's code: scale factor and LOD, level
/// selection, the wrapping table, border texels, nearest and linear filtering, mipmap
/// blending.
mod reference {
    pub struct Image {
        pub dims: usize,
        pub extent: [u32; 3],
        pub layers: u32,
        pub levels: u32,
        /// Level -> layer -> texels in (z, y, x) order.
        pub texels: Vec<Vec<Vec<[f32; 4]>>>,
    }

    pub struct Sampler {
        pub mag_linear: bool,
        pub min_linear: bool,
        pub mip_linear: bool,
        pub address: [u32; 3],
        pub bias: f64,
        pub min_lod: f64,
        pub max_lod: f64,
        pub border: [f64; 4],
    }

    pub enum Lod {
        Explicit(f64),
        Grad([f64; 3], [f64; 3]),
    }

    fn extent(img: &Image, level: u32) -> [i64; 3] {
        [0, 1, 2].map(|a| if a < img.dims { (img.extent[a] >> level).max(1) as i64 } else { 1 })
    }

    /// The texel index after the address mode, or `None` for the border.
    fn wrap(mode: u32, i: i64, n: i64) -> Option<i64> {
        match mode {
            0 => Some(((i % n) + n) % n),
            1 => {
                // Period 2n: forwards, then backwards.
                let t = ((i % (2 * n)) + 2 * n) % (2 * n);
                Some(if t < n { t } else { 2 * n - 1 - t })
            }
            2 => Some(i.max(0).min(n - 1)),
            3 => (i >= 0 && i < n).then_some(i),
            _ => Some((if i < 0 { -1 - i } else { i }).max(0).min(n - 1)),
        }
    }

    fn texel(img: &Image, s: &Sampler, level: u32, layer: usize, ijk: [i64; 3]) -> [f64; 4] {
        let e = extent(img, level);
        let mut at = [0i64; 3];
        for a in 0..img.dims {
            match wrap(s.address[a], ijk[a], e[a]) {
                Some(v) => at[a] = v,
                None => return s.border,
            }
        }
        let idx = (at[2] * e[1] + at[1]) * e[0] + at[0];
        img.texels[level as usize][layer][idx as usize].map(|v| v as f64)
    }

    fn filter(img: &Image, s: &Sampler, level: u32, layer: usize, st: [f64; 3], linear: bool) -> [f64; 4] {
        let e = extent(img, level);
        let u: Vec<f64> = (0..img.dims).map(|a| st[a] * e[a] as f64).collect();
        if !linear {
            let mut ijk = [0i64; 3];
            for a in 0..img.dims {
                ijk[a] = u[a].floor() as i64;
            }
            return texel(img, s, level, layer, ijk);
        }
        let mut out = [0.0; 4];
        for corner in 0..(1 << img.dims) {
            let mut w = 1.0;
            let mut ijk = [0i64; 3];
            for a in 0..img.dims {
                let x = u[a] - 0.5;
                let frac = x - x.floor();
                let hi = corner >> a & 1 == 1;
                ijk[a] = x.floor() as i64 + hi as i64;
                w *= if hi { frac } else { 1.0 - frac };
            }
            let t = texel(img, s, level, layer, ijk);
            for c in 0..4 {
                out[c] += w * t[c];
            }
        }
        out
    }

    /// The sample, or `None` when the case sits within `eps` of a discontinuity (the
    /// magnification switch at λ = 0, a nearest level's rounding point) where f32 and f64
    /// arithmetic may fairly disagree. A `λ'` well below 0 that `minLod` = 0 pins to exactly
    /// 0 is no such case: both sides magnify.
    pub fn sample(img: &Image, s: &Sampler, st: [f64; 3], layer: f64, lod: &Lod) -> Option<[f64; 4]> {
        let eps = 1e-3;
        let base = match lod {
            Lod::Explicit(l) => *l,
            Lod::Grad(dx, dy) => {
                let len =
                    |d: &[f64; 3]| (0..img.dims).map(|a| (d[a] * img.extent[a] as f64).powi(2)).sum::<f64>().sqrt();
                len(dx).max(len(dy)).log2()
            }
        };
        let prime = base + s.bias.clamp(-15.0, 15.0);
        let lambda = prime.max(s.min_lod).min(s.max_lod);
        if lambda.abs() < eps && prime > -eps {
            return None;
        }
        let linear = if lambda <= 0.0 { s.mag_linear } else { s.min_linear };
        let q = (img.levels - 1) as f64;
        let d = lambda.max(0.0).min(q);
        let layer = layer.round_ties_even().max(0.0).min((img.layers - 1) as f64) as usize;
        if !s.mip_linear {
            let frac = d - d.floor();
            if (frac - 0.5).abs() < eps {
                return None;
            }
            let level = if frac > 0.5 { d.floor() + 1.0 } else { d.floor() };
            return Some(filter(img, s, level as u32, layer, st, linear));
        }
        let hi = d.floor();
        let lo = (hi + 1.0).min(q);
        let delta = d - hi;
        let a = filter(img, s, hi as u32, layer, st, linear);
        let b = filter(img, s, lo as u32, layer, st, linear);
        Some([0, 1, 2, 3].map(|c| (1.0 - delta) * a[c] + delta * b[c]))
    }
}

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 11) % n
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// A coordinate mostly in [0, 1], sometimes outside (to exercise the address modes).
    fn coord(&mut self) -> f32 {
        let v = self.unit();
        if self.below(4) == 0 {
            v * 6.0 - 3.0
        } else {
            v
        }
    }
}

/// One random case: an image, a sampler, and a batch of lanes with explicit LODs or
/// gradients.
fn random_round(t: &mut Tex, rng: &mut Rng, round: usize) -> usize {
    let dims = 1 + rng.below(3) as usize;
    let arrayed = dims < 3 && rng.below(2) == 0;
    let sizes = [1u32, 2, 4, 8, 16];
    let mut extent = [1u32; 3];
    for e in extent.iter_mut().take(dims) {
        *e = sizes[1 + rng.below(4) as usize];
    }
    let max_levels = 32 - extent.iter().max().unwrap().leading_zeros();
    let levels = 1 + rng.below(max_levels as u64) as u32;
    let layers = if arrayed { 1 + rng.below(3) as u32 } else { 1 };
    let view = match (dims, arrayed) {
        (1, false) => harness::TYPE_1D,
        (1, true) => harness::TYPE_1D_ARRAY,
        (2, false) => harness::TYPE_2D,
        (2, true) => harness::TYPE_2D_ARRAY,
        _ => harness::TYPE_3D,
    };
    let mut texels = Vec::new();
    for level in 0..levels {
        let e = extent.map(|x| (x >> level).max(1));
        let n = (e[0] * e[1] * e[2]) as usize;
        texels.push(
            (0..layers)
                .map(|_| (0..n).map(|_| [0; 4].map(|_: i32| rng.unit())).collect::<Vec<_>>())
                .collect::<Vec<_>>(),
        );
    }
    let img_spec = spec(fmt::R32G32B32A32_SFLOAT, view, extent, layers, levels);
    let img = t.image(&img_spec, |level, layer, x, y, z| {
        let e = extent.map(|v| (v >> level).max(1));
        texels[level as usize][layer as usize][((z * e[1] + y) * e[0] + x) as usize].map(f)
    });
    let b = rng.below(3) as usize;
    let s = reference::Sampler {
        mag_linear: rng.below(2) == 1,
        min_linear: rng.below(2) == 1,
        mip_linear: rng.below(2) == 1,
        address: [0; 3].map(|_: u32| rng.below(5) as u32),
        bias: [0.0, 0.5, -1.25][rng.below(3) as usize],
        min_lod: [0.0, 0.0, 1.0][rng.below(3) as usize],
        max_lod: [1000.0, 1000.0, 2.0][rng.below(3) as usize],
        // Float transparent black, opaque black, opaque white.
        border: [[0.0; 4], [0.0, 0.0, 0.0, 1.0], [1.0; 4]][b],
    };
    let border = [0, 2, 4][b];
    let smp = t.sampler(&SamplerSpec {
        mag: s.mag_linear as u32,
        min: s.min_linear as u32,
        mip: s.mip_linear as u32,
        address: s.address,
        bias: s.bias as f32,
        compare: None,
        min_lod: s.min_lod as f32,
        max_lod: s.max_lod as f32,
        border,
        custom: [0; 4],
        unnormalized: false,
    });
    let reference_img = reference::Image { dims, extent, layers, levels, texels };
    let grads = rng.below(2) == 0;
    let lod_mode = if grads { tex::LOD_GRAD } else { tex::LOD_EXPLICIT };
    let dim = [tex::DIM_1D, tex::DIM_2D, tex::DIM_3D][dims - 1];
    let mut lanes = Vec::new();
    let mut want = Vec::new();
    // Cases on a discontinuity are redrawn; a round that keeps drawing them is a generator
    // that can never fill its warp, and fails rather than spins.
    let mut draws = 0;
    while lanes.len() < 32 {
        draws += 1;
        assert!(draws <= 1000, "round {round}: only {} of 1000 cases off a discontinuity", lanes.len());
        let st: Vec<f32> = (0..dims).map(|_| rng.coord()).collect();
        let layer = rng.unit() * layers as f32 * 1.2 - 0.1;
        let mut words: Vec<u32> = st.iter().map(|&v| f(v)).collect();
        if arrayed {
            words.push(f(layer));
        }
        let lod = if grads {
            let g: Vec<f32> = (0..2 * dims).map(|_| (rng.unit() - 0.5) * 2f32.powi(rng.below(6) as i32 - 4)).collect();
            words.extend(g.iter().map(|&v| f(v)));
            let mut dx = [0.0; 3];
            let mut dy = [0.0; 3];
            for a in 0..dims {
                dx[a] = g[a] as f64;
                dy[a] = g[dims + a] as f64;
            }
            reference::Lod::Grad(dx, dy)
        } else {
            let l = rng.unit() * 6.0 - 1.0;
            words.push(f(l));
            reference::Lod::Explicit(l as f64)
        };
        let mut st3 = [0.0f64; 3];
        for a in 0..dims {
            st3[a] = st[a] as f64;
        }
        if let Some(v) = reference::sample(&reference_img, &s, st3, layer as f64, &lod) {
            lanes.push(words);
            want.push(v);
        }
    }
    let im = imm(dim, arrayed, false, lod_mode, [0; 3], 0);
    let out = t.run(op::SAMPLE, im, img, smp, &lanes);
    for (k, (o, w)) in out.iter().zip(&want).enumerate() {
        let w = w.map(|v| v as f32);
        assert!(close(fv(*o), w, 1e-4), "round {round} lane {k} (dims {dims}, arrayed {arrayed}, levels {levels}, grads {grads}): got {:?}, want {w:?}", fv(*o));
    }
    lanes.len()
}

#[test]
fn random_samples_match_the_cpu_reference() {
    let mut t = dev();
    let mut rng = Rng(0x7e57_7e57_0bad_cafe);
    let mut n = 0;
    for round in 0..150 {
        n += random_round(&mut t, &mut rng, round);
    }
    assert_eq!(n, 150 * 32);
}

/// The same sampling work in functional mode and in timed mode gives the same bits, and the
/// timed texture unit counts its requests, texels and cache traffic.
#[test]
fn functional_and_timed_results_are_identical() {
    let mut outs = Vec::new();
    for mode in [Mode::Functional, Mode::Timed] {
        let mut t = Tex::new(DeviceConfig { mode, ..DeviceConfig::default() });
        let img = mip_chain(&t);
        let lin = t.sampler(&SamplerSpec {
            mag: LINEAR,
            min: LINEAR,
            mip: LINEAR,
            address: [REPEAT; 3],
            ..Default::default()
        });
        let steps: Vec<(f32, f32)> = (0..64).map(|k| (0.5 + k as f32 * 0.11, 1.0 + k as f32 * 0.05)).collect();
        let lanes = quad_lanes(&steps, &[]);
        let (out, rep) = t.try_run(op::SAMPLE, imm(tex::DIM_2D, false, false, 0, [0; 3], 0), img, lin, &lanes).unwrap();
        if mode == Mode::Timed {
            let tex = rep.timed.as_ref().expect("timed report").tex_totals();
            assert_eq!(tex.requests, 8, "one request per warp TEX");
            assert!(tex.texels >= 256 * 4, "{tex:?}");
            assert!(tex.cache.misses > 0 && tex.cache.hits + tex.cache.misses == tex.cache.accesses, "{tex:?}");
            let json = rep.to_json();
            assert_eq!(json["tex"]["requests"], 8);
        } else {
            assert!(rep.to_json().get("tex").is_none());
        }
        outs.push(out);
    }
    assert_eq!(outs[0], outs[1]);
}
