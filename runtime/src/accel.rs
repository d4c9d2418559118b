//! `VkAccelerationStructureKHR`: a range of a buffer that holds a resident CW-BVH once built.
//! It may be created before its buffer has memory; its address resolves when used.
//!
//! Besides the object, this module has what device-timeline jobs and host commands share:
//! copies (clone, compact, serialize, deserialize), the post-build properties, host builds
//! (whose inputs are host pointers and whose instances name BLASes by handle value,
//! resolved through the device's [`Registry`] of live structures — a handle value is never
//! dereferenced).

use crate::buffer::Buffer;
use crate::device::Device;
use crate::{vk, VkResult};
use parking_lot::Mutex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use vortex_model::fault::{Fault, FaultKind};
use vortex_model::mem::{DeviceBytesMut, MemFault, MemFaultKind, MemoryMap};
use vortex_transcode::accel::{self, serial, BuildError, InputMemory};

pub struct AccelStruct {
    pub buffer: Arc<Buffer>,
    pub offset: u64,
    pub size: u64,
    pub ty: vk::AccelerationStructureTypeKHR,
}

impl AccelStruct {
    pub fn new(buffer: Arc<Buffer>, offset: u64, size: u64, ty: vk::AccelerationStructureTypeKHR) -> VkResult<Self> {
        if offset.checked_add(size).is_none_or(|end| end > buffer.size) {
            tracing::error!(
                "vkCreateAccelerationStructureKHR: {size} bytes at offset {offset} overrun the {}-byte buffer",
                buffer.size
            );
            return Err(vk::Result::ERROR_UNKNOWN);
        }
        Ok(AccelStruct { buffer, offset, size, ty })
    }

    /// Device address (0 while the buffer has no memory).
    pub fn address(&self) -> u64 {
        match self.buffer.address() {
            0 => 0,
            a => a + self.offset,
        }
    }

    /// The address, or an error naming `what` if the buffer has no memory yet.
    pub fn bound_address(&self, what: &str) -> Result<u64, String> {
        match self.address() {
            0 => Err(format!("{what}: the acceleration structure's buffer has no memory")),
            a => Ok(a),
        }
    }
}

/// The live acceleration structures of a device, by handle value.
#[derive(Default)]
pub struct Registry {
    map: Mutex<HashMap<u64, Weak<AccelStruct>>>,
}

impl Registry {
    pub fn register(&self, handle: u64, a: &Arc<AccelStruct>) {
        self.map.lock().insert(handle, Arc::downgrade(a));
    }

    pub fn unregister(&self, handle: u64) {
        self.map.lock().remove(&handle);
    }

    /// The structure a handle value names, if it is a live one of this device.
    pub fn get(&self, handle: u64) -> Option<Arc<AccelStruct>> {
        self.map.lock().get(&handle).and_then(Weak::upgrade)
    }
}

/// The level a build produces: a GENERIC structure is whatever its geometries make it.
pub fn level(ty: vk::AccelerationStructureTypeKHR, geometries: &[accel::GeometryInput]) -> accel::Level {
    let top = match ty {
        vk::AccelerationStructureTypeKHR::TOP_LEVEL => true,
        vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL => false,
        _ => geometries.iter().any(|g| matches!(g.geometry, accel::Geometry::Instances { .. })),
    };
    if top {
        accel::Level::Top
    } else {
        accel::Level::Bottom
    }
}

/// Vertex formats the transcoder reads.
pub fn vertex_format_supported(f: vk::Format) -> bool {
    accel::vertex_formats().any(|v| v == f.as_raw() as u32)
}

/// Completes a recorded request with the addresses known only when the build runs: the
/// destination (and source, for updates) structures' own memory.
pub fn resolve(mut req: accel::BuildRequest, dst: &AccelStruct, src: Option<&AccelStruct>) -> accel::BuildRequest {
    req.dst = dst.address();
    req.dst_size = dst.size;
    if let accel::Mode::Update { .. } = req.mode {
        req.mode = match src {
            Some(s) => accel::Mode::Update { src: s.address() },
            None => accel::Mode::Update { src: dst.address() },
        };
    }
    req
}

/// Why an acceleration-structure operation failed; it displays as the line that is logged.
/// On the device timeline it becomes a device fault of the matching kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccelError {
    /// A read or write of memory that is not mapped.
    Memory { fault: MemFault, detail: String },
    /// The structure cannot serve: no memory bound, a malformed or foreign CW-BVH or
    /// serialized blob, a destination too small.
    Structure(String),
}

