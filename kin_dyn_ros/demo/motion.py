"""The demo's motion: a humanoid squatting and swaying on both feet, fixed flat on the ground.

Pure NumPy on top of :mod:`kin_dyn_ros.dynamics` (no ROS). A :class:`Motion` gives, at any time
t, a state (base pose, base velocity and acceleration, joint positions, velocities,
accelerations) that is kinematically exact for two feet that never move, and the contact
wrenches and joint torques that make it dynamically exact: the equations of motion

    M(q) nu_dot + h(q, nu) = [0; tau] + J_l^T w_l + J_r^T w_r

hold to round-off, so forward dynamics fed with (tau, w_l, w_r) gives back nu_dot.

Biped mode (the model has both foot frames, default ``l_sole`` and ``r_sole``):

1. Every joint that is not on the right leg follows a smooth sinusoid of period
   ``period`` (harmonics 1 and 2 of it): the torso, head, arms, and the left leg, whose
   pitch joints squat (hip / knee / ankle in the ratio 1 : -2 : -1, pelvis level) and whose
   roll joints sway (hip roll = -ankle roll). Joint names of iCub get a hand-made posture;
   others get small sinusoids around the middle of their limits.
2. The left sole is fixed at ``w_H_lsole`` (flat, z = 0), so the base pose is
   ``w_H_b = w_H_lsole @ inv(b_H_lsole(s))``.
3. The right-leg joints (the joints on the path from the root to the right sole that are not
   on the left path) come from Newton's method so that the right sole stays at its fixed flat
   pose (converged to 1e-13 in position and orientation, warm-started from the previous
   sample when sampled in order).
4. Velocities and accelerations of the base and of the right leg come from the
   differentiated contact constraints, ``J_F nu = 0`` and ``J_F nu_dot + Jdot_F nu = 0`` for
   both feet (MIXED Jacobians of the core), solved exactly: they are as accurate as the
   Jacobians (round-off, ~1e-12), not finite differences.
5. Contact wrenches: the base rows of ``rnea(q, nu, nu_dot)`` (the total wrench the ground
   must supply, force and moment about the base origin, world axes) are split between the
   feet by the CoM position: ``alpha`` = where the CoM ground projection falls on the segment
   from the right to the left sole (clipped to [0, 1]); the left foot takes ``alpha`` of the
   force and ``alpha`` of the moment left over once both forces are placed at their soles,
   the right foot the rest. The split is exact (base rows balanced to round-off). Joint
   torques are ``rnea(..., external_wrenches={l: w_l, r: w_r})[6:]``.

Fixed-base mode (any other model, or a biped whose right-leg IK fails): the base stays at
``w_H_b = I``; every joint follows a small sinusoid inside its limits; the whole base
wrench is supplied by one "contact" on the root link (as if the robot were bolted to a
stand), so the same consistency holds.

Wrenches are returned in the core's MIXED convention (at the contact frame's origin, world
axes); :func:`wrench_in_frame` converts one to the frame's own axes (what the demo publishes).
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from ..dynamics import KinDynComputations, Representations
from ..dynamics.representations import base_transform, base_transform_dot
from ..dynamics.spatial import inverse_homogeneous, rpy_to_matrix

__all__ = ["Motion", "MotionSample", "JointTrajectory", "wrench_in_frame", "body_twist",
           "base_acceleration_in", "rotation_log", "foot_outline", "convex_hull",
           "ICUB_POSTURE"]

LEFT_FOOT = "l_sole"
RIGHT_FOOT = "r_sole"
IK_TOLERANCE = 1e-13
IK_MAX_ITERATIONS = 50

# iCub joints: (offset [rad], ((amplitude [rad], harmonic, phase [rad]), ...)), q(t) =
# offset + sum amplitude * sin(harmonic * 2 pi t / period + phase). Squat terms are
# -cos(2 w t) = sin(2 w t - pi / 2): crouched at t = period / 4, upright at t = 0.
_DOWN = -np.pi / 2
ICUB_POSTURE = {
    # left leg: squat (hip : knee : ankle = 1 : -2 : -1 keeps the pelvis level) and sway
    "l_hip_pitch": (0.35, ((0.15, 2, _DOWN),)),
    "l_knee": (-0.70, ((-0.30, 2, _DOWN),)),
    "l_ankle_pitch": (-0.35, ((-0.15, 2, _DOWN),)),
    "l_hip_roll": (0.0, ((0.06, 1, 0.0),)),
    "l_ankle_roll": (0.0, ((-0.06, 1, 0.0),)),
    "l_hip_yaw": (0.0, ()),
    # torso leans forward as the hips go back, twists with the arms
    "torso_pitch": (0.20, ((0.12, 2, _DOWN),)),
    "torso_roll": (0.0, ((0.04, 1, np.pi),)),
    "torso_yaw": (0.0, ((0.20, 1, 0.0),)),
    "neck_pitch": (-0.05, ((0.08, 2, 0.0),)),
    "neck_roll": (0.0, ()),
    "neck_yaw": (0.0, ((-0.25, 1, 0.0),)),
    # arms swing in opposition
    "l_shoulder_pitch": (-0.40, ((0.35, 1, 0.0),)),
    "r_shoulder_pitch": (-0.40, ((-0.35, 1, 0.0),)),
    "l_shoulder_roll": (0.40, ((0.10, 2, 0.0),)),
    "r_shoulder_roll": (0.40, ((0.10, 2, 0.0),)),
    "l_shoulder_yaw": (0.10, ()),
    "r_shoulder_yaw": (0.10, ()),
    "l_elbow": (0.80, ((0.30, 1, 0.5),)),
    "r_elbow": (0.80, ((-0.30, 1, 0.5),)),
    "l_wrist_prosup": (0.0, ((0.20, 2, 0.0),)),
    "r_wrist_prosup": (0.0, ((0.20, 2, 0.0),)),
    "l_wrist_pitch": (0.0, ()),
    "r_wrist_pitch": (0.0, ()),
    "l_wrist_yaw": (0.0, ()),
    "r_wrist_yaw": (0.0, ()),
    # right leg: only the initial guess of the IK (mirror of the left leg at t = 0)
    "r_hip_pitch": (0.20, ()),
    "r_knee": (-0.40, ()),
    "r_ankle_pitch": (-0.20, ()),
    "r_hip_roll": (0.0, ()),
    "r_ankle_roll": (0.0, ()),
    "r_hip_yaw": (0.0, ()),
}


@dataclass(frozen=True)
class MotionSample:
    """The state of the robot at time ``t`` and the inputs that make it dynamically exact.

    - ``w_H_b`` (4, 4): base pose in the world; ``base_velocity``, ``base_acceleration`` (6,):
      MIXED ([d/dt base origin; world angular velocity], world axes) and its derivative.
    - ``s``, ``s_dot``, ``s_ddot``, ``tau`` (n,): joints, in ``kd.joints_name_list`` order.
    - ``wrenches``: {contact frame: (6,) [force; torque]} acting on the robot, MIXED (applied
      at the frame's origin, world axes).
    - ``contact_poses``: {contact frame: (4, 4) world pose}.
    - ``com`` (3,): centre of mass, world frame.
    """

    t: float
    w_H_b: np.ndarray
    base_velocity: np.ndarray
    base_acceleration: np.ndarray
    s: np.ndarray
    s_dot: np.ndarray
    s_ddot: np.ndarray
    tau: np.ndarray
    wrenches: dict
    contact_poses: dict
    com: np.ndarray


class JointTrajectory:
    """Sums of sinusoids ``q(t) = c + sum_k a_k sin(h_k w t + phi_k)``, ``w = 2 pi / period``.

    Parameters
    ----------
    offsets : array_like, shape (m,)
    terms : sequence of (joint index, amplitude, harmonic, phase)
    period : float
        Seconds; every term is periodic with it.
    """

    def __init__(self, offsets, terms, period):
        self.offsets = np.asarray(offsets, dtype=float)
        self.omega = 2.0 * np.pi / period
        terms = list(terms)
        self._index = np.array([t[0] for t in terms], dtype=int)
        self._amp = np.array([t[1] for t in terms], dtype=float)
        self._freq = np.array([t[2] for t in terms], dtype=float) * self.omega
        self._phase = np.array([t[3] for t in terms], dtype=float)

    def __call__(self, t):
        """(q, q_dot, q_ddot), each shape (m,), at time t [s]."""
        arg = self._freq * t + self._phase
        sin, cos = np.sin(arg), np.cos(arg)
        q, qd, qdd = self.offsets.copy(), np.zeros_like(self.offsets), np.zeros_like(self.offsets)
        np.add.at(q, self._index, self._amp * sin)
        np.add.at(qd, self._index, self._amp * self._freq * cos)
        np.add.at(qdd, self._index, -self._amp * self._freq ** 2 * sin)
        return q, qd, qdd

    def bounds(self):
        """(lowest, highest) value each coordinate can reach, shape (m,) each."""
        spread = np.zeros_like(self.offsets)
        np.add.at(spread, self._index, np.abs(self._amp))
        return self.offsets - spread, self.offsets + spread


def rotation_log(rot):
    """Rotation vector (3,) of a rotation matrix (3, 3), accurate near 0 and near pi."""
    cos = np.clip((np.trace(rot) - 1.0) / 2.0, -1.0, 1.0)
    axis_sin = 0.5 * np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0],
                               rot[1, 0] - rot[0, 1]])
    sin = np.linalg.norm(axis_sin)
    angle = np.arctan2(sin, cos)
    if sin < 1e-7 and cos > 0:
        return axis_sin * (1.0 + angle ** 2 / 6.0)   # angle / sin(angle), 2nd order
    if cos < 0 and sin < 1e-3:
        # near pi: axis from the symmetric part, sign from axis_sin
        sym = (rot + rot.T) / 2.0 - cos * np.eye(3)
        axis = sym[np.argmax(np.diag(sym))]
        axis /= np.linalg.norm(axis)
        if axis @ axis_sin < 0:
            axis = -axis
        return axis * angle
    return axis_sin * (angle / sin)


def wrench_in_frame(w_H_f, wrench_mixed):
    """Wrench (6,) at F's origin with world axes (MIXED) -> the same wrench in F's axes."""
    rot = np.asarray(w_H_f)[:3, :3]
    return np.concatenate([rot.T @ wrench_mixed[:3], rot.T @ wrench_mixed[3:]])


def body_twist(w_H_b, base_velocity_mixed):
    """MIXED base velocity (6,) -> body-fixed twist (6,) [R^T v; R^T w] (REP-105 odometry)."""
    rot = np.asarray(w_H_b)[:3, :3]
    return np.concatenate([rot.T @ base_velocity_mixed[:3], rot.T @ base_velocity_mixed[3:]])


def base_acceleration_in(rep, w_H_b, velocity_mixed, acceleration_mixed):
    """MIXED base velocity and acceleration (6,) -> the base acceleration (6,) in ``rep``.

    With the core's maps to its internal frame C (``nu_C = T_rep nu_rep``):
    ``T_x a_x + Tdot_x nu_x = T_m a_m + Tdot_m nu_m``.
    """
    mixed = Representations.MIXED_REPRESENTATION
    t_m, t_x = base_transform(mixed, w_H_b), base_transform(rep, w_H_b)
    nu_x = np.linalg.solve(t_x, t_m @ velocity_mixed)
    rhs = (t_m @ acceleration_mixed + base_transform_dot(mixed, t_m, velocity_mixed)
           @ velocity_mixed - base_transform_dot(rep, t_x, nu_x) @ nu_x)
    return np.linalg.solve(t_x, rhs)


def _flat(h):
    """Project a pose (4, 4) onto the ground: z = 0, only the yaw of its x axis is kept."""
    yaw = np.arctan2(h[1, 0], h[0, 0])
    out = np.eye(4)
    out[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    out[:2, 3] = h[:2, 3]
    return out


def _generic_trajectory(kd, joints):
    """Small sinusoids inside the limits for ``joints`` (names): (offsets, terms).

    Amplitude min(0.1, range / 5), centred on 0 moved inside the limits, harmonic 1 or 2,
    phases spread. A mimic joint whose master is in ``joints`` follows it
    (``multiplier * q_master + offset``), as the node's JointState merging expects.
    """
    offsets, terms = [], []
    mimic = {j: m for j, m in kd.mimic_joints.items() if m[0] in joints and j in joints}
    for k, name in enumerate(joints):
        lower, upper = -np.inf, np.inf
        limits = kd.model.limits.get(name)
        if limits is not None and limits[0] < limits[1]:
            lower, upper = limits[0], limits[1]
        amplitude = min(0.1, 0.2 * (upper - lower))
        offsets.append(float(np.clip(0.0, lower + amplitude, upper - amplitude)))
        if name not in mimic:
            terms.append((k, amplitude, 1 + k % 2, 0.7 * k))
    for name, (master, multiplier, offset) in mimic.items():
        k, m = joints.index(name), joints.index(master)
        offsets[k] = multiplier * offsets[m] + offset
        terms += [(k, multiplier * a, h, p) for i, a, h, p in list(terms) if i == m]
    return offsets, terms


class Motion:
    """Trajectory of a robot model: see the module docstring.

    Parameters
    ----------
    kd : KinDynComputations
        The model. Its representation is set to MIXED.
    period : float
        Period of the motion [s] (default 4).
    feet : (str, str)
        Left and right sole frames for the biped mode.

    Attributes
    ----------
    mode : str
        ``"biped"`` or ``"fixed-base"``; ``reason`` says why fixed-base was chosen.
    contacts : list of str
        Frames that carry the contact wrenches (the feet, or the root link).
    """

    def __init__(self, kd, period=4.0, feet=(LEFT_FOOT, RIGHT_FOOT)):
        if not isinstance(kd, KinDynComputations):
            raise ValueError(f"expected a KinDynComputations, got {type(kd).__name__}")
        self.kd = kd
        kd.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
        self.period = float(period)
        self.n = kd.NDoF
        self.joints = kd.joints_name_list
        self.reason = ""
        self._last = None   # (t, s_ik) of the last IK solution, for warm starts
        try:
            self._setup_biped(*feet)
            self.mode = "biped"
        except _NotABiped as exc:
            self.reason = str(exc)
            self._setup_fixed_base()
            self.mode = "fixed-base"

    # -- set-up -------------------------------------------------------------------------
    def _path_joints(self, frame, s):
        """Indices of the joints that move ``frame`` relative to the base."""
        jac = self.kd.relative_jacobian(frame, s)
        return set(np.flatnonzero(np.abs(jac).sum(axis=0) > 0).tolist())

    def _setup_biped(self, left, right):
        kd = self.kd
        missing = [f for f in (left, right) if f not in kd.frame_names]
        if missing:
            raise _NotABiped(f"the model has no frame {', '.join(missing)}")
        probe = np.linspace(0.1, 0.2, self.n)
        left_path = self._path_joints(left, probe)
        right_leg = sorted(self._path_joints(right, probe) - left_path)
        if len(right_leg) < 6:
            raise _NotABiped(f"only {len(right_leg)} joints move {right} relative to {left} "
                             "(6 are needed to keep both feet fixed)")
        self.left, self.right = left, right
        self.contacts = [left, right]
        self.ik = np.array(right_leg)
        self.free = np.array([k for k in range(self.n) if k not in set(right_leg)])
        known = all(name in ICUB_POSTURE for name in self.joints)
        if known:
            offsets = [ICUB_POSTURE[self.joints[k]][0] for k in self.free]
            terms = [(i, a, h, p) for i, k in enumerate(self.free)
                     for a, h, p in ICUB_POSTURE[self.joints[k]][1]]
            guess = np.array([ICUB_POSTURE[self.joints[k]][0] for k in self.ik])
        else:
            offsets, terms = _generic_trajectory(kd, [self.joints[k] for k in self.free])
            guess = np.zeros(len(self.ik))
        self.trajectory = JointTrajectory(offsets, terms, self.period)
        # Fixed feet: the left sole's axes are the world's; the world origin lies between the
        # feet on the ground; the right sole is flat on the ground where the initial guess
        # put it.
        s = np.zeros(self.n)
        s[self.free] = self.trajectory(0.0)[0]
        s[self.ik] = guess
        b_H_l = kd.forward_kinematics(left, np.eye(4), s)
        l_H_r = _flat(inverse_homogeneous(b_H_l) @ kd.forward_kinematics(right, np.eye(4), s))
        self.w_H_left = np.eye(4)
        self.w_H_left[:2, 3] = -0.5 * l_H_r[:2, 3]
        self.w_H_right = self.w_H_left @ l_H_r
        self._ik_start = self._solve_ik(s, guess)[self.ik]
        for t in np.linspace(0.0, self.period, 41)[1:]:   # the IK must track a whole period
            guess = self._solve_ik(self._joint_guess(t), guess)[self.ik]

    def _setup_fixed_base(self):
        root = self.kd.model.root_link
        self.contacts = [root]
        self.ik = np.array([], dtype=int)
        self.free = np.arange(self.n)
        offsets, terms = _generic_trajectory(self.kd, self.joints)
        self.trajectory = JointTrajectory(offsets, terms, self.period)

    def _joint_guess(self, t):
        s = np.zeros(self.n)
        s[self.free] = self.trajectory(t)[0]
        return s

    # -- kinematics ---------------------------------------------------------------------
    def _base_pose(self, s):
        if self.mode == "fixed-base":
            return np.eye(4)
        return self.w_H_left @ inverse_homogeneous(
            self.kd.forward_kinematics(self.left, np.eye(4), s))

    def _solve_ik(self, s, guess):
        """Right-leg joints with the right sole at ``w_H_right``; returns the full s."""
        kd = self.kd
        s = np.array(s, dtype=float)
        s[self.ik] = guess
        b_H_l = kd.forward_kinematics(self.left, np.eye(4), s)
        target = b_H_l @ inverse_homogeneous(self.w_H_left) @ self.w_H_right   # b_H_right
        for _ in range(IK_MAX_ITERATIONS):
            b_H_r = kd.forward_kinematics(self.right, np.eye(4), s)
            error = np.concatenate([target[:3, 3] - b_H_r[:3, 3],
                                    rotation_log(target[:3, :3] @ b_H_r[:3, :3].T)])
            if np.max(np.abs(error)) < IK_TOLERANCE:
                return s
            jac = kd.relative_jacobian(self.right, s)[:, self.ik]
            step = np.linalg.lstsq(jac, error, rcond=None)[0]
            s[self.ik] += step
            if np.max(np.abs(step)) > 1.0:
                break
        raise _NotABiped(f"the inverse kinematics of {self.right} did not converge "
                         f"(residual {np.max(np.abs(error)):.1e})")

    # -- sampling -----------------------------------------------------------------------
    def sample(self, t):
        """The :class:`MotionSample` at time ``t`` [s].

        In biped mode the IK is warm-started from the previous call, so sampling in time
        order (small steps) is fastest; any order converges to the same branch as long as
        steps stay below about a tenth of the period.
        """
        kd = self.kd
        s, s_dot, s_ddot = np.zeros(self.n), np.zeros(self.n), np.zeros(self.n)
        s[self.free], s_dot[self.free], s_ddot[self.free] = self.trajectory(t)
        nu = np.zeros(6 + self.n)
        nu_dot = np.zeros(6 + self.n)
        if self.mode == "biped":
            guess = self._ik_guess(t)
            s = self._solve_ik(s, guess)
            w_H_b = self._base_pose(s)
            nu[6:], nu_dot[6:] = s_dot, s_ddot
            # unknowns x = [base (6); right leg]: J_F nu = 0, J_F nu_dot + Jdot_F nu = 0
            unknown = np.concatenate([np.arange(6), 6 + self.ik])
            jac = np.vstack([kd.jacobian(f, w_H_b, s) for f in self.contacts])
            a = jac[:, unknown]
            nu[unknown] = np.linalg.lstsq(a, -jac @ nu, rcond=None)[0]
            jdot_nu = np.concatenate([kd.jacobian_dot(f, w_H_b, s, nu[:6], nu[6:]) @ nu
                                      for f in self.contacts])
            nu_dot[unknown] = np.linalg.lstsq(a, -jac @ nu_dot - jdot_nu, rcond=None)[0]
            self._last = (t, s[self.ik].copy(), nu[6:][self.ik].copy())
        else:
            w_H_b = np.eye(4)
            nu[6:], nu_dot[6:] = s_dot, s_ddot
        args = (w_H_b, s, nu[:6], nu[6:], nu_dot[:6], nu_dot[6:])
        base_wrench = kd.rnea(*args)[:6]
        poses = {f: kd.forward_kinematics(f, w_H_b, s) for f in self.contacts}
        com = kd.CoM_position(w_H_b, s)
        wrenches = self._split(base_wrench, w_H_b[:3, 3], poses, com)
        tau = kd.rnea(*args, external_wrenches=wrenches)[6:]
        return MotionSample(float(t), w_H_b, nu[:6].copy(), nu_dot[:6].copy(), s,
                            nu[6:].copy(), nu_dot[6:].copy(), tau, wrenches, poses, com)

    def _ik_guess(self, t):
        if self._last is None:
            return self._ik_start
        t_last, s_last, sd_last = self._last
        if abs(t - t_last) > 0.1 * self.period:
            return s_last
        return s_last + sd_last * (t - t_last)

    def _split(self, base_wrench, base_position, poses, com):
        """Contact wrenches (MIXED) whose base rows sum to ``base_wrench``: see the module doc."""
        force, moment = base_wrench[:3], base_wrench[3:]
        if self.mode == "fixed-base":
            return {self.contacts[0]: base_wrench.copy()}
        p_l, p_r = poses[self.left][:3, 3], poses[self.right][:3, 3]
        alpha = self.left_share(com, p_l, p_r)
        f_l, f_r = alpha * force, (1.0 - alpha) * force
        rest = moment - np.cross(p_l - base_position, f_l) - np.cross(p_r - base_position, f_r)
        return {self.left: np.concatenate([f_l, alpha * rest]),
                self.right: np.concatenate([f_r, (1.0 - alpha) * rest])}

    @staticmethod
    def left_share(com, p_left, p_right):
        """Share of the load on the left foot: where the CoM ground projection falls on the
        segment from the right sole (0) to the left sole (1), clipped to [0, 1]."""
        d = (p_left - p_right)[:2]
        return float(np.clip((com[:2] - p_right[:2]) @ d / (d @ d), 0.0, 1.0))

    def table(self, rate, duration=None):
        """Samples at ``rate`` [Hz] over ``duration`` (default one period), in time order."""
        count = int(round((self.period if duration is None else duration) * rate))
        return [self.sample(k / rate) for k in range(count)]


class _NotABiped(Exception):
    pass



def convex_hull(points):
    """Convex hull (m, 2) of 2D points (k, 2), counter-clockwise (Andrew's monotone chain)."""
    pts = sorted(set(map(tuple, np.asarray(points, dtype=float))))
    if len(pts) < 3:
        return np.array(pts)

    def half(seq):
        out = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])


