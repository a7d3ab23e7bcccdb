"""node/marker_array.py: the ~/markers array gathered from the compiled contact points (one
kernel call) is the array built the plain way (contact forces, the Balance, the polygon's
margins one by one), in the states a standing robot passes through: both soles loaded with
the ZMP inside and outside the support polygon, one below the threshold, one without a
wrench, none active, a wrench in another frame, a contact that is not a link, with and
without the contact mechanics' support markers; and the plain way is taken where the
points cannot give it (a support of other contacts, none yet, the NumPy core). The numbers
themselves are tested against Pinocchio in test_balance_node.py and test_contacts_node.py.

Run:  source scripts/env.sh && python -m pytest test/ros/test_marker_array.py
"""

from types import SimpleNamespace

import numpy as np
import pytest

from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message
from visualization_msgs.msg import MarkerArray

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.compiled import jit_status
from kin_dyn_ros.dynamics.contacts import ground_axes, hull_support
from kin_dyn_ros.node.marker_array import MarkerArrays
from kin_dyn_ros.node.outputs import TickMessages
from kin_dyn_ros.node.settings import make_contact, make_settings
from kin_dyn_ros.node.support_outputs import support_markers

FEET = ('l_sole', 'r_sole')
THRESHOLD = 20.0        # [N]
SOLE = [0.1, 0.04, 0.0, -0.05, 0.04, 0.0, -0.05, -0.04, 0.0, 0.1, -0.04, 0.0]  # [m]
POSITION_TOL = 1e-12    # [m]: the forces' rotations are summed in another order


@pytest.fixture(scope='module')
def node_parts(icub_urdf):
    if jit_status().compiled is False:
        pytest.skip(f'the NumPy core runs here: {jit_status().describe()}')
    settings = make_settings(contacts=[*FEET, 'no_such_link'], world_frame='odom',
                             contact_force_threshold=THRESHOLD,
                             contact_geometry=[(c, SOLE, [0.0, 0.0, 1.0], 0.6) for c in FEET])
    kd = KinDynComputations(icub_urdf)
    geometry = {g[0]: make_contact(g) for g in settings.contact_geometry
                if g[0] in kd.model.frame_index}
    messages = TickMessages(kd, settings)
    return kd, settings, geometry, MarkerArrays(messages, settings, tuple(geometry))


def wrench(fz, tx=0.0, ty=0.0, fx=0.0):
    return np.array([fx, 0.4, fz, tx, ty, 0.02])


CASES = [       # (name, {sole: (frame, wrench)}, the active contacts)
    ('both loaded', {'l_sole': ('l_sole', wrench(180.0, 1.0, -2.0, 3.0)),
                     'r_sole': ('r_foot', wrench(140.0, -0.5, 1.5))}, FEET),   # (in r_sole's)
    ('both loaded, the ZMP outside', {'l_sole': ('l_sole', wrench(180.0, 60.0, -40.0)),
                                      'r_sole': ('r_sole', wrench(140.0, 50.0, 30.0))},
     FEET),
    # (the l_sole's CoP 5 mm inside its sole's toe edge: green, not red)
    ('one below the threshold', {'l_sole': ('l_sole', wrench(200.0, 0.3, -19.0)),
                                 'r_sole': ('r_sole', wrench(5.0))}, FEET[:1]),
    ('one without a wrench', {'r_sole': ('root_link', wrench(150.0, 0.0, 0.2))}, FEET[1:]),
    ('none active', {'l_sole': ('l_sole', wrench(3.0)), 'r_sole': ('r_sole', wrench(1.0))},
     ()),
]


