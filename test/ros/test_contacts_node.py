"""Contact mechanics in kin_dyn_node, in-process over real rclpy and loopback DDS, against the
ROS-free core (kin_dyn_ros.dynamics.contacts / .equilibrium).

iCub stands with both soles flat on z = 0 (the base placed as in test/dynamics/
test_contacts.py). The helper publishes its description, joint states with efforts, the
odometry of the root link and two sole wrenches carrying the robot's weight, and records
~/support_polygon, ~/stability_margin, ~/equilibrium_torques and ~/markers. Every output is
compared with the core at the same state: support_polygon, SupportPolygon.margin,
com_equilibrium and equilibrium_torques. ~/support_polygon carries geometry_msgs/Point32
(float32), so it is compared to float32 rounding; everything in float64 to 1e-9.

Run:  source scripts/env.sh && python -m pytest test/ros/test_contacts_node.py
"""

import math
import pathlib
import re
import sys
import threading
import time
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

import rclpy  # noqa: E402
from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import PolygonStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

from kin_dyn_ros.node.contact_mechanics import ContactMechanics  # noqa: E402
from kin_dyn_ros.node.support_outputs import INSIDE_RGBA, MARKER_NS, OUTSIDE_RGBA  # noqa: E402
from kin_dyn_ros.node.conversions import matrix_to_pose, stamp_to_ns  # noqa: E402
from kin_dyn_ros.node.outputs import READERS_PERIOD_NS  # noqa: E402
from kin_dyn_ros.dynamics.contacts import (Contact, contact_poses, ground_support,  # noqa: E402
                                          support_polygon)
from kin_dyn_ros.dynamics.equilibrium import com_equilibrium, equilibrium_torques  # noqa: E402
from kin_dyn_ros.node import KinDynNode  # noqa: E402
from kin_dyn_ros.node.settings import make_settings  # noqa: E402
from kin_dyn_ros_interfaces.msg import FloatingBaseState, StabilityMargin  # noqa: E402
from kin_dyn_ros_interfaces.srv import CheckEquilibrium, GetDynamics  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from ros_helpers import (from_ns, joint_state_msg, load_model, loopback_context,  # noqa: E402
                         module_namespace, node_and_rig, now_stamp, ns, odometry_msg,
                         standing, wrench_msg, xyz)

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

FEET = ('l_sole', 'r_sole')
SOLE = [0.05, 0.025, 0.0, -0.05, 0.025, 0.0, -0.05, -0.025, 0.0, 0.05, -0.025, 0.0]
FRICTION = {'l_sole': 0.5, 'r_sole': 0.7}
THRESHOLD = 20.0
NODE_PARAMS = {'contacts': list(FEET), 'world_frame': 'odom', 'wrench_timeout': 0.5,
               'contact_force_threshold': THRESHOLD, 'equilibrium_rate': 1e6,
               'markers_rate': 1e6,     # every tick's markers and torques (throttles tested)
               **{f'contact.{c}.points': SOLE for c in FEET},
               **{f'contact.{c}.friction': FRICTION[c] for c in FEET}}
CONTACT_TOPICS = {c: f'{c}/wrench' for c in FEET}
F64 = dict(rtol=1e-9, atol=1e-9)
F32 = dict(rtol=2.0 ** -24, atol=1e-9)     # Point32: float32 rounding of the core's value
NAMESPACE = module_namespace(__name__)    # the nodes, helpers and clients of this module


# -- fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(90, 100)


OWN_OUTPUTS = {'support_polygon': PolygonStamped, 'stability_margin': StabilityMargin,
               'equilibrium_torques': JointState}


@pytest.fixture(scope='module', params=[False, True], ids=['in_process', 'services_process'])
def system(request, ros_context, icub_urdf):
    """The node answering ~/check_equilibrium in its own process, then in its services'."""
    with node_and_rig(ros_context, {**NODE_PARAMS, 'services_process': request.param},
                      'kin_dyn_contacts_helper', CONTACT_TOPICS, NAMESPACE) as (node, rig):
        rig.record_private(OWN_OUTPUTS)
        client = rig.node.create_client(CheckEquilibrium, rig.private('check_equilibrium'))
        load_model(rig, icub_urdf)
        assert client.wait_for_service(timeout_sec=10.0)
        yield SimpleNamespace(node=node, rig=rig, client=client)


