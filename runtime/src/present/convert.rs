//! Pixel conversion from a presentable image (8-bit RGBA or BGRA, UNORM or sRGB: the bytes
//! are shown as they are, as a display shows an sRGB-encoded framebuffer) to an X11 visual's
//! ZPixmap layout, and to the RGB rows of a PNG.

/// How an X server wants a window's pixels: its visual's channel masks, the pixmap format of
/// its depth and the server's byte order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelLayout {
    pub depth: u8,
    /// Bits a pixel in a ZPixmap image (16, 24 or 32).
    pub bits_per_pixel: u8,
    /// Rows are padded to this many bits.
    pub scanline_pad: u8,
    pub masks: [u32; 3],
    pub msb_first: bool,
}

impl PixelLayout {
    /// Whether images can be converted to this layout (TrueColor-like masks, 16/24/32 bpp).
    pub fn supported(&self) -> bool {
        matches!(self.bits_per_pixel, 16 | 24 | 32)
            && self.masks.iter().all(|m| *m != 0 && m.count_ones() <= 16)
            && self.scanline_pad.is_multiple_of(8)
            && self.scanline_pad > 0
    }

    /// Bytes of one row of `width` pixels.
    pub fn row_bytes(&self, width: u32) -> usize {
        let bits = width as usize * self.bits_per_pixel as usize;
        let pad = self.scanline_pad as usize;
        bits.div_ceil(pad) * pad / 8
    }

    /// The layout of the usual 24-bit TrueColor visual: what a BGRA image already is.
    fn is_bgrx(&self) -> bool {
        self.bits_per_pixel == 32 && !self.msb_first && self.masks == [0xFF_0000, 0xFF00, 0xFF] && self.depth == 24
    }

    /// Bits of a 32-bit pixel that are not colour (alpha of a depth-32 visual, set opaque).
    fn alpha_bits(&self) -> u32 {
        if self.depth == 32 && self.bits_per_pixel == 32 {
            !(self.masks[0] | self.masks[1] | self.masks[2])
        } else {
            0
        }
    }
}

/// An 8-bit channel scaled into `mask`'s bits.
fn channel(c: u8, mask: u32) -> u32 {
    let bits = mask.count_ones();
    let v = if bits <= 8 {
        (c as u32) >> (8 - bits)
    } else {
        // Wider channels (10-bit visuals): scale to the full range, rounded.
        ((c as u32) * ((1 << bits) - 1) + 127) / 255
    };
    v << mask.trailing_zeros()
}

/// Converts `height` rows of `width` 4-byte texels (`src_pitch` bytes apart; red first, or
/// blue first when `bgra`) into `dst` in `layout` (rows of `layout.row_bytes(width)`).
pub fn to_x11(src: &[u8], src_pitch: usize, bgra: bool, width: u32, height: u32, layout: &PixelLayout, dst: &mut [u8]) {
    let w = width as usize;
    let pitch = layout.row_bytes(width);
    let bpp = layout.bits_per_pixel as usize / 8;
    let alpha = layout.alpha_bits();
    for y in 0..height as usize {
        let s = &src[y * src_pitch..y * src_pitch + 4 * w];
        let d = &mut dst[y * pitch..y * pitch + bpp * w];
        if bgra && layout.is_bgrx() {
            d.copy_from_slice(s);
            continue;
        }
        for (texel, out) in s.chunks_exact(4).zip(d.chunks_exact_mut(bpp)) {
            let (r, g, b) = if bgra { (texel[2], texel[1], texel[0]) } else { (texel[0], texel[1], texel[2]) };
            let p = channel(r, layout.masks[0]) | channel(g, layout.masks[1]) | channel(b, layout.masks[2]) | alpha;
            let bytes = p.to_le_bytes();
            if layout.msb_first {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = bytes[bpp - 1 - i];
                }
            } else {
                out.copy_from_slice(&bytes[..bpp]);
            }
        }
    }
}

/// Converts the same texels into packed RGB rows (a PNG's).
pub fn to_rgb(src: &[u8], src_pitch: usize, bgra: bool, width: u32, height: u32) -> Vec<u8> {
    let w = width as usize;
    let mut out = Vec::with_capacity(3 * w * height as usize);
    for y in 0..height as usize {
        for t in src[y * src_pitch..y * src_pitch + 4 * w].chunks_exact(4) {
            if bgra {
                out.extend_from_slice(&[t[2], t[1], t[0]]);
            } else {
                out.extend_from_slice(&t[..3]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BGRX: PixelLayout = PixelLayout {
        depth: 24,
        bits_per_pixel: 32,
        scanline_pad: 32,
        masks: [0xFF_0000, 0xFF00, 0xFF],
        msb_first: false,
    };

    #[test]
    fn bgra_to_the_usual_truecolor_visual_is_the_same_bytes() {
        let src = [1, 2, 3, 4, 5, 6, 7, 8, 0xAA, 0xAA, 0xAA, 0xAA];
        let mut dst = [0u8; 8];
        to_x11(&src, 12, true, 2, 1, &BGRX, &mut dst);
        assert_eq!(dst, [1, 2, 3, 4, 5, 6, 7, 8]);
        // RGBA swaps red and blue.
        to_x11(&src, 12, false, 2, 1, &BGRX, &mut dst);
        assert_eq!(&dst[..3], &[3, 2, 1]);
    }

    #[test]
    fn other_visuals_pack_by_mask_and_byte_order() {
        let rgb565 = PixelLayout {
            depth: 16,
            bits_per_pixel: 16,
            scanline_pad: 32,
            masks: [0xF800, 0x07E0, 0x001F],
            msb_first: false,
        };
        assert!(rgb565.supported());
        assert_eq!(rgb565.row_bytes(3), 8, "6 bytes padded to 32 bits");
        let src = [0xFF, 0x00, 0xFF, 0, 0x00, 0xFF, 0x00, 0, 0x80, 0x80, 0x80, 0];
        let mut dst = [0u8; 8];
        to_x11(&src, 12, false, 3, 1, &rgb565, &mut dst);
        assert_eq!(u16::from_le_bytes([dst[0], dst[1]]), 0xF81F);
        assert_eq!(u16::from_le_bytes([dst[2], dst[3]]), 0x07E0);
        assert_eq!(u16::from_le_bytes([dst[4], dst[5]]), (0x10 << 11) | (0x20 << 5) | 0x10);
        let argb_msb = PixelLayout { depth: 32, msb_first: true, ..BGRX };
        let mut dst = [0u8; 4];
        to_x11(&[0x11, 0x22, 0x33, 0x00], 4, false, 1, 1, &argb_msb, &mut dst);
        assert_eq!(dst, [0xFF, 0x11, 0x22, 0x33], "opaque alpha, big-endian ARGB");
        let ten = PixelLayout { masks: [0x3FF << 20, 0x3FF << 10, 0x3FF], ..BGRX };
        to_x11(&[0xFF, 0, 0x80, 0], 4, false, 1, 1, &ten, &mut dst);
        assert_eq!(u32::from_le_bytes(dst), (0x3FF << 20) | 0x202);
    }

    #[test]
    fn png_rows_are_rgb() {
        let src = [1, 2, 3, 4, 9, 9, 9, 9, 5, 6, 7, 8, 9, 9, 9, 9];
        assert_eq!(to_rgb(&src, 8, true, 1, 2), vec![3, 2, 1, 7, 6, 5]);
        assert_eq!(to_rgb(&src, 8, false, 1, 2), vec![1, 2, 3, 5, 6, 7]);
    }
}
