//! The graphics contract: how a draw reaches the device and what each unit of the graphics
//! path reads and writes (`docs/GRAPHICS.md` walks a draw through it).
//!
//! A draw is a DCR stream like a dispatch: the host writes the [`dcr`] block (kernel images,
//! kernel arguments, the draw state record, the vertex output buffer, the draw's counts) and
//! pulses [`dcr::GFX_START`]. The device then runs
//!
//! 1. the **input assembler** and the **vertex kernel**: one lane per (instance, vertex
//!    position) of the draw, launched through the KMU; the lane reads its indices from the
//!    vertex CSRs ([`csr`]), fetches its attributes itself (code the compiler generates from
//!    the pipeline's vertex input state, buffer addresses and strides from the
//!    [`state::VB`] table) and writes its outputs to its slot of the vertex output buffer
//!    ([`vout`]);
//! 2. the **raster unit**: primitive assembly (topology, restart), clipping, the viewport
//!    transform, culling, setup and rasterization into 2x2 fragment quads, binned by screen
//!    tile;
//! 3. the **fragment kernel**: warps of quads (lane `4q + i` is pixel `i` of quad `q`, in the
//!    order (x, y), (x+1, y), (x, y+1), (x+1, y+1)), with per-lane fragment CSRs ([`csr`]);
//!    it interpolates its inputs itself from the primitive's vertex slots and barycentric CSRs,
//!    and hands its results to the output merger with `EXP` ([`export`]);
//! 4. the **output merger**: depth/stencil tests and writes, blending, write masks, format
//!    conversion into the attachments ([`state::COLOR`], [`state::DEPTH`]).
//!
//! Sampling goes through the **texture unit** (`TEX`, [`tex`]), with [`sampler`] records and
//! image descriptors (`kernel::desc`, extended for mip levels: [`image`]).
//!
//! Values are Vulkan's numbers (`VkPrimitiveTopology`, `VkCompareOp`, `VkBlendFactor`, ...),
//! as everywhere in `abi`: the model does not link Vulkan headers.

/// Graphics DCRs (`0x0C0..=0x0DF`). Addresses are written low word first; the draw starts
/// at the [`dcr::GFX_START`] pulse, after which the device may read any of them.
pub mod dcr {
    /// Vertex kernel image.
    pub const GFX_VS_PC_LO: u32 = 0x0C0;
    pub const GFX_VS_PC_HI: u32 = 0x0C1;
    /// Fragment kernel image; 0: no fragment shader (depth/stencil only).
    pub const GFX_FS_PC_LO: u32 = 0x0C2;
    pub const GFX_FS_PC_HI: u32 = 0x0C3;
    /// Kernel-argument block of both stages (`kernel::kargs`: sets, dynamic offsets, push
    /// constants); `CSR_PARAM_*` in either kernel.
    pub const GFX_PARAM_LO: u32 = 0x0C4;
    pub const GFX_PARAM_HI: u32 = 0x0C5;
    /// The draw state record ([`super::state`]).
    pub const GFX_STATE_LO: u32 = 0x0C6;
    pub const GFX_STATE_HI: u32 = 0x0C7;
    /// The vertex output buffer: `vertex_count * instance_count` slots of
    /// `state::VOUT_STRIDE` bytes, owned by the host, at least that large.
    pub const GFX_VOB_LO: u32 = 0x0C8;
    pub const GFX_VOB_HI: u32 = 0x0C9;
    /// Vertices (or indices) per instance, and instances.
    pub const GFX_VERTEX_COUNT: u32 = 0x0CA;
    pub const GFX_INSTANCE_COUNT: u32 = 0x0CB;
    /// `firstVertex` (non-indexed) or `vertexOffset` (indexed, signed), added to every
    /// vertex index.
    pub const GFX_VERTEX_BASE: u32 = 0x0CC;
    pub const GFX_FIRST_INSTANCE: u32 = 0x0CD;
    /// Index buffer address of the draw's first index (`firstIndex` applied); 0: not indexed.
    pub const GFX_INDEX_LO: u32 = 0x0CE;
    pub const GFX_INDEX_HI: u32 = 0x0CF;
    /// [`super::index_type`].
    pub const GFX_INDEX_TYPE: u32 = 0x0D0;
    /// `gl_DrawID` of the draw (multi-draw and indirect-count draws).
    pub const GFX_DRAW_INDEX: u32 = 0x0D1;
    /// The start pulse of the draw programmed above: the host calls `Device::draw` (as it
    /// calls `Device::start` for a dispatch); the register itself holds nothing.
    pub const GFX_START: u32 = 0x0D2;

    pub const GFX_STATE_BEGIN: u32 = 0x0C0;
    pub const GFX_STATE_END: u32 = 0x0D2;

