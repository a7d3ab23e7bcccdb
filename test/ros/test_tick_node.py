"""kin_dyn_ros.node.tick: on the compiled path a tick is one call of the core's PreparedTick
(kept while the wrenches are the same inputs); it must give what ``compute_tick`` gives for
the same inputs, message for message: the same per-tick bytes, state, notes and result, on
a stream whose odometry and wrenches change, go stale, lose their efforts, and on a model
with massless joints (whose names the tick's note carries). Exact equality: both run the
same kernel on the same arrays. And the base state of odometry read compiled is the core's,
in each representation."""

import pathlib
import sys

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.logging import get_logger
from rclpy.serialization import serialize_message
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState

from kin_dyn_ros.dynamics import KinDynComputations, Representations
from kin_dyn_ros.dynamics.base_state import change_base_representation
from kin_dyn_ros.dynamics.spatial import homogeneous
from kin_dyn_ros.dynamics.compiled import jit_path, jit_status
from kin_dyn_ros.node.conversions import JointStateMerger
from kin_dyn_ros.node.inputs import SensorInputs
from kin_dyn_ros.node.outputs import TickMessages
from kin_dyn_ros.node.settings import make_contact, make_settings
from kin_dyn_ros.node.throttle import ThrottledLogger
from kin_dyn_ros.node.tick import TickComputer, same_inputs

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from random_tree import random_tree_urdf  # noqa: E402
from ros_helpers import MIMIC_URDF  # noqa: E402

pytestmark = pytest.mark.skipif(
    jit_path() is None, reason=f"the NumPy core runs here ({jit_status().reason}): no "
    "PreparedTick; the compiled pass of scripts/test.sh runs these")

SOLE = (0.1, 0.05, 0.0, -0.05, 0.05, 0.0, -0.05, -0.04, 0.0, 0.1, -0.04, 0.0)
OUTPUTS = ["tf", "com", "momentum", "gravity"]
BODY = Representations.BODY_FIXED_REPRESENTATION


class Stream:
    """A node's inputs and tick on ``urdf``: JointStates, odometry of the root link and the
    contacts' wrenches, taken as the node takes them (CDR bytes), ticked by a
    :class:`TickComputer`."""

    def __init__(self, urdf, contacts):
        self.kd, aux = KinDynComputations(urdf), KinDynComputations(urdf)
        self.settings = make_settings(
            contacts=contacts, contact_topics=tuple((c, f"{c}/wrench") for c in contacts),
            contact_geometry=tuple((c, SOLE, (0.0, 0.0, 1.0), 0.6) for c in contacts))
        self.merger = JointStateMerger(self.kd.joints_name_list, self.kd.mimic_joints, 0.0)
        self.inputs = SensorInputs(lambda: 1)
        frame = self.kd.model.frame_index.get
        self.inputs.configure(self.merger, lambda f: f if frame(f) is not None else None,
                              "odom")
        geometry = {g[0]: make_contact(g) for g in self.settings.contact_geometry}
        self.ticker = TickComputer(self.kd, aux, self.settings, geometry,
                                   ThrottledLogger(get_logger("test_tick"), 5.0))
        self.messages = TickMessages(self.kd, self.settings)

    def take(self, rng, t_ns, efforts=True):
        """A JointState at ``t_ns`` (random positions, velocities and efforts)."""
        n = self.kd.NDoF
        msg = JointState(name=self.kd.joints_name_list, position=rng.uniform(-1, 1, n).tolist(),
                         velocity=rng.normal(size=n).tolist(),
                         effort=rng.normal(size=n).tolist() if efforts else [])
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t_ns, 10**9)
        self.inputs.take_joint_state(serialize_message(msg))

    def odometry(self, rng, t_ns):
        msg = Odometry()
        msg.header.frame_id, msg.child_frame_id = "odom", self.kd.model.root_link
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t_ns, 10**9)
        p = msg.pose.pose
        p.position.x, p.position.y, p.position.z = rng.normal(size=3).tolist()
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = q.tolist()
        tw = msg.twist.twist
        tw.linear.x, tw.linear.y, tw.linear.z = rng.normal(size=3).tolist()
        tw.angular.x, tw.angular.y, tw.angular.z = rng.normal(size=3).tolist()
        self.inputs.take_odometry(serialize_message(msg))
        # (what was sent: its pose by SciPy, its BODY twist)
        self.sent_odometry = (homogeneous(Rotation.from_quat(q).as_matrix(),
                                          [p.position.x, p.position.y, p.position.z]),
                              np.array([tw.linear.x, tw.linear.y, tw.linear.z,
                                        tw.angular.x, tw.angular.y, tw.angular.z]))

    def wrench(self, rng, contact, t_ns):
        msg = WrenchStamped()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t_ns, 10**9)
        f = msg.wrench.force
        f.x, f.y, f.z = (rng.normal(size=3) * 10 + [0, 0, 150]).tolist()
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = rng.normal(size=3).tolist()
        self.inputs.take_wrench(contact, serialize_message(msg))

    def both(self, forward_dynamics):
        """(tick on the compiled path's PreparedTick, tick by compute_tick) of the same
        inputs; the first kept its PreparedTick."""
        ours = self.ticker.compute(self.inputs, forward_dynamics)
        kept, self.ticker._prepared = self.ticker._prepared, None
        real = self.kd.prepared_tick
        self.kd.prepared_tick = lambda wrenches: None
        try:
            reference = self.ticker.compute(self.inputs, forward_dynamics)
        finally:
            self.kd.prepared_tick = real
            self.ticker._prepared = kept
        return ours, reference

    def outputs(self, tick):
        return self.messages.per_tick(tick.result, tick.stamp_ns, tick.inputs, OUTPUTS, True)


