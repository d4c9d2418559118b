//! Cube maps: face selection, the per-face coordinate and derivative transforms, and the
//! texel across a face's edge for seamless filtering (the spec's "Cube Map Face Selection
//! and Transformations" and "Cube Map Edge Handling").

/// Per face (layer number 0..6: +X, -X, +Y, -Y, +Z, -Z), where its `sc`, `tc` and `rc`
/// come from: (axis of the direction, sign). `rc` is signed so that it is the major axis'
/// magnitude, as the spec's derivative table takes it.
const FACES: [[(usize, i8); 3]; 6] = [
    [(2, -1), (1, -1), (0, 1)],
    [(2, 1), (1, -1), (0, -1)],
    [(0, 1), (2, 1), (1, 1)],
    [(0, 1), (2, -1), (1, -1)],
    [(0, 1), (1, -1), (2, 1)],
    [(0, -1), (1, -1), (2, -1)],
];

/// The face a direction selects: the major axis, `rz` winning ties over `ry` and `rx`, and
/// `ry` over `rx` (the rules the spec recommends); the face is negative when that
/// component is below zero.
pub fn face(d: [f32; 3]) -> u32 {
    let a = d.map(f32::abs);
    let axis = if a[2] >= a[0] && a[2] >= a[1] {
        2
    } else if a[1] >= a[0] {
        1
    } else {
        0
    };
    2 * axis as u32 + (d[axis] < 0.0) as u32
}

/// `(sc, tc, rc)` of direction (or derivative) `d` on face `f`.
fn select(f: u32, d: [f32; 3]) -> [f32; 3] {
    FACES[f as usize].map(|(axis, sign)| sign as f32 * d[axis])
}

/// `(s_face, t_face)` of direction `d` on its face `f`.
pub fn coords(f: u32, d: [f32; 3]) -> [f32; 2] {
    let [sc, tc, rc] = select(f, d);
    [0.5 * sc / rc.abs() + 0.5, 0.5 * tc / rc.abs() + 0.5]
}

/// `(∂s_face, ∂t_face)` along one screen axis, from the direction `d` and its derivative
/// `dd` along that axis (the quotient rule of "Cube Map Derivative Transformation").
pub fn derivatives(f: u32, d: [f32; 3], dd: [f32; 3]) -> [f32; 2] {
    let [sc, tc, rc] = select(f, d);
    let [dsc, dtc, drc] = select(f, dd);
    let (m, rc2) = (rc.abs(), rc * rc);
    [0.5 * (m * dsc - sc * drc) / rc2, 0.5 * (m * dtc - tc * drc) / rc2]
}

/// The texel `(i, j)` of face `f` (`n` texels square) that lies off the face in exactly one
/// of `i` and `j`, as (face, i, j) on the neighbouring face: the texel there that touches
/// the shared edge at the same place along it.
///
/// Worked in whole numbers: a texel centre is at `2i + 1 - n` in units of `1/n` of the
/// half-face. The off-face coordinate is pulled back onto the edge (`±n`), which is a point
/// of both faces; its direction names the neighbour (the pulled-back axis), and projecting
/// it onto that face gives `±n` across the edge and the unchanged position along it.
pub fn across_edge(f: u32, i: i64, j: i64, n: i64) -> (u32, i64, i64) {
    let half = |k: i64| (2 * k + 1 - n).clamp(-n, n);
    let (s, t) = (half(i), half(j));
    let spec = FACES[f as usize];
    let mut d = [0i64; 3];
    for ((axis, sign), v) in spec.into_iter().zip([s, t, n]) {
        d[axis] = sign as i64 * v;
    }
    let off = if (0..n).contains(&i) { spec[1].0 } else { spec[0].0 };
    let g = 2 * off as u32 + (d[off] < 0) as u32;
    let [s2, t2, _] = FACES[g as usize].map(|(axis, sign)| sign as i64 * d[axis]);
    let index = |c: i64| {
        if c >= n {
            n - 1
        } else if c <= -n {
            0
        } else {
            (c + n - 1) / 2
        }
    };
    (g, index(s2), index(t2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_directions_pick_their_faces_and_ties_prefer_z_then_y() {
        let axes =
            [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]];
        for (f, d) in axes.into_iter().enumerate() {
            assert_eq!(face(d), f as u32);
            assert_eq!(coords(f as u32, d), [0.5, 0.5], "the axis hits the face's centre");
        }
        assert_eq!(face([1.0, 1.0, -1.0]), 5);
        assert_eq!(face([-1.0, 1.0, 0.5]), 2);
    }

    #[test]
    fn face_coordinates_follow_the_table() {
        // +X: s = -rz, t = -ry: a direction tilted to -z and -y lands at s, t > 0.5.
        assert_eq!(coords(0, [1.0, -0.5, -0.5]), [0.75, 0.75]);
        // -Y: s = +rx, t = -rz.
        assert_eq!(coords(3, [0.5, -1.0, 0.5]), [0.75, 0.25]);
        // Moving the direction along +x on +Z moves s at 1/2 per unit; on -Z against it.
        assert_eq!(derivatives(4, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]), [0.5, 0.0]);
        assert_eq!(derivatives(5, [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]), [-0.5, 0.0]);
    }

    /// Every edge texel's neighbour lies on an adjacent face, at its border, and stepping
    /// back across the same edge returns to the start.
    #[test]
    fn crossing_an_edge_and_back_is_the_identity() {
        let n = 4;
        for f in 0..6 {
            for k in 0..n {
                for (i, j) in [(-1, k), (n, k), (k, -1), (k, n)] {
                    let (g, i2, j2) = across_edge(f, i, j, n);
                    assert_ne!(g / 2, f / 2, "face {f} ({i},{j}) went to the opposite face {g}");
                    assert!(i2 == 0 || i2 == n - 1 || j2 == 0 || j2 == n - 1);
                    // Step off g's face the way we came in: the coordinate on the border.
                    let back = [(i2 - 1, j2), (i2 + 1, j2), (i2, j2 - 1), (i2, j2 + 1)]
                        .into_iter()
                        .filter(|&(a, b)| !(0..n).contains(&a) || !(0..n).contains(&b))
                        .map(|(a, b)| across_edge(g, a, b, n))
                        .any(|(h, a, b)| h == f && (a, b) == (i.clamp(0, n - 1), j.clamp(0, n - 1)));
                    assert!(back, "face {f} ({i},{j}) -> face {g} ({i2},{j2}) does not lead back");
                }
            }
        }
        // +X's right edge (s = 1, rz = -1) borders -Z's left column, row unchanged.
        assert_eq!(across_edge(0, 4, 1, 4), (5, 0, 1));
        // +Y's top row (t = 0, rz = -1) borders -Z's top row, mirrored in s.
        assert_eq!(across_edge(2, 1, -1, 4), (5, 2, 0));
    }
}
