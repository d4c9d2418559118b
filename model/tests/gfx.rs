//! The graphics units end to end: hand-assembled vertex and fragment kernels, draws through
//! the graphics DCRs and `GFX_START`, results checked against hand-solved expectations and
//! small CPU references written independently of the units.

#[path = "common/gfx.rs"]
mod kit;

use kit::*;
use vortex_model::abi::format;
use vortex_model::abi::gfx::{csr as gcsr, deriv, index_type, state as st};
use vortex_model::abi::isa::{Op, REG_NONE as N};
use vortex_model::config::{DeviceConfig, Mode};

fn gfx() -> Gfx {
    Gfx::new(DeviceConfig::default())
}

/// Per-pixel counters of a `w` x `h` target after `draw` with the counting fragment kernel.
fn counts(g: &mut Gfx, state: &State, vertices: &[Vertex], setup: impl FnOnce(&mut Draw)) -> Vec<u32> {
    let w = u32::from_le_bytes(state.0[st::TARGET_WIDTH..][..4].try_into().unwrap());
    let h = u32::from_le_bytes(state.0[st::TARGET_HEIGHT..][..4].try_into().unwrap());
    let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
    let vs = vertex_kernel();
    let fs: Vec<_> = [fs::prologue(), fs::count(), vec![fs::push_color(), fs::export_color(0, 40), exit()]].concat();
    let mut d = Draw::new(&vs, Some(&fs), state, vertices);
    d.push = push_counters(counters, w);
    setup(&mut d);
    let rep = g.draw(&d).unwrap();
    assert!(rep.draw.is_some());
    g.read_u32s(counters, (w * h) as usize)
}

/// A fan around the viewport's centre whose rim lies on and beyond the viewport's edges
/// covers every pixel exactly once: shared edges (top-left rule) and the scissor.
#[test]
fn fan_covers_every_pixel_once() {
    let (w, h) = (40, 24);
    let mut state = State::new(w, h);
    state.u(st::TOPOLOGY, 5);
    let c = Vertex::screen(17.3, 11.6, 0.5, w, h);
    let rim =
        [(-3.0, -2.0), (20.0, -5.0), (45.0, -1.0), (44.0, 12.0), (41.0, 30.0), (12.5, 26.0), (-4.0, 27.0), (-2.0, 9.0)];
    let mut v = vec![c];
    v.extend(rim.iter().map(|&(x, y)| Vertex::screen(x, y, 0.5, w, h)));
    v.push(v[1]);
    let mut g = gfx();
    let n = counts(&mut g, &state, &v, |_| {});
    assert!(n.iter().all(|&c| c == 1), "{:?}", n.iter().enumerate().filter(|(_, &c)| c != 1).collect::<Vec<_>>());
}

/// Coverage by an independent formulation of the top-left rule: a pixel centre on an edge
/// belongs to the triangle when nudging it by an infinitesimal (e, e^2) moves it inside.
/// Vertices are in 1/256 pixels; the triangle may have either winding.
fn reference_covers(v: [[i64; 2]; 3], px: i64, py: i64) -> bool {
    let p = [px * 256 + 128, py * 256 + 128];
    let area = (v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) - (v[1][1] - v[0][1]) * (v[2][0] - v[0][0]);
    if area == 0 {
        return false;
    }
    (0..3).all(|k| {
        let (a, b) = (v[k], v[(k + 1) % 3]);
        let d = [b[0] - a[0], b[1] - a[1]];
        // E(p + (e, e^2)) = E(p) - d.y e + d.x e^2, the side of the interior by the winding.
        let terms = [d[0] * (p[1] - a[1]) - d[1] * (p[0] - a[0]), -d[1], d[0]];
        let first = terms.into_iter().find(|&t| t != 0).unwrap_or(0);
        first.signum() == area.signum()
    })
}

/// Two triangles sharing a slanted edge that runs through pixel centres, vertices at
/// sub-pixel positions (two of them on pixel centres): the device covers exactly the pixels
/// the reference does, each once.
#[test]
fn shared_edges_follow_the_top_left_rule() {
    let (w, h) = (16, 16);
    let state = State::new(w, h);
    // In 1/256 pixels: A (1.5, 1.5) and C (10.5, 13.5) are pixel centres, and AC passes
    // through the centres (4.5, 5.5) and (7.5, 9.5); B and D sit off the half-pixel grid.
    let q = |x: f64, y: f64| [(x * 256.0) as i64, (y * 256.0) as i64];
    let (a, b, c, d) = (q(1.5, 1.5), q(12.25, 3.125), q(10.5, 13.5), q(2.75, 11.5));
    let tris = [[a, b, c], [a, c, d], [d, c, q(6.0, 15.0)]];
    let v: Vec<Vertex> =
        tris.iter().flatten().map(|p| Vertex::screen(p[0] as f64 / 256.0, p[1] as f64 / 256.0, 0.5, w, h)).collect();
    let mut g = gfx();
    let n = counts(&mut g, &state, &v, |_| {});
    for y in 0..h as i64 {
        for x in 0..w as i64 {
            let want = tris.iter().filter(|t| reference_covers(**t, x, y)).count() as u32;
            assert!(want <= 1, "the reference covers ({x}, {y}) twice");
            assert_eq!(n[(y * w as i64 + x) as usize], want, "pixel ({x}, {y})");
        }
    }
    // The shared edge's centres are covered (by one triangle).
    assert_eq!((n[5 * 16 + 4], n[9 * 16 + 7]), (1, 1));
}

/// A triangle with one vertex behind the eye: clipping keeps exactly the part in front of
/// the near plane (no wrap-around), as a homogeneous-space reference finds it without
/// clipping: a pixel is covered when its perspective-correct barycentrics are all positive,
/// its w positive and its clip z in [0, w].
#[test]
fn near_plane_clipping_keeps_the_visible_part() {
    let (w, h) = (32, 32);
    let verts = [[-0.8f32, -0.7, 0.5, 1.0], [0.9, -0.4, 0.3, 1.0], [0.2, 0.9, -1.6, -0.8]];
    let state = State::new(w, h);
    let v: Vec<Vertex> = verts.iter().map(|p| clip(p[0], p[1], p[2], p[3])).collect();
    let mut g = gfx();
    let n = counts(&mut g, &state, &v, |_| {});
    let m = |r: usize, k: usize| verts[k][r] as f64;
    // M maps barycentrics to (x, y, w); its inverse applied to (xn, yn, 1) gives b / w.
    let det = |a: [[f64; 3]; 3]| {
        a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
    };
    let mm = [[m(0, 0), m(0, 1), m(0, 2)], [m(1, 0), m(1, 1), m(1, 2)], [m(3, 0), m(3, 1), m(3, 2)]];
    let (mut covered, mut checked) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let p = [2.0 * (x as f64 + 0.5) / w as f64 - 1.0, 2.0 * (y as f64 + 0.5) / h as f64 - 1.0, 1.0];
            // Cramer's rule for e = M^-1 p.
            let e: Vec<f64> = (0..3)
                .map(|k| {
                    let mut a = mm;
                    for r in 0..3 {
                        a[r][k] = p[r];
                    }
                    det(a) / det(mm)
                })
                .collect();
            let s: f64 = e.iter().sum();
            let b: Vec<f64> = e.iter().map(|x| x / s).collect();
            let wp = 1.0 / s;
            let z: f64 = (0..3).map(|k| b[k] * m(2, k)).sum();
            let margin = b.iter().copied().fold(f64::INFINITY, |a, x| a.min(x.abs())).min(z.abs()).min((wp - z).abs());
            if margin < 1e-3 {
                continue;
            }
            let want = b.iter().all(|&x| x > 0.0) && wp > 0.0 && z >= 0.0 && z <= wp;
            checked += 1;
            covered += want as u32;
            assert_eq!(n[(y * w + x) as usize], want as u32, "pixel ({x}, {y}): b {b:?} w {wp} z {z}");
        }
    }
    assert!(covered > 50 && checked > 900, "{covered} covered of {checked}");
}

