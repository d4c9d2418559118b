//! Binning: quads go to their screen tile, and each tile packs its quads into fragment warps
//! in primitive order.
//!
//! A tile (`tile_size` pixels square) belongs to core `tile index mod cores`, so all of a
//! pixel's fragments run on one core, whose output merger commits its warps in the order
//! they were formed ([`crate::gfx::om`]): API order per pixel. A warp holds up to
//! `NUM_THREADS / 4` quads and never two quads at the same position (a quad arriving at a
//! position its tile's open warp already holds closes that warp).

use crate::kmu::CtaDesc;

/// Quads a fragment warp holds at most (32 lanes).
pub const MAX_QUADS: usize = crate::abi::MAX_THREADS / 4;

/// A fragment warp: its quads (indices into the draw's quads), its core and its place in
/// that core's list, and (timed mode) the raster unit's cycle at which it was closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FragWarp {
    pub quads: [u32; MAX_QUADS],
    pub n: u8,
    pub core: u32,
    pub seq: u32,
    pub ready: u64,
}

#[derive(Default)]
struct Open {
    warp: FragWarp,
    /// Quad positions of the tile the warp holds (bit `qy * side + qx`).
    occupied: u64,
}

/// The binner of one draw.
pub struct Binner {
    tile_shift: u32,
    tiles_x: u32,
    cores: u32,
    per_warp: usize,
    /// Per tile, 1 + the index of its open warp in `open` (0: none yet).
    slot: Vec<u32>,
    /// The open warps and their tiles, in the order tiles were first touched.
    open: Vec<(u32, Open)>,
    pub warps: Vec<FragWarp>,
    /// Per core, its fragment warps as CTAs (`block_idx.x` = warp index), in order, and
    /// the cycle each becomes ready to launch.
    pub lists: Vec<Vec<CtaDesc>>,
    pub ready: Vec<Vec<u64>>,
    pub tiles: u64,
}

impl Binner {
    /// `tile` pixels square (a power of two, 2..=16), a render target `width` x `height`,
    /// `cores` cores, warps of `nt` lanes.
    pub fn new(tile: u32, width: u32, height: u32, cores: u32, nt: usize) -> Binner {
        let tile_shift = tile.trailing_zeros();
        let tiles_x = width.div_ceil(tile).max(1);
        Binner {
            tile_shift,
            tiles_x,
            cores,
            per_warp: (nt / 4).min(MAX_QUADS),
            slot: vec![0; tiles_x as usize * height.div_ceil(tile).max(1) as usize],
            open: Vec::new(),
            warps: Vec::new(),
            lists: vec![Vec::new(); cores as usize],
            ready: vec![Vec::new(); cores as usize],
            tiles: 0,
        }
    }

    /// Adds quad `q` at (`x`, `y`) (even pixel coordinates), rasterized at cycle `t`.
    pub fn add(&mut self, q: u32, x: u32, y: u32, t: u64) {
        let tile = (y >> self.tile_shift) * self.tiles_x + (x >> self.tile_shift);
        let side = 1u32 << (self.tile_shift - 1);
        let bit = 1u64 << (((y >> 1) & (side - 1)) * side + ((x >> 1) & (side - 1)));
        let per_warp = self.per_warp;
        if self.slot[tile as usize] == 0 {
            self.tiles += 1;
            self.open.push((tile, Open::default()));
            self.slot[tile as usize] = self.open.len() as u32;
        }
        let k = self.slot[tile as usize] as usize - 1;
        let open = &mut self.open[k].1;
        if open.warp.n as usize == per_warp || open.occupied & bit != 0 {
            let full = std::mem::take(open);
            self.close(tile, full.warp, t);
        }
        let open = &mut self.open[k].1;
        open.warp.quads[open.warp.n as usize] = q;
        open.warp.n += 1;
        open.occupied |= bit;
    }

    fn close(&mut self, tile: u32, mut w: FragWarp, t: u64) {
        if w.n == 0 {
            return;
        }
        w.core = tile % self.cores;
        w.ready = t;
        let list = &mut self.lists[w.core as usize];
        w.seq = list.len() as u32;
        list.push(CtaDesc { block_idx: [self.warps.len() as u32, 0, 0], first_of_cluster: true, eop: true });
        self.ready[w.core as usize].push(t);
        self.warps.push(w);
    }

    /// Closes every open warp, in tile order, at cycle `t` (the end of rasterization).
    pub fn finish(&mut self, t: u64) {
        let mut open = std::mem::take(&mut self.open);
        open.sort_by_key(|(tile, _)| *tile);
        for (tile, o) in open {
            self.close(tile, o.warp, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warps_fill_per_tile_and_split_on_a_repeated_position() {
        // 16-pixel tiles, 64 pixels wide (4 tiles a row), 3 cores, 8-lane warps (2 quads).
        let mut b = Binner::new(16, 64, 32, 3, 8);
        b.add(0, 0, 0, 1); // tile 0
        b.add(1, 16, 0, 1); // tile 1
        b.add(2, 2, 0, 2); // tile 0: its warp is full now
        b.add(3, 0, 0, 3); // tile 0: a new warp (the full one closes at 3)
        b.add(4, 0, 0, 4); // tile 0: same position, another warp
        b.add(5, 0, 16, 5); // tile 4 -> core 1
        b.finish(9);
        let w: Vec<(Vec<u32>, u32, u32)> =
            b.warps.iter().map(|w| (w.quads[..w.n as usize].to_vec(), w.core, w.seq)).collect();
        assert_eq!(w, [(vec![0, 2], 0, 0), (vec![3], 0, 1), (vec![4], 0, 2), (vec![1], 1, 0), (vec![5], 1, 1)]);
        assert_eq!(b.lists[0].iter().map(|c| c.block_idx[0]).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(b.ready, [vec![3, 4, 9], vec![9, 9], vec![]]);
        assert_eq!(b.tiles, 3);
    }
}
