#!/usr/bin/env bash
# The live humanoid demo of kin_dyn_ros, from a fresh clone:
#   bash scripts/demo.sh [--duration SECONDS] [--model PATH] [--output DIR] [--no-plots]
# Sets up the environment first (scripts/setup_env.sh: idempotent, a few seconds once done),
# then runs `python -m kin_dyn_ros.demo` with the given arguments (--help lists them).
# iCub squats and sways on both feet while kin_dyn_node computes its dynamics; the run is
# recorded to demo_output/kin_dyn_demo.mcap (Foxglove, PlotJuggler) and plotted to
# demo_output/*.png (relative to the current folder; --output DIR to change).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$REPO/scripts/setup_env.sh"
# shellcheck source=scripts/env.sh
source "$REPO/scripts/env.sh"
exec python -m kin_dyn_ros.demo "$@"