/// Facing by winding on the framebuffer, culling each face, and the facing and primitive
/// CSRs.
#[test]
fn culling_and_front_face() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (8, 4);
    // Left: clockwise on the y-down framebuffer; right: counter-clockwise.
    let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
    let v = [s(0.0, 0.0), s(4.0, 0.0), s(0.0, 4.0), s(4.0, 0.0), s(4.0, 4.0), s(8.0, 0.0)];
    let run = |front_ccw: bool, cull: u32| {
        let mut g = gfx();
        let color = target(&g, w, h, &[0xAA; 16]);
        let mut state = State::new(w, h);
        state.color(0, color, format::R32G32B32A32_UINT, 16 * w).u(st::CULL_MODE, cull);
        if front_ccw {
            state.flags(flags::FRONT_CCW);
        }
        let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
        let vs = vertex_kernel();
        let fs = fs::count_and_export([gcsr::FRAG_FRONT, gcsr::FRAG_PRIMITIVE, gcsr::FRAG_X, gcsr::FRAG_Y]);
        let mut d = Draw::new(&vs, Some(&fs), &state, &v);
        d.push = push_counters(counters, w);
        let rep = g.draw(&d).unwrap();
        let at = |x| texel(&g, color, w, 16, x, 1)[..2].to_vec();
        (at(1), at(5), rep.draw.unwrap().culled)
    };
    let none = [0xAAAA_AAAA, 0xAAAA_AAAA];
    assert_eq!(run(true, 0), (vec![0, 0], vec![1, 1], 0));
    assert_eq!(run(true, 2), (none.to_vec(), vec![1, 1], 1));
    assert_eq!(run(false, 1), (none.to_vec(), vec![0, 1], 1));
    assert_eq!(run(false, 0), (vec![1, 0], vec![0, 1], 0));
    assert_eq!(run(false, 3), (none.to_vec(), none.to_vec(), 2));
}

/// A full-target triangle at depth `z(x)` rising across x: with vertices (0, 0, z0),
/// (2w, 0, z0 + 2 dz w), (0, 2h, z0) its depth at pixel centre x is z0 + dz (x + 0.5).
fn ramp(w: u32, h: u32, z0: f32, dz: f32) -> Vec<Vertex> {
    let s = |x: f64, y: f64, z: f32| Vertex::screen(x, y, z, w, h);
    vec![s(0.0, 0.0, z0), s(2.0 * w as f64, 0.0, z0 + 2.0 * dz * w as f32), s(0.0, 2.0 * h as f64, z0)]
}

fn flat_tri(w: u32, h: u32, z: f32) -> Vec<Vertex> {
    ramp(w, h, z, 0.0)
}

/// Draws `v` with a fragment kernel exporting the primitive ID to an R32_UINT colour and a
/// depth attachment of `fmt`; returns (colours, depth texels).
fn depth_draw(
    st_flags: u32,
    fmt: u32,
    v: &[Vertex],
    compare: u32,
    fill: f32,
    fs_depth: Option<f32>,
) -> (Vec<u32>, Vec<u32>) {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (16, 4);
    let mut g = gfx();
    let f = format::find(fmt).unwrap();
    let bpp = f.texel_bytes();
    let mut init = [0u8; 4];
    format::encode_texel(f, [fill.to_bits(), 0, 0, 0], &mut init);
    let depth = target(&g, w, h, &init[..bpp as usize]);
    let color = target(&g, w, h, &[0xEE; 4]);
    let mut state = State::new(w, h);
    state.color(0, color, format::R32_UINT, 4 * w).depth(depth, fmt, bpp * w, 0, 0).u(st::DEPTH_COMPARE, compare);
    state.flags(st_flags | if fs_depth.is_some() { flags::FS_WRITES_DEPTH } else { 0 });
    let vs = vertex_kernel();
    let mut fs = [fs::prologue(), fs::csrs([gcsr::FRAG_PRIMITIVE, gcsr::FRAG_X, gcsr::FRAG_Y, gcsr::FRAG_Z])].concat();
    if let Some(z) = fs_depth {
        fs.extend([movi(50, z.to_bits()), kit::r(Op::Exp, 8, N, 50, N, N, 0)]);
    }
    fs.extend([fs::export_color(0, 40), exit()]);
    let d = Draw::new(&vs, Some(&fs), &state, v);
    g.draw(&d).unwrap();
    let colors = g.read_u32s(color, (w * h) as usize);
    let depths = (0..w * h).map(|i| texel(&g, depth, w, bpp, i % w, i / w)[0]).collect();
    (colors, depths)
}

