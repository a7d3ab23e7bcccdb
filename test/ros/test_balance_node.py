"""Balance outputs of kin_dyn_node (~/zmp, ~/capture_point, ~/cop, the balance fields of
~/stability_margin, markers ns cop / zmp / capture_point), in-process over real rclpy and
loopback DDS, against an independent computation and the ROS-free core.

iCub stands with both soles flat on z = 0 (as in test_contacts_node.py), moving: non-zero
joint velocities and a base twist in the odometry of the root link, so that the DCM is not
the CoM. The sole wrenches are not simple: tangential forces and moments, different per foot,
expressed in another link's frame (l_foot, root_link) or the sole's own.

The independent computation uses Pinocchio alone for the kinematics (link poses, CoM and CoM
velocity from ``pin.centerOfMass`` with the odometry's body twist as the free-flyer velocity)
and does the balance arithmetic by hand: each sensor wrench to world axes about the world
origin, the CoP ``p = o + n x (tau - o x f) / (n . f)`` on the sole plane (per contact) and on
the ground plane z = 0 (the ZMP, of the summed wrenches), the DCM ``c + c_dot / omega``,
``omega = sqrt(g / h)``. Margins are the core's SupportPolygon.margin (as in
test_contacts_node.py). Everything is float64 and compared to 1e-9.

Run:  source scripts/env.sh && python -m pytest test/ros/test_balance_node.py
"""

import math
import pathlib
import sys
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from geometry_msgs.msg import PointStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402

from kin_dyn_ros.dynamics.contacts import Contact, contact_poses, support_polygon  # noqa: E402
from kin_dyn_ros.node.balance_outputs import INSIDE_RGBA, OUTSIDE_RGBA  # noqa: E402
from kin_dyn_ros_interfaces.msg import CentresOfPressure, StabilityMargin  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / 'dynamics'))
from oracles import normalize_axes  # noqa: E402
from ros_helpers import (joint_state_msg, load_model, loopback_context,  # noqa: E402
                         module_namespace, node_and_rig, now_stamp, ns, odometry_msg,
                         standing, wrench_msg, xyz)

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

FEET = ('l_sole', 'r_sole')
SOLE = [0.05, 0.025, 0.0, -0.05, 0.025, 0.0, -0.05, -0.025, 0.0, 0.05, -0.025, 0.0]
THRESHOLD = 20.0
WORLD = 'odom'
NODE_PARAMS = {'contacts': list(FEET), 'world_frame': WORLD, 'wrench_timeout': 0.5,
               'contact_force_threshold': THRESHOLD, 'equilibrium_rate': 1e6,
               'markers_rate': 1e6,     # every tick's markers and stability margin
               **{f'contact.{c}.points': SOLE for c in FEET}}
CONTACT_TOPICS = {c: f'{c}/wrench' for c in FEET}
F64 = dict(rtol=1e-9, atol=1e-9)
G = 9.80665
NAMESPACE = module_namespace(__name__)    # the nodes, helpers and clients of this module
BALANCE_NS = ('cop', 'zmp', 'capture_point')
OWN_OUTPUTS = {'zmp': PointStamped, 'capture_point': PointStamped, 'cop': CentresOfPressure,
               'stability_margin': StabilityMargin, 'equilibrium_torques': JointState}


# -- fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(101, 133)


@pytest.fixture(scope='module')
def system(ros_context, icub_urdf):
    with node_and_rig(ros_context, NODE_PARAMS, 'kin_dyn_balance_helper',
                      CONTACT_TOPICS, NAMESPACE) as (node, rig):
        rig.record_private(OWN_OUTPUTS)
        load_model(rig, icub_urdf)
        # the node computes and publishes the balance outputs only while they have
        # subscribers: wait until it sees ours (DDS discovery)
        assert rig.spin_until(lambda: all(node.count_subscribers(rig.private(key))
                                          for key in ('zmp', 'capture_point', 'cop', 'markers')))
        yield SimpleNamespace(node=node, rig=rig)


