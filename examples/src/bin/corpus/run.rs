//! One driver's side of the corpus: every shader run as its description says, through the
//! loader, and everything it is checked on written to disk for the comparison.
//!
//! Per shader, `OUT/<id>/status` holds one line (`ok <pipeline ms>`, `unsupported <what>`
//! or `error <message>`) and `OUT/<id>/<key>.bin` the final contents of each checked
//! resource. The status file is written last, so a shader that crashed the process has none.

use crate::scene;
use crate::spec::{self, BufferKind, ImageUse, Kind, Resource, Shader};
use ash::vk;
use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::Instant;
use vortex_examples::{
    AccelerationStructure, Binding, Buffer, ComputePipeline, Context, Descriptor, Icd, Image, ImageSpec,
};

/// The checked resources' final bytes, by key.
pub type Readback = Vec<(String, Vec<u8>)>;

/// What a shader's run produced.
pub enum Outcome {
    /// Pipeline creation time, and the checked resources' bytes by key.
    Ran(f64, Readback),
    Unsupported(String),
    Failed(String),
}

/// The device as the comparison needs to know it.
pub fn describe(ctx: &Context) -> String {
    let i = ctx.info();
    format!(
        "name {}\nsubgroup_size {}\nsubgroup_operations {:#x}\nenabled {}\n",
        i.name,
        i.subgroup_size,
        i.subgroup_operations.as_raw(),
        i.enabled.join(" ")
    )
}

fn subgroup_bit(name: &str) -> Option<vk::SubgroupFeatureFlags> {
    use vk::SubgroupFeatureFlags as S;
    Some(match name {
        "subgroup-basic" => S::BASIC,
        "subgroup-vote" => S::VOTE,
        "subgroup-arithmetic" => S::ARITHMETIC,
        "subgroup-ballot" => S::BALLOT,
        "subgroup-shuffle" => S::SHUFFLE,
        "subgroup-shuffle-relative" => S::SHUFFLE_RELATIVE,
        "subgroup-clustered" => S::CLUSTERED,
        "subgroup-quad" => S::QUAD,
        _ => return None,
    })
}

/// The first feature the shader needs that the device lacks.
fn missing_feature(ctx: &Context, s: &Shader) -> Option<String> {
    let info = ctx.info();
    s.features
        .iter()
        .find(|f| match subgroup_bit(f) {
            Some(bit) => !info.subgroup_operations.contains(bit),
            None => !info.enabled.contains(&f.as_str()),
        })
        .cloned()
}

fn descriptor_type(r: &Resource) -> Option<vk::DescriptorType> {
    use vk::DescriptorType as D;
    Some(match &r.kind {
        Kind::Buffer { kind, .. } => match kind {
            BufferKind::Storage => D::STORAGE_BUFFER,
            BufferKind::Uniform => D::UNIFORM_BUFFER,
            BufferKind::StorageDynamic => D::STORAGE_BUFFER_DYNAMIC,
            BufferKind::UniformDynamic => D::UNIFORM_BUFFER_DYNAMIC,
        },
        Kind::Image { usage: ImageUse::Storage, .. } => D::STORAGE_IMAGE,
        Kind::Image { usage: ImageUse::Sampled, .. } => D::SAMPLED_IMAGE,
        Kind::Sampler(_) => D::SAMPLER,
        Kind::Combined { .. } => D::COMBINED_IMAGE_SAMPLER,
        Kind::TexelBuffer { storage: true, .. } => D::STORAGE_TEXEL_BUFFER,
        Kind::TexelBuffer { storage: false, .. } => D::UNIFORM_TEXEL_BUFFER,
        Kind::Scene(_) => D::ACCELERATION_STRUCTURE_KHR,
    })
}

/// Live objects of one run (dropped after the submission finished).
#[derive(Default)]
struct Objects {
    buffers: HashMap<String, Buffer>,
    images: HashMap<String, (Image, Buffer)>,
    samplers: HashMap<String, Sampler>,
    views: HashMap<String, BufferView>,
    scenes: HashMap<String, Vec<AccelerationStructure>>,
}

struct Sampler(ash::Device, vk::Sampler);
impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: no submission uses it any more.
        unsafe { self.0.destroy_sampler(self.1, None) };
    }
}

