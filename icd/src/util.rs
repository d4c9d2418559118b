//! FFI helpers: null-safe slices, pNext chains, fixed-size name arrays, the count/array
//! enumeration idiom.

use ash::vk;
use std::ffi::{c_char, CStr};

/// A slice from a Vulkan (pointer, count) pair; empty when the count is 0 or the pointer is
/// null (Vulkan allows either).
///
/// # Safety
/// When `count > 0` and `p` is non-null, `p` must point at `count` valid `T`s.
pub unsafe fn slice<'a, T>(p: *const T, count: u32) -> &'a [T] {
    if count == 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(p, count as usize) }
    }
}

/// Walks an input pNext chain, calling `f(sType, pointer)` for every structure.
///
/// # Safety
/// `p` must be null or a valid Vulkan structure chain.
pub unsafe fn walk_in(mut p: *const std::ffi::c_void, mut f: impl FnMut(vk::StructureType, *const std::ffi::c_void)) {
    let mut guard = 0;
    while !p.is_null() && guard < 256 {
        // SAFETY: every structure in a chain starts with sType, pNext.
        let base = unsafe { &*(p as *const vk::BaseInStructure) };
        f(base.s_type, p);
        p = base.p_next as *const _;
        guard += 1;
    }
}

/// Walks an output pNext chain.
///
/// # Safety
/// `p` must be null or a valid, writable Vulkan structure chain.
pub unsafe fn walk_out(mut p: *mut std::ffi::c_void, mut f: impl FnMut(vk::StructureType, *mut std::ffi::c_void)) {
    let mut guard = 0;
    while !p.is_null() && guard < 256 {
        // SAFETY: every structure in a chain starts with sType, pNext.
        let base = unsafe { &*(p as *const vk::BaseOutStructure) };
        let next = base.p_next as *mut _;
        f(base.s_type, p);
        p = next;
        guard += 1;
    }
}

/// Finds the first structure of type `ty` in an input chain.
///
/// # Safety
/// As for [`walk_in`]; `T` must be the structure type named by `ty`.
pub unsafe fn find_in<'a, T>(p: *const std::ffi::c_void, ty: vk::StructureType) -> Option<&'a T> {
    let mut found = None;
    // SAFETY: forwarded contract.
    unsafe {
        walk_in(p, |t, s| {
            if t == ty && found.is_none() {
                found = Some(&*(s as *const T));
            }
        })
    };
    found
}

/// Copies `s` into a fixed-size, NUL-terminated C char array.
pub fn write_name<const N: usize>(dst: &mut [c_char; N], s: &str) {
    dst.fill(0);
    for (d, b) in dst.iter_mut().zip(s.bytes().take(N - 1)) {
        *d = b as c_char;
    }
}

/// Reads a C string (lossy).
///
/// # Safety
/// `p` must be null or a NUL-terminated string.
pub unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: per the contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The two-call enumeration idiom: with a null array, report the count; otherwise write up
/// to `*count` items and return INCOMPLETE if some did not fit.
///
/// # Safety
/// `count` must be valid; `out`, if non-null, must have room for `*count` items.
pub unsafe fn enumerate<T: Copy>(items: &[T], count: *mut u32, out: *mut T) -> vk::Result {
    if count.is_null() {
        return vk::Result::ERROR_UNKNOWN;
    }
    // SAFETY: per the contract.
    unsafe {
        if out.is_null() {
            *count = items.len() as u32;
            return vk::Result::SUCCESS;
        }
        let n = (*count as usize).min(items.len());
        std::ptr::copy_nonoverlapping(items.as_ptr(), out, n);
        *count = n as u32;
        if n < items.len() {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        }
    }
}

/// Like [`enumerate`] for output structures that carry their own sType/pNext (the `2`
/// queries): `fill` writes item `i` into the caller's structure in place.
///
/// # Safety
/// As for [`enumerate`].
pub unsafe fn enumerate_with<T>(
    n_items: usize,
    count: *mut u32,
    out: *mut T,
    mut fill: impl FnMut(usize, &mut T),
) -> vk::Result {
    if count.is_null() {
        return vk::Result::ERROR_UNKNOWN;
    }
    // SAFETY: per the contract.
    unsafe {
        if out.is_null() {
            *count = n_items as u32;
            return vk::Result::SUCCESS;
        }
        let n = (*count as usize).min(n_items);
        for i in 0..n {
            fill(i, &mut *out.add(i));
        }
        *count = n as u32;
        if n < n_items {
            vk::Result::INCOMPLETE
        } else {
            vk::Result::SUCCESS
        }
    }
}
