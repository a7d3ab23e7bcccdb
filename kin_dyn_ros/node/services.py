"""The planners' services: ``~/get_jacobian``, ``~/get_mass_matrix``, ``~/get_dynamics``
(and ``~/get_dynamics_horizon``, :mod:`.horizon_service`).

Each request is answered at one state: the node's latest measured state (the state of
its last tick) when ``use_measured_state`` is true, else the request's
FloatingBaseState. The node hands the services a :class:`Snapshot` (model, the last tick's
:class:`.tick.MeasuredState`, default representation, frame prefix), replaced as one
reference at every tick: a request reads it once, so it sees the state of one tick, never
half of two, and never waits for the tick's lock. Each request's query
(:mod:`..dynamics.queries`) runs on a KinDynComputations of its own (a shallow copy sharing
the model, ~1 us) in the requested representation, in the services' worker process or, as
its fallback, the calling thread: requests disturb neither the tick nor each other.
Errors (no model, unknown frame or joint, wrong sizes, bad quaternion, bad representation)
give ``success = false`` and a message naming the problem; nothing is thrown.
Matrices are row-major; columns are ``COLUMN_BASE`` then the model's joints.
``~/check_equilibrium`` (:mod:`.contact_mechanics`) takes its state the same way
(:func:`request_call`).
"""

import threading
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from rclpy.task import Future

from geometry_msgs.msg import Vector3
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup

from kin_dyn_ros_interfaces.srv import CheckEquilibrium, GetDynamics, GetJacobian, GetMassMatrix

from .conversions import array_to_point, float_array, pose_to_matrix, twist_to_array
from ..dynamics.base_state import change_base_representation
from ..dynamics.contacts import Contact
from ..dynamics.representations import parse_representation

__all__ = ["COLUMN_BASE", "Snapshot", "DynamicsServices", "EquilibriumService",
           "InProcessServices", "explicit_state", "failed_response", "joint_columns",
           "model_frame", "offloaded", "request_call"]

COLUMN_BASE = ("base_lin_x", "base_lin_y", "base_lin_z", "base_ang_x", "base_ang_y", "base_ang_z")


class Snapshot(NamedTuple):
    """What the services answer from: the model's KinDynComputations (None while no model is
    loaded; read only: each query runs on a copy of its own, :mod:`..dynamics.queries`), the last
    tick's :class:`.tick.MeasuredState` (None before the first tick of this model), the
    node's default velocity representation (name) and frame prefix, its contacts
    ({name: :class:`~..dynamics.contacts.Contact`} of the model's links) and the most states
    a ~/get_dynamics_horizon request may ask about."""

    kd: object
    measured: object
    representation: str
    prefix: str
    contacts: dict = {}
    horizon_max_states: int = 200


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
    idx = joint_columns(kd, names, "state")
    s, s_dot = np.zeros(kd.NDoF), np.zeros(kd.NDoF)
    s[idx] = pos
    if vel.size:
        s_dot[idx] = vel
    try:
        w_H_b = pose_to_matrix(state.base_pose)
    except ValueError as exc:
        raise ValueError(f"state.base_pose: {exc}") from None
    return (w_H_b, *kd.fill_mimic(s, s_dot))


def joint_columns(kd, names, what):
    """Indices in ``kd.joints_name_list`` of a request's joint ``names``: every non-mimic
    joint named once; ValueError naming unknown, repeated or missing joints (``what``: the
    request's field, for the message)."""
    index = {name: i for i, name in enumerate(kd.joints_name_list)}
    unknown = [n for n in names if n not in index]
    if unknown or len(set(names)) != len(names):
        raise ValueError(f"unknown joints {unknown}" if unknown else "a joint is named twice")
    given, mimic = set(names), kd.mimic_joints
    missing = [n for n in index if n not in given and n not in mimic]
    if missing:
        raise ValueError(f"{what} misses joints {missing}")
    return [index[n] for n in names]


def model_frame(kd, prefix, name):
    """Model frame of a requested name, with or without the frame ``prefix``."""
    if name not in kd.model.frame_index and prefix and name.startswith(prefix):
        return name[len(prefix):]
    return name


