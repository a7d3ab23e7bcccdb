"""/tf as robot_state_publisher publishes it: ``publish_frequency`` (judged by JointState
stamps), ``ignore_timestamp``, stamps going back, mimic joints; the node in-process over
real rclpy and loopback DDS (the small MIMIC_URDF arm, no odometry: world -> base at
fixed_base_pose follows the same rate).

The input is a 1 kHz stream by its stamps (1 ms apart), sent in lockstep (each JointState
after the previous tick's ~/com arrived), so the counts are exact whatever the machine's
speed. The expected /tf stamps follow from robot_state_publisher's rule (a JointState
publishes /tf when at least 1/f of stamps has passed since the last /tf), not from the
node's code; the mimic joint's transform is worked out by hand from the URDF.

Run:  source scripts/env.sh && python -m pytest test/ros/test_tf_rate.py
"""

import math
import pathlib
import sys

import numpy as np
import pytest
from rclpy.parameter import Parameter

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ros_helpers import (MIMIC_URDF, from_ns, joint_state_msg, load_model,  # noqa: E402
                         loopback_context, module_namespace, node_and_rig, now_stamp, ns,
                         stamp_of, tf_matrices)

NAMESPACE = module_namespace(__name__)
MS = 1_000_000                      # ns
NODE_PARAMS = {'use_odometry': False, 'publish_frequency': 20.0,   # the default, explicitly
               'fixed_base_pose': [0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0]}
JOINTS = ['j1', 'j2']               # j3 mimics j1 (multiplier -2, offset 0.5)


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(190, 200)


@pytest.fixture(scope='module')
def system(ros_context):
    with node_and_rig(ros_context, NODE_PARAMS, 'kin_dyn_tf_rate_helper', {},
                      NAMESPACE) as (node, rig):
        load_model(rig, MIMIC_URDF, odometry=False)
        yield node, rig


@pytest.fixture
def settings(system):
    """set(**parameters) on the node; every parameter set is put back afterwards."""
    node, _ = system
    before = {}

    def apply(**values):
        for name in values:
            before.setdefault(name, node.get_parameter(name).value)
        results = node.set_parameters([Parameter(k, value=v) for k, v in values.items()])
        assert all(r.successful for r in results), [r.reason for r in results]
    yield apply
    node.set_parameters([Parameter(k, value=v) for k, v in before.items()])


def tick(rig, stamp_ns, positions=(0.3, 0.1)):
    """Publish a JointState stamped ``stamp_ns`` (0: unstamped) and wait for its tick's ~/com
    (the next one, whatever its stamp); the ~/com message."""
    count = len(rig.received['com'])
    rig.joint_states.publish(joint_state_msg(JOINTS, positions, stamp=from_ns(stamp_ns)))
    assert rig.spin_until(lambda: len(rig.received['com']) > count), f'no tick at {stamp_ns}'
    return rig.received['com'][-1]


def stream(system, count, start_ns=None):
    """``count`` JointStates 1 ms apart from ``start_ns`` (default: now, or after the last
    stamp ticked if that is later: a stream ticks faster than 1 kHz on a fast machine, so its
    stamps run ahead of the clock); the stamps [ns] of the /tf messages they made, once the
    last tick's /tf (if any) had time to arrive."""
    node, rig = system
    if start_ns is None:
        ticked = max((ns(stamp_of(m)) for m in rig.received['com']), default=0)
        start = max(ns(now_stamp(rig)), ticked + MS)
    else:
        start = start_ns
    first = len(rig.received['tf'])
    for k in range(count):
        tick(rig, start + k * MS)
    rig.spin_until(lambda: False, timeout_s=0.1)        # /tf of the last tick, if any
    return start, [ns(stamp_of(m)) for m in rig.received['tf'][first:]]


@pytest.mark.parametrize('frequency, count', [(20.0, 1000), (100.0, 200), (1000.0, 50)])
def test_tf_at_publish_frequency_of_a_1khz_stream(system, settings, frequency, count):
    settings(publish_frequency=frequency)
    start, got = stream(system, count)
    period = round(1e9 / frequency)
    assert got == list(range(start, start + count * MS, period))
    _, rig = system
    assert sum(start <= ns(stamp_of(m)) for m in rig.received['com']) == count  # every tick