class Pin:
    """Pinocchio on iCub with a free-flyer root (the URDF root, root_link), joints mapped by
    name to the node's order: world poses of links, CoM and CoM velocity."""

    def __init__(self, urdf, joints):
        self.model = pin.buildModelFromXML(normalize_axes(urdf), pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        self.joints = list(joints)
        self.idx = []
        for name in self.joints:
            jm = self.model.joints[self.model.getJointId(name)]
            assert jm.nq == 1 and jm.nv == 1, name
            self.idx.append((jm.idx_q, jm.idx_v))
        assert self.model.nv == 6 + len(self.joints)

    def q(self, w_H_b, s):
        q = np.zeros(self.model.nq)
        q[:3] = w_H_b[:3, 3]
        q[3:7] = pin.Quaternion(w_H_b[:3, :3]).coeffs()
        for (iq, _), v in zip(self.idx, s):
            q[iq] = v
        return q

    def v(self, twist_body, s_dot):
        """The free flyer's velocity is the root's twist in its own axes (REP-105 odometry)."""
        v = np.zeros(self.model.nv)
        v[:6] = twist_body
        for (_, iv), sd in zip(self.idx, s_dot):
            v[iv] = sd
        return v

    def pose(self, w_H_b, s, link):
        q = self.q(w_H_b, s)
        pin.framesForwardKinematics(self.model, self.data, q)
        return self.data.oMf[self.model.getFrameId(link)].homogeneous.copy()

    def com(self, w_H_b, s, twist, s_dot):
        """(c, c_dot) world frame."""
        pin.centerOfMass(self.model, self.data, self.q(w_H_b, s), self.v(twist, s_dot))
        return self.data.com[0].copy(), self.data.vcom[0].copy()


@pytest.fixture(scope='module')
def oracle(icub_urdf, ref):
    return Pin(icub_urdf, ref.joints_name_list)


# -- states and wrenches -----------------------------------------------------------------------
UPPER_BODY = dict(torso_pitch=0.08, torso_roll=-0.05, torso_yaw=0.1, l_shoulder_pitch=-0.4,
                  r_shoulder_roll=0.3, l_elbow=0.6, neck_yaw=0.2)


def moving(kd, seed, base_speed=0.15):
    """(s_dot (n,), base twist (6,) in root_link axes): a moving state."""
    rng = np.random.default_rng(seed)
    twist = np.concatenate([rng.normal(size=3) * base_speed, rng.normal(size=3) * 0.2])
    return rng.normal(size=kd.NDoF) * 0.3, twist


def world_to_sensor(w_H_e, f, tau_o):
    """A world wrench (force ``f``, moment ``tau_o`` about the world origin) as a sensor in
    frame E at ``w_H_e`` reports it: E's axes, about E's origin."""
    r, o = w_H_e[:3, :3], w_H_e[:3, 3]
    return np.concatenate([r.T @ f, r.T @ (tau_o - np.cross(o, f))])


def sensor_to_world(w_H_e, w):
    """The inverse of :func:`world_to_sensor`: (f, tau about the world origin), world axes."""
    r, o = w_H_e[:3, :3], w_H_e[:3, 3]
    f = r @ w[:3]
    return f, r @ w[3:] + np.cross(o, f)


def designed(oracle, w_H_b, s, contact, frame, cop_xy, force, normal_moment):
    """(frame_id, wrench) of ``contact`` whose CoP on z = 0 is at ``cop_xy`` (world), with
    ``force`` (3,) (world) and a moment ``normal_moment`` about the vertical through the
    CoP; expressed in link ``frame`` ('' = the contact's own)."""
    p = np.array([*cop_xy, 0.0])
    f = np.asarray(force, dtype=float)
    tau_o = np.cross(p, f) + [0.0, 0.0, normal_moment]
    return frame, world_to_sensor(oracle.pose(w_H_b, s, frame or contact), f, tau_o)


def standing_wrenches(oracle, w_H_b, s):
    """Both soles loaded, CoPs inside their soles, tangential forces and normal moments
    different per foot; l_sole's wrench in l_foot's frame, r_sole's in root_link's."""
    r = oracle.pose(w_H_b, s, 'r_sole')[:3, 3]
    return {'l_sole': designed(oracle, w_H_b, s, 'l_sole', 'l_foot', (0.02, -0.01),
                               (8.0, -5.0, 180.0), 0.7),
            'r_sole': designed(oracle, w_H_b, s, 'r_sole', 'root_link',
                               (r[0] - 0.015, r[1] + 0.012), (-6.0, 4.0, 150.0), -0.4)}


# -- the independent computation ---------------------------------------------------------------
def cop_on(f, tau_o, o, n):
    """CoP of (f, tau about the world origin) on the plane (o, n), and n . f."""
    fn = float(n @ f)
    return o + np.cross(n, tau_o - np.cross(o, f)) / fn, fn


def by_hand(oracle, w_H_b, s, twist, s_dot, wrenches):
    """The expected balance outputs (see the module docstring)."""
    cops, total_f, total_tau, active = {}, np.zeros(3), np.zeros(3), []
    for c in FEET:
        frame, w = wrenches[c]
        f, tau_o = sensor_to_world(oracle.pose(w_H_b, s, frame or c), w)
        sole = oracle.pose(w_H_b, s, c)
        centre = sole[:3, :3] @ np.reshape(SOLE, (-1, 3)).mean(axis=0) + sole[:3, 3]
        point, fn = cop_on(f, tau_o, centre, sole[:3, :3] @ [0.0, 0.0, 1.0])
        cops[c] = (point, fn, fn > THRESHOLD)
        if fn > THRESHOLD:
            active.append(c)
            total_f, total_tau = total_f + f, total_tau + tau_o
    out = SimpleNamespace(cops=cops, active=active, zmp=None, capture_point=None, dcm=None)
    com, com_dot = oracle.com(w_H_b, s, twist, s_dot)
    out.com = com
    if active:
        out.zmp, _ = cop_on(total_f, total_tau, np.zeros(3), np.array([0.0, 0.0, 1.0]))
        omega = math.sqrt(G / com[2])           # height above the soles' plane z = 0
        out.dcm = com + com_dot / omega
        out.capture_point = np.array([*out.dcm[:2], 0.0])
    return out


def core_polygon(kd, w_H_b, s, names):
    contacts = [Contact(c, np.reshape(SOLE, (-1, 3)), [0, 0, 1], 0.6) for c in names]
    return support_polygon(contacts, contact_poses(kd, w_H_b, s, contacts), kd.gravity)


# -- sending and receiving ---------------------------------------------------------------------
def send(system, kd, w_H_b, s, wrenches, s_dot=None, twist=None, stamp=None):
    """Odometry of root_link (pose and twist in its axes), the wrenches ({contact: (frame,
    w)}) and a JointState with velocities, all stamped ``stamp`` (default now); returns the
    stamp once the node holds the odometry and wrenches (the JointState ticks it)."""
    rig, node = system.rig, system.node
    n = kd.NDoF
    s_dot = np.zeros(n) if s_dot is None else s_dot
    twist = np.zeros(6) if twist is None else twist
    stamp = stamp or now_stamp(rig)
    rig.odometry.publish(odometry_msg(WORLD, 'root_link', w_H_b, twist, stamp))
    for c, (frame, w) in wrenches.items():
        rig.wrenches[c].publish(wrench_msg(frame, w, stamp))
    inputs = node.loop.inputs
    assert rig.spin_until(
        lambda: inputs.odometry_buffer and inputs.odometry_buffer[-1].stamp_ns == ns(stamp)
        and all(inputs.wrench_buffers.get(c) and inputs.wrench_buffers[c][-1].stamp_ns == ns(stamp)
                for c in wrenches))
    rig.joint_states.publish(joint_state_msg(kd.joints_name_list, s, s_dot, np.zeros(n), stamp))
    return stamp


def wait(system, stamp, keys):
    rig = system.rig
    assert rig.spin_until(lambda: all(rig.find(k, stamp) for k in keys)), \
        f'missing at {stamp}: {[k for k in keys if not rig.find(k, stamp)]}'
    return {k: rig.find(k, stamp) for k in keys}


ALL = ('zmp', 'capture_point', 'cop', 'stability_margin', 'markers', 'com')


def balance_markers(msg):
    """{(ns, id): Marker} of the balance namespaces of a MarkerArray."""
    return {(m.ns, m.id): m for m in msg.markers if m.ns in BALANCE_NS}


def rgba(marker):
    return (marker.color.r, marker.color.g, marker.color.b, marker.color.a)


def assert_colour(marker, inside):
    np.testing.assert_allclose(rgba(marker), INSIDE_RGBA if inside else OUTSIDE_RGBA,
                               atol=1e-6)


def assert_stamped(out, stamp):
    for key in ('zmp', 'capture_point', 'cop', 'stability_margin'):
        assert out[key].header.stamp == stamp, key
        assert out[key].header.frame_id == WORLD, key
    for m in balance_markers(out['markers']).values():
        assert m.header.stamp == stamp and m.header.frame_id == WORLD


def assert_cops(msg, want):
    assert list(msg.contacts) == list(FEET)
    assert list(msg.defined) == [want.cops[c][2] for c in FEET]
    assert len(msg.points) == len(msg.normal_forces) == len(FEET)
    for k, c in enumerate(FEET):
        point, fn, defined = want.cops[c]
        assert abs(msg.normal_forces[k] - fn) <= 1e-9 * max(1.0, abs(fn)), (c, fn)
        if defined:
            np.testing.assert_allclose(xyz(msg.points[k]), point, **F64)
        else:
            assert xyz(msg.points[k]).tolist() == [0.0, 0.0, 0.0]


def assert_margins(msg, want, polygon):
    """~/stability_margin's balance fields: the points and SupportPolygon.margin of them."""
    assert list(msg.active_contacts) == want.active
    np.testing.assert_allclose(xyz(msg.zmp), want.zmp, **F64)
    np.testing.assert_allclose(xyz(msg.capture_point), want.capture_point, **F64)
    zmp_margin, cp_margin = polygon.margin(want.zmp), polygon.margin(want.capture_point)
    assert abs(msg.zmp_margin - zmp_margin) <= 1e-9, (msg.zmp_margin, zmp_margin)
    assert abs(msg.capture_point_margin - cp_margin) <= 1e-9, (msg.capture_point_margin,
                                                               cp_margin)
    assert msg.zmp_inside == (msg.zmp_margin >= 0.0) == (zmp_margin >= 0.0)
    assert msg.capture_point_inside == (msg.capture_point_margin >= 0.0) == (cp_margin >= 0.0)
    return zmp_margin, cp_margin


def assert_balance_markers(out, want, inside):
    """Markers cop 0, 1, zmp 0, capture_point 0 at the expected points (DELETE where a CoP
    is undefined), coloured by ``inside`` ({(ns, id): bool})."""
    markers = balance_markers(out['markers'])
    assert set(markers) == {('cop', 0), ('cop', 1), ('zmp', 0), ('capture_point', 0)}
    expected = {('cop', k): want.cops[c][0] if want.cops[c][2] else None
                for k, c in enumerate(FEET)}
    expected['zmp', 0], expected['capture_point', 0] = want.zmp, want.capture_point
    for key, point in expected.items():
        m = markers[key]
        assert m.type == Marker.SPHERE, key
        if point is None:
            assert m.action == Marker.DELETE, key
            continue
        assert m.action == Marker.ADD, key
        np.testing.assert_allclose(xyz(m.pose.position), point, **F64)
        assert_colour(m, inside[key])


# -- tests -----------------------------------------------------------------------------------
def test_standing_and_moving_balance_equals_the_hand_computation(system, ref, oracle):
    w_H_b, s = standing(ref, **UPPER_BODY)
    s_dot, twist = moving(ref, 1)
    wrenches = standing_wrenches(oracle, w_H_b, s)
    # (the markers' colours: the support polygon of their own tick, see
    # test_marker_colours_use_the_support_polygon_of_their_own_tick)
    stamp = send(system, ref, w_H_b, s, wrenches, s_dot, twist)
    out = wait(system, stamp, ALL)
    want = by_hand(oracle, w_H_b, s, twist, s_dot, wrenches)
    assert_stamped(out, stamp)

    # sanity of the hand computation: the designed CoPs and their force-weighted mean
    r = oracle.pose(w_H_b, s, 'r_sole')[:3, 3]
    np.testing.assert_allclose(want.cops['l_sole'][0], [0.02, -0.01, 0.0], atol=1e-12)
    np.testing.assert_allclose(want.cops['r_sole'][0], [r[0] - 0.015, r[1] + 0.012, 0.0],
                               atol=1e-12)
    np.testing.assert_allclose(want.zmp, (180.0 * want.cops['l_sole'][0]
                                          + 150.0 * want.cops['r_sole'][0]) / 330.0, atol=1e-12)
    assert want.active == list(FEET)
    # the state moves: the DCM is away from the CoM, the capture point from the ZMP
    assert np.linalg.norm(want.dcm - want.com) > 0.01
    np.testing.assert_allclose(xyz(out['com'].point), want.com, **F64)

    np.testing.assert_allclose(xyz(out['zmp'].point), want.zmp, **F64)
    np.testing.assert_allclose(xyz(out['capture_point'].point), want.capture_point, **F64)
    assert_cops(out['cop'], want)
    polygon = core_polygon(ref, w_H_b, s, FEET)
    zmp_margin, cp_margin = assert_margins(out['stability_margin'], want, polygon)
    assert zmp_margin > 0.0          # the ZMP lies between the CoPs, inside the polygon
    cops_inside = [polygon.margin(want.cops[c][0]) >= 0.0 for c in FEET]
    assert all(cops_inside)
    assert_balance_markers(out, want, {('cop', 0): True, ('cop', 1): True, ('zmp', 0): True,
                                       ('capture_point', 0): cp_margin >= 0.0})


def test_a_lifted_foot_has_no_cop_and_the_zmp_is_the_other_cop(system, ref, oracle):
    w_H_b, s = standing(ref, **UPPER_BODY)
    s_dot, twist = moving(ref, 2)
    r = oracle.pose(w_H_b, s, 'r_sole')[:3, 3]
    wrenches = {'l_sole': designed(oracle, w_H_b, s, 'l_sole', 'l_foot', (-0.012, 0.008),
                                   (-10.0, 6.0, 310.0), -0.9),
                # below the threshold: tangential force, moments, in its own frame
                'r_sole': designed(oracle, w_H_b, s, 'r_sole', '', (r[0] + 0.01, r[1]),
                                   (3.0, -2.0, 0.5 * THRESHOLD), 0.2)}
    wait(system, send(system, ref, w_H_b, s, wrenches, s_dot, twist), ('stability_margin',))
    stamp = send(system, ref, w_H_b, s, wrenches, s_dot, twist)
    out = wait(system, stamp, ALL)
    want = by_hand(oracle, w_H_b, s, twist, s_dot, wrenches)
    assert_stamped(out, stamp)
    assert want.active == ['l_sole']
    assert abs(want.cops['r_sole'][1] - 0.5 * THRESHOLD) <= 1e-9

    cop = out['cop']
    assert list(cop.defined) == [True, False]
    assert xyz(cop.points[1]).tolist() == [0.0, 0.0, 0.0]
    assert_cops(cop, want)
    # the ZMP is l_sole's CoP
    np.testing.assert_allclose(xyz(out['zmp'].point), want.cops['l_sole'][0], **F64)
    np.testing.assert_allclose(xyz(out['zmp'].point), want.zmp, **F64)
    np.testing.assert_allclose(xyz(out['capture_point'].point), want.capture_point, **F64)
    polygon = core_polygon(ref, w_H_b, s, ('l_sole',))
    zmp_margin, cp_margin = assert_margins(out['stability_margin'], want, polygon)
    assert zmp_margin > 0.0
    assert_balance_markers(out, want, {('cop', 0): True, ('zmp', 0): True,
                                       ('capture_point', 0): cp_margin >= 0.0})
    assert balance_markers(out['markers'])['cop', 1].action == Marker.DELETE


def test_no_active_contact_publishes_no_balance_point(system, ref, oracle):
    w_H_b, s = standing(ref)
    s_dot, twist = moving(ref, 3)
    r = oracle.pose(w_H_b, s, 'r_sole')[:3, 3]
    tiny = {'l_sole': designed(oracle, w_H_b, s, 'l_sole', 'l_foot', (0.0, 0.0),
                               (1.0, 0.5, 0.8 * THRESHOLD), 0.1),
            'r_sole': designed(oracle, w_H_b, s, 'r_sole', '', (r[0], r[1]),
                               (-0.5, 1.0, 2.0), -0.1)}
    stamp = send(system, ref, w_H_b, s, tiny, s_dot, twist)
    out = wait(system, stamp, ('com', 'stability_margin', 'markers'))
    rig = system.rig
    rig.spin_until(lambda: False, timeout_s=0.3)        # a short window: nothing comes
    for key in ('zmp', 'capture_point', 'cop'):
        assert rig.find(key, stamp) is None, key
    margin = out['stability_margin']
    assert not margin.active_contacts
    assert margin.zmp_margin == -math.inf and not margin.zmp_inside
    assert margin.capture_point_margin == -math.inf and not margin.capture_point_inside
    assert xyz(margin.zmp).tolist() == xyz(margin.capture_point).tolist() == [0.0] * 3
    markers = balance_markers(out['markers'])
    assert set(markers) == {('cop', 0), ('cop', 1), ('zmp', 0), ('capture_point', 0)}
    assert all(m.action == Marker.DELETE for m in markers.values())
    # a later tick with contacts again: its outputs arrive (so would the earlier ones have)
    w_H_b, s = standing(ref)
    later = send(system, ref, w_H_b, s, standing_wrenches(oracle, w_H_b, s))
    wait(system, later, ('zmp', 'capture_point', 'cop'))
    for key in ('zmp', 'capture_point', 'cop'):
        assert rig.find(key, stamp) is None, key


def test_markers_turn_red_outside_the_support_polygon(system, ref, oracle):
    """l_sole's measured CoP well ahead of its toes pulls the ZMP out of the polygon, and a
    fast base velocity (backwards) takes the capture point out; r_sole's CoP stays inside."""
    w_H_b, s = standing(ref)
    _, twist = moving(ref, 4)
    s_dot = np.zeros(ref.NDoF)
    twist[:3] = [-1.2, 0.0, 0.0]          # root_link's axes are the world's here: fast
    r = oracle.pose(w_H_b, s, 'r_sole')[:3, 3]
    wrenches = {'l_sole': designed(oracle, w_H_b, s, 'l_sole', 'root_link', (0.2, 0.0),
                                   (15.0, 3.0, 250.0), 1.5),
                'r_sole': designed(oracle, w_H_b, s, 'r_sole', 'r_foot', (r[0], r[1] - 0.01),
                                   (-4.0, -2.0, 100.0), 0.3)}
    wait(system, send(system, ref, w_H_b, s, wrenches, s_dot, twist), ('stability_margin',))
    stamp = send(system, ref, w_H_b, s, wrenches, s_dot, twist)
    out = wait(system, stamp, ALL)
    want = by_hand(oracle, w_H_b, s, twist, s_dot, wrenches)
    assert_stamped(out, stamp)
    polygon = core_polygon(ref, w_H_b, s, FEET)
    zmp_margin, cp_margin = assert_margins(out['stability_margin'], want, polygon)
    assert zmp_margin < 0.0 and cp_margin < 0.0
    assert not out['stability_margin'].zmp_inside
    assert not out['stability_margin'].capture_point_inside
    assert polygon.margin(want.cops['l_sole'][0]) < 0.0
    assert polygon.margin(want.cops['r_sole'][0]) > 0.0
    np.testing.assert_allclose(xyz(out['zmp'].point), want.zmp, **F64)
    np.testing.assert_allclose(xyz(out['capture_point'].point), want.capture_point, **F64)
    assert_cops(out['cop'], want)
    assert_balance_markers(out, want, {('cop', 0): False, ('cop', 1): True, ('zmp', 0): False,
                                       ('capture_point', 0): False})


def test_marker_colours_use_the_support_polygon_of_their_own_tick(system, ref, oracle):
    """A tick whose active contacts differ from the tick before it: its markers' colours
    must agree with its own ~/stability_margin (zmp_inside), i.e. with the support polygon
    of that tick. Before: only l_sole loaded; then both feet, the ZMP between them (outside
    l_sole's polygon, inside the two feet's)."""
    w_H_b, s = standing(ref)
    r = oracle.pose(w_H_b, s, 'r_sole')[:3, 3]
    one = {'l_sole': designed(oracle, w_H_b, s, 'l_sole', '', (0.0, 0.0),
                              (0.0, 0.0, 300.0), 0.0),
           'r_sole': designed(oracle, w_H_b, s, 'r_sole', '', (r[0], r[1]),
                              (0.0, 0.0, 1.0), 0.0)}
    both = {'l_sole': one['l_sole'],
            'r_sole': designed(oracle, w_H_b, s, 'r_sole', '', (r[0], r[1]),
                               (0.0, 0.0, 300.0), 0.0)}
    wait(system, send(system, ref, w_H_b, s, one), ('stability_margin',))
    stamp = send(system, ref, w_H_b, s, both)
    out = wait(system, stamp, ALL)
    want = by_hand(oracle, w_H_b, s, np.zeros(6), np.zeros(ref.NDoF), both)
    polygon = core_polygon(ref, w_H_b, s, FEET)
    zmp_margin, _ = assert_margins(out['stability_margin'], want, polygon)
    assert zmp_margin > 0.05 and out['stability_margin'].zmp_inside
    markers = balance_markers(out['markers'])
    np.testing.assert_allclose(xyz(markers['zmp', 0].pose.position), want.zmp, **F64)
    assert_colour(markers['zmp', 0], inside=True)
