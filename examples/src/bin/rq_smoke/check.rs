//! What a ray query must commit, given every intersection the reference found, and the
//! comparison of one GPU record against it.

use crate::reference::{Hit, T_TIE};
use crate::HitRecord;
use std::fmt::Write;

const T_RELATIVE: f64 = 1e-4;
const T_ABSOLUTE: f64 = 1e-5;
const BARYCENTRIC: f64 = 1e-3;

/// `gl_RayQueryCommittedIntersection*EXT`.
const COMMITTED_NONE: u32 = 0;
const COMMITTED_TRIANGLE: u32 = 1;

#[derive(Clone, Copy, Debug)]
pub enum Pass {
    /// Every candidate is confirmed.
    ClosestHit,
    /// A candidate is confirmed when its primitive index is even.
    AnyHit,
}

impl Pass {
    pub fn name(self) -> &'static str {
        match self {
            Pass::ClosestHit => "closest-hit",
            Pass::AnyHit => "any-hit",
        }
    }

    /// Whether this hit can become the committed one: opaque hits always can, candidates
    /// when the shader confirms them.
    fn commits(self, hit: &Hit) -> bool {
        hit.opaque
            || match self {
                Pass::ClosestHit => true,
                Pass::AnyHit => hit.primitive & 1 == 0,
            }
    }
}

/// How one ray compared.
pub struct Outcome {
    pub hit: bool,
    /// More than one answer was acceptable.
    pub ambiguous: bool,
}

/// Compares the GPU's record with the reference hits of one ray.
///
/// The expected committed hit is the closest one the pass commits. Hits the reference
/// calls marginal (near an edge or a range end), and hits tied in t with the closest,
/// may be reported instead of it, and a ray whose only hits are marginal may miss.
/// Whichever triangle the GPU reports, its attributes must match that triangle's within
/// the tolerances, widened for grazing hits by their error scale.
pub fn check(pass: Pass, gpu: &HitRecord, hits: &[Hit]) -> Result<Outcome, String> {
    let mut eligible: Vec<&Hit> = hits.iter().filter(|h| pass.commits(h)).collect();
    eligible.sort_by(|a, b| a.t.total_cmp(&b.t));
    let definite = eligible.iter().find(|h| !h.marginal);
    let acceptable: Vec<&Hit> = match definite {
        Some(d) => {
            eligible.iter().copied().filter(|h| h.t <= d.t + tie(d.t) * h.error_scale.max(d.error_scale)).collect()
        }
        None => eligible.clone(),
    };
    let miss_ok = definite.is_none();
    let ambiguous = acceptable.len() + usize::from(miss_ok) > 1;

    let expected = || describe(&acceptable, miss_ok);
    let (committed_t, committed_candidate) = match gpu.committed_type {
        COMMITTED_NONE => {
            if (gpu.primitive_index, gpu.instance_id, gpu.geometry_index) != (-1, -1, -1) {
                return Err("the record was not written by the shader".into());
            }
            if !miss_ok {
                return Err(format!("GPU missed, expected {}", expected()));
            }
            (f64::INFINITY, false)
        }
        COMMITTED_TRIANGLE => {
            let id = (gpu.instance_id, gpu.geometry_index, gpu.primitive_index);
            let Some(h) = acceptable.iter().find(|h| (h.instance as i32, h.geometry as i32, h.primitive as i32) == id)
            else {
                return Err(format!("GPU hit {id:?} (instance, geometry, primitive), expected {}", expected()));
            };
            compare_attributes(gpu, h)?;
            (f64::from(gpu.t), !h.opaque)
        }
        other => return Err(format!("committed type {other} is neither none nor triangle")),
    };

    // Every non-opaque hit closer than the committed one must have been offered, and the
    // committed hit too if it is non-opaque; nothing is offered twice (NO_DUPLICATE_ANY_HIT)
    // and nothing beyond the non-opaque hits in range.
    let non_opaque = || hits.iter().filter(|h| !h.opaque);
    let closer = non_opaque().filter(|h| !h.marginal && h.t < committed_t - tie(committed_t) * h.error_scale).count();
    let (min, max) = (closer + usize::from(committed_candidate), non_opaque().count());
    if !(min..=max).contains(&(gpu.candidates as usize)) {
        return Err(format!("{} candidates offered, expected between {min} and {max}", gpu.candidates));
    }
    Ok(Outcome { hit: gpu.committed_type == COMMITTED_TRIANGLE, ambiguous })
}

fn compare_attributes(gpu: &HitRecord, h: &Hit) -> Result<(), String> {
    let mut problems = Vec::new();
    if gpu.custom_index != h.custom_index as i32 {
        problems.push(format!("custom index {} != {}", gpu.custom_index, h.custom_index));
    }
    let t = f64::from(gpu.t);
    if (t - h.t).abs() > (T_RELATIVE * h.t.abs()).max(T_ABSOLUTE) * h.error_scale {
        problems.push(format!("t {t} != {}", h.t));
    }
    let [u, v] = gpu.barycentrics.map(f64::from);
    let tolerance = BARYCENTRIC * h.error_scale;
    if (u - h.barycentrics[0]).abs() > tolerance || (v - h.barycentrics[1]).abs() > tolerance {
        problems.push(format!("barycentrics ({u}, {v}) != ({}, {})", h.barycentrics[0], h.barycentrics[1]));
    }
    if (gpu.front_face != 0) != h.front_face {
        problems.push(format!("front face {} != {}", gpu.front_face != 0, h.front_face));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("same triangle, but {}", problems.join(", ")))
    }
}

