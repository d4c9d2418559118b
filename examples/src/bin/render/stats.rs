//! What the RT hardware did during the render, read back from `VORTEX_STATS`: a per-pixel
//! heatmap of traversal work per ray with a legend — on an rtu device the RT unit's records
//! fetched plus primitives tested, on an rdna2 device the intersection unit's nodes fetched
//! plus triangles tested (the same quantity for the other design), divided by the rays the
//! pixel traced — and in timed mode the RTU's traversal cores' activity over time.

use crate::gpu::{Rendered, BAND_ROWS};
use crate::Options;
use font8x8::UnicodeFonts;
use serde_json::Value;
use std::path::Path;

/// Rows under the image for the legend.
const LEGEND_ROWS: u32 = 40;

/// Reads the stats file the driver wrote and writes the heatmap (and the timeline when the
/// render ran in timed mode).
pub fn write(o: &Options, stats: &Path, r: &Rendered) -> Result<(), String> {
    let text = std::fs::read_to_string(stats).map_err(|e| {
        format!("VORTEX_STATS is set but {} cannot be read ({e}): only Vortex RT writes it", stats.display())
    })?;
    // JSON Lines: one object per dispatch, in the order they ran.
    let all = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| serde_json::from_str::<Value>(l).map_err(|e| format!("{} line {}: {e}", stats.display(), n + 1)))
        .collect::<Result<Vec<_>, _>>()?;
    let bands = r.bands as usize;
    if all.len() < bands {
        return Err(format!("{}: {} dispatches recorded, the render made {bands}", stats.display(), all.len()));
    }
    let dispatches = &all[all.len() - bands..];
    let per_ray = work_per_ray(o, stats, dispatches, &r.rays_per_pixel)?;
    let heatmap = o.out.with_extension("heat.png");
    let rdna2 = dispatches.iter().any(|d| d["rt_arch"] == "rdna2");
    let (title, what) = if rdna2 {
        ("ISECT work per ray", "nodes fetched + triangles tested")
    } else {
        ("RTU work per ray", "records fetched + primitives tested")
    };
    let (img_h, rgba, summary) = heatmap_image(o.width, o.height, &per_ray, title);
    crate::compare::write_png(&heatmap, o.width, img_h, &rgba)?;
    if !o.quiet {
        println!("{title} ({what}): {summary}");
        println!("wrote {}", heatmap.display());
    }
    if dispatches.iter().any(|d| d.get("rtu_timeline").is_some()) {
        let path = o.out.with_extension("timeline.svg");
        let (svg, line) = timeline_svg(dispatches)?;
        std::fs::write(&path, svg).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        if !o.quiet {
            println!("RTU activity over the render: {line}");
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// Gathers the bands' work maps into one work-per-ray value per pixel.
fn work_per_ray(o: &Options, stats: &Path, dispatches: &[Value], rays: &[u32]) -> Result<Vec<f32>, String> {
    let (w, h) = (o.width as usize, o.height as usize);
    let mut work = vec![0u32; w * h];
    for (band, d) in dispatches.iter().enumerate() {
        let Some(map) = d.get("work_map") else {
            continue; // No lane traced in this band.
        };
        let name = map["file"].as_str().ok_or("work_map without a file")?;
        let ext: Vec<usize> = map["extent"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_u64()).map(|v| v as usize).collect())
            .unwrap_or_default();
        let rows = (BAND_ROWS as usize).min(h - band * BAND_ROWS as usize);
        if ext.len() != 3 || ext[0] < w || ext[1] < rows {
            return Err(format!(
                "dispatch {band} of the render has a work map of extent {ext:?}, expected at least [{w}, {rows}, 1]"
            ));
        }
        let path = stats.with_file_name(name);
        let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if bytes.len() != ext.iter().product::<usize>() * 4 {
            return Err(format!(
                "{}: {} bytes, extent {ext:?} needs {}",
                path.display(),
                bytes.len(),
                ext[0] * ext[1] * 4
            ));
        }
        for y in 0..rows {
            for x in 0..w {
                let i = 4 * (x + ext[0] * y);
                work[x + w * (y + band * BAND_ROWS as usize)] = u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
            }
        }
    }
    Ok(work.iter().zip(rays).map(|(&k, &n)| if n == 0 { 0.0 } else { k as f32 / n as f32 }).collect())
}

/// A perceptually ordered ramp, dark (little work) to bright (much).
const RAMP: [(f32, [f32; 3]); 7] = [
    (0.0, [0.0, 0.0, 4.0]),
    (0.15, [40.0, 11.0, 84.0]),
    (0.35, [120.0, 28.0, 109.0]),
    (0.55, [200.0, 60.0, 80.0]),
    (0.75, [245.0, 125.0, 21.0]),
    (0.9, [250.0, 200.0, 50.0]),
    (1.0, [252.0, 255.0, 164.0]),
];

fn ramp(v: f32) -> [u8; 4] {
    let v = v.clamp(0.0, 1.0);
    let k = RAMP.iter().position(|&(p, _)| p >= v).unwrap_or(RAMP.len() - 1).max(1);
    let ((p0, c0), (p1, c1)) = (RAMP[k - 1], RAMP[k]);
    let f = (v - p0) / (p1 - p0);
    let c = |i: usize| (c0[i] + (c1[i] - c0[i]) * f).round() as u8;
    [c(0), c(1), c(2), 255]
}

/// A round number at or above `v` (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten).
fn nice_ceil(v: f32) -> f32 {
    if v <= 0.0 {
        return 1.0;
    }
    let p = 10f32.powf(v.log10().floor());
    [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0].iter().map(|m| m * p).find(|&c| c >= v).unwrap_or(10.0 * p)
}

/// The heatmap with its legend underneath; returns the image's height, its pixels and a
/// one-line summary of the distribution.
fn heatmap_image(w: u32, h: u32, per_ray: &[f32], title: &str) -> (u32, Vec<u8>, String) {
    let mut sorted: Vec<f32> = per_ray.to_vec();
    sorted.sort_by(f32::total_cmp);
    let pct = |q: f64| sorted[((sorted.len() - 1) as f64 * q) as usize];
    let mean = per_ray.iter().map(|&v| v as f64).sum::<f64>() / per_ray.len().max(1) as f64;
    let (p50, p99, max) = (pct(0.5), pct(0.99), pct(1.0));
    // Scale to the 99th percentile so a few pathological pixels do not wash the map out.
    let top = nice_ceil(p99);
    let img_h = h + LEGEND_ROWS;
    let mut img = Canvas { w, h: img_h, px: vec![0; (w * img_h * 4) as usize] };
    for (i, &v) in per_ray.iter().enumerate() {
        img.set(i as u32 % w, i as u32 / w, ramp(v / top));
    }
    // Legend: the colour bar, its ends' values, the quantity and the mean.
    let white = [255, 255, 255, 255];
    for y in h..img_h {
        for x in 0..w {
            img.set(x, y, [24, 24, 24, 255]);
        }
    }
    let (x0, x1) = (4, w.saturating_sub(4).max(5));
    for x in x0..x1 {
        let c = ramp((x - x0) as f32 / (x1 - x0 - 1).max(1) as f32);
        for y in h + 4..h + 14 {
            img.set(x, y, c);
        }
    }
    let right = format!("{top}+");
    img.text(x0, h + 17, "0", white);
    img.text(x1.saturating_sub(8 * right.len() as u32), h + 17, &right, white);
    let title = if w >= 8 * 30 { title } else { "work/ray" };
    let tx = (w / 2).saturating_sub(4 * title.len() as u32);
    if tx > 8 + 8 && tx + 8 * title.len() as u32 + 8 * right.len() as u32 + 8 < x1 {
        img.text(tx, h + 17, title, white);
    }
    let stats = format!("mean {mean:.1}  p99 {p99:.0}  max {max:.0}");
    img.text(x0, h + 29, &stats, [200, 200, 200, 255]);
    (img_h, img.px, format!("mean {mean:.1}, median {p50:.1}, p99 {p99:.1}, max {max:.1} (scale 0..{top})"))
}

struct Canvas {
    w: u32,
    h: u32,
    px: Vec<u8>,
}

impl Canvas {
    fn set(&mut self, x: u32, y: u32, c: [u8; 4]) {
        if x < self.w && y < self.h {
            let i = 4 * (x + self.w * y) as usize;
            self.px[i..i + 4].copy_from_slice(&c);
        }
    }

    /// 8x8 bitmap text; clipped at the canvas edge.
    fn text(&mut self, x: u32, y: u32, s: &str, c: [u8; 4]) {
        for (k, ch) in s.chars().enumerate() {
            let Some(glyph) = font8x8::BASIC_FONTS.get(ch) else { continue };
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        self.set(x + 8 * k as u32 + col, y + row as u32, c);
                    }
                }
            }
        }
    }
}