/// Depth test and write: the nearer of two triangles wins whatever their order, the depth
/// buffer holds its interpolated depth in each format's encoding; writes can be off; every
/// compare op against a known stored value; early and late (forced by a side-effect flag)
/// agree; an exported depth replaces the interpolated one.
#[test]
fn depth_test_and_write() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (16, 4);
    let test = flags::DEPTH_TEST | flags::DEPTH_WRITE;
    // Far ramp then near flat triangle, and the reverse; LESS.
    let near = flat_tri(w, h, 0.25);
    let far = ramp(w, h, 0.5, 1.0 / 64.0);
    for (order, winner) in [([&far, &near], 1u32), ([&near, &far], 0u32)] {
        let v: Vec<Vertex> = order.iter().flat_map(|t| t.iter().copied()).collect();
        for late in [0, flags::FS_SIDE_EFFECTS] {
            let (c, d) = depth_draw(test | late, format::D32_SFLOAT, &v, 1, 1.0, None);
            assert!(c.iter().all(|&p| p == winner), "{c:?}");
            assert!(d.iter().all(|&z| f32::from_bits(z) == 0.25), "{d:x?}");
        }
    }
    // The ramp alone: its depth at each pixel centre, in each format's encoding.
    for fmt in [format::D32_SFLOAT, format::D16_UNORM, format::X8_D24_UNORM_PACK32, format::D24_UNORM_S8_UINT] {
        let (_, d) = depth_draw(test, fmt, &far, 1, 1.0, None);
        for x in 0..w {
            let z = 0.5 + (x as f64 + 0.5) / 64.0;
            let want = match fmt {
                format::D16_UNORM => (z * 65535.0).round() as u32,
                format::D32_SFLOAT => (z as f32).to_bits(),
                _ => (z * 16_777_215.0).round() as u32,
            };
            assert_eq!(d[x as usize] & 0xFF_FFFF, want & 0xFF_FFFF, "format {fmt} x {x}");
        }
    }
    // Depth writes off: the test still culls, the buffer keeps its value.
    let (c, d) = depth_draw(flags::DEPTH_TEST, format::D32_SFLOAT, &near, 1, 0.5, None);
    assert!(c.iter().all(|&p| p == 0) && d.iter().all(|&z| f32::from_bits(z) == 0.5));
    // Every compare op of 0.25 (fragment) against 0.5 (stored), and of 0.5 against 0.5.
    for op in 0..8u32 {
        let want = |a: f32, b: f32| [false, a < b, a == b, a <= b, a > b, a != b, a >= b, true][op as usize];
        for (z, stored) in [(0.25, 0.5), (0.5, 0.5)] {
            let (c, _) = depth_draw(flags::DEPTH_TEST, format::D32_SFLOAT, &flat_tri(w, h, z), op, stored, None);
            assert_eq!(c[0] == 0, want(z, stored), "op {op}: {z} vs {stored}");
        }
    }
    // An exported depth is tested and written instead of the interpolated one (late).
    let (c, d) = depth_draw(test, format::D32_SFLOAT, &near, 1, 0.5, Some(0.125));
    assert!(c.iter().all(|&p| p == 0) && d.iter().all(|&z| f32::from_bits(z) == 0.125));
    let (c, _) = depth_draw(test, format::D32_SFLOAT, &near, 1, 0.1, Some(0.125));
    assert!(c.iter().all(|&p| p == 0xEEEE_EEEE), "an exported 0.125 fails LESS against 0.1");
}

/// `VkStencilOp` by the spec's table, for the reference.
fn stencil_ref(op: u32, s: u8, r: u8) -> u8 {
    match op {
        0 => s,
        1 => 0,
        2 => r,
        3 => {
            if s == 255 {
                255
            } else {
                s + 1
            }
        }
        4 => {
            if s == 0 {
                0
            } else {
                s - 1
            }
        }
        5 => !s,
        6 => s.wrapping_add(1),
        _ => s.wrapping_sub(1),
    }
}

/// Stencil: every op on pass, on stencil fail and on depth fail, compare and write masks,
/// the back face's state for back faces, on the separate S8 plane of D24S8 (its depth plane
/// untouched by stencil) and on S8_UINT.
#[test]
fn stencil_ops_and_masks() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (8, 4);
    // (stencil flags extra, front face [fail, pass, dfail, compare, cmask, wmask, ref], expected fn)
    let run = |fmt: u32, extra: u32, face: [u32; 7], back: bool, depth_fail: bool| -> (u8, u32) {
        let mut g = gfx();
        let f = format::find(fmt).unwrap();
        let dbytes = f.plane_texel_bytes(format::Aspect::Depth).unwrap_or(0);
        let plane = g.alloc(&vec![0u8; (dbytes * w * h).max(1) as usize]);
        let stencil = target(&g, w, h, &[0x35]);
        let mut state = State::new(w, h);
        state.depth(plane, fmt, dbytes * w, stencil, w).flags(flags::STENCIL_TEST | extra);
        let off = if back { st::STENCIL_BACK } else { st::STENCIL_FRONT };
        state.stencil(off, face);
        if depth_fail {
            state.flags(flags::DEPTH_TEST).u(st::DEPTH_COMPARE, 0);
        }
        let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
        // Clockwise on the framebuffer: back-facing with FRONT_CCW set.
        let v = [s(0.0, 0.0), s(16.0, 0.0), s(0.0, 8.0)];
        if back {
            state.flags(flags::FRONT_CCW);
        }
        let vs = vertex_kernel();
        let d = Draw::new(&vs, None, &state, &v);
        g.draw(&d).unwrap();
        let sv = g.read(stencil, (w * h) as usize);
        assert!(sv.iter().all(|&x| x == sv[0]));
        (sv[0], if dbytes > 0 { texel(&g, plane, w, dbytes, 0, 0)[0] } else { 0 })
    };
    for op in 0..8 {
        // Pass op: compare ALWAYS, reference 0x9C.
        let (s, d) = run(format::D24_UNORM_S8_UINT, 0, [0, op, 0, 7, 0xFF, 0xFF, 0x9C], false, false);
        assert_eq!(s, stencil_ref(op, 0x35, 0x9C), "pass op {op}");
        assert_eq!(d, 0, "stencil ops never touch the depth plane");
        // Fail op: compare NEVER.
        let (s, _) = run(format::S8_UINT, 0, [op, 0, 0, 0, 0xFF, 0xFF, 0x9C], false, false);
        assert_eq!(s, stencil_ref(op, 0x35, 0x9C), "fail op {op}");
        // Depth-fail op: the stencil passes, the depth test fails (NEVER).
        let (s, _) = run(format::D32_SFLOAT_S8_UINT, 0, [0, 0, op, 7, 0xFF, 0xFF, 0x9C], false, true);
        assert_eq!(s, stencil_ref(op, 0x35, 0x9C), "depth-fail op {op}");
        // The back face's state for a back-facing triangle.
        let (s, _) = run(format::D16_UNORM_S8_UINT, 0, [0, op, 0, 7, 0xFF, 0xFF, 0x9C], true, false);
        assert_eq!(s, stencil_ref(op, 0x35, 0x9C), "back face pass op {op}");
    }
    // Write mask 0x0F: REPLACE changes the low nibble only.
    assert_eq!(run(format::S8_UINT, 0, [0, 2, 0, 7, 0xFF, 0x0F, 0x9C], false, false).0, 0x3C);
    // Compare mask: EQUAL with reference 0x95 passes through mask 0x0F (5 == 5), fails with 0xFF.
    assert_eq!(run(format::S8_UINT, 0, [1, 2, 0, 2, 0x0F, 0xFF, 0x95], false, false).0, 0x95);
    assert_eq!(run(format::S8_UINT, 0, [1, 2, 0, 2, 0xFF, 0xFF, 0x95], false, false).0, 0);
}

/// `VkBlendFactor` for component `c`, by the spec's table (for the reference).
fn factor_ref(f: u32, c: usize, s: [f32; 4], d: [f32; 4], k: [f32; 4]) -> f32 {
    let (sa, da, ka) = (s[3], d[3], k[3]);
    match f {
        0 => 0.0,
        1 => 1.0,
        2 => s[c],
        3 => 1.0 - s[c],
        4 => d[c],
        5 => 1.0 - d[c],
        6 => sa,
        7 => 1.0 - sa,
        8 => da,
        9 => 1.0 - da,
        10 => k[c],
        11 => 1.0 - k[c],
        12 => ka,
        13 => 1.0 - ka,
        _ => {
            if c == 3 {
                1.0
            } else {
                sa.min(1.0 - da)
            }
        }
    }
}

