"""The demo's motion: a humanoid squatting and swaying on both feet, fixed flat on the ground.

Pure NumPy on top of :mod:`kin_dyn_ros.dynamics` (no ROS). A :class:`Motion` gives, at any time
t, a state (base pose, base velocity and acceleration, joint positions, velocities,
accelerations) that is kinematically exact for two feet that never move, and the contact
wrenches and joint torques that make it dynamically exact: the equations of motion

    M(q) nu_dot + h(q, nu) = [0; tau] + J_l^T w_l + J_r^T w_r

hold to round-off, so forward dynamics fed with (tau, w_l, w_r) gives back nu_dot.

Biped mode (the model has both foot links, ``feet``: default ``l_sole`` and ``r_sole``; the
demo finds them with :mod:`.feet`):

1. Every joint that is not on the right leg follows a smooth sinusoid of period
   ``period`` (harmonics 1 and 2 of it): the torso, head, arms, and the left leg, whose
   pitch joints squat (hip / knee / ankle pitch, pelvis level and sole flat) and whose
   roll joints sway (hip roll = -ankle roll). Joint names of iCub get a hand-made posture.
   Other models get the same squat from their kinematics (:meth:`Motion._leg_plan`): on the
   path from the root to the left foot at the reference posture (every joint at 0, or at
   its nearest limit), the joints whose axis is the base's y axis are the pitch joints
   (first = hip, last = ankle, the interior one with the widest range = knee) and those
   along x the roll joints (first = hip, last = ankle); the knee bends to the side of its
   limits with more room, by 0.4 to 1.0 rad (scaled down to fit the limits), and hip and
   ankle pitch each turn by minus half of it about the same axis, so that the pelvis stays
   level and the sole flat; the hip roll sways by +-0.06 rad and the ankle roll the
   opposite. Every other joint (torso, head, arms) follows a small sinusoid inside its
   limits.
2. The left sole is fixed at ``w_H_lsole`` (flat, its sole plane at z = 0: the foot link's
   origin is ``sole_heights[left]`` above the ground), so the base pose is
   ``w_H_b = w_H_lsole @ inv(b_H_lsole(s))
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

from dataclasses import dataclass

import numpy as np

from ..dynamics import KinDynComputations, Representations
from ..dynamics.representations import base_transform, base_transform_dot
from ..dynamics.spatial import inverse_homogeneous
from .feet import NOMINAL_FOOT, sole_geometry

__all__ = ["Motion", "MotionSample", "JointTrajectory", "wrench_in_frame", "body_twist",
           "base_acceleration_in", "rotation_log", "foot_outline", "NOMINAL_FOOT",
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
    feet : (str, str) or None
        Left and right foot links (frames) for the biped mode (None: fixed base).
    sole_heights : dict
        {foot: height [m] of its origin above its sole plane} (default 0: the foot frames
        are sole frames, on the ground).

    Attributes
    ----------
    mode : str
        ``"biped"`` or ``"fixed-base"``; ``reason`` says why fixed-base was chosen.
    contacts : list of str
        Frames that carry the contact wrenches (the feet, or the root link).
    """

    def __init__(self, kd, period=4.0, feet=(LEFT_FOOT, RIGHT_FOOT), sole_heights=None):
        if not isinstance(kd, KinDynComputations):
            raise ValueError(f"expected a KinDynComputations, got {type(kd).__name__}")
        self.kd = kd
        kd.set_frame_velocity_representation(Representations.MIXED_REPRESENTATION)
        self.period = float(period)
        self.n = kd.NDoF
        self.joints = kd.joints_name_list
        self.reason = ""
        self.sole_heights = {f: float((sole_heights or {}).get(f, 0.0)) for f in feet or ()}
        self.posture = None          # "iCub" (hand-made) or "kinematic" (_leg_plan)
        self.squat_joints, self.sway_joints, self.plan_notes = [], [], []
        self._last = None   # (t, s_ik) of the last IK solution, for warm starts
        try:
            if feet is None:
                raise _NotABiped("no feet")
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
        self.posture = "iCub" if known else "kinematic"
        if known:
            offsets = [ICUB_POSTURE[self.joints[k]][0] for k in self.free]
            terms = [(i, a, h, p) for i, k in enumerate(self.free)
                     for a, h, p in ICUB_POSTURE[self.joints[k]][1]]
            guess = np.array([ICUB_POSTURE[self.joints[k]][0] for k in self.ik])
            self.squat_joints = ["l_hip_pitch", "l_knee", "l_ankle_pitch"]
            self.sway_joints = ["l_hip_roll", "l_ankle_roll"]
        else:
            offsets, terms, guess = self._leg_plan(left, right)
        self.trajectory = JointTrajectory(offsets, terms, self.period)
        # Fixed feet: the left sole's axes are the world's; the world origin lies between the
        # feet on the ground; the right sole is flat on the ground where the initial guess
        # put it (each foot origin at its sole height above the ground).
        s = np.zeros(self.n)
        s[self.free] = self.trajectory(0.0)[0]
        s[self.ik] = guess
        b_H_l = kd.forward_kinematics(left, np.eye(4), s)
        l_H_r = _flat(inverse_homogeneous(b_H_l) @ kd.forward_kinematics(right, np.eye(4), s))
        self.w_H_left = np.eye(4)
        self.w_H_left[:2, 3] = -0.5 * l_H_r[:2, 3]
        self.w_H_right = self.w_H_left @ l_H_r
        self.w_H_left[2, 3] = self.sole_heights[left]
        self.w_H_right[2, 3] = self.sole_heights[right]
        self._ik_start = self._solve_ik(s, guess)[self.ik]
        s[self.ik] = self._ik_start
        w_H_b = self.w_H_left @ inverse_homogeneous(kd.forward_kinematics(left, np.eye(4), s))
        com = kd.CoM_position(w_H_b, s)
        if com[2] <= 0.0:
            raise _NotABiped(f"with the z axes of {left} and {right} up, the CoM is "
                             f"{-com[2]:.2f} m under the ground: the foot frames' z axes must "
                             "point up into the legs (as sole frames do)")
        # the IK must track a whole period; its solutions there start far jumps in time
        self._knots = [self._ik_start]
        guess = self._ik_start
        for t in np.linspace(0.0, self.period, 41)[1:-1]:
            guess = self._solve_ik(self._joint_guess(t), guess)[self.ik]
            self._knots.append(guess)

    # -- the squat of a model without a hand-made posture ---------------------------------
    SQUAT_KNEE = (0.70, 0.30)    # knee flexion: offset, amplitude [rad] (0.4 to 1.0 rad)
    SWAY = 0.06                  # hip roll amplitude [rad] (ankle roll: the opposite)
    LIMIT_MARGIN = 0.02          # [rad] kept from every limit

    def _chain(self, frame):
        """User indices of the joints from the root to ``frame``, root first."""
        model = self.kd.model
        return list(model.path_coordinates[model.frame_body[model.frame_index[frame]]])

    def _limits(self, k):
        limits = self.kd.model.limits.get(self.joints[k])
        if limits is None or not limits[0] < limits[1]:
            return -np.inf, np.inf
        return float(limits[0]), float(limits[1])

    def _reference(self):
        """The reference posture: every joint at 0, or at its nearest limit."""
        return np.array([np.clip(0.0, *self._limits(k)) for k in range(self.n)])

    def _leg_axes(self, frame, chain, s):
        """{'pitch': [(k, sign)], 'roll': [(k, sign)]} of the revolute joints of ``chain``
        whose axis (base axes, at ``s``) is the base's y (pitch) or x (roll) axis."""
        jac = self.kd.relative_jacobian(frame, s)
        out = {"pitch": [], "roll": []}
        for k in chain:
            axis = jac[3:, k]
            if np.linalg.norm(axis) < 0.5:
                continue
            for name, i in (("pitch", 1), ("roll", 0)):
                if abs(axis[i]) > 0.9:
                    out[name].append((k, float(np.sign(axis[i]))))
        return out

    def _fits(self, k, offset, amplitude):
        lower, upper = self._limits(k)
        return (lower + self.LIMIT_MARGIN <= offset - abs(amplitude)
                and offset + abs(amplitude) <= upper - self.LIMIT_MARGIN)

    def _leg_plan(self, left, right):
        """(offsets, terms, right-leg guess) of the free joints: the squat and sway of the
        left leg (module docstring), small sinusoids for the rest."""
        kd = self.kd
        free = [int(k) for k in self.free]
        where = {k: i for i, k in enumerate(free)}
        reference = self._reference()
        left_chain = self._chain(left)
        right_chain = [k for k in self._chain(right) if k in set(self.ik.tolist())]
        axes = self._leg_axes(left, left_chain, reference)
        rest = [k for k in free if k not in left_chain]
        offsets, terms = _generic_trajectory(kd, [self.joints[k] for k in rest])
        plan_offsets = {k: reference[k] for k in left_chain}
        plan_offsets.update({k: o for k, o in zip(rest, offsets)})
        plan_terms = [(rest[i], a, h, p) for i, a, h, p in terms]
        phi0 = []   # pitch angles of the left leg at t = 0, hip to ankle
        pitch, roll = axes["pitch"], axes["roll"]
        notes = []
        if len(pitch) >= 3:
            (hip, s_hip), (ankle, s_ankle) = pitch[0], pitch[-1]
            knee, s_knee = max(pitch[1:-1], key=lambda p: self._limits(p[0])[1]
                               - self._limits(p[0])[0])
            lower, upper = self._limits(knee)
            bend = s_knee * (1.0 if upper >= -lower else -1.0)   # sign of phi_knee
            offset, amplitude = self.SQUAT_KNEE
            for scale in (1.0, 0.75, 0.5, 0.25):
                phi = {knee: (bend * offset * scale, bend * amplitude * scale),
                       hip: (-bend * offset * scale / 2, -bend * amplitude * scale / 2),
                       ankle: (-bend * offset * scale / 2, -bend * amplitude * scale / 2)}
                signs = {hip: s_hip, knee: s_knee, ankle: s_ankle}
                q = {k: (o / signs[k], a / signs[k]) for k, (o, a) in phi.items()}
                if all(self._fits(k, o, a) for k, (o, a) in q.items()):
                    break
            else:
                q = {}
                notes.append("the leg's limits leave no room for a squat")
            for k, (o, a) in q.items():
                plan_offsets[k] = o
                plan_terms.append((k, a, 2, _DOWN))
            phi0 = [(phi[k][0] - phi[k][1]) if k in q else 0.0 for k, _ in pitch]
            self.squat_joints = [self.joints[k] for k in (hip, knee, ankle)] if q else []
        else:
            notes.append(f"{len(pitch)} pitch joints on the leg to {left} (3 are needed "
                         "to squat)")
            self.squat_joints = []
        self.sway_joints = []
        if len(roll) >= 2:
            (hip_r, s_hr), (ankle_r, s_ar) = roll[0], roll[-1]
            for amp in (self.SWAY, self.SWAY / 2):
                q = {hip_r: amp / s_hr, ankle_r: -amp / s_ar}
                if all(self._fits(k, plan_offsets[k], a) for k, a in q.items()):
                    for k, a in q.items():
                        plan_terms.append((k, a, 1, 0.0))
                    self.sway_joints = [self.joints[hip_r], self.joints[ankle_r]]
                    break
        self.plan_notes = notes
        # the right leg's initial guess: the left leg's pitch angles, joint for joint
        right_pitch = self._leg_axes(right, right_chain, reference)["pitch"]
        guess = reference[self.ik].copy()
        if len(right_pitch) == len(phi0):
            ik_index = {k: i for i, k in enumerate(self.ik.tolist())}
            for (k, sign), phi in zip(right_pitch, phi0):
                guess[ik_index[k]] = phi / sign
        out_offsets = [plan_offsets[k] for k in free]
        out_terms = [(where[k], a, h, p) for k, a, h, p in plan_terms]
        return out_offsets, out_terms, guess

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

        In biped mode the IK is warm-started from the previous call when it is close in time
        (sampling in time order is fastest), else from the set-up's solution at the nearest
        of 40 times of the period: any order converges to the same branch.
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
        """The last solution moved along its velocity, or, far from it, the set-up's solution
        at the nearest of 40 times of the period."""
        if self._last is not None and abs(t - self._last[0]) <= 0.05 * self.period:
            t_last, s_last, sd_last = self._last
            return s_last + sd_last * (t - t_last)
        knot = int(round((t % self.period) / self.period * len(self._knots))) % len(self._knots)
        return self._knots[knot]

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



def foot_outline(kd, urdf_xml, sole):
    """Outline (m, 2) of a foot in its frame's xy plane [m], counter-clockwise: the
    :func:`.feet.sole_geometry` of the link (the bottom of its body's collision geometry, or
    a nominal 16 x 7 cm rectangle, ``NOMINAL_FOOT``, centred on its origin)."""
    return sole_geometry(kd, urdf_xml, sole).outline
