//! The KMU: walks a launch's grid two levels deep (seed 002 §3).
//!
//! The inner level runs `intra_offset` over one cluster (`cluster_dim`), the outer level
//! advances `group_origin` by whole clusters in X, Y, Z order, so a cluster's CTAs are
//! consecutive and travel as one message: they land on one core. Clusters, not CTAs, are
//! the unit the launch fabric load-balances across cores.

use crate::dcr::LaunchState;
use crate::fault::{Fault, FaultKind};

/// One CTA as the KMU emits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtaDesc {
    pub block_idx: [u32; 3],
    /// First CTA of its cluster (the dispatcher reserves the cluster's window on it).
    pub first_of_cluster: bool,
    /// Last CTA of its cluster (the message's end).
    pub eop: bool,
}

/// The grid walker.
#[derive(Clone, Debug)]
pub struct Kmu {
    grid: [u32; 3],
    cluster: [u32; 3],
    /// Clusters per axis.
    clusters: [u32; 3],
}

impl Kmu {
    /// Latches a launch. Refuses grids that are not whole multiples of the cluster dims
    /// (the walk would never reach its bound).
    pub fn new(launch: &LaunchState) -> Result<Kmu, Fault> {
        let cluster = launch.cluster_dim.map(|d| d.max(1));
        for i in 0..3 {
            if !launch.grid_dim[i].is_multiple_of(cluster[i]) {
                return Err(Fault::new(
                    FaultKind::BadLaunch,
                    format!(
                        "grid dimension {} ({}) is not a multiple of cluster dimension {}",
                        i, launch.grid_dim[i], cluster[i]
                    ),
                ));
            }
        }
        let clusters = [0, 1, 2].map(|i| launch.grid_dim[i] / cluster[i]);
        Ok(Kmu { grid: launch.grid_dim, cluster, clusters })
    }

    /// Number of clusters the walk emits (0 for an empty grid).
    pub fn num_clusters(&self) -> u64 {
        self.clusters.iter().map(|&c| c as u64).product()
    }

    pub fn cluster_size(&self) -> u32 {
        self.cluster.iter().product()
    }

    /// The CTAs of cluster number `index` in walk order. Cores pull clusters by index, so
    /// the functional model can hand them out from several host threads while keeping the
    /// walk's order and membership.
    pub fn cluster(&self, index: u64) -> impl Iterator<Item = CtaDesc> + '_ {
        let cx = (index % self.clusters[0] as u64) as u32;
        let rest = index / self.clusters[0] as u64;
        let cy = (rest % self.clusters[1] as u64) as u32;
        let cz = (rest / self.clusters[1] as u64) as u32;
        let origin = [cx * self.cluster[0], cy * self.cluster[1], cz * self.cluster[2]];
        let k = self.cluster_size();
        (0..k).map(move |i| {
            let ox = i % self.cluster[0];
            let oy = (i / self.cluster[0]) % self.cluster[1];
            let oz = i / (self.cluster[0] * self.cluster[1]);
            CtaDesc {
                block_idx: [origin[0] + ox, origin[1] + oy, origin[2] + oz],
                first_of_cluster: i == 0,
                eop: i == k - 1,
            }
        })
    }

    /// The sequential walk of seed 002 §3: intra-cluster offsets wrap first, then the
    /// cluster origin advances in X, Y, Z order. An empty grid walks nothing.
    pub fn walk(&self) -> Vec<CtaDesc> {
        let mut out = Vec::new();
        if self.grid.contains(&0) {
            return out;
        }
        let mut origin = [0u32; 3];
        'outer: loop {
            let mut intra = [0u32; 3];
            loop {
                let group_complete = intra[0] + 1 == self.cluster[0]
                    && intra[1] + 1 == self.cluster[1]
                    && intra[2] + 1 == self.cluster[2];
                out.push(CtaDesc {
                    block_idx: [origin[0] + intra[0], origin[1] + intra[1], origin[2] + intra[2]],
                    first_of_cluster: intra == [0, 0, 0],
                    eop: group_complete,
                });
                if group_complete {
                    break;
                }
                intra[0] += 1;
                if intra[0] == self.cluster[0] {
                    intra[0] = 0;
                    intra[1] += 1;
                    if intra[1] == self.cluster[1] {
                        intra[1] = 0;
                        intra[2] += 1;
                    }
                }
            }
            origin[0] += self.cluster[0];
            if origin[0] == self.grid[0] {
                origin[0] = 0;
                origin[1] += self.cluster[1];
                if origin[1] == self.grid[1] {
                    origin[1] = 0;
                    origin[2] += self.cluster[2];
                    if origin[2] == self.grid[2] {
                        break 'outer;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(grid: [u32; 3], cluster: [u32; 3]) -> LaunchState {
        LaunchState {
            pc: 0,
            entry: 0,
            param: 0,
            grid_dim: grid,
            block_dim: [1, 1, 1],
            block_size: 1,
            lmem_size: 0,
            warp_step: [0; 3],
            cluster_dim: cluster,
        }
    }

    #[test]
    fn plain_walk_is_row_major() {
        let k = Kmu::new(&launch([3, 2, 1], [1, 1, 1])).unwrap();
        let w = k.walk();
        let ids: Vec<_> = w.iter().map(|c| c.block_idx).collect();
        assert_eq!(ids, vec![[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0]]);
        assert!(w.iter().all(|c| c.first_of_cluster && c.eop));
    }

    #[test]
    fn clusters_are_consecutive_and_random_access_matches_walk() {
        let k = Kmu::new(&launch([4, 4, 2], [2, 2, 1])).unwrap();
        let w = k.walk();
        assert_eq!(w.len(), 32);
        assert_eq!(k.num_clusters(), 8);
        let by_index: Vec<_> = (0..k.num_clusters()).flat_map(|i| k.cluster(i).collect::<Vec<_>>()).collect();
        assert_eq!(w, by_index);
        // First cluster: (0,0),(1,0),(0,1),(1,1), eop on the last.
        assert_eq!(w[0].block_idx, [0, 0, 0]);
        assert_eq!(w[3].block_idx, [1, 1, 0]);
        assert!(w[0].first_of_cluster && !w[0].eop && w[3].eop);
        // Every CTA exactly once.
        let mut all: Vec<_> = w.iter().map(|c| c.block_idx).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 32);
    }

    #[test]
    fn empty_grid_walks_nothing_and_ragged_clusters_are_refused() {
        let k = Kmu::new(&launch([0, 5, 1], [1, 1, 1])).unwrap();
        assert!(k.walk().is_empty());
        assert_eq!(k.num_clusters(), 0);
        assert!(Kmu::new(&launch([3, 1, 1], [2, 1, 1])).is_err());
    }
}