fn blend_ref(f: [u32; 6], s: [f32; 4], d: [f32; 4], k: [f32; 4]) -> [f32; 4] {
    std::array::from_fn(|c| {
        let (sf, df, op) = if c < 3 { (f[0], f[1], f[2]) } else { (f[3], f[4], f[5]) };
        let (x, y) = (s[c] * factor_ref(sf, c, s, d, k), d[c] * factor_ref(df, c, s, d, k));
        match op {
            0 => x + y,
            1 => x - y,
            2 => y - x,
            3 => s[c].min(d[c]),
            _ => s[c].max(d[c]),
        }
    })
}

/// Draws a full 2x2 target of `fmt` prefilled with `dst` in colour `src` with blend state
/// `f` and write mask `mask`; returns texel (1, 1).
fn blend_draw(fmt: u32, f: Option<[u32; 6]>, mask: u32, src: [f32; 4], dst: &[u8], k: [f32; 4]) -> Vec<u32> {
    let (w, h) = (2, 2);
    let mut g = gfx();
    let bpp = format::find(fmt).unwrap().texel_bytes();
    let color = target(&g, w, h, dst);
    let mut state = State::new(w, h);
    state.color(0, color, fmt, bpp * w);
    for (i, c) in k.iter().enumerate() {
        state.f(st::BLEND_CONSTANTS + 4 * i, *c);
    }
    match f {
        Some(f) => state.blend(0, f, mask),
        None => state.u(st::COLOR + st::attachment::WRITE_MASK, mask),
    };
    let vs = vertex_kernel();
    let fs = [fs::prologue(), vec![fs::push_color(), fs::export_color(0, 40), exit()]].concat();
    let v = flat_tri(w, h, 0.5);
    let mut d = Draw::new(&vs, Some(&fs), &state, &v);
    d.push = push_color(Vec::new(), src);
    g.draw(&d).unwrap();
    texel(&g, color, w, bpp, 1, 1)
}

/// Every blend factor for source and destination, every op, against the spec's formulas
/// in f32 (an RGBA32F target: no clamping or rounding); then a normalised target, where
/// inputs clamp and results round, with a write mask.
#[test]
fn every_blend_factor_and_op() {
    let s = [0.6f32, 0.3, 0.9, 0.7];
    let d = [0.25f32, 0.5, 0.75, 0.4];
    let k = [0.1f32, 0.2, 0.3, 0.5];
    let dst: Vec<u8> = d.iter().flat_map(|x| x.to_le_bytes()).collect();
    let check = |f: [u32; 6]| {
        let got = floats(&blend_draw(format::R32G32B32A32_SFLOAT, Some(f), 0xF, s, &dst, k));
        assert_eq!(got, blend_ref(f, s, d, k).to_vec(), "blend {f:?}");
    };
    for sf in 0..15 {
        for df in [0, 1, 7, 9, 11, 14] {
            check([sf, df, 0, sf, df, 0]);
            check([df, sf, 0, 1, sf, 0]);
        }
    }
    for op in 0..5 {
        check([6, 7, op, 1, 7, op]);
        check([2, 4, op, 12, 13, 4 - op]);
    }
    // R8G8B8A8_UNORM: source 1.5 clamps to 1; SRC_ALPHA / ONE_MINUS_SRC_ALPHA with alpha
    // 0.25; only R and A written.
    let src = [1.5f32, 0.0, 1.0, 0.25];
    let dst8 = [200u8, 100, 50, 255];
    let got = blend_draw(format::R8G8B8A8_UNORM, Some([6, 7, 0, 1, 0, 0]), 0b1001, src, &dst8, k)[0].to_le_bytes();
    let r = (1.0f32 * 0.25 + (200.0f32 / 255.0) * 0.75) * 255.0;
    assert_eq!(got, [r.round() as u8, 100, 50, 64], "R blended, G/B kept, A = 0.25");
    // Blending off: the colour converts and writes through the mask.
    let got = blend_draw(format::R8G8B8A8_UNORM, None, 0b0110, src, &dst8, k)[0].to_le_bytes();
    assert_eq!(got, [200, 0, 255, 255]);
    // Integer formats never blend.
    let got = blend_draw(
        format::R32_UINT,
        Some([1, 1, 0, 1, 1, 0]),
        0xF,
        [f32::from_bits(7), 0.0, 0.0, 0.0],
        &[5, 0, 0, 0],
        k,
    );
    assert_eq!(got, [7]);
    // sRGB: the destination decodes to linear, the sum encodes back.
    let srgb = format::find(format::R8G8B8A8_SRGB).unwrap();
    let got =
        blend_draw(format::R8G8B8A8_SRGB, Some([1, 1, 0, 1, 1, 0]), 0xF, [0.25, 0.0, 0.0, 0.0], &[128, 0, 0, 0], k);
    let want = format::linear_to_srgb(0.25 + format::srgb_to_linear(128));
    assert_eq!(got[0].to_le_bytes()[0], want);
    let _ = srgb;
}

