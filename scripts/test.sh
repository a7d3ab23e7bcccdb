#!/usr/bin/env bash
# The README's test command (.ci/run runs exactly this): every test with real rclpy over
# loopback-only DDS, on ROS 2 Jazzy and then on Kilted, one after the other; each
# distribution's environment is set up first (scripts/setup_env.sh --with-tests:
# idempotent, seconds once done; its last step compiles the dynamics kernels). Per
# distribution, two passes: the whole suite on the compiled path of the dynamics core (numba
# kernels), then the core's and the node's oracle tests (NUMPY_TESTS below) on the NumPy
# path (KIN_DYN_JIT=0: the reference and the fallback); the core's own tests (test/dynamics:
# no ROS) in the first distribution's passes only, while both pin the same libraries for it
# (core_once below). Each pass first prints which path runs and fails if it is not the one
# asked for. Fails if any pass fails on either distribution.
#
# Usage:  bash scripts/test.sh [--distro jazzy|kilted] [pytest arguments...]
#   --distro D   (or KIN_DYN_DISTRO=D) that distribution only
#   KIN_DYN_VENV a venv of one of them (scripts/distro.sh); the other one's is its default
#   pytest arguments that name tests (paths, node ids): those tests only, one pass on the
#                compiled path; options alone (-x, -k EXPR, ...) go to both passes
#   KIN_DYN_JIT=0  the first pass on the NumPy path as well (and no second pass)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

# The oracle tests run again on the NumPy path: all of test/dynamics (the core against
# Pinocchio, iDynTree and adam, and its identities; ~25 s) and the node's tests whose
# outputs are compared with the core and Pinocchio (in-process, as a separate process, on
# generated robots, contact mechanics, balance; ~40 s). Measured on the 2-core CI machine
# kind (2026-11-27, other jobs beside it): 71 s on Jazzy, 51 s on Kilted, against ~5 min for
# the whole suite. Left out: the rest of test/ros (messages, parameters,
# launch, threads, lifecycle, soak: the same whichever path computes) and
# test_equilibrium_worker.py (30-60 s of worker protocol; its answers are compared with the
# same call in the test's process, on the same path).
NUMPY_TESTS=(test/dynamics test/ros/test_node.py test/ros/test_node_process.py
             test/ros/test_node_generated_robot.py test/ros/test_contacts_node.py
             test/ros/test_balance_node.py)

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

# Do the pytest arguments name tests (an existing path, or path::test), other than as the
# value of an option?
names_tests=0
prev=
for a in ${args[@]+"${args[@]}"}; do
  case "$prev" in
    -k|-m|-p|-o|-c|-W|--deselect|--ignore|--ignore-glob|--rootdir|--basetemp|--confcutdir) ;;
    *) case "$a" in -*) ;; *) [ ! -e "${a%%::*}" ] || names_tests=1 ;; esac ;;
  esac
  prev="$a"
done
# KIN_DYN_JIT as kin_dyn_ros/dynamics/compiled.py reads it
case "$(printf '%s' "${KIN_DYN_JIT:-1}" | tr -d '[:space:]' | tr '[:upper:]' '[:lower:]')" in
  0|false|no|off) first_path=numpy ;;
  *) first_path=compiled ;;
esac
numpy_pass=1
[ "$names_tests" = 0 ] && [ "$first_path" = compiled ] || numpy_pass=0
# The core's tests (test/dynamics: the core imports nothing from ROS) run in the first
# distribution's passes only while every distribution pins the same numpy, scipy, numba,
# llvmlite and urdfdom-py: a later one would run the same code on the same libraries (~45 s)
core_pins() {
  grep -E '^(numpy|scipy|numba|llvmlite|urdfdom-py)==' "scripts/requirements-$1.txt" | sed 's/ .*//'
}
core_once=1
for d in "${distros[@]}"; do
  [ "$(core_pins "$d")" = "$(core_pins "${distros[0]}")" ] || core_once=0
