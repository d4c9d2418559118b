#!/usr/bin/env bash
# Regenerates every SPIR-V binary under examples/shaders from its GLSL source:
# examples/shaders/NAME.comp -> examples/shaders/NAME.spv. The .spv files are committed
# (the examples embed them), and a test checks they match their sources.
set -euo pipefail

cd "$(dirname "$0")/../examples/shaders"
command -v glslangValidator >/dev/null || {
  echo "build-shaders: glslangValidator not found (Debian: apt-get install glslang-tools)" >&2
  exit 1
}
for src in *.comp; do
  glslangValidator --target-env vulkan1.2 -V "$src" -o "${src%.comp}.spv"
done