/// Points (squares of their size, clamped; gl_PointCoord) and lines (parallelograms, the
/// line parameter as barycentric i), and a triangle in polygon mode LINE.
#[test]
fn points_and_lines() {
    let (w, h) = (16, 16);
    let mut g = gfx();
    let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
    // Points: (4.5, 4.5) size 3 -> 3x3; (10, 10) size 2 -> 2x2; (13.3, 2.7) size 1 -> one.
    let mut pts = [s(4.5, 4.5), s(10.0, 10.0), s(13.3, 2.7), s(7.0, 13.0)];
    pts[0].point_size = 3.0;
    pts[1].point_size = 2.0;
    // Size 0.25 would cover no centre; clamped to 1, the square [6.5, 7.5) x [12.5, 13.5) has
    // pixel (6, 12)'s centre on its top-left corner.
    pts[3].point_size = 0.25;
    let color = target(&g, w, h, &[0; 16]);
    let mut state = State::new(w, h);
    state.u(st::TOPOLOGY, 0).color(0, color, format::R32G32B32A32_SFLOAT, 16 * w);
    let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
    let vs = vertex_kernel();
    let fs = fs::count_and_export([gcsr::FRAG_POINT_U, gcsr::FRAG_POINT_V, gcsr::FRAG_BARY_LINEAR_I, gcsr::FRAG_Z]);
    let mut d = Draw::new(&vs, Some(&fs), &state, &pts);
    d.push = push_counters(counters, w);
    g.draw(&d).unwrap();
    let n = g.read_u32s(counters, (w * h) as usize);
    let mut want = vec![0u32; (w * h) as usize];
    for (x0, y0, side) in [(3, 3, 3), (9, 9, 2), (13, 2, 1), (6, 12, 1)] {
        for y in y0..y0 + side {
            for x in x0..x0 + side {
                want[(y * w + x) as usize] = 1;
            }
        }
    }
    assert_eq!(n, want);
    assert_eq!(floats(&texel(&g, color, w, 16, 9, 9))[..2], [0.25, 0.25]);
    assert_eq!(floats(&texel(&g, color, w, 16, 10, 10))[..2], [0.75, 0.75]);

    // Lines: (2, 12.5) -> (12, 12.5) covers x 2..11 of row 12; (14.5, 1) -> (14.5, 9) column
    // 14, rows 1..8.
    let lines = [s(2.0, 12.5), s(12.0, 12.5), s(14.5, 1.0), s(14.5, 9.0)];
    let mut state = State::new(w, h);
    state.u(st::TOPOLOGY, 1).color(0, color, format::R32G32B32A32_SFLOAT, 16 * w);
    let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
    let mut d = Draw::new(&vs, Some(&fs), &state, &lines);
    d.push = push_counters(counters, w);
    g.draw(&d).unwrap();
    let n = g.read_u32s(counters, (w * h) as usize);
    let mut want = vec![0u32; (w * h) as usize];
    for x in 2..12 {
        want[(12 * w + x) as usize] = 1;
    }
    for y in 1..9 {
        want[(y * w + 14) as usize] = 1;
    }
    assert_eq!(n, want);
    // The line parameter at pixel (2, 12): (2.5 - 2) / 10.
    assert_eq!(floats(&texel(&g, color, w, 16, 2, 12))[2], 0.05);

    // Polygon mode LINE: the triangle's edges, not its inside.
    let mut state = State::new(w, h);
    state.u(st::POLYGON_MODE, 1);
    let tri = [s(1.5, 1.5), s(13.5, 1.5), s(1.5, 13.5)];
    let n = counts(&mut g, &state, &tri, |_| {});
    assert!(n[(5 * w + 5) as usize] == 0 && n[(w + 7) as usize] >= 1 && n[(7 * w + 1) as usize] >= 1);
}

/// Primitive restart splits an indexed strip (u8, u16 and u32 indices); the restart
/// positions run no vertex kernel.
#[test]
fn primitive_restart() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (16, 8);
    let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
    // Two 4x4 squares, each a strip of two triangles: x 1..5 and x 9..13, rows 2..6.
    let v = [s(1.0, 2.0), s(5.0, 2.0), s(1.0, 6.0), s(5.0, 6.0), s(9.0, 2.0), s(13.0, 2.0), s(9.0, 6.0), s(13.0, 6.0)];
    for (ty, bytes) in [(index_type::U8, 1usize), (index_type::U16, 2), (index_type::U32, 4)] {
        let idx: Vec<u32> = vec![0, 1, 2, 3, u32::MAX, 4, 5, 6, 7];
        let raw: Vec<u8> = idx
            .iter()
            .flat_map(|&i| {
                let i = if i == u32::MAX { u32::MAX >> (32 - 8 * bytes) } else { i };
                i.to_le_bytes()[..bytes].to_vec()
            })
            .collect();
        let mut state = State::new(w, h);
        state.u(st::TOPOLOGY, 4).flags(flags::PRIMITIVE_RESTART);
        let mut g = gfx();
        let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
        let vs = vertex_kernel();
        let fs = fs::count_and_export([gcsr::FRAG_X, gcsr::FRAG_Y, gcsr::FRAG_X, gcsr::FRAG_Y]);
        let mut d = Draw::new(&vs, Some(&fs), &state, &v);
        d.vertex_count = 9;
        d.indices = Some((raw, ty));
        d.push = push_counters(counters, w);
        let rep = g.draw(&d).unwrap();
        let n = g.read_u32s(counters, (w * h) as usize);
        for y in 0..h {
            for x in 0..w {
                let inside = (2..6).contains(&y) && ((1..5).contains(&x) || (9..13).contains(&x));
                assert_eq!(n[(y * w + x) as usize], inside as u32, "type {ty} pixel ({x}, {y})");
            }
        }
        let st = rep.draw.unwrap();
        assert_eq!((st.vertices, st.primitives), (8, 4), "type {ty}");
    }
}

/// Instancing: each instance is offset by its index; the vertex CSRs (index with the
/// vertex offset, instance with the first instance, draw index, slot) reach the fragment
/// kernel through a flat varying.
#[test]
fn instancing_and_vertex_csrs() {
    let (w, h) = (16, 4);
    let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
    // One triangle over pixels x 0..3 (indices 2, 3, 4 after a vertex offset of 2).
    let v = [Vertex::default(), Vertex::default(), s(0.0, 0.0), s(8.0, 0.0), s(0.0, 8.0)];
    let mut g = gfx();
    let color = target(&g, w, h, &[0xFF; 16]);
    let mut state = State::new(w, h);
    state.color(0, color, format::R32G32B32A32_UINT, 16 * w);
    let vs = vertex_kernel();
    let fs = [fs::prologue(), fs::flat(1), vec![fs::export_color(0, 40), exit()]].concat();
    let mut d = Draw::new(&vs, Some(&fs), &state, &v);
    d.vertex_count = 3;
    d.instance_count = 3;
    d.vertex_base = 2;
    d.first_instance = 5;
    d.indices = Some((vec![0, 1, 2], index_type::U8));
    // Each instance 4 pixels (0.5 in NDC) to the right.
    d.push = vec![0u8; 16];
    d.push[8..12].copy_from_slice(&0.5f32.to_le_bytes());
    let rep = g.draw(&d).unwrap();
    for inst in 0..3u32 {
        let got = texel(&g, color, w, 16, 4 * inst, 0);
        // Provoking vertex: index 0 + base 2; instance 5 + i; draw index 7; slot 3 i.
        assert_eq!(got, [2, 5 + inst, 7, 3 * inst], "instance {inst}");
    }
    assert_eq!(rep.draw.unwrap().vertices, 9);
}

