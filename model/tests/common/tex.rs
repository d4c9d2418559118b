//! A harness for the texture unit: images laid out by `gfx::image`'s level rule, sampler
//! records, and a kernel that runs one `TEX` per lane with its operand block loaded from a
//! buffer and its four results stored to another.

use vortex_model::abi::csr;
use vortex_model::abi::dcr::Launch;
use vortex_model::abi::format::{self, view_type as vt};
use vortex_model::abi::gfx::{sampler as rec, tex};
use vortex_model::abi::isa::{Instr, MemSize, Op, REG_NONE as N};
use vortex_model::abi::kernel::{build_image, desc, kargs, ImageDesc, KernelHeader, SampledDesc};
use vortex_model::abi::{wr_f32, wr_u32};
use vortex_model::config::DeviceConfig;
use vortex_model::device::{Device, DispatchReport};
use vortex_model::fault::Fault;

/// Words of operand block each lane's input holds.
pub const WORDS: usize = 16;

pub struct Tex {
    pub dev: Device,
    next_id: u64,
}

/// An image to build: format, view type, base extent, layers and levels; texel values come
/// from a function of (level, layer, x, y, z) as register words.
pub struct ImageSpec {
    pub format: u32,
    pub view: u32,
    pub extent: [u32; 3],
    pub layers: u32,
    pub levels: u32,
}

/// A sampler record's fields (Vulkan's numbers).
#[derive(Clone, Copy, Debug)]
pub struct SamplerSpec {
    pub mag: u32,
    pub min: u32,
    pub mip: u32,
    pub address: [u32; 3],
    pub bias: f32,
    pub compare: Option<u32>,
    pub min_lod: f32,
    pub max_lod: f32,
    pub border: u32,
    pub custom: [u32; 4],
    pub unnormalized: bool,
}

impl Default for SamplerSpec {
    fn default() -> Self {
        SamplerSpec {
            mag: 0,
            min: 0,
            mip: 0,
            address: [2; 3],
            bias: 0.0,
            compare: None,
            min_lod: 0.0,
            max_lod: 1000.0,
            border: 0,
            custom: [0; 4],
            unnormalized: false,
        }
    }
}

pub fn f(x: f32) -> u32 {
    x.to_bits()
}

pub fn fv(w: [u32; 4]) -> [f32; 4] {
    w.map(f32::from_bits)
}

impl Tex {
    pub fn new(cfg: DeviceConfig) -> Tex {
        Tex { dev: Device::new(cfg).unwrap(), next_id: 1 }
    }

    pub fn alloc(&self, bytes: &[u8]) -> u64 {
        let region = self.dev.memory().allocate(bytes.len().max(1) as u64).unwrap();
        self.dev.memory().snapshot().write(region.base, bytes).unwrap();
        region.base
    }

    /// Lays the image out level after level, each level as every layer, each layer as
    /// depth slices of rows, extents halving per level, and returns the sampled-image
    /// record of a view of layers `first..first + count` (all levels).
    pub fn image_view(
        &self,
        s: &ImageSpec,
        first: u32,
        count: u32,
        texel: impl Fn(u32, u32, u32, u32, u32) -> [u32; 4],
    ) -> [u8; desc::BYTES] {
        let fmt = format::find(s.format).unwrap();
        let tb = fmt.texel_bytes() as usize;
        let mut bytes = Vec::new();
        let mut level0 = None;
        for level in 0..s.levels {
            let [w, h, d] = s.extent.map(|e| (e >> level).max(1));
            if level == 0 {
                level0 = Some((w, h, d));
            }
            for layer in 0..s.layers {
                for z in 0..d {
                    for y in 0..h {
                        for x in 0..w {
                            let mut t = [0u8; 16];
                            format::encode_texel(fmt, texel(level, layer, x, y, z), &mut t[..tb]);
                            bytes.extend_from_slice(&t[..tb]);
                        }
                    }
                }
            }
        }
        let base = self.alloc(&bytes);
        let (w, h, d) = level0.unwrap();
        let layer_pitch = w * h * d * tb as u32;
        let img = ImageDesc {
            addr: base + (first * layer_pitch) as u64,
            format: s.format,
            view_type: s.view,
            width: w,
            height: h,
            depth: d,
            layers: count,
            row_pitch: w * tb as u32,
            slice_pitch: w * h * tb as u32,
            layer_pitch,
            texel_bytes: tb as u32,
        };
        let mut rec = [0u8; desc::BYTES];
        SampledDesc { base: img, levels: s.levels, image_layers: s.layers, base_layer: first }.write(&mut rec);
        rec
    }

