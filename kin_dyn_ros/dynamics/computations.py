"""``KinDynComputations``: the public facade, with adam's API and iDynTree's conventions.

State arguments, for a model with n joint coordinates:

- ``w_H_b`` (4, 4): pose of the base (root link) frame B in the world frame A.
- ``s``, ``s_dot``, ``s_ddot``, ``tau`` (n,): joint positions [rad or m], velocities,
  accelerations and torques [N m or N], ordered as ``joints_name_list``.
- ``base_vel``, ``base_acc`` (6,): base velocity [m/s; rad/s] and its time derivative, in the
  active representation (see :mod:`.representations`), [linear; angular].
- Generalized vectors are (6+n,) ``[base linear, base angular, joints]``; matrices have the same
  column order. Base generalized forces are in the dual of the active representation.
- ``external_wrenches``: ``{frame: w}`` with ``w`` (6,) = [force [N]; torque [N m]]. The wrench on
  frame F contributes ``J_F^T w`` with ``J_F`` in the active representation: in MIXED it is
  applied at F's origin with world axes; in BODY_FIXED at F's origin with F's axes; in
  INERTIAL_FIXED at the world origin with world axes (adam's and iDynTree's definition).

Equations of motion: ``M(q) nu_dot + h(q, nu) = [0; tau] + sum_F J_F^T w_F`` with
``h = C(q, nu) nu + g(q)``.
"""

import copy
import functools
import math
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from . import algorithms as alg
from . import horizon
from .balance import balance, packed_balance
from .checks import checked_array, checked_arrays
from .compiled import (EMPTY, NO_FRAMES, NO_TARGETS, NO_WRENCHES, BalanceContacts,
                       CompiledModel, NonFiniteWrench, SingularMassMatrix, contacts_ready,
                       ensure_compiled, jit_path, jit_status)
from .contacts import ground_axes
from .kinematics import (chain_poses, chain_product, forward_pass, joint_quaternions,
                         path_columns, transform_wrench)
from .model import MimicJoints, build_model
from .representations import (Representations, base_drift, base_transform, base_transform_dot,
                              base_transform_inverse, frame_drift, frame_transform,
                              parse_representation, rep_frame_pose)
from .spatial import motion_cross, motion_cross_matrix, skew, velocity_transform

__all__ = ["KinDynComputations", "TickResult", "PreparedTick"]

_ORIGIN = np.zeros(3)
_ORIGIN.flags.writeable = False
_EYE4 = np.eye(4)       # the base as the world, to the kernels (writable: their type; never written)


# frame_wrenches of none: one object, so that KinDynComputations._held_balance keeps its
# arguments from call to call (a new {} each time made them again); never written
_NO_FRAME_WRENCHES = MappingProxyType({})


class _HeldBalance(NamedTuple):
    """What :meth:`KinDynComputations._held_balance` keeps: the objects its arguments were
    made of (compared by identity), the contacts' arrays and the arguments."""

    values: object
    contacts: object
    frame_wrenches: object
    targets: object
    inputs: tuple          # _balance_inputs'
    arguments: tuple       # _balance_arguments'


def packed_offsets(n):
    """{field: its first index} in :attr:`TickResult.packed` of a model of ``n`` joints
    (and "end": its length, 22 n + 19)."""
    return {"joint_transforms": 0, "joint_quaternions": 16 * n, "com": 20 * n,
            "com_velocity": 20 * n + 3, "centroidal_momentum": 20 * n + 6,
            "gravity_torques": 20 * n + 12, "base_acceleration": 21 * n + 12,
            "joint_accelerations": 21 * n + 18, "massless": 22 * n + 18, "end": 22 * n + 19}


@dataclass(eq=False)
class TickResult:
    """Everything the node publishes for one state (see :meth:`KinDynComputations.compute_tick`);
    read-only by convention (not frozen: a frozen dataclass's construction costs ~4 us a tick).

    - ``joint_transforms`` (n, 4, 4): parent_link_H_child_link of each joint of
      ``joint_names`` (= ``joints_name_list``), what /tf carries; ``base_pose`` (4, 4) w_H_b.
    - ``joint_quaternions`` (n, 4): the rotations of ``joint_transforms`` as unit quaternions
      (x, y, z, w), w >= 0, from the joint angles (computed on first access).
    - ``world_H_frames`` (F, 4, 4): world pose of every link, ordered as ``frame_names``
      (computed on first access); ``world_H_frame(k)`` (4, 4) the pose of link
      ``frame_names[k]`` alone.
    - ``com`` (3,) and ``com_velocity`` (3,): world frame [m, m/s].
    - ``centroidal_momentum`` (6,): [m v_com; angular momentum about the CoM], world axes.
    - ``gravity_torques`` (n,): joint part of ``gravity_term`` [N m or N].
    - ``base_acceleration`` (6,) in ``representation`` and ``joint_accelerations`` (n,) from
      forward dynamics, or None when no torques were given or when forward dynamics is
      undefined at this state; ``forward_dynamics_error`` then says why (else "").
      ``massless_joints``: the joints with no inertia moving with them, whose
      accelerations are NaN (undefined; the others' do not depend on them).
    - ``balance``: the :class:`.balance.Balance` (CoP of each contact, ZMP, DCM, capture
      point) of the contacts given to ``compute_tick`` (computed on first access), or None;
      ``balance_vector`` the same in one vector, where the compiled kernel computed it.
    """

    frame_names: tuple
    joint_names: tuple
    joint_transforms: np.ndarray
    base_pose: np.ndarray
    com: np.ndarray
    com_velocity: np.ndarray
    centroidal_momentum: np.ndarray
    gravity_torques: np.ndarray
    base_acceleration: np.ndarray
    joint_accelerations: np.ndarray
    representation: Representations
    forward_dynamics_error: str = ""
    massless_joints: tuple = ()
    _frame_poses: object = field(repr=False, default=None)
    _frame_pose: object = field(repr=False, default=None)
    _balance: object = field(repr=False, default=None)
    _joint_quaternions: object = field(repr=False, default=None)
    _packed: object = field(repr=False, default=None)
    _balance_vector: object = field(repr=False, default=None)

    @cached_property
    def packed(self):
        """(22 n + 19,) float64, the result in one vector (as the compiled tick writes it):
        ``joint_transforms`` (16 n, row-major), ``joint_quaternions`` (4 n), ``com``,
        ``com_velocity``, ``centroidal_momentum``, ``gravity_torques`` (n),
        ``base_acceleration`` (6) and ``joint_accelerations`` (n) (NaN without forward
        dynamics), the number of massless joints."""
        if self._packed is not None:
            return self._packed            # (the compiled tick's; laid out as packed_offsets)
        n = len(self.joint_names)
        fd = [np.full(6 + n, np.nan)] if self.base_acceleration is None \
            else [self.base_acceleration, self.joint_accelerations]
        return np.concatenate([self.joint_transforms.reshape(-1),
                               self.joint_quaternions.reshape(-1), self.com,
                               self.com_velocity, self.centroidal_momentum,
                               self.gravity_torques, *fd, [len(self.massless_joints)]])

    @cached_property
    def joint_quaternions(self):
        return self._joint_quaternions()

    @cached_property
    def world_H_frames(self):
        return self._frame_poses()

    @cached_property
    def balance_vector(self):
        """(contact names, ``out``, its offsets, threshold [N]): ``balance`` as the compiled
        kernel writes it (``out`` as :func:`.kernels.balance_layout` lays it out), for
        :func:`.balance.packed_balance`; None on the NumPy core, without contacts, or where
        an active contact is not a flat sole (computed on first access)."""
        return None if self._balance_vector is None else self._balance_vector()

    @cached_property
    def balance(self):
        vector = self.balance_vector
        if vector is not None:
            return packed_balance(*vector)
        return None if self._balance is None else self._balance()

    def world_H_frame(self, index):
        """World pose (4, 4) of link ``frame_names[index]``, without computing the others'."""
        if "world_H_frames" in self.__dict__:
            return self.world_H_frames[index]
        return self._frame_pose(index)

    def contact_points(self):
        """(out, layout): where the contacts given to ``compute_tick`` push, their balance
        points and the support of the active ones, in one vector as the compiled kernel
        writes it (:func:`.kernels.contact_points`, laid out as ``layout``): per contact its
        link's origin and its force in the world frame [m, N] (zeros without a wrench) and
        whether it has a wrench; ``balance``'s CoPs, ZMP and capture point [m] (zeros where
        undefined), whether each is defined and its margin [m] to the support polygon of the
        active contacts (NaN where undefined or without one); that support as
        :func:`.contacts.hull_support` gives it: its outline closed (its number of points
        first), the CoM's margin and ground projection. None where the kernel does not give
        it: on the NumPy core, without contacts, when an active contact is not a flat sole
        or a margin is NaN (``balance`` and ``hull_support`` then do). Computed once per
        result (the markers and the contact mechanics read the same vector: never write
        into it)."""
        return None


