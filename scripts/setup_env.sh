#!/usr/bin/env bash
# Set up the development environment of kin_dyn_ros on a machine without a ROS install:
# a Python 3.11 venv with ROS 2 Jazzy or Kilted from PyPI wheels (real rclpy + Fast DDS),
# what the node and the demo need, an overlay with tf2_msgs and kin_dyn_ros_interfaces
# built by plain CMake, and kin_dyn_ros installed in editable mode; with --with-tests also
# the test references (pytest, Pinocchio, iDynTree, adam + CasADi, Klamp't).
# ROS 2 comes from the ros-python-wheels PyPI wheels (real rclpy and Fast DDS); the
# interface overlay is built with plain CMake against them.
#
# Usage:  bash scripts/setup_env.sh [--distro jazzy|kilted] [--with-tests] [--force] [--clean]
#         then  source scripts/env.sh   (Kilted: KIN_DYN_DISTRO=kilted source scripts/env.sh)
#   --distro D          jazzy (default) or kilted (or KIN_DYN_DISTRO=D); the pins are
#                       scripts/requirements-D.txt
#   --with-tests        also scripts/requirements-test.txt (or KIN_DYN_WITH_TESTS=1)
#   KIN_DYN_VENV        venv location (default: <repo>/.venv for jazzy, <repo>/.venv-kilted
#                       for kilted; one that holds the other distribution is left alone)
#   KIN_DYN_WHEELHOUSE  the downloaded wheels, shared by every venv so that nothing is
#                       downloaded twice (default: ~/.cache/kin_dyn_ros/wheels)
#   KIN_DYN_PYTHON      interpreter used to create the venv (default: python3.11, else python3)
#   --force             redo every step even if the stamps say it is up to date
#   --clean             also wipe the overlay's CMake build trees (implies --force)
#
# Idempotent: each step records a hash of its inputs (the pins, the interface packages,
# the repo's setup.py...) under $VENV/.kin_dyn_setup/; a re-run with nothing
# changed only checks the result (a few seconds). Steps that do not wait for each other run
# at the same time: the two overlay builds, the test references' install, the editable
# install. On every run the dynamics core's numba kernels are compiled into numba's disk
# cache (python -m kin_dyn_ros.dynamics: ~1 min once, ~1 s when cached), beside the other
# steps from as soon as the core's own packages are installed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Bump when a step's recipe below changes in a way that needs existing venvs redone.
PIP_RECIPE=2
OVERLAY_RECIPE=2

DISTRO_ARG=
WITH_TESTS="${KIN_DYN_WITH_TESTS:-0}"
FORCE=0
CLEAN=0
while [ $# -gt 0 ]; do
  case "$1" in
    --distro) [ $# -ge 2 ] || { echo "setup_env.sh: --distro needs a value" >&2; exit 2; }
              DISTRO_ARG="$2"; shift ;;
    --distro=*) DISTRO_ARG="${1#--distro=}" ;;
    --with-tests) WITH_TESTS=1 ;;
    --force) FORCE=1 ;;
    --clean) FORCE=1; CLEAN=1 ;;
    -h|--help) sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup_env.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "${KIN_DYN_FORCE:-0}" = 1 ] && FORCE=1
[ "$WITH_TESTS" = 1 ] || WITH_TESTS=0

