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
