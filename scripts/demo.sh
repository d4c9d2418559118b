#!/usr/bin/env bash
# The main job (README): builds the ICD and renders the embedded default scene (three Stanford
# bunnies on a ground plane: primary rays, hard shadows, ambient occlusion) with ray queries
# on it through the real Vulkan loader. Writes out/render.png, the RTU traversal-cost heatmap
# out/render.heat.png and the per-dispatch counters out/stats.jsonl.
# Extra arguments go to the renderer, e.g. --scene spheres, --width 1024 --height 768,
# --compare lavapipe; VORTEX_MODE=timed also writes out/render.timeline.svg.
# --window (first argument) also shows the image in a window as it is rendered, through a
# swapchain, when a display is available ($DISPLAY); without one it renders as usual.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh
cargo build --release -p vortex-icd -p vortex-examples
mkdir -p out
if [ "${1:-}" = "--window" ]; then
  shift
  if [ -n "${DISPLAY:-}" ]; then
    set -- --window "$@"
  else
    echo "demo: --window needs a display (\$DISPLAY is not set); writing the PNG only" >&2
  fi
fi
VORTEX_STATS="$PWD/out/stats.jsonl" exec target/release/render --icd vortex --out out/render.png "$@"
