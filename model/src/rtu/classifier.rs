//! The hit-policy classifier: stateless functions composing ray flags (given at run time),
//! instance flags (from the instance leaf) and geometry flags (from the leaf header) into
//! the walker's decisions. Every rule of the Vulkan ray-traversal chapter the RTU applies
//! lives here, one function per rule.

use crate::abi::rtu::{geometry_flags as gf, instance_flags as inf, ray_flags as rf};

/// Opacity of a primitive after all overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opacity {
    Opaque,
    NonOpaque,
}

/// Ray flags win over instance flags, which win over the geometry flag.
#[inline]
pub fn opacity(geom_flags: u32, inst_flags: u32, ray_flags: u32) -> Opacity {
    let opaque = if ray_flags & rf::OPAQUE != 0 {
        true
    } else if ray_flags & rf::NO_OPAQUE != 0 {
        false
    } else if inst_flags & inf::FORCE_OPAQUE != 0 {
        true
    } else if inst_flags & inf::FORCE_NO_OPAQUE != 0 {
        false
    } else {
        geom_flags & gf::OPAQUE != 0
    };
    if opaque {
        Opacity::Opaque
    } else {
        Opacity::NonOpaque
    }
}

/// Skips an instance whose mask shares no bit with the ray's cull mask.
#[inline]
pub fn instance_visible(inst_mask: u32, cull_mask: u32) -> bool {
    inst_mask & cull_mask & 0xff != 0
}

/// True when a whole leaf of triangles (one geometry, one opacity) is culled before any test.
#[inline]
pub fn cull_triangle_leaf(ray_flags: u32, op: Opacity) -> bool {
    ray_flags & rf::SKIP_TRIANGLES != 0 || cull_opacity(ray_flags, op)
}

/// True when a whole leaf of AABBs is culled before any test.
#[inline]
pub fn cull_aabb_leaf(ray_flags: u32, op: Opacity) -> bool {
    ray_flags & rf::SKIP_AABBS != 0 || cull_opacity(ray_flags, op)
}

#[inline]
fn cull_opacity(ray_flags: u32, op: Opacity) -> bool {
    match op {
        Opacity::Opaque => ray_flags & rf::CULL_OPAQUE != 0,
        Opacity::NonOpaque => ray_flags & rf::CULL_NO_OPAQUE != 0,
    }
}

/// Facing after the instance's `TRIANGLE_FLIP_FACING` (facing is decided in object space,
/// so the instance transform never changes it).
#[inline]
pub fn front_face(geometric_front: bool, inst_flags: u32) -> bool {
    geometric_front ^ (inst_flags & inf::TRIANGLE_FLIP_FACING != 0)
}

/// Face culling, unless the instance disables it.
#[inline]
pub fn cull_facing(ray_flags: u32, inst_flags: u32, front: bool) -> bool {
    if inst_flags & inf::TRIANGLE_FACING_CULL_DISABLE != 0 {
        return false;
    }
    if front {
        ray_flags & rf::CULL_FRONT_FACING != 0
    } else {
        ray_flags & rf::CULL_BACK_FACING != 0
    }
}

/// What the walker does with a triangle the ray hits inside the current interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriAction {
    /// Culled by facing.
    Cull,
    /// Opaque: commit directly.
    Commit,
    /// Non-opaque: hand to the shader as a candidate.
    Candidate,
}

#[inline]
pub fn triangle_action(ray_flags: u32, inst_flags: u32, op: Opacity, front: bool) -> TriAction {
    if cull_facing(ray_flags, inst_flags, front) {
        TriAction::Cull
    } else if op == Opacity::Opaque {
        TriAction::Commit
    } else {
        TriAction::Candidate
    }
}

/// A committed hit ends the walk when the ray asks for the first hit only.
#[inline]
pub fn terminate_on_commit(ray_flags: u32) -> bool {
    ray_flags & rf::TERMINATE_ON_FIRST_HIT != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opacity_precedence() {
        use Opacity::*;
        assert_eq!(opacity(gf::OPAQUE, 0, 0), Opaque);
        assert_eq!(opacity(0, 0, 0), NonOpaque);
        assert_eq!(opacity(gf::OPAQUE, inf::FORCE_NO_OPAQUE, 0), NonOpaque);
        assert_eq!(opacity(0, inf::FORCE_OPAQUE, 0), Opaque);
        assert_eq!(opacity(0, inf::FORCE_NO_OPAQUE, rf::OPAQUE), Opaque);
        assert_eq!(opacity(gf::OPAQUE, inf::FORCE_OPAQUE, rf::NO_OPAQUE), NonOpaque);
    }

    #[test]
    fn culling_rules() {
        assert!(cull_facing(rf::CULL_BACK_FACING, 0, false));
        assert!(!cull_facing(rf::CULL_BACK_FACING, 0, true));
        assert!(cull_facing(rf::CULL_FRONT_FACING, 0, true));
        assert!(!cull_facing(rf::CULL_FRONT_FACING, inf::TRIANGLE_FACING_CULL_DISABLE, true));
        assert!(front_face(false, inf::TRIANGLE_FLIP_FACING));
        assert!(cull_triangle_leaf(rf::SKIP_TRIANGLES, Opacity::Opaque));
        assert!(cull_triangle_leaf(rf::CULL_OPAQUE, Opacity::Opaque));
        assert!(!cull_triangle_leaf(rf::CULL_OPAQUE, Opacity::NonOpaque));
        assert!(cull_aabb_leaf(rf::CULL_NO_OPAQUE, Opacity::NonOpaque));
        assert!(cull_aabb_leaf(rf::SKIP_AABBS, Opacity::Opaque));
        assert!(!cull_aabb_leaf(rf::SKIP_TRIANGLES, Opacity::Opaque));
        assert!(instance_visible(0x0f, 0xff));
        assert!(!instance_visible(0xf0, 0x0f));
        assert_eq!(triangle_action(0, 0, Opacity::NonOpaque, true), TriAction::Candidate);
        assert_eq!(triangle_action(rf::CULL_BACK_FACING, 0, Opacity::Opaque, false), TriAction::Cull);
    }
}