class DynamicsServices:
    """Creates the three services on ``node``, named ``<base>/get_jacobian``, ... (``base``:
    "~", the node's private names, or another node's full name when they are served for it).

    ``source()`` returns the node's current :class:`Snapshot` (a reference read: no lock);
    ``queries`` (a :class:`~kin_dyn_ros.equilibrium_worker.QueryWorker`) computes them, in
    its process when it runs (the executor's thread then waits with the interpreter lock
    released), else in the calling thread.
    """

    def __init__(self, node, source, queries, callback_group=None, base="~"):
        self._source, self._queries = source, queries
        self._logger = node.get_logger()
        self.services = [
            node.create_service(srv, f"{base}/{name}", self._wrap(srv, fill),
                                callback_group=callback_group)
            for srv, name, fill in ((GetJacobian, "get_jacobian", self._jacobian),
                                    (GetMassMatrix, "get_mass_matrix", self._mass_matrix),
                                    (GetDynamics, "get_dynamics", self._dynamics))]

    def _wrap(self, srv, fill):
        def callback(request, response):
            try:
                call = request_call(self._source(), request)
                fill(request, response, call)
                response.column_names = list(COLUMN_BASE) + call.kd.joints_name_list
                response.success, response.message = True, ""
            except Exception as exc:  # never throw from a callback: answer and go on
                response = failed_response(srv, self._logger, exc)
            return response
        return callback

    def _query(self, c, name, *args):
        """The answer of query ``name`` of :mod:`kin_dyn_ros.dynamics.queries` at ``c``."""
        return self._queries.call(c.kd, name, c.rep, c.w_H_b, c.s, *args)

    def _jacobian(self, request, response, c):
        jac = self._query(c, "jacobian", c.frame(request.frame))["jacobian"]
        response.rows, response.cols = jac.shape
        response.data = float_array(jac.ravel())

    def _mass_matrix(self, request, response, c):
        m = self._query(c, "mass_matrix")["mass_matrix"]
        response.rows, response.cols = m.shape
        response.data = float_array(m.ravel())

    def _dynamics(self, request, response, c):
        d = self._query(c, "dynamics", c.nu, c.s_dot, [c.frame(f) for f in request.frames])
        for field in ("mass_matrix", "bias_forces", "gravity_forces",
                      "centroidal_momentum_matrix", "com_jacobian", "jacobians"):
            setattr(response, field, float_array(d[field].ravel()))
        response.com.x, response.com.y, response.com.z = (float(v) for v in d["com"])
        response.frames = list(request.frames)


class EquilibriumService:
    """``<base>/check_equilibrium`` on ``node``: the equilibrium of a state (the measured
    one or the request's) on the snapshot's contacts (or those the request names, with its
    friction coefficients), computed by ``queries`` (a QueryWorker of its own: a check takes
    milliseconds, up to tens on a non-flat support, and ~/get_dynamics must not queue behind
    it), awaited off the executor's thread (:func:`offloaded`)."""

    def __init__(self, node, source, queries, base="~"):
        self._node, self._source, self._queries = node, source, queries
        self._logger = node.get_logger()
        # a group of its own: while a check is awaited, the node's default group (the other
        # services, timers, parameters) stays free; checks still come one at a time
        self.service = node.create_service(CheckEquilibrium, f"{base}/check_equilibrium",
                                           self._check,
                                           callback_group=MutuallyExclusiveCallbackGroup())

    async def _check(self, request, response):
        try:
            await self._fill(request, response)
            response.success = True
        except Exception as exc:  # never throw from a callback: answer and go on
            response = failed_response(CheckEquilibrium, self._logger, exc)
        return response

    @staticmethod
    def _request_contacts(request, call, configured):
        names = [call.frame(n) if n not in configured else n for n in request.contacts]
        names = names or list(configured)
        unknown = [n for n in names if n not in configured]
        if unknown or len(set(names)) != len(names):
            raise ValueError(f"unknown contacts {unknown} (configured: {list(configured)})"
                             if unknown else f"a contact is named twice: {names}")
        if not names:
            raise ValueError("no contacts: the node has none configured on this model "
                             "(parameter 'contacts')")
        mus = np.asarray(request.friction, dtype=float)
        if mus.size not in (0, len(names)):
            raise ValueError(f"expected 0 or {len(names)} friction coefficients (one per "
                             f"contact), got {mus.size}")
        if mus.size and not (np.isfinite(mus).all() and (mus >= 0.0).all()):
            raise ValueError(f"friction coefficients must be finite and >= 0, got "
                             f"{mus.tolist()}")
        contacts = [configured[n] for n in names]
        if mus.size:
            contacts = [Contact(c.link, c.points, c.normal, mu) for c, mu in zip(contacts, mus)]
        return names, contacts

    async def _fill(self, request, r):
        source = self._source()
        call = request_call(source, request)
        kd = call.kd
        names, contacts = self._request_contacts(request, call, source.contacts)
        d = await offloaded(self._node, lambda: self._queries.call(
            kd, "equilibrium_check", call.rep, call.w_H_b, call.s, contacts))
        r.message, r.feasible, r.margin = d["message"], d["feasible"], d["margin"]
        r.inside = bool(d["margin"] >= 0.0)
        r.com = array_to_point(d["com"])
        r.polygon = [array_to_point(p) for p in d["polygon"]]
        r.torques_feasible, r.torque_margin = d["torques_feasible"], d["torque_margin"]
        r.joint_names = list(kd.joints_name_list)
        r.torques = float_array([] if d["tau"] is None else d["tau"])
        r.point_contacts = [names[k] for k in d["point_contacts"]]
        r.points = [array_to_point(p) for p in d["points"]]
        r.forces = [] if d["forces"] is None else [array_to_point(f, Vector3)
                                                   for f in d["forces"]]


