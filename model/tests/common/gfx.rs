//! A draw harness for the model's graphics tests: hand-assembled vertex and fragment kernels,
//! a state record written field by field from `abi::gfx`, and the draw's DCRs.

#![allow(dead_code)]

use vortex_model::abi::gfx::{dcr as gdcr, export, state as st, vout};
use vortex_model::abi::isa::{AtomicOp, Instr, MemSize, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, kargs, KernelHeader};
use vortex_model::abi::{csr, gfx};
use vortex_model::config::DeviceConfig;
use vortex_model::device::{Device, DispatchReport};
use vortex_model::fault::Fault;

pub fn r(op: Op, m: u8, d: u16, a: u16, b: u16, c: u16, imm: u32) -> Instr {
    Instr::r(op, m, d, a, b, c, N, imm)
}

pub fn csr_(d: u16, id: u32) -> Instr {
    r(Op::Csr, 0, d, N, N, N, id)
}

pub fn movi(d: u16, v: u32) -> Instr {
    r(Op::Movi, 0, d, N, N, N, v)
}

pub fn exit() -> Instr {
    r(Op::Exit, 0, N, N, N, N, 0)
}

/// The vertex record the harness's vertex kernel reads: position, one attribute (varying
/// 0), point size and two clip distances.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vertex {
    pub pos: [f32; 4],
    pub attr: [f32; 4],
    pub point_size: f32,
    pub clip: [f32; 2],
}

pub const VERTEX_BYTES: u32 = 48;
/// Varying 0 is the attribute, varying 1 (integers) vtx_index, vtx_instance, draw_index,
/// vtx_slot.
pub const LOCATIONS: usize = 2;
pub const STRIDE: u32 = vout::stride(LOCATIONS) as u32;

impl Vertex {
    /// A vertex at screen position (`x`, `y`) of a `w` x `h` viewport at the origin, depth
    /// `z`, clip w 1.
    pub fn screen(x: f64, y: f64, z: f32, w: u32, h: u32) -> Vertex {
        let xn = (2.0 * x / w as f64 - 1.0) as f32;
        let yn = (2.0 * y / h as f64 - 1.0) as f32;
        Vertex { pos: [xn, yn, z, 1.0], point_size: 1.0, ..Default::default() }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut v: Vec<f32> = self.pos.to_vec();
        v.extend(self.attr);
        v.extend([self.point_size, self.clip[0], self.clip[1], 0.0]);
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }
}

/// Push-constant layout of the harness's kernels.
pub mod push {
    /// Vertex buffer address (u64).
    pub const VERTICES: u32 = 0;
    /// x offset per instance (f32).
    pub const INSTANCE_DX: u32 = 8;
    /// Per-pixel counter buffer (u64) and its row length in pixels (u32).
    pub const COUNTERS: u32 = 16;
    pub const WIDTH: u32 = 24;
    /// A constant colour (4 words).
    pub const COLOR: u32 = 32;
}

/// The harness's vertex kernel: fetches its vertex by `vtx_index`, offsets x by
/// `(instance - first instance) * INSTANCE_DX`, writes position, point size, clip distances and two varyings.
pub fn vertex_kernel() -> Vec<Instr> {
    let p = kargs::PUSH as u32;
    vec![
        csr_(0, csr::PARAM_LO),
        csr_(1, csr::PARAM_HI),
        r(Op::Ldg, MemSize::B64 as u8, 2, 0, N, N, p + push::VERTICES),
        csr_(4, gfx::csr::VTX_INDEX),
        movi(5, VERTEX_BYTES),
        r(Op::Imul, 0, 6, 4, 5, N, 0),
        movi(7, 0),
        r(Op::Iadd64, 0, 8, 2, 6, N, 0),
        r(Op::Ldg, MemSize::B128 as u8, 10, 8, N, N, 0),
        r(Op::Ldg, MemSize::B128 as u8, 14, 8, N, N, 16),
        r(Op::Ldg, MemSize::B128 as u8, 18, 8, N, N, 32),
        csr_(26, gfx::csr::VTX_INDEX),
        csr_(27, gfx::csr::VTX_INSTANCE),
        csr_(28, gfx::csr::DRAW_INDEX),
        csr_(29, gfx::csr::VTX_SLOT),
        // x += (instance - first instance) * dx
        csr_(30, gfx::csr::VTX_BASE_INSTANCE),
        r(Op::Isub, 0, 30, 27, 30, N, 0),
        r(Op::U2f, 0, 30, 30, N, N, 0),
        r(Op::Ldg, MemSize::B32 as u8, 31, 0, N, N, p + push::INSTANCE_DX),
        r(Op::Ffma, 0, 10, 30, 31, 10, 0),
        // The slot's address: vob + slot * STRIDE.
        movi(23, STRIDE),
        r(Op::Imul, 0, 22, 29, 23, N, 0),
        movi(23, 0),
        csr_(24, gfx::csr::VOB_LO),
        csr_(25, gfx::csr::VOB_HI),
        r(Op::Iadd64, 0, 24, 24, 22, N, 0),
        r(Op::Stg, MemSize::B128 as u8, N, 24, 10, N, vout::POSITION as u32),
        r(Op::Stg, MemSize::B128 as u8, N, 24, 18, N, vout::POINT_SIZE as u32),
        r(Op::Stg, MemSize::B128 as u8, N, 24, 14, N, vout::varying(0, 0) as u32),
        r(Op::Stg, MemSize::B128 as u8, N, 24, 26, N, vout::varying(1, 0) as u32),
        exit(),
    ]
}

