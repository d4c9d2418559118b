//! The raster unit: everything between the vertex output buffer and the fragment warps.
//!
//! Per instance, in primitive order: primitive assembly ([`crate::gfx::assembly`]), the
//! vertices' positions, point sizes and clip distances from their slots, clipping in clip
//! space ([`clip`]), the perspective divide and viewport transform, facing and culling,
//! depth bias ([`setup`]), coverage on the sub-pixel grid with the top-left rule, inside the
//! scissor ([`scan`]), then quads: tested early by the output merger when the draw allows it,
//! and binned by tile into fragment warps ([`bin`]).
//!
//! Triangles in polygon mode `LINE` or `POINT` become their edges or vertices, which keep
//! the triangle's facing, depth bias, slots and primitive ID. Lines are parallelograms of
//! the line width (non-strict lines), points squares of their size; both are rasterized as
//! two triangles whose coverage is merged.

pub mod bin;
pub mod clip;
pub mod scan;
pub mod setup;

use super::assembly::{self, Kind, Primitive};
use super::ia::VertexStage;
use super::om::{self, OmStats, When};
use super::state::DrawState;
use super::DrawStats;
use crate::abi::gfx::{limits, state::flags, vout};
use crate::abi::rd_f32;
use crate::fault::Fault;
use crate::mem::MemoryMap;
use bin::Binner;
use clip::{ClipVertex, Clipped, Planes};
use setup::{Interp, RasterPrim, ScreenVertex, Viewport};

/// A 2x2 quad of fragments of one rasterized primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quad {
    /// Top-left pixel (even coordinates).
    pub x: u32,
    pub y: u32,
    /// Index into the draw's rasterized primitives.
    pub prim: u32,
    /// Covered pixels that live on (bit `i`: pixel `i` of the quad).
    pub cover: u8,
}

/// What the raster unit hands the fragment stage.
pub struct Rasterized {
    pub prims: Vec<RasterPrim>,
    pub quads: Vec<Quad>,
    pub binner: Binner,
    /// Timed mode: the cycles the raster unit took (its last quad, or its last setup).
    pub cycles: u64,
}

/// The raster unit's clock (timed mode's schedule; functional mode computes it too, it
/// changes nothing): primitives set up one every `setup_cycles`, each primitive's quads
/// come out `raster_latency` after its setup, `raster_quads_per_cycle` a cycle, in order.
#[derive(Clone, Copy, Debug)]
struct Clock {
    setup_cycles: u64,
    latency: u64,
    per_cycle: u32,
    next_setup: u64,
    /// The cycle quads are coming out in, and how many came out in it.
    t: u64,
    n: u32,
    /// The current primitive's earliest quad cycle.
    first: u64,
}

impl Clock {
    fn new(cfg: &crate::config::GfxConfig) -> Clock {
        Clock {
            setup_cycles: cfg.setup_cycles as u64,
            latency: cfg.raster_latency as u64,
            per_cycle: cfg.raster_quads_per_cycle,
            next_setup: 0,
            t: 0,
            n: 0,
            first: 0,
        }
    }

    /// A primitive enters setup.
    fn primitive(&mut self) {
        self.first = self.next_setup + self.latency;
        self.next_setup += self.setup_cycles;
    }

    /// The cycle of the current primitive's next quad.
    fn quad(&mut self) -> u64 {
        if self.first > self.t {
            (self.t, self.n) = (self.first, 0);
        }
        if self.n == self.per_cycle {
            (self.t, self.n) = (self.t + 1, 0);
        }
        self.n += 1;
        self.t
    }

    fn end(&self) -> u64 {
        self.next_setup.max(self.t + (self.n > 0) as u64)
    }
}

/// How the raster unit runs one draw.
pub struct Raster<'a> {
    pub state: &'a DrawState,
    pub vs: &'a VertexStage,
    pub mem: &'a MemoryMap,
    /// Quads go on to fragment warps (a fragment kernel exists).
    pub shade: bool,
    /// The output merger tests depth and stencil here, before any fragment runs.
    pub early: bool,
    pub cfg: &'a crate::config::GfxConfig,
    pub cores: u32,
    pub nt: usize,
}