# shellcheck source=scripts/distro.sh
. "$REPO/scripts/distro.sh"
_kdr_resolve "$REPO" "$DISTRO_ARG" || exit 2
DISTRO="$_kdr_distro"
VENV="$_kdr_venv"
REQ="$REPO/scripts/requirements-$DISTRO.txt"
TEST_REQ="$REPO/scripts/requirements-test.txt"
WHEELHOUSE="${KIN_DYN_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/kin_dyn_ros/wheels}"
case "$WHEELHOUSE" in /*) ;; *) WHEELHOUSE="$PWD/$WHEELHOUSE" ;; esac
OVERLAY="$VENV/ros_overlay"
STATE="$VENV/.kin_dyn_setup"
BUILD_ROOT="$STATE/build"
LOGS="$STATE/logs"
# Interface packages of the overlay (relative to the repo root); they do not depend on
# each other, so they are built at the same time.
INTERFACE_PKGS=(third_party/tf2_msgs kin_dyn_ros_interfaces)
# Paths baked into the exported CMake targets of the ros-* wheels by their builder.
WHEEL_PY_PREFIX=/opt/python/cp311-cp311

T0=$SECONDS
log() { printf '[setup_env %3ds] %s\n' "$((SECONDS - T0))" "$*"; }
die() { printf 'setup_env.sh: ERROR: %s\n' "$*" >&2; exit 1; }
[ -z "$_kdr_note" ] || log "$_kdr_note"

# Run a command with its output in a log file; on failure show the tail and stop.
run_logged() {
  local logfile="$1"; shift
  if ! "$@" >"$logfile" 2>&1; then
    tail -n 40 "$logfile" >&2
    die "'$*' failed (full log: $logfile; a re-run with --clean starts from scratch)"
  fi
}

# Background jobs: start_job NAME LOGFILE CMD... ; wait_jobs waits for all of them and
# stops (showing the failed ones' logs) if any failed.
JOB_PIDS=()
JOB_NAMES=()
JOB_LOGS=()
start_job() {
  local name="$1" logfile="$2"; shift 2
  "$@" >"$logfile" 2>&1 &
  JOB_PIDS+=("$!"); JOB_NAMES+=("$name"); JOB_LOGS+=("$logfile")
}
wait_jobs() {
  local i failed=()
  for i in "${!JOB_PIDS[@]}"; do
    if ! wait "${JOB_PIDS[$i]}"; then
      tail -n 40 "${JOB_LOGS[$i]}" >&2
      failed+=("${JOB_NAMES[$i]} (full log: ${JOB_LOGS[$i]})")
    fi
  done
  JOB_PIDS=(); JOB_NAMES=(); JOB_LOGS=()
  [ "${#failed[@]}" = 0 ] || die "failed: ${failed[*]}; a re-run with --clean starts from scratch"
}
# On any exit, stop the jobs still running (ours only, by their ids).
stop_jobs() {
  local pid
  for pid in "${JOB_PIDS[@]}" ${KERNELS_PID:+"$KERNELS_PID"}; do
    kill "$pid" 2>/dev/null || true
  done
}
trap stop_jobs EXIT

# sha256 of the given files/directories (names and contents, sorted, build trees skipped).
hash_inputs() {
  local p
  for p in "$@"; do
    if [ -d "$p" ]; then
      (cd "$p" && find . -type f ! -path '*/__pycache__/*' ! -path './build/*' \
         ! -path './install/*' ! -path './log/*' -print0 | LC_ALL=C sort -z \
         | xargs -0 -r sha256sum)
    elif [ -f "$p" ]; then
      printf '%s  ' "$(basename "$p")"; sha256sum <"$p"
    else
      printf 'absent %s\n' "$(basename "$p")"
    fi
  done | sha256sum | cut -d' ' -f1
}
hash_lines() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }
# sha256 of the pins of a requirement file (comments and blank lines do not count).
hash_pins() { sed -e 's/#.*//' -e 's/[[:space:]]//g' "$1" | grep -v '^$' | LC_ALL=C sort \
  | sha256sum | cut -d' ' -f1; }
stamp_ok() { [ "$FORCE" = 0 ] && [ -f "$STATE/$1.stamp" ] && [ "$(cat "$STATE/$1.stamp")" = "$2" ]; }
stamp_set() { printf '%s\n' "$2" >"$STATE/$1.stamp"; }

# Do not let an already sourced ROS / other venv leak into the build.
unset PYTHONPATH PYTHONHOME AMENT_PREFIX_PATH CMAKE_PREFIX_PATH COLCON_PREFIX_PATH \
      _ROS_WHEELS_BOOTSTRAP_COMPLETE 2>/dev/null || true

command -v cmake >/dev/null || die "cmake not found (Debian: apt-get install cmake)"
command -v c++ >/dev/null || command -v g++ >/dev/null \
  || die "no C++ compiler found (Debian: apt-get install build-essential)"
[ -f "$REQ" ] || die "$REQ is missing"
[ "$WITH_TESTS" = 0 ] || [ -f "$TEST_REQ" ] || die "$TEST_REQ is missing"

