//! Coverage: which pixel centres a triangle on the sub-pixel grid covers, by exact integer
//! edge functions and the top-left rule, emitted as 2x2 quads.
//!
//! A pixel is covered when its centre is inside all three edges, or on an edge that is a
//! *top* edge (horizontal, the triangle below it) or a *left* edge (the triangle to its
//! right) in the y-down framebuffer. Two triangles sharing an edge therefore never both
//! cover a pixel on it, and a mesh covering an area covers each pixel exactly once.

use super::setup::ONE;

/// Edge `a -> b` of a clockwise triangle: its function at `p` (positive inside), and
/// whether a zero value counts as inside (top or left edge).
#[derive(Clone, Copy)]
struct Edge {
    a: [i64; 2],
    d: [i64; 2],
    top_left: bool,
}

impl Edge {
    fn new(a: [i64; 2], b: [i64; 2]) -> Edge {
        let d = [b[0] - a[0], b[1] - a[1]];
        Edge { a, d, top_left: (d[1] == 0 && d[0] > 0) || d[1] < 0 }
    }

    #[inline]
    fn inside(&self, p: [i64; 2]) -> bool {
        let e = self.d[0] * (p[1] - self.a[1]) - self.d[1] * (p[0] - self.a[0]);
        e > 0 || (e == 0 && self.top_left)
    }
}

/// Calls `emit(x, y, mask)` for every quad (top-left pixel `x`, `y`, both even) with a
/// covered pixel inside `rect` (pixels `[x0, x1) x [y0, y1)`), row by row of quads; mask
/// bit `i` is pixel `i` of the quad: (x, y), (x+1, y), (x, y+1), (x+1, y+1). `v` must be
/// clockwise (positive area on the grid).
pub fn triangle(v: &[[i64; 2]; 3], rect: [i64; 4], mut emit: impl FnMut(u32, u32, u8)) {
    let edges = [Edge::new(v[0], v[1]), Edge::new(v[1], v[2]), Edge::new(v[2], v[0])];
    // Pixels whose centres (k * ONE + ONE / 2) can lie inside the bounding box.
    let lo = |m: i64| (m - ONE / 2).div_euclid(ONE) + ((m - ONE / 2).rem_euclid(ONE) != 0) as i64;
    let hi = |m: i64| (m - ONE / 2).div_euclid(ONE);
    let (minx, maxx) = (v.iter().map(|p| p[0]).min().unwrap(), v.iter().map(|p| p[0]).max().unwrap());
    let (miny, maxy) = (v.iter().map(|p| p[1]).min().unwrap(), v.iter().map(|p| p[1]).max().unwrap());
    let x0 = lo(minx).max(rect[0]);
    let x1 = (hi(maxx) + 1).min(rect[2]);
    let y0 = lo(miny).max(rect[1]);
    let y1 = (hi(maxy) + 1).min(rect[3]);
    if x0 >= x1 || y0 >= y1 {
        return;
    }
    let inside = |x: i64, y: i64| {
        if x < x0 || x >= x1 || y < y0 || y >= y1 {
            return false;
        }
        let p = [x * ONE + ONE / 2, y * ONE + ONE / 2];
        edges.iter().all(|e| e.inside(p))
    };
    let mut qy = y0 & !1;
    while qy < y1 {
        let mut qx = x0 & !1;
        while qx < x1 {
            let mut m = 0u8;
            for (i, (dx, dy)) in [(0, 0), (1, 0), (0, 1), (1, 1)].into_iter().enumerate() {
                if inside(qx + dx, qy + dy) {
                    m |= 1 << i;
                }
            }
            if m != 0 {
                emit(qx as u32, qy as u32, m);
            }
            qx += 2;
        }
        qy += 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cover(v: [[i64; 2]; 3], rect: [i64; 4]) -> Vec<(u32, u32)> {
        let mut px = Vec::new();
        triangle(&v, rect, |x, y, m| {
            for i in 0..4 {
                if m >> i & 1 != 0 {
                    px.push((x + (i & 1), y + (i >> 1)));
                }
            }
        });
        px.sort();
        px
    }

    const R: [i64; 4] = [0, 0, 64, 64];

    /// Two triangles sharing a diagonal through pixel centres cover a square exactly once,
    /// and the edges through centres belong to the top and left edges only.
    #[test]
    fn shared_edges_cover_once() {
        // The 4x4 square (0,0)-(4,4) in pixels, split along its diagonal: the diagonal passes
        // through the centres (0.5, 0.5) .. (3.5, 3.5).
        let s = |x: i64, y: i64| [x * ONE, y * ONE];
        let a = cover([s(0, 0), s(4, 0), s(4, 4)], R);
        let b = cover([s(0, 0), s(4, 4), s(0, 4)], R);
        let mut all = [a.clone(), b.clone()].concat();
        all.sort();
        let before = all.len();
        all.dedup();
        assert_eq!((before, all.len()), (16, 16), "every pixel once");
        // The upper-right triangle runs the diagonal upwards ((4,4) -> (0,0): a left edge),
        // the lower-left one downwards: the diagonal's centres belong to the upper-right one.
        assert!(a.contains(&(2, 2)) && !b.contains(&(2, 2)));
        assert_eq!(a.len(), 10);
    }

    /// Sub-pixel vertices: a triangle whose edge sits exactly on a column of centres.
    #[test]
    fn sub_pixel_left_and_right_edges() {
        // Rectangle x in [1.5, 3.5] (centres of columns 1..3 on its edges), y in [0, 2].
        let h = ONE / 2;
        let (l, r) = (ONE + h, 3 * ONE + h);
        let t1 = cover([[l, 0], [r, 0], [r, 2 * ONE]], R);
        let t2 = cover([[l, 0], [r, 2 * ONE], [l, 2 * ONE]], R);
        let mut all = [t1, t2].concat();
        all.sort();
        // The left edge (x = 1.5) is a left edge: its centres are in; the right one is not.
        assert_eq!(all, [(1, 0), (1, 1), (2, 0), (2, 1)]);
    }

    #[test]
    fn rect_bounds_and_quads() {
        let big = [[-100 * ONE, -100 * ONE], [100 * ONE, -100 * ONE], [0, 100 * ONE]];
        let px = cover(big, [3, 5, 7, 6]);
        assert_eq!(px, [(3, 5), (4, 5), (5, 5), (6, 5)]);
        let mut quads = Vec::new();
        triangle(&big, [3, 5, 7, 6], |x, y, m| quads.push((x, y, m)));
        assert_eq!(quads, [(2, 4, 0b1000), (4, 4, 0b1100), (6, 4, 0b0100)]);
    }
}