/// A stacked layer's lower and upper edge in a span.
type Band = fn(&Span) -> (f64, f64);

/// One bucket of the concatenated timeline: its span in cycles and fractions.
struct Span {
    t0: f64,
    t1: f64,
    busy: f64,
    with_ray: f64,
    starved: f64,
    occupancy: f64,
    slot_full: f64,
}

/// The traversal cores' activity over the render's dispatches, end to end, as an SVG:
/// stacked busy / idle-with-a-ray / starved fractions, slot occupancy and slot-full cycles
/// as lines, dispatch boundaries as ticks.
fn timeline_svg(dispatches: &[Value]) -> Result<(String, String), String> {
    let mut spans = Vec::new();
    let mut edges = Vec::new();
    let mut t = 0f64;
    let (mut cores, mut slots) = (0, 0);
    for d in dispatches {
        let cycles = d["cycles"].as_f64().unwrap_or(0.0);
        if let Some(tl) = d.get("rtu_timeline") {
            let width = tl["bucket_cycles"].as_f64().ok_or("rtu_timeline without bucket_cycles")?;
            cores = tl["traversal_cores"].as_u64().unwrap_or(0);
            slots = tl["slots_per_core"].as_u64().unwrap_or(0);
            let series = |k: &str| -> Vec<f64> {
                tl[k].as_array().map(|a| a.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect()).unwrap_or_default()
            };
            let (b, r, s, o, f) = (
                series("busy"),
                series("idle_with_ray"),
                series("idle_starved"),
                series("slot_occupancy"),
                series("slot_full"),
            );
            for i in 0..b.len() {
                let t0 = t + i as f64 * width;
                let t1 = (t0 + width).min(t + cycles);
                let at = |v: &Vec<f64>| v.get(i).copied().unwrap_or(0.0);
                spans.push(Span {
                    t0,
                    t1,
                    busy: at(&b),
                    with_ray: at(&r),
                    starved: at(&s),
                    occupancy: at(&o),
                    slot_full: at(&f),
                });
            }
        }
        t += cycles;
        edges.push(t);
    }
    let spans = coarsen(spans, 1200);
    let total = t.max(1.0);
    let (pw, ph, ml, mt) = (900.0, 260.0, 60.0, 40.0);
    let x = |c: f64| ml + c / total * pw;
    let y = |f: f64| mt + (1.0 - f) * ph;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{ml}\" y=\"20\" font-size=\"14\">RTU activity over the render: {cores} traversal cores x {slots} slots, \
         {} dispatches, {:.0} cycles</text>\n",
        ml + pw + 180.0,
        mt + ph + 50.0,
        dispatches.len(),
        total
    );
    // Stacked areas, as step polygons: starved on top of idle-with-ray on top of busy.
    let layers: [(&str, &str, Band); 3] = [
        ("busy", "#2e8b57", |s| (0.0, s.busy)),
        ("idle with a ray", "#f0a030", |s| (s.busy, s.busy + s.with_ray)),
        ("starved", "#b8b8b8", |s| (s.busy + s.with_ray, s.busy + s.with_ray + s.starved)),
    ];
    for (_, colour, range) in &layers {
        let mut top = String::new();
        let mut bottom = Vec::new();
        for s in &spans {
            let (lo, hi) = range(s);
            top += &format!("{:.1},{:.1} {:.1},{:.1} ", x(s.t0), y(hi), x(s.t1), y(hi));
            bottom.push(format!("{:.1},{:.1} {:.1},{:.1}", x(s.t1), y(lo), x(s.t0), y(lo)));
        }
        bottom.reverse();
        svg += &format!("<polygon fill=\"{colour}\" stroke=\"none\" points=\"{top}{}\"/>\n", bottom.join(" "));
    }
    for (colour, dash, get) in
        [("#1f4fbf", "", (|s: &Span| s.occupancy) as fn(&Span) -> f64), ("#c0202a", "4 3", |s: &Span| s.slot_full)]
    {
        let pts: Vec<String> =
            spans.iter().map(|s| format!("{:.1},{:.1}", x((s.t0 + s.t1) / 2.0), y(get(s)))).collect();
        svg += &format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"{dash}\" points=\"{}\"/>\n",
            pts.join(" ")
        );
    }
    // Axes, gridlines and dispatch boundaries.
    for k in 0..=4 {
        let f = k as f64 / 4.0;
        svg += &format!(
            "<line x1=\"{ml}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#0003\"/><text x=\"{}\" y=\"{:.1}\" \
             text-anchor=\"end\">{:.0}%</text>\n",
            ml + pw,
            y(f),
            y(f),
            ml - 6.0,
            y(f) + 4.0,
            f * 100.0
        );
    }
    for e in &edges[..edges.len().saturating_sub(1)] {
        svg += &format!(
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#0006\"/>\n",
            x(*e),
            mt + ph,
            mt + ph + 6.0
        );
    }
    for k in 0..=5 {
        let c = total * k as f64 / 5.0;
        svg += &format!(
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
            x(c),
            mt + ph + 20.0,
            cycles_label(c)
        );
    }
    svg += &format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">cycles (ticks: dispatch boundaries)</text>\n",
        ml + pw / 2.0,
        mt + ph + 38.0
    );
    let legend = [
        ("#2e8b57", "busy", false),
        ("#f0a030", "idle with a ray", false),
        ("#b8b8b8", "starved", false),
        ("#1f4fbf", "slot occupancy", true),
        ("#c0202a", "trace waits for a slot", true),
    ];
    for (i, (colour, label, line)) in legend.iter().enumerate() {
        let ly = mt + 10.0 + 22.0 * i as f64;
        let lx = ml + pw + 15.0;
        if *line {
            svg += &format!(
                "<line x1=\"{lx}\" x2=\"{}\" y1=\"{ly}\" y2=\"{ly}\" stroke=\"{colour}\" stroke-width=\"2\"/>\n",
                lx + 16.0
            );
        } else {
            svg += &format!("<rect x=\"{lx}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"{colour}\"/>\n", ly - 5.0);
        }
        svg += &format!("<text x=\"{}\" y=\"{}\">{label}</text>\n", lx + 22.0, ly + 4.0);
    }
    svg += "</svg>\n";
    // Cycle-weighted means for the console.
    let weight = |f: fn(&Span) -> f64| spans.iter().map(|s| f(s) * (s.t1 - s.t0)).sum::<f64>() / total * 100.0;
    let line = format!(
        "busy {:.1}%, idle with a ray {:.1}%, starved {:.1}%, slot occupancy {:.1}%",
        weight(|s| s.busy),
        weight(|s| s.with_ray),
        weight(|s| s.starved),
        weight(|s| s.occupancy)
    );
    Ok((svg, line))
}

