"""The check that the ROS tests (test/ros, test/demo) run in the environment of
scripts/env.sh: without it they fail at once with the command that makes it, rather than
being skipped. Called at import by those folders' conftest.py."""

import pytest


def require_ros_environment(which):
    """Raise pytest.UsageError naming ``which`` tests when rclpy, tf2_msgs or our
    interfaces cannot be imported."""
    try:
        import kin_dyn_ros_interfaces.srv  # noqa: F401
        import rclpy  # noqa: F401
        import tf2_msgs.msg  # noqa: F401
    except ImportError as exc:  # pragma: no cover - a setup error, not a test result
        raise pytest.UsageError(
            f"the {which} tests need the ROS 2 environment ({exc}): "
            "bash scripts/setup_env.sh --with-tests && source scripts/env.sh (Kilted: "
            "--distro kilted, then KIN_DYN_DISTRO=kilted source scripts/env.sh), or "
            "bash scripts/test.sh") from exc
