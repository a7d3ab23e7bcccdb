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

Inertias and joint screws are mapped to C with the (4, 4) poses themselves, by congruence
``T X T^T``: a spatial inertia as its pseudo-inertia matrix (symmetric) and a screw as its
Plücker matrix (antisymmetric), see :func:`pseudo_inertia` and :func:`plucker_matrix`. A
congruence keeps the symmetric and antisymmetric parts apart, so each body carries the sum of
its two (:func:`body_terms`, built with the model) and two batched (4, 4) products map all
inertias and joint screws, instead of building (6, 6) transforms and multiplying by them.

Single-frame calls (Jacobians, forward kinematics of one frame) walk only the path from the
base to the frame: :func:`chain_poses`, then :func:`path_columns` for the Jacobian columns.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .quaternions import rotations_to_quaternions
from .spatial import cross3, skew

__all__ = ["Kinematics", "forward_pass", "body_poses", "chain_poses", "chain_product",
           "path_columns", "joint_axes", "body_terms", "pseudo_inertia", "plucker_matrix",
           "transform_wrench",
           "local_transforms", "joint_basis", "quaternion_basis", "joint_quaternions",
           "spatial_inertia"]

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

    @property
    def com(self):
        """Centre of mass in C (3,), from the base's composite inertia: h / m."""
        ic = self.composite[0]
        return ic.take(_FIRST_MOMENT) / ic[0, 0]

    @cached_property
    def composite_subspaces(self):
        """(n, 6) ``Ic_j S_j``: the momentum of joint j's subtree per unit joint velocity (the
        CRBA's force columns, shared by the mass matrix, gravity and the momentum)."""
        return (self.composite[1:] @ self.subspaces[:, :, None])[:, :, 0]


# h from a flattened spatial inertia: entries (5, 1), (3, 2), (4, 0) of its h^ block [3:, :3]
_FIRST_MOMENT = np.array([31, 20, 24])


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


def quaternion_basis(x, screw, revolute):
    """(n, 3, 4) basis with ``quat(X exp(S q)) = sum_k c_k B_k`` for c = [1, sin q/2, cos q/2]:
    the unit quaternion (x, y, z, w) of each joint's parent_link_H_child_link, whose
    rotation at position q is ``R_X Rot(w, q)`` (``x`` (n, 4, 4) the joint's origin X, ``w``
    the screw's unit axis). With ``q_X`` the origin's quaternion, ``Rot(w, q)``'s is
    ``(w sin q/2, cos q/2)``, so the product is ``sin q/2 (q_X * (w, 0)) + cos q/2 q_X``; a
    prismatic joint keeps ``q_X`` (its constant term). No sign convention (see
    :func:`joint_quaternions`)."""
    qx = rotations_to_quaternions(x[:, :3, :3])
    w = screw[:, 3:]
    rev = revolute[:, None]
    sin_term = np.concatenate([qx[:, 3:] * w + cross3(qx[:, :3], w),    # q_X * (w, 0)
                               -np.einsum("ij,ij->i", qx[:, :3], w)[:, None]], axis=1)
    out = np.zeros((len(screw), 3, 4))
    out[:, 0] = np.where(rev, 0.0, qx)
    out[:, 1] = np.where(rev, sin_term, 0.0)
    out[:, 2] = np.where(rev, qx, 0.0)
    return out


def joint_quaternions(basis, q):
    """Unit quaternions (k, 4) (x, y, z, w), w >= 0, of k joints' parent_link_H_child_link at
    positions q (k,), from their :func:`quaternion_basis` (k, 3, 4): what /tf carries,
    without converting rotation matrices (one sin, one cos and one batched product for all
    joints instead of Shepperd's method on k matrices)."""
    coef = np.empty((len(q), 1, 3))
    coef[:, 0, 0] = 1.0
    half = 0.5 * q
    np.sin(half, out=coef[:, 0, 1])
    np.cos(half, out=coef[:, 0, 2])
    quat = (coef @ basis)[:, 0]
    quat *= np.where(quat[:, 3:] < 0.0, -1.0, 1.0)
    return quat


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


def local_transforms(basis, q, out=None):
    """parent_body_H_body (k, 4, 4) of k joints with ``basis`` (k, 4, 16) at positions q (k,),
    written to ``out`` (k, 4, 4, C-contiguous) when given."""
    coef = np.empty((len(q), 1, 4))
    coef[:, 0, 0] = 1.0
    np.sin(q, out=coef[:, 0, 1])
    np.cos(q, out=coef[:, 0, 2])
    coef[:, 0, 3] = q
    if out is None:
        return (coef @ basis).reshape(-1, 4, 4)
    np.matmul(coef, basis, out=out.reshape(-1, 1, 16))
    return out


def body_poses(model, w_R_b, q):
    """C_H_body for every body (N, 4, 4), and parent_body_H_body per joint (n, 4, 4).

    ``q`` (n,) in internal joint order; ``w_R_b`` (3, 3) base orientation."""
    n_bodies = len(model.parent)
    h = np.empty((n_bodies + 1, 4, 4))
    h[0] = h[-1] = _EYE4                    # the base (rotated below) and the world node
    h[0, :3, :3] = w_R_b
    local = local_transforms(model.basis, q, out=h[1:-1])
    for anc in model.jumps:
        h = h.take(anc, axis=0) @ h
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
    mapped = (poses @ model.body_terms @ np.swapaxes(poses, 1, 2)).reshape(len(poses), 16)  # C
    inertia = mapped.dot(_PSEUDO_TO_SPATIAL)             # (N, 36), from the symmetric parts
    sub = mapped[1:].dot(_PLUCKER_TO_SCREW)              # (n, 6), from the antisymmetric parts
    sub *= model.screw_unscale
    composite = model.ancestor.dot(inertia)
    return Kinematics(w_H_b[:3, 3].copy(), poses, local, sub, inertia.reshape(-1, 6, 6),
                      composite.reshape(-1, 6, 6))