/// Fragment-kernel pieces. Registers: r0..r1 the kargs pointer, r2 frag_x, r3 frag_y; the
/// pieces use r4..r63.
pub mod fs {
    use super::*;

    pub fn prologue() -> Vec<Instr> {
        vec![csr_(0, csr::PARAM_LO), csr_(1, csr::PARAM_HI), csr_(2, gfx::csr::FRAG_X), csr_(3, gfx::csr::FRAG_Y)]
    }

    /// counters[y * WIDTH + x] += 1 (an atomic: helper lanes skip it).
    pub fn count() -> Vec<Instr> {
        let p = kargs::PUSH as u32;
        vec![
            r(Op::Ldg, MemSize::B32 as u8, 4, 0, N, N, p + push::WIDTH),
            r(Op::Imul, 0, 5, 3, 4, N, 0),
            r(Op::Iadd, 0, 5, 5, 2, N, 0),
            movi(6, 2),
            r(Op::Shl, 0, 6, 5, 6, N, 0),
            movi(7, 0),
            r(Op::Ldg, MemSize::B64 as u8, 8, 0, N, N, p + push::COUNTERS),
            r(Op::Iadd64, 0, 8, 8, 6, N, 0),
            movi(10, 1),
            r(Op::Atomg, AtomicOp::Add as u8, N, 8, 10, N, 0),
        ]
    }

    /// counters[y * WIDTH + x] = value of register `v` (a store: helper lanes skip it).
    pub fn store(v: u16) -> Vec<Instr> {
        let mut c = count();
        c.truncate(8);
        c.push(r(Op::Stg, MemSize::B32 as u8, N, 8, v, N, 0));
        c
    }

    /// r40..r43 = varying `loc` interpolated with the perspective (or linear) barycentrics.
    pub fn interpolate(loc: usize, linear: bool) -> Vec<Instr> {
        let (bi, bj) = if linear {
            (gfx::csr::FRAG_BARY_LINEAR_I, gfx::csr::FRAG_BARY_LINEAR_J)
        } else {
            (gfx::csr::FRAG_BARY_I, gfx::csr::FRAG_BARY_J)
        };
        let mut c = vec![
            csr_(12, bi),
            csr_(13, bj),
            csr_(14, gfx::csr::VOB_LO),
            csr_(15, gfx::csr::VOB_HI),
            movi(17, STRIDE),
            movi(19, 0),
        ];
        for (k, id) in [gfx::csr::FRAG_VTX0, gfx::csr::FRAG_VTX1, gfx::csr::FRAG_VTX2].into_iter().enumerate() {
            let v = 20 + 4 * k as u16;
            c.extend([
                csr_(16, id),
                r(Op::Imul, 0, 18, 16, 17, N, 0),
                r(Op::Iadd64, 0, 32, 14, 18, N, 0),
                r(Op::Ldg, MemSize::B128 as u8, v, 32, N, N, vout::varying(loc, 0) as u32),
            ]);
        }
        for comp in 0..4u16 {
            let (v0, v1, v2, o) = (20 + comp, 24 + comp, 28 + comp, 40 + comp);
            c.extend([
                r(Op::Fsub, 0, 34, v1, v0, N, 0),
                r(Op::Ffma, 0, o, 34, 12, v0, 0),
                r(Op::Fsub, 0, 35, v2, v0, N, 0),
                r(Op::Ffma, 0, o, 35, 13, o, 0),
            ]);
        }
        c
    }

