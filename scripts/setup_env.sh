#!/usr/bin/env bash
# Set up the development environment of kin_dyn_ros on a machine without a ROS install:
# a Python 3.11 venv with ROS 2 Jazzy from PyPI wheels (real rclpy + Fast DDS), the
# kinematics/dynamics libraries, an overlay with tf2_msgs and kin_dyn_ros_interfaces
# built by plain CMake, and kin_dyn_ros installed in editable mode.
# Recipe: /work/shared/ros2-from-pip.md.
#
# Usage:  bash scripts/setup_env.sh [--force] [--clean]   then   source scripts/env.sh
#   KIN_DYN_VENV    venv location (default: <repo>/.venv)
#   KIN_DYN_PYTHON  interpreter used to create the venv (default: python3.11, else python3)
#   --force         redo every step even if the stamps say it is up to date
#   --clean         also wipe the overlay's CMake build trees (implies --force)
#
# Idempotent: each step records a hash of its inputs (scripts/requirements.txt, this
# script, the interface packages, the repo's setup.py...) under $VENV/.kin_dyn_setup/;
# a re-run with nothing changed only checks the result (a few seconds).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${KIN_DYN_VENV:-$REPO/.venv}"
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
REQ="$REPO/scripts/requirements.txt"
OVERLAY="$VENV/ros_overlay"
STATE="$VENV/.kin_dyn_setup"
BUILD_ROOT="$STATE/build"
LOGS="$STATE/logs"
# Interface packages of the overlay, in build order (relative to the repo root).
INTERFACE_PKGS=(third_party/tf2_msgs kin_dyn_ros_interfaces)
# Paths baked into the exported CMake targets of the ros-* wheels by their builder.
WHEEL_PY_PREFIX=/opt/python/cp311-cp311

FORCE=0
CLEAN=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    --clean) FORCE=1; CLEAN=1 ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup_env.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
[ "${KIN_DYN_FORCE:-0}" = 1 ] && FORCE=1

T0=$SECONDS
log() { printf '[setup_env %3ds] %s\n' "$((SECONDS - T0))" "$*"; }
die() { printf 'setup_env.sh: ERROR: %s\n' "$*" >&2; exit 1; }

# Run a command with its output in a log file; on failure show the tail and stop.
run_logged() {
  local logfile="$1"; shift
  if ! "$@" >"$logfile" 2>&1; then
    tail -n 40 "$logfile" >&2
    die "'$*' failed (full log: $logfile; a re-run with --clean starts from scratch)"
  fi
}

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
stamp_ok() { [ "$FORCE" = 0 ] && [ -f "$STATE/$1.stamp" ] && [ "$(cat "$STATE/$1.stamp")" = "$2" ]; }
stamp_set() { printf '%s\n' "$2" >"$STATE/$1.stamp"; }

# Do not let an already sourced ROS / other venv leak into the build.
unset PYTHONPATH PYTHONHOME AMENT_PREFIX_PATH CMAKE_PREFIX_PATH COLCON_PREFIX_PATH \
      _ROS_WHEELS_BOOTSTRAP_COMPLETE 2>/dev/null || true

command -v cmake >/dev/null || die "cmake not found (Debian: apt-get install cmake)"
command -v c++ >/dev/null || command -v g++ >/dev/null \
  || die "no C++ compiler found (Debian: apt-get install build-essential)"
[ -f "$REQ" ] || die "$REQ is missing"

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
    || die "$PY is not Python 3.11 (the ros-jazzy wheels are cp311 only); set KIN_DYN_PYTHON"
  log "creating venv $VENV with $PY"
  "$PY" -m venv "$VENV" || die "python venv creation failed (Debian: apt-get install python3-venv)"
fi
VPY="$VENV/bin/python"
"$VPY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null \
  || die "$VPY is not a working Python 3.11; remove $VENV or set KIN_DYN_VENV"
mkdir -p "$STATE" "$LOGS"
SITE="$VENV/lib/python3.11/site-packages"

# Library path for running the wheels' tools without their re-exec bootstrapper.
ld_path() {
  local d p="$OVERLAY/lib:$VENV/lib"
  for d in "$SITE"/ros_*.libs; do [ -d "$d" ] && p="$p:$d"; done
  printf '%s' "$p"
}

# ---------------------------------------------------------------- 2. pip install
# (the repo path is part of it: the overlay's CMake build trees remember their sources)
PIP_HASH="$(printf '%s\n' "$(hash_inputs "$REQ" "${BASH_SOURCE[0]}" "$VENV/pyvenv.cfg")" \
  "$REPO" | sha256sum | cut -d' ' -f1)"
if stamp_ok pip "$PIP_HASH"; then
  log "python packages up to date"