# -- states ----------------------------------------------------------------------------------
LEANING = dict(torso_pitch=0.5, l_shoulder_pitch=-1.5, r_shoulder_pitch=-1.5)


def feet(friction=FRICTION, names=FEET):
    return [Contact(c, np.reshape(SOLE, (-1, 3)), [0, 0, 1], friction[c]) for c in names]


def core(kd, w_H_b, s, names=FEET, friction=FRICTION):
    """The core's answers at a state for the contacts ``names``."""
    contacts = feet(friction, names)
    poses = contact_poses(kd, w_H_b, s, contacts)
    polygon = support_polygon(contacts, poses, kd.gravity)
    com = kd.CoM_position(w_H_b, s)
    eq = com_equilibrium(contacts, com, kd.get_total_mass(), kd.gravity, poses, polygon=polygon)
    return SimpleNamespace(polygon=polygon, com=com, eq=eq, margin=polygon.margin(com),
                           torques=equilibrium_torques(kd, w_H_b, s, contacts), poses=poses)


def sole_wrench(kd, w_H_b, s, contact, force_z, frame=None):
    """(header frame, wrench) pushing ``contact`` up with ``force_z`` [N] (world z),
    expressed in ``frame`` (default: the contact link, frame_id '')."""
    r = kd.forward_kinematics(frame or contact, w_H_b, s)[:3, :3]
    return frame or '', np.concatenate([r.T @ [0.0, 0.0, force_z], np.zeros(3)])


# -- sending and receiving -------------------------------------------------------------------
def send(system, kd, w_H_b, s, wrenches, stamp=None):
    """Odometry of the root link, the wrenches ({contact: (frame, w)}) and a JointState with
    efforts, all stamped ``stamp`` (default now); returns the stamp once the node ticked it."""
    rig, node = system.rig, system.node
    stamp = stamp or now_stamp(rig)
    rig.odometry.publish(odometry_msg('odom', 'root_link', w_H_b, np.zeros(6), stamp))
    for c, (frame, w) in wrenches.items():
        rig.wrenches[c].publish(wrench_msg(frame, w, stamp))
    assert rig.spin_until(
        lambda: node.loop.inputs.odometry_buffer and node.loop.inputs.odometry_buffer[-1].stamp_ns == ns(stamp)
        and all(node.loop.inputs.wrench_buffers.get(c) and node.loop.inputs.wrench_buffers[c][-1].stamp_ns == ns(stamp)
                for c in wrenches))
    n = kd.NDoF
    rig.joint_states.publish(joint_state_msg(kd.joints_name_list, s, np.zeros(n), np.zeros(n),
                                             stamp))
    return stamp


def weight_on(kd, w_H_b, s, share=None):
    """Wrenches of both soles carrying the weight (``share``: {contact: fraction})."""
    share = share or {'l_sole': 0.5, 'r_sole': 0.5}
    weight = kd.get_total_mass() * 9.80665
    return {c: sole_wrench(kd, w_H_b, s, c, share[c] * weight) for c in share}


def wait(system, stamp, keys=('support_polygon', 'stability_margin')):
    rig = system.rig
    assert rig.spin_until(lambda: all(rig.find(k, stamp) for k in keys)), \
        f'missing at {stamp}: {[k for k in keys if not rig.find(k, stamp)]}'
    return {k: rig.find(k, stamp) for k in keys}


def support_markers(system, stamp):
    """{id: Marker} of ns support_polygon stamped ``stamp`` (waits for them): the support of
    that tick, in its own ~/markers array (markers_rate 1e6: every tick has one)."""
    def found():
        return {m.id: m for msg in system.rig.received['markers'] for m in msg.markers
                if m.ns == MARKER_NS and m.header.stamp == stamp}
    assert system.rig.spin_until(lambda: len(found()) == 2)
    return found()


