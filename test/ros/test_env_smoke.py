"""Smoke test of the ROS 2 environment made by scripts/setup_env.sh.

Real rclpy over Fast DDS on loopback: a node publishes a tf2_msgs/msg/TFMessage on /tf
and receives it with its own subscription, and serves and calls a
kin_dyn_ros_interfaces/srv/GetJacobian service. Only rclpy APIs that Humble also has.

Run:  bash scripts/setup_env.sh && source scripts/env.sh && python -m pytest test/ros
"""

import os
import pathlib
import subprocess
import sys

import pytest


# The environment of scripts/env.sh is required: a missing package fails, never skips.
import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from kin_dyn_ros_interfaces.srv import GetJacobian  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ros_helpers import (loopback_context, module_namespace,  # noqa: E402
                         spin_until as _spin_until)

TIMEOUT_S = 10.0
NAMESPACE = module_namespace(__name__)   # the test node's (its service among them)

# lark-parser 0.12 (used by the rosidl parser that rclpy imports) uses deprecated modules.
pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')


@pytest.fixture
def ros_context():
    yield from loopback_context(1, 100)


@pytest.fixture
def node_and_executor(ros_context):
    node = rclpy.create_node('kin_dyn_env_smoke', namespace=NAMESPACE, context=ros_context)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    try:
        yield node, executor
    finally:
        executor.shutdown()
        node.destroy_node()


def test_tf_message_round_trip(node_and_executor):
    node, executor = node_and_executor
    received = []
    node.create_subscription(TFMessage, '/tf', received.append, 10)
    pub = node.create_publisher(TFMessage, '/tf', 10)

    tf = TransformStamped()
    tf.header.stamp = node.get_clock().now().to_msg()
    tf.header.frame_id = 'world'
    tf.child_frame_id = 'root_link'
    tf.transform.translation.x = 1.5
    tf.transform.rotation.z = 1.0
    tf.transform.rotation.w = 0.0
    msg = TFMessage(transforms=[tf])

    # Publish until the subscription (matched through DDS discovery) gets one (/tf is
    # shared by every node of the domain: ours is the one with our stamp).
    def ours():
        return [m for m in received if m.transforms and m.transforms[0].header.stamp == stamp]
    stamp = tf.header.stamp
    assert _spin_until(executor, ours, on_tick=lambda: pub.publish(msg)), \
        'no TFMessage received on /tf'
    got = ours()[0]
    assert isinstance(got, TFMessage)
    assert len(got.transforms) == 1
    assert got.transforms[0].header.frame_id == 'world'
    assert got.transforms[0].child_frame_id == 'root_link'
    assert got.transforms[0].transform.translation.x == 1.5
    assert got.transforms[0].transform.rotation.z == 1.0

    # The wire type is the real tf2_msgs one.
    types = dict(node.get_topic_names_and_types())
    assert types.get('/tf') == ['tf2_msgs/msg/TFMessage']


def test_get_jacobian_service_round_trip(node_and_executor):
    node, executor = node_and_executor
    requests = []

    def handle(request, response):
        requests.append(request)
        n = len(request.state.joint_names)
        response.success = True
        response.message = 'frame ' + request.frame
        response.column_names = ['base_lin_x', 'base_lin_y', 'base_lin_z',
                                 'base_ang_x', 'base_ang_y', 'base_ang_z',
                                 *request.state.joint_names]
        response.rows = 6
        response.cols = 6 + n
        response.data = [float(i) for i in range(6 * (6 + n))]
        return response

    node.create_service(GetJacobian, 'get_jacobian', handle)
    client = node.create_client(GetJacobian, 'get_jacobian')
    assert client.wait_for_service(timeout_sec=TIMEOUT_S), 'service not available'

    request = GetJacobian.Request()
    request.frame = 'l_sole'
    request.representation = 'MIXED'
    request.use_measured_state = False
    request.state.joint_names = ['j1', 'j2']
    request.state.positions = [0.1, -0.2]
    request.state.base_pose.orientation.w = 1.0
    future = client.call_async(request)
    assert _spin_until(executor, future.done), 'no GetJacobian response'

    response = future.result()
    assert response.success
    assert response.message == 'frame l_sole'
    assert (response.rows, response.cols) == (6, 8)
    assert list(response.column_names[6:]) == ['j1', 'j2']
    assert list(response.data) == [float(i) for i in range(48)]
    assert len(requests) == 1
    assert requests[0].representation == 'MIXED'
    assert list(requests[0].state.positions) == [0.1, -0.2]
    node.destroy_client(client)


def test_the_installed_package_is_this_checkout(tmp_path):
    """The venv's kin_dyn_ros (what kin_dyn_node, launch and the equilibrium worker import,
    from any directory) is the working tree under test, not another checkout that shared the
    venv (KIN_DYN_VENV) and ran scripts/setup_env.sh."""
    repo = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, '-c', 'import kin_dyn_ros; print(kin_dyn_ros.__file__)'],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert pathlib.Path(out.stdout.strip()).resolve() == repo / 'kin_dyn_ros' / '__init__.py', \
        f'kin_dyn_ros comes from {out.stdout.strip()}: run bash scripts/setup_env.sh here'