done
[ "$(core_pins "${distros[0]}" | wc -l)" = 5 ] || core_once=0

# One pass (in a subshell, with the distribution's environment): run_pass DISTRO PATH
# PYTEST-ARGS...; PATH (compiled or numpy) is the path of the dynamics core it must run on.
run_pass() {
  local distro="$1" want="$2"
  shift 2
  (   # (set -e does not apply inside: every step checks)
    # shellcheck disable=SC1091
    KIN_DYN_DISTRO="$distro" source scripts/env.sh || exit
    export PYTHONUNBUFFERED=1
    [ "$want" = compiled ] || export KIN_DYN_JIT=0
    # a later distribution's pass: tests that do not depend on ROS and cost tens of seconds
    # (numba compiling the kernels from nothing) ran in the first one's
    [ "$distro" = "${distros[0]}" ] || export KIN_DYN_REPEAT_PASS=1
    python - "$want" <<'EOF' || exit
import sys
from kin_dyn_ros.dynamics.compiled import jit_status
status = jit_status()
print(f"test.sh: the dynamics core runs: {status.describe()}")
if status.compiled != (sys.argv[1] == "compiled"):
    sys.exit(f"test.sh: this pass is meant for the {sys.argv[1]} path")
EOF
    exec python -m pytest -ra -p no:cacheprovider "$@"
  )
}

results=()
status=0
for distro in "${distros[@]}"; do
  echo "=============================== ROS 2 $distro ==============================="
  t0=$SECONDS
  rc=0
  bash scripts/setup_env.sh --distro "$distro" --with-tests || rc=$?
  if [ "$rc" != 0 ]; then
    results+=("$distro: FAILED, set-up exit $rc ($((SECONDS - t0)) s)")
    status=1
    continue
  fi
  label="$distro"
  [ "$first_path" = compiled ] || label="$distro (NumPy path, KIN_DYN_JIT=0)"
  numpy_tests=("${NUMPY_TESTS[@]}")
  skip_core=()
  if [ "$distro" != "${distros[0]}" ] && [ "$core_once" = 1 ] && [ "$names_tests" = 0 ]; then
    skip_core=(--ignore=test/dynamics)
    numpy_tests=()
    for t in "${NUMPY_TESTS[@]}"; do [ "$t" = test/dynamics ] || numpy_tests+=("$t"); done
    echo "test.sh: test/dynamics (the core, no ROS; the same pinned numpy, scipy, numba," \
         "llvmlite and urdfdom-py) ran in the ${distros[0]} passes"
  fi
  # (no path given: pytest.ini's testpaths, the whole suite)
  run_pass "$distro" "$first_path" ${args[@]+"${args[@]}"} ${skip_core[@]+"${skip_core[@]}"} \
    || rc=$?
  if [ "$rc" = 0 ]; then
    line="$label: passed ($((SECONDS - t0)) s)"
  else
    line="$label: FAILED, exit $rc ($((SECONDS - t0)) s)"
    status=1
  fi
  if [ "$numpy_pass" = 1 ]; then
    echo "======================= ROS 2 $distro: NumPy path (KIN_DYN_JIT=0) ======================="
    t1=$SECONDS
    rc=0
    run_pass "$distro" numpy ${args[@]+"${args[@]}"} "${numpy_tests[@]}" || rc=$?
    if [ "$rc" = 0 ]; then
      line="$line; NumPy path: passed ($((SECONDS - t1)) s)"
    elif [ "$rc" = 5 ]; then   # pytest: the options given select none of NUMPY_TESTS
      line="$line; NumPy path: no test selected ($((SECONDS - t1)) s)"
    else
      line="$line; NumPy path: FAILED, exit $rc ($((SECONDS - t1)) s)"
      status=1
    fi
  fi
  results+=("$line")
done
echo "=============================== scripts/test.sh ==============================="
for r in "${results[@]}"; do echo "ROS 2 $r"; done
exit "$status"
