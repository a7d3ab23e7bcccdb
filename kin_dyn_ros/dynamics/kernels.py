"""Compiled kernels (numba, nopython) of the per-tick call and of the whole-body and
single-frame queries. Imports nothing but NumPy and numba; :mod:`.compiled` flattens the
model, chooses this path or the NumPy one and turns status codes into exceptions.

Frames, units and order are those of :mod:`.kinematics` and :mod:`.algorithms`: everything
is computed in the frame ``C`` (world axes, origin at the base origin), spatial vectors are
[linear; angular], the base velocity in C is ``nu_C = T nu_rep`` (:mod:`.representations`),
and the recursions are Featherstone's (2008): one forward loop over the bodies
(``parent[i] < i``) and one backward loop. Joints are in the model's internal order inside
(body ``k + 1`` is moved by joint ``k``); user-order arrays (``joints_name_list``) are mapped
with ``coordinate[k]``.

Model data come packed in two flat arrays, ``mf`` (float64) and ``mi`` (int64), laid out by
:func:`float_layout` and :func:`int_layout` (one argument each instead of one per array:
every argument of a call from Python costs ~0.2 us to dispatch). A spatial inertia in C is
kept as 13 numbers ``[m, h (3), Ibar (3, 3) row-major]``: mass, first moment ``m c`` and
rotational inertia about C's origin, i.e. ``[[m 1, -h^], [h^, Ibar]]``.

Kernels return a status code (:data:`OK`, :data:`NOT_FINITE`, :data:`SINGULAR`); Python
builds the message. No ``fastmath``: sums keep their order, results agree with the NumPy
core to ~1e-15 relative.
"""

import os
from collections import namedtuple

import numpy as np
from numba import config, njit, types
from numba.experimental import structref

__all__ = ["OK", "NOT_FINITE", "SINGULAR", "UNREAD", "float_layout", "int_layout", "tick",
           "whole_body", "frame_query", "frame_poses", "world_frame_pose", "scatter_words",
           "merge_joint_state", "merge_layout", "frame_at_position", "whole_at_position",
           "bias_at_state",
           "BAD_SHAPE",
           "read_stamped", "coriolis", "share_state", "horizon", "horizon_layout", "balance",
           "balance_layout", "NOT_SOLES", "support_hull", "support_layout", "polygon_margin",
           "WANT_MASS", "WANT_RNEA", "WANT_GRAVITY", "WANT_CMM", "WANT_ABA", "WANT_MINV", "WANT_COMJ",
           "WANT_POSE", "WANT_JACOBIAN", "WANT_JDOT", "WANT_RELATIVE", "steady_tick",
           "STALE", "contact_points", "contact_points_layout", "NOT_NEWER",
           "MERGED", "steady_arguments", "steady_balancing", "steady_results_layout",
           "STEADY_FIELDS"]

OK, NOT_FINITE, SINGULAR, BAD_SHAPE = 0, 1, 2, 3
MIXED, BODY, INERTIAL = 2, 1, 0                       # Representations' values
# whole_body's requests (bit mask)
WANT_MASS, WANT_RNEA, WANT_GRAVITY, WANT_CMM, WANT_ABA, WANT_MINV = 1, 2, 4, 8, 16, 32
WANT_COMJ = 64
# how much of the forward pass a request needs (_forward_pass): the masses and first
# moments only (CoM, gravity forces, CoM Jacobian), the bodies' inertias (RNEA), everything
# (CRBA's composite inertias too)
MOMENTS, INERTIAS, COMPOSITES = 0, 1, 2
# frame_query's requests
WANT_POSE, WANT_JACOBIAN, WANT_JDOT, WANT_RELATIVE = 1, 2, 4, 8

# ``cache=True`` unless :mod:`.compiled` found no writable cache directory; NumPy's error
# model: a division by zero gives inf/NaN instead of raising (nothing here raises; the
# divisions are by masses, pivots and norms checked before), without a test per division.
_jit = njit(cache=os.environ.get("KIN_DYN_JIT_CACHE", "1") != "0", nogil=True,
            error_model="numpy")
# The small algebra of the inner loops is inlined into its callers (numba's IR): a call
# between compiled functions costs ~20-60 ns (every array argument passed as a struct, its
# view reference-counted), more than the arithmetic; _poses took 3.5 us for iCub's 32 joints
# with calls, 1.3 inlined.
_inline = njit(nogil=True, error_model="numpy", inline="always")
_DISABLED = config.DISABLE_JIT      # (NUMBA_DISABLE_JIT=1: the kernels run as Python)


# ----------------------------------------------------------------------------- layout

@_jit
def float_layout(n, n_frames):
    """Offsets in ``mf`` of: basis (n, 4, 16) of the local transforms (kinematics.
    joint_basis), screw (n, 6) in the body frame, body inertia (N, 13) about the body
    origin in body axes, body_H_frame (F, 4, 4), link_H_joint (n, 4, 4), the /tf
    quaternion basis (n, 3, 4) in user order, gravity (3,); and the total size."""
    basis = 0
    screw = basis + 64 * n
    inertia = screw + 6 * n
    frames = inertia + 13 * (n + 1)
    link = frames + 16 * n_frames
    quat = link + 16 * n
    gravity = quat + 12 * n
    return basis, screw, inertia, frames, link, quat, gravity, gravity + 3


@_jit
def int_layout(n, n_frames):
    """Offsets in ``mi`` (after its header ``[n, F]``) of: parent (N,), coordinate (n,)
    (user index of internal joint k), internal (n,), frame_body (F,); and the total size."""
    parent = 2
    coordinate = parent + n + 1
    internal = coordinate + n
    frame_body = internal + n
    return parent, coordinate, internal, frame_body, frame_body + n_frames


# ----------------------------------------------------------------------------- small algebra

@_inline
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@_inline
def _motion_cross(v, m, out):
    """out = v x m for motion vectors [lin; ang] (6,)."""
    out[0] = v[4] * m[2] - v[5] * m[1] + v[1] * m[5] - v[2] * m[4]
    out[1] = v[5] * m[0] - v[3] * m[2] + v[2] * m[3] - v[0] * m[5]
    out[2] = v[3] * m[1] - v[4] * m[0] + v[0] * m[4] - v[1] * m[3]
    out[3] = v[4] * m[5] - v[5] * m[4]
    out[4] = v[5] * m[3] - v[3] * m[5]
    out[5] = v[3] * m[4] - v[4] * m[3]


@_inline
def _force_cross_add(v, f, out):
    """out += v x* f for a motion vector v and a force vector f = [force; torque]."""
    out[0] += v[4] * f[2] - v[5] * f[1]
    out[1] += v[5] * f[0] - v[3] * f[2]
    out[2] += v[3] * f[1] - v[4] * f[0]
    out[3] += v[4] * f[5] - v[5] * f[4] + v[1] * f[2] - v[2] * f[1]
    out[4] += v[5] * f[3] - v[3] * f[5] + v[2] * f[0] - v[0] * f[2]
    out[5] += v[3] * f[4] - v[4] * f[3] + v[0] * f[1] - v[1] * f[0]


@_inline
def _linear_times(ic, v, out):
    """out[:3] = the linear part of I v, m v - h x w: it needs only the mass and first
    moment of the compact spatial inertia ic."""
    m = ic[0]
    h0, h1, h2 = ic[1], ic[2], ic[3]
    out[0] = m * v[0] - (h1 * v[5] - h2 * v[4])
    out[1] = m * v[1] - (h2 * v[3] - h0 * v[5])
    out[2] = m * v[2] - (h0 * v[4] - h1 * v[3])


@_inline
def _inertia_times(ic, v, out):
    """out = I v for a compact spatial inertia ic (13,): [m v - h x w; h x v + Ibar w]."""
    _linear_times(ic, v, out)
    h0, h1, h2 = ic[1], ic[2], ic[3]
    out[3] = h1 * v[2] - h2 * v[1] + ic[4] * v[3] + ic[5] * v[4] + ic[6] * v[5]
    out[4] = h2 * v[0] - h0 * v[2] + ic[7] * v[3] + ic[8] * v[4] + ic[9] * v[5]
    out[5] = h0 * v[1] - h1 * v[0] + ic[10] * v[3] + ic[11] * v[4] + ic[12] * v[5]


@_inline
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@_inline
def _compose(a, b, out):
    """out = a b for rigid transforms (4, 4) (the last row is [0, 0, 0, 1])."""
    for i in range(3):
        for j in range(4):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]
        out[i, 3] += a[i, 3]
    out[3, 0] = out[3, 1] = out[3, 2] = 0.0
    out[3, 3] = 1.0


@_inline
def _transform_motion(h, s, out):
    """out = A_X_B s: a motion vector [v; w] (6,) in B to A, for h = A_H_B (4, 4)."""
    for i in range(3):
        out[3 + i] = h[i, 0] * s[3] + h[i, 1] * s[4] + h[i, 2] * s[5]
        out[i] = h[i, 0] * s[0] + h[i, 1] * s[1] + h[i, 2] * s[2]
    out[0] += h[1, 3] * out[5] - h[2, 3] * out[4]
    out[1] += h[2, 3] * out[3] - h[0, 3] * out[5]
    out[2] += h[0, 3] * out[4] - h[1, 3] * out[3]


@_inline
def _times6(t, v, out):
    """out = t v for t (6, 6) and v (6,) (no BLAS call for a 6 x 6 product)."""
    for i in range(6):
        out[i] = t[i, 0] * v[0] + t[i, 1] * v[1] + t[i, 2] * v[2] + t[i, 3] * v[3] \
            + t[i, 4] * v[4] + t[i, 5] * v[5]


@_inline
def _pose_total(w_H_b):
    """The sum of the 16 numbers of w_H_b (4, 4) in row order: NaN or inf when one is."""
    total = 0.0
    for i in range(4):
        for j in range(4):
            total += w_H_b[i, j]
    return total


@_jit
def _finite(a):
    total = 0.0
    for x in a.ravel():
        total += x
    return np.isfinite(total)


# ----------------------------------------------------------------------------- representations

@_jit
def _base_transform(rep, w_H_b, t, inverse=False):
    """T (6, 6) with nu_C = T nu_rep (:func:`.representations.base_transform`), or its
    inverse (in closed form: R^T for BODY_FIXED, +p^ for INERTIAL_FIXED)."""
    t[:, :] = 0.0
    for i in range(6):
        t[i, i] = 1.0
    if rep == BODY:
        for i in range(3):
            for j in range(3):
                t[i, j] = t[3 + i, 3 + j] = w_H_b[j, i] if inverse else w_H_b[i, j]
    elif rep == INERTIAL:
        sign = -1.0 if inverse else 1.0
        p = w_H_b[:3, 3]
        t[0, 4], t[0, 5] = sign * p[2], -sign * p[1]        # -sign p^
        t[1, 3], t[1, 5] = -sign * p[2], sign * p[0]
        t[2, 3], t[2, 4] = sign * p[1], -sign * p[0]


@_jit
def _base_drift_times(rep, t, nu, out):
    """out = dT/dt nu (6,) along the base velocity nu (in rep): MIXED [v x w... ] (see
    :func:`.representations.base_transform_dot`)."""
    out[:] = 0.0
    if rep == MIXED:                        # Tdot = [[0, v^], [0, 0]]
        _cross(nu[:3], nu[3:], out[:3])
    elif rep == BODY:                       # Tdot = T (nu x): T (nu x nu) = 0
        pass


# ----------------------------------------------------------------------------- forward pass

@_inline
def _load12(a, o):
    """The transform stored at a[o:o + 12]."""
    return (a[o], a[o + 1], a[o + 2], a[o + 3], a[o + 4], a[o + 5], a[o + 6], a[o + 7],
            a[o + 8], a[o + 9], a[o + 10], a[o + 11])


@_inline
def _store12(t, a, o):
    """a[o:o + 12] := the transform t."""
    for i in range(12):
        a[o + i] = t[i]


@_inline
def _load6(a, o):
    """The 6-vector at a[o:o + 6], as a tuple."""
    return (a[o], a[o + 1], a[o + 2], a[o + 3], a[o + 4], a[o + 5])


@_inline
def _local12(mf, k, q):
    """parent_body_H_body of internal joint k at position q (its basis at mf[64 k:])."""
    sn, cs = np.sin(q), np.cos(q)
    b = 64 * k
    return (mf[b] + sn * mf[b + 16] + cs * mf[b + 32] + q * mf[b + 48],
            mf[b + 1] + sn * mf[b + 17] + cs * mf[b + 33] + q * mf[b + 49],
            mf[b + 2] + sn * mf[b + 18] + cs * mf[b + 34] + q * mf[b + 50],
            mf[b + 3] + sn * mf[b + 19] + cs * mf[b + 35] + q * mf[b + 51],
            mf[b + 4] + sn * mf[b + 20] + cs * mf[b + 36] + q * mf[b + 52],
            mf[b + 5] + sn * mf[b + 21] + cs * mf[b + 37] + q * mf[b + 53],
            mf[b + 6] + sn * mf[b + 22] + cs * mf[b + 38] + q * mf[b + 54],
            mf[b + 7] + sn * mf[b + 23] + cs * mf[b + 39] + q * mf[b + 55],
            mf[b + 8] + sn * mf[b + 24] + cs * mf[b + 40] + q * mf[b + 56],
            mf[b + 9] + sn * mf[b + 25] + cs * mf[b + 41] + q * mf[b + 57],
            mf[b + 10] + sn * mf[b + 26] + cs * mf[b + 42] + q * mf[b + 58],
            mf[b + 11] + sn * mf[b + 27] + cs * mf[b + 43] + q * mf[b + 59])


@_inline
def _compose12(a, b):
    """a b of two transforms."""
    return (a[0] * b[0] + a[1] * b[4] + a[2] * b[8],
            a[0] * b[1] + a[1] * b[5] + a[2] * b[9],
            a[0] * b[2] + a[1] * b[6] + a[2] * b[10],
            a[0] * b[3] + a[1] * b[7] + a[2] * b[11] + a[3],
            a[4] * b[0] + a[5] * b[4] + a[6] * b[8],
            a[4] * b[1] + a[5] * b[5] + a[6] * b[9],
            a[4] * b[2] + a[5] * b[6] + a[6] * b[10],
            a[4] * b[3] + a[5] * b[7] + a[6] * b[11] + a[7],
            a[8] * b[0] + a[9] * b[4] + a[10] * b[8],
            a[8] * b[1] + a[9] * b[5] + a[10] * b[9],
            a[8] * b[2] + a[9] * b[6] + a[10] * b[10],
            a[8] * b[3] + a[9] * b[7] + a[10] * b[11] + a[11])


@_inline
def _motion_back12(h, m):
    """B_X_A m: the motion vector m = [v; w] (6-tuple) in A, in B, for h = A_H_B
    (w_B = R^T w, v_B = R^T (v - p x w))."""
    x, y, z = h[3], h[7], h[11]
    u0 = m[0] - (y * m[5] - z * m[4])
    u1 = m[1] - (z * m[3] - x * m[5])
    u2 = m[2] - (x * m[4] - y * m[3])
    return (h[0] * u0 + h[4] * u1 + h[8] * u2, h[1] * u0 + h[5] * u1 + h[9] * u2,
            h[2] * u0 + h[6] * u1 + h[10] * u2, h[0] * m[3] + h[4] * m[4] + h[8] * m[5],
            h[1] * m[3] + h[5] * m[4] + h[9] * m[5], h[2] * m[3] + h[6] * m[4] + h[10] * m[5])


@_inline
def _motion12(h, m):
    """A_X_B m: the motion vector m = [v; w] (6-tuple) in B, in A, for h = A_H_B."""
    w0 = h[0] * m[3] + h[1] * m[4] + h[2] * m[5]
    w1 = h[4] * m[3] + h[5] * m[4] + h[6] * m[5]
    w2 = h[8] * m[3] + h[9] * m[4] + h[10] * m[5]
    return (h[0] * m[0] + h[1] * m[1] + h[2] * m[2] + h[7] * w2 - h[11] * w1,
            h[4] * m[0] + h[5] * m[1] + h[6] * m[2] + h[11] * w0 - h[3] * w2,
            h[8] * m[0] + h[9] * m[1] + h[10] * m[2] + h[3] * w1 - h[7] * w0,
            w0, w1, w2)


