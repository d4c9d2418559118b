//! Command buffers. Recording compiles each command straight into device stream operations:
//! a dispatch becomes its kernel-argument block (placed in device memory owned by the
//! recording) plus DCR writes and a start pulse; transfers become DMA operations on device
//! addresses. Errors while recording are sticky and reported by `vkEndCommandBuffer`.

use crate::accel::AccelStruct;
use crate::descriptor::DescriptorSet;
use crate::device::Device;
use crate::image::Image;
use crate::pipeline::Pipeline;
use crate::stream::{launch_dcrs, AccelBuildJob, Recording, StreamOp};
use crate::{vk, VkResult};
use parking_lot::Mutex;
use std::sync::Arc;
use vortex_model::abi::format;
use vortex_model::abi::kernel::kargs;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbState {
    Initial,
    Recording,
    Executable,
    Invalid,
}

/// A buffer <-> image copy region, in Vulkan's terms.
#[derive(Clone, Copy, Debug)]
pub struct BufferImageCopy {
    pub buffer_offset: u64,
    pub buffer_row_length: u32,
    pub buffer_image_height: u32,
    pub mip_level: u32,
    pub base_layer: u32,
    pub layer_count: u32,
    pub offset: [i32; 3],
    pub extent: [u32; 3],
}

/// An image -> image copy region.
#[derive(Clone, Copy, Debug)]
pub struct ImageCopy {
    pub src_level: u32,
    pub src_layer: u32,
    pub layer_count: u32,
    pub src_offset: [i32; 3],
    pub dst_level: u32,
    pub dst_layer: u32,
    pub dst_offset: [i32; 3],
    pub extent: [u32; 3],
}

/// An image subresource range for clears.
#[derive(Clone, Copy, Debug)]
pub struct SubresourceRange {
    pub base_level: u32,
    pub level_count: u32,
    pub base_layer: u32,
    pub layer_count: u32,
}

struct Inner {
    state: CbState,
    error: Option<vk::Result>,
    rec: Recording,
    arena_used: u64,
    finished: Option<Arc<Recording>>,
    pipeline: Option<Arc<Pipeline>>,
    sets: Vec<Option<Arc<DescriptorSet>>>,
    set_dynamic: Vec<Vec<u32>>,
    push: Vec<u8>,
}

pub struct CommandBuffer {
    pub device: Arc<Device>,
    pub level: vk::CommandBufferLevel,
    inner: Mutex<Inner>,
}

impl CommandBuffer {
    pub fn new(device: Arc<Device>, level: vk::CommandBufferLevel) -> CommandBuffer {
        CommandBuffer {
            device,
            level,
            inner: Mutex::new(Inner {
                state: CbState::Initial,
                error: None,
                rec: Recording::default(),
                arena_used: 0,
                finished: None,
                pipeline: None,
                sets: vec![None; kargs::MAX_SETS],
                set_dynamic: vec![Vec::new(); kargs::MAX_SETS],
                push: vec![0; kargs::PUSH_BYTES],
            }),
        }
    }

    pub fn state(&self) -> CbState {
        self.inner.lock().state
    }

    pub fn reset(&self) {
        let mut i = self.inner.lock();
        i.state = CbState::Initial;
        i.error = None;
        i.rec = Recording::default();
        i.arena_used = 0;
        i.finished = None;
        i.pipeline = None;
        i.sets.iter_mut().for_each(|s| *s = None);
        i.set_dynamic.iter_mut().for_each(|d| d.clear());
        i.push.fill(0);
    }

    pub fn begin(&self) {
        self.reset();
        self.inner.lock().state = CbState::Recording;
    }

    pub fn end(&self) -> VkResult<()> {
        let mut i = self.inner.lock();
        if let Some(e) = i.error {
            i.state = CbState::Invalid;
            return Err(e);
        }
        let rec = std::mem::take(&mut i.rec);
        i.finished = Some(Arc::new(rec));
        i.state = CbState::Executable;
        Ok(())
    }

