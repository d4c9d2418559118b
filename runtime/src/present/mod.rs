//! The presentation engine: surfaces (`VK_KHR_surface` and its X11 and headless platforms),
//! swapchains (`VK_KHR_swapchain`) and presenting.
//!
//! A swapchain's images are ordinary images with memory of their own, so anything that
//! writes an image (transfers, clears, shaders, draws) renders into them. Acquiring hands out
//! a free image at once or waits for the engine to give one back. Presenting is a queue
//! operation: `vkQueuePresentKHR` submits a `PRESENT` stream operation with the present's
//! semaphore waits, so the command processor reaches it after every earlier submission and
//! the frame holds the rendered bits. Each swapchain's engine thread then shows the frame by
//! present mode (`engine`) on the X11 window (`x11`) or nowhere (headless), writes it to
//! `VORTEX_PRESENT_DUMP` (`dump`), and gives the image back.

pub mod convert;
mod dump;
mod engine;
pub mod surface;
pub mod swapchain;
mod x11;

pub use engine::REFRESH;
pub use surface::{Platform, Surface};
pub use swapchain::{submission, Acquired, PresentRequest, Swapchain, SwapchainInfo};