/// A one-pixel triangle's quad has three helper lanes: they run (DERIV sees their values)
/// but their stores do nothing; the covered lane's fine x derivative of x^2 is 5^2 - 4^2.
#[test]
fn helper_lanes_run_but_do_not_store() {
    let (w, h) = (8, 8);
    let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
    let v = [s(5.3, 5.3), s(5.8, 5.3), s(5.3, 5.8)];
    let mut g = gfx();
    let planes = g.alloc(&vec![0u8; (8 * w * h) as usize]);
    let state = State::new(w, h);
    let vs = vertex_kernel();
    let mut fs = fs::prologue();
    fs.extend([
        kit::r(Op::U2f, 0, 50, 2, N, N, 0),
        kit::r(Op::Fmul, 0, 51, 50, 50, N, 0),
        kit::r(Op::Deriv, deriv::FINE_X, 52, 51, N, N, 0),
        csr_(53, gcsr::FRAG_HELPER),
        kit::r(Op::Ballot, 0, 54, 53, N, N, 0),
    ]);
    fs.extend(fs::store(52));
    fs.extend([
        movi(55, 4 * w * h),
        movi(56, 0),
        kit::r(Op::Iadd64, 0, 57, 8, 55, N, 0),
        kit::r(Op::Stg, vortex_model::abi::isa::MemSize::B32 as u8, N, 57, 54, N, 0),
        exit(),
    ]);
    let mut d = Draw::new(&vs, Some(&fs), &state, &v);
    d.push = push_counters(planes, w);
    let rep = g.draw(&d).unwrap();
    let p = g.read_u32s(planes, (2 * w * h) as usize);
    let at = (5 * w + 5) as usize;
    assert_eq!(f32::from_bits(p[at]), 9.0);
    assert_eq!(p[(w * h) as usize + at], 0b0111, "lanes 0-2 of the quad are helpers");
    let written: Vec<usize> = p.iter().enumerate().filter(|(_, &x)| x != 0).map(|(i, _)| i).collect();
    assert_eq!(written, [at, (w * h) as usize + at], "helpers store nothing");
    assert_eq!(rep.draw.unwrap().helper_lanes, 3);
}

/// DEMOTE: demoted lanes go on executing (derivatives still see them) but store and export
/// nothing; their fragments are discarded.
#[test]
fn demote_makes_helpers() {
    let (w, h) = (8, 8);
    let s = |x, y| Vertex::screen(x, y, 0.5, w, h);
    let v = [s(2.0, 2.0), s(4.0, 2.0), s(2.0, 4.0), s(4.0, 4.0)];
    let mut g = gfx();
    let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
    let color = target(&g, w, h, &[0xCC; 16]);
    let mut state = State::new(w, h);
    state.u(st::TOPOLOGY, 4).color(0, color, format::R32G32B32A32_UINT, 16 * w);
    let vs = vertex_kernel();
    let mut fs = fs::prologue();
    fs.extend([movi(60, 1), kit::r(Op::And, 0, 61, 2, 60, N, 0)]);
    let at = fs.len() as u32;
    fs.extend([
        vortex_model::abi::isa::Instr::bra(61, at + 1, at + 2, at + 2),
        kit::r(Op::Demote, 0, N, N, N, N, 0),
        kit::r(Op::U2f, 0, 50, 2, N, N, 0),
        kit::r(Op::Deriv, deriv::FINE_X, 52, 50, N, N, 0),
    ]);
    fs.extend(fs::store(52));
    fs.extend(fs::csrs([gcsr::FRAG_HELPER, gcsr::FRAG_X, gcsr::FRAG_Y, gcsr::FRAG_COVERAGE]));
    fs.extend([fs::export_color(0, 40), exit()]);
    let mut d = Draw::new(&vs, Some(&fs), &state, &v);
    d.push = push_counters(counters, w);
    let rep = g.draw(&d).unwrap();
    let n = g.read_u32s(counters, (w * h) as usize);
    for y in 2..4u32 {
        for x in 2..4u32 {
            let c = texel(&g, color, w, 16, x, y);
            if x % 2 == 0 {
                assert_eq!(f32::from_bits(n[(y * w + x) as usize]), 1.0, "({x}, {y})");
                assert_eq!(c, [0, x, y, 1]);
            } else {
                assert_eq!(n[(y * w + x) as usize], 0, "a demoted lane stores nothing");
                assert_eq!(c, [0xCCCC_CCCC; 4], "a demoted lane exports nothing");
            }
        }
    }
    assert_eq!(rep.draw.unwrap().om.discarded, 2);
}

/// Interpolation weights at known pixels of a hand-solved triangle: screen (0,0), (8,0),
/// (0,8) with clip w 1, 2, 4 and depth 0, 0.5, 1. At a pixel centre (X, Y) the screen-space
/// weights are (1 - X/8 - Y/8, X/8, Y/8); the perspective-correct ones divide each by its
/// vertex's w and renormalise; depth is screen-linear; frag_w is the sum of weight / w.
#[test]
fn interpolation_weights_at_known_pixels() {
    let (w, h) = (16, 16);
    let v = [clip(-1.0, -1.0, 0.0, 1.0), clip(0.0, -2.0, 1.0, 2.0), clip(-4.0, 0.0, 4.0, 4.0)];
    let mut g = gfx();
    let c0 = target(&g, w, h, &[0; 16]);
    let c1 = target(&g, w, h, &[0; 16]);
    let mut state = State::new(w, h);
    state.color(0, c0, format::R32G32B32A32_SFLOAT, 16 * w).color(1, c1, format::R32G32B32A32_SFLOAT, 16 * w);
    let vs = vertex_kernel();
    let mut fs = fs::prologue();
    fs.extend(fs::csrs([gcsr::FRAG_BARY_I, gcsr::FRAG_BARY_J, gcsr::FRAG_BARY_LINEAR_I, gcsr::FRAG_BARY_LINEAR_J]));
    fs.push(kit::r(Op::Exp, 0, N, 40, N, N, 0));
    fs.extend(fs::csrs([gcsr::FRAG_Z, gcsr::FRAG_W, gcsr::FRAG_BARY_CENTROID_I, gcsr::FRAG_BARY_LINEAR_CENTROID_J]));
    fs.extend([fs::export_color(1, 40), exit()]);
    let d = Draw::new(&vs, Some(&fs), &state, &v);
    g.draw(&d).unwrap();
    for (x, y) in [(1u32, 1u32), (2, 1), (0, 3), (3, 3), (6, 0)] {
        let (sx, sy) = (x as f64 + 0.5, y as f64 + 0.5);
        let l = [1.0 - sx / 8.0 - sy / 8.0, sx / 8.0, sy / 8.0];
        let q = [l[0], l[1] / 2.0, l[2] / 4.0];
        let qs = q[0] + q[1] + q[2];
        let want0 = [(q[1] / qs) as f32, (q[2] / qs) as f32, l[1] as f32, l[2] as f32];
        let want1 = [(0.5 * l[1] + l[2]) as f32, qs as f32, (q[1] / qs) as f32, l[2] as f32];
        assert_eq!(floats(&texel(&g, c0, w, 16, x, y)), want0, "pixel ({x}, {y})");
        assert_eq!(floats(&texel(&g, c1, w, 16, x, y)), want1, "pixel ({x}, {y})");
    }
    // Pixel (1, 1) by hand: weights (0.625, 0.1875, 0.1875), perspective (0.625, 0.09375,
    // 0.046875) / 0.765625.
    assert_eq!(floats(&texel(&g, c0, w, 16, 1, 1))[2..], [0.1875, 0.1875]);
    assert_eq!(floats(&texel(&g, c1, w, 16, 1, 1))[..2], [0.28125, 0.765625]);
}

