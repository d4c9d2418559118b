//! The dispatch watchdog as an application sees it: it must tell a hang from long work.
//!
//! - `watchdog hang`: a shader spinning in one invocation (`while (data[0] != magic) {}`,
//!   the host never writes the value) must end in `VK_ERROR_DEVICE_LOST`, and the process
//!   must go on. Vortex only: lavapipe has no watchdog and would spin forever, so on any
//!   other driver the case is reported as skipped.
//! - `watchdog long [--seconds S]`: one dispatch of bounded work per workgroup, sized from
//!   short probe dispatches to run at least S seconds (default 6) on the driver in use, must
//!   finish with every result right. Runs on any driver.
//!
//! Usage: watchdog hang|long [--seconds S] [--icd vortex|lavapipe|PATH]
//! (exit 0: passed or skipped, 1: failed, 2: could not run)

use ash::vk;
use std::time::Instant;
use vortex_examples::{checks, Buffer, ComputePipeline, Context, Error, Icd};

const RUNAWAY: &[u8] = include_bytes!("../../shaders/runaway.spv");
const LONG_WORK: &[u8] = include_bytes!("../../shaders/long_work.spv");

/// `long_work.comp`'s invocations per workgroup and LCG rounds per invocation (few enough
/// that a workgroup retires within milliseconds even in timed mode).
const LOCAL: u32 = 64;
const ROUNDS: u32 = 1000;
/// The largest grid the probes may size (Vulkan guarantees 65535 workgroups in x).
const MAX_GROUPS: u32 = 65_535;

fn usage() -> ! {
    println!("usage: watchdog hang|long [--seconds S] [--icd vortex|lavapipe|PATH]");
    std::process::exit(0);
}

fn fail(e: impl std::fmt::Display) -> ! {
    println!("FAIL: {e}");
    std::process::exit(1);
}

fn hang(ctx: &Context) {
    if !ctx.info().name.contains("Vortex") {
        println!("skipped: {} has no watchdog to test (a spinning shader would never end)", ctx.info().name);
        return;
    }
    let run = || -> Result<Result<(), Error>, Error> {
        let buf = Buffer::new(ctx, 64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let pipe = ComputePipeline::new(ctx, RUNAWAY, &[vk::DescriptorType::STORAGE_BUFFER], 0)?;
        pipe.bind_storage_buffer(0, &buf);
        Ok(ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &[], [1, 1, 1])))
    };
    let t = Instant::now();
    match run() {
        Ok(Err(Error::Vulkan { result: vk::Result::ERROR_DEVICE_LOST, .. })) => {
            println!("PASS hang: VK_ERROR_DEVICE_LOST after {:.1} s", t.elapsed().as_secs_f64())
        }
        Ok(r) => fail(format!("hang: expected VK_ERROR_DEVICE_LOST, got {r:?}")),
        Err(e) => fail(format!("hang: could not set up: {e}")),
    }
}

/// `rounds` steps of `long_work.comp`'s LCG from every start, as one affine map
/// `x -> a x + c` (mod 2^32) composed by squaring.
fn lcg_power(rounds: u32) -> (u32, u32) {
    let (mut a, mut c) = (1u32, 0u32);
    let (mut sa, mut sc) = (1_664_525u32, 1_013_904_223u32);
    let mut n = rounds;
    while n != 0 {
        if n & 1 != 0 {
            (a, c) = (sa.wrapping_mul(a), sa.wrapping_mul(c).wrapping_add(sc));
        }
        (sa, sc) = (sa.wrapping_mul(sa), sa.wrapping_mul(sc).wrapping_add(sc));
        n >>= 1;
    }
    (a, c)
}

/// One dispatch of `groups` workgroups; its wall time.
fn dispatch(ctx: &Context, pipe: &ComputePipeline, groups: u32) -> Result<(f64, Buffer), Error> {
    let buf = Buffer::new(ctx, 4 * (groups * LOCAL) as u64, vk::BufferUsageFlags::STORAGE_BUFFER)?;
    pipe.bind_storage_buffer(0, &buf);
    let t = Instant::now();
    ctx.submit_once(|cmd| pipe.record_dispatch(cmd, &ROUNDS.to_le_bytes(), [groups, 1, 1]))?;
    Ok((t.elapsed().as_secs_f64(), buf))
}

fn long(ctx: &Context, seconds: f64) -> Result<String, String> {
    let err = |e: Error| e.to_string();
    let pipe = ComputePipeline::new(ctx, LONG_WORK, &[vk::DescriptorType::STORAGE_BUFFER], 4).map_err(err)?;
    // Probes, doubling until one takes a quarter of a second, give the driver's rate.
    let mut probe = 8;
    let rate = loop {
        let (t, _) = dispatch(ctx, &pipe, probe).map_err(err)?;
        if t >= 0.25 || probe >= MAX_GROUPS / 2 {
            break probe as f64 / t.max(1e-6);
        }
        probe *= 2;
    };
    let groups = ((rate * seconds).ceil() as u32).clamp(probe, MAX_GROUPS);
    let (t, buf) = dispatch(ctx, &pipe, groups).map_err(err)?;
    let (a, c) = lcg_power(ROUNDS);
    let got: Vec<u32> = buf.read();
    if let Some(i) = (0..groups * LOCAL).find(|&i| got[i as usize] != a.wrapping_mul(i).wrapping_add(c)) {
        return Err(format!("invocation {i}: {} instead of {}", got[i as usize], a.wrapping_mul(i).wrapping_add(c)));
    }
    Ok(format!(
        "{groups} workgroups x {LOCAL} invocations x {ROUNDS} rounds in one dispatch of {t:.1} s, every result right"
    ))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut case = None;
    let mut seconds = 6.0;
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "hang" | "long" if case.is_none() => case = Some(a),
            "--seconds" => match args.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(s) if s > 0.0 => seconds = s,
                _ => {
                    eprintln!("watchdog: --seconds needs a positive number");
                    std::process::exit(2);
                }
            },
            "-h" | "--help" => usage(),
            _ => rest.push(a),
        }
    }
    let icd = match Icd::from_args(rest.into_iter()) {
        Ok(Some(icd)) => icd,
        Ok(None) => usage(),
        Err(e) => {
            eprintln!("watchdog: {e}");
            std::process::exit(2);
        }
    };
    let ctx = checks::context_or_exit("watchdog", &icd);
    match case.as_deref() {
        Some("hang") => hang(&ctx),
        Some("long") => match long(&ctx, seconds) {
            Ok(note) => println!("PASS long: {note}"),
            Err(e) => fail(format!("long: {e}")),
        },
        _ => {
            eprintln!("watchdog: say which case, hang or long");
            std::process::exit(2);
        }
    }
}
