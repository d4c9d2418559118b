//! Kernel image, kernel-argument block and descriptor records.
//!
//! A *kernel image* lives in device memory at the address written to `KMU_PC`: a 64-byte
//! [`image`] header followed by the encoded instructions. The core decodes an image once and
//! caches the decoded form under its `kernel_id`.
//!
//! The *kernel-argument block* ([`kargs`]) is written by the runtime for every dispatch and
//! its address goes to `KMU_PARAM`; it holds the dispatch base, the descriptor-set addresses,
//! dynamic offsets and push constants. Descriptor sets are arrays of 64-byte
//! [`desc`] records in device memory, at offsets the set layout fixes.

use super::{rd_u16, rd_u32, rd_u64, wr_u16, wr_u32, wr_u64};

/// Kernel image header.
pub mod image {
    pub const MAGIC: u32 = u32::from_le_bytes(*b"VXK1");
    pub const VERSION: u16 = 1;
    pub const OFF_MAGIC: usize = 0;
    pub const OFF_VERSION: usize = 4;
    pub const OFF_FLAGS: usize = 6;
    /// Unique per compiled pipeline; the decode cache's key.
    pub const OFF_KERNEL_ID: usize = 8;
    pub const OFF_NUM_INSTRS: usize = 16;
    pub const OFF_NUM_REGS: usize = 20;
    pub const OFF_NUM_QUERIES: usize = 24;
    /// Private (per-lane) memory bytes.
    pub const OFF_PRIVATE_BYTES: usize = 28;
    /// Static LMEM bytes per CTA (workgroup shared memory).
    pub const OFF_LMEM_BYTES: usize = 32;
    pub const OFF_LOCAL_SIZE: usize = 36;
    pub const OFF_ENTRY: usize = 48;
    pub const OFF_CODE: usize = 52;
    pub const OFF_NAME: usize = 56;
    pub const OFF_NAME_LEN: usize = 60;
    pub const HEADER_BYTES: usize = 64;
    /// `flags` bit: a [`region`](super::region) table follows the name.
    pub const FLAG_REGIONS: u16 = 1;
}

/// Code regions: instruction ranges the compiler marks so timed mode can attribute what it
/// issues (the SIMT efficiency of a ray-tracing pipeline's shaders, `docs/TIMING.md`). With
/// [`image::FLAG_REGIONS`] the table follows the name at the next 4-byte boundary: a `u32`
/// count, then per region `start`, `end` (instruction indices, `start..end`) and `kind`, in
/// the order the regions open; a region nested in another comes later and wins for its
/// instructions.
pub mod region {
    /// Any-hit and intersection shaders run from a trace's candidate loop (the RTU's candidate
    /// callbacks, what a record batch feeds).
    pub const CANDIDATE_CALLBACK: u32 = 1;
    /// Closest-hit, miss and callable shaders.
    pub const HIT_SHADER: u32 = 2;
    pub const ENTRY_BYTES: usize = 12;
    /// Most regions an image may carry.
    pub const MAX: u32 = 1 << 16;

    /// Byte offset of the table in an image whose name ends at `name_end`.
    pub const fn table_offset(name_end: usize) -> usize {
        name_end.div_ceil(4) * 4
    }
}

/// One marked instruction range (`region`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeRegion {
    pub start: u32,
    pub end: u32,
    pub kind: u32,
}

impl CodeRegion {
    /// Decodes the table entries in `b` (after the count), checking each against
    /// `num_instrs` instructions and the known kinds.
    pub fn parse_all(b: &[u8], count: u32, num_instrs: u32) -> Result<Vec<CodeRegion>, String> {
        if count > region::MAX || b.len() < count as usize * region::ENTRY_BYTES {
            return Err(format!("region table of {count} entries does not fit"));
        }
        (0..count as usize)
            .map(|i| {
                let at = i * region::ENTRY_BYTES;
                let r = CodeRegion { start: rd_u32(b, at), end: rd_u32(b, at + 4), kind: rd_u32(b, at + 8) };
                let kind_ok = matches!(r.kind, region::CANDIDATE_CALLBACK | region::HIT_SHADER);
                if r.start > r.end || r.end > num_instrs || !kind_ok {
                    return Err(format!("bad code region {r:?} in {num_instrs} instructions"));
                }
                Ok(r)
            })
            .collect()
    }
}