def assert_polygon(msg, expected):
    """PolygonStamped (Point32) == the core's SupportPolygon on z = 0 (flat soles)."""
    got = np.array([xyz(p) for p in msg.polygon.points]).reshape(-1, 3)
    want = np.column_stack([expected.polygon.vertices, np.zeros(len(expected.polygon.vertices))])
    assert msg.header.frame_id == 'odom'
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **F32)


def assert_margin(msg, expected, active):
    assert msg.header.frame_id == 'odom'
    assert list(msg.active_contacts) == list(active)
    assert abs(msg.margin - expected.margin) <= 1e-9, (msg.margin, expected.margin)
    assert msg.inside == (expected.margin >= 0)
    np.testing.assert_allclose(xyz(msg.com_projection), [*expected.com[:2], 0.0], **F64)


# -- tests -----------------------------------------------------------------------------------
def test_standing_outputs_equal_the_core(system, ref):
    w_H_b, s = standing(ref)
    stamp = send(system, ref, w_H_b, s, weight_on(ref, w_H_b, s))
    out = wait(system, stamp, ('support_polygon', 'stability_margin', 'equilibrium_torques'))
    want = core(ref, w_H_b, s)
    assert want.polygon.method == 'hull' and len(want.polygon.vertices) == 6
    assert_polygon(out['support_polygon'], want)
    assert_margin(out['stability_margin'], want, FEET)
    assert out['stability_margin'].inside and want.margin > 0.03
    tq = out['equilibrium_torques']
    assert list(tq.name) == ref.joints_name_list
    assert want.torques.feasible, want.torques.message
    np.testing.assert_allclose(tq.effort, want.torques.tau, **F64)
    assert not tq.position and not tq.velocity

    markers = support_markers(system, stamp)
    outline, disc = markers[0], markers[1]
    assert outline.type == Marker.LINE_STRIP and outline.action == Marker.ADD
    assert outline.header.frame_id == 'odom'
    pts = np.array([xyz(p) for p in outline.points])
    np.testing.assert_allclose(pts[:-1, :2], want.polygon.vertices, **F64)
    np.testing.assert_allclose(pts[-1], pts[0])                # closed
    assert disc.type == Marker.CYLINDER
    np.testing.assert_allclose(xyz(disc.pose.position), [*want.com[:2], 0.0], **F64)
    rgba = (disc.color.r, disc.color.g, disc.color.b, disc.color.a)
    np.testing.assert_allclose(rgba, INSIDE_RGBA, atol=1e-6)


def test_timer_ticks_run_the_contact_mechanics_too(system, ref):
    """With ``rate`` > 0 the ticks come from a timer on the executor: the contact mechanics
    then run at once, every step, in the timer's callback."""
    node = system.node
    assert node.set_parameters([Parameter('rate', value=200.0)])[0].successful
    try:
        w_H_b, s = standing(ref, torso_pitch=0.1)
        stamp = send(system, ref, w_H_b, s, weight_on(ref, w_H_b, s))
        out = wait(system, stamp, ('support_polygon', 'stability_margin', 'equilibrium_torques'))
        want = core(ref, w_H_b, s)
        assert_polygon(out['support_polygon'], want)
        assert_margin(out['stability_margin'], want, FEET)
        np.testing.assert_allclose(out['equilibrium_torques'].effort, want.torques.tau, **F64)
    finally:
        assert node.set_parameters([Parameter('rate', value=0.0)])[0].successful


