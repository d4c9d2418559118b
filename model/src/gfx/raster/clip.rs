//! Clipping in homogeneous (clip) space, before the perspective divide.
//!
//! A primitive is clipped against the planes of the view volume that matter to the
//! rasterizer: `w > 0`, the near (`z >= 0`) and far (`z <= w`) planes unless depth clamp is
//! on, a guard band in x and y (`|x|, |y| <= g w`, `g` putting the band
//! `limits::GUARD_BAND` pixels from the viewport's centre, so fixed-point setup never
//! overflows and nothing wraps around behind the eye), and each clip distance the vertex
//! kernel writes (`d >= 0`). Inside the guard band, x and y are not clipped: the scissor and
//! the render target bound the pixels.
//!
//! Clipping never makes vertices the fragment kernel sees: every vertex of a clipped polygon
//! carries its barycentric coordinates `b` in the original primitive (clip-space
//! interpolation is exactly perspective-correct), and fragments interpolate the original
//! vertices' outputs with them.

/// A vertex in clip space with its clip distances and barycentrics in its primitive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipVertex {
    pub c: [f64; 4],
    pub d: [f64; 8],
    pub b: [f64; 3],
}

/// The smallest `w` kept: below it a vertex is at (or behind) the eye.
const W_MIN: f64 = 1e-6;

/// The clip planes of a draw.
#[derive(Clone, Copy, Debug)]
pub struct Planes {
    /// Near and far planes (off with depth clamp).
    pub depth: bool,
    /// Guard band half-extent in x and y, in units of w.
    pub guard: [f64; 2],
    /// Clip distances in use.
    pub distances: usize,
}

impl Planes {
    fn count(&self) -> usize {
        7 + self.distances
    }

    /// Signed distance of `v` to plane `k` (inside when >= 0); `None` for a plane that is
    /// off.
    fn dist(&self, k: usize, v: &ClipVertex) -> Option<f64> {
        let [x, y, z, w] = v.c;
        Some(match k {
            0 => w - W_MIN,
            1 if self.depth => z,
            2 if self.depth => w - z,
            1 | 2 => return None,
            3 => self.guard[0] * w - x,
            4 => self.guard[0] * w + x,
            5 => self.guard[1] * w - y,
            6 => self.guard[1] * w + y,
            _ => v.d[k - 7],
        })
    }

    /// True when `v` is inside the view volume proper (`|x|, |y| <= w` rather than the guard
    /// band): where a point must be to be drawn.
    pub fn point_inside(&self, v: &ClipVertex) -> bool {
        let [x, y, _, w] = v.c;
        (0..self.count()).all(|k| self.dist(k, v).is_none_or(|d| d >= 0.0)) && x.abs() <= w && y.abs() <= w
    }
}

fn lerp(a: &ClipVertex, b: &ClipVertex, t: f64) -> ClipVertex {
    let l = |x: f64, y: f64| x + t * (y - x);
    ClipVertex {
        c: std::array::from_fn(|i| l(a.c[i], b.c[i])),
        d: std::array::from_fn(|i| l(a.d[i], b.d[i])),
        b: std::array::from_fn(|i| l(a.b[i], b.b[i])),
    }
}

/// What clipping did to a primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clipped {
    /// Entirely inside: untouched.
    Inside,
    /// Cut by at least one plane; something is left.
    Cut,
    /// Nothing is left.
    Gone,
}

/// Clips polygon `poly` (Sutherland-Hodgman, plane by plane).
pub fn polygon(poly: &mut Vec<ClipVertex>, planes: &Planes) -> Clipped {
    let mut cut = false;
    let mut out = Vec::with_capacity(poly.len() + 2);
    for k in 0..planes.count() {
        let Some(dists) = poly.iter().map(|v| planes.dist(k, v)).collect::<Option<Vec<f64>>>() else { continue };
        if dists.iter().all(|&d| d >= 0.0) {
            continue;
        }
        cut = true;
        out.clear();
        for i in 0..poly.len() {
            let j = (i + 1) % poly.len();
            let (da, db) = (dists[i], dists[j]);
            if da >= 0.0 {
                out.push(poly[i]);
            }
            if (da >= 0.0) != (db >= 0.0) {
                out.push(lerp(&poly[i], &poly[j], da / (da - db)));
            }
        }
        std::mem::swap(poly, &mut out);
        if poly.len() < 3 {
            poly.clear();
            return Clipped::Gone;
        }
    }
    if cut {
        Clipped::Cut
    } else {
        Clipped::Inside
    }
}