/// The raster unit's working state for one draw.
struct Unit<'a> {
    r: &'a Raster<'a>,
    viewport: Viewport,
    planes: Planes,
    /// Scissor and render target: pixels `[x0, x1) x [y0, y1)`.
    rect: [i64; 4],
    out: Rasterized,
    stats: DrawStats,
    om: OmStats,
    clock: Clock,
}

/// A vertex as the raster unit reads it from its slot.
struct Fetched {
    clip: ClipVertex,
    point_size: f32,
}

impl Raster<'_> {
    /// Runs the raster unit over the whole draw.
    pub fn run(&self) -> Result<(Rasterized, DrawStats, OmStats), Fault> {
        let st = self.state;
        let vp = Viewport::new(st.viewport);
        let g = limits::GUARD_BAND as f64;
        let guard = [g / vp.hx.abs().max(0.5), g / vp.hy.abs().max(0.5)];
        let mut u = Unit {
            r: self,
            viewport: vp,
            planes: Planes { depth: !st.has(flags::DEPTH_CLAMP), guard, distances: st.clip_distances },
            rect: st.scissor,
            out: Rasterized {
                prims: Vec::new(),
                quads: Vec::new(),
                binner: Binner::new(self.cfg.tile_size, st.target[0], st.target[1], self.cores, self.nt),
                cycles: 0,
            },
            stats: DrawStats::default(),
            om: OmStats::default(),
            clock: Clock::new(self.cfg),
        };
        if st.has(flags::RASTERIZER_DISCARD) {
            return Ok((u.out, u.stats, u.om));
        }
        let regs = &self.vs.regs;
        let prims = assembly::assemble(st.assembly, regs.vertex_count, st.has(flags::PROVOKING_LAST), |p| {
            self.vs.is_restart(p)
        });
        for inst in 0..regs.instance_count {
            for p in &prims {
                u.primitive(inst, p)?;
            }
        }
        u.out.cycles = u.clock.end();
        u.out.binner.finish(u.out.cycles);
        u.stats.tiles = u.out.binner.tiles;
        u.stats.fragment_warps = u.out.binner.warps.len() as u64;
        Ok((u.out, u.stats, u.om))
    }
}

