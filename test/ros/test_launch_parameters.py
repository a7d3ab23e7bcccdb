"""The parameters that launch/kin_dyn.launch.py gives the node: `config` (default the
robot-neutral config/kin_dyn.yaml), then the optional `robot_config` on top of it (a path, or
a name in the package's config/ folder: `icub`), and the `model` (a URDF, or a xacro file
run through the `xacro` command: here a stand-in script on PATH, as a real process).

launch and launch_ros are not on PyPI: their classes are replaced here by recorders of their
arguments, so this runs the launch file's own logic (argument defaults, file reading, order)
anywhere; test_launch.py launches the real thing on a ROS 2 install.

Run:  python -m pytest test/ros/test_launch_parameters.py
"""

import importlib.util
import pathlib
import sys
import types

import pytest
import yaml
from parameter_files import flatten

REPO = pathlib.Path(__file__).resolve().parents[2]
LAUNCH_FILE = REPO / 'launch' / 'kin_dyn.launch.py'


class _Recorder:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _Argument(_Recorder):
    pass


class _Opaque(_Recorder):
    pass


class _Node(_Recorder):
    pass


class _LaunchConfiguration(_Recorder):
    def perform(self, context):
        return context[self.args[0]]


STUBS = {
    'launch': {'LaunchDescription': _Recorder},
    'launch.actions': {'DeclareLaunchArgument': _Argument, 'OpaqueFunction': _Opaque},
    'launch.conditions': {'IfCondition': _Recorder},
    'launch.substitutions': {'LaunchConfiguration': _LaunchConfiguration},
    'launch_ros': {},
    'launch_ros.actions': {'Node': _Node},
    'launch_ros.parameter_descriptions': {'ParameterValue': _Recorder},
}


@pytest.fixture
def launch(monkeypatch):
    """run(**arguments) -> the node's parameters, flattened and merged in order."""
    for name, attributes in STUBS.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location('kin_dyn_launch_under_test', LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entities = module.generate_launch_description().args[0]
    defaults = {e.args[0]: e.kwargs['default_value'] for e in entities
                if isinstance(e, _Argument)}
    setup = next(e.kwargs['function'] for e in entities if isinstance(e, _Opaque))

    def run(**arguments):
        node = next(a for a in setup({**defaults, **arguments}) if isinstance(a, _Node))
        merged = {}
        for params in node.kwargs['parameters']:
            merged.update(flatten('', params))
        return merged
    run.defaults = defaults
    return run


def file_parameters(path):
    return dict(flatten('', yaml.safe_load(path.read_text())['kin_dyn_node']['ros__parameters']))


NEUTRAL = file_parameters(REPO / 'config' / 'kin_dyn.yaml')
ICUB = file_parameters(REPO / 'config' / 'icub.yaml')


def test_by_default_the_neutral_config_and_no_contacts(launch):
    assert pathlib.Path(launch.defaults['config']).resolve() == \
        (REPO / 'config' / 'kin_dyn.yaml').resolve()
    assert launch.defaults['robot_config'] == ''
    params = launch()
    assert params == {**NEUTRAL, 'use_sim_time': False}
    assert 'contacts' not in params


@pytest.mark.parametrize('robot_config', ['icub', 'icub.yaml', str(REPO / 'config' / 'icub.yaml')])
def test_robot_config_adds_icubs_contacts(launch, robot_config):
    params = launch(robot_config=robot_config)
    assert params == {**NEUTRAL, **ICUB, 'use_sim_time': False}
    assert params['contacts'] == ['l_sole', 'r_sole']
    assert len(params['contact.r_sole.points']) == 12


def test_robot_config_overrides_config(launch, tmp_path):
    robot = tmp_path / 'robot.yaml'
    robot.write_text("/**:\n  ros__parameters:\n    contacts: [foot]\n    rate: 200.0\n")
    params = launch(robot_config=str(robot), use_sim_time='true')
    assert params == {**NEUTRAL, 'contacts': ['foot'], 'rate': 200.0, 'use_sim_time': True}


def test_an_unknown_robot_config_is_an_error(launch):
    with pytest.raises(FileNotFoundError, match='no_such_robot'):
        launch(robot_config='no_such_robot')


def description(params):
    """The robot_description value the launch file gave (a recorded ParameterValue)."""
    value = params['robot_description']
    assert value.kwargs == {'value_type': str}
    return value.args[0]


@pytest.fixture
def folder_with_space(tmp_path):
    folder = tmp_path / 'my robots'
    folder.mkdir()
    return folder


def test_a_urdf_model_is_read_from_its_file(launch, folder_with_space):
    model = folder_with_space / 'arm.urdf'
    model.write_text('<robot name="arm"/>')
    assert description(launch(model=str(model))) == '<robot name="arm"/>'


def test_a_xacro_model_with_a_space_in_its_path_is_one_argument(launch, folder_with_space,
                                                                 monkeypatch):
    """``Command(['xacro ', model])`` split such a path in two (shlex); the launch file now
    runs xacro with the path as one argument."""
    bin_dir = folder_with_space / 'bin'
    bin_dir.mkdir()
    xacro = bin_dir / 'xacro'
    xacro.write_text('#!/bin/sh\n[ "$#" -eq 1 ] || { echo "argc $#" >&2; exit 2; }\n'
                     'printf "expanded:"; cat "$1"\n')
    xacro.chmod(0o755)
    monkeypatch.setenv('PATH', f"{bin_dir}:{__import__('os').environ['PATH']}")
    model = folder_with_space / 'arm.urdf.xacro'
    model.write_text('<robot name="arm"/>')
    assert description(launch(model=str(model))) == 'expanded:<robot name="arm"/>'
    broken = folder_with_space / 'broken.xacro'
    with pytest.raises(RuntimeError, match='broken.xacro'):
        launch(model=str(broken))           # cat fails: xacro's error is reported


def test_a_xacro_model_without_xacro_installed_says_so(launch, folder_with_space, monkeypatch):
    monkeypatch.setenv('PATH', str(folder_with_space))     # no xacro there
    model = folder_with_space / 'arm.xacro'
    model.write_text('<robot name="arm"/>')
    with pytest.raises(RuntimeError, match='xacro.*not installed'):
        launch(model=str(model))
