//! `VK_EXT_memory_budget` through the loader, on any driver that offers it: every heap's
//! budget is non-zero and at most the heap's size. On
//! Vortex, whose usage counts the device memory the process holds, the usage of the heap a
//! 64 MiB allocation comes from rises by at least its size while it lives and falls back
//! when it is freed (lavapipe's usage is the host's, which an untouched allocation need not
//! move).
//!
//! Usage: memory_budget [--icd vortex|lavapipe|PATH]   (exit 0: passed, 1: failed, 2: could
//! not run)

use ash::vk;
use vortex_examples::{checks, Context};

const BYTES: u64 = 64 << 20;

/// (usage, budget) of every heap, and the heap sizes.
fn budget(ctx: &Context) -> (Vec<(u64, u64)>, Vec<u64>) {
    let mut b = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
    let mut p = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut b);
    // SAFETY: valid physical device; the extension was checked.
    unsafe { ctx.instance().get_physical_device_memory_properties2(ctx.physical_device(), &mut p) };
    let n = p.memory_properties.memory_heap_count as usize;
    let sizes = p.memory_properties.memory_heaps[..n].iter().map(|h| h.size).collect();
    ((0..n).map(|i| (b.heap_usage[i], b.heap_budget[i])).collect(), sizes)
}

fn usage_follows_allocations(ctx: &Context, exact: bool) -> Result<String, String> {
    let (before, sizes) = budget(ctx);
    for (i, ((_, budget), size)) in before.iter().zip(&sizes).enumerate() {
        if *budget == 0 || budget > size {
            return Err(format!("heap {i}: budget {budget} outside (0, {size}]"));
        }
    }
    // The first memory type (every driver's list has one) and its heap.
    // SAFETY: valid physical device.
    let props = unsafe { ctx.instance().get_physical_device_memory_properties(ctx.physical_device()) };
    let heap = props.memory_types[0].heap_index as usize;
    let info = vk::MemoryAllocateInfo::default().allocation_size(BYTES).memory_type_index(0);
    // SAFETY: valid device and allocate info.
    let memory = unsafe { ctx.device().allocate_memory(&info, None) }.map_err(|e| format!("vkAllocateMemory: {e}"))?;
    let (during, _) = budget(ctx);
    // SAFETY: the memory is not in use.
    unsafe { ctx.device().free_memory(memory, None) };
    let (after, _) = budget(ctx);
    let (u0, u1, u2) = (before[heap].0, during[heap].0, after[heap].0);
    if !exact {
        return Ok(format!("heap {heap} usage {u0} -> {u1} -> {u2}, budget {}", during[heap].1));
    }
    if u1 < u0 + BYTES {
        return Err(format!("heap {heap}: usage {u0} -> {u1} with {BYTES} more bytes allocated"));
    }
    if u2 + BYTES > u1 {
        return Err(format!("heap {heap}: usage {u1} -> {u2} when {BYTES} bytes were freed"));
    }
    Ok(format!("heap {heap} usage {u0} -> {u1} -> {u2}, budget {}", during[heap].1))
}

fn main() {
    let icd = checks::icd_from_args("memory_budget");
    let ctx = checks::context_or_exit("memory_budget", &icd);
    println!("device: {}", ctx.info().name);
    // SAFETY: valid physical device.
    let exts =
        unsafe { ctx.instance().enumerate_device_extension_properties(ctx.physical_device()) }.unwrap_or_default();
    if !exts.iter().any(|e| e.extension_name_as_c_str() == Ok(ash::ext::memory_budget::NAME)) {
        eprintln!("memory_budget: the device does not offer VK_EXT_memory_budget");
        std::process::exit(2);
    }
    let exact = matches!(icd, vortex_examples::Icd::Vortex);
    let check = move |ctx: &Context| usage_follows_allocations(ctx, exact);
    let list: &[checks::Check<String>] = &[("heap budget, and usage following an allocation", &check)];
    checks::run_checks_and_exit(&ctx, "memory-budget", list, || 0);
}
