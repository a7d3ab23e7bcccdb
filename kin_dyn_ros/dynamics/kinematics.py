"""One forward kinematics pass: body poses, motion subspaces and spatial inertias, vectorised.

All quantities are expressed in the frame ``C``: world axes, origin at the base origin (the
inertial frame that coincides with the base position at this instant). Using ``C`` instead of
the world origin keeps the numbers well conditioned when the robot is far from the origin;
spatial velocities in ``C`` are right-trivialised (inertial-fixed) velocities of that fixed
frame, and at this instant the base's one equals its MIXED velocity.

Poses are composed by pointer jumping over the ancestor tables of the model: O(log depth)
batched matrix products instead of one Python step per body. Each joint's local transform
``X0 exp(S q)`` is a fixed linear combination of four constant (4, 4) matrices with the
coefficients ``[1, sin q, cos q, q]`` (see :func:`joint_basis`).

Single-frame calls (Jacobians, forward kinematics of one frame) walk only the path from the
base to the frame: :func:`chain_poses`, then :func:`path_columns` for the Jacobian columns.
"""

from dataclasses import dataclass

import numpy as np

from .spatial import cross3, skew

__all__ = ["Kinematics", "forward_pass", "body_poses", "chain_poses", "chain_product",
           "path_columns", "joint_axes",
           "local_transforms", "joint_basis", "spatial_inertia"]

_EYE4 = np.eye(4)
# Levi-Civita symbol (3, 9): (a x b)_i = _LEVI_CIVITA[i] . flatten(outer(a, b))
_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[1, 0, 2] = _LEVI_CIVITA[2, 1, 0] = -1.0
_LEVI_CIVITA = _LEVI_CIVITA.reshape(3, 9)

@dataclass
class Kinematics:
    """Result of :func:`forward_pass` for one configuration (frame C, see module docstring).

    ``base_position`` (3,) world; ``poses`` (N, 4, 4) C_H_body; ``local`` (n, 4, 4)
    parent_body_H_body of each joint; ``subspaces`` (n, 6) joint
    screws in C; ``inertia`` (N, 6, 6) body spatial inertias in C; ``composite`` (N, 6, 6)
    the same summed over each body's subtree (CRBA composite inertias).
    """

    base_position: np.ndarray
    poses: np.ndarray
    local: np.ndarray
    subspaces: np.ndarray
    inertia: np.ndarray
    composite: np.ndarray
    mass: float

    @property
    def com(self):
        """Centre of mass in C (3,), from the base's composite inertia."""
        ic = self.composite[0]
        return np.array([ic[5, 1], ic[3, 2], ic[4, 0]]) / self.mass   # h^ block = [3:, :3]


def joint_basis(x0, screw, revolute):
    """(n, 4, 16) basis with ``X0 exp(S q) = sum_k c_k B_k`` for c = [1, sin q, cos q, q]
    (each B_k a flattened (4, 4); the constant one carries the row [0, 0, 0, 1]).

    For a unit rotation axis w and S = [v; w]: ``exp(S q) = [R, p]`` with
    ``R = I + sin K + (1 - cos) K^2`` and ``p = q v + (1 - cos)(w x v) + (q - sin)(w x (w x v))``
    (K = w^). Collecting the terms in 1, sin, cos and q gives the four constant matrices.
    For a prismatic joint w = 0 and only ``p = q v`` remains (its sin and cos terms vanish).
    """
    n = len(screw)
    v, w = screw[:, :3], screw[:, 3:]
    k = skew(w) * revolute[:, None, None]
    kk = k @ k
    wv = cross3(w, v) * revolute[:, None]
    wwv = cross3(w, wv)
    parts = np.zeros((n, 4, 4, 4))
    parts[:, 0] = np.eye(4)
    parts[:, 0, :3, :3] += kk                 # constant: I + K^2, p = w x v
    parts[:, 0, :3, 3] = wv
    parts[:, 1, :3, :3] = k                   # sin: K, p = -(w x (w x v))
    parts[:, 1, :3, 3] = -wwv
    parts[:, 2, :3, :3] = -kk                 # cos: -K^2, p = -(w x v)
    parts[:, 2, :3, 3] = -wv
    parts[:, 3, :3, 3] = v + wwv              # q: p = v + w x (w x v)
    parts[:, 1:, 3, 3] = 0.0                   # only the constant term keeps [0, 0, 0, 1]
    return (x0[:, None] @ parts).reshape(n, 4, 16)


def joint_axes(screw, revolute):
    """(n, 4, 3) each joint's axis in its body frame, as homogeneous columns
    ``[[r, w, v_par], [1, 0, 0]]``: a point r on the axis, the direction w and the part of v
    along w, so that ``S = [r x w + v_par; w]`` (revolute: r = w x v; prismatic: r = w = 0,
    v_par = v). Any rigid transform then maps the screw by mapping r as a point, w and v_par
    as directions (see :func:`path_columns`)."""
    v, w = screw[:, :3], screw[:, 3:]
    rev = revolute[:, None]
    out = np.zeros((len(screw), 4, 3))
    out[:, :3, 0] = np.where(rev, cross3(w, v), 0.0)
    out[:, 3, 0] = 1.0
    out[:, :3, 1] = w
    out[:, :3, 2] = np.where(rev, np.sum(w * v, axis=1, keepdims=True) * w, v)
    return out