    /// An image and a view of all of it; returns the record's device address.
    pub fn image(&self, s: &ImageSpec, texel: impl Fn(u32, u32, u32, u32, u32) -> [u32; 4]) -> u64 {
        let rec = self.image_view(s, 0, s.layers, texel);
        self.alloc(&rec)
    }

    pub fn sampler(&self, s: &SamplerSpec) -> u64 {
        let mut b = [0u8; rec::BYTES];
        wr_u32(&mut b, rec::MAG_FILTER, s.mag);
        wr_u32(&mut b, rec::MIN_FILTER, s.min);
        wr_u32(&mut b, rec::MIPMAP_MODE, s.mip);
        wr_u32(&mut b, rec::ADDRESS_U, s.address[0]);
        wr_u32(&mut b, rec::ADDRESS_V, s.address[1]);
        wr_u32(&mut b, rec::ADDRESS_W, s.address[2]);
        wr_f32(&mut b, rec::MIP_LOD_BIAS, s.bias);
        let flags = if s.compare.is_some() { rec::flags::COMPARE } else { 0 }
            | if s.unnormalized { rec::flags::UNNORMALIZED } else { 0 };
        wr_u32(&mut b, rec::FLAGS, flags);
        wr_u32(&mut b, rec::COMPARE_OP, s.compare.unwrap_or(0));
        wr_f32(&mut b, rec::MIN_LOD, s.min_lod);
        wr_f32(&mut b, rec::MAX_LOD, s.max_lod);
        wr_u32(&mut b, rec::BORDER_COLOR, s.border);
        for k in 0..4 {
            wr_u32(&mut b, rec::CUSTOM_BORDER + 4 * k, s.custom[k]);
        }
        self.alloc(&b)
    }

    /// Runs `TEX` (`op`, `imm`) once per lane of `lanes` (each lane's operand block), with
    /// the image record at `image` and the sampler at `sampler` (0: none), in warps of 32
    /// lanes (quads are lanes 4q..4q+4). Returns each lane's four result words.
    pub fn run(&mut self, op: u8, imm: u32, image: u64, sampler: u64, lanes: &[Vec<u32>]) -> Vec<[u32; 4]> {
        self.try_run(op, imm, image, sampler, lanes).map(|(v, _)| v).unwrap_or_else(|f| panic!("{f:?}"))
    }

    pub fn try_run(
        &mut self,
        op: u8,
        imm: u32,
        image: u64,
        sampler: u64,
        lanes: &[Vec<u32>],
    ) -> Result<(Vec<[u32; 4]>, DispatchReport), Fault> {
        let n = lanes.len();
        let groups = n.div_ceil(32).max(1);
        let mut input = vec![0u8; groups * 32 * WORDS * 4];
        for (l, words) in lanes.iter().enumerate() {
            assert!(words.len() <= WORDS);
            for (k, w) in words.iter().enumerate() {
                input[(l * WORDS + k) * 4..][..4].copy_from_slice(&w.to_le_bytes());
            }
        }
        let inp = self.alloc(&input);
        let out = self.alloc(&vec![0u8; groups * 32 * 16]);
        let mut params = Vec::new();
        for p in [image, sampler, inp, out] {
            params.extend_from_slice(&p.to_le_bytes());
        }
        let block = if tex::operand_regs(op, imm).unwrap_or(0) == 0 { N } else { 16 };
        let code = kernel(op, imm, block, if sampler == 0 { N } else { 4 });
        let mut h = KernelHeader::new(40, [32, 1, 1]);
        h.kernel_id = self.next_id;
        self.next_id += 1;
        let img = build_image(h.clone(), &code, "tex");
        let pc = self.alloc(&img);
        let mut k = vec![0u8; kargs::BYTES];
        k[kargs::PUSH..kargs::PUSH + params.len()].copy_from_slice(&params);
        let param = self.alloc(&k);
        let launch =
            Launch { pc, param, grid: [groups as u32, 1, 1], block: [32, 1, 1], lmem_bytes: 0, cluster: [1, 1, 1] };
        for (a, v) in launch.kmu_writes(self.dev.config().num_threads) {
            self.dev.dcr_write(a, v).unwrap();
        }
        let rep = self.dev.start()?;
        let mut bytes = vec![0u8; n * 16];
        self.dev.memory().snapshot().read(out, &mut bytes).unwrap();
        let words = (0..n)
            .map(|l| [0, 1, 2, 3].map(|k| u32::from_le_bytes(bytes[(l * 4 + k) * 4..][..4].try_into().unwrap())))
            .collect();
        Ok((words, rep))
    }
}