/// Clips segment `seg` (each plane moves one end).
pub fn segment(seg: &mut [ClipVertex; 2], planes: &Planes) -> Clipped {
    let mut cut = false;
    for k in 0..planes.count() {
        let (Some(da), Some(db)) = (planes.dist(k, &seg[0]), planes.dist(k, &seg[1])) else { continue };
        match (da >= 0.0, db >= 0.0) {
            (true, true) => {}
            (false, false) => return Clipped::Gone,
            (true, false) => {
                seg[1] = lerp(&seg[0], &seg[1], da / (da - db));
                cut = true;
            }
            (false, true) => {
                seg[0] = lerp(&seg[0], &seg[1], da / (da - db));
                cut = true;
            }
        }
    }
    if cut {
        Clipped::Cut
    } else {
        Clipped::Inside
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(c: [f64; 4], k: usize) -> ClipVertex {
        let mut b = [0.0; 3];
        b[k] = 1.0;
        ClipVertex { c, d: [0.0; 8], b }
    }

    const PLANES: Planes = Planes { depth: true, guard: [100.0, 100.0], distances: 0 };

    /// A triangle through the near plane keeps the part in front: every kept vertex has
    /// z >= 0 and w > 0, and the new vertices' barycentrics reproduce their positions.
    #[test]
    fn near_plane_keeps_the_front_part() {
        let tri = [v([0.0, 0.0, 0.5, 1.0], 0), v([1.0, 0.0, -1.0, 0.5], 1), v([0.0, 1.0, 0.5, 1.0], 2)];
        let mut poly = tri.to_vec();
        assert_eq!(polygon(&mut poly, &PLANES), Clipped::Cut);
        assert_eq!(poly.len(), 4);
        for p in &poly {
            assert!(p.c[2] >= -1e-12 && p.c[3] > 0.0, "{p:?}");
            let back: [f64; 4] = std::array::from_fn(|i| (0..3).map(|k| p.b[k] * tri[k].c[i]).sum());
            for i in 0..4 {
                assert!((back[i] - p.c[i]).abs() < 1e-12, "{p:?}");
            }
        }
    }

    #[test]
    fn outside_one_plane_is_gone_and_inside_is_untouched() {
        let behind = [v([0.0, 0.0, -1.0, 1.0], 0), v([1.0, 0.0, -2.0, 1.0], 1), v([0.0, 1.0, -1.0, 1.0], 2)];
        assert_eq!(polygon(&mut behind.to_vec(), &PLANES), Clipped::Gone);
        let mut inside = [v([0.0, 0.0, 0.5, 1.0], 0), v([1.0, 0.0, 0.5, 1.0], 1), v([0.0, 1.0, 0.5, 1.0], 2)].to_vec();
        let before = inside.clone();
        assert_eq!(polygon(&mut inside, &PLANES), Clipped::Inside);
        assert_eq!(inside, before);
        // Depth clamp: no near plane, but w > 0 still holds.
        let clamp = Planes { depth: false, ..PLANES };
        assert_eq!(polygon(&mut behind.to_vec(), &clamp), Clipped::Inside);
        let mut seg = [v([0.0, 0.0, 0.5, 1.0], 0), v([0.0, 0.0, 0.5, -1.0], 1)];
        assert_eq!(segment(&mut seg, &clamp), Clipped::Cut);
        assert!(seg[1].c[3] > 0.0 && (seg[1].b[1] - 0.5).abs() < 1e-5);
    }

    #[test]
    fn clip_distances() {
        let mut t = [v([0.0, 0.0, 0.5, 1.0], 0), v([1.0, 0.0, 0.5, 1.0], 1), v([0.0, 1.0, 0.5, 1.0], 2)];
        t[0].d[0] = 1.0;
        t[1].d[0] = -1.0;
        t[2].d[0] = 1.0;
        let planes = Planes { distances: 1, ..PLANES };
        let mut poly = t.to_vec();
        assert_eq!(polygon(&mut poly, &planes), Clipped::Cut);
        assert!(poly.iter().all(|p| p.d[0] >= 0.0));
        assert!(Planes { distances: 1, ..PLANES }.point_inside(&t[0]));
        assert!(!planes.point_inside(&t[1]));
    }
}
