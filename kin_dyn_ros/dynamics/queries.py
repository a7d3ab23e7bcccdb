"""What the node's services compute, as plain functions of a model and a state (no ROS).

Each query takes a :class:`~.computations.KinDynComputations` ``kd`` (in the requested
velocity representation), the floating-base state ``w_H_b`` (4, 4), ``s`` (n,) and the
query's own arguments, and returns a dict of NumPy arrays and plain values: what crosses a
process boundary (the node runs them in a worker process, :mod:`kin_dyn_ros.
equilibrium_worker`, so that its tick never waits for them) and what its services turn into
responses. Matrices are (rows, cols), columns the 6 base then n joint coordinates; base
velocity ``nu`` (6,) [linear; angular] in ``kd``'s representation.

:data:`QUERIES` names the functions a worker may run.
"""

import numpy as np

from .contacts import contact_poses, plane_points, support_polygon
from .equilibrium import com_equilibrium, equilibrium_torques

__all__ = ["jacobian", "mass_matrix", "dynamics", "dynamics_horizon", "equilibrium_check",
           "QUERIES", "run"]


def jacobian(kd, w_H_b, s, frame):
    """{"jacobian": (6, 6 + n)} of ``frame`` (a link of the model)."""
    return {"jacobian": kd.jacobian(frame, w_H_b, s)}


def mass_matrix(kd, w_H_b, s):
    """{"mass_matrix": (6 + n, 6 + n)}."""
    return {"mass_matrix": kd.mass_matrix(w_H_b, s)}


def dynamics(kd, w_H_b, s, nu, s_dot, frames):
    """The terms of M(q) dnu + h(q, nu) = S tau + sum J^T f at one state: mass matrix,
    bias forces h (6 + n,), gravity forces g (6 + n,), centroidal momentum matrix
    (6, 6 + n), CoM (3,) [m] and its Jacobian (3, 6 + n), and the Jacobian (6, 6 + n) of each
    link of ``frames`` stacked (k, 6, 6 + n)."""
    jacobians = [kd.jacobian(f, w_H_b, s) for f in frames]
    n = 6 + kd.NDoF
    return {
        "mass_matrix": kd.mass_matrix(w_H_b, s),
        "bias_forces": kd.bias_force(w_H_b, s, nu, s_dot),
        "gravity_forces": kd.gravity_term(w_H_b, s),
        "centroidal_momentum_matrix": kd.centroidal_momentum_matrix(w_H_b, s),
        "com": kd.CoM_position(w_H_b, s),
        "com_jacobian": kd.CoM_jacobian(w_H_b, s),
        "jacobians": np.reshape(jacobians, (len(frames), 6, n)),
    }


def dynamics_horizon(kd, w_H_b, s, nu, s_dot, frames, quantities):
    """``quantities`` of :data:`.horizon.QUANTITIES` at K states ``w_H_b`` (K, 4, 4), ``s``,
    ``s_dot`` (K, n), ``nu`` (K, 6), with the frame quantities of the links ``frames``:
    {name: (K, ...)} (:meth:`~.computations.KinDynComputations.dynamics_horizon`)."""
    return kd.dynamics_horizon(w_H_b, s, nu, s_dot, frames, quantities)


def equilibrium_check(kd, w_H_b, s, contacts):
    """Static equilibrium of the robot at ``(w_H_b, s)`` on ``contacts`` (Contact objects,
    world frame from the configuration): the support polygon (its vertices (m, 3) on the
    plane through the mean height of the contact points, along gravity), the CoM (3,), the
    CoM's equilibrium (feasible, margin [m], message) and the equilibrium torques (feasible,
    torque margin, tau (n,) or None, contact points (p, 3) with their contact index (p,) and
    forces (p, 3) or None)."""
    poses = contact_poses(kd, w_H_b, s, contacts)
    polygon = support_polygon(contacts, poses, kd.gravity)
    com = kd.CoM_position(w_H_b, s)
    eq = com_equilibrium(contacts, com, kd.get_total_mass(), kd.gravity, poses,
                         polygon=polygon)
    tq = equilibrium_torques(kd, w_H_b, s, contacts)
    up = -kd.gravity / np.linalg.norm(kd.gravity)
    points = np.concatenate(tq.points)
    height = float(np.mean(points @ up))
    return {
        "message": "; ".join(m for m in (eq.message, tq.message) if m),
        "feasible": bool(eq.feasible), "margin": float(eq.margin), "com": com,
        "polygon": plane_points(polygon.vertices, polygon.axes, up, height),
        "torques_feasible": bool(tq.feasible), "torque_margin": float(tq.torque_margin),
        "tau": tq.tau, "points": points,
        "point_contacts": np.repeat(np.arange(len(tq.points)), [len(p) for p in tq.points]),
        "forces": None if tq.forces is None else np.concatenate(tq.forces),
    }


QUERIES = {f.__name__: f for f in (jacobian, mass_matrix, dynamics, dynamics_horizon,
                                   equilibrium_check)}


def run(kd, name, representation, w_H_b, s, *args):
    """Query ``name`` of :data:`QUERIES` on a copy of ``kd`` in ``representation`` (so that
    concurrent queries and the caller's own use of ``kd`` never interfere), whose calls share
    one forward pass (``keep_kinematics``); ValueError for an unknown name or what the query
    raises."""
    query = QUERIES.get(name)
    if query is None:
        raise ValueError(f"unknown query '{name}'")
    kd = kd.sharing_model(keep_kinematics=True)
    kd.set_frame_velocity_representation(representation)
    return query(kd, w_H_b, s, *args)
