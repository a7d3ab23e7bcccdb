"""Loopback-only DDS discovery, with the variables the running ROS 2 distribution reads.

Humble and older read ``ROS_LOCALHOST_ONLY=1``. Iron and newer read
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``: Jazzy still reads ``ROS_LOCALHOST_ONLY``, to
warn that it is deprecated (and then ignores the range), Kilted no longer reads it. The
distribution is ``$ROS_DISTRO`` (set by a ROS install's setup file and by
scripts/env.sh); when it is unknown both are set, so that the traffic stays on loopback
whatever reads them.

Used by the demo, the benchmarks and the tests (and mirrored by scripts/env.sh).
"""

import os

__all__ = ["loopback_environment", "set_loopback_environment"]

# Distributions that read ROS_LOCALHOST_ONLY and not ROS_AUTOMATIC_DISCOVERY_RANGE.
_LOCALHOST_ONLY_DISTROS = ("ardent", "bouncy", "crystal", "dashing", "eloquent", "foxy",
                           "galactic", "humble")


def loopback_environment(distro=None):
    """{variable: value} keeping DDS discovery on this machine under ROS 2 ``distro``
    (default ``$ROS_DISTRO``); a value ``None`` means: unset it (the distribution reads it
    only to warn)."""
    if distro is None:
        distro = os.environ.get("ROS_DISTRO", "")
    distro = distro.strip().lower()
    if distro in _LOCALHOST_ONLY_DISTROS:
        return {"ROS_LOCALHOST_ONLY": "1", "ROS_AUTOMATIC_DISCOVERY_RANGE": None}
    if distro:
        return {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_LOCALHOST_ONLY": None}
    return {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_LOCALHOST_ONLY": "1"}


def set_loopback_environment(environ=None, distro=None, keep=False):
    """Apply :func:`loopback_environment` to ``environ`` (default ``os.environ``), before
    rclpy is initialised. ``keep``: leave a variable that is already set as it is (a
    user's choice) and only add the missing ones. Returns ``environ``."""
    if environ is None:
        environ = os.environ
    for name, value in loopback_environment(distro).items():
        if keep and name in environ:
            continue
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    return environ