# ---------------------------------------------------------------- 1. the venv
mkdir -p "$VENV"
if command -v flock >/dev/null; then
  exec 9>"$VENV/.kin_dyn_setup.lock"
  flock 9 || die "cannot lock $VENV/.kin_dyn_setup.lock"
fi
if [ ! -x "$VENV/bin/python" ]; then
  PY="${KIN_DYN_PYTHON:-}"
  if [ -z "$PY" ]; then
    if command -v python3.11 >/dev/null; then PY=python3.11; else PY=python3; fi
  fi
  "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
    || die "$PY is not Python 3.11 (the ros-* wheels are cp311 only); set KIN_DYN_PYTHON"
  log "creating venv $VENV with $PY (ROS 2 $DISTRO)"
  "$PY" -m venv "$VENV" || die "python venv creation failed (Debian: apt-get install python3-venv)"
fi
VPY="$VENV/bin/python"
"$VPY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null \
  || die "$VPY is not a working Python 3.11; remove $VENV or set KIN_DYN_VENV"
HAS="$(_kdr_venv_distro "$VENV")"
[ -z "$HAS" ] || [ "$HAS" = "$DISTRO" ] \
  || die "$VENV holds ROS 2 $HAS, not $DISTRO: use another KIN_DYN_VENV"
mkdir -p "$STATE" "$LOGS"
# git ignores the venv whatever its name (.venv-kilted...), as Python >= 3.13's venv does.
[ -e "$VENV/.gitignore" ] || printf '# created by kin_dyn_ros scripts/setup_env.sh\n*\n' >"$VENV/.gitignore"
SITE="$VENV/lib/python3.11/site-packages"
PIP=("$VPY" -m pip --disable-pip-version-check --no-input)

# Library path for running the wheels' tools without their re-exec bootstrapper.
ld_path() {
  local d p="$OVERLAY/lib:$VENV/lib"
  for d in "$SITE"/ros_*.libs; do [ -d "$d" ] && p="$p:$d"; done
  printf '%s' "$p"
}

# ---------------------------------------------------------------- 2. the wheelhouse
# The pinned wheels are downloaded once into $WHEELHOUSE (shared by the venvs of every
# distribution and checkout) and installed from there with --no-index: the files shared by
# Jazzy and Kilted (numpy, scipy, matplotlib, the test references...) are not fetched again,
# whatever pip's own cache keeps.

# The pins (name==version) of the requirement files that have no wheel in the wheelhouse.
missing_pins() {
  "$VPY" - "$WHEELHOUSE" "$@" <<'EOF'
import os, re, sys
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()
have = {(norm(f.split("-")[0]), f.split("-")[1])
        for f in os.listdir(sys.argv[1]) if f.endswith(".whl")}
for path in sys.argv[2:]:
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?==(\S+)", line)
        if not m:
            sys.exit(f"{path}: not an exact pin: {line}")
        if (norm(m.group(1)), m.group(3)) not in have:
            print(f"{m.group(1)}=={m.group(3)}")
EOF
}

