# shellcheck shell=bash
# Source me (bash or zsh):  source scripts/env.sh
#                   Kilted: KIN_DYN_DISTRO=kilted source scripts/env.sh
# Activates the kin_dyn_ros venv made by scripts/setup_env.sh for a ROS 2 distribution
# (KIN_DYN_DISTRO: jazzy, the default, or kilted; KIN_DYN_VENV, else <repo>/.venv for
# jazzy and <repo>/.venv-kilted for kilted: scripts/distro.sh), puts its ROS 2 interface
# overlay on the paths, sets ROS_DISTRO, and applies the loopback-only DDS rules with the
# variables that distribution reads. Safe to source more than once, to switch distribution
# in the same shell, and from scripts using `set -eu`.

if [ -n "${BASH_SOURCE:-}" ]; then
  _kdr_self="${BASH_SOURCE[0]}"
elif [ -n "${ZSH_VERSION:-}" ]; then
  eval '_kdr_self="${(%):-%x}"'
else
  _kdr_self="$0"
fi
_kdr_repo="$(cd "$(dirname "$_kdr_self")/.." && pwd)"
# shellcheck source=scripts/distro.sh
. "$_kdr_repo/scripts/distro.sh"

_kdr_fail() {
  echo "env.sh: $1" >&2
  unset -f _kdr_fail _kdr_resolve _kdr_venv_distro _kdr_default_venv
  unset _kdr_self _kdr_repo _kdr_venv _kdr_distro _kdr_note _kdr_d _KDR_DISTROS
}
if ! _kdr_resolve "$_kdr_repo"; then
  _kdr_fail "set KIN_DYN_DISTRO to jazzy or kilted"
  # shellcheck disable=SC2317  # exit only when executed instead of sourced
  return 1 2>/dev/null || exit 1
fi
if [ ! -f "$_kdr_venv/bin/activate" ] || [ ! -d "$_kdr_venv/ros_overlay" ] \
   || [ "$(_kdr_venv_distro "$_kdr_venv")" != "$_kdr_distro" ]; then
  if [ "$_kdr_distro" = jazzy ]; then _kdr_d=; else _kdr_d=" --distro $_kdr_distro"; fi
  _kdr_fail "no kin_dyn_ros environment of ROS 2 $_kdr_distro at $_kdr_venv; run: bash $_kdr_repo/scripts/setup_env.sh$_kdr_d"
  # shellcheck disable=SC2317
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
# drop VAR PREFIX: remove the entries of the ':'-separated VAR under PREFIX/ (the venv of
# the distribution this shell used before: its libraries must not mix with this one's).
_kdr_drop() {
  eval "_kdr_cur=\"\${$1:-}\""
  _kdr_new=
  while [ -n "$_kdr_cur" ]; do
    _kdr_e="${_kdr_cur%%:*}"
    case "$_kdr_cur" in *:*) _kdr_cur="${_kdr_cur#*:}" ;; *) _kdr_cur= ;; esac
    case "$_kdr_e" in
      "$2"|"$2"/*) ;;
      *) _kdr_new="${_kdr_new:+$_kdr_new:}$_kdr_e" ;;
    esac
  done
  if [ -n "$_kdr_new" ]; then eval "export $1=\"\$_kdr_new\""; else unset "$1"; fi
  unset _kdr_cur _kdr_new _kdr_e
}

# Sourced before in this shell: the kin_dyn_ros venv it activated.
_kdr_before=
if [ -n "${VIRTUAL_ENV:-}" ] && [ -d "$VIRTUAL_ENV/.kin_dyn_setup" ]; then
  _kdr_before="$VIRTUAL_ENV"
fi
if [ -n "$_kdr_before" ] && [ "$_kdr_before" != "$_kdr_venv" ]; then
  for _kdr_v in PYTHONPATH LD_LIBRARY_PATH AMENT_PREFIX_PATH CMAKE_PREFIX_PATH; do
    _kdr_drop "$_kdr_v" "$_kdr_before"
  done
fi

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
export ROS_DISTRO="$_kdr_distro"
# Fast DDS is the only RMW installed from the wheels.
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp

# Network rule: DDS traffic stays on loopback, with the variable the distribution reads
# (the rule of kin_dyn_ros/loopback.py): Jazzy and Kilted read
# ROS_AUTOMATIC_DISCOVERY_RANGE; Jazzy reads ROS_LOCALHOST_ONLY only to warn that it is
# deprecated (and then ignores the range), Kilted does not read it.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
if [ -n "${ROS_LOCALHOST_ONLY:-}" ]; then
  if [ -n "$_kdr_before" ] && [ "$ROS_LOCALHOST_ONLY" = 1 ]; then
    unset ROS_LOCALHOST_ONLY     # set by an earlier env.sh of this shell
  else
    echo "env.sh: ROS_LOCALHOST_ONLY is set, which Jazzy reads only to warn that it is" \
         "deprecated and Kilted not at all; ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST keeps" \
         "DDS on loopback: unset ROS_LOCALHOST_ONLY" >&2
  fi
fi
# A domain of this shell's own so that parallel runs do not meet: an explicit
# ROS_DOMAIN_ID is kept; one picked here at random is recorded in KIN_DYN_DOMAIN_AUTO so
# that the tests can tell it from a user's choice (they then pick their own per file).
if [ -z "${ROS_DOMAIN_ID:-}" ] || [ "$ROS_DOMAIN_ID" = "${KIN_DYN_DOMAIN_AUTO:-}" ]; then
  if [ -z "${ROS_DOMAIN_ID:-}" ]; then
    if [ -n "${RANDOM:-}" ]; then
      ROS_DOMAIN_ID=$(( RANDOM % 100 + 1 ))
    else
      ROS_DOMAIN_ID=$(( $$ % 100 + 1 ))
    fi
  fi
  export KIN_DYN_DOMAIN_AUTO="$ROS_DOMAIN_ID"
else
  unset KIN_DYN_DOMAIN_AUTO
fi
export ROS_DOMAIN_ID

unset -f _kdr_prepend _kdr_drop _kdr_libs _kdr_fail _kdr_resolve _kdr_venv_distro \
  _kdr_default_venv
unset _kdr_self _kdr_repo _kdr_venv _kdr_overlay _kdr_site _kdr_d _kdr_v _kdr_before \
  _kdr_distro _kdr_note _KDR_DISTROS
