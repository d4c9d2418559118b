//! Front of the pipeline: binary checks, `rspirv` parsing, the capability/extension gate, and
//! collection of everything module-scoped (decorations, names, types, constants, global
//! variables, the entry point: the one of the requested name and stage, whatever other entry
//! points the module holds).

use super::consts::{self, Const};
use super::error::{interface, invalid, unsupported, CompileError, Result};
use super::types::{Id, Type, Types};
use super::{CompileOptions, Stage};
use rspirv::dr::{self, Instruction, Operand};
use spirv::{BuiltIn, Capability, Decoration, Op, StorageClass};
use std::collections::{HashMap, HashSet};

/// Largest id bound accepted (keeps every per-id table small).
const MAX_BOUND: u32 = 1 << 22;

/// Capabilities the compiler implements. Anything else is refused by name.
const CAPABILITIES: &[Capability] = &[
    Capability::Shader,
    Capability::Matrix,
    Capability::Int64,
    Capability::Int64Atomics,
    Capability::Int16,
    Capability::Int8,
    Capability::Float16,
    Capability::Float64,
    Capability::StorageBuffer16BitAccess,
    Capability::UniformAndStorageBuffer16BitAccess,
    Capability::StoragePushConstant16,
    Capability::StorageBuffer8BitAccess,
    Capability::UniformAndStorageBuffer8BitAccess,
    Capability::StoragePushConstant8,
    Capability::Image1D,
    Capability::ImageCubeArray,
    Capability::ImageQuery,
    Capability::SampledBuffer,
    Capability::ImageBuffer,
    Capability::UniformTexelBufferArrayDynamicIndexing,
    Capability::StorageTexelBufferArrayDynamicIndexing,
    Capability::UniformTexelBufferArrayNonUniformIndexing,
    Capability::StorageTexelBufferArrayNonUniformIndexing,
    Capability::StorageImageExtendedFormats,
    Capability::StorageImageReadWithoutFormat,
    Capability::StorageImageWriteWithoutFormat,
    Capability::RayQueryKHR,
    // Skip-triangles/AABBs and the micromap 2-state flag are ordinary run-time ray flags here.
    Capability::RayTraversalPrimitiveCullingKHR,
    Capability::RayTracingOpacityMicromapEXT,
    Capability::RayQueryPositionFetchKHR,
    // Ray-tracing pipeline stages (`lower/stage/raygen.rs`; docs/RTPIPELINE.md).
    Capability::RayTracingKHR,
    Capability::PhysicalStorageBufferAddresses,
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformClustered,
    Capability::GroupNonUniformQuad,
    Capability::ShaderNonUniform,
    Capability::RuntimeDescriptorArray,
    Capability::UniformBufferArrayDynamicIndexing,
    Capability::StorageBufferArrayDynamicIndexing,
    Capability::StorageImageArrayDynamicIndexing,
    Capability::UniformBufferArrayNonUniformIndexing,
    Capability::StorageBufferArrayNonUniformIndexing,
    Capability::StorageImageArrayNonUniformIndexing,
    Capability::AtomicFloat32AddEXT,
    Capability::VulkanMemoryModel,
    Capability::VulkanMemoryModelDeviceScope,
    // Integer dot products (`lower/dot.rs`).
    Capability::DotProduct,
    Capability::DotProductInputAll,
    Capability::DotProductInput4x8Bit,
    Capability::DotProductInput4x8BitPacked,
    // The graphics stages (`lower/stage/vertex.rs`, `lower/stage/fragment.rs`) and sampling.
    Capability::ClipDistance,
    Capability::DrawParameters,
    Capability::DerivativeControl,
    Capability::DemoteToHelperInvocation,
    Capability::InputAttachment,
    Capability::Sampled1D,
    Capability::SampledCubeArray,
    Capability::ImageGatherExtended,
    Capability::SampledImageArrayDynamicIndexing,
    Capability::SampledImageArrayNonUniformIndexing,
    Capability::InputAttachmentArrayDynamicIndexing,
    Capability::InputAttachmentArrayNonUniformIndexing,
    // `ViewIndex` in vertex and fragment shaders (multiview).
    Capability::MultiView,
    // What a fragment shader reading `PrimitiveId`, `Layer` or `ViewportIndex` declares;
    // geometry shaders themselves are refused by stage.
    Capability::Geometry,
];

