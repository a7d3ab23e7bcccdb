"""``~/get_dynamics_horizon``: a planner's K states in one call (:mod:`..dynamics.horizon`).

Served where the other planners' services are (the services' process, or the node's with
``services_process: false``), off the tick's path. A request carries the states as flat
row-major arrays with the joint names once (``GetDynamicsHorizon.srv``): a planner fills
each field from one NumPy array, and the answer reads each into one with its
``layout.dim``. Requests of more than ``horizon_max_states`` states, ragged arrays, unknown
joints, frames or quantities, non-finite values and non-unit quaternions get
``success = false`` and a message naming the first problem.
"""

import numpy as np
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from kin_dyn_ros_interfaces.srv import GetDynamicsHorizon

from .conversions import float_array
from .services import COLUMN_BASE, failed_response, joint_columns, model_frame
from ..dynamics.horizon import shapes
from ..dynamics.quaternions import QUATERNION_TOLERANCE, unit_rotations
from ..dynamics.representations import parse_representation

__all__ = ["HorizonService", "SERVED", "horizon_request", "poses_to_matrices"]

# what the service answers (the core's quantities but the full dJ/dt), in the response's order
SERVED = ("mass_matrix", "bias_forces", "gravity_forces", "centroidal_momentum_matrix", "com",
          "com_jacobian", "frame_poses", "jacobians", "jacobian_dot_nu")
_LABELS = {"mass_matrix": ("state", "row", "column"), "bias_forces": ("state", "row"),
           "gravity_forces": ("state", "row"), "centroidal_momentum_matrix":
           ("state", "row", "column"), "com": ("state", "axis"),
           "com_jacobian": ("state", "row", "column"),
           "frame_poses": ("state", "frame", "row", "column"),
           "jacobians": ("state", "frame", "row", "column"),
           "jacobian_dot_nu": ("state", "frame", "row")}


class HorizonService:
    """``<base>/get_dynamics_horizon`` on ``node``. ``source()`` returns the current
    :class:`.services.Snapshot` (its model, default representation, frame prefix and
    ``horizon_max_states``); ``queries`` computes (the QueryWorker interface)."""

    def __init__(self, node, source, queries, base="~"):
        self._source, self._queries = source, queries
        self._logger = node.get_logger()
        self.service = node.create_service(GetDynamicsHorizon, f"{base}/get_dynamics_horizon",
                                           self._answer)

    def _answer(self, request, response):
        try:
            source = self._source()
            if source.kd is None:
                raise ValueError("no robot model loaded yet (waiting for robot_description)")
            kd = source.kd
            rep, state, frames, quantities = horizon_request(
                kd, request, source.representation, source.prefix, source.horizon_max_states)
            values = self._queries.call(kd, "dynamics_horizon", rep, *state, frames,
                                        quantities)
            fill_response(response, kd, len(state[0]), request.frames, values)
        except Exception as exc:  # never throw from a callback: answer and go on
            response = failed_response(GetDynamicsHorizon, self._logger, exc)
        return response


def _flat(name, values, width, count=None):
    """``values`` (a float64[] field) as (K, width); K = ``count`` or len // width.
    ValueError naming the field, its length and what was expected, or a NaN or inf."""
    arr = np.asarray(values, dtype=float)
    k = len(arr) // width if count is None else count
    if width == 0 or len(arr) != k * width:
        expect = f"K x {width}" if count is None else f"{k} x {width} = {k * width}"
        raise ValueError(f"{name} has {len(arr)} values, expected {expect}")
    arr = arr.reshape(k, width)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise ValueError(f"{name} of state {int(np.argmax(bad))} contains NaN or inf")
    return arr


def poses_to_matrices(poses):
    """world_H_base (K, 4, 4) of poses (K, 7) [x y z qx qy qz qw]; ValueError naming the
    first state whose quaternion is not unit (within the single-state check's tolerance)."""
    q = poses[:, 3:]
    n2 = np.einsum("ij,ij->i", q, q)
    bad = np.abs(n2 - 1.0) > QUATERNION_TOLERANCE
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"base_poses of state {k}: quaternion (x, y, z, w) = "
                         f"{q[k].tolist()} has norm {np.sqrt(n2[k]):.6g}: expected a unit "
                         f"quaternion")
    out = np.zeros((len(poses), 4, 4))
    out[:, :3, :3] = unit_rotations(q / np.sqrt(n2)[:, None])
    out[:, :3, 3] = poses[:, :3]
    out[:, 3, 3] = 1.0
    return out


def horizon_request(kd, request, default_rep, prefix, limit):
    """(representation, (w_H_b (K, 4, 4), s (K, n), nu (K, 6), s_dot (K, n)), frames (model
    names), quantities) of a GetDynamicsHorizon request on ``kd``'s model (mimic joints
    filled from their masters); ValueError naming the first problem."""
    rep = parse_representation(request.representation or default_rep)
    quantities = list(request.quantities) or list(SERVED)
    unknown = [q for q in quantities if q not in SERVED]
    if unknown:
        raise ValueError(f"unknown quantities {unknown}: expected some of {list(SERVED)}")
    poses = _flat("base_poses", request.base_poses, 7)
    k = len(poses)
    if k > limit:
        raise ValueError(f"{k} states: more than horizon_max_states = {limit}")
    names = list(request.joint_names)
    columns = joint_columns(kd, names, "joint_names")
    s, s_dot = np.zeros((k, kd.NDoF)), np.zeros((k, kd.NDoF))
    s[:, columns] = _flat("positions", request.positions, len(names), k)
    if len(request.velocities):
        s_dot[:, columns] = _flat("velocities", request.velocities, len(names), k)
    nu = (_flat("base_twists", request.base_twists, 6, k) if len(request.base_twists)
          else np.zeros((k, 6)))
    frames = [model_frame(kd, prefix, f) for f in request.frames]
    missing = [f for f in frames if f not in kd.model.frame_index]
    if missing:
        raise ValueError(f"unknown frames {missing}: not links of the model")
    s, s_dot = kd.fill_mimic(s, s_dot)
    return rep, (poses_to_matrices(poses), s, nu, s_dot), frames, quantities


def multi_array(values, labels):
    """std_msgs/Float64MultiArray of ``values`` (row-major), its shape in ``layout.dim``."""
    msg = Float64MultiArray()
    strides = np.cumprod(values.shape[::-1])[::-1]      # dim i: the product of sizes i..
    msg.layout.dim = [MultiArrayDimension(label=label, size=int(size), stride=int(stride))
                      for label, size, stride in zip(labels, values.shape, strides)]
    msg.data = float_array(values.ravel())
    return msg


def fill_response(response, kd, k, frames, values):
    """The response's fields of the answer ``values`` ({quantity: (K, ...)}) at K states."""
    response.success, response.message, response.num_states = True, "", k
    response.column_names = list(COLUMN_BASE) + kd.joints_name_list
    response.frames = list(frames)
    expected = shapes(k, kd.NDoF, len(frames))
    for name in SERVED:
        if name in values:
            setattr(response, name, multi_array(values[name].reshape(expected[name]),
                                                _LABELS[name]))
