//! `VK_EXT_memory_budget`: the one heap's usage and budget, as the model holds them.
//!
//! Device memory is host memory (`model::mem`: each allocation a zeroed host allocation), so
//! the heap's usage is what the process's device memory holds now, every device's
//! allocations and the driver's own (kernels, descriptor sets, recordings), counted where
//! the backings are made and freed (`vortex_model::mem::bytes_held`); an allocation a
//! running dispatch still maps counts until the dispatch ends. The budget is what more the
//! host can give (`MemAvailable`), on top of the usage, never more than the heap's size.

use crate::util::walk_out;
use ash::vk;
use std::ffi::c_void;

/// The host's `MemAvailable` in bytes (`None` where `/proc/meminfo` cannot say).
fn host_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Usage and budget of a heap of `size` bytes.
pub fn heap(size: u64) -> (u64, u64) {
    let usage = vortex_model::mem::bytes_held().min(size);
    let budget = host_available().map_or(size, |free| usage.saturating_add(free).min(size));
    (usage, budget)
}

/// Fills a `VkPhysicalDeviceMemoryBudgetPropertiesEXT` in a `VkPhysicalDeviceMemoryProperties2`
/// output chain (the heaps past `props`' count read zero, as the extension requires).
///
/// # Safety
/// `chain` must be a valid, writable pNext chain.
pub unsafe fn fill(props: &vk::PhysicalDeviceMemoryProperties, chain: *mut c_void) {
    let fill = |ty: vk::StructureType, p: *mut c_void| {
        if ty != vk::StructureType::PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT {
            return;
        }
        // SAFETY: the sType matched this structure type.
        let b = unsafe { &mut *(p as *mut vk::PhysicalDeviceMemoryBudgetPropertiesEXT) };
        b.heap_budget = [0; vk::MAX_MEMORY_HEAPS];
        b.heap_usage = [0; vk::MAX_MEMORY_HEAPS];
        for (i, h) in props.memory_heaps[..props.memory_heap_count as usize].iter().enumerate() {
            (b.heap_usage[i], b.heap_budget[i]) = heap(h.size);
        }
    };
    // SAFETY: forwarded contract.
    unsafe { walk_out(chain, fill) }
}
