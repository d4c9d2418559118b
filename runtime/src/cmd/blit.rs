//! `vkCmdBlitImage`: checked at record time, run by the command processor as a job
//! (`crate::blit`), which reads and writes the images when the stream reaches it.

use super::CommandBuffer;
use crate::blit::{BlitJob, BlitRegion};
use crate::image::Image;
use crate::stream::StreamOp;
use crate::vk;
use std::sync::Arc;

impl CommandBuffer {
    pub fn blit_image(&self, src: &Arc<Image>, dst: &Arc<Image>, regions: Vec<BlitRegion>, linear: bool) {
        self.record("vkCmdBlitImage", |i, _| {
            let (sf, df) = (src.format, dst.format);
            let ds = |f: &vortex_model::abi::format::Format| f.depth().is_some() || f.has_stencil();
            if sf.is_integer() != df.is_integer() || (linear && sf.is_integer()) || ds(sf) || ds(df) {
                tracing::error!(
                    "vkCmdBlitImage: {} to {} with a {} filter",
                    sf.name,
                    df.name,
                    if linear { "linear" } else { "nearest" }
                );
                return Err(vk::Result::ERROR_FORMAT_NOT_SUPPORTED);
            }
            for r in &regions {
                let fits = |img: &Image, level: u32, layer: u32, b: &[[i32; 3]; 2]| {
                    let e = img.level_extent(level);
                    level < img.mip_levels
                        && layer.checked_add(r.layers).is_some_and(|end| end <= img.array_layers)
                        && b.iter().all(|c| (0..3).all(|a| c[a] >= 0 && c[a] as u32 <= e[a]))
                };
                if !fits(src, r.src_level, r.src_layer, &r.src) || !fits(dst, r.dst_level, r.dst_layer, &r.dst) {
                    tracing::error!("vkCmdBlitImage: region {r:?} outside its images");
                    return Err(vk::Result::ERROR_UNKNOWN);
                }
            }
            src.address()?;
            dst.address()?;
            i.emit(StreamOp::Blit(Box::new(BlitJob { src: src.clone(), dst: dst.clone(), regions, linear })));
            Ok(())
        });
    }
}
