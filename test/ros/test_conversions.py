"""Pure tests of the node's helpers (no rclpy.init()): conversions, the JointState merger,
settings validation, markers, diagnostics and the serialised message templates (the
quaternion and base-state math is the core's: test/dynamics/test_quaternions.py and
test_base_state.py).

Run:  source scripts/env.sh && python -m pytest test/ros/test_conversions.py
"""

import math
import pathlib
import sys

import numpy as np
import pytest

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import (Pose, PointStamped, PolygonStamped, Transform, Twist,  # noqa: E402
                               TwistStamped)
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from kin_dyn_ros.node import conversions as cv  # noqa: E402
from kin_dyn_ros.node.support_outputs import (INSIDE_RGBA, OUTSIDE_RGBA,  # noqa: E402
                                             SupportMessages, margin_values,
                                             support_markers)
from kin_dyn_ros.node.inputs import TickInputs  # noqa: E402
from kin_dyn_ros.node.diagnostics import InputsReport, TickStats, build_diagnostics  # noqa: E402
from kin_dyn_ros.dynamics import KinDynComputations, Representations  # noqa: E402
from kin_dyn_ros.dynamics.balance import Balance, CentreOfPressure, Divergence  # noqa: E402
from kin_dyn_ros.dynamics.compiled import jit_status  # noqa: E402
from kin_dyn_ros.dynamics.contacts import GroundSupport  # noqa: E402
from kin_dyn_ros.dynamics.quaternions import rotations_to_quaternions  # noqa: E402
from kin_dyn_ros.dynamics.spatial import so3_exp  # noqa: E402
from kin_dyn_ros.node.markers import ANGULAR_SCALE, FORCE_SCALE, LINEAR_SCALE, MarkerSet  # noqa: E402
from kin_dyn_ros.node.outputs import SerializedTemplate, TickMessages  # noqa: E402
from kin_dyn_ros_interfaces.msg import ForwardDynamics, StabilityMargin  # noqa: E402
from kin_dyn_ros.node.settings import Settings, make_settings, updated_settings  # noqa: E402
from kin_dyn_ros.node.tick import massless_note  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ros_helpers import MIMIC_URDF, xyz  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')


@pytest.fixture(scope='module')
def icub(icub_urdf):
    return KinDynComputations(icub_urdf)


def random_pose(rng):
    h = np.eye(4)
    h[:3, :3] = so3_exp(rng.normal(size=3))
    h[:3, 3] = rng.normal(size=3)
    return h


def joint_state(names, pos, vel=(), eff=()):
    return JointState(name=list(names), position=[float(v) for v in pos],
                      velocity=[float(v) for v in vel], effort=[float(v) for v in eff])


# -- rotations and poses ---------------------------------------------------------------------
def test_pose_transform_and_list_round_trips():
    rng = np.random.default_rng(1)
    h = random_pose(rng)
    pose = cv.matrix_to_pose(h)
    assert isinstance(pose, Pose)
    np.testing.assert_allclose(cv.pose_to_matrix(pose), h, atol=1e-14)
    tf = cv.make_transform_stamped(h, 'a', 'b', Time(sec=3, nanosec=4))
    assert (tf.header.frame_id, tf.child_frame_id, tf.header.stamp.sec) == ('a', 'b', 3)
    np.testing.assert_allclose(cv.transform_to_matrix(tf.transform), h, atol=1e-14)
    x, y, z, w = rotations_to_quaternions(h[:3, :3])[0]
    np.testing.assert_allclose(cv.pose_list_to_matrix([*h[:3, 3], x, y, z, w]), h, atol=1e-14)
    with pytest.raises(ValueError, match='7 values, got 6'):
        cv.pose_list_to_matrix([0.0] * 6)
    bad = Pose()
    bad.orientation.w = 0.0   # the zero quaternion
    with pytest.raises(ValueError, match='unit quaternion'):
        cv.pose_to_matrix(bad)
    t = Transform()
    t.rotation.w = 1.0
    t.translation.x = math.inf
    with pytest.raises(ValueError, match='NaN or inf'):
        cv.transform_to_matrix(t)


def test_twist_and_matrix_lists():
    tw = Twist()
    tw.linear.x, tw.angular.z = 1.0, -2.0
    np.testing.assert_array_equal(cv.twist_to_array(tw), [1, 0, 0, 0, 0, -2])
    tw.angular.y = math.nan
    with pytest.raises(ValueError, match='twist contains NaN'):
        cv.twist_to_array(tw)
    m = np.arange(12.0).reshape(3, 4)
    data, shape = cv.matrix_to_list(m)
    assert shape == (3, 4) and list(data) == list(range(12))
    np.testing.assert_array_equal(cv.list_to_matrix(data, 3, 4), m)
    with pytest.raises(ValueError, match='expected 4 x 4 = 16 values, got 12'):
        cv.list_to_matrix(data, 4, 4)
    assert cv.stamp_to_ns(Time(sec=2, nanosec=5)) == 2_000_000_005