# Download the missing pins of the given requirement files, in 4 parallel pip processes
# (most of the time is per-file latency), each into its own folder, then move the files in
# (a rename: a wheel is never seen half-written). An sdist (empy) is built into a wheel once,
# with the pinned setuptools and wheel, installed first (pip would otherwise fetch the
# newest ones into a throw-away build environment).
fetch_wheels() {
  mkdir -p "$WHEELHOUSE"
  local missing tools tmp k n
  missing="$(missing_pins "$@")" || die "cannot read the requirement files"
  tmp="$(mktemp -d "$WHEELHOUSE/.incoming.XXXXXX")"
  grep -hE '^(setuptools|wheel)==' "$REQ" >"$tmp/tools.txt" \
    || die "$REQ pins no setuptools and wheel"
  tools="$(missing_pins "$tmp/tools.txt")"
  if [ -n "$tools" ]; then
    printf '%s\n' "$tools" >"$tmp/tools-missing.txt"
    run_logged "$LOGS/download-tools.log" "${PIP[@]}" download --no-deps -d "$tmp/tools" \
      -r "$tmp/tools-missing.txt"
    find "$tmp/tools" -name '*.whl' -exec mv -f {} "$WHEELHOUSE/" \;
  fi
  run_logged "$LOGS/install-tools.log" "${PIP[@]}" install --no-index --find-links \
    "$WHEELHOUSE" --no-deps -r "$tmp/tools.txt"
  missing="$(missing_pins "$@")"
  if [ -z "$missing" ]; then
    rm -rf "$tmp"
    log "wheelhouse $WHEELHOUSE has every pinned wheel"
    return 0
  fi
  n="$(printf '%s\n' "$missing" | wc -l)"
  log "downloading $n packages into $WHEELHOUSE (logs: $LOGS/download-*.log)"
  for k in 0 1 2 3; do
    printf '%s\n' "$missing" | awk -v k="$k" 'NR % 4 == k' >"$tmp/pins-$k.txt"
    if [ -s "$tmp/pins-$k.txt" ]; then
      start_job "download ($k)" "$LOGS/download-$k.log" "${PIP[@]}" download --no-deps \
        --no-build-isolation -d "$tmp/$k" -r "$tmp/pins-$k.txt"
    fi
  done
  wait_jobs
  find "$tmp" -mindepth 2 -maxdepth 2 -name '*.whl' -exec mv -f {} "$WHEELHOUSE/" \;
  local sdist
  while IFS= read -r -d '' sdist; do
    log "building a wheel of $(basename "$sdist") (log: $LOGS/sdist.log)"
    run_logged "$LOGS/sdist.log" "${PIP[@]}" wheel --no-deps --no-build-isolation \
      -w "$tmp/built" "$sdist"
    find "$tmp/built" -name '*.whl' -exec mv -f {} "$WHEELHOUSE/" \;
  done < <(find "$tmp" -mindepth 2 -maxdepth 2 \( -name '*.tar.gz' -o -name '*.zip' \) -print0)
  rm -rf "$tmp"
  missing="$(missing_pins "$@")"
  [ -z "$missing" ] || die "not in the wheelhouse after the download: $missing"
}

# ---------------------------------------------------------------- the kernels, started
# Step 6's compilation starts as soon as NumPy, SciPy, numba and the URDF parser are in
# (step 3), from the checkout, beside the rest of pip's install and the overlay builds (the
# kernels import nothing from ROS): on a fresh clone the two cores are busy throughout
# instead of one core during pip's install and the compilation's last part.
CORE_PINS='^(numpy|scipy|numba|llvmlite|urdfdom-py|lxml|pyyaml)=='
KERNELS_PID=
start_kernels() {
  [ -f "$REPO/setup.py" ] || return 0
  log "compiling the dynamics kernels beside the next steps (log: $LOGS/kernels.log)"
  (cd "$REPO" && exec env -u KIN_DYN_JIT _ROS_WHEELS_BOOTSTRAP_COMPLETE=1 \
     "$VPY" -m kin_dyn_ros.dynamics) >"$LOGS/kernels.log" 2>&1 &
  KERNELS_PID=$!
}

# ---------------------------------------------------------------- 3. pip install
# (the repo path is part of it: the overlay's CMake build trees remember their sources)
REQ_HASH="$(hash_pins "$REQ")"
PIP_HASH="$(hash_lines "$REQ_HASH" "$(hash_inputs "$VENV/pyvenv.cfg")" "$REPO" \
  "$DISTRO" "$PIP_RECIPE")"
TEST_HASH="$(hash_lines "$PIP_HASH" "$(hash_pins "$TEST_REQ")")"
NEED_PIP=1; NEED_TEST=0
if stamp_ok pip "$PIP_HASH"; then
  NEED_PIP=0
  log "python packages of ROS 2 $DISTRO up to date"
fi
if [ "$WITH_TESTS" = 1 ] && { [ "$NEED_PIP" = 1 ] || ! stamp_ok test "$TEST_HASH"; }; then
  NEED_TEST=1
fi
fetch=()
[ "$NEED_PIP" = 0 ] || fetch+=("$REQ")
[ "$NEED_TEST" = 0 ] || fetch+=("$TEST_REQ")
[ "${#fetch[@]}" = 0 ] || fetch_wheels "${fetch[@]}"

