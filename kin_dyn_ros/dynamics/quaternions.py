"""Unit quaternions <-> rotation matrices (NumPy, no ROS).

Quaternions are in ROS order ``(x, y, z, w)``; a rotation matrix ``A_R_B`` (3, 3) maps
coordinates in B to coordinates in A.

Why hand-written and not ``scipy.spatial.transform.Rotation``: both give the same numbers
(to 2.3e-16 on random rotations), but Rotation is slower on the per-tick sizes. Best of
5 x 20000 calls, in-process ``timeit`` (SciPy 1.17.1, NumPy 2.4.6, the 2-core test machine):

- matrices -> quaternions, N = 33 (iCub's /tf): :func:`rotations_to_quaternions` 15.8 us,
  ``Rotation.from_matrix(r).as_quat()`` plus the ``w >= 0`` flip 60.0 us (3.8x);
  N = 1: 12.4 us against 48.0 us (3.9x); :func:`rotation_to_quaternion` (one matrix, Python
  floats) 2.3 us.
- one quaternion -> matrix, with the checks below: :func:`quaternion_to_matrix` 7.1 us,
  ``Rotation.from_quat(q).as_matrix()`` 14.5 us (2.0x; 10.3 us without the checks).
"""

import math

import numpy as np

from .checks import finite_array

__all__ = ["QUATERNION_TOLERANCE", "quaternion_to_matrix", "unit_rotations",
           "rotation_to_quaternion", "rotations_to_quaternions"]

# As tf2: a quaternion whose squared norm is further than this from 1 is rejected,
# a closer one is normalised.
QUATERNION_TOLERANCE = 1e-2


def quaternion_to_matrix(x, y, z, w):
    """Rotation matrix (3, 3) of quaternion (x, y, z, w).

    Raises ValueError for NaN/inf, a zero quaternion, or one whose squared norm is
    further than :data:`QUATERNION_TOLERANCE` from 1; a near-unit one is normalised.
    """
    q = finite_array("quaternion", (x, y, z, w))
    n2 = float(q @ q)
    if abs(n2 - 1.0) > QUATERNION_TOLERANCE:
        raise ValueError(f"quaternion (x, y, z, w) = {q.tolist()} has norm {np.sqrt(n2):.6g}: "
                         f"expected a unit quaternion")
    return unit_rotations((q / np.sqrt(n2))[None])[0]


def unit_rotations(q):
    """Rotation matrices (K, 3, 3) of unit quaternions ``q`` (K, 4) (x, y, z, w); the caller
    has checked and normalised them."""
    x, y, z, w = q.T
    return np.stack([
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        axis=1).reshape(-1, 3, 3)


def _shepperd_map():
    """(A (9, 16), b (16,)): the four Shepperd candidates ``4 q_k q`` (x, y, z, w) of a
    rotation matrix are ``r.ravel() @ A + b``, row k of the (4, 4) reshape."""
    a, b = np.zeros((3, 3, 4, 4)), np.zeros((4, 4))
    sym = {(0, 1): (0, 1), (0, 2): (0, 2), (1, 2): (1, 2)}        # q_i q_j terms
    odd = {0: (2, 1), 1: (0, 2), 2: (1, 0)}                      # q_w q_i terms
    for k in range(3):                                           # diagonal: 1 + 2 r_kk - tr
        a[k, k, k, k] = a[k, k, 3, 3] = 1.0
        for j in range(3):
            if j != k:
                a[j, j, k, k] = -1.0
        b[k, k] = b[3, 3] = 1.0
    for (i, j), (p, q) in sym.items():
        a[p, q, i, j] = a[q, p, i, j] = a[p, q, j, i] = a[q, p, j, i] = 1.0
    for i, (p, q) in odd.items():
        a[p, q, i, 3] = a[p, q, 3, i] = 1.0
        a[q, p, i, 3] = a[q, p, 3, i] = -1.0
    return a.reshape(9, 16), b.ravel()


_SHEPPERD_A, _SHEPPERD_B = _shepperd_map()


def rotations_to_quaternions(rotations):
    """Unit quaternions (N, 4) (x, y, z, w), w >= 0, of rotation matrices (N, 3, 3) (or one
    (3, 3): N = 1).

    Shepperd's method, vectorised: the four candidates ``4 q_k q`` are one linear map of the
    matrix entries; for each matrix the candidate with the largest ``q_k`` is normalised
    (no division by a small number).
    """
    r = np.asarray(rotations, dtype=float).reshape(-1, 9)
    cand = (r @ _SHEPPERD_A + _SHEPPERD_B).reshape(-1, 4, 4)     # (N, 4, 4)
    rows = np.arange(len(r))
    q = cand[rows, cand[:, [0, 1, 2, 3], [0, 1, 2, 3]].argmax(axis=1)]
    q *= np.where(q[:, 3:] < 0.0, -1.0, 1.0)
    return q / np.sqrt(np.einsum("ij,ij->i", q, q))[:, None]


def rotation_to_quaternion(rotation):
    """Unit quaternion (4,) (x, y, z, w), w >= 0, of one rotation matrix (3, 3): the same
    numbers as :func:`rotations_to_quaternions` (Shepperd's method) in Python floats, 5x
    faster for one matrix (no per-call array set-up)."""
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = np.asarray(rotation).tolist()
    diag = (r00 - r11 - r22, r11 - r00 - r22, r22 - r00 - r11, r00 + r11 + r22)
    k = max(range(4), key=diag.__getitem__)
    c = 1.0 + diag[k]                                   # 4 q_k^2: row k is 4 q_k q
    if k == 0:
        q = (c, r01 + r10, r02 + r20, r21 - r12)
    elif k == 1:
        q = (r01 + r10, c, r12 + r21, r02 - r20)
    elif k == 2:
        q = (r02 + r20, r12 + r21, c, r10 - r01)
    else:
        q = (r21 - r12, r02 - r20, r10 - r01, c)
    norm = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return np.array(q) * ((-1.0 if q[3] < 0.0 else 1.0) / norm)