def test_ns_words_are_the_words_of_the_stamp_of_those_nanoseconds():
    """The per-tick pack's stamp words come from integer nanoseconds (no Time made): the
    same as the message's fields serialised (sec an int32 as its two's complement word)."""
    for t in (0, 1, 999_999_999, 1_000_000_000, 1_795_832_483_733_523_284,
              -1, -3 * 10**9 + 5, 2**31 * 10**9 - 1, -(2**31) * 10**9):
        stamp = cv.ns_to_stamp(t)
        assert cv.ns_words(t) == cv.stamp_words(stamp), t
        assert cv.stamp_to_ns(stamp) == t
        assert cv.ns_words(t)[0] == stamp.sec & 0xFFFFFFFF and cv.ns_words(t)[1] == stamp.nanosec


# -- JointState merging ----------------------------------------------------------------------
def test_merger_merges_by_name_and_ignores_unknown():
    m = cv.JointStateMerger(['a', 'b', 'c', 'd'], default_position=0.25)
    assert m.update(joint_state(['c', 'x', 'a'], [3, 99, 1], [30, 99, 10], [0.3, 9, 0.1])) == 2
    assert m.update(joint_state(['b'], [2])) == 1
    s, ds = m.state()
    np.testing.assert_array_equal(s, [1, 2, 3, 0.25])   # d never received: default
    np.testing.assert_array_equal(ds, [10, 0, 30, 0])    # b sent no velocity: 0
    assert m.missing == ['d']
    assert not m.efforts_complete                          # b and d have no effort
    m.update(joint_state(['b', 'd'], [2, 4], eff=[0.2, 0.4]))
    assert m.missing == [] and m.efforts_complete
    np.testing.assert_array_equal(m.efforts, [0.1, 0.2, 0.3, 0.4])
    m.update(joint_state(['a'], [1.5]))                    # a without effort: unknown again
    assert not m.efforts_complete
    m.set_default_position(-1.0)                           # only never-received joints move
    assert m.state()[0][3] == 4


@pytest.mark.parametrize('msg, match', [
    (joint_state(['a', 'b'], [1]), '2 names but 1 positions'),
    (joint_state(['a', 'b'], [1, 2], [1]), '2 names but 1 velocitys'),
    (joint_state(['a', 'b'], [1, 2], eff=[1, 2, 3]), '2 names but 3 efforts'),
    (joint_state(['a', 'b'], [1, math.nan]), r"position is NaN or inf for \['b'\]"),
    (joint_state(['a', 'b'], [1, 2], [math.inf, 0]), r"velocity is NaN or inf for \['a'\]"),
    (joint_state(['a', 'a'], [1, 2]), 'more than once'),
])
def test_merger_rejects_bad_messages_without_changing_state(msg, match):
    m = cv.JointStateMerger(['a', 'b'])
    m.update(joint_state(['a', 'b'], [0.5, 0.6], [1, 2], [3, 4]))
    before = (*m.state(), m.efforts.copy(), m.received.copy())
    with pytest.raises(ValueError, match=match):
        m.update(msg)
    after = (*m.state(), m.efforts.copy(), m.received.copy())
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)



def test_merger_keeps_no_runaway_name_list():
    """A JointState of 100,000 names (none of the model's: the soak's bad input) updates
    nothing and leaves nothing held: name lists longer than cdr.REMEMBERED_NAMES_MAX are not
    cached (the cache held the list's ~6 MB of names). Lists of the model's size are."""
    m = cv.JointStateMerger(['a', 'b'])
    names = tuple(f'j{i}' for i in range(100_000))
    assert m.update(joint_state(names, [0.0] * len(names))) == 0
    assert names not in m._layouts and len(m._layouts) == 0
    assert m.update(joint_state(['b', 'a'], [1.0, 2.0])) == 2
    assert ('b', 'a') in m._layouts
    np.testing.assert_array_equal(m.state()[0], [2.0, 1.0])

