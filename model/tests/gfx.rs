//! The graphics units end to end: hand-assembled vertex and fragment kernels, draws through
//! the graphics DCRs and `GFX_START`, results checked against hand-solved expectations and
//! small CPU references written independently of the units.

#[path = "common/gfx.rs"]
mod kit;

use kit::*;
use vortex_model::abi::format;
use vortex_model::abi::gfx::{csr as gcsr, deriv, index_type, state as st};
use vortex_model::abi::isa::{Op, REG_NONE as N};
use vortex_model::config::{DeviceConfig, Mode};

fn gfx() -> Gfx {
    Gfx::new(DeviceConfig::default())
}

/// Per-pixel counters of a `w` x `h` target after `draw` with the counting fragment kernel.
fn counts(g: &mut Gfx, state: &State, vertices: &[Vertex], setup: impl FnOnce(&mut Draw)) -> Vec<u32> {
    let w = u32::from_le_bytes(state.0[st::TARGET_WIDTH..][..4].try_into().unwrap());
    let h = u32::from_le_bytes(state.0[st::TARGET_HEIGHT..][..4].try_into().unwrap());
    let counters = g.alloc(&vec![0u8; (4 * w * h) as usize]);
    let vs = vertex_kernel();
    let fs: Vec<_> = [fs::prologue(), fs::count(), vec![fs::push_color(), fs::export_color(0, 40), exit()]].concat();
    let mut d = Draw::new(&vs, Some(&fs), state, vertices);
    d.push = push_counters(counters, w);
    setup(&mut d);
    let rep = g.draw(&d).unwrap();
    assert!(rep.draw.is_some());
    g.read_u32s(counters, (w * h) as usize)
}

/// A fan around the viewport's centre whose rim lies on and beyond the viewport's edges
/// covers every pixel exactly once: shared edges (top-left rule) and the scissor.
#[test]
fn fan_covers_every_pixel_once() {
    let (w, h) = (40, 24);
    let mut state = State::new(w, h);
    state.u(st::TOPOLOGY, 5);
    let c = Vertex::screen(17.3, 11.6, 0.5, w, h);
    let rim =
        [(-3.0, -2.0), (20.0, -5.0), (45.0, -1.0), (44.0, 12.0), (41.0, 30.0), (12.5, 26.0), (-4.0, 27.0), (-2.0, 9.0)];
    let mut v = vec![c];
    v.extend(rim.iter().map(|&(x, y)| Vertex::screen(x, y, 0.5, w, h)));
    v.push(v[1]);
    let mut g = gfx();
    let n = counts(&mut g, &state, &v, |_| {});
    assert!(n.iter().all(|&c| c == 1), "{:?}", n.iter().enumerate().filter(|(_, &c)| c != 1).collect::<Vec<_>>());
}
