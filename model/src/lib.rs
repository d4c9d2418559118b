//! The modelled Vortex GPU.
//!
//! The host reaches the device only through DCR writes, a start pulse, DMA and mapped memory
//! (see `vortex-runtime`). Inside, the units mirror the hardware: the KMU walks the grid, the
//! per-core CTA dispatcher admits CTAs into warp slots, SIMT cores execute VX kernels, and the
//! RTU serves TRACE / WAIT / CONTINUE against CW-BVHs resident in device memory.
//!
//! [`abi`] is the single source of truth for everything host and device share.

// Per-lane loops index several parallel lane arrays at once; iterator chains would obscure
// the lane index the hardware is built around.
#![allow(clippy::needless_range_loop)]
// Instruction handlers take an instruction's operand fields as arguments.
#![allow(clippy::too_many_arguments)]

pub mod abi;
pub mod cache;
pub mod cluster;
pub mod config;
pub mod core;
pub mod cta_dispatch;
pub mod dcr;
pub mod device;
pub mod fault;
pub mod gfx;
pub mod isect;
pub mod jit;
pub mod kmu;
pub mod mem;
pub mod rtu;
pub mod stats;
pub mod tex;
pub mod tlb;
pub mod watchdog;
