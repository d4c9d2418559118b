//! Events on the device timeline: `vkCmdSetEvent` / `vkCmdResetEvent` change the event when
//! the stream reaches them. Barriers and event waits record nothing: the queue executes
//! commands in order and memory is coherent.

use super::CommandBuffer;
use crate::stream::StreamOp;
use crate::sync::Event;
use std::sync::Arc;

impl CommandBuffer {
    pub fn set_event(&self, event: Arc<Event>) {
        self.record("vkCmdSetEvent", |i, _| {
            i.emit(StreamOp::SetEvent { event, value: true });
            Ok(())
        });
    }

    pub fn reset_event(&self, event: Arc<Event>) {
        self.record("vkCmdResetEvent", |i, _| {
            i.emit(StreamOp::SetEvent { event, value: false });
            Ok(())
        });
    }
}
