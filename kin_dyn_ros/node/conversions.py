"""ROS messages <-> NumPy arrays: pure functions, no ``rclpy.init()`` needed.

Conventions: homogeneous transforms ``A_H_B`` are (4, 4) float64 (pose of B in A);
quaternions are ROS order (x, y, z, w); spatial vectors are [linear; angular] like
geometry_msgs Twist/Wrench and the dynamics core. Every function that reads a message
validates it and raises ``ValueError`` naming the problem; the node catches it, logs it
throttled and drops the message. The math (quaternions, the base state from odometry, mimic
joints) is the core's (:mod:`..dynamics`).
"""

import array
import math

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, TransformStamped

from ..dynamics.checks import finite_array
from ..dynamics.model import MimicJoints
from ..dynamics.quaternions import (quaternion_to_matrix, rotation_to_quaternion,
                                    rotations_to_quaternions)
from .cdr import REMEMBERED_NAMES_MAX

__all__ = [
    "pose_to_matrix", "pose_list_to_matrix", "matrix_to_pose", "transform_to_matrix",
    "make_transform_stamped", "fill_transforms", "vector_to_array", "array_to_point",
    "twist_to_array",
    "finite_array", "float_array", "matrix_to_list", "list_to_matrix",
    "stamp_to_ns", "ns_to_stamp", "stamp_words", "stamp_fields", "xyz_fields", "assign_fields",
    "JointStateMerger",
]


def vector_to_array(v):
    """(3,) array of a geometry_msgs Vector3 or Point; ValueError for NaN/inf."""
    return finite_array("vector", (v.x, v.y, v.z))


def pose_to_matrix(pose):
    """``A_H_B`` (4, 4) of a geometry_msgs/Pose (B's pose in A), validated."""
    q = pose.orientation
    h = np.eye(4)
    h[:3, :3] = quaternion_to_matrix(q.x, q.y, q.z, q.w)
    h[:3, 3] = finite_array("position", (pose.position.x, pose.position.y, pose.position.z))
    return h


def transform_to_matrix(transform):
    """``A_H_B`` (4, 4) of a geometry_msgs/Transform, validated."""
    q = transform.rotation
    h = np.eye(4)
    h[:3, :3] = quaternion_to_matrix(q.x, q.y, q.z, q.w)
    h[:3, 3] = vector_to_array(transform.translation)
    return h


def pose_list_to_matrix(values):
    """``A_H_B`` (4, 4) of ``[x, y, z, qx, qy, qz, qw]`` (the ``fixed_base_pose`` parameter)."""
    v = np.asarray(values, dtype=float).reshape(-1)
    if v.shape != (7,):
        raise ValueError(f"expected a pose [x, y, z, qx, qy, qz, qw] with 7 values, got {v.size}")
    h = np.eye(4)
    h[:3, :3] = quaternion_to_matrix(*v[3:])
    h[:3, 3] = finite_array("position", v[:3])
    return h


def matrix_to_pose(h, pose=None):
    """geometry_msgs/Pose of ``A_H_B`` (4, 4); fills ``pose`` in place when given."""
    pose = Pose() if pose is None else pose
    x, y, z, w = rotation_to_quaternion(h[:3, :3]).tolist()
    p = pose.position
    p.x, p.y, p.z = (float(c) for c in h[:3, 3])
    o = pose.orientation
    o.x, o.y, o.z, o.w = x, y, z, w
    return pose


def make_transform_stamped(h, parent, child, stamp=None):
    """TransformStamped ``parent -> child`` carrying ``parent_H_child`` (4, 4)."""
    tf = TransformStamped()
    tf.header.frame_id = parent
    tf.child_frame_id = child
    if stamp is not None:
        tf.header.stamp = stamp
    fill_transforms([tf], np.asarray(h, dtype=float)[None])
    return tf


