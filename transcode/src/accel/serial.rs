//! Serialized acceleration structures and post-build properties.
//!
//! The serialized form is the header Vulkan defines, then the structure's bytes as they
//! sit in memory (both layouts are position independent: CW-BVH child words are offsets from
//! the structure's base, rdna2 node pointers are relative to a node region at a fixed offset
//! from it):
//!
//! ```text
//!  0  u8[16]  driverUUID
//! 16  u8[16]  compatibility UUID ([`compat_uuid`]: the layout and its version, CW-BVH or rdna2)
//! 32  u64     serialized size (this header, the handles and the structure)
//! 40  u64     deserialized size (the structure's size: what the application creates)
//! 48  u64     handle count: the distinct BLAS addresses a TLAS references (0 for a BLAS)
//! 56  u64[handle count]   those addresses, in the order of the structure's BLAS table
//!  .  the structure's bytes
//! ```
//!
//! Deserializing copies the structure and points every instance that referenced the i-th
//! table address at the i-th handle of the blob, so an application that relocated the
//! BLASes (and rewrote the handles, as Vulkan allows) gets a TLAS over the new ones, and one
//! that did not keeps the original ones.

use super::{device_bytes_mut, BuildError};
use std::collections::HashMap;
use vortex_model::abi::bvh::{self, header, inst};
use vortex_model::abi::{rd_u64, rdna2, wr_u64};
use vortex_model::config::RtArch;
use vortex_model::mem::MemoryMap;

/// Bytes of the serialized header before the handles.
pub const HEADER_BYTES: usize = 56;
pub const SERIALIZED_SIZE: usize = 32;
pub const DESERIALIZED_SIZE: usize = 40;
pub const HANDLE_COUNT: usize = 48;

/// Identifies the CW-BVH layout a serialized structure uses (with the driver UUID, the
/// `vkGetDeviceAccelerationStructureCompatibilityKHR` check).
pub const COMPAT_UUID: [u8; 16] = *b"VortexRT-cwbvh-1";
/// The same for the rdna2 layout (`abi::rdna2`).
pub const COMPAT_UUID_RDNA2: [u8; 16] = *b"VortexRT-rdna2-1";

/// The compatibility UUID of the layout a device of architecture `arch` builds.
pub fn compat_uuid(arch: RtArch) -> [u8; 16] {
    match arch {
        RtArch::Rtu => COMPAT_UUID,
        RtArch::Rdna2 => COMPAT_UUID_RDNA2,
    }
}

/// A structure image's header and layout, whichever of the two it is.
fn parse_any(b: &[u8]) -> Result<(bvh::Header, Option<rdna2::Extra>), bvh::HeaderError> {
    match bvh::Header::parse(b) {
        Err(bvh::HeaderError::BadMagic(m)) if m == rdna2::MAGIC => rdna2::parse_header(b).map(|(h, x)| (h, Some(x))),
        r => r.map(|h| (h, None)),
    }
}

/// Post-build properties (`VkQueryType` values for acceleration structures).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Properties {
    /// `COMPACTED_SIZE`: bytes a compacting copy needs.
    pub compacted: u64,
    /// `SERIALIZATION_SIZE`.
    pub serialized: u64,
    /// `ACCELERATION_STRUCTURE_SIZE_KHR` (ray_tracing_maintenance1).
    pub size: u64,
    /// `SERIALIZATION_BOTTOM_LEVEL_POINTERS_KHR`: handles in the serialized form.
    pub blas_pointers: u64,
}

fn header_of(mem: &MemoryMap, addr: u64) -> Result<(bvh::Header, Option<rdna2::Extra>), BuildError> {
    let mut hb = [0u8; header::BYTES];
    mem.read(addr, &mut hb).map_err(|fault| BuildError::Memory { what: "acceleration structure".into(), fault })?;
    parse_any(&hb).map_err(|e| BuildError::BadRequest(format!("not a built acceleration structure: {e}")))
}

/// The properties of the structure at `addr`.
pub fn properties(mem: &MemoryMap, addr: u64) -> Result<Properties, BuildError> {
    let (h, _) = header_of(mem, addr)?;
    let handles = if h.kind == bvh::KIND_TOP { h.blas_count as u64 } else { 0 };
    Ok(Properties {
        compacted: h.size,
        serialized: HEADER_BYTES as u64 + 8 * handles + h.size,
        size: h.size,
        blas_pointers: handles,
    })
}

