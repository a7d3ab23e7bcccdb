"""node/marker_array.py: the ~/markers array gathered from the compiled contact points (one
kernel call) is the array built the plain way (contact forces, the Balance, the support
polygon of the tick's active contacts and its margins one by one), in the states a standing
robot passes through: both soles loaded with the ZMP inside and outside the support
polygon, one below the threshold, one without a wrench, none active, a wrench in another
frame, a contact that is not a link; with the support's markers and without them
(equilibrium_rate 0); the support drawn is the polygon of the tick's own active contacts
(the core's support_polygon); the plain way is taken on the NumPy core. The numbers
themselves are tested against Pinocchio in test_balance_node.py and test_contacts_node.py.

Run:  source scripts/env.sh && python -m pytest test/ros/test_marker_array.py
"""

import pathlib
import sys

import numpy as np
import pytest

from rclpy.serialization import deserialize_message
from visualization_msgs.msg import Marker, MarkerArray

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.compiled import jit_status
from kin_dyn_ros.dynamics.contacts import ground_axes, hull_support, support_polygon
from kin_dyn_ros.node.marker_array import MarkerArrays
from kin_dyn_ros.node.outputs import TickMessages
from kin_dyn_ros.node.settings import make_contact, make_settings

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from contact_states import CASES, FEET, SOLE, THRESHOLD, tick_of  # noqa: E402

POSITION_TOL = 1e-12    # [m]: the forces' rotations are summed in another order


def arrays_of(kd, rate):
    """(settings, contacts geometry, MarkerArrays) of iCub's soles, equilibrium_rate
    ``rate``."""
    settings = make_settings(contacts=[*FEET, 'no_such_link'], world_frame='odom',
                             contact_force_threshold=THRESHOLD, equilibrium_rate=rate,
                             contact_geometry=[(c, SOLE, [0.0, 0.0, 1.0], 0.6) for c in FEET])
    geometry = {g[0]: make_contact(g) for g in settings.contact_geometry
                if g[0] in kd.model.frame_index}
    messages = TickMessages(kd, settings)

    def ground_support(result):          # (as the contact mechanics make it)
        return support_of(kd, geometry, result, active_names(result))
    return settings, geometry, MarkerArrays(messages, settings, tuple(geometry),
                                            ground_support)


@pytest.fixture(scope='module')
def node_parts(icub_urdf):
    if jit_status().compiled is False:
        pytest.skip(f'the NumPy core runs here: {jit_status().describe()}')
    kd = KinDynComputations(icub_urdf)
    return (kd, *arrays_of(kd, 100.0))


def support_of(kd, geometry, result, names):
    """The contact mechanics' support of the contacts ``names`` (as its update makes it)."""
    contacts = tuple(geometry[n] for n in names)
    links = [result.world_H_frame(kd.model.frame_index[c.link]) for c in contacts]
    up = -kd.gravity / np.linalg.norm(kd.gravity)
    return hull_support(contacts, links, result.com, ground_axes(kd.gravity), up, names)


def active_names(result):
    balance = result.balance
    return tuple(balance.names[i] for i in balance.active)


def assert_same_arrays(got, expected):
    got, expected = (deserialize_message(m, MarkerArray) if isinstance(m, bytes) else m
                     for m in (got, expected))
    assert len(got.markers) == len(expected.markers)
    for a, b in zip(got.markers, expected.markers):
        assert (a.ns, a.id, a.type, a.action, a.header.frame_id) == \
            (b.ns, b.id, b.type, b.action, b.header.frame_id)
        assert (a.header.stamp.sec, a.header.stamp.nanosec) == \
            (b.header.stamp.sec, b.header.stamp.nanosec)
        assert (a.color.r, a.color.g, a.color.b, a.color.a) == \
            (b.color.r, b.color.g, b.color.b, b.color.a)
        assert (a.scale.x, a.scale.y, a.scale.z) == (b.scale.x, b.scale.y, b.scale.z)
        for p, q in [(a.pose.position, b.pose.position), *zip(a.points, b.points)]:
            np.testing.assert_allclose([p.x, p.y, p.z], [q.x, q.y, q.z], rtol=0,
                                       atol=POSITION_TOL)
        assert len(a.points) == len(b.points)


@pytest.mark.parametrize('rate', [100.0, 0.0], ids=['support drawn', 'mechanics off'])
@pytest.mark.parametrize('case', range(len(CASES)), ids=[c[0] for c in CASES])
def test_the_array_from_the_points_is_the_plain_one(node_parts, case, rate):
    kd = node_parts[0]
    _, geometry, arrays = arrays_of(kd, rate) if rate != 100.0 else node_parts[1:]
    tick = tick_of(kd, geometry, CASES[case][1], case)
    names = active_names(tick.result)
    assert names == CASES[case][2]
    assert tick.result.contact_points() is not None      # (the points' way)
    got = arrays.render(tick)
    assert isinstance(got, bytes)
    assert_same_arrays(got, arrays._plain(tick))
    markers = deserialize_message(got, MarkerArray).markers
    drawn = {m.id: m for m in markers if m.ns == 'support_polygon'}
    assert len(drawn) == (2 if rate else 0)
    if names == FEET:           # green inside, red outside the polygon
        support = support_of(kd, geometry, tick.result, names)
        inside = support.polygon.margin(tick.result.balance.zmp_point) >= 0.0
        colours = {(m.ns, m.id): (m.color.r, m.color.g) for m in markers}
        assert colours[('zmp', 0)] == pytest.approx((0.1, 0.8) if inside else (0.9, 0.1),
                                                    abs=1e-6)       # (float32)


@pytest.mark.parametrize('case', range(len(CASES)), ids=[c[0] for c in CASES])
def test_the_support_drawn_is_the_polygon_of_the_ticks_active_contacts(node_parts, case):
    """The outline (closed) is the core's support_polygon of the tick's active contacts
    (their sole points at the tick's poses, the soles level: zero joints), stamped with the
    tick; DELETE without an active contact."""
    kd, _, geometry, arrays = node_parts
    tick = tick_of(kd, geometry, CASES[case][1], case, spread=0.0)
    names = active_names(tick.result)
    drawn = {m.id: m for m in deserialize_message(arrays.render(tick), MarkerArray).markers
             if m.ns == 'support_polygon'}
    outline = drawn[0]
    assert (outline.header.stamp.sec, outline.header.stamp.nanosec) == \
        (tick.stamp.sec, tick.stamp.nanosec)
    if not names:
        assert outline.action == Marker.DELETE and not outline.points
        return
    contacts = [geometry[c] for c in names]
    poses = {c.link: tick.result.world_H_frame(kd.model.frame_index[c.link]) for c in contacts}
    want = support_polygon(contacts, poses, kd.gravity)
    got = np.array([[p.x, p.y] for p in outline.points])
    assert len(got) == len(want.vertices) + 1 and np.array_equal(got[0], got[-1])
    np.testing.assert_allclose(got[:-1], want.vertices, rtol=0, atol=POSITION_TOL)


def test_the_numpy_core_takes_the_plain_way(node_parts, icub_urdf):
    kd, _, geometry, arrays = node_parts
    numpy_kd = KinDynComputations(icub_urdf, compiled=False)
    tick = tick_of(numpy_kd, geometry, CASES[0][1], 3)
    assert tick.result.contact_points() is None
    compiled = tick_of(kd, geometry, CASES[0][1], 3)
    assert_same_arrays(arrays.render(tick), arrays.render(compiled))