    /// Name for logs and stream dumps, or `None` outside this block.
    pub fn name(addr: u32) -> Option<&'static str> {
        Some(match addr {
            GFX_VS_PC_LO => "GFX_VS_PC_LO",
            GFX_VS_PC_HI => "GFX_VS_PC_HI",
            GFX_FS_PC_LO => "GFX_FS_PC_LO",
            GFX_FS_PC_HI => "GFX_FS_PC_HI",
            GFX_PARAM_LO => "GFX_PARAM_LO",
            GFX_PARAM_HI => "GFX_PARAM_HI",
            GFX_STATE_LO => "GFX_STATE_LO",
            GFX_STATE_HI => "GFX_STATE_HI",
            GFX_VOB_LO => "GFX_VOB_LO",
            GFX_VOB_HI => "GFX_VOB_HI",
            GFX_VERTEX_COUNT => "GFX_VERTEX_COUNT",
            GFX_INSTANCE_COUNT => "GFX_INSTANCE_COUNT",
            GFX_VERTEX_BASE => "GFX_VERTEX_BASE",
            GFX_FIRST_INSTANCE => "GFX_FIRST_INSTANCE",
            GFX_INDEX_LO => "GFX_INDEX_LO",
            GFX_INDEX_HI => "GFX_INDEX_HI",
            GFX_INDEX_TYPE => "GFX_INDEX_TYPE",
            GFX_DRAW_INDEX => "GFX_DRAW_INDEX",
            GFX_START => "GFX_START",
            _ => return None,
        })
    }
}

/// `GFX_INDEX_TYPE` values (not `VkIndexType`'s: 0 is "not indexed").
pub mod index_type {
    pub const NONE: u32 = 0;
    pub const U16: u32 = 1;
    pub const U32: u32 = 2;
    pub const U8: u32 = 3;

    /// Bytes per index, and the restart index of the type.
    pub const fn info(t: u32) -> Option<(u32, u32)> {
        match t {
            U16 => Some((2, 0xFFFF)),
            U32 => Some((4, 0xFFFF_FFFF)),
            U8 => Some((1, 0xFF)),
            _ => None,
        }
    }
}

/// CSRs of the graphics stages (read with `CSR`; per lane unless noted). Vertex CSRs are
/// valid in vertex kernels, fragment CSRs in fragment kernels; elsewhere they read 0.
pub mod csr {
    /// `gl_VertexIndex`: the index fetched by the input assembler (or the vertex position)
    /// plus `GFX_VERTEX_BASE`.
    pub const VTX_INDEX: u32 = 0xD00;
    /// `gl_InstanceIndex`: instance plus `GFX_FIRST_INSTANCE`.
    pub const VTX_INSTANCE: u32 = 0xD01;
    /// The lane's slot in the vertex output buffer (`instance * vertex_count + position`).
    pub const VTX_SLOT: u32 = 0xD02;
    /// `gl_BaseVertex`, `gl_BaseInstance`, `gl_DrawID` (uniform).
    pub const VTX_BASE_VERTEX: u32 = 0xD03;
    pub const VTX_BASE_INSTANCE: u32 = 0xD04;
    pub const DRAW_INDEX: u32 = 0xD05;
    /// The draw state record's and the vertex output buffer's addresses (uniform, both
    /// stages).
    pub const STATE_LO: u32 = 0xD06;
    pub const STATE_HI: u32 = 0xD07;
    pub const VOB_LO: u32 = 0xD08;
    pub const VOB_HI: u32 = 0xD09;

    /// Pixel coordinates of the lane's fragment (integers; `gl_FragCoord.xy` is them + 0.5
    /// at the pixel centre).
    pub const FRAG_X: u32 = 0xD10;
    pub const FRAG_Y: u32 = 0xD11;
    /// `gl_FragCoord.z` (f32, after the viewport transform and depth bias) and
    /// `gl_FragCoord.w` (f32, 1 / clip w), at the pixel centre.
    pub const FRAG_Z: u32 = 0xD12;
    pub const FRAG_W: u32 = 0xD13;
    /// 1 when the primitive is front-facing (`gl_FrontFacing`).
    pub const FRAG_FRONT: u32 = 0xD14;
    /// `gl_PrimitiveID`: the primitive's index within its instance.
    pub const FRAG_PRIMITIVE: u32 = 0xD15;
    /// Coverage of the lane's pixel (`gl_SampleMaskIn`).
    pub const FRAG_COVERAGE: u32 = 0xD16;
    /// 1 for a helper lane (a quad pixel outside the primitive, or demoted).
    pub const FRAG_HELPER: u32 = 0xD17;
    /// Vertex-output slots of the primitive's vertices; vertex 0 is the provoking vertex
    /// (flat inputs read it). Points repeat one slot, lines their two.
    pub const FRAG_VTX0: u32 = 0xD18;
    pub const FRAG_VTX1: u32 = 0xD19;
    pub const FRAG_VTX2: u32 = 0xD1A;
    /// Barycentric weights (f32) of vertices 1 and 2 (vertex 0's is 1 - i - j):
    /// perspective-correct at the pixel centre, at the centroid, and linear (noperspective)
    /// at the centre and centroid. Lines use i only; points none.
    pub const FRAG_BARY_I: u32 = 0xD1B;
    pub const FRAG_BARY_J: u32 = 0xD1C;
    pub const FRAG_BARY_CENTROID_I: u32 = 0xD1D;
    pub const FRAG_BARY_CENTROID_J: u32 = 0xD1E;
    pub const FRAG_BARY_LINEAR_I: u32 = 0xD1F;
    pub const FRAG_BARY_LINEAR_J: u32 = 0xD20;
    pub const FRAG_BARY_LINEAR_CENTROID_I: u32 = 0xD21;
    pub const FRAG_BARY_LINEAR_CENTROID_J: u32 = 0xD22;
    /// `gl_PointCoord` (f32) for point primitives.
    pub const FRAG_POINT_U: u32 = 0xD23;
    pub const FRAG_POINT_V: u32 = 0xD24;