struct BufferView(ash::Device, vk::BufferView);
impl Drop for BufferView {
    fn drop(&mut self) {
        // SAFETY: no submission uses it any more.
        unsafe { self.0.destroy_buffer_view(self.1, None) };
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn make_sampler(ctx: &Context, s: &spec::SamplerSpec) -> Result<Sampler, String> {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(s.mag)
        .min_filter(s.min)
        .mipmap_mode(s.mipmap)
        .address_mode_u(s.address[0])
        .address_mode_v(s.address[1])
        .address_mode_w(s.address[2])
        .mip_lod_bias(s.lod_bias)
        .min_lod(s.min_lod)
        .max_lod(s.max_lod)
        .border_color(s.border)
        .unnormalized_coordinates(s.unnormalized);
    // SAFETY: valid device and create info.
    let h = unsafe { ctx.device().create_sampler(&info, None) }.map_err(|e| format!("vkCreateSampler: {e:?}"))?;
    Ok(Sampler(ctx.device().clone(), h))
}

fn image_spec(g: &spec::ImageGeometry, usage: vk::ImageUsageFlags) -> ImageSpec {
    ImageSpec {
        view_type: g.view_type,
        format: g.format,
        extent: g.extent,
        layers: g.layers,
        mip_levels: g.mips,
        usage,
    }
}

/// Runs one shader on `ctx`.
pub fn run_shader(ctx: &Context, s: &Shader) -> Outcome {
    if let Some(f) = missing_feature(ctx, s) {
        return Outcome::Unsupported(f);
    }
    match run_inner(ctx, s) {
        Ok((ms, out)) => Outcome::Ran(ms, out),
        Err(e) => Outcome::Failed(e),
    }
}

fn run_inner(ctx: &Context, s: &Shader) -> Result<(f64, Readback), String> {
    let code = fs::read(&s.spv).map_err(|e| format!("{}: {e}", s.spv.display()))?;
    let code: Vec<u32> = code.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
    let mut objs = Objects::default();
    let usage_all = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::UNIFORM_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST;

    // Buffers first (address generators may refer to any of them), then their contents.
    for r in &s.resources {
        let (size, usage) = match &r.kind {
            Kind::Buffer { size, .. } => (*size, usage_all),
            Kind::TexelBuffer { size, storage, .. } => (
                *size,
                usage_all
                    | if *storage {
                        vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER
                    } else {
                        vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                    },
            ),
            _ => continue,
        };
        objs.buffers.insert(r.key.clone(), Buffer::new(ctx, size, usage).map_err(err)?);
    }
    // Scenes next: buffers may hold their addresses too.
    for r in &s.resources {
        if let Kind::Scene(name) = &r.kind {
            objs.scenes.insert(r.key.clone(), scene::build(ctx, name)?);
        }
    }
    let mut addresses: HashMap<String, u64> = objs.buffers.iter().map(|(k, b)| (k.clone(), b.address())).collect();
    for (k, sc) in &objs.scenes {
        addresses.insert(k.clone(), sc.last().ok_or("empty scene")?.address());
    }
    let resolve = |k: &str| addresses.get(k).copied();
    for r in &s.resources {
        if let Some(b) = objs.buffers.get(&r.key) {
            let bytes =
                spec::materialize(&r.init, b.size() as usize, &resolve).map_err(|e| format!("{}: {e}", r.key))?;
            b.write(&bytes);
        }
    }

    // Images, samplers, texel buffer views, scenes.
    let mut upload = Vec::new();
    for r in &s.resources {
        let geometry = match &r.kind {
            Kind::Image { usage, spec } => Some((spec, *usage == ImageUse::Storage)),
            Kind::Combined { spec, .. } => Some((spec, false)),
            _ => None,
        };
        if let Some((g, storage)) = geometry {
            let usage = if storage { vk::ImageUsageFlags::STORAGE } else { vk::ImageUsageFlags::SAMPLED };
            let spec = image_spec(g, usage);
            let bytes = spec.packed_bytes().ok_or_else(|| format!("{}: format {:?} has no size", r.key, g.format))?;
            let img = Image::new(ctx, spec).map_err(err)?;
            let data = spec::materialize(&r.init, bytes as usize, &resolve)?;
            let staging =
                Buffer::with_data(ctx, &data, vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
                    .map_err(err)?;
            upload.push(r.key.clone());
            objs.images.insert(r.key.clone(), (img, staging));
        }
        match &r.kind {
            Kind::Sampler(sp) | Kind::Combined { sampler: sp, .. } => {
                objs.samplers.insert(r.key.clone(), make_sampler(ctx, sp)?);
            }
            Kind::TexelBuffer { format, .. } => {
                let buffer = &objs.buffers[&r.key];
                let info = vk::BufferViewCreateInfo::default()
                    .buffer(buffer.handle())
                    .format(*format)
                    .offset(0)
                    .range(vk::WHOLE_SIZE);
                // SAFETY: valid device, buffer and create info.
                let view = unsafe { ctx.device().create_buffer_view(&info, None) }
                    .map_err(|e| format!("vkCreateBufferView: {e:?}"))?;
                objs.views.insert(r.key.clone(), BufferView(ctx.device().clone(), view));
            }
            _ => {}
        }
    }
    if !upload.is_empty() {
        ctx.submit_once(|cmd| {
            for k in &upload {
                let (img, staging) = &objs.images[k];
                img.record_upload(cmd, staging);
            }
        })
        .map_err(err)?;
    }

    // The layout: one binding per (set, binding), as long as its highest element.
    let mut bindings: Vec<Binding> = Vec::new();
    for r in &s.resources {
        let (Some(slot), Some(ty)) = (r.slot, descriptor_type(r)) else { continue };
        match bindings.iter_mut().find(|b| b.set == slot.set && b.binding == slot.binding) {
            Some(b) if b.ty != ty => return Err(format!("{}: two descriptor types in one binding", r.key)),
            Some(b) => b.count = b.count.max(slot.element + 1),
            None => bindings.push(Binding { set: slot.set, binding: slot.binding, ty, count: slot.element + 1 }),
        }
    }
    let push_bytes = (s.push.len() as u32).next_multiple_of(4);
    let mut push = s.push.clone();
    push.resize(push_bytes as usize, 0);
    let t0 = Instant::now();
    let pipe = ComputePipeline::with_layout(ctx, &code, &bindings, push_bytes, &s.specialization).map_err(err)?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;

    // Descriptors, in slot order; dynamic offsets in layout order (set, binding, element).
    let mut dynamic: Vec<(spec::Slot, u32)> = Vec::new();
    for r in &s.resources {
        let Some(slot) = r.slot else { continue };
        let d = match &r.kind {
            Kind::Buffer { offset, range, dynamic_offset, kind, .. } => {
                if matches!(kind, BufferKind::StorageDynamic | BufferKind::UniformDynamic) {
                    dynamic.push((slot, *dynamic_offset));
                }
                Descriptor::Buffer {
                    buffer: objs.buffers[&r.key].handle(),
                    offset: *offset,
                    range: range.unwrap_or(vk::WHOLE_SIZE),
                }
            }
            Kind::Image { .. } => Descriptor::Image(objs.images[&r.key].0.view),
            Kind::Sampler(_) => Descriptor::Sampler(objs.samplers[&r.key].1),
            Kind::Combined { .. } => Descriptor::Combined(objs.images[&r.key].0.view, objs.samplers[&r.key].1),
            Kind::TexelBuffer { .. } => Descriptor::TexelBuffer(objs.views[&r.key].1),
            Kind::Scene(_) => {
                let tlas = objs.scenes[&r.key].last().ok_or("empty scene")?;
                Descriptor::AccelerationStructure(tlas.handle())
            }
        };
        pipe.write(slot.set, slot.binding, slot.element, &d).map_err(err)?;
    }
    dynamic.sort_by_key(|(s, _)| (s.set, s.binding, s.element));
    let dynamic: Vec<u32> = dynamic.into_iter().map(|(_, o)| o).collect();

    let checked = |k: &String| s.checks.iter().any(|c| &c.key == k);
    ctx.submit_once(|cmd| {
        pipe.record_dispatch_base(cmd, &push, s.base, s.dispatch, &dynamic);
        for (k, (img, staging)) in &objs.images {
            if checked(k) {
                img.record_download(cmd, staging);
            }
        }
    })
    .map_err(err)?;

    let mut out = Vec::new();
    for r in &s.resources {
        if !checked(&r.key) {
            continue;
        }
        let bytes = if let Some(b) = objs.buffers.get(&r.key) {
            b.read::<u8>()
        } else if let Some((_, staging)) = objs.images.get(&r.key) {
            staging.read::<u8>()
        } else {
            return Err(format!("{}: only buffers and images can be checked", r.key));
        };
        out.push((r.key.clone(), bytes));
    }
    drop(pipe);
    Ok((ms, out))
}

/// A key as a file name.
pub fn file_key(k: &str) -> String {
    k.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// Child mode: runs `shaders[start..]` on `icd`, writing results under `out`. A device lost
/// (or any failure that may have broken the context) gets a fresh context for the next
/// shader.
pub fn child(icd: &Icd, shaders: &[Shader], out: &Path) -> Result<(), String> {
    let new_ctx = || Context::with_optional_features(icd).map_err(|e| format!("cannot create a device: {e}"));
    let mut ctx = new_ctx()?;
    fs::create_dir_all(out).map_err(err)?;
    fs::write(out.join("device"), describe(&ctx)).map_err(err)?;
    for s in shaders {
        let dir = out.join(&s.id);
        fs::create_dir_all(&dir).map_err(err)?;
        let outcome = run_shader(&ctx, s);
        let status = match outcome {
            Outcome::Ran(ms, files) => {
                for (k, bytes) in files {
                    fs::write(dir.join(format!("{}.bin", file_key(&k))), bytes).map_err(err)?;
                }
                format!("ok {ms:.3}")
            }
            Outcome::Unsupported(f) => format!("unsupported {f}"),
            Outcome::Failed(e) => {
                // The device may be lost: start over with a fresh one.
                drop(ctx);
                ctx = new_ctx()?;
                format!("error {}", e.replace('\n', " "))
            }
        };
        fs::write(dir.join("status"), status + "\n").map_err(err)?;
    }
    Ok(())
}
