//! Bad input must give a clear log line and a Vulkan error, and the process must survive:
//!
//! 1. garbage SPIR-V (random words, a truncated module, a wrong magic number) is refused at
//!    pipeline creation with an error code;
//! 2. a shader writing far outside its buffer makes the submission report
//!    `VK_ERROR_DEVICE_LOST`;
//! 3. a shader that never ends is stopped by the watchdog, also `VK_ERROR_DEVICE_LOST`
//!    (run with a short `VORTEX_WATCHDOG_MS`).
//!
//! These are checks of the Vortex ICD's fault containment. lavapipe is not the oracle here:
//! it crashes on out-of-bounds device addresses and has no watchdog, so on any other
//! driver the program reports the checks as skipped.
//!
//! Usage: robustness [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::{Buffer, ComputePipeline, Context, Error, Icd};

const OOB: &[u8] = include_bytes!("../../shaders/oob_write.spv");
const RUNAWAY: &[u8] = include_bytes!("../../shaders/runaway.spv");

fn device_lost(r: &Result<(), Error>) -> bool {
    matches!(r, Err(Error::Vulkan { result: vk::Result::ERROR_DEVICE_LOST, .. }))
}

/// Garbage SPIR-V: each variant must fail pipeline creation, not crash.
fn garbage_spirv(ctx: &Context) -> Result<(), String> {
    let valid = OOB.to_vec();
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = Vec::new();
    for _ in 0..256 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        random.extend_from_slice(&(rng as u32).to_le_bytes());
    }
    let mut magic_ok_rest_random = valid[..20].to_vec();
    magic_ok_rest_random.extend_from_slice(&random[..400]);
    let mut bad_magic = valid.clone();
    bad_magic[0] ^= 0xFF;
    let cases: [(&str, Vec<u8>); 4] = [
        ("random words", random),
        ("truncated module", valid[..(valid.len() / 2) & !3].to_vec()),
        ("valid header, random body", magic_ok_rest_random),
        ("wrong magic number", bad_magic),
    ];
    for (name, bytes) in cases {
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        match ComputePipeline::from_words(ctx, &words, &[vk::DescriptorType::STORAGE_BUFFER], 4) {
            Ok(_) => return Err(format!("{name}: pipeline creation succeeded on garbage SPIR-V")),
            Err(e) => println!("  garbage SPIR-V ({name}): refused: {e}"),
        }
    }
    Ok(())
}

fn out_of_bounds(ctx: &Context) -> Result<(), String> {
    let buf = Buffer::new(ctx, 256, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(|e| e.to_string())?;
    let pipe = ComputePipeline::new(ctx, OOB, &[vk::DescriptorType::STORAGE_BUFFER], 4).map_err(|e| e.to_string())?;
    pipe.bind_storage_buffer(0, &buf);
    let stride: u32 = 1 << 26;
    let r = ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &stride.to_le_bytes(), [1, 1, 1]));
    if !device_lost(&r) {
        return Err(format!("expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  out-of-bounds write: {}", r.unwrap_err());
    Ok(())
}

fn runaway(ctx: &Context) -> Result<(), String> {
    let buf = Buffer::new(ctx, 64, vk::BufferUsageFlags::STORAGE_BUFFER).map_err(|e| e.to_string())?;
    let pipe =
        ComputePipeline::new(ctx, RUNAWAY, &[vk::DescriptorType::STORAGE_BUFFER], 0).map_err(|e| e.to_string())?;
    pipe.bind_storage_buffer(0, &buf);
    let t = std::time::Instant::now();
    let r = ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &[], [1, 1, 1]));
    if !device_lost(&r) {
        return Err(format!("expected VK_ERROR_DEVICE_LOST, got {r:?}"));
    }
    println!("  runaway kernel: {} after {:.1} s", r.unwrap_err(), t.elapsed().as_secs_f64());
    Ok(())
}

fn main() {
    let icd = match Icd::from_args(std::env::args().skip(1)) {
        Ok(Some(i)) => i,
        Ok(None) => {
            println!("usage: robustness [--icd vortex|lavapipe|PATH_TO_ICD_JSON]");
            return;
        }
        Err(e) => {
            eprintln!("robustness: {e}");
            std::process::exit(2);
        }
    };
    type Check = fn(&Context) -> Result<(), String>;
    let checks: [(&str, Check); 3] =
        [("garbage SPIR-V", garbage_spirv), ("out-of-bounds write", out_of_bounds), ("runaway kernel", runaway)];
    let mut failed = 0;
    for (name, check) in checks {
        // A fresh device per check: the last two leave theirs lost on purpose.
        let ctx = match Context::new(&icd) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("robustness: {e}");
                std::process::exit(2);
            }
        };
        if !ctx.info().name.contains("Vortex") {
            println!(
                "skipped: the robustness checks target the Vortex ICD ({} has no fault containment to test)",
                ctx.info().name
            );
            return;
        }
        match check(&ctx) {
            Ok(()) => println!("PASS {name}"),
            Err(e) => {
                println!("FAIL {name}: {e}");
                failed += 1;
            }
        }
    }
    println!("{}/3 robustness checks passed", 3 - failed);
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
