//! Null descriptors (robustness2's `nullDescriptor`) through the loader, on any driver that
//! offers it: a dispatch stores to and adds atomically to a storage buffer bound to nothing
//! and stores to a storage image bound to nothing; the next loads from them. Every load
//! reads zero (the stores and the atomic were dropped) and the buffer's length is zero.
//! (A null acceleration structure, whose queries miss, is the CTS's `advanced.null_as`.)
//!
//! Usage: null_descriptor [--icd vortex|lavapipe|PATH]   (exit 0: passed, 1: failed, 2: could
//! not run)

use ash::vk;
use vortex_examples::{checks, Buffer, ComputePipeline, Context, Descriptor};

const SHADER: &[u8] = include_bytes!("../../shaders/null_descriptor.spv");

fn null_buffer_and_image(ctx: &Context) -> Result<String, String> {
    let e = |err: vortex_examples::Error| err.to_string();
    let results = Buffer::new(ctx, 32, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(e)?;
    results.write(&[0xDEAD_BEEFu32; 8]);
    let ty =
        [vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::STORAGE_BUFFER, vk::DescriptorType::STORAGE_IMAGE];
    let pipe = ComputePipeline::new(ctx, SHADER, &ty, 4).map_err(e)?;
    pipe.bind_storage_buffer(0, &results);
    let nothing = Descriptor::Buffer { buffer: vk::Buffer::null(), offset: 0, range: vk::WHOLE_SIZE };
    pipe.write(0, 1, 0, &nothing).map_err(e)?;
    pipe.write(0, 2, 0, &Descriptor::Image(vk::ImageView::null())).map_err(e)?;
    for mode in [0u32, 1] {
        ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &mode.to_le_bytes(), [1, 1, 1])).map_err(e)?;
    }
    let r = results.read::<u32>();
    let want = [0, 0, 0, 0, 0, 0xC0FFEE, 0xC0FFEE];
    if r[..7] != want {
        return Err(format!(
            "results {:x?}, expected {want:x?} (stored word, a far word, length, after the atomic, image, ran twice)",
            &r[..7]
        ));
    }
    Ok("loads read zero, stores and atomics dropped, length 0".into())
}

fn main() {
    let icd = checks::icd_from_args("null_descriptor");
    let ctx = Context::with_optional_features(&icd).unwrap_or_else(|err| {
        eprintln!("null_descriptor: {err}");
        std::process::exit(2);
    });
    println!("device: {}", ctx.info().name);
    if !ctx.info().enabled.contains(&"nullDescriptor") {
        eprintln!("null_descriptor: the device does not offer robustness2's nullDescriptor");
        std::process::exit(2);
    }
    let list: &[checks::Check<String>] = &[("a null storage buffer and a null storage image", &null_buffer_and_image)];
    checks::run_checks_and_exit(&ctx, "null-descriptor", list, || 0);
}
