"""ament_python setup for kin_dyn_ros (version kept equal to package.xml's)."""

from glob import glob
import re

from setuptools import find_packages, setup

PACKAGE = "kin_dyn_ros"
with open("package.xml", encoding="utf-8") as f:
    VERSION = re.search(r"<version>([^<]+)</version>", f.read()).group(1)

setup(
    name=PACKAGE,
    version=VERSION,
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        ("share/" + PACKAGE + "/launch", glob("launch/*.launch.py")),
        ("share/" + PACKAGE + "/config", glob("config/*")),
    ],
    # The Python dependencies of package.xml's exec_depends, under their PyPI names (rclpy,
    # the message packages and launch come from ROS); test/ros/test_package_manifest.py
    # checks that the two lists agree.
    install_requires=["setuptools", "numpy", "scipy", "numba", "PyYAML", "urdfdom-py"],
    # The demo (python -m kin_dyn_ros.demo), a development tool: pip install .[demo]
    extras_require={"demo": ["matplotlib", "mcap-ros2-support", "icub-models"]},
    zip_safe=True,
    maintainer="kin_dyn_ros maintainers",
    maintainer_email="kin-dyn-ros@example.com",
    description="Floating-base kinematics and dynamics of humanoids for ROS 2",
    license="BSD-3-Clause",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "kin_dyn_node = kin_dyn_ros.node:main",
        ],
    },
)