    pub const BEGIN: u32 = 0xD00;
    pub const END: u32 = 0xD24;

    /// Name for the disassembler, or `None` outside this block.
    pub fn name(id: u32) -> Option<&'static str> {
        Some(match id {
            VTX_INDEX => "vtx_index",
            VTX_INSTANCE => "vtx_instance",
            VTX_SLOT => "vtx_slot",
            VTX_BASE_VERTEX => "vtx_base_vertex",
            VTX_BASE_INSTANCE => "vtx_base_instance",
            DRAW_INDEX => "draw_index",
            STATE_LO => "gfx_state.lo",
            STATE_HI => "gfx_state.hi",
            VOB_LO => "vob.lo",
            VOB_HI => "vob.hi",
            FRAG_X => "frag_x",
            FRAG_Y => "frag_y",
            FRAG_Z => "frag_z",
            FRAG_W => "frag_w",
            FRAG_FRONT => "frag_front",
            FRAG_PRIMITIVE => "frag_primitive",
            FRAG_COVERAGE => "frag_coverage",
            FRAG_HELPER => "frag_helper",
            FRAG_VTX0 => "frag_vtx0",
            FRAG_VTX1 => "frag_vtx1",
            FRAG_VTX2 => "frag_vtx2",
            FRAG_BARY_I => "frag_bary.i",
            FRAG_BARY_J => "frag_bary.j",
            FRAG_BARY_CENTROID_I => "frag_bary_centroid.i",
            FRAG_BARY_CENTROID_J => "frag_bary_centroid.j",
            FRAG_BARY_LINEAR_I => "frag_bary_linear.i",
            FRAG_BARY_LINEAR_J => "frag_bary_linear.j",
            FRAG_BARY_LINEAR_CENTROID_I => "frag_bary_linear_centroid.i",
            FRAG_BARY_LINEAR_CENTROID_J => "frag_bary_linear_centroid.j",
            FRAG_POINT_U => "frag_point.u",
            FRAG_POINT_V => "frag_point.v",
            _ => return None,
        })
    }
}

/// One vertex's slot in the vertex output buffer: clip-space position, point size, clip
/// distances, then the varyings by location (4 words a location, component c of location L
/// at `VARYING + 16 * L + 4 * c`). The slot stride is the pipeline's
/// (`state::VOUT_STRIDE`: `VARYING + 16 * locations`, locations the vertex kernel writes).
pub mod vout {
    /// `gl_Position`, 4 x f32.
    pub const POSITION: usize = 0;
    /// `gl_PointSize`, f32 (1.0 when the shader does not write it).
    pub const POINT_SIZE: usize = 16;
    /// `gl_ClipDistance[0..8]`, f32 each.
    pub const CLIP_DISTANCE: usize = 20;
    pub const MAX_CLIP_DISTANCES: usize = 8;
    /// First varying.
    pub const VARYING: usize = 64;
    /// Most varying locations (`maxVertexOutputComponents` = 4 * this).
    pub const MAX_LOCATIONS: usize = 32;

    /// Byte offset of component `c` of location `loc`.
    pub const fn varying(loc: usize, c: usize) -> usize {
        VARYING + 16 * loc + 4 * c
    }

    /// Slot stride of a pipeline whose vertex kernel writes `locations` locations.
    pub const fn stride(locations: usize) -> usize {
        VARYING + 16 * locations
    }
}