@_inline
def _get44(a, b):
    """The transform a[b] of a (N, 4, 4) array."""
    return (a[b, 0, 0], a[b, 0, 1], a[b, 0, 2], a[b, 0, 3], a[b, 1, 0], a[b, 1, 1],
            a[b, 1, 2], a[b, 1, 3], a[b, 2, 0], a[b, 2, 1], a[b, 2, 2], a[b, 2, 3])


@_inline
def _set44(t, a, b):
    """a[b] (a: (N, 4, 4)) := the transform t, with its last row [0, 0, 0, 1]."""
    for i in range(3):
        for j in range(4):
            a[b, i, j] = t[4 * i + j]
    a[b, 3, 0] = a[b, 3, 1] = a[b, 3, 2] = 0.0
    a[b, 3, 3] = 1.0


@_jit
def _poses(mf, mi, w_H_b, q, poses, local):
    """C_H_body (N, 4, 4) and parent_body_H_body (n, 4, 4) at internal positions q (n,);
    ``local`` (0, 4, 4): not written (the whole-body queries do not read it)."""
    n = mi[0]
    keep = local.shape[0] == n
    _set44((w_H_b[0, 0], w_H_b[0, 1], w_H_b[0, 2], 0.0, w_H_b[1, 0], w_H_b[1, 1],
            w_H_b[1, 2], 0.0, w_H_b[2, 0], w_H_b[2, 1], w_H_b[2, 2], 0.0), poses, 0)
    for k in range(n):
        joint = _local12(mf, k, q[k])
        if keep:
            _set44(joint, local, k)
        _set44(_compose12(_get44(poses, mi[3 + k]), joint), poses, k + 1)


@_jit
def _inertias(mf, mi, poses, inertia, subspace, level):
    """Body inertias in C (N, 13) and joint screws in C (n, 6) from the body poses; at
    ``level`` MOMENTS only each inertia's mass and first moment (its first 4 numbers).
    Scalars throughout (flat indices, no views, the symmetric R Ibar R^T once per pair):
    iCub's 33 inertias 2.0 -> 1.3 us."""
    n, n_frames = mi[0], mi[1]
    lay = float_layout(n, n_frames)
    screw, body = lay[1], lay[2]
    h = poses.reshape(poses.size)
    out = inertia.reshape(inertia.size)
    for b in range(n + 1):
        o, c, t = 16 * b, body + 13 * b, 13 * b
        r00, r01, r02, p0 = h[o], h[o + 1], h[o + 2], h[o + 3]
        r10, r11, r12, p1 = h[o + 4], h[o + 5], h[o + 6], h[o + 7]
        r20, r21, r22, p2 = h[o + 8], h[o + 9], h[o + 10], h[o + 11]
        m = mf[c]
        rh0 = r00 * mf[c + 1] + r01 * mf[c + 2] + r02 * mf[c + 3]     # R h (h: first moment)
        rh1 = r10 * mf[c + 1] + r11 * mf[c + 2] + r12 * mf[c + 3]
        rh2 = r20 * mf[c + 1] + r21 * mf[c + 2] + r22 * mf[c + 3]
        out[t] = m
        out[t + 1] = rh0 + m * p0
        out[t + 2] = rh1 + m * p1
        out[t + 3] = rh2 + m * p2
        if level == MOMENTS:
            continue
        a00, a01, a02 = _row_times(r00, r01, r02, mf, c + 4)        # A = R Ibar
        a10, a11, a12 = _row_times(r10, r11, r12, mf, c + 4)
        a20, a21, a22 = _row_times(r20, r21, r22, mf, c + 4)
        # Ibar about C's origin: R Ibar R^T - p h^T - h p^T + 2 (h.p) 1 - m p p^T + m |p|^2 1
        d = 2.0 * (rh0 * p0 + rh1 * p1 + rh2 * p2) + m * (p0 * p0 + p1 * p1 + p2 * p2)
        e00 = a00 * r00 + a01 * r01 + a02 * r02 - 2.0 * p0 * rh0 - m * p0 * p0 + d
        e01 = a00 * r10 + a01 * r11 + a02 * r12 - p0 * rh1 - rh0 * p1 - m * p0 * p1
        e02 = a00 * r20 + a01 * r21 + a02 * r22 - p0 * rh2 - rh0 * p2 - m * p0 * p2
        e11 = a10 * r10 + a11 * r11 + a12 * r12 - 2.0 * p1 * rh1 - m * p1 * p1 + d
        e12 = a10 * r20 + a11 * r21 + a12 * r22 - p1 * rh2 - rh1 * p2 - m * p1 * p2
        e22 = a20 * r20 + a21 * r21 + a22 * r22 - 2.0 * p2 * rh2 - m * p2 * p2 + d
        out[t + 4], out[t + 5], out[t + 6] = e00, e01, e02
        out[t + 7], out[t + 8], out[t + 9] = e01, e11, e12
        out[t + 10], out[t + 11], out[t + 12] = e02, e12, e22
    screws = mf[screw:screw + 6 * n].reshape((n, 6))
    for k in range(n):
        _transform_motion(poses[k + 1], screws[k], subspace[k])


@_inline
def _row_times(r0, r1, r2, mf, at):
    """The row (r0, r1, r2) times the 3 x 3 matrix at ``mf[at:at + 9]`` (row-major)."""
    return (r0 * mf[at] + r1 * mf[at + 3] + r2 * mf[at + 6],
            r0 * mf[at + 1] + r1 * mf[at + 4] + r2 * mf[at + 7],
            r0 * mf[at + 2] + r1 * mf[at + 5] + r2 * mf[at + 8])


@_jit
def _composite(mi, inertia, composite, width):
    """Subtree sums of the body inertias (N, 13): CRBA's composite inertias (their first
    ``width`` numbers: 4 for the masses and first moments)."""
    n = mi[0]
    for i in range(n + 1):
        for e in range(width):
            composite[i, e] = inertia[i, e]
    for i in range(n, 0, -1):
        p = mi[2 + i]
        for e in range(width):
            composite[p, e] += composite[i, e]


@_jit
def _forces(composite, subspace, force, level):
    """Ic_j S_j (n, 6): joint j's subtree momentum per unit joint velocity (below ``level``
    COMPOSITES its linear part only, the first 3, from the masses and first moments)."""
    for k in range(subspace.shape[0]):
        if level != COMPOSITES:
            _linear_times(composite[k + 1], subspace[k], force[k])
        else:
            _inertia_times(composite[k + 1], subspace[k], force[k])


@_jit
def _forward_pass(mf, mi, w_H_b, q, poses, local, level):
    """One kinematics pass at internal positions q (n,): fills C_H_body ``poses`` (N, 4, 4)
    and parent_body_H_body ``local`` (n, 4, 4); returns the body inertias (N, 13) and joint
    screws (n, 6) in C, the composite inertias (N, 13) and Ic_j S_j (n, 6), as far as
    ``level`` asks: COMPOSITES all of them; INERTIAS the body inertias, and of the
    composites and Ic_j S_j only what MOMENTS gives; MOMENTS the masses and first moments
    (bodies' and composites') and the linear part of Ic_j S_j. The rest is left
    unwritten."""
    n = mi[0]
    _poses(mf, mi, w_H_b, q, poses, local)
    inertia = np.empty((n + 1, 13))
    subspace = np.empty((n, 6))
    _inertias(mf, mi, poses, inertia, subspace, level)
    composite = np.empty((n + 1, 13))
    force = np.empty((n, 6))
    _composite(mi, inertia, composite, 13 if level == COMPOSITES else 4)
    _forces(composite, subspace, force, level)
    return inertia, subspace, composite, force


@_jit
def _at_state(mf, mi, rep, w_H_b, s, level):
    """The kinematics pass of a whole-body call at (w_H_b, s (n,) user order): internal q
    (n,), C_H_body poses (N, 4, 4), :func:`_forward_pass`'s inertias, screws, composites
    and Ic_j S_j (as far as ``level`` asks), and T (6, 6) (nu_C = T nu_rep)."""
    n = mi[0]
    q = np.empty(n)
    _internal_q(mi, s, q)
    poses = np.empty((n + 1, 4, 4))
    inertia, subspace, composite, force = _forward_pass(mf, mi, w_H_b, q, poses,
                                                        poses[:0], level)
    t = np.empty((6, 6))
    _base_transform(rep, w_H_b, t)
    return q, poses, inertia, subspace, composite, force, t


@_jit
def _internal_q(mi, s, q):
    n = mi[0]
    for k in range(n):
        q[k] = s[mi[3 + n + k]]


# ----------------------------------------------------------------------------- dynamics in C

@_jit
def _rnea(mi, inertia, subspace, nu_c, acc_c, qd, qdd, body_wrench, out):
    """RNEA in C: generalized forces (6 + n,) (base in C, joints internal) of base velocity
    nu_c and acceleration-minus-gravity acc_c (6,), joint qd, qdd (n,) (qdd may be empty:
    zero) and external body wrenches (N, 6) about C's origin (they enter with a minus)."""
    n = mi[0]
    n_bodies = n + 1
    vel = np.empty((n_bodies, 6))
    acc = np.empty((n_bodies, 6))
    force = np.empty((n_bodies, 6))
    sq = np.empty(6)
    tmp = np.empty(6)
    iv = np.empty(6)
    for e in range(6):          # element by element (see _copy_words)
        vel[0, e] = nu_c[e]
        acc[0, e] = acc_c[e]
    for k in range(n):
        i, p = k + 1, mi[2 + k + 1]
        for e in range(6):
            sq[e] = subspace[k, e] * qd[k]
            vel[i, e] = vel[p, e] + sq[e]
        _motion_cross(vel[p], sq, tmp)
        for e in range(6):
            acc[i, e] = acc[p, e] + tmp[e]
        if qdd.shape[0]:
            for e in range(6):
                acc[i, e] += subspace[k, e] * qdd[k]
    for i in range(n_bodies):
        _inertia_times(inertia[i], acc[i], force[i])
        _inertia_times(inertia[i], vel[i], iv)
        _force_cross_add(vel[i], iv, force[i])
        for e in range(6):
            force[i, e] -= body_wrench[i, e]
    for i in range(n, 0, -1):
        p = mi[2 + i]
        for e in range(6):
            force[p, e] += force[i, e]
        out[6 + i - 1] = _dot6(subspace[i - 1], force[i])
    for e in range(6):
        out[e] = force[0, e]


@_jit
def _mass_matrix(mi, composite, force, subspace, mass):
    """CRBA mass matrix in C (6 + n, 6 + n), full: M[i, j] = S_i . Ic_j S_j, i anc j."""
    n = mi[0]
    mass[:, :] = 0.0
    ic = composite[0]
    unit = np.zeros((6, 6))
    column = np.empty((6, 6))
    for c in range(6):                          # base block: Ic_0's columns
        unit[c, c] = 1.0
        _inertia_times(ic, unit[c], column[c])
        for e in range(6):
            mass[e, c] = column[c, e]
    for k in range(n):
        f = force[k]
        mass[6 + k, 6 + k] = _dot6(subspace[k], f)
        for e in range(6):
            mass[e, 6 + k] = mass[6 + k, e] = f[e]
        j = mi[2 + k + 1]
        while j > 0:
            v = _dot6(subspace[j - 1], f)
            mass[6 + k, 5 + j] = mass[5 + j, 6 + k] = v
            j = mi[2 + j]


@_jit
def _coordinate_parents(mi):
    """Expanded parent (6 + n,) of each generalized coordinate, -1 for none: the base's six
    form a chain, a joint's parent is the last base coordinate or its parent body's joint."""
    n = mi[0]
    lam = np.empty(6 + n, dtype=np.int64)
    for k in range(6):
        lam[k] = k - 1
    for k in range(n):
        p = mi[2 + k + 1]                        # parent body of joint k
        lam[6 + k] = 5 if p == 0 else 5 + p
    return lam


@_jit
def _massless(mass, free):
    """Mark in ``free`` (6 + n,) the joints with no inertia moving with them (M_jj <= tol,
    as :func:`.algorithms.solve_mass_matrix`); their rows and columns of M are zero. Returns
    how many."""
    size = mass.shape[0]
    big = 1.0
    for k in range(size):
        big = max(big, mass[k, k])
    tol = 1e-12 * big
    count = 0
    for k in range(size):
        free[k] = k < 6 or mass[k, k] > tol
        if not free[k]:
            count += 1
    return count


@_jit
def _ltl(lam, mass, free):
    """Featherstone's LTL factorisation M = L^T L in place (lower triangle, tree sparsity:
    L[k, i] != 0 only for i an ancestor of k); rows of non-``free`` coordinates become the
    identity. False when a pivot is not positive (M singular)."""
    size = mass.shape[0]
    for k in range(size - 1, -1, -1):
        if not free[k]:
            mass[k, k] = 1.0
            i = lam[k]
            while i >= 0:
                mass[k, i] = 0.0
                i = lam[i]
            continue
        pivot = mass[k, k]
        if not pivot > 0.0:
            return False
        d = np.sqrt(pivot)
        mass[k, k] = d
        i = lam[k]
        while i >= 0:
            mass[k, i] /= d
            i = lam[i]
        i = lam[k]
        while i >= 0:
            j = i
            while j >= 0:
                mass[i, j] -= mass[k, i] * mass[k, j]
                j = lam[j]
            i = lam[i]
    return True


@_jit
def _ltl_solve(lam, lmat, x):
    """x <- M^-1 x with lmat the factor of :func:`_ltl` (L^T y = x, then L x = y)."""
    size = x.shape[0]
    for i in range(size - 1, -1, -1):
        x[i] /= lmat[i, i]
        j = lam[i]
        while j >= 0:
            x[j] -= lmat[i, j] * x[i]
            j = lam[j]
    for i in range(size):
        j = lam[i]
        while j >= 0:
            x[i] -= lmat[i, j] * x[j]
            j = lam[j]
        x[i] /= lmat[i, i]


@_jit
def _ltl_inverse(lam, lmat, out):
    """out (size, size) = M^-1 from the factor of :func:`_ltl` (M = L^T L, every pivot
    positive): X = L^-1 row by row (lower, tree-sparse: X[a, k] != 0 only for k an
    ancestor of a or a), then M^-1 = X X^T (both triangles)."""
    size = lmat.shape[0]
    x = np.zeros((size, size))
    for a in range(size):
        j = lam[a]
        while j >= 0:                   # (L X)[a, k] = 0: sum over j in a's chain
            f = lmat[a, j]
            k = j
            while k >= 0:
                x[a, k] += f * x[j, k]
                k = lam[k]
            j = lam[j]
        d = 1.0 / lmat[a, a]
        x[a, a] = d
        k = lam[a]
        while k >= 0:
            x[a, k] *= -d
            k = lam[k]
    xt = x.T.copy()
    out[:, :] = 0.0
    for a in range(size):               # row a of X X^T: X[a, k] X[:, k] over a's chain
        k = a
        while k >= 0:
            f = x[a, k]
            for b in range(a + 1):      # independent products (vectorised), no reduction
                out[a, b] += f * xt[k, b]
            k = lam[k]
        for b in range(a):
            out[b, a] = out[a, b]


@_jit
def _forward_dynamics(mi, mass, h_c, tau, nu_rep, rep, w_H_b, out):
    """Solve M nu_dot = [0; tau] - h (all in C, internal order; M overwritten) and write
    nu_dot (6 + n,) to ``out``: base in rep, joints in user order, NaN for massless joints.
    Returns (status, number of massless joints)."""
    n = mi[0]
    size = 6 + n
    free = np.empty(size, dtype=np.bool_)
    count = _massless(mass, free)
    x = np.empty(size)
    for k in range(size):
        x[k] = -h_c[k]
        if k >= 6:
            x[k] += tau[k - 6]
        if not free[k]:
            x[k] = 0.0
    lam = _coordinate_parents(mi)
    if not _ltl(lam, mass, free):
        return SINGULAR, count
    _ltl_solve(lam, mass, x)
    t = np.empty((6, 6))
    drift = np.empty(6)
    _base_transform(rep, w_H_b, t, True)
    _base_drift_times(rep, t, nu_rep, drift)
    for i in range(6):
        acc = 0.0
        for j in range(6):
            acc += t[i, j] * (x[j] - drift[j])
        out[i] = acc
    coordinate = mi[3 + n:3 + 2 * n]
    for k in range(n):
        out[6 + coordinate[k]] = x[6 + k] if free[6 + k] else np.nan
    return OK, count


