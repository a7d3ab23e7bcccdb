"""package.xml and setup.py declare what the node imports.

Every module that the node's code (kin_dyn_ros, without the demo) and the launch file import
is the standard library, kin_dyn_ros itself, or an ``exec_depend`` of package.xml under its
rosdep key: on a robot, ``rosdep install`` then brings everything the node needs. The demo
(kin_dyn_ros/demo: matplotlib, mcap, icub-models) is a development tool that
scripts/setup_env.sh installs, not part of what the node needs.

setup.py's ``install_requires`` names the same Python dependencies as package.xml (under
their PyPI names, plus setuptools), and its ``extras_require["demo"]`` names what the demo
imports besides those and ROS. setup.py is parsed, not executed.

Run:  python -m pytest test/ros/test_package_manifest.py
"""

import ast
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Python modules whose rosdep key is not their name
ROSDEP_KEYS = {'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'numba': 'python3-numba',
               'yaml': 'python3-yaml', 'urdf_parser_py': 'urdfdom_py'}
NODE_SOURCES = sorted(p for p in (REPO / 'kin_dyn_ros').rglob('*.py') if 'demo' not in p.parts)
LAUNCH_SOURCES = sorted((REPO / 'launch').glob('*.py'))
DEMO_SOURCES = sorted((REPO / 'kin_dyn_ros' / 'demo').rglob('*.py'))
# PyPI name of each exec_depend that is a Python package: the python3-* rosdep keys and the
# ROS packages that are also published on PyPI. Any other python3-* key fails the test.
PYPI_NAMES = {'python3-numpy': 'numpy', 'python3-scipy': 'scipy', 'python3-numba': 'numba',
              'python3-yaml': 'PyYAML', 'urdfdom_py': 'urdfdom-py'}
# PyPI name of each module the demo imports that is neither the node's nor ROS's
DEMO_PYPI_NAMES = {'matplotlib': 'matplotlib', 'mcap_ros2': 'mcap-ros2-support',
                   'icub_models': 'icub-models'}


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


def launched_programs(path):
    """The ROS packages a launch file starts (``Node(package=...)``) and the commands it runs
    (the first element of a literal list given to a ``subprocess`` call)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        for k in node.keywords:
            if k.arg == 'package' and isinstance(k.value, ast.Constant):
                found.add(k.value.value)
        func = node.func
        if isinstance(func, ast.Attribute) and getattr(func.value, 'id', '') == 'subprocess' \
                and node.args and isinstance(node.args[0], ast.List):
            found.add(ast.literal_eval(node.args[0].elts[0]))
    return found


@pytest.mark.parametrize('path', LAUNCH_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_what_a_launch_file_runs_is_declared(path):
    """`model:=robot.xacro` runs xacro, `rviz:=true` runs rviz2: rosdep must install them."""
    programs = launched_programs(path) - {'kin_dyn_ros'}
    assert programs, 'no program found: the parsing no longer matches the launch file'
    missing = sorted(programs - exec_depends())
    assert not missing, f'{path.name} runs {missing}, not exec_depends of package.xml'


def test_the_sources_are_found():
    assert len(NODE_SOURCES) > 20 and LAUNCH_SOURCES
    assert {'rclpy', 'numpy'} <= imported_modules(REPO / 'kin_dyn_ros' / 'node' / 'kin_dyn_node.py')


def canonical(requirement):
    """PEP 503 normalized project name of a requirement string ('Foo_bar>=1' -> 'foo-bar')."""
    name = re.match(r'\s*([A-Za-z0-9][A-Za-z0-9._-]*)', requirement).group(1)
    return re.sub(r'[-_.]+', '-', name).lower()


def setup_keywords():
    """The literal keyword arguments of the setup() call in setup.py (parsed, not run)."""
    tree = ast.parse((REPO / 'setup.py').read_text(), 'setup.py')
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, 'id', None) == 'setup']
    assert len(calls) == 1, 'setup.py must call setup() once'
    return {k.arg: ast.literal_eval(k.value) for k in calls[0].keywords
            if k.arg in ('install_requires', 'extras_require')}


def python_exec_depends():
    """{rosdep key: PyPI name} of package.xml's exec_depends that are Python packages."""
    keys = {k for k in exec_depends() if k.startswith('python3-') or k in PYPI_NAMES}
    unmapped = sorted(keys - PYPI_NAMES.keys())
    assert not unmapped, f'exec_depends {unmapped}: add their PyPI names to PYPI_NAMES'
    return {k: PYPI_NAMES[k] for k in keys}


def test_install_requires_names_the_python_exec_depends():
    required = {canonical(r) for r in setup_keywords().get('install_requires', [])}
    declared = {canonical(name) for name in python_exec_depends().values()}
    assert required - {'setuptools'} == declared, (
        f'setup.py install_requires {sorted(required)} vs package.xml {sorted(declared)}')
    assert 'setuptools' in required


def test_demo_extra_names_what_the_demo_imports():
    declared = exec_depends()
    installed = {canonical(r) for r in setup_keywords()['install_requires']}
    imports = set().union(*(imported_modules(p) for p in DEMO_SOURCES))
    third_party = {n for n in imports if n not in sys.stdlib_module_names
                   and n != 'kin_dyn_ros' and ROSDEP_KEYS.get(n, n) not in declared}
    needed = {canonical(DEMO_PYPI_NAMES.get(n, n)) for n in third_party} - installed
    assert {canonical(r) for r in setup_keywords()['extras_require']['demo']} == needed
    assert {'matplotlib', 'icub-models'} <= needed


def test_the_demo_sources_are_found():
    assert len(DEMO_SOURCES) >= 5
    assert 'icub_models' in imported_modules(REPO / 'kin_dyn_ros' / 'demo' / 'runner.py')