/// The draw state record: every fixed-function fact of one draw, resolved by the host from
/// the pipeline's static state and the command buffer's dynamic state, in device memory at
/// `GFX_STATE`. Words unless noted; f32 fields are IEEE bits.
pub mod state {
    /// `VkPrimitiveTopology`.
    pub const TOPOLOGY: usize = 0;
    /// [`flags`] bits.
    pub const FLAGS: usize = 4;
    /// `VkCullModeFlags`.
    pub const CULL_MODE: usize = 8;
    /// `VkPolygonMode` (fill, line, point).
    pub const POLYGON_MODE: usize = 12;
    /// Depth bias constant, clamp and slope factors (f32), used with `flags::DEPTH_BIAS`.
    pub const DEPTH_BIAS_CONSTANT: usize = 16;
    pub const DEPTH_BIAS_CLAMP: usize = 20;
    pub const DEPTH_BIAS_SLOPE: usize = 24;
    /// Line width (f32).
    pub const LINE_WIDTH: usize = 28;
    /// Viewport: x, y, width, height, minDepth, maxDepth (f32 each).
    pub const VIEWPORT: usize = 32;
    /// Scissor: x, y (i32), width, height (u32); already clipped to the render area.
    pub const SCISSOR: usize = 56;
    /// Rasterization samples (1 or 4) and the sample mask.
    pub const SAMPLES: usize = 72;
    pub const SAMPLE_MASK: usize = 76;
    /// Depth compare (`VkCompareOp`) and depth-bounds min/max (f32).
    pub const DEPTH_COMPARE: usize = 80;
    pub const DEPTH_BOUNDS_MIN: usize = 84;
    pub const DEPTH_BOUNDS_MAX: usize = 88;
    /// Bytes per vertex-output slot ([`super::vout::stride`]).
    pub const VOUT_STRIDE: usize = 92;
    /// Stencil state of front and back faces, [`stencil`] records.
    pub const STENCIL_FRONT: usize = 96;
    pub const STENCIL_BACK: usize = 128;
    /// Blend constants (4 x f32).
    pub const BLEND_CONSTANTS: usize = 160;
    /// Colour attachments in use (locations `0..COLOR_COUNT`; an unused location has
    /// format 0).
    pub const COLOR_COUNT: usize = 176;
    /// Render-target size (width, height) in pixels: no fragment lies outside it.
    pub const TARGET_WIDTH: usize = 180;
    pub const TARGET_HEIGHT: usize = 184;
    /// `gl_ClipDistance` elements the vertex kernel writes (0..=`vout::MAX_CLIP_DISTANCES`):
    /// the raster unit clips against that many, and reads no more of the slot.
    pub const CLIP_DISTANCES: usize = 188;
    /// The depth/stencil attachment, an [`attachment`] record (format 0: none).
    pub const DEPTH: usize = 192;
    /// Colour attachments, [`attachment`] records.
    pub const COLOR: usize = 256;
    pub const MAX_COLOR: usize = 8;
    /// Vertex buffer bindings, [`vb`] records.
    pub const VB: usize = COLOR + MAX_COLOR * attachment::BYTES;
    pub const MAX_VB: usize = 16;
    pub const BYTES: usize = VB + MAX_VB * vb::BYTES;

    /// `FLAGS` bits.
    pub mod flags {
        pub const PRIMITIVE_RESTART: u32 = 1 << 0;
        pub const RASTERIZER_DISCARD: u32 = 1 << 1;
        pub const DEPTH_CLAMP: u32 = 1 << 2;
        pub const DEPTH_BIAS: u32 = 1 << 3;
        pub const DEPTH_TEST: u32 = 1 << 4;
        pub const DEPTH_WRITE: u32 = 1 << 5;
        pub const DEPTH_BOUNDS: u32 = 1 << 6;
        pub const STENCIL_TEST: u32 = 1 << 7;
        /// Front faces are counter-clockwise (`VK_FRONT_FACE_COUNTER_CLOCKWISE`).
        pub const FRONT_CCW: u32 = 1 << 8;
        /// The fragment kernel declares early fragment tests.
        pub const EARLY_TESTS: u32 = 1 << 9;
        /// The fragment kernel may write depth (`FragDepth`), may discard or demote, or has
        /// side effects (stores, atomics): what keeps the output merger from testing
        /// before it runs when `EARLY_TESTS` is not set.
        pub const FS_WRITES_DEPTH: u32 = 1 << 10;
        pub const FS_DISCARDS: u32 = 1 << 11;
        pub const FS_SIDE_EFFECTS: u32 = 1 << 12;
        /// Alpha-to-coverage (only with 4 samples).
        pub const ALPHA_TO_COVERAGE: u32 = 1 << 13;
        /// The provoking vertex is the last of a primitive (`VK_EXT_provoking_vertex`).
        pub const PROVOKING_LAST: u32 = 1 << 14;
    }