def test_merger_mimic_follows_master_and_carry_over():
    kd = KinDynComputations(MIMIC_URDF)
    assert kd.mimic_joints == {'j3': ('j1', -2.0, 0.5)}
    m = cv.JointStateMerger(kd.joints_name_list, kd.mimic_joints)
    m.update(joint_state(['j1', 'j2', 'j3'], [0.3, 0.1, 7.0], [1.0, 2.0, 7.0], [1, 2, 3]))
    s, ds = m.state()
    idx = {n: i for i, n in enumerate(kd.joints_name_list)}
    assert s[idx['j3']] == pytest.approx(-2 * 0.3 + 0.5)      # the explicit 7.0 is ignored
    assert ds[idx['j3']] == pytest.approx(-2.0)
    np.testing.assert_allclose(s, kd.apply_mimic(s))
    assert m.efforts[idx['j3']] == 3                          # a mimic's effort is taken
    fresh = cv.JointStateMerger(['j2', 'j1', 'other'])
    fresh.carry_over(m)
    np.testing.assert_allclose(fresh.state()[0], [0.1, 0.3, 0.0])
    assert fresh.missing == ['other']
    partial = cv.JointStateMerger(kd.joints_name_list, kd.mimic_joints)
    partial.update(joint_state(['j1', 'j2'], [0.0, 0.0], eff=[0.0, 0.0]))
    assert partial.missing == [] and partial.efforts_complete  # the mimic needs no message
    index, factors = m.mimic_arrays()       # (a compiled tick's)
    assert index.tolist() == [[idx['j3']], [idx['j1']]] and factors.tolist() == [[-2.0], [0.5]]
    assert [a.shape for a in fresh.mimic_arrays()] == [(2, 0), (2, 0)]


# -- settings ----------------------------------------------------------------------------------
def test_settings_defaults_and_normalisation():
    s = make_settings(contacts=('l_sole', 'r_sole'), contact_topics=(('r_sole', 'ft/r'),),
                      rate=500, velocity_representation='body_fixed_representation')
    assert s.contact_topics == (('l_sole', 'l_sole/wrench'), ('r_sole', 'ft/r'))
    assert s.rate == 500.0 and isinstance(s.rate, float)
    assert s.velocity_representation == 'BODY_FIXED'
    assert s.representation == Representations.BODY_FIXED_REPRESENTATION
    np.testing.assert_array_equal(s.base_pose, np.eye(4))
    with pytest.raises(Exception):
        s.rate = 1.0   # frozen


@pytest.mark.parametrize('values, match', [
    (dict(rate=-1.0), "'rate' must be >= 0"),
    (dict(rate=math.nan), "'rate' must be a finite number"),
    (dict(rate=True), "'rate' must be a finite number"),
    (dict(velocity_representation='LOCAL'), 'unknown velocity representation'),
    (dict(gravity=(0.0, -9.8)), "'gravity' must be a list of 3 numbers"),
    (dict(fixed_base_pose=(0.0,) * 7), "'fixed_base_pose'.*unit quaternion"),
    (dict(wrench_timeout=0.0), "'wrench_timeout' must be > 0"),
    (dict(diagnostics_period=-1.0), "'diagnostics_period' must be > 0"),
    (dict(world_frame=''), "'world_frame' must be a non-empty string"),
    (dict(contacts=('a', 'a')), "'contacts' must be distinct"),
    (dict(publish_tf='yes'), "'publish_tf' must be a bool"),
    (dict(sensor_thread=1), "'sensor_thread' must be a bool"),
    (dict(sensor_thread_cpu=-2), "'sensor_thread_cpu' must be a CPU index >= 0 or -1"),
    (dict(sensor_thread_cpu=1.0), "'sensor_thread_cpu' must be a CPU index"),
    (dict(sensor_thread_cpu=True), "'sensor_thread_cpu' must be a CPU index"),
])
def test_settings_reject_bad_values(values, match):
    with pytest.raises(ValueError, match=match):
        make_settings(**values)


def test_updated_settings_applies_known_parameters_only():
    s = make_settings()
    new = updated_settings(s, [Parameter('rate', value=100),
                               Parameter('gravity', value=[0.0, 0.0, -1.0]),
                               Parameter('qos_overrides./joint_states.subscription.depth',
                                         value=5)])
    assert new.rate == 100.0 and new.gravity == (0.0, 0.0, -1.0)
    assert s == Settings()   # unchanged
    with pytest.raises(ValueError, match="'joint_state_timeout' must be > 0"):
        updated_settings(s, [Parameter('joint_state_timeout', value=0.0)])


