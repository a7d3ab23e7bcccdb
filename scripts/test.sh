#!/usr/bin/env bash
# The README's test command (.ci/run runs exactly this): every test with real rclpy over
# loopback-only DDS, on ROS 2 Jazzy and then on Kilted, one after the other; each
# distribution's environment is set up first (scripts/setup_env.sh --with-tests:
# idempotent, seconds once done). Fails if the tests fail on either.
#
# Usage:  bash scripts/test.sh [--distro jazzy|kilted] [pytest arguments...]
#   --distro D   (or KIN_DYN_DISTRO=D) that distribution only
#   KIN_DYN_VENV a venv of one of them (scripts/distro.sh); the other one's is its default
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

distros=()
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --distro) [ $# -ge 2 ] || { echo "test.sh: --distro needs a value" >&2; exit 2; }
              distros+=("$2"); shift ;;
    --distro=*) distros+=("${1#--distro=}") ;;
    *) args+=("$1") ;;
  esac
  shift
done
if [ "${#distros[@]}" = 0 ]; then
  if [ -n "${KIN_DYN_DISTRO:-}" ]; then distros=("$KIN_DYN_DISTRO"); else distros=(jazzy kilted); fi
fi

results=()
status=0
for distro in "${distros[@]}"; do
  echo "=============================== ROS 2 $distro ==============================="
  t0=$SECONDS
  rc=0
  (   # (set -e does not apply inside: every step checks)
    bash scripts/setup_env.sh --distro "$distro" --with-tests || exit
    # shellcheck disable=SC1091
    KIN_DYN_DISTRO="$distro" source scripts/env.sh || exit
    export PYTHONUNBUFFERED=1
    # (no path given: pytest.ini's testpaths, the whole suite)
    exec python -m pytest -ra -p no:cacheprovider "${args[@]}"
  ) || rc=$?
  if [ "$rc" = 0 ]; then
    results+=("$distro: passed ($((SECONDS - t0)) s)")
  else
    results+=("$distro: FAILED, exit $rc ($((SECONDS - t0)) s)")
    status=1
  fi
done
echo "=============================== scripts/test.sh ==============================="
for r in "${results[@]}"; do echo "ROS 2 $r"; done
exit "$status"