if [ "$NEED_PIP" = 1 ]; then
  if [ -f "$STATE/pins.stamp" ] && [ "$(cat "$STATE/pins.stamp")" != "$REQ_HASH" ]; then
    rm -rf "$BUILD_ROOT"   # the pinned set changed: rebuild the overlay from scratch
  fi
  rm -f "$STATE"/*.stamp
  # the dynamics core's own packages first: its kernels then compile while pip installs
  # the rest and the overlay builds (step 6)
  core_pins="$(grep -E "$CORE_PINS" "$REQ" || true)"
  if [ -n "$core_pins" ]; then
    log "pip install the dynamics core's packages (log: $LOGS/pip-core.log)"
    run_logged "$LOGS/pip-core.log" "${PIP[@]}" install --no-index --find-links \
      "$WHEELHOUSE" --no-deps -r /dev/stdin <<<"$core_pins"
    start_kernels
  fi
  log "pip install -r scripts/requirements-$DISTRO.txt (log: $LOGS/pip.log)"
  run_logged "$LOGS/pip.log" "${PIP[@]}" install --no-index --find-links "$WHEELHOUSE" \
    -r "$REQ"
  # Rewrite the wheel builder's Python paths in the exported CMake targets.
  PY_INC="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  [ -f "$PY_INC/Python.h" ] \
    || die "Python.h not found in $PY_INC (Debian: apt-get install python3.11-dev)"
  n=0
  while IFS= read -r -d '' f; do
    sed -i -e "s#$WHEEL_PY_PREFIX/include/python3.11#$PY_INC#g" \
           -e "s#$WHEEL_PY_PREFIX/lib/python3.11/site-packages#$SITE#g" "$f"
    n=$((n + 1))
  done < <(grep -rlZ --include='*.cmake' -F "$WHEEL_PY_PREFIX/" "$VENV/share" || true)
  log "rewrote wheel-builder paths in $n CMake files"
  if left="$(grep -rl --include='*.cmake' -F "$WHEEL_PY_PREFIX/" "$VENV/share")"; then
    die "unexpected $WHEEL_PY_PREFIX paths left in: $left"
  fi
  stamp_set pins "$REQ_HASH"
  stamp_set pip "$PIP_HASH"
fi
[ "$(_kdr_venv_distro "$VENV")" = "$DISTRO" ] \
  || die "$VENV does not hold ros-$DISTRO-rclpy after the install; re-run with --force"
[ -n "$KERNELS_PID" ] || start_kernels

# ---------------------------------------------------------------- 4. at the same time
# the two overlay builds, the test references, the editable install of kin_dyn_ros.

# 4a. the interface overlay
pkg_dirs=()
for p in "${INTERFACE_PKGS[@]}"; do pkg_dirs+=("$REPO/$p"); done
OVERLAY_HASH="$(hash_lines "$PIP_HASH" "$(hash_inputs "${pkg_dirs[@]}")" "$OVERLAY_RECIPE")"
if [ "$CLEAN" = 1 ]; then rm -rf "$BUILD_ROOT"; fi
NEED_OVERLAY=0
if stamp_ok overlay "$OVERLAY_HASH" && [ -d "$OVERLAY" ]; then
  log "interface overlay up to date ($OVERLAY)"
else
  NEED_OVERLAY=1
  rm -f "$STATE/overlay.stamp"
  rm -rf "$OVERLAY"   # drop stale installed interfaces; the build trees stay incremental
  JOBS="$(nproc 2>/dev/null || echo 2)"
  # Ninja when there is one (Debian: ninja-build): some 15% faster than make here.
  if command -v ninja >/dev/null; then GENERATOR=Ninja; else GENERATOR="Unix Makefiles"; fi
  for p in "${INTERFACE_PKGS[@]}"; do
    name="$(basename "$p")"
    bdir="$BUILD_ROOT/$name"
    if [ -f "$bdir/CMakeCache.txt" ] \
       && ! grep -qxF "CMAKE_GENERATOR:INTERNAL=$GENERATOR" "$bdir/CMakeCache.txt"; then
      rm -rf "$bdir"     # made by another generator: CMake would refuse it
    fi
    log "building $p -> $OVERLAY (log: $LOGS/$name.log)"
    # shellcheck disable=SC2016  # $1..$6 expand in the inner bash
    start_job "building $p" "$LOGS/$name.log" env \
      AMENT_PREFIX_PATH="$OVERLAY:$VENV" \
      LD_LIBRARY_PATH="$(ld_path)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      _ROS_WHEELS_BOOTSTRAP_COMPLETE=1 \
      bash -c 'cmake -G "$6" -S "$1" -B "$2" -DCMAKE_INSTALL_PREFIX="$3" \
                 -DCMAKE_PREFIX_PATH="$3;$4" -DPython3_EXECUTABLE="$4/bin/python" \
                 -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
               && cmake --build "$2" -j "$5" && cmake --install "$2"' \
      _ "$REPO/$p" "$bdir" "$OVERLAY" "$VENV" "$JOBS" "$GENERATOR"
  done
fi

# 4b. the test references: every dependency is pinned, so --no-deps, and pip check after
if [ "$NEED_TEST" = 1 ]; then
  rm -f "$STATE/test.stamp"
  log "pip install -r scripts/requirements-test.txt (log: $LOGS/pip-test.log)"
  # shellcheck disable=SC2016  # expanded by the inner bash
  start_job "pip install -r scripts/requirements-test.txt" "$LOGS/pip-test.log" bash -c \
    'wh="$1" req="$2"; shift 2; "$@" install --no-index --find-links "$wh" --no-deps -r "$req" \
     && "$@" check' _ "$WHEELHOUSE" "$TEST_REQ" "${PIP[@]}"
elif [ "$WITH_TESTS" = 1 ]; then
  log "test references up to date"
fi

# 4c. kin_dyn_ros (editable)
NEED_EDITABLE=0
if [ -f "$REPO/setup.py" ]; then
  DEV_HASH="$(hash_inputs "$REPO/setup.py" "$REPO/setup.cfg" "$REPO/pyproject.toml" \
    "$REPO/package.xml" "$REPO/resource")"
  # with the checkout's path: a venv shared by two checkouts (KIN_DYN_VENV) points its
  # editable install at the one that ran this script last, not at whichever ran it first
  DEV_HASH="$(hash_lines "$PIP_HASH" "$DEV_HASH" "$REPO")"
  if stamp_ok editable "$DEV_HASH"; then
    log "kin_dyn_ros editable install up to date"
  else
    NEED_EDITABLE=1
    rm -f "$STATE/editable.stamp"
    log "pip install -e $REPO (log: $LOGS/editable.log)"
    start_job "pip install -e $REPO" "$LOGS/editable.log" "${PIP[@]}" install \
      --no-deps --no-build-isolation --no-index -e "$REPO"
  fi
else
  rm -f "$STATE/editable.stamp"
  log "no setup.py in $REPO yet: skipping the editable install of kin_dyn_ros"
fi

wait_jobs
[ "$NEED_OVERLAY" = 0 ] || stamp_set overlay "$OVERLAY_HASH"
[ "$NEED_TEST" = 0 ] || stamp_set test "$TEST_HASH"
[ "$NEED_EDITABLE" = 0 ] || stamp_set editable "$DEV_HASH"
[ "$NEED_OVERLAY$NEED_TEST$NEED_EDITABLE" = 000 ] || log "parallel steps done"

if [ -f "$REPO/setup.py" ]; then
  # An editable install does not install setup.py's data_files, so register the package
  # in the ament index by hand, with its share directory linked to the repo root (as
  # colcon --symlink-install would): get_package_share_directory('kin_dyn_ros') then
  # finds package.xml, config/, launch/... of the working tree.
  mkdir -p "$VENV/share/ament_index/resource_index/packages"
  : >"$VENV/share/ament_index/resource_index/packages/kin_dyn_ros"
  if [ -L "$VENV/share/kin_dyn_ros" ] || [ ! -e "$VENV/share/kin_dyn_ros" ]; then
    ln -sfn "$REPO" "$VENV/share/kin_dyn_ros"
  fi
fi

# ---------------------------------------------------------------- 5. check
# scripts/env.sh (sourced by users) is static: it finds the venv from KIN_DYN_DISTRO /
# KIN_DYN_VENV or the default location, so nothing is generated here. Verify the result
# through it.
CHECK='import rclpy, tf2_msgs.msg as t, kin_dyn_ros_interfaces.msg as m, kin_dyn_ros_interfaces.srv as s
import numba  # pinned: without it (or refusing this NumPy) the core would fall back to NumPy
for T in (t.TFMessage, m.FloatingBaseState, s.GetJacobian):  # loads the C typesupport
    T.__class__.__import_type_support__()
    assert T._TYPE_SUPPORT is not None, T'
if [ "$WITH_TESTS" = 1 ]; then
  CHECK="$CHECK
import pytest, pinocchio, idyntree, adam, casadi, klampt"
fi
if ! KIN_DYN_VENV="$VENV" KIN_DYN_DISTRO="$DISTRO" bash -c \
     'source "$1/scripts/env.sh" && python -c "$2"' _ "$REPO" "$CHECK" >"$LOGS/check.log" 2>&1; then
  cat "$LOGS/check.log" >&2
  rm -f "$STATE/overlay.stamp" "$STATE/test.stamp"
  die "import check failed; re-run with --force (or --clean)"
fi
case "$REPO" in
  "$PWD") envsh=scripts/env.sh ;;
  "$PWD"/*) envsh="${REPO#"$PWD"/}/scripts/env.sh" ;;
  *) envsh="$REPO/scripts/env.sh" ;;
esac

# ---------------------------------------------------------------- 6. the kernels
# The dynamics core's numba kernels, compiled (or loaded from numba's disk cache, ~1 s)
# beside the steps above (start_kernels), so that no test, demo or node start pays the cold
# compile (~1 min). On every run, not only when a stamp changed: numba keys its cache by the
# kernels' source file, its path and its contents (numba 0.68; its modification time in older
# ones), which no stamp here sees (a clone elsewhere, a checkout or an edit of
# kin_dyn_ros/dynamics/*.py compiles once more). In the cache
# directory the tests and the node use (NUMBA_CACHE_DIR when set, else ROS_HOME's or
# ~/.cache's kin_dyn_ros/numba: kin_dyn_ros/dynamics/compiled.py); KIN_DYN_JIT is ignored
# here (the cache is filled for the runs that use it). Without numba (or with a NumPy it
# refuses) the line says that the NumPy core runs, and the set-up goes on. Should the
# compilation beside the install fail, it runs once more here, through scripts/env.sh.
if [ -f "$REPO/setup.py" ]; then
  if [ -z "$KERNELS_PID" ] || ! wait "$KERNELS_PID"; then
    [ -z "$KERNELS_PID" ] || log "the kernels' compilation beside the install failed \
($(grep -v '^[[:space:]]*$' "$LOGS/kernels.log" | tail -n 1 | cut -c1-160)); once more"
    KERNELS_PID=
    mv -f "$LOGS/kernels.log" "$LOGS/kernels-beside.log" 2>/dev/null || true
    log "compiling the dynamics kernels, ~1 min unless cached (log: $LOGS/kernels.log)"
    if ! env -u KIN_DYN_JIT KIN_DYN_VENV="$VENV" KIN_DYN_DISTRO="$DISTRO" bash -c \
         'source "$1/scripts/env.sh" && cd "$1" && python -m kin_dyn_ros.dynamics' _ "$REPO" \
         >"$LOGS/kernels.log" 2>&1; then
      tail -n 40 "$LOGS/kernels.log" >&2
      die "python -m kin_dyn_ros.dynamics failed (full log: $LOGS/kernels.log)"
    fi
  fi
  KERNELS_PID=
  log "$(grep -v '^[[:space:]]*$' "$LOGS/kernels.log" | tail -n 1)"
fi

what="ROS 2 $DISTRO"
[ "$WITH_TESTS" = 0 ] || what="$what, with the test references"
if [ "$VENV" != "$(_kdr_default_venv "$REPO" "$DISTRO")" ]; then
  use="export KIN_DYN_VENV=$VENV; source $envsh"
elif [ "$DISTRO" != jazzy ]; then
  use="KIN_DYN_DISTRO=$DISTRO source $envsh"
else
  use="source $envsh"
fi
log "done: $VENV is ready ($what). Use it with:  $use"