/// Serializes the structure at `src` into `out` (at least its serialization size).
pub fn serialize(mem: &MemoryMap, src: u64, out: &mut [u8], driver_uuid: &[u8; 16]) -> Result<u64, BuildError> {
    let (h, x) = header_of(mem, src)?;
    let p = properties(mem, src)?;
    if (out.len() as u64) < p.serialized {
        return Err(BuildError::DoesNotFit { needed: p.serialized, available: out.len() as u64 });
    }
    out[..16].copy_from_slice(driver_uuid);
    out[16..32].copy_from_slice(&compat_uuid(if x.is_some() { RtArch::Rdna2 } else { RtArch::Rtu }));
    wr_u64(out, SERIALIZED_SIZE, p.serialized);
    wr_u64(out, DESERIALIZED_SIZE, h.size);
    wr_u64(out, HANDLE_COUNT, p.blas_pointers);
    let body = HEADER_BYTES + 8 * p.blas_pointers as usize;
    mem.read(src, &mut out[body..body + h.size as usize])
        .map_err(|fault| BuildError::Memory { what: "serialization source".into(), fault })?;
    for i in 0..p.blas_pointers as usize {
        let a = rd_u64(&out[body..], h.blas_table as usize * bvh::RECORD_ALIGN + 8 * i);
        wr_u64(out, HEADER_BYTES + 8 * i, a);
    }
    Ok(p.serialized)
}

/// Size of the serialized blob whose first [`HEADER_BYTES`] are `head` (unchecked: see
/// [`checked_blob_size`] before reading that many bytes).
pub fn blob_size(head: &[u8]) -> u64 {
    rd_u64(head, SERIALIZED_SIZE)
}

/// The size of the serialized blob whose first [`HEADER_BYTES`] are `head`, once the header
/// is known to be ours and self-consistent (serialized size = header + handles +
/// deserialized size) and its structure fits the `dst_size`-byte destination; so a reader
/// never trusts a garbage size further than the destination's size.
pub fn checked_blob_size(head: &[u8], driver_uuid: &[u8; 16], dst_size: u64) -> Result<u64, BuildError> {
    let bad = |s: String| BuildError::BadRequest(format!("serialized acceleration structure: {s}"));
    if head.len() < HEADER_BYTES {
        return Err(bad("shorter than its header".into()));
    }
    if !compatible(head, driver_uuid) {
        return Err(bad(
            "made by another driver or layout version (see vkGetDeviceAccelerationStructureCompatibilityKHR)".into(),
        ));
    }
    let (serialized, size, count) =
        (rd_u64(head, SERIALIZED_SIZE), rd_u64(head, DESERIALIZED_SIZE), rd_u64(head, HANDLE_COUNT));
    if size > dst_size {
        return Err(BuildError::DoesNotFit { needed: size, available: dst_size });
    }
    let expect =
        count.checked_mul(8).and_then(|h| h.checked_add(HEADER_BYTES as u64)).and_then(|h| h.checked_add(size));
    if count > dst_size / 8 || expect != Some(serialized) {
        return Err(bad(format!(
            "inconsistent header: serialized size {serialized}, deserialized size {size}, {count} handles"
        )));
    }
    Ok(serialized)
}

/// True if a blob whose header starts with `version` (driver UUID then compatibility
/// UUID) can be deserialized here, into a structure of either layout.
pub fn compatible(version: &[u8], driver_uuid: &[u8; 16]) -> bool {
    compatible_on(version, driver_uuid, RtArch::Rtu) || compatible_on(version, driver_uuid, RtArch::Rdna2)
}

/// True if a device of architecture `arch` can use a structure deserialized from a blob
/// whose header starts with `version` (`vkGetDeviceAccelerationStructureCompatibilityKHR`):
/// the layout must be the one it traverses.
pub fn compatible_on(version: &[u8], driver_uuid: &[u8; 16], arch: RtArch) -> bool {
    version.len() >= 32 && version[..16] == driver_uuid[..] && version[16..32] == compat_uuid(arch)[..]
}