/// Decoded kernel image header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelHeader {
    pub flags: u16,
    pub kernel_id: u64,
    pub num_instrs: u32,
    pub num_regs: u32,
    pub num_queries: u32,
    pub private_bytes: u32,
    pub lmem_bytes: u32,
    pub local_size: [u32; 3],
    pub entry: u32,
    pub code_offset: u32,
    pub name_offset: u32,
    pub name_len: u32,
}

impl KernelHeader {
    /// A header for a kernel using `num_regs` registers with workgroup size `local_size`;
    /// everything else (id, counts, offsets) zero, for the caller or `build_image` to set.
    pub fn new(num_regs: u32, local_size: [u32; 3]) -> KernelHeader {
        KernelHeader {
            flags: 0,
            kernel_id: 0,
            num_instrs: 0,
            num_regs,
            num_queries: 0,
            private_bytes: 0,
            lmem_bytes: 0,
            local_size,
            entry: 0,
            code_offset: 0,
            name_offset: 0,
            name_len: 0,
        }
    }

    pub fn parse(b: &[u8]) -> Result<KernelHeader, String> {
        if b.len() < image::HEADER_BYTES {
            return Err("kernel image shorter than its header".into());
        }
        let magic = rd_u32(b, image::OFF_MAGIC);
        if magic != image::MAGIC {
            return Err(format!("bad kernel magic {magic:#010x}"));
        }
        let version = rd_u16(b, image::OFF_VERSION);
        if version != image::VERSION {
            return Err(format!("unsupported kernel image version {version}"));
        }
        Ok(KernelHeader {
            flags: rd_u16(b, image::OFF_FLAGS),
            kernel_id: rd_u64(b, image::OFF_KERNEL_ID),
            num_instrs: rd_u32(b, image::OFF_NUM_INSTRS),
            num_regs: rd_u32(b, image::OFF_NUM_REGS),
            num_queries: rd_u32(b, image::OFF_NUM_QUERIES),
            private_bytes: rd_u32(b, image::OFF_PRIVATE_BYTES),
            lmem_bytes: rd_u32(b, image::OFF_LMEM_BYTES),
            local_size: [
                rd_u32(b, image::OFF_LOCAL_SIZE),
                rd_u32(b, image::OFF_LOCAL_SIZE + 4),
                rd_u32(b, image::OFF_LOCAL_SIZE + 8),
            ],
            entry: rd_u32(b, image::OFF_ENTRY),
            code_offset: rd_u32(b, image::OFF_CODE),
            name_offset: rd_u32(b, image::OFF_NAME),
            name_len: rd_u32(b, image::OFF_NAME_LEN),
        })
    }

    pub fn write(&self, b: &mut [u8]) {
        b[..image::HEADER_BYTES].fill(0);
        wr_u32(b, image::OFF_MAGIC, image::MAGIC);
        wr_u16(b, image::OFF_VERSION, image::VERSION);
        wr_u16(b, image::OFF_FLAGS, self.flags);
        wr_u64(b, image::OFF_KERNEL_ID, self.kernel_id);
        wr_u32(b, image::OFF_NUM_INSTRS, self.num_instrs);
        wr_u32(b, image::OFF_NUM_REGS, self.num_regs);
        wr_u32(b, image::OFF_NUM_QUERIES, self.num_queries);
        wr_u32(b, image::OFF_PRIVATE_BYTES, self.private_bytes);
        wr_u32(b, image::OFF_LMEM_BYTES, self.lmem_bytes);
        for i in 0..3 {
            wr_u32(b, image::OFF_LOCAL_SIZE + 4 * i, self.local_size[i]);
        }
        wr_u32(b, image::OFF_ENTRY, self.entry);
        wr_u32(b, image::OFF_CODE, self.code_offset);
        wr_u32(b, image::OFF_NAME, self.name_offset);
        wr_u32(b, image::OFF_NAME_LEN, self.name_len);
    }
}

