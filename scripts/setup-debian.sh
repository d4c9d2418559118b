#!/usr/bin/env bash
# Installs the Debian packages Vortex RT needs on a fresh Debian 12 (bookworm) machine:
# the Vulkan loader and tools, glslang/SPIR-V tools, and Mesa's lavapipe from
# bookworm-backports (25.x: its lavapipe has ray queries; bookworm's 22.x does not), and
# for presenting: Xvfb (the swapchain test's X server; it reads windows back with GetImage),
# libxcb and libX11-xcb (loaded by the driver for X11 surfaces); x11-apps and python3 for the
# third-party ray-query sample's runner (it grabs the window with xwd).
# Idempotent: does nothing when everything is already present.
set -euo pipefail

need=(libvulkan1 libvulkan-dev vulkan-tools vulkan-validationlayers glslang-tools spirv-tools
      xvfb libxcb1 libx11-xcb1 x11-apps python3)
have_all=1
for p in "${need[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || have_all=0
done
lvp_ok=0
if [ -f /usr/share/vulkan/icd.d/lvp_icd.json ]; then
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  case "$v" in 2[4-9].*|[3-9][0-9].*) lvp_ok=1 ;; esac
fi
if [ "$have_all" = 1 ] && [ "$lvp_ok" = 1 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Derive the backports entry from the machine's own main Debian entry (first stanza only:
# the security archive has no backports suite), so no host name is written here.
src=/etc/apt/sources.list.d/debian.sources
bp=/etc/apt/sources.list.d/vortex-backports.sources
if [ ! -f "$bp" ]; then
  if [ -f "$src" ]; then
    awk 'BEGIN{RS="";ORS="\n\n"} NR==1' "$src" \
      | sed 's/^Suites:.*/Suites: bookworm-backports/' | $SUDO tee "$bp" >/dev/null
  elif [ -f /etc/apt/sources.list ]; then
    grep -m1 -E '^deb .* bookworm main' /etc/apt/sources.list \
      | sed 's/ bookworm main/ bookworm-backports main/' | $SUDO tee /etc/apt/sources.list.d/vortex-backports.list >/dev/null
  fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup-debian: installing ${need[*]} mesa-vulkan-drivers (backports)" >&2
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
$SUDO apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers >/dev/null