const EXTENSIONS: &[&str] = &[
    "SPV_KHR_ray_query",
    "SPV_KHR_ray_tracing_position_fetch",
    "SPV_KHR_ray_tracing",
    "SPV_EXT_descriptor_indexing",
    "SPV_KHR_storage_buffer_storage_class",
    "SPV_KHR_16bit_storage",
    "SPV_KHR_8bit_storage",
    "SPV_KHR_float_controls",
    "SPV_KHR_physical_storage_buffer",
    "SPV_EXT_physical_storage_buffer",
    "SPV_KHR_vulkan_memory_model",
    "SPV_KHR_non_semantic_info",
    "SPV_KHR_relaxed_extended_instruction",
    "SPV_KHR_terminate_invocation",
    "SPV_KHR_integer_dot_product",
    "SPV_EXT_demote_to_helper_invocation",
    "SPV_KHR_shader_draw_parameters",
    "SPV_KHR_multiview",
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_opacity_micromap",
    "SPV_GOOGLE_decorate_string",
    "SPV_GOOGLE_hlsl_functionality1",
    "SPV_GOOGLE_user_type",
];

/// Decorations the compiler acts on; all others are semantically irrelevant here (precision,
/// aliasing and access qualifiers) and are ignored.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Decos {
    pub builtin: Option<BuiltIn>,
    /// Stage interface: `Location`, `Component`, `Index` (dual-source colour) and the
    /// interpolation qualifiers.
    pub location: Option<u32>,
    pub component: Option<u32>,
    pub index: Option<u32>,
    pub flat: bool,
    pub no_perspective: bool,
    pub centroid: bool,
    pub sample: bool,
    pub spec_id: Option<u32>,
    pub offset: Option<u32>,
    pub array_stride: Option<u32>,
    pub matrix_stride: Option<u32>,
    pub row_major: bool,
    pub block: bool,
    pub buffer_block: bool,
    pub set: Option<u32>,
    pub binding: Option<u32>,
}

impl Decos {
    fn merge(&mut self, o: &Decos) {
        self.builtin = self.builtin.or(o.builtin);
        self.location = self.location.or(o.location);
        self.component = self.component.or(o.component);
        self.index = self.index.or(o.index);
        self.flat |= o.flat;
        self.no_perspective |= o.no_perspective;
        self.centroid |= o.centroid;
        self.sample |= o.sample;
        self.spec_id = self.spec_id.or(o.spec_id);
        self.offset = self.offset.or(o.offset);
        self.array_stride = self.array_stride.or(o.array_stride);
        self.matrix_stride = self.matrix_stride.or(o.matrix_stride);
        self.row_major |= o.row_major;
        self.block |= o.block;
        self.buffer_block |= o.buffer_block;
        self.set = self.set.or(o.set);
        self.binding = self.binding.or(o.binding);
    }
}

/// A module-scope `OpVariable`.
#[derive(Clone, Debug)]
pub(crate) struct GlobalVar {
    pub sc: StorageClass,
    /// Pointee type.
    pub ty: Id,
    pub init: Option<Id>,
}

/// The compiled entry point.
#[derive(Clone, Debug)]
pub(crate) struct EntryPoint {
    pub func: Id,
    pub name: String,
    /// The `OpEntryPoint`'s interface variables (every `Input` and `Output` one it uses; all
    /// its global variables from SPIR-V 1.4).
    pub interface: Vec<Id>,
}

/// Everything module-scoped, resolved against the specialization constants.
pub(crate) struct Module {
    pub raw: dr::Module,
    pub bound: u32,
    pub types: Types,
    pub consts: HashMap<Id, Const>,
    pub globals: HashMap<Id, GlobalVar>,
    pub decos: HashMap<Id, Decos>,
    pub member_decos: HashMap<(Id, u32), Decos>,
    pub names: HashMap<Id, String>,
    /// The `GLSL.std.450` import, if any.
    pub glsl: Option<Id>,
    /// `NonSemantic.*` imports: their `OpExtInst`s are ignored.
    pub nonsemantic: HashSet<Id>,
    pub funcs: HashMap<Id, usize>,
    pub entry: EntryPoint,
}

