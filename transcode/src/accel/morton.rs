//! Morton codes over primitive centroids and a parallel LSD radix sort of
//! `code << 32 | primitive` keys.

use rayon::prelude::*;

/// Bits per axis of a Morton code (30-bit codes).
pub const BITS: u32 = 10;
/// The code of an inactive primitive: above every real code, so they sort last.
pub const INACTIVE: u32 = u32::MAX;

/// Maps centroids in `[lo, hi]` onto the 1024^3 grid with cubic cells: one scale, the
/// largest extent's, for all three axes. Scaling each axis to its own extent gives a flat
/// scene's thin axis as many code bits as the wide ones, so a third of the radix splits
/// cut across nearly nothing (a height field's linear BVH: SAH cost 45.0 against 15.8 at
/// 1M triangles, docs/PERFORMANCE.md).
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    lo: [f32; 3],
    scale: [f32; 3],
}

impl Grid {
    pub fn new(lo: [f32; 3], hi: [f32; 3]) -> Grid {
        let e = (0..3).map(|a| hi[a] - lo[a]).fold(0.0f32, f32::max);
        let s = if e > 0.0 && e.is_finite() { (1u32 << BITS) as f32 * (1.0 - 1e-6) / e } else { 0.0 };
        Grid { lo, scale: [s; 3] }
    }

    /// The codes of four centroids, as [`Grid::code`] of each: with SSE2 the four
    /// centroids are the lanes and each axis one vector (the same operations in the same
    /// order a lane, so the same codes), a quarter of the spreading steps.
    #[inline(always)]
    pub fn codes4(&self, c: &[[f32; 3]; 4]) -> [u32; 4] {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of the x86_64 baseline; the vectors are built from values
        // and stored into a local array.
        unsafe {
            use std::arch::x86_64::*;
            let max = _mm_set1_ps(((1u32 << BITS) - 1) as f32);
            let axis = |a: usize| {
                let v = _mm_setr_ps(c[0][a], c[1][a], c[2][a], c[3][a]);
                let v = _mm_mul_ps(_mm_sub_ps(v, _mm_set1_ps(self.lo[a])), _mm_set1_ps(self.scale[a]));
                let mut x = _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), max));
                x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<16>(x)), _mm_set1_epi32(0x0300_00ff));
                x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<8>(x)), _mm_set1_epi32(0x0300_f00f));
                x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<4>(x)), _mm_set1_epi32(0x030c_30c3));
                _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<2>(x)), _mm_set1_epi32(0x0924_9249))
            };
            let code = _mm_or_si128(_mm_or_si128(_mm_slli_epi32::<2>(axis(0)), _mm_slli_epi32::<1>(axis(1))), axis(2));
            let mut out = [0u32; 4];
            _mm_storeu_si128(out.as_mut_ptr().cast(), code);
            return out;
        }
        #[allow(unreachable_code)]
        c.map(|c| self.code(c))
    }

    #[inline(always)]
    pub fn code(&self, c: [f32; 3]) -> u32 {
        // The three axes as lanes of one vector: the same steps as `spread`, lane-wise.
        let max = ((1u32 << BITS) - 1) as f32;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is part of the x86_64 baseline; the store writes a local array.
        unsafe {
            use std::arch::x86_64::*;
            let v = _mm_mul_ps(
                _mm_sub_ps(_mm_setr_ps(c[0], c[1], c[2], 0.0), _mm_setr_ps(self.lo[0], self.lo[1], self.lo[2], 0.0)),
                _mm_setr_ps(self.scale[0], self.scale[1], self.scale[2], 0.0),
            );
            // `maxps(v, 0)` is the plain compare (NaN -> 0); the clamped value converts
            // exactly through i32.
            let v = _mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), _mm_set1_ps(max));
            let mut x = _mm_cvttps_epi32(v);
            x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<16>(x)), _mm_set1_epi32(0x0300_00ff));
            x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<8>(x)), _mm_set1_epi32(0x0300_f00f));
            x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<4>(x)), _mm_set1_epi32(0x030c_30c3));
            x = _mm_and_si128(_mm_or_si128(x, _mm_slli_epi32::<2>(x)), _mm_set1_epi32(0x0924_9249));
            let mut l = [0u32; 4];
            _mm_storeu_si128(l.as_mut_ptr().cast(), x);
            return l[0] << 2 | l[1] << 1 | l[2];
        }
        #[allow(unreachable_code)]
        let mut x: [u32; 4] = std::array::from_fn(|a| {
            if a == 3 {
                return 0;
            }
            let v = (c[a] - self.lo[a]) * self.scale[a];
            // Plain compares (NaN -> 0), then the convert.
            let v = if v > 0.0 { v } else { 0.0 };
            let v = if v < max { v } else { max };
            v as u32
        });
        for (shift, mask) in [(16, 0x0300_00ffu32), (8, 0x0300_f00f), (4, 0x030c_30c3), (2, 0x0924_9249)] {
            x = x.map(|v| (v | v << shift) & mask);
        }
        x[0] << 2 | x[1] << 1 | x[2]
    }
}

