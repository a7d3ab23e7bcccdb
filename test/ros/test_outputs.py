"""kin_dyn_ros.node.outputs: publishing serialised bytes through the publisher's handle
(byte_publisher), over real rclpy on loopback DDS."""

import pathlib
import sys
from contextlib import nullcontext

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.serialization import serialize_message
from std_msgs.msg import String

from kin_dyn_ros.node.outputs import byte_publisher

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import loopback_context, module_namespace, spin_until  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

NAMESPACE = module_namespace(__name__)


@pytest.fixture(scope='module')
def context():
    yield from loopback_context(200, 232)


def test_bytes_published_through_the_handle_arrive_as_publish_sends_them(context):
    """The same bytes, published by ``publish()`` and by byte_publisher, arrive byte for
    byte, in order."""
    node = rclpy.create_node('bytes_probe', namespace=NAMESPACE, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        got = []
        publisher = node.create_publisher(String, 'bytes', 10)
        node.create_subscription(String, 'bytes', got.append, 10, raw=True)
        assert spin_until(executor, lambda: publisher.get_subscription_count())
        handle, publish = byte_publisher(publisher)
        assert handle is publisher.handle
        sent = [serialize_message(String(data=f'message {k}')) for k in range(6)]
        for k, data in enumerate(sent):
            if k % 2:
                with handle:
                    publish(data)
            else:
                publisher.publish(data)
        assert spin_until(executor, lambda: len(got) == len(sent))
        assert got == sent
    finally:
        executor.shutdown()
        node.destroy_node()


def test_a_handle_without_publish_raw_falls_back_to_publish():
    """Where rclpy's handle lacks ``publish_raw`` (another rclpy), ``publish()`` is used."""
    class Publisher:        # (stands for a publisher of an rclpy without it)
        handle = object()

        def publish(self, msg):
            pass
    publisher = Publisher()
    context, publish = byte_publisher(publisher)
    assert isinstance(context, nullcontext) and publish == publisher.publish
