//! Packing sibling triangles into triangle nodes (seed 003): a node holds five vertices
//! `V0..V4` that make up to four triangles, a fan around `V2` whose rim is
//! `V0, V1, V3, V4`: triangle `k` is `abi::rdna2::tri::VERTS[k]`, i.e. rim edge
//! `(R[k], R[k+1])` closed by `V2`. A triangle joins a node when a rotation of its vertices
//! (never a reflection, which would flip its facing) puts the node's centre last and its rim
//! edge where the node has room; shared vertices are equal bit for bit, so every triangle
//! the hardware tests is exactly the application's.

use vortex_model::abi::rdna2::tri;

/// A triangle's vertices in the application's order.
pub type Tri = [[f32; 3]; 3];

/// One packed triangle: which input triangle, in which node slot, and which node vertices
/// its `(v0, v1, v2)` are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Index into the group being packed.
    pub input: usize,
    pub slot: usize,
    pub order: [usize; 3],
}

/// A triangle node: its five vertices and the triangles placed in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Packed {
    pub verts: [[f32; 3]; 5],
    pub placed: Vec<Placed>,
}

impl Packed {
    /// The id word in return mode 1: per placed triangle, which of its hardware vertices
    /// (in `VERTS` order) the I and J barycentrics weigh, i.e. the application's v1 and v2.
    pub fn remap(&self) -> u32 {
        self.placed.iter().fold(0, |acc, p| {
            let hw = tri::VERTS[p.slot];
            let pos = |n: usize| hw.iter().position(|&h| h == n).expect("a placed vertex is the slot's") as u32;
            acc | tri::remap(p.slot, pos(p.order[1]), pos(p.order[2]))
        })
    }
}

