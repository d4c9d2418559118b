//! Query commands: resets, occlusion begin/end (the samples the draws between them passed),
//! timestamps,
//! acceleration-structure properties and copies of results into a buffer. Each takes
//! effect when the command processor reaches it.

use super::CommandBuffer;
use crate::accel::AccelStruct;
use crate::buffer::Buffer;
use crate::query::{is_accel_property, QueryPool};
use crate::stream::StreamOp;
use crate::vk;
use std::sync::Arc;

impl CommandBuffer {
    pub fn reset_queries(&self, pool: Arc<QueryPool>, first: u32, count: u32) {
        self.record("vkCmdResetQueryPool", |i, _| {
            i.emit(StreamOp::ResetQueries { pool, first, count });
            Ok(())
        });
    }

    /// Only occlusion queries have a begin and an end.
    pub fn begin_query(&self, pool: Arc<QueryPool>, query: u32) {
        self.record("vkCmdBeginQuery", |i, _| {
            if pool.ty != vk::QueryType::OCCLUSION {
                tracing::error!("vkCmdBeginQuery: {:?} queries have no begin/end", pool.ty);
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            i.emit(StreamOp::BeginQuery { pool, query });
            Ok(())
        });
    }

    /// Ends an occlusion query: available, with the samples that passed since it began.
    pub fn end_query(&self, pool: Arc<QueryPool>, query: u32) {
        self.record("vkCmdEndQuery", |i, _| {
            i.emit(StreamOp::WriteQuery { pool, query, timestamp: false });
            Ok(())
        });
    }

    pub fn write_timestamp(&self, pool: Arc<QueryPool>, query: u32) {
        self.record("vkCmdWriteTimestamp", |i, _| {
            i.emit(StreamOp::WriteQuery { pool, query, timestamp: true });
            Ok(())
        });
    }

    /// Query `first + k` gets structure k's property `ty`, which must be the pool's type.
    pub fn write_accel_properties(
        &self,
        ty: vk::QueryType,
        pool: Arc<QueryPool>,
        first: u32,
        structures: Vec<Arc<AccelStruct>>,
    ) {
        self.record("vkCmdWriteAccelerationStructuresPropertiesKHR", |i, _| {
            let count = structures.len() as u32;
            if ty != pool.ty || !is_accel_property(ty) || !pool.covers(first, count) {
                tracing::error!(
                    "vkCmdWriteAccelerationStructuresPropertiesKHR: {ty:?} into {:?} queries {first}..+{count} of {}",
                    pool.ty,
                    pool.count
                );
                return Err(vk::Result::ERROR_UNKNOWN);
            }
            i.emit(StreamOp::WriteAccelProperties { pool, first, structures });
            Ok(())
        });
    }

    /// `vkCmdCopyQueryPoolResults` into `buffer` at `offset` (its arguments, as Vulkan has them).
    #[allow(clippy::too_many_arguments)]
    pub fn copy_query_results(
        &self,
        pool: Arc<QueryPool>,
        first: u32,
        count: u32,
        buffer: &Arc<Buffer>,
        offset: u64,
        stride: u64,
        flags: vk::QueryResultFlags,
    ) {
        self.record("vkCmdCopyQueryPoolResults", |i, _| {
            let dst = buffer.address_at(offset)?;
            i.emit(StreamOp::CopyQueryResults { pool, first, count, dst, stride, flags });
            i.keep(buffer.clone());
            Ok(())
        });
    }
}