/// Operand access on `rspirv` instructions that reports malformed operands as errors.
pub(crate) trait InstExt {
    fn name(&self) -> String;
    fn rid(&self) -> Result<Id>;
    fn rty(&self) -> Result<Id>;
    fn id(&self, i: usize) -> Result<Id>;
    fn lit(&self, i: usize) -> Result<u32>;
    fn operand(&self, i: usize) -> Result<&Operand>;
}

impl InstExt for Instruction {
    fn name(&self) -> String {
        match self.result_id {
            Some(r) => format!("Op{} %{r}", self.class.opname),
            None => format!("Op{}", self.class.opname),
        }
    }
    fn rid(&self) -> Result<Id> {
        self.result_id.ok_or_else(|| invalid!("{} has no result id", self.name()))
    }
    fn rty(&self) -> Result<Id> {
        self.result_type.ok_or_else(|| invalid!("{} has no result type", self.name()))
    }
    fn operand(&self, i: usize) -> Result<&Operand> {
        self.operands.get(i).ok_or_else(|| invalid!("{} lacks operand {i}", self.name()))
    }
    fn id(&self, i: usize) -> Result<Id> {
        match self.operand(i)? {
            Operand::IdRef(r) | Operand::IdScope(r) | Operand::IdMemorySemantics(r) => Ok(*r),
            o => Err(invalid!("{} operand {i} is {o:?}, not an id", self.name())),
        }
    }
    fn lit(&self, i: usize) -> Result<u32> {
        match self.operand(i)? {
            Operand::LiteralBit32(v) | Operand::LiteralExtInstInteger(v) => Ok(*v),
            o => Err(invalid!("{} operand {i} is {o:?}, not a 32-bit literal", self.name())),
        }
    }
}

/// Checks the header and instruction framing, and works around two gaps in `rspirv`'s loader:
/// module-scope `NonSemantic.*` `OpExtInst`s (debug info) are stripped, and
/// `OpExecutionModeId` is re-encoded as `OpExecutionMode` (whose mode parameters the grammar
/// types per mode, so `LocalSizeId`'s operands still parse as ids).
pub(crate) fn prepass(words: &[u32]) -> Result<Vec<u32>> {
    let parse = |m: String| CompileError::Parse(m);
    if words.len() < 5 {
        return Err(parse(format!("module is {} words long, shorter than the 5-word header", words.len())));
    }
    if words[0] != spirv::MAGIC_NUMBER {
        if words[0] == spirv::MAGIC_NUMBER.swap_bytes() {
            return Err(parse("big-endian SPIR-V is not supported".into()));
        }
        return Err(parse(format!("bad magic number {:#010x} (expected {:#010x})", words[0], spirv::MAGIC_NUMBER)));
    }
    let (major, minor) = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF);
    if major != 1 || minor > 6 {
        return Err(unsupported!("SPIR-V version {major}.{minor}"));
    }
    if words[3] == 0 || words[3] > MAX_BOUND {
        return Err(parse(format!("id bound {} out of range (1..={MAX_BOUND})", words[3])));
    }
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5]);
    let mut nonsemantic = HashSet::new();
    let mut in_block = false;
    let mut i = 5;
    while i < words.len() {
        let (wc, op) = ((words[i] >> 16) as usize, words[i] & 0xFFFF);
        if wc == 0 {
            return Err(parse(format!("instruction at word {i} (opcode {op}) has word count 0")));
        }
        if i + wc > words.len() {
            return Err(parse(format!(
                "module truncated: instruction at word {i} (opcode {op}) needs {wc} words, {} left",
                words.len() - i
            )));
        }
        let inst = &words[i..i + wc];
        let mut keep = true;
        match op {
            x if x == Op::ExtInstImport as u32 && wc >= 3 && decode_string(&inst[2..]).starts_with("NonSemantic.") => {
                nonsemantic.insert(inst[1]);
            }
            x if x == Op::ExtInst as u32 && wc >= 4 => keep = in_block || !nonsemantic.contains(&inst[3]),
            x if x == Op::Label as u32 => in_block = true,
            x if is_terminator(x) => in_block = false,
            _ => {}
        }
        if keep {
            let at = out.len();
            out.extend_from_slice(inst);
            if op == Op::ExecutionModeId as u32 {
                out[at] = (out[at] & 0xFFFF_0000) | Op::ExecutionMode as u32;
            }
        }
        i += wc;
    }
    Ok(out)
}

