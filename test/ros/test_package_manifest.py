"""package.xml declares what the node imports.

Every module that the node's code (kin_dyn_ros, without the demo) and the launch file import
is the standard library, kin_dyn_ros itself, or an ``exec_depend`` of package.xml under its
rosdep key: on a robot, ``rosdep install`` then brings everything the node needs. The demo
(kin_dyn_ros/demo: matplotlib, mcap, icub-models) is a development tool that
scripts/setup_env.sh installs, not part of what the node needs.

Run:  python -m pytest test/ros/test_package_manifest.py
"""

import ast
import pathlib
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Python modules whose rosdep key is not their name
ROSDEP_KEYS = {'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'yaml': 'python3-yaml',
               'urdf_parser_py': 'urdfdom_py'}
NODE_SOURCES = sorted(p for p in (REPO / 'kin_dyn_ros').rglob('*.py') if 'demo' not in p.parts)
LAUNCH_SOURCES = sorted((REPO / 'launch').glob('*.py'))


def exec_depends():
    root = ET.parse(REPO / 'package.xml').getroot()
    return {e.text.strip() for tag in ('depend', 'exec_depend') for e in root.iter(tag)}


def imported_modules(path):
    """Top-level names of the absolute imports in a source file (any scope)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split('.')[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split('.')[0])
    return names


@pytest.mark.parametrize('path', NODE_SOURCES + LAUNCH_SOURCES,
                         ids=lambda p: str(p.relative_to(REPO)))
def test_every_import_is_declared(path):
    declared = exec_depends()
    missing = sorted(ROSDEP_KEYS.get(name, name) for name in imported_modules(path)
                     if name not in sys.stdlib_module_names and name != 'kin_dyn_ros'
                     and ROSDEP_KEYS.get(name, name) not in declared)
    assert not missing, f'{path.name} imports {missing}, not exec_depends of package.xml'


def test_the_sources_are_found():
    assert len(NODE_SOURCES) > 20 and LAUNCH_SOURCES
    assert {'rclpy', 'numpy'} <= imported_modules(REPO / 'kin_dyn_ros' / 'node' / 'kin_dyn_node.py')