# -- markers, diagnostics, serialised templates ---------------------------------------------
def test_marker_values_and_serialised_template(icub):
    settings = make_settings(world_frame='map', contacts=('l_sole', 'r_sole'))
    msgs = TickMessages(icub, settings)
    rng = np.random.default_rng(4)
    r = icub.compute_tick(random_pose(rng), rng.normal(size=icub.NDoF), rng.normal(size=6),
                          rng.normal(size=icub.NDoF))
    stamp = Time(sec=12, nanosec=34)
    forces = [(np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 100.0])), None]
    data = msgs.marker_array(r, stamp, forces)
    assert isinstance(data, bytes)     # the fast path is in use
    arr = deserialize_message(data, MarkerArray)
    by_key = {(m.ns, m.id): m for m in arr.markers}
    assert set(by_key) == {('com', 0), ('com_projection', 0), ('momentum', 0), ('momentum', 1),
                           ('contact_forces', 0), ('contact_forces', 1)}
    assert all(m.header.frame_id == 'map' and m.header.stamp == stamp for m in arr.markers)
    com = r.com
    p = by_key['com', 0].pose.position
    np.testing.assert_array_equal([p.x, p.y, p.z], com)
    p = by_key['com_projection', 0].pose.position
    np.testing.assert_array_equal([p.x, p.y, p.z], [com[0], com[1], 0.0])
    for mid, scale, part in ((0, LINEAR_SCALE, slice(0, 3)), (1, ANGULAR_SCALE, slice(3, 6))):
        a, b = by_key['momentum', mid].points
        np.testing.assert_allclose([a.x, a.y, a.z], com, atol=1e-15)
        np.testing.assert_allclose([b.x - a.x, b.y - a.y, b.z - a.z],
                                   scale * r.centroidal_momentum[part], atol=1e-12)
    force = by_key['contact_forces', 0]
    assert force.action == Marker.ADD
    np.testing.assert_allclose([force.points[1].z - force.points[0].z], [FORCE_SCALE * 100.0])
    assert by_key['contact_forces', 1].action == Marker.DELETE
    # the message path gives the same markers (compared on the wire: colours are float32)
    plain = MarkerSet('map', ('l_sole', 'r_sole')).update(stamp, r.com, r.centroidal_momentum,
                                                          forces)
    assert deserialize_message(serialize_message(plain), MarkerArray) == arr
    assert MarkerSet.delete_all(stamp, 'map').markers[0].action == Marker.DELETEALL


@pytest.mark.parametrize('n_vertices, inside', [(0, False), (1, False), (5, True), (5, False)])
def test_markers_with_the_support_markers_come_from_a_template(icub, n_vertices, inside):
    """The ~/markers array with the contact mechanics' markers appended (ns support_polygon:
    the closed outline, DELETE without vertices; the CoM projection disc, green inside and
    red outside), from a template per layout, equals the array of message objects."""
    contacts = ('l_sole', 'r_sole')
    msgs = TickMessages(icub, make_settings(world_frame='map', contacts=contacts))
    rng = np.random.default_rng(6)
    r = icub.compute_tick(random_pose(rng), rng.normal(size=icub.NDoF), rng.normal(size=6),
                          rng.normal(size=icub.NDoF))
    stamp, support_stamp = Time(sec=12, nanosec=34), Time(sec=11, nanosec=990_000_000)
    forces = [None, (np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 100.0]))]
    vertices = rng.normal(size=(n_vertices, 3))
    projection = rng.normal(size=3)
    support = GroundSupport((), (), None, vertices, 0.0, 0.1 if inside else -0.1, inside,
                            projection)
    group = support_markers('map', support_stamp, support)
    data = msgs.marker_array(r, stamp, forces, group)
    assert isinstance(data, bytes)     # the template is in use
    arr = deserialize_message(data, MarkerArray)
    objects = MarkerArray(markers=[
        *MarkerSet('map', contacts).update(stamp, r.com, r.centroidal_momentum, forces).markers,
        *group.markers()])
    assert deserialize_message(serialize_message(objects), MarkerArray) == arr
    assert [(m.ns, m.id) for m in arr.markers[-2:]] == [('support_polygon', 0),
                                                        ('support_polygon', 1)]
    outline, disc = arr.markers[-2:]
    assert outline.header.stamp == disc.header.stamp == support_stamp
    assert all(m.header.stamp == stamp for m in arr.markers[:-2])
    closed = vertices[[*range(n_vertices), 0]] if n_vertices > 1 else np.repeat(vertices, 2, 0)
    np.testing.assert_array_equal(np.reshape([xyz(p) for p in outline.points], (-1, 3)), closed)
    assert outline.action == (Marker.ADD if n_vertices else Marker.DELETE)
    assert outline.type == Marker.LINE_STRIP and disc.type == Marker.CYLINDER
    np.testing.assert_array_equal(xyz(disc.pose.position), projection)
    np.testing.assert_allclose([disc.color.r, disc.color.g, disc.color.b, disc.color.a],
                               INSIDE_RGBA if inside else OUTSIDE_RGBA, atol=1e-7)   # float32
    # the same group again reuses its template; without a usable template, the objects
    assert msgs.marker_array(r, stamp, forces, group) == data
    assert len(msgs._marker_templates) == 1
    msgs._marker_templates.get(group.key, None).ok = False
    fallback = msgs.marker_array(r, stamp, forces, group)
    assert isinstance(fallback, MarkerArray)
    assert deserialize_message(serialize_message(fallback), MarkerArray) == arr