    /// A stencil face: fail, pass and depth-fail ops (`VkStencilOp`), compare
    /// (`VkCompareOp`), compare mask, write mask, reference.
    pub mod stencil {
        pub const FAIL_OP: usize = 0;
        pub const PASS_OP: usize = 4;
        pub const DEPTH_FAIL_OP: usize = 8;
        pub const COMPARE: usize = 12;
        pub const COMPARE_MASK: usize = 16;
        pub const WRITE_MASK: usize = 20;
        pub const REFERENCE: usize = 24;
        pub const BYTES: usize = 32;
    }

    /// An attachment of the draw: where its texels are and, for colour, how fragments blend
    /// into it. Texels are stored linearly (row pitch, layer at `ADDR`); for combined
    /// depth/stencil formats the stencil plane is at `STENCIL_ADDR` with `STENCIL_PITCH`
    /// (`super::super::format` fixes the planes' texel layout).
    pub mod attachment {
        /// Address of texel (0, 0) of the attachment's view (its level and layer).
        pub const ADDR: usize = 0;
        /// `VkFormat`; 0: no attachment.
        pub const FORMAT: usize = 8;
        pub const ROW_PITCH: usize = 12;
        pub const STENCIL_ADDR: usize = 16;
        pub const STENCIL_PITCH: usize = 24;
        /// Colour: blend enable, then src/dst colour factor and colour op, src/dst alpha
        /// factor and alpha op (`VkBlendFactor`, `VkBlendOp`), write mask
        /// (`VkColorComponentFlags`).
        pub const BLEND_ENABLE: usize = 28;
        pub const SRC_COLOR: usize = 32;
        pub const DST_COLOR: usize = 36;
        pub const COLOR_OP: usize = 40;
        pub const SRC_ALPHA: usize = 44;
        pub const DST_ALPHA: usize = 48;
        pub const ALPHA_OP: usize = 52;
        pub const WRITE_MASK: usize = 56;
        pub const BYTES: usize = 64;
    }

    /// A vertex buffer binding: address of its first byte (offset applied; 0: unbound),
    /// stride, input rate (`VkVertexInputRate`), instance divisor, bytes available from
    /// the address (reads past them return zero, as robust buffer access allows).
    pub mod vb {
        pub const ADDR: usize = 0;
        pub const STRIDE: usize = 8;
        pub const INPUT_RATE: usize = 12;
        pub const DIVISOR: usize = 16;
        pub const SIZE: usize = 24;
        pub const BYTES: usize = 32;
    }
}

/// `EXP` (the output-merger export): `mod` is the target, `a` the first register of its
/// data, `imm` bit 0 ([`DONE`]) marks the lane's last export of the fragment, after which the
/// output merger tests and writes it. Inactive and helper lanes export nothing; a lane that
/// reaches `EXIT` without a `DONE` export writes nothing (discarded).
pub mod export {
    /// Colour location `0..MAX_COLOR`: 4 registers (f32 for float/normalised formats,
    /// integers for integer formats).
    pub const COLOR0: u8 = 0;
    /// `gl_FragDepth` (f32, one register).
    pub const DEPTH: u8 = 8;
    /// `gl_SampleMask` (one register, ANDed with coverage).
    pub const SAMPLE_MASK: u8 = 9;
    /// `imm` flag: the fragment's last export.
    pub const DONE: u32 = 1;
    /// Last target (`mod` values above it fault).
    pub const LAST: u8 = SAMPLE_MASK;

    /// Registers the export of target `m` reads (`EXP`'s `a` block): 4 for a colour location,
    /// 1 for depth and sample mask; `None` for a target the output merger does not know.
    pub const fn regs(m: u8) -> Option<u32> {
        match m {
            0..=7 => Some(4),
            DEPTH | SAMPLE_MASK => Some(1),
            _ => None,
        }
    }

    /// Name of target `m` for the disassembler.
    pub fn name(m: u8) -> Option<String> {
        Some(match m {
            0..=7 => format!("color{m}"),
            DEPTH => "depth".into(),
            SAMPLE_MASK => "sample_mask".into(),
            _ => return None,
        })
    }
}

/// `TEX` (texture unit): `mod` is the [`op`], `a` the image descriptor's address (a register
/// pair), `c` the sampler's (a pair; `REG_NONE` for fetches and queries), `dst` four
/// result registers, and the operands start at register `b`, in this order: the coordinates
/// ([`dims`] of the dimension, plus the array layer when arrayed; integers for fetches,
/// f32 otherwise; cube: direction x, y, z), the depth reference (with [`DREF`]), the
/// bias or LOD (lod mode 1 or 2; integer level for fetches), then the x and y gradients
/// ([`dims`] each, lod mode 3). `imm` holds the flags below.
pub mod tex {
    /// `mod`: what the unit does.
    pub mod op {
        /// Filtered sample (`OpImageSample*`).
        pub const SAMPLE: u8 = 0;
        /// Four texels of the bilinear footprint, one component (`OpImage*Gather`).
        pub const GATHER: u8 = 1;
        /// One texel at integer coordinates and level, no sampler (`OpImageFetch`).
        pub const FETCH: u8 = 2;
        /// Size of a level (`OpImageQuerySize[Lod]`): width, height, depth or layers.
        pub const QUERY_SIZE: u8 = 3;
        /// Levels in the view (`OpImageQueryLevels`), in `dst`.
        pub const QUERY_LEVELS: u8 = 4;
        /// The level the sample would use and its unclamped value (`OpImageQueryLod`).
        pub const QUERY_LOD: u8 = 5;

