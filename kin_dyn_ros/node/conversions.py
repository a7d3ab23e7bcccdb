"""ROS messages <-> NumPy arrays: pure functions, no ``rclpy.init()`` needed.

Conventions: homogeneous transforms ``A_H_B`` are (4, 4) float64 (pose of B in A);
quaternions are ROS order (x, y, z, w); spatial vectors are [linear; angular] like
geometry_msgs Twist/Wrench and the dynamics core. Every function that reads a message
validates it and raises ``ValueError`` naming the problem; the node catches it, logs it
throttled and drops the message.
"""

import array

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, TransformStamped

from ..dynamics.representations import Representations, base_transform, base_transform_inverse
from ..dynamics.spatial import inverse_homogeneous, velocity_transform

__all__ = [
    "QUATERNION_TOLERANCE", "quaternion_to_matrix", "rotations_to_quaternions",
    "pose_to_matrix", "pose_list_to_matrix", "matrix_to_pose", "transform_to_matrix",
    "make_transform_stamped", "fill_transforms", "vector_to_array", "twist_to_array",
    "finite_array", "float_array", "matrix_to_list", "list_to_matrix",
    "stamp_to_ns", "ns_to_stamp", "stamp_words", "stamp_fields", "xyz_fields", "assign_fields",
    "change_base_representation", "base_state_from_odometry",
    "JointStateMerger",
]

# As tf2: a quaternion whose squared norm is further than this from 1 is rejected,
# a closer one is normalised.
QUATERNION_TOLERANCE = 1e-2


def finite_array(name, values):
    """float64 array of ``values``; ValueError naming ``name`` when one is NaN or inf."""
    arr = np.asarray(values, dtype=float)
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf: {arr.tolist()}")
    return arr


def quaternion_to_matrix(x, y, z, w):
    """Rotation matrix (3, 3) of quaternion (x, y, z, w).

    Raises ValueError for NaN/inf, a zero quaternion, or one whose squared norm is
    further than :data:`QUATERNION_TOLERANCE` from 1; a near-unit one is normalised.
    """
    q = finite_array("quaternion", (x, y, z, w))
    n2 = float(q @ q)
    if abs(n2 - 1.0) > QUATERNION_TOLERANCE:
        raise ValueError(f"quaternion (x, y, z, w) = {q.tolist()} has norm {np.sqrt(n2):.6g}: "
                         f"expected a unit quaternion")
    x, y, z, w = q / np.sqrt(n2)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _shepperd_map():
    """(A (9, 16), b (16,)): the four Shepperd candidates ``4 q_k q`` (x, y, z, w) of a
    rotation matrix are ``r.ravel() @ A + b``, row k of the (4, 4) reshape."""
    a, b = np.zeros((3, 3, 4, 4)), np.zeros((4, 4))
    sym = {(0, 1): (0, 1), (0, 2): (0, 2), (1, 2): (1, 2)}        # q_i q_j terms
    odd = {0: (2, 1), 1: (0, 2), 2: (1, 0)}                      # q_w q_i terms
    for k in range(3):                                           # diagonal: 1 + 2 r_kk - tr
        a[k, k, k, k] = a[k, k, 3, 3] = 1.0
        for j in range(3):
            if j != k:
                a[j, j, k, k] = -1.0
        b[k, k] = b[3, 3] = 1.0
    for (i, j), (p, q) in sym.items():
        a[p, q, i, j] = a[q, p, i, j] = a[p, q, j, i] = a[q, p, j, i] = 1.0
    for i, (p, q) in odd.items():
        a[p, q, i, 3] = a[p, q, 3, i] = 1.0
        a[q, p, i, 3] = a[q, p, 3, i] = -1.0
    return a.reshape(9, 16), b.ravel()


_SHEPPERD_A, _SHEPPERD_B = _shepperd_map()


def rotations_to_quaternions(rotations):
    """Unit quaternions (N, 4) (x, y, z, w), w >= 0, of rotation matrices (N, 3, 3).

    Shepperd's method, vectorised: the four candidates ``4 q_k q`` are one linear map of the
    matrix entries; for each matrix the candidate with the largest ``q_k`` is normalised
    (no division by a small number).
    """
    r = np.asarray(rotations, dtype=float).reshape(-1, 9)
    cand = (r @ _SHEPPERD_A + _SHEPPERD_B).reshape(-1, 4, 4)     # (N, 4, 4)
    rows = np.arange(len(r))
    q = cand[rows, cand[:, [0, 1, 2, 3], [0, 1, 2, 3]].argmax(axis=1)]
    q *= np.where(q[:, 3:] < 0.0, -1.0, 1.0)
    return q / np.sqrt(np.einsum("ij,ij->i", q, q))[:, None]


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
    x, y, z, w = rotations_to_quaternions(h[:3, :3])[0].tolist()
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


def twist_to_array(twist):
    """(6,) [linear; angular] of a geometry_msgs/Twist, validated."""
    return finite_array("twist", (twist.linear.x, twist.linear.y, twist.linear.z,
                                  twist.angular.x, twist.angular.y, twist.angular.z))


def float_array(values):
    """``array.array('d')`` of a NumPy array: what float64[] message fields take without
    a per-element check."""
    out = array.array("d")
    out.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
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


