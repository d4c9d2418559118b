//! What many groups share: the image-output test shape of dEQP's ray_query tests (clear a
//! 3D storage image, build the structures into the same command buffer, dispatch one
//! workgroup per pixel, copy the image back) and the fixed-point conventions.

use crate::case::TestResult;
use crate::fw::{Binding, Buffer, ComputePipeline, Env, Image};
use ash::vk;

/// Floats are stored by the shaders as `int(value * 2^20)`.
pub const FIXED_POINT_DIVISOR: f32 = (1 << 20) as f32;
/// dEQP's tolerance for fixed-point floats: 1e-3, expressed in fixed point and back.
pub fn fixed_point_eps() -> f32 {
    ((1e-3f32 * FIXED_POINT_DIVISOR) as u32) as f32 / FIXED_POINT_DIVISOR
}

/// Structures recorded by a scene; kept alive until the submission finished.
pub type Keep = Vec<crate::fw::accel::Built>;

/// Runs the image-output shape: `code` reads the TLAS returned by `scene` at binding 1 and
/// writes a `format` image of `extent` at binding 0 (cleared to `clear` first); `extra`
/// buffers follow at bindings 2.. . Dispatches `extent.0 x extent.1` workgroups and returns
/// the image's texels as 32-bit words, x fastest, then y, then z.
pub fn image_dispatch(
    env: &Env,
    code: &[u32],
    format: vk::Format,
    extent: (u32, u32, u32),
    clear: u32,
    extra: &[(Binding, &Buffer)],
    scene: impl FnOnce(&Env, vk::CommandBuffer) -> TestResult<(vk::AccelerationStructureKHR, Keep)>,
) -> TestResult<Vec<u32>> {
    let (w, h, d) = extent;
    let image = Image::new_3d(env, format, w, h, d)?;
    let readback = Buffer::new(env, image.texels() * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
    let mut bindings = vec![Binding::STORAGE_IMAGE, Binding::AS];
    bindings.extend(extra.iter().map(|(b, _)| *b));
    let pipeline = ComputePipeline::new(env, code, &bindings, 0, &[])?;
    let cmd = env.begin()?;
    image.record_clear(cmd, clear);
    let (tlas, _keep) = scene(env, cmd)?;
    pipeline.write_image(0, image.view);
    pipeline.write_as(1, &[tlas]);
    for (i, (b, buf)) in extra.iter().enumerate() {
        pipeline.write_buffer(2 + i as u32, b.ty, buf);
    }
    pipeline.record_dispatch(cmd, w, h, 1);
    image.record_readback(cmd, &readback);
    env.submit_wait(cmd)?;
    Ok(readback.read::<u32>())
}

/// The first mismatches of `got` against `want` as a short report (at most 8 listed).
pub fn report_mismatches<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], width: usize) -> Option<String> {
    let bad: Vec<usize> = (0..want.len()).filter(|&i| got.get(i) != Some(&want[i])).collect();
    if bad.is_empty() {
        return None;
    }
    let list: Vec<String> = bad
        .iter()
        .take(8)
        .map(|&i| {
            format!(
                "({},{},{}): got {:?}, expected {:?}",
                i % width,
                (i / width) % width.max(1),
                i / (width * width.max(1)),
                got.get(i),
                want[i]
            )
        })
        .collect();
    Some(format!("{} of {} values differ: {}", bad.len(), want.len(), list.join("; ")))
}

/// Runs a compute shader over `bindings` (set 0, in order) with optional push constants,
/// dispatching `groups` after `record` has recorded whatever must come first (AS builds).
pub fn compute_dispatch(
    env: &Env,
    code: &[u32],
    bindings: &[Binding],
    push: &[u8],
    groups: (u32, u32, u32),
    spec: &[(u32, u32)],
    record: impl FnOnce(&Env, vk::CommandBuffer, &ComputePipeline) -> TestResult<Keep>,
) -> TestResult {
    let pipeline = ComputePipeline::new(env, code, bindings, push.len() as u32, spec)?;
    let cmd = env.begin()?;
    let _keep = record(env, cmd, &pipeline)?;
    if !push.is_empty() {
        pipeline.record_push(cmd, push);
    }
    pipeline.record_dispatch(cmd, groups.0, groups.1, groups.2);
    env.barrier(
        cmd,
        vk::PipelineStageFlags::COMPUTE_SHADER,
        vk::AccessFlags::SHADER_WRITE,
        vk::PipelineStageFlags::HOST,
        vk::AccessFlags::HOST_READ,
    );
    env.submit_wait(cmd)
}