def body_terms(inertia, screw):
    """``(X, unscale)`` of :func:`forward_pass`, built once with the model
    (``Model.body_terms``, ``Model.screw_unscale``) from the body inertias (N, 6, 6) and the
    joint screws (n, 6), both in the body frames.

    ``X`` (N, 4, 4), in each body's frame: the body's pseudo-inertia J (symmetric) plus ``s``
    times the Plücker matrix of the joint that moves it (antisymmetric; none for the base).
    The scale s, a power of two near J's largest entry (1 for a massless body), gives both
    parts the same size, so that neither loses digits to the other in ``T X T^T``; the screw
    read back from the antisymmetric part is multiplied by ``unscale`` (n, 1) = 1 / s (exact).
    """
    x = pseudo_inertia(inertia)
    size = np.abs(x[1:]).max(axis=(1, 2), initial=0.0)
    scale = np.exp2(np.round(np.log2(np.where(size > 0.0, size, 1.0))))
    x[1:] += scale[:, None, None] * plucker_matrix(screw)
    return x, (1.0 / scale)[:, None]


def pseudo_inertia(inertia):
    """Pseudo-inertia ``J = [[Sigma, h], [h^T, m]]`` (..., 4, 4) of spatial inertias
    ``[[m 1, -h^], [h^, Ibar]]`` (..., 6, 6), with ``Sigma = int x x^T dm = tr(Ibar)/2 1 - Ibar``.

    J is the second moment of the mass distribution in homogeneous coordinates, so a rigid
    transform T = A_H_B (4, 4) maps it from B to A by congruence: ``J_A = T J_B T^T``
    (Wensing, Kim, Slotine 2017). :data:`_PSEUDO_TO_SPATIAL` maps it back."""
    ibar = inertia[..., 3:, 3:]
    out = np.zeros(inertia.shape[:-2] + (4, 4))
    out[..., :3, :3] = 0.5 * np.trace(ibar, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - ibar
    out[..., :3, 3] = out[..., 3, :3] = inertia.reshape(inertia.shape[:-2] + (36,))[
        ..., _FIRST_MOMENT]
    out[..., 3, 3] = inertia[..., 0, 0]
    return out


def plucker_matrix(screw):
    """Plücker matrix ``L = [[-v^, -w], [w^T, 0]]`` (..., 4, 4) of twists S = [v; w] (..., 6).

    For a joint axis through the point r with direction w, ``L = R W^T - W R^T`` with the
    homogeneous point R = [r; 1] and direction W = [w; 0] (then v = r x w); as points and
    directions map by T = A_H_B, so does L by congruence, ``L_A = T L_B T^T``, which is the
    adjoint map ``S_A = A_X_B S_B`` of the twist (it holds for any twist, prismatic included).
    :data:`_PLUCKER_TO_SCREW` maps it back."""
    out = np.zeros(screw.shape[:-1] + (4, 4))
    out[..., :3, :3] = -skew(screw[..., :3])
    out[..., :3, 3] = -screw[..., 3:]
    out[..., 3, :3] = screw[..., 3:]
    return out


def transform_wrench(a_h_b, wrench):
    """``A_X^B w`` (6,): the wrench ``w = [f; tau]`` (6,) about B's origin in B's axes, about A's
    origin in A's axes (:func:`.spatial.wrench_transform` without building the (6, 6) matrix).
    The force's line, with direction f and moment tau, is the twist [tau; f] of
    :func:`plucker_matrix` and maps by congruence with ``a_h_b`` (4, 4)."""
    line = wrench.dot(_WRENCH_TO_PLUCKER).reshape(4, 4)
    return a_h_b.dot(line).dot(a_h_b.T).reshape(16).dot(_PLUCKER_TO_WRENCH)


def _inverse_maps():
    """(16, 36) flattened pseudo-inertia -> flattened spatial inertia, and (16, 6) flattened
    Plücker matrix -> screw: the inverses of :func:`pseudo_inertia` and :func:`plucker_matrix`,
    linear, from the symmetric (resp. antisymmetric) part of each basis matrix."""
    to_spatial, to_screw = np.zeros((16, 6, 6)), np.zeros((16, 6))
    for k, e in enumerate(np.eye(16).reshape(16, 4, 4)):
        sym, skw = 0.5 * (e + e.T), 0.5 * (e - e.T)
        sigma = sym[:3, :3]
        to_spatial[k] = spatial_inertia(sym[3, 3], sym[:3, 3], np.trace(sigma) * np.eye(3) - sigma)
        to_screw[k, :3] = -skw[(2, 0, 1), (1, 2, 0)]          # v = -vee(L[:3, :3])
        to_screw[k, 3:] = skw[3, :3]
    return to_spatial.reshape(16, 36), to_screw


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


_PSEUDO_TO_SPATIAL, _PLUCKER_TO_SCREW = _inverse_maps()
_SWAP = [3, 4, 5, 0, 1, 2]                      # wrench [f; tau] <-> its line's twist [tau; f]
_WRENCH_TO_PLUCKER = plucker_matrix(np.eye(6)[_SWAP]).reshape(6, 16)
_PLUCKER_TO_WRENCH = _PLUCKER_TO_SCREW[:, _SWAP]
