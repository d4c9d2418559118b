//! Acceleration-structure commands: builds, copies (clone, compact), serialization and
//! deserialization. Each becomes a job the command processor runs through the transcoder
//! when it reaches it, so it reads its inputs at execution time (applications rewrite them
//! between recording and submission).

use super::CommandBuffer;
use crate::accel::{AccelStruct, Build};
use crate::stream::{AccelBuildJob, StreamOp};
use std::sync::Arc;

impl CommandBuffer {
    /// `vkCmdBuildAccelerationStructuresKHR`: one job per build, with the device's builder
    /// knobs; `scratch` is a device address.
    pub fn build_accel(&self, builds: Vec<Build>) {
        self.record("vkCmdBuildAccelerationStructuresKHR", |i, dev| {
            for Build { dst, src, mut request, scratch } in builds {
                request.scratch = scratch;
                i.keep(dst.clone());
                if let Some(s) = &src {
                    i.keep(s.clone());
                }
                i.emit(StreamOp::BuildAccel(Box::new(AccelBuildJob { dst, src, request, options: dev.accel })));
            }
            Ok(())
        });
    }

    /// Clone or compact (the same byte copy here).
    pub fn copy_accel(&self, src: Arc<AccelStruct>, dst: Arc<AccelStruct>) {
        self.record("vkCmdCopyAccelerationStructureKHR", |i, _| {
            i.emit(StreamOp::CopyAccel { src, dst });
            Ok(())
        });
    }

    /// Serializes `src` to the device address `dst`.
    pub fn serialize_accel(&self, src: Arc<AccelStruct>, dst: u64) {
        self.record("vkCmdCopyAccelerationStructureToMemoryKHR", |i, _| {
            i.emit(StreamOp::SerializeAccel { src, dst });
            Ok(())
        });
    }

    /// Deserializes the structure at the device address `src` into `dst`.
    pub fn deserialize_accel(&self, src: u64, dst: Arc<AccelStruct>) {
        self.record("vkCmdCopyMemoryToAccelerationStructureKHR", |i, _| {
            i.emit(StreamOp::DeserializeAccel { src, dst });
            Ok(())
        });
    }
}