@pytest.mark.parametrize('n_points, inside', [(0, False), (1, False), (4, True), (7, False)])
def test_support_messages_come_from_templates(monkeypatch, n_points, inside):
    """~/support_polygon (float32 points) and ~/stability_margin from templates per layout
    equal the message objects, and carry the support's numbers."""
    rng = np.random.default_rng(n_points)
    points, projection = rng.normal(size=(n_points, 3)), rng.normal(size=3)
    names = ('l_sole', 'r_sole')[:min(n_points, 2)]
    margin = -math.inf if not n_points else (0.25 if inside else -0.25)
    support = GroundSupport(names, (), None, points, 0.0, margin, inside, projection)
    zmp, capture = rng.normal(size=3), rng.normal(size=3)
    balance = None if not n_points else Balance(
        names, (), (0,), None, CentreOfPressure(zmp, 100.0),
        Divergence(capture + 1.0, capture, 3.0, 1.0))
    margins = (-math.inf, -math.inf) if not n_points else (0.125, -0.5)
    stamp = Time(sec=7, nanosec=123)
    fast, slow = SupportMessages('map'), SupportMessages('map')
    values = margin_values(support, balance, margins)
    polygon = fast.polygon(support.points, stamp)
    margin_msg = fast.margin(support.names, values, stamp)
    assert isinstance(polygon, bytes) and isinstance(margin_msg, bytes)
    polygon = deserialize_message(polygon, PolygonStamped)
    margin_msg = deserialize_message(margin_msg, StabilityMargin)
    assert polygon.header.stamp == margin_msg.header.stamp == stamp
    assert polygon.header.frame_id == margin_msg.header.frame_id == 'map'
    np.testing.assert_array_equal(np.reshape([xyz(p) for p in polygon.polygon.points], (-1, 3)),
                                  points.astype(np.float32))
    assert margin_msg.margin == margin and margin_msg.inside == inside
    np.testing.assert_array_equal(xyz(margin_msg.com_projection), projection)
    assert tuple(margin_msg.active_contacts) == names
    assert (margin_msg.zmp_margin, margin_msg.capture_point_margin) == margins
    assert margin_msg.zmp_inside == (margins[0] >= 0) and not margin_msg.capture_point_inside
    np.testing.assert_array_equal(xyz(margin_msg.zmp), zmp if n_points else np.zeros(3))
    np.testing.assert_array_equal(xyz(margin_msg.capture_point),
                                  capture if n_points else np.zeros(3))
    monkeypatch.setattr(SerializedTemplate, '_locate',       # every new template unusable
                        lambda *a: (b'\x00\x01\x00\x00', [np.zeros(0, np.intp)] * 3, False))
    objects = slow.polygon(points, stamp), slow.margin(names, values, stamp)
    assert isinstance(objects[0], PolygonStamped) and isinstance(objects[1], StabilityMargin)
    assert deserialize_message(serialize_message(objects[0]), PolygonStamped) == polygon
    assert deserialize_message(serialize_message(objects[1]), StabilityMargin) == margin_msg


def test_marker_group_templates_are_bounded(icub):
    msgs = TickMessages(icub, make_settings(world_frame='map'))
    r = icub.compute_tick(np.eye(4), np.zeros(icub.NDoF), np.zeros(6), np.zeros(icub.NDoF))
    for n in range(70):
        support = GroundSupport((), (), None, np.zeros((n, 3)), 0.0, -1.0, False, np.zeros(3))
        arr = deserialize_message(
            msgs.marker_array(r, Time(), [], support_markers('map', Time(), support)),
            MarkerArray)
        assert len(arr.markers[-2].points) == (n + 1 if n > 1 else 2 * n)
        assert len(msgs._marker_templates) <= 64


def test_serialised_tf_matches_the_core(icub):
    msgs = TickMessages(icub, make_settings(frame_prefix='r1/', world_frame='w'))
    rng = np.random.default_rng(5)
    w_H_b = random_pose(rng)
    r = icub.compute_tick(w_H_b, rng.normal(size=icub.NDoF), np.zeros(6), np.zeros(icub.NDoF))
    stamp = Time(sec=-5, nanosec=999_999_999)
    tf = deserialize_message(msgs.tf(r, stamp, with_base=True), TFMessage)
    assert len(tf.transforms) == icub.NDoF + 1
    for t, (_, parent, child), h in zip(tf.transforms, icub.joint_frames, r.joint_transforms):
        assert (t.header.frame_id, t.child_frame_id) == ('r1/' + parent, 'r1/' + child)
        assert t.header.stamp == stamp
        np.testing.assert_allclose(cv.transform_to_matrix(t.transform), h, atol=1e-14)
    base = tf.transforms[-1]
    assert (base.header.frame_id, base.child_frame_id) == ('w', 'r1/root_link')
    np.testing.assert_allclose(cv.transform_to_matrix(base.transform), w_H_b, atol=1e-14)
    joints_only = deserialize_message(msgs.tf(r, stamp, with_base=False), TFMessage)
    assert len(joints_only.transforms) == icub.NDoF


