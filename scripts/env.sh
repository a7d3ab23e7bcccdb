# shellcheck shell=bash
# Source me (bash or zsh):  source scripts/env.sh
# Activates the kin_dyn_ros venv made by scripts/setup_env.sh (KIN_DYN_VENV, default
# <repo>/.venv), puts its ROS 2 interface overlay on the paths, and applies the
# loopback-only DDS rules. Safe to source more than once and from scripts using
# `set -eu`.

if [ -n "${BASH_SOURCE:-}" ]; then
  _kdr_self="${BASH_SOURCE[0]}"
elif [ -n "${ZSH_VERSION:-}" ]; then
  eval '_kdr_self="${(%):-%x}"'
else
  _kdr_self="$0"
fi
_kdr_repo="$(cd "$(dirname "$_kdr_self")/.." && pwd)"
_kdr_venv="${KIN_DYN_VENV:-$_kdr_repo/.venv}"

if [ ! -f "$_kdr_venv/bin/activate" ] || [ ! -d "$_kdr_venv/ros_overlay" ]; then
  echo "env.sh: no kin_dyn_ros environment at $_kdr_venv; run: bash $_kdr_repo/scripts/setup_env.sh" >&2
  unset _kdr_self _kdr_repo _kdr_venv
  # shellcheck disable=SC2317  # exit only when executed instead of sourced
  return 1 2>/dev/null || exit 1
fi

# prepend VAR DIR: put DIR first in the ':'-separated VAR unless it is already there.
# shellcheck disable=SC2154  # _kdr_cur is assigned by eval
_kdr_prepend() {
  eval "_kdr_cur=\"\${$1:-}\""
  case ":$_kdr_cur:" in
    *":$2:"*) ;;
    *) eval "export $1=\"$2\${_kdr_cur:+:\$_kdr_cur}\"" ;;
  esac
  unset _kdr_cur
}

# shellcheck disable=SC1091
. "$_kdr_venv/bin/activate"
export KIN_DYN_VENV="$_kdr_venv"

_kdr_overlay="$_kdr_venv/ros_overlay"
_kdr_site="$_kdr_venv/lib/python3.11/site-packages"

# Python: the overlay's generated interface packages (the venv's own are on sys.path).
_kdr_prepend PYTHONPATH "$_kdr_overlay/lib/python3.11/site-packages"

# Shared libraries: what the wheels' bootstrapper would add (venv lib, ros_*.libs)
# plus the overlay's typesupport libraries (loaded with dlopen by rosidl/rmw).
_kdr_libs() {
  if [ -n "${ZSH_VERSION:-}" ]; then setopt local_options null_glob; fi
  for _kdr_d in "$_kdr_site"/ros_*.libs; do
    if [ -d "$_kdr_d" ]; then _kdr_prepend LD_LIBRARY_PATH "$_kdr_d"; fi
  done
}
_kdr_libs
_kdr_prepend LD_LIBRARY_PATH "$_kdr_venv/lib"
_kdr_prepend LD_LIBRARY_PATH "$_kdr_overlay/lib"
# LD_LIBRARY_PATH is complete: stop ros_wheels_bootstrapper from re-executing every
# Python process of this venv just to set it.
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

# ament index and CMake: overlay first, then the venv (where the ros-* wheels live).
_kdr_prepend AMENT_PREFIX_PATH "$_kdr_venv"
_kdr_prepend AMENT_PREFIX_PATH "$_kdr_overlay"
_kdr_prepend CMAKE_PREFIX_PATH "$_kdr_venv"
_kdr_prepend CMAKE_PREFIX_PATH "$_kdr_overlay"

export ROS_VERSION=2
export ROS_PYTHON_VERSION=3
export ROS_DISTRO=jazzy
# Fast DDS is the only RMW installed from the wheels.
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp

# Network rule: DDS traffic stays on loopback; a per-shell domain so parallel runs
# do not meet (keep an explicitly chosen ROS_DOMAIN_ID).
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_LOCALHOST_ONLY=1
if [ -z "${ROS_DOMAIN_ID:-}" ]; then
  if [ -n "${RANDOM:-}" ]; then
    ROS_DOMAIN_ID=$(( RANDOM % 100 + 1 ))
  else
    ROS_DOMAIN_ID=$(( $$ % 100 + 1 ))
  fi
fi
export ROS_DOMAIN_ID

unset -f _kdr_prepend _kdr_libs
unset _kdr_self _kdr_repo _kdr_venv _kdr_overlay _kdr_site _kdr_d