# ----------------------------------------------------------------------------- wrenches

@_inline
def _frame_pose(mf, mi, poses, frame, out):
    """C_H_frame (4, 4) of frame index ``frame``."""
    n, n_frames = mi[0], mi[1]
    lay = float_layout(n, n_frames)
    body_H_frame = mf[lay[3]:lay[4]].reshape((n_frames, 4, 4))
    _compose(poses[mi[int_layout(n, n_frames)[3] + frame]], body_H_frame[frame], out)


@_inline
def _world_pose(mf, mi, poses, base_position, frame, out):
    """World pose (4, 4) of frame index ``frame``: C_H_frame moved by the base position."""
    _frame_pose(mf, mi, poses, frame, out)
    for i in range(3):
        out[i, 3] += base_position[i]


@_jit
def _sensor_wrenches(mf, mi, poses, targets, wrenches, body_wrench):
    """Body wrenches in C (N, 6) of F/T readings: targets (k, 2) [link frame, expressed
    frame], wrenches (6 k,) [force; torque] about the expressed frame's origin, its axes."""
    n, n_frames = mi[0], mi[1]
    frame_body = mi[int_layout(n, n_frames)[3]:]
    body_wrench[:, :] = 0.0
    pose = np.empty((4, 4))
    f = np.empty(3)
    tq = np.empty(3)
    pf = np.empty(3)
    for c in range(targets.shape[0]):
        _frame_pose(mf, mi, poses, targets[c, 1], pose)
        w = wrenches[6 * c:6 * c + 6]
        for i in range(3):
            f[i] = pose[i, 0] * w[0] + pose[i, 1] * w[1] + pose[i, 2] * w[2]
            tq[i] = pose[i, 0] * w[3] + pose[i, 1] * w[4] + pose[i, 2] * w[5]
        _cross(pose[:3, 3], f, pf)
        b = frame_body[targets[c, 0]]
        for i in range(3):
            body_wrench[b, i] += f[i]
            body_wrench[b, 3 + i] += tq[i] + pf[i]


@_jit
def _rep_frame_pose(rep, c_H_f, base_position, out):
    """T_H_C (4, 4) (:func:`.representations.rep_frame_pose`)."""
    out[:, :] = 0.0
    for i in range(4):
        out[i, i] = 1.0
    if rep == MIXED:
        for i in range(3):
            out[i, 3] = -c_H_f[i, 3]
    elif rep == BODY:
        for i in range(3):
            for j in range(3):
                out[i, j] = c_H_f[j, i]
        for i in range(3):
            out[i, 3] = -(out[i, 0] * c_H_f[0, 3] + out[i, 1] * c_H_f[1, 3]
                          + out[i, 2] * c_H_f[2, 3])
    else:
        for i in range(3):
            out[i, 3] = base_position[i]


@_jit
def _rep_wrenches(mf, mi, rep, poses, base_position, frames, wrenches, body_wrench):
    """Body wrenches in C (N, 6) of wrenches (k, 6) given in the representation on
    ``frames`` (k,): X^T w with X = velocity_transform(T_H_C), i.e.
    [R^T f; R^T (tau - p x f)]."""
    n, n_frames = mi[0], mi[1]
    frame_body = mi[int_layout(n, n_frames)[3]:]
    body_wrench[:, :] = 0.0
    pose = np.empty((4, 4))
    t_h_c = np.empty((4, 4))
    m = np.empty(3)
    pf = np.empty(3)
    for c in range(frames.shape[0]):
        _frame_pose(mf, mi, poses, frames[c], pose)
        _rep_frame_pose(rep, pose, base_position, t_h_c)
        w = wrenches[c]
        _cross(t_h_c[:3, 3], w[:3], pf)
        for i in range(3):
            m[i] = w[3 + i] - pf[i]
        b = frame_body[frames[c]]
        for i in range(3):
            body_wrench[b, i] += t_h_c[0, i] * w[0] + t_h_c[1, i] * w[1] + t_h_c[2, i] * w[2]
            body_wrench[b, 3 + i] += t_h_c[0, i] * m[0] + t_h_c[1, i] * m[1] + t_h_c[2, i] * m[2]


# ----------------------------------------------------------------------------- per tick

@_jit
def tick(mf, mi, rep, w_H_b, s, nu, s_dot, tau, targets, wrenches, out, poses):
    """Everything ``compute_tick`` returns for one state, written to ``out``:
    joint transforms (n, 16) parent_link_H_child_link in user order, their /tf quaternions
    (n, 4) (x, y, z, w), w >= 0, CoM (3,) world, CoM velocity (3,), centroidal momentum (6,)
    [m v_com; angular momentum about the CoM] world axes, gravity torques (n,) user order,
    nu_dot (6 + n,) (base in rep, joints user order, NaN for massless joints; only when
    tau has n entries, else left alone), and the number of massless joints (1,);
    ``poses`` (N, 4, 4) gets C_H_body. ``targets``/``wrenches``: F/T readings
    (:func:`_sensor_wrenches`, wrenches flat (6 k,)). Returns OK, NOT_FINITE or SINGULAR;
    BAD_SHAPE, before reading anything, for a wrong shape (tau: n entries or none)."""
    n, n_frames = mi[0], mi[1]
    if w_H_b.shape[0] != 4 or w_H_b.shape[1] != 4 or s.shape[0] != n or nu.shape[0] != 6 \
            or s_dot.shape[0] != n or (tau.shape[0] != n and tau.shape[0] != 0) \
            or targets.shape[1] != 2 or wrenches.shape[0] != 6 * targets.shape[0] \
            or out.shape[0] != 22 * n + 19 or poses.shape[0] != n + 1 \
            or poses.shape[1] != 4 or poses.shape[2] != 4:
        return BAD_SHAPE
    if not (_finite(w_H_b) and _finite(s) and _finite(nu) and _finite(s_dot)
            and _finite(tau) and _finite(wrenches)):
        return NOT_FINITE
    lay = float_layout(n, n_frames)
    q = np.empty(n)
    qd = np.empty(n)
    _internal_q(mi, s, q)
    _internal_q(mi, s_dot, qd)
    local = np.empty((n, 4, 4))
    inertia, subspace, composite, force = _forward_pass(mf, mi, w_H_b, q, poses, local,
                                                        COMPOSITES)
    # /tf: link_H_joint @ local, and the quaternions, in user order
    internal = mi[3 + 2 * n:3 + 3 * n]
    link_H_joint = mf[lay[4]:lay[5]].reshape((n, 4, 4))
    quat_basis = mf[lay[5]:lay[6]].reshape((n, 3, 4))
    transforms = out[:16 * n].reshape((n, 4, 4))
    quats = out[16 * n:20 * n].reshape((n, 4))
    for u in range(n):
        k = internal[u]
        _compose(link_H_joint[k], local[k], transforms[u])
        half = 0.5 * q[k]
        sh, ch = np.sin(half), np.cos(half)
        for e in range(4):
            quats[u, e] = quat_basis[u, 0, e] + sh * quat_basis[u, 1, e] + ch * quat_basis[u, 2, e]
        if quats[u, 3] < 0.0:
            for e in range(4):
                quats[u, e] = -quats[u, e]
    # momentum, CoM, gravity torques
    o = 20 * n
    t = np.empty((6, 6))
    _base_transform(rep, w_H_b, t)
    nu_c = np.empty(6)
    _times6(t, nu, nu_c)
    total = np.empty(6)
    _inertia_times(composite[0], nu_c, total)
    for k in range(n):
        for e in range(6):
            total[e] += qd[k] * force[k, e]
    mass = composite[0, 0]
    com = out[o:o + 3]
    for i in range(3):
        com[i] = composite[0, 1 + i] / mass
        out[o + 3 + i] = total[i] / mass
        out[o + 6 + i] = total[i]
    momentum = out[o + 6:o + 12]
    momentum[3] = total[3] - (com[1] * total[2] - com[2] * total[1])
    momentum[4] = total[4] - (com[2] * total[0] - com[0] * total[2])
    momentum[5] = total[5] - (com[0] * total[1] - com[1] * total[0])
    for i in range(3):
        com[i] += w_H_b[i, 3]
    g = mf[lay[6]:lay[6] + 3]
    coordinate = mi[3 + n:3 + 2 * n]
    for k in range(n):
        out[o + 12 + coordinate[k]] = -(force[k, 0] * g[0] + force[k, 1] * g[1]
                                        + force[k, 2] * g[2])
    # forward dynamics
    status = OK
    out[o + 18 + 2 * n] = 0.0
    if tau.shape[0] == n:
        body_wrench = np.empty((n + 1, 6))
        _sensor_wrenches(mf, mi, poses, targets, wrenches, body_wrench)
        acc_c = np.zeros(6)
        for i in range(3):
            acc_c[i] = -g[i]
        h_c = np.empty(6 + n)
        _rnea(mi, inertia, subspace, nu_c, acc_c, qd, np.empty(0), body_wrench, h_c)
        matrix = np.empty((6 + n, 6 + n))
        _mass_matrix(mi, composite, force, subspace, matrix)
        tau_i = np.empty(n)
        _internal_q(mi, tau, tau_i)
        status, count = _forward_dynamics(mi, matrix, h_c, tau_i, nu, rep, w_H_b,
                                          out[o + 12 + n:o + 18 + 2 * n])
        out[o + 18 + 2 * n] = count
    return status


@_jit
def frame_poses(mf, mi, poses, base_position, out):
    """World pose (F, 4, 4) of every frame from C_H_body (N, 4, 4) and the base position."""
    for f in range(mi[1]):
        _world_pose(mf, mi, poses, base_position, f, out[f])


@_jit
def world_frame_pose(mf, mi, poses, w_H_b, frame, out):
    """World pose (4, 4) of frame index ``frame`` into ``out`` from C_H_body (N, 4, 4) and
    the base pose ``w_H_b`` (4, 4) (its position): one frame of :func:`frame_poses`, the
    same operations."""
    _frame_pose(mf, mi, poses, frame, out)
    for i in range(3):
        out[i, 3] += w_H_b[i, 3]


# ----------------------------------------------------------------------------- balance

NOT_SOLES = 4      # balance: an active contact is not a flat sole (the caller computes it)


@_inline
def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@_inline
def _cop_on(w, o, n, threshold, out, at):
    """The CoP of wrench ``w`` (6,) (world, about the origin) on the plane through ``o``
    normal to ``n`` into out[at:at + 3], the normal force into out[at + 3]; whether the force
    is above ``threshold`` (else the point is zeros). As balance._cop, operation for
    operation."""
    fn = _dot3(n, w)
    out[at + 3] = fn
    if not fn > threshold:
        out[at], out[at + 1], out[at + 2] = 0.0, 0.0, 0.0
        return False
    mx = w[3] - (o[1] * w[2] - o[2] * w[1])
    my = w[4] - (o[2] * w[0] - o[0] * w[2])
    mz = w[5] - (o[0] * w[1] - o[1] * w[0])
    out[at] = o[0] + (n[1] * mz - n[2] * my) / fn
    out[at + 1] = o[1] + (n[2] * mx - n[0] * mz) / fn
    out[at + 2] = o[2] + (n[0] * my - n[1] * mx) / fn
    return True


@_inline
def _on_pose(h, p, translate, out):
    """out = R p (+ t when ``translate``) of a pose h (4, 4), summed as balance._transform."""
    for r in range(3):
        v = h[r, 0] * p[0] + h[r, 1] * p[1] + h[r, 2] * p[2]
        out[r] = v + h[r, 3] if translate else v


@_inline
def _world_wrench(h, w, out):
    """[R f; R tau + t x R f] of wrench ``w`` (6,) given in the axes of pose h (4, 4), about
    its origin (as balance._world_wrench)."""
    f, tau = np.empty(3), np.empty(3)
    _on_pose(h, w[:3], False, f)
    _on_pose(h, w[3:], False, tau)
    _cross(h[:3, 3], f, out[3:])
    for r in range(3):
        out[r] = f[r]
        out[3 + r] += tau[r]


@_jit
def balance_layout(k):
    """Offsets in :func:`balance`'s ``out`` after the k contacts' [CoP (3), normal force, 1
    defined / 0 not / -1 no wrench] rows: the number of active contacts, the ground plane's
    point and normal, the ZMP and its normal force and defined flag, the DCM, the capture
    point, omega, the CoM's height and the DCM's defined flag; and the total size."""
    b = 5 * k
    return b, b + 1, b + 4, b + 7, b + 10, b + 11, b + 12, b + 15, b + 18, b + 19, b + 20, \
        b + 21


@_jit
def balance(mf, mi, poses, base_position, links, expressed, wrenches, measured, centres,
            normals, soles, points, first_point, threshold, tol, min_cosine, com,
            com_velocity, out):
    """:func:`.balance.balance` of k contacts, world frame (OK; NOT_SOLES when an active
    contact is not a flat sole: nothing after the CoPs is written). ``poses`` C_H_body
    (N, 4, 4) and ``base_position`` (3,) as the tick's; per contact its link's and its
    wrench's frame indices ``links``, ``expressed`` (k,), the wrench (k, 6) in that frame's
    axes about its origin (``measured`` (k,) false: none), its sole's centre and normal
    (k, 3) in link axes, whether it is a flat sole (``soles`` (k,)) and its points (P, 3),
    contact i's from ``first_point[i]``; ``tol``, ``min_cosine`` as balance's COPLANAR_TOL,
    MIN_UP_COSINE. ``out`` as :func:`balance_layout`, every number written (zeros where
    undefined, omega NaN without a pendulum) but after NOT_SOLES."""
    k = links.shape[0]
    lay = balance_layout(k)
    g = mf[float_layout(mi[0], mi[1])[6]:]
    norm = np.sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2])
    up = np.empty(3)
    for r in range(3):
        up[r] = 0.0 - g[r] / norm
    frames = np.empty((k, 4, 4))
    other = np.empty((4, 4))
    world = np.empty((k, 6))
    sole_o, sole_n = np.empty((k, 3)), np.empty((k, 3))
    active = np.empty(k, np.int64)
    count = 0
    for i in range(k):
        h = frames[i]
        _world_pose(mf, mi, poses, base_position, links[i], h)
        _on_pose(h, centres[i], True, sole_o[i])
        _on_pose(h, normals[i], False, sole_n[i])
        at = 5 * i
        if not measured[i]:
            out[at], out[at + 1], out[at + 2] = 0.0, 0.0, 0.0
            out[at + 3], out[at + 4] = 0.0, -1.0
            continue
        if expressed[i] == links[i]:
            _world_wrench(h, wrenches[i], world[i])
        else:
            _world_pose(mf, mi, poses, base_position, expressed[i], other)
            _world_wrench(other, wrenches[i], world[i])
        if _cop_on(world[i], sole_o[i], sole_n[i], threshold, out, at):
            out[at + 4] = 1.0
            active[count] = i
            count += 1
        else:
            out[at + 4] = 0.0
    out[lay[0]] = count
    if count == 0:
        for j in range(lay[0] + 1, lay[11]):
            out[j] = 0.0
        return OK
    for j in range(count):
        if not soles[active[j]]:
            return NOT_SOLES
    point, n = sole_o[active[0]], sole_n[active[0]]
    cosine = _dot3(n, up)
    coplanar = abs(cosine) >= min_cosine
    diff = np.empty(3)
    for j in range(count):
        i = active[j]
        for r in range(3):
            diff[r] = sole_o[i, r] - point[r]
        if not (abs(_dot3(n, sole_n[i])) >= 1.0 - 0.5 * tol * tol
                and abs(_dot3(n, diff)) <= tol):
            coplanar = False
    ground_o, ground_n = out[lay[1]:lay[2]], out[lay[2]:lay[3]]
    if coplanar:
        for r in range(3):
            ground_o[r] = point[r]
            ground_n[r] = n[r] if cosine > 0.0 else -n[r]
    else:                               # the lowest point (the first of equals), up
        best, p = np.inf, np.empty(3)
        for j in range(count):
            i = active[j]
            for m in range(first_point[i], first_point[i + 1]):
                _on_pose(frames[i], points[m], True, p)
                height = _dot3(p, up)
                if height < best:
                    best = height
                    for r in range(3):
                        ground_o[r] = p[r]
        for r in range(3):
            ground_n[r] = up[r]
    total = np.empty(6)
    for e in range(6):
        total[e] = world[active[0], e]
    for j in range(1, count):
        for e in range(6):
            total[e] = total[e] + world[active[j], e]
    out[lay[5]] = 1.0 if _cop_on(total, ground_o, ground_n, threshold, out, lay[3]) else 0.0
    along = _dot3(ground_n, up)
    for r in range(3):
        diff[r] = com[r] - ground_o[r]
    height = _dot3(ground_n, diff) / along
    out[lay[9]] = height
    if not height > 0.0:
        for j in range(lay[6], lay[8]):
            out[j] = 0.0
        out[lay[8]], out[lay[10]] = np.nan, 0.0
        return OK
    omega = np.sqrt(norm / height)
    xi = out[lay[6]:lay[7]]
    for r in range(3):
        xi[r] = com[r] + com_velocity[r] / omega
        diff[r] = xi[r] - ground_o[r]
    drop = _dot3(ground_n, diff) / along
    for r in range(3):
        out[lay[7] + r] = xi[r] - drop * up[r]
    out[lay[8]], out[lay[10]] = omega, 1.0
    return OK