impl Unit<'_> {
    fn fetch(&self, slot: u32, k: usize) -> Result<Fetched, Fault> {
        let st = self.r.state;
        let n = vout::CLIP_DISTANCE + 4 * st.clip_distances;
        let mut b = [0u8; vout::VARYING];
        let addr = self.r.vs.regs.vob.wrapping_add(slot as u64 * st.vout_stride);
        self.r.mem.read(addr, &mut b[..n]).map_err(Fault::memory)?;
        let mut v = ClipVertex { c: [0.0; 4], d: [0.0; 8], b: [0.0; 3] };
        v.b[k] = 1.0;
        for i in 0..4 {
            v.c[i] = rd_f32(&b, vout::POSITION + 4 * i) as f64;
        }
        for i in 0..st.clip_distances {
            v.d[i] = rd_f32(&b, vout::CLIP_DISTANCE + 4 * i) as f64;
        }
        Ok(Fetched { clip: v, point_size: rd_f32(&b, vout::POINT_SIZE) })
    }

    fn primitive(&mut self, inst: u32, p: &Primitive) -> Result<(), Fault> {
        self.stats.primitives += 1;
        self.clock.primitive();
        let base = inst * self.r.vs.regs.vertex_count;
        let slots = p.pos.map(|pos| base.wrapping_add(pos));
        let info = Info { slots, front: true, id: p.id, bias: 0.0 };
        match p.kind {
            Kind::Triangle => {
                let v = [self.fetch(slots[0], 0)?, self.fetch(slots[1], 1)?, self.fetch(slots[2], 2)?];
                self.triangle(&v, info)
            }
            Kind::Line => {
                let v = [self.fetch(slots[0], 0)?, self.fetch(slots[1], 1)?];
                self.line([v[0].clip, v[1].clip], info)
            }
            Kind::Point => {
                let v = self.fetch(slots[0], 0)?;
                self.point(&v, info)
            }
        }
    }

    fn triangle(&mut self, v: &[Fetched; 3], mut info: Info) -> Result<(), Fault> {
        let st = self.r.state;
        let mut poly: Vec<ClipVertex> = v.iter().map(|f| f.clip).collect();
        match clip::polygon(&mut poly, &self.planes) {
            Clipped::Gone => {
                self.stats.clipped_away += 1;
                return Ok(());
            }
            Clipped::Cut => self.stats.clipped += 1,
            Clipped::Inside => {}
        }
        let sv: Vec<ScreenVertex> = poly.iter().map(|c| self.viewport.project(c)).collect();
        let snapped: Vec<[i64; 2]> = sv.iter().map(ScreenVertex::snap).collect();
        let area = setup::area2(&snapped);
        info.front = setup::front_facing(area, st.has(flags::FRONT_CCW));
        let culled = area == 0 || (info.front && st.cull_mode & 1 != 0) || (!info.front && st.cull_mode & 2 != 0);
        if culled {
            self.stats.culled += 1;
            return Ok(());
        }
        if st.has(flags::DEPTH_BIAS) {
            let fmt = st.depth.and_then(|d| d.format.depth());
            info.bias = setup::depth_bias(&[sv[0], sv[1], sv[2]], fmt, st.bias_constant, st.bias_slope, st.bias_clamp);
        }
        match st.polygon_mode {
            1 => {
                // The edges keep the triangle's slots: their ends' barycentrics are the
                // triangle's, so fragments interpolate (and flat inputs read) the triangle.
                for (a, b) in [(0, 1), (1, 2), (2, 0)] {
                    self.line([v[a].clip, v[b].clip], info)?;
                }
                Ok(())
            }
            2 => {
                for f in v {
                    self.point(f, info)?;
                }
                Ok(())
            }
            _ => self.fill(&sv, &snapped, area, info),
        }
    }

    /// A clipped polygon as a fan of triangles, each clockwise on the grid.
    fn fill(&mut self, sv: &[ScreenVertex], snapped: &[[i64; 2]], area: i64, info: Info) -> Result<(), Fault> {
        for i in 1..sv.len() - 1 {
            let mut k = [0, i, i + 1];
            if area < 0 {
                k.swap(1, 2);
            }
            let v = k.map(|k| snapped[k]);
            let a = setup::area2(&v);
            if a <= 0 {
                continue;
            }
            let interp = Interp::Triangle {
                v,
                area2: a,
                z: k.map(|k| sv[k].z),
                invw: k.map(|k| sv[k].invw),
                b: k.map(|k| sv[k].b),
            };
            let prim = self.add_prim(interp, &info);
            let rect = self.rect;
            let mut quads = Vec::new();
            scan::triangle(&v, rect, |x, y, m| quads.push((x, y, m)));
            for (x, y, m) in quads {
                self.quad(prim, x, y, m)?;
            }
        }
        Ok(())
    }

    /// A line with barycentrics `b` of its ends in the primitive: clipped, then a
    /// parallelogram of the line width, extended along the minor axis.
    fn line(&mut self, mut seg: [ClipVertex; 2], info: Info) -> Result<(), Fault> {
        match clip::segment(&mut seg, &self.planes) {
            Clipped::Gone => {
                self.stats.clipped_away += 1;
                return Ok(());
            }
            Clipped::Cut => self.stats.clipped += 1,
            Clipped::Inside => {}
        }
        let p = seg.map(|c| self.viewport.project(&c));
        let d = [p[1].x - p[0].x, p[1].y - p[0].y];
        if d == [0.0, 0.0] {
            self.stats.culled += 1;
            return Ok(());
        }
        let w = (self.r.state.line_width as f64).clamp(limits::LINE_WIDTH_MIN as f64, limits::LINE_WIDTH_MAX as f64);
        let o = if d[0].abs() >= d[1].abs() { [0.0, w / 2.0] } else { [w / 2.0, 0.0] };
        let corner = |q: &ScreenVertex, s: f64| ScreenVertex { x: q.x + s * o[0], y: q.y + s * o[1], ..*q }.snap();
        let c = [corner(&p[0], -1.0), corner(&p[1], -1.0), corner(&p[1], 1.0), corner(&p[0], 1.0)];
        let interp =
            Interp::Line { p: p.map(|q| [q.x, q.y]), z: p.map(|q| q.z), invw: p.map(|q| q.invw), b: p.map(|q| q.b) };
        self.quad_shape(&c, interp, info)
    }

    fn point(&mut self, v: &Fetched, info: Info) -> Result<(), Fault> {
        if !self.planes.point_inside(&v.clip) {
            self.stats.clipped_away += 1;
            return Ok(());
        }
        let p = self.viewport.project(&v.clip);
        let size = (v.point_size as f64).clamp(limits::POINT_SIZE_MIN as f64, limits::POINT_SIZE_MAX as f64);
        let h = size / 2.0;
        let corner = |dx: f64, dy: f64| ScreenVertex { x: p.x + dx, y: p.y + dy, ..p }.snap();
        let c = [corner(-h, -h), corner(h, -h), corner(h, h), corner(-h, h)];
        let interp = Interp::Point { c: [p.x, p.y], size, z: p.z, invw: p.invw, b: p.b };
        self.quad_shape(&c, interp, info)
    }

    /// Rasterizes quadrilateral `c` (as two triangles, coverage merged per quad) for one
    /// primitive.
    fn quad_shape(&mut self, c: &[[i64; 2]; 4], interp: Interp, info: Info) -> Result<(), Fault> {
        let mut cover: std::collections::BTreeMap<(u32, u32), u8> = Default::default();
        for t in [[c[0], c[1], c[2]], [c[0], c[2], c[3]]] {
            let t = if setup::area2(&t) < 0 { [t[0], t[2], t[1]] } else { t };
            if setup::area2(&t) == 0 {
                continue;
            }
            scan::triangle(&t, self.rect, |x, y, m| *cover.entry((y, x)).or_default() |= m);
        }
        if cover.is_empty() {
            return Ok(());
        }
        let prim = self.add_prim(interp, &info);
        for ((y, x), m) in cover {
            self.quad(prim, x, y, m)?;
        }
        Ok(())
    }

    fn add_prim(&mut self, interp: Interp, info: &Info) -> u32 {
        let prims = &mut self.out.prims;
        prims.push(RasterPrim { interp, slots: info.slots, front: info.front, id: info.id, bias: info.bias });
        (prims.len() - 1) as u32
    }

    /// One quad of primitive `prim`: the early tests when they apply, then binning.
    fn quad(&mut self, prim: u32, x: u32, y: u32, mut cover: u8) -> Result<(), Fault> {
        let st = self.r.state;
        let t = self.clock.quad();
        self.stats.quads += 1;
        self.stats.fragments += cover.count_ones() as u64;
        if st.sample_mask & 1 == 0 {
            self.om.sample_mask_kills += cover.count_ones() as u64;
            return Ok(());
        }
        if self.r.early {
            let p = &self.out.prims[prim as usize];
            for i in 0..4 {
                if cover >> i & 1 == 0 {
                    continue;
                }
                let (px, py) = (x + (i & 1), y + (i >> 1));
                let z = om::clamp_depth(st, p.at(px, py).z);
                if !om::depth_stencil(st, self.r.mem, px, py, z, p.front, When::Early, &mut self.om)? {
                    cover &= !(1 << i);
                }
            }
        }
        if !self.r.shade {
            self.om.passed += cover.count_ones() as u64;
        }
        if cover == 0 || !self.r.shade {
            return Ok(());
        }
        let q = self.out.quads.len() as u32;
        self.out.quads.push(Quad { x, y, prim, cover });
        self.out.binner.add(q, x, y, t);
        Ok(())
    }
}

/// What a primitive's pieces share.
#[derive(Clone, Copy, Debug)]
struct Info {
    slots: [u32; 3],
    front: bool,
    id: u32,
    bias: f64,
}
