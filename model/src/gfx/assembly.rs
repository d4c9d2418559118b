//! Primitive assembly: the draw's vertex positions grouped into points, lines and triangles
//! by topology (`abi::gfx::topology`), starting over after each restart index.
//!
//! Vertex order follows the Vulkan tables (a strip's odd triangles swap two vertices so
//! every triangle keeps the strip's winding; a fan's triangle `i` is `i+1, i+2, 0`), then
//! rotates cyclically so the provoking vertex comes first (the first listed vertex, or with
//! `PROVOKING_LAST` the last vertex of the primitive): rotation keeps the winding, and the
//! fragment kernel reads flat inputs from `frag_vtx0`.

use crate::abi::gfx::Assembly;

/// What a primitive is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Point,
    Line,
    Triangle,
}

/// One assembled primitive: its vertex positions (provoking vertex first; points repeat
/// theirs, lines their second) and `gl_PrimitiveID`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Primitive {
    pub kind: Kind,
    pub pos: [u32; 3],
    pub id: u32,
}

/// The primitives of one instance, in order. `restart(pos)` tells the positions holding the
/// restart index.
pub fn assemble(
    (n, how): (u32, Assembly),
    vertex_count: u32,
    provoking_last: bool,
    restart: impl Fn(u32) -> bool,
) -> Vec<Primitive> {
    let kind = match n {
        1 => Kind::Point,
        2 => Kind::Line,
        _ => Kind::Triangle,
    };
    let mut out = Vec::new();
    let mut seg: Vec<u32> = Vec::new();
    let flush = |seg: &mut Vec<u32>, out: &mut Vec<Primitive>| {
        segment(kind, how, seg, provoking_last, out);
        seg.clear();
    };
    for pos in 0..vertex_count {
        if restart(pos) {
            flush(&mut seg, &mut out);
        } else {
            seg.push(pos);
        }
    }
    flush(&mut seg, &mut out);
    for (i, p) in out.iter_mut().enumerate() {
        p.id = i as u32;
    }
    out
}

/// The primitives of one run of positions without a restart.
fn segment(kind: Kind, how: Assembly, s: &[u32], last: bool, out: &mut Vec<Primitive>) {
    let n = match kind {
        Kind::Point => 1,
        Kind::Line => 2,
        Kind::Triangle => 3,
    };
    if s.len() < n {
        return;
    }
    // (listed vertices, index of the provoking one in the last-vertex convention)
    let mut push = |v: [u32; 3], last_at: usize| {
        let first = if last { last_at } else { 0 };
        let pos = match kind {
            Kind::Point => [v[0]; 3],
            Kind::Line if first == 1 => [v[1], v[0], v[0]],
            Kind::Line => [v[0], v[1], v[1]],
            Kind::Triangle => [v[first], v[(first + 1) % 3], v[(first + 2) % 3]],
        };
        out.push(Primitive { kind, pos, id: 0 });
    };
    match (kind, how) {
        (_, Assembly::List) => {
            for c in s.chunks_exact(n) {
                let v = [c[0], c[(n - 1).min(1)], c[n - 1]];
                push(v, n - 1);
            }
        }
        (Kind::Line, _) => {
            for i in 0..s.len() - 1 {
                push([s[i], s[i + 1], s[i + 1]], 1);
            }
        }
        (_, Assembly::Strip) => {
            for i in 0..s.len() - 2 {
                // Odd triangles list i+2 second: the vertex numbered i+2 is listed at 1.
                let odd = i % 2;
                push([s[i], s[i + 1 + odd], s[i + 2 - odd]], 2 - odd);
            }
        }
        (_, Assembly::Fan) => {
            for i in 0..s.len() - 2 {
                push([s[i + 1], s[i + 2], s[0]], 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::gfx::topology;

    fn pos(t: u32, n: u32, last: bool, restart: &[u32]) -> Vec<[u32; 3]> {
        assemble(topology(t).unwrap(), n, last, |p| restart.contains(&p)).iter().map(|p| p.pos).collect()
    }

    #[test]
    fn topologies_by_the_vulkan_tables() {
        assert_eq!(pos(0, 2, false, &[]), [[0, 0, 0], [1, 1, 1]]);
        assert_eq!(pos(1, 5, false, &[]), [[0, 1, 1], [2, 3, 3]]);
        assert_eq!(pos(2, 3, false, &[]), [[0, 1, 1], [1, 2, 2]]);
        assert_eq!(pos(3, 7, false, &[]), [[0, 1, 2], [3, 4, 5]]);
        assert_eq!(pos(4, 5, false, &[]), [[0, 1, 2], [1, 3, 2], [2, 3, 4]]);
        assert_eq!(pos(5, 5, false, &[]), [[1, 2, 0], [2, 3, 0], [3, 4, 0]]);
    }

    #[test]
    fn provoking_last_rotates_and_keeps_winding() {
        // List: 3i+2 first, then the rest in cyclic order.
        assert_eq!(pos(3, 3, true, &[]), [[2, 0, 1]]);
        // Strip: i+2 provokes; odd triangle (1, 3, 2) becomes (3, 2, 1).
        assert_eq!(pos(4, 4, true, &[]), [[2, 0, 1], [3, 2, 1]]);
        // Fan (1, 2, 0): 2 provokes.
        assert_eq!(pos(5, 3, true, &[]), [[2, 0, 1]]);
        assert_eq!(pos(2, 3, true, &[]), [[1, 0, 0], [2, 1, 1]]);
    }

    #[test]
    fn restart_starts_over_and_ids_count_on() {
        // Strip 0 1 2 | 4 5 6 7: two strips; ids run across the restart.
        let p = assemble(topology(4).unwrap(), 8, false, |p| p == 3);
        let v: Vec<_> = p.iter().map(|p| (p.pos, p.id)).collect();
        assert_eq!(v, [([0, 1, 2], 0), ([4, 5, 6], 1), ([5, 7, 6], 2)]);
        // An incomplete list primitive before a restart is dropped.
        assert_eq!(pos(3, 8, false, &[2]), [[3, 4, 5]]);
    }
}