def test_a_tick_during_begun_steps_has_its_turn_after_them(system, ref, monkeypatch):
    """A JointState taken while the contact mechanics of the tick before it are under way
    (their steps begun on the sensor thread) gets its own support once they end, even when
    no input follows it. The callbacks are called as the sensor thread calls them (under the
    node's lock, raw messages), so that the order is not left to the scheduler."""
    node, rig = system.node, system.rig
    w_H_b, s = standing(ref)
    leaning = standing(ref, **LEANING)
    monkeypatch.setattr(node.loop.sensors, 'is_current', lambda: True)

    def tick(pose, joints):
        stamp = now_stamp(rig)
        n = ref.NDoF
        node.loop.take_odometry(serialize_message(
            odometry_msg('odom', 'root_link', pose, np.zeros(6), stamp)))
        for c, (frame, w) in weight_on(ref, pose, joints).items():
            node.loop.take_wrench(c, serialize_message(wrench_msg(frame, w, stamp)))
        node.loop.take_joint_state(serialize_message(joint_state_msg(
            ref.joints_name_list, joints, np.zeros(n), np.zeros(n), stamp)))
        return stamp

    with node.loop.lock:
        first = tick(*leaning)
        assert node.loop.run_step()              # its steps begin
        second = tick(w_H_b, s)                  # comes during them
        node.loop.finish_steps()
    monkeypatch.undo()
    out = wait(system, second)
    assert_margin(out['stability_margin'], core(ref, w_H_b, s), FEET)
    assert rig.find('stability_margin', first) is not None


def test_a_tick_with_nothing_to_do_is_a_single_step(system, ref):
    """The contact mechanics of a tick whose support is not due, with no answer of the
    worker waiting, is one step without a yield (the sensor thread goes back to waiting
    without another round of takes); a due tick yields before publishing its support. On a
    node of its own beside the system's, with the system's settings and no wrenches (no
    active contact: no request to the worker, so no answer either), at 100 Hz, its
    ~/stability_margin read."""
    node = rclpy.create_node('kin_dyn_steps_probe', namespace=NAMESPACE,
                             context=system.node.context)
    mechanics = ContactMechanics(node)
    try:
        settings = replace(system.node.loop.settings, equilibrium_rate=100.0)
        mechanics.configure(ref, FEET, settings)                   # no URDF: no worker
        node.create_subscription(StabilityMargin, '~/stability_margin', lambda _: None, 10)
        time.sleep(READERS_PERIOD_NS * 1e-9)     # the subscribers are counted that often
        w_H_b, s = standing(ref)
        result = ref.compute_tick(w_H_b, s, np.zeros(6), np.zeros(ref.NDoF))
        due, next_tick = Time(sec=1000), Time(sec=1000, nanosec=1000)
        assert len(list(mechanics.steps(ref, result, s, due))) == 1
        assert list(mechanics.steps(ref, result, s, next_tick)) == []
    finally:
        mechanics.close()
        node.destroy_node()


def test_a_support_nobody_reads_is_not_computed(system, ref):
    """Work nobody reads is not done: with no subscriber to the support's topics or the
    torques', a due tick has no contact mechanics (no step, no support) and its turn passes
    (the next tick within the period is not due either); at 100 Hz of stamps once a topic
    is subscribed. (~/markers draws the support of its own tick without them:
    test_marker_array.py.) The probe node of the test above."""
    node = rclpy.create_node('kin_dyn_unread_probe', namespace=NAMESPACE,
                             context=system.node.context)
    mechanics = ContactMechanics(node)
    try:
        settings = replace(system.node.loop.settings, equilibrium_rate=100.0, markers_rate=30.0)
        mechanics.configure(ref, FEET, settings)
        w_H_b, s = standing(ref)
        result = ref.compute_tick(w_H_b, s, np.zeros(6), np.zeros(ref.NDoF))
        ticks = [Time(sec=1000, nanosec=k * 1_000_000) for k in (0, 1, 7, 8)]
        assert not mechanics.has_work(stamp_to_ns(ticks[0]))
        assert list(mechanics.steps(ref, result, s, ticks[0])) == []
        assert not mechanics.has_work(stamp_to_ns(ticks[1]))   # the unread tick had the turn
        computed = []
        for k in range(1, 11):        # due ticks 10 ... 100 ms
            tick = Time(sec=1000, nanosec=k * 10_000_000)
            computed.append(mechanics.has_work(stamp_to_ns(tick)))
            list(mechanics.steps(ref, result, s, tick))
        assert computed == [False] * 10
        received = []
        sub = node.create_subscription(StabilityMargin, '~/stability_margin',
                                       received.append, 10)
        time.sleep(READERS_PERIOD_NS * 1e-9)     # the subscribers are counted that often
        try:
            for k in range(11, 14):
                tick = Time(sec=1000, nanosec=k * 10_000_000)
                assert mechanics.has_work(stamp_to_ns(tick))
                list(mechanics.steps(ref, result, s, tick))
        finally:
            node.destroy_subscription(sub)
    finally:
        mechanics.close()
        node.destroy_node()


