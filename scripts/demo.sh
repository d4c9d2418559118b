#!/usr/bin/env bash
# The main job (README): builds the ICD and runs the ray-query demo on it through the real
# Vulkan loader, on the embedded default scene (the Stanford bunny and a ground quad).
# Extra arguments go to the demo (e.g. --icd lavapipe to run the same program on Mesa).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh
cargo build --release -p vortex-icd -p vortex-examples
exec target/release/rq_smoke --icd vortex "$@"