def _same_ticks(stream, ours, reference):
    assert ours.stamp_ns == reference.stamp_ns and ours.fd_note == reference.fd_note
    assert ours.have_base == reference.have_base and ours.inputs == reference.inputs
    for field in ("w_H_b", "s", "base_vel", "s_dot"):
        np.testing.assert_array_equal(getattr(ours.state, field),
                                      getattr(reference.state, field))
    assert ours.state.representation == reference.state.representation
    np.testing.assert_array_equal(ours.result.packed, reference.result.packed)
    assert ours.result.massless_joints == reference.result.massless_joints
    a, b = stream.outputs(ours), stream.outputs(reference)
    assert a.keys() == b.keys() and all(a[k] == b[k] for k in a), "per-tick bytes differ"
    balance = (ours.result.balance, reference.result.balance)
    assert (balance[0] is None) == (balance[1] is None)
    if balance[0] is not None:
        assert balance[0].active == balance[1].active
        np.testing.assert_array_equal(balance[0].zmp_point, balance[1].zmp_point)
    return a


@pytest.mark.parametrize("representation", ["MIXED", "BODY_FIXED", "INERTIAL_FIXED"])
def test_the_prepared_tick_publishes_what_compute_tick_publishes(icub_urdf, representation):
    """120 ticks of iCub at 200 Hz: odometry and wrenches every 5th (the PreparedTick kept between
    them, made again after), one wrench going stale for a while, efforts missing for some
    ticks (no forward dynamics), and no reader of ~/forward_dynamics for others."""
    stream = Stream(icub_urdf, ("l_sole", "r_sole"))
    stream.kd.set_frame_velocity_representation(representation)
    stream.ticker = TickComputer(stream.kd, stream.ticker._aux, stream.settings,
                                 stream.ticker.geometry, stream.ticker._log)
    rng = np.random.default_rng(3)
    seen, t = set(), 10**9
    for k in range(120):
        t += 5_000_000                         # 200 Hz
        if k % 5 == 0:
            stream.odometry(rng, t)
            stream.wrench(rng, "l_sole", t)
            if not 40 <= k < 80:           # r_sole's last wrench goes stale (> 0.1 s) from 60
                stream.wrench(rng, "r_sole", t)
        stream.take(rng, t, efforts=not 20 <= k < 30)
        kept = stream.ticker._prepared
        ours, reference = stream.both(forward_dynamics=k % 7 != 0)
        out = _same_ticks(stream, ours, reference)
        seen.add(("forward_dynamics" in out, bool(ours.inputs.stale),
                  stream.ticker._prepared is kept))
    assert {(True, False, True), (True, False, False), (False, False, True),
            (True, True, True)} <= seen, seen