def test_com_leaving_the_polygon_turns_red_and_back(system, ref):
    """Leaning forward (torso pitch, arms raised) with the soles still flat on z = 0 moves the
    CoM out over the toes. (Moving the base alone would move the feet with it: the polygon
    comes from the same kinematics.)"""
    w_H_b, s = standing(ref, **LEANING)
    stamp = send(system, ref, w_H_b, s, weight_on(ref, w_H_b, s))
    out = wait(system, stamp)
    want = core(ref, w_H_b, s)
    assert want.polygon.method == 'hull' and want.margin < -0.003 and not want.eq.feasible
    assert_polygon(out['support_polygon'], want)
    assert_margin(out['stability_margin'], want, FEET)
    assert not out['stability_margin'].inside
    disc = support_markers(system, stamp)[1]
    np.testing.assert_allclose((disc.color.r, disc.color.g, disc.color.b, disc.color.a),
                               OUTSIDE_RGBA, atol=1e-6)
    # upright again: inside, green, and equilibrium torques again
    w_H_b, s = standing(ref)
    later = send(system, ref, w_H_b, s, weight_on(ref, w_H_b, s))
    wait(system, later, ('stability_margin', 'equilibrium_torques'))
    assert system.rig.find('stability_margin', later).inside
    disc = support_markers(system, later)[1]
    np.testing.assert_allclose(disc.color.g, INSIDE_RGBA[1], atol=1e-6)
    # no contact forces hold the leaning robot: no torques were published for it (same
    # topic, later message arrived, so an earlier one would have too)
    assert system.rig.find('equilibrium_torques', stamp) is None


def test_a_contact_under_the_threshold_is_inactive(system, ref):
    w_H_b, s = standing(ref)
    weight = ref.get_total_mass() * 9.80665
    # left sole: the weight less 10 N, expressed in the l_foot frame; right sole: 10 N
    wrenches = {'l_sole': sole_wrench(ref, w_H_b, s, 'l_sole', weight - 10.0, frame='l_foot'),
                'r_sole': sole_wrench(ref, w_H_b, s, 'r_sole', 0.5 * THRESHOLD)}
    stamp = send(system, ref, w_H_b, s, wrenches)
    out = wait(system, stamp)
    want = core(ref, w_H_b, s, names=('l_sole',))
    assert len(want.polygon.vertices) == 4
    assert_polygon(out['support_polygon'], want)
    assert_margin(out['stability_margin'], want, ['l_sole'])
    assert not out['stability_margin'].inside     # the CoM is between the feet
    disc = support_markers(system, stamp)[1]
    np.testing.assert_allclose(disc.color.r, OUTSIDE_RGBA[0], atol=1e-6)
    # neither foot loaded: empty polygon, margin -inf, the outline DELETEd
    none = {c: sole_wrench(ref, w_H_b, s, c, 0.5 * THRESHOLD) for c in FEET}
    stamp = send(system, ref, w_H_b, s, none)
    out = wait(system, stamp)
    assert len(out['support_polygon'].polygon.points) == 0
    margin = out['stability_margin']
    assert margin.margin == -math.inf and not margin.inside and not margin.active_contacts
    assert support_markers(system, stamp)[0].action == Marker.DELETE