@_jit
def contact_points_layout(k, p):
    """Offsets in :func:`contact_points`' ``out`` for k contacts of p points in all: per
    contact its link's origin and its force [origin (3), force (3)] (k, 6), whether it has a
    wrench (k,); the k CoPs, the ZMP and the capture point (k + 2, 3), whether each is
    defined (k + 2,) and its margin (k + 2,); the support of the active contacts: the
    number of points of its closed outline, the CoM's margin, the CoM's projection (3) and
    the outline (p + 1, 3); and the total size."""
    measured = 6 * k
    points = measured + k
    defined = points + 3 * (k + 2)
    margins = defined + k + 2
    support = margins + k + 2
    return 0, measured, points, defined, margins, support, support + 5 + 3 * (p + 1)


@_jit
def contact_points(mf, mi, poses, base_position, links, expressed, wrenches, measured,
                   centres, normals, soles, points, first_point, threshold, tol, min_cosine,
                   com, com_velocity, axes, up, hull_tol, balanced, out):
    """Where k contacts push, their balance points and the support of the active ones,
    world frame [m, N]: :func:`balance` (its arguments up to ``com_velocity``, its vector
    into ``balanced``), then ``out`` as :func:`contact_points_layout` lays it out: each
    contact's link origin and its wrench's force (zeros without a wrench); the CoPs, the ZMP
    and the capture point (zeros where undefined) with their margins to the support polygon
    (NaN where undefined or without an active contact); the support as
    :func:`.contacts.hull_support` makes it (:func:`support_hull` of the active contacts'
    points, the ground ``axes`` (2, 3), ``up`` (3,), ``hull_tol``): its outline closed
    (the first vertex again; one vertex twice; none without an active contact), the CoM's
    margin (-inf without an active contact) and projection. NOT_SOLES as :func:`balance`
    (nothing after the forces is written), NOT_FINITE for a margin that is NaN."""
    status = balance(mf, mi, poses, base_position, links, expressed, wrenches, measured,
                     centres, normals, soles, points, first_point, threshold, tol, min_cosine,
                     com, com_velocity, balanced)
    if status != OK:
        return status
    k = links.shape[0]
    lay, at = balance_layout(k), contact_points_layout(k, points.shape[0])
    h, other = np.empty((4, 4)), np.empty((4, 4))
    for i in range(k):
        row = out[6 * i:6 * i + 6]
        out[at[1] + i] = 1.0 if measured[i] else 0.0
        if not measured[i]:
            row[:] = 0.0
            continue
        _world_pose(mf, mi, poses, base_position, links[i], h)
        if expressed[i] == links[i]:
            _on_pose(h, wrenches[i, :3], False, row[3:])
        else:
            _world_pose(mf, mi, poses, base_position, expressed[i], other)
            _on_pose(other, wrenches[i, :3], False, row[3:])
        for r in range(3):
            row[r] = h[r, 3]
    vertices, half_normals, offsets = _active_support(
        mf, mi, poses, base_position, links, points, first_point, balanced, com, axes, up,
        hull_tol, out[at[5]:at[6]])
    active = balanced[lay[0]] > 0.0
    for i in range(k + 2):
        if i < k:
            defined, first = balanced[5 * i + 4] > 0.0, 5 * i
        elif i == k:
            defined, first = active and balanced[lay[5]] != 0.0, lay[3]
        else:
            defined, first = active and balanced[lay[10]] != 0.0, lay[7]
        point = out[at[2] + 3 * i:at[2] + 3 * i + 3]
        out[at[3] + i] = 1.0 if defined else 0.0
        out[at[4] + i] = np.nan
        for r in range(3):
            point[r] = balanced[first + r] if defined else 0.0
        if defined:                     # (an active contact: a polygon)
            margin = polygon_margin(vertices, half_normals, offsets, axes, point)
            if np.isnan(margin):
                return NOT_FINITE
            out[at[4] + i] = margin
    return OK


@_jit
def _active_support(mf, mi, poses, base_position, links, points, first_point, balanced, com,
                    axes, up, hull_tol, support):
    """The support polygon of the contacts active in ``balanced`` (:func:`balance`'s
    vector) as :func:`polygon_margin` takes it: its vertices (m, 2), half-plane normals
    (m, 2) and offsets (m,) (views of :func:`support_hull`'s ``out``; m = 0 without an
    active contact); and ``support`` written as :func:`contact_points` lays it out."""
    k = links.shape[0]
    picked = np.empty((points.shape[0], 3))
    first = np.zeros(k + 1, np.int64)
    frames = np.empty((k, 4, 4))
    count, rows = 0, 0
    for i in range(k):
        if balanced[5 * i + 4] > 0.0:
            for q in range(first_point[i], first_point[i + 1]):
                for r in range(3):
                    picked[rows, r] = points[q, r]
                rows += 1
            _world_pose(mf, mi, poses, base_position, links[i], frames[count])
            count += 1
            first[count] = rows
    if count == 0:
        along = com[0] * up[0] + com[1] * up[1] + com[2] * up[2]
        support[0], support[1] = 0.0, -np.inf
        for r in range(3):
            support[2 + r] = com[r] - along * up[r]
        return np.empty((0, 2)), np.empty((0, 2)), np.empty(0)
    lay = support_layout(rows)
    hull = np.empty(lay[-1])
    m = support_hull(picked[:rows], first[:count + 1], frames[:count], com, axes, up, hull_tol,
                     hull)
    plane = lay[3]
    closed = m + 1 if m > 1 else 2 * m
    support[0], support[1] = closed, hull[1]
    for r in range(3):
        support[2 + r] = hull[2 + r]
    for j in range(closed):
        v = j if j < m else 0
        for r in range(3):
            support[5 + 3 * j + r] = hull[plane + 3 * v + r]
    return (hull[lay[0]:lay[0] + 2 * m].reshape((m, 2)),
            hull[lay[1]:lay[1] + 2 * m].reshape((m, 2)), hull[lay[2]:lay[2] + m])


# ----------------------------------------------------------------------------- support polygon

@_jit
def support_layout(p):
    """Offsets in :func:`support_hull`'s ``out`` for P points: height, the CoM's margin,
    its projection (3), the hull's vertices (P, 2), its edges' unit outward normals (P, 2)
    and offsets (P,), its vertices on the plane (P, 3); and the total size."""
    vertices = 5
    normals = vertices + 2 * p
    offsets = normals + 2 * p
    plane = offsets + p
    return vertices, normals, offsets, plane, plane + 3 * p


@_inline
def _lex_before(xy, a, b):
    """Whether point a of ``xy`` (P, 2) comes before point b: x, then y (NumPy's lexsort)."""
    return xy[a, 0] < xy[b, 0] or (xy[a, 0] == xy[b, 0] and xy[a, 1] < xy[b, 1])


@_inline
def _chain_push(xy, chain, length, p, eps):
    """Andrew's monotone chain: point p of ``xy`` onto ``chain`` (its first ``length``
    indices), the points it leaves on a non-left turn (or within ``eps``) popped first;
    the new length."""
    while length >= 2:
        a, b = chain[length - 2], chain[length - 1]
        if (xy[b, 0] - xy[a, 0]) * (xy[p, 1] - xy[a, 1]) \
                - (xy[b, 1] - xy[a, 1]) * (xy[p, 0] - xy[a, 0]) > eps:
            break
        length -= 1
    chain[length] = p
    return length + 1


@_inline
def _hull_2d(xy, tol, vertices):
    """:func:`.contacts.convex_hull` of ``xy`` (P, 2), P >= 1, into ``vertices`` (P, 2); the
    number of vertices (1: a point, 2: a segment)."""
    count = xy.shape[0]
    order = np.empty(count, np.int64)
    for i in range(count):                      # insertion sort: stable, as lexsort
        j = i
        while j > 0 and _lex_before(xy, i, order[j - 1]):
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    scale = 1.0
    for i in range(count):
        for c in range(2):
            scale = max(scale, abs(xy[i, c]))
    eps = tol * scale * scale
    chain = np.empty(2 * count, np.int64)
    lower = 0
    for i in range(count):
        lower = _chain_push(xy, chain, lower, order[i], eps)
    upper = lower - 1                           # the upper chain after lower[:-1]
    start = upper
    for i in range(count - 1, -1, -1):
        upper = _chain_push(xy, chain[start:], upper - start, order[i], eps) + start
    m = upper - 1 if count > 1 else 1
    for i in range(m):
        vertices[i, 0], vertices[i, 1] = xy[chain[i], 0], xy[chain[i], 1]
    if m == 2:                                  # np.allclose(v0, v1, atol=tol * scale)
        same = True
        for c in range(2):
            if not abs(vertices[0, c] - vertices[1, c]) <= tol * scale \
                    + 1e-5 * abs(vertices[1, c]):
                same = False
        if same:
            m = 1
            vertices[0, 0], vertices[0, 1] = xy[order[0], 0], xy[order[0], 1]
    return m


@_inline
def _margin_2d(vertices, m, normals, offsets, x0, x1):
    """:meth:`.contacts.SupportPolygon.margin` of ground coordinates (x0, x1): the signed
    distance [m] to the boundary of the polygon of the first ``m`` ``vertices``, positive
    inside (``normals``, ``offsets``: its half-planes when m >= 3); -inf when m is 0."""
    if m == 0:
        return -np.inf
    if m >= 3:
        least = np.inf
        for i in range(m):
            least = min(least, offsets[i] - (normals[i, 0] * x0 + normals[i, 1] * x1))
        if least >= 0.0:
            return least
    best = np.inf
    for i in range(m):
        j = i + 1 if i + 1 < m else 0
        a0, a1 = vertices[i, 0], vertices[i, 1]
        e0, e1 = vertices[j, 0] - a0, vertices[j, 1] - a1
        den = max(e0 * e0 + e1 * e1, 1e-300)
        t = min(max(((x0 - a0) * e0 + (x1 - a1) * e1) / den, 0.0), 1.0)
        d0, d1 = a0 + t * e0 - x0, a1 + t * e1 - x1
        best = min(best, np.sqrt(d0 * d0 + d1 * d1))
    return -best


@_jit
def support_hull(points, first, poses, com, axes, up, tol, out):
    """:func:`.contacts.hull_support` of k contacts: their points (P, 3) in link axes
    (contact i's from ``first[i]``, ``first`` (k + 1,)), at their links' world poses
    ``poses`` (k, 4, 4), with the CoM ``com`` (3,) [m], the ground ``axes`` (2, 3) and ``up``
    (3,) (:func:`.contacts.ground_axes`), the hull's tolerance ``tol``. Writes ``out`` as
    :func:`support_layout` lays it out (P = first[k]); returns the hull's vertex count m
    (the vertices, normals, offsets and plane points are the first m of each block)."""
    k = first.shape[0] - 1
    count = first[k]
    lay = support_layout(count)
    world = np.empty((count, 3))
    xy = np.empty((count, 2))
    height = 0.0
    for i in range(k):
        h = poses[i]
        for p in range(first[i], first[i + 1]):
            for r in range(3):
                world[p, r] = h[r, 0] * points[p, 0] + h[r, 1] * points[p, 1] \
                    + h[r, 2] * points[p, 2] + h[r, 3]
            height += world[p, 0] * up[0] + world[p, 1] * up[1] + world[p, 2] * up[2]
            for c in range(2):
                xy[p, c] = axes[c, 0] * world[p, 0] + axes[c, 1] * world[p, 1] \
                    + axes[c, 2] * world[p, 2]
    height /= count
    vertices = out[lay[0]:lay[1]].reshape((count, 2))
    normals = out[lay[1]:lay[2]].reshape((count, 2))
    offsets = out[lay[2]:lay[3]]
    plane = out[lay[3]:lay[4]].reshape((count, 3))
    m = _hull_2d(xy, tol, vertices)
    if m >= 3:
        for i in range(m):
            j = i + 1 if i + 1 < m else 0
            n0, n1 = vertices[j, 1] - vertices[i, 1], vertices[i, 0] - vertices[j, 0]
            norm = np.sqrt(n0 * n0 + n1 * n1)
            normals[i, 0], normals[i, 1] = n0 / norm, n1 / norm
            offsets[i] = normals[i, 0] * vertices[i, 0] + normals[i, 1] * vertices[i, 1]
    for i in range(m):
        for r in range(3):
            plane[i, r] = vertices[i, 0] * axes[0, r] + vertices[i, 1] * axes[1, r] \
                + height * up[r]
    c0 = axes[0, 0] * com[0] + axes[0, 1] * com[1] + axes[0, 2] * com[2]
    c1 = axes[1, 0] * com[0] + axes[1, 1] * com[1] + axes[1, 2] * com[2]
    out[0] = height
    out[1] = _margin_2d(vertices, m, normals, offsets, c0, c1)
    along = height - (com[0] * up[0] + com[1] * up[1] + com[2] * up[2])
    for r in range(3):
        out[2 + r] = com[r] + along * up[r]
    return m


@_jit
def polygon_margin(vertices, normals, offsets, axes, point):
    """:meth:`.contacts.SupportPolygon.margin` of ``point``: a world point (3,) (projected
    on the ground ``axes`` (2, 3)) or ground coordinates (2,); the polygon's ``vertices``
    (m, 2) and, when m >= 3, its half-planes ``normals`` (m, 2) and ``offsets`` (m,). NaN for
    another shape, a non-finite point or half-planes that do not match (the caller's
    NumPy path then names it)."""
    m = vertices.shape[0]
    if (m >= 3 and (normals.shape[0] != m or offsets.shape[0] != m)) \
            or (point.shape[0] != 2 and point.shape[0] != 3):
        return np.nan
    for v in point:
        if not np.isfinite(v):
            return np.nan
    if point.shape[0] == 2:
        return _margin_2d(vertices, m, normals, offsets, point[0], point[1])
    x0 = axes[0, 0] * point[0] + axes[0, 1] * point[1] + axes[0, 2] * point[2]
    x1 = axes[1, 0] * point[0] + axes[1, 1] * point[1] + axes[1, 2] * point[2]
    return _margin_2d(vertices, m, normals, offsets, x0, x1)


# ----------------------------------------------------------------------------- whole-body queries

@_jit
def _to_rep_vector(mi, t, vec_c, out):
    """Generalized force in C (internal order) -> rep (base T^T f), user order, in out."""
    n = mi[0]
    for i in range(6):
        out[i] = t[0, i] * vec_c[0] + t[1, i] * vec_c[1] + t[2, i] * vec_c[2] \
            + t[3, i] * vec_c[3] + t[4, i] * vec_c[4] + t[5, i] * vec_c[5]
    for k in range(n):
        out[6 + mi[3 + n + k]] = vec_c[6 + k]


