"""kin_dyn_node's start-up and shutdown with inputs flowing, and its sensor inputs without the
private rclpy API (the executor fallback), over real rclpy on loopback DDS.

Each test has a context of its own (shut down by the test or at its end) and a publisher
that floods joint_states at ~1 kHz from a thread, as a robot's driver does while the node
starts or stops.
"""

import contextlib
import gc
import pathlib
import sys
import threading
import time
import weakref

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from rclpy.time import Time as RclpyTime
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PointStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import String

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import (MIMIC_URDF, Rig, joint_state_msg,  # noqa: E402
                         module_namespace, spin_until, use_loopback_domain)

from kin_dyn_ros.dynamics import KinDynComputations  # noqa: E402
from kin_dyn_ros.node import KinDynNode, sensor_thread  # noqa: E402
from kin_dyn_ros.node.outputs import LATCHED_QOS, READERS_PERIOD_NS, Publishers  # noqa: E402
from kin_dyn_ros.node.loop import TickLoop  # noqa: E402
from kin_dyn_ros_interfaces.msg import ForwardDynamics  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

PARAMS = [Parameter('use_odometry', value=False), Parameter('equilibrium_rate', value=0.0)]
NAMESPACE = module_namespace(__name__)  # each test's node and helpers in a sub-namespace


@pytest.fixture
def context():
    domain = use_loopback_domain(200, 215)
    ctx = rclpy.context.Context()
    rclpy.init(context=ctx, domain_id=domain)
    yield ctx
    rclpy.try_shutdown(context=ctx)


class Flood:
    """A node of its own publishing JointStates of ``joints`` every ``period_s`` from a
    thread (~1 kHz by default)."""

    def __init__(self, context, joints, namespace, period_s=0.001):
        self.node = rclpy.create_node('flood', namespace=namespace, context=context)
        self.pub = self.node.create_publisher(JointState, 'joint_states', qos_profile_sensor_data)
        self._joints, self._stop, self.sent = list(joints), threading.Event(), 0
        self._period_s = period_s
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                self.pub.publish(joint_state_msg(self._joints, np.full(len(self._joints), 0.1)))
            except Exception:  # the context shut down under it: the flood ends
                return
            self.sent += 1
            time.sleep(self._period_s)

    def close(self):
        self._stop.set()
        self._thread.join(5.0)
        self.node.destroy_node()


def test_no_input_callback_runs_before_the_parameter_model_is_in_place(context, monkeypatch,
                                                                       icub_urdf):
    """JointStates flowing while the node starts: its model from the robot_description
    parameter (parsed slowly here) is in place, with its messages and tick, before any input
    callback runs."""
    seen = []
    on_joint_state, parse = TickLoop.take_joint_state, KinDynNode._parse

    def watched(loop, data):
        seen.append(loop.model is not None and loop.model.messages is not None
                    and loop.ticker is not None)
        return on_joint_state(loop, data)

    def slow_parse(urdf, settings):
        time.sleep(0.5)               # a large model: start-up takes a while
        return parse(urdf, settings)
    monkeypatch.setattr(TickLoop, 'take_joint_state', watched)
    monkeypatch.setattr(KinDynNode, '_parse', staticmethod(slow_parse))
    kd = KinDynComputations(icub_urdf)
    flood = Flood(context, kd.joints_name_list, f'{NAMESPACE}/starting')
    try:
        node = KinDynNode(context=context, namespace=f'{NAMESPACE}/starting', parameter_overrides=[
            Parameter('robot_description', value=icub_urdf), *PARAMS])
        try:
            assert node.loop.sensors is not None and node.loop.sensors.running
            deadline = time.monotonic() + 10.0
            while len(seen) < 20 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(seen) >= 20 and all(seen), seen[:5]
        finally:
            node.destroy_node()
    finally:
        flood.close()


def test_context_shutdown_with_the_thread_busy_ends_it_quietly(context, monkeypatch):
    """The context shut down (Ctrl-C) while the sensor thread takes a flood of JointStates
    (each callback slowed down, so that messages are always pending: the thread is taking,
    not waiting, when the context goes; on Kilted that destroys the node's subscriptions
    under it): the thread ends without an unhandled exception or a reported error, and the
    node can still be destroyed."""
    failures, errors = [], []
    monkeypatch.setattr(threading, 'excepthook', failures.append)
    on_joint_state = TickLoop.take_joint_state

    def slow(loop, data):
        time.sleep(0.002)
        return on_joint_state(loop, data)
    monkeypatch.setattr(TickLoop, 'take_joint_state', slow)
    node = KinDynNode(context=context, namespace=f'{NAMESPACE}/stopping', parameter_overrides=[
        Parameter('robot_description', value=MIMIC_URDF), *PARAMS])
    monkeypatch.setattr(node, '_on_sensor_error', lambda sub, exc: errors.append(exc))
    thread = node.loop.sensors._thread
    flood = Flood(context, ['j1', 'j2'], f'{NAMESPACE}/stopping')
    try:
        assert spin_until_count(node, 50)
        rclpy.shutdown(context=context)
        thread.join(5.0)
        assert not thread.is_alive()
        assert not failures and not errors, (failures, errors)
    finally:
        flood.close()
        node.destroy_node()
    assert not failures


