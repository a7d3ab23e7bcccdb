# shellcheck shell=bash
# Which ROS 2 distribution and which venv: sourced by setup_env.sh, env.sh and test.sh
# (bash or zsh; defines functions and variables prefixed _kdr_ only).
#
#   _kdr_resolve REPO [DISTRO]   sets _kdr_distro and _kdr_venv (and _kdr_note)
#
# The distribution is DISTRO, else $KIN_DYN_DISTRO, else the one installed in
# $KIN_DYN_VENV, else jazzy. The venv is $KIN_DYN_VENV unless it holds another
# distribution, else the distribution's default: <repo>/.venv for jazzy, <repo>/.venv-<d>
# for the others, so that the environments of the distributions live side by side.

_KDR_DISTROS="jazzy kilted"     # (also spelled out in _kdr_venv_distro: zsh does not split)

# _kdr_venv_distro VENV: the distribution whose rclpy meta-package VENV holds (or nothing).
_kdr_venv_distro() {
  for _kdr_d in jazzy kilted; do
    if [ -n "$(find "$1/lib/python3.11/site-packages" -maxdepth 1 \
                 -name "ros_${_kdr_d}_rclpy-*.dist-info" 2>/dev/null)" ]; then
      printf '%s\n' "$_kdr_d"
      return 0
    fi
  done
  return 0
}

# _kdr_default_venv REPO DISTRO
_kdr_default_venv() {
  if [ "$2" = jazzy ]; then printf '%s/.venv\n' "$1"; else printf '%s/.venv-%s\n' "$1" "$2"; fi
}

_kdr_resolve() {
  _kdr_distro="${2:-${KIN_DYN_DISTRO:-}}"
  _kdr_note=
  if [ -n "$_kdr_distro" ]; then
    case " $_KDR_DISTROS " in
      *" $_kdr_distro "*) ;;
      *) echo "unknown ROS 2 distribution '$_kdr_distro' (choose one of: $_KDR_DISTROS)" >&2
         return 2 ;;
    esac
  fi
  _kdr_venv=
  if [ -n "${KIN_DYN_VENV:-}" ]; then
    _kdr_has="$(_kdr_venv_distro "$KIN_DYN_VENV")"
    if [ -z "$_kdr_distro" ]; then
      _kdr_distro="${_kdr_has:-jazzy}"
      _kdr_venv="$KIN_DYN_VENV"
    elif [ -z "$_kdr_has" ] || [ "$_kdr_has" = "$_kdr_distro" ]; then
      _kdr_venv="$KIN_DYN_VENV"
    else
      _kdr_note="KIN_DYN_VENV=$KIN_DYN_VENV holds $_kdr_has: using the $_kdr_distro default"
    fi
    unset _kdr_has
  fi
  [ -n "$_kdr_distro" ] || _kdr_distro=jazzy
  [ -n "$_kdr_venv" ] || _kdr_venv="$(_kdr_default_venv "$1" "$_kdr_distro")"
  case "$_kdr_venv" in /*) ;; *) _kdr_venv="$PWD/$_kdr_venv" ;; esac
  return 0
}
