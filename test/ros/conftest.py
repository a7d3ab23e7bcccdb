"""Fixtures of the ROS tests; they need the environment of scripts/env.sh
(:mod:`ros_environment`)."""

import pytest

from ros_environment import require_ros_environment

require_ros_environment("ROS")


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