def spin_until_count(node, count, timeout_s=10.0):
    """True once ``node`` has ticked ``count`` JointStates (its tick statistics)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if node.loop.stats.summary(time.perf_counter())[0] >= count:
            return True
        time.sleep(0.01)
    return False


@contextlib.contextmanager
def mimic_node_and_helper(context, namespace):
    """(node on MIMIC_URDF, a helper node beside it, an executor spinning both) in
    ``namespace``; destroyed on exit."""
    node = KinDynNode(context=context, namespace=namespace, parameter_overrides=[
        Parameter('robot_description', value=MIMIC_URDF), *PARAMS])
    helper = rclpy.create_node('helper', namespace=namespace, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(helper)
    try:
        yield node, helper, executor
    finally:
        executor.shutdown()
        helper.destroy_node()
        node.destroy_node()


def test_without_the_private_api_the_executor_takes_the_inputs(context, monkeypatch):
    """An rclpy without the sensor thread's private API: the node says so, leaves its sensor
    inputs to the executor and publishes the same outputs as with the thread."""
    kd = KinDynComputations(MIMIC_URDF)
    s = kd.apply_mimic(np.array([0.3, 0.1, 0.0]))
    want = kd.compute_tick(np.eye(4), s, np.zeros(6), np.zeros(3))
    coms = {}
    for fallback in (False, True):
        if fallback:
            monkeypatch.setattr(sensor_thread, '_rclpy', object())
        assert sensor_thread.SensorThread.available() is not fallback
        with mimic_node_and_helper(context, f'{NAMESPACE}/fallback{int(fallback)}') as (
                node, helper, executor):
            assert (node.loop.sensors is None) is fallback
            rig = Rig(helper, executor)
            rig.wait_matched(odometry=False)
            stamp = rig.now()
            rig.joint_states.publish(joint_state_msg(['j1', 'j2'], [0.3, 0.1], stamp=stamp))
            out = rig.wait_outputs(stamp, ('com', 'gravity'))
            coms[fallback] = out['com'].point
            np.testing.assert_allclose([coms[fallback].x, coms[fallback].y, coms[fallback].z],
                                       want.com, rtol=0, atol=1e-12)
            np.testing.assert_allclose(out['gravity'].effort, want.gravity_torques,
                                       rtol=0, atol=1e-12)
    assert coms[False] == coms[True]


def test_the_fast_clock_reads_the_clock_and_falls_back_without_its_handle(context):
    """clock_ns through the clock's C handle and through the public ``now()`` read the
    same clock (monotonic between readings, within the time of the reads)."""
    node = rclpy.create_node('clock_probe', namespace=NAMESPACE, context=context)
    try:
        clock = node.get_clock()

        class Public:       # a clock without the private handle: now() only
            def now(self):
                return clock.now()
        for reader in (sensor_thread.clock_ns(clock), sensor_thread.clock_ns(Public()),
                       sensor_thread.clock_ns(clock, node)):
            before = clock.now().nanoseconds
            got = reader()
            after = clock.now().nanoseconds
            assert before <= got <= after
    finally:
        node.destroy_node()


@pytest.mark.parametrize('flag', ['private flag', 'property'])
def test_the_fast_clock_follows_use_sim_time(context, flag, monkeypatch):
    """clock_ns with the node reads the system clock while ROS time is off, the simulated
    time while use_sim_time is on (set and cleared at run time), as ``clock.now()``; from
    the time source's private flag, or its property where rclpy has no such flag."""
    if flag == 'property':
        monkeypatch.setattr(sensor_thread, '_ACTIVE_FLAG', '_no_such_flag')
    node = rclpy.create_node('sim_clock_probe', namespace=NAMESPACE, context=context)
    try:
        clock = node.get_clock()
        reader = sensor_thread.clock_ns(clock, node)
        assert reader.__name__ == 'ros_now_ns'      # (the fast path is taken here)
        for sim in (True, False, True):
            node.set_parameters([Parameter('use_sim_time', value=sim)])
            if sim:
                clock.set_ros_time_override(RclpyTime(seconds=42, nanoseconds=7))
                assert reader() == clock.now().nanoseconds == 42_000_000_007
            else:
                before = clock.now().nanoseconds
                got = reader()
                assert before <= got <= clock.now().nanoseconds and got > 10**18
    finally:
        node.destroy_node()


