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
    install_requires=["setuptools", "numpy"],
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
