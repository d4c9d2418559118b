//! SPIR-V shaders -> VX kernels.
//!
//! ```text
//! target ─lower::Lowering::select─> the stage's I/O and the ray-query lowering (or refusal)
//! words ──module──> Module (capability gate, types+layouts, constants+spec constants, entry
//!                           chosen by name and execution model)
//!       ──inline──> Flat   (one CFG: every call inlined, returns unified into one exit)
//!       ──cfg─────> Cfg    (post-dominators: the reconvergence point of every branch)
//!       ──lower───> VX     (values in registers, pointers resolved at compile time,
//!                           phis as parallel edge copies, built-ins and stage I/O by the
//!                           stage, ray queries by the ray-query lowering)
//!       ──emit────> CompiledKernel (assembled code, header fields, debug names)
//! ```
//!
//! See `docs/SHADER.md` for what is supported and the conventions the generated code follows
//! (built-ins, descriptors, pointers, reconvergence, ray-query lowering).

mod args;
mod cfg;
mod consts;
mod dump;
mod emit;
mod error;
mod inline;
mod lower;
mod module;
mod opt;
mod pipeline;
mod private;
mod reflect;
mod target;
mod types;
mod vertex_format;

pub use emit::RegName;
pub use error::CompileError;
pub use pipeline::{compile_ray_tracing, RtGroup, RtShader};
pub use reflect::reflect_layout;
pub use target::{RayQueryLowering, Stage, Target};
pub use vertex_format::{vertex_format, vertex_formats, VertexFormat, VertexKind};

use std::collections::BTreeMap;
use vortex_model::abi::isa::Instr;
use vortex_model::abi::kernel::{build_image_with_regions, CodeRegion, KernelHeader};

/// `VkDescriptorType` values the compiler understands.
pub mod descriptor_type {
    pub const SAMPLER: u32 = 0;
    /// An image record followed by a sampler record: two records (128 bytes) an element.
    pub const COMBINED_IMAGE_SAMPLER: u32 = 1;
    pub const SAMPLED_IMAGE: u32 = 2;
    pub const STORAGE_IMAGE: u32 = 3;
    pub const UNIFORM_TEXEL_BUFFER: u32 = 4;
    pub const STORAGE_TEXEL_BUFFER: u32 = 5;
    pub const UNIFORM_BUFFER: u32 = 6;
    pub const STORAGE_BUFFER: u32 = 7;
    pub const UNIFORM_BUFFER_DYNAMIC: u32 = 8;
    pub const STORAGE_BUFFER_DYNAMIC: u32 = 9;
    pub const INPUT_ATTACHMENT: u32 = 10;
    pub const ACCELERATION_STRUCTURE: u32 = 1_000_150_000;
    /// Inline uniform block: in the set, a uniform-buffer record addressing the block's bytes,
    /// which follow it (so the shader reads it as a uniform buffer).
    pub const INLINE_UNIFORM_BLOCK: u32 = 1_000_138_000;

    /// Descriptor records (`abi::kernel::desc::BYTES` each) one descriptor of type `t` takes
    /// in its set: 2 for a combined image sampler, 1 for everything else.
    pub const fn records(t: u32) -> u32 {
        if t == COMBINED_IMAGE_SAMPLER {
            2
        } else {
            1
        }
    }
}

/// One descriptor-set binding of the pipeline layout, as the runtime lays sets out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingLayout {
    pub set: u32,
    pub binding: u32,
    /// `VkDescriptorType` value (see [`descriptor_type`]).
    pub descriptor_type: u32,
    /// Descriptors in the binding (array size).
    pub count: u32,
    /// Byte offset of the binding's first descriptor inside its set; descriptor `i` is at
    /// `offset + i * descriptor_type::records(descriptor_type) * abi::kernel::desc::BYTES`.
    pub offset: u32,
    /// For dynamic uniform/storage buffers: index of the binding's first dynamic offset in
    /// the kernel arguments' `DYN_OFFSETS` (pipeline-layout order); element `i` uses
    /// `index + i`.
    pub dynamic_index: Option<u32>,
}

