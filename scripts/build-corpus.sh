#!/usr/bin/env bash
# Regenerates every SPIR-V binary of the differential shader corpus:
# corpus/shaders/AREA/NAME.comp -> corpus/shaders/AREA/NAME.spv, compiled with
# `glslangValidator --target-env vulkan1.2 -V` plus the flags of the shader's
# `//! glslang FLAGS` line, if it has one (a later --target-env wins). The .spv files are
# committed; examples/tests/corpus.rs checks they match their sources and runs the corpus.
set -euo pipefail

cd "$(dirname "$0")/../corpus/shaders"
command -v glslangValidator >/dev/null || {
  echo "build-corpus: glslangValidator not found (Debian: apt-get install glslang-tools)" >&2
  exit 1
}
find . -name '*.comp' | sort | while read -r src; do
  flags=$(sed -n 's|^//! glslang ||p' "$src")
  # shellcheck disable=SC2086
  glslangValidator --target-env vulkan1.2 -V $flags "$src" -o "${src%.comp}.spv" >/dev/null \
    || { echo "build-corpus: $src does not compile" >&2; glslangValidator --target-env vulkan1.2 -V $flags "$src" -o /dev/null; exit 1; }
done
echo "build-corpus: $(find . -name '*.spv' | wc -l) shaders"