def local_transforms(basis, q):
    """parent_body_H_body (k, 4, 4) of k joints with ``basis`` (k, 4, 16) at positions q (k,)."""
    coef = np.empty((len(q), 1, 4))
    coef[:, 0, 0] = 1.0
    np.sin(q, out=coef[:, 0, 1])
    np.cos(q, out=coef[:, 0, 2])
    coef[:, 0, 3] = q
    return (coef @ basis).reshape(-1, 4, 4)


def body_poses(model, w_R_b, q):
    """C_H_body for every body (N, 4, 4), and parent_body_H_body per joint (n, 4, 4).

    ``q`` (n,) in internal joint order; ``w_R_b`` (3, 3) base orientation."""
    n_bodies = len(model.parent)
    h = np.zeros((n_bodies + 1, 4, 4))
    h[-1] = np.eye(4)
    h[0, :3, :3] = w_R_b
    h[0, 3, 3] = 1.0
    if n_bodies > 1:
        h[1:-1] = local_transforms(model.basis, q)
    local = h[1:-1]
    for anc in model.jumps:
        h = h[anc] @ h
    return h[:-1], local


def chain_poses(model, w_R_b, s, body):
    """C_H_body of the base and of every body on the path to ``body``, (d + 1, 4, 4).

    Only the d joints between the base and ``body`` are evaluated (``model.paths``), which
    makes single-frame kinematics independent of the rest of the tree. ``s`` (n,) is in the
    user's joint order (``joints_name_list``); ``w_R_b`` None means the identity.
    """
    local = local_transforms(model.path_basis[body], s[model.path_coordinates[body]])
    h = _EYE4.copy()
    if w_R_b is not None:
        h[:3, :3] = w_R_b
    out = [h]
    for x in local:
        h = h.dot(x)
        out.append(h)
    return np.array(out)


def chain_product(model, w_R_b, s, body):
    """C_H_body (4, 4) of one body: one batched product of consecutive pairs of the path's
    transforms, then a short loop over the pairs. ``s`` (n,) in the user's joint order."""
    local = local_transforms(model.path_basis[body], s[model.path_coordinates[body]])
    even = len(local) - len(local) % 2
    h = np.eye(4)
    h[:3, :3] = w_R_b
    for pair in local[0:even:2] @ local[1:even:2]:
        h = h.dot(pair)
    return h.dot(local[-1]) if even < len(local) else h


def path_columns(model, poses, body, t_H_c):
    """Jacobian columns (6, d) of the d joints on the path to ``body``, expressed in a frame T.

    ``poses`` (d + 1, 4, 4) from :func:`chain_poses`; ``t_H_c`` (4, 4) the pose of C in T.
    Each joint's axis (:func:`joint_axes`) is mapped to T, and its screw there is
    ``[r x w + v_par; w]``: the velocity of the point at T's origin and the angular
    velocity, in T's axes, per unit joint velocity.
    """
    axes = t_H_c[:3].dot(poses[1:] @ model.path_axes[body])     # (3, d, 3): r, w, v_par in T
    outer = axes[:, None, :, 0] * axes[None, :, :, 1]            # (3, 3, d): r_i w_j
    out = np.empty((6, len(poses) - 1))
    out[:3] = _LEVI_CIVITA.dot(outer.reshape(9, -1)) + axes[:, :, 2]
    out[3:] = axes[:, :, 1]
    return out


def forward_pass(model, w_H_b, q):
    """Kinematics of configuration (w_H_b (4, 4), q (n,) internal order)."""
    poses, local = body_poses(model, w_H_b[:3, :3], q)
    xm = motion_transforms(poses)
    sub = (xm[1:] @ model.screw[:, :, None])[:, :, 0]
    xf = _force_from_motion(xm)
    inertia = xf @ model.inertia @ np.swapaxes(xf, 1, 2)
    composite = (model.ancestor @ inertia.reshape(-1, 36)).reshape(-1, 6, 6)
    return Kinematics(w_H_b[:3, 3].copy(), poses, local, sub, inertia, composite,
                      model.total_mass)


def motion_transforms(poses):
    """C_X_body (N, 6, 6) = [[R, p^ R], [0, R]] for motion vectors."""
    rot, pos = poses[:, :3, :3], poses[:, :3, 3]
    x = np.zeros((len(poses), 6, 6))
    x[:, :3, :3] = rot
    x[:, 3:, 3:] = rot
    x[:, :3, 3:] = skew(pos) @ rot
    return x


def _force_from_motion(xm):
    """C_X^body = [[R, 0], [p^ R, R]] from the motion transform."""
    xf = np.zeros_like(xm)
    xf[:, :3, :3] = xm[:, :3, :3]
    xf[:, 3:, 3:] = xm[:, 3:, 3:]
    xf[:, 3:, :3] = xm[:, :3, 3:]
    return xf


def spatial_inertia(mass, first_moment, rot_inertia):
    """(..., 6, 6) ``[[m I, -h^], [h^, Ibar]]`` from mass, mass * CoM and the rotational
    inertia about the frame origin (all in the same frame)."""
    out = np.zeros(np.shape(mass) + (6, 6))
    out[..., :3, :3] = np.eye(3) * np.asarray(mass)[..., None, None]
    hx = skew(first_moment)
    out[..., :3, 3:] = -hx
    out[..., 3:, :3] = hx
    out[..., 3:, 3:] = rot_inertia
    return out
