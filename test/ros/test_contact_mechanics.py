"""node/contact_mechanics.py: the support of a due tick taken from the compiled contact
points (one kernel call: the hull, the margins) is the support made the plain way (the
Balance, ground_support and SupportPolygon.margin one by one), in the states a standing
robot passes through (contact_states.CASES), and so are the two messages made of it; the
NumPy core takes the plain way. The numbers themselves are tested against Pinocchio and the
core in test_contacts_node.py and test_balance_node.py (both paths).

Run:  source scripts/env.sh && python -m pytest test/ros/test_contact_mechanics.py
"""

import math
import pathlib
import sys

import numpy as np
import pytest

import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PolygonStamped
from rclpy.serialization import deserialize_message

from kin_dyn_ros.dynamics import KinDynComputations
from kin_dyn_ros.dynamics.compiled import jit_status
from kin_dyn_ros.dynamics.contacts import support_polygon
from kin_dyn_ros.node.contact_mechanics import ContactMechanics
from kin_dyn_ros.node.settings import make_settings
from kin_dyn_ros_interfaces.msg import StabilityMargin

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from contact_states import CASES, FEET, SOLE, THRESHOLD, tick_of  # noqa: E402
from ros_helpers import loopback_context  # noqa: E402

pytestmark = pytest.mark.filterwarnings('ignore:module .sre_.* is deprecated:DeprecationWarning')

TOL = 1e-12         # [m]: the kernel sums the same products in another order
STAMP = Time(sec=3, nanosec=4)


@pytest.fixture(scope='module')
def ros_context():
    yield from loopback_context(1, 232)


@pytest.fixture(scope='module')
def mechanics(ros_context, icub_urdf):
    """(compiled KinDynComputations, ContactMechanics of iCub's soles) on a real node (no
    equilibrium worker: no model description given)."""
    if jit_status().compiled is False:
        pytest.skip(f'the NumPy core runs here: {jit_status().describe()}')
    node = rclpy.create_node('contact_mechanics_test', context=ros_context)
    settings = make_settings(contacts=[*FEET, 'no_such_link'], world_frame='odom',
                             contact_force_threshold=THRESHOLD, equilibrium_rate=100.0,
                             contact_geometry=[(c, SOLE, [0.0, 0.0, 1.0], 0.6) for c in FEET])
    kd = KinDynComputations(icub_urdf)
    cm = ContactMechanics(node)
    cm.configure(kd, [c for c in settings.contacts if c in kd.model.frame_index], settings)
    yield kd, cm
    cm.close()
    node.destroy_node()


def messages(cm, support):
    """The (PolygonStamped, StabilityMargin) the mechanics publish of ``support``."""
    return (deserialize_message(cm._messages.polygon(support.points, STAMP), PolygonStamped),
            deserialize_message(cm._messages.margin(support.names, support.values, STAMP),
                                StabilityMargin))


@pytest.mark.parametrize('case', range(len(CASES)), ids=[c[0] for c in CASES])
def test_the_support_from_the_points_is_the_plain_one(mechanics, case):
    kd, cm = mechanics
    tick = tick_of(kd, cm.contacts, CASES[case][1], case)
    got, want = cm._from_points(tick.result), cm._plain_support(tick.result)
    assert got is not None                                  # (the points' way)
    assert got.names == want.names == CASES[case][2]
    assert all(a is b for a, b in zip(got.contacts, want.contacts, strict=True))
    assert got.contacts == tuple(cm.contacts[n] for n in got.names)
    np.testing.assert_allclose(got.points, want.points, rtol=0, atol=TOL)
    np.testing.assert_allclose(got.values, want.values, rtol=0, atol=TOL)   # (-inf alike)
    assert (np.isneginf(got.values) == np.isneginf(want.values)).all()
    (polygon, margin), (plain_polygon, plain_margin) = messages(cm, got), messages(cm, want)
    assert polygon.header == plain_polygon.header
    xyz = [[p.x, p.y, p.z] for p in polygon.polygon.points]
    np.testing.assert_allclose(np.reshape(xyz, (-1, 3)), want.points, rtol=2.0 ** -23,
                               atol=0)          # (float32 points)
    assert (margin.active_contacts, margin.inside, margin.zmp_inside,
            margin.capture_point_inside) == (plain_margin.active_contacts,
                                             plain_margin.inside, plain_margin.zmp_inside,
                                             plain_margin.capture_point_inside)
    if not got.names:
        assert margin.margin == margin.zmp_margin == margin.capture_point_margin == -math.inf
        assert not polygon.polygon.points


