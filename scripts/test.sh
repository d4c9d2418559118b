#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need from Debian's packages,
# checks formatting and lints, builds everything (the ICD in release: its manifest points at
# target/release), and runs every test — unit tests, the device-model tests, and the
# examples through the real Vulkan loader on both our ICD and lavapipe — and, when the real
# Khronos conformance binary is at hand (../shared/tools/deqp-vk, or DEQP_VK=path), its
# dEQP-VK.info and ray_query compute and vertex-fragment lists on our ICD, judged against
# cts/deqp/baselines and lavapipe's results.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh
echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy" >&2
cargo clippy --release --workspace --all-targets -- -D warnings
echo "== cargo build --release" >&2
cargo build --release --workspace
echo "== cargo test --release" >&2
cargo test --release --workspace
# One model, two modes: the whole suite again with the cycle-level model (model tests,
# shader tests, the examples through the loader, the CTS cases); every result must be the
# same bits (model/tests/modes.rs also compares the two modes output for output).
echo "== cargo test --release (VORTEX_MODE=timed)" >&2
VORTEX_MODE=timed cargo test --release --workspace
# The second ray-tracing architecture (docs/RDNA2.md): the test binaries that trace rays,
# again on rdna2 devices, where ray queries are the shader's loop around ISECT over the
# rdna2 layout (`modes` runs them in both modes; the RTU's heatmap test is the RTU's).
echo "== ray-query tests on the rdna2 architecture (VORTEX_RT_ARCH=rdna2)" >&2
VORTEX_RT_ARCH=rdna2 cargo test --release -p vortex-transcode --test shader_rayquery
VORTEX_RT_ARCH=rdna2 cargo test --release -p vortex-examples --test rq_smoke --test modes --test arch --test render \
  --test compute_check -- --skip stats_give_a_heatmap_and_a_timeline

# The real conformance binary, when present: every case lavapipe passes must pass, every
# expected failure or gap is listed with its reason (cts/deqp/baselines).
deqp=${DEQP_VK:-../shared/tools/deqp-vk/deqp-vk}
if [ -x "$deqp" ]; then
  for mode in functional timed; do
    echo "== real dEQP-VK: info + ray_query compute and vertex-fragment on our ICD (VORTEX_MODE=$mode)" >&2
    VORTEX_MODE=$mode DEQP_VK=$deqp cts/deqp/run.sh --lists compute,vertex-fragment --output "target/deqp-results/$mode"
  done
  echo "== real dEQP-VK: info + ray_query compute on the rdna2 architecture (VORTEX_RT_ARCH=rdna2)" >&2
  VORTEX_RT_ARCH=rdna2 DEQP_VK=$deqp cts/deqp/run.sh --lists compute --output target/deqp-results/rdna2
  echo "== real dEQP-VK: ray queries in ray-tracing pipeline stages" >&2
  DEQP_VK=$deqp cts/deqp/run.sh --lists rt-stages --output target/deqp-results/rt-pipeline
else
  echo "== real dEQP-VK: skipped (no deqp-vk at $deqp; set DEQP_VK=path to run it)" >&2
fi
