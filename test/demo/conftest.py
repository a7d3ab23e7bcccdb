"""The demo tests need the environment of scripts/env.sh (see test/ros/ros_environment.py).

Fixtures ``talos_urdf`` and ``g1_urdf``: paths of the Talos and Unitree G1 URDFs of the
example-robot-data package (PyPI ``example-robot-data``, models only since 4.4: it ships no
Python module, so the files are found through its installed distribution; with the
``example_robot_data`` loaders module installed, through its ``getModelPath``). The tests
that use them are skipped, with the reason, when the package is not installed.
"""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ros"))
from example_robots import example_robot_data_file  # noqa: E402 (test/support)
from ros_environment import require_ros_environment  # noqa: E402

require_ros_environment("demo")

TALOS = "talos_data/robots/talos_reduced.urdf"
G1 = "g1_description/urdf/g1_29dof_rev_1_0.urdf"
_MISSING = ("example-robot-data is not installed (pip install example-robot-data==6.0.0: "
            "the Talos and G1 URDFs)")


def _model(relative):
    path = example_robot_data_file(relative)
    if path is None:
        pytest.skip(_MISSING)
    return path


@pytest.fixture(scope="session")
def talos_urdf():
    return _model(TALOS)


@pytest.fixture(scope="session")
def g1_urdf():
    return _model(G1)