def change_base_representation(nu_base, w_H_b, rep_from, rep_to):
    """Base velocity (6,) in ``rep_from`` -> ``rep_to`` at base pose ``w_H_b`` (4, 4).

    Uses the core's maps to its internal frame C: ``T_to nu_to = T_from nu_from``.
    """
    if rep_from == rep_to:
        return np.array(nu_base, dtype=float)
    return base_transform_inverse(rep_to, w_H_b) @ (base_transform(rep_from, w_H_b) @ nu_base)


def base_state_from_odometry(w_H_c, twist_c, root_H_child, j_rel, s_dot, rep):
    """Root pose and velocity from the odometry of a child link (REP-105).

    Parameters
    ----------
    w_H_c : (4, 4) pose of the odometry's child frame C in the world frame.
    twist_c : (6,) C's twist as nav_msgs/Odometry carries it: [linear velocity of C's
        origin; angular velocity], both in C's axes (C's BODY_FIXED velocity).
    root_H_child : (4, 4) C's pose in the root (base) frame B at the current joint positions
        (``kd.forward_kinematics(child, eye(4), s)``).
    j_rel : (6, n) C's BODY_FIXED Jacobian relative to the base (the joint columns,
        ``relative_jacobian`` in BODY_FIXED): C's body velocity due to the joints.
    s_dot : (n,) joint velocities.
    rep : Representations of the returned base velocity.

    Returns ``(w_H_b (4, 4), nu_b (6,))`` with ``J_C(q) [nu_b; s_dot] = twist_c`` (in BODY_FIXED):
    ``B v_B = B_X_C (C v_C - J_rel s_dot)``, then converted to ``rep``.
    """
    w_H_b = w_H_c @ inverse_homogeneous(root_H_child)
    v_body = velocity_transform(root_H_child) @ (twist_c - j_rel @ s_dot)
    nu = change_base_representation(v_body, w_H_b, Representations.BODY_FIXED_REPRESENTATION,
                                    rep)
    return w_H_b, nu


class JointStateMerger:
    """Joint positions, velocities and efforts merged by name from sensor_msgs/JointState.

    Several publishers may each send a subset of the joints (one per limb): every message
    updates only the joints it names. Names that are not coordinates of the model are
    ignored. A message is checked completely before anything is written, so a bad one
    leaves the merged state unchanged.

    - Velocities are optional: a message without them sets its joints' velocities to 0.
    - Efforts (measured torques [N m] or forces [N]) are optional: a message without them
      marks its joints' efforts as unknown, so forward dynamics waits for fresh ones.
    - Mimic joints (``mimic``: {joint: (master, multiplier, offset)}) always follow their
      master: position ``m * q_master + o`` and velocity ``m * dq_master``; a value received
      for a mimic joint is ignored (the URDF constraint wins, as in the dynamics). A mimic
      joint's effort is taken when received, else 0.
    - Joints never received stay at ``default_position`` with zero velocity.

    Arrays are (n,) in ``joint_names`` order (the model's ``joints_name_list``).
    """

    def __init__(self, joint_names, mimic=None, default_position=0.0):
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        mimic = mimic or {}
        self._mimic = [(self._index[j], self._index[m], mult, off)
                       for j, (m, mult, off) in mimic.items()]
        self._mimic_mask = np.zeros(n, dtype=bool)
        self._mimic_mask[[i for i, *_ in self._mimic]] = True
        self._default = float(default_position)
        self._positions = np.full(n, self._default)
        self._velocities = np.zeros(n)
        self.efforts = np.zeros(n)
        self.received = np.zeros(n, dtype=bool)
        self.effort_received = np.zeros(n, dtype=bool)
        self._layouts = {}

    def _layout(self, names):
        """(message indices, model indices) of a name list, cached per distinct list."""
        layout = self._layouts.get(names)
        if layout is None:
            if len(set(names)) != len(names):
                dup = sorted({n for n in names if names.count(n) > 1})
                raise ValueError(f"JointState names {dup} more than once")
            keep = [(k, self._index[nm]) for k, nm in enumerate(names)
                    if nm in self._index and not self._mimic_mask[self._index[nm]]]
            layout = np.array(keep, dtype=np.intp).reshape(-1, 2).T   # (2, m): src, dst
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
        if eff is not None:
            self.efforts[dst] = eff[src]
        self._update_mimic_efforts(names, eff)
        return len(dst)

    def _update_mimic_efforts(self, names, eff):
        if eff is None or not self._mimic:
            return
        for k, nm in enumerate(names):
            i = self._index.get(nm)
            if i is not None and self._mimic_mask[i]:
                self.efforts[i] = eff[k]

    def state(self):
        """(positions (n,), velocities (n,)) with the mimic joints filled from their masters."""
        s, ds = self._positions.copy(), self._velocities.copy()
        for i, m, mult, off in self._mimic:
            s[i] = mult * s[m] + off
            ds[i] = mult * ds[m]
        return s, ds

    @property
    def missing(self):
        """Model joints never received (mimic joints count as received with their master)."""
        got = self.received.copy()
        for i, m, _, _ in self._mimic:
            got[i] = got[m]
        return [nm for nm, ok in zip(self.joint_names, got) if not ok]

    @property
    def efforts_complete(self):
        """True when the last message of every non-mimic joint carried its effort."""
        return bool((self.effort_received | self._mimic_mask).all())

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
