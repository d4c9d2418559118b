//! An internal error of the driver — a panic inside an entry point, injected through Vortex
//! RT's debug hook `vkDebugInjectPanicVORTEX` (looked up by name with `vkGetDeviceProcAddr`,
//! through the loader) — must lose that device and nothing else: the call returns
//! `VK_ERROR_DEVICE_LOST`, later submissions and waits on that device report it too, another
//! device of the same process keeps working, and the process survives.
//!
//! Drivers without the hook (lavapipe) report the checks as skipped.
//! Usage: internal_error [--icd vortex|lavapipe|PATH]   (exit 0: all passed, 1: a check failed)

use ash::vk;
use vortex_examples::{checks, Buffer, Context, Error};

fn lost(r: Result<(), Error>) -> Result<(), String> {
    match r {
        Err(Error::Vulkan { result: vk::Result::ERROR_DEVICE_LOST, .. }) => Ok(()),
        other => Err(format!("expected VK_ERROR_DEVICE_LOST, got {other:?}")),
    }
}

/// Fills a buffer on `ctx` and reads it back.
fn still_works(ctx: &Context) -> Result<(), String> {
    let buf = Buffer::new(ctx, 64, vk::BufferUsageFlags::TRANSFER_DST).map_err(|e| e.to_string())?;
    // SAFETY: the command buffer is recording; the buffer belongs to this device.
    ctx.submit_once(|cmd| unsafe { ctx.device().cmd_fill_buffer(cmd, buf.handle(), 0, 64, 0x600d_600d) })
        .map_err(|e| e.to_string())?;
    match buf.read::<u32>().iter().all(|&w| w == 0x600d_600d) {
        true => Ok(()),
        false => Err("the fill did not land".into()),
    }
}

fn main() {
    let icd = checks::icd_from_args("internal_error");
    let victim = checks::context_or_exit("internal_error", &icd);
    let bystander = checks::context_or_exit("internal_error", &icd);
    let dev = victim.device().handle();
    // SAFETY: a live device; the name is a C string.
    let hook = unsafe { victim.instance().get_device_proc_addr(dev, c"vkDebugInjectPanicVORTEX".as_ptr()) };
    let Some(hook) = hook else {
        println!("skipped: {} has no vkDebugInjectPanicVORTEX", victim.info().name);
        return;
    };
    // SAFETY: the hook has the signature of vkDeviceWaitIdle (see the ICD's `entry::debug`).
    let hook: vk::PFN_vkDeviceWaitIdle = unsafe { std::mem::transmute(hook) };
    type Check<'a> = (&'a str, Box<dyn Fn() -> Result<(), String> + 'a>);
    let checks: [Check; 4] = [
        (
            "the panicking call returns VK_ERROR_DEVICE_LOST",
            // SAFETY: a live device.
            Box::new(|| lost(unsafe { hook(dev) }.result().map_err(|result| Error::Vulkan { call: "hook", result }))),
        ),
        ("a later submission reports VK_ERROR_DEVICE_LOST", Box::new(|| lost(victim.submit_once(|_| ())))),
        (
            "vkDeviceWaitIdle reports VK_ERROR_DEVICE_LOST",
            // SAFETY: a live device.
            Box::new(|| {
                lost(
                    unsafe { victim.device().device_wait_idle() }
                        .map_err(|result| Error::Vulkan { call: "vkDeviceWaitIdle", result }),
                )
            }),
        ),
        ("another device keeps working", Box::new(|| still_works(&bystander))),
    ];
    let mut failed = 0;
    for (name, check) in &checks {
        match check() {
            Ok(()) => println!("PASS {name}"),
            Err(e) => {
                println!("FAIL {name}: {e}");
                failed += 1;
            }
        }
    }
    println!("{}/{} internal-error checks passed", checks.len() - failed, checks.len());
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