        /// Name of op `m` for the disassembler.
        pub const fn name(m: u8) -> Option<&'static str> {
            Some(match m {
                SAMPLE => "sample",
                GATHER => "gather",
                FETCH => "fetch",
                QUERY_SIZE => "size",
                QUERY_LEVELS => "levels",
                QUERY_LOD => "lod",
                _ => return None,
            })
        }
    }
    /// `imm` bits 0-1: dimension (`DIM_1D`, `DIM_2D`, `DIM_3D`, `DIM_CUBE`).
    pub const DIM_MASK: u32 = 3;
    pub const DIM_1D: u32 = 0;
    pub const DIM_2D: u32 = 1;
    pub const DIM_3D: u32 = 2;
    pub const DIM_CUBE: u32 = 3;
    /// `imm` bit 2: an array view (one more coordinate, the layer).
    pub const ARRAYED: u32 = 1 << 2;
    /// `imm` bit 3: depth comparison against a reference (`Dref`).
    pub const DREF: u32 = 1 << 3;
    /// `imm` bits 4-5: how the level is chosen: implicit (from the quad's derivatives),
    /// implicit plus a bias, an explicit LOD, explicit gradients.
    pub const LOD_SHIFT: u32 = 4;
    pub const LOD_IMPLICIT: u32 = 0;
    pub const LOD_BIAS: u32 = 1;
    pub const LOD_EXPLICIT: u32 = 2;
    pub const LOD_GRAD: u32 = 3;
    /// `imm` bits 8-19: a constant texel offset, three signed 4-bit fields (x, y, z).
    pub const OFFSET_SHIFT: u32 = 8;
    /// The range of one offset field (`minTexelOffset`, `maxTexelOffset`, and the same for
    /// gathers).
    pub const OFFSET_MIN: i32 = -8;
    pub const OFFSET_MAX: i32 = 7;
    /// `imm` bits 20-21: the gathered component.
    pub const GATHER_SHIFT: u32 = 20;

    /// Coordinates of a dimension (without the array layer).
    pub const fn dims(imm: u32) -> u32 {
        match imm & DIM_MASK {
            DIM_1D => 1,
            DIM_2D => 2,
            _ => 3,
        }
    }

    /// Registers of the operand block at `b` for op `m` with flags `imm`, in the order above:
    /// samples and gathers take coordinates (plus the layer), the reference, the bias or LOD
    /// and the gradients their flags ask for; fetches coordinates (plus the layer) and, with
    /// `LOD_EXPLICIT`, the level; `QUERY_SIZE` the level with `LOD_EXPLICIT`; `QUERY_LEVELS`
    /// nothing; `QUERY_LOD` the coordinates (no layer). An empty block is written `REG_NONE`.
    /// `None` for an op the unit does not know.
    pub const fn operand_regs(m: u8, imm: u32) -> Option<u32> {
        let dims = dims(imm);
        let layer = (imm & ARRAYED != 0) as u32;
        let dref = (imm & DREF != 0) as u32;
        let lod_mode = (imm >> LOD_SHIFT) & 3;
        let lod = matches!(lod_mode, LOD_BIAS | LOD_EXPLICIT) as u32;
        let grads = if lod_mode == LOD_GRAD { 2 * dims } else { 0 };
        Some(match m {
            op::SAMPLE | op::GATHER => dims + layer + dref + lod + grads,
            op::FETCH => dims + layer + (lod_mode == LOD_EXPLICIT) as u32,
            op::QUERY_SIZE => (lod_mode == LOD_EXPLICIT) as u32,
            op::QUERY_LEVELS => 0,
            op::QUERY_LOD => dims,
            _ => return None,
        })
    }

    /// The constant offset of `imm`, sign-extended.
    pub const fn offset(imm: u32) -> [i32; 3] {
        const fn field(imm: u32, k: u32) -> i32 {
            (((imm >> (OFFSET_SHIFT + 4 * k)) & 0xF) as i32) << 28 >> 28
        }
        [field(imm, 0), field(imm, 1), field(imm, 2)]
    }
}

