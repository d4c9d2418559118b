//! The acceleration-structure scenes ray-query shaders of the corpus trace against, built
//! on the device by the driver under test. Every scene is a TLAS (the last structure
//! returned) over BLASes; what each holds is documented here, since the shaders' rays are
//! aimed at it.
//!
//! Coordinates avoid ties: rays in the shaders are aimed off every triangle edge, so the
//! result does not depend on how a driver breaks ties on shared edges, and shaders that
//! loop over candidates combine them order-independently (traversal order is the
//! implementation's choice).

use ash::vk;
use vortex_examples::{AabbGeometry, AccelerationStructure, Context, Indices, Instance, Mat3x4, TriangleGeometry};

/// A unit quad in the z = 0 plane, [0,1] x [0,1], as two triangles (diagonal x = y).
fn quad(z: f32) -> Vec<[f32; 3]> {
    vec![[0.0, 0.0, z], [1.0, 0.0, z], [1.0, 1.0, z], [0.0, 1.0, z]]
}

fn none() -> vk::GeometryInstanceFlagsKHR {
    vk::GeometryInstanceFlagsKHR::empty()
}

/// Scene `grid`: 4 instances laid out on a 2x2 grid of cells 2 units apart in x and y, rays
/// travel along +z.
///
/// - BLAS 0 (triangles): geometry 0 = opaque unit quad at z = 0 (primitives 0, 1);
///   geometry 1 = non-opaque triangle (0.1,0.1)-(0.9,0.1)-(0.1,0.9) at z = -0.25.
/// - BLAS 1 (AABBs): geometry 0 = opaque box [0.1,0.6]^2 x [0,0.5]; geometry 1 =
///   non-opaque boxes [0.5,0.9]x[0.1,0.9]x[0.2,0.4] and [0.1,0.4]x[0.6,0.9]x[-0.3,0.1].
/// - instance 0: BLAS 0 at (0, 0, 2), custom 7, mask 0x01, SBT offset 3.
/// - instance 1: BLAS 0 at (2, 0, 3), rotated 180 degrees about y around the cell centre
///   (so its back faces the rays) and scaled 1.5 in z, custom 42, mask 0x02, SBT 5, facing
///   cull disabled.
/// - instance 2: BLAS 1 at (0, 2, 4), custom 99, mask 0x04, SBT 1.
/// - instance 3: BLAS 0 at (2, 2, 5) forced non-opaque, custom 1234, mask 0x08, SBT 2.
///
/// Scene `grid_fetch` is the same but for BLAS 0: one non-opaque geometry holding the quad
/// (primitives 0, 1) and the triangle (2), built with `ALLOW_DATA_ACCESS` (for position
/// fetch, which needs the `rayTracingPositionFetch` feature).
fn grid(ctx: &Context, data_access: bool) -> Result<Vec<AccelerationStructure>, String> {
    let e = |e: vortex_examples::Error| e.to_string();
    let opaque = vk::GeometryFlagsKHR::OPAQUE | vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION;
    let access = if data_access {
        vk::BuildAccelerationStructureFlagsKHR::ALLOW_DATA_ACCESS
    } else {
        vk::BuildAccelerationStructureFlagsKHR::empty()
    };
    let tri = if data_access {
        // One non-opaque geometry: the quad (primitives 0, 1) and the triangle (2). (lavapipe
        // fetches positions by primitive index within geometry 0, so one geometry it is.)
        let mut vertices = quad(0.0);
        vertices.extend([[0.1, 0.1, -0.25], [0.9, 0.1, -0.25], [0.1, 0.9, -0.25]]);
        AccelerationStructure::build_bottom_with(
            ctx,
            &[TriangleGeometry {
                vertices,
                indices: Indices::U32(vec![0, 1, 2, 0, 2, 3, 4, 5, 6]),
                transform: None,
                flags: vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION,
            }],
            access,
        )
    } else {
        AccelerationStructure::build_bottom_with(
            ctx,
            &[
                TriangleGeometry {
                    vertices: quad(0.0),
                    indices: Indices::U16(vec![0, 1, 2, 0, 2, 3]),
                    transform: None,
                    flags: opaque,
                },
                TriangleGeometry {
                    vertices: vec![[0.1, 0.1, -0.25], [0.9, 0.1, -0.25], [0.1, 0.9, -0.25]],
                    indices: Indices::None,
                    transform: None,
                    flags: vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION,
                },
            ],
            access,
        )
    }
    .map_err(e)?;
    let boxes = AccelerationStructure::build_bottom_aabbs(
        ctx,
        &[
            AabbGeometry { boxes: vec![[0.1, 0.1, 0.0, 0.6, 0.6, 0.5]], flags: opaque },
            AabbGeometry {
                boxes: vec![[0.5, 0.1, 0.2, 0.9, 0.9, 0.4], [0.1, 0.6, -0.3, 0.4, 0.9, 0.1]],
                flags: vk::GeometryFlagsKHR::NO_DUPLICATE_ANY_HIT_INVOCATION,
            },
        ],
    )
    .map_err(e)?;
    let flip = Mat3x4::compose(&[
        Mat3x4::translation(-0.5, 0.0, 0.0),
        Mat3x4::scale(1.0, 1.0, 1.5),
        Mat3x4::rotation_y(180.0),
        Mat3x4::translation(2.5, 0.0, 3.0),
    ]);
    let instances = vec![
        Instance {
            blas: 0,
            transform: Mat3x4::translation(0.0, 0.0, 2.0),
            custom_index: 7,
            mask: 0x01,
            flags: none(),
            sbt_offset: 3,
        },
        Instance {
            blas: 0,
            transform: flip,
            custom_index: 42,
            mask: 0x02,
            flags: vk::GeometryInstanceFlagsKHR::TRIANGLE_FACING_CULL_DISABLE,
            sbt_offset: 5,
        },
        Instance {
            blas: 1,
            transform: Mat3x4::translation(0.0, 2.0, 4.0),
            custom_index: 99,
            mask: 0x04,
            flags: none(),
            sbt_offset: 1,
        },
        Instance {
            blas: 0,
            transform: Mat3x4::translation(2.0, 2.0, 5.0),
            custom_index: 1234,
            mask: 0x08,
            flags: vk::GeometryInstanceFlagsKHR::FORCE_NO_OPAQUE,
            sbt_offset: 2,
        },
    ];
    let blases = vec![tri, boxes];
    let tlas = AccelerationStructure::build_top(ctx, &blases, &instances).map_err(e)?;
    let mut all = blases;
    all.push(tlas);
    Ok(all)
}

/// Builds scene `name`; the TLAS is last.
pub fn build(ctx: &Context, name: &str) -> Result<Vec<AccelerationStructure>, String> {
    match name {
        "grid" => grid(ctx, false),
        "grid_fetch" => grid(ctx, true),
        _ => Err(format!("unknown scene `{name}`")),
    }
}