@pytest.mark.parametrize('fast', [True, False], ids=['bytes', 'message'])
def test_small_outputs_match_the_core(icub, monkeypatch, fast):
    """~/com, ~/centroidal_momentum, ~/gravity_torques and ~/forward_dynamics: serialised
    from templates (per set of active contacts for the last), or, when a template cannot be
    used, as message objects; both give the core's numbers exactly, with the stamp."""
    if not fast:   # every template unusable: the message path
        monkeypatch.setattr(SerializedTemplate, '_locate',
                            lambda *a: (b'\x00\x01\x00\x00', [np.zeros(0, np.intp)] * 3,
                                        False))
    msgs = TickMessages(icub, make_settings(world_frame='map', velocity_representation='MIXED'))
    rng = np.random.default_rng(6)
    r = icub.compute_tick(random_pose(rng), rng.normal(size=icub.NDoF), rng.normal(size=6),
                          rng.normal(size=icub.NDoF), rng.normal(size=icub.NDoF))
    stamp = Time(sec=-5, nanosec=999_999_999)

    def decoded(out, msg_type):
        assert isinstance(out, bytes) == fast
        return deserialize_message(out if fast else serialize_message(out), msg_type)
    com = decoded(msgs.com_point(r, stamp), PointStamped)
    assert com.header.stamp == stamp and com.header.frame_id == 'map'
    np.testing.assert_array_equal([com.point.x, com.point.y, com.point.z], r.com)
    h = decoded(msgs.centroidal_momentum(r, stamp), TwistStamped)
    assert h.header.stamp == stamp and h.header.frame_id == 'map'
    np.testing.assert_array_equal([h.twist.linear.x, h.twist.linear.y, h.twist.linear.z,
                                   h.twist.angular.x, h.twist.angular.y, h.twist.angular.z],
                                  r.centroidal_momentum)
    g = decoded(msgs.gravity_torques(r, stamp), JointState)
    assert g.header.stamp == stamp and list(g.name) == icub.joints_name_list
    np.testing.assert_array_equal(g.effort, r.gravity_torques)
    assert not g.position and not g.velocity
    for active, odometry_age in (({}, None), ({'l_sole': None}, 0.002),
                                 ({'l_sole': None, 'r_sole': None}, -0.001), ({}, 0.0)):
        ages = {c: 0.001 * (k + 1) for k, c in enumerate(active)}
        inputs = TickInputs(0, wrenches=active, odometry_age=odometry_age, wrench_ages=ages)
        fd = decoded(msgs.forward_dynamics_msg(r, stamp, inputs), ForwardDynamics)
        assert fd.header.stamp == stamp and fd.representation == 'MIXED'
        assert list(fd.active_contacts) == list(active)
        assert fd.base_from_odometry == (odometry_age is not None)
        assert fd.odometry_age == (odometry_age or 0.0)
        assert list(fd.wrench_ages) == list(ages.values())
        assert list(fd.joint_names) == icub.joints_name_list
        a = fd.base_acceleration
        np.testing.assert_array_equal([a.linear.x, a.linear.y, a.linear.z,
                                       a.angular.x, a.angular.y, a.angular.z],
                                      r.base_acceleration)
        np.testing.assert_array_equal(fd.joint_accelerations, r.joint_accelerations)