/// Two t values closer than this cannot be ordered reliably.
fn tie(t: f64) -> f64 {
    if t.is_finite() {
        T_TIE * t.abs().max(1.0)
    } else {
        0.0
    }
}

fn describe(hits: &[&Hit], miss_ok: bool) -> String {
    let mut out = String::from(if miss_ok { "a miss" } else { "" });
    for h in hits {
        let sep = if out.is_empty() { "" } else { " or " };
        let _ = write!(
            out,
            "{sep}[instance {} (custom {}) geometry {} primitive {} t {:.6} uv ({:.6}, {:.6}) front {} {}{} error scale {:.1}]",
            h.instance,
            h.custom_index,
            h.geometry,
            h.primitive,
            h.t,
            h.barycentrics[0],
            h.barycentrics[1],
            h.front_face,
            if h.opaque { "opaque" } else { "non-opaque" },
            if h.marginal { ", marginal" } else { "" },
            h.error_scale,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(t: f64, primitive: usize, opaque: bool, marginal: bool) -> Hit {
        Hit {
            t,
            instance: 1,
            custom_index: 7,
            geometry: 0,
            primitive,
            barycentrics: [0.2, 0.3],
            front_face: true,
            opaque,
            marginal,
            error_scale: 1.0,
        }
    }

    fn record(h: &Hit, candidates: u32) -> HitRecord {
        HitRecord {
            committed_type: COMMITTED_TRIANGLE,
            t: h.t as f32,
            primitive_index: h.primitive as i32,
            instance_id: h.instance as i32,
            custom_index: h.custom_index as i32,
            geometry_index: h.geometry as i32,
            barycentrics: h.barycentrics.map(|b| b as f32),
            front_face: u32::from(h.front_face),
            candidates,
        }
    }

    fn miss(candidates: u32) -> HitRecord {
        let unset = HitRecord {
            primitive_index: -1,
            instance_id: -1,
            custom_index: -1,
            geometry_index: -1,
            ..record(&hit(0.0, 0, true, false), candidates)
        };
        HitRecord { committed_type: COMMITTED_NONE, t: 0.0, ..unset }
    }

    #[test]
    fn closest_hit_pass_commits_the_nearest_candidate() {
        let hits = [hit(2.0, 0, true, false), hit(1.0, 3, false, false)];
        assert!(check(Pass::ClosestHit, &record(&hits[1], 1), &hits).is_ok());
        assert!(check(Pass::ClosestHit, &record(&hits[0], 1), &hits).is_err());
    }

    #[test]
    fn any_hit_pass_skips_rejected_candidates_but_must_offer_them() {
        let hits = [hit(2.0, 0, true, false), hit(1.0, 3, false, false)];
        assert!(check(Pass::AnyHit, &record(&hits[0], 1), &hits).is_ok());
        assert!(check(Pass::AnyHit, &record(&hits[0], 0), &hits).is_err(), "the odd candidate was not offered");
        assert!(check(Pass::AnyHit, &record(&hits[1], 1), &hits).is_err(), "the odd candidate was confirmed");
    }

    #[test]
    fn marginal_hits_may_be_missed_or_hit() {
        let hits = [hit(1.0, 0, true, true)];
        assert!(check(Pass::ClosestHit, &miss(0), &hits).is_ok_and(|o| o.ambiguous && !o.hit));
        assert!(check(Pass::ClosestHit, &record(&hits[0], 0), &hits).is_ok_and(|o| o.ambiguous && o.hit));
        assert!(check(Pass::ClosestHit, &miss(0), &[hit(1.0, 0, true, false)]).is_err());
    }

    #[test]
    fn attributes_are_compared_within_tolerance() {
        let hits = [hit(10.0, 0, true, false)];
        let good = record(&hits[0], 0);
        assert!(check(Pass::ClosestHit, &HitRecord { t: 10.0005, ..good }, &hits).is_ok());
        assert!(check(Pass::ClosestHit, &HitRecord { t: 10.01, ..good }, &hits).is_err());
        assert!(check(Pass::ClosestHit, &HitRecord { barycentrics: [0.2, 0.302], ..good }, &hits).is_err());
        assert!(check(Pass::ClosestHit, &HitRecord { front_face: 0, ..good }, &hits).is_err());
        assert!(check(Pass::ClosestHit, &HitRecord { custom_index: 8, ..good }, &hits).is_err());
    }

    #[test]
    fn an_unwritten_record_is_a_mismatch() {
        assert!(check(Pass::ClosestHit, &bytemuck::Zeroable::zeroed(), &[]).is_err());
    }
}