/// `DERIV` (cross-lane, within a quad): `mod` is the [`deriv`] kind; `dst = d(a)/dx` or
/// `/dy`. Fine derivatives differ per row/column of the quad, coarse ones are the quad's
/// first row/column for all four lanes.
pub mod deriv {
    pub const COARSE_X: u8 = 0;
    pub const COARSE_Y: u8 = 1;
    pub const FINE_X: u8 = 2;
    pub const FINE_Y: u8 = 3;

    /// Name of kind `m` for the disassembler.
    pub const fn name(m: u8) -> Option<&'static str> {
        Some(match m {
            COARSE_X => "coarse_x",
            COARSE_Y => "coarse_y",
            FINE_X => "fine_x",
            FINE_Y => "fine_y",
            _ => return None,
        })
    }
}

/// The sampler record (`kernel::desc::BYTES` long; a combined image/sampler descriptor is
/// the image record followed by this one). Vulkan's numbers (`VkFilter`,
/// `VkSamplerMipmapMode`, `VkSamplerAddressMode`, `VkCompareOp`, `VkBorderColor`); LOD
/// values f32.
pub mod sampler {
    pub const MAG_FILTER: usize = 0;
    pub const MIN_FILTER: usize = 4;
    pub const MIPMAP_MODE: usize = 8;
    pub const ADDRESS_U: usize = 12;
    pub const ADDRESS_V: usize = 16;
    pub const ADDRESS_W: usize = 20;
    pub const MIP_LOD_BIAS: usize = 24;
    /// [`sampler::flags`] bits.
    pub const FLAGS: usize = 28;
    pub const COMPARE_OP: usize = 32;
    pub const MIN_LOD: usize = 36;
    pub const MAX_LOD: usize = 40;
    pub const BORDER_COLOR: usize = 44;
    /// Custom border colour (`VK_EXT_custom_border_color`), 4 words.
    pub const CUSTOM_BORDER: usize = 48;
    pub const BYTES: usize = 64;

    /// `maxSamplerLodBias`: the texture unit clamps the sum of the sampler's and the
    /// shader's bias to plus or minus this.
    pub const MAX_LOD_BIAS: f32 = 15.0;

    /// `FLAGS` bits.
    pub mod flags {
        /// Compare against the reference with `COMPARE_OP`.
        pub const COMPARE: u32 = 1;
        /// Unnormalized coordinates.
        pub const UNNORMALIZED: u32 = 2;
    }
}

/// Sampled-image descriptors: the storage-image record (`kernel::desc::IMG_*`, describing
/// the view's base level and layers) plus what mipmapping needs. Levels are stored one after
/// another, each as all of the image's layers, each layer as depth slices of tightly
/// pitched rows; level `k + 1` halves level `k`'s extent (at least 1).
pub mod image {
    /// Levels in the view.
    pub const LEVELS: usize = 48;
    /// Layers in the whole image (what a level's size counts) and the view's first layer.
    pub const IMAGE_LAYERS: usize = 52;
    pub const BASE_LAYER: usize = 56;
}

/// What the raster unit can do, for the limits the API reports.
pub mod limits {
    /// Bits of sub-pixel precision (`subPixelPrecisionBits`): vertices snap to 1/256 pixel.
    pub const SUBPIXEL_BITS: u32 = 8;
    /// Point sizes are clamped to this range (`pointSizeRange`), in steps of 1/256
    /// (`pointSizeGranularity`).
    pub const POINT_SIZE_MIN: f32 = 1.0;
    pub const POINT_SIZE_MAX: f32 = 64.0;
    /// Line widths are clamped to this range (`lineWidthRange`, `lineWidthGranularity`
    /// 1/256); lines are parallelograms (`strictLines` false).
    pub const LINE_WIDTH_MIN: f32 = 1.0;
    pub const LINE_WIDTH_MAX: f32 = 64.0;
    /// Half-extent of the guard band in pixels from the viewport's centre: x and y are
    /// clipped there (`viewportBoundsRange` must lie inside it).
    pub const GUARD_BAND: f32 = 65536.0;
}

/// Vertices per primitive of a topology (`VkPrimitiveTopology`) and whether it is a strip
/// or fan, for primitive assembly; `None` for topologies the device does not offer
/// (adjacency, patches).
pub const fn topology(t: u32) -> Option<(u32, Assembly)> {
    Some(match t {
        0 => (1, Assembly::List),
        1 => (2, Assembly::List),
        2 => (2, Assembly::Strip),
        3 => (3, Assembly::List),
        4 => (3, Assembly::Strip),
        5 => (3, Assembly::Fan),
        _ => return None,
    })
}

/// How a topology's primitives share vertices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assembly {
    List,
    Strip,
    Fan,
}

#[cfg(test)]
#[allow(clippy::assertions_on_constants)] // layout invariants read best as plain asserts
mod tests {
    use super::*;