fn r(op: Op, m: u8, d: u16, a: u16, b: u16, c: u16, imm: u32) -> Instr {
    Instr::r(op, m, d, a, b, c, N, imm)
}

/// r2:r3 image record, r4:r5 sampler, r6:r7 inputs, r8:r9 outputs, r10 lane's global id,
/// r16.. the operand block, r32..r35 the results.
fn kernel(op: u8, imm: u32, block: u16, sampler: u16) -> Vec<Instr> {
    let push = kargs::PUSH as u32;
    let mut c = vec![
        r(Op::Csr, 0, 0, N, N, N, csr::PARAM_LO),
        r(Op::Csr, 0, 1, N, N, N, csr::PARAM_HI),
        r(Op::Ldg, MemSize::B64 as u8, 2, 0, N, N, push),
        r(Op::Ldg, MemSize::B64 as u8, 4, 0, N, N, push + 8),
        r(Op::Ldg, MemSize::B64 as u8, 6, 0, N, N, push + 16),
        r(Op::Ldg, MemSize::B64 as u8, 8, 0, N, N, push + 24),
        r(Op::Csr, 0, 10, N, N, N, csr::CTA_BLOCK_ID_X),
        r(Op::Movi, 0, 11, N, N, N, 5),
        r(Op::Shl, 0, 10, 10, 11, N, 0),
        r(Op::Csr, 0, 11, N, N, N, csr::CTA_THREAD_ID_X),
        r(Op::Iadd, 0, 10, 10, 11, N, 0),
        // Inputs: 64 bytes a lane.
        r(Op::Movi, 0, 14, N, N, N, 6),
        r(Op::Shl, 0, 12, 10, 14, N, 0),
        r(Op::Movi, 0, 13, N, N, N, 0),
        r(Op::Iadd64, 0, 12, 6, 12, N, 0),
    ];
    for k in 0..4u16 {
        c.push(r(Op::Ldg, MemSize::B128 as u8, 16 + 4 * k, 12, N, N, 16 * k as u32));
    }
    c.extend([
        Instr::r(Op::Tex, op, 32, 2, block, sampler, N, imm),
        // Outputs: 16 bytes a lane.
        r(Op::Movi, 0, 14, N, N, N, 4),
        r(Op::Shl, 0, 12, 10, 14, N, 0),
        r(Op::Movi, 0, 13, N, N, N, 0),
        r(Op::Iadd64, 0, 12, 8, 12, N, 0),
        r(Op::Stg, MemSize::B128 as u8, N, 12, 32, N, 0),
        r(Op::Exit, 0, N, N, N, N, 0),
    ]);
    c
}

/// `imm` of a TEX: dimension, flags, LOD mode, offset, gather component.
pub fn imm(dim: u32, arrayed: bool, dref: bool, lod: u32, offset: [i32; 3], comp: u32) -> u32 {
    let mut v = dim | (lod << tex::LOD_SHIFT) | (comp << tex::GATHER_SHIFT);
    if arrayed {
        v |= tex::ARRAYED;
    }
    if dref {
        v |= tex::DREF;
    }
    for (k, o) in offset.iter().enumerate() {
        v |= ((*o as u32) & 0xF) << (tex::OFFSET_SHIFT + 4 * k as u32);
    }
    v
}

pub use vt::*;
