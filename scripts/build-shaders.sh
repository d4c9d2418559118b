#!/usr/bin/env bash
# Regenerates every SPIR-V binary under examples/shaders from its GLSL source:
# examples/shaders/NAME.comp -> examples/shaders/NAME.spv, NAME.vert and NAME.frag ->
# NAME.vert.spv and NAME.frag.spv (and likewise the ray-tracing stages, NAME.rgen.spv, ...). A source whose second line reads
# `// variants: OUT1=-DFLAG ... OUT2=...` is compiled once per variant into OUTn.spv with
# the given (comma-separated) glslang flags instead. The .spv files are committed (the
# examples embed them), and a test checks they match their sources.
set -euo pipefail

cd "$(dirname "$0")/../examples/shaders"
command -v glslangValidator >/dev/null || {
  echo "build-shaders: glslangValidator not found (Debian: apt-get install glslang-tools)" >&2
  exit 1
}
for src in *.comp *.vert *.frag *.rgen *.rchit *.rmiss *.rahit *.rint *.rcall; do
  variants=$(sed -n '2s|^// variants: ||p' "$src")
  if [ -z "$variants" ]; then
    case $src in
      *.comp) out=${src%.comp}.spv ;;
      *) out=$src.spv ;;
    esac
    glslangValidator --target-env vulkan1.2 -V "$src" -o "$out" >/dev/null
  else
    for v in $variants; do
      out=${v%%=*}
      flags=${v#*=}
      # shellcheck disable=SC2086
      glslangValidator --target-env vulkan1.2 -V ${flags//,/ } "$src" -o "$out.spv" >/dev/null
    done
  fi
done