def test_every_tf_carries_the_base_and_every_moving_joint(system):
    """A value sent for the mimic joint j3 is ignored: it follows j1 (the URDF's constraint,
    which the dynamics hold too; robot_state_publisher would take the value sent)."""
    _, rig = system
    stamp = ns(now_stamp(rig))
    count = len(rig.received['com'])
    rig.joint_states.publish(joint_state_msg(JOINTS + ['j3'], (0.3, 0.1, 1.0),
                                             stamp=from_ns(stamp)))
    assert rig.spin_until(lambda: len(rig.received['com']) > count)
    assert rig.spin_until(lambda: rig.received['tf'] and
                          ns(stamp_of(rig.received['tf'][-1])) == stamp)
    got = tf_matrices(rig.received['tf'][-1])
    assert set(got) == {('odom', 'base'), ('base', 'a'), ('a', 'b'), ('base', 'c')}
    np.testing.assert_allclose(got['odom', 'base'][:3, 3], [0.1, 0.2, 0.3], atol=1e-15)
    # by hand from the URDF: j1 about y at (0, 0, 0.2); j2 along z at (0, 0, 0.2); j3 about x
    # at (0, 0.1, 0), following j1: -2 * 0.3 + 0.5 = -0.1 rad (robot_state_publisher's mimic)
    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(got['base', 'a'], [[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0.2],
                                                 [0, 0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(got['a', 'b'][:3, 3], [0, 0, 0.3], atol=1e-15)
    c, s = math.cos(-0.1), math.sin(-0.1)
    np.testing.assert_allclose(got['base', 'c'], [[1, 0, 0, 0], [0, c, -s, 0.1], [0, s, c, 0],
                                                 [0, 0, 0, 1]], atol=1e-15)


def test_a_stamp_going_back_publishes_at_once_and_restarts_the_rate(system):
    _, rig = system
    start, got = stream(system, 3, ns(now_stamp(rig)) + 100 * MS)   # /tf at start only
    assert got == [start]
    back = start - 10_000 * MS                  # a bag restarted: 10 s back
    _, again = stream(system, 60, back)
    assert again == [back, back + 50 * MS]


def test_ignore_timestamp_publishes_every_joint_state_stamped_on_arrival(system, settings):
    node, rig = system
    settings(ignore_timestamp=True)
    before = ns(now_stamp(rig))
    first = len(rig.received['tf'])
    same = before - 3_600_000 * MS             # an hour old, and repeated
    coms = [tick(rig, same) for _ in range(4)] + [tick(rig, 0) for _ in range(2)]
    after = ns(now_stamp(rig))
    assert rig.spin_until(lambda: len(rig.received['tf']) - first == 6)
    stamps = [ns(stamp_of(m)) for m in rig.received['tf'][first:]]
    assert stamps == [ns(stamp_of(m)) for m in coms]           # every tick, same stamp
    assert all(before <= t <= after for t in stamps)            # the node's clock
    assert all(b > a for a, b in zip(stamps, stamps[1:]))       # never repeated


def test_ignore_timestamp_off_skips_a_repeated_stamp(system):
    _, rig = system
    stamp = ns(now_stamp(rig))
    tick(rig, stamp)
    count = len(rig.received['com'])
    rig.joint_states.publish(joint_state_msg(JOINTS, (0.5, 0.0), stamp=from_ns(stamp)))
    rig.spin_until(lambda: False, timeout_s=0.3)
    assert len(rig.received['com']) == count    # the same stamp: no tick (as RSP: no /tf)


@pytest.mark.parametrize('value', [0.0, -1.0, 1000.5, math.inf])
def test_publish_frequency_out_of_range_is_rejected(system, value):
    node, _ = system
    result, = node.set_parameters([Parameter('publish_frequency', value=value)])
    assert not result.successful and 'publish_frequency' in result.reason
    assert node.get_parameter('publish_frequency').value == 20.0
