"""Launch kin_dyn_node (kin_dyn_ros), optionally with rviz2. Works on Humble and Jazzy.

Arguments:
  model             URDF (or .xacro) file; when given, the node gets it as its
                    robot_description parameter. Empty (default): the node takes the
                    robot_description topic (e.g. from robot_state_publisher).
  description_topic topic the robot_description subscription is remapped to
                    (default: robot_description, relative to the namespace).
  config            parameter file (default: <share>/kin_dyn_ros/config/kin_dyn.yaml, the
                    robot-neutral defaults). Its `kin_dyn_node:` section is applied whatever
                    the namespace.
  robot_config      optional parameter file applied on top of `config`: the robot's contacts
                    and anything else robot-specific. A path, or the name of a file in
                    <share>/kin_dyn_ros/config (e.g. `icub` for config/icub.yaml). Default:
                    none (no contacts).
  namespace         namespace of the node (default: none).
  use_sim_time      use /clock (default: false).
  rviz              also start rviz2 with config/kin_dyn.rviz (default: false).

xacro and rviz2 are exec_depends of the package (rosdep installs them).

Examples:
  ros2 launch kin_dyn_ros kin_dyn.launch.py model:=/path/robot.urdf rviz:=true
  ros2 launch kin_dyn_ros kin_dyn.launch.py model:=/path/iCubGazeboV2_5.urdf robot_config:=icub
"""

import os
import subprocess

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

NODE_NAME = 'kin_dyn_node'


def _share(*parts):
    return os.path.join(get_package_share_directory('kin_dyn_ros'), *parts)


def _file_parameters(path):
    """The node's ros__parameters from a parameter file (keys `kin_dyn_node`,
    `/kin_dyn_node`, `/**`), so that they apply in any namespace."""
    with open(path, encoding='utf-8') as f:
        data = yaml.safe_load(f) or {}
    params = {}
    for key in ('/**', NODE_NAME, '/' + NODE_NAME):
        params.update((data.get(key) or {}).get('ros__parameters', {}))
    return params


def _robot_config(value):
    """Path of the robot_config argument: a file, else config/<value>[.yaml] of the package."""
    if os.path.isfile(value):
        return value
    name = value if value.endswith(('.yaml', '.yml')) else value + '.yaml'
    packaged = _share('config', name)
    if os.path.isfile(packaged):
        return packaged
    raise FileNotFoundError(f"robot_config '{value}': no such file, nor {packaged}")


def _description(model):
    """robot_description parameter value of a URDF or xacro file. xacro runs with the path
    as one argument (a path with spaces stays one), not through a command line."""
    if not model.endswith('.xacro'):
        with open(model, encoding='utf-8') as f:
            return ParameterValue(f.read(), value_type=str)
    try:
        done = subprocess.run(['xacro', model], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise RuntimeError(f"model '{model}' is a xacro file but the 'xacro' command is not "
                           "installed: sudo apt install ros-$ROS_DISTRO-xacro (rosdep "
                           "installs it with kin_dyn_ros)") from None
    if done.returncode != 0:
        raise RuntimeError(f"xacro '{model}' failed ({done.returncode}): {done.stderr.strip()}")
    return ParameterValue(done.stdout, value_type=str)


def _launch_setup(context):
    def arg(name):
        return LaunchConfiguration(name).perform(context)

    use_sim_time = arg('use_sim_time').lower() in ('true', '1', 'yes')
    params = [_file_parameters(arg('config'))]
    if arg('robot_config'):
        params.append(_file_parameters(_robot_config(arg('robot_config'))))
    params.append({'use_sim_time': use_sim_time})
    if arg('model'):
        params.append({'robot_description': _description(arg('model'))})
    node = Node(
        package='kin_dyn_ros', executable='kin_dyn_node', name=NODE_NAME,
        namespace=arg('namespace'), output='screen', parameters=params,
        remappings=[('robot_description', arg('description_topic'))])
    rviz = Node(
        package='rviz2', executable='rviz2', name='rviz2', output='screen',
        arguments=['-d', _share('config', 'kin_dyn.rviz')],
        parameters=[{'use_sim_time': use_sim_time}],
        condition=IfCondition(LaunchConfiguration('rviz')))
    return [node, rviz]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('model', default_value='',
                              description='URDF/xacro file published as robot_description'),
        DeclareLaunchArgument('description_topic', default_value='robot_description',
                              description='robot_description topic to subscribe to'),
        DeclareLaunchArgument('config', default_value=_share('config', 'kin_dyn.yaml'),
                              description='parameter file of kin_dyn_node'),
        DeclareLaunchArgument('robot_config', default_value='',
                              description='robot parameter file applied after config: a path '
                              'or a name in the package config/ folder (e.g. icub)'),
        DeclareLaunchArgument('namespace', default_value='', description='node namespace'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='use simulation time (/clock)'),
        DeclareLaunchArgument('rviz', default_value='false',
                              description='start rviz2 with config/kin_dyn.rviz'),
        OpaqueFunction(function=_launch_setup),
    ])