@pytest.mark.parametrize('case', [0, 2])
def test_the_support_is_the_polygon_of_the_ticks_active_contacts(mechanics, case):
    """Level soles (zero joints): the core's support_polygon of the active contacts, with
    the CoM's and the ZMP's margins to it."""
    kd, cm = mechanics
    tick = tick_of(kd, cm.contacts, CASES[case][1], case, spread=0.0)
    got = cm._from_points(tick.result)
    contacts = [cm.contacts[c] for c in got.names]
    poses = {c.link: tick.result.world_H_frame(kd.model.frame_index[c.link]) for c in contacts}
    want = support_polygon(contacts, poses, kd.gravity)
    np.testing.assert_allclose(got.points[:, :2], want.vertices, rtol=0, atol=TOL)
    zmp = tick.result.balance.zmp_point
    np.testing.assert_allclose(got.values[[0, 7]],
                               [want.margin(tick.result.com), want.margin(zmp)],
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(got.values[4:7], zmp, rtol=0, atol=TOL)


def test_the_numpy_core_takes_the_plain_way(mechanics, icub_urdf):
    kd, cm = mechanics
    numpy_kd = KinDynComputations(icub_urdf, compiled=False)
    tick = tick_of(numpy_kd, cm.contacts, CASES[0][1], 3)
    assert cm._from_points(tick.result) is None
    compiled = cm._from_points(tick_of(kd, cm.contacts, CASES[0][1], 3).result)
    plain = cm._plain_support(tick.result)
    np.testing.assert_allclose(plain.values, compiled.values, rtol=0, atol=TOL)
    np.testing.assert_allclose(plain.points, compiled.points, rtol=0, atol=TOL)


def test_a_contact_that_is_not_a_flat_sole_takes_the_plain_way(mechanics, ros_context):
    """A sole whose points are not on one plane: the kernel gives no points (its balance
    needs the ground plane's SVD), and the due tick's support is the plain one: the
    hull of the active contacts' points (ground_support) with the CoM's margin to it."""
    kd, _ = mechanics
    bumpy = list(SOLE)
    bumpy[2] = 0.01                                       # one point 1 cm above the others
    node = rclpy.create_node('contact_mechanics_bumpy', context=ros_context)
    settings = make_settings(contacts=list(FEET), world_frame='odom',
                             contact_force_threshold=THRESHOLD, equilibrium_rate=100.0,
                             contact_geometry=[(c, bumpy, [0.0, 0.0, 1.0], 0.6) for c in FEET])
    cm = ContactMechanics(node)
    try:
        cm.configure(kd, list(FEET), settings)
        tick = tick_of(kd, cm.contacts, CASES[0][1], 0)
        assert tick.result.contact_points() is None and cm._from_points(tick.result) is None
        support = cm._plain_support(tick.result)
        assert support.names == FEET
        want = cm.ground_support(tick.result)
        np.testing.assert_array_equal(support.points, want.points)
        assert support.values[0] == want.margin
    finally:
        cm.close()
        node.destroy_node()


def test_no_tick_in_the_quiet_stamps_has_work(mechanics):
    """ContactMechanics.quiet (the stamps the node need not ask has_work about) on a 1 kHz
    stream with jitter, pauses and stamps going back, equilibrium_rate 100 Hz, nothing
    reading (each due tick's turn passes): no stamp in it has work, or takes a turn (the
    window would move); and most stamps are in it."""
    _, cm = mechanics
    rng, t, inside = np.random.default_rng(4), 7 * 10**9, 0
    for step in range(3000):
        t += int(rng.choice([1, 2, 0, 25, -60], p=[.9, .04, .03, .02, .01])) * 1_000_000
        first, end = cm.quiet
        work = cm.has_work(t)
        if first <= t < end:
            inside += 1
            assert not work and cm.quiet == (first, end), step
    assert inside > 2000, inside