# ------------------------------------------------------------------ the network rule
def test_loopback_variables_are_the_ones_each_distribution_reads():
    from kin_dyn_ros.loopback import loopback_environment
    assert loopback_environment('humble') == {'ROS_LOCALHOST_ONLY': '1',
                                              'ROS_AUTOMATIC_DISCOVERY_RANGE': None}
    for distro in ('jazzy', 'kilted', 'Rolling'):
        assert loopback_environment(distro) == {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                                                'ROS_LOCALHOST_ONLY': None}
    # unknown: both, so that the traffic stays on loopback whatever reads them
    assert loopback_environment('') == {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                                        'ROS_LOCALHOST_ONLY': '1'}


def test_ros_distro_names_the_running_rclpy():
    """ROS_DISTRO, which picks the discovery variables, is the distribution whose rclpy runs:
    its ros-<distro>-rclpy wheel here, its /opt/ros/<distro> on a ROS install."""
    import importlib.metadata
    distro = os.environ.get('ROS_DISTRO', '')
    assert distro, 'ROS_DISTRO is not set'
    try:
        importlib.metadata.version(f'ros-{distro}-rclpy')
    except importlib.metadata.PackageNotFoundError:
        assert f'/{distro}/' in rclpy.__file__, (distro, rclpy.__file__)


def test_rclpy_starts_without_a_discovery_warning(tmp_path):
    """rclpy with the loopback variables of this distribution (as the tests, the demo and
    the benchmarks set them) says nothing about them: no ROS_LOCALHOST_ONLY deprecation."""
    from kin_dyn_ros.loopback import set_loopback_environment
    env = set_loopback_environment(dict(os.environ))
    code = ('import rclpy; rclpy.init(); n = rclpy.create_node("kin_dyn_env_warning"); '
            'n.destroy_node(); rclpy.shutdown(); print("ok")')
    out = subprocess.run([sys.executable, '-c', code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == 'ok', out.stderr
    assert 'ROS_LOCALHOST_ONLY' not in out.stderr and 'deprecat' not in out.stderr, out.stderr


def test_an_explicit_domain_is_respected_and_env_sh_s_own_is_not(monkeypatch):
    from ros_helpers import use_loopback_domain
    monkeypatch.setenv('ROS_DOMAIN_ID', '7')
    monkeypatch.delenv('KIN_DYN_DOMAIN_AUTO', raising=False)
    assert use_loopback_domain(200, 215) == 7 == int(os.environ['ROS_DOMAIN_ID'])
    monkeypatch.setenv('KIN_DYN_DOMAIN_AUTO', '7')       # picked at random by env.sh
    domain = use_loopback_domain(200, 215)
    assert 200 <= domain <= 215
    assert os.environ['ROS_DOMAIN_ID'] == os.environ['KIN_DYN_DOMAIN_AUTO'] == str(domain)
    assert 200 <= use_loopback_domain(200, 215) <= 215   # our own pick is not explicit either


ENV_SH = pathlib.Path(__file__).resolve().parents[2] / 'scripts' / 'env.sh'


@pytest.mark.skipif(not os.environ.get('KIN_DYN_VENV') or not ENV_SH.exists(),
                    reason='the pip-based environment of scripts/env.sh is not in use')
@pytest.mark.parametrize('given', [{}, {'ROS_DOMAIN_ID': '5'}, {'ROS_LOCALHOST_ONLY': '1'}],
                         ids=['fresh', 'explicit_domain', 'localhost_only_set'])
def test_env_sh_sets_the_distribution_s_variables(given):
    """scripts/env.sh in a fresh shell: ROS_DISTRO of its venv, only the discovery variable
    that distribution reads, a random domain marked as its own, an explicit one kept; a
    ROS_LOCALHOST_ONLY of the user's is left alone, with a note."""
    keep = ('PATH', 'HOME', 'LANG', 'KIN_DYN_VENV')
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(given)
    out = subprocess.run(['bash', '-c', 'source "$1" >/dev/null && env', '_', str(ENV_SH)],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = dict(line.split('=', 1) for line in out.stdout.splitlines() if '=' in line)
    assert got['ROS_DISTRO'] == os.environ['ROS_DISTRO']
    assert got['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    if 'ROS_DOMAIN_ID' in given:
        assert got['ROS_DOMAIN_ID'] == '5' and 'KIN_DYN_DOMAIN_AUTO' not in got
    else:
        assert 1 <= int(got['ROS_DOMAIN_ID']) <= 100
        assert got['KIN_DYN_DOMAIN_AUTO'] == got['ROS_DOMAIN_ID']
    if 'ROS_LOCALHOST_ONLY' in given:
        assert got['ROS_LOCALHOST_ONLY'] == '1' and 'ROS_LOCALHOST_ONLY' in out.stderr
    else:
        assert 'ROS_LOCALHOST_ONLY' not in got and not out.stderr