    /// Colour location `loc` from registers `a..a+4`, the fragment's last export.
    pub fn export_color(loc: u8, a: u16) -> Instr {
        r(Op::Exp, export::COLOR0 + loc, N, a, N, N, export::DONE)
    }

    /// r40..r43 = the push constants' colour.
    pub fn push_color() -> Instr {
        r(Op::Ldg, MemSize::B128 as u8, 40, 0, N, N, kargs::PUSH as u32 + push::COLOR)
    }

    /// r40..r43 = four CSRs.
    pub fn csrs(ids: [u32; 4]) -> Vec<Instr> {
        (0..4).map(|k| csr_(40 + k as u16, ids[k])).collect()
    }

    /// r40..r43 = varying `loc` of the provoking vertex (flat).
    pub fn flat(loc: usize) -> Vec<Instr> {
        vec![
            csr_(14, gfx::csr::VOB_LO),
            csr_(15, gfx::csr::VOB_HI),
            movi(17, STRIDE),
            movi(19, 0),
            csr_(16, gfx::csr::FRAG_VTX0),
            r(Op::Imul, 0, 18, 16, 17, N, 0),
            r(Op::Iadd64, 0, 32, 14, 18, N, 0),
            r(Op::Ldg, MemSize::B128 as u8, 40, 32, N, N, vout::varying(loc, 0) as u32),
        ]
    }

    /// The counting kernel that also exports four CSRs to colour location 0.
    pub fn count_and_export(ids: [u32; 4]) -> Vec<Instr> {
        [prologue(), count(), csrs(ids), vec![export_color(0, 40), exit()]].concat()
    }
}

/// A draw state record, field by field.
#[derive(Clone)]
pub struct State(pub Vec<u8>);

impl State {
    /// Triangle list, fill, no culling, a `w` x `h` target with viewport and scissor over
    /// it, depth range [0, 1], sample mask on, stride for the harness's vertex kernel.
    pub fn new(w: u32, h: u32) -> State {
        let mut s = State(vec![0; st::BYTES]);
        s.u(st::TOPOLOGY, 3);
        s.f(st::LINE_WIDTH, 1.0);
        s.viewport(0.0, 0.0, w as f32, h as f32);
        s.f(st::VIEWPORT + 20, 1.0);
        s.u(st::SCISSOR + 8, w);
        s.u(st::SCISSOR + 12, h);
        s.u(st::SAMPLES, 1);
        s.u(st::SAMPLE_MASK, !0);
        s.u(st::DEPTH_COMPARE, 7);
        s.f(st::DEPTH_BOUNDS_MAX, 1.0);
        s.u(st::VOUT_STRIDE, STRIDE);
        s.u(st::TARGET_WIDTH, w);
        s.u(st::TARGET_HEIGHT, h);
        s
    }

    pub fn u(&mut self, off: usize, v: u32) -> &mut State {
        self.0[off..off + 4].copy_from_slice(&v.to_le_bytes());
        self
    }

    pub fn f(&mut self, off: usize, v: f32) -> &mut State {
        self.u(off, v.to_bits())
    }

    pub fn a64(&mut self, off: usize, v: u64) -> &mut State {
        self.0[off..off + 8].copy_from_slice(&v.to_le_bytes());
        self
    }

    pub fn flags(&mut self, f: u32) -> &mut State {
        let old = u32::from_le_bytes(self.0[st::FLAGS..st::FLAGS + 4].try_into().unwrap());
        self.u(st::FLAGS, old | f)
    }

    pub fn viewport(&mut self, x: f32, y: f32, w: f32, h: f32) -> &mut State {
        for (i, v) in [x, y, w, h].into_iter().enumerate() {
            self.f(st::VIEWPORT + 4 * i, v);
        }
        self
    }

    /// Colour attachment `k` (blending off, every component written).
    pub fn color(&mut self, k: usize, addr: u64, format: u32, pitch: u32) -> &mut State {
        let o = st::COLOR + k * st::attachment::BYTES;
        self.a64(o + st::attachment::ADDR, addr);
        self.u(o + st::attachment::FORMAT, format);
        self.u(o + st::attachment::ROW_PITCH, pitch);
        self.u(o + st::attachment::WRITE_MASK, 0xF);
        let n = u32::from_le_bytes(self.0[st::COLOR_COUNT..st::COLOR_COUNT + 4].try_into().unwrap());
        self.u(st::COLOR_COUNT, n.max(k as u32 + 1))
    }