/// Raw pointer that may cross threads: every writer owns a disjoint set of indices.
#[derive(Clone, Copy)]
struct SendPtr(*mut u64);
// SAFETY: used only for scatters to disjoint positions (see `sort`).
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}

/// Below this many keys the sort runs on one thread.
const PAR_MIN: usize = 1 << 16;

/// Bits of one radix digit, and its buckets: three digits cover the 30-bit codes.
const DIGIT: u32 = 10;
const BUCKETS: usize = 1 << DIGIT;

/// The radix digit of `k` at bit `shift` (a power-of-two table index, so no bounds check).
#[inline(always)]
fn digit(k: u64, shift: u32) -> usize {
    (k >> shift) as usize & (BUCKETS - 1)
}

/// Sorts `keys` by their upper 32 bits, stably (equal codes stay in primitive order), using
/// `tmp` (same length) as the second buffer. Returns whichever buffer holds the result.
/// `inactive`: some codes may be [`INACTIVE`] (the only codes with bits above the 30th).
pub fn sort<'a>(keys: &'a mut [u64], tmp: &'a mut [u64], inactive: bool) -> &'a mut [u64] {
    let n = keys.len();
    assert_eq!(tmp.len(), n);
    // Four chunks a thread: with one a thread, a thread that is descheduled (the host is
    // shared) or late to wake holds up every pass; smaller chunks let the others take its
    // share. The order is the same for any chunking (every pass is stable).
    let threads = rayon::current_num_threads();
    let chunks = if n >= PAR_MIN && threads > 1 { (4 * threads).min(16) } else { 1 };
    let chunk = n.div_ceil(chunks).max(1);
    let (mut src, mut dst) = (keys, tmp);
    // The last two bits only differ when some keys are INACTIVE (and a digit every key
    // shares is skipped below).
    let shifts: &[u32] = if inactive { &[32, 42, 52, 62] } else { &[32, 42, 52] };
    for &shift in shifts {
        let hist: Vec<Box<[u32; BUCKETS]>> = src
            .par_chunks(chunk)
            .map(|c| {
                let mut h = Box::new([0u32; BUCKETS]);
                for &k in c {
                    h[digit(k, shift)] += 1;
                }
                h
            })
            .collect();
        // A digit every key shares orders nothing.
        let one_bucket = (0..BUCKETS).any(|d| hist.iter().map(|h| h[d] as usize).sum::<usize>() == n);
        if one_bucket {
            continue;
        }
        let mut offsets: Vec<Box<[u32; BUCKETS]>> = (0..hist.len()).map(|_| Box::new([0u32; BUCKETS])).collect();
        let mut running = 0u32;
        for d in 0..BUCKETS {
            for (t, h) in hist.iter().enumerate() {
                offsets[t][d] = running;
                running += h[d];
            }
        }
        let out = SendPtr(dst.as_mut_ptr());
        src.par_chunks(chunk).zip(offsets.into_par_iter()).for_each(|(c, mut off)| {
            // The closure must capture the whole `SendPtr`, not its raw-pointer field.
            let out = &out;
            for &k in c {
                let d = digit(k, shift);
                // SAFETY: the offsets give every (chunk, digit) pair its own range of
                // positions, all below n; each position is written once.
                unsafe { out.0.add(off[d] as usize).write(k) };
                off[d] += 1;
            }
        });
        std::mem::swap(&mut src, &mut dst);
    }
    src
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_by_code() {
        let mut s = 7u64;
        for n in [0usize, 1, 5, 1000, 200_000] {
            for inactive in [true, false] {
                let mut keys: Vec<u64> = (0..n as u64)
                    .map(|i| {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        // Codes of every size up to 30 bits, and some INACTIVE ones.
                        let code = match s % 7 {
                            0 if inactive => INACTIVE as u64,
                            1 => s >> 34,
                            _ => s % 5000,
                        };
                        (code << 32) | i
                    })
                    .collect();
                let mut tmp = vec![0u64; n];
                let mut want = keys.clone();
                want.sort();
                let got = sort(&mut keys, &mut tmp, inactive);
                assert_eq!(got, &want[..], "n = {n}");
            }
        }
    }

    /// The bits of a 10-bit `x` spread to every third bit (the scalar form of `Grid::code`).
    fn spread(x: u32) -> u32 {
        let mut x = x & 0x3ff;
        x = (x | x << 16) & 0x0300_00ff;
        x = (x | x << 8) & 0x0300_f00f;
        x = (x | x << 4) & 0x030c_30c3;
        x = (x | x << 2) & 0x0924_9249;
        x
    }

    #[test]
    fn lane_codes_match_the_scalar_spread() {
        let g = Grid::new([-3.0, 0.0, 10.0], [5.0, 1.0, 11.0]);
        let mut rng = vortex_model::rtu::reference::Rng::new(99);
        for _ in 0..100_000 {
            let s = rng.next_u64();
            let c = [(s % 1000) as f32 * 0.01 - 4.0, (s >> 20) as f32 % 1.3, 10.0 + ((s >> 40) % 997) as f32 * 1e-3];
            let q = |a: usize| (((c[a] - g.lo[a]) * g.scale[a]) as u32).min((1 << BITS) - 1);
            assert_eq!(g.code(c), spread(q(0)) << 2 | spread(q(1)) << 1 | spread(q(2)), "{c:?}");
        }
    }

    #[test]
    fn four_codes_at_once_are_the_single_codes() {
        let g = Grid::new([-3.0, 0.0, 10.0], [5.0, 1.0, 11.0]);
        let mut rng = vortex_model::rtu::reference::Rng::new(98);
        for _ in 0..50_000 {
            let c: [[f32; 3]; 4] = std::array::from_fn(|_| {
                let s = rng.next_u64();
                match s % 11 {
                    0 => [f32::NAN; 3],
                    1 => [-0.0, 1e30, -1e30],
                    _ => {
                        [(s % 1000) as f32 * 0.01 - 4.0, (s >> 20) as f32 % 1.3, 10.0 + ((s >> 40) % 997) as f32 * 1e-3]
                    }
                }
            });
            assert_eq!(g.codes4(&c), c.map(|c| g.code(c)), "{c:?}");
        }
    }

    #[test]
    fn codes_interleave_axes() {
        let g = Grid::new([0.0; 3], [1024.0; 3]);
        assert_eq!(g.code([0.0; 3]), 0);
        assert_eq!(g.code([1.5, 0.0, 0.0]), 0b100);
        assert_eq!(g.code([0.0, 1.5, 0.0]), 0b010);
        assert_eq!(g.code([0.0, 0.0, 1.5]), 0b001);
        assert_eq!(g.code([2000.0; 3]), (1 << 30) - 1);
    }

    #[test]
    fn cells_are_cubic() {
        // A flat box: x spans 8, y 1, z 2; every axis gets x's scale.
        let g = Grid::new([0.0; 3], [8.0, 1.0, 2.0]);
        let cell = 8.0 / 1024.0;
        assert_eq!(g.code([1.5 * cell, 0.0, 0.0]), 0b100);
        assert_eq!(g.code([0.0, 1.5 * cell, 0.0]), 0b010);
        assert_eq!(g.code([0.0, 0.0, 1.5 * cell]), 0b001);
        // The thin axis's far side is cell 127, not 1023.
        assert_eq!(g.code([0.0, 1.0, 0.0]), spread(127) << 1);
    }
}
