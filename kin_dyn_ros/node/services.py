"""The planners' services: ``~/get_jacobian``, ``~/get_mass_matrix``, ``~/get_dynamics``.

Each request is answered at one state: the node's latest measured state (the state of
its last tick) when ``use_measured_state`` is true, else the request's
FloatingBaseState. Requests run on a KinDynComputations instance of their own (the node's
``aux``), whose representation is set before every call, so they never disturb the tick.
Errors (no model, unknown frame or joint, wrong sizes, bad quaternion, bad representation)
give ``success = false`` and a message naming the problem; nothing is thrown.
Matrices are row-major; columns are ``COLUMN_BASE`` then the model's joints.
``~/check_equilibrium`` (:mod:`.contact_mechanics`) takes its state the same way
(:func:`request_call`).
"""

from dataclasses import dataclass

import numpy as np

from kin_dyn_ros_interfaces.srv import GetDynamics, GetJacobian, GetMassMatrix

from .conversions import change_base_representation, float_array, pose_to_matrix, twist_to_array
from ..dynamics.representations import parse_representation

__all__ = ["COLUMN_BASE", "MeasuredState", "DynamicsServices", "explicit_state",
           "request_call"]

COLUMN_BASE = ("base_lin_x", "base_lin_y", "base_lin_z", "base_ang_x", "base_ang_y", "base_ang_z")


@dataclass(frozen=True)
class MeasuredState:
    """The state of a tick: w_H_b (4, 4), s (n,), base_vel (6,) in ``representation``,
    s_dot (n,)."""

    w_H_b: np.ndarray
    s: np.ndarray
    base_vel: np.ndarray
    s_dot: np.ndarray
    representation: object


def explicit_state(kd, state):
    """(w_H_b, s, s_dot) from a FloatingBaseState: every non-mimic joint must be named once;
    mimic joints follow their master. ValueError naming the problem."""
    names = list(state.joint_names)
    pos = np.asarray(state.positions, dtype=float)
    vel = np.asarray(state.velocities, dtype=float)
    if pos.size != len(names) or vel.size not in (0, len(names)):
        raise ValueError(f"state has {len(names)} joint_names, {pos.size} positions and "
                         f"{vel.size} velocities (expected {len(names)}, or 0 velocities)")
    if not (np.isfinite(pos).all() and np.isfinite(vel).all()):
        raise ValueError("state positions or velocities contain NaN or inf")
    index = {name: i for i, name in enumerate(kd.joints_name_list)}
    unknown = [n for n in names if n not in index]
    if unknown or len(set(names)) != len(names):
        raise ValueError(f"unknown joints {unknown}" if unknown else "a joint is named twice")
    mimic = kd.mimic_joints
    missing = [n for n in index if n not in set(names) and n not in mimic]
    if missing:
        raise ValueError(f"state misses joints {missing}")
    s, s_dot = np.zeros(len(index)), np.zeros(len(index))
    idx = [index[n] for n in names]
    s[idx] = pos
    if vel.size:
        s_dot[idx] = vel
    for joint, (master, mult, _) in mimic.items():
        s_dot[index[joint]] = mult * s_dot[index[master]]
    try:
        w_H_b = pose_to_matrix(state.base_pose)
    except ValueError as exc:
        raise ValueError(f"state.base_pose: {exc}") from None
    return w_H_b, kd.apply_mimic(s), s_dot


