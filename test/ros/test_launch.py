"""launch_pytest test of launch/kin_dyn.launch.py (iCub, in a namespace, without rviz).

It runs where the launch_pytest plugin is active in the running pytest: on a ROS 2 install
(Humble, Jazzy or newer, after `colcon build`) under `colcon test`, whose pytest is the
distribution's (python3-pytest: 6.2 on Humble, 7.4 on Jazzy and Kilted; the whole suite
also passes under 7.4.4 in the pip environment). There it launches the installed node in a
namespace with the model given as a file and checks that it publishes ~/com for a
JointState. Elsewhere it is reported as skipped with its reason: in the pip-based
environment (launch, launch_ros and launch_pytest are not on PyPI), and where launch_pytest
is importable but its plugin is not loaded (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1); without the
plugin the launch mark would be ignored and the test would wait 30 s for a node that nobody
started.

A newer pytest installed over the distribution's (pip) does not reach this file: where
launch_testing is installed, pytest >= 9 stops before collecting anything with
`PluginValidationError` (launch_testing's plugin implements `pytest_pycollect_makemodule(path,
parent)`, whose `path` argument pytest 9 removed: ros2/launch#979). Use the distribution's
pytest for `colcon test` (`python3 -m pytest --version` tells which one runs).

Run:  colcon test --packages-select kin_dyn_ros   (on a ROS 2 install), or
      python -m pytest test/ros/test_launch.py
"""

import pathlib
import sys

import pytest

launch_pytest = pytest.importorskip(
    'launch_pytest', reason='launch_pytest is not installed (launch is not on PyPI): this '
    'test runs under colcon test on a ROS 2 install (Humble/Jazzy or newer)')

# The names under which pytest registers the plugin: its pytest11 entry point, or `-p`.
PLUGIN_NAMES = ('launch_pytest', 'launch_pytest.plugin')
NOT_ACTIVE = ('the launch_pytest plugin is not active in this pytest (plugin autoload '
              'disabled?): this test runs under colcon test on a ROS 2 install with the '
              "distribution's pytest")

import icub_models  # noqa: E402
import rclpy  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ros_helpers import module_namespace, spin_until, use_loopback_domain  # noqa: E402

LAUNCH_FILE = HERE.parents[1] / 'launch' / 'kin_dyn.launch.py'
DOMAIN = use_loopback_domain(67, 89)      # before the launch starts the node
NAMESPACE = module_namespace(__name__)     # the launched node's, and the test node's


@pytest.fixture(autouse=True, scope='module')
def launch_pytest_plugin_active(request):
    """Skip, with the reason, unless the launch_pytest plugin is registered with the running
    pytest (importable is not enough: the launch mark needs the plugin)."""
    if not any(request.config.pluginmanager.has_plugin(name) for name in PLUGIN_NAMES):
        pytest.skip(NOT_ACTIVE)


@launch_pytest.fixture
def launch_description():
    model = icub_models.get_model_file('iCubGazeboV2_5')
    return LaunchDescription([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
            launch_arguments={'model': str(model), 'namespace': NAMESPACE,
                              'rviz': 'false'}.items()),
        launch_pytest.actions.ReadyToTest(),
    ])


@pytest.mark.launch(fixture=launch_description)
def test_launched_node_publishes_com():
    context = rclpy.context.Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    try:
        node = rclpy.create_node('kin_dyn_launch_test', namespace=NAMESPACE, context=context)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        got = []
        node.create_subscription(PointStamped, 'kin_dyn_node/com', got.append, 10)
        pub = node.create_publisher(JointState, 'joint_states', 10)

        def publish():
            msg = JointState(name=['r_knee'], position=[0.3])
            msg.header.stamp = node.get_clock().now().to_msg()
            pub.publish(msg)

        assert spin_until(executor, lambda: got, timeout_s=30.0, on_tick=publish), \
            'no ~/com from the launched node'
        assert got[-1].header.frame_id == 'odom'
        executor.shutdown()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