    /// The finished stream, for submission.
    pub fn recording(&self) -> Option<Arc<Recording>> {
        let i = self.inner.lock();
        (i.state == CbState::Executable).then(|| i.finished.clone()).flatten()
    }

    /// Runs `f` on the recording state unless an earlier command already failed; a failure
    /// becomes the buffer's sticky error.
    fn record(&self, what: &str, f: impl FnOnce(&mut Inner, &Device) -> VkResult<()>) {
        let mut i = self.inner.lock();
        if i.error.is_some() {
            return;
        }
        if i.state != CbState::Recording {
            tracing::error!("{what} on a command buffer that is not recording");
            i.error = Some(vk::Result::ERROR_UNKNOWN);
            return;
        }
        if let Err(e) = f(&mut i, &self.device) {
            tracing::error!("{what} failed while recording: {e:?}");
            i.error = Some(e);
        }
    }

    pub fn set_error(&self, what: &str, e: vk::Result) {
        self.record(what, |_, _| Err(e));
    }

    pub fn bind_pipeline(&self, p: Arc<Pipeline>) {
        self.record("vkCmdBindPipeline", |i, _| {
            i.pipeline = Some(p);
            Ok(())
        });
    }

    /// Binds `sets` at `first`; `dynamic` are the dynamic offsets in binding order.
    pub fn bind_sets(&self, first: u32, sets: Vec<Option<Arc<DescriptorSet>>>, dynamic: &[u32]) {
        self.record("vkCmdBindDescriptorSets", |i, _| {
            let mut d = dynamic;
            for (k, s) in sets.into_iter().enumerate() {
                let slot = first as usize + k;
                if slot >= kargs::MAX_SETS {
                    tracing::error!("descriptor set index {slot} out of range");
                    return Err(vk::Result::ERROR_UNKNOWN);
                }
                let n = s.as_ref().map_or(0, |s| s.layout.dynamic_count as usize).min(d.len());
                i.set_dynamic[slot] = d[..n].to_vec();
                d = &d[n..];
                i.sets[slot] = s;
            }
            Ok(())
        });
    }