class DynamicsServices:
    """Creates the three services on ``node``.

    ``source()`` returns ``(aux, measured, default_rep, frame_prefix)``: the services'
    KinDynComputations (None while no model is loaded), the latest MeasuredState (or None)
    and the node's default representation.
    """

    def __init__(self, node, source, callback_group=None):
        self._source = source
        self._logger = node.get_logger()
        self.services = [
            node.create_service(srv, name, self._wrap(srv, fill), callback_group=callback_group)
            for srv, name, fill in ((GetJacobian, "~/get_jacobian", self._jacobian),
                                    (GetMassMatrix, "~/get_mass_matrix", self._mass_matrix),
                                    (GetDynamics, "~/get_dynamics", self._dynamics))]

    def _wrap(self, srv, fill):
        def callback(request, response):
            try:
                call = self._state(request)
                fill(request, response, call)
                response.column_names = list(COLUMN_BASE) + call.kd.joints_name_list
                response.success, response.message = True, ""
            except ValueError as exc:
                response = srv.Response(success=False, message=str(exc))
            except Exception as exc:  # never throw from a callback: report and go on
                self._logger.error(f"{srv.__name__} failed: {exc!r}")
                response = srv.Response(success=False, message=f"internal error: {exc!r}")
            return response
        return callback

    def _state(self, request):
        """The :class:`_Call` of a request (:func:`request_call`)."""
        return request_call(self._source(), request)

    @staticmethod
    def _jacobian(request, response, c):
        jac = c.kd.jacobian(c.frame(request.frame), c.w_H_b, c.s)
        response.rows, response.cols = jac.shape
        response.data = float_array(jac.ravel())

    @staticmethod
    def _mass_matrix(request, response, c):
        m = c.kd.mass_matrix(c.w_H_b, c.s)
        response.rows, response.cols = m.shape
        response.data = float_array(m.ravel())

    @staticmethod
    def _dynamics(request, response, c):
        kd, w_H_b, s = c.kd, c.w_H_b, c.s
        jacobians = [kd.jacobian(c.frame(f), w_H_b, s) for f in request.frames]
        response.mass_matrix = float_array(kd.mass_matrix(w_H_b, s).ravel())
        response.bias_forces = float_array(kd.bias_force(w_H_b, s, c.nu, c.s_dot))
        response.gravity_forces = float_array(kd.gravity_term(w_H_b, s))
        response.centroidal_momentum_matrix = float_array(
            kd.centroidal_momentum_matrix(w_H_b, s).ravel())
        com = kd.CoM_position(w_H_b, s)
        response.com.x, response.com.y, response.com.z = (float(v) for v in com)
        response.com_jacobian = float_array(kd.CoM_jacobian(w_H_b, s).ravel())
        response.frames = list(request.frames)
        response.jacobians = float_array(np.reshape(jacobians, -1))


def request_call(source, request):
    """The :class:`_Call` of a service request: ``source`` is the services' ``(aux, measured,
    default_rep, frame_prefix)``; ``request`` has ``use_measured_state``, ``state`` and
    optionally ``representation`` (empty or absent: the node's default), to which the aux
    KinDynComputations is set. ValueError naming the problem."""
    kd, measured, default_rep, prefix = source
    if kd is None:
        raise ValueError("no robot model loaded yet (waiting for robot_description)")
    rep = parse_representation(getattr(request, "representation", "") or default_rep)
    kd.set_frame_velocity_representation(rep)
    if request.use_measured_state:
        if measured is None:
            raise ValueError("no measured state yet (no tick computed); set "
                             "use_measured_state=false and pass a state")
        nu = change_base_representation(measured.base_vel, measured.w_H_b,
                                        measured.representation, rep)
        return _Call(kd, prefix, measured.w_H_b, measured.s, nu, measured.s_dot)
    w_H_b, s, s_dot = explicit_state(kd, request.state)
    return _Call(kd, prefix, w_H_b, s, twist_to_array(request.state.base_twist), s_dot)


@dataclass(frozen=True)
class _Call:
    """One request's model (representation set) and state: nu (6,) is the base velocity."""

    kd: object
    prefix: str
    w_H_b: np.ndarray
    s: np.ndarray
    nu: np.ndarray
    s_dot: np.ndarray

    def frame(self, name):
        """Model frame of a requested name, with or without the frame prefix."""
        if name not in self.kd.model.frame_index and self.prefix and name.startswith(self.prefix):
            return name[len(self.prefix):]
        return name
