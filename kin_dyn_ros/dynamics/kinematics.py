"""One forward kinematics pass: body poses, motion subspaces and spatial inertias, vectorised.

All quantities are expressed in the frame ``C``: world axes, origin at the base origin (the
inertial frame that coincides with the base position at this instant). Using ``C`` instead of
the world origin keeps the numbers well conditioned when the robot is far from the origin;
spatial velocities in ``C`` are right-trivialised (inertial-fixed) velocities of that fixed
frame, and at this instant the base's one equals its MIXED velocity.

Poses are composed by pointer jumping over the ancestor tables of the model: O(log depth)
batched matrix products instead of one Python step per body. Each joint's local transform
``X0 exp(S q)`` is a fixed linear combination of four constant (3, 4) matrices with the
coefficients ``[1, sin q, cos q, q]`` (see :func:`joint_basis`).
"""

from dataclasses import dataclass

import numpy as np

from .spatial import cross3, skew

__all__ = ["Kinematics", "forward_pass", "body_poses", "chain_poses", "chain_product",
           "chain_subspaces",
           "local_transforms", "joint_basis",
           "motion_cross", "motion_cross_matrices", "spatial_inertia"]

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
    """(n, 4, 12) basis with ``(X0 exp(S q))[:3] = sum_k c_k B_k`` for c = [1, sin q, cos q, q].

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
    return (x0[:, None] @ parts)[:, :, :3, :].reshape(n, 4, 12)


def local_transforms(basis, q):
    """parent_body_H_body (k, 4, 4) of k joints with ``basis`` (k, 4, 12) at positions q (k,)."""
    coef = np.empty((len(q), 1, 4))
    coef[:, 0, 0] = 1.0
    coef[:, 0, 1] = np.sin(q)
    coef[:, 0, 2] = np.cos(q)
    coef[:, 0, 3] = q
    out = np.empty((len(q), 4, 4))
    out[:, :3, :] = (coef @ basis).reshape(-1, 3, 4)
    out[:, 3] = (0.0, 0.0, 0.0, 1.0)
    return out


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
    d = len(model.paths[body])
    out = np.empty((d + 1, 4, 4))
    out[0] = np.eye(4)
    local = local_transforms(model.path_basis[body], s[model.path_coordinates[body]])
    if w_R_b is None:           # the base frame is the world: skip the first product
        out[1:2] = local[:1]
    else:
        out[0, :3, :3] = w_R_b
    for i in range(0 if w_R_b is not None else min(1, d), d):
        np.matmul(out[i], local[i], out=out[i + 1])
    return out


def chain_product(model, w_R_b, s, body):
    """C_H_body (4, 4) of one body: one batched product of consecutive pairs of the path's
    transforms, then a short loop over the pairs. ``s`` (n,) in the user's joint order."""
    local = local_transforms(model.path_basis[body], s[model.path_coordinates[body]])
    even = len(local) - len(local) % 2
    h = np.eye(4)
    h[:3, :3] = w_R_b
    for pair in local[0:even:2] @ local[1:even:2]:
        h = h @ pair
    return h @ local[-1] if even < len(local) else h


def chain_subspaces(model, poses, body):
    """Joint screws in C (d, 6) of the path to ``body``, from :func:`chain_poses`:
    ``[R v + p^ R w; R w]`` for each joint's local screw [v; w]."""
    rs = poses[1:, :3, :3] @ model.screw_columns[model.paths[body]]          # (d, 3, 2)
    lin = rs[:, :, 0] + (skew(poses[1:, :3, 3]) @ rs[:, :, 1:])[:, :, 0]
    return np.concatenate([lin, rs[:, :, 1]], axis=1)


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


def motion_cross(v, u):
    """Row-wise ``v x u`` of motion vectors (k, 6): ``[w x u_lin + v_lin x u_ang; w x u_ang]``
    with ``v = [v_lin; w]``, as skew-matrix products."""
    sk = skew(v.reshape(-1, 2, 3))                          # (k, 2, 3, 3): v_lin^, w^
    wu = sk[:, 1] @ u.reshape(-1, 2, 3).transpose(0, 2, 1)  # (k, 3, 2): w x u_lin, w x u_ang
    lin = wu[:, :, 0] + (sk[:, 0] @ u[:, 3:, None])[:, :, 0]
    return np.concatenate([lin, wu[:, :, 1]], axis=1)


def motion_cross_matrices(v):
    """``v x`` matrices (N, 6, 6) = [[w^, v^], [0, w^]] for motion vectors v (N, 6)."""
    sk = skew(v.reshape(-1, 2, 3))
    out = np.zeros((len(v), 6, 6))
    out[:, :3, :3] = sk[:, 1]
    out[:, 3:, 3:] = sk[:, 1]
    out[:, :3, 3:] = sk[:, 0]
    return out