NOMINAL_FOOT = (0.16, 0.07)   # length, width [m] of the outline drawn without a collision box


def foot_outline(kd, urdf_xml, sole):
    """Outline (m, 2) of a foot in its sole frame's xy plane [m], counter-clockwise.

    From the ``<box>`` collision of the sole link or of the first link above it (through
    fixed joints) that has one; without any, a nominal 16 x 7 cm rectangle centred on the
    sole origin.
    """
    root = ET.fromstring(urdf_xml)
    parent_of = {j.find("child").get("link"): (j.find("parent").get("link"), j.get("type"))
                 for j in root.iter("joint")
                 if j.find("child") is not None and j.find("parent") is not None}
    links = {link.get("name"): link for link in root.iter("link")}
    s = np.zeros(kd.NDoF)
    w_H_sole = kd.forward_kinematics(sole, np.eye(4), s)
    link = sole
    for _ in range(4):
        for collision in links[link].iter("collision") if link in links else ():
            box = collision.find("geometry/box")
            if box is None:
                continue
            size = np.array([float(v) for v in box.get("size").split()])
            origin = collision.find("origin")
            xyz = [0.0] * 3 if origin is None else [float(v) for v in
                                                    origin.get("xyz", "0 0 0").split()]
            rpy = [0.0] * 3 if origin is None else [float(v) for v in
                                                    origin.get("rpy", "0 0 0").split()]
            corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5)
                                for z in (-0.5, 0.5)]) * size
            corners = corners @ rpy_to_matrix(rpy).T + xyz
            sole_H_link = inverse_homogeneous(w_H_sole) @ kd.forward_kinematics(link, np.eye(4),
                                                                                 s)
            local = corners @ sole_H_link[:3, :3].T + sole_H_link[:3, 3]
            return convex_hull(local[:, :2])
        parent = parent_of.get(link)
        if parent is None or parent[1] != "fixed":
            break
        link = parent[0]
    length, width = NOMINAL_FOOT
    return np.array([[-length, -width], [length, -width], [length, width], [-length, width]]) / 2