/// Merges neighbouring spans (cycle-weighted) until at most `most` remain: a plot line
/// cannot show more, and the file stays small.
fn coarsen(spans: Vec<Span>, most: usize) -> Vec<Span> {
    let k = spans.len().div_ceil(most.max(1));
    if k <= 1 {
        return spans;
    }
    spans
        .chunks(k)
        .map(|g| {
            let len: f64 = g.iter().map(|s| s.t1 - s.t0).sum::<f64>().max(1e-9);
            let avg = |f: fn(&Span) -> f64| g.iter().map(|s| f(s) * (s.t1 - s.t0)).sum::<f64>() / len;
            Span {
                t0: g[0].t0,
                t1: g[g.len() - 1].t1,
                busy: avg(|s| s.busy),
                with_ray: avg(|s| s.with_ray),
                starved: avg(|s| s.starved),
                occupancy: avg(|s| s.occupancy),
                slot_full: avg(|s| s.slot_full),
            }
        })
        .collect()
}

fn cycles_label(c: f64) -> String {
    if c >= 1e6 {
        format!("{:.1}M", c / 1e6)
    } else if c >= 1e3 {
        format!("{:.0}k", c / 1e3)
    } else {
        format!("{c:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_is_monotone_in_brightness_and_nice_ceil_rounds_up() {
        let lum = |c: [u8; 4]| c[0] as u32 * 3 + c[1] as u32 * 6 + c[2] as u32;
        let mut last = 0;
        for i in 0..=100 {
            let l = lum(ramp(i as f32 / 100.0));
            assert!(l >= last, "{i}");
            last = l;
        }
        assert_eq!(nice_ceil(37.0), 40.0);
        assert_eq!(nice_ceil(23.5), 25.0);
        assert_eq!(nice_ceil(100.0), 100.0);
        assert_eq!(nice_ceil(0.7), 0.8);
    }
}
