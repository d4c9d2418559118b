//! Build scratch: the builder's temporary arrays are carved out of one byte buffer, which
//! is the application's scratch memory when it is large enough (device builds: the
//! `scratchData` device address; host builds: its host address) and otherwise a buffer
//! from a small process-wide pool. Either way a repeated build touches memory that is
//! already mapped and warm, instead of faulting in fresh pages every time.

use bytemuck::Pod;
use parking_lot::Mutex;

/// Alignment of every array carved from scratch.
pub const ALIGN: usize = 64;

/// Bytes of scratch that arrays of these (element size, count) pairs need, alignment slack
/// included.
pub fn bytes_for(arrays: &[(usize, usize)]) -> u64 {
    ALIGN as u64 + arrays.iter().map(|&(size, n)| ((size * n).div_ceil(ALIGN) * ALIGN) as u64).sum::<u64>()
}

/// Hands out disjoint, aligned, typed slices of one byte buffer.
pub struct Arena<'a> {
    rest: &'a mut [u8],
}

impl<'a> Arena<'a> {
    pub fn new(buf: &'a mut [u8]) -> Arena<'a> {
        Arena { rest: buf }
    }

    /// `n` elements of `T`; `None` if the buffer is too small. The contents are whatever
    /// the buffer held (every `T` is plain data).
    pub fn take<T: Pod>(&mut self, n: usize) -> Option<&'a mut [T]> {
        if n == 0 {
            return Some(&mut []);
        }
        let rest = std::mem::take(&mut self.rest);
        let pad = rest.as_ptr().align_offset(ALIGN.max(std::mem::align_of::<T>()));
        let bytes = (std::mem::size_of::<T>() * n).div_ceil(ALIGN) * ALIGN;
        if pad > rest.len() || rest.len() - pad < bytes {
            self.rest = rest;
            return None;
        }
        let (_, rest) = rest.split_at_mut(pad);
        let (mine, rest) = rest.split_at_mut(bytes);
        self.rest = rest;
        Some(bytemuck::cast_slice_mut(&mut mine[..std::mem::size_of::<T>() * n]))
    }
}

/// Pooled host scratch, returned to the pool when dropped.
pub struct Pooled {
    buf: Vec<u8>,
}

static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
/// Buffers kept for reuse (one per concurrently building thread is plenty).
const POOL_KEEP: usize = 4;

impl Pooled {
    /// A buffer of at least `bytes` bytes.
    pub fn get(bytes: usize) -> Pooled {
        let mut pool = POOL.lock();
        let pick = pool.iter().position(|b| b.len() >= bytes).or_else(|| (!pool.is_empty()).then_some(0));
        let mut buf = pick.map(|i| pool.swap_remove(i)).unwrap_or_default();
        drop(pool);
        if buf.len() < bytes {
            buf = vec![0u8; bytes];
        }
        Pooled { buf }
    }

    pub fn bytes(&mut self) -> &mut [u8] {
        &mut self.buf
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let mut pool = POOL.lock();
        if pool.len() < POOL_KEEP {
            pool.push(std::mem::take(&mut self.buf));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carving_is_aligned_and_bounded() {
        let n = bytes_for(&[(4, 10), (32, 3)]) as usize;
        let mut buf = vec![0u8; n];
        let mut a = Arena::new(&mut buf);
        let x: &mut [u32] = a.take(10).unwrap();
        let y: &mut [[f32; 8]] = a.take(3).unwrap();
        assert_eq!(x.as_ptr() as usize % ALIGN, 0);
        assert_eq!(y.as_ptr() as usize % ALIGN, 0);
        x[9] = 7;
        y[2][7] = 1.0;
        assert!(a.take::<u64>(1000).is_none());
    }
}