    /// Colour attachment `k`'s blend state: factors and ops (colour, then alpha).
    pub fn blend(&mut self, k: usize, f: [u32; 6], mask: u32) -> &mut State {
        use st::attachment as a;
        let o = st::COLOR + k * a::BYTES;
        self.u(o + a::BLEND_ENABLE, 1);
        for (i, off) in
            [a::SRC_COLOR, a::DST_COLOR, a::COLOR_OP, a::SRC_ALPHA, a::DST_ALPHA, a::ALPHA_OP].into_iter().enumerate()
        {
            self.u(o + off, f[i]);
        }
        self.u(o + a::WRITE_MASK, mask)
    }

    /// The depth/stencil attachment (stencil plane at `stencil`, pitch `spitch`).
    pub fn depth(&mut self, addr: u64, format: u32, pitch: u32, stencil: u64, spitch: u32) -> &mut State {
        use st::attachment as a;
        self.a64(st::DEPTH + a::ADDR, addr);
        self.u(st::DEPTH + a::FORMAT, format);
        self.u(st::DEPTH + a::ROW_PITCH, pitch);
        self.a64(st::DEPTH + a::STENCIL_ADDR, stencil);
        self.u(st::DEPTH + a::STENCIL_PITCH, spitch)
    }

    /// Stencil face at `off` (`STENCIL_FRONT` or `STENCIL_BACK`): fail, pass, depth-fail
    /// ops, compare, compare mask, write mask, reference.
    pub fn stencil(&mut self, off: usize, v: [u32; 7]) -> &mut State {
        for (i, x) in v.into_iter().enumerate() {
            self.u(off + 4 * i, x);
        }
        self
    }
}

/// One draw's inputs.
pub struct Draw<'a> {
    pub vs: &'a [Instr],
    /// `None`: no fragment kernel.
    pub fs: Option<&'a [Instr]>,
    pub state: &'a State,
    pub vertices: &'a [Vertex],
    /// Index buffer contents and type (`abi::gfx::index_type`).
    pub indices: Option<(Vec<u8>, u32)>,
    pub vertex_count: u32,
    pub instance_count: u32,
    pub vertex_base: u32,
    pub first_instance: u32,
    pub push: Vec<u8>,
    /// An index buffer address to use instead of allocating `indices` (its type from them).
    pub index_addr: Option<u64>,
}

impl<'a> Draw<'a> {
    pub fn new(vs: &'a [Instr], fs: Option<&'a [Instr]>, state: &'a State, vertices: &'a [Vertex]) -> Draw<'a> {
        Draw {
            vs,
            fs,
            state,
            vertices,
            indices: None,
            vertex_count: vertices.len() as u32,
            instance_count: 1,
            vertex_base: 0,
            first_instance: 0,
            push: Vec::new(),
            index_addr: None,
        }
    }
}

pub struct Gfx {
    pub dev: Device,
    next_id: u64,
}

impl Gfx {
    pub fn new(cfg: DeviceConfig) -> Gfx {
        Gfx { dev: Device::new(cfg).unwrap(), next_id: 1 }
    }

