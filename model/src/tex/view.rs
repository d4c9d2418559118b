//! The image a `TEX` reads: its sampled-image descriptor, its format and its levels
//! (`abi::kernel::SampledDesc`), and the texel reads that go to memory.

use super::TexUnit;
use crate::abi::format::{self, Format};
use crate::abi::kernel::{desc, ImageDesc, SampledDesc};
use crate::mem::{MemFault, MemoryMap};

/// Levels the unit addresses: a level past 32 of a 32-bit extent is 1x1x1 like level 32.
pub const MAX_LEVELS: usize = 32;

/// A sampled-image view, decoded once per descriptor address and instruction.
pub struct View {
    pub desc: SampledDesc,
    pub fmt: &'static Format,
    /// Levels of the view the unit reads (`desc.levels`, at least 1, at most `MAX_LEVELS`).
    pub count: u32,
    levels: [ImageDesc; MAX_LEVELS],
}

impl View {
    /// Reads the descriptor at `addr`; `Ok(None)` when its format is not one the device
    /// knows.
    pub fn read(mem: &MemoryMap, addr: u64) -> Result<Option<View>, MemFault> {
        let raw: [u8; desc::BYTES] = mem.read_array(addr)?;
        let d = SampledDesc::parse(&raw);
        let Some(fmt) = format::find(d.base.format) else { return Ok(None) };
        let mut levels = [d.base; MAX_LEVELS];
        let mut count = 0;
        while (count as usize) < MAX_LEVELS {
            match d.level(count) {
                Some(l) => levels[count as usize] = l,
                None => break,
            }
            count += 1;
        }
        Ok(Some(View { desc: d, fmt, count: count.max(1), levels }))
    }

    /// Level `k` of the view (0 is its base level); `k < count`.
    pub fn level(&self, k: u32) -> &ImageDesc {
        &self.levels[k as usize]
    }

    /// The view's layer count (cube and cube-array views: faces).
    pub fn layers(&self) -> u32 {
        self.desc.base.layers.max(1)
    }

    /// The texel of level `k` at `xyz` (as `ImageDesc::texel_offset` takes them: x, y or
    /// the 1D-array layer, z or the layer), decoded into four register words; `None`
    /// outside the level.
    pub fn texel(
        &self,
        mem: &MemoryMap,
        k: u32,
        xyz: [i64; 3],
        unit: &mut TexUnit,
    ) -> Result<Option<[u32; 4]>, MemFault> {
        let l = self.level(k);
        let [Ok(x), Ok(y), Ok(z)] = xyz.map(i32::try_from) else { return Ok(None) };
        let Some(off) = l.texel_offset(x, y, z) else { return Ok(None) };
        let addr = l.addr.wrapping_add(off);
        let tb = self.fmt.texel_bytes() as usize;
        let mut t = [0u8; 16];
        mem.read(addr, &mut t[..tb])?;
        unit.read_line(addr);
        Ok(Some(format::decode_texel(self.fmt, &t[..tb])))
    }
}
