"""The ROS tests need the environment of scripts/env.sh: without it they fail at once with
the command that makes it, rather than being skipped."""

import pytest

try:
    import kin_dyn_ros_interfaces.srv  # noqa: F401
    import rclpy  # noqa: F401
    import tf2_msgs.msg  # noqa: F401
except ImportError as exc:  # pragma: no cover - a setup error, not a test result
    raise pytest.UsageError(
        f"the ROS tests need the ROS 2 environment ({exc}): "
        "bash scripts/setup_env.sh && source scripts/env.sh") from exc


@pytest.fixture(scope='session')
def icub_urdf():
    """The iCubGazeboV2_5 URDF text (from the icub-models package)."""
    import pathlib

    import icub_models
    return pathlib.Path(icub_models.get_model_file('iCubGazeboV2_5')).read_text()


@pytest.fixture(scope='module')
def ref(icub_urdf):
    """The reference core, in the node's default (MIXED) representation (one per module;
    tests that change its representation restore it)."""
    from kin_dyn_ros.dynamics import KinDynComputations
    return KinDynComputations(icub_urdf)
