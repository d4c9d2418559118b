#!/usr/bin/env bash
# Regenerates every SPIR-V binary of the differential shader corpus:
# corpus/shaders/AREA/NAME.{comp,spvasm} -> corpus/shaders/AREA/NAME.spv. GLSL is compiled with
# `glslangValidator --target-env vulkan1.2 -V` plus the flags of the shader's
# `//! glslang FLAGS` line, if it has one (a later --target-env wins); SPIR-V assembly is
# assembled with spirv-as. The .spv files are
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
# SPIR-V assembly sources (what GLSL or the installed glslang cannot express), with their
# numeric ids kept so raw `!words` in them can refer to ids.
command -v spirv-as >/dev/null || {
  echo "build-corpus: spirv-as not found (Debian: apt-get install spirv-tools)" >&2
  exit 1
}
find . -name '*.spvasm' | sort | while read -r src; do
  spirv-as --target-env vulkan1.2 --preserve-numeric-ids "$src" -o "${src%.spvasm}.spv" \
    || { echo "build-corpus: $src does not assemble" >&2; exit 1; }
done
echo "build-corpus: $(find . -name '*.spv' | wc -l) shaders"
