"""kin_dyn_ros.node.spinning.spin_until_shutdown, the node's main loop, over real rclpy.

Ctrl-C shuts the context down from rclpy's signal handler, maybe while a timer callback is
publishing: rclpy then raises "publisher's context is invalid" out of the spin (seen once in
CI as exit code 1 of ``kin_dyn_node`` after SIGINT). Here a timer callback shuts its own
context down before it publishes, which is that race made certain.
"""

import pathlib
import sys

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import Int32

from kin_dyn_ros.node.spinning import spin_until_shutdown

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import loopback_context  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')


@pytest.fixture
def context():
    yield from loopback_context(216, 225)


def spin_with_timer(context, callback):
    """Spin a node whose 1 ms timer calls ``callback(context, publisher)``; returns what
    ``spin_until_shutdown`` raised (None when it returned)."""
    node = rclpy.create_node('spinning_test', context=context)
    pub = node.create_publisher(Int32, 'spinning_test', 1)
    node.create_timer(0.001, lambda: callback(context, pub))
    executor = SingleThreadedExecutor(context=context)
    try:
        spin_until_shutdown(node, executor)
    except Exception as exc:
        return exc
    finally:
        executor.shutdown()
        node.destroy_node()
    return None


def test_a_publish_racing_the_shutdown_ends_the_spin_quietly(context):
    calls = []

    def shut_down_then_publish(ctx, pub):
        calls.append(1)
        ctx.try_shutdown()
        pub.publish(Int32(data=1))       # raises: the context is invalid now
    assert spin_with_timer(context, shut_down_then_publish) is None
    assert calls == [1] and not context.ok()


def test_a_failing_callback_while_the_context_is_up_propagates(context):
    def fail(ctx, pub):
        pub.publish(Int32(data=1))
        raise ValueError('a bug in a callback')
    exc = spin_with_timer(context, fail)
    assert isinstance(exc, ValueError) and 'a bug in a callback' in str(exc)
    assert context.ok()