/// Deserializes `blob` (the whole serialized form) into the structure at `dst` of
/// `dst_size` bytes.
pub fn deserialize(
    blob: &[u8],
    mem: &MemoryMap,
    dst: u64,
    dst_size: u64,
    driver_uuid: &[u8; 16],
) -> Result<(), BuildError> {
    let bad = |s: String| BuildError::BadRequest(format!("serialized acceleration structure: {s}"));
    checked_blob_size(blob, driver_uuid, dst_size)?;
    let size = rd_u64(blob, DESERIALIZED_SIZE);
    let count = rd_u64(blob, HANDLE_COUNT) as usize;
    let body = HEADER_BYTES.checked_add(count.checked_mul(8).ok_or_else(|| bad("handle count".into()))?);
    let end = body.and_then(|b| b.checked_add(usize::try_from(size).ok()?));
    let (Some(body), Some(end)) = (body, end) else { return Err(bad("sizes overflow".into())) };
    if end > blob.len() {
        return Err(bad(format!("needs {end} bytes, has {}", blob.len())));
    }
    if size > dst_size {
        return Err(BuildError::DoesNotFit { needed: size, available: dst_size });
    }
    let image = &blob[body..end];
    let (h, x) = parse_any(image).map_err(|e| bad(e.to_string()))?;
    let layout = if x.is_some() { RtArch::Rdna2 } else { RtArch::Rtu };
    if blob[16..32] != compat_uuid(layout)[..] {
        return Err(bad("its compatibility UUID is not its structure's layout".into()));
    }
    if h.size != size {
        return Err(bad(format!("its structure says {} bytes, its header {size}", h.size)));
    }
    // SAFETY: the destination structure is the copy's alone (Vulkan valid usage).
    let mut out = unsafe { device_bytes_mut(mem, dst, size) }
        .map_err(|fault| BuildError::Memory { what: "deserialization destination".into(), fault })?;
    out.copy_from_slice(image);
    if h.kind != bvh::KIND_TOP {
        return Ok(());
    }
    let table = h.blas_table as usize * bvh::RECORD_ALIGN;
    if count != h.blas_count as usize || table + 8 * count > size as usize {
        return Err(bad(format!("{count} handles for a BLAS table of {}", h.blas_count)));
    }
    let map: HashMap<u64, u64> =
        (0..count).map(|i| (rd_u64(&out, table + 8 * i), rd_u64(blob, HEADER_BYTES + 8 * i))).collect();
    match x {
        None => relocate(&mut out, &h, &map).map_err(bad)?,
        Some(x) => relocate_rdna2(&mut out, &h, &x, &map).map_err(bad)?,
    }
    for i in 0..count {
        wr_u64(&mut out, table + 8 * i, rd_u64(blob, HEADER_BYTES + 8 * i));
    }
    Ok(())
}

/// Rewrites the BLAS address of every instance leaf of a TLAS image through `map`. A TLAS's
/// records (nodes and instance leaves) fill `[header, table)` back to back in pre-order,
/// so one linear pass finds them all.
fn relocate(image: &mut [u8], h: &bvh::Header, map: &HashMap<u64, u64>) -> Result<(), String> {
    let end = h.blas_table as usize * bvh::RECORD_ALIGN;
    let nb = bvh::node_bytes(h.width);
    let mut at = if h.root == 0 { end } else { header::BYTES };
    while at < end {
        match image[at] {
            bvh::NODE_INTERNAL => at += nb,
            bvh::LEAF_INST => {
                let a = rd_u64(image, at + inst::BLAS);
                if let Some(&n) = map.get(&a) {
                    wr_u64(image, at + inst::BLAS, n);
                }
                at += inst::BYTES;
            }
            k => return Err(format!("record kind {k} at {at:#x} in a top-level structure")),
        }
    }
    if at != end {
        return Err("records overrun the BLAS table".into());
    }
    Ok(())
}

/// [`relocate`] for an rdna2 TLAS: its instance nodes are contiguous from `inst_first`.
fn relocate_rdna2(image: &mut [u8], h: &bvh::Header, x: &rdna2::Extra, map: &HashMap<u64, u64>) -> Result<(), String> {
    let slot = rdna2::SLOT_BYTES as usize;
    let n = if h.root == rdna2::ptr::INVALID { 0 } else { h.leaf_count as usize };
    for i in 0..n {
        let at = x.bvh_offset as usize + (x.inst_first as usize + 2 * i) * slot + rdna2::inst::BLAS;
        if at + 8 > image.len() {
            return Err(format!("instance node {i} lies past the structure"));
        }
        let a = rd_u64(image, at);
        if let Some(&to) = map.get(&a) {
            wr_u64(image, at, to);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn compat_uuid_follows_the_layout_version() {
        // Bump COMPAT_UUID together with abi::bvh::VERSION.
        assert_eq!(vortex_model::abi::bvh::VERSION, 1);
        assert_eq!(&super::COMPAT_UUID[..], b"VortexRT-cwbvh-1");
    }
}