fn same(a: &[f32; 3], b: &[f32; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Rim positions of the node vertices: `R = [V0, V1, V3, V4]`.
const RIM: [usize; 4] = [0, 1, 3, 4];

/// Arranges `tris` (1..=4) in one node, if they fit.
pub fn arrange(tris: &[Tri]) -> Option<Packed> {
    let n = tris.len();
    if n == 0 || n > 4 {
        return None;
    }
    if n == 1 {
        let t = tris[0];
        return Some(Packed {
            verts: [t[0], t[1], t[2], [0.0; 3], [0.0; 3]],
            placed: vec![Placed { input: 0, slot: 0, order: [0, 1, 2] }],
        });
    }
    for centre in tris[0] {
        // Each triangle rotated so the centre is last: (x, y, centre); `rot` says where the
        // application's v0 went.
        let mut edges = [([0.0f32; 3], [0.0f32; 3], 0usize); 4];
        let fits = tris.iter().enumerate().all(|(i, t)| match (0..3).find(|&r| same(&t[(r + 2) % 3], &centre)) {
            Some(r) => {
                edges[i] = (t[r], t[(r + 1) % 3], r);
                true
            }
            None => false,
        });
        if !fits {
            continue;
        }
        if let Some(p) = place_on_rim(&edges[..n], centre) {
            return Some(p);
        }
    }
    None
}

/// Assigns each rim edge to a slot (every injective assignment, at most 24) so shared rim
/// vertices agree.
fn place_on_rim(edges: &[([f32; 3], [f32; 3], usize)], centre: [f32; 3]) -> Option<Packed> {
    let n = edges.len();
    let mut slots = [0usize; 4];
    for code in 0..4usize.pow(n as u32) {
        let mut c = code;
        for s in slots.iter_mut().take(n) {
            *s = c % 4;
            c /= 4;
        }
        if (0..n).any(|i| (0..i).any(|j| slots[i] == slots[j])) {
            continue;
        }
        let mut rim: [Option<[f32; 3]>; 4] = [None; 4];
        let mut ok = true;
        for (i, &(x, y, _)) in edges.iter().enumerate() {
            for (at, v) in [(slots[i], x), ((slots[i] + 1) % 4, y)] {
                match rim[at] {
                    Some(w) if !same(&w, &v) => ok = false,
                    _ => rim[at] = Some(v),
                }
            }
        }
        if !ok {
            continue;
        }
        let mut verts = [[0.0f32; 3]; 5];
        verts[2] = centre;
        for k in 0..4 {
            verts[RIM[k]] = rim[k].unwrap_or([0.0; 3]);
        }
        let placed = edges
            .iter()
            .enumerate()
            .map(|(i, &(_, _, r))| {
                let s = slots[i];
                // Rotated (x, y, centre) is node (R[s], R[s+1], V2); the application's v_j
                // sits at rotated position (j - r) mod 3.
                let rot = [RIM[s], RIM[(s + 1) % 4], 2];
                Placed { input: i, slot: s, order: std::array::from_fn(|j| rot[(j + 3 - r) % 3]) }
            })
            .collect();
        return Some(Packed { verts, placed });
    }
    None
}

/// Packs a box node's triangle children (in order) into as few nodes as a greedy pass
/// finds: each triangle joins the first node it fits, else starts one. With `share` false
/// (structures that allow updates, whose vertices may move apart) every triangle gets a
/// node of its own.
pub fn pack(tris: &[Tri], share: bool) -> Vec<Packed> {
    let mut nodes: Vec<(Vec<usize>, Packed)> = Vec::new();
    'next: for (i, t) in tris.iter().enumerate() {
        if share {
            for (members, p) in nodes.iter_mut() {
                if members.len() == 4 {
                    continue;
                }
                let mut group: Vec<Tri> = members.iter().map(|&m| tris[m]).collect();
                group.push(*t);
                if let Some(q) = arrange(&group) {
                    members.push(i);
                    *p = q;
                    continue 'next;
                }
            }
        }
        nodes.push((vec![i], arrange(&[*t]).expect("one triangle always fits")));
    }
    nodes
        .into_iter()
        .map(|(members, mut p)| {
            for pl in &mut p.placed {
                pl.input = members[pl.input];
            }
            p
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every placed triangle's hardware vertices are a rotation of the application's.
    fn check(tris: &[Tri], nodes: &[Packed]) {
        let mut seen = vec![false; tris.len()];
        for p in nodes {
            for pl in &p.placed {
                assert!(!seen[pl.input]);
                seen[pl.input] = true;
                let t = tris[pl.input];
                for j in 0..3 {
                    assert!(same(&p.verts[pl.order[j]], &t[j]), "vertex {j} of triangle {}", pl.input);
                }
                let hw = tri::VERTS[pl.slot];
                let r = hw.iter().position(|&h| h == pl.order[0]).unwrap();
                assert_eq!([hw[r], hw[(r + 1) % 3], hw[(r + 2) % 3]], pl.order, "a rotation, not a reflection");
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn a_closed_fan_of_four_fits_one_node() {
        let c = [0.0, 0.0, 0.0];
        let rim = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]];
        // Each given in a different rotation.
        let tris = [[c, rim[0], rim[1]], [rim[2], c, rim[1]], [rim[2], rim[3], c], [rim[0], c, rim[3]]];
        // (rim[0], c, rim[3]) is a rotation of (c, rim[3], rim[0]): the fan's last triangle
        // going the other way would be a reflection; this one is consistent.
        let tris = [tris[0], tris[1], tris[2], [rim[3], rim[0], c]];
        let nodes = pack(&tris, true);
        assert_eq!(nodes.len(), 1, "{nodes:?}");
        check(&tris, &nodes);
        // The remap bits name the application's v1 and v2 among each slot's vertices.
        let p = &nodes[0];
        let id = p.remap();
        for pl in &p.placed {
            let hw = tri::VERTS[pl.slot];
            assert_eq!(hw[tri::remap_i(id, pl.slot) as usize], pl.order[1]);
            assert_eq!(hw[tri::remap_j(id, pl.slot) as usize], pl.order[2]);
        }
    }

    #[test]
    fn a_quad_shares_an_edge_and_strangers_do_not() {
        let (a, b, c, d) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]);
        let tris = [[a, b, c], [a, c, d], [[5.0, 5.0, 5.0], [6.0, 5.0, 5.0], [5.0, 6.0, 5.0]]];
        let nodes = pack(&tris, true);
        assert_eq!(nodes.len(), 2);
        check(&tris, &nodes);
        let apart = pack(&tris, false);
        assert_eq!(apart.len(), 3, "no sharing for updatable structures");
        check(&tris, &apart);
        // A reflected neighbour (same edge, same direction) cannot share without flipping.
        let flipped = [[a, b, c], [a, b, d]];
        let nodes = pack(&flipped, true);
        check(&flipped, &nodes);
    }
}