    pub fn push_constants(&self, offset: u32, data: &[u8]) {
        self.record("vkCmdPushConstants", |i, _| {
            let end = offset as usize + data.len();
            if end > kargs::PUSH_BYTES {
                tracing::error!("push constants {offset}..{end} beyond {} bytes", kargs::PUSH_BYTES);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            i.push[offset as usize..end].copy_from_slice(data);
            Ok(())
        });
    }

    fn kargs_block(i: &Inner, p: &Pipeline, base: [u32; 3], count: [u32; 3]) -> Vec<u8> {
        let mut k = vec![0u8; kargs::BYTES];
        for a in 0..3 {
            k[kargs::BASE_GROUP + 4 * a..][..4].copy_from_slice(&base[a].to_le_bytes());
            k[kargs::NUM_GROUPS + 4 * a..][..4].copy_from_slice(&count[a].to_le_bytes());
        }
        for (s, set) in i.sets.iter().enumerate() {
            if let Some(set) = set {
                k[kargs::SET_ADDR + 8 * s..][..8].copy_from_slice(&set.address().to_le_bytes());
                let dbase = p.layout.dynamic_base.get(s).copied().unwrap_or(0) as usize;
                for (j, off) in i.set_dynamic[s].iter().enumerate() {
                    let idx = dbase + j;
                    if idx < kargs::MAX_DYNAMIC {
                        k[kargs::DYN_OFFSETS + 4 * idx..][..4].copy_from_slice(&off.to_le_bytes());
                    }
                }
            }
        }
        k[kargs::PUSH..kargs::PUSH + kargs::PUSH_BYTES].copy_from_slice(&i.push);
        k
    }

    fn emit_launch(
        i: &mut Inner,
        dev: &Device,
        base: [u32; 3],
        count: Option<[u32; 3]>,
        indirect: u64,
    ) -> VkResult<()> {
        let Some(p) = i.pipeline.clone() else {
            tracing::error!("dispatch with no compute pipeline bound");
            return Err(vk::Result::ERROR_UNKNOWN);
        };
        let block = Self::kargs_block(i, &p, base, count.unwrap_or([0; 3]));
        let mut used = i.arena_used;
        let ka = i.rec.stash(dev, &block, &mut used)?;
        i.arena_used = used;
        let launch = vortex_model::abi::dcr::Launch {
            pc: p.kernel_address(),
            param: ka,
            grid: count.unwrap_or([0; 3]),
            block: p.local_size,
            lmem_bytes: p.lmem_bytes,
            cluster: [1, 1, 1],
        };
        i.rec.ops.extend(launch_dcrs(dev, &launch, count.is_none()));
        let kernel: Arc<str> = p.name.as_str().into();
        i.rec.ops.push(match count {
            Some(_) => StreamOp::Start { kernel },
            None => StreamOp::DispatchIndirect { src: indirect, kargs: ka, kernel },
        });
        i.rec.keep.push(p);
        for s in i.sets.iter().flatten() {
            i.rec.keep.push(s.clone());
        }
        Ok(())
    }

    pub fn dispatch(&self, base: [u32; 3], count: [u32; 3]) {
        self.record("vkCmdDispatch", |i, d| Self::emit_launch(i, d, base, Some(count), 0));
    }

    pub fn dispatch_indirect(&self, addr: u64) {
        self.record("vkCmdDispatchIndirect", |i, d| Self::emit_launch(i, d, [0; 3], None, addr));
    }

    pub fn push_op(&self, what: &str, op: StreamOp) {
        self.record(what, |i, _| {
            i.rec.ops.push(op);
            Ok(())
        });
    }

    pub fn keep_alive(&self, what: &str, obj: Arc<dyn std::any::Any + Send + Sync>) {
        self.record(what, |i, _| {
            i.rec.keep.push(obj);
            Ok(())
        });
    }

    pub fn copy_buffer_image(&self, buffer: u64, image: &Arc<Image>, regions: &[BufferImageCopy], to_image: bool) {
        let what = if to_image { "vkCmdCopyBufferToImage" } else { "vkCmdCopyImageToBuffer" };
        self.record(what, |i, _| {
            let base = image.address()?;
            let tb = image.format.texel_bytes() as u64;
            for r in regions {
                let row_len = if r.buffer_row_length == 0 { r.extent[0] } else { r.buffer_row_length } as u64;
                let img_h = if r.buffer_image_height == 0 { r.extent[1] } else { r.buffer_image_height } as u64;
                let buf_row = row_len * tb;
                let buf_slice = buf_row * img_h;
                let depth = r.extent[2].max(1) as u64;
                for layer in 0..r.layer_count.max(1) {
                    let sub = image.subresource(r.mip_level, r.base_layer + layer);
                    let width_bytes = r.extent[0] as u64 * tb;
                    for z in 0..depth {
                        for y in 0..r.extent[1].max(1) as u64 {
                            let img = base
                                + sub.offset
                                + (r.offset[2] as u64 + z) * sub.slice_pitch
                                + (r.offset[1] as u64 + y) * sub.row_pitch
                                + r.offset[0] as u64 * tb;
                            let buf = buffer
                                + r.buffer_offset
                                + layer as u64 * buf_slice * depth
                                + z * buf_slice
                                + y * buf_row;
                            let (src, dst) = if to_image { (buf, img) } else { (img, buf) };
                            push_copy(&mut i.rec.ops, src, dst, width_bytes);
                        }
                    }
                }
            }
            i.rec.keep.push(image.clone());
            Ok(())
        });
    }

    pub fn copy_image(&self, src: &Arc<Image>, dst: &Arc<Image>, regions: &[ImageCopy]) {
        self.record("vkCmdCopyImage", |i, _| {
            let (sb, db) = (src.address()?, dst.address()?);
            let tb = src.format.texel_bytes() as u64;
            for r in regions {
                let (s_off, d_off, ext) = (r.src_offset, r.dst_offset, r.extent);
                for l in 0..r.layer_count.max(1) {
                    let ss = src.subresource(r.src_level, r.src_layer + l);
                    let ds = dst.subresource(r.dst_level, r.dst_layer + l);
                    for z in 0..ext[2].max(1) as u64 {
                        for y in 0..ext[1].max(1) as u64 {
                            let s = sb
                                + ss.offset
                                + (s_off[2] as u64 + z) * ss.slice_pitch
                                + (s_off[1] as u64 + y) * ss.row_pitch
                                + s_off[0] as u64 * tb;
                            let d = db
                                + ds.offset
                                + (d_off[2] as u64 + z) * ds.slice_pitch
                                + (d_off[1] as u64 + y) * ds.row_pitch
                                + d_off[0] as u64 * tb;
                            push_copy(&mut i.rec.ops, s, d, ext[0] as u64 * tb);
                        }
                    }
                }
            }
            i.rec.keep.push(src.clone());
            i.rec.keep.push(dst.clone());
            Ok(())
        });
    }

    /// `color` is the raw VkClearColorValue (4 words, float or integer by format).
    pub fn clear_color_image(&self, image: &Arc<Image>, color: [u32; 4], ranges: &[SubresourceRange]) {
        self.record("vkCmdClearColorImage", |i, _| {
            let base = image.address()?;
            let mut texel = vec![0u8; image.format.texel_bytes() as usize];
            format::encode_texel(image.format, color, &mut texel);
            for r in ranges {
                let levels = if r.level_count == vk::REMAINING_MIP_LEVELS {
                    image.mip_levels - r.base_level
                } else {
                    r.level_count
                };
                let layers = if r.layer_count == vk::REMAINING_ARRAY_LAYERS {
                    image.array_layers - r.base_layer
                } else {
                    r.layer_count
                };
                for level in r.base_level..r.base_level + levels {
                    let sub = image.subresource(level, r.base_layer);
                    i.rec.ops.push(StreamOp::Pattern {
                        dst: base + sub.offset,
                        len: sub.layer_pitch * layers as u64,
                        pattern: texel.clone(),
                    });
                }
            }
            i.rec.keep.push(image.clone());
            Ok(())
        });
    }

    pub fn build_accel(&self, jobs: Vec<AccelBuildJob>) {
        self.record("vkCmdBuildAccelerationStructuresKHR", |i, _| {
            for j in jobs {
                i.rec.keep.push(j.dst.clone());
                if let Some(s) = &j.src {
                    i.rec.keep.push(s.clone());
                }
                i.rec.ops.push(StreamOp::BuildAccel(Box::new(j)));
            }
            Ok(())
        });
    }

    pub fn copy_accel(&self, src: Arc<AccelStruct>, dst: Arc<AccelStruct>) {
        self.record("vkCmdCopyAccelerationStructureKHR", |i, _| {
            i.rec.keep.push(src.clone());
            i.rec.keep.push(dst.clone());
            i.rec.ops.push(StreamOp::CopyAccel { src, dst });
            Ok(())
        });
    }

    /// Records a stream operation; it keeps alive whatever it refers to.
    pub fn op(&self, what: &str, op: StreamOp) {
        self.push_op(what, op);
    }

    /// vkCmdExecuteCommands: a secondary buffer's stream is replayed in place.
    pub fn execute(&self, secondary: Arc<Recording>) {
        self.record("vkCmdExecuteCommands", |i, _| {
            i.rec.ops.extend(secondary.ops.iter().cloned());
            i.rec.keep.push(secondary);
            Ok(())
        });
    }
}

/// Appends a copy, merging it into the previous one when the two are contiguous.
fn push_copy(ops: &mut Vec<StreamOp>, src: u64, dst: u64, len: u64) {
    if let Some(StreamOp::Copy { src: s, dst: d, len: l }) = ops.last_mut() {
        if *s + *l == src && *d + *l == dst {
            *l += len;
            return;
        }
    }
    ops.push(StreamOp::Copy { src, dst, len });
}