@pytest.mark.parametrize('compiled', [True, False], ids=['compiled', 'numpy'])
def test_per_tick_messages_rendered_at_once_are_the_ones_rendered_one_by_one(icub_urdf,
                                                                          compiled):
    """TickMessages.per_tick (every per-tick message from one buffer,
    :class:`.template_pack.TemplatePack`, its numbers written by the compiled kernel or by
    NumPy) gives the bytes that each output's own template gives: /tf with and without the
    base (and without it when the world frame is a model frame), with and without forward
    dynamics, per set of active contacts and base source, NaN of a massless joint kept."""
    from random_tree import random_tree_urdf    # test/support
    from kin_dyn_ros.node.template_pack import TemplatePack
    if compiled and jit_status().compiled is False:
        pytest.skip(f'the NumPy core runs here: {jit_status().describe()}')
    rng = np.random.default_rng(11)
    cases = [(icub_urdf, dict(world_frame='map', frame_prefix='r1/')),
             (icub_urdf, dict(world_frame='root_link')),      # a model frame: no base edge
             (random_tree_urdf(8, seed=4, massless_leaf=True), dict(world_frame='w'))]
    for urdf, kwargs in cases:
        kd = KinDynComputations(urdf, compiled=compiled)
        n = kd.NDoF
        msgs = TickMessages(kd, make_settings(contacts=('l_sole', 'r_sole'), **kwargs))
        kernel = msgs.scatter
        assert (kernel is not None) == compiled
        for k in range(6):
            tau = rng.normal(size=n) if k % 3 else None
            r = kd.compute_tick(random_pose(rng), rng.normal(size=n), rng.normal(size=6),
                                rng.normal(size=n), tau)
            active = [{}, {'l_sole': None}, {'r_sole': None, 'l_sole': None}][k % 3]
            inputs = TickInputs(0, wrenches=active, odometry_age=[None, 0.003][k % 2],
                                wrench_ages={c: 0.001 * (j + 1) for j, c in enumerate(active)})
            stamp = Time(sec=-3 + k, nanosec=10 ** 9 - 1 - k)
            for wanted, with_base in ((['com', 'momentum', 'gravity', 'tf'], True),
                                      (['tf', 'gravity'], False), ([], True)):
                at_once = msgs.per_tick(r, cv.stamp_to_ns(stamp), inputs, wanted, with_base)
                one_by_one = msgs._one_by_one(r, stamp, inputs, wanted, with_base)
                assert list(at_once) == list(one_by_one) == wanted + (
                    ['forward_dynamics'] if tau is not None else [])
                for name, data in at_once.items():
                    assert isinstance(data, bytes) and data == one_by_one[name], (name, k)
            r.packed.setflags(write=False)    # a type the kernel was not compiled for: NumPy
            again = msgs.per_tick(r, cv.stamp_to_ns(stamp), inputs, ['tf', 'com'], True)
            assert again == msgs._one_by_one(r, stamp, inputs, ['tf', 'com'], True)
    assert isinstance(msgs._packs.get(None, None), TemplatePack)


@pytest.mark.parametrize('fast', [True, False], ids=['bytes', 'message'])
def test_forward_dynamics_of_massless_joints_is_nan(monkeypatch, fast):
    """A joint with no inertia moving with it has no forward dynamics: its acceleration goes
    out as NaN (bytes from the template, or the message object), the others as the core's;
    the tick's note on /diagnostics names it."""
    from random_tree import random_tree_urdf    # test/support
    if not fast:
        monkeypatch.setattr(SerializedTemplate, '_locate',
                            lambda *a: (b'\x00\x01\x00\x00', [np.zeros(0, np.intp)] * 3,
                                        False))
    kd = KinDynComputations(random_tree_urdf(8, seed=4, massless_leaf=True))
    n, rng = kd.NDoF, np.random.default_rng(8)
    r = kd.compute_tick(random_pose(rng), rng.normal(size=n), rng.normal(size=6),
                        rng.normal(size=n), rng.normal(size=n))
    assert r.massless_joints == ('joint_007',) and r.forward_dynamics_error == ''
    out = TickMessages(kd, make_settings()).forward_dynamics_msg(r, Time(sec=2), TickInputs(0))
    assert isinstance(out, bytes) == fast
    fd = deserialize_message(out if fast else serialize_message(out), ForwardDynamics)
    acc = np.asarray(fd.joint_accelerations)
    nan = [fd.joint_names[k] for k in np.flatnonzero(np.isnan(acc))]
    assert nan == ['joint_007']
    np.testing.assert_array_equal(acc, r.joint_accelerations)    # NaN where NaN
    a = fd.base_acceleration
    np.testing.assert_array_equal([a.linear.x, a.linear.y, a.linear.z,
                                   a.angular.x, a.angular.y, a.angular.z], r.base_acceleration)
    assert np.isfinite(r.base_acceleration).all()
    note = massless_note(r.massless_joints)
    ins = build_diagnostics('kd', Time(), None, InputsReport(forward_dynamics=note),
                            (0, 0, 0, 0, 0, 0)).status[1]
    value = {kv.key: kv.value for kv in ins.values}['forward dynamics']
    assert value.startswith('computed; NaN for the joints with no inertia moving with them')
    assert value.endswith(': joint_007')


def test_templates_survive_stale_padding(icub):
    """CDR padding is left uninitialised by the serialiser and may hold an earlier template's
    sentinels: each of many templates built in a row must still locate its fields (with a
    fixed sentinel ~2 % did not, and fell back to publishing message objects)."""
    settings = make_settings(frame_prefix='r1/', world_frame='w')
    built = [TickMessages(icub, settings) for _ in range(100)]
    assert all(m._tf_all.template.ok and m._tf_joints.template.ok and m._markers.ok
               for m in built)