else
  rm -f "$STATE"/*.stamp
  log "pip install -r scripts/requirements.txt (log: $LOGS/pip.log)"
  run_logged "$LOGS/pip.log" "$VPY" -m pip install --disable-pip-version-check \
    --no-input -r "$REQ"
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
  # The pinned set changed: rebuild the overlay from scratch.
  rm -rf "$BUILD_ROOT"
  stamp_set pip "$PIP_HASH"
fi

# ---------------------------------------------------------------- 3. interface overlay
pkg_dirs=()
for p in "${INTERFACE_PKGS[@]}"; do pkg_dirs+=("$REPO/$p"); done
OVERLAY_HASH="$(printf '%s\n' "$PIP_HASH" "$(hash_inputs "${pkg_dirs[@]}")" | sha256sum | cut -d' ' -f1)"
if [ "$CLEAN" = 1 ]; then rm -rf "$BUILD_ROOT"; fi
if stamp_ok overlay "$OVERLAY_HASH" && [ -d "$OVERLAY" ]; then
  log "interface overlay up to date ($OVERLAY)"
else
  rm -f "$STATE/overlay.stamp"
  rm -rf "$OVERLAY"   # drop stale installed interfaces; the build trees stay incremental
  JOBS="$(nproc 2>/dev/null || echo 2)"
  for p in "${INTERFACE_PKGS[@]}"; do
    name="$(basename "$p")"
    bdir="$BUILD_ROOT/$name"
    log "building $p -> $OVERLAY (log: $LOGS/$name.log)"
    # shellcheck disable=SC2016  # $1..$5 expand in the inner bash
    run_logged "$LOGS/$name.log" env \
      AMENT_PREFIX_PATH="$OVERLAY:$VENV" \
      LD_LIBRARY_PATH="$(ld_path)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      _ROS_WHEELS_BOOTSTRAP_COMPLETE=1 \
      bash -c 'cmake -S "$1" -B "$2" -DCMAKE_INSTALL_PREFIX="$3" \
                 -DCMAKE_PREFIX_PATH="$3;$4" -DPython3_EXECUTABLE="$4/bin/python" \
                 -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
               && cmake --build "$2" -j "$5" && cmake --install "$2"' \
      _ "$REPO/$p" "$bdir" "$OVERLAY" "$VENV" "$JOBS"
  done
  stamp_set overlay "$OVERLAY_HASH"
fi

# ---------------------------------------------------------------- 4. kin_dyn_ros (editable)
if [ -f "$REPO/setup.py" ]; then
  DEV_HASH="$(hash_inputs "$REPO/setup.py" "$REPO/setup.cfg" "$REPO/pyproject.toml" \
    "$REPO/package.xml" "$REPO/resource")"
  # with the checkout's path: a venv shared by two checkouts (KIN_DYN_VENV) points its
  # editable install at the one that ran this script last, not at whichever ran it first
  DEV_HASH="$(printf '%s\n%s\n%s\n' "$PIP_HASH" "$DEV_HASH" "$REPO" | sha256sum | cut -d' ' -f1)"
  if stamp_ok editable "$DEV_HASH"; then
    log "kin_dyn_ros editable install up to date"
  else
    log "pip install -e $REPO (log: $LOGS/editable.log)"
    run_logged "$LOGS/editable.log" "$VPY" -m pip install --disable-pip-version-check \
      --no-input --no-deps --no-build-isolation -e "$REPO"
    stamp_set editable "$DEV_HASH"
  fi
  # An editable install does not install setup.py's data_files, so register the package
  # in the ament index by hand, with its share directory linked to the repo root (as
  # colcon --symlink-install would): get_package_share_directory('kin_dyn_ros') then
  # finds package.xml, config/, launch/... of the working tree.
  mkdir -p "$VENV/share/ament_index/resource_index/packages"
  : >"$VENV/share/ament_index/resource_index/packages/kin_dyn_ros"
  if [ -L "$VENV/share/kin_dyn_ros" ] || [ ! -e "$VENV/share/kin_dyn_ros" ]; then
    ln -sfn "$REPO" "$VENV/share/kin_dyn_ros"
  fi
else
  rm -f "$STATE/editable.stamp"
  log "no setup.py in $REPO yet: skipping the editable install of kin_dyn_ros"
fi

# ---------------------------------------------------------------- 5. check
# scripts/env.sh (sourced by users) is static: it finds the venv from KIN_DYN_VENV or
# the default location, so nothing is generated here. Verify the result through it.
CHECK='import rclpy, tf2_msgs.msg as t, kin_dyn_ros_interfaces.msg as m, kin_dyn_ros_interfaces.srv as s
for T in (t.TFMessage, m.FloatingBaseState, s.GetJacobian):  # loads the C typesupport
    T.__class__.__import_type_support__()
    assert T._TYPE_SUPPORT is not None, T'
if ! KIN_DYN_VENV="$VENV" bash -c 'source "$1/scripts/env.sh" && python -c "$2"' \
     _ "$REPO" "$CHECK" >"$LOGS/check.log" 2>&1; then
  cat "$LOGS/check.log" >&2
  rm -f "$STATE/overlay.stamp"
  die "import check failed; re-run with --force (or --clean)"
fi
case "$REPO" in
  "$PWD") envsh=scripts/env.sh ;;
  "$PWD"/*) envsh="${REPO#"$PWD"/}/scripts/env.sh" ;;
  *) envsh="$REPO/scripts/env.sh" ;;
esac
log "done: $VENV is ready. Use it with:  source $envsh"
if [ "$VENV" != "$REPO/.venv" ]; then
  log "(this venv is not the default one: export KIN_DYN_VENV=$VENV before sourcing)"
fi