def test_massless_joints_are_named_by_the_prepared_tick():
    """A tree with a massless leaf: the prepared tick's forward dynamics has NaN for it and
    its note names it, as compute_tick's."""
    urdf = random_tree_urdf(n_joints=8, seed=4, massless_leaf=True)
    kd = KinDynComputations(urdf)
    link = kd.model.frame_names[1]
    stream = Stream(urdf, (link,))
    rng = np.random.default_rng(5)
    for k in range(5):
        t = 10**9 + k * 1_000_000
        stream.odometry(rng, t)
        stream.wrench(rng, link, t)
        stream.take(rng, t)
        ours, reference = stream.both(forward_dynamics=True)
        _same_ticks(stream, ours, reference)
        assert ours.result.massless_joints and ours.fd_note.startswith("computed; NaN")
        assert np.isnan(ours.result.joint_accelerations).any()


def test_mimic_joints_take_the_prepared_tick_too():
    """The mimic arm (a mimic joint filled from its master, a prismatic joint): the same
    ticks from the PreparedTick as from compute_tick."""
    stream = Stream(MIMIC_URDF, ("b",))
    rng = np.random.default_rng(6)
    for k in range(6):
        t = 10**9 + k * 1_000_000
        if k % 3 == 0:
            stream.odometry(rng, t)
            stream.wrench(rng, "b", t)
        stream.take(rng, t)
        ours, reference = stream.both(forward_dynamics=True)
        _same_ticks(stream, ours, reference)
    assert stream.ticker._prepared is not None and ours.result.base_acceleration is not None


def test_same_inputs_means_the_same_contacts_frames_and_value_objects():
    """same_inputs (which keeps a PreparedTick and a steady tick): the same contacts and
    frames in the same order and the same value objects; equal numbers in another array are
    other inputs (a new message), and arrays are never compared (their truth raises)."""
    w, v = np.ones(6), np.zeros(6)
    a = {'l_sole': ('l_sole', w), 'r_sole': ('r_foot', v)}
    assert same_inputs(a, dict(a)) and same_inputs({}, {})
    assert not same_inputs(a, {'l_sole': ('l_sole', w.copy()), 'r_sole': ('r_foot', v)})
    assert not same_inputs(a, {'l_sole': ('l_sole', w), 'r_sole': ('r_sole', v)})
    assert not same_inputs(a, {'r_sole': ('r_foot', v), 'l_sole': ('l_sole', w)})
    assert not same_inputs(a, {'l_sole': ('l_sole', w)})
    assert not same_inputs(a, {'l_sole': ('l_sole', w), 'x': ('r_foot', v)})


@pytest.mark.parametrize("representation", ["MIXED", "BODY_FIXED", "INERTIAL_FIXED"])
def test_the_base_state_of_odometry_read_compiled_is_the_cores(icub_urdf, representation):
    """Odometry of the root link, read compiled from the second message on (its twist also
    rotated to the world's axes by the reader, which MIXED takes as it is): the tick's base
    pose is the message's, its velocity the core's change_base_representation of the
    message's BODY twist, in each representation."""
    stream = Stream(icub_urdf, ())
    stream.kd.set_frame_velocity_representation(representation)
    stream.ticker = TickComputer(stream.kd, stream.ticker._aux, stream.settings,
                                 stream.ticker.geometry, stream.ticker._log)
    rep = stream.kd.rep
    rng, t, compiled = np.random.default_rng(8), 10**9, 0
    for k in range(8):
        t += 5_000_000
        stream.odometry(rng, t)
        odometry = stream.inputs.odometry
        compiled += odometry.value.mixed is not None
        stream.take(rng, t)
        tick, _ = stream.both(forward_dynamics=False)
        pose, twist = stream.sent_odometry
        np.testing.assert_allclose(tick.state.w_H_b, pose, rtol=0, atol=1e-15)
        want = change_base_representation(twist, pose, BODY, rep)
        np.testing.assert_allclose(tick.state.base_vel, want, rtol=0, atol=1e-14)
    assert compiled == 7        # (the first message is read the plain way, and learnt)
