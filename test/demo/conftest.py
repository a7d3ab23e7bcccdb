"""The demo tests need the environment of scripts/env.sh (see test/ros/ros_environment.py)."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "ros"))
from ros_environment import require_ros_environment  # noqa: E402

require_ros_environment("demo")
