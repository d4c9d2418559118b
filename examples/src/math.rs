//! The 3x4 affine transform Vulkan uses for instances and geometries
//! (`VkTransformMatrixKHR`): row-major, the last column is the translation.

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat3x4(pub [[f32; 4]; 3]);

impl Mat3x4 {
    pub const IDENTITY: Mat3x4 = Mat3x4([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]);

    pub fn translation(x: f32, y: f32, z: f32) -> Self {
        Mat3x4([[1.0, 0.0, 0.0, x], [0.0, 1.0, 0.0, y], [0.0, 0.0, 1.0, z]])
    }

    pub fn scale(x: f32, y: f32, z: f32) -> Self {
        Mat3x4([[x, 0.0, 0.0, 0.0], [0.0, y, 0.0, 0.0], [0.0, 0.0, z, 0.0]])
    }

    /// Rotation by `degrees` about the X axis (right-handed).
    pub fn rotation_x(degrees: f32) -> Self {
        let (s, c) = degrees.to_radians().sin_cos();
        Mat3x4([[1.0, 0.0, 0.0, 0.0], [0.0, c, -s, 0.0], [0.0, s, c, 0.0]])
    }

    /// Rotation by `degrees` about the Y axis (right-handed).
    pub fn rotation_y(degrees: f32) -> Self {
        let (s, c) = degrees.to_radians().sin_cos();
        Mat3x4([[c, 0.0, s, 0.0], [0.0, 1.0, 0.0, 0.0], [-s, 0.0, c, 0.0]])
    }

    /// Rotation by `degrees` about the Z axis (right-handed).
    pub fn rotation_z(degrees: f32) -> Self {
        let (s, c) = degrees.to_radians().sin_cos();
        Mat3x4([[c, -s, 0.0, 0.0], [s, c, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    }

    /// `self * rhs`: applies `rhs` first, then `self`.
    pub fn then_after(&self, rhs: &Mat3x4) -> Mat3x4 {
        let (a, b) = (&self.0, &rhs.0);
        let mut out = [[0.0; 4]; 3];
        for (r, row) in out.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                *cell = (0..3).map(|k| a[r][k] * b[k][c]).sum::<f32>() + if c == 3 { a[r][3] } else { 0.0 };
            }
        }
        Mat3x4(out)
    }

    /// Composes a list of transforms applied in order: `compose(&[a, b])` applies `a`, then `b`.
    pub fn compose(steps: &[Mat3x4]) -> Mat3x4 {
        steps.iter().fold(Mat3x4::IDENTITY, |acc, step| step.then_after(&acc))
    }

    /// The 12 floats of `VkTransformMatrixKHR`, row after row.
    pub fn to_row_major(self) -> [f32; 12] {
        bytemuck::cast(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(m: &Mat3x4, p: [f32; 3]) -> [f32; 3] {
        let r = |i: usize| m.0[i][0] * p[0] + m.0[i][1] * p[1] + m.0[i][2] * p[2] + m.0[i][3];
        [r(0), r(1), r(2)]
    }

    #[test]
    fn compose_applies_in_order() {
        let m = Mat3x4::compose(&[Mat3x4::scale(2.0, 3.0, 4.0), Mat3x4::translation(1.0, 0.0, 0.0)]);
        assert_eq!(apply(&m, [1.0, 1.0, 1.0]), [3.0, 3.0, 4.0]);
    }

    #[test]
    fn rotation_y_turns_x_towards_minus_z() {
        let p = apply(&Mat3x4::rotation_y(90.0), [1.0, 0.0, 0.0]);
        assert!(p[0].abs() < 1e-6 && (p[2] + 1.0).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn translation_is_the_last_column() {
        let m = Mat3x4::translation(5.0, 6.0, 7.0).to_row_major();
        assert_eq!((m[3], m[7], m[11]), (5.0, 6.0, 7.0));
    }
}
