//! Vulkan entry points, one module per object family.
//!
//! Every `unsafe extern "system"` function here has the same safety contract: the caller
//! honours the Vulkan specification's valid usage for that command (live handles, valid
//! pointers and counts). Within that contract no input makes them panic or misbehave.

#![allow(clippy::missing_safety_doc)]

pub mod accel;
pub mod command;
pub mod copy2;
pub mod debug;
pub mod deferred;
pub mod descriptor;
pub mod device;
pub mod draw;
pub mod graphics;
pub mod instance;
pub mod maintenance4;
pub mod memory;
pub mod pipeline;
pub mod private_data;
pub mod query;
pub mod renderpass;
pub mod rtpipe;
pub mod sampler;
pub mod sparse;
pub mod sync;
pub mod sync2;
pub mod tooling;
pub mod transfer;
pub mod wsi;