/// The pipeline layout as far as the shader cares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceLayout {
    pub bindings: Vec<BindingLayout>,
    /// Push-constant range size in bytes (the block lives at `kargs::PUSH`).
    pub push_constant_bytes: u32,
}

/// What to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Name of the entry point. A module may hold several, of any stages: the one compiled
    /// has this name and `target.stage`'s execution model.
    pub entry_point: String,
    /// The stage and the ray-query lowering (default: compute on the RT unit).
    pub target: Target,
    /// Specialization constants: `SpecId` -> value bytes (little-endian; 4 bytes for 32-bit
    /// and bool constants, 8 for 64-bit), as `VkSpecializationInfo` provides them.
    pub specialization: BTreeMap<u32, Vec<u8>>,
    pub layout: ResourceLayout,
    /// Remove copies and dead code and reallocate registers after lowering (default true;
    /// the runtime turns it off for `VORTEX_OPT=0`, for differential testing).
    pub optimize: bool,
    /// Vertex kernels: the pipeline's vertex attributes (`VkVertexInputAttributeDescription`),
    /// from which the kernel fetches its `Input` locations itself.
    pub vertex_input: Vec<VertexAttribute>,
    /// Robust buffer access (`robustBufferAccess`): every access through a storage or
    /// uniform buffer descriptor is checked against the descriptor's range, and one outside
    /// it goes to the null window instead (reads zero, writes and atomics dropped;
    /// `docs/SHADER.md`, "Robust buffer access"). Off: no check, not one instruction more.
    pub robust_buffer_access: bool,
}

/// One vertex attribute of the pipeline's vertex input state: location `location` reads
/// `format` at `offset` bytes into each element of vertex buffer binding `binding` (whose
/// address, stride, input rate and divisor the draw state record's `VB` table holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexAttribute {
    pub location: u32,
    pub binding: u32,
    /// `VkFormat` ([`vertex_format`] says which ones the fetch converts).
    pub format: u32,
    pub offset: u32,
}

/// What the fixed-function units must know about a vertex or fragment kernel
/// (`docs/SHADER.md`, "Vertex and fragment stages").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GraphicsInfo {
    /// Vertex kernels: one more than the highest varying location the entry point declares
    /// as an output (0 without varyings); the draw's `state::VOUT_STRIDE` must be at least
    /// `gfx::vout::stride(vout_locations)`.
    pub vout_locations: u32,
    /// The kernel stores a `PointSize` the shader declares (1.0 where it does not write it).
    pub writes_point_size: bool,
    /// `ClipDistance` elements the kernel stores (`state::CLIP_DISTANCES`).
    pub clip_distances: u32,
    /// Fragment kernels: the `EarlyFragmentTests` execution mode.
    pub early_tests: bool,
    /// Exports `FragDepth` (`DepthReplacing`).
    pub writes_depth: bool,
    /// `OpKill`, `OpTerminateInvocation` or `OpDemoteToHelperInvocation` is reachable.
    pub discards: bool,
    /// Stores, atomics or image stores (what helper lanes skip).
    pub side_effects: bool,
    /// Bit `L`: colour location `L` is exported.
    pub color_outputs: u32,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions {
            entry_point: String::new(),
            target: Target::COMPUTE,
            specialization: BTreeMap::new(),
            layout: ResourceLayout::default(),
            optimize: true,
            vertex_input: Vec::new(),
            robust_buffer_access: false,
        }
    }
}

/// Whether the environment asks for the optimisation pass: anything but `VORTEX_OPT=0`
/// (read once per process).
pub fn optimize_from_env() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("VORTEX_OPT").map(|v| v.trim() != "0").unwrap_or(true))
}