def test_diagnostics_count_the_due_equilibrium_ticks_and_why_not(system):
    """After the ticks above (among them one with no active contact): /diagnostics counts
    the due equilibrium ticks, the published ones (as many as the rig received, or more:
    its queue is 10 deep) and each reason for the others; none is unaccounted for but
    the one in flight."""
    rig = system.rig
    count = len(rig.received['diagnostics'])
    assert rig.spin_until(lambda: len(rig.received['diagnostics']) > count)
    tick = next(st for st in rig.received['diagnostics'][-1].status if st.name.endswith('tick'))
    report = {kv.key: kv.value for kv in tick.values}['equilibrium torques']
    match = re.fullmatch(r'(\d+) due, (\d+) published((?:; \d+ [^;]+)*)', report)
    assert match, report
    due, published = int(match.group(1)), int(match.group(2))
    skipped = dict((why, int(n)) for n, why in re.findall(r'; (\d+) ([^;]+)', match.group(3)))
    assert published >= len(rig.received['equilibrium_torques']) >= 1
    assert any(why.startswith('no active contact') for why in skipped), report
    assert published + sum(skipped.values()) in (due, due - 1), report


def test_contact_outputs_are_throttled_to_equilibrium_rate(system, ref):
    node, rig = system.node, system.rig
    w_H_b, s = standing(ref)
    wrenches = weight_on(ref, w_H_b, s)
    keys = ('support_polygon', 'stability_margin', 'equilibrium_torques')
    assert node.set_parameters([Parameter('equilibrium_rate', value=100.0)])[0].successful
    try:
        start = now_stamp(rig)
        stamps = []
        for k in range(13):         # 0, 1, ..., 12 ms, each ticked before the next is sent
            stamps.append(send(system, ref, w_H_b, s, wrenches,
                               from_ns(ns(start) + k * 1_000_000)))
            rig.wait_outputs(stamps[-1], ('com',))
        # 0 = off
        assert node.set_parameters([Parameter('equilibrium_rate', value=0.0)])[0].successful
        off = send(system, ref, w_H_b, s, wrenches)
        rig.wait_outputs(off, ('com',))
    finally:
        assert node.set_parameters([Parameter('equilibrium_rate', value=1e6)])[0].successful
    probe = send(system, ref, w_H_b, s, wrenches)
    wait(system, probe, keys)      # published after every earlier tick's, on each topic
    for key in keys:
        assert [k for k, st in enumerate(stamps) if rig.find(key, st)] == [0, 10], key
        assert rig.find(key, off) is None, key
    for bad in (-1.0, math.inf):
        res = node.set_parameters([Parameter('equilibrium_rate', value=bad)])[0]
        assert not res.successful and 'equilibrium_rate' in res.reason
    res = node.set_parameters([Parameter('contact_force_threshold', value=-5.0)])[0]
    assert not res.successful and "'contact_force_threshold' must be >= 0" in res.reason
    assert not node.set_parameters([Parameter('contact.l_sole.friction', value=0.1)])[0] \
        .successful                                                   # read-only


def call(system, request):
    future = system.client.call_async(request)
    assert system.rig.spin_until(future.done), 'check_equilibrium: no response'
    return future.result()


def state_msg(kd, w_H_b, s):
    return FloatingBaseState(joint_names=kd.joints_name_list, positions=s.tolist(),
                             base_pose=matrix_to_pose(w_H_b))


def assert_service_equals_core(res, want, kd, names):
    assert res.success, res.message
    assert res.feasible == want.eq.feasible
    assert abs(res.margin - want.margin) <= 1e-9 and res.inside == (want.margin >= 0)
    np.testing.assert_allclose(xyz(res.com), want.com, **F64)
    got = np.array([xyz(p) for p in res.polygon]).reshape(-1, 3)
    np.testing.assert_allclose(got[:, :2], want.polygon.vertices, **F64)
    np.testing.assert_allclose(got[:, 2], 0.0, atol=1e-9)
    tq = want.torques
    assert res.torques_feasible == tq.feasible
    assert list(res.joint_names) == kd.joints_name_list
    if tq.tau is None:
        assert len(res.torques) == 0 and len(res.forces) == 0
    else:
        np.testing.assert_allclose(res.torques, tq.tau, **F64)
        np.testing.assert_allclose([xyz(f) for f in res.forces], np.concatenate(tq.forces),
                                   **F64)
        assert abs(res.torque_margin - tq.torque_margin) <= 1e-9
    np.testing.assert_allclose([xyz(p) for p in res.points], np.concatenate(tq.points), **F64)
    assert list(res.point_contacts) == [c for c in names for _ in range(4)]
    assert (res.message == '') == (want.eq.feasible and tq.feasible)


