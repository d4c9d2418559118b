//! A pipeline layout read off a module: every descriptor binding its resource variables
//! declare, with the descriptor type their SPIR-V type calls for, laid out the way the
//! runtime lays sets out (bindings in order, one 64-byte record per descriptor, two for a
//! combined image sampler). Tools use
//! it to compile a module without a Vulkan pipeline layout: the corpus benchmark, the
//! front-end fuzzer.

use super::descriptor_type as vkdt;
use super::error::{invalid, Result};
use super::module::{load, prepass, InstExt};
use super::{BindingLayout, ResourceLayout};
use rspirv::dr::Operand;
use spirv::{Decoration, Dim, Op, StorageClass};
use std::collections::HashMap;
use vortex_model::abi::kernel::{desc, kargs};

/// The layout a module's resource variables need (push constants: the largest range).
pub fn reflect_layout(words: &[u32]) -> Result<ResourceLayout> {
    let m = load(&prepass(words)?)?;
    let mut set_of = HashMap::new();
    let mut binding_of = HashMap::new();
    let mut block = HashMap::new();
    for a in &m.annotations {
        if a.class.opcode != Op::Decorate {
            continue;
        }
        let target = a.id(0)?;
        match a.operands.get(1) {
            Some(Operand::Decoration(Decoration::DescriptorSet)) => {
                set_of.insert(target, a.lit(2)?);
            }
            Some(Operand::Decoration(Decoration::Binding)) => {
                binding_of.insert(target, a.lit(2)?);
            }
            Some(Operand::Decoration(d @ (Decoration::Block | Decoration::BufferBlock))) => {
                block.insert(target, *d);
            }
            _ => {}
        }
    }
    // What each type id is, as far as descriptors care.
    let defs: HashMap<u32, &rspirv::dr::Instruction> =
        m.types_global_values.iter().filter_map(|i| i.result_id.map(|r| (r, i))).collect();
    let mut bindings: Vec<(u32, u32, u32, u32)> = Vec::new(); // set, binding, type, count
    for v in m.types_global_values.iter().filter(|i| i.class.opcode == Op::Variable) {
        let id = v.rid()?;
        let (Some(&set), Some(&binding)) = (set_of.get(&id), binding_of.get(&id)) else { continue };
        let sc = match v.operand(0)? {
            Operand::StorageClass(sc) => *sc,
            o => return Err(invalid!("OpVariable with storage class {o:?}")),
        };
        // Pointer -> pointee, then arrays of descriptors.
        let ptr = defs.get(&v.rty()?).ok_or_else(|| invalid!("variable %{id} of an unknown type"))?;
        let mut t = ptr.id(1)?;
        let mut count = 1u32;
        loop {
            let d = defs.get(&t).ok_or_else(|| invalid!("type %{t} is not declared"))?;
            match d.class.opcode {
                Op::TypeArray => {
                    let len = d.id(1)?;
                    let n = defs
                        .get(&len)
                        .filter(|c| c.class.opcode == Op::Constant)
                        .and_then(|c| c.lit(0).ok())
                        .unwrap_or(1);
                    count = count.saturating_mul(n.max(1));
                    t = d.id(0)?;
                }
                Op::TypeRuntimeArray => t = d.id(0)?,
                _ => break,
            }
        }
        let d = defs[&t];
        let ty = match (sc, d.class.opcode) {
            (StorageClass::StorageBuffer, _) => vkdt::STORAGE_BUFFER,
            (StorageClass::Uniform, _) if block.get(&t) == Some(&Decoration::BufferBlock) => vkdt::STORAGE_BUFFER,
            (StorageClass::Uniform, _) => vkdt::UNIFORM_BUFFER,
            (_, Op::TypeAccelerationStructureKHR) => vkdt::ACCELERATION_STRUCTURE,
            (_, Op::TypeSampler) => vkdt::SAMPLER,
            (_, Op::TypeSampledImage) => {
                let image = defs.get(&d.id(0)?).ok_or_else(|| invalid!("sampled image %{t} of an unknown image"))?;
                match image.operand(1)? {
                    Operand::Dim(Dim::DimBuffer) => vkdt::UNIFORM_TEXEL_BUFFER,
                    _ => vkdt::COMBINED_IMAGE_SAMPLER,
                }
            }
            (_, Op::TypeImage) => {
                let dim = match d.operand(1)? {
                    Operand::Dim(dim) => *dim,
                    o => return Err(invalid!("OpTypeImage with dim {o:?}")),
                };
                match (dim, d.lit(5)? == 1) {
                    (Dim::DimBuffer, true) => vkdt::UNIFORM_TEXEL_BUFFER,
                    (Dim::DimBuffer, false) => vkdt::STORAGE_TEXEL_BUFFER,
                    (Dim::DimSubpassData, _) => vkdt::INPUT_ATTACHMENT,
                    (_, true) => vkdt::SAMPLED_IMAGE,
                    _ => vkdt::STORAGE_IMAGE,
                }
            }
            _ => continue,
        };
        bindings.push((set, binding, ty, count));
    }
    bindings.sort();
    bindings.dedup_by_key(|b| (b.0, b.1));
    let mut out = Vec::new();
    let mut offsets: HashMap<u32, u32> = HashMap::new();
    for (set, binding, ty, count) in bindings {
        let off = offsets.entry(set).or_default();
        out.push(BindingLayout { set, binding, descriptor_type: ty, count, offset: *off, dynamic_index: None });
        *off += count.saturating_mul(vkdt::records(ty) * desc::BYTES as u32);
    }
    Ok(ResourceLayout { bindings: out, push_constant_bytes: kargs::PUSH_BYTES as u32 })
}