def fill_transforms(transforms, h, stamp=None):
    """Write ``h`` (N, 4, 4) into N TransformStamped messages in place (the per-tick path:
    one vectorised quaternion conversion, then plain float assignments)."""
    h = np.asarray(h, dtype=float)
    values = np.concatenate([h[:, :3, 3], rotations_to_quaternions(h[:, :3, :3])], 1).tolist()
    for tf, (px, py, pz, qx, qy, qz, qw) in zip(transforms, values):
        if stamp is not None:
            tf.header.stamp = stamp
        t, r = tf.transform.translation, tf.transform.rotation
        t.x, t.y, t.z = px, py, pz
        r.x, r.y, r.z, r.w = qx, qy, qz, qw


def array_to_point(p, cls=Point):
    """A geometry_msgs Point (or ``cls``: Vector3, Point32) of 3 numbers."""
    x, y, z = (float(v) for v in p)
    return cls(x=x, y=y, z=z)


def twist_to_array(twist):
    """(6,) [linear; angular] of a geometry_msgs/Twist, validated."""
    return finite_array("twist", (twist.linear.x, twist.linear.y, twist.linear.z,
                                  twist.angular.x, twist.angular.y, twist.angular.z))


def float_array(values):
    """``array.array('d')`` of a NumPy array (row-major): what float64[] message fields take
    without a per-element check. One copy, straight from the array's buffer (through
    ``tobytes`` a large one cost 20x: a second copy into fresh pages)."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=float).reshape(-1).view(np.uint8))
    return out


def matrix_to_list(m):
    """Row-major ``array.array('d')`` of a matrix (for float64[] fields) and its shape."""
    m = np.asarray(m, dtype=float)
    return float_array(m.ravel()), m.shape


def list_to_matrix(data, rows, cols):
    """(rows, cols) matrix from row-major ``data``; ValueError when the size differs."""
    arr = np.asarray(data, dtype=float)
    if arr.size != rows * cols:
        raise ValueError(f"expected {rows} x {cols} = {rows * cols} values, got {arr.size}")
    return arr.reshape(rows, cols)


def stamp_to_ns(stamp):
    """Integer nanoseconds of a builtin_interfaces/Time."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def ns_to_stamp(t):
    """builtin_interfaces/Time of integer nanoseconds ``t``."""
    return Time(sec=t // 1_000_000_000, nanosec=t % 1_000_000_000)


def stamp_words(stamp):
    """A builtin_interfaces/Time as two 32-bit words (sec modulo 2**32: it is an int32)."""
    return (stamp.sec % 2 ** 32, stamp.nanosec)


def ns_words(t):
    """Integer nanoseconds ``t`` as the two words :func:`stamp_words` gives for
    ``ns_to_stamp(t)`` (no message made)."""
    sec, nanosec = divmod(t, 1_000_000_000)
    return (sec % 2 ** 32, nanosec)


def stamp_fields(msg):
    """``(object, attribute)`` of sec and nanosec of ``msg.header.stamp`` (for
    ``outputs.SerializedTemplate``)."""
    stamp = msg.header.stamp
    return [(stamp, "sec"), (stamp, "nanosec")]


def xyz_fields(objects):
    """``(object, attribute)`` of x, y, z of each Point, Point32 or Vector3 in ``objects``
    (for ``outputs.SerializedTemplate``)."""
    return [(o, c) for o in objects for c in "xyz"]


def assign_fields(fields, values):
    """Set ``fields`` ((object, attribute) or (object, attribute, k) for a sequence of k) to
    consecutive ``values`` (as :func:`stamp_fields` and :func:`xyz_fields` name them)."""
    k = 0
    for field in fields:
        obj, attr = field[:2]
        if len(field) == 3:
            setattr(obj, attr, values[k:k + field[2]])
            k += field[2]
        else:
            setattr(obj, attr, values[k])
            k += 1


class JointStateMerger:
    """Joint positions, velocities and efforts merged by name from sensor_msgs/JointState.

    Several publishers may each send a subset of the joints (one per limb): every message
    updates only the joints it names. Names that are not coordinates of the model are
    ignored. A message is checked completely before anything is written, so a bad one
    leaves the merged state unchanged.

    - Velocities are optional: a message without them sets its joints' velocities to 0.
    - Efforts (measured torques [N m] or forces [N]) are optional: a message without them
      marks its joints' efforts as unknown, so forward dynamics waits for fresh ones.
    - Mimic joints (``mimic``: {joint: (master, multiplier, offset)}, masters no mimics, as
      ``KinDynComputations.mimic_joints``) always follow their master: position
      ``m * q_master + o`` and velocity ``m * dq_master`` (the core's
      :class:`~..dynamics.model.MimicJoints`); a value received for a mimic joint is
      ignored (the URDF constraint wins, as in the dynamics). A mimic joint's effort is
      taken when received, else 0.
    - Joints never received stay at ``default_position`` with zero velocity.

    Arrays are (n,) in ``joint_names`` order (the model's ``joints_name_list``).
    """

    def __init__(self, joint_names, mimic=None, default_position=0.0):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self._mimic = MimicJoints(self.joint_names, mimic or {})
        self._mimic_mask = np.zeros(n, dtype=bool)
        self._mimic_mask[self._mimic.joints] = True
        self._default = float(default_position)
        # positions, velocities and efforts as rows of one array (one write per message)
        self._values = np.zeros((3, n))
        self._positions, self._velocities, self.efforts = self._values
        self._positions[:] = self._default
        self.received = np.zeros(n, dtype=bool)
        self.effort_received = np.zeros(n, dtype=bool)
        self._complete = False     # efforts_complete seen (only update() can undo it)
        self._layouts = {}
        self._blocks = {}       # name list -> (message columns, model joints) of update_block

    def _layout(self, names):
        """(message indices, model indices) of a name list, cached per distinct list (of at
        most cdr.REMEMBERED_NAMES_MAX names)."""
        layout = self._layouts.get(names)
        if layout is None:
            if len(set(names)) != len(names):
                dup = sorted({n for n in names if names.count(n) > 1})
                raise ValueError(f"JointState names {dup} more than once")
            keep = [(k, self._index[nm]) for k, nm in enumerate(names)
                    if nm in self._index and not self._mimic_mask[self._index[nm]]]
            layout = np.array(keep, dtype=np.intp).reshape(-1, 2).T   # (2, m): src, dst
            if len(names) > REMEMBERED_NAMES_MAX:     # not kept: a runaway list's names
                return layout
            if len(self._layouts) > 64:   # bounded cache: publishers with changing lists
                self._layouts.clear()
            self._layouts[names] = layout
        return layout

    @staticmethod
    def _field(msg, field, names, required):
        values = np.asarray(getattr(msg, field), dtype=float)
        if values.size == 0 and not required:
            return None
        if values.size != len(names):
            raise ValueError(f"JointState has {len(names)} names but {values.size} {field}s")
        bad = () if np.isfinite(values.sum()) else np.flatnonzero(~np.isfinite(values))
        if len(bad):     # (the sum is one cheap check; it only overflows for huge values)
            raise ValueError(f"JointState {field} is NaN or inf for {[names[k] for k in bad]}")
        return values

    def update(self, msg):
        """Merge a JointState; ValueError (state unchanged) for a length mismatch, NaN/inf
        or duplicate names. Returns the number of model joints it updated."""
        names = tuple(msg.name)
        pos = self._field(msg, "position", names, True)
        vel = self._field(msg, "velocity", names, False)
        eff = self._field(msg, "effort", names, False)
        src, dst = self._layout(names)
        self._positions[dst] = pos[src]
        self._velocities[dst] = 0.0 if vel is None else vel[src]
        self.received[dst] = True
        self.effort_received[dst] = eff is not None
        self._complete = self._complete and eff is not None
        if eff is not None:
            self.efforts[dst] = eff[src]
        self._update_mimic_efforts(names, eff)
        return len(dst)

    def update_block(self, block):
        """Merge a :class:`.cdr.JointStateBlock` as :meth:`update` merges the message, when
        its name list was merged by :meth:`update` before and its values are finite; else
        False (nothing changed): :meth:`update` then takes the message (and raises for a bad
        one). Returns the number of model joints updated, or False."""
        names = block.name
        columns = self.block_columns(names)
        if columns is None or not math.isfinite(block.values[:, 1:].sum()):
            return False
        src, dst, mimic_src, mimic_dst = columns
        self._values[:, dst] = block.values[:, src]
        self.received[dst] = True
        self.effort_received[dst] = True
        if len(mimic_dst):
            self.efforts[mimic_dst] = block.values[2, mimic_src]
        return len(dst)

    def merged_arrays(self):
        """(values (3, n): rows position, velocity, effort; received (n,); effort_received
        (n,)): the merged state itself, for a compiled merge
        (:class:`.compiled_inputs.CompiledJointStates`) that writes as :meth:`update_block`."""
        return self._values, self.received, self.effort_received

    def block_columns(self, names):
        """(columns, joints) of the non-mimic and of the mimic joints named, for
        :meth:`update_block` (columns of a JointStateBlock: message index + 1), kept per name
        list that :meth:`update` has merged; None for another."""
        columns = self._blocks.get(names)
        if columns is not None:
            return columns
        layout = self._layouts.get(names)
        if layout is None:
            return None
        mimic_src, mimic_dst = self._mimic_columns(names)
        if len(self._blocks) >= 64:    # bounded, as the layouts
            self._blocks.clear()
        columns = self._blocks[names] = (layout[0] + 1, layout[1], mimic_src + 1, mimic_dst)
        return columns

    def _mimic_columns(self, names):
        """(message indices, model joints) (2, m) of the mimic joints among ``names``."""
        pairs = [(k, i) for k, i in enumerate(map(self._index.get, names))
                 if i is not None and self._mimic_mask[i]]
        return np.array(pairs, dtype=np.intp).reshape(-1, 2).T

    def knows_any(self, names):
        """Whether one of ``names`` is a joint of the model (mimic joints included)."""
        return any(name in self._index for name in names)

    def _update_mimic_efforts(self, names, eff):
        if eff is None or not self._mimic.joints.size:
            return
        src, dst = self._mimic_columns(names)
        self.efforts[dst] = eff[src]

    def state(self):
        """(positions (n,), velocities (n,)) with the mimic joints filled from their masters
        (copies; without mimic joints one copy of both, a row each)."""
        if not self._mimic.joints.size:
            state = self._values[:2].copy()
            return state[0], state[1]       # (indexed: unpacking iterates three times)
        return (self._mimic.positions(self._positions),
                self._mimic.velocities(self._velocities))

    def mimic_arrays(self):
        """(indices (2, k) int64: each mimic joint and its master; factors (2, k): its
        multiplier and offset), for a compiled tick that fills the mimic joints of a copy of
        the merged positions and velocities (:meth:`merged_arrays`) as :meth:`state` does
        (:func:`..dynamics.kernels.steady_tick`)."""
        m = self._mimic
        return (np.array([m.joints, m.masters], np.int64).reshape(2, -1),
                np.array([m.multipliers, m.offsets], np.float64).reshape(2, -1))

    @property
    def missing(self):
        """Model joints never received (mimic joints count as received with their master)."""
        got = self.received.copy()
        got[self._mimic.joints] = got[self._mimic.masters]
        return [nm for nm, ok in zip(self.joint_names, got) if not ok]

    @property
    def efforts_complete(self):
        """True when the last message of every non-mimic joint carried its effort (once
        True, only a message without efforts, :meth:`update`, can make it False: it is
        counted again only until then)."""
        if not self._complete:
            self._complete = bool((self.effort_received | self._mimic_mask).all())
        return self._complete

    def set_default_position(self, value):
        """Change the position of the joints never received."""
        self._default = float(value)
        self._positions[~self.received] = self._default

    def carry_over(self, other):
        """Take the values of the joints that ``other`` (the merger of the previous model)
        received and that this model also has (after a model reload)."""
        for k, name in enumerate(other.joint_names):
            i = self._index.get(name)
            if i is None or not other.received[k]:
                continue
            self._positions[i] = other._positions[k]
            self._velocities[i] = other._velocities[k]
            self.efforts[i] = other.efforts[k]
            self.received[i] = True
            self.effort_received[i] = other.effort_received[k]
        self._complete = False