def test_tick_stats_and_diagnostics():
    stats = TickStats(window=1.0)
    for t, d, c in ((0.0, 1.0, 0.9), (0.5, 0.002, 0.0015), (1.2, 0.004, 0.0005)):
        stats.record((t, d, c))
    for t in (0.1, 0.9, 1.1):
        stats.merged(t)
    assert stats.summary(1.2) == (2, pytest.approx(0.003), 0.004, pytest.approx(0.001), 0.0015,
                                  2)
    assert stats.summary(3.0) == (0, 0.0, 0.0, 0.0, 0.0, 0)
    bounded = TickStats(window=1.0, kept=3)       # only the last `kept` ticks are kept
    for k in range(5):
        bounded.record((0.1 * k, 0.001 * (k + 1), 0.0005))
    assert bounded.summary(0.5) == (3, pytest.approx(0.004), 0.005, pytest.approx(0.0005),
                                    0.0005, 0)
    copied = stats.copy()          # (/diagnostics sums a copy, outside the node's lock)
    stats.record((1.3, 0.5, 0.5))
    stats.merged(1.3)
    assert copied.summary(1.2) == (2, pytest.approx(0.003), 0.004, pytest.approx(0.001),
                                   0.0015, 2)
    assert bounded.copy().summary(0.5) == bounded.summary(0.5)
    assert copied.copy().window == copied.window
    sampled = TickStats(window=1.0)           # the CPU time read on some ticks only
    for t, d, c in ((0.1, 0.002, None), (0.2, 0.003, 0.001), (0.3, 0.001, None),
                    (0.4, 0.002, 0.003)):
        sampled.record((t, d, c))
    assert sampled.summary(0.5) == (4, pytest.approx(0.002), 0.003, pytest.approx(0.002),
                                    0.003, 0)
    sampled = TickStats(window=1.0)
    sampled.record((0.1, 0.002, None))
    assert sampled.summary(0.5) == (1, 0.002, 0.002, 0.0, 0.0, 0)
    inputs = InputsReport(joint_state_age=0.01, missing_joints=['x'], odometry_age=None,
                          wrenches=[('l_sole', 0.02, False), ('r_sole', 0.3, True),
                                    ('hand', None, False)])
    msg = build_diagnostics('kd', Time(sec=1), ('iCub', 'root_link', 32, 213), inputs,
                            (2, 0.003, 0.004, 0.001, 0.0015, 0))
    model, ins, tick = msg.status
    assert model.level == model.OK and model.name == 'kd: model'
    assert {kv.key: kv.value for kv in model.values}['joints'] == '32'
    # which dynamics path runs: one line, the compiled kernels' cache or why the NumPy core
    path = {kv.key: kv.value for kv in model.values}['dynamics path']
    assert path == jit_status().describe() and '\n' not in path
    assert path.startswith('compiled kernels (numba; cache: ' if jit_status().compiled
                           else 'NumPy core (')
    assert {kv.key: kv.value for kv in ins.values}['forward dynamics'] == 'computed'
    assert ins.level == ins.WARN
    for part in ('1 joints never received', 'no odometry', 'wrench r_sole stale',
                 'wrench hand missing'):
        assert part in ins.message
    assert tick.level == tick.OK and '2 ticks' in tick.message and 'merged' not in tick.message
    assert {kv.key: kv.value for kv in tick.values} == {
        'ticks': '2', 'mean [ms]': '3.000', 'max [ms]': '4.000', 'CPU mean [ms]': '1.000',
        'CPU max [ms]': '1.500', 'JointStates merged into a later tick': '0',
        'equilibrium torques': 'off'}
    behind = build_diagnostics('kd', Time(), None, InputsReport(),
                               (2, 0.003, 0.004, 0.001, 0.0015, 7)).status[2]
    assert behind.level == behind.OK and '7 JointStates merged into a later tick' in behind.message
    assert build_diagnostics('kd', Time(), None, InputsReport(), (0, 0, 0, 0, 0, 0)).status[0].level \
        == model.ERROR


def test_float_array_is_the_values_row_major_in_any_layout():
    m = np.arange(12.0).reshape(3, 4)
    assert cv.float_array(m).tolist() == list(range(12))
    assert cv.float_array(m.T).tolist() == m.T.ravel().tolist()          # not contiguous
    assert cv.float_array(np.asfortranarray(m)).tolist() == list(range(12))
    assert cv.float_array(np.float64(2.5)).tolist() == [2.5]
    assert cv.float_array(np.empty((0, 6))).tolist() == []
    assert cv.float_array([1, 2]).tolist() == [1.0, 2.0] and cv.float_array([1]).typecode == 'd'