    pub fn alloc(&self, bytes: &[u8]) -> u64 {
        let region = self.dev.memory().allocate(bytes.len().max(1) as u64).unwrap();
        self.dev.memory().snapshot().write(region.base, bytes).unwrap();
        region.base
    }

    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.dev.memory().snapshot().read(addr, &mut v).unwrap();
        v
    }

    pub fn read_u32s(&self, addr: u64, n: usize) -> Vec<u32> {
        self.read(addr, 4 * n).chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    pub fn write(&self, addr: u64, bytes: &[u8]) {
        self.dev.memory().snapshot().write(addr, bytes).unwrap();
    }

    fn image(&mut self, code: &[Instr], name: &str) -> u64 {
        let h = KernelHeader { kernel_id: self.next_id, private_bytes: 16, ..KernelHeader::new(64, [1, 1, 1]) };
        self.next_id += 1;
        self.alloc(&build_image(h, code, name))
    }

    pub fn draw(&mut self, d: &Draw) -> Result<DispatchReport, Fault> {
        let vs = self.image(d.vs, "vs");
        let fs = d.fs.map_or(0, |c| self.image(c, "fs"));
        let mut k = vec![0u8; kargs::BYTES];
        let mut push = d.push.clone();
        push.resize(push.len().max(16), 0);
        let vb: Vec<u8> = d.vertices.iter().flat_map(Vertex::bytes).collect();
        push[..8].copy_from_slice(&self.alloc(&vb).to_le_bytes());
        k[kargs::PUSH..kargs::PUSH + push.len()].copy_from_slice(&push);
        let param = self.alloc(&k);
        let state = self.alloc(&d.state.0);
        let slots = d.vertex_count as u64 * d.instance_count as u64;
        let vob = self.alloc(&vec![0u8; (slots * STRIDE as u64).max(1) as usize]);
        let (index, itype) = match &d.indices {
            Some((b, t)) => (d.index_addr.unwrap_or_else(|| self.alloc(b)), *t),
            None => (0, 0),
        };
        let writes = [
            (gdcr::GFX_VS_PC_LO, vs as u32),
            (gdcr::GFX_VS_PC_HI, (vs >> 32) as u32),
            (gdcr::GFX_FS_PC_LO, fs as u32),
            (gdcr::GFX_FS_PC_HI, (fs >> 32) as u32),
            (gdcr::GFX_PARAM_LO, param as u32),
            (gdcr::GFX_PARAM_HI, (param >> 32) as u32),
            (gdcr::GFX_STATE_LO, state as u32),
            (gdcr::GFX_STATE_HI, (state >> 32) as u32),
            (gdcr::GFX_VOB_LO, vob as u32),
            (gdcr::GFX_VOB_HI, (vob >> 32) as u32),
            (gdcr::GFX_VERTEX_COUNT, d.vertex_count),
            (gdcr::GFX_INSTANCE_COUNT, d.instance_count),
            (gdcr::GFX_VERTEX_BASE, d.vertex_base),
            (gdcr::GFX_FIRST_INSTANCE, d.first_instance),
            (gdcr::GFX_INDEX_LO, index as u32),
            (gdcr::GFX_INDEX_HI, (index >> 32) as u32),
            (gdcr::GFX_INDEX_TYPE, itype),
            (gdcr::GFX_DRAW_INDEX, 7),
        ];
        for (a, v) in writes {
            self.dev.dcr_write(a, v).unwrap();
        }
        self.dev.dcr_write(gdcr::GFX_START, 1).unwrap();
        self.dev.draw()
    }
}

/// Push constants with the counter buffer and its width set (the rest zero).
pub fn push_counters(counters: u64, width: u32) -> Vec<u8> {
    let mut p = vec![0u8; 48];
    p[push::COUNTERS as usize..][..8].copy_from_slice(&counters.to_le_bytes());
    p[push::WIDTH as usize..][..4].copy_from_slice(&width.to_le_bytes());
    p
}

/// A `w` x `h` attachment of `bpp`-byte texels filled with `fill` (one texel's bytes).
pub fn target(g: &Gfx, w: u32, h: u32, fill: &[u8]) -> u64 {
    let bytes: Vec<u8> = (0..w * h).flat_map(|_| fill.iter().copied()).collect();
    g.alloc(&bytes)
}

/// Texel (`x`, `y`) of a `w`-wide attachment of `bpp`-byte texels, as words.
pub fn texel(g: &Gfx, addr: u64, w: u32, bpp: u32, x: u32, y: u32) -> Vec<u32> {
    let t = g.read(addr + ((y * w + x) * bpp) as u64, bpp as usize);
    if bpp < 4 {
        return vec![t.iter().rev().fold(0, |v, &b| v << 8 | b as u32)];
    }
    t.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Words as f32.
pub fn floats(v: &[u32]) -> Vec<f32> {
    v.iter().map(|&x| f32::from_bits(x)).collect()
}

/// Push constants with a colour.
pub fn push_color(mut p: Vec<u8>, c: [f32; 4]) -> Vec<u8> {
    p.resize(p.len().max(48), 0);
    for (i, v) in c.iter().enumerate() {
        p[push::COLOR as usize + 4 * i..][..4].copy_from_slice(&v.to_le_bytes());
    }
    p
}

/// A vertex in clip space.
pub fn clip(x: f32, y: f32, z: f32, w: f32) -> Vertex {
    Vertex { pos: [x, y, z, w], point_size: 1.0, ..Default::default() }
}
