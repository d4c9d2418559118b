//! Command buffers. Recording compiles each command straight into the device's command
//! stream ([`crate::stream`]): a dispatch becomes its kernel-argument block (in device memory
//! owned by the recording) plus DCR writes and a start pulse; transfers become DMA operations
//! on device addresses; acceleration-structure, query and event commands become jobs the
//! command processor runs when it reaches them.
//!
//! One module per command family, each adding its `vkCmd*` methods to [`CommandBuffer`]:
//! `bind` (pipelines, descriptor sets and push constants, per bind point), `compute`,
//! `graphics` (render pass instances, dynamic state, vertex buffers, draws), `transfer`,
//! `accel`, `query` and `sync`. A new family (trace rays) is a new module.
//! Errors while recording are sticky: the first one is kept and `vkEndCommandBuffer`
//! reports it.

mod accel;
mod bind;
mod blit;
mod compute;
pub mod graphics;
mod query;
mod sync;
pub mod trace;
mod transfer;

pub use transfer::{BufferCopy, BufferImageCopy, ImageCopy, SubresourceRange};

use crate::device::Device;
use crate::stream::{Recording, StreamOp};
use crate::{vk, VkResult};
use bind::Bindings;
use parking_lot::Mutex;
use std::any::Any;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbState {
    Initial,
    Recording,
    Executable,
    Invalid,
}

/// Everything a command buffer holds while it records.
struct Inner {
    state: CbState,
    /// The first recording error (sticky).
    error: Option<vk::Result>,
    rec: Recording,
    /// Bytes used in the recording's newest kernel-argument arena chunk.
    arena_used: u64,
    finished: Option<Arc<Recording>>,
    /// Pipelines and descriptor sets, per bind point.
    bound: Bindings,
    /// Push constants: command-buffer state shared by every bind point.
    push: Vec<u8>,
    /// The render pass instance, dynamic state and vertex/index buffers.
    gfx: graphics::GfxState,
}

impl Inner {
    fn new() -> Inner {
        Inner {
            state: CbState::Initial,
            error: None,
            rec: Recording::default(),
            arena_used: 0,
            finished: None,
            bound: Bindings::default(),
            push: vec![0; vortex_model::abi::kernel::kargs::PUSH_BYTES],
            gfx: graphics::GfxState::default(),
        }
    }

    /// Appends a stream operation.
    fn emit(&mut self, op: StreamOp) {
        self.rec.ops.push(op);
    }

    /// Keeps `obj` alive as long as the recording.
    fn keep(&mut self, obj: Arc<dyn Any + Send + Sync>) {
        self.rec.keep.push(obj);
    }

    /// Places `bytes` in device memory owned by the recording; returns the address.
    fn stash(&mut self, device: &Device, bytes: &[u8]) -> VkResult<u64> {
        let mut used = self.arena_used;
        let addr = self.rec.stash(device, bytes, &mut used)?;
        self.arena_used = used;
        Ok(addr)
    }
}

pub struct CommandBuffer {
    pub device: Arc<Device>,
    pub level: vk::CommandBufferLevel,
    inner: Mutex<Inner>,
}

impl CommandBuffer {
    pub fn new(device: Arc<Device>, level: vk::CommandBufferLevel) -> CommandBuffer {
        CommandBuffer { device, level, inner: Mutex::new(Inner::new()) }
    }

    pub fn state(&self) -> CbState {
        self.inner.lock().state
    }

    /// Back to the initial state: the recording, the sticky error and every bind point's
    /// state are dropped.
    pub fn reset(&self) {
        *self.inner.lock() = Inner::new();
    }

    pub fn begin(&self) {
        self.begin_secondary(None);
    }

    /// Begins recording; a secondary buffer that continues a render pass
    /// (`RENDER_PASS_CONTINUE`, with the inherited subpass's view mask) may draw, its
    /// attachments known only when a primary executes it.
    pub fn begin_secondary(&self, render_pass_continue: Option<u32>) {
        let mut i = self.inner.lock();
        *i = Inner::new();
        i.state = CbState::Recording;
        i.gfx.inherited = render_pass_continue.is_some();
        i.gfx.inherited_view_mask = render_pass_continue.unwrap_or(0);
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

    /// Records `e` as the sticky error of `what` (an argument the API layer refused).
    pub fn set_error(&self, what: &str, e: vk::Result) {
        self.record(what, |_, _| Err(e));
    }

    /// vkCmdExecuteCommands: a secondary buffer's stream is replayed in place.
    pub fn execute(&self, secondary: Arc<Recording>) {
        self.record("vkCmdExecuteCommands", |i, d| {
            let at = i.rec.ops.len();
            i.rec.ops.extend(secondary.ops.iter().cloned());
            graphics::resolve_deferred(i, d, at, &secondary.deferred)?;
            i.keep(secondary);
            Ok(())
        });
    }
}