class InProcessServices:
    """The five services answered in the node's own process (``services_process: false``,
    the plain path of :func:`.service_host.planner_services`): a :class:`Snapshot` replaced as
    one reference per tick, the queries computed in QueryWorker processes (one for ~/get_*,
    one for ~/check_equilibrium), or in the executor's thread where they cannot run."""

    def __init__(self, node):
        from ..equilibrium_worker import QueryWorker
        from .horizon_service import HorizonService
        self._snapshot = Snapshot(None, None, "MIXED", "")
        self._queries, self._checks = QueryWorker(), QueryWorker()
        self.services = (DynamicsServices(node, self.source, self._queries),
                         HorizonService(node, self.source, self._queries),
                         EquilibriumService(node, self.source, self._checks))

    def source(self):
        """The current :class:`Snapshot` (one reference read, no lock)."""
        return self._snapshot

    def configure(self, kd, urdf, settings, contacts):
        """As :meth:`.service_host.ServiceHost.configure`; a new model drops the measured
        state (its workers get the model; the queries' starts now, the checks' at the first
        check, as in the services' process)."""
        old = self._snapshot.kd
        measured = self._snapshot.measured
        if kd is not None and (old is None or old.model is not kd.model):
            measured = None
            for worker in (self._queries, self._checks):
                worker.set_model(urdf, kd.model.root_link, kd.gravity, model=kd.model)
            self._queries.start()   # its start-up (~1 s of CPU) now, not at the first call
        self._snapshot = Snapshot(kd, measured if kd is not None else None,
                                  settings.velocity_representation, settings.frame_prefix,
                                  dict(contacts), settings.horizon_max_states)

    def write(self, measured):
        """The tick's :class:`.tick.MeasuredState` (one reference replaced)."""
        self._snapshot = self._snapshot._replace(measured=measured)

    @staticmethod
    def shared(n, representation):
        """None: no memory a compiled tick writes into (:meth:`write` takes the state)."""
        return None

    def check(self):
        """Nothing to check: the workers restart on their next call."""

    def close(self):
        self._queries.close()
        self._checks.close()


def failed_response(srv, logger, exc):
    """The response of service type ``srv`` to a request that raised ``exc``: success
    false with a ValueError's message (the request's problem), else "internal error" (and
    logged with ``logger``: a bug)."""
    if isinstance(exc, ValueError):
        return srv.Response(success=False, message=str(exc))
    logger.error(f"{srv.__name__} failed: {exc!r}")
    return srv.Response(success=False, message=f"internal error: {exc!r}")


def offloaded(node, fn):
    """An rclpy Future of ``fn()`` (its result, or the exception it raised) run on a thread of
    its own, for an ``async`` service callback to await: the executor's thread serves the
    node's other callbacks meanwhile (a long ~/check_equilibrium then never holds up
    ~/get_dynamics or the parameter services). Completing it wakes the node's executor (its
    done callback is scheduled there as a task), which then resumes the awaiting callback."""
    future = Future(executor=node.executor)
    future.add_done_callback(lambda _: None)

    def run():
        try:
            result = fn()
        except Exception as exc:    # raised again where the future is awaited
            outcome = (future.set_exception, exc)
        else:
            outcome = (future.set_result, result)
        try:
            outcome[0](outcome[1])
        except Exception:           # the executor has shut down meanwhile: nobody awaits it
            pass
    threading.Thread(target=run, name="kin_dyn_service", daemon=True).start()
    return future


def request_call(source, request):
    """The :class:`_Call` of a service request: ``source`` is a :class:`Snapshot`;
    ``request`` has ``use_measured_state``, ``state`` and optionally ``representation``
    (empty or absent: the node's default), the representation the call's query runs in.
    ValueError naming the problem."""
    kd, measured, default_rep, prefix = source[:4]
    if kd is None:
        raise ValueError("no robot model loaded yet (waiting for robot_description)")
    rep = parse_representation(getattr(request, "representation", "") or default_rep)
    if request.use_measured_state:
        if measured is None:
            raise ValueError("no measured state yet (no tick computed); set "
                             "use_measured_state=false and pass a state")
        nu = change_base_representation(measured.base_vel, measured.w_H_b,
                                        measured.representation, rep)
        return _Call(kd, rep, prefix, measured.w_H_b, measured.s, nu, measured.s_dot)
    w_H_b, s, s_dot = explicit_state(kd, request.state)
    return _Call(kd, rep, prefix, w_H_b, s, twist_to_array(request.state.base_twist), s_dot)


@dataclass(frozen=True)
class _Call:
    """One request's model (the node's, read only: the query copies it), the representation
    ``rep`` of the answer and of ``nu`` (6,), the base velocity, and the state."""

    kd: object
    rep: object
    prefix: str
    w_H_b: np.ndarray
    s: np.ndarray
    nu: np.ndarray
    s_dot: np.ndarray

    def frame(self, name):
        """Model frame of a requested name, with or without the frame prefix."""
        return model_frame(self.kd, self.prefix, name)