/// An index buffer outside every allocation is a memory fault, like any access.
#[test]
fn unmapped_index_buffer_faults() {
    let (w, h) = (8, 8);
    let state = State::new(w, h);
    let v = flat_tri(w, h, 0.5);
    let mut g = gfx();
    let vs = vertex_kernel();
    let mut d = Draw::new(&vs, None, &state, &v);
    d.indices = Some((vec![0; 6], index_type::U16));
    d.index_addr = Some(0xdead_0000);
    let f = g.draw(&d).unwrap_err();
    assert!(matches!(f.kind, vortex_model::fault::FaultKind::Memory(_)), "{f}");
}

/// Functional and timed mode draw the same pixels: many overlapping triangles with depth
/// testing and blending, interpolated colours, at several host thread counts.
#[test]
fn functional_and_timed_draw_the_same_pixels() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (48, 40);
    let mut seed = 0x1234_5678u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let v: Vec<Vertex> = (0..60)
        .map(|_| {
            let mut p = Vertex::screen(rnd() * 60.0 - 6.0, rnd() * 52.0 - 6.0, rnd() as f32, w, h);
            p.pos[3] = 0.5 + rnd() as f32;
            for i in 0..3 {
                p.pos[i] *= p.pos[3];
            }
            p.attr = [rnd() as f32, rnd() as f32, rnd() as f32, 0.5];
            p
        })
        .collect();
    let run = |mode: Mode, threads: u32| {
        let cfg = DeviceConfig { mode, host_threads: threads, ..DeviceConfig::default() };
        let mut g = Gfx::new(cfg);
        let color = target(&g, w, h, &[10, 20, 30, 255]);
        let depth = target(&g, w, h, &1.0f32.to_le_bytes());
        let mut state = State::new(w, h);
        state
            .color(0, color, format::R8G8B8A8_UNORM, 4 * w)
            .blend(0, [6, 7, 0, 1, 7, 0], 0xF)
            .depth(depth, format::D32_SFLOAT, 4 * w, 0, 0)
            .u(st::DEPTH_COMPARE, 3)
            .flags(flags::DEPTH_TEST | flags::DEPTH_WRITE);
        let vs = vertex_kernel();
        let fs = [fs::prologue(), fs::interpolate(0, false), vec![fs::export_color(0, 40), exit()]].concat();
        let d = Draw::new(&vs, Some(&fs), &state, &v);
        let rep = g.draw(&d).unwrap();
        (g.read(color, (4 * w * h) as usize), g.read(depth, (4 * w * h) as usize), rep)
    };
    let (c, d, f) = run(Mode::Functional, 1);
    let st = f.draw.clone().unwrap();
    assert!(st.fragments > 500 && st.om.merged > 300 && st.om.early_depth_kills > 0, "{st:?}");
    assert_eq!(st.om.passed, st.om.merged, "with a fragment kernel the merged fragments passed");
    for (mode, threads) in [(Mode::Functional, 0), (Mode::Timed, 1), (Mode::Timed, 0)] {
        let (c2, d2, r) = run(mode, threads);
        assert!(c == c2 && d == d2, "{mode:?} with {threads} threads draws other pixels");
        let s2 = r.draw.clone().unwrap();
        assert_eq!(DrawStatsNoCycles::from(&s2), DrawStatsNoCycles::from(&st));
        assert_eq!(r.timed.is_some(), mode == Mode::Timed);
    }
}

/// The draw counters without timed mode's cycles.
#[derive(Debug, PartialEq)]
struct DrawStatsNoCycles(vortex_model::gfx::DrawStats);

impl From<&vortex_model::gfx::DrawStats> for DrawStatsNoCycles {
    fn from(s: &vortex_model::gfx::DrawStats) -> Self {
        DrawStatsNoCycles(vortex_model::gfx::DrawStats { cycles: None, ..s.clone() })
    }
}

/// A full-target quad (two triangles) with a fragment kernel that interpolates a colour,
/// on a `w` x `h` R8G8B8A8 target; returns the report.
fn full_screen(cfg: DeviceConfig, w: u32, h: u32) -> vortex_model::device::DispatchReport {
    let mut g = Gfx::new(cfg);
    let color = target(&g, w, h, &[0; 4]);
    let mut state = State::new(w, h);
    state.u(st::TOPOLOGY, 4).color(0, color, format::R8G8B8A8_UNORM, 4 * w);
    let s = |x, y, c: [f32; 4]| Vertex { attr: c, ..Vertex::screen(x, y, 0.5, w, h) };
    let (fw, fh) = (w as f64, h as f64);
    let v = [
        s(0.0, 0.0, [1.0, 0.0, 0.0, 1.0]),
        s(fw, 0.0, [0.0, 1.0, 0.0, 1.0]),
        s(0.0, fh, [0.0, 0.0, 1.0, 1.0]),
        s(fw, fh, [1.0; 4]),
    ];
    let vs = vertex_kernel();
    let fs = [fs::prologue(), fs::interpolate(0, false), vec![fs::export_color(0, 40), exit()]].concat();
    let d = Draw::new(&vs, Some(&fs), &state, &v);
    g.draw(&d).unwrap()
}

/// Timed mode's raster unit and output merger, through their cycle counts: fragment warps
/// wait for the raster unit, whose cycles follow its quad rate; a slower output merger
/// lengthens the fragment stage; the draw's cycles are the vertex stage's plus the
/// fragment stage's.
#[test]
fn timed_raster_and_merger_rates() {
    let cycles = |f: &dyn Fn(&mut DeviceConfig)| {
        let mut cfg = DeviceConfig { mode: Mode::Timed, ..DeviceConfig::default() };
        f(&mut cfg);
        let r = full_screen(cfg, 64, 64);
        let st = r.draw.unwrap();
        let c = st.cycles.clone().unwrap();
        assert_eq!(r.timed.unwrap().cycles, c.vertex + c.fragment);
        assert!(c.fragment >= c.raster && c.vertex > 0, "{c:?}");
        (c, st.quads)
    };
    let (base, quads) = cycles(&|_| {});
    // Four quads a cycle: at least quads / 4 cycles, and not much more for two primitives.
    assert!(base.raster >= quads / 4 && base.raster <= quads / 4 + 64, "{base:?} for {quads} quads");
    let (slow, _) = cycles(&|c| c.gfx.raster_quads_per_cycle = 1);
    assert!(slow.raster >= quads && slow.fragment >= slow.raster, "{slow:?}");
    // An output merger merging one quad every cycle on each of 4 cores cannot finish the
    // draw's quads in fewer than quads / 4 cycles; at 1/1 and a latency of 500 it is later.
    let (om, _) = cycles(&|c| {
        c.gfx.om_quads_per_cycle = 1;
        c.gfx.om_latency = 500;
    });
    assert!(om.fragment >= base.fragment + 400, "{om:?} vs {base:?}");
}

