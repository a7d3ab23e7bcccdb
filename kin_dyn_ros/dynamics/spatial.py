"""Spatial algebra on NumPy arrays: rotations, homogeneous transforms, 6D cross products.

Conventions (iDynTree theory: Traversaro, Saccon, Multibody dynamics notation):

- ``A_H_B`` is the (4, 4) homogeneous transform of frame B in frame A; ``A_R_B`` its rotation.
- 6D vectors are ordered **[linear; angular]**, like iDynTree, Pinocchio, adam and the ROS
  Twist/Wrench messages (Featherstone's book and spatial_v2 use [angular; linear]).
  A motion vector is ``[v; w]``, a force vector (wrench) is ``[f; tau]``.
- Every function accepts a leading batch dimension where its docstring says ``(..., k)``.
"""

import numpy as np

__all__ = [
    "skew", "vee", "rpy_to_matrix", "so3_exp", "homogeneous", "inverse_homogeneous",
    "cross3", "motion_cross_matrix", "motion_cross", "force_cross_matrix", "velocity_transform",
    "wrench_transform",
]

# Small-matrix products: ``a.dot(b)`` costs about a third of ``a @ b`` on 2-D arrays of this
# size (NumPy's matmul ufunc set-up dominates), so the per-call paths use ``dot`` on 2-D
# operands and keep ``@`` for batched (3-D) products.


# skew(u) = (u @ _SKEW).reshape(3, 3): one matrix product, also for a batch of vectors
_SKEW = np.zeros((3, 9))
_SKEW[2, 1], _SKEW[1, 2], _SKEW[2, 3] = -1.0, 1.0, 1.0     # (0,1)=-u2 (0,2)=u1 (1,0)=u2
_SKEW[0, 5], _SKEW[1, 6], _SKEW[0, 7] = -1.0, -1.0, 1.0    # (1,2)=-u0 (2,0)=-u1 (2,1)=u0


def skew(u):
    """Skew-symmetric matrix ``u^`` with ``u^ v = u x v``.

    Parameters
    ----------
    u : array_like, shape (..., 3)

    Returns
    -------
    ndarray, shape (..., 3, 3)
    """
    u = np.asarray(u, dtype=float)
    return u.dot(_SKEW).reshape(u.shape[:-1] + (3, 3))


def vee(m):
    """Inverse of :func:`skew` (uses the antisymmetric part). Shape (..., 3, 3) -> (..., 3)."""
    m = np.asarray(m, dtype=float)
    return 0.5 * np.stack([m[..., 2, 1] - m[..., 1, 2],
                           m[..., 0, 2] - m[..., 2, 0],
                           m[..., 1, 0] - m[..., 0, 1]], axis=-1)


def cross3(a, b):
    """Cross product of (..., 3) arrays; faster than ``np.cross`` for small batches."""
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def rpy_to_matrix(rpy):
    """URDF roll-pitch-yaw (fixed axes X, then Y, then Z) to a rotation: Rz(y) Ry(p) Rx(r)."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def so3_exp(w):
    """Exponential map of SO(3): rotation by angle ``|w|`` about ``w``. Shape (3,) -> (3, 3)."""
    w = np.asarray(w, dtype=float)
    theta = np.linalg.norm(w)
    k = skew(w)
    if theta < 1e-8:  # second-order Taylor expansion, exact to double precision here
        return np.eye(3) + k + 0.5 * k @ k
    return (np.eye(3) + np.sin(theta) / theta * k
            + (1.0 - np.cos(theta)) / theta ** 2 * k @ k)


def homogeneous(rotation, translation):
    """Build ``A_H_B`` (4, 4) from ``A_R_B`` (3, 3) and ``A_o_B`` (3,)."""
    h = np.eye(4)
    h[:3, :3] = rotation
    h[:3, 3] = translation
    return h


def inverse_homogeneous(a_h_b):
    """``B_H_A`` from ``A_H_B``; works on (..., 4, 4)."""
    a_h_b = np.asarray(a_h_b, dtype=float)
    out = np.zeros_like(a_h_b)
    rt = np.swapaxes(a_h_b[..., :3, :3], -1, -2)
    out[..., :3, :3] = rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", rt, a_h_b[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def _motion_cross_map():
    """(6, 36) with ``motion_cross_matrix(v) = (v @ map).reshape(6, 6)`` (it is linear in v)."""
    out = np.zeros((6, 6, 6))
    for i, e in enumerate(np.eye(6)):
        out[i, :3, :3] = out[i, 3:, 3:] = skew(e[3:])
        out[i, :3, 3:] = skew(e[:3])
    return out.reshape(6, 36)


_MOTION_CROSS = _motion_cross_map()


def motion_cross_matrix(v):
    """Matrix of ``v x (.)`` on motion vectors, ``[[w^, v^], [0, w^]]`` for ``v = [v; w]``.
    (..., 6) -> (..., 6, 6), one matrix product."""
    v = np.asarray(v, dtype=float)
    return v.dot(_MOTION_CROSS).reshape(v.shape[:-1] + (6, 6))


def motion_cross(v, u):
    """Row-wise ``v x u`` of motion vectors, (k, 6) and (k, 6) -> (k, 6)."""
    return (motion_cross_matrix(v) @ u[:, :, None])[:, :, 0]


def force_cross_matrix(v):
    """Matrix of ``v x* (.)`` on force vectors, ``-motion_cross_matrix(v)^T``."""
    return -np.swapaxes(motion_cross_matrix(v), -1, -2)


def velocity_transform(a_h_b):
    """``A_X_B`` (6, 6): maps a motion vector expressed in B to A, ``[[R, o^ R], [0, R]]``."""
    r, o = a_h_b[:3, :3], a_h_b[:3, 3]
    x = np.zeros((6, 6))
    x[:3, :3] = r
    x[3:, 3:] = r
    x[:3, 3:] = skew(o).dot(r)
    return x


def wrench_transform(a_h_b):
    """``A_X^B`` (6, 6): maps a wrench expressed in B (about B's origin) to A, ``[[R, 0], [o^ R, R]]``."""
    r, o = a_h_b[:3, :3], a_h_b[:3, 3]
    x = np.zeros((6, 6))
    x[:3, :3] = r
    x[3:, 3:] = r
    x[3:, :3] = skew(o).dot(r)
    return x