impl CompileOptions {
    /// Options for entry point `name` with an empty layout and no specialization.
    pub fn entry(name: &str) -> CompileOptions {
        CompileOptions { entry_point: name.to_string(), ..Default::default() }
    }
}

/// A compiled kernel: code plus the header fields the device needs.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    pub code: Vec<Instr>,
    pub num_regs: u32,
    pub num_queries: u32,
    /// Per-lane private memory (query state, spilled variables).
    pub private_bytes: u32,
    /// Per-CTA LMEM (Workgroup variables).
    pub lmem_bytes: u32,
    pub local_size: [u32; 3],
    pub entry_name: String,
    /// Vertex and fragment kernels: what the draw's fixed-function state needs from them.
    pub graphics: Option<GraphicsInfo>,
    /// Marked code regions (a ray-tracing pipeline's shaders), carried in the image.
    pub regions: Vec<CodeRegion>,
    /// Block boundaries and register provenance, for dumps.
    pub debug: DebugInfo,
}

#[derive(Clone, Debug, Default)]
pub struct DebugInfo {
    /// (first instruction, block name), in layout order.
    pub blocks: Vec<(u32, String)>,
    /// Which SPIR-V value (or prologue quantity) a register range holds, in the registers
    /// of lowering (before allocation).
    pub regs: Vec<RegName>,
    /// When the optimisation pass reallocated registers: per instruction, the lowering
    /// register its destination stands for (what `regs` names). Empty otherwise.
    pub virt_dst: Vec<u16>,
}

impl CompiledKernel {
    /// The kernel image header (entry at instruction 0).
    pub fn header(&self, kernel_id: u64) -> KernelHeader {
        KernelHeader {
            kernel_id,
            num_instrs: self.code.len() as u32,
            num_queries: self.num_queries,
            private_bytes: self.private_bytes,
            lmem_bytes: self.lmem_bytes,
            ..KernelHeader::new(self.num_regs, self.local_size)
        }
    }

    /// The complete kernel image to place in device memory.
    pub fn image(&self, kernel_id: u64) -> Vec<u8> {
        build_image_with_regions(self.header(kernel_id), &self.code, &self.entry_name, &self.regions)
    }

    /// Human-readable listing (`VORTEX_DUMP=kernels`): header, blocks as labels, one
    /// instruction per line with the SPIR-V value its destination register holds.
    pub fn disassemble(&self) -> String {
        dump::render(self)
    }
}

/// Compiles the entry point `opts.entry_point` (of stage `opts.target.stage`) of a SPIR-V
/// module. A stage or lowering the compiler does not implement is refused before the module
/// is read.
pub fn compile(words: &[u32], opts: &CompileOptions) -> Result<CompiledKernel, CompileError> {
    let lowering = lower::Lowering::select(&opts.target)?;
    let m = module::Module::parse(words, opts)?;
    let local_size = lowering.stage.execution_modes(&m)?;
    let flat = inline::flatten(&m)?;
    let cfg = cfg::Cfg::build(&flat)?;
    let out = lower::lower(&m, &flat, &cfg, opts, lowering, local_size)?;
    Ok(CompiledKernel {
        code: out.asm.code,
        num_regs: out.num_regs,
        num_queries: out.num_queries,
        private_bytes: out.private_bytes,
        lmem_bytes: out.lmem_bytes,
        local_size,
        entry_name: m.entry.name.clone(),
        graphics: out.graphics,
        regions: out.asm.regions,
        debug: DebugInfo { blocks: out.asm.blocks, regs: out.reg_names, virt_dst: out.asm.virt_dst },
    })
}

/// Compiles from bytes (a `.spv` file or `VkShaderModuleCreateInfo::pCode`).
pub fn compile_bytes(bytes: &[u8], opts: &CompileOptions) -> Result<CompiledKernel, CompileError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(CompileError::Parse(format!("module is {} bytes, not a whole number of words", bytes.len())));
    }
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    compile(&words, opts)
}