class _PackedTickResult(TickResult):
    """The compiled tick's :class:`TickResult`: its arrays are views into ``packed`` (the
    kernel's one vector, laid out as :func:`packed_offsets`); those the node's tick does not
    read are made when first read (it renders its outputs from ``packed``). Made by
    :meth:`KinDynComputations.packed_tick_result` without :class:`TickResult`'s ``__init__``;
    the same fields, the same values."""

    def _view(self, first, end):
        at = self._at
        return self._packed[at[first]:at[end]]

    @cached_property
    def joint_transforms(self):
        return self._view("joint_transforms", "joint_quaternions").reshape(-1, 4, 4)

    @cached_property
    def centroidal_momentum(self):
        return self._view("centroidal_momentum", "gravity_torques")

    @cached_property
    def gravity_torques(self):
        return self._view("gravity_torques", "base_acceleration")

    @cached_property
    def joint_accelerations(self):
        return self._view("joint_accelerations", "massless") if self._fd else None

    @cached_property
    def com(self):
        return self._view("com", "com_velocity")

    @cached_property
    def com_velocity(self):
        return self._view("com_velocity", "centroidal_momentum")

    @cached_property
    def joint_quaternions(self):
        return self._view("joint_quaternions", "com").reshape(-1, 4)

    @cached_property
    def _base_position(self):
        return self.base_pose[:3, 3]

    @cached_property
    def world_H_frames(self):
        return self._kd._jit.frame_poses(self._poses, self._base_position)

    def world_H_frame(self, index):
        """World pose (4, 4) of link ``frame_names[index]``, without computing the others'
        (one kernel call: in the running node ~20 us less than NumPy's products)."""
        if "world_H_frames" in self.__dict__:
            return self.world_H_frames[index]
        if not contacts_ready():        # (its kernel still loading: NumPy's products)
            return self._kd._world_frame(self._poses, self._base_position, index)
        return self._kd._jit.world_frame_pose(self._poses, self.base_pose, index)

    @cached_property
    def balance_vector(self):
        if not self._contacts:
            return None
        return self._kd._balance_vector(self._poses, self._base_position, self.com,
                                        self.com_velocity, self._contacts,
                                        self._wrenches or _NO_FRAME_WRENCHES, self._values,
                                        self._threshold, self._targets)

    def contact_points(self):
        return self._points

    @cached_property
    def _points(self):          # (read by the markers and the contact mechanics alike)
        if not self._contacts:
            return None
        got = self._kd._contact_points(self._poses, self._base_position, self.com,
                                       self.com_velocity, self._contacts,
                                       self._wrenches or _NO_FRAME_WRENCHES, self._values,
                                       self._threshold, self._targets)
        if got is None:
            return None
        self.__dict__.setdefault("balance_vector", got[2])      # (the same kernel's)
        return got[:2]

    @cached_property
    def balance(self):
        vector = self.balance_vector
        if vector is not None:
            return packed_balance(*vector)
        if not self._contacts:
            return None
        frame = functools.partial(self._kd._world_frame, self._poses, self._base_position)
        return self._kd._balance(frame, self.com, self.com_velocity, self._contacts,
                                 self._wrenches or _NO_FRAME_WRENCHES, self._threshold)


