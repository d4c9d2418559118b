//! A minimal Wavefront OBJ reader: vertex positions and faces, nothing else. Polygons are
//! split into triangle fans; texture and normal indices (`v/vt/vn`) are ignored.

use crate::error::{Error, Result};

/// An indexed triangle mesh.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    pub positions: Vec<[f32; 3]>,
    /// Three indices per triangle, 0-based.
    pub indices: Vec<u32>,
}

impl Mesh {
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// One level of midpoint subdivision: every triangle becomes four, and an edge's
    /// midpoint is shared by the triangles on both sides, so a closed mesh stays closed.
    /// The shape does not change (flat subdivision): this makes work, not smoothness.
    pub fn subdivided(&self) -> Mesh {
        let mut positions = self.positions.clone();
        let mut midpoints: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
        let mut mid = |a: u32, b: u32, positions: &mut Vec<[f32; 3]>| {
            *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                let (p, q) = (positions[a as usize], positions[b as usize]);
                positions.push([(p[0] + q[0]) * 0.5, (p[1] + q[1]) * 0.5, (p[2] + q[2]) * 0.5]);
                positions.len() as u32 - 1
            })
        };
        let mut indices = Vec::with_capacity(self.indices.len() * 4);
        for t in self.indices.chunks_exact(3) {
            let (a, b, c) = (t[0], t[1], t[2]);
            let (ab, bc, ca) = (mid(a, b, &mut positions), mid(b, c, &mut positions), mid(c, a, &mut positions));
            indices.extend_from_slice(&[a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca]);
        }
        Mesh { positions, indices }
    }
}

pub fn parse_obj(text: &str) -> Result<Mesh> {
    let mut mesh = Mesh::default();
    for (number, line) in text.lines().enumerate() {
        let fail = |what: &str| Error::msg(format!("OBJ line {}: {what}: {line:?}", number + 1));
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("v") => {
                let mut xyz = [0.0f32; 3];
                for c in &mut xyz {
                    *c = fields.next().and_then(|f| f.parse().ok()).ok_or_else(|| fail("bad vertex"))?;
                }
                mesh.positions.push(xyz);
            }
            Some("f") => {
                let corners = fields
                    .map(|f| resolve_index(f, mesh.positions.len()))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| fail("bad face index"))?;
                if corners.len() < 3 {
                    return Err(fail("face with fewer than 3 vertices"));
                }
                for i in 1..corners.len() - 1 {
                    mesh.indices.extend([corners[0], corners[i], corners[i + 1]]);
                }
            }
            // Comments, normals, texture coordinates, groups, materials: not needed.
            _ => {}
        }
    }
    Ok(mesh)
}

/// Turns a face corner (`7`, `7/1`, `7//3`, `-1`) into a 0-based position index.
/// Negative indices count back from the last vertex read so far.
fn resolve_index(corner: &str, vertex_count: usize) -> Option<u32> {
    let index: i64 = corner.split('/').next()?.parse().ok()?;
    let zero_based = match index {
        i if i > 0 => i - 1,
        i if i < 0 => vertex_count as i64 + i,
        _ => return None,
    };
    (0..vertex_count as i64).contains(&zero_based).then_some(zero_based as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdivision_quadruples_and_keeps_a_closed_mesh_closed() {
        // A tetrahedron: every edge is shared by exactly two faces, before and after.
        let tet = Mesh {
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            indices: vec![0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3],
        };
        let s = tet.subdivided().subdivided();
        assert_eq!(s.triangle_count(), 4 * 4 * 4);
        assert_eq!(s.positions.len(), 4 + 6 + 24, "vertices + edge midpoints of both levels");
        let mut edges = std::collections::HashMap::new();
        for t in s.indices.chunks_exact(3) {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&n| n == 2));
    }

    #[test]
    fn reads_positions_and_fans_polygons() {
        let mesh = parse_obj("# quad\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 -1//1\n").unwrap();
        assert_eq!(mesh.positions.len(), 4);
        assert_eq!(mesh.indices, vec![0, 1, 2, 0, 2, 3]);
    }

    #[test]
    fn rejects_out_of_range_indices() {
        let err = parse_obj("v 0 0 0\nv 1 0 0\nf 1 2 3\n").unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn loads_the_bunny() {
        let mesh = parse_obj(crate::BUNNY_OBJ).unwrap();
        assert_eq!((mesh.positions.len(), mesh.triangle_count()), (1839, 3674));
    }
}
