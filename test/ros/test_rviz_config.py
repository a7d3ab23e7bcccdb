"""config/kin_dyn.rviz against the node's publishers: every display reads a topic the node
publishes (as the launch file starts it: node kin_dyn_node, no namespace) with the message
type of its display class, and the per-tick balance tracks read best effort (a reliable
reader of a 1 kHz topic costs the publishing node about twice as much: docs/performance.md,
"The floor of the balance outputs")."""

import pathlib

import pytest
import rclpy
import yaml

from kin_dyn_ros.node.outputs import Publishers
from ros_helpers import loopback_context, module_namespace

RVIZ = pathlib.Path(__file__).resolve().parents[2] / 'config' / 'kin_dyn.rviz'
NAMESPACE = module_namespace(__name__)
# rviz display class -> the message type it subscribes to
DISPLAY_TYPES = {'rviz_default_plugins/MarkerArray': 'visualization_msgs/msg/MarkerArray',
                 'rviz_default_plugins/PointStamped': 'geometry_msgs/msg/PointStamped',
                 'rviz_default_plugins/RobotModel': 'std_msgs/msg/String'}
PER_TICK = ('/kin_dyn_node/zmp', '/kin_dyn_node/capture_point')


def _displays():
    """(class, topic settings) of every display of the config with a topic."""
    config = yaml.safe_load(RVIZ.read_text())
    return [(d['Class'], d['Topic'])
            for d in config['Visualization Manager']['Displays'] if 'Topic' in d]


@pytest.fixture(scope='module')
def context():
    yield from loopback_context(226, 232)


@pytest.fixture(scope='module')
def published(context):
    """{topic: message type} of the node's publishers, as the launch file names them."""
    node = rclpy.create_node('kin_dyn_node', namespace=NAMESPACE, context=context)
    try:
        topics = {}
        for pub in vars(Publishers(node)).values():
            if hasattr(pub, 'topic_name'):
                t = pub.msg_type
                topics[pub.topic_name.removeprefix(NAMESPACE)] = \
                    f"{t.__module__.split('.')[0]}/msg/{t.__name__}"
        return topics
    finally:
        node.destroy_node()


def test_every_display_reads_a_topic_of_the_node_with_its_type(published):
    displays = _displays()
    assert {topic['Value'] for _, topic in displays} >= {'/kin_dyn_node/markers', *PER_TICK}
    for cls, topic in displays:
        assert published.get(topic['Value']) == DISPLAY_TYPES[cls], (cls, topic['Value'])


def test_the_balance_tracks_read_best_effort():
    """The node's publishers are reliable: a best-effort display matches them and costs the
    node less per message."""
    policies = {topic['Value']: topic['Reliability Policy'] for _, topic in _displays()}
    assert [policies[t] for t in PER_TICK] == ['Best Effort', 'Best Effort']
