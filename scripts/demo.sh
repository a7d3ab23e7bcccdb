#!/usr/bin/env bash
# The live humanoid demo of kin_dyn_ros, from a fresh clone:
#   bash scripts/demo.sh [--distro jazzy|kilted] [--duration SECONDS] [--model PATH]
#                        [--output DIR] [--no-plots]
# Sets up what the demo needs first (scripts/setup_env.sh without the test references:
# idempotent, a few seconds once done; --distro or KIN_DYN_DISTRO picks the ROS 2
# distribution, Jazzy by default; it compiles the dynamics kernels into numba's cache beside
# its other steps, ~1 min the first time, so that neither the demo nor the node does), then
# runs `python -m kin_dyn_ros.demo` with the other arguments (--help lists them).
# iCub squats and sways on both feet while kin_dyn_node computes its dynamics; the run is
# recorded to demo_output/kin_dyn_demo.mcap (Foxglove, PlotJuggler) and plotted to
# demo_output/*.png (relative to the current folder; --output DIR to change).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

distro=()
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --distro) [ $# -ge 2 ] || { echo "demo.sh: --distro needs a value" >&2; exit 2; }
              distro=(--distro "$2"); export KIN_DYN_DISTRO="$2"; shift ;;
    --distro=*) distro=(--distro "${1#--distro=}"); export KIN_DYN_DISTRO="${1#--distro=}" ;;
    *) args+=("$1") ;;
  esac
  shift
done

bash "$REPO/scripts/setup_env.sh" "${distro[@]}"
# shellcheck source=scripts/env.sh
source "$REPO/scripts/env.sh"
exec python -m kin_dyn_ros.demo "${args[@]}"