def test_check_equilibrium_answers_equal_the_core(system, ref):
    w_H_b, s = standing(ref)
    # an explicit state, both feet (default: every configured contact)
    res = call(system, CheckEquilibrium.Request(state=state_msg(ref, w_H_b, s)))
    assert_service_equals_core(res, core(ref, w_H_b, s), ref, FEET)
    assert res.feasible and res.torques_feasible and res.margin > 0.03
    # one foot, its friction overridden: the CoM is outside, not in equilibrium
    res = call(system, CheckEquilibrium.Request(state=state_msg(ref, w_H_b, s),
                                                contacts=['r_sole'], friction=[0.2]))
    want = core(ref, w_H_b, s, names=('r_sole',), friction={'r_sole': 0.2})
    assert_service_equals_core(res, want, ref, ('r_sole',))
    assert not res.feasible and not res.inside and 'not in equilibrium' in res.message
    # the leaning robot, explicitly
    w_lean, s_lean = standing(ref, **LEANING)
    res = call(system, CheckEquilibrium.Request(state=state_msg(ref, w_lean, s_lean),
                                                contacts=list(FEET)))
    assert_service_equals_core(res, core(ref, w_lean, s_lean), ref, FEET)
    assert not res.feasible and not res.torques_feasible
    # the latest measured state (the node's own w_H_b, from the odometry's quaternion)
    stamp = send(system, ref, w_H_b, s, weight_on(ref, w_H_b, s))
    wait(system, stamp)
    res = call(system, CheckEquilibrium.Request(use_measured_state=True, contacts=['l_sole',
                                                                                   'r_sole']))
    measured = system.node.loop.last_tick.state
    assert_service_equals_core(res, core(ref, measured.w_H_b, measured.s), ref, FEET)


def test_a_check_in_progress_never_holds_up_the_other_services(system, ref, monkeypatch):
    """~/check_equilibrium is awaited off the executor's thread: while one is computing (held
    here until released), ~/get_dynamics is answered; released, the check answers as the
    core, computed by its own worker process. (The executor is single-threaded, as
    rclpy.spin's.) The services' process runs the same EquilibriumService, which this test
    holds through the node's own (its QueryWorker is patched here, in this process)."""
    if system.node.get_parameter('services_process').value:
        pytest.skip('the services\' process runs this code too: tested on the in_process node')
    queries = system.node.loop.planners._checks
    inner, entered, release = queries.call, threading.Event(), threading.Event()
    asked = queries._key                    # queries its process has been sent so far

    def held(*args):
        entered.set()
        assert release.wait(30.0)
        return inner(*args)
    monkeypatch.setattr(queries, 'call', held)
    dynamics = system.rig.node.create_client(GetDynamics,
                                             system.rig.private('get_dynamics'))
    try:
        assert dynamics.wait_for_service(timeout_sec=10.0)
        w_H_b, s = standing(ref)
        check = system.client.call_async(CheckEquilibrium.Request(state=state_msg(ref, w_H_b,
                                                                                  s)))
        assert system.rig.spin_until(entered.is_set)
        answer = dynamics.call_async(GetDynamics.Request(state=state_msg(ref, w_H_b, s)))
        assert system.rig.spin_until(answer.done), 'get_dynamics waited for the check'
        assert answer.result().success and not check.done()
        release.set()
        assert system.rig.spin_until(check.done)
        assert_service_equals_core(check.result(), core(ref, w_H_b, s), ref, FEET)
        assert queries.running and queries._key == asked + 1     # answered by its process
    finally:
        release.set()
        system.rig.node.destroy_client(dynamics)