def test_outputs_nobody_subscribes_to_are_not_computed(context):
    """An output without a subscriber is neither rendered nor published, and forward
    dynamics is not computed while nothing reads ~/forward_dynamics (the tick says why);
    a subscriber that comes gets the messages of the ticks after READERS_PERIOD_NS (the
    subscriber counts are kept that long)."""
    with mimic_node_and_helper(context, f'{NAMESPACE}/unread') as (node, helper, executor):
        rendered = []
        messages, per_tick = node.loop.model.messages, node.loop.model.messages.per_tick
        messages.per_tick = lambda *a: rendered.extend(per_tick(*a)) or per_tick(*a)
        pub = helper.create_publisher(JointState, 'joint_states', qos_profile_sensor_data)
        got = {'com': [], 'forward_dynamics': []}
        helper.create_subscription(PointStamped, 'kin_dyn_node/com', got['com'].append, 10)

        def tick(k):
            pub.publish(joint_state_msg(['j1', 'j2'], [0.3, 0.1], [0.0, 0.0], [0.5, -0.2],
                                        stamp=Time(sec=100 + k)))
            return spin_until(executor, lambda: node.loop.last_tick is not None
                              and node.loop.last_tick.stamp.sec == 100 + k)
        assert spin_until(executor, lambda: node.loop.publishers.com.get_subscription_count() == 1)
        assert spin_until(executor, lambda: pub.get_subscription_count() == 1)
        assert tick(0)
        assert node.loop.last_tick.result.base_acceleration is None
        assert 'nothing subscribes to ~/forward_dynamics' in node.loop.last_tick.fd_note
        assert 'com' in rendered
        assert 'gravity' not in rendered and 'forward_dynamics' not in rendered
        helper.create_subscription(ForwardDynamics, 'kin_dyn_node/forward_dynamics',
                                   got['forward_dynamics'].append, 10)
        assert spin_until(executor,
                          lambda: node.loop.publishers.forward_dynamics.get_subscription_count() == 1)
        time.sleep(READERS_PERIOD_NS * 1e-9)
        assert tick(1)
        assert node.loop.last_tick.result.base_acceleration is not None
        assert node.loop.last_tick.fd_note == '' and 'forward_dynamics' in rendered
        assert spin_until(executor, lambda: any(m.header.stamp.sec == 101
                                                for m in got['forward_dynamics']))
        assert 'gravity' not in rendered


def test_subscriber_counts_are_kept_for_a_period(context):
    """Publishers.is_read (a ReadCounts) counts every per-tick output's subscribers again
    only once ``period_ns`` has passed since the last count: a subscriber that comes is seen
    after it, not before (with period 0, at once)."""
    node = rclpy.create_node('counts_probe', namespace=f'{NAMESPACE}/counts', context=context)
    try:
        kept, fresh = Publishers(node, period_ns=3_600 * 10 ** 9), Publishers(node, period_ns=0)
        assert not kept.is_read(kept.com) and not fresh.is_read(fresh.com)
        node.create_subscription(PointStamped, '~/com', lambda m: None, 10)
        deadline = time.monotonic() + 5.0
        while not fresh.com.get_subscription_count() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert fresh.is_read(fresh.com) and fresh.is_read(fresh.tf) is False
        assert not kept.is_read(kept.com)           # counted an hour ago, as far as it knows
        assert fresh.is_read.any() and not kept.is_read.any()
        kept.is_read.expire()
        assert kept.is_read(kept.com) and kept.is_read.any()
    finally:
        node.destroy_node()


def test_a_model_from_the_topic_is_kept_out_of_the_collector_and_freed_when_replaced(
        context, icub_urdf):
    """A model that comes on the robot_description topic after start-up (as from
    robot_state_publisher) is frozen with what the node builds for it (gc.freeze): the
    collector's full collections, ~40-80 ms for a node with a model on a quiet machine and
    longer on a busy one, then never scan it, and they stall the tick for what a tick
    allocates only. A model replaced is freed at once (reference counting: no cycle keeps
    it, frozen or not)."""
    node = KinDynNode(context=context, namespace=f'{NAMESPACE}/frozen', parameter_overrides=PARAMS)
    helper = rclpy.create_node('describer', namespace=f'{NAMESPACE}/frozen', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(helper)
    try:
        pub = helper.create_publisher(String, 'robot_description', LATCHED_QOS)
        kds = []
        for urdf in (icub_urdf, MIMIC_URDF):
            pub.publish(String(data=urdf))
            assert spin_until(executor, lambda: node.loop.model is not None
                              and node.loop.model.urdf == urdf, 20.0)
            kds.append(weakref.ref(node.loop.model.kd))
            tracked = gc.get_objects()         # generations 0-2: not the frozen objects
            assert not any(o is kds[-1]() or o is node.loop.model.messages for o in tracked)
            del tracked
        assert kds[0]() is None               # the first model, replaced: freed
    finally:
        executor.shutdown()
        helper.destroy_node()
        node.destroy_node()
