#!/usr/bin/env bash
# Runs the real Khronos dEQP-VK (dEQP-VK.info and the dEQP-VK.ray_query lists next to the
# binary) on an ICD, judged against cts/deqp/baselines/ (expected failures, each with its
# reason) and against lavapipe's results (every case lavapipe passes must pass, unless
# <icd>-missing.txt names the gap).
#
#   DEQP_VK=../shared/tools/deqp-vk/deqp-vk cts/deqp/run.sh [options]
#
#   --icd NAME              vortex (default), lavapipe, or a manifest path
#   --lists A,B             ray_query lists next to the binary: compute (default),
#                           vertex-fragment, tess-geom, rt-stages, all; info always runs
#   --runner R              vortex-cts (default: this workspace's runner, no install) or
#                           deqp-runner (Mesa's; installed with cargo if absent)
#   --fraction N --fraction-start K
#                           run every Nth case starting with the Kth: shard a run across
#                           machines (machine K of N runs --fraction N --fraction-start K)
#   --jobs N  --output DIR  parallel processes (default: cores), results (default: deqp-results)
# Exit status: 0 when nothing regressed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deqp=${DEQP_VK:-$root/../shared/tools/deqp-vk/deqp-vk}
icd=vortex lists=compute runner=vortex-cts fraction=1 start=1 out=deqp-results
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --icd) icd=$2; shift 2 ;;
    --lists) lists=$2; shift 2 ;;
    --runner) runner=$2; shift 2 ;;
    --fraction) fraction=$2; shift 2 ;;
    --fraction-start) start=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --output) out=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$deqp" ] || { echo "run.sh: no deqp-vk at $deqp (set DEQP_VK)" >&2; exit 2; }
deqp=$(cd "$(dirname "$deqp")" && pwd)/$(basename "$deqp")
listdir=$(dirname "$deqp")/lists
oracle=$(dirname "$deqp")/lavapipe-results.csv
caselists=("$here/lists/info.txt")
for l in ${lists//,/ }; do
  [ -f "$listdir/ray_query-$l.txt" ] || { echo "run.sh: no list $listdir/ray_query-$l.txt" >&2; exit 2; }
  caselists+=("$listdir/ray_query-$l.txt")
done
case "$icd" in
  vortex) manifest=$root/json/vortex_icd.json ;;
  lavapipe) manifest=/usr/share/vulkan/icd.d/lvp_icd.json ;;
  *) manifest=$icd ;;
esac
label=$icd; [ "$icd" = vortex ] || [ "$icd" = lavapipe ] || label=$(basename "${icd%.*}")
oracle_args=(); [ -f "$oracle" ] && oracle_args=(--oracle "$oracle")
deqp_args=(--deqp-log-images=disable --deqp-log-shader-sources=disable)

cts=$root/target/release/vortex-cts
if [ ! -x "$cts" ] || [ "$icd" = vortex ]; then
  (cd "$root" && cargo build --release -q -p vortex-cts -p vortex-icd)
fi

if [ "$runner" = vortex-cts ]; then
  args=(--deqp "$deqp" --icd "$icd" --jobs "$jobs" --output "$out" --quiet
        --fraction "$fraction" --fraction-start "$start")
  for c in "${caselists[@]}"; do args+=(--caselist "$c"); done
  exec "$cts" "${args[@]}" "${oracle_args[@]}" -- "${deqp_args[@]}"
fi

[ "$runner" = deqp-runner ] || { echo "run.sh: unknown runner $runner" >&2; exit 2; }
command -v deqp-runner >/dev/null || cargo install deqp-runner --version 0.24.0 --locked
mkdir -p "$out"
suite=$out/suite.toml
# The template's first entry (info) once, its second once per list.
info_block=$(awk '/^\[\[deqp\]\]/{n++} n==1' "$here/suite.toml.in")
list_block=$(awk '/^\[\[deqp\]\]/{n++} n==2' "$here/suite.toml.in")
{
  echo "$info_block"; echo
  for l in ${lists//,/ }; do echo "${list_block//@LIST@/$l}"; echo; done
} | sed -e "s|@DEQP_VK@|$deqp|g" -e "s|@LISTS@|$listdir|g" -e "s|@HERE@|$here|g" -e "s|@ICD@|$label|g" > "$suite"
status=0
VK_ICD_FILENAMES=$manifest deqp-runner suite --suite "$suite" --output "$out" --jobs "$jobs" \
  --fraction "$fraction" --fraction-start "$start" || status=$?
# deqp-runner judged failures against the baseline; now the cases lavapipe passes.
"$cts" --results "$out/results.csv" --icd "$icd" --output "$out/judged" --quiet "${oracle_args[@]}" || status=$?
exit $status