@_jit
def _mass_rep(mi, t, mass):
    """M in C -> M in rep (internal order), in place: [T^T M00 T, T^T M0j; ., Mjj]."""
    size = mass.shape[0]
    col = np.empty(6)
    res = np.empty(6)
    tt = t.T.copy()
    for c in range(size):                       # rows: T^T M[:6, c]
        for e in range(6):
            col[e] = mass[e, c]
        _times6(tt, col, res)
        for e in range(6):
            mass[e, c] = res[e]
    for r in range(size):                       # columns: (M[r, :6] T) = T^T M[r, :6]^T
        for e in range(6):
            col[e] = mass[r, e]
        _times6(tt, col, res)
        for e in range(6):
            mass[r, e] = res[e]


@_inline
def _user_index(mi):
    """Index (6 + n,) in user order of each generalized coordinate in internal order."""
    n = mi[0]
    user = np.empty(6 + n, dtype=np.int64)
    for i in range(6):
        user[i] = i
    for k in range(n):
        user[6 + k] = 6 + mi[3 + n + k]
    return user


@_jit
def _user_square(mi, mat, out):
    """out (6 + n, 6 + n) = mat^T with rows and columns in user order (for the symmetric
    M and M^-1)."""
    size = 6 + mi[0]
    user = _user_index(mi)
    for a in range(size):
        ua = user[a]
        for b in range(size):
            out[user[b], ua] = mat[a, b]


@_jit
def _user_matrix(mi, rows, mat, out):
    """out (rows, 6 + n) = mat (rows, 6 + n) with joint columns in user order."""
    n = mi[0]
    for r in range(rows):
        for c in range(6):
            out[r, c] = mat[r, c]
        for k in range(n):
            out[r, 6 + mi[3 + n + k]] = mat[r, 6 + k]


@_jit
def _com_only(mf, mi, w_H_b, s, out):
    """whole_body's CoM alone (3,) world: the body poses and their masses' moments."""
    n, n_frames = mi[0], mi[1]
    q = np.empty(n)
    _internal_q(mi, s, q)
    poses = np.empty((n + 1, 4, 4))
    _poses(mf, mi, w_H_b, q, poses, poses[:0])
    lay = float_layout(n, n_frames)
    body = mf[lay[2]:lay[3]].reshape((n + 1, 13))
    moment = np.zeros(4)                 # m, then sum m c in C
    for b in range(n + 1):
        h = poses[b]
        m = body[b, 0]
        moment[0] += m
        for i in range(3):
            moment[1 + i] += h[i, 0] * body[b, 1] + h[i, 1] * body[b, 2] \
                + h[i, 2] * body[b, 3] + m * h[i, 3]
    for i in range(3):
        out[i] = moment[1 + i] / moment[0] + w_H_b[i, 3]
    return OK


@_jit
def whole_body(mf, mi, rep, want, w_H_b, s, nu, s_dot, nu_dot, s_ddot, tau, gravity_on,
               frames, wrenches, out):
    """Whole-body quantities at (w_H_b (4, 4), s (n,)) in the representation ``rep``,
    written one after the other to ``out``, as ``want`` (a mask of WANT_*) asks:
    CoM (3,) world (always), then M (6 + n, 6 + n), RNEA (6 + n,) of (nu, s_dot, nu_dot,
    s_ddot) with wrenches (k, 6) in rep on ``frames`` (k,) and gravity when ``gravity_on``,
    g (6 + n,), the centroidal momentum matrix (6, 6 + n) (momentum about the CoM, world
    axes), forward dynamics nu_dot (6 + n,) from tau (NaN for massless joints) under the
    same velocities, wrenches and gravity, M^-1 (6 + n, 6 + n). Matrices row-major, joint
    columns in user order. Returns OK, NOT_FINITE, SINGULAR (M^-1 of a singular M, or
    forward dynamics with a singular floating-base block) or BAD_SHAPE (w_H_b not (4, 4),
    s not (n,), a rate given of the wrong length, wrenches not (len(frames), 6))."""
    n, n_frames = mi[0], mi[1]
    size = 6 + n
    if w_H_b.shape != (4, 4) or s.shape[0] != n or nu.shape[0] not in (0, 6) \
            or nu_dot.shape[0] not in (0, 6) or s_dot.shape[0] not in (0, n) \
            or s_ddot.shape[0] not in (0, n) or tau.shape[0] not in (0, n) \
            or wrenches.shape[0] != frames.shape[0]:
        return BAD_SHAPE
    total = _pose_total(w_H_b)             # NaN or inf anywhere: the sum is not finite
    for a in (s, nu, s_dot, nu_dot, s_ddot, tau):
        for x in a:
            total += x
    for i in range(wrenches.shape[0]):
        for j in range(6):
            total += wrenches[i, j]
    if not np.isfinite(total):
        return NOT_FINITE
    lay = float_layout(n, n_frames)
    if want == 0:
        return _com_only(mf, mi, w_H_b, s, out)
    level = MOMENTS                      # gravity forces, CoM Jacobian
    if want & (WANT_MASS | WANT_CMM | WANT_ABA | WANT_MINV):
        level = COMPOSITES
    elif want & WANT_RNEA:
        level = INERTIAS
    q, poses, inertia, subspace, composite, force, t = _at_state(mf, mi, rep, w_H_b, s, level)
    g = mf[lay[6]:lay[6] + 3]
    mass_total = composite[0, 0]
    com_c = np.empty(3)
    for i in range(3):
        com_c[i] = composite[0, 1 + i] / mass_total
        out[i] = com_c[i] + w_H_b[i, 3]
    o = 3
    status = OK
    matrix = np.empty((size, size) if want & (WANT_MASS | WANT_MINV) else (0, 0))
    if want & WANT_MASS or want & WANT_MINV:
        _mass_matrix(mi, composite, force, subspace, matrix)
        _mass_rep(mi, t, matrix)
        if want & WANT_MASS:
            _user_square(mi, matrix, out[o:o + size * size].reshape((size, size)))
            o += size * size
    dynamics = want & WANT_RNEA or want & WANT_ABA
    h_c = np.empty(size if dynamics else 0)
    body_wrench = np.zeros((n + 1 if dynamics else 0, 6))
    nu_c = np.empty(6)
    acc_c = np.empty(6)
    qd = np.empty(n)
    if dynamics:
        _internal_q(mi, s_dot, qd)
        _times6(t, nu, nu_c)
        _base_drift_times(rep, t, nu, acc_c)
        if nu_dot.shape[0]:
            tmp6 = np.empty(6)
            _times6(t, nu_dot, tmp6)
            for i in range(6):
                acc_c[i] += tmp6[i]
        if gravity_on:
            for i in range(3):
                acc_c[i] -= g[i]
        _rep_wrenches(mf, mi, rep, poses, w_H_b[:3, 3].copy(), frames, wrenches, body_wrench)
        if want & WANT_RNEA:
            qdd = np.empty(s_ddot.shape[0])
            if s_ddot.shape[0]:
                _internal_q(mi, s_ddot, qdd)
            _rnea(mi, inertia, subspace, nu_c, acc_c, qd, qdd, body_wrench, h_c)
            _to_rep_vector(mi, t, h_c, out[o:o + size])
            o += size
    if want & WANT_GRAVITY:
        g_c = np.empty(size)
        ic = composite[0]
        for i in range(3):
            g_c[i] = -ic[0] * g[i]
        g_c[3] = -(ic[2] * g[2] - ic[3] * g[1])
        g_c[4] = -(ic[3] * g[0] - ic[1] * g[2])
        g_c[5] = -(ic[1] * g[1] - ic[2] * g[0])
        for k in range(n):
            g_c[6 + k] = -(force[k, 0] * g[0] + force[k, 1] * g[1] + force[k, 2] * g[2])
        _to_rep_vector(mi, t, g_c, out[o:o + size])
        o += size
    if want & WANT_CMM:
        cmm = np.empty((6, size))
        e6 = np.zeros(6)
        col = np.empty(6)
        for c in range(6):               # base columns: Ic_0 T
            for e in range(6):
                e6[e] = t[e, c]
            _inertia_times(composite[0], e6, col)
            for e in range(6):
                cmm[e, c] = col[e]
        for k in range(n):
            for e in range(6):
                cmm[e, 6 + k] = force[k, e]
        for c in range(size):            # about the CoM: angular -= c x linear
            for e in range(6):
                col[e] = cmm[e, c]
            cmm[3, c] = col[3] - (com_c[1] * col[2] - com_c[2] * col[1])
            cmm[4, c] = col[4] - (com_c[2] * col[0] - com_c[0] * col[2])
            cmm[5, c] = col[5] - (com_c[0] * col[1] - com_c[1] * col[0])
        _user_matrix(mi, 6, cmm, out[o:o + 6 * size].reshape((6, size)))
        o += 6 * size
    if want & WANT_COMJ:                 # m J_com: the CMM's linear rows (CoM-independent)
        user = out[o:o + 3 * size].reshape((3, size))
        mass_all = _total_mass(mf, n)
        column, linear = np.empty(6), np.empty(3)
        for c in range(6):               # Ic_0 T's linear rows
            for e in range(6):
                column[e] = t[e, c]
            _linear_times(composite[0], column, linear)
            for e in range(3):
                user[e, c] = linear[e] / mass_all
        for k in range(n):
            for e in range(3):
                user[e, 6 + mi[3 + n + k]] = force[k, e] / mass_all
        o += 3 * size
    if want & WANT_ABA:
        acc_c[:] = 0.0                   # C's acceleration zero, minus gravity
        if gravity_on:
            for i in range(3):
                acc_c[i] = -g[i]
        _rnea(mi, inertia, subspace, nu_c, acc_c, qd, np.empty(0), body_wrench, h_c)
        fd_matrix = np.empty((size, size))
        _mass_matrix(mi, composite, force, subspace, fd_matrix)
        tau_i = np.empty(n)
        _internal_q(mi, tau, tau_i)
        status, _ = _forward_dynamics(mi, fd_matrix, h_c, tau_i, nu, rep, w_H_b,
                                      out[o:o + size])
        if status != OK:
            return status
        o += size
    if want & WANT_MINV:
        free = np.empty(size, dtype=np.bool_)
        lam = _coordinate_parents(mi)
        if _massless(matrix, free) or not _ltl(lam, matrix, free):
            return SINGULAR
        inverse = np.empty((size, size))
        _ltl_inverse(lam, matrix, inverse)
        _user_square(mi, inverse, out[o:o + size * size].reshape((size, size)))
        o += size * size
    return status


# ----------------------------------------------------------------------------- single-frame queries
# The walk to one frame is short (~6 joints): what costs there is memory traffic and array
# views, not arithmetic. Transforms as 12-tuples (see _poses) and offsets into one work
# array took iCub's frame Jacobian kernel from 1.2 to 0.6 us.

@_inline
def _rep_pose12(rep, c_h_f, p):
    """T_H_C (:func:`_rep_frame_pose`) from C_H_F and the base position p (3-tuple)."""
    if rep == MIXED:
        return (1.0, 0.0, 0.0, -c_h_f[3], 0.0, 1.0, 0.0, -c_h_f[7], 0.0, 0.0, 1.0, -c_h_f[11])
    if rep == BODY:                          # F_H_C = C_H_F^-1
        r = (c_h_f[0], c_h_f[4], c_h_f[8], c_h_f[1], c_h_f[5], c_h_f[9], c_h_f[2], c_h_f[6],
             c_h_f[10])
        x, y, z = c_h_f[3], c_h_f[7], c_h_f[11]
        return (r[0], r[1], r[2], -(r[0] * x + r[1] * y + r[2] * z),
                r[3], r[4], r[5], -(r[3] * x + r[4] * y + r[5] * z),
                r[6], r[7], r[8], -(r[6] * x + r[7] * y + r[8] * z))
    return (1.0, 0.0, 0.0, p[0], 0.0, 1.0, 0.0, p[1], 0.0, 0.0, 1.0, p[2])


@_inline
def _base_column(rep, w_H_b, c, p):
    """Column c of T (:func:`_base_transform`, nu_C = T nu_rep), a 6-tuple."""
    if rep == BODY:
        i = c % 3
        x, y, z = w_H_b[0, i], w_H_b[1, i], w_H_b[2, i]
        return (x, y, z, 0.0, 0.0, 0.0) if c < 3 else (0.0, 0.0, 0.0, x, y, z)
    e = (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0,
         1.0 if c == 3 else 0.0, 1.0 if c == 4 else 0.0, 1.0 if c == 5 else 0.0)
    if rep == MIXED or c < 3:
        return e
    # INERTIAL: [I, p^; 0, I]
    v = (0.0, -p[2], p[1]) if c == 3 else (p[2], 0.0, -p[0]) if c == 4 else (-p[1], p[0], 0.0)
    return (v[0], v[1], v[2], e[3], e[4], e[5])


@_inline
def _chain(mf, mi, path, d, s, frame, w_H_b, relative, work):
    """C_H_body of the base (its rotation from ``w_H_b``, or none when ``relative``) and
    of each body of ``path[:d]`` into work[16 i:] (i = 0 the base), then C_H_F of
    ``frame`` at work[16 (d + 1):] (C: world axes at the base's origin)."""
    n = mi[0]
    if relative:
        pose = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)
    else:
        pose = (w_H_b[0, 0], w_H_b[0, 1], w_H_b[0, 2], 0.0, w_H_b[1, 0], w_H_b[1, 1],
                w_H_b[1, 2], 0.0, w_H_b[2, 0], w_H_b[2, 1], w_H_b[2, 2], 0.0)
    _store12(pose, work, 0)
    for i in range(d):
        k = path[i] - 1
        pose = _compose12(pose, _local12(mf, k, s[mi[3 + n + k]]))
        _store12(pose, work, 16 * (i + 1))
    frames = float_layout(n, mi[1])[3]
    _store12(_compose12(pose, _load12(mf, frames + 16 * frame)), work, 16 * (d + 1))


@_inline
def _scatter_columns(out, o, width, first, work, at, path, d, mi):
    """out[o:].reshape((6, width)) := 0, then column first + coordinate of each joint of
    path[:d] := the 6-vectors at work[at + 6 i:]."""
    n = mi[0]
    out[o:o + 6 * width] = 0.0
    for i in range(d):
        c = first + mi[3 + n + path[i] - 1]
        for e in range(6):
            out[o + e * width + c] = work[at + 6 * i + e]