def in_frame(kd, wrenches):
    """``wrenches`` with each one given as (frame, w in the sole's axes about its origin)
    expressed in that frame instead (fixed to the sole: the same at every state)."""
    zero = kd.compute_tick(np.eye(4), np.zeros(kd.NDoF), np.zeros(6), np.zeros(kd.NDoF))
    index, out = kd.model.frame_index, {}
    for sole, (frame, w) in wrenches.items():
        h = np.linalg.solve(zero.world_H_frame(index[frame]), zero.world_H_frame(index[sole]))
        f = h[:3, :3] @ w[:3]
        out[sole] = (frame, np.concatenate([f, h[:3, :3] @ w[3:] + np.cross(h[:3, 3], f)]))
    return out


def tick_of(kd, geometry, wrenches, seed):
    wrenches = in_frame(kd, wrenches)
    rng = np.random.default_rng(seed)
    w_H_b = np.eye(4)
    w_H_b[:3, 3] = [0.1, -0.2, 0.6]
    n = kd.NDoF
    result = kd.compute_tick(w_H_b, 0.02 * rng.normal(size=n), rng.normal(size=6),
                             rng.normal(size=n), None, wrenches, geometry, THRESHOLD)
    return SimpleNamespace(result=result, stamp=Time(sec=12 + seed, nanosec=345 + seed),
                           inputs=SimpleNamespace(wrenches=wrenches))


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


@pytest.mark.parametrize('with_support_markers', [False, True])
@pytest.mark.parametrize('case', range(len(CASES)), ids=[c[0] for c in CASES])
def test_the_array_from_the_points_is_the_plain_one(node_parts, case, with_support_markers):
    kd, _, geometry, arrays = node_parts
    tick = tick_of(kd, geometry, CASES[case][1], case)
    names = active_names(tick.result)
    assert names == CASES[case][2]
    support = support_of(kd, geometry, tick.result, names)
    latest = (support.polygon, support.names)
    group = support_markers('odom', Time(sec=3, nanosec=4), support) \
        if with_support_markers else None
    assert tick.result.contact_points(*latest) is not None      # (the points' way)
    got = arrays.render(tick, group, latest, lambda result: support.polygon)
    assert isinstance(got, bytes)
    assert_same_arrays(got, arrays._plain(tick, group, lambda result: support.polygon))
    colours = {(m.ns, m.id): (m.color.r, m.color.g) for m in
               deserialize_message(got, MarkerArray).markers if m.ns == 'zmp'}
    if names == FEET:           # green inside, red outside the polygon
        inside = support.polygon.margin(tick.result.balance.zmp_point) >= 0.0
        assert colours[('zmp', 0)] == pytest.approx((0.1, 0.8) if inside else (0.9, 0.1),
                                                    abs=1e-6)       # (float32)


def test_a_support_of_other_contacts_or_none_yet_takes_the_plain_way(node_parts):
    """The polygon of the tick's active contacts is then computed now, as the plain way's
    ``polygon_of`` does; before the first support likewise."""
    kd, _, geometry, arrays = node_parts
    tick = tick_of(kd, geometry, CASES[1][1], 7)
    assert active_names(tick.result) == FEET
    stale = support_of(kd, geometry, tick.result, FEET[:1])
    assert tick.result.contact_points(stale.polygon, stale.names) is None
    current = support_of(kd, geometry, tick.result, FEET).polygon
    for latest in [(stale.polygon, stale.names), None]:
        got = arrays.render(tick, None, latest, lambda result: current)
        assert_same_arrays(got, arrays._plain(tick, None, lambda result: current))


def test_the_numpy_core_takes_the_plain_way(node_parts, icub_urdf):
    kd, _, geometry, arrays = node_parts
    numpy_kd = KinDynComputations(icub_urdf, compiled=False)
    tick = tick_of(numpy_kd, geometry, CASES[0][1], 3)
    support = support_of(numpy_kd, geometry, tick.result, FEET)
    assert tick.result.contact_points(support.polygon, support.names) is None
    compiled = tick_of(kd, geometry, CASES[0][1], 3)
    assert_same_arrays(arrays.render(tick, None, (support.polygon, support.names),
                                     lambda result: support.polygon),
                       arrays.render(compiled, None, (support.polygon, support.names),
                                     lambda result: support.polygon))
