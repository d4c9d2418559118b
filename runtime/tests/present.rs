//! The presentation engine on headless surfaces: who holds each image, acquire's answers,
//! presents played by the queue, FIFO pacing, retirement.

use std::sync::Arc;
use std::time::{Duration, Instant};
use vortex_runtime::device::{Device, Gpu};
use vortex_runtime::present::{self, Acquired, Surface, Swapchain, SwapchainInfo, REFRESH};
use vortex_runtime::vk;

fn device() -> Arc<Device> {
    Device::new(&Gpu::from_env().unwrap()).unwrap()
}

fn info(mode: vk::PresentModeKHR, images: u32) -> SwapchainInfo {
    SwapchainInfo {
        format: vk::Format::B8G8R8A8_UNORM,
        extent: [16, 8],
        usage: vk::ImageUsageFlags::TRANSFER_DST,
        image_count: images,
        mode,
    }
}

fn acquire(sc: &Swapchain, timeout_ns: u64) -> u32 {
    match sc.acquire(timeout_ns).unwrap() {
        Acquired::Image { index, suboptimal: false } => index,
        other => panic!("no image: {other:?}"),
    }
}

/// Presents image `index` through the queue, as `vkQueuePresentKHR` does.
fn present(device: &Device, sc: &Arc<Swapchain>, index: u32) {
    sc.check_presentable(index).unwrap();
    let (req, result) = sc.present(index);
    assert_eq!(result, vk::Result::SUCCESS);
    device.queue.submit(present::submission(vec![], vec![req])).unwrap();
}

#[test]
fn acquire_answers_by_timeout_when_every_image_is_held() {
    let d = device();
    let sc = Swapchain::new(&d, Arc::new(Surface::headless()), info(vk::PresentModeKHR::FIFO, 2), None).unwrap();
    let (a, b) = (acquire(&sc, 0), acquire(&sc, 0));
    assert_ne!(a, b);
    assert_eq!(sc.acquire(0).unwrap(), Acquired::NotReady);
    let t = Instant::now();
    assert_eq!(sc.acquire(20_000_000).unwrap(), Acquired::Timeout);
    assert!(t.elapsed() >= Duration::from_millis(20), "returned before its timeout");
    // Nothing is being presented: waiting forever would never end.
    assert_eq!(sc.acquire(u64::MAX).unwrap(), Acquired::Timeout);
    // Presenting gives an image back once the engine has shown it; a waiting acquire gets it.
    present(&d, &sc, a);
    assert_eq!(acquire(&sc, 5_000_000_000), a);
    assert!(sc.check_presentable(b).is_ok() && sc.check_presentable(a).is_ok());
    sc.destroy();
}

#[test]
fn a_present_the_queue_never_plays_gives_its_image_back() {
    let d = device();
    let sc = Swapchain::new(&d, Arc::new(Surface::headless()), info(vk::PresentModeKHR::FIFO, 2), None).unwrap();
    let (a, _) = (acquire(&sc, 0), acquire(&sc, 0));
    let (req, _) = sc.present(a);
    assert!(sc.check_presentable(a).is_err(), "a presented image is not the application's");
    drop(req);
    assert_eq!(acquire(&sc, 0), a);
}

#[test]
fn fifo_shows_one_frame_a_refresh() {
    let d = device();
    let sc = Swapchain::new(&d, Arc::new(Surface::headless()), info(vk::PresentModeKHR::FIFO, 3), None).unwrap();
    let t = Instant::now();
    for _ in 0..12 {
        let i = acquire(&sc, 5_000_000_000);
        present(&d, &sc, i);
    }
    // Frame n is shown at least n - 1 refreshes after the first; with 3 images the 12th
    // acquire waits for frame 9 to have been shown.
    let least = REFRESH * 8;
    assert!(t.elapsed() >= least, "12 FIFO frames in {:?}, less than {least:?}", t.elapsed());
    sc.destroy();
}

#[test]
fn a_retired_swapchain_hands_out_nothing_and_frees_its_surface() {
    let d = device();
    let surface = Arc::new(Surface::headless());
    let old = Swapchain::new(&d, surface.clone(), info(vk::PresentModeKHR::MAILBOX, 2), None).unwrap();
    let held = acquire(&old, 0);
    let second = Swapchain::new(&d, surface.clone(), info(vk::PresentModeKHR::FIFO, 2), None);
    assert_eq!(second.err(), Some(vk::Result::ERROR_NATIVE_WINDOW_IN_USE_KHR));
    let new = Swapchain::new(&d, surface.clone(), info(vk::PresentModeKHR::IMMEDIATE, 2), Some(&old)).unwrap();
    assert_eq!(old.acquire(0).err(), Some(vk::Result::ERROR_OUT_OF_DATE_KHR));
    // What the application held can still be presented.
    present(&d, &old, held);
    acquire(&new, 0);
    old.destroy();
    new.destroy();
    // Destroyed, the surface takes a new swapchain.
    Swapchain::new(&d, surface, info(vk::PresentModeKHR::FIFO, 2), None).unwrap().destroy();
}