class PreparedTick:
    """:meth:`KinDynComputations.compute_tick` with fixed sensor wrenches, in one kernel
    call (:meth:`KinDynComputations.prepared_tick`; the compiled path): for a caller that
    computes many ticks with the same wrenches (the node between two wrench messages).
    ``frame_wrenches`` as compute_tick's, ``values`` (6 k,) them as the kernel takes them."""

    __slots__ = ("kd", "frame_wrenches", "values", "_kernel", "_mf", "_mi", "_targets",
                 "_size", "_bodies", "_ok")

    def __init__(self, kd, frame_wrenches, targets, values):
        jit = kd._jit
        self.kd, self.frame_wrenches, self.values = kd, frame_wrenches, values
        self._kernel, self._mf, self._mi, self._targets = jit.k.tick, jit.mf, jit.mi, targets
        self._size, self._bodies, self._ok = 22 * jit.n + 19, jit.n + 1, jit.k.OK

    def run(self, w_H_b, s, nu, s_dot, tau=None):
        """(out, poses) of :func:`.kernels.tick` at this state (``nu`` in the model's
        representation; ``tau`` None: no forward dynamics), laid out as
        :attr:`TickResult.packed` and C_H_body (N, 4, 4); None when the kernel did not
        return OK (a wrong type, shape or a NaN; a singular base block):
        :meth:`KinDynComputations.compute_tick` then says what. :meth:`result` makes the
        :class:`TickResult`."""
        out, poses = np.empty(self._size), np.empty((self._bodies, 4, 4))
        try:
            status = self._kernel(self._mf, self._mi, self.kd._rep_code, w_H_b, s, nu, s_dot,
                                  EMPTY if tau is None else tau, self._targets, self.values,
                                  out, poses)
        except TypeError:          # (not float64, C-contiguous and writable)
            return None
        return (out, poses) if status == self._ok else None

    def arguments(self):
        """(kernels, (mf, mi, representation code), (targets, values), out's length, poses'
        shape) of :meth:`run`'s kernel call, for a caller that runs it inside a kernel of its
        own (:func:`.kernels.steady_tick`; ``kernels`` the compiled module)."""
        return self.kd._jit.k, (self._mf, self._mi, self.kd._rep_code), \
            (self._targets, self.values), self._size, (self._bodies, 4, 4)

    def renewed(self, frame_wrenches):
        """A PreparedTick of new values of the same wrenches: ``frame_wrenches`` must name
        the same links and frames as :attr:`frame_wrenches`, in the same order (not
        checked: the caller matched them); its index arrays are this one's. None for a
        value that is not (6,) (a wrench that is not finite: :meth:`run` declines)."""
        if not frame_wrenches:
            return self
        try:
            values = np.array([w for _, w in frame_wrenches.values()], dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if values.shape != (len(frame_wrenches), 6):
            return None
        return PreparedTick(self.kd, frame_wrenches, self._targets, values.reshape(-1))

    def balance_vector(self, w_H_b, out, poses, contacts, threshold):
        """``TickResult.balance_vector`` of :meth:`run`'s ``out`` and ``poses`` at ``w_H_b``
        for ``contacts`` under ``threshold`` (as :meth:`result`'s gives it), without making
        the TickResult."""
        if not contacts:
            return None
        at = self.kd._packed
        com = at["com"]
        return self.kd._balance_vector(poses, w_H_b[:3, 3], out[com:com + 3],
                                       out[com + 3:com + 6], contacts,
                                       self.frame_wrenches or _NO_FRAME_WRENCHES, self.values,
                                       threshold, self._targets)

    def balance_arguments(self, contacts, threshold):
        """(contact names, layout, arguments) of the balance of :meth:`run`'s tick for
        ``contacts`` under ``threshold`` [N], for a caller that computes it inside a kernel
        of its own (:func:`.kernels.steady_tick`'s ``balancing``): the layout of its output
        (:func:`.kernels.balance_layout`) and the arguments of :func:`.kernels.balance`
        from ``links`` to ``min_cosine``, but each contact's wrench and measured flag: the
        row of its wrench in this PreparedTick's values (k,), -1 without one (the same
        objects for new values of the same wrenches). None without contacts.
        :meth:`balance_vector` gives the same numbers."""
        if not contacts:
            return None
        spec, expressed, rows, _ = self.kd._balance_inputs(
            contacts, self.frame_wrenches or _NO_FRAME_WRENCHES)
        return spec.names, spec.layout, (
            spec.links, expressed, rows, spec.centres, spec.normals, spec.soles, spec.points,
            spec.first_point, float(threshold), float(spec.tol), float(spec.min_cosine))

    def result(self, w_H_b, out, poses, fd, contacts=None, threshold=0.0):
        """The :class:`TickResult` of :meth:`run`'s ``out`` and ``poses`` at ``w_H_b`` (``fd``:
        torques were given), as compute_tick gives it with ``contacts`` and ``threshold``."""
        return self.kd.packed_tick_result(self._ok, w_H_b, out, poses, fd, self.frame_wrenches,
                                          self.values, contacts, threshold, self._targets)


def _checked_wrench(link, w, what="wrench"):
    """The wrench ``w`` on ``link`` as a finite (6,) float array; ValueError naming it
    (``what`` on '``link``')."""
    w = np.asarray(w, dtype=float)
    if w.shape != (6,) or not math.isfinite(w.sum()):
        w = checked_array(f"{what} on '{link}'", w, (6,))    # raises, naming what is wrong
    return w


def _checked_external(wrenches):
    """The external wrenches {frame: w (6,)} as a finite (k, 6) float array; ValueError
    naming the first wrong one."""
    return np.array([_checked_wrench(frame, w, "external wrench")
                     for frame, w in wrenches.items()])


class KinDynComputations:
    """Kinematics and dynamics of a floating-base tree from a URDF (NumPy, no ROS).

    Parameters
    ----------
    urdf : str or os.PathLike
        URDF file path or XML text.
    joints_name_list : sequence of str, optional
        Order of the joint coordinates. Default: every movable joint, depth-first from the
        root, children in URDF file order. Movable joints left out are held at zero.
    root_link : str, optional
        The floating base. Default: the URDF root, even when it is massless (as adam and
        Pinocchio; iDynTree instead moves a massless root's base to the first massive link).
    gravity : array_like, shape (3,) or (6,)
        Gravity acceleration in the world frame [m/s^2]; adam's 6-vector [g; 0] is accepted.
    compiled : bool, optional
        Run the compiled kernels (numba) or the NumPy code; default: what the process runs
        (:func:`.compiled.jit_path`: compiled unless ``KIN_DYN_JIT=0`` or numba is
        missing). True where numba is unavailable raises RuntimeError with the reason.
        Both give the same numbers (tested to 1e-12); the NumPy code is the reference.
    """

    def __init__(self, urdf, joints_name_list=None, root_link=None,
                 gravity=np.array([0.0, 0.0, -9.80665]), compiled=None):
        self.model = build_model(urdf, joints_name_list, root_link)
        g = np.asarray(gravity, dtype=float).reshape(-1)
        if g.shape not in ((3,), (6,)) or not np.isfinite(g).all():
            raise ValueError(f"expected gravity with shape (3,) or (6,), got {g.shape}")
        self.gravity = g[:3].copy()
        self._g6 = np.concatenate([self.gravity, np.zeros(3)])
        self._minus_g6 = -self._g6
        self.rep = Representations.MIXED_REPRESENTATION
        n = self.model.n
        self._cols = np.concatenate([np.arange(6), 6 + self.model.internal])
        self._zero_n, self._zero_6 = np.zeros(n), np.zeros(6)   # (read, never written)
        self._total_mass = self.model.total_mass
        self._mimic = MimicJoints(self.model.joints_name_list, self.model.mimic)
        self._keep_kin, self._last_kin = False, None     # see sharing_model
        self._targets = {}          # compute_tick's wrench index arrays (_sensor_wrenches)
        self._wrench_frames = {}    # the calls' wrench frame indices (_rep_wrenches)
        self._packed = packed_offsets(self.model.n)      # compute_tick's out vector
        self._balance_specs = {}    # _balance_inputs'
        self._balance_held = None   # a _HeldBalance: the arguments of the last wrenches
        self._ground = None         # _contact_points' ground axes and up (False: none)
        kernels = jit_path() if compiled is not False else None   # None: the NumPy code
        if compiled and kernels is None:
            raise RuntimeError(f"compiled kernels unavailable: {jit_status().reason}")
        self._jit = None if kernels is None else CompiledModel(kernels, self.model,
                                                               self.gravity)
        if self._jit is not None and not ensure_compiled(self._jit):
            if compiled:
                raise RuntimeError(f"compiled kernels unavailable: {jit_status().reason}")
            self._jit = None

    # -- model information --------------------------------------------------------------
    @property
    def joints_name_list(self):
        return list(self.model.joints_name_list)

    @property
    def compiled(self):
        """True when this instance runs the compiled kernels (see the ``compiled`` argument)."""
        return self._jit is not None

    @property
    def NDoF(self):  # noqa: N802 (adam's name)
        return self.model.n

    @property
    def frame_names(self):
        return self.model.frame_names

    @property
    def mimic_joints(self):
        """{mimic joint: (master joint, multiplier, offset)} for mimics whose master is a
        coordinate; a mimic of a mimic is given with the first master that is no mimic."""
        return dict(self.model.mimic)

    @property
    def model_notes(self):
        """What the URDF has that the model does not follow, one sentence each (e.g. a
        mimic of a joint that does not move: an ordinary joint here)."""
        return self.model.notes

    @property
    def joint_frames(self):
        """[(joint, parent link, child link)] for ``joints_name_list``: the /tf edges."""
        frames = self.model.joint_frames
        return [(name, *frames[k]) for name, k in zip(self.model.joints_name_list,
                                                      self.model.internal)]

    @property
    def static_transforms(self):
        """[(joint, parent link, child link, parent_H_child (4, 4))] of every other URDF joint
        (fixed joints, and movable ones left out of ``joints_name_list``): the /tf_static edges."""
        return [(name, p, c, h.copy()) for name, p, c, h in self.model.static_edges]

    def get_total_mass(self):
        return self.model.total_mass

    def sharing_model(self, keep_kinematics=False):
        """Another KinDynComputations on this one's model (read-only, shared: no second URDF
        parse), with a velocity representation of its own (initially this one's).

        ``keep_kinematics``: it keeps the forward pass of the last state it was asked about
        (keyed by the values, not the arrays, which a caller may change in place), so that
        several queries at one state (mass matrix, bias and gravity forces, momentum matrix,
        CoM, ...) share it (~45 us of each on iCub): for a planner's request
        (:mod:`.queries`), not for timing the calls one by one."""
        other = copy.copy(self)
        other._keep_kin, other._last_kin = bool(keep_kinematics), None
        return other

    def set_frame_velocity_representation(self, representation):
        """Set the active representation (a :class:`Representations` or its name)."""
        self.rep = parse_representation(representation)

    def apply_mimic(self, s):
        """Copy of joint positions ``s`` (n,) with mimic joints set to multiplier * master + offset."""
        return self._mimic.positions(checked_array("s", s, (self.model.n,)))

    def fill_mimic(self, s, s_dot):
        """Copies of joint positions ``s`` (n,) and velocities ``s_dot`` (n,) (or both (K, n):
        K states) with the mimic joints following their masters: ``m q + o`` and ``m dq``
        (:class:`.model.MimicJoints`)."""
        shape = (len(s), self.model.n) if np.ndim(s) == 2 else (self.model.n,)
        s, s_dot = checked_arrays(("s", s, shape), ("s_dot", s_dot, shape))
        return self._mimic.positions(s), self._mimic.velocities(s_dot)

    # -- internal helpers ---------------------------------------------------------------
    def _frame(self, frame):
        try:
            return self.model.frame_index[frame]
        except KeyError:
            raise ValueError(f"unknown frame '{frame}': not a link of the model") from None

    @property
    def rep(self):
        """The active representation (:class:`Representations`)."""
        return self._rep

    @rep.setter
    def rep(self, representation):
        self._rep = representation
        self._rep_code = int(representation)      # the kernels' (int(rep) costs ~60 ns)

    def _kin(self, w_H_b, s):
        """(w_H_b, internal q, the :class:`.kinematics.Kinematics` of that state), the last
        state's kept when ``keep_kinematics`` (:meth:`sharing_model`); consumers only read
        it."""
        w_H_b = checked_array("w_H_b", w_H_b, (4, 4))
        q = checked_array("s", s, (self.model.n,))[self.model.coordinate]
        if not self._keep_kin:
            return w_H_b, q, forward_pass(self.model, w_H_b, q)
        key = (w_H_b.tobytes(), q.tobytes())
        last = self._last_kin
        if last is not None and last[0] == key:
            return w_H_b, q, last[1]
        kin = forward_pass(self.model, w_H_b, q)
        self._last_kin = (key, kin)
        return w_H_b, q, kin

    def _internal(self, name, value):
        return checked_array(name, value, (self.model.n,))[self.model.coordinate]

    def _user_vector(self, vec_c, t):
        """Generalized force in C (internal order) -> active representation, user order."""
        out = vec_c[self._cols]
        out[:6] = t.T @ out[:6]
        return out

    def _c_pose(self, kin, idx):
        return kin.poses[self.model.frame_body[idx]].dot(self.model.body_H_frame[idx])

    def _body_wrenches(self, kin, wrenches):
        """{frame: w (rep)} -> (N, 6) wrenches per body in C."""
        out = np.zeros((len(self.model.parent), 6))
        for frame, w in (wrenches or {}).items():
            idx = self._frame(frame)
            w = _checked_wrench(frame, w, "external wrench")
            x = frame_transform(self.rep, self._c_pose(kin, idx), kin.base_position)
            out[self.model.frame_body[idx]] += x.T @ w
        return out

    # -- a batch of states ----------------------------------------------------------------
    def dynamics_horizon(self, w_H_b, s, base_vel=None, s_dot=None, frames=(),
                         quantities=horizon.QUANTITIES):
        """``quantities`` (names of :data:`.horizon.QUANTITIES`) at K states in one call:
        {name: (K, ...) array}, shapes as :func:`.horizon.shapes`, each state's values
        those of the single-state methods. ``w_H_b`` (K, 4, 4), ``s``, ``s_dot`` (K, n),
        ``base_vel`` (K, 6) in the active representation (velocities None: zero), ``frames``
        links of the model for the frame quantities. ValueError naming an unknown quantity
        or frame, a wrong shape (expected against actual) or the first state with a NaN
        or inf. The compiled path computes the batch in one kernel call (:mod:`.horizon`)."""
        want = horizon.mask(quantities)
        idx = [self._frame(f) for f in frames]
        w_H_b, s, base_vel, s_dot = horizon.checked_batch(self.model.n, w_H_b, s, base_vel,
                                                          s_dot, finite=self._jit is None)
        if self._jit is None:
            return horizon.per_state(self, quantities, list(frames), w_H_b, s, base_vel, s_dot)
        rows, lay, bad = self._jit.horizon(self.rep, want, idx, w_H_b, s, base_vel, s_dot)
        if bad >= 0:
            horizon.non_finite((("w_H_b", w_H_b), ("s", s), ("base_vel", base_vel),
                                ("s_dot", s_dot)), bad)
        sizes = horizon.shapes(len(w_H_b), self.model.n, len(idx))
        return {q: rows[:, lay[i]:lay[i + 1]].reshape(sizes[q])
                for i, q in enumerate(horizon.QUANTITIES) if want & (1 << i)}

    def _batched(self, quantity, w_H_b, s, base_vel=None, s_dot=None, frame=None):
        """:meth:`dynamics_horizon`'s ``quantity`` (K, ...) (of ``frame`` alone: the frame
        axis dropped), or None when ``w_H_b`` is one state's (4, 4)."""
        if type(w_H_b) is np.ndarray and w_H_b.ndim == 2 or np.ndim(w_H_b) != 3:
            return None
        frames = () if frame is None else (frame,)
        out = self.dynamics_horizon(w_H_b, s, base_vel, s_dot, frames, (quantity,))[quantity]
        return out if frame is None else out[:, 0]

    # -- kinematics ---------------------------------------------------------------------
    def forward_kinematics(self, frame, w_H_b, s):
        """World pose of ``frame`` (4, 4), any link of the URDF; (K, 4, 4) for K states
        (``w_H_b`` (K, 4, 4), ``s`` (K, n), as every per-state method: :mod:`.horizon`)."""
        if self._jit is not None and (pose := self._jit.frame_at(
                self._rep_code, "pose", frame, w_H_b, s)) is not None:
            return pose
        if (batch := self._batched("frame_poses", w_H_b, s, frame=frame)) is not None:
            return batch
        idx = self._frame(frame)
        if self._jit is not None:
            return self._jit.frame(self.rep, "pose", idx, w_H_b, s)
        w_H_b = checked_array("w_H_b", w_H_b, (4, 4))
        s = checked_array("s", s, (self.model.n,))
        pose = chain_product(self.model, w_H_b[:3, :3], s, self.model.frame_body[idx])
        pose = pose @ self.model.body_H_frame[idx]
        pose[:3, 3] += w_H_b[:3, 3]
        return pose

    def _path(self, frame, w_R_b, s, base_position):
        """Frame T of the representation (T_H_C, see :func:`rep_frame_pose`), the columns
        (6, d) in T of the d joints on the path to ``frame`` and their indices in the
        generalized vector (6 + user index). ``w_R_b`` None: the base is the world."""
        idx = self._frame(frame)
        s = checked_array("s", s, (self.model.n,))
        body = self.model.frame_body[idx]
        poses = chain_poses(self.model, w_R_b, s, body)
        t_H_c = rep_frame_pose(self.rep, poses[-1].dot(self.model.body_H_frame[idx]),
                               base_position)
        return t_H_c, path_columns(self.model, poses, body, t_H_c), \
            6 + self.model.path_coordinates[body]

    def jacobian(self, frame, w_H_b, s):
        """Frame Jacobian (6, 6+n): ``v_F = J nu``, both in the active representation."""
        if self._jit is not None and (jac := self._jit.frame_at(
                self._rep_code, "jacobian", frame, w_H_b, s)) is not None:
            return jac
        if (batch := self._batched("jacobians", w_H_b, s, frame=frame)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.frame(self.rep, "jacobian", self._frame(frame), w_H_b, s)
        w_H_b = checked_array("w_H_b", w_H_b, (4, 4))
        t_H_c, columns, cols = self._path(frame, w_H_b[:3, :3], s, w_H_b[:3, 3])
        jac = np.zeros((6, 6 + self.model.n))
        jac[:, :6] = velocity_transform(t_H_c).dot(base_transform(self.rep, w_H_b))
        jac[:, cols] = columns
        return jac

    def relative_jacobian(self, frame, s):
        """(6, n): the joint columns of the Jacobian with the base as world (w_H_b = I), as adam:
        the frame's velocity relative to the base, in the active representation."""
        if self._jit is not None:
            if (jac := self._jit.frame_at(self._rep_code, "relative", frame, _EYE4, s)) is None:
                return self._jit.frame(self.rep, "relative", self._frame(frame), None, s)
            return jac
        _, columns, cols = self._path(frame, None, s, _ORIGIN)
        jac = np.zeros((6, self.model.n))
        jac[:, cols - 6] = columns
        return jac

    def jacobian_dot(self, frame, w_H_b, s, base_vel, s_dot):
        """Time derivative of :meth:`jacobian` (6, 6+n) along (base_vel, s_dot).

        Every factor of ``J = X J_C T`` is an adjoint map: J_C's column k is joint k's screw
        S_k, with derivative V_k x S_k (V_k: C velocity of the body it moves), and
        ``dX/dt = -(u x) X``, ``dT/dt = (u_B x) T`` (:func:`frame_drift`, :func:`base_drift`).
        So each column is ``dJ_c/dt = W_c x J_c`` with ``W = X V_k - u`` for a joint column and
        ``W = X u_B - u`` for the base columns (all in the representation's frame T).
        """
        if (batch := self._batched("jacobian_dots", w_H_b, s, base_vel, s_dot,
                                   frame)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.frame(self.rep, "jacobian_dot", self._frame(frame), w_H_b, s,
                                   base_vel, s_dot)
        w_H_b = checked_array("w_H_b", w_H_b, (4, 4))
        base_vel = checked_array("base_vel", base_vel, (6,))
        qd = checked_array("s_dot", s_dot, (self.model.n,))
        t_H_c, columns, cols = self._path(frame, w_H_b[:3, :3], s, w_H_b[:3, 3])
        x, t = velocity_transform(t_H_c), base_transform(self.rep, w_H_b)
        base_columns = x.dot(t)                                              # (6, 6)
        base_twist = base_columns.dot(base_vel)
        vel = base_twist[:, None] + np.cumsum(columns * qd[cols - 6], axis=1)   # X V_k (6, d)
        u = frame_drift(self.rep, vel[:, -1] if len(cols) else base_twist)
        jdot = np.zeros((6, 6 + self.model.n))
        jdot[:, :6] = motion_cross_matrix(x.dot(base_drift(self.rep, t, base_vel)) - u).dot(
            base_columns)
        jdot[:, cols] = motion_cross(vel.T - u, columns.T).T
        return jdot

    def jacobian_dot_nu(self, frame, w_H_b, s, base_vel, s_dot):
        """``dJ/dt nu`` (6,) of ``frame`` (:meth:`jacobian_dot` times [base_vel; s_dot]): the
        frame's acceleration at zero nu_dot, in the active representation (iDynTree's
        ``getFrameBiasAcc``)."""
        if (batch := self._batched("jacobian_dot_nu", w_H_b, s, base_vel, s_dot,
                                   frame)) is not None:
            return batch
        jdot = self.jacobian_dot(frame, w_H_b, s, base_vel, s_dot)
        return jdot[:, :6].dot(base_vel) + jdot[:, 6:].dot(s_dot)

    def CoM_position(self, w_H_b, s):  # noqa: N802 (adam's name)
        """Centre of mass in the world frame (3,)."""
        if self._jit is not None and (
                value := self._jit.whole_at(self._rep_code, "com", w_H_b, s)) is not None:
            return value
        if (batch := self._batched("com", w_H_b, s)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.whole(self.rep, "com", w_H_b, s)
        _, _, kin = self._kin(w_H_b, s)
        return kin.com + kin.base_position

    def CoM_jacobian(self, w_H_b, s):  # noqa: N802
        """(3, 6+n): CoM velocity (world frame) from the generalized velocity."""
        if self._jit is not None and (
                value := self._jit.whole_at(self._rep_code, "com_jacobian", w_H_b, s)) is not None:
            return value
        if (batch := self._batched("com_jacobian", w_H_b, s)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.whole(self.rep, "com_jacobian", w_H_b, s)
        return self.centroidal_momentum_matrix(w_H_b, s)[:3] / self.model.total_mass

    def centroidal_momentum_matrix(self, w_H_b, s):
        """(6, 6+n): [linear; angular momentum about the CoM], world axes, from nu."""
        if self._jit is not None and (
                value := self._jit.whole_at(self._rep_code, "cmm", w_H_b, s)) is not None:
            return value
        if (batch := self._batched("centroidal_momentum_matrix", w_H_b, s)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.whole(self.rep, "cmm", w_H_b, s)
        w_H_b, _, kin = self._kin(w_H_b, s)
        shift = np.eye(6)
        shift[3:, :3] = -skew(kin.com)
        cmm = shift @ alg.momentum_matrix(self.model, kin)
        cmm[:, :6] = cmm[:, :6] @ base_transform(self.rep, w_H_b)
        return cmm[:, self._cols]

    # -- dynamics -----------------------------------------------------------------------
    def _mass_rep(self, kin, t):
        m = alg.mass_matrix(self.model, kin)[np.ix_(self._cols, self._cols)]
        m[:6] = t.T @ m[:6]
        m[:, :6] = m[:, :6] @ t
        return m

    def mass_matrix(self, w_H_b, s):
        """Mass matrix M (6+n, 6+n) in the active representation, full and symmetric."""
        if self._jit is not None and (
                value := self._jit.whole_at(self._rep_code, "mass", w_H_b, s)) is not None:
            return value
        if (batch := self._batched("mass_matrix", w_H_b, s)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.whole(self.rep, "mass", w_H_b, s)
        w_H_b, _, kin = self._kin(w_H_b, s)
        return self._mass_rep(kin, base_transform(self.rep, w_H_b))

    def inverse_mass_matrix(self, w_H_b, s):
        """M^-1 (6+n, 6+n); ValueError naming the joints when M is singular."""
        if self._jit is not None:
            if (value := self._jit.whole_at(self._rep_code, "minv", w_H_b, s)) is not None:
                return value
            try:
                return self._jit.whole(self.rep, "minv", w_H_b, s)
            except SingularMassMatrix:         # the NumPy path names the joints
                pass
        m = self.mass_matrix(w_H_b, s)
        return alg.solve_mass_matrix(m, np.eye(len(m)), self.model.joints_name_list)

    def _rnea(self, w_H_b, s, base_vel, s_dot, base_acc, s_ddot, wrenches, gravity):
        if self._jit is not None:
            return self._whole_with(wrenches, "rnea", w_H_b, s, base_vel, s_dot, base_acc,
                                    s_ddot, gravity=gravity is self._g6)
        w_H_b, _, kin = self._kin(w_H_b, s)
        base_vel = checked_array("base_vel", base_vel, (6,))
        base_acc = checked_array("base_acc", base_acc, (6,))
        qd, qdd = self._internal("s_dot", s_dot), self._internal("s_ddot", s_ddot)
        t = base_transform(self.rep, w_H_b)
        a0 = t @ base_acc + base_transform_dot(self.rep, t, base_vel) @ base_vel - gravity
        body_w = self._body_wrenches(kin, wrenches) if wrenches else None
        tau, _ = alg.inverse_dynamics(self.model, kin, t @ base_vel, a0, qd, qdd, body_w)
        return self._user_vector(tau, t)

    def rnea(self, w_H_b, s, base_vel, s_dot, base_acc, s_ddot, external_wrenches=None):
        """Inverse dynamics (6+n,): ``M nu_dot + h - sum_F J_F^T w_F``."""
        return self._rnea(w_H_b, s, base_vel, s_dot, base_acc, s_ddot, external_wrenches,
                          self._g6)

    def bias_force(self, w_H_b, s, base_vel, s_dot):
        """h = C(q, nu) nu + g(q), (6+n,)."""
        if self._jit is not None and (value := self._jit.bias_at(
                self._rep_code, True, w_H_b, s, base_vel, s_dot)) is not None:
            return value
        if (batch := self._batched("bias_forces", w_H_b, s, base_vel, s_dot)) is not None:
            return batch
        return self._rnea(w_H_b, s, base_vel, s_dot, self._zero_6, self._zero_n, None, self._g6)

    def coriolis_term(self, w_H_b, s, base_vel, s_dot):
        """C(q, nu) nu, (6+n,): the bias force without gravity."""
        if self._jit is not None and (value := self._jit.bias_at(
                self._rep_code, False, w_H_b, s, base_vel, s_dot)) is not None:
            return value
        return self._rnea(w_H_b, s, base_vel, s_dot, self._zero_6, self._zero_n, None,
                          self._zero_6)

    def gravity_term(self, w_H_b, s):
        """g(q), (6+n,): generalized gravity forces."""
        if self._jit is not None and (
                value := self._jit.whole_at(self._rep_code, "gravity", w_H_b, s)) is not None:
            return value
        if (batch := self._batched("gravity_forces", w_H_b, s)) is not None:
            return batch
        if self._jit is not None:
            return self._jit.whole(self.rep, "gravity", w_H_b, s)
        w_H_b, _, kin = self._kin(w_H_b, s)
        return self._user_vector(alg.gravity_forces(self.model, kin, self.gravity),
                                 base_transform(self.rep, w_H_b))

    def coriolis_matrix(self, w_H_b, s, base_vel, s_dot):
        """Christoffel-consistent C (6+n, 6+n): ``C nu = coriolis_term``, ``Mdot = C + C^T``."""
        if self._jit is not None:
            return self._jit.coriolis(self.rep, w_H_b, s, base_vel, s_dot)
        w_H_b, _, kin = self._kin(w_H_b, s)
        base_vel = checked_array("base_vel", base_vel, (6,))
        qd = self._internal("s_dot", s_dot)
        t = base_transform(self.rep, w_H_b)
        c = alg.coriolis_matrix(self.model, kin, t @ base_vel, qd)[np.ix_(self._cols, self._cols)]
        m = alg.mass_matrix(self.model, kin)[np.ix_(self._cols, self._cols)]
        tdot = base_transform_dot(self.rep, t, base_vel)
        c[:, :6] = c[:, :6] @ t + m[:, :6] @ tdot
        c[:6] = t.T @ c[:6]
        return c

    def aba(self, w_H_b, s, base_vel, s_dot, tau, external_wrenches=None):
        """Forward dynamics (6+n,): base acceleration (active representation), then joints.

        Solves ``M nu_dot = [0; tau] - h + sum_F J_F^T w_F`` on the joints that carry
        inertia; a joint with a massless subtree gets NaN (its acceleration is undefined,
        and the others' do not depend on it). ValueError when the floating base's block is
        singular (degenerate inertia of the whole robot).
        """
        if self._jit is not None:
            return self._whole_with(external_wrenches, "aba", w_H_b, s, base_vel, s_dot,
                                    tau=tau)
        w_H_b, _, kin = self._kin(w_H_b, s)
        base_vel = checked_array("base_vel", base_vel, (6,))
        qd, tau = self._internal("s_dot", s_dot), self._internal("tau", tau)
        wrenches = self._body_wrenches(kin, external_wrenches) if external_wrenches else None
        return self._forward_dynamics(kin, w_H_b, base_vel, qd, tau, wrenches)[0]

    def _whole_with(self, wrenches, what, *state, **given):
        """:meth:`.CompiledModel.whole` ``what`` at ``state`` with the external ``wrenches``
        {frame: w (6,) in the representation}; ValueError naming a wrong input, the frame of
        a wrench that is not finite included."""
        frames, values = self._rep_wrenches(wrenches)
        try:
            return self._jit.whole(self._rep_code, what, *state, frames=frames,
                                   wrenches=values, **given)
        except NonFiniteWrench:
            _checked_external(wrenches)                 # raises naming it
            raise

    def _rep_wrenches(self, wrenches):
        """{frame: w (6,) in the representation} -> (frame indices (k,), values (k, 6));
        ValueError naming an unknown frame or a wrench of a wrong shape. Whether the values
        are finite is the kernel's to check (~1 us less per call: :meth:`_whole_with`)."""
        if not wrenches:
            return NO_FRAMES, NO_WRENCHES
        names = tuple(wrenches)
        if (frames := self._wrench_frames.get(names)) is None:
            frames = np.array([self._frame(f) for f in names], dtype=np.int64)
            if len(self._wrench_frames) < 64:        # (a caller's few sets of contacts)
                self._wrench_frames[names] = frames
        try:
            values = np.array(tuple(wrenches.values()), dtype=np.float64)
        except (TypeError, ValueError):
            values = None
        if values is None or values.shape != (len(names), 6):
            values = _checked_external(wrenches)        # raises naming the wrong one
        return frames, values

    def _forward_dynamics(self, kin, w_H_b, base_vel, qd, tau, body_wrenches):
        """(nu_dot (6+n,), base in the active representation, joints in user order with NaN
        for the massless ones; their mask (n,) in user order)."""
        t = base_transform(self.rep, w_H_b)
        h, _ = alg.inverse_dynamics(self.model, kin, t.dot(base_vel), self._minus_g6, qd, None,
                                    body_wrenches)
        rhs = -h
        rhs[6:] += tau
        nu_dot, massless = alg.solve_forward_dynamics(alg.mass_matrix(self.model, kin), rhs)
        nu_dot[:6] = base_transform_inverse(self.rep, w_H_b).dot(
            nu_dot[:6] - base_transform_dot(self.rep, t, base_vel).dot(base_vel))
        return nu_dot[self._cols], massless[self.model.internal]

    # -- the node's per-tick call -------------------------------------------------------
    def compute_tick(self, w_H_b, s, base_vel, s_dot, tau=None, frame_wrenches=None,
                     contacts=None, contact_threshold=0.0):
        """Everything the node publishes for one state, from one kinematics pass.

        ``frame_wrenches``: ``{link: (expressed_frame, w)}``, wrench w (6,) [force; torque]
        acting on ``link``'s body, expressed in ``expressed_frame``'s axes about its origin
        (what a force/torque sensor reports). ``tau`` (n,) measured joint torques; without it
        no forward dynamics is computed. A joint with a massless subtree gets a NaN
        acceleration and its name in ``massless_joints`` (the others do not depend on it);
        when the floating base's block is singular the rest is still returned, with
        ``forward_dynamics_error`` saying so. ``contacts``: ``{link: Contact}``
        (:class:`.contacts.Contact` on that link) whose balance quantities the result's
        ``balance`` gives, under the wrenches of ``frame_wrenches`` on those links (a contact
        is active when its normal force exceeds ``contact_threshold`` [N]). Returns a
        :class:`TickResult`.
        """
        if self._jit is not None:
            return self._compiled_tick(w_H_b, s, base_vel, s_dot, tau, frame_wrenches,
                                       contacts, contact_threshold)
        model = self.model
        n = (model.n,)
        w_H_b, s, base_vel, s_dot, tau = checked_arrays(
            ("w_H_b", w_H_b, (4, 4)), ("s", s, n), ("base_vel", base_vel, (6,)),
            ("s_dot", s_dot, n), ("tau", tau, n))
        q = s[model.coordinate]                  # (a copy: the lazy results keep it)
        kin = forward_pass(model, w_H_b, q)
        qd = s_dot[model.coordinate]
        cols = kin.composite_subspaces                                  # (n, 6) Ic_j S_j
        gravity = -cols[:, :3].dot(self.gravity)[model.internal]    # -(Ic_j S_j) . [g; 0]
        base_acc = joint_acc = None
        fd_error, massless = "", ()
        if tau is not None:
            wrenches = self._frame_wrenches(kin, frame_wrenches)
            try:
                nu_dot, mask = self._forward_dynamics(kin, w_H_b, base_vel, qd,
                                                      tau[model.coordinate], wrenches)
                base_acc, joint_acc = nu_dot[:6], nu_dot[6:]
                massless = self._names(mask)
            except ValueError as exc:       # singular M: only forward dynamics is undefined
                fd_error = str(exc)
        # momentum about C's origin, [Ic_0, Ic_j S_j] nu_C, then about the CoM
        total = kin.composite[0].dot(base_transform(self.rep, w_H_b).dot(base_vel))
        total += qd.dot(cols)
        com = kin.com
        momentum = total.copy()
        momentum[3:] -= skew(com).dot(total[:3])
        com = com + kin.base_position
        com_velocity = total[:3] / self._total_mass
        frame = functools.partial(self._world_frame, kin.poses, kin.base_position)
        return TickResult(model.frame_names, model.joints_name_list,
                          (model.link_H_joint @ kin.local).take(model.internal, axis=0), w_H_b,
                          com, com_velocity, momentum, gravity, base_acc, joint_acc, self.rep,
                          fd_error, massless, lambda: self._world_frames(kin), frame,
                          (lambda: self._balance(frame, com, com_velocity, contacts,
                                                 frame_wrenches or {}, contact_threshold))
                          if contacts else None,
                          lambda: joint_quaternions(model.tf_quaternions,
                                                    q.take(model.internal)))

    def _compiled_tick(self, w_H_b, s, base_vel, s_dot, tau, frame_wrenches, contacts,
                       threshold):
        """:meth:`compute_tick` by the compiled kernel (:func:`.kernels.tick` lays ``out``
        out: transforms, quaternions, CoM, its velocity, momentum, gravity, nu_dot, the
        number of massless joints)."""
        targets, values = self._sensor_wrenches(frame_wrenches)
        status, w_H_b, out, poses = self._jit.tick(self._rep, w_H_b, s, base_vel, s_dot, tau,
                                                   targets, values)
        if status == self._jit.k.NOT_FINITE:            # a wrench: name it
            for link, (_, w) in frame_wrenches.items():
                _checked_wrench(link, w)
        return self.packed_tick_result(status, w_H_b, out, poses, tau is not None,
                                       frame_wrenches, values, contacts, threshold, targets)

    def packed_tick_result(self, status, w_H_b, out, poses, fd, frame_wrenches, values,
                           contacts, threshold, targets=None):
        """The :class:`TickResult` of a compiled tick (:func:`.kernels.tick`'s ``status``,
        ``out`` and ``poses`` C_H_body (N, 4, 4) at ``w_H_b``; forward dynamics asked when
        ``fd``; ``values`` (6 k,) the wrenches of ``frame_wrenches`` as the kernel took them
        with ``targets``, :meth:`_sensor_wrenches`' index arrays; the balance of ``contacts``
        as :meth:`compute_tick`'s). Sets ``out``'s forward dynamics to NaN where there is
        none."""
        at = self._packed                               # TickResult.packed's fields
        fd_error = alg.SINGULAR_BASE if status == self._jit.k.SINGULAR else ""
        fd = fd and not fd_error
        acc, massless = at["base_acceleration"], ()
        if not fd:
            out[acc:at["massless"]] = np.nan            # (as TickResult.packed says)
        elif out[at["massless"]]:
            massless = self._names(np.isnan(out[at["joint_accelerations"]:at["massless"]]))
        result = _PackedTickResult.__new__(_PackedTickResult)
        # (the other fields: _PackedTickResult's, made when read; those a tick reads: here)
        vars(result).update(
            frame_names=self.model.frame_names, joint_names=self.model.joints_name_list,
            base_pose=w_H_b, representation=self._rep, forward_dynamics_error=fd_error,
            base_acceleration=out[acc:at["joint_accelerations"]] if fd else None,
            massless_joints=massless,
            _packed=out, packed=out, _at=at, _fd=fd, _kd=self, _poses=poses,
            _wrenches=frame_wrenches, _values=values, _targets=targets, _contacts=contacts,
            _threshold=threshold)
        return result

    def prepared_tick(self, frame_wrenches):
        """A :class:`PreparedTick` of :meth:`compute_tick` with these ``frame_wrenches``
        (their values are kept: they must not change while it is used), or None on the
        NumPy core. ValueError naming a wrench that is not finite or not (6,)."""
        if self._jit is None:
            return None
        targets, values = self._sensor_wrenches(frame_wrenches)
        # (NaN or inf anywhere makes the sum so; Python's sum of the list, not NumPy's
        # reduction: 27 us in the running node, once per new wrench)
        if not math.isfinite(sum(values.tolist())):
            for link, (_, w) in frame_wrenches.items():
                _checked_wrench(link, w)
        return PreparedTick(self, frame_wrenches, targets, values)

    def _sensor_wrenches(self, frame_wrenches):
        """{link: (expressed frame, w (6,))} -> (targets (k, 2) [link, frame] indices,
        wrenches (6 k,)) for :func:`.kernels.tick`; the index arrays are kept per set of links
        and frames (the node's contacts: the same every tick)."""
        if not frame_wrenches:
            return NO_TARGETS, EMPTY
        frames, wrenches = zip(*frame_wrenches.values())     # (C calls: no comprehension)
        key = (*frame_wrenches, *frames)
        targets = self._targets.get(key)
        if targets is None:
            targets = np.array([(self._frame(link), self._frame(frame))
                                for link, (frame, _) in frame_wrenches.items()], dtype=np.int64)
            if len(self._targets) < 64:
                self._targets[key] = targets
        try:
            values = np.array(wrenches, dtype=np.float64)
        except (TypeError, ValueError):
            values = None
        if values is not None and values.shape == (len(wrenches), 6):
            values = values.reshape(-1)
        else:
            values = np.concatenate([_checked_wrench(link, w)      # raises, naming the link
                                     for link, (_, w) in frame_wrenches.items()])
        return targets, values

    def _names(self, mask):
        """The names of the joints of a mask (n,) in user order."""
        names = self.model.joints_name_list
        return tuple(names[k] for k in np.flatnonzero(mask))

    def _balance(self, frame, com, com_velocity, contacts, frame_wrenches, threshold):
        """:func:`.balance.balance` of ``contacts`` ({link: Contact}) under ``frame_wrenches``
        (as :meth:`compute_tick`'s; a contact without one has no CoP), world frame;
        ``frame(index)`` gives a link's world pose."""
        poses, wrenches, expressed = [], [], []
        for link, contact in contacts.items():
            poses.append(frame(self._frame(contact.link)))
            name, w = frame_wrenches.get(link, (None, None))
            wrenches.append(None if w is None else _checked_wrench(link, w))
            expressed.append(None if name in (None, contact.link)
                             else frame(self._frame(name)))
        return balance(tuple(contacts.values()), poses, wrenches, com, com_velocity,
                       self.gravity, threshold, tuple(contacts), expressed)

    def _balance_vector(self, poses, base_position, com, com_velocity, contacts,
                        frame_wrenches, values, threshold, targets=None):
        """``TickResult.balance_vector`` by :func:`.kernels.balance` on the tick's body poses
        C_H_body (N, 4, 4) and base position (3,), with the tick's checked wrenches
        ``values`` (6 m,) of ``frame_wrenches`` (in its order); None where an active contact
        is not a flat sole (the ground plane then needs an SVD: :meth:`_balance`), or while
        the kernel loads (:func:`.compiled.contacts_ready`)."""
        if not contacts_ready():
            return None
        spec, expressed, wrenches, measured = self._held_balance(contacts, frame_wrenches,
                                                                 values, targets)
        status, out = self._jit.balance(poses, base_position, spec, expressed, wrenches,
                                        measured, threshold, com, com_velocity)
        if status != self._jit.k.OK:
            return None
        return spec.names, out, spec.layout, threshold

    def _contact_points(self, poses, base_position, com, com_velocity, contacts,
                        frame_wrenches, values, threshold, targets=None):
        """(out, layout, balance_vector) of ``TickResult.contact_points`` by
        :func:`.kernels.contact_points` (arguments as :meth:`_balance_vector`'s), or None
        where the kernel does not give it (or while it loads)."""
        if not contacts_ready():
            return None
        spec, expressed, wrenches, measured = self._held_balance(contacts, frame_wrenches,
                                                                 values, targets)
        if self._ground is None:
            self._ground = (ground_axes(self.gravity), -self.gravity / np.linalg.norm(
                self.gravity)) if np.linalg.norm(self.gravity) >= 1e-12 else False
        if self._ground is False:        # (no ground without gravity: hull_support says so)
            return None
        status, out, balanced = self._jit.contact_points(
            poses, base_position, spec, expressed, wrenches, measured, threshold, com,
            com_velocity, *self._ground)
        if status != self._jit.k.OK:
            return None
        return out, spec.points_layout, (spec.names, balanced, spec.layout, threshold)

    def _held_balance(self, contacts, frame_wrenches, values, targets=None):
        """:meth:`_balance_arguments`, kept while ``values``, ``contacts`` and
        ``frame_wrenches`` are the same objects (a PreparedTick's: the node's ticks between
        two wrench messages; paired in the running node, 8-14 us per JointState less with
        the balance outputs read half of the time). New values of the same links and frames
        (the same ``targets``: :meth:`_sensor_wrenches` keeps one per set of them; a
        PreparedTick renewed) keep the contacts' arrays: only the wrenches are taken."""
        held = self._balance_held
        inputs = None
        if held is not None and held.contacts is contacts:
            if held.values is values and held.frame_wrenches is frame_wrenches:
                return held.arguments
            if targets is not None and held.targets is targets:
                inputs = held.inputs
        if inputs is None:
            inputs = self._balance_inputs(contacts, frame_wrenches)
        arguments = self._balance_arguments(inputs, values)
        self._balance_held = _HeldBalance(values, contacts, frame_wrenches, targets, inputs,
                                          arguments)
        return arguments

    @staticmethod
    def _balance_arguments(inputs, values):
        """(spec, expressed, wrenches (k, 6), measured (k,)) of :func:`.kernels.balance` for
        the contacts' ``inputs`` (:meth:`_balance_inputs`) and the tick's wrenches ``values``
        (6 m,)."""
        spec, expressed, rows, direct = inputs
        if direct:                  # contact i's wrench is row i: a view
            return spec, expressed, values.reshape(-1, 6), spec.all_measured
        if rows.min(initial=0) >= 0:                    # a wrench on every contact
            return spec, expressed, values.reshape(-1, 6)[rows], spec.all_measured
        wrenches, measured = np.zeros((len(rows), 6)), rows >= 0
        wrenches[measured] = values.reshape(-1, 6)[rows[measured]]
        return spec, expressed, wrenches, measured

    def _balance_inputs(self, contacts, frame_wrenches):
        """(:class:`.compiled.BalanceContacts` of ``contacts`` ({name: Contact}), the frame
        index each contact's wrench is expressed in (k,), the row of each contact's wrench in
        the tick's wrench vector (k,), -1 without one, whether row i is contact i's and there
        are no others), kept per set of Contact objects and wrench frames (the node's: the
        same every tick)."""
        key = (*map(id, contacts.values()), *frame_wrenches,
               *[name for name, _ in frame_wrenches.values()])
        held = self._balance_specs.get(key)
        if held is None:
            spec = BalanceContacts(self._jit.k, contacts.values(), self._frame, contacts)
            order = {link: j for j, link in enumerate(frame_wrenches)}
            rows = np.array([order.get(link, -1) for link in contacts], dtype=np.intp)
            expressed = spec.links.copy()
            for i, (link, contact) in enumerate(contacts.items()):
                name = frame_wrenches[link][0] if link in frame_wrenches else None
                if name is not None and name != contact.link:
                    expressed[i] = self._frame(name)
            direct = len(rows) == len(frame_wrenches) and rows.tolist() == list(range(len(rows)))
            held = spec, expressed, rows, direct
            if len(self._balance_specs) < 16:
                self._balance_specs[key] = held
        return held

    def _world_frames(self, kin):
        poses = kin.poses[self.model.frame_body] @ self.model.body_H_frame
        poses[:, :3, 3] += kin.base_position
        return poses

    def _world_frame(self, body_poses, base_position, idx):
        """World pose (4, 4) of frame ``idx`` from C_H_body (N, 4, 4) and A_o_B (3,)."""
        pose = body_poses[self.model.frame_body[idx]].dot(self.model.body_H_frame[idx])
        pose[:3, 3] += base_position
        return pose

    def _frame_wrenches(self, kin, frame_wrenches):
        """{link: (expressed_frame, w)} -> (N, 6) wrenches per body, about C's origin."""
        if not frame_wrenches:
            return None
        out = np.zeros((len(self.model.parent), 6))
        for link, (expressed, w) in frame_wrenches.items():
            body = self.model.frame_body[self._frame(link)]
            pose = self._c_pose(kin, self._frame(expressed))             # C_H_expressed
            out[body] += transform_wrench(pose, _checked_wrench(link, w))
        return out