def test_check_equilibrium_errors_are_reported_not_thrown(system, ref):
    w_H_b, s = standing(ref)
    good = state_msg(ref, w_H_b, s)
    short = state_msg(ref, w_H_b, s)
    short.positions = [0.0] * 3
    bad_q = state_msg(ref, w_H_b, s)
    bad_q.base_pose.orientation.w = math.nan
    cases = [
        (dict(state=good, contacts=['l_sole', 'nope']),
         re.escape("unknown contacts ['nope'] (configured: ['l_sole', 'r_sole'])")),
        (dict(state=good, contacts=['l_sole', 'l_sole']), 'named twice'),
        (dict(state=good, friction=[0.5]), 'expected 0 or 2 friction coefficients'),
        (dict(state=good, friction=[0.5, -1.0]), 'must be finite and >= 0'),
        (dict(state=short), '32 joint_names, 3 positions'),
        (dict(state=bad_q), 'base_pose.*NaN'),
    ]
    for fields, match in cases:
        res = call(system, CheckEquilibrium.Request(**fields))
        assert not res.success, fields
        assert re.search(match, res.message), (match, res.message)
    res = call(system, CheckEquilibrium.Request(state=good))       # still answering
    assert res.success and res.feasible


def test_contact_parameters_are_validated():
    base = dict(contacts=('l_sole',))
    ok = make_settings(**base)
    assert ok.contact_geometry == (('l_sole', (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), 0.6),)
    assert (ok.contact_force_threshold, ok.equilibrium_rate) == (20.0, 100.0)
    bad = [
        ((0.0, 0.0, 0.0, 1.0), None, None, "'contact.l_sole.points' must be a flat list of 3k"),
        ((), None, None, "'contact.l_sole.points' must be a flat list of 3k"),
        ((0.0, math.nan, 0.0), None, None, "'contact.l_sole.points' contains NaN"),
        (None, (0.0, 0.0, 0.0), None, "'contact.l_sole.normal' must be 3 numbers, not all zero"),
        (None, (0.0, 1.0), None, "'contact.l_sole.normal' must be 3 numbers"),
        (None, None, -0.1, "'contact.l_sole.friction' must be a finite number >= 0"),
        (None, None, 'high', "'contact.l_sole.friction' must be a finite number >= 0"),
    ]
    for points, normal, friction, match in bad:
        with pytest.raises(ValueError, match=re.escape(match)):
            make_settings(**base, contact_geometry=(('l_sole', points, normal, friction),))
    with pytest.raises(ValueError, match="'equilibrium_rate' must be >= 0"):
        make_settings(**base, equilibrium_rate=-1.0)


def test_bad_contact_parameter_stops_the_node_at_start_up(ros_context):
    with pytest.raises(ValueError, match=re.escape("'contact.l_sole.points' must be a flat")):
        KinDynNode(context=ros_context, namespace=f'{NAMESPACE}/bad', parameter_overrides=[
            Parameter('contacts', value=['l_sole']),
            Parameter('contact.l_sole.points', value=[0.1, 0.2])])


def test_ground_support_is_the_hull_of_the_projected_points(ref):
    """Flat soles: the core's support_polygon exactly; a tilted sole: the hull of the points
    projected along gravity (the core would iterate LPs)."""
    w_H_b, s = standing(ref)
    contacts = feet()
    poses = contact_poses(ref, w_H_b, s, contacts)
    com = ref.CoM_position(w_H_b, s)
    got = ground_support(contacts, poses, com, ref.gravity)
    want = support_polygon(contacts, poses, ref.gravity)
    np.testing.assert_array_equal(got.polygon.vertices, want.vertices)
    assert got.margin == want.margin(com) and got.inside
    tilted = dict(poses)
    c, s_ = math.cos(0.1), math.sin(0.1)
    tilted['r_sole'] = poses['r_sole'] @ np.array([[c, 0, s_, 0], [0, 1, 0, 0], [-s_, 0, c, 0],
                                                   [0, 0, 0, 1.0]])
    got = ground_support(contacts, tilted, com, ref.gravity)
    pts = np.concatenate([k.world_points(tilted[k.link]) for k in contacts])
    assert len(got.polygon.vertices) == 6
    for v in got.polygon.vertices:          # every vertex is a projected point
        assert np.min(np.linalg.norm(pts[:, :2] - v, axis=1)) <= 1e-15
    np.testing.assert_allclose(got.points[:, 2], pts[:, 2].mean(), atol=1e-15)
    assert support_polygon(contacts, tilted, ref.gravity).method == 'cone'