@_inline
def _frame_query(mf, mi, rep, want, frame, w_H_b, s, nu, s_dot, out):
    """Quantities of frame index ``frame`` at (w_H_b, s), walking only the joints between
    the base and it, written one after the other to ``out`` as ``want`` asks: the world pose
    (4, 4), the Jacobian (6, 6 + n) (v_F = J nu, both in rep), its time derivative along
    (nu, s_dot) (6, 6 + n), the relative Jacobian (6, n) (the base as the world: w_H_b = I,
    joint columns only). Joint columns in user order. Returns OK, BAD_SHAPE (w_H_b not
    (4, 4), s not (n,), or for Jdot nu not (6,) or s_dot not (n,)) or NOT_FINITE."""
    n = mi[0]
    size = 6 + n
    if w_H_b.shape != (4, 4) or s.shape[0] != n or want & WANT_JDOT and (
            nu.shape[0] != 6 or s_dot.shape[0] != n):
        return BAD_SHAPE
    total = _pose_total(w_H_b)
    for a in (s, nu, s_dot):
        for x in a:
            total += x
    if not np.isfinite(total):
        return NOT_FINITE
    body = mi[int_layout(n, mi[1])[3] + frame]
    d = 0
    b = body
    while b > 0:
        d, b = d + 1, mi[2 + b]
    path = np.empty(d, dtype=np.int64)             # the bodies from the base's child on
    for i in range(d - 1, -1, -1):
        path[i], body = body, mi[2 + body]
    # work: C_H_body of the path (d + 1), C_H_F, T_H_C (16 each); the joint columns (d, 6),
    # the base columns (6, 6) (row c: column c of T_X_C T)
    work = np.empty(16 * (d + 3) + 6 * (d + 6))
    c_h_f, t_h_c, cols = 16 * (d + 1), 16 * (d + 2), 16 * (d + 3)
    base_cols = cols + 6 * d
    o = 0
    for relative in (False, True):
        if relative and not want & WANT_RELATIVE:
            break
        if not relative and not want & (WANT_POSE | WANT_JACOBIAN | WANT_JDOT):
            continue
        _chain(mf, mi, path, d, s, frame, w_H_b, relative, work)
        p = (0.0, 0.0, 0.0) if relative else (w_H_b[0, 3], w_H_b[1, 3], w_H_b[2, 3])
        if not relative and want & WANT_POSE:
            for i in range(3):
                for j in range(4):
                    out[o + 4 * i + j] = work[c_h_f + 4 * i + j] + (p[i] if j == 3 else 0.0)
            out[o + 12] = out[o + 13] = out[o + 14] = 0.0
            out[o + 15] = 1.0
            o += 16
        if not relative and not want & (WANT_JACOBIAN | WANT_JDOT):
            continue
        thc = _rep_pose12(rep, _load12(work, c_h_f), p)
        _store12(thc, work, t_h_c)
        for i in range(d):
            screw = _load6(mf, 64 * n + 6 * (path[i] - 1))
            column = _motion12(thc, _motion12(_load12(work, 16 * (i + 1)), screw))
            for e in range(6):
                work[cols + 6 * i + e] = column[e]
        if relative:
            _scatter_columns(out, o, n, 0, work, cols, path, d, mi)
            o += 6 * n
            continue
        for c in range(6):
            column = _motion12(thc, _base_column(rep, w_H_b, c, p))
            for e in range(6):
                work[base_cols + 6 * c + e] = column[e]
        if want & WANT_JACOBIAN:
            _scatter_columns(out, o, size, 6, work, cols, path, d, mi)
            for c in range(6):
                for e in range(6):
                    out[o + e * size + c] = work[base_cols + 6 * c + e]
            o += 6 * size
        if want & WANT_JDOT:
            t = np.empty((6, 6))
            _base_transform(rep, w_H_b, t)
            t_h_c44 = work[t_h_c:t_h_c + 16].reshape((4, 4))    # (row 3 unread)
            _jacobian_dot(rep, t, work[base_cols:base_cols + 36].reshape((6, 6)),
                          work[cols:cols + 6 * d].reshape((d, 6)), path, d, mi, t_h_c44,
                          nu, s_dot,
                          out[o:o + 6 * size].reshape((6, size)))
            o += 6 * size
    return OK


@_jit
def frame_query(mf, mi, rep, want, frame, w_H_b, s, nu, s_dot, out):
    """:func:`_frame_query` (its docstring), compiled on its own."""
    return _frame_query(mf, mi, rep, want, frame, w_H_b, s, nu, s_dot, out)


@_jit
def frame_at_position(mf, mi, rep, want, frame, w_H_b, s, out):
    """One quantity of :func:`frame_query` at a position into ``out`` (its 2-D shape): the
    world pose (4, 4) (``want`` WANT_POSE), the Jacobian (6, 6 + n) (WANT_JACOBIAN) or the
    relative Jacobian (6, n) (WANT_RELATIVE); the few arguments of a call that costs ~1-2 us.
    It walks from the frame up to the base composing body_H_F, each joint's column first in
    F into ``out``, then all of them into T at once: no scratch array (two allocations are
    ~0.1 us here). Returns OK, NOT_FINITE, or BAD_SHAPE for another request, w_H_b not
    (4, 4), s not (n,) or ``out`` not of the answer's size."""
    n = mi[0]
    width = 6 + n if want == WANT_JACOBIAN else n
    if w_H_b.shape != (4, 4) or s.shape[0] != n or out.size != (
            16 if want == WANT_POSE else 6 * width if want in (WANT_JACOBIAN, WANT_RELATIVE)
            else -1):
        return BAD_SHAPE
    total = _pose_total(w_H_b)
    for x in s:
        total += x
    if not np.isfinite(total):
        return NOT_FINITE
    flat = out.reshape(out.size)
    relative = want == WANT_RELATIVE
    body_h_f = _frame_up(mf, mi, frame, s, flat, want != WANT_POSE, 0 if relative else 6,
                         width)
    if relative:
        c_h_f, p = body_h_f, (0.0, 0.0, 0.0)
    else:
        c_h_f = _compose12((w_H_b[0, 0], w_H_b[0, 1], w_H_b[0, 2], 0.0, w_H_b[1, 0],
                            w_H_b[1, 1], w_H_b[1, 2], 0.0, w_H_b[2, 0], w_H_b[2, 1],
                            w_H_b[2, 2], 0.0), body_h_f)
        p = (w_H_b[0, 3], w_H_b[1, 3], w_H_b[2, 3])
    if want == WANT_POSE:
        for i in range(3):
            for j in range(4):
                flat[4 * i + j] = c_h_f[4 * i + j] + (p[i] if j == 3 else 0.0)
        flat[12] = flat[13] = flat[14] = 0.0
        flat[15] = 1.0
        return OK
    thc = _rep_pose12(rep, c_h_f, p)
    _columns_to(_compose12(thc, c_h_f), mi, mi[int_layout(n, mi[1])[3] + frame], flat,
                0 if relative else 6, width)
    if not relative:
        for c in range(6):
            column = _motion12(thc, _base_column(rep, w_H_b, c, p))
            for e in range(6):
                flat[e * width + c] = column[e]
    return OK


@_inline
def _frame_up(mf, mi, frame, s, flat, columns, first, width):
    """base_H_F of frame index ``frame`` at joint positions ``s`` (user order), composed
    from F up to the base; with ``columns``, ``flat`` (6, width) row-major := 0 but, at
    column first + its user index, each joint's screw in F (F_X_body S)."""
    n = mi[0]
    if columns:
        flat[:] = 0.0
    b = mi[int_layout(n, mi[1])[3] + frame]
    pose = _load12(mf, float_layout(n, mi[1])[3] + 16 * frame)          # body_H_F
    while b > 0:
        k = b - 1
        if columns:
            column = _motion_back12(pose, _load6(mf, 64 * n + 6 * k))
            c = first + mi[3 + n + k]
            for e in range(6):
                flat[e * width + c] = column[e]
        pose = _compose12(_local12(mf, k, s[mi[3 + n + k]]), pose)
        b = mi[2 + b]
    return pose


@_inline
def _columns_to(t_h_f, mi, body, flat, first, width):
    """The joint columns :func:`_frame_up` wrote in F (those of the joints from ``body`` up
    to the base), into T: T_X_F each."""
    n = mi[0]
    b = body
    while b > 0:
        c = first + mi[3 + n + b - 1]
        column = _motion12(t_h_f, (flat[c], flat[width + c], flat[2 * width + c],
                                   flat[3 * width + c], flat[4 * width + c],
                                   flat[5 * width + c]))
        for e in range(6):
            flat[e * width + c] = column[e]
        b = mi[2 + b]


@_jit
def whole_at_position(mf, mi, rep, want, w_H_b, s, out):
    """:func:`whole_body` at a position (no rates, wrenches, gravity on), as
    :func:`frame_at_position`: its one quantity ``want`` alone in ``out`` (C-contiguous,
    the answer's shape: no slice and reshape after the call, ~0.4 us), the CoM (3,) for
    ``want`` 0; BAD_SHAPE when ``out`` has another size."""
    n = mi[0]
    size = 6 + n
    flat = out.reshape(out.size)
    if flat.size != _whole_size(want, size) - (3 if want else 0):
        return BAD_SHAPE
    none = s[:0]
    gravity = n >= 0          # (a bool, not numba's literal True: the Python calls' whole_body)
    return _whole_one(mf, mi, rep, want, w_H_b, s, none, none, gravity, flat)


@_jit
def bias_at_state(mf, mi, rep, gravity_on, w_H_b, s, nu, s_dot, out):
    """:func:`whole_body`'s RNEA at zero accelerations without wrenches, as
    :func:`whole_at_position`: the bias force h = C(q, nu) nu, + g(q) when ``gravity_on``,
    (6 + n,) in rep, user joint order, into ``out`` (the answer's shape); BAD_SHAPE for another
    size, the rates (nu (6,), s_dot (n,)) included. The few arguments of bias_force and
    coriolis_term (~2 us of Python and dispatch less than :func:`whole_body`'s 15)."""
    size = 6 + mi[0]
    if out.shape[0] != size or nu.shape[0] != 6 or s_dot.shape[0] != mi[0]:
        return BAD_SHAPE
    return _whole_one(mf, mi, rep, WANT_RNEA, w_H_b, s, nu, s_dot, gravity_on, out)


@_inline
def _whole_one(mf, mi, rep, want, w_H_b, s, nu, s_dot, gravity_on, flat):
    """:func:`whole_body` at (w_H_b, s) with the rates (nu, s_dot) (empty: none), no
    accelerations or wrenches: its one quantity ``want`` alone in ``flat`` (1-D, of that
    quantity's size; the CoM (3,) for ``want`` 0). Its status."""
    buf = flat if want == 0 else np.empty(3 + flat.size)
    none = s[:0]
    status = whole_body(mf, mi, rep, want, w_H_b, s, nu, s_dot, none, none, none, gravity_on,
                        mi[:0], mf[:0].reshape((0, 6)), buf)
    if want and status == OK:
        for i in range(flat.size):
            flat[i] = buf[3 + i]
    return status


@_jit
def _whole_size(want, size):
    """The length of :func:`whole_body`'s ``out`` for the request ``want``, ``size`` = 6 + n:
    the CoM, then each quantity asked."""
    length = 3
    if want & WANT_MASS:
        length += size * size
    if want & WANT_RNEA:
        length += size
    if want & WANT_GRAVITY:
        length += size
    if want & WANT_CMM:
        length += 6 * size
    if want & WANT_COMJ:
        length += 3 * size
    if want & WANT_ABA:
        length += size
    if want & WANT_MINV:
        length += size * size
    return length


@_jit
def _jacobian_dot(rep, t, base_columns, columns, path, d, mi, t_h_c, nu, s_dot, jdot):
    """dJ/dt (6, 6 + n) (see ``KinDynComputations.jacobian_dot``): each column c of J is an
    adjoint image, dJ_c/dt = W_c x J_c with W = X V_k - u for a joint column (X V_k the
    velocity of the body it moves, in T) and W = X u_B - u for the base columns."""
    base_twist = np.empty(6)
    _times6(base_columns.T.copy(), nu, base_twist)
    vel = np.empty((d, 6))
    running = base_twist.copy()
    n = mi[0]
    for i in range(d):
        k = path[i] - 1
        for e in range(6):
            running[e] += columns[i, e] * s_dot[mi[3 + n + k]]
            vel[i, e] = running[e]
    last = vel[d - 1] if d else base_twist
    u = np.zeros(6)                                   # frame drift
    drift_c = np.zeros(6)                             # base drift, in C
    for e in range(6):
        if rep == BODY or (rep == MIXED and e < 3):
            u[e] = last[e]
        if rep == MIXED and e < 3:
            drift_c[e] = nu[e]
    if rep == BODY:
        _times6(t, nu, drift_c)
    drift_w = np.empty(6)
    _transform_motion(t_h_c, drift_c, drift_w)
    w = np.empty(6)
    column = np.empty(6)
    crossed = np.empty((d, 6))
    for i in range(d):
        for e in range(6):
            w[e] = vel[i, e] - u[e]
        _motion_cross(w, columns[i], crossed[i])
    _scatter_columns(jdot.reshape(jdot.size), 0, jdot.shape[1], 6, crossed.reshape(6 * d), 0,
                     path, d, mi)
    for e in range(6):
        w[e] = drift_w[e] - u[e]
    for c in range(6):
        _motion_cross(w, base_columns[c], column)
        for e in range(6):
            jdot[e, c] = column[e]


# ----------------------------------------------------------------------------- Coriolis matrix

@_jit
def _skew_block(m, o, c0, x0, x1, x2, sign):
    """m[o:o + 3, c0:c0 + 3] = sign x^ (x^ u = x cross u)."""
    m[o, c0 + 1], m[o, c0 + 2] = -sign * x2, sign * x1
    m[o + 1, c0], m[o + 1, c0 + 2] = sign * x2, -sign * x0
    m[o + 2, c0], m[o + 2, c0 + 1] = -sign * x1, sign * x0


@_inline
def _inertia_matrix(ic, out):
    """The spatial inertia (6, 6) [[m 1, -h^], [h^, Ibar]] of the compact ``ic`` (13,) into
    ``out[:6, :6]``."""
    m, h0, h1, h2 = ic[0], ic[1], ic[2], ic[3]
    for r in range(3):
        for c in range(3):
            out[r, c] = m if r == c else 0.0
            out[3 + r, 3 + c] = ic[4 + 3 * r + c]
        out[r, 3 + r] = out[3 + r, r] = 0.0
    _skew_block(out, 0, 3, h0, h1, h2, -1.0)
    _skew_block(out, 3, 0, h0, h1, h2, 1.0)


@_jit
def _coriolis_b(ic, v, out, inertia, crm, fbar):
    """Echeandia-Wensing B(I, v) = 1/2 (v x* I + (I v) xbar - I v x) (6, 6) into ``out``,
    for the compact inertia ``ic`` (13,) and the motion vector ``v`` (6,); ``inertia``,
    ``crm`` and ``fbar`` (6, 6) are scratch, zero off the blocks written here. With I
    symmetric and v x* = -(v x)^T, B = 1/2 (f xbar - A - A^T) for A = I (v x), f = I v:
    one 6x6 product, over the non-zero blocks of v x = [[w^, l^], [0, w^]] only."""
    _inertia_matrix(ic, inertia)
    _skew_block(crm, 0, 0, v[3], v[4], v[5], 1.0)
    _skew_block(crm, 0, 3, v[0], v[1], v[2], 1.0)
    _skew_block(crm, 3, 3, v[3], v[4], v[5], 1.0)
    f = out[0]                                  # (I v, before out is written)
    _inertia_times(ic, v, f)
    # (f xbar) u = u x* f
    _skew_block(fbar, 0, 3, f[0], f[1], f[2], -1.0)
    _skew_block(fbar, 3, 0, f[0], f[1], f[2], -1.0)
    _skew_block(fbar, 3, 3, f[3], f[4], f[5], -1.0)
    for i in range(6):                          # A = I (v x): its rows 3-5 of columns 0-2
        for j in range(6):                      # are zero
            acc = 0.0
            for k in range(3 if j < 3 else 6):
                acc += inertia[i, k] * crm[k, j]
            out[i, j] = acc
    for i in range(6):
        for j in range(i, 6):
            a_ij, a_ji = out[i, j], out[j, i]
            out[i, j] = 0.5 * (fbar[i, j] - a_ij - a_ji)
            out[j, i] = 0.5 * (fbar[j, i] - a_ji - a_ij)