impl AccelError {
    /// Classifies a transcoder error, its line prefixed with `context` (if not empty).
    pub fn build(context: &str, e: BuildError) -> AccelError {
        let detail = if context.is_empty() { e.to_string() } else { format!("{context}: {e}") };
        match e {
            BuildError::Memory { fault, .. } => AccelError::Memory { fault, detail },
            _ => AccelError::Structure(detail),
        }
    }
}

impl std::fmt::Display for AccelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccelError::Memory { detail, .. } | AccelError::Structure(detail) => f.write_str(detail),
        }
    }
}

impl From<AccelError> for Fault {
    fn from(e: AccelError) -> Fault {
        match e {
            AccelError::Memory { fault, detail } => Fault::new(FaultKind::Memory(fault), detail),
            AccelError::Structure(detail) => Fault::new(FaultKind::BadAccelerationStructure, detail),
        }
    }
}

/// `VkCopyAccelerationStructureModeKHR` between two structures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyMode {
    Clone,
    Compact,
}

/// Clone or compact: the CW-BVH is position independent (child words are offsets from the
/// AS base, a TLAS stores BLAS addresses), so both are a copy of the bytes in use.
pub fn copy(mem: &MemoryMap, src: &AccelStruct, dst: &AccelStruct) -> Result<(), AccelError> {
    let s = src.bound_address("copy source").map_err(AccelError::Structure)?;
    let d = dst.bound_address("copy destination").map_err(AccelError::Structure)?;
    let size = serial::properties(mem, s).map_err(|e| AccelError::build("copy source", e))?.compacted;
    if size > dst.size {
        return Err(AccelError::Structure(format!("copy of a {size}-byte structure into a {}-byte one", dst.size)));
    }
    mem.copy(d, s, size)
        .map_err(|fault| AccelError::Memory { fault, detail: format!("acceleration-structure copy: {fault}") })
}

/// Serializes `src` into `out` (at least its serialization size).
pub fn serialize(mem: &MemoryMap, src: &AccelStruct, out: &mut [u8]) -> Result<(), AccelError> {
    let s = src.bound_address("serialization source").map_err(AccelError::Structure)?;
    serial::serialize(mem, s, out, &crate::device::DRIVER_UUID).map(|_| ()).map_err(|e| AccelError::build("", e))
}

/// Deserializes `blob` into `dst`.
pub fn deserialize(mem: &MemoryMap, blob: &[u8], dst: &AccelStruct) -> Result<(), AccelError> {
    let d = dst.bound_address("deserialization destination").map_err(AccelError::Structure)?;
    serial::deserialize(blob, mem, d, dst.size, &crate::device::DRIVER_UUID).map_err(|e| AccelError::build("", e))
}

/// The value of a `VkQueryType` property of `a`.
pub fn property(mem: &MemoryMap, a: &AccelStruct, ty: vk::QueryType) -> Result<u64, AccelError> {
    let addr = a.bound_address("property query").map_err(AccelError::Structure)?;
    let p = serial::properties(mem, addr).map_err(|e| AccelError::build("", e))?;
    Ok(match ty {
        vk::QueryType::ACCELERATION_STRUCTURE_COMPACTED_SIZE_KHR => p.compacted,
        vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_SIZE_KHR => p.serialized,
        vk::QueryType::ACCELERATION_STRUCTURE_SIZE_KHR => p.size,
        vk::QueryType::ACCELERATION_STRUCTURE_SERIALIZATION_BOTTOM_LEVEL_POINTERS_KHR => p.blas_pointers,
        other => {
            return Err(AccelError::Structure(format!(
                "query type {other:?} is not an acceleration-structure property"
            )))
        }
    })
}

/// Inputs of host commands: host pointers. An address that lies in mapped device memory is
/// read there (a device address passed by mistake reads the memory it names instead of
/// faulting the process); any other non-null address is a host pointer the application
/// vouches for, as Vulkan requires. Instances name BLASes by handle value, looked up in the
/// device's registry (a device address is accepted too).
pub struct HostInput<'a> {
    pub mem: &'a MemoryMap,
    pub registry: &'a Registry,
}

