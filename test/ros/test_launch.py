"""launch_pytest test of launch/kin_dyn.launch.py (iCub, in a namespace, without rviz).

launch, launch_ros and launch_pytest are not on PyPI, so in the pip-based environment this
module is reported as skipped with its reason; on a ROS 2 install (Humble or Jazzy, after
`colcon build`) it launches the installed node in a namespace with the model given as a
file and checks that it publishes ~/com for a JointState.

Run:  python -m pytest test/ros/test_launch.py   (on a ROS 2 install)
"""

import pathlib
import sys

import pytest

launch_pytest = pytest.importorskip(
    'launch_pytest', reason='launch_pytest is not installed (launch is not on PyPI): this '
    'test runs on a ROS 2 install (Humble/Jazzy) after colcon build')

import icub_models  # noqa: E402
import rclpy  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ros_helpers import spin_until, use_loopback_domain  # noqa: E402

LAUNCH_FILE = HERE.parents[1] / 'launch' / 'kin_dyn.launch.py'
DOMAIN = use_loopback_domain(67, 89)      # before the launch starts the node
NAMESPACE = 'robot1'


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
        node = rclpy.create_node('kin_dyn_launch_test', context=context)
        executor = rclpy.executors.SingleThreadedExecutor(context=context)
        executor.add_node(node)
        got = []
        node.create_subscription(PointStamped, f'/{NAMESPACE}/kin_dyn_node/com', got.append, 10)
        pub = node.create_publisher(JointState, f'/{NAMESPACE}/joint_states', 10)

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