@_jit
def coriolis(mf, mi, rep, w_H_b, s, nu, s_dot, out):
    """The Christoffel-consistent Coriolis matrix C (6 + n, 6 + n) at (w_H_b, s, nu (6,) in
    ``rep``, s_dot) into ``out``, rows and joint columns in user order, the base's in
    ``rep``: ``C nu = h - g`` and ``Mdot = C + C^T``. In C first (Echeandia and Wensing's
    B(I, v) of each body summed over subtrees), then C' = T^T (C T + M Tdot) on the base's
    rows and columns (:meth:`KinDynComputations.coriolis_matrix`). Returns OK or
    NOT_FINITE."""
    n = mi[0]
    size = 6 + n
    if not (_finite(w_H_b) and _finite(s) and _finite(nu) and _finite(s_dot)):
        return NOT_FINITE
    _, _, inertia, subspace, composite, force, t = _at_state(mf, mi, rep, w_H_b, s,
                                                             COMPOSITES)
    qd = np.empty(n)
    _internal_q(mi, s_dot, qd)
    vel = np.empty((n + 1, 6))
    _times6(t, nu, vel[0])
    for k in range(n):
        for e in range(6):
            vel[k + 1, e] = vel[mi[2 + k + 1], e] + subspace[k, e] * qd[k]
    bc = np.empty((n + 1, 6, 6))
    scratch = np.zeros((3, 6, 6))
    for i in range(n + 1):
        _coriolis_b(inertia[i], vel[i], bc[i], scratch[0], scratch[1], scratch[2])
    for i in range(n, 0, -1):                   # subtree sums
        p = mi[2 + i]
        for r in range(6):
            for e in range(6):
                bc[p, r, e] += bc[i, r, e]
    c = np.zeros((size, size))
    for r in range(6):
        for e in range(6):
            c[r, e] = bc[0, r, e]
    sdot, p, qv = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    for j in range(n):
        _motion_cross(vel[j + 1], subspace[j], sdot[j])
        _inertia_times(composite[j + 1], sdot[j], p[j])
        for e in range(6):
            acc, acc_t = 0.0, 0.0
            for k in range(6):
                acc += bc[j + 1, e, k] * subspace[j, k]
                acc_t += bc[j + 1, k, e] * subspace[j, k]
            p[j, e] += acc
            qv[j, e] = acc_t
        for e in range(6):
            c[e, 6 + j] = p[j, e]
            c[6 + j, e] = qv[j, e]
    for j in range(n):                          # i: j and its ancestors
        a = j + 1
        while a > 0:
            i = a - 1
            c[6 + i, 6 + j] = _dot6(subspace[i], p[j])
            if i != j:
                c[6 + j, 6 + i] = _dot6(force[j], sdot[i]) + _dot6(qv[j], subspace[i])
            a = mi[2 + a]
    mass = np.empty((size, 6))                  # M[:, :6] in C: Ic_0 (symmetric), Ic_j S_j
    _inertia_matrix(composite[0], mass)
    for k in range(n):
        for e in range(6):
            mass[6 + k, e] = force[k, e]
    tdot = np.zeros((6, 6))                     # dT/dt (representations.base_transform_dot)
    if rep == MIXED:                            # [[0, v^], [0, 0]]
        _skew_block(tdot, 0, 3, nu[0], nu[1], nu[2], 1.0)
    elif rep == BODY:                           # T (nu x)
        cross = np.zeros((6, 6))
        _skew_block(cross, 0, 0, nu[3], nu[4], nu[5], 1.0)
        _skew_block(cross, 0, 3, nu[0], nu[1], nu[2], 1.0)
        _skew_block(cross, 3, 3, nu[3], nu[4], nu[5], 1.0)
        for i in range(6):
            for j in range(6):
                acc = 0.0
                for k in range(6):
                    acc += t[i, k] * cross[k, j]
                tdot[i, j] = acc
    head = np.empty((size, 6))                  # C[:, :6] T + M[:, :6] Tdot
    for r in range(size):
        for e in range(6):
            acc = 0.0
            for k in range(6):
                acc += c[r, k] * t[k, e] + mass[r, k] * tdot[k, e]
            head[r, e] = acc
    for r in range(size):
        for e in range(6):
            c[r, e] = head[r, e]
    top = np.empty((6, size))                   # T^T C[:6]
    for e in range(6):
        for col in range(size):
            acc = 0.0
            for k in range(6):
                acc += t[k, e] * c[k, col]
            top[e, col] = acc
    for e in range(6):
        for col in range(size):
            c[e, col] = top[e, col]
    user = _user_index(mi)
    for r in range(size):
        for col in range(size):
            out[user[r], user[col]] = c[r, col]
    return OK


# ----------------------------------------------------------------------------- a batch of states

@_jit
def horizon_layout(size, n_frames, want):
    """Offsets (11,) of the quantities of :data:`.horizon.QUANTITIES` in one state's row of
    :func:`horizon`'s output (a quantity not in the mask ``want`` takes no room); the last is
    the row's length. ``size`` = 6 + n, ``n_frames`` the frames asked about."""
    lengths = (3, size * size, size, size, 6 * size, 3 * size, 16 * n_frames,
               6 * size * n_frames, 6 * size * n_frames, 6 * n_frames)
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    for q in range(len(lengths)):
        out[q + 1] = out[q] + (lengths[q] if want & (1 << q) else 0)
    return out


@_jit
def horizon(mf, mi, rep, want, frames, w_H_b, s, nu, s_dot, out):
    """The quantities of the mask ``want`` (bit k: :data:`.horizon.QUANTITIES` [k]) at K states in
    one call: ``w_H_b`` (K, 4, 4), ``s`` and ``s_dot`` (K, n) in user order, ``nu`` (K, 6)
    in the representation ``rep``; ``frames`` (F,) frame indices. State k's quantities go to
    ``out[k]`` (K, row length) one after the other (:func:`horizon_layout`), each as
    :func:`whole_body` and :func:`frame_query` lay it out for one state (row-major, joint
    columns in user order); the CoM Jacobian is the CMM's linear rows over the total mass,
    Jdot nu (6,) of a frame its Jacobian's derivative times [nu; s_dot]. Each state has its
    own forward pass (shared by its whole-body quantities). Returns -1, or the index of the
    first state with a NaN or inf (the rows from it on are not written)."""
    n, n_states, n_frames = mi[0], w_H_b.shape[0], frames.shape[0]
    size = 6 + n
    lay = horizon_layout(size, n_frames, want)
    # (masks and the gravity flag typed as the Python calls' int64 and bool, not as numba's
    # literals: the same compiled whole_body and frame_query as theirs, ~20 s of compile less)
    whole, single, gravity = want & 0, want & 0, n >= 0
    for bit, mask in ((2, WANT_MASS), (4, WANT_RNEA), (8, WANT_GRAVITY), (16, WANT_CMM),
                      (32, WANT_CMM)):
        if want & bit:
            whole |= mask
    wb = np.empty(3 + size * size + 2 * size + 6 * size)
    fq = np.empty(16 + 12 * size)
    for bit, mask in ((64, WANT_POSE), (128, WANT_JACOBIAN), (256 | 512, WANT_JDOT)):
        if want & bit:
            single |= mask
    none_i, none_f = np.empty(0, dtype=np.int64), np.empty((0, 6))
    empty = np.empty(0)
    velocity = np.empty(size)
    mass_total = _total_mass(mf, n)
    for k in range(n_states):
        row = out[k]
        if (whole or want & 1) and whole_body(mf, mi, rep, whole, w_H_b[k], s[k], nu[k],
                                              s_dot[k], empty, empty, empty, gravity, none_i,
                                              none_f, wb) != OK:
            return k
        if want & 1:
            _copy_words(wb, 0, row, lay[0], 3)
        o = 3                            # whole_body's order: CoM, M, RNEA, g, CMM
        for q, length in ((1, size * size), (2, size), (3, size), (4, 6 * size)):
            if want & (1 << q):
                _copy_words(wb, o, row, lay[q], length)
            if whole & (WANT_MASS, WANT_RNEA, WANT_GRAVITY, WANT_CMM)[q - 1]:
                o += length
        if want & 32:                    # CoM Jacobian: m J_com = the CMM's linear rows
            cmm = o - 6 * size
            for e in range(3 * size):
                row[lay[5] + e] = wb[cmm + e] / mass_total
        for f in range(n_frames):
            if single and frame_query(mf, mi, rep, single, frames[f], w_H_b[k], s[k], nu[k],
                                      s_dot[k], fq) != OK:
                return k
            _frame_rows(want, size, n_frames, f, lay, fq, nu[k], s_dot[k], velocity, row)
    return -1


@_jit
def _total_mass(mf, n):
    """The bodies' total mass (the first column of ``mf``'s body block)."""
    lay = float_layout(n, 0)
    body = mf[lay[2]:lay[3]].reshape((n + 1, 13))
    return body[:, 0].sum()


@_jit
def _copy_words(source, first, out, at, count):
    """out[at:at + count] = source[first:first + count] (element by element: no slice
    assignment, whose shape-mismatch message costs ~3 s of compile time)."""
    for i in range(count):
        out[at + i] = source[first + i]


@_jit
def _frame_rows(want, size, n_frames, f, lay, fq, nu, s_dot, velocity, row):
    """Frame f's pose, Jacobian, Jdot and Jdot nu from :func:`frame_query`'s ``fq`` (in its
    order) into ``row`` at :func:`horizon_layout`'s offsets ``lay``."""
    o = 0
    if want & 64:
        _copy_words(fq, 0, row, lay[6] + 16 * f, 16)
        o = 16
    if want & 128:
        _copy_words(fq, o, row, lay[7] + 6 * size * f, 6 * size)
        o += 6 * size
    if not want & (256 | 512):
        return
    if want & 256:
        _copy_words(fq, o, row, lay[8] + 6 * size * f, 6 * size)
    if want & 512:
        for e in range(6):
            velocity[e] = nu[e]
        for k in range(size - 6):
            velocity[6 + k] = s_dot[k]
        for e in range(6):
            acc = 0.0
            for c in range(size):
                acc += fq[o + e * size + c] * velocity[c]
            row[lay[9] + 6 * f + e] = acc


# ----------------------------------------------------------------------- output words

@_jit
def _quaternion(r, out):
    """Unit quaternion (x, y, z, w), w >= 0, of the rotation ``r[:3, :3]`` into ``out``
    (4,): Shepperd's method with the operations of quaternions.rotation_to_quaternion in
    the same order (the same bits)."""
    r00, r01, r02 = r[0, 0], r[0, 1], r[0, 2]
    r10, r11, r12 = r[1, 0], r[1, 1], r[1, 2]
    r20, r21, r22 = r[2, 0], r[2, 1], r[2, 2]
    diag = (r00 - r11 - r22, r11 - r00 - r22, r22 - r00 - r11, r00 + r11 + r22)
    k = 0
    for i in range(1, 4):          # the first largest, as Python's max
        if diag[i] > diag[k]:
            k = i
    c = 1.0 + diag[k]
    if k == 0:
        q = (c, r01 + r10, r02 + r20, r21 - r12)
    elif k == 1:
        q = (r01 + r10, c, r12 + r21, r02 - r20)
    elif k == 2:
        q = (r02 + r20, r12 + r21, c, r10 - r01)
    else:
        q = (r21 - r12, r02 - r20, r10 - r01, c)
    norm = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    f = (-1.0 if q[3] < 0.0 else 1.0) / norm
    for i in range(4):
        out[i] = q[i] * f


@_jit
def scatter_words(values, extra, w_H_b, base, sources, targets, words, pairs, halves, sec,
                  nanosec):
    """Numbers written into a buffer of serialised messages (the node's per-tick outputs):
    ``words[targets[i]]`` (float64 words of the buffer) = element ``sources[i]`` of the
    vector ``values`` (m,), then the translation and the unit quaternion (x, y, z, w),
    w >= 0, of ``w_H_b`` (4, 4) (7: computed only when ``base``), then ``extra``; each row
    (2,) of ``pairs`` (32-bit words of the same buffer, ``halves``) gets ``sec`` and
    ``nanosec`` (a stamp). Returns OK."""
    m = values.shape[0]
    pose = np.zeros(7)
    if base:
        for i in range(3):
            pose[i] = w_H_b[i, 3]
        _quaternion(w_H_b, pose[3:])
    for i in range(sources.shape[0]):
        j = sources[i]
        if j < m:
            words[targets[i]] = values[j]
        elif j < m + 7:
            words[targets[i]] = pose[j - m]
        else:
            words[targets[i]] = extra[j - m - 7]
    for i in range(pairs.shape[0]):
        halves[pairs[i, 0]] = sec
        halves[pairs[i, 1]] = nanosec
    return OK


# ------------------------------------------------------------------ joint state bytes

UNREAD = 3        # merge_joint_state: not the layout given (the caller reads it otherwise)


@_jit
def _u32(data, p):
    """The little-endian uint32 at byte ``p`` of ``data`` (uint8), as an int."""
    return ((data[p] + 0) | ((data[p + 1] + 0) << 8) | ((data[p + 2] + 0) << 16)
            | ((data[p + 3] + 0) << 24))


@_jit
def _header_stamp(data):
    """(sec (int32), nanosec) of the header stamp of a message's plain little-endian CDR
    bytes ``data`` (at least 12 bytes: the stamp is first after the encapsulation)."""
    sec = _u32(data, 4)
    return sec - 4294967296 if sec >= 2147483648 else sec, _u32(data, 8)


def merge_layout(count, size, starts, lengths, columns, joints, mimic_columns, mimic_joints):
    """The ``layout`` (int64) of :func:`merge_joint_state` for a name list of ``count`` names
    taking ``size`` bytes whose bytes compared are the runs ``starts`` (offsets from the
    first name) of ``lengths`` bytes each, and the merge's columns and joints (as
    :func:`merge_joint_state` says): [count, size, runs, columns, mimic columns, then
    starts, lengths, columns, joints, mimic_columns, mimic_joints]."""
    return np.concatenate([[count, size, len(starts), len(columns), len(mimic_columns)],
                           starts, lengths, columns, joints, mimic_columns,
                           mimic_joints]).astype(np.int64)


@_jit
def merge_joint_state(data, layout, expected, raw, block, values, received, effort_received,
                      stamp):
    """Merge a sensor_msgs/JointState from its plain little-endian CDR bytes ``data``
    (uint8 array or bytes) whose name list is a known one (``layout``,
    :func:`merge_layout`): ``count`` names taking ``size`` bytes, whose bytes in the runs
    (offsets from the list's first name) are ``expected`` (the padding between them is not
    compared), with ``count`` positions, velocities and efforts.

    ``raw`` (uint8, 24 (count + 1)) and ``block`` (float64, 3 (count + 1)) are one scratch
    buffer seen both ways (aligned: the bytes' doubles are not). Columns (message index + 1)
    of position, velocity and effort go to the model joints of ``values`` (3, n) (rows
    position, velocity, effort), which are marked ``received`` and ``effort_received``; the
    efforts of the mimic columns go to their mimic joints. ``stamp`` (2,) gets the header's
    sec (int32) and nanosec. Returns OK; NOT_FINITE (a value is NaN or inf) or UNREAD
    (other bytes) change nothing."""
    count, size, runs, ncols, nmimic = layout[0], layout[1], layout[2], layout[3], layout[4]
    nbytes = len(data)                           # (bytes or a uint8 array)
    if nbytes < 16 or data[0] != 0 or data[1] != 1 or data[2] != 0 or data[3] != 0:
        return UNREAD
    p = 16 + _u32(data, 12)                      # after frame_id
    p += -(p - 4) % 4
    if p + 4 > nbytes or _u32(data, p) != count:
        return UNREAD
    start = p + 4
    if start + size > nbytes:
        return UNREAD
    k = 0
    for j in range(runs):                        # the names' bytes, run by run
        at = start + layout[5 + j]
        for i in range(layout[5 + runs + j]):
            if data[at + i] != expected[k]:
                return UNREAD
            k += 1
    p = start + size
    p += -(p - 4) % 4                            # the positions' count
    first = p + 4
    first += -(first - 4) % 8                    # the first position
    stride = 8 * (count + 1)
    if first + 3 * stride - 8 > nbytes or _u32(data, p) != count \
            or _u32(data, first + stride - 8) != count \
            or _u32(data, first + 2 * stride - 8) != count:
        return UNREAD
    for i in range(3 * stride):                  # rows (3, count + 1): a count, the values
        raw[i] = data[first - 8 + i]
    width = count + 1
    for r in range(3):
        for c in range(1, width):
            v = block[r * width + c]
            if v != v or v == np.inf or v == -np.inf:
                return NOT_FINITE
    cols = 5 + 2 * runs
    for i in range(ncols):
        column, joint = layout[cols + i], layout[cols + ncols + i]
        for r in range(3):
            values[r, joint] = block[r * width + column]
        received[joint] = True
        effort_received[joint] = True
    mimic = cols + 2 * ncols
    for i in range(nmimic):
        values[2, layout[mimic + nmimic + i]] = block[2 * width + layout[mimic + i]]
    stamp[0], stamp[1] = _header_stamp(data)
    return OK