impl InputMemory for HostInput<'_> {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemFault> {
        if out.is_empty() {
            return Ok(());
        }
        if self.mem.is_device(addr) {
            return self.mem.read(addr, out);
        }
        if addr == 0 {
            return Err(MemFault { addr, size: out.len() as u64, kind: MemFaultKind::Unmapped });
        }
        // SAFETY: a host address of a host command: the application guarantees `out.len()`
        // readable bytes there (Vulkan valid usage of the host command).
        unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn covers(&self, addr: u64, len: u64) -> bool {
        if self.mem.is_device(addr) {
            return self.mem.covers(addr, len);
        }
        addr != 0
    }

    fn view(&self, addr: u64, len: u64) -> Option<&[u8]> {
        if self.mem.is_device(addr) {
            // Device memory is lent in place when one region holds it (else read by copy).
            return self.mem.view(addr, len);
        }
        if addr == 0 || usize::try_from(len).is_err() {
            return None;
        }
        // SAFETY: as in `read`.
        Some(unsafe { std::slice::from_raw_parts(addr as *const u8, len as usize) })
    }

    fn blas_address(&self, reference: u64) -> Option<u64> {
        match self.registry.get(reference) {
            Some(a) => match a.address() {
                0 => None,
                addr => Some(addr),
            },
            None => Some(reference),
        }
    }
}

/// One build, parsed at call (or record) time; the inputs are read when it runs.
pub struct Build {
    pub dst: Arc<AccelStruct>,
    pub src: Option<Arc<AccelStruct>>,
    pub request: accel::BuildRequest,
    /// Address of the scratch memory: a host address for a host build, a device address
    /// for a device build (0: none).
    pub scratch: u64,
}

/// Runs a host build now.
pub fn host_build(device: &Device, job: &Build) -> VkResult<()> {
    if job.dst.address() == 0 {
        tracing::error!("vkBuildAccelerationStructuresKHR: the destination's buffer has no memory");
        return Err(vk::Result::ERROR_UNKNOWN);
    }
    let req = resolve(job.request.clone(), &job.dst, job.src.as_deref());
    let mem = device.space.snapshot();
    let n: u64 = req.geometries.iter().map(|g| g.range.primitive_count as u64).sum();
    let need = accel::scratch_bytes(n);
    let mut scratch = match job.scratch {
        0 => None,
        // SAFETY: the application's scratch range is the build's alone.
        a if mem.is_device(a) => unsafe { accel::device_bytes_mut(&mem, a, need) }.ok(),
        // SAFETY: a host scratch address of at least the build scratch size the size query
        // reported (Vulkan valid usage), used by this build alone.
        a => Some(DeviceBytesMut::host(unsafe { std::slice::from_raw_parts_mut(a as *mut u8, need as usize) })),
    };
    let input = HostInput { mem: &mem, registry: &device.accels };
    match accel::build_from(&input, &mem, &req, &device.accel, scratch.as_deref_mut()) {
        Ok(s) => {
            tracing::debug!("host AS build at {:#x}: {} primitives, {} bytes", req.dst, s.prims, s.bytes);
            Ok(())
        }
        Err(e) => {
            tracing::error!("vkBuildAccelerationStructuresKHR: {e}");
            Err(build_error_result(&e))
        }
    }
}

/// The `VkResult` a failed host command reports.
pub fn build_error_result(e: &BuildError) -> vk::Result {
    match e {
        BuildError::DoesNotFit { .. } => vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
        _ => vk::Result::ERROR_UNKNOWN,
    }
}

/// A byte range of host or device memory a host command writes: device memory when the
/// address lies there (`None` if the range is not all mapped), else a host pointer the
/// application vouches for.
///
/// # Safety
/// `addr` must be valid for `len` writable bytes used by nothing else meanwhile.
pub unsafe fn host_bytes_mut(mem: &MemoryMap, addr: u64, len: u64) -> Option<DeviceBytesMut<'_>> {
    if mem.is_device(addr) {
        // SAFETY: per the contract.
        return unsafe { accel::device_bytes_mut(mem, addr, len) }.ok();
    }
    if addr == 0 {
        return None;
    }
    // SAFETY: per the contract.
    Some(DeviceBytesMut::host(unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len as usize) }))
}

/// A byte range of host or device memory a host command reads (see [`host_bytes_mut`]).
///
/// # Safety
/// `addr` must be valid for `len` readable bytes.
pub unsafe fn host_bytes(mem: &MemoryMap, addr: u64, len: u64) -> Option<Cow<'_, [u8]>> {
    if mem.is_device(addr) {
        return mem.bytes(addr, len).ok();
    }
    if addr == 0 {
        return None;
    }
    // SAFETY: per the contract.
    Some(Cow::Borrowed(unsafe { std::slice::from_raw_parts(addr as *const u8, len as usize) }))
}
