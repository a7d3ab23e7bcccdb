"""The parameters that launch/kin_dyn.launch.py gives the node: `config` (default the
robot-neutral config/kin_dyn.yaml), then the optional `robot_config` on top of it (a path, or
a name in the package's config/ folder: `icub`).

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
    'launch.substitutions': {'Command': _Recorder, 'LaunchConfiguration': _LaunchConfiguration},
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