fn is_terminator(op: u32) -> bool {
    [Op::Branch, Op::BranchConditional, Op::Switch, Op::Kill, Op::Return, Op::ReturnValue, Op::Unreachable]
        .iter()
        .any(|o| *o as u32 == op)
        || op == Op::TerminateInvocation as u32
}

/// A SPIR-V literal string: UTF-8 bytes, little-endian in words, NUL-terminated.
fn decode_string(words: &[u32]) -> String {
    let mut bytes = Vec::new();
    'outer: for w in words {
        for b in w.to_le_bytes() {
            if b == 0 {
                break 'outer;
            }
            bytes.push(b);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(crate) fn load(words: &[u32]) -> Result<dr::Module> {
    // rspirv is third-party code: a panic inside it on some hostile input must still become an
    // error, never cross into the driver.
    let loaded = std::panic::catch_unwind(|| rspirv::dr::load_words(words));
    match loaded {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(CompileError::Parse(e.to_string())),
        Err(_) => Err(CompileError::Parse("the SPIR-V parser rejected the module".into())),
    }
}

impl Module {
    pub fn parse(words: &[u32], opts: &CompileOptions) -> Result<Module> {
        let words = prepass(words)?;
        let raw = load(&words)?;
        let bound = raw.header.as_ref().map(|h| h.bound).unwrap_or(0);
        let mut m = Module {
            raw,
            bound,
            types: Types::default(),
            consts: HashMap::new(),
            globals: HashMap::new(),
            decos: HashMap::new(),
            member_decos: HashMap::new(),
            names: HashMap::new(),
            glsl: None,
            nonsemantic: HashSet::new(),
            funcs: HashMap::new(),
            entry: EntryPoint { func: 0, name: String::new(), interface: Vec::new() },
        };
        m.check_features()?;
        m.collect_decorations()?;
        m.collect_names();
        m.collect_types_and_values(opts)?;
        for (i, f) in m.raw.functions.iter().enumerate() {
            let def = f.def.as_ref().ok_or_else(|| invalid!("function without OpFunction"))?;
            m.funcs.insert(def.rid()?, i);
        }
        m.entry = m.find_entry(&opts.entry_point, opts.target.stage)?;
        Ok(m)
    }

    fn check_features(&mut self) -> Result<()> {
        for inst in &self.raw.capabilities {
            match inst.operand(0)? {
                Operand::Capability(c) if CAPABILITIES.contains(c) => {}
                Operand::Capability(c) => return Err(unsupported!("SPIR-V capability {c:?}")),
                o => return Err(invalid!("OpCapability with operand {o:?}")),
            }
        }
        for inst in &self.raw.extensions {
            match inst.operand(0)? {
                Operand::LiteralString(s) if EXTENSIONS.contains(&s.as_str()) => {}
                Operand::LiteralString(s) => return Err(unsupported!("SPIR-V extension {s}")),
                o => return Err(invalid!("OpExtension with operand {o:?}")),
            }
        }
        for inst in &self.raw.ext_inst_imports {
            let id = inst.rid()?;
            match inst.operand(0)? {
                Operand::LiteralString(s) if s == "GLSL.std.450" => self.glsl = Some(id),
                Operand::LiteralString(s) if s.starts_with("NonSemantic.") => {
                    self.nonsemantic.insert(id);
                }
                Operand::LiteralString(s) => return Err(unsupported!("extended instruction set {s}")),
                o => return Err(invalid!("OpExtInstImport with operand {o:?}")),
            }
        }
        if let Some(mm) = &self.raw.memory_model {
            match mm.operand(0)? {
                Operand::AddressingModel(
                    spirv::AddressingModel::Logical | spirv::AddressingModel::PhysicalStorageBuffer64,
                ) => {}
                Operand::AddressingModel(a) => return Err(unsupported!("addressing model {a:?}")),
                o => return Err(invalid!("OpMemoryModel with operand {o:?}")),
            }
        }
        Ok(())
    }

    fn collect_decorations(&mut self) -> Result<()> {
        fn apply(d: &mut Decos, inst: &Instruction, at: usize) -> Result<()> {
            let lit = |i: usize| inst.lit(i);
            match inst.operand(at)? {
                Operand::Decoration(dec) => match dec {
                    Decoration::BuiltIn => match inst.operand(at + 1)? {
                        Operand::BuiltIn(b) => d.builtin = Some(*b),
                        o => return Err(invalid!("BuiltIn decoration with operand {o:?}")),
                    },
                    Decoration::SpecId => d.spec_id = Some(lit(at + 1)?),
                    Decoration::Offset => d.offset = Some(lit(at + 1)?),
                    Decoration::ArrayStride => d.array_stride = Some(lit(at + 1)?),
                    Decoration::MatrixStride => d.matrix_stride = Some(lit(at + 1)?),
                    Decoration::RowMajor => d.row_major = true,
                    Decoration::Block => d.block = true,
                    Decoration::BufferBlock => d.buffer_block = true,
                    Decoration::DescriptorSet => d.set = Some(lit(at + 1)?),
                    Decoration::Binding => d.binding = Some(lit(at + 1)?),
                    Decoration::Location => d.location = Some(lit(at + 1)?),
                    Decoration::Component => d.component = Some(lit(at + 1)?),
                    Decoration::Index => d.index = Some(lit(at + 1)?),
                    Decoration::Flat => d.flat = true,
                    Decoration::NoPerspective => d.no_perspective = true,
                    Decoration::Centroid => d.centroid = true,
                    Decoration::Sample => d.sample = true,
                    _ => {}
                },
                o => return Err(invalid!("{} with operand {o:?}", inst.name())),
            }
            Ok(())
        }
        let mut groups: HashMap<Id, Decos> = HashMap::new();
        for inst in &self.raw.annotations {
            match inst.class.opcode {
                Op::Decorate | Op::DecorateId => {
                    let t = inst.id(0)?;
                    apply(self.decos.entry(t).or_default(), inst, 1)?;
                }
                Op::MemberDecorate => {
                    let (t, mi) = (inst.id(0)?, inst.lit(1)?);
                    apply(self.member_decos.entry((t, mi)).or_default(), inst, 2)?;
                }
                Op::DecorationGroup => {
                    groups.insert(inst.rid()?, Decos::default());
                }
                _ => {}
            }
        }
        // Decoration groups: the group id collected its decorations above like any target.
        for inst in &self.raw.annotations {
            match inst.class.opcode {
                Op::GroupDecorate => {
                    let g = self.decos.get(&inst.id(0)?).cloned().unwrap_or_default();
                    for i in 1..inst.operands.len() {
                        self.decos.entry(inst.id(i)?).or_default().merge(&g);
                    }
                }
                Op::GroupMemberDecorate => {
                    let g = self.decos.get(&inst.id(0)?).cloned().unwrap_or_default();
                    let mut i = 1;
                    while i + 1 < inst.operands.len() {
                        let key = (inst.id(i)?, inst.lit(i + 1)?);
                        self.member_decos.entry(key).or_default().merge(&g);
                        i += 2;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn collect_names(&mut self) {
        for inst in &self.raw.debug_names {
            if let (Op::Name, Some(Operand::IdRef(t)), Some(Operand::LiteralString(s))) =
                (inst.class.opcode, inst.operands.first(), inst.operands.get(1))
            {
                if !s.is_empty() {
                    self.names.insert(*t, s.clone());
                }
            }
        }
    }

    /// Types, constants and global variables, in declaration order (each may refer only to
    /// earlier ones, which is what keeps the type graph acyclic).
    fn collect_types_and_values(&mut self, opts: &CompileOptions) -> Result<()> {
        let insts = std::mem::take(&mut self.raw.types_global_values);
        let r = insts.iter().try_for_each(|inst| self.global_inst(inst, opts));
        self.raw.types_global_values = insts;
        r
    }

    fn global_inst(&mut self, inst: &Instruction, opts: &CompileOptions) -> Result<()> {
        use Op::*;
        let op = inst.class.opcode;
        if let Some(id) = inst.result_id {
            let forward = op == TypePointer
                && matches!(self.types.get(id), Ok(Type::Pointer { pointee: super::types::FORWARD, .. }));
            if (self.types.contains(id) && !forward) || self.consts.contains_key(&id) || self.globals.contains_key(&id)
            {
                return Err(invalid!("%{id} is defined more than once"));
            }
        }
        match op {
            ConstantTrue
            | ConstantFalse
            | Constant
            | ConstantComposite
            | ConstantNull
            | SpecConstantTrue
            | SpecConstantFalse
            | SpecConstant
            | SpecConstantComposite
            | SpecConstantOp
            | Undef => {
                let c = consts::eval(self, inst, &opts.specialization)?;
                self.consts.insert(inst.rid()?, c);
                Ok(())
            }
            Variable => {
                let (sc, pointee) = self.types.pointee(inst.rty()?)?;
                let init = if inst.operands.len() > 1 { Some(inst.id(1)?) } else { None };
                self.globals.insert(inst.rid()?, GlobalVar { sc, ty: pointee, init });
                Ok(())
            }
            Line | NoLine | Nop => Ok(()),
            TypeForwardPointer => {
                let id = inst.id(0)?;
                match inst.operand(1)? {
                    Operand::StorageClass(StorageClass::PhysicalStorageBuffer) => {}
                    o => return Err(unsupported!("OpTypeForwardPointer with storage class {o:?}")),
                }
                if self.types.contains(id) {
                    return Err(invalid!("OpTypeForwardPointer of %{id}, which is already defined"));
                }
                let t = Type::Pointer { sc: StorageClass::PhysicalStorageBuffer, pointee: super::types::FORWARD };
                self.types.insert(id, t)
            }
            _ => {
                let t = self.type_decl(inst)?;
                self.types.insert(inst.rid()?, t)
            }
        }
    }

    /// The type an `OpType*` declares (every other instruction is refused).
    fn type_decl(&self, inst: &Instruction) -> Result<Type> {
        use Op::*;
        let ty = |m: &Module, i: usize| -> Result<Id> {
            let t = inst.id(i)?;
            if m.types.contains(t) {
                Ok(t)
            } else {
                Err(invalid!("{} refers to %{t}, which is not a previously declared type", inst.name()))
            }
        };
        Ok(match inst.class.opcode {
            TypeVoid => Type::Void,
            TypeBool => Type::Bool,
            TypeInt => {
                let (width, signed) = (inst.lit(0)?, inst.lit(1)? != 0);
                if ![8, 16, 32, 64].contains(&width) {
                    return Err(unsupported!("{width}-bit integers"));
                }
                Type::Int { width, signed }
            }
            TypeFloat => {
                let width = inst.lit(0)?;
                if ![16, 32, 64].contains(&width) {
                    return Err(unsupported!("{width}-bit floats"));
                }
                if inst.operands.len() > 1 {
                    return Err(unsupported!("floating-point encoding {:?}", inst.operands[1]));
                }
                Type::Float { width }
            }
            TypeVector => {
                let n = inst.lit(1)?;
                if !(2..=4).contains(&n) {
                    return Err(unsupported!("{n}-component vectors"));
                }
                Type::Vector { elem: ty(self, 0)?, n }
            }
            TypeMatrix => {
                let cols = inst.lit(1)?;
                if !(2..=4).contains(&cols) {
                    return Err(invalid!("{}: matrix with {cols} columns", inst.name()));
                }
                Type::Matrix { col: ty(self, 0)?, cols }
            }
            TypeArray => {
                let elem = ty(self, 0)?;
                let len_id = inst.id(1)?;
                let len = self
                    .const_u32(len_id)
                    .ok_or_else(|| invalid!("{}: array length %{len_id} is not an integer constant", inst.name()))?;
                if len == 0 {
                    return Err(invalid!("{}: zero-length array", inst.name()));
                }
                Type::Array { elem, len }
            }
            TypeRuntimeArray => Type::RuntimeArray { elem: ty(self, 0)? },
            TypeStruct => {
                let mut members = Vec::new();
                for i in 0..inst.operands.len() {
                    members.push(ty(self, i)?);
                }
                Type::Struct { members }
            }
            TypePointer => {
                let sc = match inst.operand(0)? {
                    Operand::StorageClass(sc) => *sc,
                    o => return Err(invalid!("{} with storage class {o:?}", inst.name())),
                };
                // A pointee declared later is a forward physical pointer, in the table already.
                Type::Pointer { sc, pointee: ty(self, 1)? }
            }
            TypeFunction => Type::Function,
            TypeImage => {
                let dim = match inst.operand(1)? {
                    Operand::Dim(d) => *d,
                    o => return Err(invalid!("{} with dim {o:?}", inst.name())),
                };
                let format = match inst.operand(6)? {
                    Operand::ImageFormat(f) => *f,
                    o => return Err(invalid!("{} with format {o:?}", inst.name())),
                };
                Type::Image { sampled: ty(self, 0)?, dim, arrayed: inst.lit(3)? != 0, ms: inst.lit(4)? != 0, format }
            }
            TypeSampler => Type::Sampler,
            TypeSampledImage => Type::SampledImage { image: ty(self, 0)? },
            TypeAccelerationStructureKHR => Type::AccelStruct,
            TypeRayQueryKHR => Type::RayQuery,
            _ => return Err(unsupported!("module-scope instruction {}", inst.name())),
        })
    }

    /// Value of a 32-bit (or smaller-valued 64-bit) integer constant, if `id` is one.
    pub fn const_u32(&self, id: Id) -> Option<u32> {
        let c = self.consts.get(&id)?;
        match self.types.get(c.ty).ok()? {
            Type::Int { width: 32, .. } => c.words.first().copied(),
            Type::Int { width: 64, .. } if c.words.get(1) == Some(&0) => c.words.first().copied(),
            _ => None,
        }
    }

    /// The entry point named `name` whose execution model is `stage`'s. Entry points of other
    /// names or stages are ignored (a module may carry a whole pipeline's shaders).
    fn find_entry(&self, name: &str, stage: Stage) -> Result<EntryPoint> {
        let want = stage.execution_model();
        let mut seen = Vec::new();
        let (mut found, mut other) = (None, None);
        let mut interface = Vec::new();
        for ep in &self.raw.entry_points {
            let model = match ep.operand(0)? {
                Operand::ExecutionModel(m) => *m,
                o => return Err(invalid!("OpEntryPoint with model {o:?}")),
            };
            let ep_name = match ep.operand(2)? {
                Operand::LiteralString(s) => s.clone(),
                o => return Err(invalid!("OpEntryPoint with name {o:?}")),
            };
            if ep_name == name && model == want {
                if found.replace(ep.id(1)?).is_some() {
                    return Err(invalid!("two {model:?} entry points are named `{name}`"));
                }
                interface = (3..ep.operands.len()).map(|i| ep.id(i)).collect::<Result<_>>()?;
            } else if ep_name == name {
                other.get_or_insert(model);
            }
            seen.push(format!("{ep_name} ({model:?})"));
        }
        let func = match (found, other) {
            (Some(f), _) => f,
            (None, Some(model)) => {
                return Err(interface!(
                "entry point `{name}` is a {model:?} entry point, not a {stage} one ({want:?}) (the module has: {})",
                seen.join(", ")
            ))
            }
            (None, None) => {
                return Err(interface!("entry point `{name}` not found (the module has: {})", seen.join(", ")))
            }
        };
        if !self.funcs.contains_key(&func) {
            return Err(invalid!("entry point `{name}` names %{func}, which is not a function"));
        }
        Ok(EntryPoint { func, name: name.to_string(), interface })
    }

    /// Whether the module declares capability `c`.
    pub fn has_capability(&self, c: Capability) -> bool {
        self.raw.capabilities.iter().any(|i| matches!(i.operands.first(), Some(Operand::Capability(x)) if *x == c))
    }

    pub fn decos(&self, id: Id) -> Decos {
        self.decos.get(&id).cloned().unwrap_or_default()
    }

    pub fn member_decos(&self, id: Id, member: u32) -> Decos {
        self.member_decos.get(&(id, member)).cloned().unwrap_or_default()
    }

    /// `%id` plus its debug name, for messages and dumps.
    pub fn label(&self, id: Id) -> String {
        match self.names.get(&id) {
            Some(n) => format!("%{id} \"{n}\""),
            None => format!("%{id}"),
        }
    }
}