@_jit
def read_stamped(data, size, keep, expected, starts, counts, end, raw, read, values, stamp,
                 pose, rotated, tolerance):
    """Read a stamped message (odometry, a wrench) from its plain little-endian CDR bytes
    ``data`` (bytes, as taken: no array made per message; or uint8) whose strings are known ones: the ``size`` bytes from the header's
    frame_id on, whose bytes at ``keep`` (offsets from there) are ``expected`` (padding not
    compared). From the first 8-aligned offset after them, ``counts[j]`` float64 at byte
    ``starts[j]`` each go to ``values`` one block after the other; the message takes ``end``
    bytes from there. ``raw`` (uint8) and ``read`` (float64) are one scratch buffer of
    ``values``' size seen both ways. ``stamp`` (2,) gets sec (int32) and nanosec. When
    ``pose`` (4, 4) is not empty, it gets the pose of translation ``values[:3]`` and unit
    quaternion (x, y, z, w) ``values[3:7]``, normalised (as
    quaternions.quaternion_to_matrix), and ``rotated`` (6,), when not empty either, the last
    six values [v; w] in the pose's axes rotated to the world's, [R v; R w] (an odometry's
    twist in the MIXED representation, :func:`.base_state.change_base_representation`'s
    arithmetic). Returns OK; NOT_FINITE (a value is
    NaN or inf) or UNREAD (other bytes, or a quaternion whose squared norm is further than
    ``tolerance`` from 1) change nothing the caller keeps."""
    nbytes = len(data)                           # (bytes or a uint8 array)
    if nbytes < 16 + size or data[0] != 0 or data[1] != 1 or data[2] != 0 or data[3] != 0:
        return UNREAD
    for i in range(keep.shape[0]):
        if data[12 + keep[i]] != expected[i]:
            return UNREAD
    base = 12 + size
    base += -(base - 4) % 8
    if base + end > nbytes:
        return UNREAD
    k = 0
    for j in range(starts.shape[0]):
        for i in range(8 * counts[j]):
            raw[8 * k + i] = data[base + starts[j] + i]
        k += counts[j]
    for i in range(values.shape[0]):
        v = read[i]
        if v != v or v == np.inf or v == -np.inf:
            return NOT_FINITE
        values[i] = v
    if pose.shape[0] == 4:
        x, y, z, w = values[3], values[4], values[5], values[6]
        n2 = x * x + y * y + z * z + w * w
        if abs(n2 - 1.0) > tolerance:
            return UNREAD
        norm = np.sqrt(n2)
        x, y, z, w = x / norm, y / norm, z / norm, w / norm
        pose[0, 0], pose[0, 1], pose[0, 2] = \
            1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
        pose[1, 0], pose[1, 1], pose[1, 2] = \
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
        pose[2, 0], pose[2, 1], pose[2, 2] = \
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
        for i in range(3):
            pose[i, 3] = values[i]
            pose[3, i] = 0.0
        pose[3, 3] = 1.0
        if rotated.shape[0] == 6:
            last = values.shape[0] - 6
            for r in range(3):
                rotated[r] = pose[r, 0] * values[last] + pose[r, 1] * values[last + 1] \
                    + pose[r, 2] * values[last + 2]
                rotated[3 + r] = pose[r, 0] * values[last + 3] \
                    + pose[r, 1] * values[last + 4] + pose[r, 2] * values[last + 5]
    stamp[0], stamp[1] = _header_stamp(data)
    return OK


# ------------------------------------------------------------------ a state shared

@_jit
def share_state(words, bits, header, generation, code, w_H_b, s, nu, s_dot):
    """A tick's state into shared memory (the node's state_share layout; the caller marks
    the write with the sequence word before and after): ``words`` float64 and ``bits``
    (uint64) one buffer; ``words[1]`` = generation, ``words[3:5]`` = (code, n), from word
    ``header`` on w_H_b (16), s (n), nu (6), s_dot (n), and ``words[2]`` the XOR of the bits
    of words 1, 3, 4 and the payload (a reader's check). Returns OK."""
    n = s.shape[0]
    words[1], words[3], words[4] = generation, code, n
    p = header
    for i in range(4):
        for j in range(4):
            words[p] = w_H_b[i, j]
            p += 1
    for k in range(n):
        words[p + k] = s[k]
    p += n
    for k in range(6):
        words[p + k] = nu[k]
    p += 6
    for k in range(n):
        words[p + k] = s_dot[k]
    check = bits[1] ^ bits[3] ^ bits[4]
    for k in range(header, p + n):
        check ^= bits[k]
    bits[2] = check
    return OK


# ------------------------------------------------------------------ a node's steady tick

STALE = 5          # steady_tick: an input older than the timeout (nothing was written)
NOT_NEWER = 6      # steady_tick: a JointState's stamp not after the last tick's, or none
MERGED = 7         # steady_tick: a JointState merged, but the tick failed (the caller ticks it)


# steady_tick's arguments that stay from one tick to the next, held by one object
# (:class:`SteadyArguments`, made by :func:`steady_arguments`): each argument of a call from
# Python costs ~0.1 us to dispatch and unbox warm (an array's a reference-counted struct
# made and freed), ~3 times that in a node at 1 kHz, caches cold; a StructRef ~0.7 us
# whatever it holds. The merge's (:func:`merge_joint_state`: layout ... merged), the
# model's (mf, mi, rep), the merged ``values``, the wrenches' ``targets``, the ``stamps``,
# how the messages are written (with_pose, with_odometry, timeout, fd), the shared state's
# (words, header, generation, code), the scatter's (buf, sources, places, pairs), the mimic
# joints' (mimic, factors) and the ``results``' layout (size of out, bodies of poses).
STEADY_FIELDS = ("layout", "expected", "raw", "block", "received", "effort_received",
                 "merged", "mf", "mi", "rep", "values", "targets", "stamps", "with_pose",
                 "with_odometry", "timeout", "fd", "words", "header", "generation", "code",
                 "buf", "sources", "places", "pairs", "mimic", "factors", "size", "bodies")

if _DISABLED:               # (the kernels run as Python: any object with these fields)
    SteadyArguments = namedtuple("SteadyArguments", STEADY_FIELDS)
    SteadyBalancing = namedtuple("SteadyBalancing", ("parts",))
else:
    @structref.register
    class _SteadyArgumentsType(types.StructRef):
        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(t)) for name, t in fields)

    class SteadyArguments(structref.StructRefProxy):
        """:func:`steady_tick`'s ``fixed`` (:data:`STEADY_FIELDS`), opaque to Python."""

    structref.define_proxy(SteadyArguments, _SteadyArgumentsType, STEADY_FIELDS)

    @structref.register
    class _SteadyBalancingType(types.StructRef):
        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(t)) for name, t in fields)

    class SteadyBalancing(structref.StructRefProxy):
        """:func:`steady_tick`'s ``balancing``: the tuple ``parts``, opaque to Python."""

    structref.define_proxy(SteadyBalancing, _SteadyBalancingType, ("parts",))


@_jit
def steady_arguments(layout, expected, raw, block, received, effort_received, merged, mf, mi,
                     rep, values, targets, stamps, with_pose, with_odometry, timeout, fd,
                     words, header, generation, code, buf, sources, places, pairs, mimic,
                     factors, size, bodies):
    """:func:`steady_tick`'s ``fixed``: these, as :data:`STEADY_FIELDS` names them (arrays
    held, not copied: ``values`` and ``stamps`` are read at each call)."""
    return SteadyArguments(layout, expected, raw, block, received, effort_received, merged,
                           mf, mi, rep, values, targets, stamps, with_pose, with_odometry,
                           timeout, fd, words, header, generation, code, buf, sources,
                           places, pairs, mimic, factors, size, bodies)


@_jit
def steady_balancing(parts):
    """:func:`steady_tick`'s ``balancing``: the tuple ``parts`` (:func:`_steady_balance`'s)
    held."""
    return SteadyBalancing(parts)


@_jit
def steady_results_layout(size, bodies, count, n):
    """Offsets in :func:`steady_tick`'s ``results`` of the poses, ages, state and balance
    outputs (after the out, from 0): (poses, ages, state, balanced)."""
    poses = size
    ages = poses + 16 * bodies
    state = ages + count
    return poses, ages, state, state + 2 * n


@_jit
def steady_tick(data, last_ns, since_ns, until_ns, fixed, w_H_b, nu, wrenches, results,
                balancing):
    """A node's tick in one call: :func:`tick`, its state into shared memory
    (:func:`share_state`) and its numbers into a buffer of serialised messages
    (:func:`scatter_words`), for a tick whose inputs keep their layout; with a JointState
    (``data`` not empty), that JointState merged first. ``fixed``: the arguments that stay
    (:func:`steady_arguments`, :data:`STEADY_FIELDS`, used below by their names); ``w_H_b``,
    ``nu`` and ``wrenches`` (:func:`tick`'s) those renewed with odometry and wrenches.

    ``results`` (float64) gets, at :func:`steady_results_layout`'s offsets, the tick's
    ``out`` (``size``) and ``poses`` (``bodies``, 4, 4) (:func:`tick`'s), the ``ages`` (k + 1,)
    of its inputs, its ``state`` (2, n) (s and s_dot) and, when longer than that, its
    balance outputs ``balanced``.

    ``values`` (3, n): joint positions, velocities and efforts (user order), the first two
    copied into ``state`` with each mimic joint ``mimic[0, j]`` set from its master
    ``mimic[1, j]`` (position ``f[0] q + f[1]``, velocity ``f[0] dq``, ``f = factors[:, j]``);
    the efforts the torques of forward dynamics only with ``fd``. ``stamps`` (int64, 2 + k):
    the tick's stamp, the odometry's and each wrench's [ns]; ``ages`` gets the odometry's
    age (0 without ``with_odometry``) and each wrench's [s], ``(tick - input) * 1e-9``; a
    wrench whose age is not within ``timeout`` [s] returns STALE before anything is
    written. Then :func:`tick` (its status returned when not OK); then, when ``words`` is
    not empty, the state with the sequence word ``words[0]`` odd while writing and even
    after; then the per-tick messages in ``buf`` (uint8): float64 word ``places[i]`` =
    element ``sources[i]`` of ``out``, the pose of ``w_H_b`` (only ``with_pose``) and the
    ages (only with ``fd``), each row of ``pairs`` the stamp's (sec modulo 2**32, nanosec)
    as 32-bit words.

    With ``data`` (a JointState's CDR bytes), ``stamps[0]`` gets its stamp [ns] and it is
    merged into ``values`` by :func:`merge_joint_state` (``layout``, ``expected``, ``raw``,
    ``block``, ``received``, ``effort_received``; ``merged`` (2,) gets its stamp's sec and
    nanosec) before the tick. It returns OK; or, with nothing changed: NOT_NEWER (the
    stamp is 0, not after ``last_ns``, the last tick's, or not in [``since_ns``,
    ``until_ns``): the stamps whose inputs the caller's arguments are), STALE, BAD_SHAPE
    (``values`` not (3, n); first of all, ``results`` too short or ``stamps`` shorter than
    2), UNREAD or NOT_FINITE (the merge's); or
    MERGED: merged, but the tick failed (the caller ticks it). Without, the merge's
    arguments are not read (empty arrays will do).

    With ``balanced`` not empty, the tick's balance outputs too (:func:`_steady_balance`:
    ``balancing.parts`` as it says); without, ``balancing`` is not read (that of
    :data:`.compiled.NO_BALANCING`)."""
    a = fixed
    n, stamps = a.mi[0], a.stamps
    at_poses, at_ages, at_state, at_balanced = steady_results_layout(
        a.size, a.bodies, stamps.shape[0] - 1, n)
    if results.shape[0] < at_balanced or stamps.shape[0] < 2:
        return BAD_SHAPE
    if len(data) > 0:
        if len(data) < 12:
            return UNREAD
        sec, nanosec = _header_stamp(data)
        stamp = sec * 1_000_000_000 + nanosec
        if stamp == 0 or stamp <= last_ns or stamp < since_ns or stamp >= until_ns:
            return NOT_NEWER
        stamps[0] = stamp
    stamp = stamps[0]
    ages = results[at_ages:at_state]
    ages[0] = (stamp - stamps[1]) * 1e-9 if a.with_odometry else 0.0
    for c in range(1, ages.shape[0]):
        age = (stamp - stamps[1 + c]) * 1e-9
        if not abs(age) <= a.timeout:
            return STALE
        ages[c] = age
    values = a.values
    if values.shape[0] != 3 or values.shape[1] != n:
        return BAD_SHAPE
    if len(data) > 0:
        status = merge_joint_state(data, a.layout, a.expected, a.raw, a.block, values,
                                   a.received, a.effort_received, a.merged)
        if status != OK:
            return status
    state = results[at_state:at_balanced].reshape((2, n))
    for k in range(n):
        state[0, k] = values[0, k]
        state[1, k] = values[1, k]
    mimic, factors = a.mimic, a.factors
    for j in range(mimic.shape[1]):
        joint, master = mimic[0, j], mimic[1, j]
        state[0, joint] = factors[0, j] * state[0, master] + factors[1, j]
        state[1, joint] = factors[0, j] * state[1, master]
    s, s_dot, tau = state[0], state[1], values[2, :n if a.fd else 0]
    out = results[:at_poses]
    poses = results[at_poses:at_ages].reshape((a.bodies, 4, 4))
    status = tick(a.mf, a.mi, a.rep, w_H_b, s, nu, s_dot, tau, a.targets, wrenches, out, poses)
    if status != OK:
        return MERGED if len(data) > 0 else status
    words = a.words
    if words.shape[0] > 0:
        sequence = words[0]
        words[0] = sequence + 1.0
        share_state(words, words.view(np.uint64), a.header, a.generation, a.code, w_H_b, s,
                    nu, s_dot)
        words[0] = sequence + 2.0
    sec = stamp // 1_000_000_000
    nanosec = stamp - sec * 1_000_000_000
    buf = a.buf
    scatter_words(out, ages if a.fd else ages[:0], w_H_b, a.with_pose, a.sources, a.places,
                  buf.view(np.float64), a.pairs, buf.view(np.uint32), sec % 4294967296,
                  nanosec)
    balanced = results[at_balanced:]
    if balanced.shape[0] > 0:
        _steady_balance(a.mf, a.mi, poses, w_H_b, out, balanced, balancing.parts, wrenches,
                        sec % 4294967296, nanosec)
    return OK


@_jit
def _steady_balance(mf, mi, poses, w_H_b, out, balanced, balancing, wrenches, sec, nanosec):
    """A steady tick's balance outputs: :func:`balance` of the tick (``poses``, ``w_H_b``'s
    translation, the CoM and its velocity from ``out``, :func:`tick`'s; each contact's
    wrench the row ``rows[i]`` of the tick's ``wrenches`` (6 m,), none for -1) into
    ``balanced`` (:func:`balance_layout`); when a contact is active and the CoPs' defined
    flags are ``pattern``'s, its numbers written into the balance messages' buffer as
    :func:`scatter_words` writes them (their sources index ``balanced``, then a pose unused,
    then one 0.0: an undefined CoP's coordinates) with the stamp (``sec`` modulo 2**32,
    ``nanosec``). ``balancing``: (links, expressed, rows, centres, normals, soles, points,
    first_point, threshold, tol, min_cosine: :func:`balance`'s but its wrenches and
    measured flags; pattern (k,) int64, 1 defined, 0 not (another value matches none); buf,
    sources, places, pairs: :func:`scatter_words`'; state (2,) int64: gets balance's status
    and 1 when the buffer was written, else 0): the same while the wrenches' values change."""
    n = mi[0]
    base_position = np.empty(3)
    for r in range(3):
        base_position[r] = w_H_b[r, 3]
    state = balancing[16]
    state[1] = 0
    rows = balancing[2]
    k = rows.shape[0]
    contact_wrenches, measured = np.zeros((k, 6)), np.empty(k, np.bool_)
    for i in range(k):
        measured[i] = rows[i] >= 0
        if measured[i]:
            for j in range(6):
                contact_wrenches[i, j] = wrenches[6 * rows[i] + j]
    status = balance(mf, mi, poses, base_position, balancing[0], balancing[1],
                     contact_wrenches, measured, balancing[3], balancing[4], balancing[5],
                     balancing[6], balancing[7], balancing[8], balancing[9], balancing[10],
                     out[20 * n:20 * n + 3], out[20 * n + 3:20 * n + 6], balanced)
    state[0] = status
    pattern = balancing[11]
    if status != OK or not balanced[5 * k] > 0.0 or pattern.shape[0] != k:
        return
    for i in range(k):
        if (1 if balanced[5 * i + 4] > 0.0 else 0) != pattern[i]:
            return
    buf = balancing[12]
    scatter_words(balanced, np.zeros(1), w_H_b, n < 0, balancing[13], balancing[14],
                  buf.view(np.float64), balancing[15], buf.view(np.uint32), sec, nanosec)
    state[1] = 1