    #[test]
    fn state_record_fields_do_not_overlap() {
        assert!(state::VOUT_STRIDE + 4 <= state::STENCIL_FRONT);
        assert!(state::STENCIL_FRONT + state::stencil::BYTES <= state::STENCIL_BACK);
        assert!(state::STENCIL_BACK + state::stencil::BYTES <= state::BLEND_CONSTANTS);
        assert!(state::BLEND_CONSTANTS + 16 <= state::COLOR_COUNT);
        assert!(state::TARGET_HEIGHT + 4 <= state::CLIP_DISTANCES);
        assert!(state::CLIP_DISTANCES + 4 <= state::DEPTH);
        assert!(state::DEPTH + state::attachment::BYTES <= state::COLOR);
        assert!(state::attachment::WRITE_MASK + 4 <= state::attachment::BYTES);
        assert!(state::vb::SIZE + 8 <= state::vb::BYTES);
        assert_eq!(state::BYTES, 256 + 8 * 64 + 16 * 32);
    }

    #[test]
    fn dcr_block_is_named_and_inside_the_file() {
        for a in dcr::GFX_STATE_BEGIN..=dcr::GFX_STATE_END {
            assert!(dcr::name(a).is_some(), "graphics DCR {a:#x} has no name");
        }
        assert!(dcr::GFX_STATE_END < super::super::dcr::DCR_COUNT);
        assert!(dcr::GFX_STATE_BEGIN > super::super::dcr::RTU_STATE_END);
    }

    #[test]
    fn csr_block_is_named() {
        for id in csr::BEGIN..=csr::END {
            // The fragment block starts at 0xD10; the gap after the vertex block is unused.
            if (csr::VOB_HI + 1..csr::FRAG_X).contains(&id) {
                continue;
            }
            assert!(csr::name(id).is_some(), "graphics CSR {id:#x} has no name");
        }
    }

    #[test]
    fn vout_and_descriptor_layouts() {
        assert_eq!(vout::varying(0, 0), vout::VARYING);
        assert_eq!(vout::varying(1, 3), vout::VARYING + 28);
        assert!(vout::CLIP_DISTANCE + 4 * vout::MAX_CLIP_DISTANCES <= vout::VARYING);
        assert!(sampler::CUSTOM_BORDER + 16 <= sampler::BYTES);
        assert!(image::LEVELS >= super::super::kernel::desc::IMG_TEXEL_BYTES + 4);
        assert!(image::BASE_LAYER + 4 <= super::super::kernel::desc::BYTES);
    }

    #[test]
    fn tex_fields() {
        let imm = tex::DIM_CUBE | tex::ARRAYED | (tex::LOD_GRAD << tex::LOD_SHIFT);
        assert_eq!(tex::dims(imm), 3);
        assert_eq!(tex::dims(tex::DIM_2D), 2);
        let off = (0xF << tex::OFFSET_SHIFT) | (0x7 << (tex::OFFSET_SHIFT + 4)) | (0x8 << (tex::OFFSET_SHIFT + 8));
        assert_eq!(tex::offset(off), [-1, 7, -8]);
        assert_eq!([tex::offset(off)[2], tex::offset(off)[1]], [tex::OFFSET_MIN, tex::OFFSET_MAX], "the field's range");
        assert_eq!(index_type::info(index_type::U16), Some((2, 0xFFFF)));
        assert_eq!(topology(5), Some((3, Assembly::Fan)));
        assert_eq!(topology(6), None);
        // A 2D-array sample with a reference and explicit gradients: x y layer dref dx dy dx dy.
        let imm = tex::DIM_2D | tex::ARRAYED | tex::DREF | (tex::LOD_GRAD << tex::LOD_SHIFT);
        assert_eq!(tex::operand_regs(tex::op::SAMPLE, imm), Some(8));
        let lod = tex::DIM_2D | (tex::LOD_EXPLICIT << tex::LOD_SHIFT);
        assert_eq!(tex::operand_regs(tex::op::FETCH, lod), Some(3));
        assert_eq!(tex::operand_regs(tex::op::FETCH, tex::DIM_3D), Some(3));
        assert_eq!(tex::operand_regs(tex::op::QUERY_SIZE, lod), Some(1));
        assert_eq!(tex::operand_regs(tex::op::QUERY_LEVELS, lod), Some(0));
        assert_eq!(tex::operand_regs(tex::op::QUERY_LOD, tex::DIM_CUBE | tex::ARRAYED), Some(3));
        assert_eq!(tex::operand_regs(6, 0), None);
        assert_eq!((export::regs(export::COLOR0 + 7), export::regs(export::DEPTH)), (Some(4), Some(1)));
        assert_eq!(export::regs(export::LAST + 1), None);
    }
}
