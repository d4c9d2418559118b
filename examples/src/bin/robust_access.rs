//! Robust buffer and image access through the loader, on any driver: a device created with
//! `robustBufferAccess` (and `robustImageAccess` when it offers `VK_EXT_image_robustness`)
//! runs a shader that reads and writes past a storage buffer descriptor's range, past a
//! dynamic storage buffer's range, past the end of a dynamic uniform buffer whose range
//! ends with the buffer,
//! far past every allocation, and outside a storage image (coordinates, array layer) and a
//! storage texel buffer. Nothing is lost, nothing outside the buffers changes, and every
//! out-of-bounds read gives a value the specification allows ("Robust Buffer Access": zero,
//! or a value from inside the buffer; images: zero). On Vortex, which discards every such
//! write and reads zero, the check is exact; and a device without the feature still loses
//! itself on the far write (an out-of-bounds access is a device fault there).
//!
//! Usage: robust_access [--icd vortex|lavapipe|PATH]   (exit 0: passed, 1: failed, 2: could
//! not run)

use ash::vk;
use vortex_examples::image::{Image, ImageSpec};
use vortex_examples::{checks, Buffer, ComputePipeline, Context, Descriptor, Error, Icd};

const SHADER: &[u8] = include_bytes!("../../shaders/robust_access.spv");

/// An index whose word lies a gigabyte past the buffer: outside every allocation.
const FAR: u32 = 0x1000_0000;
/// The data buffer's words are `DATA + k`; the guard buffer's are all `GUARD`.
const DATA: u32 = 1000;
const GUARD: u32 = 0xAAAA_AAAA;
const TEXELS: u32 = 2000;
const IMAGE_TEXELS: usize = 4 * 4 * 2;

fn texel(x: u32, y: u32, layer: u32) -> u32 {
    100 + layer * 16 + y * 4 + x
}

struct Objects {
    data: Buffer,
    guard: Buffer,
    texels: Buffer,
    results: Buffer,
    image: Image,
    image_copy: Buffer,
    view: vk::BufferView,
    pipe: ComputePipeline,
    device: ash::Device,
}

fn objects(ctx: &Context) -> Result<Objects, Error> {
    let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let data_words: Vec<u32> = (0..256).map(|k| DATA + k).collect();
    let data = Buffer::with_data(ctx, &data_words, storage | vk::BufferUsageFlags::UNIFORM_BUFFER)?;
    let guard = Buffer::with_data(ctx, &[GUARD; 64], storage)?;
    let texel_words: Vec<u32> = (0..16).map(|k| TEXELS + k).collect();
    let texels = Buffer::with_data(ctx, &texel_words, vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER)?;
    let results = Buffer::with_data(ctx, &[0u32; 16], storage)?;
    let spec = ImageSpec {
        view_type: vk::ImageViewType::TYPE_2D_ARRAY,
        format: vk::Format::R32_UINT,
        extent: [4, 4, 1],
        layers: 2,
        mip_levels: 1,
        usage: vk::ImageUsageFlags::STORAGE,
    };
    let image = Image::new(ctx, spec)?;
    let pixels: Vec<u32> = (0..IMAGE_TEXELS as u32).map(|i| texel(i % 4, (i / 4) % 4, i / 16)).collect();
    let transfer = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
    let image_copy = Buffer::with_data(ctx, &pixels, transfer)?;
    ctx.submit_once(|cmd| image.record_upload(cmd, &image_copy))?;
    let info =
        vk::BufferViewCreateInfo::default().buffer(texels.handle()).format(vk::Format::R32_UINT).offset(0).range(16);
    // SAFETY: valid device, buffer and create info; destroyed by `Objects::drop`.
    let view = unsafe { ctx.device().create_buffer_view(&info, None) }
        .map_err(|result| Error::Vulkan { call: "vkCreateBufferView", result })?;
    let ty = [
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER,
        vk::DescriptorType::STORAGE_BUFFER_DYNAMIC,
        vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC,
        vk::DescriptorType::STORAGE_IMAGE,
        vk::DescriptorType::STORAGE_TEXEL_BUFFER,
    ];
    let pipe = ComputePipeline::new(ctx, SHADER, &ty, 8)?;
    pipe.bind_storage_buffer(0, &results);
    let range = |offset, range| Descriptor::Buffer { buffer: data.handle(), offset, range };
    // `small`: words 64..68; `dyn`: 16 bytes at the dynamic offset; `whole`: the rest of
    // the buffer from its dynamic offset (the last 256 of 1024 bytes; not VK_WHOLE_SIZE, which a
    // dynamic offset other than 0 may not be used with: VUID-vkCmdBindDescriptorSets-06715).
    pipe.write(0, 1, 0, &range(256, 16))?;
    pipe.write(0, 2, 0, &range(0, 16))?;
    pipe.write(0, 3, 0, &range(0, 256))?;
    pipe.write(0, 4, 0, &Descriptor::Image(image.view))?;
    pipe.write(0, 5, 0, &Descriptor::TexelBuffer(view))?;
    let device = ctx.device().clone();
    Ok(Objects { data, guard, texels, results, image, image_copy, view, pipe, device })
}