/// Builds a complete kernel image: header, code, then the (debug) name.
pub fn build_image(header: KernelHeader, code: &[super::isa::Instr], name: &str) -> Vec<u8> {
    build_image_with_regions(header, code, name, &[])
}

/// [`build_image`] with a table of code regions after the name (none: no table).
pub fn build_image_with_regions(
    mut header: KernelHeader,
    code: &[super::isa::Instr],
    name: &str,
    regions: &[CodeRegion],
) -> Vec<u8> {
    let code_bytes = super::isa::encode_all(code);
    header.num_instrs = code.len() as u32;
    header.code_offset = image::HEADER_BYTES as u32;
    header.name_offset = (image::HEADER_BYTES + code_bytes.len()) as u32;
    header.name_len = name.len() as u32;
    header.flags &= !image::FLAG_REGIONS;
    if !regions.is_empty() {
        header.flags |= image::FLAG_REGIONS;
    }
    let mut out = vec![0u8; image::HEADER_BYTES];
    header.write(&mut out);
    out.extend_from_slice(&code_bytes);
    out.extend_from_slice(name.as_bytes());
    if !regions.is_empty() {
        out.resize(region::table_offset(out.len()), 0);
        out.extend_from_slice(&(regions.len() as u32).to_le_bytes());
        for r in regions {
            for w in [r.start, r.end, r.kind] {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    out
}

/// Kernel-argument block layout.
pub mod kargs {
    /// `vkCmdDispatchBase` offset, added to the CTA block id (u32 x3).
    pub const BASE_GROUP: usize = 0;
    /// Workgroup counts of the dispatch (`gl_NumWorkGroups`, u32 x3).
    pub const NUM_GROUPS: usize = 16;
    /// Descriptor-set base addresses (u64 x MAX_SETS); 0 for an unbound set.
    pub const SET_ADDR: usize = 32;
    pub const MAX_SETS: usize = 8;
    /// Dynamic buffer offsets in pipeline-layout order (u32 x MAX_DYNAMIC).
    pub const DYN_OFFSETS: usize = 96;
    pub const MAX_DYNAMIC: usize = 32;
    /// Push-constant bytes.
    pub const PUSH: usize = 256;
    pub const PUSH_BYTES: usize = 256;
    pub const BYTES: usize = 512;

    /// The CTA shape of a trace-rays launch: two 4x4 tiles of rays a warp of 32 (coherent
    /// primary rays); the grid covers the launch size in these.
    pub const LAUNCH_BLOCK: [u32; 3] = [8, 4, 1];
    /// A trace-rays launch (`docs/RTPIPELINE.md`): `LaunchSizeKHR` (u32 x3), in the bytes
    /// between the dynamic offsets and the push constants.
    pub const LAUNCH_SIZE: usize = 224;
    /// A trace-rays launch's block goes on past [`BYTES`] with its four shader binding
    /// table regions, in [`sbt`] order, each `address, stride, size` (u64 x3).
    pub const SBT: usize = BYTES;
    pub const SBT_REGION_BYTES: usize = 24;
    /// The size of a trace-rays launch's block.
    pub const RT_BYTES: usize = SBT + 4 * SBT_REGION_BYTES;

    /// The shader binding table regions of a trace-rays launch, and the fields of each.
    pub mod sbt {
        pub const RAYGEN: usize = 0;
        pub const MISS: usize = 1;
        pub const HIT: usize = 2;
        pub const CALLABLE: usize = 3;
        pub const ADDRESS: usize = 0;
        pub const STRIDE: usize = 8;
        pub const SIZE: usize = 16;
        /// A record starts with a shader group handle (`shaderGroupHandleSize`) whose first
        /// word is `group index + 1` in the pipeline (0: a null record); the shader record
        /// data (`ShaderRecordBufferKHR`) follows it.
        pub const HANDLE_BYTES: usize = 32;
        pub const HANDLE_GROUP: usize = 0;
    }
}

/// Descriptor records: every descriptor is [`desc::BYTES`] long, whatever its type.
pub mod desc {
    pub const BYTES: usize = 64;

    /// Storage/uniform buffer: device address and range in bytes (u64 each).
    pub const BUF_ADDR: usize = 0;
    pub const BUF_RANGE: usize = 8;
    /// Bytes from `BUF_ADDR` to the end of the buffer (u64). Robust buffer access bounds a
    /// dynamic buffer by `min(BUF_RANGE, BUF_LIMIT - dynamic offset)`: a `VK_WHOLE_SIZE`
    /// range ends at the buffer's end whatever the dynamic offset.
    pub const BUF_LIMIT: usize = 16;

    /// Acceleration structure: device address (0 = null descriptor).
    pub const AS_ADDR: usize = 0;

    /// Storage image view: address of (base level, base layer), format and geometry.
    pub const IMG_ADDR: usize = 0;
    /// `VkFormat` value.
    pub const IMG_FORMAT: usize = 8;
    /// `VkImageViewType` value.
    pub const IMG_VIEW_TYPE: usize = 12;
    pub const IMG_WIDTH: usize = 16;
    pub const IMG_HEIGHT: usize = 20;
    pub const IMG_DEPTH: usize = 24;
    pub const IMG_LAYERS: usize = 28;
    /// Bytes between rows, between depth slices, and between array layers.
    pub const IMG_ROW_PITCH: usize = 32;
    pub const IMG_SLICE_PITCH: usize = 36;
    pub const IMG_LAYER_PITCH: usize = 40;
    pub const IMG_TEXEL_BYTES: usize = 44;

    /// `VkDescriptorType` of a combined image sampler, whose descriptor is two records: the
    /// image's (a sampled-image record, `gfx::image`), then the sampler's (`gfx::sampler`).
    pub const COMBINED_IMAGE_SAMPLER: u32 = 1;

    /// Records one descriptor of `VkDescriptorType` `ty` occupies: element `i` of a binding
    /// starts at the binding's offset plus `i * records(ty) * BYTES`.
    pub const fn records(ty: u32) -> u32 {
        if ty == COMBINED_IMAGE_SAMPLER {
            2
        } else {
            1
        }
    }
}

/// A storage-image descriptor, as the texture path reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ImageDesc {
    pub addr: u64,
    pub format: u32,
    pub view_type: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub layers: u32,
    pub row_pitch: u32,
    pub slice_pitch: u32,
    pub layer_pitch: u32,
    pub texel_bytes: u32,
}

impl ImageDesc {
    pub fn parse(b: &[u8]) -> ImageDesc {
        ImageDesc {
            addr: rd_u64(b, desc::IMG_ADDR),
            format: rd_u32(b, desc::IMG_FORMAT),
            view_type: rd_u32(b, desc::IMG_VIEW_TYPE),
            width: rd_u32(b, desc::IMG_WIDTH),
            height: rd_u32(b, desc::IMG_HEIGHT),
            depth: rd_u32(b, desc::IMG_DEPTH),
            layers: rd_u32(b, desc::IMG_LAYERS),
            row_pitch: rd_u32(b, desc::IMG_ROW_PITCH),
            slice_pitch: rd_u32(b, desc::IMG_SLICE_PITCH),
            layer_pitch: rd_u32(b, desc::IMG_LAYER_PITCH),
            texel_bytes: rd_u32(b, desc::IMG_TEXEL_BYTES),
        }
    }

    pub fn write(&self, b: &mut [u8]) {
        b[..desc::BYTES].fill(0);
        wr_u64(b, desc::IMG_ADDR, self.addr);
        wr_u32(b, desc::IMG_FORMAT, self.format);
        wr_u32(b, desc::IMG_VIEW_TYPE, self.view_type);
        wr_u32(b, desc::IMG_WIDTH, self.width);
        wr_u32(b, desc::IMG_HEIGHT, self.height);
        wr_u32(b, desc::IMG_DEPTH, self.depth);
        wr_u32(b, desc::IMG_LAYERS, self.layers);
        wr_u32(b, desc::IMG_ROW_PITCH, self.row_pitch);
        wr_u32(b, desc::IMG_SLICE_PITCH, self.slice_pitch);
        wr_u32(b, desc::IMG_LAYER_PITCH, self.layer_pitch);
        wr_u32(b, desc::IMG_TEXEL_BYTES, self.texel_bytes);
    }

    /// Byte offset of texel (x, y, z-or-layer) from `addr`, or `None` outside the view.
    /// Array views index layers with the last coordinate (cube views: the face-layer);
    /// 3D views index depth slices.
    pub fn texel_offset(&self, x: i32, y: i32, z: i32) -> Option<u64> {
        if x < 0 || y < 0 || z < 0 {
            return None;
        }
        let (x, y, z) = (x as u32, y as u32, z as u32);
        let (h, d, l) = (self.height.max(1), self.depth.max(1), self.layers.max(1));
        if x >= self.width {
            return None;
        }
        use super::format::view_type as vt;
        let off = match self.view_type {
            vt::TYPE_1D => {
                if y != 0 || z != 0 {
                    return None;
                }
                0
            }
            vt::TYPE_1D_ARRAY => {
                // Layer rides the y coordinate for 1D arrays.
                if y >= l || z != 0 {
                    return None;
                }
                y as u64 * self.layer_pitch as u64
            }
            vt::TYPE_2D => {
                if y >= h || z != 0 {
                    return None;
                }
                y as u64 * self.row_pitch as u64
            }
            // Cube views are arrays of faces: z is the face-layer (face + 6 * cube).
            vt::TYPE_2D_ARRAY | vt::TYPE_CUBE | vt::TYPE_CUBE_ARRAY => {
                if y >= h || z >= l {
                    return None;
                }
                y as u64 * self.row_pitch as u64 + z as u64 * self.layer_pitch as u64
            }
            vt::TYPE_3D => {
                if y >= h || z >= d {
                    return None;
                }
                y as u64 * self.row_pitch as u64 + z as u64 * self.slice_pitch as u64
            }
            _ => return None,
        };
        Some(off + x as u64 * self.texel_bytes as u64)
    }
}

/// A sampled-image descriptor (sampled images, the image half of a combined image sampler,
/// input attachments): the storage-image record of the view's base level ([`ImageDesc`])
/// plus the fields of `gfx::image` that locate the view's other levels.
///
/// The level layout (`gfx::image`): an image's levels are stored one after another, each
/// as all of the image's layers, each layer as depth slices of tightly pitched rows; level
/// `k + 1` halves level `k`'s extent (at least 1). [`SampledDesc::level`] is that rule, the
/// one the runtime lays images out by and the texture unit reads them by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SampledDesc {
    /// The view's base level: address of (base level, base layer), extent, pitches.
    pub base: ImageDesc,
    /// Levels in the view (`levelCount`; 0 reads as 1).
    pub levels: u32,
    /// Layers in the whole image (`arrayLayers`): what one level's size counts.
    pub image_layers: u32,
    /// The view's first layer (`baseArrayLayer`).
    pub base_layer: u32,
    /// Samples per pixel (0 reads as 1; `gfx::samples` lays them out).
    pub samples: u32,
}

impl SampledDesc {
    pub fn parse(b: &[u8]) -> SampledDesc {
        use super::gfx::image;
        SampledDesc {
            base: ImageDesc::parse(b),
            levels: rd_u32(b, image::LEVELS),
            image_layers: rd_u32(b, image::IMAGE_LAYERS),
            base_layer: rd_u32(b, image::BASE_LAYER),
            samples: rd_u32(b, image::SAMPLES),
        }
    }

    pub fn write(&self, b: &mut [u8]) {
        use super::gfx::image;
        self.base.write(b);
        wr_u32(b, image::LEVELS, self.levels);
        wr_u32(b, image::IMAGE_LAYERS, self.image_layers);
        wr_u32(b, image::BASE_LAYER, self.base_layer);
        wr_u32(b, image::SAMPLES, self.samples);
    }

    /// Levels in the view, at least 1.
    pub fn level_count(&self) -> u32 {
        self.levels.max(1)
    }

    /// Level `k` of the view (0 is its base level) as a descriptor of that level alone: the
    /// address of (level, the view's first layer), the level's extent and tight pitches;
    /// format, view type and layer count are the view's. `None` past the view's last level
    /// or when the address arithmetic overflows (a malformed record).
    pub fn level(&self, k: u32) -> Option<ImageDesc> {
        if k >= self.level_count() {
            return None;
        }
        let mut d = self.base;
        if k == 0 {
            return Some(d);
        }
        let (layers, first) = (self.image_layers.max(1) as u64, self.base_layer as u64);
        // The first byte of the base level: the view starts `base_layer` layers into it.
        let mut start = d.addr.checked_sub(first.checked_mul(d.layer_pitch as u64)?)?;
        for _ in 0..k {
            start = start.checked_add((d.layer_pitch as u64).checked_mul(layers)?)?;
            d.width = (d.width >> 1).max(1);
            d.height = (d.height >> 1).max(1);
            d.depth = (d.depth >> 1).max(1);
            let row = (d.width as u64).checked_mul(d.texel_bytes as u64)?;
            let slice = row.checked_mul(d.height as u64)?;
            let layer = slice.checked_mul(d.depth as u64)?;
            d.row_pitch = u32::try_from(row).ok()?;
            d.slice_pitch = u32::try_from(slice).ok()?;
            d.layer_pitch = u32::try_from(layer).ok()?;
        }
        d.addr = start.checked_add(first.checked_mul(d.layer_pitch as u64)?)?;
        Some(d)
    }
}

#[cfg(test)]
#[allow(clippy::assertions_on_constants)] // layout invariants read best as plain asserts
mod tests {
    use super::*;
    use crate::abi::isa::{Instr, Op, REG_NONE};

    #[test]
    fn image_round_trip() {
        let h = KernelHeader {
            flags: 0,
            kernel_id: 42,
            num_instrs: 0,
            num_regs: 17,
            num_queries: 3,
            private_bytes: 64,
            lmem_bytes: 1024,
            local_size: [8, 4, 1],
            entry: 0,
            code_offset: 0,
            name_offset: 0,
            name_len: 0,
        };
        let code = [Instr::r(Op::Exit, 0, REG_NONE, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 0)];
        let img = build_image(h.clone(), &code, "main");
        let back = KernelHeader::parse(&img).unwrap();
        assert_eq!(back.num_instrs, 1);
        assert_eq!(back.num_regs, 17);
        assert_eq!(back.local_size, [8, 4, 1]);
        let name = &img[back.name_offset as usize..][..back.name_len as usize];
        assert_eq!(name, b"main");
        assert!(KernelHeader::parse(&img[..10]).is_err());
        assert_eq!(back.flags & image::FLAG_REGIONS, 0, "no table, no flag");
    }

    /// A region table follows the name, 4-byte aligned, and reads back; bad entries are
    /// refused.
    #[test]
    fn region_table_round_trip() {
        let exit = Instr::r(Op::Exit, 0, REG_NONE, REG_NONE, REG_NONE, REG_NONE, REG_NONE, 0);
        let code = [exit; 5];
        let regions = [
            CodeRegion { start: 1, end: 4, kind: region::CANDIDATE_CALLBACK },
            CodeRegion { start: 2, end: 3, kind: region::HIT_SHADER },
        ];
        let img = build_image_with_regions(KernelHeader::new(4, [1, 1, 1]), &code, "abc", &regions);
        let h = KernelHeader::parse(&img).unwrap();
        assert_ne!(h.flags & image::FLAG_REGIONS, 0);
        let at = region::table_offset((h.name_offset + h.name_len) as usize);
        assert_eq!(at % 4, 0);
        let count = rd_u32(&img, at);
        assert_eq!(count, 2);
        let back = CodeRegion::parse_all(&img[at + 4..], count, h.num_instrs).unwrap();
        assert_eq!(back, regions);
        assert!(CodeRegion::parse_all(&img[at + 4..], count, 3).is_err(), "end past the code");
        assert!(CodeRegion::parse_all(&img[at + 4..], 3, 5).is_err(), "more entries than bytes");
        let mut bad = img.clone();
        wr_u32(&mut bad, at + 4 + 8, 7);
        assert!(CodeRegion::parse_all(&bad[at + 4..], count, 5).is_err(), "unknown kind");
    }

    #[test]
    fn kargs_fields_fit() {
        assert!(kargs::SET_ADDR + 8 * kargs::MAX_SETS <= kargs::DYN_OFFSETS);
        assert!(kargs::DYN_OFFSETS + 4 * kargs::MAX_DYNAMIC <= kargs::PUSH);
        assert_eq!(kargs::PUSH + kargs::PUSH_BYTES, kargs::BYTES);
        assert!(kargs::DYN_OFFSETS + 4 * kargs::MAX_DYNAMIC <= kargs::LAUNCH_SIZE);
        assert!(kargs::LAUNCH_SIZE + 12 <= kargs::PUSH);
        assert!(kargs::SBT >= kargs::BYTES && kargs::SBT.is_multiple_of(8));
        assert!(desc::IMG_TEXEL_BYTES + 4 <= desc::BYTES);
    }

    #[test]
    fn texel_offsets_respect_view_bounds() {
        use crate::abi::format::view_type as vt;
        let d = ImageDesc {
            addr: 0,
            format: 0,
            view_type: vt::TYPE_3D,
            width: 8,
            height: 8,
            depth: 4,
            layers: 1,
            row_pitch: 32,
            slice_pitch: 256,
            layer_pitch: 1024,
            texel_bytes: 4,
        };
        assert_eq!(d.texel_offset(1, 2, 3), Some(4 + 64 + 768));
        assert_eq!(d.texel_offset(8, 0, 0), None);
        assert_eq!(d.texel_offset(0, 0, 4), None);
        assert_eq!(d.texel_offset(-1, 0, 0), None);
        // A cube view: z picks one of its six face-layers.
        let cube = ImageDesc { view_type: vt::TYPE_CUBE, depth: 1, layers: 6, ..d };
        assert_eq!(cube.texel_offset(1, 2, 5), Some(4 + 64 + 5 * 1024));
        assert_eq!(cube.texel_offset(0, 0, 6), None);
    }

    #[test]
    fn sampled_levels_follow_the_layout_rule() {
        use crate::abi::format::view_type as vt;
        // A 2D array image of 8x4 texels, 4 bytes each, 3 layers, 3 levels, at 0x1000; the
        // view starts at level 0, layer 1, and sees two layers.
        let base = ImageDesc {
            addr: 0x1000 + 128,
            format: 0,
            view_type: vt::TYPE_2D_ARRAY,
            width: 8,
            height: 4,
            depth: 1,
            layers: 2,
            row_pitch: 32,
            slice_pitch: 128,
            layer_pitch: 128,
            texel_bytes: 4,
        };
        let s = SampledDesc { base, levels: 3, image_layers: 3, base_layer: 1, samples: 0 };
        let mut rec = [0u8; desc::BYTES];
        s.write(&mut rec);
        assert_eq!(SampledDesc::parse(&rec), s);
        assert_eq!(s.level(0), Some(base));
        // Level 1 (4x2) follows the 3 layers of level 0 (384 bytes); its layer 1 is 32 on.
        let l1 = s.level(1).unwrap();
        assert_eq!((l1.addr, l1.width, l1.height, l1.row_pitch, l1.layer_pitch), (0x1000 + 384 + 32, 4, 2, 16, 32));
        // Level 2 (2x1) after level 1's 3 x 32 bytes.
        let l2 = s.level(2).unwrap();
        assert_eq!((l2.addr, l2.width, l2.height, l2.layer_pitch), (0x1000 + 384 + 96 + 8, 2, 1, 8));
        assert_eq!(s.level(3), None, "past the view's last level");
        // A 3D image halves its depth too; levels 0 means 1.
        let cube3 = ImageDesc { view_type: vt::TYPE_3D, width: 4, height: 4, depth: 4, layers: 1, addr: 0, ..base };
        let s3 = SampledDesc {
            base: ImageDesc { row_pitch: 16, slice_pitch: 64, layer_pitch: 256, ..cube3 },
            levels: 2,
            image_layers: 1,
            base_layer: 0,
            samples: 0,
        };
        let l = s3.level(1).unwrap();
        assert_eq!((l.addr, l.depth, l.slice_pitch, l.layer_pitch), (256, 2, 16, 32));
        assert_eq!(SampledDesc { levels: 0, ..s3 }.level_count(), 1);
    }
}