/// Fragments per second of a full-screen draw in both modes (a benchmark:
/// `cargo test --release -p vortex-model --test gfx -- --ignored --nocapture`).
#[test]
#[ignore]
fn full_screen_rate() {
    for mode in [Mode::Functional, Mode::Timed] {
        let (w, h) = (1024, 1024);
        let mut best = f64::MAX;
        let mut last = None;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let r = full_screen(DeviceConfig { mode, ..DeviceConfig::default() }, w, h);
            best = best.min(t.elapsed().as_secs_f64());
            last = Some(r);
        }
        let r = last.unwrap();
        let st = r.draw.unwrap();
        println!(
            "{mode:?}: {} fragments in {:.3} s: {:.2} M fragments/s{}",
            st.fragments,
            best,
            st.fragments as f64 / best / 1e6,
            st.cycles.map(|c| format!(", {c:?}")).unwrap_or_default()
        );
    }
}

/// The viewport transform with a negative height (y flipped), the scissor, and depth bias
/// (constant with the format's r, slope with the plane's largest slope, the clamp).
#[test]
fn viewport_scissor_and_depth_bias() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (8, 8);
    // A triangle in the NDC corner (-1, -1): the top-left pixels, or with the viewport's
    // height negated (y = h, height = -h) the bottom-left ones.
    let v = [clip(-1.0, -1.0, 0.5, 1.0), clip(-0.5, -1.0, 0.5, 1.0), clip(-1.0, -0.5, 0.5, 1.0)];
    let mut g = gfx();
    let mut state = State::new(w, h);
    let n = counts(&mut g, &state, &v, |_| {});
    assert_eq!((n[0], n[(7 * w) as usize]), (1, 0));
    state.viewport(0.0, h as f32, w as f32, -(h as f32));
    let n = counts(&mut g, &state, &v, |_| {});
    assert_eq!((n[0], n[(7 * w) as usize]), (0, 1));
    // Scissor (2, 1) 3 x 2 over a full-target triangle.
    let mut state = State::new(w, h);
    state.u(st::SCISSOR, 2).u(st::SCISSOR + 4, 1).u(st::SCISSOR + 8, 3).u(st::SCISSOR + 12, 2);
    let n = counts(&mut g, &state, &flat_tri(w, h, 0.5), |_| {});
    let lit: Vec<(u32, u32)> = (0..w * h).filter(|&i| n[i as usize] == 1).map(|i| (i % w, i / w)).collect();
    assert_eq!(lit, [(2, 1), (3, 1), (4, 1), (2, 2), (3, 2), (4, 2)]);
    // Depth bias on D16: constant 3 adds 3 / 65535; on the ramp (dz/dx = 1/64) a slope
    // factor of 2 adds 1/32; a clamp of 0.01 caps the sum.
    let bias = |tri: &[Vertex], c: f32, s: f32, clamp: f32| {
        let (w, h) = (16, 4);
        let mut g = gfx();
        let depth = target(&g, w, h, &[0xFF, 0xFF]);
        let mut state = State::new(w, h);
        state.depth(depth, format::D16_UNORM, 2 * w, 0, 0).u(st::DEPTH_COMPARE, 7);
        state.flags(flags::DEPTH_TEST | flags::DEPTH_WRITE | flags::DEPTH_BIAS);
        state.f(st::DEPTH_BIAS_CONSTANT, c).f(st::DEPTH_BIAS_SLOPE, s).f(st::DEPTH_BIAS_CLAMP, clamp);
        let vs = vertex_kernel();
        g.draw(&Draw::new(&vs, None, &state, tri)).unwrap();
        texel(&g, depth, w, 2, 0, 0)[0]
    };
    let (w, h) = (16, 4);
    let at = |z: f64| (z * 65535.0).round() as u32;
    assert_eq!(bias(&flat_tri(w, h, 0.25), 3.0, 0.0, 0.0), at(0.25 + 3.0 / 65535.0));
    let ramp_z = 0.5 + 0.5 / 64.0;
    assert_eq!(bias(&ramp(w, h, 0.5, 1.0 / 64.0), 0.0, 2.0, 0.0), at(ramp_z + 2.0 / 64.0));
    assert_eq!(bias(&ramp(w, h, 0.5, 1.0 / 64.0), 0.0, 2.0, 0.01), at(ramp_z + 0.01));
}

/// Clip distances cut primitives (half a triangle whose distance is its x), depth clamp
/// keeps a triangle beyond the far plane and clamps its depth to the viewport's range,
/// depth bounds test the stored depth, and the draw's counters reach the stats JSON.
#[test]
fn clip_distances_depth_clamp_and_bounds() {
    use vortex_model::abi::gfx::state::flags;
    let (w, h) = (8, 4);
    let mut g = gfx();
    // Clip distance 0 = x in NDC: the left half of the target is clipped.
    let mut v = flat_tri(w, h, 0.5);
    for p in &mut v {
        p.clip[0] = p.pos[0];
    }
    let mut state = State::new(w, h);
    state.u(st::CLIP_DISTANCES, 1);
    let n = counts(&mut g, &state, &v, |_| {});
    for x in 0..w {
        assert_eq!(n[x as usize], (x >= 4) as u32, "x {x}");
    }
    // z = 1.5 is beyond the far plane: gone without depth clamp, drawn at maxDepth with it.
    let far = flat_tri(w, h, 1.5);
    let run = |extra: u32, stored: f32, bounds: [f32; 2]| {
        let mut g = gfx();
        let depth = target(&g, w, h, &stored.to_le_bytes());
        let mut state = State::new(w, h);
        state.depth(depth, format::D32_SFLOAT, 4 * w, 0, 0).f(st::VIEWPORT + 20, 0.75);
        state.f(st::DEPTH_BOUNDS_MIN, bounds[0]).f(st::DEPTH_BOUNDS_MAX, bounds[1]);
        state.flags(flags::DEPTH_TEST | flags::DEPTH_WRITE | extra);
        let vs = vertex_kernel();
        let rep = g.draw(&Draw::new(&vs, None, &state, &far)).unwrap();
        (f32::from_bits(texel(&g, depth, w, 4, 1, 1)[0]), rep)
    };
    let (z, rep) = run(0, 1.0, [0.0, 1.0]);
    assert_eq!((z, rep.draw.as_ref().unwrap().clipped_away), (1.0, 1));
    let (z, rep) = run(flags::DEPTH_CLAMP, 1.0, [0.0, 1.0]);
    assert_eq!(z, 0.75);
    let j = rep.to_json();
    assert_eq!(j["draw"]["primitives"], 1);
    assert_eq!(j["draw"]["fragments"], (w * h) as u64);
    // Without a fragment kernel the samples the early tests keep are the ones that passed.
    assert_eq!(j["draw"]["om"]["passed"], (w * h) as u64);
    // Depth bounds [0.9, 1.0]: the stored 1.0 is inside; [0.0, 0.9] it is not.
    assert_eq!(run(flags::DEPTH_CLAMP | flags::DEPTH_BOUNDS, 1.0, [0.9, 1.0]).0, 0.75);
    let (z, rep) = run(flags::DEPTH_CLAMP | flags::DEPTH_BOUNDS, 1.0, [0.0, 0.9]);
    let om = rep.draw.unwrap().om;
    assert_eq!((z, om.depth_bounds_kills, om.passed), (1.0, (w * h) as u64, 0));
}