impl Objects {
    /// Mode 0 (writes) then mode 1 (reads), each its own submission.
    fn run(&self, ctx: &Context) -> Result<(), Error> {
        // `dyn` at word 128, `whole` at word 192 (so `whole.u[16]` is the buffer's end).
        let dynamic = [512u32, 768];
        for mode in [0u32, 1] {
            let push = [mode.to_le_bytes(), FAR.to_le_bytes()].concat();
            ctx.submit_once(|cmd| self.pipe.record_dispatch_base(cmd, &push, [0; 3], [1, 1, 1], &dynamic))?;
        }
        ctx.submit_once(|cmd| self.image.record_download(cmd, &self.image_copy))
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        // SAFETY: no submission is pending (submit_once waits).
        unsafe { self.device.destroy_buffer_view(self.view, None) };
    }
}

/// Whether `v` is a value an out-of-bounds read of the data buffer may give: zero, or a
/// word the buffer holds (its own, or one the shader wrote, possibly out of bounds).
fn allowed(v: u32) -> bool {
    v == 0 || (5..=7).contains(&v) || (DATA..DATA + 257).contains(&v)
}

fn robust(ctx: &Context, exact: bool) -> Result<String, String> {
    let e = |err: Error| err.to_string();
    let o = objects(ctx).map_err(e)?;
    o.run(ctx).map_err(e)?;
    let r = o.results.read::<u32>();
    if r[14] != 0xC0FFEE || r[15] != 0xC0FFEE {
        return Err(format!("the dispatches did not run to their end: {r:x?}"));
    }
    // In bounds: what was written and what the buffers hold.
    let want_in = [(5, DATA + 192), (9, 4), (10, 5), (11, 6), (12, texel(1, 1, 1)), (13, TEXELS + 3)];
    for (k, want) in want_in {
        if r[k] != want {
            return Err(format!("in-bounds result {k} is {}, expected {want} (results {r:?})", r[k]));
        }
    }
    // Out of bounds: images read zero; buffers zero or a value from inside the buffer.
    for k in [6, 7, 8] {
        if r[k] != 0 {
            return Err(format!("out-of-view image read {k} gave {}, expected 0", r[k]));
        }
    }
    for k in 0..5 {
        if (exact && r[k] != 0) || !allowed(r[k]) {
            return Err(format!("out-of-bounds buffer read {k} gave {} (results {r:?})", r[k]));
        }
    }
    if o.guard.read::<u32>().iter().any(|&w| w != GUARD) {
        return Err("a buffer the shader never bound was written".into());
    }
    let image: Vec<u32> = o.image_copy.read();
    if (0..IMAGE_TEXELS as u32).any(|i| image[i as usize] != texel(i % 4, (i / 4) % 4, i / 16)) {
        return Err(format!("an out-of-view image store changed the image: {image:?}"));
    }
    if exact {
        // Every out-of-bounds write and atomic was dropped: only the two in-bounds words
        // changed.
        let data: Vec<u32> = o.data.read();
        let changed: Vec<usize> = (0..256).filter(|&k| data[k] != DATA + k as u32).collect();
        if changed != [67, 128] || data[67] != 5 || data[128] != 6 {
            return Err(format!("data words changed: {changed:?} (expected only 67 = 5 and 128 = 6)"));
        }
        let texels: Vec<u32> = o.texels.read();
        if (0..16).any(|k| texels[k] != TEXELS + k as u32) {
            return Err(format!("an out-of-view texel store changed the texel buffer: {texels:?}"));
        }
    }
    Ok(format!("out-of-bounds reads {:?}, writes dropped", &r[..5]))
}

/// Without robustBufferAccess, the same shader's far write is a device fault (Vortex only:
/// elsewhere it is undefined behaviour).
fn faults_without_robustness(icd: &Icd) -> Result<String, String> {
    let ctx = Context::new(icd).map_err(|e| e.to_string())?;
    let o = objects(&ctx).map_err(|e| e.to_string())?;
    match o.run(&ctx) {
        Err(Error::Vulkan { result: vk::Result::ERROR_DEVICE_LOST, .. }) => Ok("VK_ERROR_DEVICE_LOST".into()),
        other => Err(format!("expected VK_ERROR_DEVICE_LOST, got {other:?}")),
    }
}

fn report(name: &str, r: Result<String, String>) -> bool {
    match r {
        Ok(note) => {
            println!("PASS {name}: {note}");
            true
        }
        Err(err) => {
            println!("FAIL {name}: {err}");
            false
        }
    }
}

fn main() {
    let icd = checks::icd_from_args("robust_access");
    let vortex = matches!(icd, Icd::Vortex);
    let mut passed = 0;
    {
        let ctx = Context::with_robust_access(&icd).unwrap_or_else(|err| {
            eprintln!("robust_access: {err}");
            std::process::exit(2);
        });
        println!("device: {} (enabled: {:?})", ctx.info().name, ctx.info().enabled);
        passed += report("out-of-bounds buffer, image and texel accesses", robust(&ctx, vortex)) as usize;
    }
    let total = if vortex {
        let name = "without robustBufferAccess, a far write is a device fault";
        passed += report(name, faults_without_robustness(&icd)) as usize;
        2
    } else {
        1
    };
    println!("{passed}/{total} robust-access checks passed");
    std::process::exit(if passed == total { 0 } else { 1 });
}
